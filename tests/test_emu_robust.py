"""Robustness of emulated launches: integer-only arguments, grid limits, lazy clusters, time limits, interrupts and
wrong-parity waits. Nothing is silently coerced, nothing hangs, and a stopped launch leaves the emulator clean."""

import os
import signal
import threading
import time
import tracemalloc
import warnings

import numpy as np
import pytest

from tmakit import emu
from tmakit.tma.tensormap import DataType, TensorMap


@pytest.fixture
def a():
    return np.arange(16 * 16, dtype=np.float32).reshape(16, 16)


@pytest.fixture
def sigint_raises():
    """Ctrl-C raises KeyboardInterrupt here even where the test process inherited SIGINT ignored (a job started in
    the background by a non-interactive shell): the tests below send it to themselves."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def half_map(arr):
    return TensorMap(DataType.FLOAT32, (16, 16), (64,), (16, 8), global_address=arr.ctypes.data)


def healthy_launch():
    """A 3-CTA cluster run twice gives the same deterministic order: the emulator is clean."""
    def kernel(log):
        r = emu.block_rank_in_cluster()
        for step in range(2):
            log.append((r, step))
            emu.cluster_sync()

    logs = []
    for _ in range(2):
        log = []
        emu.launch(kernel, (3,), (3,), log)
        logs.append(log)
    assert logs[0] == logs[1] == [(0, 0), (1, 0), (2, 0), (2, 1), (0, 1), (1, 1)]


# --- wrong-parity waits ---------------------------------------------------------------------------------------

def load_then_wait(parity):
    def kernel(a, out):
        s, b = emu.shared_array((8, 16)), emu.shared_barrier()
        emu.initialize_barrier(b, 1)
        emu.set_barrier_transaction_bytes(b, 512)
        emu.tma_load(half_map(a), (0, 0), s, b)
        emu.wait_barrier(b, parity)
        out.append(float(s[1, 1]))
        emu.wait_barrier(b, 0)
        out.append(float(s[1, 1]))
    return kernel


def test_parity_1_wait_while_the_first_phase_runs_is_an_error(a):
    with pytest.raises(emu.BarrierError) as e:
        emu.launch(load_then_wait(1), (1,), a, [])
    msg = str(e.value)
    assert "CTA rank 0 block (0,0,0) waits with parity 1 on mbarrier @0x200 of rank 0: phase 0" in msg
    assert "1 TMA load(s) in flight" in msg and "Wait with parity 0 for the first phase" in msg


def test_parity_1_wait_while_the_first_phase_runs_warns_when_not_strict(a):
    out = []
    with pytest.warns(emu.EmuWarning, match="parity 1 names the phase before it"):
        emu.launch(load_then_wait(1), (1,), a, out, strict=False)
    assert out == [0.0, 17.0]  # as on the GPU: the parity-1 wait returned before the data landed


def test_parity_1_first_wait_on_an_idle_barrier_is_the_producer_idiom(a):
    def kernel(a, out):
        s, full, empty = emu.shared_array((8, 16)), emu.shared_barrier(), emu.shared_barrier()
        emu.initialize_barrier(full, 1)
        emu.initialize_barrier(empty, 1)
        emu.wait_barrier(empty, 1)  # producer start state: the slot is free, returns at once
        emu.set_barrier_transaction_bytes(full, 512)
        emu.tma_load(half_map(a), (0, 0), s, full)
        emu.wait_barrier(full, 0)
        out.append(float(s[1, 1]))
        emu.arrive_barrier(empty)
        emu.wait_barrier(empty, 0)  # the phase just completed: returns at once

    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("error", emu.EmuWarning)
        emu.launch(kernel, (1,), a, out)
    assert out == [17.0]


# --- integers only ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("body, error, match", [
    (lambda b, a: emu.tma_load(half_map(a), (16.5, 0), emu.shared_array((8, 16)), b), emu.TmaUnitError,
     "TMA coordinate 0 of .* must be an integer, got 16.5"),
    (lambda b, a: emu.tma_load(half_map(a), (np.float64(0), 0), emu.shared_array((8, 16)), b), emu.TmaUnitError,
     "must be an integer"),
    (lambda b, a: emu.arrive_barrier(b, -3), emu.BarrierError, "count -3 is outside 1.."),
    (lambda b, a: emu.arrive_barrier(b, 1, cta_id=-1), emu.BarrierError, r"cta_id \(rank in the cluster\) -1"),
    (lambda b, a: emu.arrive_barrier(b, 1, cta_id=1), emu.BarrierError, "cta_id .* 1 is outside 0..0"),
    (lambda b, a: emu.arrive_barrier(b, 1.0), emu.BarrierError, "must be an integer"),
    (lambda b, a: emu.wait_barrier(b, 0.5), emu.BarrierError, "phase must be an integer"),
    (lambda b, a: emu.wait_barrier(b, -1), emu.BarrierError, "phase -1 is outside 0.."),
    (lambda b, a: emu.set_barrier_transaction_bytes(b, 16.0), emu.BarrierError, "expect_tx bytes must be an int"),
    (lambda b, a: emu.expect_transaction_bytes(b, -16), emu.BarrierError, "expect_tx bytes -16 is outside"),
    (lambda b, a: emu.initialize_barrier(emu.shared_barrier(), True), emu.BarrierError, "must be an integer"),
    (lambda b, a: emu.wait_group(0.5), emu.TmaUnitError, "wait_group count must be an integer"),
])
def test_device_arguments_are_integers_in_range(a, body, error, match):
    def kernel(a):
        b = emu.shared_barrier()
        emu.initialize_barrier(b, 1)
        body(b, a)

    with pytest.raises(error, match=match):
        emu.launch(kernel, (1,), a)


@pytest.mark.parametrize("grid, match", [
    ((2.5, 1, 1), "must be an integer, got 2.5"),
    ((True,), "must be an integer"),
    ((0,), "x 0 is outside 1..2147483647"),
    ((2**31, 1, 1), "x 2147483648 is outside 1..2147483647"),
    ((1, 65536), "y 65536 is outside 1..65535"),
    ((1, 1, 65536), "z 65536 is outside 1..65535"),
    ((1, 1, 1, 1), "1 to 3 positive ints"),
    ("4", "must be an integer"),
])
def test_grids_are_integers_within_cuda_limits(grid, match):
    with pytest.raises(emu.LaunchError, match=match):
        emu.launch(lambda: None, grid)


def test_time_limit_must_be_a_positive_number():
    for bad in (0, -1, "1", True, float("nan")):
        with pytest.raises(emu.LaunchError, match="time_limit"):
            emu.launch(lambda: None, (1,), time_limit=bad)


# --- unbounded launches ---------------------------------------------------------------------------------------

class Stop(Exception):
    pass


def test_a_huge_grid_creates_clusters_lazily():
    def kernel():
        raise Stop()

    tracemalloc.start()
    try:
        t0 = time.monotonic()
        with pytest.raises(Stop):
            emu.launch(kernel, (2**31 - 1, 65535, 1))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20 and time.monotonic() - t0 < 5


def test_time_limit_says_where_each_cta_is():
    def kernel():
        if emu.block_rank_in_cluster() == 1:
            n = 0
            while True:  # the endless loop
                n += 1
        emu.cluster_sync()

    with pytest.raises(emu.TimeLimitExceeded) as e:
        emu.launch(kernel, (2,), (2,), time_limit=0.3)
    msg = str(e.value)
    assert "time limit of 0.3 s in cluster (0,0,0)" in msg
    assert "CTA rank 0 block (0,0,0): cluster_sync: waiting at the cluster barrier for rank 1" in msg
    assert "CTA rank 1 block (1,0,0): running at " in msg and "test_emu_robust.py" in msg and "in kernel" in msg
    healthy_launch()


def test_time_limit_stops_a_lone_cta():
    def kernel():
        while True:
            time.sleep(0.01)

    with pytest.raises(emu.TimeLimitExceeded, match="CTA rank 0 block .*: running at .*in kernel"):
        emu.launch(kernel, (4,), time_limit=0.2)
    healthy_launch()


# --- interrupts and exceptions ------------------------------------------------------------------------------------

def test_keyboard_interrupt_inside_a_cta_leaves_the_emulator_clean():
    def kernel():
        if emu.block_rank_in_cluster() == 1:
            raise KeyboardInterrupt
        emu.cluster_sync()

    with pytest.raises(KeyboardInterrupt):
        emu.launch(kernel, (4,), (2,))
    healthy_launch()


@pytest.mark.skipif(not hasattr(signal, "SIGALRM") or threading.current_thread() is not threading.main_thread(),
                    reason="needs POSIX signals on the main thread")
def test_ctrl_c_during_a_multi_cta_launch_leaves_the_emulator_clean(sigint_raises):
    def kernel():
        if emu.block_rank_in_cluster() == 1:
            end = time.monotonic() + 0.8
            while time.monotonic() < end:  # busy when Ctrl-C comes, done a little later
                time.sleep(0.01)
        emu.cluster_sync()

    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            emu.launch(kernel, (2,), (2,))
    finally:
        timer.cancel()
    time.sleep(0.8)  # had the interrupted CTA gone on, it would have handed a stray baton to the next launch by now
    healthy_launch()


def test_a_cta_that_swallows_the_abort_does_not_hang_the_launch():
    def kernel():
        if emu.block_rank_in_cluster() == 0:
            emu.cluster_sync()  # parks until rank 1 arrived and is parked in its own (second) wait
            raise ValueError("rank 0 failed")
        while True:  # a retry loop that swallows everything, the emulator's Aborted included
            try:
                emu.cluster_sync()
            except BaseException:  # noqa: BLE001
                pass

    t0 = time.monotonic()
    with pytest.raises(ValueError, match="rank 0 failed"):
        emu.launch(kernel, (2,), (2,))
    assert time.monotonic() - t0 < 10
    healthy_launch()


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="needs the main thread")
def test_ctrl_c_during_a_single_cta_launch_leaves_the_emulator_clean(sigint_raises):
    def kernel():
        s = emu.shared_array(4)
        s[:] = 1
        end = time.monotonic() + 2.0
        while time.monotonic() < end:
            time.sleep(0.01)

    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            emu.launch(kernel, (8,))
    finally:
        timer.cancel()
    healthy_launch()

    def fresh(out):
        out.append(int(emu.shared_array(4, np.int32).sum()))

    out = []
    emu.launch(fresh, (2,), out)
    assert out == [0, 0]
