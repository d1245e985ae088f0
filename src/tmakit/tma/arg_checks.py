"""Integer arguments of the TMA host API: integers only (Python or numpy, never bool), never converted.

A float such as 64.9, a string "64", bytes, None or True is a mistake to report, not a value to round."""

from __future__ import annotations

import numbers

from .errors import TmaDescriptorError


def is_integer(v) -> bool:
    """A Python or numpy integer that is not a bool."""
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def as_int(v, field: str, lo: int | None = None, hi: int | None = None) -> int:
    """``int(v)`` for an integer in ``[lo, hi]`` (either bound optional), else the named error
    ``argument.integer`` or ``argument.range`` naming ``field``."""
    if not is_integer(v):
        raise TmaDescriptorError("argument.integer", f"{field} must be an integer", v,
                                 "pass a Python int (or numpy integer); floats, strings, bytes, None and bools are "
                                 "not converted", f"{field} = {v!r} ({type(v).__name__})")
    v = int(v)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        span = f"{lo if lo is not None else '-inf'}..{hi if hi is not None else 'inf'}"
        raise TmaDescriptorError("argument.range", f"{field} must be in {span}", v, f"use a value in {span}",
                                 f"{field} = {v}")
    return v


def as_ints(vs, field: str) -> tuple[int, ...]:
    """A tuple of integers from a tuple/list (or other non-string sequence) of integers."""
    if isinstance(vs, (str, bytes, bytearray)) or not hasattr(vs, "__iter__"):
        raise TmaDescriptorError("argument.integer", f"{field} must be a sequence of integers", vs,
                                 "pass a tuple or list of ints", f"{field} = {vs!r} ({type(vs).__name__})")
    return tuple(as_int(v, f"{field}[{i}]") for i, v in enumerate(vs))
