"""``copy`` with CuTe's SM80 cp.async atoms (``SM80_CP_ASYNC_CACHEALWAYS<S, D>`` = ``cp.async.ca.shared.global``,
``SM80_CP_ASYNC_CACHEGLOBAL<S, D>`` = ``cp.async.cg``) and CuTe's group calls ``cp_async_fence`` /
``cp_async_wait<N>`` / ``cp_async_wait_all`` (cute/arch/copy_sm80.hpp).

cp.async is a per-thread instruction, so the call takes one thread's partitions as CuTe code does:
``copy(tiled_copy | thr_copy | atom, thr.partition_S(gA), thr.partition_D(sA))``, the program looping over the
threads (a list of every thread's tensors, as ldmatrix takes, is accepted too). Atom call ``k`` (CuTe's loop over the
modes after the first) is one ``cp.async`` of the atom's 4, 8 or 16 bytes: its source values must be that many
contiguous global bytes, its destination values as many contiguous shared bytes, each aligned to the size, else
``IllegalInstruction`` (``.cg`` only moves 16 bytes).

The model: the bytes are read from global memory and land in shared memory at a scheduling point (as TMA loads do).
The CTA's program stands for all its threads, so the groups are CTA-wide: ``cp_async_fence()``
(``cp.async.commit_group``) closes the copies issued since the last one into a group; ``cp_async_wait(n)``
(``cp.async.wait_group n``) parks until at most the ``n`` newest groups are pending. As in CuTe,
``cp_async_wait(0)`` is ``cp.async.wait_all`` (commit, then wait for all) and ``cp_async_wait_all()`` is the same.

Races: until the wait that covers a copy, an access to its destination bytes through a shared pointer or tensor
(``SmemPtr`` reads and writes, ldmatrix rows; a ``SmemPtr.view`` at its last byte) is a ``RaceError`` (a warning
when not strict), reported once per wait; a CTA that exits with a copy still in flight is an ``ExitError``. The
landed bytes count as generic-proxy writes (fence before a TMA store reads them). Counted as ``cp_async`` (one per
instruction) in the launch statistics.
"""

from __future__ import annotations

import numpy as np

from ..layout import size
from ..tma.gmem import GmemPtr
from .checks import as_int
from .device_sync import block_until
from .errors import EmuError, ExitError, IllegalAddress, IllegalInstruction, RaceError
from .scheduler import current_cta
from .smem_ptr import SmemPtr

_ALIVE = ("new", "running", "blocked")


def is_cp_async(kind) -> bool:
    """Whether a general copy op's ``kind`` is cp.async."""
    return kind == "cp_async"


class _Copy:
    """One ``cp.async`` in flight: ``nbytes`` global bytes (a numpy view) to shared ``addr``."""

    def __init__(self, state, name, gbytes, gaddr: int, addr: int):
        self.state, self.gbytes, self.addr, self.nbytes = state, gbytes, addr, gbytes.size
        self.what = f"cp.async ({name}) of {self.nbytes} bytes from global {gaddr:#x} to shared {addr:#x}"
        self.group = None  # index of its commit group, None while uncommitted
        self.done = False

    def deliver(self, cluster) -> None:
        cta, end = self.state.cta, self.addr + self.nbytes
        self.done = True
        if cta.state not in _ALIVE:
            self.state.drop()
            cluster.launch.report(ExitError(f"{cta.label} exited with {self.what} in flight: cp_async_wait<0>() "
                                            "before the kernel ends"))
            return
        smem = cta.smem
        smem.data[self.addr:end] = self.gbytes
        smem.written[self.addr:end] = True  # cp.async writes through the generic proxy
        type(smem).touch(smem, end)


class CpAsyncState:
    """A CTA's cp.async copies: the open ones, committed groups (oldest first), destination bytes not yet waited
    for; while any are, the CTA's shared memory watches accesses (an instance ``touch`` hook)."""

    def __init__(self, cta):
        self.cta = cta
        self.open: list[_Copy] = []
        self.groups: list[list[_Copy]] = []
        self.committed = 0
        self.pending: dict[int, _Copy] = {}  # shared byte -> the newest copy writing it, not yet waited for
        self.reported = False

    def add(self, op: _Copy) -> None:
        self.open.append(op)
        for a in range(op.addr, op.addr + op.nbytes):
            self.pending[a] = op
        smem = self.cta.smem
        if "touch" not in vars(smem):
            base = type(smem).touch

            def touch(end, smem=smem):
                self.check(int(end) - 1)
                base(smem, end)

            smem.touch = touch

    def commit(self) -> None:
        for op in self.open:
            op.group = self.committed
        self.groups.append(self.open)
        self.open = []
        self.committed += 1

    def retire(self, ops) -> None:
        for op in ops:
            for a in range(op.addr, op.addr + op.nbytes):
                if self.pending.get(a) is op:
                    del self.pending[a]
        self.reported = False
        if not self.pending:
            self.drop()

    def drop(self) -> None:
        """Stop watching (nothing pending, or the CTA is gone)."""
        vars(self.cta.smem).pop("touch", None)
        self.pending.clear()

    def check(self, byte: int) -> None:
        op = self.pending.get(byte)
        if op is None or self.reported:
            return
        if self.cta.state not in _ALIVE:
            self.drop()
            return
        self.reported = True
        if op.group is None:
            why = "no cp_async_fence() has committed it yet (cp_async_fence(), then cp_async_wait(n))"
        else:
            newer = self.committed - op.group - 1
            why = (f"its group #{op.group} has not been waited for: call cp_async_wait(n) with n <= {newer} (the "
                   "groups committed after it) first")
        self.cta.cluster.launch.report(RaceError(
            f"{op.what} from {self.cta.label}: shared byte {byte:#x} of its destination was accessed before the "
            f"cp.async.wait_group that covers the copy; {why}"))


def _state(cta) -> CpAsyncState:
    st = getattr(cta, "cp_async_state", None)
    if st is None:
        st = cta.cp_async_state = CpAsyncState(cta)
    return st


def _offsets(t, n: int, e: int, side: str, name: str) -> int:
    """Element offset of value 0 of ``t``, checked to be ``n`` contiguous elements (CuTe's recast to the unit)."""
    offs = [int(t.layout(i)) for i in range(n)]
    if offs != list(range(offs[0], offs[0] + n)):
        raise EmuError(f"{name}: the {side} values of one atom call are not {n * e} contiguous bytes (element offsets "
                       f"{offs}); the layout must keep one cp.async unit together (CuTe's recast fails)")
    return offs[0]


def _global(cta, t, n: int, name: str):
    """(byte address, numpy byte view) of one atom call's global source."""
    it = t.iterator
    if isinstance(it, GmemPtr):
        e = it.bits // 8
        addr = it.address + _offsets(t, n, e, "source", name) * e
        mem = cta.cluster.launch.memory.resolve(addr)
        if mem.size < n * e:
            raise IllegalAddress(f"{name}: {n * e} bytes from global {addr:#x} run past the registered buffer")
        return addr, e, mem[:n * e]
    arr = getattr(it, "array", None)
    if not isinstance(arr, np.ndarray) or isinstance(it, SmemPtr):
        raise EmuError(f"{name}: the source must be a global tensor (make_tensor of a numpy array or of "
                       f"make_gmem_ptr), partitioned with partition_S; got {it!r} (cp.async moves global -> shared)")
    e = arr.itemsize
    i = it.offset + _offsets(t, n, e, "source", name)
    if i < 0 or i + n > arr.size:
        raise IllegalAddress(f"{name}: source elements [{i}, {i + n}) lie outside the {arr.size}-element array")
    return int(arr.ctypes.data) + i * e, e, arr[i:i + n].view(np.uint8)


def _issue(st, name: str, unit: int, s, d, n: int) -> None:
    cta = st.cta
    gaddr, ge, gbytes = _global(cta, s, n, name)
    it = d.iterator
    if not isinstance(it, SmemPtr) or it.smem is not cta.smem:
        raise EmuError(f"{name}: the destination must be the executing CTA's shared memory (partition_D of a tensor "
                       f"over emu.shared_tensor / make_smem_ptr); got {it!r}")
    se = it.dtype.itemsize
    if ge * n != unit or se * n != unit:
        raise EmuError(f"{name}: one atom call moves {unit} bytes but the tensors give {n} values of {ge} (source) "
                       f"and {se} (destination) bytes; make the tensors of the Copy_Atom's value type")
    saddr = it.address + _offsets(d, n, se, "destination", name) * se
    for space, a in (("global source", gaddr), ("shared destination", saddr)):
        if a % unit:
            raise IllegalInstruction(f"cp.async.{'cg' if 'GLOBAL' in name else 'ca'}.shared.global [{saddr:#x}], "
                                     f"[{gaddr:#x}], {unit}: the {space} address {a:#x} is not {unit}-byte aligned "
                                     f"({a % unit} bytes past); cp.async needs both addresses aligned to the copy "
                                     f"size: align the buffer and the tile's offsets, or use a smaller atom")
    cta.smem.check(saddr, unit, f"{name} destination", it.alloc)
    op = _Copy(st, name, gbytes, gaddr, saddr)
    st.add(op)
    cta.cluster.issue(op)


def _seq(x) -> list:
    return [x] if hasattr(x, "layout") else list(x)


def cp_async_copy(atom, src, dst, split) -> None:
    """``copy(atom, src, dst)`` for a cp.async atom (see the module docstring); ``split(src, dst, n)`` yields the
    (src, dst) sub-tensors of each atom call."""
    holder = getattr(atom, "tiled_copy", atom)
    name = holder.op.name
    unit = int(size(holder.op.src_layout, 1)) // 8
    if "CACHEGLOBAL" in name and unit != 16:
        raise IllegalInstruction(f"{name}: cp.async.cg moves 16 bytes only, the atom moves {unit}; use "
                                 "SM80_CP_ASYNC_CACHEALWAYS for 4 or 8 bytes")
    srcs, dsts = _seq(src), _seq(dst)
    if len(srcs) != len(dsts):
        raise EmuError(f"copy({name}): {len(srcs)} source and {len(dsts)} destination tensors; give one of each "
                       "per thread")
    cta = current_cta()
    st, n = _state(cta), int(holder.NumValSrc)
    stats = cta.cluster.launch.stats
    for s, d in zip(srcs, dsts):
        for a, b in split(s, d, n):
            _issue(st, name, unit, a, b, n)
            stats["cp_async"] = stats.get("cp_async", 0) + 1


def cp_async_fence() -> None:
    """CuTe's ``cp_async_fence()`` = ``cp.async.commit_group``: the copies issued since the last one form a group
    (possibly empty)."""
    _state(current_cta()).commit()


def cp_async_wait(n: int = 0) -> None:
    """CuTe's ``cp_async_wait<N>()``: ``cp.async.wait_group N`` (at most the ``N`` newest groups stay pending);
    ``N = 0`` is ``cp.async.wait_all``, which commits the open copies first."""
    cta = current_cta()
    n = as_int(n, "cp_async_wait count", 0, None, IllegalInstruction)
    st = _state(cta)
    if n == 0:
        st.commit()
    old = st.groups[:max(0, len(st.groups) - n)]
    block_until(cta, lambda: all(op.done for g in old for op in g),
                lambda: f"cp_async_wait({n}): waiting for cp.async copies to land")
    del st.groups[:len(old)]
    st.retire([op for g in old for op in g])


def cp_async_wait_all() -> None:
    """``cp.async.wait_all``: commit the open copies, wait for every group."""
    cp_async_wait(0)
