"""CuTe's tuple comparisons (int_tuple.hpp): lexicographic, colexicographic and element-wise, each with its
``less`` / ``leq`` / ``gtr`` / ``geq`` forms, and the C++ truth values they are built from.

A comparison is static (``_1`` / ``_0``, an ``Int``) where CuTe's is a ``C<bool>`` and a Python ``bool`` (printed
``1`` / ``0``) where CuTe's is a run-time ``bool``. ``&&`` and ``||`` follow integral_constant.hpp: a static ``_0``
makes ``&&`` static, a static true makes ``||`` static, whatever the other side is. Every term is evaluated, as C++
instantiates every term, so a comparison CuTe cannot compile (a tuple against an integer) raises ``LayoutError``.
"""

from __future__ import annotations

from .int_tuple import LayoutError, is_tuple
from .integer import Int, is_int, to_str


def _static(x) -> bool:
    return type(x) is Int


def c_and(a, b):
    """C++ ``a && b`` over static (``Int``) and run-time (``int`` / ``bool``) truth values."""
    if _static(a) and _static(b):
        return Int(bool(a) and bool(b))
    if (_static(a) and not a) or (_static(b) and not b):
        return Int(0)
    return bool(a) and bool(b)


def c_or(a, b):
    """C++ ``a || b``: static when both are, or when a static side is true."""
    if _static(a) and _static(b):
        return Int(bool(a) or bool(b))
    if (_static(a) and a) or (_static(b) and b):
        return Int(1)
    return bool(a) or bool(b)


def c_not(a):
    """C++ ``!a``: ``C<!t>`` for a static value, a ``bool`` otherwise."""
    return Int(not a) if _static(a) else not bool(a)


def _leaf(x, what):
    if not is_int(x):
        raise LayoutError(f"{what}: {to_str(x)} is not an integer or a tuple of integers; compare integer tuples")
    return x


def c_eq(a, b):
    """CuTe's ``a == b``: tuples of different ranks, or a tuple and an integer, are a static ``_0``; tuples of one
    rank compare mode by mode; integers give ``Int`` when both are static, else ``bool``."""
    if is_tuple(a) or is_tuple(b):
        if not (is_tuple(a) and is_tuple(b)) or len(a) != len(b):
            return Int(0)
        out = Int(1)
        for x, y in zip(a, b):
            out = c_and(out, c_eq(x, y))
        return out
    a, b = _leaf(a, "=="), _leaf(b, "==")
    return Int(int(a) == int(b)) if _static(a) and _static(b) else int(a) == int(b)


def c_lt(a, b, what="lex_less"):
    """C++ ``a < b`` on integers; CuTe defines no ``<`` between a tuple and an integer (it does not compile)."""
    if is_tuple(a) or is_tuple(b):
        raise LayoutError(f"{what}({to_str(a)}, {to_str(b)}): a tuple is compared with an integer, which CuTe does "
                          "not compile (no operator< on tuples); give both arguments the same profile")
    a, b = _leaf(a, what), _leaf(b, what)
    return Int(int(a) < int(b)) if _static(a) and _static(b) else int(a) < int(b)


def lex_less(a, b):
    """``a < b`` lexicographically (the first mode decides first): the order of coordinates in a row-major layout.
    A shorter tuple that agrees on its modes is less."""
    if not (is_tuple(a) and is_tuple(b)):
        return c_lt(a, b, "lex_less")
    return _lex(a, b, 0, lex_less, lambda i: (i, i))


def colex_less(a, b):
    """``a < b`` colexicographically (the last mode decides first): the order of coordinates in a column-major
    layout. Modes are paired from the back."""
    if not (is_tuple(a) and is_tuple(b)):
        return c_lt(a, b, "colex_less")
    return _lex(a, b, 0, colex_less, lambda i: (len(a) - 1 - i, len(b) - 1 - i))


def _lex(a, b, i, less, at):
    if i == len(b):
        return Int(0)
    if i == len(a):
        return Int(1)
    x, y = (a[at(i)[0]], b[at(i)[1]])
    return c_or(less(x, y), c_and(c_eq(x, y), _lex(a, b, i + 1, less, at)))


def elem_less(a, b):
    """``a < b`` in every mode (modes of ``a`` past ``b``'s rank make it false; ``b``'s extra modes are ignored)."""
    if not (is_tuple(a) and is_tuple(b)):
        return c_lt(a, b, "elem_less")
    out = Int(1)
    for i in range(len(a)):
        if i == len(b):
            return Int(0)
        out = c_and(out, elem_less(a[i], b[i]))
    return out


def lex_leq(a, b):
    return c_not(lex_less(b, a))


def lex_gtr(a, b):
    return lex_less(b, a)


def lex_geq(a, b):
    return c_not(lex_less(a, b))


def colex_leq(a, b):
    return c_not(colex_less(b, a))


def colex_gtr(a, b):
    return colex_less(b, a)


def colex_geq(a, b):
    return c_not(colex_less(a, b))


def elem_leq(a, b):
    """``not elem_less(b, a)``: CuTe's definition, so it is true as soon as one mode of ``b`` is not below ``a``'s."""
    return c_not(elem_less(b, a))


def elem_gtr(a, b):
    return elem_less(b, a)


def elem_geq(a, b):
    return c_not(elem_less(a, b))


__all__ = [
    "lex_less", "lex_leq", "lex_gtr", "lex_geq", "colex_less", "colex_leq", "colex_gtr", "colex_geq",
    "elem_less", "elem_leq", "elem_gtr", "elem_geq",
]
