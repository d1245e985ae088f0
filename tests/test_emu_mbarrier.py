"""mbarrier state machine with PTX semantics (docs/HARDWARE.md §5), independent of any kernel."""

import pytest

from tmakit.emu import BarrierError, MBarrier


def fresh(count=1):
    b = MBarrier(0, 0x40)
    b.init(count)
    return b


def test_phase_completes_on_arrivals_and_tx():
    b = fresh(2)
    assert not b.phase_done(0) and b.phase_done(1)  # a fresh barrier: the "previous" phase counts as done
    b.expect_tx(64)
    b.arrive()
    b.arrive()
    assert b.phase == 0 and b.tx == 64
    b.complete_tx(64)
    assert b.phase == 1 and b.phase_done(0) and not b.phase_done(1)
    assert b.pending == 2 and b.expected == b.delivered == 0


def test_complete_tx_before_expect_tx_goes_negative():
    b = fresh()
    b.complete_tx(32)
    assert b.tx == -32 and b.phase == 0
    b.expect_tx(32)
    b.arrive()
    assert b.phase == 1


def test_count_and_tx_ranges():
    b = MBarrier(0, 0)
    with pytest.raises(BarrierError, match="1..1048575"):
        b.init(0)
    b.init(2**20 - 1)
    with pytest.raises(BarrierError, match="tx-count"):
        b.expect_tx(2**20)


def test_reinit_live_barrier_is_an_error_until_invalidated():
    b = fresh()
    with pytest.raises(BarrierError, match="re-initializing a live mbarrier"):
        b.init(1)
    b.invalidate()
    b.init(3)
    assert b.count == 3 and b.phase == 0


def test_over_arrival_and_uninitialized_use():
    b = fresh(1)
    with pytest.raises(BarrierError, match="only 1 of 1 pending"):
        b.arrive(2)
    with pytest.raises(BarrierError, match="not initialized"):
        MBarrier(1, 8).arrive()


def test_full_phase_numbers_must_be_current_or_previous():
    b = fresh()
    for _ in range(5):
        b.arrive()
    assert b.phase == 5
    b.check_phase_arg(4)
    b.check_phase_arg(5)
    b.check_phase_arg(1)  # 0/1 are parities
    with pytest.raises(BarrierError, match="current or the immediately preceding phase"):
        b.check_phase_arg(3)
    with pytest.raises(BarrierError, match="current or the immediately preceding phase"):
        b.check_phase_arg(7)
