"""CuTe's smaller layout utilities (layout.hpp, swizzle_layout.hpp, layout_composed.hpp): layouts shaped like
another, mode selection and unflattening, the nullspace, the widest alignment, and the swizzle / non-swizzle parts
of a layout. Each follows CuTe's definition, including where it branches on staticness, so results print alike."""

from __future__ import annotations

from .algebra import coalesce, complement, composition, logical_divide, right_inverse, tiled_divide, tiled_product
from .composed import ComposedLayout
from .int_tuple import (
    LayoutError,
    _all,
    _shape_arg,
    _truth,
    ceil_div_tuple,
    check_divisor,
    flatten,
    is_tuple,
    product,
    rank,
    slice_,
    unwrap,
    wrap,
)
from .int_tuple import dice as dice_
from .integer import Int, gcd, is_constant, is_int, is_static, to_str
from .layout import Layout, LayoutLeft, compact_major, compact_order, make_layout, make_ordered_layout, normalize
from .swizzle import MixedBits, Swizzle, UInt


def _filter_zeros_shape(stride, shape):
    """CuTe's ``filter_zeros(stride, shape)`` on tuples: ``_1`` where the stride is a static ``_0``."""
    if is_tuple(stride):
        return tuple(_filter_zeros_shape(d, s) for d, s in zip(stride, shape))
    if is_constant(0, stride):
        return _like(shape, Int(1))
    return shape


def _like(t, v):
    return tuple(_like(e, v) for e in t) if is_tuple(t) else v


def _plain(layout, what):
    if isinstance(layout, Layout):
        return layout
    if not isinstance(layout, ComposedLayout) and isinstance(getattr(layout, "layout", None), Layout):  # a tensor
        return layout.layout
    raise LayoutError(f"{what} takes a Layout (or a tensor), got {layout!r}; build one with tk.make_layout")


def make_layout_like(layout):
    """A compact layout of ``layout``'s shape whose modes are ordered as its strides are (static ``_0`` strides
    stay ``_0``): CuTe's make_layout_like, the layout a register copy of ``layout`` gets."""
    layout = _plain(layout, "make_layout_like")
    return make_layout(layout.shape, compact_order(_filter_zeros_shape(layout.stride, layout.shape), layout.stride))


def _fragment_layout(x):
    """CuTe's make_fragment_like (its layout): mode 0 compact column-major (keeping static ``_0`` strides), the
    other modes ordered by their strides and tiled over mode 0. A shape, a rank-1 or a dynamic layout gives the
    compact column-major layout of its shape; a swizzled layout gives its inner layout's."""
    if not isinstance(x, Layout) and not hasattr(x, "layout"):
        return make_layout(normalize(x))
    if isinstance(x, ComposedLayout) and isinstance(x.layout_a, Swizzle):  # swizzle_layout.hpp: drop the swizzle
        return _fragment_layout(x.layout_b)
    layout = _plain(x, "make_fragment_like")
    shape, stride = layout.shape, layout.stride
    if rank(shape) > 1 and is_static(shape):
        first = make_layout(shape[0], compact_major(_filter_zeros_shape(stride[0], shape[0]), LayoutLeft))
        return tiled_product(first, make_ordered_layout(shape[1:], stride[1:]))
    return make_layout(shape)


def make_fragment_like(x, value_type=None):
    """CuTe's make_fragment_like. Of a layout or shape: the layout (see ``_fragment_layout``); of a tensor, or with a
    ``value_type``: a new owning register tensor (zeroed numpy storage) of that layout, of the tensor's element type
    unless ``value_type`` names another."""
    lay = _fragment_layout(x)
    if value_type is None and not _is_tensor(x):
        return lay
    return _owning_tensor(lay, value_type, x, "make_fragment_like")


def make_tensor_like(x, value_type=None):
    """CuTe's make_tensor_like: a new owning register tensor with ``make_layout_like`` of a tensor's (or layout's)
    layout -- same shape, modes ordered as the strides -- of the tensor's element type or ``value_type``."""
    lay = make_layout_like(x.layout if _is_tensor(x) else x)
    return _owning_tensor(lay, value_type, x, "make_tensor_like")


def _is_tensor(x):
    from .tensor import Tensor

    return isinstance(x, Tensor)


def _owning_tensor(layout, value_type, src, what):
    """``make_tensor<T>(layout)``: cosize(layout) elements of T, zeroed (CuTe's are uninitialized); static only."""
    import numpy as np

    from .tensor import ArrayPtr, Tensor

    if not is_static(layout.shape) or not is_static(layout.stride):
        raise LayoutError(f"{what}: {layout} is not static, and CuTe has no dynamic owning tensors (its "
                          "static_assert); make the shape static (tk.Int) or allocate a tensor with tk.make_tensor")
    if value_type is None:
        it = getattr(src, "iterator", None)
        if not isinstance(it, ArrayPtr):
            raise LayoutError(f"{what}: the tensor's iterator {it} has no numpy element type; pass value_type, e.g. "
                              f"{what}(tensor, np.float32)")
        dtype = it.array.dtype
    else:
        try:
            dtype = np.dtype(getattr(value_type, "numpy", value_type))
        except TypeError:
            raise LayoutError(f"{what}: value_type {value_type!r} is not a numpy element type; pass one such as "
                              "np.float32 or np.float16") from None
    return Tensor(ArrayPtr(np.zeros(int(layout.cosize()), dtype)), layout)


def slice(crd, x):
    """CuTe's ``slice(crd, x)``: the modes of a layout or integer tuple where ``crd`` has ``_`` (a composed layout
    keeps its offset inside, as its slice_and_offset does)."""
    if isinstance(x, ComposedLayout):
        return x.slice_and_offset(crd)[0]
    crd = normalize(crd, what="coordinate")
    if isinstance(x, Layout):
        return make_layout(slice_(crd, x.shape), slice_(crd, x.stride))
    return slice_(crd, normalize(x))


def dice(crd, x):
    """CuTe's ``dice(crd, x)``, the complement of ``slice``: the modes of a layout or integer tuple where ``crd`` has
    an integer."""
    crd = normalize(crd, what="coordinate")
    if isinstance(x, Layout):
        return make_layout(dice_(crd, x.shape), dice_(crd, x.stride))
    if isinstance(x, ComposedLayout):
        raise LayoutError(f"dice({to_str(crd)}, {x}): CuTe has no dice of a composed layout; dice its inner layout")
    return dice_(crd, normalize(x))


def domain_offset(crd, x):
    """CuTe's ``domain_offset(crd, x)``: the domain shifted to start at ``crd``. A layout gives ``(layout,
    layout(crd))`` (the offset goes to the pointer); a composed layout keeps the offset inside, ``(A o off+B(crd) o B,
    _0)``; a tensor gives the tensor whose iterator moved by that offset."""
    if _is_tensor(x):
        lay, off = domain_offset(crd, x.layout)
        from .tensor import Tensor

        return Tensor(x.iterator + off, lay)
    crd = normalize(crd, what="coordinate")
    if isinstance(x, ComposedLayout):
        return ComposedLayout(x.layout_a, x.offset + x.layout_b(crd), x.layout_b), Int(0)
    if isinstance(x, Layout):
        return x, x(crd)
    raise LayoutError(f"domain_offset takes a Layout, ComposedLayout or Tensor, got {x!r}")


def select(x, *modes):
    """The modes ``modes`` of a layout or tuple, in that order (CuTe's ``select<I...>``); always a tuple of modes."""
    if not modes:
        raise LayoutError("select: name at least one mode, e.g. select(layout, 1, 0)")
    if isinstance(x, ComposedLayout):
        return ComposedLayout(x.layout_a, x.offset, select(x.layout_b, *modes))
    if isinstance(x, Layout):
        return Layout(_select(x.shape, modes), _select(x.stride, modes))
    return _select(x, modes)


def _select(t, modes):
    t = wrap(t)
    for m in modes:
        if not -len(t) <= int(m) < len(t):
            raise LayoutError(f"select: mode {m} is out of range for {to_str(t)} (rank {len(t)}); pick modes 0.."
                              f"{len(t) - 1}")
    return tuple(t[int(m)] for m in modes)


def unflatten(x, target_profile):
    """Fold a flat layout (or tuple) into the profile of ``target_profile`` (CuTe's unflatten): the inverse of
    flatten, needing as many leaves as the profile has."""
    if isinstance(x, Layout):
        return Layout(unflatten(x.shape, target_profile), unflatten(x.stride, target_profile))
    flat = wrap(x)
    if any(is_tuple(v) for v in flat):
        raise LayoutError(f"unflatten: {to_str(x)} is not flat; flatten it first")
    n = len(flatten(target_profile))
    if n != len(flat):
        raise LayoutError(f"unflatten: {to_str(x)} has {len(flat)} leaves but the profile {to_str(target_profile)} "
                          f"has {n}; give a profile with one leaf per element")
    it = iter(flat)

    def build(p):
        return tuple(build(e) for e in p) if is_tuple(p) else next(it)

    return build(target_profile)


def transform_layout(t0, *rest):
    """CuTe's transform_layout: ``make_layout(f(t0[i]) ...)``, or with a second layout/tuple
    ``make_layout(f(t0[i], t1[i]) ...)`` over the common modes, the extra modes of either appended as they are."""
    if len(rest) == 1:
        f = rest[0]
        return make_layout(*(f(m) for m in _modes(t0)))
    if len(rest) != 2:
        raise LayoutError("transform_layout(t, f) or transform_layout(t0, t1, f)")
    t1, f = rest
    m0, m1 = _modes(t0), _modes(t1)
    r = min(len(m0), len(m1))
    return make_layout(*(f(a, b) for a, b in zip(m0, m1)), *m0[r:], *m1[r:])


def _modes(t):
    if isinstance(t, Layout):
        return [t[i] for i in range(len(t))]
    return list(wrap(t))


def nullspace(layout):
    """The layout of the coordinates ``layout`` sends to 0 (its kernel): the modes with a static ``_0`` stride,
    strided as in the compact column-major layout of the flattened shape; ``_1:_0`` when there are none (and for a
    composed layout, which CuTe does not attempt)."""
    if isinstance(layout, ComposedLayout):
        return Layout(Int(1), Int(0))
    layout = _plain(layout, "nullspace")
    fs, fd = flatten(layout.shape), flatten(layout.stride)
    keep = [i for i, d in enumerate(fd) if is_constant(0, d)]
    if not keep:
        return Layout(Int(1), Int(0))
    rd = compact_major(fs, LayoutLeft)
    return Layout(unwrap(tuple(fs[i] for i in keep)), unwrap(tuple(rd[i] for i in keep)))


def max_alignment(layout):
    """The largest ``N`` such that ``upcast<N>(layout)`` is valid, judged on the static shapes and strides only
    (dynamic ones are assumed large multiples of N): CuTe's max_alignment. A swizzled layout is also bounded by
    its swizzle's ``2^M`` and its static offset (swizzle_layout.hpp); another composed layout gives ``_1``.
    A tensor's is in **bits** (tensor_impl.hpp): ``gcd(max_alignment(ptr), max_alignment(layout) * bits)``."""
    if _is_tensor(layout):
        return _tensor_max_alignment(layout)
    if isinstance(layout, Swizzle):
        return Int(1 << layout.base)
    if isinstance(layout, ComposedLayout):
        if not isinstance(layout.layout_a, Swizzle):
            return Int(1)
        off = layout.offset
        if isinstance(off, MixedBits):
            off_align = Int((1 << (((off.s | off.f) & -(off.s | off.f)).bit_length() - 1)) & 0xFFFFFFFF)
        elif type(off) in (Int, UInt):
            off_align = Int(int(off))
        else:
            raise LayoutError(f"max_alignment({layout}): the offset {to_str(off)} is a run-time integer, whose "
                              "alignment CuTe cannot know (it has no max_alignment for one); use a static offset")
        return gcd(gcd(Int(1 << layout.layout_a.base), off_align), max_alignment(layout.layout_b))
    layout = _plain(layout, "max_alignment")
    flat = coalesce(layout)
    ss = tuple(s if is_static(s) else Int(1) for s in wrap(flat.shape))
    sd = tuple(d if is_static(d) else Int(0) for d in wrap(flat.stride))
    if not all(is_int(d) for d in sd):
        raise LayoutError(f"max_alignment: {layout} has basis strides; it applies to layouts of integer offsets")
    f = Layout(unwrap(ss) if len(ss) == 1 else ss, unwrap(sd) if len(sd) == 1 else sd)
    permuted = logical_divide(f, right_inverse(f))
    out = product(permuted.shape[0])
    for d in flatten(permuted.stride[1]):
        out = gcd(out, d)
    return out


def _tensor_max_alignment(t):
    """CuTe's max_alignment of a tensor, in bits. A plain pointer's static alignment is unknown (``_0``, so the
    layout's decides); a swizzled smem pointer's is ``8 * 2^M`` bits (pointer_swizzle.hpp)."""
    it = t.iterator
    ptr_align = getattr(it, "alignment_bits", None)  # ArrayPtr's and the smem pointer's (tmakit.mma)
    if ptr_align is None:
        raise LayoutError(f"max_alignment: the tensor's iterator {it} is not a pointer to memory (CuTe has no "
                          "max_alignment of it); take max_alignment(tensor.layout) for the layout's, in elements")
    return gcd(Int(ptr_align), max_alignment(t.layout) * Int(it.bits))


def get_swizzle_portion(layout):
    """The swizzle of a swizzled layout; a plain layout's is the identity swizzle ``Sw<0,4,3>`` (CuTe's)."""
    if isinstance(layout, ComposedLayout) and isinstance(layout.layout_a, Swizzle):
        return layout.layout_a
    if isinstance(layout, Layout):
        return Swizzle(0, 4, 3)
    raise LayoutError(f"get_swizzle_portion: {layout} is neither a layout nor a swizzle composed with one (CuTe "
                      "defines it for those only)")


def get_swizzle(x):
    """CuTe's ``get_swizzle_t<T>``: the swizzle of a swizzled layout or of a swizzled pointer; a tensor's is its
    iterator's (as CuTe's, which reads ``T::iterator``, so a swizzled layout under a plain pointer gives none);
    ``Sw<0,4,3>`` (no swizzle) for anything else."""
    if isinstance(x, ComposedLayout) and isinstance(x.layout_a, Swizzle):
        return x.layout_a
    if _is_tensor(x):
        return get_swizzle(x.iterator)
    sw = getattr(x, "swizzle", None)  # a swizzled smem pointer (CuTe's swizzle_ptr)
    return sw if isinstance(sw, Swizzle) else Swizzle(0, 4, 3)


def get_nonswizzle_portion(layout):
    """The layout under a swizzled layout's swizzle (its ``layout_b``); a plain layout is its own."""
    if isinstance(layout, ComposedLayout) and isinstance(layout.layout_a, Swizzle):
        return layout.layout_b
    if isinstance(layout, Layout):
        return layout
    raise LayoutError(f"get_nonswizzle_portion: {layout} is neither a layout nor a swizzle composed with one (CuTe "
                      "defines it for those only)")


def domain_distribute(a, b):
    """CuTe's domain_distribute: a layout of (up to) ``b`` elements spread over the static shape ``a``, each mode
    taking what of ``b`` it divides, ordered and surjective."""
    sa = flatten(a.shape if isinstance(a, Layout) else a)
    if not is_static(sa) or type(b) is not Int:
        raise LayoutError(f"domain_distribute: needs a static shape and a static integer, got {to_str(sa)} and "
                          f"{to_str(b)}; use tk.Int values")
    rs, rest = [], b
    for s in sa:
        g = gcd(s, rest)
        rs.append(g)
        rest = Int(int(rest) // int(g))
    return coalesce(Layout(tuple(rs), compact_major(sa, LayoutLeft)))


def with_shape(layout, *shapes):
    """``composition(layout, make_layout(shape))``: ``layout`` reshaped, as CuTe's ``layout.with_shape(...)``."""
    if not shapes:
        raise LayoutError("with_shape: give the new shape, e.g. with_shape(layout, (8, 4)) or with_shape(layout, 8, 4)")
    shape = shapes[0] if len(shapes) == 1 else tuple(shapes)
    return composition(layout, make_layout(normalize(shape)))


def evenly_divides(shape, tiler):
    """Whether ``tiler`` (an integer, a layout, or a tuple of those by mode) tiles ``shape`` with no partial tile:
    ``size(shape) == size(tiler) * size(ceil_div(shape, tiler))`` mode by mode (CuTe's evenly_divides)."""
    shape = _shape_arg(shape)
    if is_tuple(tiler):
        if len(tiler) > rank(shape):
            return Int(0)
        return _all(evenly_divides(s, t) for s, t in zip(wrap(shape), tiler))
    if hasattr(tiler, "shape"):  # a layout tiler: the rest is what its complement in ``shape`` covers
        rest, n_tile = complement(tiler, shape).shape, product(tiler.shape)
    else:
        check_divisor(shape, tiler)
        rest, n_tile = ceil_div_tuple(shape, tiler), tiler
    n, total = product(shape), n_tile * product(rest)
    return _truth(int(n) == int(total), type(n) is Int and type(total) is Int)



# The members CuTe's layouts have that need the algebra (which builds on the layout classes): attached here, so the
# classes' modules import nothing above them.
def _with_shape_member(self, *shapes):
    """This layout reshaped: ``composition(self, make_layout(shape))`` (CuTe's ``layout.with_shape``)."""
    return with_shape(self, *shapes)


def _compose_member(self, *tilers):
    """CuTe's ``layout.compose``: ``composition(self, tiler)`` for one tiler, ``composition(self, (tilers...))``
    (mode by mode) for several."""
    return composition(self, tilers[0] if len(tilers) == 1 else tuple(tilers))


def _tile_member(self, *tilers):
    """CuTe's ``layout.tile``: ``tiled_divide(self, tiler)``, or by mode for several tilers."""
    return tiled_divide(self, tilers[0] if len(tilers) == 1 else tuple(tilers))


Layout.with_shape = _with_shape_member
Layout.compose = _compose_member
Layout.tile = _tile_member
ComposedLayout.with_shape = _with_shape_member


__all__ = [
    "make_layout_like", "make_fragment_like", "select", "unflatten", "transform_layout", "nullspace",
    "max_alignment", "get_swizzle_portion", "get_nonswizzle_portion", "domain_distribute", "with_shape",
    "make_tensor_like", "slice", "dice", "domain_offset", "evenly_divides", "get_swizzle",
]
