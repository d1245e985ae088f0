"""im2col-mode gather (``cp.async.bulk.tensor ... .im2col``): ``pixelsPerColumn`` pixels x ``channelsPerPixel``.

Model (matched byte for byte on an H200: docs/CONFORMANCE.md): dims are C (0), spatial W,H,D (1..rank-2), N
(rank-1). Spatial dim i spans the pixel bounding box ``[lower[i], globalDim[i+1] - 1 + upper[i]]`` walked with step
``elementStrides[i+1]``. The instruction's spatial coordinates name the first pixel and must lie inside the box (the
GPU traps otherwise). Pixels follow like an odometer: W steps from its start until it leaves the box, then restarts
at the box's lower corner while H steps once, and so on through D and then N, which steps by its own traversal
stride (so a start off the stride grid keeps its phase only until the first wrap). Each pixel is read at its
position plus the im2col offsets; pixels or channels outside the tensor read as the OOB fill.

Stores and reductions (``.im2col_no_offs``) write the same pixels, offsets zero, back: row p of the image goes to
pixel p of the walk; pixels outside the tensor are skipped, and channels are written in whole 16-byte chunks like
tile stores (``gmem_view.store_dim0``).
"""

from __future__ import annotations

import numpy as np

from ..tma.coord_rules import im2col_pixel_box, im2col_start_message
from .errors import IllegalAddress, IllegalInstruction
from .gmem_view import combine_in_order, replace


def _bbox(tmap, i: int) -> tuple[int, int, int, int]:
    """(lower, upper, step, count) of spatial dimension ``i`` (0 = W)."""
    lo, hi = im2col_pixel_box(tmap, i)
    step = tmap.element_strides[i + 1]
    return lo, hi, step, max(0, (hi - lo) // step + 1)


def check_im2col_start(tmap, coords, what: str = "im2col load") -> None:
    """``IllegalInstruction`` when a spatial start coordinate lies outside the pixel bounding box."""
    msg = im2col_start_message(tmap, coords, what)
    if msg:
        raise IllegalInstruction(msg)


def _odometer(start: int, lo: int, hi: int, step: int, count: int, t: np.ndarray):
    """Position of one dim after ``t`` steps from ``start`` (restarting at ``lo`` past ``hi``) and the carries into
    the next dim."""
    first = (hi - start) // step + 1  # positions from the start to the end of the box
    wrapped = t >= first
    rest = np.where(wrapped, t - first, 0)
    pos = np.where(wrapped, lo + (rest % count) * step, start + t * step)
    carry = np.where(wrapped, 1 + rest // count, 0)
    return pos, carry


def pixel_positions(tmap, coords, offsets, pixels: int, what: str = "im2col load"):
    """(positions [pixels, rank-1] as W,H,D,N; valid mask [pixels]) of the pixels one im2col load reads."""
    sp = tmap.rank - 2
    boxes = [_bbox(tmap, i) for i in range(sp)]
    if any(count == 0 for *_, count in boxes):
        return np.zeros((pixels, sp + 1), np.int64), np.zeros(pixels, bool)
    check_im2col_start(tmap, coords, what)
    t = np.arange(pixels, dtype=np.int64)
    pos, valid = [], np.ones(pixels, bool)
    for i, (lo, hi, step, count) in enumerate(boxes):
        p, t = _odometer(int(coords[i + 1]), lo, hi, step, count, t)
        p = p + offsets[i]
        valid &= (p >= 0) & (p < tmap.global_dim[i + 1])
        pos.append(p)
    n = int(coords[-1]) + t * tmap.element_strides[-1]  # images step by N's traversal stride too
    valid &= (n >= 0) & (n < tmap.global_dim[-1])
    pos.append(n)
    return np.stack(pos, axis=1), valid


def _element_offsets(tmap, geom, coords, offsets, channel_dim: int, what: str = "im2col load"):
    """(element offsets [pixels, channels], valid mask) of one im2col box; channels valid below ``channel_dim``."""
    channels, pixels = geom.counts
    e = geom.elem_bytes
    pos, valid_pix = pixel_positions(tmap, coords, offsets, pixels, what)
    ch = coords[0] + np.arange(channels, dtype=np.int64)
    valid = valid_pix[:, None] & ((ch >= 0) & (ch < channel_dim))[None, :]
    strides = np.array([s // e for s in tmap.global_strides], dtype=np.int64)
    return (pos @ strides)[:, None] + ch[None, :], valid


def im2col_scatter(gel: np.ndarray, tmap, geom, coords, box: np.ndarray, channel_dim: int, combine=None,
                   what: str = "im2col store") -> None:
    """Write the (pixels, channels) element array ``box`` of an ``.im2col_no_offs`` store into ``gel``;
    ``combine(old, new)`` makes it a reduction. Elements past the end of the buffer (the 16-byte tail of the last
    row) are dropped, as tile stores drop them."""
    off, valid = _element_offsets(tmap, geom, coords, [0] * (tmap.rank - 2), channel_dim, what)
    valid &= off < gel.size
    if not valid.any():
        return
    combine_in_order(gel, off[valid], box[valid], combine or replace)


def im2col_gather(gel: np.ndarray, tmap, geom, coords, offsets, fill: int, convert=None) -> np.ndarray:
    """The (pixels, channels) element array of one im2col load, OOB entries set to ``fill``; ``convert`` maps the
    in-bounds values (TF32 rounding)."""
    channels, pixels = geom.counts
    off, valid = _element_offsets(tmap, geom, coords, offsets, tmap.global_dim[0])
    out = np.full((pixels, channels), fill, dtype=gel.dtype)
    if valid.any():
        if off[valid].max() >= gel.size:
            raise IllegalAddress(f"im2col load at {tuple(coords)} reads past the {gel.size * geom.elem_bytes}-byte "
                                 "buffer")
        vals = gel[off[valid]]
        out[valid] = vals if convert is None else convert(vals)
    return out
