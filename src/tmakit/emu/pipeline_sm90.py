"""CUTLASS's SM90 pipelines (cutlass/pipeline/sm90_pipeline.hpp) on the emulator: ``PipelineTmaAsync``,
and its base; ``PipelineTransactionAsync``, ``PipelineAsync`` and
``PipelineTmaStore`` are in pipeline_sm90_async (docs/EMULATOR.md, "CUTLASS pipelines").

Roles: in CUDA every thread constructs the pipeline and calls its methods; an emulated CTA is one program. A pipeline
object here stands for the threads ``threads`` (their ``threadIdx.x``) of one role group — the producer warp, one
consumer warpgroup, ... — and each method call is the collective call of those threads: a wait waits once, the
producer leader (``is_leader``) arrives / expects bytes once, and an arrival every thread makes in CUTLASS is made
once per thread of ``threads``. So the barriers get exactly CUTLASS's arrival counts. Barrier init happens in the
object whose threads hold ``initializing_warp`` (construct other role objects with their own ``threads`` or
``init_barriers=False``). CUTLASS's debug-build traps (a consumer calling a producer method ...) raise here, and so
do misuses CUTLASS does not check (``consumer_release`` of a stage not waited for, ``producer_commit`` without
``producer_acquire``).
"""

from __future__ import annotations

import dataclasses
import enum
import warnings
from collections import Counter

from .device_info import block_id_in_cluster
from .device_smem import barrier_address
from .device_sync import fence_barrier_init, wait_barrier
from .errors import BarrierError
from .mbarrier import StalePhaseWarning
from .pipeline_sm90_barrier import ClusterBarrier, ClusterTransactionBarrier
from .pipeline_sm90_state import (
    BarrierStatus,
    ConsumerToken,
    PipelineState,
    ProducerToken,
    _specialize,
    _Templated,
    make_producer_start_state,
)
from .scheduler import current_cta

NumThreadsPerWarp, NumThreadsPerWarpGroup = 32, 128


class ThreadCategory(enum.Enum):
    """A pipeline thread's role."""

    NonParticipant = 0
    Producer = 1
    Consumer = 2
    ProducerConsumer = 3


def _is_producer(role) -> bool:
    return role in (ThreadCategory.Producer, ThreadCategory.ProducerConsumer)


def _is_consumer(role) -> bool:
    return role in (ThreadCategory.Consumer, ThreadCategory.ProducerConsumer)


def _dims(shape) -> tuple[int, int, int]:
    s = tuple(int(v) for v in (shape if isinstance(shape, (tuple, list)) else (shape.x, shape.y, shape.z)))
    return (s + (1, 1, 1))[:3]


def spread_arrivals_to_warp(thread_idx_in_warp: int) -> tuple[bool, int]:
    """``detail::spread_arrivals_to_warp``: every second lane signals one of 16 CTAs (a 4x4 row-major grid)."""
    row, col = thread_idx_in_warp // 8, (thread_idx_in_warp % 8) // 2
    return thread_idx_in_warp % 2 == 0, row * 4 + col


def spread_arrivals_to_warpgroup(thread_idx_in_warpgroup: int, warp_idx: int) -> tuple[bool, int]:
    """``detail::spread_arrivals_to_warpgroup``: every 8th thread signals one of 16 CTAs; the 4x4 grid
    (warp % 4, (thread / 8) % 4) row-major, through ``Swizzle<2,0,-2>`` (x ^ ((x & 3) << 2))."""
    row, col = warp_idx % 4, (thread_idx_in_warpgroup // 8) % 4
    x = row * 4 + col
    return thread_idx_in_warpgroup % 8 == 0, x ^ ((x & 3) << 2)


class _SharedStorage(_Templated):
    """``SharedStorage``: ``full_barrier_[Stages]`` then ``empty_barrier_[Stages]`` in shared memory."""

    full_type, empty_type = ClusterTransactionBarrier, ClusterBarrier

    def __init__(self):
        self.full_barrier_ = [self.full_type() for _ in range(self.Stages)]
        self.empty_barrier_ = [self.empty_type() for _ in range(self.Stages)]


class _Pipeline(_Templated):
    """What the full/empty-barrier pipelines share: Stages, role checks, waits, misuse bookkeeping."""

    ThreadCategory = ThreadCategory
    _storage = _SharedStorage

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if cls.Stages is not None:  # PipelineX[n]: its PipelineState and SharedStorage
            cls.PipelineState = PipelineState[cls.Stages]
            cls.SharedStorage = _specialize(cls._storage, cls.Stages)

    def _setup(self, storage, params, threads, default_threads):
        if self.Stages is None:
            raise TypeError(f"{type(self).__name__} needs its Stages: {type(self).__name__}[Stages](...)")
        self.params_ = params
        self.threads = tuple(default_threads if threads is None else threads)
        self.full_barrier_ptr_, self.empty_barrier_ptr_ = storage.full_barrier_, storage.empty_barrier_
        self._waited, self._acquired, self._seen = Counter(), set(), {}
        if not self.threads:
            raise BarrierError(f"{type(self).__name__}: a pipeline object stands for at least one thread")

    def _check(self, want: str, what: str) -> None:
        ok = _is_producer(self.params_.role) if want == "producer" else _is_consumer(self.params_.role)
        if not ok:
            raise BarrierError(f"{what} by a {self.params_.role.name} pipeline object: only {want} threads may call "
                               "it (CUTLASS traps with brkpt here in debug builds)")

    def producer_get_barrier(self, state):
        """The full barrier's shared slot of the state's stage (``ProducerBarrierType*``: give it to the TMA)."""
        return self.full_barrier_ptr_[_stage(state)].barrier_

    def producer_try_acquire(self, state, skip_wait: bool = False) -> ProducerToken:
        self._check("producer", "producer_try_acquire")
        if skip_wait:
            return ProducerToken(BarrierStatus.WaitDone)
        return ProducerToken(_producer_wait(self.empty_barrier_ptr_[state.index()], state.phase()))

    def _producer_acquire(self, state, token) -> None:
        self._check("producer", "producer_acquire")
        if token is None or token == BarrierStatus.WaitAgain:
            _producer_wait(self.empty_barrier_ptr_[state.index()], state.phase())
        self._acquired.add(state.index())

    def _producer_committed(self, state, what: str = "producer_commit") -> None:
        self._check("producer", what)
        if state.index() not in self._acquired:
            raise BarrierError(f"{what} of stage {state.index()} (phase {state.phase()}), which this producer has "
                               "not acquired: call producer_acquire(state) first (the consumers may still be reading "
                               "that stage)")
        self._acquired.discard(state.index())

    def consumer_try_wait(self, state, skip_wait: bool = False) -> ConsumerToken:
        self._check("consumer", "consumer_try_wait")
        if skip_wait:
            return ConsumerToken(BarrierStatus.WaitDone)
        return ConsumerToken(self.full_barrier_ptr_[state.index()].try_wait(state.phase()))

    def consumer_test_wait(self, state, skip_wait: bool = False) -> ConsumerToken:
        self._check("consumer", "consumer_test_wait")
        if skip_wait:
            return ConsumerToken(BarrierStatus.WaitDone)
        return ConsumerToken(self.full_barrier_ptr_[state.index()].test_wait(state.phase()))

    def consumer_wait(self, state, barrier_token=None) -> None:
        """Wait until the stage's full barrier completed the state's phase (skipped with a ``WaitDone`` token)."""
        self._check("consumer", "consumer_wait")
        if barrier_token is None or barrier_token == BarrierStatus.WaitAgain:
            self._full_wait(state)
        self._waited[state.index()] += 1

    def _full_wait(self, state) -> None:
        """The full-barrier wait; the stale-phase check is per pipeline object (several consumer warpgroups of a
        CTA legitimately wait on the same phase), not per CTA as for a bare ``wait_barrier``."""
        bar = self.full_barrier_ptr_[state.index()]
        cta = current_cta()
        b = cta.barrier(barrier_address(cta, bar.barrier_))
        b.last_waited.pop(cta.rank, None)
        bar.wait(state.phase())
        seen = b.phase - 1
        if self._seen.get(state.index()) == seen:
            warnings.warn(f"{cta.label}: consumer_wait on stage {state.index()} with phase {state.phase()} returned on "
                          f"phase {seen} of {b.name}, which this consumer already waited for: advance the "
                          "PipelineState after each stage", StalePhaseWarning, stacklevel=4)
        self._seen[state.index()] = seen

    def _consumer_released(self, state) -> None:
        self._check("consumer", "consumer_release")
        s = _stage(state)
        if self._waited[s] == 0:
            raise BarrierError(f"consumer_release of stage {s}, which this consumer object has not waited for since "
                               "its last release (released twice?): the extra arrivals on the empty barrier would let "
                               "the producer overwrite a stage still in use or complete a later phase early")
        self._waited[s] -= 1

    def producer_tail(self, state) -> None:
        """Wait for the consumers to release every stage, so no arrivals reach a CTA that exited."""
        self._check("producer", "producer_tail")
        state = state.copy()
        for _ in range(self.Stages):
            _producer_wait(self.empty_barrier_ptr_[state.index()], state.phase())
            state.increment()


def _stage(state) -> int:
    return state if isinstance(state, int) else state.index()


def _producer_wait(bar: ClusterBarrier, phase: int) -> bool:
    """An empty-barrier wait. Parity 1 while the barrier is in phase 0 returns at once on hardware (the phase before
    phase 0 counts as complete): that is the producer's start state, so peers' early arrivals are no hazard here."""
    cta = current_cta()
    b = cta.barrier(barrier_address(cta, bar.barrier_))
    if b.live and phase & 1 and b.phase == 0:
        return True
    wait_barrier(bar.barrier_, phase & 1)
    return True


@dataclasses.dataclass
class _TmaParams:
    """``PipelineTmaAsync::Params``; ``num_consumers`` counts consumer threads per CTA."""

    transaction_bytes: int = 0
    role: ThreadCategory = ThreadCategory.NonParticipant
    is_leader: int = 0
    num_consumers: int = 0
    num_producers: int = 1
    initializing_warp: int = 0


class PipelineTmaAsync(_Pipeline):
    """``PipelineTmaAsync<Stages>``: TMA loads fill stages (full barrier: the producer leader's ``arrive_and_expect_tx``
    plus the TMA bytes), consumers free them (empty barrier: one arrival per consumer warpgroup from every CTA in
    the same cluster row or column, since multicast loads write those CTAs' stages; every consumer thread's arrival
    on a lone CTA).

    ``PipelineTmaAsync[S](storage, params, cluster_shape, init_barriers=True, init_masks=True, threads=None)``;
    ``threads`` defaults to the first ``min(num_consumers, 128)`` threads for a consumer role, warp 0 otherwise.
    """

    Params = _TmaParams

    def __init__(self, storage, params, cluster_shape, init_barriers=True, init_masks=True, threads=None):
        n = params.num_consumers
        default = range(min(n, NumThreadsPerWarpGroup) if _is_consumer(params.role) and n else NumThreadsPerWarp)
        self._setup(storage, params, threads, default)
        self.cluster_shape = _dims(cluster_shape)
        if init_barriers:
            self.init_barriers(storage, params, cluster_shape, threads=self.threads)
        self._signals = Counter()  # dst rank -> arrivals this object's consumer_release makes there
        if init_masks:
            self._signals = self._arrivals()

    @classmethod
    def init_barriers(cls, storage, params, cluster_shape, threads=range(NumThreadsPerWarp)) -> None:
        """Init full barriers to ``num_producers`` and empty barriers to the consumer arrival count (when
        ``threads`` hold ``initializing_warp``), then ``fence_barrier_init``."""
        if params.initializing_warp in {t // NumThreadsPerWarp for t in threads}:
            cx, cy, cz = _dims(cluster_shape)
            consumers = params.num_consumers
            if cx * cy * cz > 1:
                consumers = (cx + cy - 1) * -(-params.num_consumers // NumThreadsPerWarpGroup)
            if consumers <= 0 or params.num_producers <= 0:
                raise BarrierError(f"PipelineTmaAsync: arrival counts must be non-zero (num_consumers "
                                   f"{params.num_consumers}, num_producers {params.num_producers})")
            for full, empty in zip(storage.full_barrier_, storage.empty_barrier_):
                full.init(params.num_producers)
                empty.init(consumers)
        fence_barrier_init()

    def _arrivals(self) -> Counter:
        """CUTLASS's ``is_signaling_thread`` / ``dst_blockid`` of each thread, summed per destination rank."""
        cx, cy, cz = self.cluster_shape
        size, n = cx * cy * cz, self.params_.num_consumers
        if size == 1:
            return Counter({0: len(self.threads)})
        out = Counter()
        if n % NumThreadsPerWarpGroup == 0:
            spread = [spread_arrivals_to_warpgroup(t % NumThreadsPerWarpGroup, t // NumThreadsPerWarp)
                      for t in self.threads]
        elif n == NumThreadsPerWarp:
            spread = [spread_arrivals_to_warp(t % NumThreadsPerWarp) for t in self.threads]
        else:
            if _is_consumer(self.params_.role):
                raise BarrierError(f"PipelineTmaAsync in a cluster of {size}: num_consumers {n} must be 32 or a "
                                   "multiple of 128 (CUTLASS traps here in debug builds and never releases stages)")
            return out
        me = block_id_in_cluster()
        for signaling, dst in spread:
            if signaling and dst < size and (dst % cx == me.x or dst // cx == me.y):
                out[dst] += 1
        return out

    def producer_acquire(self, state, barrier_token=None) -> None:
        """Wait for the stage to be empty; the leader then arrives on its full barrier expecting
        ``transaction_bytes``."""
        self._producer_acquire(state, barrier_token)
        if self.params_.is_leader:
            self.full_barrier_ptr_[state.index()].arrive_and_expect_tx(self.params_.transaction_bytes)

    def producer_expect_transaction(self, state, transaction_bytes: int) -> None:
        self._check("producer", "producer_expect_transaction")
        if self.params_.is_leader:
            self.full_barrier_ptr_[state.index()].expect_transaction(transaction_bytes)

    def producer_commit(self, state, bytes_or_arrive_op=0) -> None:
        """A no-op on hardware (the TMA completes the bytes); with a callable, calls it with the full barrier."""
        self._producer_committed(state)
        if callable(bytes_or_arrive_op):
            bytes_or_arrive_op(self.producer_get_barrier(state))

    def consumer_release(self, state) -> None:
        """Each signaling thread arrives on the empty barrier of its destination CTA."""
        self._consumer_released(state)
        for dst, k in sorted(self._signals.items()):
            self.empty_barrier_ptr_[_stage(state)].arrive(dst, True, count=k)


__all__ = ["BarrierStatus", "ClusterBarrier", "ClusterTransactionBarrier", "ConsumerToken", "PipelineState",
           "PipelineTmaAsync", "ProducerToken", "ThreadCategory", "make_producer_start_state",
           "spread_arrivals_to_warp", "spread_arrivals_to_warpgroup"]
