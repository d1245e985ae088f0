"""CuTe's layout algebra: coalesce, composition, complement, inverses, divides and products.

Each function follows CuTe's definition (cute/layout.hpp), including where CuTe branches on whether a value is
static, so results print exactly as CuTe prints them.
"""

from __future__ import annotations

import functools

from .arith_tuple import make_basis_like
from .composed import ComposedLayout, compose, composition3
from .composition import (
    _as_layout,
    _by_mode,
    _coalesce_shape,
    _front,
)
from .composition import coalesce as _plain_coalesce
from .composition import filter as _plain_filter
from .composition import filter_zeros as _plain_filter_zeros
from .element_type import same_type
from .int_tuple import LayoutError, ceil_div_tuple, is_tuple, product, product_each, rank, wrap
from .integer import Int, _, _keep, check_divisor, imin, is_constant, is_static, is_underscore, to_str, trunc_div
from .layout import Layout, LayoutLeft, compact_major, compact_order, cosize, make_layout, normalize
from .memo import memoized
from .swizzle import Swizzle, UInt, signed
from .tuple_algorithms import group, zip2_by


def _is_tensor(x) -> bool:
    return hasattr(x, "iterator") and hasattr(x, "layout") and not isinstance(x, (Layout, ComposedLayout))


def _lift(tensors=False):
    """Apply the decorated op to the Layout inside a ComposedLayout (keeping its swizzle and offset, as
    layout_composed.hpp does) and, with ``tensors``, inside a Tensor (keeping its iterator, as tensor_impl.hpp).
    Without ``tensors`` a Tensor is refused: CuTe has no such overload (its products would grow the cosize)."""

    def deco(fn):
        @functools.wraps(fn)
        def lifted(x, *args, **kw):
            if isinstance(x, ComposedLayout):
                return ComposedLayout(x.layout_a, x.offset, lifted(x.layout_b, *args, **kw))
            if _is_tensor(x):
                if not tensors:
                    raise LayoutError(f"{fn.__name__}: CuTe defines no {fn.__name__} of a tensor (tensor_impl.hpp "
                                      f"has none), got {x}; apply it to tensor.layout and make_tensor the result")
                return type(x)(x.iterator, lifted(x.layout, *args, **kw))
            return fn(x, *args, **kw)

        return lifted

    return deco


coalesce = _lift(tensors=True)(_plain_coalesce)
filter = _lift(tensors=True)(_plain_filter)  # noqa: A001 - CuTe's name
filter_zeros = _lift(tensors=True)(_plain_filter_zeros)


def composition(a, b):
    """``R(c) = a(b(c))``. ``b`` may be a layout, an integer, ``_``, a tuple tiler (applied by mode), a swizzle or a
    swizzled layout; ``a`` a layout, a swizzle or a composed layout (CuTe's overloads, swizzle_layout.hpp). A tensor
    ``a`` gives the tensor on the same iterator with layout ``composition(a.layout, b)`` (tensor_impl.hpp)."""
    if _is_tensor(a):
        return type(a)(a.iterator, _composition(a.layout, b))
    return _composition(a, b)


@memoized
def _composition(a, b):
    return compose(a, b)


composition.__wrapped__ = _composition  # the memo, as for the lifted ops (tests reach the fresh op through it)


@memoized
def complement(layout, cotarget=None):
    """The layout of the offsets ``layout`` does not reach, up to ``cotarget`` (default: its cosize)."""
    if isinstance(layout, ComposedLayout):
        return complement(layout.layout_b, cosize(layout) if cotarget is None else cotarget)
    layout = _as_layout(layout)
    f = filter(layout)
    if cotarget is None:
        cotarget = cosize(f)
    elif isinstance(cotarget, Layout):
        cotarget = cotarget.shape
    else:
        cotarget = normalize(cotarget, what="cotarget")
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
    """CuTe's ``min_stride / last_stride`` (C++ division) and its static non-injectivity check."""
    check_divisor(a, b)
    q = _keep(a, b, trunc_div(int(a), int(b)))
    if is_static(q) and int(q) == 0:
        raise LayoutError(f"complement: non-injective layout (stride {a} below {b})")
    return q


@memoized
def right_inverse(layout):
    """``R`` with ``layout(R(i)) == i`` for ``i < size(R)`` (the largest such, built from static strides). A swizzle
    is its own inverse; a composed layout inverts piece by piece (``_composed_inverse``)."""
    if is_underscore(layout) or isinstance(layout, Swizzle):
        return layout
    if isinstance(layout, ComposedLayout):
        return _composed_inverse(layout, right_inverse)
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
    """``R`` with ``R(layout(i)) == i`` for an injective ``layout`` (static strides); swizzles and composed layouts
    as in right_inverse."""
    if is_underscore(layout) or isinstance(layout, Swizzle):
        return layout
    if isinstance(layout, ComposedLayout):
        return _composed_inverse(layout, left_inverse)
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


def _composed_inverse(layout, inverse):
    """CuTe's inverse of ``A o off o B``: ``inv(B) o -off o inv(A)``. A swizzle at a static zero offset is carried to
    the left instead, ``composition(inv(B), Sw)``, which stays a swizzled layout (swizzle_layout.hpp)."""
    a, off, b = layout.layout_a, layout.offset, layout.layout_b
    if isinstance(a, Swizzle) and is_constant(0, signed(off)):
        try:
            return composition(inverse(b), a)
        except LayoutError as e:
            raise LayoutError(f"{inverse.__name__}({layout}): {e}") from None
    if type(off) not in (Int, UInt):
        raise LayoutError(f"{inverse.__name__}({layout}): the offset {to_str(off)} is not a static integer, and CuTe "
                          "negates only a static one (it finds no inverse of a run-time int or MixedBits offset); "
                          "invert the layout before slicing it, or slice with static coordinates")
    return composition3(inverse(b), -off, inverse(a))


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


def tile_unzip(layout, tiler):
    return Layout(zip2_by(layout.shape, tiler), zip2_by(layout.stride, tiler))


@_lift(tensors=True)
@memoized
def zipped_divide(layout, tiler):
    """``((tile modes), (rest modes))``."""
    return tile_unzip(logical_divide(layout, tiler), tiler)


def _unpack(z, first, second):
    """Slice a rank-2 zipped layout with ``repeat<rank>(_)`` in the modes to unpack (CuTe's tiled/flat forms)."""
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
    target_shape = normalize(target_shape, what="target shape")
    r = rank(target_shape)
    if rank(block.shape) > r:
        raise LayoutError(f"tile_to_shape: block {block} has more modes than target {to_str(target_shape)}")
    padded = append(block, n=r)
    bshape = product_each(padded.shape)
    tshape = product_each(target_shape)
    for t, b in zip(wrap(tshape), wrap(bshape)):
        check_divisor(t, b)
    if is_static(tshape) and not is_static(bshape):  # CuTe's CUTE_STATIC_ASSERT_V(evenly_divides(...)) needs both
        raise LayoutError(f"tile_to_shape: a static target {to_str(tshape)} needs a static block shape, got "
                          f"{to_str(bshape)} (CuTe checks the division at compile time)")
    if is_static(tshape) and any(int(t) % int(b) for t, b in zip(wrap(tshape), wrap(bshape))):
        raise LayoutError(f"tile_to_shape: block shape {to_str(bshape)} does not divide {to_str(tshape)}")
    pshape = ceil_div_tuple(tshape, bshape)
    return blocked_product(padded, Layout(pshape, compact_order(pshape, order)))


def _swizzled(x):
    return isinstance(x, ComposedLayout) and isinstance(x.layout_a, Swizzle)


def _element_type(t):
    """A tensor's element type when it holds real memory of a trivially copyable type (CuTe's ``is_reference``
    test in max_common_vector), else None (a coordinate tensor: its elements are computed). Memory iterators --
    ArrayPtr, tmakit.mma's smem and tmem pointers -- name it ``value_type``."""
    return getattr(t.iterator, "value_type", None)


def _vectorizable(a, b) -> bool:
    """CuTe's test before vectorizing a tensor copy: same element type, and both tensors reference real memory."""
    ta, tb = _element_type(a), _element_type(b)
    return ta is not None and tb is not None and same_type(ta, tb)


def max_common_layout(a, b):
    """The largest layout ``R`` with ``a(R(i)) == i == b(R(i))`` (contiguous elements both layouts agree on).
    A swizzled layout only keeps its first ``2^M`` elements contiguous (swizzle_layout.hpp). Of two tensors: that of
    their layouts when both hold memory of one element type, else ``_1:_0`` (tensor_impl.hpp)."""
    if _is_tensor(a) or _is_tensor(b):
        _both_tensors(a, b, "max_common_layout")
        return _max_common_layout(a.layout, b.layout) if _vectorizable(a, b) else Layout(Int(1), Int(0))
    return _max_common_layout(a, b)


def _both_tensors(a, b, what):
    if not (_is_tensor(a) and _is_tensor(b)):
        raise LayoutError(f"{what}: CuTe takes two layouts or two tensors, got {a} and {b}; pass tensor.layout for "
                          "the tensor, or two tensors")


@memoized
def _max_common_layout(a, b):
    if _swizzled(b) and not _swizzled(a):
        a, b = b, a
    if _swizzled(a):
        common = _max_common_layout(a.layout_b, b)
        base = Int(1 << a.layout_a.base)
        return composition(common, base) if int(base) < int(common.size()) else common
    inv_b = right_inverse(b)
    common = coalesce(composition(a, inv_b))
    s0, d0 = _front(common.shape), _front(common.stride)
    if is_static(s0) and is_constant(1, d0):
        return composition(inv_b, common[0])
    return Layout(Int(1), Int(0))


def max_common_vector(a, b):
    """Number of contiguous elements that ``a`` and ``b`` map identically (static, >= 1). Of two tensors: that of
    their layouts when both hold memory of one element type, else ``_0`` (no vectorization, tensor_impl.hpp)."""
    if _is_tensor(a) or _is_tensor(b):
        _both_tensors(a, b, "max_common_vector")
        return _max_common_vector(a.layout, b.layout) if _vectorizable(a, b) else Int(0)
    return _max_common_vector(a, b)


@memoized
def _max_common_vector(a, b):
    if _swizzled(a) and _swizzled(b):
        vec = _max_common_vector(a.layout_b, b.layout_b)
        if a.layout_a == b.layout_a:
            return vec
        return imin(imin(vec, Int(1 << a.layout_a.base)), Int(1 << b.layout_a.base))
    if _swizzled(b):
        a, b = b, a
    if _swizzled(a):
        return imin(_max_common_vector(a.layout_b, b), Int(1 << a.layout_a.base))
    common = coalesce(composition(a, right_inverse(b)))
    s0, d0 = _front(common.shape), _front(common.stride)
    if is_static(s0) and is_constant(1, d0):
        return s0
    return Int(1)


@_lift(tensors=True)
def group_modes(layout, begin, end=-1):
    """CuTe's ``group<B,E>`` of a layout (``group_modes<B,E>`` of a tensor): modes ``[B, E)`` become one mode
    (``E = -1`` or ``None``: to the end; ``B == E`` changes nothing)."""
    end = -1 if end is None else end
    layout = _as_layout(layout)
    return Layout(group(layout.shape, begin, end), group(layout.stride, begin, end))


def make_identity_layout(shape):
    """``shape:(_1@0,_1@1,...)``: maps a coordinate to itself."""
    shape = normalize(shape)
    return Layout(shape, make_basis_like(shape))


def ceil_div_layout(target, tiler):
    return complement(tiler, target).shape


__all__ = [
    "coalesce", "filter", "composition", "complement", "right_inverse", "left_inverse", "logical_divide",
    "zipped_divide", "tiled_divide", "flat_divide", "logical_product", "zipped_product", "tiled_product",
    "blocked_product", "raked_product", "tile_to_shape", "max_common_layout", "max_common_vector",
    "append", "make_identity_layout", "group_modes", "filter_zeros", "tile_unzip",
]
