"""Register fragments of ``wgmma.mma_async`` (PTX ISA, "Register Fragments" of the warpgroup MMA): which element of
the 64 x N accumulator D, or of the 64 x K matrix A (the RS form), each thread of the warpgroup holds in each register.

Thread ``t`` (0..127 of its warpgroup) is lane ``t % 32`` of warp ``w = t // 32``; warp ``w`` owns rows
``16w .. 16w+15``; ``g = (t % 32) // 4`` and ``c = t % 4``.

* D, element ``i`` (0..N/2-1): row ``16w + g + 8*((i//2) % 2)``, column ``8*(i//4) + 2c + i%2``. An f32
  accumulator holds element ``i`` in register ``i``; an f16 one packs elements ``2j, 2j+1`` into register ``j``
  (the lower index in the low half).
* A, f16/bf16 (k16), element ``e`` of 8: row ``16w + g + 8*((e//2) % 2)``, column ``2c + e%2 + 8*(e//4)``, two per
  32-bit register.
* A, tf32 (k8), element ``e`` of 4: row ``16w + g + 8*(e%2)``, column ``c + 4*(e//2)``, one per register.
* A, e4m3/e5m2 (k32), element ``e`` of 16: row ``16w + g + 8*((e//4) % 2)``, column ``4c + e%4 + 16*(e//8)``, four
  per register.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .errors import IllegalInstruction
from .wgmma_types import TYPES

THREADS = 128


def _thread(t, what: str) -> int:
    if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or not 0 <= t < THREADS:
        raise IllegalInstruction(f"{what}: thread {t!r} must be 0..127 (the thread's index in its warpgroup)")
    return int(t)


@lru_cache(maxsize=1024)
def accumulator_coords(n: int, thread: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) of the N/2 accumulator elements thread ``thread`` holds, in element order."""
    t = _thread(thread, "wgmma accumulator fragment")
    i = np.arange(n // 2)
    rows = 16 * (t // 32) + (t % 32) // 4 + 8 * ((i // 2) % 2)
    cols = 8 * (i // 4) + 2 * (t % 4) + i % 2
    rows.flags.writeable = cols.flags.writeable = False
    return rows, cols


@lru_cache(maxsize=512)
def a_fragment_coords(atype: str, thread: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) of the A elements thread ``thread`` holds (RS form), in element order (4 registers)."""
    t = _thread(thread, "wgmma A fragment")
    w, g, c = t // 32, (t % 32) // 4, t % 4
    per = 4 // TYPES[atype].elem_bytes  # elements per 32-bit register
    e = np.arange(4 * per)
    if per == 2:
        rows, cols = g + 8 * ((e // 2) % 2), 2 * c + e % 2 + 8 * (e // 4)
    elif per == 1:
        rows, cols = g + 8 * (e % 2), c + 4 * (e // 2)
    else:
        rows, cols = g + 8 * ((e // 4) % 2), 4 * c + e % 4 + 16 * (e // 8)
    rows = 16 * w + rows
    rows.flags.writeable = cols.flags.writeable = False
    return rows, cols


def pack_registers(elements: np.ndarray, elem_bytes: int) -> np.ndarray:
    """Elements (unsigned, little endian) packed into 32-bit registers."""
    return np.ascontiguousarray(elements).view(np.uint32) if elem_bytes < 4 else elements.astype(np.uint32)


def unpack_registers(regs: np.ndarray, elem_bytes: int) -> np.ndarray:
    dt = {1: np.uint8, 2: np.uint16, 4: np.uint32}[elem_bytes]
    return np.ascontiguousarray(regs, dtype=np.uint32).view(dt)
