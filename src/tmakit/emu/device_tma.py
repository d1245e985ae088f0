"""Issuing TMA instructions from a kernel (raw level: tensor map + coordinates + shared address) and the bulk
async-groups that track stores (``cp.async.bulk.commit_group`` / ``wait_group{.read}``)."""

from __future__ import annotations

from . import tma_unit
from .async_ops import BulkOp, LoadOp, proxy_race
from .checks import as_int
from .device_smem import barrier_address, smem_address, smem_allocation
from .device_sync import block_until
from .errors import TmaUnitError
from .scheduler import current_cta
from .smem_image import check_smem_range
from .tensormap_memory import note_tensormap_use, resolve_tensormap


def _mask_ranks(cta, mask) -> list[int]:
    if mask is None:
        return [cta.rank]
    n = cta.cluster.size
    mask = as_int(mask, "multicast mask", None, None, TmaUnitError)
    if not 0 < mask < (1 << n):
        raise TmaUnitError(f"multicast mask {mask:#06x} must select CTAs of the {n}-CTA cluster (bit i = rank i)")
    return [r for r in range(n) if mask >> r & 1]


def _count(cta, kind: str) -> None:
    stats = cta.cluster.launch.stats
    stats[kind] = stats.get(kind, 0) + 1


def tma_load(tmap, coords, dst, bar, mask=None, im2col_offsets=()) -> None:
    """``cp.async.bulk.tensor`` global -> shared at ``dst``, complete_tx on ``bar``; with ``mask`` multicast to
    the same offsets in every selected CTA of the cluster. Completes at the next scheduling point."""
    cta = current_cta()
    tmap, use = resolve_tensormap(cta, tmap, "TMA load")  # a TensorMapPtr: read through the tensormap proxy
    geom = tma_unit.checked_geometry(tmap)
    coords, offsets = tma_unit.check_coords(tmap, coords, im2col_offsets,
                                            what="TMA multicast load" if mask is not None else "TMA load")
    addr, baddr = smem_address(cta, dst), barrier_address(cta, bar)
    check_smem_range(cta.smem.data, addr, geom, "TMA load")
    cta.smem.check(addr, geom.footprint, "TMA load box", smem_allocation(dst))
    gmem = cta.cluster.launch.memory.resolve(tmap.global_address)
    op = LoadOp(cta, tmap, coords, offsets, addr, baddr, _mask_ranks(cta, mask), gmem, geom)
    cta.cluster.issue(op)
    note_tensormap_use(use, op)
    _count(cta, "load")


def tma_prefetch(tmap, coords, im2col_offsets=()) -> None:
    """``cp.async.bulk.prefetch.tensor``: validated, no effect on memory."""
    tmap, _use = resolve_tensormap(current_cta(), tmap, "TMA prefetch")
    tma_unit.prefetch(tmap, coords, im2col_offsets)
    _count(current_cta(), "prefetch")


def _bulk(tmap, coords, src, reduce_op) -> None:
    cta = current_cta()
    tmap, use = resolve_tensormap(cta, tmap, "TMA reduce" if reduce_op else "TMA store")
    geom = tma_unit.checked_geometry(tmap)
    what = f"TMA reduce .{reduce_op}" if reduce_op else "TMA store"
    if reduce_op:
        reduce_op = tma_unit.check_reduce(reduce_op, tmap.dtype)
    coords = tma_unit.check_store_coords(tmap, coords, what)
    addr = smem_address(cta, src)
    check_smem_range(cta.smem.data, addr, geom, what)
    cta.smem.check(addr, geom.footprint, f"{what} source box", smem_allocation(src))
    race = proxy_race(cta, addr, geom, f"{what} at {coords}")
    if race is not None:
        cta.cluster.launch.report(race)
    gmem = cta.cluster.launch.memory.resolve(tmap.global_address)
    op = BulkOp(cta, tmap, coords, addr, reduce_op, gmem, geom)
    cta.bulk_open.append(op)
    cta.cluster.issue(op)
    note_tensormap_use(use, op)
    _count(cta, "reduce" if reduce_op else "store")


def tma_store(tmap, coords, src) -> None:
    """``cp.async.bulk.tensor`` shared -> global (bulk_group completion)."""
    _bulk(tmap, coords, src, None)


def tma_reduce(tmap, coords, src, op: str) -> None:
    """``cp.reduce.async.bulk.tensor .op`` shared -> global: ``global = global op shared``."""
    _bulk(tmap, coords, src, op)


def commit_group() -> None:
    """``cp.async.bulk.commit_group``: the bulk operations issued since the last commit form one group."""
    cta = current_cta()
    cta.bulk_groups.append(cta.bulk_open)
    cta.bulk_open = []


def wait_group(n: int = 0, read: bool = False) -> None:
    """``cp.async.bulk.wait_group{.read} n``: wait until at most the ``n`` newest committed groups are pending.

    The emulator completes a bulk operation's read and write together, so ``.read`` waits as long as without it.
    """
    cta = current_cta()
    n = as_int(n, "wait_group count", 0, None, TmaUnitError)
    old = cta.bulk_groups[:max(0, len(cta.bulk_groups) - n)]
    name = "tma_store_wait" if read else "wait_group"
    block_until(cta, lambda: all(op.done for g in old for op in g),
                lambda: f"{name}({n}): waiting for bulk stores to complete")
    for g in old:
        for op in g:
            op.waited = True
    del cta.bulk_groups[:len(old)]


def tma_store_arrive() -> None:
    """CuTe's ``tma_store_arrive()`` = ``commit_group``."""
    commit_group()


def tma_store_wait(n: int = 0) -> None:
    """CuTe's ``tma_store_wait<n>()`` = ``cp.async.bulk.wait_group.read n``."""
    wait_group(n, read=True)
