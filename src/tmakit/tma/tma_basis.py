"""How a shared-memory tile maps onto TMA dimensions (CuTe's construct_tma_gbasis and friends).

The smem layout is inverted to find its contiguous vector; composing that with the CTA's tile of global coordinates
tells which global modes the box walks, in which order. Global modes then fold into at most five TMA dimensions.
"""

from __future__ import annotations

import math

from ..layout import Int, Layout, coalesce, composition, make_identity_layout, make_layout, right_inverse
from ..layout.arith_tuple import E, ScaledBasis, make_basis_like
from ..layout.composed import ComposedLayout
from ..layout.int_tuple import is_tuple, product, wrap
from ..layout.integer import is_constant, is_static
from ..layout.swizzle import Swizzle
from ..layout.tuple_algorithms import flatten_to_tuple
from .errors import TmaDescriptorError


def nonswizzle_portion(slayout):
    """The plain layout of a (possibly swizzled) smem layout."""
    return slayout.layout_b if isinstance(slayout, ComposedLayout) else slayout


def swizzle_portion(slayout):
    """The swizzle of a smem layout (``Sw<0,4,3>``, the identity, when there is none)."""
    if isinstance(slayout, ComposedLayout):
        if not isinstance(slayout.layout_a, Swizzle):
            raise TmaDescriptorError("smem.swizzle", "a composed smem layout must be Swizzle o offset o layout",
                                     str(slayout), "compose a tk.Swizzle(B, M, S) with the smem layout")
        return slayout.layout_a
    return Swizzle(0, 4, 3)


def _basis_value(d):
    return d.value if isinstance(d, ScaledBasis) else d


def coalesce_256(layout: Layout) -> Layout:
    """coalesce that merges contiguous modes only while the merged extent stays <= 256 (one TMA box dim)."""
    fs, fd = flatten_to_tuple(layout.shape), flatten_to_tuple(layout.stride)
    ns, nd = [fs[0]], [fd[0]]
    for s, d in zip(fs[1:], fd[1:]):
        if is_constant(1, s):
            continue
        if len(ns) == 1 and is_constant(1, ns[0]):
            ns, nd = [s], [d]
        elif _static_eq(ns[-1] * nd[-1], d) and is_static(s * ns[-1]) and int(s * ns[-1]) <= 256:
            ns[-1] = s * ns[-1]
        else:
            ns.append(s)
            nd.append(d)
    if len(ns) == 1 and is_constant(1, ns[0]):
        return Layout(Int(1), Int(0))
    return Layout(ns[0], nd[0]) if len(ns) == 1 else Layout(tuple(ns), tuple(nd))


def _static_eq(a, b) -> bool:
    if not (is_static(a) and is_static(b)):
        return False
    if isinstance(a, ScaledBasis) or isinstance(b, ScaledBasis):
        return a == b
    return int(a) == int(b)


def construct_tma_gbasis(glayout: Layout, slayout: Layout, cta_v_map: Layout) -> Layout:
    """Layout ``tma_box_shape -> gmem mode(s)``: the TMA dimensions, innermost first, as bases into gmem."""
    if int(product(slayout.shape)) != int(product(cta_v_map.shape)):
        raise TmaDescriptorError("smem.size", "the smem layout and the CTA tile must hold the same number of elements",
                                 (str(slayout), str(cta_v_map)), "make cta_tiler cover exactly the smem tile")
    inv_smem = right_inverse(slayout)
    full = coalesce(composition(cta_v_map, inv_smem))
    strides = wrap(full.stride)
    rank = next((i for i, d in enumerate(strides) if not is_constant(1, _basis_value(d))), len(strides))
    if rank == 0:
        raise TmaDescriptorError(
            "smem.vector", "the smem tile has no contiguous vector along a global mode", str(slayout),
            "make the smem layout's stride-1 mode follow a global mode (same majorness as the gmem tensor)")
    shapes = wrap(full.shape)
    sidx2gmode = Layout(shapes[:rank], strides[:rank])
    tile_gstride = composition(glayout, sidx2gmode)
    tma_gstride = coalesce_256(tile_gstride)
    gbasis = make_identity_layout(glayout.shape)
    tile_gbasis = Layout(tile_gstride.shape, composition(gbasis, sidx2gmode).stride)
    tma_gbasis_tile = composition(tile_gbasis, make_layout(wrap(tma_gstride.shape)))
    used = [b for b in flatten_to_tuple(tma_gbasis_tile.stride) if isinstance(b, ScaledBasis)]
    leaves = (flatten_to_tuple(glayout.shape), flatten_to_tuple(glayout.stride), flatten_to_tuple(gbasis.stride))
    remaining = [e for s, d, e in zip(*leaves)
                 if not (is_constant(1, s) or is_constant(0, d)) and e not in used]
    full_shape = wrap(tma_gbasis_tile.shape) + (Int(1),) * len(remaining)
    full_stride = wrap(tma_gbasis_tile.stride) + tuple(remaining)
    keep = min(len(full_shape), 4)
    if len(full_shape) > 5:
        full_shape = full_shape[:keep] + (full_shape[keep:],)
        full_stride = full_stride[:keep] + (full_stride[keep:],)
    return Layout(full_shape, full_stride)


def _basis_get(b: ScaledBasis, t):
    for m in b.mode:
        t = t[m] if is_tuple(t) else t
    return t


def gmem_shape_stride(glayout: Layout, tma_gbasis: Layout):
    """(globalDim, globalStride in elements) for each TMA dimension (CuTe's fill_tma_gmem_shape_stride)."""
    dims, strides = [], []
    for mode in wrap(tma_gbasis.stride):
        bases = [b for b in flatten_to_tuple(mode) if isinstance(b, ScaledBasis)]
        if len(bases) == 1 and not is_tuple(mode):
            dims.append(int(_basis_get(bases[0], glayout.shape)))
            strides.append(int(_basis_get(bases[0], glayout.stride)))
            continue
        shape, stride = 1, 0
        for b in bases:
            sj, dj = int(_basis_get(b, glayout.shape)), int(_basis_get(b, glayout.stride))
            old, stride = stride, math.gcd(stride, dj)
            shape = (shape - 1) * (old // stride) + (sj - 1) * (dj // stride) + 1 if stride else sj
        dims.append(shape)
        strides.append(stride)
    return dims, strides


def tma_coord_strides(glayout: Layout, tma_gbasis: Layout, byte_strides, elem_bits: int):
    """The strides of the TMA coordinate tensor: gmem mode i -> ``_1@j`` for the TMA dimension j it feeds."""
    modes = wrap(tma_gbasis.stride)

    def one(ei):
        si, di = _basis_get(ei, glayout.shape), _basis_get(ei, glayout.stride)
        if is_constant(1, si) or is_constant(0, di):
            return Int(0)
        j = next((k for k, m in enumerate(modes)
                  if ei in [b for b in flatten_to_tuple(m) if isinstance(b, ScaledBasis)]), None)
        if j is None:
            return Int(0)
        if j == 0:
            return E(0) * di
        if not is_tuple(modes[j]):
            return E(j)
        scale = -(-(int(di) * elem_bits // max(int(byte_strides[j - 1]), 16)) // 8)
        return E(j) * scale

    def walk(b):
        return tuple(walk(x) for x in b) if is_tuple(b) else one(b)

    return walk(make_basis_like(glayout.shape))
