"""CuTe's ``make_tma_atom_im2col`` (cute/atom/copy_traits_sm90_im2col.hpp): the im2col TMA ``Copy_Atom`` that
``make_tma_copy_im2col`` / ``make_im2col_tma_copy`` build their TiledCopy around, with CuTe's argument order."""

from __future__ import annotations

from dataclasses import dataclass, fields

from ..layout import Int, Layout, make_layout
from .errors import TmaDescriptorError
from .make_im2col_tma_copy import Im2colTiledCopy, _conv_tuple, _im2col_op, _make_tma_copy_im2col
from .make_tma_copy import MAX_CLUSTER_SIZE, as_gmem_tensor, check_smem_layout
from .tensormap import L2Promotion
from .tensormap_rules import parse_arch
from .tiled_copy import TmaAtom

_CONV = ("lower_corner_whd", "upper_corner_whd", "lower_padding_whd", "upper_padding_whd", "stride_whd", "lower_srt",
         "stride_srt")


@dataclass(frozen=True, eq=False)
class Im2colTmaAtom(Im2colTiledCopy):
    """What ``make_tma_atom_im2col`` returns: CuTe's im2col TMA ``Copy_Atom`` (prints as one); ``get_tma_tensor``
    gives the convolution's TMA tensor, as the TiledCopy's does."""

    __str__ = TmaAtom.__str__
    __repr__ = TmaAtom.__str__


def make_tma_atom_im2col(op, gtensor, slayout, num_multicast, cta_v_map, lower_corner_whd, upper_corner_whd,
                         lower_padding_whd, upper_padding_whd, stride_whd, lower_srt, stride_srt, *,
                         l2_promotion=L2Promotion.NONE, validate: bool = True, arch: str = "sm_90") -> Im2colTmaAtom:
    """CuTe's ``make_tma_atom_im2col(op, gtensor, slayout, num_multicast, cta_v_map, lower_corner_whd,
    upper_corner_whd, lower_padding_whd, upper_padding_whd, stride_whd, lower_srt, stride_srt)``: ``cta_v_map``
    maps the CTA's values to ``gtensor``'s coordinates (its ``product_each`` shape must be the smem tile's);
    ``num_multicast`` CTAs split the box (CuTe's ``int32_t``). The conv tuples are in W,H,D order, as for
    ``make_im2col_tma_copy``, whose descriptor this is for ``cta_v_map = composition(make_identity_layout(shape),
    cta_tiler)``."""
    op = _im2col_op(op)
    parse_arch(arch)
    check_smem_layout(slayout)
    g = as_gmem_tensor(gtensor)
    mc = int(num_multicast)
    if not 1 <= mc <= MAX_CLUSTER_SIZE:
        raise TmaDescriptorError("multicast.size", f"num_multicast is a CTA count, 1..{MAX_CLUSTER_SIZE}", mc,
                                 "pass the number of CTAs that share the box")
    if mc > 1 and not op.multicast:
        raise TmaDescriptorError("multicast.op", "num_multicast > 1 needs SM90_TMA_LOAD_IM2COL_MULTICAST", op.name,
                                 "use tk.SM90_TMA_LOAD_IM2COL_MULTICAST or num_multicast=1")
    if not isinstance(cta_v_map, Layout):
        raise TmaDescriptorError("im2col.cta_v_map", "cta_v_map is a Layout (CTA value -> gmem coordinate)",
                                 type(cta_v_map).__name__, "pass composition(make_identity_layout(shape), cta_tiler)")
    conv = (lower_corner_whd, upper_corner_whd, lower_padding_whd, upper_padding_whd, stride_whd, lower_srt, stride_srt)
    first = conv[0]
    nsp = len(tuple(first)) if isinstance(first, (tuple, list)) else 1
    conv = tuple(_conv_tuple(x, nsp, nm) for x, nm in zip(conv, _CONV))
    tc = _make_tma_copy_im2col(op, g, slayout, make_layout(Int(mc)), cta_v_map, conv, l2_promotion, validate, arch)
    return Im2colTmaAtom(*(getattr(tc, f.name) for f in fields(tc)))
