"""TMA shared-memory swizzle on absolute shared addresses (docs/HARDWARE.md §2).

``phys(A) = A ^ (((A >> 7) & m) << 4)`` with ``m = 1, 3, 7`` for 32B/64B/128B; it permutes 16-byte chunks,
repeats every 256/512/1024 bytes and is its own inverse (stores un-swizzle with the same formula).
"""

from __future__ import annotations

from ..tma.tensormap import SwizzleMode
from .errors import TmaUnitError

SWIZZLE_MASK = {SwizzleMode.NONE: 0, SwizzleMode.B32: 1, SwizzleMode.B64: 3, SwizzleMode.B128: 7}
SWIZZLE_SPAN = {SwizzleMode.B32: 32, SwizzleMode.B64: 64, SwizzleMode.B128: 128}
SWIZZLE_PERIOD = {SwizzleMode.NONE: 128, SwizzleMode.B32: 256, SwizzleMode.B64: 512, SwizzleMode.B128: 1024}


def check_mode(mode) -> SwizzleMode:
    """The swizzle mode, or TmaUnitError for the sm_100+ ATOM variants (Hopper rejects them)."""
    mode = SwizzleMode(mode)
    if mode not in SWIZZLE_MASK:
        raise TmaUnitError(f"swizzle {mode.name} exists only on sm_100+; the emulator models Hopper (sm_90), "
                           "where the driver rejects it")
    return mode


def swizzle_address(addr, mode):
    """Physical shared address of the byte that the unswizzled image puts at ``addr`` (int or integer ndarray)."""
    m = SWIZZLE_MASK[check_mode(mode)]
    return addr ^ (((addr >> 7) & m) << 4)


def swizzle_period(mode) -> int:
    """Bytes after which the pattern repeats (128 for no swizzle: the TMA shared alignment)."""
    return SWIZZLE_PERIOD[check_mode(mode)]
