"""Memoisation of the pure layout algebra: results keyed on the *printed* form of layouts and on tagged integers,
so a static ``_16`` and a dynamic ``16`` (equal and equally hashed as Python ints) never share an entry."""

from __future__ import annotations

import functools

from .arith_tuple import ArithTuple, ScaledBasis
from .integer import MAX_DEPTH, Int, LayoutError, Underscore
from .layout import Layout
from .swizzle import Swizzle

__all__ = ["memoized", "static_key", "key_by_print", "MEMO_SIZE"]

#: Entries per memoised function before its table is dropped and refilled.
MEMO_SIZE = 4096


class _Unkeyable(Exception):
    pass


#: Immutable classes whose values are keyed by their CuTe print (higher modules register theirs).
_KEYED_BY_PRINT: list[type] = [Layout]
#: For the classes whose print alone is ambiguous, the function giving their key instead.
_KEY_FNS: dict = {}


def key_by_print(cls: type, key=None) -> type:
    """Key values of ``cls`` (immutable, printed as CuTe prints them) by their print, or by ``key(value)`` where two
    values may print alike yet compute differently."""
    if cls not in _KEYED_BY_PRINT:
        _KEYED_BY_PRINT.append(cls)
    if key is not None:
        _KEY_FNS[cls] = key
    return cls


def static_key(x, depth=0):
    """A hashable key that tells static from dynamic integers and names layouts by their CuTe print."""
    if isinstance(x, tuple):
        if depth >= MAX_DEPTH:
            raise LayoutError(f"an argument nests tuples deeper than {MAX_DEPTH} levels; flatten it")
        return ("t",) + tuple(static_key(e, depth + 1) for e in x)
    if isinstance(x, Int):
        return ("s", int(x))
    if isinstance(x, bool):
        return ("b", x)
    if isinstance(x, int):
        return ("d", x)
    if x is None:
        return None
    if isinstance(x, tuple(_KEYED_BY_PRINT)):
        fn = _KEY_FNS.get(type(x))
        return (type(x).__name__, fn(x) if fn else str(x))
    if isinstance(x, Swizzle):
        return ("S", x.bits, x.base, x.shift)
    if isinstance(x, ScaledBasis):
        return ("E", x.mode, static_key(x.value))
    if isinstance(x, ArithTuple):
        return ("A", static_key(x.values))
    if isinstance(x, Underscore):
        return ("_",)
    raise _Unkeyable


def memoized(fn):
    """Cache ``fn``'s results (immutable layouts) per static key of its arguments; calls whose arguments have no
    key (numpy arrays, tensors, ...) run uncached. Errors are not cached: a failing call raises every time."""
    table: dict = {}

    @functools.wraps(fn)
    def cached(*args, **kw):
        try:
            key = (static_key(args), tuple((k, static_key(v)) for k, v in sorted(kw.items())) if kw else None)
        except _Unkeyable:
            return fn(*args, **kw)
        got = table.get(key, table)
        if got is table:
            if len(table) >= MEMO_SIZE:
                table.clear()
            got = table[key] = fn(*args, **kw)
        return got

    cached.cache_clear = table.clear
    return cached
