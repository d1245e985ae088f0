"""Each diagnostic of the emulator, provoked by a wrong program; the messages name CTA, barrier, phase and bytes."""

import warnings

import numpy as np
import pytest

from tmakit import emu
from tmakit.tma.tensormap import DataType, TensorMap


@pytest.fixture
def a():
    return np.arange(16 * 16, dtype=np.float32).reshape(16, 16)


def half_map(arr):
    """Rows 8 at a time of a 16x16 fp32 tensor: 512-byte boxes."""
    return TensorMap(DataType.FLOAT32, (16, 16), (64,), (16, 8), global_address=arr.ctypes.data)


def test_wrong_expect_tx_deadlocks(a):
    tm = half_map(a)

    def kernel(a):
        s, b = emu.shared_array((8, 16)), emu.shared_barrier()
        emu.initialize_barrier(b, 1)
        emu.set_barrier_transaction_bytes(b, 1024)
        emu.tma_load(tm, (0, 0), s, b)
        emu.wait_barrier(b, 0)

    with pytest.raises(emu.Deadlock) as e:
        emu.launch(kernel, (1,), a)
    msg = str(e.value)
    assert "CTA rank 0 block (0,0,0)" in msg and "mbarrier @0x200" in msg and "phase 0" in msg
    assert "tx bytes expected 1024, delivered 512" in msg and "wrong expect_tx count" in msg


def test_missing_cluster_sync_before_multicast_deadlocks(a):
    tm = half_map(a)

    def kernel(a):
        s, b = emu.shared_array((16, 16)), emu.shared_barrier()
        emu.initialize_barrier(b, 1)
        emu.set_barrier_transaction_bytes(b, 1024)
        r = emu.block_rank_in_cluster()
        emu.tma_load(tm, (0, 8 * r), s[8 * r:], b, mask=0b11)
        emu.wait_barrier(b, 0)

    with pytest.raises(emu.Deadlock) as e:
        emu.launch(kernel, (2,), (2,), a)
    msg = str(e.value)
    assert "CTA rank 1 block (1,0,0): wait_barrier(parity 0) on mbarrier @0x400 of rank 1" in msg
    assert "expected 1024, delivered 512" in msg
    assert "before an mbarrier was initialized there" in msg and "cluster_sync" in msg
    assert "CTA rank 0 block (0,0,0): exited" in msg


def test_wrong_parity_deadlocks(a):
    tm = half_map(a)

    def kernel(a):
        s, b = emu.shared_array((8, 16)), emu.shared_barrier()
        emu.initialize_barrier(b, 1)
        emu.set_barrier_transaction_bytes(b, 512)
        emu.tma_load(tm, (0, 0), s, b)
        emu.wait_barrier(b, 0)
        emu.wait_barrier(b, 1)  # nothing more will arrive

    with pytest.raises(emu.Deadlock, match=r"parity 1 waits for phase 1: wrong parity\?") as e:
        emu.launch(kernel, (1,), a)
    assert "0/1 arrivals" in str(e.value)


def test_stale_parity_warns(a):
    tm = half_map(a)

    def kernel(a):
        s, b = emu.shared_array((8, 16)), emu.shared_barrier()
        emu.initialize_barrier(b, 1)
        emu.set_barrier_transaction_bytes(b, 512)
        emu.tma_load(tm, (0, 0), s, b)
        emu.wait_barrier(b, 0)
        emu.wait_barrier(b, 0)  # forgot to flip: returns at once on the old phase

    with pytest.warns(emu.StalePhaseWarning, match="already waited for"):
        emu.launch(kernel, (1,), a)


def test_init_not_visible_to_peer_is_a_race(a):
    """Both inits happen first here (so nothing hangs), but rank 0 multicasts before waiting at the cluster
    barrier: on the GPU its complete_tx may reach rank 1's barrier before the init does."""
    tm = half_map(a)

    def kernel(a):
        s, local, b = emu.shared_array((16, 16)), emu.shared_barrier(), emu.shared_barrier()
        emu.initialize_barrier(local, 1)
        emu.initialize_barrier(b, 1)
        emu.set_barrier_transaction_bytes(b, 1024)
        emu.fence_barrier_init()
        emu.cluster_arrive()
        emu.set_barrier_transaction_bytes(local, 512)
        emu.tma_load(tm, (0, 0), s, local)
        emu.wait_barrier(local, 0)  # a scheduling point: the peer gets to initialize its barriers
        r = emu.block_rank_in_cluster()
        emu.tma_load(tm, (0, 8 * r), s[8 * r:], b, mask=0b11)  # should have waited at the cluster barrier first
        emu.wait_barrier(b, 0)
        emu.cluster_wait()

    with pytest.raises(emu.RaceError, match="initialization is not yet visible to it"):
        emu.launch(kernel, (2,), (2,), a)


def test_missing_fence_barrier_init_is_reported(a):
    tm = half_map(a)

    def kernel(a):
        s, b = emu.shared_array((16, 16)), emu.shared_barrier()
        emu.initialize_barrier(b, 1)
        emu.cluster_sync()
        r = emu.block_rank_in_cluster()
        emu.set_barrier_transaction_bytes(b, 1024)
        emu.tma_load(tm, (0, 8 * r), s[8 * r:], b, mask=0b11)
        emu.wait_barrier(b, 0)
        emu.cluster_sync()

    with pytest.raises(emu.RaceError, match=r"never executed fence_barrier_init\(\)"):
        emu.launch(kernel, (2,), (2,), a)


def test_generic_write_then_store_without_fence(a):
    tm = half_map(a)

    def kernel(a):
        s = emu.shared_array((8, 16))
        s[:] = 1
        emu.tma_store(tm, (0, 0), s)

    with pytest.raises(emu.RaceError, match=r"without fence.proxy.async.*tma_store_fence"):
        emu.launch(kernel, (1,), a)


def test_generic_write_then_load_without_fence(a):
    tm = half_map(a)

    def kernel(a):
        s, b = emu.shared_array((8, 16)), emu.shared_barrier()
        s[3, 3] = 7
        emu.initialize_barrier(b, 1)
        emu.set_barrier_transaction_bytes(b, 512)
        emu.tma_load(tm, (0, 0), s, b)
        emu.wait_barrier(b, 0)

    with pytest.raises(emu.RaceError, match="wrote shared byte 0xcc"):
        emu.launch(kernel, (1,), a)


def test_store_source_overwritten_before_wait(a):
    tm = half_map(a)

    def kernel(a):
        s = emu.shared_array((8, 16))
        s[:] = 1
        emu.tma_store_fence()
        emu.tma_store(tm, (0, 0), s)
        emu.tma_store_arrive()
        s[:] = 2  # the bulk read may not have happened yet
        emu.tma_store_wait(0)

    with pytest.raises(emu.RaceError, match="overwrote the store's shared source"):
        emu.launch(kernel, (1,), a)


def test_exit_with_pending_bulk_store(a):
    tm = half_map(a)

    def kernel(a):
        s = emu.shared_array((8, 16))
        emu.tma_store(tm, (0, 0), s)
        emu.tma_store_arrive()

    with pytest.raises(emu.ExitError, match=r"exited with 1 bulk store.*tma_store_wait\(0\)"):
        emu.launch(kernel, (1,), a)


def test_wait_group_leaves_newest_groups_pending(a):
    tm = half_map(a)

    def kernel(a):
        s = emu.shared_array((8, 16))
        emu.tma_store(tm, (0, 0), s)
        emu.tma_store_arrive()
        emu.tma_store(tm, (0, 8), s)
        emu.tma_store_arrive()
        emu.tma_store_wait(1)  # the second group is still not waited for at exit

    with pytest.raises(emu.ExitError, match="TMA store at \\(0, 8\\)"):
        emu.launch(kernel, (1,), a)


def test_exit_while_peer_still_multicasts_into_it(a):
    tm = half_map(a)

    def kernel(a):
        s, b = emu.shared_array((16, 16)), emu.shared_barrier()
        emu.initialize_barrier(b, 1)
        emu.fence_barrier_init()
        emu.cluster_sync()
        if emu.block_rank_in_cluster() == 0:
            return  # no final cluster_sync
        emu.set_barrier_transaction_bytes(b, 512)
        emu.tma_load(tm, (0, 0), s, b)
        emu.wait_barrier(b, 0)
        emu.set_barrier_transaction_bytes(b, 512)
        emu.tma_load(tm, (0, 8), s, b, mask=0b11)
        emu.wait_barrier(b, 1)

    with pytest.raises(emu.ExitError, match=r"writes the shared memory of CTA rank 0.*already exited"):
        emu.launch(kernel, (2,), (2,), a)


def test_exit_with_own_load_in_flight(a):
    tm = half_map(a)

    def kernel(a):
        s, b = emu.shared_array((8, 16)), emu.shared_barrier()
        emu.initialize_barrier(b, 1)
        emu.set_barrier_transaction_bytes(b, 512)
        emu.tma_load(tm, (0, 0), s, b)

    with pytest.raises(emu.ExitError, match="still writing its shared memory"):
        emu.launch(kernel, (1,), a)


def test_cluster_sync_does_not_wait_for_exited_peers(a):
    """barrier.cluster.wait waits for non-exited CTAs only (H200 probe, docs/EMULATOR.md): an early exit releases."""
    passed = []

    def kernel(a):
        rank = emu.block_rank_in_cluster()
        if rank == 0:
            return
        emu.cluster_sync()
        if rank == 1:
            return
        emu.cluster_sync()  # a second generation, with two peers gone
        passed.append(rank)

    emu.launch(kernel, (4,), (4,), a)
    assert sorted(passed) == [2, 3]


def test_cluster_sync_waits_for_a_live_peer(a):
    def kernel(a):
        if emu.block_rank_in_cluster() == 0:
            emu.cluster_arrive()
            emu.cluster_wait()
            emu.cluster_arrive()
            emu.cluster_wait()
        else:
            emu.cluster_sync()
            b = emu.shared_barrier()
            emu.initialize_barrier(b, 1)
            emu.wait_barrier(b, 0)

    with pytest.raises(emu.Deadlock, match=r"cluster_sync: waiting at the cluster barrier for rank 1"):
        emu.launch(kernel, (2,), (2,), a)


def test_barrier_misuse_inside_kernel(a):
    def reinit(a):
        b = emu.shared_barrier()
        emu.initialize_barrier(b, 1)
        emu.initialize_barrier(b, 1)

    with pytest.raises(emu.BarrierError, match="re-initializing a live mbarrier"):
        emu.launch(reinit, (1,), a)

    def wait_uninit(a):
        emu.wait_barrier(emu.shared_barrier(), 0)

    with pytest.raises(emu.BarrierError, match="never initialized"):
        emu.launch(wait_uninit, (1,), a)

    def misaligned(a):
        emu.initialize_barrier(4, 1)

    with pytest.raises(emu.IllegalInstruction, match="8-byte aligned"):
        emu.launch(misaligned, (1,), a)


def test_non_strict_mode_warns_instead(a):
    tm = half_map(a)

    def kernel(a):
        s = emu.shared_array((8, 16))
        s[:] = 1
        emu.tma_store(tm, (0, 0), s)
        emu.tma_store_arrive()
        emu.tma_store_wait(0)

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        emu.launch(kernel, (1,), a, strict=False)
    assert any(issubclass(x.category, emu.EmuWarning) for x in w)
    assert (a[:8] == 1).all()


def test_negative_store_coordinates_in_kernel(a):
    tm = half_map(a)

    def kernel(a):
        emu.tma_store(tm, (0, -1), emu.shared_array((8, 16)))

    with pytest.raises(emu.IllegalInstruction, match="cudaErrorIllegalInstruction"):
        emu.launch(kernel, (1,), a)


def test_tma_box_over_a_live_barrier(a):
    tm = half_map(a)

    def kernel(a):
        s = emu.shared_array((8, 16))  # shared bytes [0, 512)
        b = emu.make_smem_ptr(256, np.uint64)  # a barrier inside the tile
        emu.initialize_barrier(b, 1)
        emu.set_barrier_transaction_bytes(b, 512)
        emu.tma_load(tm, (0, 0), s, b)
        emu.wait_barrier(b, 0)

    with pytest.raises(emu.RaceError, match="overwrites the live mbarrier @0x100"):
        emu.launch(kernel, (1,), a)
