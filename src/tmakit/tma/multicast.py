"""``create_tma_multicast_mask``: which CTAs of a cluster receive a multicast TMA load."""

from __future__ import annotations

from ..layout import Layout
from ..layout.int_tuple import is_tuple, wrap
from ..layout.integer import _
from .errors import TmaError


def create_tma_multicast_mask(cta_layout: Layout, cta_coord, modes=()) -> int:
    """16-bit mask of the CTAs (by ``%cluster_ctarank``) that share ``cta_coord`` outside ``modes``.

    ``modes`` are the modes of ``cta_layout`` projected over (CuTe's ``create_tma_multicast_mask<Modes...>``):
    every CTA whose coordinate differs from ``cta_coord`` only in those modes is selected.
    """
    crd = list(wrap(cta_coord))
    if len(crd) != len(wrap(cta_layout.shape)):
        raise TmaError(f"multicast mask: coordinate {cta_coord} does not match cluster layout {cta_layout}; "
                       "give one coordinate per mode")
    for m in (modes if is_tuple(modes) or isinstance(modes, list) else (modes,)):
        crd[m] = _
    crd = tuple(crd) if is_tuple(cta_layout.shape) else crd[0]
    sub, elected = cta_layout.slice_and_offset(crd)
    mask = 0
    for i in range(int(sub.size())):
        mask |= 1 << int(sub(i))
    mask <<= int(elected)
    if mask >> 16:
        raise TmaError(f"multicast mask {mask:#x} needs more than 16 CTAs; clusters hold at most 16 CTAs")
    return mask


def mask_ranks(mask: int) -> list[int]:
    """The CTA ranks selected by a mask."""
    return [i for i in range(16) if mask >> i & 1]
