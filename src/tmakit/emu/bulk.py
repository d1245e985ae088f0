"""Non-tensor bulk copies (``cp.async.bulk``): contiguous bytes between global and shared memory, no tensor map.

Global -> shared completes on an mbarrier (``complete_tx`` with the byte count); shared -> global joins the
issuer's bulk async-group, so ``commit_group`` / ``wait_group{.read}`` (``tk.emu.tma_store_arrive`` /
``tma_store_wait``) track it like a TMA store. Both complete at the next scheduling point, as TMA operations do.
``bulk_copy(SM90_BULK_COPY_AUTO[.with_(bar)], src, dst)`` is CuTe's ``copy`` on the auto atom
(``tmakit.tma.bulk_copy`` plans the instructions).
"""

from __future__ import annotations

import numpy as np

from ..tma.bulk_copy import BULK_ALIGN, SM90_BULK_COPY_G2S, bulk_copy_plan
from ..tma.gmem import GmemPtr
from .checks import as_int
from .device_smem import barrier_address, smem_address, smem_allocation
from .errors import ExitError, IllegalAddress, IllegalInstruction, RaceError, TmaUnitError
from .scheduler import current_cta

MAX_BULK_BYTES = 2**32 - 16  # the .u32 size operand, a multiple of 16


def _global_address(x) -> int:
    """A global address: an int, a ``GmemPtr``, or a numpy array / tensor over one (its first byte)."""
    it = getattr(x, "iterator", x)
    if isinstance(it, GmemPtr):
        return it.address
    if isinstance(it, np.ndarray):
        return int(it.ctypes.data)
    arr = getattr(it, "array", None)
    if isinstance(arr, np.ndarray):
        return int(arr.ctypes.data) + it.offset * arr.itemsize
    return as_int(it, "global address", 0, None, IllegalAddress)


def _check(what: str, gaddr: int, saddr: int, nbytes) -> int:
    nbytes = as_int(nbytes, f"{what}: size (bytes)", 1, MAX_BULK_BYTES, TmaUnitError)
    if nbytes % BULK_ALIGN:
        raise IllegalInstruction(f"{what}: size {nbytes} bytes is not a multiple of 16; cp.async.bulk moves whole "
                                 "16-byte units (round the copy up, or move the tail another way)")
    for space, a in (("global", gaddr), ("shared", saddr)):
        if a % BULK_ALIGN:
            raise IllegalInstruction(f"{what}: {space} address {a:#x} is not 16-byte aligned (it is {a % BULK_ALIGN} "
                                     "bytes past a boundary); the GPU would fault with a misaligned address")
    return nbytes


def _global_bytes(cta, gaddr: int, nbytes: int, what: str) -> np.ndarray:
    mem = cta.cluster.launch.memory.resolve(gaddr)
    if mem.size < nbytes:
        raise IllegalAddress(f"{what}: {nbytes} bytes from global {gaddr:#x} run {nbytes - mem.size} bytes past the "
                             "end of the registered buffer that holds the address")
    return mem[:nbytes]


class BulkLoadOp:
    """``cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes``: global bytes land in the issuer's
    shared memory, then ``complete_tx(nbytes)`` on its mbarrier."""

    def __init__(self, issuer, gmem, addr: int, bar: int, nbytes: int, what: str):
        self.issuer, self.gmem, self.addr, self.bar, self.nbytes = issuer, gmem, addr, bar, nbytes
        self.ranks, self.what = [issuer.rank], what

    def deliver(self, cluster) -> None:
        cta, span = self.issuer, slice(self.addr, self.addr + self.nbytes)
        if cta.state in ("exited", "aborted"):
            raise ExitError(f"{self.what} of {cta.label} lands after the CTA exited: wait on its mbarrier first")
        smem = cta.smem
        if smem.written[span].any() or not np.array_equal(smem.data[span], smem.async_view[span]):
            cluster.launch.report(RaceError(
                f"{self.what}: {cta.label} wrote the destination with generic stores and the bulk copy overwrites "
                "it without fence.proxy.async in between (fence_view_async_shared() after the generic writes)"))
        for b in cta.barriers.values():
            if b.live and self.addr <= b.address < self.addr + self.nbytes:
                cluster.launch.report(RaceError(f"{self.what} of {cta.label} overwrites the live {b.name}"))
        data = np.array(self.gmem, copy=True)
        smem.touch(span.stop)
        smem.data[span] = data
        smem.async_view[span] = data
        smem.written[span] = False
        cluster.signal(cta, cta, self.bar, self.nbytes, self.what)


class BulkStoreOp:
    """``cp.async.bulk.global.shared::cta.bulk_group``: shared bytes to global, tracked by the bulk async-group."""

    def __init__(self, issuer, gmem, addr: int, nbytes: int, what: str):
        self.issuer, self.gmem, self.addr, self.nbytes, self.what = issuer, gmem, addr, nbytes, what
        self.snapshot = issuer.smem.data[addr:addr + nbytes].copy()
        self.done = self.waited = False

    def deliver(self, cluster) -> None:
        now = self.issuer.smem.data[self.addr:self.addr + self.nbytes]
        if not np.array_equal(now, self.snapshot):
            cluster.launch.report(RaceError(
                f"{self.what}: {self.issuer.label} overwrote the source before the bulk read completed "
                "(commit_group() + wait_group(N, read=True) before reusing the buffer)"))
        self.gmem[:] = now
        self.done = True


def _count(cta, kind: str) -> None:
    stats = cta.cluster.launch.stats
    stats[kind] = stats.get(kind, 0) + 1


def bulk_load(src, bar, dst, nbytes: int) -> None:
    """CuTe's ``SM90_BULK_COPY_G2S::copy(gmem_ptr, mbar_ptr, smem_ptr, load_bytes)``:
    ``cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], nbytes, [bar]``."""
    cta = current_cta()
    gaddr, saddr, baddr = _global_address(src), smem_address(cta, dst), barrier_address(cta, bar)
    what = f"bulk copy G2S of {nbytes} bytes from global {gaddr:#x} to shared {saddr:#x}"
    nbytes = _check(what, gaddr, saddr, nbytes)
    cta.smem.check(saddr, nbytes, "bulk copy destination", smem_allocation(dst))
    cta.cluster.issue(BulkLoadOp(cta, _global_bytes(cta, gaddr, nbytes, what), saddr, baddr, nbytes, what))
    _count(cta, "bulk_load")


def bulk_store(src, dst, nbytes: int) -> None:
    """CuTe's ``SM90_BULK_COPY_S2G::copy(smem_ptr, gmem_ptr, store_bytes)``:
    ``cp.async.bulk.global.shared::cta.bulk_group [dst], [src], nbytes``; completes through the bulk group."""
    cta = current_cta()
    saddr, gaddr = smem_address(cta, src), _global_address(dst)
    what = f"bulk copy S2G of {nbytes} bytes from shared {saddr:#x} to global {gaddr:#x}"
    nbytes = _check(what, gaddr, saddr, nbytes)
    cta.smem.check(saddr, nbytes, "bulk copy source", smem_allocation(src))
    span = slice(saddr, saddr + nbytes)
    if cta.smem.written[span].any() or not np.array_equal(cta.smem.data[span], cta.smem.async_view[span]):
        cta.cluster.launch.report(RaceError(
            f"{what}: {cta.label} wrote the source with generic stores and the bulk copy reads it without "
            "fence.proxy.async in between (call tma_store_fence() / fence_view_async_shared() first)"))
    op = BulkStoreOp(cta, _global_bytes(cta, gaddr, nbytes, what), saddr, nbytes, what)
    cta.bulk_open.append(op)
    cta.cluster.issue(op)
    _count(cta, "bulk_store")


def bulk_prefetch(src, nbytes: int) -> None:
    """CuTe's ``SM90_BULK_COPY_G2S::PREFETCH::copy``: ``cp.async.bulk.prefetch.L2.global [src], nbytes``
    (validated, no effect on memory)."""
    cta = current_cta()
    gaddr = _global_address(src)
    what = f"bulk prefetch of {nbytes} bytes at global {gaddr:#x}"
    _global_bytes(cta, gaddr, _check(what, gaddr, 0, nbytes), what)
    _count(cta, "bulk_prefetch")


def bulk_copy(atom, src, dst) -> None:
    """CuTe's ``copy(SM90_BULK_COPY_AUTO[.with(bar)], src, dst)``: one ``cp.async.bulk`` per common vector."""
    cta = current_cta()
    plan = bulk_copy_plan(atom, src, dst)
    smem_side = dst if plan.atom.op is SM90_BULK_COPY_G2S else src
    smem_address(cta, smem_side)  # a pointer into another CTA's shared memory is refused here
    for ins in plan.instructions:
        if plan.atom.op is SM90_BULK_COPY_G2S:
            bulk_load(ins.src_address, atom.barrier, _smem_at(smem_side, ins.dst_address), ins.nbytes)
        else:
            bulk_store(_smem_at(smem_side, ins.src_address), ins.dst_address, ins.nbytes)


def _smem_at(tensor, address: int):
    """The tensor's shared pointer moved to ``address`` (keeps its allocation for the bounds check)."""
    it = tensor.iterator
    return it.cast(np.uint8) + (address - it.address)
