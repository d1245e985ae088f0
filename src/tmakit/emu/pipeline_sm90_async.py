"""CUTLASS's ``PipelineAsync``, ``PipelineTransactionAsync`` and ``PipelineTmaStore`` on the emulator (the role
convention of pipeline_sm90: an object stands for the threads ``threads``; docs/EMULATOR.md, "CUTLASS pipelines")."""

from __future__ import annotations

import dataclasses

from .device_info import block_rank_in_cluster
from .device_sync import fence_barrier_init
from .device_tma import tma_store_arrive, tma_store_wait
from .errors import BarrierError
from .pipeline_sm90 import NumThreadsPerWarp, ThreadCategory, _is_consumer, _Pipeline, _SharedStorage, _stage
from .pipeline_sm90_barrier import ClusterBarrier
from .pipeline_sm90_state import BarrierStatus, PipelineState, _specialize, _Templated


@dataclasses.dataclass
class _AsyncParams:
    """``PipelineAsync::Params``; ``dst_blockid`` None means this CTA (``block_rank_in_cluster()``)."""

    role: ThreadCategory = ThreadCategory.NonParticipant
    producer_arv_count: int = 1
    consumer_arv_count: int = 1
    dst_blockid: int | None = None
    initializing_warp: int = 0


@dataclasses.dataclass
class _TransactionParams(_AsyncParams):
    transaction_bytes: int = 0


class _AsyncStorage(_SharedStorage):
    full_type = ClusterBarrier


class PipelineAsync(_Pipeline):
    """``PipelineAsync<Stages>``: plain arrivals both ways; every producer thread arrives on the full barrier at
    ``producer_commit``, every consumer thread on the empty barrier of ``dst_blockid`` at ``consumer_release``.

    ``PipelineAsync[S](storage, params=Params(), init_barriers=True, threads=None)``; ``threads`` defaults to the
    first ``consumer_arv_count`` threads for a consumer role, ``producer_arv_count`` for a producer.
    """

    Params = _AsyncParams
    _storage = _AsyncStorage

    def __init__(self, storage, params=None, init_barriers=True, threads=None):
        params = dataclasses.replace(params or self.Params())
        if params.dst_blockid is None:
            params.dst_blockid = block_rank_in_cluster()
        n = params.consumer_arv_count if _is_consumer(params.role) else params.producer_arv_count
        self._setup(storage, params, threads, range(n))
        if init_barriers:
            self.init_barriers(storage, params, threads=self.threads)

    @classmethod
    def init_barriers(cls, storage, params, threads=range(NumThreadsPerWarp)) -> None:
        if params.initializing_warp in {t // NumThreadsPerWarp for t in threads}:
            if params.producer_arv_count <= 0 or params.consumer_arv_count <= 0:
                raise BarrierError(f"{cls.__name__}: arrival counts must be non-zero")
            for full, empty in zip(storage.full_barrier_, storage.empty_barrier_):
                full.init(params.producer_arv_count)
                empty.init(params.consumer_arv_count)
        fence_barrier_init()

    def producer_acquire(self, state, barrier_token=None) -> None:
        self._producer_acquire(state, barrier_token)

    def producer_commit(self, state, user_defined_arrive_op=None) -> None:
        """Every thread of the object arrives on the stage's full barrier (after ``user_defined_arrive_op``)."""
        self._producer_committed(state)
        if user_defined_arrive_op is not None:
            user_defined_arrive_op(self.producer_get_barrier(state))
        self.full_barrier_ptr_[state.index()].arrive(count=len(self.threads))

    def consumer_wait(self, state, barrier_token=None) -> None:
        if barrier_token is None and self.full_barrier_ptr_[state.index()].test_wait(state.phase()):
            barrier_token = BarrierStatus.WaitDone
        super().consumer_wait(state, barrier_token)

    def consumer_release(self, state) -> None:
        self._consumer_released(state)
        self.empty_barrier_ptr_[_stage(state)].arrive(self.params_.dst_blockid, True, count=len(self.threads))

    def producer_tail(self, state) -> None:
        """``producer_acquire`` on each of the next Stages stages."""
        state = state.copy()
        for _ in range(self.Stages):
            self.producer_acquire(state)
            state.increment()


class PipelineTransactionAsync(PipelineAsync):
    """``PipelineTransactionAsync<Stages>``: a :class:`PipelineAsync` whose full barriers also count bytes:
    ``producer_expect_transaction`` (each thread of the object announces ``transaction_bytes``), then the
    producer's arrivals at ``producer_commit`` go to ``dst_blockid``."""

    Params = _TransactionParams
    _storage = _SharedStorage

    def consumer_wait(self, state, barrier_token=None) -> None:
        _Pipeline.consumer_wait(self, state, barrier_token)

    def producer_expect_transaction(self, state) -> None:
        self._check("producer", "producer_expect_transaction")
        for _ in self.threads:
            self.full_barrier_ptr_[state.index()].expect_transaction(self.params_.transaction_bytes)

    def producer_commit(self, state) -> None:
        self._producer_committed(state)
        self.full_barrier_ptr_[state.index()].arrive(self.params_.dst_blockid, True, count=len(self.threads))


@dataclasses.dataclass
class _StoreParams:
    always_wait: bool = False


class PipelineTmaStore(_Templated):
    """``PipelineTmaStore<Stages, UnacquiredStages = Stages - 1>``: shared buffers of TMA stores reused in turn.
    ``producer_acquire`` waits (``tma_store_wait<UnacquiredStages>``) once more than UnacquiredStages stores were
    committed; ``producer_commit`` is ``tma_store_arrive``; ``producer_tail`` waits for all."""

    Params = _StoreParams
    UnacquiredStages: int | None = None

    @classmethod
    def __class_getitem__(cls, args):
        stages, unacquired = (args if isinstance(args, tuple) else (args, None))
        sub = _specialize(cls, stages)
        if unacquired is None:
            unacquired = max(stages - 1, 0)
        if not isinstance(unacquired, int) or unacquired < 0:
            raise TypeError(f"PipelineTmaStore[Stages, UnacquiredStages]: UnacquiredStages {unacquired!r} < 0")
        return _store_variant(sub, unacquired)

    def __init__(self, params=None):
        if self.Stages is None:
            raise TypeError("PipelineTmaStore needs its Stages: PipelineTmaStore[Stages](params)")
        self.params_ = params or self.Params()

    def producer_acquire(self, state) -> None:
        if self.Stages == 0:
            raise TypeError("It is never valid to call PipelineTmaStore<0>::producer_acquire")
        if self.params_.always_wait or state.count() > self.UnacquiredStages:
            tma_store_wait(self.UnacquiredStages)

    def producer_commit(self, state) -> None:
        tma_store_arrive()

    def producer_tail(self, state) -> None:
        tma_store_wait(0)


_STORE_VARIANTS: dict = {}


def _store_variant(sub, unacquired: int):
    key = (sub, unacquired)
    if key not in _STORE_VARIANTS:
        _STORE_VARIANTS[key] = type(f"PipelineTmaStore<{sub.Stages}, {unacquired}>", (sub,),
                                    {"UnacquiredStages": unacquired, "__module__": sub.__module__,
                                     "PipelineState": PipelineState[sub.Stages]})
    return _STORE_VARIANTS[key]
