"""mbarrier objects with PTX semantics (docs/HARDWARE.md §5).

State: arrival count (1 .. 2^20-1), pending arrivals, tx-count (bytes announced by ``expect_tx`` minus bytes
delivered by ``complete_tx``, in -(2^20-1) .. 2^20-1) and the phase number. A phase completes when no arrivals are
pending and the tx-count is zero; then the phase number advances and the pending count reloads.
``try_wait.parity p`` succeeds when the phase with parity ``p`` has completed, i.e. ``p`` is not the current parity.
"""

from __future__ import annotations

import warnings

from .errors import BarrierError

MAX_COUNT = 2**20 - 1
MAX_TX = 2**20 - 1


class StalePhaseWarning(UserWarning):
    """A parity wait returned on a phase this CTA had already waited for (parity not flipped?)."""


class MBarrier:
    """One ``.b64`` mbarrier at shared ``address`` of CTA rank ``owner``."""

    def __init__(self, owner: int, address: int):
        self.owner, self.address = owner, address
        self.live = False
        self.count = self.pending = self.tx = self.phase = 0
        self.expected = self.delivered = 0  # tx bytes announced / delivered in the current phase
        self.published_gen = None  # cluster-barrier generation that made the init visible to peers
        self.fenced = False  # fence.mbarrier_init executed after init
        self.remote_signaled = False
        self.last_waited: dict[int, int] = {}  # rank -> phase number its last successful wait observed

    @property
    def name(self) -> str:
        return f"mbarrier @{self.address:#x} of rank {self.owner}"

    def init(self, count: int) -> None:
        if self.live:
            raise BarrierError(f"{self.name} is initialized again while live (phase {self.phase}); re-initializing a "
                               "live mbarrier is undefined in PTX: invalidate it first (mbarrier.inval)")
        if not 1 <= count <= MAX_COUNT:
            raise BarrierError(f"{self.name}: arrival count {count} outside 1..{MAX_COUNT}")
        self.live, self.count, self.pending, self.tx, self.phase = True, count, count, 0, 0
        self.expected = self.delivered = 0
        self.published_gen, self.fenced, self.last_waited = None, False, {}

    def invalidate(self) -> None:
        self._need_live("mbarrier.inval")
        self.live = False

    def _need_live(self, what: str) -> None:
        if not self.live:
            raise BarrierError(f"{what} on {self.name}, which is not initialized (initialize_barrier first)")

    def arrive(self, n: int = 1) -> None:
        self._need_live("arrive")
        if n > self.pending:
            raise BarrierError(f"{self.name}: {n} arrival(s) but only {self.pending} of {self.count} pending in phase "
                               f"{self.phase} (arrival count too small at init?)")
        self.pending -= n
        self._advance()

    def expect_tx(self, nbytes: int) -> None:
        self._need_live("expect_tx")
        self._set_tx(self.tx + nbytes)
        self.expected += nbytes

    def complete_tx(self, nbytes: int) -> None:
        self._set_tx(self.tx - nbytes)
        self.delivered += nbytes
        self._advance()

    def _set_tx(self, tx: int) -> None:
        if abs(tx) > MAX_TX:
            raise BarrierError(f"{self.name}: tx-count {tx} outside ±{MAX_TX} (expect_tx of a whole pipeline at once?)")
        self.tx = tx

    def _advance(self) -> None:
        if self.pending == 0 and self.tx == 0:
            self.phase += 1
            self.pending, self.expected, self.delivered = self.count, 0, 0

    def phase_done(self, parity: int) -> bool:
        """``try_wait.parity``: has the phase with this parity (current or previous) completed?"""
        return (self.phase & 1) != (parity & 1)

    def check_phase_arg(self, phase: int) -> None:
        """``phase`` >= 2 is read as a full phase number: it must be the current or the previous phase."""
        if phase >= 2 and phase not in (self.phase, self.phase - 1):
            raise BarrierError(f"wait on phase {phase} of {self.name}, whose current phase is {self.phase}: "
                               "try_wait.parity is valid only for the current or the immediately preceding phase")

    def first_phase_busy(self) -> bool:
        """Still in phase 0 with arrivals or transaction bytes already counted in it."""
        return self.phase == 0 and (self.pending < self.count or self.expected > 0 or self.delivered > 0)

    def observe(self, rank: int, parity: int) -> None:
        """Record a successful wait by ``rank``; warn when it re-observes an already consumed phase."""
        seen = self.phase - 1  # a successful wait observes the last completed phase of this parity
        if self.last_waited.get(rank) == seen and (seen & 1) == (parity & 1):
            warnings.warn(f"rank {rank} waited on {self.name} with parity {parity & 1} and returned at once on phase "
                          f"{seen}, which it had already waited for: flip the parity after each completed phase",
                          StalePhaseWarning, stacklevel=4)
        self.last_waited[rank] = seen

    def describe(self) -> str:
        if not self.live:
            return f"{self.name} (not initialized)"
        return (f"{self.name}: phase {self.phase} (parity {self.phase & 1}), "
                f"{self.count - self.pending}/{self.count} arrivals, tx bytes expected {self.expected}, "
                f"delivered {self.delivered}")
