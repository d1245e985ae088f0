"""The register operands of ``wgmma.mma_async`` as objects: a warpgroup's 64 x N accumulator D and its 64 x K
A fragment (RS form), with the whole-matrix view and the per-thread register view (``wgmma_fragments``).

Every program access goes through the race and fence checks of ``wgmma_state.Registers``; the MMAs write and read
the private arrays directly. Registers start uninitialized: the emulator fills accumulators with NaN, so a first
MMA that accumulates (scale-d = 1) instead of overwriting shows in the result.
"""

from __future__ import annotations

import numpy as np

from .errors import IllegalInstruction
from .wgmma_fragments import a_fragment_coords, accumulator_coords, pack_registers, unpack_registers
from .wgmma_state import Registers
from .wgmma_types import TYPES, check_n

ACC_DTYPES = {"f32": np.float32, "f16": np.float16}


class WarpgroupAccumulator(Registers):
    """D of one warpgroup: ``read()`` / ``write(v)`` / ``fill(v)`` / ``acc[i, j]`` on the 64 x N matrix,
    ``fragment(t)`` / ``set_fragment(t, regs)`` on thread ``t``'s registers (f32: N/2 float32; f16: N/4 uint32 each
    packing two halves), ``thread_values(t)`` the thread's N/2 elements as float32."""

    kind = "accumulator"

    def __init__(self, state, n: int, dtype: str = "f32"):
        super().__init__(state)
        if dtype not in ACC_DTYPES:
            raise IllegalInstruction(f"wgmma accumulator type .{dtype}: .f32 or .f16")
        self.n, self.dtype = check_n(n, "wgmma accumulator"), dtype
        self.values = np.full((64, self.n), np.nan, ACC_DTYPES[dtype])  # the MMAs' view (no checks)

    @property
    def warpgroup(self) -> int:
        return self.state.warpgroup

    def read(self) -> np.ndarray:
        self.access("reads")
        return self.values.copy()

    def write(self, values) -> None:
        self.access("writes")
        self.values[...] = values

    def fill(self, value) -> None:
        self.write(value)

    def __getitem__(self, key):
        self.access("reads")
        return self.values[key].copy()

    def __setitem__(self, key, value):
        self.access("writes")
        self.values[key] = value

    def fragment(self, thread: int) -> np.ndarray:
        self.access("reads")
        v = self.values[accumulator_coords(self.n, thread)]
        return v if self.dtype == "f32" else pack_registers(v.view(np.uint16), 2)

    def thread_values(self, thread: int) -> np.ndarray:
        self.access("reads")
        return self.values[accumulator_coords(self.n, thread)].astype(np.float32)

    def set_fragment(self, thread: int, regs) -> None:
        self.access("writes")
        rows, cols = accumulator_coords(self.n, thread)
        regs = np.asarray(regs)
        if self.dtype == "f16":
            regs = unpack_registers(regs.astype(np.uint32) if regs.dtype != np.uint32 else regs, 2).view(np.float16)
        if regs.size != rows.size:
            raise IllegalInstruction(f"wgmma accumulator m64n{self.n}.{self.dtype}: thread {thread} holds "
                                     f"{rows.size} elements, got {regs.size} values")
        self.values[rows, cols] = regs.reshape(-1)

    def __repr__(self):
        return f"WarpgroupAccumulator(m64n{self.n}.{self.dtype}, {self.state.label})"


class FragmentA(Registers):
    """A of the RS form for one warpgroup: 64 x K elements of ``atype`` (K = 16 f16/bf16, 8 tf32, 32 fp8), 4
    registers per thread. ``load(m)`` takes the 64 x K element bits (or float16 / float32 values of an f16 / tf32
    fragment); ``thread(t)`` / ``set_thread(t, regs)`` are thread ``t``'s 4 uint32 registers; ``matrix()``."""

    kind = "A-fragment registers"

    def __init__(self, state, atype: str):
        super().__init__(state)
        if atype not in TYPES:
            raise IllegalInstruction(f"wgmma A fragment type .{atype}: one of {', '.join(TYPES)}")
        self.atype = TYPES[atype]
        self.bits = np.zeros((64, self.atype.k), self.atype.storage)  # the MMAs' view (no checks)

    def load(self, m) -> None:
        m = np.asarray(m)
        if m.dtype.kind == "f" and m.dtype.itemsize == self.atype.elem_bytes:
            m = m.view(self.atype.storage)
        if m.shape != self.bits.shape or m.dtype != self.atype.storage:
            raise IllegalInstruction(f"wgmma A fragment .{self.atype.name}: load a {self.bits.shape} array of "
                                     f"{self.atype.storage} bits, got {m.shape} {m.dtype}")
        self.access("writes")
        self.bits[...] = m

    def matrix(self) -> np.ndarray:
        self.access("reads")
        return self.bits.copy()

    def thread(self, t: int) -> np.ndarray:
        self.access("reads")
        return pack_registers(self.bits[a_fragment_coords(self.atype.name, t)], self.atype.elem_bytes)

    def set_thread(self, t: int, regs) -> None:
        regs = np.asarray(regs, dtype=np.uint32).reshape(-1)
        if regs.size != 4:
            raise IllegalInstruction(f"wgmma A fragment: thread {t} holds 4 registers, got {regs.size}")
        rows, cols = a_fragment_coords(self.atype.name, t)
        self.access("writes")
        self.bits[rows, cols] = unpack_registers(regs, self.atype.elem_bytes)

    def __repr__(self):
        return f"FragmentA(.{self.atype.name}, {self.state.label})"
