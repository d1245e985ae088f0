"""CUTLASS's SM100 pipelines (cutlass/pipeline/sm100_pipeline.hpp) on the emulator: ``PipelineTmaUmmaAsync`` (TMA
producer, UMMA consumer), ``PipelineUmmaAsync`` (UMMA producer, e.g. an epilogue reading TMEM accumulators) and
``PipelineUmmaConsumerAsync`` (any producer, UMMA consumer), with ``McastDirection`` and the mask helpers.

The role convention is pipeline_sm90's (docs/EMULATOR.md, "CUTLASS pipelines"): an object stands for the threads
``threads`` of one role group. The UMMA side's arrivals are ``tcgen05.commit`` (device_tcgen05's ``umma_arrive*``):
one elected thread commits, so such a call makes one arrival per target CTA, delivered once this CTA's MMAs issued
so far have completed. ``Cls[Stages, ClusterShape, AtomThrShape_MNK]`` as in C++ (the last two may be left out;
``AtomThrShape_MNK`` (2, 1, 1) selects the 2-SM forms).
"""

from __future__ import annotations

import enum
import functools
from collections import Counter

from .device_info import block_id_in_cluster, block_rank_in_cluster
from .device_sync import fence_barrier_init
from .device_tcgen05 import umma_arrive, umma_arrive_multicast, umma_arrive_multicast_2x1SM
from .errors import BarrierError
from .pipeline_sm90 import NumThreadsPerWarp, PipelineTmaAsync, ThreadCategory, _dims, _stage
from .pipeline_sm90_async import PipelineAsync
from .pipeline_sm90_state import _specialize


class McastDirection(enum.Enum):
    """``cutlass::McastDirection``: which CTAs of the cluster a multicast load reaches."""

    kRow = 0
    kCol = 1
    kRowCol = 2


def _atom(atom_thr_shape) -> tuple[int, int, int]:
    return _dims((1, 1, 1) if atom_thr_shape is None else atom_thr_shape)


def calculate_multicast_mask(mcast_dir, cluster_shape, atom_thr_shape, block_id_in_cluster) -> int:
    """``detail::calculate_multicast_mask<McastDir>``: bit ``x + y * cluster_x`` for each CTA in this CTA's MMA
    column (same ``x / atom_x``, kRow), MMA row (same ``y / atom_y``, kCol), or either (kRowCol)."""
    (cx, cy, _), (ax, ay, _) = _dims(cluster_shape), _atom(atom_thr_shape)
    me = _dims(block_id_in_cluster)
    mask = 0
    for x in range(cx):
        for y in range(cy):
            same_x, same_y = x // ax == me[0] // ax, y // ay == me[1] // ay
            hit = {McastDirection.kRowCol: same_x or same_y, McastDirection.kRow: same_x,
                   McastDirection.kCol: same_y}[McastDirection(mcast_dir)]
            if hit:
                mask |= 1 << (x + y * cx)
    return mask


def calculate_umma_peer_mask(cluster_shape, atom_thr_shape, block_id_in_cluster) -> int:
    """``detail::calculate_umma_peer_mask``: the CTAs of this CTA's MMA atom (its 2-SM pair for (2, 1, 1))."""
    (cx, _, _), (ax, ay, _) = _dims(cluster_shape), _atom(atom_thr_shape)
    me = _dims(block_id_in_cluster)
    x0, y0 = me[0] // ax * ax, me[1] // ay * ay
    return sum(1 << (x0 + x + (y0 + y) * cx) for x in range(ax) for y in range(ay))


class _Sm100:
    """``Cls[Stages, ClusterShape=None, AtomThrShape_MNK=(1, 1, 1)]``: cached subclasses carrying those."""

    ClusterShape = None
    AtomThrShape_MNK = (1, 1, 1)

    @classmethod
    def __class_getitem__(cls, args):
        args = args if isinstance(args, tuple) else (args,)
        if not 1 <= len(args) <= cls._n_args:
            raise TypeError(f"{cls.__name__}[{', '.join(cls._arg_names)}]: got {len(args)} arguments")
        return _sm100_variant(cls, *args)

    @classmethod
    def _is_2sm(cls) -> bool:
        a = _atom(cls.AtomThrShape_MNK)
        return a[0] * a[1] * a[2] > 1


@functools.cache
def _sm100_variant(cls, stages, *rest):
    sub = _specialize(cls, stages)
    if not rest:
        return sub
    names = cls._arg_names[1:]
    attrs = {k: (tuple(v) if isinstance(v, list) else v) for k, v in zip(names, rest)}
    if "AtomThrShape_MNK" in attrs:
        attrs["AtomThrShape_MNK"] = _atom(attrs["AtomThrShape_MNK"])
    label = ", ".join(str(v) for v in (stages, *rest))
    return type(f"{cls.__name__}<{label}>", (sub,), {**attrs, "__doc__": cls.__doc__, "__module__": cls.__module__})


class PipelineTmaUmmaAsync(_Sm100, PipelineTmaAsync):
    """``PipelineTmaUmmaAsync<Stages, ClusterShape, AtomThrShape_MNK>``: TMA loads fill stages as in
    ``PipelineTmaAsync`` (full barriers count one arrival: the leader's ``expect_tx``); the UMMA consumer frees a
    stage with one ``tcgen05.commit`` multicast to every CTA its loads' multicasts reach (``umma_arrive`` on a lone
    CTA, ``umma_arrive_multicast_2x1SM`` for 2-SM atoms), so the producer refills it only after the MMAs read it.

    ``PipelineTmaUmmaAsync[S](storage, params, cluster_shape[, mcast_direction], init_barriers=True,
    init_masks=True, threads=None)``; ``threads`` defaults to warp 0 (producer) or warp 1 (the MMA warp)."""

    _n_args, _arg_names = 3, ("Stages", "ClusterShape", "AtomThrShape_MNK")
    McastDirection = McastDirection

    def __init__(self, storage, params, cluster_shape, mcast_direction=None, init_barriers=True, init_masks=True,
                 threads=None):
        if isinstance(mcast_direction, bool):  # (storage, params, shape, InitBarriers, InitMasks) as in C++
            mcast_direction, init_barriers, init_masks = None, mcast_direction, init_barriers
        default = range(NumThreadsPerWarp, 2 * NumThreadsPerWarp) if params.role == ThreadCategory.Consumer \
            else range(NumThreadsPerWarp)
        self._setup(storage, params, threads, default)
        self.cluster_shape = _dims(cluster_shape)
        self.mcast_direction = mcast_direction
        if init_barriers:
            self.init_barriers(storage, params, cluster_shape, mcast_direction, threads=self.threads)
        self.block_id_mask_ = 0
        if init_masks:
            self.init_masks(cluster_shape, mcast_direction)

    @classmethod
    def init_barriers(cls, storage, params, cluster_shape, mcast_direction=None,
                      threads=range(NumThreadsPerWarp)) -> None:
        """Full barriers count 1, empty barriers the CTAs whose commits free a stage here:
        ``cluster_x / atom_x + cluster_y / atom_y - 1`` (``cluster_y / atom_y`` for kRow, ``cluster_x / atom_x``
        for kCol); then ``fence_barrier_init``."""
        (cx, cy, _), (ax, ay, _) = _dims(cluster_shape), _atom(cls.AtomThrShape_MNK)
        if mcast_direction is None:
            consumers = cx // ax + cy // ay - 1
        elif McastDirection(mcast_direction) == McastDirection.kRow:
            consumers = cy // ay
        else:
            consumers = cx // ax
        if params.initializing_warp in {t // NumThreadsPerWarp for t in threads} and consumers <= 0:
            raise BarrierError(f"{cls.__name__}: multicast consumer arrival count {consumers} must be non-zero "
                               f"(cluster {(cx, cy)}, AtomThrShape_MNK {(ax, ay)})")
        _init_pairs(storage, params, threads, 1, consumers)

    def init_masks(self, cluster_shape, mcast_direction=None, block_id=None) -> None:
        """The consumer's commit mask: its MMA row and column (kRowCol), or the given direction's CTAs."""
        me = block_id_in_cluster() if block_id is None else block_id
        if mcast_direction is None:
            if self.params_.role == ThreadCategory.Consumer:
                self.block_id_mask_ = calculate_multicast_mask(McastDirection.kRowCol, cluster_shape,
                                                               self.AtomThrShape_MNK, me)
        else:
            d = McastDirection.kRow if McastDirection(mcast_direction) == McastDirection.kRow else McastDirection.kCol
            self.block_id_mask_ = calculate_multicast_mask(d, cluster_shape, self.AtomThrShape_MNK, me)

    def _arrivals(self) -> Counter:
        mask = self.block_id_mask_
        return Counter({r: 1 for r in range(16) if mask >> r & 1})

    def consumer_release(self, state) -> None:
        """``tcgen05.commit`` onto the stage's empty barrier: here (a static one-CTA ClusterShape), else multicast to
        ``block_id_mask_`` (``cta_group::2`` for 2-SM atoms)."""
        self._consumer_released(state)
        bar = self.empty_barrier_ptr_[_stage(state)].barrier_
        if self._is_2sm():
            umma_arrive_multicast_2x1SM(bar, self.block_id_mask_)
        elif _static_one(self.ClusterShape):
            umma_arrive(bar)
        else:
            if not self.block_id_mask_:
                raise BarrierError("PipelineTmaUmmaAsync.consumer_release: the commit mask is empty (init_masks=False "
                                   "and init_masks() never called, or not a Consumer object): no CTA would be freed")
            umma_arrive_multicast(bar, self.block_id_mask_)


def _static_one(shape) -> bool:
    return shape is not None and all(isinstance(v, int) for v in _dims(shape)) and _dims(shape) == (1, 1, 1)


def _init_pairs(storage, params, threads, full_count: int, empty_count: int) -> None:
    if params.initializing_warp in {t // NumThreadsPerWarp for t in threads}:
        for full, empty in zip(storage.full_barrier_, storage.empty_barrier_):
            full.init(full_count)
            empty.init(empty_count)
    fence_barrier_init()


class _UmmaAsyncBase(_Sm100, PipelineAsync):
    """``PipelineAsync``-based SM100 pipelines: ``Cls[Stages, AtomThrShape_MNK]``, the 2-SM peer mask."""

    _n_args, _arg_names = 2, ("Stages", "AtomThrShape_MNK")
    _mask_role = ThreadCategory.Producer

    def __init__(self, storage, params, cluster_shape, init_barriers=True, init_masks=True, threads=None):
        super().__init__(storage, params, init_barriers, threads)
        self.tmem_sync_mask_ = 0
        if init_masks:
            self.init_masks(cluster_shape)

    def init_masks(self, cluster_shape, block_id=None) -> None:
        """``tmem_sync_mask_``: the CTAs of this CTA's MMA atom (only for the UMMA-side role)."""
        if self.params_.role == self._mask_role:
            me = block_id_in_cluster() if block_id is None else block_id
            self.tmem_sync_mask_ = calculate_umma_peer_mask(cluster_shape, self.AtomThrShape_MNK, me)

    def _arrive_2x1sm_sm0(self, barrier) -> None:
        """``umma_arrive_2x1SM_sm0``: every thread of the object arrives on the barrier of the pair's even CTA."""
        barrier.arrive(block_rank_in_cluster() & ~1, True, count=len(self.threads))

    def _umma_commit(self, barrier) -> None:
        if self._is_2sm():
            if not self.tmem_sync_mask_:
                raise BarrierError(f"{type(self).__name__}: tmem_sync_mask_ is empty (init_masks not run for the "
                                   f"{self._mask_role.name} role): the 2-SM commit would signal no CTA")
            umma_arrive_multicast_2x1SM(barrier.barrier_, self.tmem_sync_mask_)
        else:
            umma_arrive(barrier.barrier_)


class PipelineUmmaAsync(_UmmaAsyncBase):
    """``PipelineUmmaAsync<Stages, AtomThrShape_MNK>``: the MMA warp produces (``producer_commit`` is a
    ``tcgen05.commit`` onto the full barrier: ``umma_arrive``, or ``umma_arrive_multicast_2x1SM`` to both CTAs of
    the pair), consumers (e.g. the epilogue reading TMEM) release with ``PipelineAsync`` arrivals (2-SM: every
    thread on the even CTA's empty barrier). Params are ``PipelineAsync``'s: the full barrier counts 1 commit."""

    _mask_role = ThreadCategory.Producer

    def producer_commit(self, state) -> None:
        self._producer_committed(state)
        self._umma_commit(self.full_barrier_ptr_[_stage(state)])

    def consumer_release(self, state) -> None:
        if self._is_2sm():
            self._consumer_released(state)
            self._arrive_2x1sm_sm0(self.empty_barrier_ptr_[_stage(state)])
        else:
            super().consumer_release(state)


class PipelineUmmaConsumerAsync(_UmmaAsyncBase):
    """``PipelineUmmaConsumerAsync<Stages, AtomThrShape_MNK>``: any producer (``PipelineAsync`` arrivals, or every
    thread on the even CTA's full barrier for 2-SM), a UMMA consumer that releases with a ``tcgen05.commit`` onto
    the empty barrier (``umma_arrive``, or ``umma_arrive_multicast_2x1SM`` to the pair)."""

    _mask_role = ThreadCategory.Consumer

    def producer_commit(self, state, user_defined_arrive_op=None) -> None:
        if user_defined_arrive_op is not None:
            user_defined_arrive_op(self.producer_get_barrier(state))
        if self._is_2sm():
            self._producer_committed(state)
            self._arrive_2x1sm_sm0(self.full_barrier_ptr_[_stage(state)])
        else:
            super().producer_commit(state)

    def producer_commit_local(self, state, user_defined_arrive_op=None) -> None:
        """``PipelineAsync::producer_commit``: every thread arrives on this CTA's full barrier."""
        if user_defined_arrive_op is not None:
            user_defined_arrive_op(self.producer_get_barrier(state))
        super().producer_commit(state)

    def consumer_release(self, state) -> None:
        self._consumer_released(state)
        self._umma_commit(self.empty_barrier_ptr_[_stage(state)])


__all__ = ["McastDirection", "PipelineTmaUmmaAsync", "PipelineUmmaAsync", "PipelineUmmaConsumerAsync",
           "calculate_multicast_mask", "calculate_umma_peer_mask"]
