"""CuTe's layout algebra: coalesce, composition, complement, inverses, divides and products.

Each function follows CuTe's definition (cute/layout.hpp), including where CuTe branches on whether a value is
static, so results print exactly as CuTe prints them.
"""

from __future__ import annotations

import functools

from .arith_tuple import ScaledBasis
from .int_tuple import (
    LayoutError,
    ceil_div_tuple,
    flatten,
    is_tuple,
    make_int_tuple_like,
    product,
    product_each,
    rank,
    unwrap,
    wrap,
)
from .integer import Int, _keep, ceil_div, imin, is_constant, is_int, is_static, is_underscore, signum, to_str
from .layout import Layout, LayoutLeft, compact_major, compact_order, cosize, make_layout
from .memo import memoized


def _lift(tensors=False):
    """Apply the decorated op to the Layout inside a ComposedLayout (keeping its swizzle and offset, as
    layout_composed.hpp does) and, with ``tensors``, inside a Tensor (keeping its iterator, as tensor_impl.hpp)."""

    def deco(fn):
        @functools.wraps(fn)
        def lifted(x, *args, **kw):
            from .swizzle import ComposedLayout

            if isinstance(x, ComposedLayout):
                return ComposedLayout(x.layout_a, x.offset, lifted(x.layout_b, *args, **kw))
            if tensors and hasattr(x, "iterator") and hasattr(x, "layout"):
                return type(x)(x.iterator, lifted(x.layout, *args, **kw))
            return fn(x, *args, **kw)

        return lifted

    return deco


def _as_layout(x):
    if isinstance(x, Layout):
        return x
    if is_int(x):
        return make_layout(x)
    raise LayoutError(f"expected a layout or an integer, got {x!r}")


def _static_true_eq(a, b) -> bool:
    """CuTe's ``is_constant<true, decltype(a == b)>``: equal, and both known statically."""
    return is_static(a) and is_static(b) and _val(a) == _val(b)


def _val(x):
    return (x.mode, int(x.value)) if isinstance(x, ScaledBasis) else ((), int(x))


def _bw_coalesce(fs, fd, ns, nd):
    """Merge flattened modes back to front (CuTe's detail::bw_coalesce)."""
    for s, d in zip(reversed(fs), reversed(fd)):
        if is_constant(1, s):
            continue
        if not is_tuple(ns) and is_constant(1, ns):
            ns, nd = s, d
        elif is_static(_front(ns)) and _static_true_eq(s * d, _front(nd)):
            ns, nd = _replace_front(ns, s * _front(ns)), _replace_front(nd, d)
        else:
            ns, nd = (s,) + wrap(ns), (d,) + wrap(nd)
    if not is_tuple(ns) and is_constant(1, ns):
        return Layout(Int(1), Int(0))
    return Layout(ns, nd)


def _front(t):
    return t[0] if is_tuple(t) else t


def _replace_front(t, v):
    return (v,) + t[1:] if is_tuple(t) else v


@_lift()
@memoized
def coalesce(layout, profile=None):
    """Merge modes that are contiguous in the codomain; size and function are preserved."""
    if not isinstance(layout, Layout):
        return _coalesce_shape(layout)
    if is_tuple(profile):
        return _by_mode(layout, profile, coalesce, keep_rest=True)
    fs, fd = flatten(layout.shape), flatten(layout.stride)
    return _bw_coalesce(fs[:-1], fd[:-1], fs[-1], fd[-1])


def _coalesce_shape(shape):
    flat = flatten(shape)
    out = [flat[0]]
    for a in flat[1:]:
        if is_static(out[-1]) == is_static(a):
            out[-1] = out[-1] * a
        else:
            out.append(a)
    return out[0] if len(out) == 1 else tuple(out)


def _coalesce_x(layout, profile=None):
    """coalesce that also keeps the function outside the domain (the last stride is kept)."""
    if is_tuple(profile):
        return _by_mode(layout, profile, _coalesce_x, keep_rest=True)
    fs, fd = flatten(layout.shape), flatten(layout.stride)
    last = Int(2) if is_constant(1, fs[-1]) else fs[-1]
    return _bw_coalesce(fs[:-1], fd[:-1], last, fd[-1])


def _by_mode(layout, tiler, fn, keep_rest):
    if len(tiler) > len(layout):
        raise LayoutError(f"tiler {to_str(tiler)} has more modes than layout {layout}")
    modes = [fn(layout[i], t) for i, t in enumerate(tiler)]
    if keep_rest:
        modes += [layout[i] for i in range(len(tiler), len(layout))]
    return make_layout(*modes)


def filter_zeros(layout):
    """Replace the shape of static stride-0 modes by ``_1``."""
    def fz(s, d):
        if is_tuple(s):
            return tuple(fz(a, b) for a, b in zip(s, d))
        return Int(1) if is_constant(0, d) else s

    return Layout(fz(layout.shape, layout.stride), layout.stride)


@_lift()
@memoized
def filter(layout, profile=None):  # noqa: A001 - CuTe's name
    """Remove stride-0 and size-1 modes, then coalesce."""
    if is_tuple(profile):
        return _by_mode(layout, profile, filter, keep_rest=True)
    return coalesce(filter_zeros(layout))


def _coprofile(layout):
    """CuTe's coprofile: ``_0``s shaped like the codomain (the sum of the strides as an arithmetic tuple)."""
    total = Int(0)
    for d in flatten(layout.stride):
        total = total + d
    total = total.values if hasattr(total, "values") else total.expand() if isinstance(total, ScaledBasis) else total
    return make_int_tuple_like(total, Int(0))


def _basis_get(b, t):
    for m in b.mode:
        t = t[m] if is_tuple(t) else t
    return t


def _composition_impl(ls, ld, rs, rd):
    if is_tuple(rs):
        parts = [_composition_impl(ls, ld, s, d) for s, d in zip(rs, rd)]
        return Layout(tuple(p.shape for p in parts), tuple(p.stride for p in parts))
    if isinstance(rd, ScaledBasis):
        return _composition_impl(_basis_get(rd, ls), _basis_get(rd, ld), rs, rd.value)
    if is_constant(0, rd):
        return Layout(rs, rd)
    if not is_tuple(ls):
        return Layout(rs, rd * ld)
    if int(rd) == 0:
        raise LayoutError(f"the dynamic stride 0 of {to_str(rs)}:{rd} divides by zero (as in CuTe); "
                          "make it static (tk.Int(0))")
    result_s, result_d, rest_s, rest_d = [], [], rs, rd
    for cs, cd in zip(ls[:-1], ld[:-1]):
        if is_static(cs) and is_static(rest_d) and not (int(rest_d) % int(cs) == 0 or abs(int(rest_d)) < int(cs)):
            raise LayoutError(f"stride divisibility fails: stride {rest_d} is neither below nor a multiple of mode "
                              f"size {cs}")
        next_s = ceil_div(cs, abs(rest_d))
        next_d = ceil_div(abs(rest_d), cs) * signum(rest_d)
        if is_constant(1, next_s) or is_constant(1, rest_s):
            rest_d = next_d
            continue
        new_s = imin(next_s, rest_s)
        if is_static(new_s) and is_static(rest_s) and int(rest_s) % int(new_s) != 0:
            raise LayoutError(f"shape divisibility fails: {new_s} does not divide shape {rest_s}")
        result_s.append(new_s)
        result_d.append(rest_d * cd)
        rest_s = _keep(rest_s, new_s, int(rest_s) // int(new_s))
        rest_d = next_d
    if not result_s:
        return Layout(rest_s, rest_d * ld[-1])
    if is_constant(1, rest_s):
        return Layout(unwrap(tuple(result_s)), unwrap(tuple(result_d)))
    return Layout(tuple(result_s) + (rest_s,), tuple(result_d) + (rest_d * ld[-1],))


@memoized
def composition(a, b):
    """``R(c) = a(b(c))``. ``b`` may be a layout, an integer, ``_`` or a tuple tiler (applied by mode)."""
    from .swizzle import ComposedLayout, Swizzle

    if isinstance(a, Swizzle):
        return _as_layout(b) if a.bits == 0 else ComposedLayout(a, Int(0), _as_layout(b))
    if isinstance(a, ComposedLayout):
        return a.compose(b)
    if b is None or is_underscore(b):
        return a
    if isinstance(b, (Swizzle, ComposedLayout)):
        raise LayoutError(f"composition(layout, {type(b).__name__}) is not supported: {a} o {b}")
    if is_tuple(b):
        return _by_mode(a, b, composition, keep_rest=False)
    try:
        if is_int(b):
            flat = _coalesce_x(a)
            return _composition_impl(flat.shape, flat.stride, b, Int(1))
        flat = _coalesce_x(a, _coprofile(b))
        return _composition_impl(flat.shape, flat.stride, b.shape, b.stride)
    except LayoutError as e:
        raise LayoutError(f"composition({a}, {to_str(b)}): {e}") from None


@memoized
def complement(layout, cotarget=None):
    """The layout of the offsets ``layout`` does not reach, up to ``cotarget`` (default: its cosize)."""
    from .swizzle import ComposedLayout

    if isinstance(layout, ComposedLayout):
        return complement(layout.layout_b, cosize(layout) if cotarget is None else cotarget)
    layout = _as_layout(layout)
    f = filter(layout)
    if cotarget is None:
        cotarget = cosize(f)
    elif isinstance(cotarget, Layout):
        cotarget = cotarget.shape
    if is_constant(0, f.stride):
        return make_layout(_coalesce_shape(cotarget))
    shape, stride = list(wrap(f.shape)), list(wrap(f.stride))
    if len(shape) > 1 and not is_static(tuple(stride)):
        raise LayoutError(f"complement: dynamic strides only for rank-1 layouts, got {f}")
    result_s, result_d = [], [Int(1)]
    for _i in range(len(shape) - 1):
        k = min(range(len(stride)), key=lambda j: int(stride[j]))
        min_d = stride[k]
        new_s = _exact_div(min_d, result_d[-1])
        result_s.append(new_s)
        result_d.append(min_d * shape[k])
        del shape[k], stride[k]
    result_s.append(_exact_div(stride[0], result_d[-1]))
    new_d = stride[0] * shape[0]
    rest_s = _coalesce_shape(ceil_div_tuple(cotarget, new_d))
    rest_d = compact_major(rest_s, LayoutLeft, new_d)
    return coalesce(Layout((tuple(result_s), rest_s), (tuple(result_d), rest_d)))


def _exact_div(a, b):
    q = _keep(a, b, int(a) // int(b))
    if is_static(q) and int(q) == 0:
        raise LayoutError(f"complement: non-injective layout (stride {a} below {b})")
    return q


@memoized
def right_inverse(layout):
    """``R`` with ``layout(R(i)) == i`` for ``i < size(R)`` (the largest such, built from static strides)."""
    if is_underscore(layout):
        return layout
    layout = _as_layout(layout)
    c = coalesce(layout)
    ls, ld = wrap(c.shape), wrap(c.stride)
    pre = _preprod(ls)
    order = _sort_by_stride([i for i in range(len(ld)) if is_static(ld[i])], ld)
    rs, rd, curr = [Int(1)], [Int(0)], Int(1)
    for i in order:
        if is_static(curr) and int(ld[i]) == int(curr):
            rs.append(ls[i])
            rd.append(pre[i])
            curr = ls[i] * ld[i]
    return coalesce(Layout(tuple(rs), tuple(rd)))


@memoized
def left_inverse(layout):
    """``R`` with ``R(layout(i)) == i`` for an injective ``layout`` (static strides)."""
    if is_underscore(layout):
        return layout
    layout = _as_layout(layout)
    c = coalesce(layout)
    ls, ld = wrap(c.shape), wrap(c.stride)
    if not is_static(ld):
        raise LayoutError(f"left_inverse needs static strides, got {layout}")
    pre = _preprod(ls)
    order = _sort_by_stride(list(range(len(ld))), ld)
    rs, rd = [], [Int(0)]
    for i in order:
        if is_constant(0, ld[i]):
            continue
        sz = product(tuple(rs))
        if int(ld[i]) % int(sz) != 0:
            raise LayoutError(f"left_inverse({layout}): stride {ld[i]} is not a multiple of {sz}, the size "
                              "inverted so far")
        rs.append(ld[i] // sz)
        rd.append(pre[i])
    return coalesce(Layout(tuple(rs) + (ls[order[-1]],), tuple(rd)))


def _sort_by_stride(idx, stride):
    """Mode indices ordered by stride with CuTe's SortByKey (an exchange sort: equal strides may swap)."""
    for i in range(len(idx)):
        for j in range(i + 1, len(idx)):
            if int(stride[idx[j]]) < int(stride[idx[i]]):
                idx[i], idx[j] = idx[j], idx[i]
    return idx


def _preprod(shape):
    out, acc = [], Int(1)
    for s in shape:
        out.append(acc)
        acc = acc * s
    return out


@_lift(tensors=True)
@memoized
def logical_divide(layout, tiler):
    """Split each mode of ``layout`` into (tile, rest) by ``tiler`` (a layout, an integer, or a tuple by mode)."""
    if tiler is None or is_underscore(tiler):
        return layout
    if is_tuple(tiler):
        return _by_mode(layout, tiler, logical_divide, keep_rest=True)
    t = _as_layout(tiler)
    return composition(layout, make_layout(t, complement(t, coalesce(layout).shape)))


def _zip2_by(shape, guide):
    """CuTe's zip2_by: follow ``guide``; at its leaves the mode must be rank 2 (tile, rest)."""
    if not is_tuple(guide):
        if not is_tuple(shape) or len(shape) != 2:
            raise LayoutError(f"zip2_by: mode {to_str(shape)} is not a (tile, rest) pair; a '_' tiler mode cannot be "
                              "zipped (CuTe rejects it too)")
        return shape
    if not is_tuple(shape) or len(shape) < len(guide):
        raise LayoutError(f"zip2_by: tiler {to_str(guide)} has more modes than {to_str(shape)}")
    split = [_zip2_by(shape[i], g) for i, g in enumerate(guide)]
    return (tuple(s[0] for s in split), tuple(s[1] for s in split) + tuple(shape[len(guide):]))


def tile_unzip(layout, tiler):
    return Layout(_zip2_by(layout.shape, tiler), _zip2_by(layout.stride, tiler))


@_lift(tensors=True)
@memoized
def zipped_divide(layout, tiler):
    """``((tile modes), (rest modes))``."""
    return tile_unzip(logical_divide(layout, tiler), tiler)


def _unpack(z, first, second):
    """Slice a rank-2 zipped layout with ``repeat<rank>(_)`` in the modes to unpack (CuTe's tiled/flat forms)."""
    from .integer import _

    def rep(mode):
        r = rank(mode)
        return (_,) * r if r > 1 else _

    return z((rep(z.shape[0]) if first else _, rep(z.shape[1]) if second else _))


@_lift(tensors=True)
@memoized
def tiled_divide(layout, tiler):
    """``((tile modes), rest0, rest1, ...)``."""
    return _unpack(zipped_divide(layout, tiler), False, True)


@_lift(tensors=True)
@memoized
def flat_divide(layout, tiler):
    """``(tile0, tile1, ..., rest0, rest1, ...)``."""
    return _unpack(zipped_divide(layout, tiler), True, True)


@_lift()
@memoized
def logical_product(block, tiler):
    """``(block, tiler placed in the complement of block)``."""
    if tiler is None or is_underscore(tiler):
        return block
    if is_tuple(tiler):
        return _by_mode(block, tiler, logical_product, keep_rest=True)
    t = _as_layout(tiler)
    block = _as_layout(block)
    return make_layout(block, composition(complement(block, block.size() * cosize(t)), t))


@_lift()
@memoized
def zipped_product(block, tiler):
    return tile_unzip(logical_product(block, tiler), tiler)


@_lift()
@memoized
def tiled_product(block, tiler):
    return _unpack(zipped_product(block, tiler), False, True)


@_lift()
@memoized
def flat_product(block, tiler):
    return _unpack(zipped_product(block, tiler), True, True)


def append(layout, x=None, n=None):
    """Append mode ``x`` (default ``_1:_0``); with ``n``, pad to rank ``n``."""
    if isinstance(layout, Layout):
        x = Layout(Int(1), Int(0)) if x is None else _as_layout(x)
        if n is None:
            return Layout(wrap(layout.shape) + (x.shape,), wrap(layout.stride) + (x.stride,))
        if rank(layout.shape) >= n:
            return layout
        k = n - rank(layout.shape)
        return Layout(wrap(layout.shape) + (x.shape,) * k, wrap(layout.stride) + (x.stride,) * k)
    return wrap(layout) + (x,)


def prepend(layout, x=None):
    x = Layout(Int(1), Int(0)) if x is None else _as_layout(x)
    return Layout((x.shape,) + wrap(layout.shape), (x.stride,) + wrap(layout.stride))


def _zip_tuples(a, b):
    """CuTe's ``zip(a, b)``: pair the modes of ``a`` with those of ``b`` (two integers make one pair)."""
    if not is_tuple(a):
        return ((a, b),)
    if not is_tuple(b) or len(a) != len(b):
        raise LayoutError(f"zip: ranks of {to_str(a)} and {to_str(b)} differ")
    return tuple(zip(a, b))


def _zip_layouts(a, b):
    return Layout(_zip_tuples(a.shape, b.shape), _zip_tuples(a.stride, b.stride))


def _padded_product(block, tiler):
    """logical_product of block and tiler padded to a common rank (shared by blocked/raked products)."""
    block, tiler = _as_layout(block), _as_layout(tiler)
    r = max(rank(block.shape), rank(tiler.shape))
    return logical_product(append(block, n=r), append(tiler, n=r))


@_lift()
@memoized
def blocked_product(block, tiler):
    """Tile ``block`` by ``tiler``: mode i becomes (block_i, tiler_i)."""
    res = _padded_product(block, tiler)
    return _zip_layouts(res[0], res[1])


@_lift()
@memoized
def raked_product(block, tiler):
    """Interleave ``block`` across ``tiler``: mode i becomes (tiler_i, block_i)."""
    res = _padded_product(block, tiler)
    return _zip_layouts(res[1], res[0])


@_lift()
@memoized
def tile_to_shape(block, target_shape, order=LayoutLeft):
    """Repeat ``block`` until it covers ``target_shape`` (blocked, in ``order``)."""
    block = _as_layout(block)
    r = rank(target_shape)
    if rank(block.shape) > r:
        raise LayoutError(f"tile_to_shape: block {block} has more modes than target {to_str(target_shape)}")
    padded = append(block, n=r)
    bshape = product_each(padded.shape)
    tshape = product_each(target_shape)
    if is_static(tshape) and is_static(bshape) and any(int(t) % int(b) for t, b in zip(wrap(tshape), wrap(bshape))):
        raise LayoutError(f"tile_to_shape: block shape {to_str(bshape)} does not divide {to_str(tshape)}")
    pshape = ceil_div_tuple(tshape, bshape)
    return blocked_product(padded, Layout(pshape, compact_order(pshape, order)))


def _swizzled(x):
    from .swizzle import ComposedLayout, Swizzle

    return isinstance(x, ComposedLayout) and isinstance(x.layout_a, Swizzle)


@memoized
def max_common_layout(a, b):
    """The largest layout ``R`` with ``a(R(i)) == i == b(R(i))`` (contiguous elements both layouts agree on).
    A swizzled layout only keeps its first ``2^M`` elements contiguous (swizzle_layout.hpp)."""
    if _swizzled(b) and not _swizzled(a):
        a, b = b, a
    if _swizzled(a):
        common = max_common_layout(a.layout_b, b)
        base = Int(1 << a.layout_a.base)
        return composition(common, base) if int(base) < int(common.size()) else common
    inv_b = right_inverse(b)
    common = coalesce(composition(a, inv_b))
    s0, d0 = _front(common.shape), _front(common.stride)
    if is_static(s0) and is_constant(1, d0):
        return composition(inv_b, common[0])
    return Layout(Int(1), Int(0))


@memoized
def max_common_vector(a, b):
    """Number of contiguous elements that ``a`` and ``b`` map identically (static, >= 1)."""
    if _swizzled(a) and _swizzled(b):
        vec = max_common_vector(a.layout_b, b.layout_b)
        if a.layout_a == b.layout_a:
            return vec
        return imin(imin(vec, Int(1 << a.layout_a.base)), Int(1 << b.layout_a.base))
    if _swizzled(b):
        a, b = b, a
    if _swizzled(a):
        return imin(max_common_vector(a.layout_b, b), Int(1 << a.layout_a.base))
    common = coalesce(composition(a, right_inverse(b)))
    s0, d0 = _front(common.shape), _front(common.stride)
    if is_static(s0) and is_constant(1, d0):
        return s0
    return Int(1)


@_lift(tensors=True)
def group_modes(layout, begin, end=None):
    """Group modes ``[begin, end)`` into one mode."""
    shape, stride = wrap(layout.shape), wrap(layout.stride)
    end = len(shape) if end is None else end
    return Layout(shape[:begin] + (shape[begin:end],) + shape[end:],
                  stride[:begin] + (stride[begin:end],) + stride[end:])


def make_identity_layout(shape):
    """``shape:(_1@0,_1@1,...)``: maps a coordinate to itself."""
    from .arith_tuple import make_basis_like

    return Layout(shape, make_basis_like(shape))


def ceil_div_layout(target, tiler):
    return complement(tiler, target).shape


__all__ = [
    "coalesce", "filter", "composition", "complement", "right_inverse", "left_inverse", "logical_divide",
    "zipped_divide", "tiled_divide", "flat_divide", "logical_product", "zipped_product", "tiled_product",
    "blocked_product", "raked_product", "tile_to_shape", "max_common_layout", "max_common_vector", "group_modes",
    "append", "prepend", "make_identity_layout", "filter_zeros", "tile_unzip",
]
