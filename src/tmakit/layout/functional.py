"""CuTe's integer utilities and function objects: numeric/math.hpp (``abs``, ``signum``, ``gcd``, ``lcm``, the
``<bit>`` helpers, ``shiftl``/``shiftr``, ``safe_div``), their static overloads from numeric/integral_constant.hpp,
the variadic tuple forms of ``max``/``min``/``gcd`` and ``sum``/``product_like`` from int_tuple.hpp, and the
arithmetic function objects of algorithm/functional.hpp (``plus``, ``multiplies``, ``max_fn`` ...).

Staticness follows CuTe's overloads: two static integers (``tk.Int``) give a static result (``C<op(t,u)>``), a
dynamic operand makes it dynamic. Integer arithmetic is C++'s (division and remainder truncate toward zero), so
``gcd`` of negative values keeps CuTe's sign. Where CuTe has no overload (a tuple to ``abs``, ``max`` of an empty
tuple) these raise ``LayoutError``. ``max``, ``min``, ``abs`` and ``sum`` shadow Python builtins, so
``tmakit.layout`` and ``tmakit`` offer them as attributes (``tk.max``) but leave them out of ``__all__``.
"""

from __future__ import annotations

from .int_tuple import LayoutError, is_tuple, product
from .integer import Int, is_int, to_str, trunc_div
from .tuple_algorithms import transform_leaf

__all__ = [
    "gcd", "lcm", "signum", "has_single_bit", "bit_width", "bit_ceil", "bit_floor", "popcount", "log_2", "shiftl",
    "shiftr", "safe_div", "product_like",
    "identity", "negate", "plus", "minus", "multiplies", "divides", "modulus", "max_fn", "min_fn", "abs_fn",
]
BUILTIN_NAMES = ("max", "min", "abs", "sum")  # exported as attributes only: they shadow Python builtins


def _int(x, what: str) -> int:
    if not is_int(x):
        raise LayoutError(f"{what}: {to_str(x) if isinstance(x, tuple) else repr(x)} is not an integer (CuTe's "
                          f"{what} takes integral values here); pass an int or a tk.Int")
    return int(x)


def _static(*xs) -> bool:
    return all(type(x) is Int for x in xs)


def _keep(value: int, *xs):
    """``value`` as CuTe returns it: ``Int`` when every operand is static (``C<op(t,u)>``), else a plain int."""
    return Int(value) if _static(*xs) else int(value)


def _cmod(a: int, b: int) -> int:
    return a - b * trunc_div(a, b)


def _zero_div(what: str, a, b):
    return LayoutError(f"{what}({to_str(a)}, {to_str(b)}) divides by zero (undefined in CuTe); pass a nonzero "
                       "divisor")


# ------------------------------------------------------------------------------------- two integers (math.hpp)
def _max2(t, u):
    a, b = _int(t, "max"), _int(u, "max")
    return _keep(b if a < b else a, t, u)


def _min2(t, u):
    a, b = _int(t, "min"), _int(u, "min")
    return _keep(a if a < b else b, t, u)


def _gcd2(t, u):
    """C++17-style Euclid as CuTe writes it (``u %= t; t %= u`` with C++ remainders): the sign may be negative."""
    a, b = _int(t, "gcd"), _int(u, "gcd")
    while True:
        if a == 0:
            return _keep(b, t, u)
        b = _cmod(b, a)
        if b == 0:
            return _keep(a, t, u)
        a = _cmod(a, b)


def _variadic(name, pair, t0, ts):
    """int_tuple.hpp's ``max/min/gcd(t0, ts...)``: a tuple is reduced first (recursively), then folded from the
    right (``op(t0, op(ts...))``); an empty tuple has nothing to reduce and does not compile in CuTe."""
    if is_tuple(t0):
        if not t0:
            raise LayoutError(f"{name}: the tuple () is empty (CuTe's {name}() with no argument does not compile); "
                              "pass a non-empty tuple or integers")
        t0 = _variadic(name, pair, t0[0], t0[1:])
    else:
        _int(t0, name)
    if not ts:
        return t0
    return pair(t0, _variadic(name, pair, ts[0], ts[1:]))


def max(t0, *ts):  # noqa: A001 - CuTe's name
    """CuTe's ``max``: the largest leaf of integers and (nested) tuples; static when every leaf is."""
    return _variadic("max", _max2, t0, ts)


def min(t0, *ts):  # noqa: A001 - CuTe's name
    """CuTe's ``min``: the smallest leaf of integers and (nested) tuples; static when every leaf is."""
    return _variadic("min", _min2, t0, ts)


def gcd(t0, *ts):
    """CuTe's ``gcd``: the greatest common divisor of every leaf (``gcd(0, x) = x``); static when every leaf is."""
    return _variadic("gcd", _gcd2, t0, ts)


def lcm(t, u):
    """CuTe's ``lcm(t, u) = (t / gcd(t, u)) * u`` of two integers (CuTe has no tuple form)."""
    _int(t, "lcm"), _int(u, "lcm")
    g = _gcd2(t, u)
    if int(g) == 0:
        raise _zero_div("lcm", t, u)
    return _keep(trunc_div(int(t), int(g)) * int(u), t, u)


def abs(t):  # noqa: A001 - CuTe's name
    """CuTe's ``abs`` of an integer (static stays static)."""
    v = _int(t, "abs")
    return _keep(-v if v < 0 else v, t)


def signum(t):
    """1 for positive, -1 for negative, 0 for zero (static ``C<signum(t)>`` for a static integer)."""
    v = _int(t, "signum")
    return _keep((v > 0) - (v < 0), t)


def has_single_bit(t):
    """Whether ``t`` is a power of two: ``_1``/``_0`` for a static integer (``C<true>``), a bool otherwise."""
    v = _int(t, "has_single_bit")
    ok = v != 0 and (v & (v - 1)) == 0
    return Int(int(ok)) if _static(t) else ok


def _unsigned(t, what: str) -> int:
    v = _int(t, what)
    if v < 0:
        raise LayoutError(f"{what}: {v} is negative, and CuTe's {what} is only for unsigned types (a static_assert);"
                          " pass a value >= 0")
    return v


def bit_width(t) -> int:
    """Bits needed to represent ``t`` (0 for 0): ``1 + floor(log2(t))``. CuTe takes unsigned values only."""
    return _unsigned(t, "bit_width").bit_length()


def bit_ceil(t) -> int:
    """The smallest power of two not less than ``t`` (1 for 0)."""
    v = _unsigned(t, "bit_ceil")
    return 1 if v == 0 else 1 << (v - 1).bit_length()


def bit_floor(t) -> int:
    """The largest power of two not greater than ``t`` (0 for 0)."""
    v = _unsigned(t, "bit_floor")
    return 0 if v == 0 else 1 << (v.bit_length() - 1)


def popcount(t) -> int:
    """The number of 1 bits of ``t`` (unsigned)."""
    return bin(_unsigned(t, "popcount")).count("1")


def log_2(t) -> int:
    """``bit_width(t) - 1``: floor(log2(t)) of a positive (unsigned) integer."""
    v = _unsigned(t, "log_2")
    if v == 0:
        raise LayoutError("log_2: 0 has no logarithm (CuTe asserts x > 0); pass a positive value")
    return v.bit_length() - 1


def shiftl(x, s):
    """``x << s`` for ``s >= 0``, else ``x >> -s`` (static when both are)."""
    a, b = _int(x, "shiftl"), _int(s, "shiftl")
    return _keep(a << b if b >= 0 else a >> -b, x, s)


def shiftr(x, s):
    """``x >> s`` for ``s >= 0``, else ``x << -s`` (static when both are)."""
    a, b = _int(x, "shiftr"), _int(s, "shiftr")
    return _keep(a >> b if b >= 0 else a << -b, x, s)


def safe_div(t, u):
    """CuTe's ``safe_div``: ``t / u`` (C++ division). Two static integers must divide exactly (CuTe's
    static_assert); with a dynamic operand CuTe does not check (its assert is commented out), nor does this."""
    a, b = _int(t, "safe_div"), _int(u, "safe_div")
    if b == 0:
        raise _zero_div("safe_div", t, u)
    if _static(t, u) and a % b != 0:
        raise LayoutError(f"safe_div({t}, {u}): static safe_div requires t % u == 0 (CuTe's static_assert); pass a "
                          "divisor of t, or ceil_div to round up")
    return _keep(trunc_div(a, b), t, u)


# ------------------------------------------------------------------------------------- int tuples (int_tuple.hpp)
def sum(t):  # noqa: A001 - CuTe's name
    """CuTe's ``sum``: ``_0 + ... + sum(t_i)`` over every leaf (``()`` gives ``_0``; an integer is itself)."""
    if is_tuple(t):
        total = Int(0)
        for v in t:
            total = total + sum(v)
        return total
    _int(t, "sum")
    return t


def product_like(t, guide):
    """CuTe's ``product_like``: the product of ``t``'s subtree at each leaf of ``guide`` (``guide``'s profile)."""
    return transform_leaf(guide, t, lambda g, x: product(x))


# ------------------------------------------------------------------------------------- function objects
class _Fn:
    """A CuTe function object: ``tk.plus()`` is ``cute::plus{}``, so ``tk.fold(t, tk.Int(0), tk.plus())`` reads
    as the C++. Integers keep tmakit's staticness rules (``tk.Int`` op ``tk.Int`` stays static)."""

    __slots__ = ()

    def __repr__(self):
        return f"{type(self).__name__}{{}}"

    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(type(self))


class identity(_Fn):  # noqa: N801 - CuTe's names
    def __call__(self, x):
        return x


class negate(_Fn):  # noqa: N801
    def __call__(self, x):
        return -x


class abs_fn(_Fn):  # noqa: N801
    def __call__(self, x):
        return abs(x)


class plus(_Fn):  # noqa: N801
    def __call__(self, a, b):
        return a + b


class minus(_Fn):  # noqa: N801
    def __call__(self, a, b):
        return a - b


class multiplies(_Fn):  # noqa: N801
    def __call__(self, a, b):
        return a * b


class divides(_Fn):  # noqa: N801
    """C++ ``a / b`` on integers: truncates toward zero (Python's ``//`` floors)."""

    def __call__(self, a, b):
        x, y = _int(a, "divides"), _int(b, "divides")
        if y == 0:
            raise _zero_div("divides", a, b)
        if type(a) is Int and x == 0:  # CuTe: _0 / x is the static _0
            return Int(0)
        return _keep(trunc_div(x, y), a, b)


class modulus(_Fn):  # noqa: N801
    """C++ ``a % b`` on integers: the sign of ``a``."""

    def __call__(self, a, b):
        x, y = _int(a, "modulus"), _int(b, "modulus")
        if y == 0:
            raise _zero_div("modulus", a, b)
        if (type(a) is Int and x == 0) or (type(b) is Int and y in (1, -1)):  # CuTe: _0 % x and x % _1 are _0
            return Int(0)
        return _keep(_cmod(x, y), a, b)


class max_fn(_Fn):  # noqa: N801
    """``cute::max`` of two integers (functional.hpp sees math.hpp's overloads only, so no tuples)."""

    def __call__(self, a, b):
        return _max2(a, b)


class min_fn(_Fn):  # noqa: N801
    def __call__(self, a, b):
        return _min2(a, b)

