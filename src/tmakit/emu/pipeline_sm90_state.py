"""``cutlass::PipelineState<Stages>``, ``make_producer_start_state`` and the arrival tokens of
cutlass/pipeline/sm90_pipeline.hpp.

C++ template arguments become subscripts: ``PipelineState[4]`` is ``PipelineState<4>``. ``++state`` is
``state.increment()`` (or ``state += 1``); states are mutable values, so ``copy()`` one before handing it to code
that advances it (C++ passes them by value; the pipeline methods here copy where CUTLASS's take a copy).
"""

from __future__ import annotations

import enum
import functools


class BarrierStatus(enum.IntEnum):
    """What a ``*_try_wait`` found: ``WaitAgain`` (0) or ``WaitDone`` (1)."""

    WaitAgain = 0
    WaitDone = 1


class ArrivalToken:
    """The result of a try/test wait, handed back to ``producer_acquire`` / ``consumer_wait``."""

    def __init__(self, barrier_status):
        self.barrier_status_ = BarrierStatus(int(barrier_status))

    def get(self) -> BarrierStatus:
        return self.barrier_status_

    def __eq__(self, other) -> bool:
        return self.barrier_status_ == (other.get() if isinstance(other, ArrivalToken) else other)

    def __hash__(self) -> int:
        return hash(self.barrier_status_)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.barrier_status_.name})"


class ProducerToken(ArrivalToken):
    """``producer_try_acquire``'s token."""


class ConsumerToken(ArrivalToken):
    """``consumer_try_wait`` / ``consumer_test_wait``'s token."""


class _Templated:
    """``Cls[n]``: a cached subclass with the class attribute ``Stages = n``."""

    Stages: int | None = None

    @classmethod
    def __class_getitem__(cls, stages):
        return _specialize(cls, stages)


@functools.cache
def _specialize(cls, stages):
    if cls.Stages is not None:
        raise TypeError(f"{cls.__name__} already has Stages = {cls.Stages}")
    if not isinstance(stages, int) or isinstance(stages, bool) or stages < 0:
        raise TypeError(f"{cls.__name__}[Stages]: Stages must be an int >= 0, got {stages!r}")
    return type(f"{cls.__name__}<{stages}>", (cls,), {"Stages": stages, "__doc__": cls.__doc__,
                                                       "__module__": cls.__module__})


class PipelineState(_Templated):
    """``PipelineState<Stages>``: the stage ``index``, the barrier ``phase`` parity (flips at each wrap to stage 0)
    and the ``count`` of iterations. Accessors are methods, as in CUTLASS: ``index()``, ``phase()``, ``count()``."""

    def __init__(self, index: int = 0, phase: int = 0, count: int = 0):
        if self.Stages is None:
            raise TypeError("PipelineState needs its Stages: PipelineState[Stages](index, phase, count)")
        self.index_, self.phase_, self.count_ = int(index), int(phase), int(count)

    def index(self) -> int:
        return self.index_

    def phase(self) -> int:
        return self.phase_

    def count(self) -> int:
        return self.count_

    def increment(self) -> PipelineState:
        """``++state``."""
        if self.Stages > 0:
            self.index_ += 1
            self.count_ += 1
            if self.index_ == self.Stages:
                self.index_, self.phase_ = 0, self.phase_ ^ 1
        return self

    def advance(self, num_iterations: int) -> PipelineState:
        """``advance(n)``: ``n`` increments at once (in place; returns the state)."""
        n, s = int(num_iterations), self.Stages
        if n < 0:
            raise ValueError(f"advance({n}): the iteration count is a uint32_t")
        if s > 0:
            if n < s and self.index_ + n >= s:
                self.phase_ ^= 1
            if n >= s and ((self.index_ + n) // s) % 2 == 1:
                self.phase_ ^= 1
            self.index_ = (self.index_ + n) % s
            self.count_ += n
        return self

    def __iadd__(self, num_iterations: int) -> PipelineState:
        return self.advance(num_iterations)

    @classmethod
    def make_pipeline_state(cls, start_state: PipelineState, num_iterations: int) -> PipelineState:
        """A copy of ``start_state`` advanced by ``num_iterations``."""
        return start_state.copy().advance(num_iterations)

    def copy(self) -> PipelineState:
        return type(self)(self.index_, self.phase_, self.count_)

    def __eq__(self, other) -> bool:
        return (isinstance(other, PipelineState) and self.Stages == other.Stages
                and (self.index_, self.phase_, self.count_) == (other.index_, other.phase_, other.count_))

    def __hash__(self) -> int:
        return hash((self.Stages, self.index_, self.phase_, self.count_))

    def __repr__(self) -> str:
        return f"PipelineState<{self.Stages}>(index={self.index_}, phase={self.phase_}, count={self.count_})"


def make_producer_start_state(pipeline) -> PipelineState:
    """``make_producer_start_state<Pipeline>()``: stage 0, phase 1, count 0 — the producer's first wait on an empty
    barrier (still in phase 0) returns at once."""
    return PipelineState[pipeline.Stages](0, 1, 0)
