"""TMA operations in flight: issued by a CTA, completed by the scheduler at the next scheduling point."""

from __future__ import annotations

import numpy as np

from . import tma_unit
from .errors import ExitError, RaceError


def proxy_race(cta, addr: int, geom, what: str) -> RaceError | None:
    """A RaceError if generic (Python) writes to the box at ``addr`` were not fenced for the async proxy."""
    bad = cta.smem.unfenced(addr, geom)
    if bad is None:
        return None
    return RaceError(f"{what}: {cta.label} wrote shared byte {bad:#x} with generic stores and the TMA accesses it "
                     "without fence.proxy.async in between (call tma_store_fence() / fence_view_async_shared() "
                     "after writing shared memory)")


def overwrites_barrier(cta, addr: int, geom) -> RaceError | None:
    """A RaceError if the box at ``addr`` covers a live mbarrier of ``cta``."""
    for b in cta.barriers.values():
        if b.live and addr <= b.address < addr + geom.footprint:
            return RaceError(f"a TMA box at [{addr:#x}, {addr + geom.footprint:#x}) of {cta.label} overwrites the live "
                             f"{b.name}: shared buffers and barriers overlap")
    return None


class LoadOp:
    """``cp.async.bulk.tensor`` global -> shared of the CTAs ``ranks`` (one rank unless multicast)."""

    def __init__(self, issuer, tmap, coords, offsets, addr, bar, ranks, gmem, geom):
        self.issuer, self.tmap, self.coords, self.offsets = issuer, tmap, coords, offsets
        self.addr, self.bar, self.ranks, self.gmem, self.geom = addr, bar, ranks, gmem, geom
        self.what = f"TMA {'multicast ' if len(ranks) > 1 or ranks != [issuer.rank] else ''}load at {coords}"

    def deliver(self, cluster) -> None:
        data = tma_unit.gather(self.tmap, self.coords, self.gmem, self.offsets)
        for r in self.ranks:
            cta = cluster.ctas[r]
            if cta.state in ("exited", "aborted"):
                raise ExitError(f"{self.what} from {self.issuer.label} writes the shared memory of {cta.label}, "
                                "which already exited: end the kernel with cluster_sync()")
            if cta is not self.issuer:
                cta.smem.check(self.addr, self.geom.footprint, f"{self.what} from {self.issuer.label}, box")
            for race in (proxy_race(cta, self.addr, self.geom, self.what),
                         overwrites_barrier(cta, self.addr, self.geom)):
                if race is not None:
                    cluster.launch.report(race)
            cta.smem.tma_write(self.addr, self.geom, data)
            cluster.signal(self.issuer, cta, self.bar, self.geom.tx_bytes, self.what)


class BulkOp:
    """``cp{.reduce}.async.bulk.tensor`` shared -> global, tracked by the issuer's bulk async-groups."""

    def __init__(self, issuer, tmap, coords, addr, reduce_op, gmem, geom):
        self.issuer, self.tmap, self.coords, self.addr = issuer, tmap, coords, addr
        self.reduce_op, self.gmem, self.geom = reduce_op, gmem, geom
        self.snapshot = issuer.smem.read(addr, geom)
        self.done = self.waited = False
        kind = f"reduce .{reduce_op}" if reduce_op else "store"
        self.what = f"TMA {kind} at {coords}"

    def deliver(self, cluster) -> None:
        if not np.array_equal(self.issuer.smem.read(self.addr, self.geom), self.snapshot):
            cluster.launch.report(RaceError(
                f"{self.what}: {self.issuer.label} overwrote the store's shared source before the bulk read "
                "completed (tma_store_arrive() + tma_store_wait<N>() before reusing the buffer)"))
        smem = self.issuer.smem.data
        if self.reduce_op:
            tma_unit.reduce(self.tmap, self.coords, self.gmem, smem, self.addr, self.reduce_op)
        else:
            tma_unit.store(self.tmap, self.coords, self.gmem, smem, self.addr)
        self.done = True
