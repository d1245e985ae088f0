"""Property test: the emulator's device API and launch driven with random bad values.

Each case calls one entry point with one argument replaced by a random value (floats, NaN, huge or negative
integers, bools, None, strings, bytes, tuples, numpy scalars). Only tmakit's named errors may come out -- no bare
Python exception, no hang (every launch runs under a time limit), and no silent coercion: a call that succeeds must
have been given a real integer.
"""

import operator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tmakit as tk
from tmakit import emu
from tmakit.tma.errors import TmaError
from tmakit.tma.tensormap import DataType, TensorMap

NAMED = (emu.EmuError, tk.LayoutError, TmaError)

BAD = st.one_of(
    st.sampled_from([-4096, -3, -1, 0, 1, 3, 7, 16, 2**20, 2**31, 2**63, 16.5, 2.5, 1.0, -0.0, True, False, None,
                     "4", b"4", (1,), [2], float("nan"), float("inf"), np.float32(8.0), np.int64(-2), np.uint8(3)]),
    st.integers(-2**40, 2**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=3),
)

A = np.arange(16 * 16, dtype=np.float32).reshape(16, 16)
HALF = TensorMap(DataType.FLOAT32, (16, 16), (64,), (16, 8), global_address=A.ctypes.data)


class Stop(Exception):
    """The kernel got past the call under test."""


def _bar(count=2**20 - 1):
    b = emu.shared_barrier()
    emu.initialize_barrier(b, count)
    return b


def _box():
    return emu.shared_array((8, 16))


DEVICE_CALLS = {
    "shared_alloc.nbytes": lambda v: emu.shared_alloc(v),
    "shared_alloc.align": lambda v: emu.shared_alloc(64, align=v),
    "shared_array.shape": lambda v: emu.shared_array((v, 4)),
    "shared_barrier.count": lambda v: emu.shared_barrier(v),
    "make_smem_ptr.address": lambda v: emu.make_smem_ptr(v, np.float32)[0],
    "smem_ptr.index": lambda v: emu.make_smem_ptr(0, np.float32).__setitem__(v, 1.0),
    "smem_ptr.offset": lambda v: (emu.shared_alloc(64, dtype=np.float32) + v)[0],
    "smem_ptr.view": lambda v: emu.shared_alloc(64, dtype=np.float32).view((v,)),
    "initialize_barrier.count": lambda v: emu.initialize_barrier(emu.shared_barrier(), v),
    "arrive_barrier.count": lambda v: emu.arrive_barrier(_bar(), v),
    "arrive_barrier.cta_id": lambda v: emu.arrive_barrier(_bar(), 1, cta_id=v),
    "set_barrier_transaction_bytes": lambda v: emu.set_barrier_transaction_bytes(_bar(), v),
    "expect_transaction_bytes": lambda v: emu.expect_transaction_bytes(_bar(), v),
    "wait_barrier.phase": lambda v: emu.wait_barrier(_bar(1), v),
    "barrier.address": lambda v: emu.initialize_barrier(v, 1),
    "tma_load.coord0": lambda v: emu.tma_load(HALF, (v, 0), _box(), _bar()),
    "tma_load.coord1": lambda v: emu.tma_load(HALF, (0, v), _box(), _bar()),
    "tma_load.dst": lambda v: emu.tma_load(HALF, (0, 0), v, _bar()),
    "tma_load.mask": lambda v: emu.tma_load(HALF, (0, 0), _box(), _bar(), mask=v),
    "tma_store.coord0": lambda v: emu.tma_store(HALF, (v, 0), _box()),
    "tma_prefetch.coord1": lambda v: emu.tma_prefetch(HALF, (0, v)),
    "wait_group.n": lambda v: emu.wait_group(v),
}


def _is_integer(v) -> bool:
    if isinstance(v, (bool, np.bool_)):
        return False
    try:
        operator.index(v)
    except TypeError:
        return False
    return True


NONE_IS_DEFAULT = {"shared_barrier.count", "arrive_barrier.cta_id", "tma_load.mask"}


def _huge(v) -> bool:
    """An integer extent this machine should not be asked to allocate."""
    return _is_integer(v) and operator.index(v) > 2**20


SKIP = object()  # a value that is valid for this argument in another sense (a grid tuple), or too big to allocate


def _check(outcome, v, none_ok=False):
    if outcome is SKIP:
        return
    if isinstance(outcome, emu.TimeLimitExceeded):
        pytest.fail(f"hang with {v!r}: {outcome}")
    if outcome is None or isinstance(outcome, Stop):
        ok = _is_integer(v) or (none_ok and v is None)
        assert ok, f"{v!r} ({type(v).__name__}) was accepted: silent coercion"
    elif not isinstance(outcome, NAMED):
        pytest.fail(f"bare {type(outcome).__name__} for {v!r}: {outcome}")


def _launch(*args, **kw):
    try:
        emu.launch(*args, **kw)
    except BaseException as e:  # noqa: BLE001 - classified by _check
        return e
    return None


FAST = settings(max_examples=30, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("name", sorted(DEVICE_CALLS))
@FAST
@given(v=BAD)
def test_device_calls_raise_only_named_errors(name, v):
    call = DEVICE_CALLS[name]

    def kernel(a):
        call(v)
        raise Stop()

    _check(_launch(kernel, (1,), (1,), A, time_limit=10), v, name in NONE_IS_DEFAULT)


def _stop():
    raise Stop()


def _calling(f, *args, **kw):
    try:
        f(*args, **kw)
    except BaseException as e:  # noqa: BLE001 - classified by _check
        return e
    return None


LAUNCH_CALLS = {
    "grid.x": lambda v: _launch(_stop, (v, 1, 1), (1, 1, 1), time_limit=10),
    "grid.y": lambda v: _launch(_stop, (1, v, 1), (1, 1, 1), time_limit=10),
    "grid.z": lambda v: _launch(_stop, (1, 1, v), (1, 1, 1), time_limit=10),
    "grid.scalar": lambda v: SKIP if isinstance(v, (tuple, list)) else _launch(_stop, v, (1, 1, 1), time_limit=10),
    "smem_bytes": lambda v: _launch(_stop, (1,), (1,), smem_bytes=v, time_limit=10),
    "alloc.shape": lambda v: SKIP if _huge(v) else _calling(emu.alloc, (v, 4)),
    "alloc.align": lambda v: SKIP if _huge(v) else _calling(emu.alloc, (4, 4), align=v),
}


@pytest.mark.parametrize("name", sorted(LAUNCH_CALLS))
@FAST
@given(v=BAD)
def test_launch_arguments_raise_only_named_errors(name, v):
    _check(LAUNCH_CALLS[name](v), v)


@FAST
@given(v=st.one_of(st.integers(-2**40, 2**40), st.booleans(), st.sampled_from([np.int64(0), np.int64(4), np.int8(-1)])))
def test_cluster_dims_raise_only_named_errors(v):
    """A 1-3 tuple of ints (bools included) in the cluster position is a cluster; any other value is the kernel's
    first argument (``cluster`` may be omitted), so only integer-like values are drawn here."""
    _check(_launch(_stop, (16, 1, 1), [v, 1, 1], time_limit=10), v)


@FAST
@given(v=st.one_of(BAD, st.floats(0.001, 100)))
def test_time_limit_is_a_positive_number(v):
    outcome = _launch(_stop, (1,), (1,), time_limit=v)
    if outcome is None or isinstance(outcome, Stop):
        assert v is None or (isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0)
    elif not isinstance(outcome, NAMED):
        pytest.fail(f"bare {type(outcome).__name__} for {v!r}: {outcome}")
