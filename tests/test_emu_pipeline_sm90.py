"""CUTLASS's SM90 pipelines on the emulator (tmakit.emu.pipeline_sm90*): PipelineState arithmetic, producer/consumer
ordering across CTAs and clusters, the multicast-aware empty-barrier arrivals, misuse reports, PipelineTmaStore."""

import importlib.util
import pathlib

import numpy as np
import pytest

import tmakit as tk
from tmakit import emu
from tmakit.emu.device_smem import barrier_address
from tmakit.emu.pipeline_sm90 import spread_arrivals_to_warp, spread_arrivals_to_warpgroup
from tmakit.emu.scheduler import current_cta

Role = emu.PipelineTmaAsync.ThreadCategory


def _mbarrier(bar):
    cta = current_cta()
    return cta.barrier(barrier_address(cta, bar.barrier_))


# --- PipelineState -------------------------------------------------------------------------------------------------

def _reference(stages, index, phase, count, n):
    """n times CUTLASS's operator++ (the definition advance(n) must agree with)."""
    for _ in range(n):
        if stages > 0:
            index, count = index + 1, count + 1
            if index == stages:
                index, phase = 0, phase ^ 1
    return index, phase, count


@pytest.mark.parametrize("stages", [0, 1, 2, 3, 4, 7])
def test_pipeline_state_advance_matches_repeated_increment(stages):
    for start in range(max(stages, 1)):
        for phase in (0, 1):
            for n in range(0, 3 * stages + 5):
                s = emu.PipelineState[stages](start if stages else 0, phase, 5)
                s.advance(n)
                assert (s.index(), s.phase(), s.count()) == _reference(stages, start if stages else 0,
                                                                         phase, 5, n), (start, phase, n)
                t = emu.PipelineState[stages](start if stages else 0, phase, 5)
                for _ in range(n):
                    t.increment()
                assert t == s
                u = emu.PipelineState[stages](start if stages else 0, phase, 5)
                u += n
                assert u == s


def test_pipeline_state_phase_flips_at_the_wrap():
    s = emu.PipelineState[3]()
    seen = []
    for _ in range(7):
        seen.append((s.index(), s.phase(), s.count()))
        s.increment()
    assert seen == [(0, 0, 0), (1, 0, 1), (2, 0, 2), (0, 1, 3), (1, 1, 4), (2, 1, 5), (0, 0, 6)]


def test_producer_start_state_and_make_pipeline_state():
    p = emu.make_producer_start_state(emu.PipelineTmaAsync[4])
    assert (p.index(), p.phase(), p.count(), p.Stages) == (0, 1, 0, 4)
    start = emu.PipelineState[4](1, 0, 1)
    moved = emu.PipelineState[4].make_pipeline_state(start, 6)
    assert (start.index(), start.phase(), start.count()) == (1, 0, 1)  # taken by value
    assert (moved.index(), moved.phase(), moved.count()) == (3, 1, 7)
    assert emu.PipelineTmaAsync[4].PipelineState is emu.PipelineState[4]
    with pytest.raises(TypeError):
        emu.PipelineState(0, 0, 0)  # no Stages


def test_spread_arrivals_cover_16_distinct_ctas():
    wg = [spread_arrivals_to_warpgroup(t, t // 32) for t in range(128)]
    assert sorted(d for s, d in wg if s) == list(range(16))
    warp = [spread_arrivals_to_warp(t) for t in range(32)]
    assert sorted(d for s, d in warp if s) == list(range(16))
    assert spread_arrivals_to_warpgroup(8, 0) == (True, 5)  # (row 0, col 1) -> 1 ^ (1 << 2)


# --- PipelineTmaAsync across a cluster: one program per CTA, bytes completed by hand (CUTLASS's unit-test mode) ----

def _tma_async_kernel(stages, iters, share, slots, log, *, release=True, leader=1, num_consumers=128, wgs=1):
    pipe_t = emu.PipelineTmaAsync[stages]
    storage = pipe_t.SharedStorage()
    shape = emu.cluster_shape()
    me, rank = emu.block_id_in_cluster(), emu.block_rank_in_cluster()
    peers = sorted({x + me.y * shape.x for x in range(shape.x)} | {me.x + y * shape.x for y in range(shape.y)})
    P = pipe_t.Params  # noqa: N806
    producer = pipe_t(storage, P(share * len(peers), Role.Producer, leader, num_consumers), shape, threads=range(32))
    consumers = [pipe_t(storage, P(role=Role.Consumer, num_consumers=num_consumers), shape,
                        threads=range(128 * (w + 1), 128 * (w + 2))) for w in range(wgs)]
    log.setdefault("empty_count", {})[rank] = _mbarrier(storage.empty_barrier_[0]).count
    emu.cluster_sync()
    write, read = emu.make_producer_start_state(pipe_t), pipe_t.PipelineState()

    def produce(i):
        producer.producer_acquire(write)
        bar = producer.producer_get_barrier(write)
        for dst in peers:  # "multicast": this CTA's share of stage data lands in each CTA of its row and column
            slots[(dst, write.index())][rank] = i
            emu.ClusterTransactionBarrier(bar).complete_transaction(dst, share, 1)
        producer.producer_commit(write, share)
        write.increment()

    loaded = 0
    while loaded < min(stages, iters):
        produce(loaded)
        loaded += 1
    for i in range(iters):
        for c in consumers:
            c.consumer_wait(read)
        got = slots[(rank, read.index())]
        assert got == {p: i for p in peers}, (rank, i, got)
        log.setdefault(rank, []).append(i)
        if release:
            for c in consumers:
                c.consumer_release(read)
        read.increment()
        if loaded < iters:
            produce(loaded)
            loaded += 1
    producer.producer_tail(write)


def _run_tma_async(cluster, grid, stages, iters, **kw):
    slots, log = {}, {}
    size = cluster[0] * cluster[1]
    for r in range(size):
        for s in range(stages):
            slots[(r, s)] = {}
    emu.launch(_tma_async_kernel, grid, cluster + (1,), stages, iters, 64, slots, log, **kw)
    return log


@pytest.mark.parametrize("stages", [1, 2, 3, 5])
@pytest.mark.parametrize("cluster", [(1, 1), (2, 1), (1, 2), (2, 2)])
def test_tma_async_orders_producer_and_consumers(stages, cluster):
    iters = 3 * stages + 4
    log = _run_tma_async(cluster, cluster, stages, iters)
    cx, cy = cluster
    for r in range(cx * cy):
        assert log[r] == list(range(iters))
        assert log["empty_count"][r] == (128 if cx * cy == 1 else cx + cy - 1)  # CUTLASS's empty arrival count


def test_tma_async_two_consumer_warpgroups_and_a_warp():
    log = _run_tma_async((2, 2), (2, 2), 2, 9, num_consumers=256, wgs=2)
    assert log["empty_count"] == {r: 2 * 3 for r in range(4)}
    log = _run_tma_async((1, 1), (1, 1), 2, 9, num_consumers=256, wgs=2)
    assert log["empty_count"] == {0: 256} and log[0] == list(range(9))


def test_consumer_release_arrives_at_every_cta_of_its_row_and_column():
    seen = {}

    def kernel():
        pipe_t = emu.PipelineTmaAsync[2]
        storage = pipe_t.SharedStorage()
        c = pipe_t(storage, pipe_t.Params(role=Role.Consumer, num_consumers=128), emu.cluster_shape())
        seen[emu.block_rank_in_cluster()] = dict(c._signals)
        emu.cluster_sync()

    emu.launch(kernel, (4, 2), (4, 2, 1))
    for r in range(8):  # rank r = x + 4y: its row (same y) and column (same x)
        x, y = r % 4, r // 4
        assert seen[r] == {d: 1 for d in range(8) if d % 4 == x or d // 4 == y}


def test_a_cta_that_never_releases_hangs_its_peers_producer():
    with pytest.raises(emu.Deadlock, match="arrival"):
        _run_tma_async((2, 1), (2, 1), 2, 6, release=False)


def test_missing_expect_tx_is_reported_as_a_hang():
    with pytest.raises(emu.Deadlock) as e:  # is_leader 0: nobody arrives with expect_tx on the full barrier
        _run_tma_async((1, 1), (1, 1), 2, 3, leader=0)
    assert "1 of 1 arrival(s) missing" in str(e.value)


def test_consumer_release_twice_is_reported():
    def kernel():
        pipe_t = emu.PipelineTmaAsync[2]
        storage = pipe_t.SharedStorage()
        p = pipe_t(storage, pipe_t.Params(0, Role.ProducerConsumer, 1, 128), (1, 1, 1), threads=range(128))
        w, r = emu.make_producer_start_state(pipe_t), pipe_t.PipelineState()
        p.producer_acquire(w)
        p.consumer_wait(r)
        p.consumer_release(r)
        p.consumer_release(r)

    with pytest.raises(emu.BarrierError, match="released twice"):
        emu.launch(kernel, (1,))


def test_producer_commit_without_acquire_and_wrong_roles_are_reported():
    def kernel(what):
        pipe_t = emu.PipelineTmaAsync[2]
        storage = pipe_t.SharedStorage()
        prod = pipe_t(storage, pipe_t.Params(0, Role.Producer, 1, 128), (1, 1, 1))
        cons = pipe_t(storage, pipe_t.Params(role=Role.Consumer, num_consumers=128), (1, 1, 1), init_barriers=False)
        w = emu.make_producer_start_state(pipe_t)
        if what == "commit":
            prod.producer_commit(w, 0)
        else:
            cons.producer_acquire(w)

    with pytest.raises(emu.BarrierError, match="not acquired"):
        emu.launch(kernel, (1,), (1, 1, 1), "commit")
    with pytest.raises(emu.BarrierError, match="Consumer pipeline object"):
        emu.launch(kernel, (1,), (1, 1, 1), "role")


def test_tma_async_refuses_unsupported_consumer_counts_in_a_cluster():
    def kernel():
        pipe_t = emu.PipelineTmaAsync[2]
        pipe_t(pipe_t.SharedStorage(), pipe_t.Params(role=Role.Consumer, num_consumers=64), (2, 1, 1))

    with pytest.raises(emu.BarrierError, match="32 or a multiple of 128"):
        emu.launch(kernel, (2,), (2, 1, 1))


# --- PipelineAsync / PipelineTransactionAsync: a producer CTA feeding a consumer CTA --------------------------------

@pytest.mark.parametrize("stages", [1, 2, 4])
def test_transaction_async_between_two_ctas(stages):
    iters, slots, got = 4 * stages + 3, {}, []

    def kernel():
        pipe_t = emu.PipelineTransactionAsync[stages]
        storage = pipe_t.SharedStorage()
        rank = emu.block_rank_in_cluster()
        role = Role.Producer if rank == 0 else Role.Consumer
        pipe = pipe_t(storage, pipe_t.Params(role, producer_arv_count=1, consumer_arv_count=32,
                                             dst_blockid=1 - rank))
        emu.cluster_sync()
        state = emu.make_producer_start_state(pipe_t) if rank == 0 else pipe_t.PipelineState()
        for i in range(iters):
            if rank == 0:
                pipe.producer_acquire(state)
                slots[state.index()] = i
                pipe.producer_commit(state)  # arrives on the consumer CTA's full barrier
            else:
                pipe.consumer_wait(state)
                got.append(slots[state.index()])
                pipe.consumer_release(state)  # 32 arrivals on the producer CTA's empty barrier
            state.increment()
        if rank == 0:
            pipe.producer_tail(state)

    emu.launch(kernel, (2,), (2, 1, 1))
    assert got == list(range(iters))


def test_pipeline_async_in_one_cta_and_a_wrong_start_phase_hangs():
    def kernel(start_phase):
        pipe_t = emu.PipelineAsync[2]
        storage = pipe_t.SharedStorage()
        prod = pipe_t(storage, pipe_t.Params(Role.Producer, 1, 1), threads=range(1))
        cons = pipe_t(storage, pipe_t.Params(Role.Consumer, 1, 1), init_barriers=False, threads=range(1))
        w, r = pipe_t.PipelineState(0, start_phase, 0), pipe_t.PipelineState()
        for _ in range(5):
            prod.producer_acquire(w)
            prod.producer_commit(w)
            w.increment()
            cons.consumer_wait(r)
            cons.consumer_release(r)
            r.increment()

    emu.launch(kernel, (1,), (1, 1, 1), 1)
    with pytest.raises(emu.Deadlock):  # a producer starting at phase 0 waits for a release that never comes
        emu.launch(kernel, (1,), (1, 1, 1), 0)


# --- PipelineTmaStore -----------------------------------------------------------------------------------------------

def _store_kernel(pipe_t, tma, g, tiles):
    bufs = [emu.shared_tensor(tk.make_layout((tk.Int(32), tk.Int(32)), tk.LayoutRight)) for _ in range(2)]
    pipe = pipe_t()
    state = pipe_t.PipelineState()
    gc = tk.local_tile(tma.get_tma_tensor(g.shape), (tk.Int(32), tk.Int(32)), (tk._, 0))
    cp = tma.get_slice(0)
    for i in range(tiles):
        pipe.producer_acquire(state)
        buf = bufs[state.index()]
        buf.iterator.view((32, 32))[:] = i  # generic writes into the stage's buffer
        emu.tma_store_fence()
        emu.copy(tma, cp.partition_S(buf), cp.partition_D(gc[(tk._, tk._, i)]))
        pipe.producer_commit(state)
        state.increment()
    pipe.producer_tail(state)


def _store(pipe_t, tiles=6):
    g = np.full((32 * tiles, 32), -1.0, np.float32)
    gt = tk.make_tensor(g, tk.make_layout(g.shape, tk.LayoutRight))
    tma = tk.make_tma_copy(tk.SM90_TMA_STORE, gt, tk.make_layout((tk.Int(32), tk.Int(32)), tk.LayoutRight))
    emu.launch(_store_kernel, (1,), (1, 1, 1), pipe_t, tma, gt, tiles)
    return g


def test_tma_store_pipeline_reuses_buffers_safely():
    g = _store(emu.PipelineTmaStore[2])
    assert (g == np.repeat(np.arange(6), 32)[:, None]).all()
    assert emu.PipelineTmaStore[2].UnacquiredStages == 1 and emu.PipelineTmaStore[3, 0].UnacquiredStages == 0


def test_tma_store_pipeline_with_too_many_unacquired_stages_races():
    with pytest.raises(emu.RaceError, match="overwrote the store's shared source"):
        _store(emu.PipelineTmaStore[2, 2])  # 2 buffers but 2 stores left in flight: a buffer is rewritten early


def test_tma_store_pipeline_of_zero_stages_refuses_acquire():
    def kernel():
        emu.PipelineTmaStore[0]().producer_acquire(emu.PipelineState[0]())

    with pytest.raises(TypeError, match="never valid"):
        emu.launch(kernel, (1,))


# --- the example ----------------------------------------------------------------------------------------------------

def test_example_hopper_pipeline_tma_async_matches_numpy():
    path = pathlib.Path(__file__).resolve().parent.parent / "examples" / "hopper_pipeline_tma_async.py"
    spec = importlib.util.spec_from_file_location("hopper_pipeline_tma_async", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    c, ref, stats = mod.run(m=128, n=64, k=160, seed=3)
    assert np.array_equal(c, ref)
    assert stats == {"load": 4 * 2 * 5 * 2}
