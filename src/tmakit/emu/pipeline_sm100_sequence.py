"""``cutlass::OrderedSequenceBarrier<SequenceDepth, SequenceLength>`` (cutlass/pipeline/sm90_pipeline.hpp) on the
emulator: ``SequenceLength`` groups take turns (group g waits, works, then signals group g + 1 mod Length), over
``SequenceDepth`` barrier rows. An object stands for the ``group_size`` threads of its group (pipeline_sm90's role
convention); they default to ``range(group_id * group_size, (group_id + 1) * group_size)``.
"""

from __future__ import annotations

import dataclasses
import functools

from .device_sync import fence_barrier_init
from .errors import BarrierError
from .pipeline_sm90 import NumThreadsPerWarp
from .pipeline_sm90_barrier import ClusterBarrier
from .pipeline_sm90_state import PipelineState


@dataclasses.dataclass
class _Params:
    group_id: int = 0
    group_size: int = 0
    initializing_warp: int = 0


class OrderedSequenceBarrier:
    """``OrderedSequenceBarrier[Depth, Length](storage, params, threads=None)``: ``wait()`` for this group's turn
    at the current stage, ``arrive()`` (every thread of the group signals the next group, then advance),
    ``advance()``. Group 0 starts with the opposite phase, so it goes first."""

    SequenceDepth: int | None = None
    SequenceLength: int | None = None
    Params = _Params

    @classmethod
    def __class_getitem__(cls, args):
        return _ordered(cls, *args)

    def __init__(self, storage, params, threads=None):
        if self.SequenceDepth is None:
            raise TypeError("OrderedSequenceBarrier needs [SequenceDepth, SequenceLength]")
        if params.group_size <= 0:
            raise BarrierError(f"OrderedSequenceBarrier: group_size {params.group_size} must be non-zero")
        if not 0 <= params.group_id < self.SequenceLength:
            raise BarrierError(f"OrderedSequenceBarrier: group_id {params.group_id} is not one of the "
                               f"{self.SequenceLength} groups")
        self.params_ = params
        n = params.group_size
        self.threads = tuple(range(params.group_id * n, (params.group_id + 1) * n) if threads is None else threads)
        self.barrier_ptr_ = storage.barrier_
        self.stage_ = PipelineState[self.SequenceDepth](0, int(params.group_id == 0), 0)
        if params.initializing_warp in {t // NumThreadsPerWarp for t in self.threads}:
            for row in storage.barrier_:
                for bar in row:
                    bar.init(params.group_size)
        fence_barrier_init()

    def _barrier(self, group_id: int) -> ClusterBarrier:
        return self.barrier_ptr_[self.stage_.index()][group_id]

    def wait(self) -> None:
        """Wait until the previous group signalled this group's barrier of the current stage."""
        self._barrier(self.params_.group_id).wait(self.stage_.phase())

    def arrive(self) -> None:
        """Every thread of the group arrives on the next group's barrier of this stage; then ``advance()``."""
        self._barrier((self.params_.group_id + 1) % self.SequenceLength).arrive(count=len(self.threads))
        self.stage_.increment()

    def advance(self) -> None:
        self.stage_.increment()


class _SharedStorage:
    """``barrier_[SequenceDepth][SequenceLength]`` of ``ClusterBarrier``."""

    SequenceDepth = SequenceLength = 0

    def __init__(self):
        self.barrier_ = [[ClusterBarrier() for _ in range(self.SequenceLength)] for _ in range(self.SequenceDepth)]


@functools.cache
def _ordered(cls, depth, length):
    for v in (depth, length):
        if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            raise TypeError(f"OrderedSequenceBarrier[SequenceDepth, SequenceLength]: {v!r} must be an int > 0")
    dims = {"SequenceDepth": depth, "SequenceLength": length}
    storage = type(f"OrderedSequenceBarrierSharedStorage<{depth}, {length}>", (_SharedStorage,),
                   {**dims, "__module__": cls.__module__})
    return type(f"OrderedSequenceBarrier<{depth}, {length}>", (cls,),
                {**dims, "SharedStorage": storage, "__doc__": cls.__doc__, "__module__": cls.__module__})


__all__ = ["OrderedSequenceBarrier"]
