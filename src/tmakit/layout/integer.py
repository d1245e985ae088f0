"""Static vs dynamic integers, as in CuTe.

``Int(16)`` is a compile-time constant in CuTe (``Int<16>{}``) and prints ``_16``; a plain Python ``int`` is a
runtime value and prints ``16``. Arithmetic between static integers stays static; anything touching a dynamic
integer becomes dynamic. The algebra branches on staticness exactly where CuTe's ``if constexpr`` does, so the
printed results match CuTe's.
"""

from __future__ import annotations

import math


class LayoutError(ValueError):
    """A layout-algebra precondition failed (the message says which, with the values)."""


#: Deepest nesting of shapes, strides, coordinates and tilers (CuTe's is bounded by the compiler's template depth).
MAX_DEPTH = 64


def check_divisor(a, b) -> None:
    """Raise the named error for ``a / b`` or ``a % b`` with ``b == 0`` (a size-0 mode or a zero stride)."""
    if int(b) == 0:
        raise LayoutError(f"{to_str(a)} / {to_str(b)} divides by zero (as in CuTe): a size-0 mode or a zero stride "
                          "where the algebra divides by it; remove size-0 modes (or make the zero stride a static "
                          "tk.Int(0))")


class Int(int):
    """A static integer (CuTe's ``Int<N>``); prints as ``_N``."""

    __slots__ = ()

    def __new__(cls, value=0):
        return super().__new__(cls, int(value))

    def __repr__(self):
        return f"Int({int(self)})"

    def __str__(self):
        return f"_{int(self)}"

    def _bin(self, other, op, zero_if=None):
        """``op`` keeping staticness; ``zero_if(self)`` names CuTe's mixed cases that stay a static ``_0``."""
        try:
            if type(other) is Int:
                return Int(op(int(self), int(other)))
            if isinstance(other, int) and not isinstance(other, bool):
                if zero_if is not None and zero_if(int(self)):
                    return Int(0)
                return op(int(self), other)
        except ZeroDivisionError:
            raise LayoutError(f"{self} {op.__name__.strip('_')} {to_str(other)} divides by zero (as in CuTe): a "
                              "size-0 mode or a zero stride; remove size-0 modes") from None
        return NotImplemented

    # CuTe (integral_constant.hpp): _0 * x, x * _0, _0 / x, _0 % x, x % _1, _0 & x, x & _0 are the static _0.
    def __add__(self, o):
        return self._bin(o, int.__add__)

    def __radd__(self, o):
        return self._bin(o, lambda a, b: b + a)

    def __sub__(self, o):
        return self._bin(o, int.__sub__)

    def __rsub__(self, o):
        return self._bin(o, lambda a, b: b - a)

    def __mul__(self, o):
        return self._bin(o, int.__mul__, _is_zero)

    def __rmul__(self, o):
        return self._bin(o, lambda a, b: b * a, _is_zero)

    def __floordiv__(self, o):
        return self._bin(o, int.__floordiv__, _is_zero)

    def __rfloordiv__(self, o):
        return self._bin(o, lambda a, b: b // a)

    def __mod__(self, o):
        return self._bin(o, int.__mod__, _is_zero)

    def __rmod__(self, o):
        return self._bin(o, lambda a, b: b % a, lambda v: abs(v) == 1)

    def __lshift__(self, o):
        return self._bin(o, int.__lshift__)

    def __rshift__(self, o):
        return self._bin(o, int.__rshift__)

    def __and__(self, o):
        return self._bin(o, int.__and__, _is_zero)

    def __rand__(self, o):
        return self._bin(o, lambda a, b: b & a, _is_zero)

    def __or__(self, o):
        return self._bin(o, int.__or__)

    def __xor__(self, o):
        return self._bin(o, int.__xor__)

    def __neg__(self):
        return Int(-int(self))

    def __abs__(self):
        return Int(abs(int(self)))

    def __hash__(self):
        return int.__hash__(self)

    def __eq__(self, o):
        return int.__eq__(self, o)

    def __ne__(self, o):
        return int.__ne__(self, o)


def _is_zero(v: int) -> bool:
    return v == 0


class Underscore:
    """CuTe's ``_``: keep this mode when slicing."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self):
        return "_"


_ = Underscore()


def is_underscore(x) -> bool:
    return x is _


def is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def is_static(x) -> bool:
    """True when ``x`` (an integer, basis or nested tuple) is fully static."""
    if isinstance(x, tuple):
        return all(is_static(v) for v in x)
    if type(x) is Int:
        return True
    value = getattr(x, "value", None)  # ScaledBasis
    if value is not None and hasattr(x, "mode"):
        return is_static(value)
    return False


def is_constant(v: int, x) -> bool:
    """CuTe's ``is_constant<v, X>``: x is a static integer equal to v."""
    return type(x) is Int and int(x) == v


def static(x):
    """Turn an integer (or nested tuple of integers) into static integers."""
    if isinstance(x, tuple):
        return tuple(static(v) for v in x)
    return Int(x)


def dynamic(x):
    """Turn static integers into plain ints."""
    if isinstance(x, tuple):
        return tuple(dynamic(v) for v in x)
    return int(x)


def _keep(a, b, value):
    return Int(value) if type(a) is Int and type(b) is Int else int(value)


def cdiv(a, b):
    """C++ ``a / b`` (truncating toward zero, as CuTe computes coordinates) with Python's staticness rules."""
    check_divisor(a, b)
    q = a // b
    return q + Int(1) if q < 0 and q * b != a else q


def cmod(a, b):
    """C++ ``a % b`` (the sign of ``a``) with Python's staticness rules."""
    check_divisor(a, b)
    return a - cdiv(a, b) * b if int(a) < 0 or int(b) < 0 else a % b


def trunc_div(a: int, b: int) -> int:
    """C++'s integer ``a / b`` on plain ints: the quotient truncated toward zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def ceil_div(a, b):
    """CuTe's ``ceil_div``: ``(a + b - 1) / b`` in C++ arithmetic (the ceiling for positive values; CuTe's own
    result for negative ones), keeping staticness (for integers; tuples handled in int_tuple)."""
    check_divisor(a, b)
    return _keep(a, b, trunc_div(int(a) + int(b) - 1, int(b)))


def safe_div(a, b):
    """Exact division; raises if b does not divide a."""
    check_divisor(a, b)
    if int(a) % int(b) != 0:
        raise LayoutError(f"safe_div: {a} is not divisible by {b}")
    return _keep(a, b, int(a) // int(b))


def gcd(a, b):
    return _keep(a, b, math.gcd(int(a), int(b)))


def imin(a, b):
    return _keep(a, b, min(int(a), int(b)))


def imax(a, b):
    return _keep(a, b, max(int(a), int(b)))


def signum(a):
    v = int(a)
    return _keep(a, a, (v > 0) - (v < 0))


def to_str(x, depth=0) -> str:
    """CuTe's print of an integer, basis, or nested tuple: ``(_16,16)`` (nesting beyond MAX_DEPTH prints ``...``)."""
    if isinstance(x, tuple):
        if depth >= MAX_DEPTH:
            return "(...)"
        return "(" + ",".join(to_str(v, depth + 1) for v in x) + ")"
    if isinstance(x, bool):  # CuTe prints a bool through print(int)
        return str(int(x))
    return str(x)
