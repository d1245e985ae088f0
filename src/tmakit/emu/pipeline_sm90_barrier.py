"""``cutlass::arch::ClusterBarrier`` / ``ClusterTransactionBarrier`` (cutlass/arch/barrier.h) on the emulator.

Each wraps one 8-byte mbarrier slot of shared memory (``shared_barrier()``); the methods are the PTX instructions
CUTLASS issues, on the emulator's mbarriers (``device_sync``). A method call is one thread's instruction.
"""

from __future__ import annotations

from .checks import as_int
from .device_smem import barrier_address, shared_barrier
from .device_sync import (
    arrive_barrier,
    expect_transaction_bytes,
    initialize_barrier,
    invalidate_barrier,
    set_barrier_transaction_bytes,
    wait_barrier,
)
from .errors import BarrierError
from .mbarrier import MAX_TX
from .scheduler import current_cta


class ClusterBarrier:
    """An mbarrier in shared memory: ``init``, ``wait`` / ``try_wait`` / ``test_wait`` on a phase parity,
    local ``arrive()`` and remote ``arrive(cta_id, pred)`` (``mapa`` + ``mbarrier.arrive.shared::cluster``)."""

    def __init__(self, slot=None):
        self.barrier_ = shared_barrier() if slot is None else slot  # the uint64_t slot (a shared pointer)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.barrier_!r})"

    def init(self, arrive_count: int) -> None:
        """``mbarrier.init.shared::cta.b64``."""
        initialize_barrier(self.barrier_, arrive_count)

    def wait(self, phase: int) -> None:
        """``mbarrier.try_wait.parity`` in a loop until the phase with parity ``phase`` completed."""
        wait_barrier(self.barrier_, phase & 1)

    def try_wait(self, phase: int) -> bool:
        """``mbarrier.try_wait.parity``: its time limit is unbounded on the emulator, so it returns True once the
        phase completed (a hang is reported as a deadlock)."""
        wait_barrier(self.barrier_, phase & 1)
        return True

    def test_wait(self, phase: int, pred: int = True) -> bool:
        """``mbarrier.test_wait.parity``: has the phase with parity ``phase`` completed? Does not block; False when
        ``pred`` is false."""
        if not pred:
            return False
        cta = current_cta()
        b = cta.barrier(barrier_address(cta, self.barrier_))
        if not b.live:
            raise BarrierError(f"{cta.label}: test_wait on {b.name}, which was never initialized")
        return b.phase_done(phase & 1)

    def arrive(self, cta_id: int | None = None, pred: int = True, count: int = 1) -> None:
        """``mbarrier.arrive`` here, or with ``cta_id`` on the barrier at the same offset in that CTA of the
        cluster when ``pred``; ``count`` (an emulator extension) makes that many threads' arrivals at once."""
        if pred:
            arrive_barrier(self.barrier_, count, cta_id)

    def invalidate(self) -> None:
        """``mbarrier.inval``."""
        invalidate_barrier(self.barrier_)


class ClusterTransactionBarrier(ClusterBarrier):
    """A :class:`ClusterBarrier` that also counts TMA transaction bytes (``expect_tx`` / ``complete_tx``)."""

    def arrive_and_expect_tx(self, transaction_bytes: int, cta_id: int | None = None, pred: int = 1) -> None:
        """``mbarrier.arrive.expect_tx``: here, or (``cta_id``, when ``pred``) on that CTA's barrier."""
        if cta_id is None:
            set_barrier_transaction_bytes(self.barrier_, transaction_bytes)
            return
        if pred:
            _peer_barrier(self.barrier_, cta_id, "arrive.expect_tx").expect_tx(_tx(transaction_bytes))
            arrive_barrier(self.barrier_, 1, cta_id)

    def expect_transaction(self, transaction_bytes: int) -> None:
        """``mbarrier.expect_tx``: announce bytes without arriving."""
        expect_transaction_bytes(self.barrier_, transaction_bytes)

    def complete_transaction(self, *args) -> None:
        """``complete_transaction(bytes, pred=1)`` on this CTA's barrier, or ``complete_transaction(dst_cta_id,
        bytes, pred)`` on that CTA's (``mbarrier.complete_tx.shared::cluster``): bytes arrive without a copy."""
        if len(args) in (1, 2):
            dst, nbytes, pred = current_cta().rank, args[0], (args[1] if len(args) == 2 else 1)
        elif len(args) == 3:
            dst, nbytes, pred = args
        else:
            raise TypeError("complete_transaction(bytes[, pred]) or complete_transaction(dst_cta_id, bytes, pred)")
        if pred:
            cta = current_cta()
            peer = cta.cluster.ctas[_rank(cta, dst)]
            cta.cluster.signal(cta, peer, barrier_address(cta, self.barrier_), _tx(nbytes), "complete_tx")


def _tx(nbytes) -> int:
    return as_int(nbytes, "transaction bytes", 0, MAX_TX, BarrierError)


def _rank(cta, cta_id) -> int:
    return as_int(cta_id, f"{cta.label}: cta_id (rank in the cluster)", 0, cta.cluster.size - 1, BarrierError)


def _peer_barrier(slot, cta_id, what: str):
    cta = current_cta()
    peer = cta.cluster.ctas[_rank(cta, cta_id)]
    b = peer.barrier(barrier_address(cta, slot))
    if not b.live:
        raise BarrierError(f"{cta.label}: {what} on {b.name}, which is not initialized")
    return b
