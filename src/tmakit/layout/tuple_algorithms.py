"""CuTe's algorithms on (hierarchical) tuples (algorithm/tuple_algorithms.hpp, container/tuple.hpp).

Tuples are Python tuples; anything else is CuTe's "non-tuple" (an integer, a basis, ``_``, a layout ...).
Template arguments (``insert<N>``, ``group<B,E>``, ``repeat<N>``) are trailing positional arguments. Where CuTe
would not compile (a mode index out of range, ranks that differ) these raise ``LayoutError``.
"""

from __future__ import annotations

import builtins

from .compare import c_and, c_eq, c_not, c_or
from .int_tuple import LayoutError, flatten, is_tuple, unwrap, wrap  # noqa: F401 - wrap/unwrap are CuTe's too
from .integer import Int, to_str

_zip = builtins.zip  # this module defines CuTe's zip
__all__ = [
    "apply", "transform_apply", "transform", "transform_leaf", "for_each", "for_each_leaf", "find_if", "find",
    "any_of", "all_of", "none_of", "filter_tuple", "fold", "fold_first", "front", "back", "wrap", "unwrap",
    "flatten_to_tuple", "tuple_cat", "insert", "remove", "replace", "replace_front", "replace_back", "tuple_repeat",
    "repeat", "repeat_like", "iscan", "escan", "zip", "zip2_by", "reverse", "group_range", "group",
]


def _need_tuple(t, what, fix="pass a tuple"):
    if not is_tuple(t):
        raise LayoutError(f"{what}: {to_str(t)} is not a tuple (CuTe needs a tuple_size here); {fix}")


def _check_index(n, lo, hi, what, t):
    if isinstance(n, bool) or not isinstance(n, int) or not lo <= int(n) <= hi:
        raise LayoutError(f"{what}: index {n!r} is outside {lo}..{hi} for {to_str(t)} (CuTe's index is a template "
                          "argument and does not compile out of range); pick an index in range")
    return int(n)


def apply(t, f):
    """``f(t_0, t_1, ...)``: unpack a tuple into a call."""
    _need_tuple(t, "apply")
    return f(*t)


def transform_apply(t, f, g):
    """``g(f(t_0), f(t_1), ...)`` (``g(f(t))`` for a non-tuple)."""
    return g(*(f(x) for x in t)) if is_tuple(t) else g(f(t))


def _same_ranks(ts, what):
    for u in ts[1:]:
        if not is_tuple(u) or len(u) != len(ts[0]):
            raise LayoutError(f"{what}: {to_str(u)} does not have the rank of {to_str(ts[0])} (CuTe's 'Mismatched "
                              "tuple_size'); give tuples of one rank")


def transform(*args):
    """``transform(t, f)`` is ``(f(t_0), f(t_1), ...)`` (``f(t)`` for a non-tuple); with two or three tuples of one
    rank, ``f`` takes a mode of each."""
    *ts, f = args
    if not 1 <= len(ts) <= 3:
        raise LayoutError("transform(t, f), transform(t0, t1, f) or transform(t0, t1, t2, f)")
    if not is_tuple(ts[0]):
        return f(*ts)
    _same_ranks(ts, "transform")
    return tuple(f(*xs) for xs in _zip(*ts))


def transform_leaf(*args):
    """``transform`` applied at the leaves: ``f`` on each integer, the nesting kept (the first tuple's profile)."""
    *ts, f = args
    if not 1 <= len(ts) <= 2:
        raise LayoutError("transform_leaf(t, f) or transform_leaf(t0, t1, f)")
    if not is_tuple(ts[0]):
        return f(*ts)
    return transform(*ts, lambda *xs: transform_leaf(*xs, f))


def for_each(t, f):
    """Call ``f`` on each top-level mode (on ``t`` itself if it is not a tuple)."""
    for x in (t if is_tuple(t) else (t,)):
        f(x)


def for_each_leaf(t, f):
    """Call ``f`` on each leaf, depth first."""
    for x in flatten(t):
        f(x)


def _static_truth(r, what):
    if type(r) is not Int:
        raise LayoutError(f"{what}: the predicate returned the run-time value {r!r}; CuTe reads the result as a "
                          "compile-time constant, so it must be static (tk.Int: compare static values)")
    return bool(r)


def find_if(t, f):
    """The index of the first mode where ``f`` is true (``rank(t)`` when none is), static. ``f`` must give a static
    result (``Int``), as CuTe's ``decltype(f(x))::value``; a non-tuple gives ``_0`` or ``_1``."""
    if not is_tuple(t):
        return Int(0 if _static_truth(f(t), "find_if") else 1)
    hits = [_static_truth(f(x), "find_if") for x in t]
    return Int(hits.index(True) if True in hits else len(t))


def find(t, x):
    """``find_if(t, v == x)``: the index of the first mode equal to ``x`` (both static, so the answer is)."""
    return find_if(t, lambda v: c_eq(v, x))


def any_of(t, f):
    """``false || f(t_0) || f(t_1) ...`` with C++'s static/run-time rules (``f(t)`` for a non-tuple)."""
    if not is_tuple(t):
        return f(t)
    out = Int(0)
    for x in t:
        out = c_or(out, f(x))
    return out


def all_of(t, f):
    """``true && f(t_0) && f(t_1) ...`` with C++'s static/run-time rules (``f(t)`` for a non-tuple)."""
    if not is_tuple(t):
        return f(t)
    out = Int(1)
    for x in t:
        out = c_and(out, f(x))
    return out


def none_of(t, f):
    return c_not(any_of(t, f))


def filter_tuple(*args):
    """``tuple_cat(f(t_0), f(t_1), ...)``: ``f`` returns a tuple per mode (``()`` to drop it)."""
    *ts, f = args
    if not is_tuple(ts[0]):
        return tuple_cat(f(*ts))
    _same_ranks(ts, "filter_tuple")
    return tuple_cat(*(f(*xs) for xs in _zip(*ts)))


def fold(t, v, f):
    """``f(...f(f(v, t_0), t_1)..., t_n)`` (``f(v, t)`` for a non-tuple)."""
    for x in (t if is_tuple(t) else (t,)):
        v = f(v, x)
    return v


def fold_first(t, f):
    """``fold`` seeded with the first mode (a non-tuple is returned as it is)."""
    if not is_tuple(t):
        return t
    if not t:
        raise LayoutError("fold_first: the tuple is empty (CuTe's get<0> does not compile); fold with an initial "
                          "value instead")
    return fold(t[1:], t[0], f)


def front(t):
    """The first leaf."""
    while is_tuple(t):
        _check_index(0, 0, len(t) - 1, "front", t)
        t = t[0]
    return t


def back(t):
    """The last leaf."""
    while is_tuple(t):
        _check_index(0, 0, len(t) - 1, "back", t)
        t = t[-1]
    return t


def flatten_to_tuple(t):
    """The leaves as a flat tuple (a non-tuple becomes a 1-tuple)."""
    return flatten(t)


def tuple_cat(*ts):
    """The modes of every tuple, in order (no tuple gives ``()``)."""
    for t in ts:
        _need_tuple(t, "tuple_cat", "wrap integers in tuples")
    return tuple(x for t in ts for x in t)


def insert(t, x, n):
    """``insert<N>(t, x)``: ``x`` placed before mode ``N``."""
    _need_tuple(t, "insert")
    n = _check_index(n, 0, len(t), "insert", t)
    return t[:n] + (x,) + t[n:]


def remove(t, n):
    """``remove<N>(t)``: ``t`` without mode ``N`` (N = rank removes nothing, as in CuTe)."""
    _need_tuple(t, "remove")
    n = _check_index(n, 0, len(t), "remove", t)
    return t[:n] + t[n + 1:]


def replace(t, x, n):
    """``replace<N>(t, x)``: mode ``N`` becomes ``x`` (a non-tuple is mode 0 of itself; N = rank appends ``x``, as
    CuTe's does)."""
    if not is_tuple(t):
        _check_index(n, 0, 0, "replace", t)
        return x
    n = _check_index(n, 0, len(t), "replace", t)
    return t[:n] + (x,) + t[n + 1:]


def replace_front(t, x):
    return replace(t, x, 0)


def replace_back(t, x):
    if is_tuple(t) and not t:
        raise LayoutError("replace_back: the tuple is empty, it has no last mode (CuTe does not compile it)")
    return replace(t, x, len(t) - 1) if is_tuple(t) else x


def tuple_repeat(x, n):
    """``tuple_repeat<N>(x)``: a tuple of ``N`` copies of ``x`` (``(x,)`` for N = 1)."""
    return (x,) * _check_index(n, 0, 1 << 16, "tuple_repeat", x)


def repeat(x, n):
    """``repeat<N>(x)``: ``x`` itself for N = 1, else a tuple of ``N`` copies."""
    n = _check_index(n, 0, 1 << 16, "repeat", x)
    return x if n == 1 else (x,) * n


def repeat_like(t, x):
    """``x`` in place of every leaf of ``t`` (``t``'s profile)."""
    return tuple(repeat_like(v, x) for v in t) if is_tuple(t) else x


def group_range(begin, end, n, what, t):
    """CuTe's ``[B, E)`` of ``group<B,E>`` / ``take<B,E>`` on a tuple of rank ``n``: E = -1 means ``n``, and
    ``0 <= B <= E <= n`` (a static_assert or an out-of-range ``get`` otherwise)."""
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (begin, end)):
        raise LayoutError(f"{what}: B and E must be integers (CuTe's template arguments), got {begin!r}, {end!r}")
    e = n if end == -1 else int(end)
    if not 0 <= begin <= e <= n:
        raise LayoutError(f"{what}<{begin},{end}>({to_str(t)}): CuTe needs 0 <= B <= E <= rank = {n} (E = -1: the "
                          "rank); pick modes in range")
    return int(begin), e


def group(t, begin, end=-1):
    """``group<B,E>(t)``: modes ``[B, E)`` become one mode (``E = -1``: to the end); ``B == E`` leaves ``t`` as it
    is, since CuTe inserts no empty mode (a non-tuple is the 1-tuple of itself)."""
    w = wrap(t)
    b, e = group_range(begin, end, len(w), "group", t)
    return w[:b] + ((w[b:e],) if b < e else ()) + w[e:]


def iscan(t, v, f):
    """Inclusive scan: mode ``i`` becomes ``v_(i+1)``, with ``v_0 = v`` and ``v_(i+1) = f(v_i, t_i)``."""
    _need_tuple(t, "iscan")
    out = []
    for x in t:
        v = f(v, x)
        out.append(v)
    return _nonempty(tuple(out), "iscan")


def escan(t, v, f):
    """Exclusive scan: mode ``i`` becomes ``v_i``, with ``v_0 = v`` and ``v_(i+1) = f(v_i, t_i)``."""
    _need_tuple(t, "escan")
    _nonempty(t, "escan")
    out = []
    for x in t[:-1]:
        out.append(v)
        v = f(v, x)
    return tuple(out) + (v,)


def _nonempty(t, what):
    if not t:
        raise LayoutError(f"{what}: the tuple is empty (CuTe's scan needs a first mode); scan a non-empty tuple")
    return t


def zip(*ts):  # noqa: A001 - CuTe's name
    """Transpose: ``((a,b,c),(x,y,z))`` becomes ``((a,x),(b,y),(c,z))``; ``zip(t0, t1, ...)`` zips ``(t0, t1,
    ...)``. A tuple of non-tuples becomes a 1-tuple of itself; a non-tuple is returned as it is."""
    t = ts[0] if len(ts) == 1 else tuple(ts)
    if not is_tuple(t):
        return t
    if not t:
        raise LayoutError("zip: the tuple is empty (CuTe reads the rank of its first mode); zip a non-empty tuple")
    if not is_tuple(t[0]):
        return (t,)
    _same_ranks(t, "zip")
    return tuple(tuple(u[j] for u in t) for j in range(len(t[0])))


def zip2_by(t, guide):
    """Guided zip of rank-2 modes: at each leaf of ``guide`` the mode of ``t`` is a pair ``(a, b)``; the result
    gathers the ``a``s into mode 0 and the ``b``s (then ``t``'s modes past the guide) into mode 1."""
    if not is_tuple(guide):
        if not is_tuple(t) or len(t) != 2:
            raise LayoutError(f"zip2_by: mode {to_str(t)} is not a (tile, rest) pair; a '_' tiler mode cannot be "
                              "zipped (CuTe rejects it too)")
        return t
    if not is_tuple(t) or len(t) < len(guide):
        raise LayoutError(f"zip2_by: the guide {to_str(guide)} has more modes than {to_str(t)}; give a guide of at "
                          "most its rank")
    split = [zip2_by(t[i], g) for i, g in enumerate(guide)]
    return tuple(s[0] for s in split), tuple(s[1] for s in split) + tuple(t[len(guide):])


def reverse(t):
    """The modes in reverse order (a non-tuple is returned as it is)."""
    return tuple(reversed(t)) if is_tuple(t) else t

