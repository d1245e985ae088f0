"""Tensor memory (TMEM) of one CTA: 128 lanes x 512 columns of 32-bit cells, and its column allocator.

A TMEM address is ``lane << 16 | column``. ``tcgen05.alloc`` hands out a power-of-two number (32..512) of whole
columns, all 128 lanes; the emulator places an allocation at the lowest free column that is a multiple of its size
(deterministic; the hardware's choice is not specified). ``tcgen05.alloc`` blocks until the columns are free, so an
allocation that cannot ever fit is a hang (``Deadlock``). Every allocation must be freed before the CTA exits.
Allocation does not clear the cells; the emulator fills them with an fp32 NaN so that a first MMA which
accumulates (instead of overwriting) shows in the result.

``writer`` remembers, per cell, the asynchronous ``tcgen05.mma`` that last wrote it: reading a cell before that MMA's
``tcgen05.commit`` arrived on an mbarrier this CTA has waited for is a race (``device_tcgen05``).
"""

from __future__ import annotations

import numpy as np

from .errors import Deadlock, IllegalInstruction

LANES = 128
COLUMNS = 512
LANES_PER_WARP = 32
UNINITIALIZED = np.uint32(0x7FC00000)  # tcgen05.alloc does not clear TMEM: new columns read as fp32 NaN here


def tmem_address(lane: int, column: int) -> int:
    """The 32-bit TMEM address of (lane, column)."""
    return (int(lane) << 16) | int(column)


def split_address(addr: int) -> tuple[int, int]:
    """(lane, column) of a TMEM address."""
    addr = int(addr)
    return (addr >> 16) & 0xFFFF, addr & 0xFFFF


def warp_lanes(warp: int) -> range:
    """The lanes a warp may access: warp ``w`` reaches lanes ``32*(w % 4)`` .. ``+31`` (its sub-partition)."""
    q = int(warp) % 4
    return range(LANES_PER_WARP * q, LANES_PER_WARP * (q + 1))


class TensorMemory:
    """One CTA's TMEM: ``cells`` (uint32, lanes x columns), allocations and the MMA that last wrote each cell."""

    def __init__(self, label: str):
        self.label = label
        self.cells = np.zeros((LANES, COLUMNS), np.uint32)
        self.writer = np.zeros((LANES, COLUMNS), np.int64)  # id of the last tcgen05.mma writing the cell, 0: none
        self.allocs: dict[int, tuple[int, int]] = {}  # first column -> (columns, cta_group)
        self.relinquished = False
        self.cta_group: int | None = None  # of the first allocation; every tcgen05 op of the kernel must agree
        self.ops: dict[int, object] = {}  # MMA id -> the MmaOp (for diagnostics)

    # --- tcgen05.alloc / dealloc / relinquish_alloc_permit ---
    def allocate(self, ncols: int, cta_group: int, what: str) -> int:
        """First column of a new allocation of ``ncols`` columns (``tcgen05.alloc``)."""
        ncols = int(ncols)
        if ncols < 32 or ncols > COLUMNS or ncols & (ncols - 1):
            raise IllegalInstruction(f"{what} in {self.label}: {ncols} columns; tcgen05.alloc takes a power of two "
                                     "from 32 to 512 (round the request up, e.g. to 32 * 2^k)")
        if self.relinquished:
            raise IllegalInstruction(f"{what} in {self.label} after tcgen05.relinquish_alloc_permit: a CTA that gave "
                                     "up its permit may not allocate again (allocate everything before "
                                     "release_allocation_lock())")
        self.check_group(cta_group, what)
        used = np.zeros(COLUMNS, bool)
        for start, (n, _) in self.allocs.items():
            used[start:start + n] = True
        for start in range(0, COLUMNS, ncols):
            if not used[start:start + ncols].any():
                self.allocs[start] = (ncols, cta_group)
                self.cells[:, start:start + ncols] = UNINITIALIZED
                self.writer[:, start:start + ncols] = 0
                return start
        held = sum(n for n, _ in self.allocs.values())
        raise Deadlock(f"{what} in {self.label}: {ncols} columns requested while this CTA holds {held} of "
                       f"{COLUMNS} ({self.describe_allocs()}); tcgen05.alloc blocks until columns are freed, so "
                       "this kernel would hang: free (tcgen05.dealloc) earlier allocations first or ask for fewer")

    def free(self, addr: int, ncols: int, cta_group: int, what: str) -> None:
        """``tcgen05.dealloc`` of the allocation starting at TMEM address ``addr``."""
        lane, col = split_address(addr)
        got = self.allocs.get(col)
        if lane != 0 or got is None:
            raise IllegalInstruction(f"{what} in {self.label}: TMEM address {int(addr):#x} (lane {lane}, column "
                                     f"{col}) is not the start of a live allocation ({self.describe_allocs()}): "
                                     "double free, or a pointer that tcgen05.alloc did not return")
        if got[0] != int(ncols):
            raise IllegalInstruction(f"{what} in {self.label}: frees {ncols} columns at column {col}, but {got[0]} "
                                     "were allocated there: pass the allocation's own column count")
        if got[1] != cta_group:
            raise IllegalInstruction(f"{what} in {self.label}: cta_group::{cta_group} dealloc of a "
                                     f"cta_group::{got[1]} allocation: use the same allocator for both")
        del self.allocs[col]

    def relinquish(self) -> None:
        self.relinquished = True

    def check_group(self, cta_group: int, what: str) -> None:
        if self.cta_group is None:
            self.cta_group = cta_group
        elif self.cta_group != cta_group:
            raise IllegalInstruction(f"{what} in {self.label}: cta_group::{cta_group}, but this kernel already used "
                                     f"cta_group::{self.cta_group}; all tcgen05 instructions of a kernel must use "
                                     "the same cta_group (Allocator1Sm with 1-SM MMAs, Allocator2Sm with 2x1SM)")

    def describe_allocs(self) -> str:
        if not self.allocs:
            return "nothing allocated"
        return ", ".join(f"columns {s}..{s + n - 1}" for s, (n, _) in sorted(self.allocs.items()))

    # --- access checks ---
    def check_allocated(self, lanes, col0: int, ncols: int, what: str) -> None:
        """Every column in ``[col0, col0 + ncols)`` must be allocated (all lanes come with a column)."""
        lanes = np.asarray(lanes)
        if lanes.size and (lanes.min() < 0 or lanes.max() >= LANES):
            raise IllegalInstruction(f"{what} in {self.label}: lanes {int(lanes.min())}..{int(lanes.max())} "
                                     f"outside TMEM's {LANES} lanes")
        for c in range(int(col0), int(col0) + int(ncols)):
            if not any(s <= c < s + n for s, (n, _) in self.allocs.items()):
                if not self.allocs:
                    fix = ("nothing is allocated: call tmem_allocator.allocate(...) (tcgen05.alloc) and read the "
                           "address it writes to shared memory before using TMEM")
                else:
                    fix = f"allocated: {self.describe_allocs()}"
                raise IllegalInstruction(f"{what} in {self.label}: TMEM column {c} is not allocated; {fix}")

    def leak_message(self) -> str:
        return (f"{self.label} exited with TMEM still allocated ({self.describe_allocs()}): call "
                "tmem_allocator.free(ptr, columns) (tcgen05.dealloc) before the kernel ends, and "
                "release_allocation_lock() (tcgen05.relinquish_alloc_permit)")


def tmem_of(cta) -> TensorMemory:
    """The TMEM of ``cta`` (created on first use)."""
    t = getattr(cta, "tmem", None)
    if t is None:
        t = cta.tmem = TensorMemory(cta.label)
    return t
