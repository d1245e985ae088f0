"""``tma_partition``: the (gmem, smem) views one CTA passes to a TMA copy (CuTe's vector-copy partitioner)."""

from __future__ import annotations

from ..layout import (
    Int,
    Layout,
    Tensor,
    coalesce,
    composition,
    cosize,
    logical_divide,
    make_layout,
    right_inverse,
    size,
    tile_to_shape,
)
from ..layout.composed import ComposedLayout
from ..layout.int_tuple import rank
from ..layout.integer import _
from .errors import TmaDescriptorError
from .tiled_copy import TiledCopy
from .tma_basis import nonswizzle_portion


def _mode0(layout):
    return ComposedLayout(layout.layout_a, layout.offset, layout.layout_b[0]) \
        if isinstance(layout, ComposedLayout) else layout[0]


def _compose_modes(layout, first):
    """``layout.compose(first, _, _, ...)`` keeping the other modes."""
    tiler = (first,) + (_,) * (rank(layout.shape) - 1)
    if isinstance(layout, ComposedLayout):
        return ComposedLayout(layout.layout_a, layout.offset, composition(layout.layout_b, tiler))
    return composition(layout, tiler)


def _coalesce_mode0(layout):
    prof = ((Int(1), Int(1)),)
    if isinstance(layout, ComposedLayout):
        return ComposedLayout(layout.layout_a, layout.offset, coalesce(layout.layout_b, prof))
    return coalesce(layout, prof)


def tma_partition(copy: TiledCopy, cta_coord, cta_layout, stensor=None, gtensor=None):
    """(gmem view, smem view), each ``((TMA, TMA_Iter), Rest...)``, offset to this CTA's multicast share.

    ``stensor``/``gtensor`` have the TMA tile as mode 0 (e.g. ``local_tile`` results, grouped). CuTe's short form
    ``tma_partition(atom, stensor, gtensor)`` means CTA ``_0`` of the single-CTA layout ``_1:_0``.
    """
    if stensor is None and gtensor is None:
        cta_coord, cta_layout, stensor, gtensor = Int(0), Layout(Int(1), Int(0)), cta_coord, cta_layout
    s0 = _mode0(stensor.layout)
    if int(size(s0)) != int(size(gtensor.layout[0])):
        raise TmaDescriptorError("tma_partition.size", "smem and gmem mode 0 (the TMA tile) must have the same size",
                                 (str(s0), str(gtensor.layout[0])), "group the tile's modes into mode 0 of both")
    inv_smem = right_inverse(nonswizzle_portion(s0))
    layout_v = tile_to_shape(make_layout(inv_smem), size(s0))
    tma_layout_v = make_layout(Int(copy.num_val_src))
    layout_V = logical_divide(layout_v, tma_layout_v)  # noqa: N806 - CuTe's name
    g_v = Tensor(gtensor.iterator, _coalesce_mode0(_compose_modes(gtensor.layout, layout_V)))
    s_v = Tensor(stensor.iterator, _coalesce_mode0(_compose_modes(stensor.layout, layout_V)))
    # keeps CuTe's staticness: a size-1 cta_layout gives the static _0 offset (prints ArithTuple(_0,...))
    offset = cta_layout(cta_coord) * (size(tma_layout_v) // cosize(cta_layout))
    return _domain_offset(g_v, offset), _domain_offset(s_v, offset)


def _domain_offset(t: Tensor, first: int) -> Tensor:
    r = rank(t.layout.shape)
    crd = ((first, Int(0)),) + (Int(0),) * (r - 1)
    if isinstance(t.layout, ComposedLayout):
        lay = t.layout
        return Tensor(t.iterator, ComposedLayout(lay.layout_a, lay.offset + lay.layout_b(crd), lay.layout_b))
    return Tensor(t.iterator + t.layout(crd), t.layout)
