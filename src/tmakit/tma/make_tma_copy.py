"""``make_tma_copy``: CuTe's algorithm from (gmem tensor, smem layout, CTA tile, cluster size) to a TMA descriptor
and a TiledCopy whose thread mode is the cluster's CTAs."""

from __future__ import annotations

import numpy as np

from ..layout import (
    Int,
    Layout,
    Tensor,
    composition,
    cosize,
    make_identity_layout,
    make_layout,
    right_inverse,
    size,
    tile_to_shape,
)
from ..layout.int_tuple import product, product_each
from ..layout.integer import is_static
from ..layout.tensor import ArrayPtr, array_span
from .arg_checks import as_int, is_integer
from .copy_ops import CopyOp, copy_op
from .dtypes import elem_bits, tma_dtype
from .errors import TmaDescriptorError
from .gmem import GmemPtr
from .internal_type import internal_dtype, split_internal_type
from .reduce_rules import check_reduce
from .tensormap import L2Promotion, SwizzleMode, TensorMap
from .tensormap_rules import parse_arch
from .tiled_copy import TiledCopy, TmaAtom
from .tma_basis import construct_tma_gbasis, gmem_shape_stride, nonswizzle_portion, swizzle_portion, tma_coord_strides

#: CTAs in a cluster: 16 with non-portable cluster sizes (8 portable); a multicast mask has 16 bits.
MAX_CLUSTER_SIZE = 16

_SWIZZLE_BY_BITS = {0: SwizzleMode.NONE, 1: SwizzleMode.B32, 2: SwizzleMode.B64, 3: SwizzleMode.B128}


def as_gmem_tensor(x) -> Tensor:
    """A tk.Tensor over global memory from a tk.Tensor, a numpy array or a torch tensor (shape/strides kept)."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, np.ndarray):
        flat, origin = array_span(x)  # the view's own memory and strides, never a copy
        return Tensor(ArrayPtr(flat, origin), _strided_layout(x.shape, [s // x.itemsize for s in x.strides]))
    if hasattr(x, "data_ptr") and hasattr(x, "stride"):  # torch.Tensor
        return Tensor(GmemPtr(x.dtype, x.data_ptr()), _strided_layout(tuple(x.shape), tuple(x.stride())))
    raise TmaDescriptorError("gmem.tensor", "the global tensor must be a tk.Tensor, numpy array or torch tensor",
                             type(x).__name__, "wrap it with tk.make_tensor(tk.make_gmem_ptr(dtype, addr), layout)")


def _strided_layout(shape, strides) -> Layout:
    return Layout(tuple(int(s) for s in shape), tuple(Int(1) if int(d) == 1 else int(d) for d in strides))


def gmem_dtype_and_address(t: Tensor):
    it = t.iterator
    if isinstance(it, GmemPtr):
        return it.dtype, it.address
    if isinstance(it, ArrayPtr):
        arr = it.array
        return tma_dtype(arr.dtype), int(arr.ctypes.data) + it.offset * arr.itemsize
    raise TmaDescriptorError("gmem.tensor", "the global tensor needs a typed pointer or array", str(it),
                             "build it with tk.make_gmem_ptr(dtype, address) or a numpy array")


def tma_swizzle_mode(slayout, bits: int) -> SwizzleMode:
    """The descriptor's swizzle from the smem layout's Swizzle<B,M,3> (M=4: on byte addresses, as CuTe's
    smem_ptr convention; M=4-log2(elem bytes): on element offsets, as docs/HARDWARE.md §2 writes it)."""
    sw = swizzle_portion(slayout)
    elem_shift = max(0, (bits // 8).bit_length() - 1)
    if sw.bits == 0:
        return SwizzleMode.NONE
    if sw.shift == 3 and sw.bits in _SWIZZLE_BY_BITS and sw.base in (4, 4 - elem_shift):
        return _SWIZZLE_BY_BITS[sw.bits]
    if sw.bits == 2 and (sw.base, sw.shift) == (5, 2):  # CuTe: 128-byte swizzle of 32-byte atoms
        return SwizzleMode.B128_ATOM_32B
    if sw.bits == 2 and sw.base == 6:  # CuTe: 128-byte swizzle of 64-byte atoms (S unchecked, as CuTe)
        return SwizzleMode.B128_ATOM_64B
    raise TmaDescriptorError(
        "smem.swizzle", "TMA swizzles 16-byte chunks: the smem swizzle must be Swizzle<B,4,3> (B = 1, 2, 3)", str(sw),
        "use Swizzle(1|2|3, 4, 3) (32/64/128-byte swizzle) composed with the smem layout")


def _box_after_multicast(box, num_multicast: int):
    box = list(box)
    mc, i = num_multicast, len(box) - 1
    while mc > 1:
        if i < 0 or (box[i] % mc != 0 and mc % box[i] != 0):
            raise TmaDescriptorError("multicast.split", "the cluster size must divide the box's slowest dimensions",
                                     (tuple(box), num_multicast), "use a power-of-two cluster that divides the tile")
        new_mc = -(-mc // box[i])
        box[i] = -(-box[i] // mc)
        mc, i = new_mc, i - 1
    return box


def check_smem_layout(smem_layout) -> None:
    """The smem layout must be a static layout (``tk.Int`` shapes and strides), possibly swizzled: CuTe builds the
    TMA box from it at compile time."""
    plain = nonswizzle_portion(smem_layout)
    if not isinstance(plain, Layout):
        raise TmaDescriptorError("smem.layout", "the smem layout must be a tk.Layout (optionally swizzled)",
                                 type(smem_layout).__name__,
                                 "pass e.g. tk.make_layout((tk.Int(64), tk.Int(64)), tk.LayoutRight)")
    if not is_static(plain.shape) or not is_static(plain.stride):
        raise TmaDescriptorError(
            "smem.static", "the smem layout must be static (every shape and stride a tk.Int), as CuTe's is",
            str(plain), "build it from tk.Int values, e.g. tk.make_layout((tk.Int(16), tk.Int(16)), tk.LayoutRight)")
    if int(size(plain)) == 0:
        raise TmaDescriptorError("smem.size", "the smem layout must hold at least one element (a TMA box is >= 1 "
                                 "in every dimension)", str(plain), "remove the size-0 mode")


_UNSET = object()  # cluster_size not given: CuTe's overloads decide from the 4th argument


def make_tma_copy(*args, **kw) -> TiledCopy:
    """CuTe's ``make_tma_copy[<TmaInternalType>](op, gmem_tensor, smem_layout[, cta_tiler][, cluster_size])``:
    see ``make_tma_copy_impl``. A leading element type is CuTe's ``TmaInternalType`` (the descriptor's data type,
    as wide as the gmem element), taken as by CuTe only with all five arguments:
    ``make_tma_copy(np.uint8, op, g, s, cta_tiler, cluster_size)``."""
    internal, args = split_internal_type(args, "make_tma_copy", 5)
    return make_tma_copy_impl(*args, tma_internal_type=internal, **kw)


def make_tma_copy_impl(op: CopyOp, gmem_tensor, smem_layout, cta_tiler=None, cluster_size=_UNSET, *,
                       l2_promotion=L2Promotion.B128, validate: bool = True, arch: str = "sm_90",
                       cta_v_map=None, tma_internal_type=None) -> TiledCopy:
    """CuTe's ``make_tma_copy``: a TiledCopy whose descriptor moves one CTA tile (split across ``cluster_size``
    CTAs for multicast). ``smem_layout`` may be swizzled (``tk.composition(tk.Swizzle(3,4,3), layout)``).
    As CuTe's overloads: ``(op, g, s)``, ``(op, g, s, cluster_size)`` (a 4th argument that is an integer is the
    cluster size) and ``(op, g, s, cta_tiler, cluster_size)``.
    ``cta_v_map`` (smem value -> gmem coordinate) replaces ``identity o cta_tiler`` where the tile is not a plain
    box, as CuTe's SM100 ``make_tma_atom_A_sm100`` passes an MMA-partitioned tile."""
    if cluster_size is _UNSET:
        cta_tiler, cluster_size = (None, cta_tiler) if is_integer(cta_tiler) else (cta_tiler, 1)
    op = copy_op(op)
    if op.kind == "prefetch":  # CuTe builds the prefetch atom from a load's (cute::prefetch), never a TiledCopy
        raise TmaDescriptorError("copy.op", "make_tma_copy takes a load, store or reduction, not a PREFETCH op",
                                 op.name, "build the load's copy and call tk.emu.prefetch(tma, src)")
    cluster_size = as_int(cluster_size, "cluster_size", 1, MAX_CLUSTER_SIZE)
    parse_arch(arch)
    check_smem_layout(smem_layout)
    g = as_gmem_tensor(gmem_tensor)
    dtype, address = gmem_dtype_and_address(g)
    dtype = internal_dtype(tma_internal_type, dtype)
    bits = elem_bits(dtype)
    if op.kind == "reduce":
        check_reduce(op.reduce_op, dtype)
    if cluster_size > 1 and not op.multicast:
        raise TmaDescriptorError("multicast.op", "a cluster_size > 1 needs SM90_TMA_LOAD_MULTICAST", op.name,
                                 "use tk.SM90_TMA_LOAD_MULTICAST or cluster_size=1")
    slayout = nonswizzle_portion(smem_layout)
    if cta_tiler is None:
        cta_tiler = product_each(slayout.shape)
    if cta_v_map is None:
        cta_v_map = composition(make_identity_layout(g.layout.shape), cta_tiler)
    cta_t_map = make_layout(Int(cluster_size))
    tma_gbasis = construct_tma_gbasis(g.layout, slayout, cta_v_map)
    if not is_static(tma_gbasis.shape):  # CuTe: static_assert(is_static<TmaGmemBasis>) in AuxTmaParams
        raise TmaDescriptorError(
            "box.static", "the TMA box must be static: the smem vector runs through a dynamic gmem extent",
            str(tma_gbasis), "make the gmem modes the tile covers static (tk.Int), as CuTe requires")
    dims, strides = gmem_shape_stride(g.layout, tma_gbasis)
    if strides[0] != 1:
        raise TmaDescriptorError(
            "smem.majorness", "the smem tile's contiguous mode must be the gmem tensor's stride-1 mode",
            f"innermost TMA dim has gmem stride {strides[0]}", "make smem and gmem share the same major mode")
    byte_strides = tuple(s * bits // 8 for s in strides[1:])
    box = _box_after_multicast([int(size(m)) for m in tma_gbasis], int(cta_t_map.size()))
    if len(dims) > 5:
        raise TmaDescriptorError("tensorRank.range", "TMA moves at most 5 dimensions", len(dims),
                                 "merge contiguous global modes or tile fewer of them")
    tm = TensorMap(dtype=dtype, global_dim=tuple(dims), global_strides=byte_strides, box_dim=tuple(box),
                   swizzle=tma_swizzle_mode(smem_layout, bits), l2_promotion=l2_promotion, global_address=address)
    if validate:
        tm.validate(arch=arch)
    num_val = int(product(tma_gbasis.shape))
    layout_tv = _layout_tv(slayout, cta_t_map, cta_v_map, num_val)
    g_stride = tma_coord_strides(g.layout, tma_gbasis, byte_strides, bits)
    return TiledCopy(op, tm, product_each(cta_v_map.shape), layout_tv, num_val, bits, tma_gbasis, g_stride,
                     smem_layout)


def _layout_tv(slayout: Layout, cta_t_map: Layout, cta_v_map: Layout, num_val: int) -> Layout:
    """(CTA, value) -> smem coordinate, as CuTe's make_tma_copy_tiled builds it."""
    inv_smem = right_inverse(slayout)
    layout_v = composition(inv_smem, Int(num_val))
    layout_V = tile_to_shape(make_layout(layout_v), size(cta_v_map))  # noqa: N806 - CuTe's name
    n_cta = cosize(cta_t_map)
    if num_val % int(n_cta):
        raise TmaDescriptorError("multicast.split", "the tile must split evenly among the cluster's CTAs",
                                 (num_val, int(n_cta)), "use a cluster size that divides the tile")
    layout_t = make_layout(n_cta, Int(num_val // int(n_cta)))
    layout_T = composition(inv_smem, composition(layout_t, cta_t_map))  # noqa: N806 - CuTe's name
    return make_layout(layout_T, layout_V)


def make_tma_atom(*args, **kw) -> TmaAtom:
    """CuTe's ``make_tma_atom[<TmaInternalType>](op, gmem_tensor, smem_layout, cta_tiler[, cluster_size])``: the
    Copy_Atom for ``tma_partition``; ``cluster_size`` may be a shape (its size counts, as CuTe's
    ``size(cluster_size)``). Prints as CuTe's Copy_Atom. A leading element type is ``TmaInternalType``."""
    internal, args = split_internal_type(args, "make_tma_atom", 4)
    return _make_tma_atom(*args, tma_internal_type=internal, **kw)


def _make_tma_atom(op: CopyOp, gmem_tensor, smem_layout, cta_tiler=None, cluster_size=1, **kw) -> TmaAtom:
    tc = make_tma_copy_impl(op, gmem_tensor, smem_layout, cta_tiler, cluster_size_of(cluster_size), **kw)
    return TmaAtom(tc.op, tc.tensormap, tc.tiler_mn, tc.layout_tv, tc.num_val, tc.value_bits, tc.tma_gbasis,
                   tc.g_stride, tc.slayout)


def cluster_size_of(cluster_size) -> int:
    """The CTA count of a cluster size given as an int, a ``tk.Int`` or a (cluster) shape."""
    return int(product(cluster_size)) if isinstance(cluster_size, (tuple, list)) else cluster_size
