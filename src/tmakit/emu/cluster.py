"""A cluster of CTAs: the cluster barrier, in-flight TMA operations and mbarrier signalling across CTAs."""

from __future__ import annotations

import threading
from collections import deque

from .errors import ExitError, RaceError


class Cluster:
    """CTAs ``ctas[rank]`` of cluster ``cid``; ``launch`` holds options (strict mode, memory)."""

    def __init__(self, launch, cid, shape):
        self.launch, self.cid, self.shape = launch, cid, shape
        self.ctas: list = []
        self.inflight: deque = deque()
        self.gen = 0  # completed cluster-barrier generations
        self.arrived: set[int] = set()
        self.exited: set[int] = set()  # exited CTAs count as arrived at every later barrier (measured on the H200)
        self.hazards: list[str] = []  # races seen so far: raised at the end, or explained in a deadlock report
        self.baton = threading.Semaphore(0)  # handed back to the launching thread by the CTA that ran

    @property
    def size(self) -> int:
        return len(self.ctas)

    # --- barrier.cluster.arrive / wait ---
    def arrive(self, cta) -> None:
        if cta.arrive_gen is not None:
            raise RaceError(f"{cta.label}: barrier.cluster.arrive twice without barrier.cluster.wait in between")
        cta.arrive_gen = self.gen
        for b in cta.barriers.values():  # inits so far become visible to peers once this generation completes
            if b.live and b.published_gen is None:
                b.published_gen = self.gen
        self.arrived.add(cta.rank)
        self._complete()

    def exit(self, cta) -> None:
        """``barrier.cluster.wait`` waits only for non-exited threads: an exit releases peers waiting on it."""
        self.exited.add(cta.rank)
        self._complete()

    def _complete(self) -> None:
        if self.arrived and len(self.arrived | self.exited) == self.size:
            self.gen += 1
            self.arrived.clear()

    def arrive_done(self, cta) -> bool:
        return cta.arrive_gen is not None and self.gen > cta.arrive_gen

    # --- in-flight operations ---
    def issue(self, op) -> None:
        self.inflight.append(op)

    def deliver_all(self) -> None:
        """A scheduling point: every in-flight operation completes, oldest first."""
        while self.inflight:
            self.inflight.popleft().deliver(self)

    def targets(self, cta):
        return [op for op in self.inflight if cta.rank in getattr(op, "ranks", ())]

    # --- mbarrier signals that may cross CTAs ---
    def signal(self, issuer, cta, address: int, nbytes: int, what: str) -> None:
        """complete_tx of ``nbytes`` on the mbarrier at ``address`` of ``cta``, caused by ``issuer``."""
        if cta.state in ("exited", "aborted"):
            raise ExitError(f"{what} from {issuer.label} signals the mbarrier @{address:#x} of {cta.label}, which "
                            "already exited: end the kernel with cluster_sync() so no CTA exits while peers may "
                            "still write its shared memory")
        b = cta.barriers.get(address)
        if b is None or not b.live:
            cta.lost.setdefault(address, []).append(
                f"{nbytes} tx bytes from {what} of {issuer.label} reached @{address:#x} of rank {cta.rank} before "
                "an mbarrier was initialized there (missing fence_barrier_init + cluster_sync before the peer's "
                "multicast?)")
            return
        if cta is not issuer:
            self.check_visible(issuer, b, what)
            b.remote_signaled = True
        b.complete_tx(nbytes)

    def check_visible(self, issuer, b, what: str) -> None:
        """A peer may signal ``b`` only after its init was published by a cluster barrier both passed."""
        if b.published_gen is None or issuer.passed_gen <= b.published_gen:
            self.hazards.append(
                f"{what} from {issuer.label} signals {b.name}, whose initialization is not yet visible to it: "
                "initialize the barrier, fence_barrier_init(), then cluster_sync() before peers use it")
