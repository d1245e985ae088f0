"""Start-coordinate rules of TMA instructions that the driver cannot check (they are not in the tensor map) and
that kill the CUDA context when broken on an H200 (cudaErrorIllegalInstruction, 715, sticky). The emulator raises
``IllegalInstruction`` for them and ``tmakit.cuda`` refuses them on the host; docs/CONFORMANCE.md has the probes."""

from __future__ import annotations


def inner_misaligned(tmap, c0: int) -> bool:
    """Whether the innermost start coordinate misses a 16-byte boundary (``c0 * elemsize % 16 != 0``; interleaved
    maps are exempt): loads, prefetches, stores and reductions all trap on it."""
    return int(tmap.interleave) == 0 and (c0 * tmap.elem_bits // 8) % 16 != 0


def im2col_spatial_dims(tmap) -> tuple[int, ...]:
    """The map dims an im2col load walks as its spatial dims, in corner/offset order: W, H, D (dims 1..rank-2).
    Interleaved maps (H200 probes, docs/CONFORMANCE.md): the chunk dim and the next ones (dims 0..rank-3), each
    pixel being one chunk; dim rank-2 stays at its coordinate."""
    first = 0 if getattr(tmap, "interleave_bytes", 0) else 1
    return tuple(range(first, first + tmap.rank - 2))


def im2col_pixel_box(tmap, i: int) -> tuple[int, int]:
    """(first, last) position of spatial dim ``i`` (0 = W, the map's dim 1; interleaved: the chunk dim, dim 0)
    inside an im2col map's pixel bounding box: ``[lowerCorner[i], globalDim[d] - 1 + upperCorner[i]]``, ``d`` the
    map dim of :func:`im2col_spatial_dims`."""
    d = im2col_spatial_dims(tmap)[i]
    return tmap.pixel_box_lower_corner[i], tmap.global_dim[d] - 1 + tmap.pixel_box_upper_corner[i]


def im2col_start_outside(tmap, coords) -> list[tuple[int, int, int, int]]:
    """The spatial start coordinates of an im2col load that lie outside the pixel bounding box, as (map dim,
    coordinate, first, last); the load traps on any of them (H200 probes, both edges of W and H). The channel and
    batch (N) coordinates may lie anywhere: what falls outside the tensor reads as the OOB fill."""
    if tmap.mode != "im2col":
        return []
    bad = []
    for i, d in enumerate(im2col_spatial_dims(tmap)):
        lo, hi = im2col_pixel_box(tmap, i)
        c = int(coords[d])
        if not lo <= c <= hi:
            bad.append((d, c, lo, hi))
    return bad


def im2col_start_message(tmap, coords, what: str = "im2col load") -> str:
    """'' when the im2col start lies inside the pixel box, else the rule, the values and the fix."""
    bad = im2col_start_outside(tmap, coords)
    if not bad:
        return ""
    parts = ", ".join(f"dim {d}: {c} not in [{lo}, {hi}]" for d, c, lo, hi in bad)
    return (f"{what} at coordinates {tuple(int(c) for c in coords)}: each spatial start coordinate must lie inside "
            f"the pixel bounding box [lowerCorner, globalDim - 1 + upperCorner] ({parts}); the real GPU kills the "
            "context (cudaErrorIllegalInstruction, 715, sticky). Start inside the box; padding comes from the "
            "corners and the im2col offsets")


def im2col_store_corner_message(tmap, what: str = "im2col store") -> str:
    """'' when an ``.im2col_no_offs`` store or reduction through ``tmap`` can run, else why it traps: on the H200
    it does whenever the pixel bounding box reaches outside the tensor (a lower corner below 0 or an upper corner
    above 0, in any spatial dim, whatever pixels the instruction touches). Loads through the same map are fine."""
    if tmap.mode != "im2col":
        return ""
    lo, up = list(tmap.pixel_box_lower_corner), list(tmap.pixel_box_upper_corner)
    if all(x >= 0 for x in lo) and all(x <= 0 for x in up):
        return ""
    return (f"{what}: pixel box corners lower {lo} / upper {up} reach outside the tensor; im2col stores and "
            "reductions need every lower corner >= 0 and every upper corner <= 0, or the real GPU kills the context "
            "(cudaErrorIllegalInstruction, 715, sticky). Store through a map whose corners lie inside the tensor "
            "(padding exists only for loads)")


def store_start_message(tmap, coords, what: str = "TMA store") -> str:
    """'' when a store or reduction may start at ``coords``, else the first rule it breaks (each traps on the H200):
    no negative start coordinate (docs/HARDWARE.md §3), and for ``.im2col_no_offs`` a pixel box inside the tensor and
    a spatial start inside the pixel box. The 16-byte rule of dim 0 is :func:`inner_misaligned`."""
    c = tuple(int(x) for x in coords)
    if any(x < 0 for x in c):
        return (f"{what} at coordinates {c}: start coordinates must not be negative; the real GPU kills the context "
                "with cudaErrorIllegalInstruction (715, sticky)")
    if tmap.mode == "im2col":
        return im2col_store_corner_message(tmap, what) or im2col_start_message(tmap, c, what)
    return ""
