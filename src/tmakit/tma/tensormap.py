"""The TMA descriptor (``CUtensorMap``) as a Python value: every field of
``cuTensorMapEncodeTiled`` / ``cuTensorMapEncodeIm2col``, innermost dimension first.

All lists are in the driver's order: index 0 is the contiguous (innermost) dimension.
``global_strides`` has ``rank - 1`` entries, in bytes, for dimensions 1..rank-1.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import IntEnum


class DataType(IntEnum):
    """``CUtensorMapDataType``."""

    UINT8 = 0
    UINT16 = 1
    UINT32 = 2
    INT32 = 3
    UINT64 = 4
    INT64 = 5
    FLOAT16 = 6
    FLOAT32 = 7
    FLOAT64 = 8
    BFLOAT16 = 9
    FLOAT32_FTZ = 10
    TFLOAT32 = 11
    TFLOAT32_FTZ = 12
    U4_ALIGN8B = 13  # CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B
    U4_ALIGN16B = 14  # CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B
    U6_ALIGN16B = 15  # CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B


# Element size in bits (packed types are 4 or 6 bits per element).
DTYPE_BITS = {
    DataType.UINT8: 8, DataType.UINT16: 16, DataType.UINT32: 32, DataType.INT32: 32,
    DataType.UINT64: 64, DataType.INT64: 64, DataType.FLOAT16: 16, DataType.FLOAT32: 32,
    DataType.FLOAT64: 64, DataType.BFLOAT16: 16, DataType.FLOAT32_FTZ: 32, DataType.TFLOAT32: 32,
    DataType.TFLOAT32_FTZ: 32, DataType.U4_ALIGN8B: 4, DataType.U4_ALIGN16B: 4, DataType.U6_ALIGN16B: 6,
}


class Interleave(IntEnum):
    """``CUtensorMapInterleave``."""

    NONE = 0
    B16 = 1
    B32 = 2


class SwizzleMode(IntEnum):
    """``CUtensorMapSwizzle`` (the ATOM variants exist only on sm_100+)."""

    NONE = 0
    B32 = 1
    B64 = 2
    B128 = 3
    B128_ATOM_32B = 4
    B128_ATOM_32B_FLIP_8B = 5
    B128_ATOM_64B = 6


SWIZZLE_SPAN = {SwizzleMode.B32: 32, SwizzleMode.B64: 64, SwizzleMode.B128: 128,
                SwizzleMode.B128_ATOM_32B: 128, SwizzleMode.B128_ATOM_32B_FLIP_8B: 128,
                SwizzleMode.B128_ATOM_64B: 128}


class L2Promotion(IntEnum):
    """``CUtensorMapL2promotion``."""

    NONE = 0
    B64 = 1
    B128 = 2
    B256 = 3


class OobFill(IntEnum):
    """``CUtensorMapFloatOOBfill``."""

    NONE = 0
    NAN_REQUEST_ZERO_FMA = 1


@dataclass(frozen=True)
class TensorMap:
    """One TMA descriptor, tiled (``mode="tiled"``) or im2col (``mode="im2col"``).

    Fields mirror the driver call, innermost dimension first. ``global_address`` is only checked
    for alignment (it may be 0 for a descriptor that is not bound to memory yet).
    """

    dtype: DataType
    global_dim: tuple[int, ...]
    global_strides: tuple[int, ...]  # bytes, rank-1 entries: dims 1..rank-1
    box_dim: tuple[int, ...]  # tiled: box per dim; im2col: ignored except channels/pixels below
    element_strides: tuple[int, ...] | None = None  # None -> all ones
    interleave: Interleave = Interleave.NONE
    swizzle: SwizzleMode = SwizzleMode.NONE
    l2_promotion: L2Promotion = L2Promotion.NONE
    oob_fill: OobFill = OobFill.NONE
    global_address: int = 0
    mode: str = "tiled"
    # im2col only (cuTensorMapEncodeIm2col); corners are in D,H,W order of the driver (innermost spatial first).
    pixel_box_lower_corner: tuple[int, ...] = field(default=())
    pixel_box_upper_corner: tuple[int, ...] = field(default=())
    channels_per_pixel: int = 0
    pixels_per_column: int = 0

    def __post_init__(self):
        object.__setattr__(self, "dtype", DataType(self.dtype))
        object.__setattr__(self, "global_dim", tuple(int(x) for x in self.global_dim))
        object.__setattr__(self, "global_strides", tuple(int(x) for x in self.global_strides))
        object.__setattr__(self, "box_dim", tuple(int(x) for x in self.box_dim))
        es = self.element_strides
        es = (1,) * len(self.global_dim) if es is None else tuple(int(x) for x in es)
        object.__setattr__(self, "element_strides", es)
        object.__setattr__(self, "interleave", Interleave(self.interleave))
        object.__setattr__(self, "swizzle", SwizzleMode(self.swizzle))
        object.__setattr__(self, "l2_promotion", L2Promotion(self.l2_promotion))
        object.__setattr__(self, "oob_fill", OobFill(self.oob_fill))
        object.__setattr__(self, "pixel_box_lower_corner", tuple(int(x) for x in self.pixel_box_lower_corner))
        object.__setattr__(self, "pixel_box_upper_corner", tuple(int(x) for x in self.pixel_box_upper_corner))

    @property
    def rank(self) -> int:
        return len(self.global_dim)

    @property
    def elem_bits(self) -> int:
        return DTYPE_BITS[self.dtype]

    @property
    def elem_bytes(self) -> int:
        """Bytes per element (packed 4/6-bit types report 1)."""
        return max(1, self.elem_bits // 8)

    def replace(self, **changes) -> TensorMap:
        return dataclasses.replace(self, **changes)
