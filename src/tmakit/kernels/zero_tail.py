"""Host side of ``zero_tail.cu``: zero a matrix's rows past an end row that only the device knows (the last entry of
a group-offset tensor), so the gradients of ``tk.ops.grouped_mm`` are zero past the last group without a host
synchronisation."""

from __future__ import annotations

import ctypes

from .gemm import compiled, launch_fn

__all__ = ["zero_rows_past_end", "ROWS_PER_CTA"]

ROWS_PER_CTA = 32  # rows each CTA of the launch checks and zeroes (the kernel takes rows / grid)

_launchers: dict = {}


def zero_rows_past_end(ptr: int, pitch_bytes: int, rows: int, row_bytes: int, offs_ptr: int, last: int) -> None:
    """Zero rows [end, rows) of the matrix at ``ptr`` (``rows`` rows of ``row_bytes`` bytes, ``pitch_bytes`` apart),
    end = ``offs[last]`` of the int32 array at ``offs_ptr``, read by the kernel and clamped to [0, rows]; on the
    current stream."""
    if rows <= 0 or row_bytes <= 0:
        return
    key = (ptr, pitch_bytes, rows, row_bytes, offs_ptr, last)
    fn = _launchers.get(key)
    if fn is None:
        args = (ctypes.c_uint64(ptr), ctypes.c_int64(pitch_bytes), ctypes.c_int32(rows), ctypes.c_int32(row_bytes),
                ctypes.c_uint64(offs_ptr), ctypes.c_int32(last))
        fn = launch_fn(compiled("zero_tail.cu", "tmakit_zero_tail"), -(-rows // ROWS_PER_CTA), 256, args, 0, 1, False)
        if len(_launchers) >= 256:
            _launchers.clear()
        _launchers[key] = fn
    fn()
