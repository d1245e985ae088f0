"""Scaled bases (``E(i)``, printed ``_1@i``) and arithmetic tuples: the strides and values of coordinate tensors.

A coordinate tensor maps a logical coordinate to a *coordinate* of another tensor (e.g. the TMA coordinates of a
global tensor) instead of to an offset: its strides are basis vectors scaled by integers.
"""

from __future__ import annotations

from .integer import Int, LayoutError, is_int, to_str


class ScaledBasis:
    """``value @ mode``: the integer ``value`` placed at position ``mode`` (a path, for nested bases)."""

    __slots__ = ("value", "mode")

    def __init__(self, value, mode):
        self.value = value
        self.mode = tuple(mode) if isinstance(mode, tuple) else (int(mode),)

    def __str__(self):
        """CuTe prints the modes innermost first: ``E<1,0>`` is ``_1@0@1``."""
        return to_str(self.value) + "".join(f"@{m}" for m in reversed(self.mode))

    __repr__ = __str__

    def __eq__(self, o):
        return isinstance(o, ScaledBasis) and self.mode == o.mode and int(self.value) == int(o.value)

    def __hash__(self):
        return hash((int(self.value), self.mode))

    def __mul__(self, k):
        if is_int(k):
            return ScaledBasis(self.value * k, self.mode)
        return NotImplemented

    def __rmul__(self, k):
        if is_int(k):
            return ScaledBasis(k * self.value, self.mode)
        return NotImplemented

    def __neg__(self):
        return ScaledBasis(-self.value, self.mode)

    def __abs__(self):
        return ScaledBasis(abs(self.value), self.mode)

    def __add__(self, o):
        if isinstance(o, ScaledBasis) and o.mode == self.mode:
            return ScaledBasis(self.value + o.value, self.mode)
        if isinstance(o, (ScaledBasis, ArithTuple)):
            return ArithTuple(_add_expanded(self.expand(), _expand(o)))
        if is_int(o) and int(o) == 0:
            return self
        return NotImplemented

    def __radd__(self, o):
        if is_int(o) and int(o) == 0:
            return self
        return NotImplemented

    def expand(self):
        """The basis as a plain (nested) tuple with ``_0`` elsewhere."""
        out = self.value
        for m in reversed(self.mode):
            out = tuple(Int(0) for _ in range(m)) + (out,)
        return out


def E(*mode):
    """The unit basis vector ``_1@mode`` (``E(1)`` prints ``_1@1``; ``E(1, 0)`` is a nested basis)."""
    return ScaledBasis(Int(1), tuple(mode))


def _expand(x):
    if isinstance(x, ScaledBasis):
        return x.expand()
    if isinstance(x, ArithTuple):
        return x.values
    return x


def _add_expanded(a, b):
    if isinstance(a, tuple) or isinstance(b, tuple):
        a = a if isinstance(a, tuple) else (a,)
        b = b if isinstance(b, tuple) else (b,)
        n = max(len(a), len(b))
        a = a + (Int(0),) * (n - len(a))
        b = b + (Int(0),) * (n - len(b))
        return tuple(_add_expanded(x, y) for x, y in zip(a, b))
    return a + b


class ArithTuple:
    """A tuple of integers with elementwise ``+`` (CuTe's ArithmeticTuple); prints ``(a,b)``."""

    __slots__ = ("values",)

    def __init__(self, values):
        self.values = tuple(values)

    def __str__(self):
        return to_str(self.values)

    __repr__ = __str__

    def __iter__(self):
        return iter(self.values)

    def __len__(self):
        return len(self.values)

    def __getitem__(self, i):
        return self.values[i]

    def __eq__(self, o):
        if isinstance(o, ArithTuple):
            o = o.values
        return isinstance(o, tuple) and _flat_ints(self.values) == _flat_ints(o)

    def __hash__(self):
        return hash(_flat_ints(self.values))

    def __add__(self, o):
        if isinstance(o, (ScaledBasis, ArithTuple, tuple)):
            return ArithTuple(_add_expanded(self.values, _expand(o)))
        if is_int(o) and int(o) == 0:
            return self
        return NotImplemented

    __radd__ = __add__


def _flat_ints(t):
    if isinstance(t, tuple):
        return tuple(_flat_ints(v) for v in t)
    return int(t)


class ArithTupleIterator:
    """The iterator of a coordinate tensor (prints ``ArithTuple(...)``); ``+`` shifts the coordinate."""

    __slots__ = ("coord",)

    def __init__(self, coord):
        """``coord``: an ArithTuple, a (nested) tuple, or an integer for a rank-0 codomain."""
        self.coord = ArithTuple(coord) if isinstance(coord, tuple) else coord

    def __str__(self):
        return "ArithTuple" + to_str(self.coord)

    __repr__ = __str__

    def __add__(self, offset):
        return ArithTupleIterator(self.coord + offset)

    def __iter__(self):
        return iter(self.coord if isinstance(self.coord, ArithTuple) else (self.coord,))

    def __eq__(self, o):
        return isinstance(o, ArithTupleIterator) and self.coord == o.coord

    def __hash__(self):
        return hash(self.coord)

    def deref(self, offset=Int(0)):
        return self.coord + offset


def basis_value(e):
    """The integer a scaled basis carries (``basis_value(_4@1)`` is ``_4``); anything else is returned as it is."""
    return e.value if isinstance(e, ScaledBasis) else e


def basis_get(e, t):
    """The part of ``t`` that the basis ``e`` points at: ``get<1,0>(t)`` for ``E<1,0>``; ``t`` itself when ``e`` is
    not a basis (or a basis with no mode), as CuTe's basis_get."""
    if not isinstance(e, ScaledBasis):
        return t
    for m in e.mode:
        if isinstance(t, ArithTuple):
            t = t.values
        if isinstance(t, tuple):
            if not 0 <= m < len(t):
                raise LayoutError(f"basis_get({e}, {to_str(t)}): mode {m} is out of range (CuTe's get<{m}> does not "
                             "compile); pick a basis within the tuple's rank")
            t = t[m]
        elif m != 0:
            raise LayoutError(f"basis_get({e}, {to_str(t)}): an integer has only mode 0 (CuTe's get<{m}> does not "
                         "compile); pick a basis within the tuple's rank")
    return t


def make_basis_like(shape, path=()):
    """Strides ``_1@i`` (nested paths for nested shapes), as CuTe's make_basis_like."""
    if isinstance(shape, tuple):
        return tuple(make_basis_like(s, path + (i,)) for i, s in enumerate(shape))
    return ScaledBasis(Int(1), path) if path else Int(1)
