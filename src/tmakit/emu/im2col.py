"""im2col-mode gather (``cp.async.bulk.tensor ... .im2col``): ``pixelsPerColumn`` pixels x ``channelsPerPixel``.

Model (UNVERIFIED on hardware; the conformance fuzzer settles it): dims are C (0), spatial W,H,D (1..rank-2), N
(rank-1). Spatial dim i spans the bounding box ``[lower[i], globalDim[i+1] - 1 + upper[i]]`` walked with step
``elementStrides[i+1]``. The instruction's spatial coordinates name the first pixel; pixels follow in W, then H,
then D order inside the box, then the next image N. Each pixel is read at its position plus the im2col offsets;
pixels or channels outside the tensor read as the OOB fill.
"""

from __future__ import annotations

import numpy as np

from .errors import IllegalAddress


def _bbox(tmap, i: int) -> tuple[int, int, int]:
    """(lower, step, count) of spatial dimension ``i`` (0 = W)."""
    lo = tmap.pixel_box_lower_corner[i]
    hi = tmap.global_dim[i + 1] - 1 + tmap.pixel_box_upper_corner[i]
    step = tmap.element_strides[i + 1]
    return lo, step, max(0, (hi - lo) // step + 1)


def pixel_positions(tmap, coords, offsets, pixels: int):
    """(positions [pixels, rank-1] as W,H,D,N; valid mask [pixels]) of the pixels one im2col load reads."""
    sp = tmap.rank - 2
    boxes = [_bbox(tmap, i) for i in range(sp)]
    if any(count == 0 for _, _, count in boxes):
        return np.zeros((pixels, sp + 1), np.int64), np.zeros(pixels, bool)
    start = coords[-1]
    for i in reversed(range(sp)):
        lo, step, count = boxes[i]
        start = start * count + (coords[i + 1] - lo) // step
    lin = start + np.arange(pixels, dtype=np.int64)
    pos, valid = [], np.ones(pixels, bool)
    for i, (lo, step, count) in enumerate(boxes):
        p = lo + (lin % count) * step + offsets[i]
        lin = lin // count
        valid &= (p >= 0) & (p < tmap.global_dim[i + 1])
        pos.append(p)
    valid &= (lin >= 0) & (lin < tmap.global_dim[-1])
    pos.append(lin)
    return np.stack(pos, axis=1), valid


def im2col_gather(gel: np.ndarray, tmap, geom, coords, offsets, fill: int, convert=None) -> np.ndarray:
    """The (pixels, channels) element array of one im2col load, OOB entries set to ``fill``; ``convert`` maps the
    in-bounds values (TF32 rounding)."""
    channels, pixels = geom.counts
    e = geom.elem_bytes
    pos, valid_pix = pixel_positions(tmap, coords, offsets, pixels)
    ch = coords[0] + np.arange(channels, dtype=np.int64)
    valid = valid_pix[:, None] & ((ch >= 0) & (ch < tmap.global_dim[0]))[None, :]
    strides = np.array([s // e for s in tmap.global_strides], dtype=np.int64)
    off = (pos @ strides)[:, None] + ch[None, :]
    out = np.full((pixels, channels), fill, dtype=gel.dtype)
    if valid.any():
        if off[valid].max() >= gel.size:
            raise IllegalAddress(f"im2col load at {tuple(coords)} reads past the {gel.size * e}-byte buffer")
        vals = gel[off[valid]]
        out[valid] = vals if convert is None else convert(vals)
    return out
