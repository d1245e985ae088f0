"""Nested integer tuples (CuTe's IntTuple): shapes, strides and coordinates, and their helpers."""

from __future__ import annotations

from functools import reduce

from .integer import (  # noqa: F401 - LayoutError is re-exported here, where the algebra has always found it
    MAX_DEPTH,
    Int,
    LayoutError,
    Underscore,
    _keep,
    cdiv,
    check_divisor,
    cmod,
    is_int,
    is_static,
    is_underscore,
    to_str,
    trunc_div,
)


def is_tuple(x) -> bool:
    return isinstance(x, tuple)


def flatten(t) -> tuple:
    """Depth-first leaves of a nested tuple (an integer becomes a 1-tuple)."""
    if not is_tuple(t):
        return (t,)
    out = []
    for v in t:
        out.extend(flatten(v))
    return tuple(out)


def wrap(t) -> tuple:
    return t if is_tuple(t) else (t,)


def unwrap(t):
    """A 1-tuple becomes its element (recursively), as CuTe's unwrap."""
    while is_tuple(t) and len(t) == 1:
        t = t[0]
    return t


def rank(t) -> int:
    return len(t) if is_tuple(t) else 1


def depth(t) -> int:
    if is_tuple(t):
        return 1 + max((depth(v) for v in t), default=0)
    return 0


def _mul(a, b):
    return a * b


def product(t):
    """Product of all leaves (static when all are static); ``()`` gives ``_1``."""
    if is_tuple(t):
        return reduce(_mul, (product(v) for v in t), Int(1))
    return t


def product_each(t):
    """The product of each mode, always as a tuple (an integer gives a 1-tuple), as CuTe's ``product_each``."""
    return tuple(product(v) for v in wrap(t))


def tsum(t):
    if is_tuple(t):
        return reduce(lambda a, b: a + b, (tsum(v) for v in t), Int(0))
    return t


def inner_product(a, b):
    """Sum of elementwise products of congruent tuples (no leading zero is added, so bases stay bases)."""
    if is_tuple(a):
        if not is_tuple(b) or len(a) != len(b):
            raise LayoutError(f"inner_product needs congruent tuples, got {a} and {b}")
        terms = [inner_product(x, y) for x, y in zip(a, b)]
        if not terms:
            return Int(0)
        return reduce(lambda x, y: x + y, terms)
    return a * b


def prefix_product(a, init=Int(1)):
    """Exclusive prefix product (CuTe's ``prefix_product``), hierarchical."""
    if is_tuple(a):
        if is_tuple(init):
            return tuple(prefix_product(x, i) for x, i in zip(a, init))
        out = []
        for v in a:
            out.append(prefix_product(v, init))
            init = init * product(v)
        return tuple(out)
    return init


def shape_div(a, b):
    """CuTe's ``shape_div``: a / b (rounding up) where one divides the other; b may be a tuple (its product).

    As in CuTe, the divisibility condition is checked only when both values are static."""
    if is_tuple(a):
        if is_tuple(b):
            if len(a) != len(b):
                raise LayoutError(f"shape_div: rank mismatch {_s(a)} vs {_s(b)}")
            return tuple(shape_div(x, y) for x, y in zip(a, b))
        out = []
        for v in a:
            out.append(shape_div(v, b))
            b = shape_div(b, v)
        return tuple(out)
    if is_tuple(b):
        return shape_div(a, product(b))
    check_divisor(a, b)
    if is_static(a) and is_static(b) and int(a) % int(b) != 0 and int(b) % int(a) != 0:
        raise LayoutError(f"shape_div: neither of {_s(a)} and {_s(b)} divides the other")
    return _ceil(a, b)


def _ceil(a, b):
    """``(a + b - _1) / b`` with CuTe's staticness and C++'s truncating division."""
    check_divisor(a, b)
    return _keep(a, b, trunc_div(int(a) + int(b) - 1, int(b)))


def ceil_div_tuple(a, b):
    """CuTe's tuple ``ceil_div``: each mode of a divided (rounding up) by what remains of b."""
    if is_tuple(a):
        if is_tuple(b):
            if len(b) > len(a):
                raise LayoutError(f"ceil_div: {_s(b)} has more modes than {_s(a)}")
            b = tuple(b) + (Int(1),) * (len(a) - len(b))
            return tuple(ceil_div_tuple(x, y) for x, y in zip(a, b))
        out = []
        for v in a:
            out.append(ceil_div_tuple(v, b))
            b = ceil_div_tuple(b, v)
        return tuple(out)
    if is_tuple(b):
        return ceil_div_tuple(a, product(b))
    return _ceil(a, b)


def elem_scale(a, b):
    """CuTe's elem_scale: ``a`` scaled leaf by leaf by the size of ``b``'s matching mode (``a``'s profile)."""
    if is_tuple(a):
        if not is_tuple(b) or len(a) != len(b):
            raise LayoutError(f"elem_scale: {_s(b)} must have the rank of {_s(a)} ({rank(a)}); pass one scale per mode")
        return tuple(elem_scale(x, y) for x, y in zip(a, b))
    return a * product(b)


def _truth(ok, static=True):
    """A CuTe predicate's result: ``_1``/``_0`` (``Int``) when CuTe knows it at compile time, else a ``bool``."""
    return Int(int(bool(ok))) if static else bool(ok)


def _all(results):
    """CuTe's ``(true_type && ... && z)``: a static ``_0`` term makes it ``_0`` (CuTe's ``C<false> && x``); else
    static while every term is, dynamic (a ``bool``) once one is not."""
    results = list(results)
    if any(type(r) is Int and not r for r in results):
        return Int(0)
    return _truth(all(results), all(type(r) is Int for r in results))


def _shape_arg(x):
    """A layout's (or tensor's) shape, or the tuple itself: CuTe's predicates take either."""
    return x.shape if hasattr(x, "shape") and not is_tuple(x) else x


def congruent(a, b):
    """``_1`` when ``a`` and ``b`` have the same hierarchical profile, else ``_0`` (always static, as in CuTe)."""
    def same(x, y):
        if is_tuple(x) != is_tuple(y):
            return False
        return not is_tuple(x) or (len(x) == len(y) and all(same(u, v) for u, v in zip(x, y)))

    return _truth(same(_shape_arg(a), _shape_arg(b)))


def weakly_congruent(a, b):
    """``_1`` when ``a``'s profile is a coarsening of ``b``'s (an integer in ``a`` matches any subtree of ``b``)."""
    a, b = _shape_arg(a), _shape_arg(b)
    if not is_tuple(a):
        return Int(1)
    if not is_tuple(b) or len(a) != len(b):
        return Int(0)
    return _all(weakly_congruent(x, y) for x, y in zip(a, b))


def compatible(a, b):
    """Shape ``a`` is compatible with shape ``b``: same size, and every coordinate of ``a`` is one of ``b`` (each
    leaf of ``a`` has the size of ``b``'s subtree there). Static (``_1``/``_0``) where the sizes are."""
    a, b = _shape_arg(a), _shape_arg(b)
    if is_tuple(a):
        if not is_tuple(b) or len(a) != len(b):
            return Int(0)
        return _all(compatible(x, y) for x, y in zip(a, b))
    n = product(b)
    return _truth(int(a) == int(n), type(a) is Int and type(n) is Int)


def round_up(a, b):
    """CuTe's round_up: ``a`` rounded up to a multiple of ``b``, mode by mode for tuples (missing modes of ``b``
    count as ``_1``)."""
    if is_tuple(a) and is_tuple(b):
        if len(b) > len(a):
            raise LayoutError(f"round_up: {_s(b)} has more modes than {_s(a)}; give at most one multiple per mode")
        return tuple(round_up(x, y) for x, y in zip(a, tuple(b) + (Int(1),) * (len(a) - len(b))))
    if is_tuple(a) or is_tuple(b):
        raise LayoutError(f"round_up: {_s(a)} and {_s(b)} must both be integers or both tuples (CuTe has no mixed "
                          "form); wrap the integer in a tuple")
    return _ceil(a, b) * b


def idx2crd(idx, shape, stride=None):
    """Index to the natural coordinate of ``shape`` (colexicographic), or, with ``stride``, CuTe's
    ``idx2crd(idx, shape, stride)``: each mode's coordinate is ``(idx / stride) % shape``."""
    if is_tuple(idx):
        if not is_tuple(shape) or len(idx) != len(shape):
            raise LayoutError(f"idx2crd: coordinate {_s(idx)} does not match shape {_s(shape)}")
        if stride is None:
            return tuple(idx2crd(i, s) for i, s in zip(idx, shape))
        return tuple(idx2crd(i, s, d) for i, s, d in zip(idx, shape, stride))
    if stride is None:
        return _idx2crd_colex(idx, shape)
    if is_tuple(shape):
        if not is_tuple(stride):
            stride = compact_left_strides(shape, stride)
        return tuple(idx2crd(idx, s, d) for s, d in zip(shape, stride))
    if type(shape) is Int and int(shape) == 1:
        return Int(0)
    return cmod(cdiv(idx, stride), shape)


def _idx2crd_colex(idx, shape):
    """CuTe's 2-argument idx2crd: divmod by each mode's size, the last mode takes the rest."""
    if not is_tuple(shape):
        return idx
    out = []
    for s in shape[:-1]:
        n = product(s)
        out.append(_idx2crd_colex(cmod(idx, n), s))
        idx = cdiv(idx, n)
    if shape:
        out.append(_idx2crd_colex(idx, shape[-1]))
    return tuple(out)


def compact_left_strides(shape, current=Int(1)):
    if is_tuple(shape):
        out = []
        for s in shape:
            out.append(compact_left_strides(s, current))
            current = current * product(s)
        return tuple(out)
    return current


def crd2idx(crd, shape, stride=None):
    """Coordinate (an integer, a hierarchical tuple, or a mix) to offset through ``stride``; without ``stride``,
    the colexicographic index of the coordinate in ``shape`` (CuTe's 2-argument crd2idx)."""
    if stride is None:
        return _crd2idx_colex(crd, shape)
    if crd is None:
        crd = Int(0)
    if is_tuple(crd):
        if not is_tuple(shape) or len(crd) != len(shape):
            raise LayoutError(f"crd2idx: coordinate {_s(crd)} is not compatible with shape {_s(shape)}")
        return inner_product_crd(crd, shape, stride)
    if is_tuple(shape):
        if not shape:
            return Int(0)
        if type(crd) is Int and int(crd) == 0:  # CuTe keeps a static zero static in every mode
            return reduce(lambda x, y: x + y, (crd2idx(crd, s, d) for s, d in zip(shape, stride)))
        terms = []
        for s, d in zip(shape[:-1], stride[:-1]):
            n = product(s)
            terms.append(crd2idx(cmod(crd, n), s, d))
            crd = cdiv(crd, n)
        terms.append(crd2idx(crd, shape[-1], stride[-1]))
        return reduce(lambda x, y: y + x, reversed(terms))
    return crd * stride


def _crd2idx_colex(crd, shape):
    if not is_tuple(crd):
        return crd
    flat_c, flat_s = flatten(crd), flatten(_product_like(shape, crd))
    idx = flat_c[-1]
    for c, s in zip(reversed(flat_c[:-1]), reversed(flat_s[:-1])):
        idx = c + s * idx
    return idx


def _product_like(shape, guide):
    if is_tuple(guide):
        return tuple(_product_like(s, g) for s, g in zip(shape, guide))
    return product(shape)


def inner_product_crd(crd, shape, stride):
    terms = [crd2idx(c, s, d) for c, s, d in zip(crd, shape, stride)]
    return reduce(lambda x, y: x + y, terms)


def crd2crd(crd, src_shape, dst_shape):
    """CuTe's crd2crd: re-express a coordinate of ``src_shape`` as a coordinate of ``dst_shape`` (mode by mode where
    all three are tuples, else through the 1-D index)."""
    if is_tuple(crd) and is_tuple(src_shape) and is_tuple(dst_shape):
        if not len(crd) == len(src_shape) == len(dst_shape):
            raise LayoutError(f"crd2crd: coordinate {_s(crd)}, source shape {_s(src_shape)} and target shape "
                              f"{_s(dst_shape)} need one rank; give shapes of the coordinate's rank")
        return tuple(crd2crd(c, s, d) for c, s, d in zip(crd, src_shape, dst_shape))
    return idx2crd(crd2idx(crd, src_shape), dst_shape)


def has_underscore(c, depth=0) -> bool:
    if is_tuple(c):
        if depth >= MAX_DEPTH:
            raise LayoutError(f"a coordinate nests deeper than {MAX_DEPTH} levels; flatten it")
        return any(has_underscore(v, depth + 1) for v in c)
    return is_underscore(c)


def slice_(crd, trg):
    """CuTe's slice: keep the modes of ``trg`` where ``crd`` has ``_`` (nested ones are flattened into the tuple);
    a bare ``_`` keeps all of ``trg``."""
    if is_underscore(crd):
        return trg
    return _lift(crd, trg, keep_underscore=True) if is_tuple(crd) else ()


def dice(crd, trg):
    """CuTe's dice, the complement of ``slice_``: keep the modes where ``crd`` is an integer."""
    if is_tuple(crd):
        return _lift(crd, trg, keep_underscore=False)
    return () if is_underscore(crd) else trg


def _lift(crd, trg, keep_underscore):
    if is_tuple(crd):
        if not is_tuple(trg) or len(crd) != len(trg):
            raise LayoutError(f"slice: coordinate {_s(crd)} does not match {_s(trg)}")
        out = []
        for c, t in zip(crd, trg):
            out.extend(_lift(c, t, keep_underscore))
        return tuple(out)
    return (trg,) if is_underscore(crd) == keep_underscore else ()


def fill_underscore(crd):
    """Replace ``_`` by 0 (the offset of a slice)."""
    if is_tuple(crd):
        return tuple(fill_underscore(c) for c in crd)
    return Int(0) if is_underscore(crd) else crd


def make_int_tuple(t, n, init, count):
    """CuTe's ``make_int_tuple<N>(t, n, init)``: ``N`` (``count``) run-time integers, ``t[i]`` for ``i < n`` and
    ``init`` after (one integer for N = 1). The values are dynamic, as the array CuTe reads them from is."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise LayoutError(f"make_int_tuple: N must be a positive integer (CuTe's static_assert(N > 0)), got "
                          f"{count!r}")
    if min(int(n), count) > len(t):
        raise LayoutError(f"make_int_tuple: reads {min(int(n), count)} values but the array has {len(t)} (CuTe would "
                          "read past its end); pass n <= len(t)")
    values = tuple(int(t[i]) if i < n else int(init) for i in range(count))
    return values[0] if count == 1 else values


def make_int_tuple_like(t, value):
    if is_tuple(t):
        return tuple(make_int_tuple_like(v, value) for v in t)
    return value


def _s(x):
    return to_str(x)
