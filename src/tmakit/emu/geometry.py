"""Shape of one TMA box in shared memory (docs/HARDWARE.md §2-3): element counts, row pitch, rows, transaction bytes."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..tma.tensormap import DataType, Interleave, SwizzleMode
from .errors import TmaUnitError
from .swizzle import SWIZZLE_SPAN, check_mode, swizzle_period

PACKED = frozenset({DataType.U4_ALIGN8B, DataType.U4_ALIGN16B, DataType.U6_ALIGN16B})


@dataclass(frozen=True)
class BoxGeometry:
    """One box as TMA lays it out in shared memory, row-major with dim 0 contiguous.

    ``counts`` are elements per dimension, innermost first (tiled: ``ceil(boxDim[i] / elementStrides[i])``,
    ``boxDim[0]`` for dim 0; im2col: ``(channelsPerPixel, pixelsPerColumn)``; interleaved maps: the elements of a
    chunk first, then chunks, as ``unfold`` walks them); ``steps`` the element strides.
    """

    elem_bytes: int
    counts: tuple[int, ...]
    steps: tuple[int, ...]
    pitch: int
    swizzle: SwizzleMode

    @property
    def row_bytes(self) -> int:
        return self.counts[0] * self.elem_bytes

    @property
    def rows(self) -> int:
        n = 1
        for c in self.counts[1:]:
            n *= c
        return n

    @property
    def tx_bytes(self) -> int:
        """Data bytes of the box: what the mbarrier's transaction count receives (padding not counted)."""
        return self.row_bytes * self.rows

    @property
    def shape(self) -> tuple[int, ...]:
        """Element shape of the box, outermost first (numpy order)."""
        return tuple(reversed(self.counts))

    @property
    def period(self) -> int:
        return swizzle_period(self.swizzle)

    @property
    def footprint(self) -> int:
        """Shared bytes from the box start that the box touches: ``pitch * rows``. The swizzle XORs address bits 4..6
        only up to the span (bit 4 for 32B, bits 4-5 for 64B, 4-6 for 128B), so with a span-aligned start (the
        128-byte rule) every row stays inside its own ``pitch`` bytes; there is no rounding to 128-byte lines
        (= ``TensorMap.smem_bytes``; the H200 ran such boxes with the image sized exactly). Dense swizzled rows
        (interleaved maps) round up to the swizzle span: the last partial span's chunks are permuted inside it."""
        n = self.pitch * self.rows
        span = SWIZZLE_SPAN[self.swizzle] if self.swizzle != SwizzleMode.NONE else 1
        return -(-n // span) * span


@lru_cache(maxsize=4096)
def box_geometry(tmap) -> BoxGeometry:
    """The shared-memory geometry of one box of ``tmap`` (cached per descriptor); interleaved maps as the H200
    moves them (``_interleaved_geometry``)."""
    if tmap.dtype in PACKED:
        raise TmaUnitError(f"{tmap.dtype.name}: packed 4/6-bit types are not modeled (the sm_90 driver refuses them)")
    swz = check_mode(tmap.swizzle)
    e = tmap.elem_bytes
    if tmap.interleave != Interleave.NONE:
        return _interleaved_geometry(tmap, swz, e)
    if tmap.mode == "im2col":
        counts, steps = (tmap.channels_per_pixel, tmap.pixels_per_column), (1, 1)
    else:
        es = (1,) + tuple(tmap.element_strides)[1:]  # es[0] is ignored without interleave (docs/HARDWARE.md §1)
        counts = tuple(-(-b // s) for b, s in zip(tmap.box_dim, es))
        steps = es
    row = counts[0] * e
    pitch = row if swz == SwizzleMode.NONE else SWIZZLE_SPAN[swz]
    if row > pitch:
        raise TmaUnitError(f"inner box row of {row} bytes exceeds the {swz.name} swizzle span of {pitch} bytes")
    return BoxGeometry(e, counts, steps, pitch, swz)


def _interleaved_geometry(tmap, swz: SwizzleMode, e: int) -> BoxGeometry:
    """Interleaved maps as the H200 moves them (``unfold``): dense rows of one chunk (``k`` elements), swizzled in
    place by address. Tile: ``ceil(boxDim[0] / elementStrides[0])`` chunks stepping by ``elementStrides[0]``, then
    dims 1.. by their element strides (dim rank-2 one position). im2col: one chunk per pixel, ``pixelsPerColumn``
    pixels; element strides other than 1 are not measured in this mode and are refused."""
    k = tmap.interleave_bytes // e
    es = tuple(tmap.element_strides)
    if tmap.mode == "im2col":
        if any(s != 1 for s in es):
            raise TmaUnitError(f"elementStrides {list(es)} on a {tmap.interleave.name} im2col map are not modeled "
                               "(measured on the H200 with all 1); use element_strides of 1")
        return BoxGeometry(e, (k, tmap.pixels_per_column), (1, 1), k * e, swz)
    b = tmap.box_dim
    counts = (k, -(-b[0] // es[0])) + tuple(1 if i == tmap.rank - 2 else -(-b[i] // es[i])
                                           for i in range(1, tmap.rank))
    steps = (1, es[0]) + tuple(1 if i == tmap.rank - 2 else es[i] for i in range(1, tmap.rank))
    return BoxGeometry(e, counts, steps, k * e, swz)
