"""Nested integer tuples (CuTe's IntTuple): shapes, strides and coordinates, and their helpers."""

from __future__ import annotations

from functools import reduce

from .integer import Int, Underscore, _keep, is_int, is_static, is_underscore  # noqa: F401


class LayoutError(ValueError):
    """A layout-algebra precondition failed (the message says which, with the values)."""


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
    return tuple(product(v) for v in t) if is_tuple(t) else product(t)


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
    """CuTe's ``shape_div``: a / b where one divides the other; b may be a tuple (its product is used)."""
    if is_tuple(a):
        if is_tuple(b):
            if len(a) != len(b):
                raise LayoutError(f"shape_div: rank mismatch {a} vs {b}")
            return tuple(shape_div(x, y) for x, y in zip(a, b))
        out = []
        for v in a:
            out.append(shape_div(v, b))
            b = shape_div(b, product(v))
        return tuple(out)
    if is_tuple(b):
        return shape_div(a, product(b))
    ia, ib = int(a), int(b)
    if ia % ib != 0 and ib % ia != 0:
        raise LayoutError(f"shape_div: neither of {a} and {b} divides the other")
    q = ia // ib if ia // ib != 0 else ((ia > 0) - (ia < 0)) * ((ib > 0) - (ib < 0))
    return _keep(a, b, q)


def ceil_div_tuple(a, b):
    """CuTe's tuple ``ceil_div``: each mode of a divided (rounding up) by what remains of b."""
    if is_tuple(a):
        if is_tuple(b):
            return tuple(ceil_div_tuple(x, y) for x, y in zip(a, b)) + tuple(a[len(b):])
        out = []
        for v in a:
            out.append(ceil_div_tuple(v, b))
            b = ceil_div_tuple(b, product(v))
        return tuple(out)
    if is_tuple(b):
        return ceil_div_tuple(a, product(b))
    return _keep(a, b, -(-int(a) // int(b)))


def elem_scale(a, b):
    if is_tuple(a):
        return tuple(elem_scale(x, y) for x, y in zip(a, b))
    return a * product(b)


def congruent(a, b) -> bool:
    """Same hierarchical profile."""
    if is_tuple(a) != is_tuple(b):
        return False
    if is_tuple(a):
        return len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b))
    return True


def weakly_congruent(a, b) -> bool:
    """a's profile is a coarsening of b's (an integer in a matches any subtree of b)."""
    if not is_tuple(a):
        return True
    if not is_tuple(b):
        return False
    return len(a) == len(b) and all(weakly_congruent(x, y) for x, y in zip(a, b))


def compatible(a, b) -> bool:
    """Shape a is compatible with shape b: same size, and every coordinate of a is a coordinate of b."""
    if is_tuple(a):
        return is_tuple(b) and len(a) == len(b) and all(compatible(x, y) for x, y in zip(a, b))
    return int(a) == int(product(b))


def idx2crd(idx, shape, stride=None):
    """Index (or hierarchical coordinate) to the natural coordinate of ``shape`` (colexicographic)."""
    if stride is None:
        stride = compact_left_strides(shape)
    if is_tuple(idx):
        if not is_tuple(shape) or len(idx) != len(shape):
            raise LayoutError(f"idx2crd: coordinate {idx} does not match shape {shape}")
        return tuple(idx2crd(i, s, d) for i, s, d in zip(idx, shape, stride))
    if is_tuple(shape):
        return tuple(idx2crd(idx, s, d) for s, d in zip(shape, stride))
    return (idx // stride) % shape


def compact_left_strides(shape, current=Int(1)):
    if is_tuple(shape):
        out = []
        for s in shape:
            out.append(compact_left_strides(s, current))
            current = current * product(s)
        return tuple(out)
    return current


def crd2idx(crd, shape, stride):
    """Coordinate (an integer, a hierarchical tuple, or a mix) to offset through ``stride``."""
    if crd is None:
        crd = Int(0)
    if is_tuple(crd):
        if not is_tuple(shape) or len(crd) != len(shape):
            raise LayoutError(f"crd2idx: coordinate {crd} is not compatible with shape {shape}")
        return inner_product_crd(crd, shape, stride)
    if is_tuple(shape):
        if not shape:
            return Int(0)
        result = None
        for s, d in zip(shape[:-1], stride[:-1]):
            n = product(s)
            term = crd2idx(crd % n, s, d)
            result = term if result is None else result + term
            crd = crd // n
        last = crd2idx(crd, shape[-1], stride[-1])
        return last if result is None else result + last
    return crd * stride


def inner_product_crd(crd, shape, stride):
    terms = [crd2idx(c, s, d) for c, s, d in zip(crd, shape, stride)]
    return reduce(lambda x, y: x + y, terms)


def crd2crd(crd, dst_shape, src_shape=None):
    if is_tuple(crd):
        if is_tuple(dst_shape):
            return tuple(crd2crd(x, y) for x, y in zip(crd, dst_shape))
        if src_shape is None:
            raise LayoutError("crd2crd: ambiguous without the source shape")
        return crd2idx(crd, src_shape, compact_left_strides(src_shape))
    if is_tuple(dst_shape):
        return idx2crd(crd, dst_shape)
    return crd


def has_underscore(c) -> bool:
    if is_tuple(c):
        return any(has_underscore(v) for v in c)
    return is_underscore(c)


def slice_(crd, trg):
    """Keep the modes of ``trg`` where ``crd`` has ``_`` (flattening one level per ``_``, like CuTe)."""
    if is_tuple(crd):
        if not is_tuple(trg) or len(crd) != len(trg):
            raise LayoutError(f"slice: coordinate {_s(crd)} does not match {_s(trg)}")
        out = []
        for c, t in zip(crd, trg):
            out.extend(slice_(c, t))
        return tuple(out)
    if is_underscore(crd):
        return (trg,)
    return ()


def dice(crd, trg):
    """The complement of ``slice_``: keep the modes where ``crd`` is an integer."""
    if is_tuple(crd):
        out = []
        for c, t in zip(crd, trg):
            out.extend(dice(c, t))
        return tuple(out)
    if is_underscore(crd):
        return ()
    return (trg,)


def fill_underscore(crd):
    """Replace ``_`` by 0 (the offset of a slice)."""
    if is_tuple(crd):
        return tuple(fill_underscore(c) for c in crd)
    return Int(0) if is_underscore(crd) else crd


def make_int_tuple_like(t, value):
    if is_tuple(t):
        return tuple(make_int_tuple_like(v, value) for v in t)
    return value


def _s(x):
    from .integer import to_str

    return to_str(x)
