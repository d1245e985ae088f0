"""CUTLASS's SM100 pipelines on the emulator (tmakit.emu.pipeline_sm100*): multicast masks, stage ordering with
tcgen05.commit releases across clusters, empty-barrier arrival counts (row/column, McastDirection, 2-SM atoms),
misuse reports, OrderedSequenceBarrier, and the TMA -> UMMA example end to end."""

import importlib.util
import pathlib

import numpy as np
import pytest

from tmakit import emu
from tmakit.emu.device_smem import barrier_address
from tmakit.emu.pipeline_sm100 import McastDirection, calculate_multicast_mask, calculate_umma_peer_mask
from tmakit.emu.scheduler import current_cta

Role = emu.PipelineTmaUmmaAsync.ThreadCategory


def _mbarrier(bar):
    cta = current_cta()
    return cta.barrier(barrier_address(cta, bar.barrier_))


def bits(mask):
    return {r for r in range(16) if mask >> r & 1}


# --- masks ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("cluster,atom", [((4, 4, 1), (1, 1, 1)), ((4, 2, 1), (2, 1, 1)), ((2, 3, 1), (1, 1, 1))])
def test_multicast_masks_by_brute_force(cluster, atom):
    cx, cy, _ = cluster
    ax, ay, _ = atom
    for x in range(cx):
        for y in range(cy):
            me = (x, y, 0)
            col = {i + j * cx for i in range(cx) for j in range(cy) if i // ax == x // ax}
            row = {i + j * cx for i in range(cx) for j in range(cy) if j // ay == y // ay}
            assert bits(calculate_multicast_mask(McastDirection.kRow, cluster, atom, me)) == col
            assert bits(calculate_multicast_mask(McastDirection.kCol, cluster, atom, me)) == row
            assert bits(calculate_multicast_mask(McastDirection.kRowCol, cluster, atom, me)) == row | col
            peers = bits(calculate_umma_peer_mask(cluster, atom, me))
            assert x + y * cx in peers and len(peers) == ax * ay


def test_templates_and_types():
    p = emu.PipelineTmaUmmaAsync[4]
    assert p.PipelineState is emu.PipelineState[4] and p.Stages == 4 and not p._is_2sm()
    q = emu.PipelineTmaUmmaAsync[4, (2, 2, 1), (2, 1, 1)]
    assert q._is_2sm() and q is emu.PipelineTmaUmmaAsync[4, (2, 2, 1), (2, 1, 1)]
    assert emu.PipelineUmmaAsync[2, (2, 1, 1)]._is_2sm() and not emu.PipelineUmmaConsumerAsync[2]._is_2sm()
    assert emu.make_producer_start_state(q).phase() == 1
    with pytest.raises(TypeError):
        emu.PipelineUmmaAsync[2, (1, 1, 1), 3]  # Stages, AtomThrShape_MNK only


# --- PipelineTmaUmmaAsync: bytes completed by hand, releases are tcgen05.commit (no MMAs: they arrive at once) ----

def _tma_umma_kernel(stages, iters, log, *, mcast=None, release=True, atom=(1, 1, 1), twice=False):
    pipe_t = emu.PipelineTmaUmmaAsync[stages, None, atom]
    storage = pipe_t.SharedStorage()
    shape = emu.cluster_shape()
    me, rank = emu.block_id_in_cluster(), emu.block_rank_in_cluster()
    P = pipe_t.Params  # noqa: N806
    args = () if mcast is None else (mcast,)
    producer = pipe_t(storage, P(64, Role.Producer, is_leader=1), shape, *args)
    mma = pipe_t(storage, P(role=Role.Consumer), shape, *args)
    log.setdefault("empty_count", {})[rank] = _mbarrier(storage.empty_barrier_[0]).count
    log.setdefault("full_count", {})[rank] = _mbarrier(storage.full_barrier_[0]).count
    log.setdefault("mask", {})[rank] = mma.block_id_mask_
    emu.cluster_sync()
    write, read = emu.make_producer_start_state(pipe_t), pipe_t.PipelineState()
    leader = atom[0] == 1 or me.x % 2 == 0

    def produce():
        producer.producer_acquire(write)
        emu.ClusterTransactionBarrier(producer.producer_get_barrier(write)).complete_transaction(64)
        producer.producer_commit(write, 64)
        write.increment()

    loaded = 0
    while loaded < min(stages, iters):
        produce()
        loaded += 1
    for i in range(iters):
        mma.consumer_wait(read)
        log.setdefault(rank, []).append((i, read.index(), read.phase()))
        if release and leader:
            mma.consumer_release(read)
            if twice:
                mma.consumer_release(read)
        read.increment()
        if loaded < iters:
            produce()
            loaded += 1
    producer.producer_tail(write)
    emu.cluster_sync()


def _run(cluster, stages, iters, **kw):
    log = {}
    emu.launch(_tma_umma_kernel, cluster, cluster + (1,), stages, iters, log, **kw)
    return log


@pytest.mark.parametrize("stages", [1, 2, 4])
@pytest.mark.parametrize("cluster", [(1, 1), (2, 1), (1, 2), (2, 2), (4, 2)])
def test_tma_umma_orders_stages_and_counts_row_and_column(stages, cluster):
    iters = 3 * stages + 2
    log = _run(cluster, stages, iters)
    cx, cy = cluster
    for r in range(cx * cy):
        assert log[r] == [(i, i % stages, (i // stages) & 1) for i in range(iters)]
        assert log["empty_count"][r] == cx + cy - 1 and log["full_count"][r] == 1
        x, y = r % cx, r // cx
        assert log["mask"][r] == sum(1 << d for d in range(cx * cy) if d % cx == x or d // cx == y)


@pytest.mark.parametrize("mcast,count", [(McastDirection.kRow, 2), (McastDirection.kCol, 4)])
def test_tma_umma_mcast_direction(mcast, count):
    log = _run((4, 2), 2, 5, mcast=mcast)
    assert set(log["empty_count"].values()) == {count}
    for r in range(8):
        x, y = r % 4, r // 4
        want = [d for d in range(8) if (d % 4 == x if mcast == McastDirection.kRow else d // 4 == y)]
        assert log["mask"][r] == sum(1 << d for d in want) and len(log[r]) == 5


def test_tma_umma_2sm_atoms_count_mma_rows_and_columns():
    log = _run((4, 2), 2, 6, atom=(2, 1, 1))  # only the even CTA of each pair releases (commits to the pair too)
    assert set(log["empty_count"].values()) == {4 // 2 + 2 - 1}
    assert log["mask"][0] == 0b00110011 | 0b00001111
    assert all(len(log[r]) == 6 for r in range(8))


def test_tma_umma_missing_release_hangs_the_peers():
    with pytest.raises(emu.Deadlock, match="arrival"):
        _run((2, 1), 2, 5, release=False)


def test_tma_umma_release_twice_and_wrong_roles():
    with pytest.raises(emu.BarrierError, match="released twice"):
        _run((1, 1), 2, 3, twice=True)

    def kernel():
        pipe_t = emu.PipelineTmaUmmaAsync[2]
        p = pipe_t(pipe_t.SharedStorage(), pipe_t.Params(0, Role.Producer, 1), (1, 1, 1))
        p.consumer_wait(pipe_t.PipelineState())

    with pytest.raises(emu.BarrierError, match="Producer pipeline object"):
        emu.launch(kernel, (1,))


def test_tma_umma_consumer_without_mask_is_reported():
    def kernel():
        pipe_t = emu.PipelineTmaUmmaAsync[2]
        st = pipe_t.SharedStorage()
        p = pipe_t(st, pipe_t.Params(64, Role.Producer, 1), emu.cluster_shape(), threads=range(32))
        c = pipe_t(st, pipe_t.Params(role=Role.Consumer), emu.cluster_shape(), init_masks=False)
        emu.cluster_sync()
        s = pipe_t.PipelineState()
        p.producer_acquire(emu.make_producer_start_state(pipe_t))
        st.full_barrier_[0].complete_transaction(64)
        c.consumer_wait(s)
        c.consumer_release(s)

    with pytest.raises(emu.BarrierError, match="mask is empty"):
        emu.launch(kernel, (2,), (2, 1, 1))


# --- PipelineUmmaAsync / PipelineUmmaConsumerAsync --------------------------------------------------------------

@pytest.mark.parametrize("pipe_name", ["PipelineUmmaAsync", "PipelineUmmaConsumerAsync"])
@pytest.mark.parametrize("atom", [(1, 1, 1), (2, 1, 1)])
def test_umma_pipelines_order_and_2sm_arrivals(pipe_name, atom):
    log = {}

    def kernel():
        pipe_t = getattr(emu, pipe_name)[2, atom]
        st = pipe_t.SharedStorage()
        two = atom[0] == 2
        umma_producer = pipe_name == "PipelineUmmaAsync"
        n_other = 128 * (2 if two else 1)  # the non-UMMA side: both CTAs' threads arrive at the even CTA (2-SM)
        counts = (1, n_other) if umma_producer else (n_other, 1)
        P = pipe_t.Params  # noqa: N806
        prod = pipe_t(st, P(Role.Producer, *counts), emu.cluster_shape(), threads=range(0, 128 if not umma_producer
                                                                                        else 1))
        cons = pipe_t(st, P(Role.Consumer, *counts), emu.cluster_shape(), init_barriers=False,
                      threads=range(128, 256) if umma_producer else range(32, 33))
        rank = emu.block_rank_in_cluster()
        log.setdefault("mask", {})[rank] = (prod if umma_producer else cons).tmem_sync_mask_
        emu.cluster_sync()
        leader = rank % 2 == 0 or not two
        umma_side = prod if umma_producer else cons
        w, r = emu.make_producer_start_state(pipe_t), pipe_t.PipelineState()
        for i in range(5):
            if leader or umma_side is not prod:
                prod.producer_acquire(w)
                prod.producer_commit(w)
            w.increment()
            if leader or umma_side is not cons:
                cons.consumer_wait(r)
                log.setdefault(rank, []).append((i, r.index(), r.phase()))
                cons.consumer_release(r)
            r.increment()
        if leader or umma_side is not prod:
            prod.producer_tail(w)  # the last commits / arrivals reach no exited CTA
        emu.cluster_sync()

    emu.launch(kernel, (2,), (2, 1, 1))
    if atom[0] == 2:
        assert log["mask"][0] == log["mask"][1] == 0b11
    for rank in log:
        if rank != "mask":
            assert log[rank] == [(i, i % 2, (i // 2) & 1) for i in range(5)]


# --- OrderedSequenceBarrier -------------------------------------------------------------------------------------

def test_ordered_sequence_barrier_alternates_groups():
    order = []

    def kernel():
        seq_t = emu.OrderedSequenceBarrier[2, 2]
        st = seq_t.SharedStorage()
        g = [seq_t(st, seq_t.Params(i, 128)) for i in range(2)]
        assert _mbarrier(st.barrier_[1][1]).count == 128
        for k in range(3):
            for i in (0, 1):
                g[i].wait()
                order.append((k, i))
                g[i].arrive()

    emu.launch(kernel, (1,))
    assert order == [(k, i) for k in range(3) for i in (0, 1)]


def test_ordered_sequence_barrier_out_of_turn_hangs():
    def kernel():
        seq_t = emu.OrderedSequenceBarrier[2, 2]
        st = seq_t.SharedStorage()
        g1 = [seq_t(st, seq_t.Params(i, 128)) for i in range(2)][1]
        g1.wait()  # group 1 first: group 0 never signalled it

    with pytest.raises(emu.Deadlock):
        emu.launch(kernel, (1,))


# --- the example ----------------------------------------------------------------------------------------------------

def _example():
    path = pathlib.Path(__file__).resolve().parent.parent / "examples" / "blackwell_pipeline_tma_umma.py"
    spec = importlib.util.spec_from_file_location("blackwell_pipeline_tma_umma", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_example_blackwell_pipeline_tma_umma_matches_numpy():
    mod = _example()
    d, ref, exact, stats = mod.run(m=256, n=128, k=320, seed=5)
    assert np.array_equal(d.view(np.uint32), ref.view(np.uint32))
    assert float(np.max(np.abs(d - exact))) < 1e-3
    assert stats == {"load": 4 * 2 * 5, "mma": 4 * 5 * 4}


def test_example_epilogue_without_the_accumulator_wait_races(monkeypatch):
    mod = _example()
    monkeypatch.setattr(mod.AccumPipeline, "consumer_wait", lambda self, state, token=None: None)
    with pytest.raises(emu.RaceError, match="tcgen05.ld"):
        mod.run()
