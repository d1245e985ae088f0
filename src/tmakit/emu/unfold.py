"""Interleaved tensor maps seen as the plain maps the H200 walks (probes in docs/CONFORMANCE.md).

Tile maps: dim 0 counts 16/32-byte chunks, so a box walks the elements of a chunk, then chunks (stepping by
``elementStrides[0]``), then dims 1.. (dim rank-2 one position: ``geometry``). im2col maps: each pixel is one
chunk; the spatial dims are the chunk dim and dims 1..rank-3 (corners and offsets apply to them in that order),
dim rank-2 stays at its coordinate, and N walks as usual.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MapView:
    """The fields of a tensor map that the box walkers read (``gmem_view.global_box``, ``im2col``), for a plain
    (non-interleaved) map."""

    rank: int
    global_dim: tuple
    global_strides: tuple
    element_strides: tuple
    global_address: int
    mode: str = "tiled"
    pixel_box_lower_corner: tuple = ()
    pixel_box_upper_corner: tuple = ()
    interleave_bytes: int = 0


def unfold_tile(tmap, coords, dims):
    """(view, coords, dims) of an interleaved tile box: dim 0 split into (elements of a chunk, chunks)."""
    k = tmap.interleave_bytes // tmap.elem_bytes
    view = MapView(tmap.rank + 1, (k,) + tuple(dims), (tmap.interleave_bytes,) + tuple(tmap.global_strides),
                   (1,) + tuple(tmap.element_strides), tmap.global_address)
    return view, (0,) + tuple(coords), view.global_dim


def unfold_im2col(tmap, coords):
    """(view, coords, base byte offset) of an interleaved im2col box; the base is None when dim rank-2's coordinate
    lies outside the tensor (every pixel then reads as the fill, and a store writes nothing)."""
    r, fixed = tmap.rank, tmap.rank - 2
    keep = [d for d in range(r) if d != fixed]
    strides = (tmap.interleave_bytes,) + tuple(tmap.global_strides[d - 1] for d in keep[1:])
    view = MapView(r, (tmap.interleave_bytes // tmap.elem_bytes,) + tuple(tmap.global_dim[d] for d in keep),
                   strides, (1,) * r, tmap.global_address, "im2col", tuple(tmap.pixel_box_lower_corner),
                   tuple(tmap.pixel_box_upper_corner))
    h = int(coords[fixed])
    base = h * tmap.global_strides[fixed - 1] if 0 <= h < tmap.global_dim[fixed] else None
    return view, (0,) + tuple(int(coords[d]) for d in keep), base
