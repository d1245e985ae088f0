"""Element storage and fill patterns of the emulator.

TMA moves bits: every element travels as the unsigned integer of its size. The OOB NaN fill
(``NAN_REQUEST_ZERO_FMA``) writes one constant per type:

* FLOAT32 ``0x7FF77FF7`` — verified on an H200 (docs/HARDWARE.md §3).
* FLOAT32_FTZ, TFLOAT32, TFLOAT32_FTZ ``0x7FF77FF7`` — verified on an H200 (conformance probe).
* FLOAT16, BFLOAT16 ``0x7FF7`` and FLOAT64 ``0x7FF77FF77FF77FF7`` — verified on an H200 (GPU test suite): the
  16-bit pattern ``0x7FF7`` repeated to every width.

One conversion is not a bit copy: **TFLOAT32 and TFLOAT32_FTZ loads round** every in-bounds element to TF32 (10
mantissa bits) on the H200: round to nearest, ties to even, on the low 13 bits; a carry may reach the exponent (the
largest finite floats become infinity); every NaN becomes the canonical ``0x7FFFE000`` (sign dropped); denormals are
rounded like normals (not flushed, for the _FTZ type too). The OOB NaN fill is written as is (``0x7FF77FF7``);
stores and reductions copy bits. Verified on 4096 crafted and random patterns (docs/CONFORMANCE.md).
"""

from __future__ import annotations

import numpy as np

from ..tma.tensormap import DataType

STORAGE = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}

OOB_NAN_BITS = {
    DataType.FLOAT32: 0x7FF77FF7,
    DataType.FLOAT32_FTZ: 0x7FF77FF7,
    DataType.TFLOAT32: 0x7FF77FF7,
    DataType.TFLOAT32_FTZ: 0x7FF77FF7,
    DataType.FLOAT16: 0x7FF7,
    DataType.BFLOAT16: 0x7FF7,
    DataType.FLOAT64: 0x7FF77FF77FF77FF7,
}

VERIFIED_NAN_BITS = frozenset({DataType.FLOAT32, DataType.FLOAT32_FTZ, DataType.TFLOAT32, DataType.TFLOAT32_FTZ})


TF32_DTYPES = frozenset({DataType.TFLOAT32, DataType.TFLOAT32_FTZ})
TF32_NAN = 0x7FFFE000


def tf32_round(bits: np.ndarray) -> np.ndarray:
    """FP32 bit patterns (uint32) rounded as a TF32 TMA load does: RNE to 10 mantissa bits, NaN -> 0x7FFFE000."""
    b = np.asarray(bits, dtype=np.uint32).astype(np.uint64)
    nan = ((b & 0x7F800000) == 0x7F800000) & ((b & 0x7FFFFF) != 0)
    r = (b + 0xFFF + ((b >> 13) & 1)) & 0xFFFFE000
    return np.where(nan, np.uint64(TF32_NAN), r).astype(np.uint32)


def load_convert(tmap, values: np.ndarray) -> np.ndarray:
    """In-bounds elements as a load delivers them to shared memory: TF32 rounding for the TFLOAT32 types, bits
    unchanged for every other type."""
    if tmap.dtype in TF32_DTYPES:
        return tf32_round(values)
    return values


def storage_dtype(elem_bytes: int) -> np.dtype:
    """Unsigned integer dtype used to move elements of ``elem_bytes`` bytes bit-exactly."""
    return STORAGE[elem_bytes]


def oob_fill_bits(tmap) -> int:
    """Bits written for an out-of-bounds element of a load with this tensor map."""
    if int(tmap.oob_fill) == 0:
        return 0
    return OOB_NAN_BITS[tmap.dtype]
