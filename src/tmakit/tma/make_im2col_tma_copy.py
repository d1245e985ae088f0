"""CuTe's im2col TMA host API (copy_traits_sm90_im2col.hpp): ``make_im2col_tma_copy`` builds a
``cuTensorMapEncodeIm2col`` descriptor for a conv activation ``((w[,h[,d]],n), c)`` and a TiledCopy whose TMA
tensor maps the GEMM coordinates ``(whdn, (c,s,r,t))`` to the instruction's coordinates
``(c, (w,h,d), n, (s,r,t))`` (the last group: the im2col offsets)."""

from __future__ import annotations

from dataclasses import dataclass

from ..layout import (
    ArithTuple,
    ArithTupleIterator,
    ComposedLayout,
    Int,
    Layout,
    Tensor,
    basis_get,
    basis_value,
    coalesce,
    composition,
    cosize,
    flatten,
    logical_divide,
    make_basis_like,
    make_identity_layout,
    make_layout,
    right_inverse,
    size,
)
from ..layout.int_tuple import product_each, wrap
from ..layout.integer import is_constant, is_static
from .copy_ops import CopyOp, copy_op
from .dtypes import elem_bits
from .errors import TmaDescriptorError
from .make_tma_copy import (
    MAX_CLUSTER_SIZE,
    _layout_tv,
    as_gmem_tensor,
    check_smem_layout,
    gmem_dtype_and_address,
    tma_swizzle_mode,
)
from .tensormap import L2Promotion, TensorMap
from .tensormap_rules import parse_arch
from .tiled_copy import TiledCopy
from .tma_basis import nonswizzle_portion

SM90_TMA_LOAD_IM2COL = CopyOp("SM90_TMA_LOAD_IM2COL", "load", im2col=True)
SM90_TMA_LOAD_IM2COL_MULTICAST = CopyOp("SM90_TMA_LOAD_IM2COL_MULTICAST", "load", multicast=True, im2col=True)
SM90_TMA_STORE_IM2COL = CopyOp("SM90_TMA_STORE_IM2COL", "store", im2col=True)
IM2COL_OPS = (SM90_TMA_LOAD_IM2COL, SM90_TMA_LOAD_IM2COL_MULTICAST, SM90_TMA_STORE_IM2COL)


def _im2col_op(op) -> CopyOp:
    if isinstance(op, str):
        found = [o for o in IM2COL_OPS if o.name == op]
        op = found[0] if found else copy_op(op)
    if not getattr(op, "im2col", False):
        raise TmaDescriptorError("copy.op", "make_im2col_tma_copy takes an im2col op", str(op),
                                 "pass tk.SM90_TMA_LOAD_IM2COL, tk.SM90_TMA_LOAD_IM2COL_MULTICAST or "
                                 "tk.SM90_TMA_STORE_IM2COL (tiled ops go to tk.make_tma_copy)")
    return op


def _num(x):
    """An int stays dynamic, a tk.Int static (CuTe's int / Int<n>)."""
    return x if isinstance(x, Int) else int(x)


def _tdiv(a, b):
    """C++ integer division (towards zero), static only when both are."""
    q = abs(int(a)) // abs(int(b)) * (1 if (int(a) < 0) == (int(b) < 0) else -1)
    return Int(q) if is_static(a) and is_static(b) else q


def _add(*xs):
    v = sum(int(x) for x in xs)
    return Int(v) if all(is_static(x) for x in xs) else v


def _conv_tuple(x, n: int, what: str) -> tuple:
    t = tuple(_num(v) for v in (x if isinstance(x, (tuple, list)) else (x,)))
    if len(t) != n:
        raise TmaDescriptorError("im2col.spatial", f"{what} needs one entry per spatial mode (W,H,D order)", x,
                                 f"pass {n} values for a tensor of {n} spatial mode(s)")
    return t


@dataclass(frozen=True, eq=False)
class Im2colTiledCopy(TiledCopy):
    """The TiledCopy of ``make_im2col_tma_copy``: its TMA tensor is fixed by the convolution (``get_tma_tensor``
    ignores the shape, as CuTe's)."""

    tma_tensor: Tensor = None

    def get_tma_tensor(self, shape=None) -> Tensor:
        return self.tma_tensor


def _parse_overload(args):
    """CuTe's overloads after (op, g, s): (), (tiler), (tiler, mc), (7 conv), (tiler, 7 conv), (tiler, mc, 7 conv)."""
    n = len(args)
    if n in (0, 1, 2):
        return (args + (None, None))[:2] + (None,)
    if n in (7, 8, 9):
        head = args[:n - 7]
        return (head + (None, None))[:2] + (args[n - 7:],)
    raise TmaDescriptorError("im2col.arguments", "make_im2col_tma_copy takes (op, g, s[, cta_tiler[, multicast_size]]"
                             "[, lower_corner_whd, upper_corner_whd, lower_padding_whd, upper_padding_whd, stride_whd, "
                             "lower_srt, stride_srt])", n + 3, "pass CuTe's arguments in its order")


def make_im2col_tma_copy(op, tensor_cwhdn, slayout, *args, l2_promotion=L2Promotion.NONE, validate: bool = True,
                         arch: str = "sm_90") -> Im2colTiledCopy:
    """CuTe's ``make_im2col_tma_copy(op, g, s[, cta_tiler[, multicast_size]][, lower_corner_whd, upper_corner_whd,
    lower_padding_whd, upper_padding_whd, stride_whd, lower_srt, stride_srt])``. ``g`` is the activation
    ``((w[,h[,d]],n), c)`` (or the transposed GEMM view); the 7 conv tuples are in W,H,D order; without them
    corners, padding and ``lower_srt`` are ``_0`` and the strides ``_1`` (CuTe's no-offset overload)."""
    cta_tiler, multicast, conv = _parse_overload(tuple(args))
    op = _im2col_op(op)
    parse_arch(arch)
    check_smem_layout(slayout)
    g = as_gmem_tensor(tensor_cwhdn)
    plain = nonswizzle_portion(slayout)
    gshape = product_each(g.layout.shape)
    if cta_tiler is None:
        cta_tiler = product_each(plain.shape)
    mc = Int(1) if multicast is None else multicast
    if not isinstance(mc, Int) or not 1 <= int(mc) <= MAX_CLUSTER_SIZE:
        raise TmaDescriptorError("multicast.size", "multicast_size is a static CTA count (CuTe's Int<n>), 1..16", mc,
                                 "pass tk.Int(n)")
    if int(mc) > 1 and not op.multicast:
        raise TmaDescriptorError("multicast.op", "a multicast_size > 1 needs SM90_TMA_LOAD_IM2COL_MULTICAST", op.name,
                                 "use tk.SM90_TMA_LOAD_IM2COL_MULTICAST or multicast_size=tk.Int(1)")
    cta_v_map = composition(make_identity_layout(gshape), cta_tiler)
    cta_t_map = make_layout(mc)
    if int(size(plain)) % int(cosize(cta_t_map)):
        raise TmaDescriptorError("multicast.split", "Number of active CTAs in TMA must divide domain size of slayout",
                                 (int(size(plain)), int(mc)), "use a multicast size that divides the smem tile")
    if conv is None:  # CuTe: rank<0>(g) - 1 spatial modes
        nsp = len(wrap(g.layout.shape[0] if isinstance(g.layout.shape, tuple) else ())) - 1
        z, o = (Int(0),) * nsp, (Int(1),) * nsp
        conv = (z, z, z, z, o, z, o)
    else:  # the conv tuples give the spatial rank (wgrad's B puts (w,h,d,n) in mode 1)
        nsp = len(wrap(tuple(conv[0]) if isinstance(conv[0], (tuple, list)) else conv[0]))
    names = ("lower_corner_whd", "upper_corner_whd", "lower_padding_whd", "upper_padding_whd", "stride_whd",
             "lower_srt", "stride_srt")
    conv = tuple(_conv_tuple(x, nsp, nm) for x, nm in zip(conv, names))
    return _make_tma_copy_im2col(op, g, slayout, cta_t_map, cta_v_map, conv, l2_promotion, validate, arch)


def _make_tma_copy_im2col(op, g, slayout, cta_t_map, cta_v_map, conv, l2_promotion, validate, arch):
    plain = nonswizzle_portion(slayout)
    if product_each(plain.shape) != product_each(cta_v_map.shape):
        raise TmaDescriptorError("smem.tile", "TMA requires CTA_Tile and SLayout top-level shape equivalence",
                                 (str(plain.shape), str(product_each(cta_v_map.shape))),
                                 "make cta_tiler the smem layout's product_each shape")
    num_multicast = int(cosize(cta_t_map))
    inv_smem = right_inverse(plain)
    sidx_to_gmode = coalesce(composition(cta_v_map, inv_smem))
    glayout_basis = make_identity_layout(product_each(g.layout.shape))
    full = flatten(composition(glayout_basis, sidx_to_gmode))
    strides = wrap(full.stride)
    smem_rank = next((i for i, d in enumerate(strides) if not is_constant(1, basis_value(d))), len(strides))
    if smem_rank < 2:
        raise TmaDescriptorError("im2col.smem", "IM2COL expects at least 2 modes of the smem to vectorize with gmem",
                                 str(full), "make the smem tile's two leading (stride-ordered) modes whole channel and "
                                 "pixel runs, e.g. a K-major (pixels, channels) tile")
    trunc = Layout(wrap(full.shape)[:2], strides[:2])
    ntrunc = int(size(trunc))
    if ntrunc % num_multicast:
        raise TmaDescriptorError("multicast.split", "the multicast CTAs must split the TMA box evenly",
                                 (ntrunc, num_multicast), "use a multicast size that divides the box")
    vt = logical_divide(trunc, Int(ntrunc // num_multicast))
    e_c, e_p = vt.stride[0][0], vt.stride[0][1]
    range_c, range_whdn = int(size(vt.shape[0][0])), int(size(vt.shape[0][1]))
    cw_shape = flatten((basis_get(e_c, g.layout.shape), basis_get(e_p, g.layout.shape)))
    cw_stride = flatten((basis_get(e_c, g.layout.stride), basis_get(e_p, g.layout.stride)))
    tm, tma_tensor = _make_desc(g, wrap(cw_shape), wrap(cw_stride), range_c, range_whdn, slayout, e_c, e_p, conv,
                                l2_promotion)
    if validate:
        tm.validate(arch=arch)
    layout_tv = _layout_tv(plain, cta_t_map, cta_v_map, ntrunc)
    bits = tm.elem_bits
    return Im2colTiledCopy(op, tm, product_each(cta_v_map.shape), layout_tv, ntrunc, bits, trunc, (), slayout,
                           tma_tensor=tma_tensor)


def _make_desc(g, shape, stride, range_c, range_whdn, slayout, e_c, e_p, conv, l2_promotion):
    """CuTe's make_im2col_tma_copy_desc: the encode arguments and the TMA tensor."""
    lc, uc, lp, up, st_whd, lsrt, st_srt = conv
    dtype, address = gmem_dtype_and_address(g)
    bits = elem_bits(dtype)
    rank = len(shape)
    nsp = rank - 2
    if nsp != len(lc):
        raise TmaDescriptorError("im2col.rank", "the channel/pixel modes must give (C, W[,H[,D]], N) with one spatial "
                                 "mode per conv parameter", (rank, len(lc)), "pass the activation as ((w,h,d,n), c)")
    tm = TensorMap(dtype=dtype, global_dim=tuple(int(s) for s in shape),
                   global_strides=tuple(int(d) * bits // 8 for d in stride[1:]), box_dim=(),
                   element_strides=(1, *(int(s) for s in st_whd), 1), swizzle=tma_swizzle_mode(slayout, bits),
                   l2_promotion=l2_promotion, global_address=address, mode="im2col",
                   pixel_box_lower_corner=tuple(int(x) for x in lc), pixel_box_upper_corner=tuple(int(x) for x in uc),
                   channels_per_pixel=range_c, pixels_per_column=range_whdn)
    gemm_mn = tuple(_add(_tdiv(_add(shape[i + 1], uc[i], _neg(lc[i]), Int(-1)), st_whd[i]), Int(1))
                    for i in range(nsp)) + (shape[nsp + 1],)
    gemm_k = (shape[0],) + tuple(
        _add(Int(1), _tdiv(_sub(up[i], uc[i]) if int(st_srt[i]) > 0 else _sub(lc[i], lp[i]), st_srt[i]))
        for i in range(nsp))
    common = (gemm_mn, gemm_k)
    gemm_shapes = (basis_get(e_p, common), basis_get(e_c, common))
    lin_common = (_size(gemm_mn), gemm_k)
    linear_shapes = (basis_get(e_p, lin_common), basis_get(e_c, lin_common))
    scale = (Int(1), st_whd, Int(1), st_srt)
    bases = make_basis_like(scale)
    tb = tuple(tuple(s * b for s, b in zip(sc, bb)) if isinstance(sc, tuple) else sc * bb
               for sc, bb in zip(scale, bases))
    gb_common = (tb[1] + (tb[2],), (tb[0],) + tb[3])
    gbasis = (basis_get(e_p, gb_common), basis_get(e_c, gb_common))
    lower = ArithTuple((Int(0), lc, Int(0), lsrt))
    multimode = Layout(gemm_shapes, gbasis)
    ident = make_identity_layout(linear_shapes)
    offset = ArithTuple(_zero_like(linear_shapes))
    return tm, Tensor(ArithTupleIterator(lower), ComposedLayout(multimode, offset, ident))


def _plain(x):
    """An ArithTuple as a nested tuple: a hierarchical coordinate for the TMA tensor's outer layout."""
    if isinstance(x, (ArithTuple, tuple)):
        return tuple(_plain(v) for v in x)
    return x


def im2col_coord(tensor, i: int = 0):
    """Element ``i`` of an im2col TMA tensor (or a tile / partition of it): the instruction's coordinate
    ``(c, (w,h,d), n, (s,r,t))`` as an ArithTuple. (CuTe: ``tensor(i)``; tmakit's Layout does not take an
    ArithTuple as a coordinate, so the inner layout's value is unpacked first.)"""
    lay = tensor.layout
    if not isinstance(lay, ComposedLayout):
        return tensor(i)
    inner = lay.offset + lay.layout_b(i)
    return tensor.iterator.coord + lay.layout_a(_plain(inner))


def _neg(b):
    return Int(-int(b)) if is_static(b) else -int(b)


def _sub(a, b):
    return _add(a, _neg(b))


def _size(t):
    out = Int(1)
    for x in flatten(wrap(t)):
        out = Int(int(out) * int(x)) if is_static(out) and is_static(x) else int(out) * int(x)
    return out


def _zero_like(t):
    return tuple(_zero_like(x) for x in t) if isinstance(t, tuple) else Int(0)


__all__ = ["IM2COL_OPS", "Im2colTiledCopy", "SM90_TMA_LOAD_IM2COL", "SM90_TMA_LOAD_IM2COL_MULTICAST",
           "SM90_TMA_STORE_IM2COL", "im2col_coord", "make_im2col_tma_copy"]
