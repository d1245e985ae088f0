"""Element storage and fill patterns of the emulator.

TMA moves bits: every element travels as the unsigned integer of its size. The OOB NaN fill
(``NAN_REQUEST_ZERO_FMA``) writes one constant per type:

* FLOAT32 ``0x7FF77FF7`` — verified on an H200 (TMA.md §3).
* FLOAT32_FTZ, TFLOAT32, TFLOAT32_FTZ ``0x7FF77FF7`` — UNVERIFIED (same 4-byte storage as FLOAT32).
* FLOAT16, BFLOAT16 ``0x7FF7`` and FLOAT64 ``0x7FF77FF77FF77FF7`` — UNVERIFIED. The FLOAT32 pattern is the 16-bit
  pattern ``0x7FF7`` twice, which is itself a quiet NaN in f16 and bf16, so the model repeats it for every width.
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

VERIFIED_NAN_BITS = frozenset({DataType.FLOAT32})


def storage_dtype(elem_bytes: int) -> np.dtype:
    """Unsigned integer dtype used to move elements of ``elem_bytes`` bytes bit-exactly."""
    return STORAGE[elem_bytes]


def oob_fill_bits(tmap) -> int:
    """Bits written for an out-of-bounds element of a load with this tensor map."""
    if int(tmap.oob_fill) == 0:
        return 0
    return OOB_NAN_BITS[tmap.dtype]
