"""Shape of one TMA box in shared memory (TMA.md §2-3): element counts, row pitch, rows, transaction bytes."""

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
    ``boxDim[0]`` for dim 0; im2col: ``(channelsPerPixel, pixelsPerColumn)``); ``steps`` the element strides.
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
        """Shared bytes from the box start that the box may touch (swizzle stays inside each 128-byte line)."""
        span = self.pitch * self.rows
        return span if self.swizzle == SwizzleMode.NONE else -(-span // 128) * 128


@lru_cache(maxsize=4096)
def box_geometry(tmap) -> BoxGeometry:
    """The shared-memory geometry of one box of ``tmap`` (cached per descriptor)."""
    if tmap.dtype in PACKED:
        raise TmaUnitError(f"{tmap.dtype.name}: packed 4/6-bit types are not modeled (UNVERIFIED on sm_90)")
    swz = check_mode(tmap.swizzle)
    e = tmap.elem_bytes
    if tmap.mode == "im2col":
        counts, steps = (tmap.channels_per_pixel, tmap.pixels_per_column), (1, 1)
    else:
        es = tuple(tmap.element_strides)
        if tmap.interleave == Interleave.NONE:
            es = (1,) + es[1:]  # elementStrides[0] is ignored without interleave (TMA.md §1)
        counts = tuple(-(-b // s) for b, s in zip(tmap.box_dim, es))
        steps = es
    row = counts[0] * e
    pitch = row if swz == SwizzleMode.NONE else SWIZZLE_SPAN[swz]
    if row > pitch:
        raise TmaUnitError(f"inner box row of {row} bytes exceeds the {swz.name} swizzle span of {pitch} bytes")
    return BoxGeometry(e, counts, steps, pitch, swz)
