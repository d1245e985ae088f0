"""Blackwell's tcgen05 instructions inside an emulated kernel (raw level: TMEM addresses and UMMA descriptors).

* ``tmem_alloc(dst, ncols, cta_group)``: ``tcgen05.alloc.cta_group::{1,2}.sync.aligned.shared::cta.b32``
* ``tmem_dealloc(taddr, ncols, cta_group)``: ``tcgen05.dealloc.cta_group::{1,2}.sync.aligned.b32``
* ``tmem_relinquish_alloc_permit(cta_group)``: ``tcgen05.relinquish_alloc_permit.cta_group::{1,2}.sync.aligned``
* ``umma(kind, d, a, b_desc, idesc, accumulate, cta_group)``: ``tcgen05.mma.cta_group::{1,2}.kind::{f16,tf32}``
  (A: a shared-memory descriptor, or ``("tmem", taddr)`` for the _TS forms)
* ``umma_commit(bar, mask=None, cta_group=1)``:
  ``tcgen05.commit.cta_group::{1,2}.mbarrier::arrive::one.shared::cluster{.multicast::cluster}.b64``
* ``tmem_load(taddr, shape, num, thread)`` / ``tmem_store(...)``:
  ``tcgen05.ld/st.sync.aligned.{32x32b,16x64b,16x128b,16x256b}.x{num}.b32``
* ``tmem_wait_ld()``, ``tmem_wait_st()``: ``tcgen05.wait::ld/st.sync.aligned`` (no-ops: they complete at once)
* ``tmem_fence_before_thread_sync()``, ``tmem_fence_after_thread_sync()``: ``tcgen05.fence::*_thread_sync``
  (no-ops: one thread per CTA)

The CTA is one thread of the emulator, so a warp-wide instruction names the thread it models (``thread``, 0..): its
warp is ``thread // 32`` and it may reach only TMEM lanes ``32*(warp % 4)`` .. ``+31``.
"""

from __future__ import annotations

import numpy as np

from .device_smem import barrier_address, smem_address
from .errors import IllegalInstruction, RaceError
from .scheduler import current_cta
from .tmem import split_address, tmem_address, tmem_of, warp_lanes
from .umma import CommitOp, MmaOp, check_observed, check_shape_vs_tmem
from .umma_desc import A_FORMATS, check_shape, check_smem_desc, decode_instr_desc, decode_smem_desc

# --- tcgen05.alloc / dealloc / relinquish_alloc_permit ---


def _pair(cta, what: str):
    """The CTA pair (even rank first) of a cta_group::2 instruction, checked."""
    n = cta.cluster.size
    lead = cta.rank & ~1
    if lead + 1 >= n:
        raise IllegalInstruction(f"{what} in {cta.label}: cta_group::2 needs a peer CTA (rank {lead + 1}) in the "
                                 f"cluster of {n}: launch with an even cluster size along the pair (V) mode")
    return cta.cluster.ctas[lead], cta.cluster.ctas[lead + 1]


def tmem_alloc(dst, ncols: int, cta_group: int = 1) -> int:
    """``tcgen05.alloc``: allocate ``ncols`` TMEM columns and write the address to the shared ``uint32`` at ``dst``.

    With ``cta_group=2`` each CTA of the pair issues it and gets the same columns in its own TMEM."""
    cta = current_cta()
    what = f"tcgen05.alloc.cta_group::{cta_group}"
    if cta_group == 2:
        _pair(cta, what)
    addr = smem_address(cta, dst)
    if addr % 4:
        raise IllegalInstruction(f"{what} in {cta.label}: destination {addr:#x} must be a 4-byte aligned shared "
                                 "address")
    col = tmem_of(cta).allocate(ncols, cta_group, what)
    taddr = tmem_address(0, col)
    cta.smem.data[addr:addr + 4] = np.array([taddr], np.uint32).view(np.uint8)
    cta.smem.touch(addr + 4)
    return taddr


def tmem_dealloc(taddr: int, ncols: int, cta_group: int = 1) -> None:
    """``tcgen05.dealloc``: free the allocation at ``taddr``."""
    cta = current_cta()
    tmem_of(cta).free(taddr, ncols, cta_group, f"tcgen05.dealloc.cta_group::{cta_group}")


def tmem_relinquish_alloc_permit(cta_group: int = 1) -> None:
    """``tcgen05.relinquish_alloc_permit``: this CTA will not allocate again."""
    tmem_of(current_cta()).relinquish()


class Allocator1Sm:
    """CuTe's ``TMEM::Allocator1Sm``: ``allocate(num_columns, dst_ptr)``, ``free(tmem_ptr, num_columns)``,
    ``release_allocation_lock()``."""

    ColumnsPerAllocationSlice = 32
    Sm100TmemCapacityColumns = 512
    cta_group = 1

    def allocate(self, num_columns: int, dst_ptr) -> None:
        tmem_alloc(dst_ptr, num_columns, self.cta_group)

    def free(self, tmem_ptr: int, num_columns: int) -> None:
        tmem_dealloc(tmem_ptr, num_columns, self.cta_group)

    def release_allocation_lock(self) -> None:
        tmem_relinquish_alloc_permit(self.cta_group)


class Allocator2Sm(Allocator1Sm):
    """CuTe's ``TMEM::Allocator2Sm`` (``cta_group::2``): both CTAs of the pair call it with the same arguments."""

    cta_group = 2


# --- tcgen05.mma / commit ---


def _pending(cta) -> list:
    p = getattr(cta, "tcgen05_uncommitted", None)
    if p is None:
        p = cta.tcgen05_uncommitted = []
    return p


def umma(kind: str, d_tmem: int, a, b_desc: int, idesc: int, accumulate: bool, cta_group: int = 1) -> None:
    """``tcgen05.mma.cta_group::{cta_group}.kind::{kind} [d_tmem], a, b_desc, idesc, enable_input_d``.

    ``a`` is a shared-memory descriptor (SS) or ``("tmem", taddr)`` (TS, A in TMEM); ``idesc`` the 32-bit
    instruction descriptor (the upper half of CuTe's ``idescE``). Runs at the next scheduling point."""
    cta = current_cta()
    what = f"tcgen05.mma.cta_group::{cta_group}.kind::{kind}"
    if kind not in A_FORMATS:
        raise IllegalInstruction(f"{what}: the emulator models kind::f16 and kind::tf32")
    idesc = decode_instr_desc(idesc)
    fmts = A_FORMATS[kind]
    if idesc.c_format != 1 or idesc.a_format not in fmts or idesc.b_format not in fmts or idesc.sparse:
        raise IllegalInstruction(f"{what} in {cta.label}: instruction descriptor {idesc} is not a dense "
                                 f"kind::{kind} MMA with an F32 accumulator (c_format 1, a/b formats {fmts})")
    ts = isinstance(a, tuple)
    check_shape(idesc.m, idesc.n, cta_group, ts, what)
    ctas = [cta] if cta_group == 1 else list(_pair(cta, what))
    if cta is not ctas[0]:
        raise IllegalInstruction(f"{what} issued by {cta.label}, the odd CTA of its pair: a 2x1SM MMA is issued by "
                                 f"the even (leader) CTA rank {ctas[0].rank} only (if elect_one_cta / "
                                 "cute::elect_one_sync on the peer coordinate V == 0)")
    for c in ctas:
        if c.state in ("exited", "aborted"):
            raise IllegalInstruction(f"{what} from {cta.label}: peer {c.label} already exited")
        if cta_group == 2 and c is not cta and not tmem_of(c).allocs:
            raise IllegalInstruction(f"{what} from {cta.label}: its 2-SM peer {c.label} has no TMEM allocated; both "
                                     "CTAs of the pair must call Allocator2Sm().allocate(...) with the same column "
                                     "count (and cluster_sync) before the leader issues 2x1SM MMAs")
        tmem_of(c).check_group(cta_group, f"{what} (accumulator of {c.label})")
    b = decode_smem_desc(b_desc)
    check_smem_desc(b, f"{what} B descriptor")
    if ts:
        if idesc.a_major:
            raise IllegalInstruction(f"{what}: A from TMEM must be K-major")
        if idesc.m // cta_group != 128:
            raise IllegalInstruction(f"{what}: A from TMEM is modelled for 128 rows per CTA (M=128 1-SM, M=256 2-SM)")
        lane, col = split_address(a[1])
        a_src = ("tmem", lane, col)
        for c in ctas:
            tmem_of(c).check_allocated(range(lane, lane + 128), col, 8, f"{what} (A of {c.label})")
    else:
        a_src = decode_smem_desc(a)
        check_smem_desc(a_src, f"{what} A descriptor")
    d_lane, d_col = split_address(d_tmem)
    op = MmaOp(cta, ctas, kind, idesc, fmts[idesc.a_format], fmts[idesc.b_format], a_src, b, d_lane, d_col,
               bool(accumulate), what)
    allowed = (0, 16) if cta_group == 1 and idesc.m == 64 else (0,)
    if d_lane not in allowed:
        raise IllegalInstruction(f"{what}: accumulator address lane {d_lane}; M={idesc.m} needs lane {allowed}")
    for c, (_, lanes, cols) in zip(ctas, op.place):
        check_shape_vs_tmem(c, d_lane + lanes, d_col + cols, what)
        tmem_of(c).check_allocated(d_lane + lanes, d_col, int(cols.max()) + 1, f"{what} (accumulator of {c.label})")
    op.mark_writes()
    _pending(cta).append(op)
    cta.cluster.issue(op)
    stats = cta.cluster.launch.stats
    stats["mma"] = stats.get("mma", 0) + 1


def umma_commit(bar, mask: int | None = None, cta_group: int = 1) -> None:
    """``tcgen05.commit``: one arrive on ``bar`` (this CTA; with ``mask`` the same offset in every CTA of the
    mask) once all this thread's MMAs issued so far have completed."""
    cta = current_cta()
    what = f"tcgen05.commit.cta_group::{cta_group}{'.multicast::cluster' if mask is not None else ''}"
    addr = barrier_address(cta, bar)
    if mask is None:
        targets = [cta.rank]
    else:
        n = cta.cluster.size
        if not 0 < int(mask) < (1 << n):
            raise IllegalInstruction(f"{what} in {cta.label}: mask {int(mask):#06x} must select CTAs of the {n}-CTA "
                                     "cluster (bit i = rank i)")
        targets = [r for r in range(n) if int(mask) >> r & 1]
    ops = _pending(cta)
    cta.tcgen05_uncommitted = []
    cta.cluster.issue(CommitOp(cta, ops, addr, targets, what))


def umma_arrive(bar) -> None:
    """CUTLASS ``umma_arrive``: ``tcgen05.commit.cta_group::1`` on this CTA's barrier."""
    umma_commit(bar)


def umma_arrive_2x1SM(bar) -> None:
    """CUTLASS ``umma_arrive_2x1SM``: ``tcgen05.commit.cta_group::2`` on this CTA's barrier."""
    umma_commit(bar, None, 2)


def umma_arrive_multicast(bar, cta_mask: int) -> None:
    """CUTLASS ``umma_arrive_multicast``: ``tcgen05.commit.cta_group::1 ... multicast::cluster``."""
    umma_commit(bar, cta_mask, 1)


def umma_arrive_multicast_2x1SM(bar, cta_mask: int) -> None:
    """CUTLASS ``umma_arrive_multicast_2x1SM``: ``tcgen05.commit.cta_group::2 ... multicast::cluster``."""
    umma_commit(bar, cta_mask, 2)


# --- tcgen05.ld / st ---

SHAPE_COLUMNS = {"32x32b": 1, "16x64b": 2, "16x128b": 4, "16x256b": 8}


def fragment(shape: str, num: int, lane_id: int):
    """(lanes, columns) relative to the address of each register of warp lane ``lane_id`` (CuTe's DstLayout of
    the SM100_TMEM_LOAD ops): 32x32b lane t; 16x64b lane 8*(t%2) + t//4, column (t//2)%2; 16x128b lanes t//4 and
    +8, column t%4; 16x256b lanes t//4 and +8, columns 2*(t%4) + {0, 1}; repetitions step the columns."""
    t = int(lane_id)
    if shape == "32x32b":
        base = [(t, 0)]
    elif shape == "16x64b":
        base = [(8 * (t % 2) + t // 4, (t // 2) % 2)]
    elif shape == "16x128b":
        base = [(t // 4, t % 4), (t // 4 + 8, t % 4)]
    elif shape == "16x256b":
        c = 2 * (t % 4)
        base = [(t // 4, c), (t // 4, c + 1), (t // 4 + 8, c), (t // 4 + 8, c + 1)]
    else:
        raise IllegalInstruction(f"tcgen05.ld/st shape {shape!r}: one of {sorted(SHAPE_COLUMNS)}")
    if num not in (1, 2, 4, 8, 16, 32, 64, 128):
        raise IllegalInstruction(f"tcgen05.ld/st .x{num}: the repetition count is a power of two 1..128")
    w = SHAPE_COLUMNS[shape]
    lanes = np.array([ln for _ in range(num) for ln, _c in base])
    cols = np.array([i * w + c for i in range(num) for _l, c in base])
    return lanes, cols


def _access(op: str, taddr: int, shape: str, num: int, thread: int):
    cta = current_cta()
    lane0, col0 = split_address(taddr)
    what = f"tcgen05.{op}.sync.aligned.{shape}.x{num}.b32 by thread {thread}"
    dl, dc = fragment(shape, num, thread % 32)
    lanes, cols = lane0 + dl, col0 + dc
    warp = int(thread) // 32
    ok = warp_lanes(warp)
    bad = lanes[(lanes < ok.start) | (lanes >= ok.stop)]
    if bad.size:
        raise IllegalInstruction(f"{what} in {cta.label}: warp {warp} reads/writes TMEM lane {int(bad[0])}, but warp "
                                 f"w reaches only lanes 32*(w%4)..+31 = {ok.start}..{ok.stop - 1}: let warp "
                                 f"{int(bad[0]) // 32} (or {int(bad[0]) // 32 + 4}) access those lanes, e.g. "
                                 "partition with make_tmem_copy(...).get_slice(threadIdx) for 128 threads")
    tmem = tmem_of(cta)
    tmem.check_allocated(lanes, int(cols.min()), int(cols.max() - cols.min()) + 1, what)
    return cta, tmem, lanes, cols, what


def tmem_load(taddr: int, shape: str = "32x32b", num: int = 1, thread: int = 0) -> np.ndarray:
    """``tcgen05.ld``: the registers (uint32) that thread ``thread`` receives."""
    cta, tmem, lanes, cols, what = _access("ld", taddr, shape, num, thread)
    for wid in np.unique(tmem.writer[lanes, cols]):
        if wid == 0:
            continue
        op = tmem.ops[int(wid)]
        why = check_observed(cta, op)
        if why is not None:
            cta.cluster.launch.report(RaceError(
                f"{what} in {cta.label} reads the accumulator written by {op.what} from {op.issuer.label} before "
                f"that MMA is known to be complete: {why}. Fix: umma_arrive(&mma_barrier) after the MMAs, then "
                "wait_barrier(mma_barrier, phase) before tcgen05.ld"))
            break
    return tmem.cells[lanes, cols].copy()


def tmem_store(taddr: int, values, shape: str = "32x32b", num: int = 1, thread: int = 0) -> None:
    """``tcgen05.st``: thread ``thread`` writes its registers ``values`` (uint32 bits or float32)."""
    cta, tmem, lanes, cols, what = _access("st", taddr, shape, num, thread)
    v = np.asarray(values)
    v = v.view(np.uint32) if v.dtype.itemsize == 4 else v.astype(np.uint32)
    if v.size != lanes.size:
        raise IllegalInstruction(f"{what}: {v.size} values for {lanes.size} registers")
    tmem.cells[lanes, cols] = v.reshape(-1)
    tmem.writer[lanes, cols] = 0


def tmem_wait_ld() -> None:
    """``tcgen05.wait::ld``: loads complete when issued in the emulator."""


def tmem_wait_st() -> None:
    """``tcgen05.wait::st``: stores complete when issued in the emulator."""


def tmem_fence_before_thread_sync() -> None:
    """``tcgen05.fence::before_thread_sync``: orders tcgen05 ops before a thread barrier (no-op: one thread)."""


def tmem_fence_after_thread_sync() -> None:
    """``tcgen05.fence::after_thread_sync``: orders tcgen05 ops after a thread barrier (no-op: one thread)."""


def tmem_peek(taddr: int, lanes: int, columns: int) -> np.ndarray:
    """Debugging aid (no PTX): ``lanes`` x ``columns`` cells of this CTA's TMEM from ``taddr``, as uint32."""
    lane0, col0 = split_address(taddr)
    return tmem_of(current_cta()).cells[lane0:lane0 + lanes, col0:col0 + columns].copy()
