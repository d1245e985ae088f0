"""bfloat16 on numpy: values are stored as their raw 16 bits in ``np.uint16`` (what ``numpy_dtype(BFLOAT16)`` gives).

``to_bits`` rounds float32 to nearest-even (NaNs stay quiet NaNs), ``from_bits`` widens exactly to float32.
"""

from __future__ import annotations

import numpy as np


def to_bits(x) -> np.ndarray:
    """float values -> bfloat16 bit patterns (np.uint16), round to nearest even."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32)
    rounded = ((u.astype(np.uint64) + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    return np.where(nan, ((u >> 16) | 0x40).astype(np.uint16), rounded)


def from_bits(bits) -> np.ndarray:
    """bfloat16 bit patterns (np.uint16) -> float32 values (exact)."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)
