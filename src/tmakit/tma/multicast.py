"""``create_tma_multicast_mask``: which CTAs of a cluster receive a multicast TMA load."""

from __future__ import annotations

from ..layout import Layout, cosize
from ..layout.int_tuple import is_tuple, product, wrap
from ..layout.integer import _
from .arg_checks import is_integer
from .errors import TmaError


def create_tma_multicast_mask(cta_layout: Layout, cta_coord, modes=()) -> int:
    """16-bit mask of the CTAs (by ``%cluster_ctarank``) that share ``cta_coord`` outside ``modes``.

    ``modes`` are the modes of ``cta_layout`` projected over (CuTe's ``create_tma_multicast_mask<Modes...>``):
    every CTA whose coordinate differs from ``cta_coord`` only in those modes is selected.
    """
    if not isinstance(cta_layout, Layout):
        raise TmaError(f"multicast mask: the cluster layout must be a tk.Layout, got {cta_layout!r}")
    n_ctas = cta_layout.size()
    if not is_integer(n_ctas) or not 1 <= n_ctas <= 16 or not is_integer(cosize(cta_layout)):
        raise TmaError(f"multicast mask: cluster layout {cta_layout} must hold 1..16 CTAs (a cluster's limit)")
    crd = list(wrap(cta_coord)) if isinstance(cta_coord, (tuple, list)) else [cta_coord]
    shape = wrap(cta_layout.shape)
    if len(crd) != len(shape):
        raise TmaError(f"multicast mask: coordinate {cta_coord!r} does not match cluster layout {cta_layout}; "
                       "give one coordinate per mode")
    for i, (c, n) in enumerate(zip(crd, shape)):
        if not is_integer(c) or not 0 <= c < int(product(n)):
            raise TmaError(f"multicast mask: coordinate {cta_coord!r} has {c!r} in mode {i}, outside the cluster's "
                           f"0..{int(product(n)) - 1}; give the CTA's coordinate in the cluster layout {cta_layout}")
    for m in (modes if is_tuple(modes) or isinstance(modes, list) else (modes,)):
        if not is_integer(m) or not 0 <= m < len(crd):
            raise TmaError(f"multicast mask: mode {m!r} is not a mode of cluster layout {cta_layout} "
                           f"(0..{len(crd) - 1})")
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
