"""The driver's enums for tensor maps (``CUtensorMapDataType``, ``CUtensorMapSwizzle`` ...) and the per-type tables
the rules use. The lowest module of ``tmakit.tma`` after ``errors``: everything else builds on it."""

from __future__ import annotations

import numbers
from enum import IntEnum

from .errors import TmaDescriptorError


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


# Packed 4/6-bit types; the ALIGN16B ones need 32-byte addresses/strides and a 128-element inner box.
PACKED_DTYPES = frozenset({DataType.U4_ALIGN8B, DataType.U4_ALIGN16B, DataType.U6_ALIGN16B})
PACKED_ALIGN16B = frozenset({DataType.U4_ALIGN16B, DataType.U6_ALIGN16B})
FLOAT_DTYPES = frozenset({DataType.FLOAT16, DataType.FLOAT32, DataType.FLOAT64, DataType.BFLOAT16,
                          DataType.FLOAT32_FTZ, DataType.TFLOAT32, DataType.TFLOAT32_FTZ})

# Bits one element occupies in *shared* memory. Differs from DTYPE_BITS only for the ALIGN16B packed types:
# the driver docs say 16 packed values land in 16 bytes (U4: 8-byte gaps, U6: 4-byte gaps). UNVERIFIED on sm_90.
SMEM_BITS = {**DTYPE_BITS, DataType.U4_ALIGN16B: 8, DataType.U6_ALIGN16B: 8}


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


# Shared-memory alignment a swizzled box needs: the period of the XOR pattern (docs/HARDWARE.md §2). ATOM variants: 1024
# (their periods are UNVERIFIED; 1024 is safe).
SWIZZLE_ALIGNMENT = {SwizzleMode.NONE: 128, SwizzleMode.B32: 256, SwizzleMode.B64: 512, SwizzleMode.B128: 1024,
                     SwizzleMode.B128_ATOM_32B: 1024, SwizzleMode.B128_ATOM_32B_FLIP_8B: 1024,
                     SwizzleMode.B128_ATOM_64B: 1024}


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


def enum_value(cls, value, param: str):
    """``cls(value)`` for a member or an integer (not a bool, float or string), or the named error listing the
    enum's values."""
    try:
        if isinstance(value, cls):
            return value
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise ValueError(value)
        return cls(int(value))
    except ValueError:
        names = ", ".join(f"{m.name}={m.value}" for m in cls)
        raise TmaDescriptorError(f"{param}.enum", f"{param} must be one of the driver's enum values", value,
                                 f"use tmakit.{cls.__name__} ({names})", f"{param} = {value!r}") from None
