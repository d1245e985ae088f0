"""Integer arguments of the emulator's API: integers only (no rounding of 16.5, no bools), in range, or a named
error."""

from __future__ import annotations

import operator

from .errors import EmuError


def as_int(value, what: str, lo: int | None = None, hi: int | None = None, error: type = EmuError) -> int:
    """``value`` as an int (Python, numpy or ``tk.Int`` integers) inside ``lo..hi``; else ``error`` naming it."""
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise error(f"{what} must be an integer, got {value!r} ({type(value).__name__}); the emulator does not "
                    "round or convert it")
    v = operator.index(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        span = f"{lo if lo is not None else '-inf'}..{hi if hi is not None else 'inf'}"
        raise error(f"{what} {v} is outside {span}")
    return v


def as_pow2(value, what: str, error: type = EmuError) -> int:
    """A positive power of two (an alignment)."""
    v = as_int(value, what, 1, None, error)
    if v & (v - 1):
        raise error(f"{what} {v} is not a power of two")
    return v
