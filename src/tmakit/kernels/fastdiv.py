"""Multiply-shift constants for unsigned division by a runtime-constant divisor (``tmakit/fastdiv.cuh``).

Tile coordinates are a chain of divisions by tile counts; a 32-bit ``div`` is a ~20-instruction sequence on the GPU,
run by the one thread that issues a CTA's first TMA load, before that load. A multiply-high and a shift do the same
for every dividend below 2^31 (the tile indices of a grid).
"""

from __future__ import annotations

import ctypes


class FastDiv(ctypes.Structure):
    """``tmakit::FastDiv``: ``n / d == umulhi(n, mul) >> shr`` for n < 2^31 (``mul`` 0: d = 1)."""

    _fields_ = [("mul", ctypes.c_uint32), ("shr", ctypes.c_uint32)]


def fast_divisor(d: int) -> tuple[int, int]:
    """(mul, shr) for dividing by ``d`` (1 <= d < 2^31)."""
    if not 1 <= d < 1 << 31:
        raise ValueError(f"fast_divisor: divisor must be in [1, 2^31), got {d}")
    if d == 1:
        return 0, 0
    p = (d - 1).bit_length()  # ceil(log2 d)
    return ((1 << (31 + p)) + d - 1) // d, p - 1


def set_divisor(slot: FastDiv, d: int) -> None:
    slot.mul, slot.shr = fast_divisor(d)


def divide(n: int, mul: int, shr: int) -> int:
    """The device formula in Python (for tests): ``umulhi(n, mul) >> shr``, or ``n`` when ``mul`` is 0."""
    return ((n * mul) >> 32) >> shr if mul else n
