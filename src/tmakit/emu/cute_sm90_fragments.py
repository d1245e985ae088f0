"""Register fragments of CuTe's SM90 GMMA for every thread of a CTA program (docs/EMULATOR.md, "CuTe's GMMA calls").

In CuTe each thread owns its ``tCrC = thr_mma.make_fragment_C(tCgC)`` (and, for ``_RS`` ops, its ``tCrA``); the
warpgroup's ``wgmma.mma_async`` writes the registers of all 128 threads at once. A CTA here is one Python program, so
``thread_fragments_C(tiled_mma, tCrC)`` holds the fragment of every thread of the tiled MMA: ``frags[t]`` is thread
``t``'s tensor, with the layout of the host fragment, over registers that live in the emulator's warpgroup registers
(one ``WarpgroupAccumulator`` per warpgroup and MMA-mode coordinate; ``FragmentA`` for A). Value ``v`` of an atom is
element ``v`` of the PTX register fragment (``GMMA::CLayout_64xN`` and ``ALayout_64xK`` are those layouts), and
thread ``t`` belongs to warpgroup ``t // 128``. Reads and writes go through the race and fence checks of the
registers, so reading ``frags[t]`` before the covering ``warpgroup_wait`` is reported.
"""

from __future__ import annotations

import numpy as np

from ..layout import Layout
from .device_wgmma import wgmma_accumulator, wgmma_fragment_a
from .errors import EmuError
from .wgmma_fragments import THREADS, a_fragment_coords, accumulator_coords
from .wgmma_types import TYPES

TYPE_NAMES = {"half_t": "f16", "bfloat16_t": "bf16", "tfloat32_t": "tf32", "float_e4m3_t": "e4m3",
              "float_e5m2_t": "e5m2", "float32": "f32"}


def type_name(t) -> str:
    """The PTX type of a CuTe element type (``half_t`` -> f16, ``float`` -> f32); EmuError for what wgmma lacks."""
    name = getattr(t, "name", None) or np.dtype(t).name
    if name not in TYPE_NAMES:
        raise EmuError(f"gemm: element type {name} is not modelled by the emulator's wgmma (half_t, bfloat16_t, "
                       "tfloat32_t, float_e4m3_t, float_e5m2_t in; half_t or float accumulators): integer (s8/u8 -> "
                       "s32) GMMA is not modelled; use a floating op such as SM90_64x64x16_F32BF16BF16_SS")
    return TYPE_NAMES[name]


def is_gmma(op) -> bool:
    """Whether ``op`` is an SM90 GMMA op of ``tmakit.mma`` (read by duck typing: its PTX is a wgmma)."""
    return str(getattr(op, "ptx", "")).startswith("wgmma.")


def _threads(tiled_mma) -> int:
    vmnk = getattr(tiled_mma, "get_thr_layout_vmnk", None)
    op = getattr(tiled_mma, "op", None)
    if vmnk is None or not is_gmma(op):
        raise EmuError(f"thread fragments: expected a TiledMMA of an SM90 GMMA op (tk.make_tiled_mma("
                       f"tk.SM90_64x64x16_F32BF16BF16_SS(...))); got {type(tiled_mma).__name__}")
    return int(vmnk().size())


class FragmentLayout(Layout):
    """The fragment's layout with its 1-D index -> register offsets tabulated (the same for every thread), so the
    element loops of ``clear`` / ``axpby`` over 128 threads do not evaluate the layout each time."""

    __slots__ = ("table",)

    def __init__(self, layout: Layout):
        super().__init__(layout.shape, layout.stride)
        self.table = {}

    def __call__(self, *coord):
        if len(coord) == 1 and type(coord[0]) is int and coord[0] in self.table:
            return self.table[coord[0]]
        return super().__call__(*coord)


class RegisterPtr:
    """The iterator of thread ``thread``'s fragment tensor: register ``offset`` of its ``ThreadFragments``."""

    __slots__ = ("regs", "thread", "offset")
    alignment_bits = 0

    def __init__(self, regs: ThreadFragments, thread: int, offset: int = 0):
        self.regs, self.thread, self.offset = regs, thread, int(offset)

    def __add__(self, n):
        return RegisterPtr(self.regs, self.thread, self.offset + int(n))

    @property
    def value_type(self):
        return self.regs.dtype

    @property
    def bits(self) -> int:
        return self.regs.dtype.itemsize * 8

    def deref(self, offset=0):
        return self.regs.read(self.thread, self.offset + int(offset))

    def store(self, offset, value) -> None:
        self.regs.write(self.thread, self.offset + int(offset), value)

    def __str__(self):
        return f"rmem[{self.regs.dtype}](thread {self.thread})+{self.offset}"

    __repr__ = __str__


class ThreadFragments:
    """One register fragment of every thread of a tiled MMA (see the module docstring): ``frags[t]`` is thread
    ``t``'s tensor; ``unit(warpgroup, j)`` the warpgroup registers of the ``j``-th atom (colexicographic over the
    modes after the first)."""

    def __init__(self, tiled_mma, frag, operand: str):
        self.threads, self.operand, op = _threads(tiled_mma), operand, tiled_mma.op
        it, lay = getattr(frag, "iterator", None), getattr(frag, "layout", None)
        if not hasattr(it, "array") or not isinstance(lay, Layout):
            raise EmuError(f"thread_fragments_{operand}: pass one thread's register fragment (thr_mma.make_fragment_"
                           f"{operand}(...) or partition_fragment_{operand}); got {frag!r}")
        self.dtype, self.layout = np.dtype(it.array.dtype), FragmentLayout(lay)
        if operand == "C":
            self.ptx_type, self.values = type_name(op.c_type), int(op.N) // 2
        else:
            self.ptx_type, self.values = type_name(op.a_type), int(op.K) // 2
        want = 4 if self.ptx_type == "f32" else TYPES[self.ptx_type].elem_bytes
        if self.dtype.itemsize != want:
            raise EmuError(f"thread_fragments_{operand}: registers of {self.dtype} for .{self.ptx_type} values; make "
                           f"the fragment with thr_mma.make_fragment_{operand} (its storage is {want}-byte)")
        self.slots, atoms = self._slots(operand)
        self.n = int(op.N)
        self.units = [[self._unit(w) for _ in range(atoms)] for w in range(self.threads // THREADS)]

    def _unit(self, warpgroup: int):
        if self.operand == "C":
            return wgmma_accumulator(self.n, self.ptx_type, warpgroup)
        return wgmma_fragment_a(self.ptx_type, warpgroup)

    def _slots(self, operand: str) -> tuple[dict, int]:
        lay, v = self.layout, self.values
        total = int(lay.size())
        first = int(lay[0].size()) if isinstance(lay.shape, tuple) else total
        if first != v or total % v:
            raise EmuError(f"thread_fragments_{operand}: mode 0 of {lay} holds {first} values; one GMMA atom gives "
                           f"each thread {v} (the fragment of another op? make it with this tiled_mma)")
        slots = {}
        for idx in range(total):
            r = int(lay(idx))
            if r in slots:
                raise EmuError(f"thread_fragments_{operand}: {lay} maps two values to register {r}; a fragment "
                               "owns its registers (make_fragment_like layouts are compact)")
            slots[r] = (idx // v, idx % v)
            lay.table[idx] = r
        return slots, total // v

    def __len__(self):
        return self.threads

    def __getitem__(self, thread):
        from ..layout.tensor import Tensor

        return Tensor(RegisterPtr(self, self._thread(thread)), self.layout)

    def _thread(self, t) -> int:
        if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or not 0 <= t < self.threads:
            raise EmuError(f"thread fragments: thread {t!r} must be 0..{self.threads - 1} (the tiled MMA's threads)")
        return int(t)

    def unit(self, warpgroup: int, j: int):
        return self.units[warpgroup][j]

    def locate(self, thread: int, reg: int):
        """(unit, row, col) of register ``reg`` of ``thread``."""
        if reg not in self.slots:
            raise EmuError(f"thread fragments: register {reg} is not part of {self.layout} (an offset past the "
                           "fragment); index the fragment within its shape")
        j, v = self.slots[reg]
        lane = thread % THREADS
        if self.operand == "C":
            rows, cols = accumulator_coords(self.n, lane)
        else:
            rows, cols = a_fragment_coords(self.ptx_type, lane)
        return self.units[thread // THREADS][j], int(rows[v]), int(cols[v])

    def read(self, thread: int, reg: int):
        unit, r, c = self.locate(thread, reg)
        if self.operand == "C":
            return unit[r, c]
        unit.access("reads")
        return unit.bits[r, c:c + 1].view(self.dtype)[0]

    def write(self, thread: int, reg: int, value) -> None:
        unit, r, c = self.locate(thread, reg)
        if self.operand == "C":
            unit[r, c] = value
            return
        unit.access("writes")
        unit.bits[r, c] = np.asarray(value, self.dtype).reshape(1).view(unit.bits.dtype)[0]

    def atom_unit(self, t) -> tuple[int, object]:
        """(warpgroup, registers) of one atom's sub-tensor ``t`` (e.g. ``tCrC(_, m, n)``) of a thread's fragment."""
        it = t.iterator
        if not isinstance(it, RegisterPtr) or it.regs is not self:
            raise EmuError("gemm: the fragment is not a thread's tensor of these thread fragments")
        regs = [it.offset + int(t.layout(v)) for v in range(int(t.layout.size()))]
        slots = [self.slots.get(r) for r in regs]
        if None in slots or len({s[0] for s in slots}) != 1 or [s[1] for s in slots] != list(range(self.values)):
            raise EmuError(f"gemm: {t} is not the {self.values} registers of one GMMA atom in value order; pass the "
                           f"fragment's (MMA, MMA_M, ...) modes as thr_mma.make_fragment_{self.operand} made them")
        return it.thread // THREADS, self.units[it.thread // THREADS][slots[0][0]]


def thread_fragments_C(tiled_mma, tCrC) -> ThreadFragments:  # noqa: N802 N803 - CuTe's names
    """Every thread's accumulator fragment of ``tiled_mma``, laid out as ``tCrC`` (one thread's
    ``thr_mma.make_fragment_C(tCgC)``), held in the warpgroups' ``wgmma`` accumulators (uninitialized: NaN)."""
    return ThreadFragments(tiled_mma, tCrC, "C")


def thread_fragments_A(tiled_mma, tCrA) -> ThreadFragments:  # noqa: N802 N803
    """Every thread's A fragment of an ``_RS`` ``tiled_mma``, laid out as ``tCrA`` (one thread's
    ``thr_mma.partition_fragment_A(...)``), held in the warpgroups' ``wgmma`` A registers."""
    _threads(tiled_mma)
    if not tiled_mma.op.rs:
        raise EmuError(f"thread_fragments_A: {tiled_mma.op} reads A from shared memory (an _SS op); A registers "
                       "exist for _RS ops only (e.g. SM90_64x64x16_F32BF16BF16_RS)")
    return ThreadFragments(tiled_mma, tCrA, "A")
