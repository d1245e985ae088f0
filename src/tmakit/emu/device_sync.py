"""Synchronization inside a kernel: mbarriers, cluster and CTA barriers, proxy fences (docs/HARDWARE.md §5, §7)."""

from __future__ import annotations

from .checks import as_int
from .cta import Block
from .device_smem import barrier_address
from .diagnostics import deadlock_message, describe_cluster_wait, describe_wait
from .errors import BarrierError, Deadlock, RaceError
from .mbarrier import MAX_COUNT, MAX_TX
from .scheduler import SCHEDULER, current_cta


def block_until(cta, ready, describe, barrier=None) -> None:
    """Park the CTA until ``ready()`` (a scheduling point: in-flight TMA completes meanwhile).

    A lone CTA (cluster of 1) would be resumed at once after the delivery, so it delivers in place.
    """
    if ready():
        return
    if cta.cluster.size == 1:
        cta.cluster.deliver_all()
        if ready():
            return
        cta.block, cta.state = Block(ready, describe, barrier), "blocked"
        raise Deadlock(deadlock_message(cta.cluster))
    cta.block, cta.state = Block(ready, describe, barrier), "blocked"
    SCHEDULER.park(cta)
    cta.block, cta.state = None, "running"


def _barrier(bar):
    cta = current_cta()
    return cta, cta.barrier(barrier_address(cta, bar))


def initialize_barrier(bar, arrival_count: int = 1) -> None:
    """``mbarrier.init``: phase 0, ``arrival_count`` arrivals expected per phase."""
    b = _barrier(bar)[1]
    b.init(as_int(arrival_count, f"{b.name}: arrival count", 1, MAX_COUNT, BarrierError))


def invalidate_barrier(bar) -> None:
    """``mbarrier.inval``: the slot may be initialized again."""
    _barrier(bar)[1].invalidate()


def set_barrier_transaction_bytes(bar, nbytes: int) -> None:
    """``mbarrier.arrive.expect_tx``: announce ``nbytes`` of TMA transactions, then arrive once."""
    b = _barrier(bar)[1]
    b.expect_tx(as_int(nbytes, f"{b.name}: expect_tx bytes", 0, MAX_TX, BarrierError))
    b.arrive(1)


def expect_transaction_bytes(bar, nbytes: int) -> None:
    """``mbarrier.expect_tx``: announce bytes without arriving."""
    b = _barrier(bar)[1]
    b.expect_tx(as_int(nbytes, f"{b.name}: expect_tx bytes", 0, MAX_TX, BarrierError))


def arrive_barrier(bar, count: int = 1, cta_id: int | None = None) -> None:
    """``mbarrier.arrive``; with ``cta_id`` the barrier at the same address in that peer CTA
    (``mapa`` + ``mbarrier.arrive.shared::cluster``)."""
    cta = current_cta()
    addr = barrier_address(cta, bar)
    count = as_int(count, f"arrive on mbarrier @{addr:#x}: count", 1, MAX_COUNT, BarrierError)
    if cta_id is not None:
        cta_id = as_int(cta_id, f"arrive on mbarrier @{addr:#x}: cta_id (rank in the cluster)", 0,
                        cta.cluster.size - 1, BarrierError)
    if cta_id is None or cta_id == cta.rank:
        cta.barrier(addr).arrive(count)
        return
    peer = cta.cluster.ctas[cta_id]
    if peer.state in ("exited", "aborted"):
        from .errors import ExitError

        raise ExitError(f"{cta.label} arrives on mbarrier @{addr:#x} of {peer.label}, which already exited")
    b = peer.barrier(addr)
    if not b.live:
        peer.lost.setdefault(addr, []).append(f"a remote arrive from {cta.label} reached @{addr:#x} of rank "
                                              f"{peer.rank} before an mbarrier was initialized there")
        return
    cta.cluster.check_visible(cta, b, "remote arrive")
    b.remote_signaled = True
    b.arrive(count)


def wait_barrier(bar, phase: int) -> None:
    """``mbarrier.try_wait.parity`` in a loop: return once the phase with parity ``phase & 1`` has completed.

    ``phase`` >= 2 is taken as a full phase number and must be the current or the previous phase. A wait that can
    only return because PTX counts the phase before phase 0 as complete (parity 1 while phase 0 is under way) is
    reported (:func:`check_unstarted_wait`).
    """
    cta, b = _barrier(bar)
    if not b.live:
        raise BarrierError(f"{cta.label} waits on {b.name}, which was never initialized")
    phase = as_int(phase, f"wait on {b.name}: phase", 0, None, BarrierError)
    b.check_phase_arg(phase)
    check_unstarted_wait(cta, b, phase)
    block_until(cta, lambda: b.phase_done(phase), lambda: describe_wait(cta, b, phase), b)
    b.observe(cta.rank, phase)


def check_unstarted_wait(cta, b, parity: int) -> None:
    """A parity-1 wait on a barrier still in its first phase returns at once on hardware: ``try_wait.parity``
    tests the phase *before* the current one, which for phase 0 never ran and counts as complete. That is how a
    producer passes its first wait on an empty-slot barrier (nothing has arrived there yet). When phase 0 already
    has arrivals, transaction bytes or TMA loads in flight, the wait almost surely meant phase 0 and the kernel
    would read shared memory before the phase delivers it: an error in strict mode, a warning otherwise."""
    if parity != 1 or b.phase != 0:
        return
    inflight = [op for op in cta.cluster.inflight
                if getattr(op, "bar", None) == b.address and cta.rank in getattr(op, "ranks", ())]
    if not (b.first_phase_busy() or inflight):
        return
    cta.cluster.launch.report(BarrierError(
        f"{cta.label} waits with parity 1 on {b.describe()}"
        + (f", {len(inflight)} TMA load(s) in flight to it" if inflight else "")
        + ": the barrier is still in its first phase (0), and parity 1 names the phase before it, which PTX treats "
        "as complete, so the wait returns at once and the data of phase 0 is not there yet. Wait with parity 0 "
        "for the first phase and flip the parity after each completed phase (a parity-1 first wait is only "
        "right on a barrier nothing has arrived at yet, such as a producer's empty-slot barrier)"))


def try_wait_barrier(bar, phase: int) -> bool:
    """``mbarrier.try_wait.parity``: the emulator models its time limit as unbounded, so it returns True once the
    phase completed (a ``while not try_wait(...)`` loop behaves like ``wait_barrier``)."""
    wait_barrier(bar, phase)
    return True


def barrier_phase(bar) -> int:
    """The current phase number of an mbarrier of this CTA (a debugging aid; no PTX equivalent)."""
    return _barrier(bar)[1].phase


def fence_barrier_init() -> None:
    """``fence.mbarrier_init.release.cluster``: this CTA's barrier inits are released to the cluster."""
    for b in current_cta().barriers.values():
        if b.live:
            b.fenced = True


def fence_proxy_async() -> None:
    """``fence.proxy.async.shared::cta``: generic shared writes so far become visible to TMA."""
    current_cta().smem.fence_proxy_async()


tma_store_fence = fence_proxy_async
fence_view_async_shared = fence_proxy_async


def syncthreads() -> None:
    """``__syncthreads()``: a no-op, the emulated CTA is one thread."""


def cluster_arrive() -> None:
    """``barrier.cluster.arrive.release``."""
    cta = current_cta()
    cta.cluster.arrive(cta)


def cluster_wait() -> None:
    """``barrier.cluster.wait.acquire``: until every CTA of the cluster that has not exited arrived."""
    cta = current_cta()
    cl = cta.cluster
    if cta.arrive_gen is None:
        raise RaceError(f"{cta.label}: barrier.cluster.wait without a preceding barrier.cluster.arrive")
    block_until(cta, lambda: cl.arrive_done(cta), lambda: describe_cluster_wait(cl, cta))
    cta.passed_gen, cta.arrive_gen = cta.arrive_gen + 1, None


def cluster_sync() -> None:
    """``cute::cluster_sync()``: arrive then wait."""
    cluster_arrive()
    cluster_wait()
