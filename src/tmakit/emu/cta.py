"""One CTA of an emulated launch: its coordinates, shared memory, mbarriers, bulk groups and run state.

A CTA is one elected thread (TMA needs one) plus CTA-wide barriers, which are no-ops for a single thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple

from .mbarrier import MBarrier


class Dim3(NamedTuple):
    x: int
    y: int = 1
    z: int = 1

    def __str__(self):
        return f"({self.x},{self.y},{self.z})"


@dataclass
class Block:
    """Why a CTA is parked: ``ready()`` says when it may resume, ``describe()`` explains it in a deadlock report."""

    ready: Callable[[], bool]
    describe: Callable[[], str]
    barrier: MBarrier | None = None


class CTA:
    """State of one CTA. ``state``: new, blocked, running, exited, failed, aborted, abandoned (stopped but its
    thread would not end)."""

    def __init__(self, cluster, rank: int, local: Dim3, block_idx: Dim3, smem):
        self.cluster, self.rank, self.local, self.block_idx, self.smem = cluster, rank, local, block_idx, smem
        self.barriers: dict[int, MBarrier] = {}
        self.lost: dict[int, list[str]] = {}  # address -> signals that hit no live barrier
        self.bulk_open: list = []  # bulk ops since the last commit_group
        self.bulk_groups: list[list] = []  # committed groups, oldest first
        self.state = "new"
        self.block: Block | None = None
        self.error: BaseException | None = None
        self.abort = False  # the launch is stopping this CTA
        self.abort_raised = False  # Aborted was raised in it once
        self.stopped_at = ""  # where it ran when a time limit stopped it
        self.worker = None
        self.arrive_gen: int | None = None  # cluster-barrier generation arrived at, not yet waited
        self.passed_gen = 0  # cluster-barrier generations this CTA has waited through
        self.program = None  # the kernel bound to its arguments
        smem.owner = self.label

    def run(self) -> None:
        """Run the program on the current (worker) thread; record how it ended."""
        from .scheduler import Aborted

        self.state = "running"
        try:
            self.program()
            self.state = "exited"
        except Aborted:
            self.state = "aborted"
        except BaseException as e:  # noqa: BLE001 - handed to the launching thread
            self.error, self.state = e, "failed"

    @property
    def label(self) -> str:
        return f"CTA rank {self.rank} block {self.block_idx}"

    def barrier(self, address: int) -> MBarrier:
        """The mbarrier object at ``address`` (created uninitialized on first use)."""
        b = self.barriers.get(address)
        if b is None:
            b = self.barriers[address] = MBarrier(self.rank, address)
        return b

    def bulk_ops(self) -> list:
        return [op for g in self.bulk_groups for op in g] + self.bulk_open
