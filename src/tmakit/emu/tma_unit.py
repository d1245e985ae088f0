"""The TMA unit as pure functions: a tensor map, coordinates and byte buffers in, bytes out (docs/HARDWARE.md §2-4).

These are the functions a conformance fuzzer compares against the GPU byte for byte:

* ``gmem``: the global bytes, index 0 = ``tmap.global_address`` (numpy array or bytes-like; writeable for stores).
* ``smem``: one CTA's shared memory image, a flat ``np.uint8`` array indexed by shared address.
* ``coords``: the instruction's ``.s32`` coordinates, innermost first (TMA-dimension order).

``load`` returns the transaction bytes it signals (the full box, even when out of bounds). Nothing here knows about
CTAs, barriers or timing; ``tmakit.emu`` schedules these calls.
"""

from __future__ import annotations

from functools import lru_cache, partial

import numpy as np

from ..tma.coord_rules import inner_misaligned, store_start_message
from .checks import as_int
from .dtypes import load_convert, oob_fill_bits, storage_dtype
from .errors import IllegalInstruction, TmaUnitError
from .geometry import BoxGeometry, box_geometry
from .gmem_view import as_bytes, element_view, global_box, replace, store_dim0, write_box_in_order
from .im2col import check_im2col_start, im2col_gather, im2col_scatter
from .reduce_ops import check_reduce, reduce_bits
from .smem_image import check_smem_range, read_box, write_box
from .unfold import unfold_im2col, unfold_tile

S32 = (-(2**31), 2**31 - 1)
IM2COL_OFFSET_MAX = {3: 2**16 - 1, 4: 2**8 - 1, 5: 2**5 - 1}


@lru_cache(maxsize=4096)
def checked_geometry(tmap) -> BoxGeometry:
    """Validate the descriptor (``TensorMap.validate``, the driver's rules) and return its box geometry."""
    validate = getattr(tmap, "validate", None)
    if validate is not None:
        validate()
    return box_geometry(tmap)


def check_inner_aligned(tmap, coords, what: str = "TMA load") -> None:
    """The innermost start coordinate must address a 16-byte boundary (``coords[0] * elemsize % 16 == 0``), also
    when negative or inside the tensor: on the H200 a load, L2 prefetch, multicast, store or reduce that breaks it
    kills the context (probes in docs/CONFORMANCE.md). ``tmakit.kernels.seeds`` refuses the same on the host."""
    if not coords or not inner_misaligned(tmap, coords[0]):
        return
    nbytes = coords[0] * tmap.elem_bits // 8
    raise IllegalInstruction(
        f"{what} at coordinates {tuple(coords)}: the innermost start coordinate {coords[0]} x "
        f"{tmap.elem_bits // 8} B = {nbytes} bytes is not on a 16-byte boundary; the real GPU would kill the "
        "context (cudaErrorIllegalInstruction, 715, sticky). Start boxes at multiples of "
        f"{16 * 8 // tmap.elem_bits} elements along dim 0")


def _ints(values, what: str) -> tuple[int, ...]:
    values = tuple(values)
    if all(type(v) is int for v in values):
        return values
    return tuple(as_int(v, f"{what} {i} of {values}", None, None, TmaUnitError) for i, v in enumerate(values))


def check_coords(tmap, coords, offsets=(), what: str = "TMA load") -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Coordinates (and im2col offsets) as int tuples; one ``.s32`` per dimension, offsets in their u16 range; the
    innermost start on a 16-byte boundary (:func:`check_inner_aligned`)."""
    coords = _ints(coords, "TMA coordinate")
    if len(coords) != tmap.rank:
        raise TmaUnitError(f"a rank-{tmap.rank} tensor map needs {tmap.rank} coordinates, got {coords}")
    if any(not S32[0] <= c <= S32[1] for c in coords):
        raise TmaUnitError(f"coordinates {coords} do not fit in .s32")
    check_inner_aligned(tmap, coords, what)
    offsets = _ints(offsets, "im2col offset")
    if tmap.mode != "im2col":
        if offsets:
            raise TmaUnitError("im2col offsets given for a tiled tensor map")
        return coords, offsets
    if len(offsets) != tmap.rank - 2:
        raise TmaUnitError(f"a rank-{tmap.rank} im2col load needs {tmap.rank - 2} im2col offsets, got {offsets}")
    hi = IM2COL_OFFSET_MAX[tmap.rank]
    if any(not 0 <= o <= hi for o in offsets):
        raise TmaUnitError(f"im2col offsets {offsets} must lie in [0, {hi}] for a rank-{tmap.rank} map")
    return coords, offsets


def gather(tmap, coords, gmem, im2col_offsets=()) -> np.ndarray:
    """The box as an element array (unsigned storage dtype, numpy shape ``geometry.shape``), OOB filled; in-bounds
    TFLOAT32 elements rounded to TF32 as the hardware does (``dtypes.load_convert``)."""
    geom = checked_geometry(tmap)
    coords, offsets = check_coords(tmap, coords, im2col_offsets)
    gel = element_view(as_bytes(gmem, False), geom.elem_bytes)
    fill = oob_fill_bits(tmap)
    if tmap.mode == "im2col":
        return _im2col_gather(gel, tmap, geom, coords, offsets, fill)
    walk, coords, dims = _walk(tmap, coords, tuple(tmap.global_dim))
    slices, view = global_box(gel, walk, geom, coords, writeable=False, dims=dims)
    if slices is not None and view.shape == geom.shape:
        return load_convert(tmap, view.copy())
    out = np.full(geom.shape, fill, dtype=gel.dtype)
    if slices is not None:
        out[slices] = load_convert(tmap, view)
    return out


def _walk(tmap, coords, dims):
    """(map, coordinates, global dims) that ``global_box`` walks: the map itself, or an interleaved map unfolded
    into elements of a chunk x chunks (``unfold``)."""
    if tmap.interleave_bytes:
        return unfold_tile(tmap, coords, dims)
    return tmap, coords, dims


def _im2col_gather(gel, tmap, geom, coords, offsets, fill):
    convert = partial(load_convert, tmap)
    if not tmap.interleave_bytes:
        return im2col_gather(gel, tmap, geom, coords, offsets, fill, convert)
    check_im2col_start(tmap, coords)
    view, vcoords, base = unfold_im2col(tmap, coords)
    if base is None:
        return np.full((geom.counts[1], geom.counts[0]), fill, dtype=gel.dtype)
    return im2col_gather(gel[base // geom.elem_bytes:], view, geom, vcoords, offsets, fill, convert)


def load(tmap, coords, gmem, smem: np.ndarray, smem_addr: int, im2col_offsets=()) -> int:
    """``cp.async.bulk.tensor`` global -> shared: write the box at ``smem_addr``; return its transaction bytes."""
    geom = checked_geometry(tmap)
    check_smem_range(smem, smem_addr, geom, "TMA load")
    write_box(smem, smem_addr, geom, gather(tmap, coords, gmem, im2col_offsets))
    return geom.tx_bytes


def check_store_coords(tmap, coords, what: str = "TMA store") -> tuple[int, ...]:
    """Issue-time checks of a store or reduction (each traps on the H200): the coordinate rules of loads, no
    negative start, and for ``.im2col_no_offs`` a pixel box inside the tensor and a spatial start inside it."""
    offsets = (0,) * (tmap.rank - 2) if tmap.mode == "im2col" else ()
    coords, _ = check_coords(tmap, coords, offsets, what=what)
    msg = store_start_message(tmap, coords, what)
    if msg:
        raise IllegalInstruction(msg)
    return coords


def _im2col_store(tmap, coords, gmem, smem, smem_addr, what, combine=None) -> None:
    """``.im2col_no_offs`` store/reduce: image row p to pixel p of the load's walk (offsets zero)."""
    geom = checked_geometry(tmap)
    coords = check_store_coords(tmap, coords, what)
    check_smem_range(smem, smem_addr, geom, what)
    box = read_box(smem, smem_addr, geom).view(storage_dtype(geom.elem_bytes)).reshape(geom.shape)
    gel = element_view(as_bytes(gmem, True), geom.elem_bytes)
    if tmap.interleave_bytes:
        tmap, coords, base = unfold_im2col(tmap, coords)
        if base is None:
            return
        gel = gel[base // geom.elem_bytes:]
    im2col_scatter(gel, tmap, geom, coords, box, store_dim0(tmap, geom.elem_bytes), combine, what)


def _store_target(tmap, coords, gmem, smem, smem_addr, what):
    geom = checked_geometry(tmap)
    coords = check_store_coords(tmap, coords, what)
    check_smem_range(smem, smem_addr, geom, what)
    box = read_box(smem, smem_addr, geom).view(storage_dtype(geom.elem_bytes))
    gel = element_view(as_bytes(gmem, True), geom.elem_bytes)
    d0 = tmap.global_dim[0] if tmap.interleave_bytes else store_dim0(tmap, geom.elem_bytes)  # chunks are whole
    walk, coords, dims = _walk(tmap, coords, (d0,) + tuple(tmap.global_dim[1:]))
    slices, view = global_box(gel, walk, geom, coords, writeable=True, dims=dims, clip=True)
    return box.reshape(geom.shape), slices, view, gel


def store(tmap, coords, gmem, smem: np.ndarray, smem_addr: int) -> int:
    """``cp.async.bulk.tensor`` shared -> global: write the in-bounds part of the box; OOB parts are skipped,
    except that dim 0 is written in whole 16-byte chunks: elements past ``globalDim[0]`` up to the next 16-byte
    boundary of each row are written too, as on the H200 (``gmem_view.store_dim0``). Where global strides make box
    elements alias (rows that overlap), the last one in box order wins."""
    if tmap.mode == "im2col":
        _im2col_store(tmap, coords, gmem, smem, smem_addr, "TMA store")
        return checked_geometry(tmap).tx_bytes
    box, slices, view, gel = _store_target(tmap, coords, gmem, smem, smem_addr, "TMA store")
    if slices is not None:
        write_box_in_order(gel, view, box[slices], replace)
    return checked_geometry(tmap).tx_bytes


def reduce(tmap, coords, gmem, smem: np.ndarray, smem_addr: int, op: str) -> int:
    """``cp.reduce.async.bulk.tensor``: ``global = global (op) shared`` element-wise on the in-bounds part, dim 0
    rounded up to the next 16-byte boundary of the row like :func:`store`."""
    op = check_reduce(op, tmap.dtype)
    if tmap.mode == "im2col":
        _im2col_store(tmap, coords, gmem, smem, smem_addr, f"TMA reduce .{op}",
                      lambda old, new: reduce_bits(op, tmap.dtype, old, new))
        return checked_geometry(tmap).tx_bytes
    box, slices, view, gel = _store_target(tmap, coords, gmem, smem, smem_addr, f"TMA reduce .{op}")
    if slices is not None:
        write_box_in_order(gel, view, box[slices], lambda old, new: reduce_bits(op, tmap.dtype, old, new))
    return checked_geometry(tmap).tx_bytes


def prefetch(tmap, coords, im2col_offsets=()) -> None:
    """``cp.async.bulk.prefetch.tensor``: validated like a load (the 16-byte start rule traps too), no effect on
    memory."""
    checked_geometry(tmap)
    check_coords(tmap, coords, im2col_offsets, what="TMA prefetch")


def tx_bytes(tmap) -> int:
    """Transaction bytes of one box of ``tmap`` (what ``expect_tx`` must announce per load)."""
    return checked_geometry(tmap).tx_bytes
