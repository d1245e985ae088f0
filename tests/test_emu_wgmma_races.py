"""The asynchrony of wgmma on the emulator: MMAs run at scheduling points, and a program that touches their registers
or shared operands before the covering ``wgmma_wait_group``, or skips ``wgmma_fence``, is reported."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from test_emu_wgmma_programs import A_AT, B_AT, encode, ints, k_desc
from tmakit import emu
from tmakit.emu.wgmma_desc import place_operand
from tmakit.tma.tensormap import SwizzleMode, TensorMap

RNG = np.random.default_rng(11)
A_BITS, B_BITS = encode(ints(RNG, (64, 16)), "bf16"), encode(ints(RNG, (64, 16)), "bf16")
PRODUCT = (A_BITS.astype(np.uint32) << 16).view(np.float32) @ (B_BITS.astype(np.uint32) << 16).view(np.float32).T


def setup(fence=True):
    """Operands in shared memory (fenced for the async proxy); returns (image, accumulator)."""
    img = emu.shared_array(0x10000, np.uint8, align=1024)
    place_operand(img, k_desc(A_AT), 0, A_BITS)
    place_operand(img, k_desc(B_AT), 0, B_BITS)
    if fence:
        emu.fence_proxy_async()
    return img, emu.wgmma_accumulator(64)


def mma(acc, scale_d=0, warpgroup_fence=True):
    if warpgroup_fence:
        emu.wgmma_fence(acc.warpgroup)
    emu.wgmma_mma_async(acc, k_desc(A_AT), k_desc(B_AT), scale_d)


def test_mma_runs_at_a_scheduling_point_and_the_wait_covers_it():
    seen = {}

    def kernel():
        img, acc = setup()
        mma(acc)
        emu.wgmma_commit_group()
        seen["queued"] = np.isnan(acc.values).all()  # the private view: not run yet
        emu.wgmma_wait_group(0)
        seen["d"] = acc.read()

    emu.launch(kernel, (1,))
    assert seen["queued"] and np.array_equal(seen["d"], PRODUCT)


@pytest.mark.parametrize("before_wait, match", [
    (lambda acc: acc.read(), "reads the accumulator of wgmma.mma_async.* its group .#0 of warpgroup 0"),
    (lambda acc: acc.fill(0), "writes the accumulator"),
    (lambda acc: acc.fragment(3), "reads the accumulator"),
])
def test_accumulator_access_before_wait_is_a_race(before_wait, match):
    def kernel():
        img, acc = setup()
        mma(acc)
        emu.wgmma_commit_group()
        before_wait(acc)

    with pytest.raises(emu.RaceError, match=match):
        emu.launch(kernel, (1,))


def test_uncommitted_mma_is_not_covered_by_wait_group():
    def kernel():
        img, acc = setup()
        mma(acc)
        emu.wgmma_wait_group(0)  # no commit_group: nothing to wait for
        acc.read()

    with pytest.raises(emu.RaceError, match="no wgmma_commit_group covers it yet"):
        emu.launch(kernel, (1,))


def test_wait_group_1_leaves_the_newest_group_pending():
    got = {}

    def kernel():
        img, acc = setup()
        other = emu.wgmma_accumulator(64)
        mma(acc)
        emu.wgmma_commit_group()
        emu.wgmma_mma_async(other, k_desc(A_AT), k_desc(B_AT), 0)
        emu.wgmma_commit_group()
        emu.wgmma_wait_group(1)
        got["older"] = acc.read()  # group 0 is complete
        other.read()  # group 1 may still run

    with pytest.raises(emu.RaceError, match=r"wgmma_wait_group\(n\) with n <= 0"):
        emu.launch(kernel, (1,))
    assert np.array_equal(got["older"], PRODUCT)


def test_warpgroups_wait_for_their_own_groups():
    def kernel():
        img, acc0 = setup()
        acc1 = emu.wgmma_accumulator(64, warpgroup=1)
        mma(acc0)
        mma(acc1)
        emu.wgmma_commit_group(0)
        emu.wgmma_commit_group(1)
        emu.wgmma_wait_group(0, warpgroup=0)
        acc0.read()
        acc1.read()  # warpgroup 1 never waited

    with pytest.raises(emu.RaceError, match="warpgroup 1 of CTA rank 0 .* reads the accumulator"):
        emu.launch(kernel, (1,))


def test_generic_write_to_an_operand_before_the_wait_is_a_race():
    def kernel():
        img, acc = setup()
        mma(acc)
        emu.wgmma_commit_group()
        img[B_AT + 5] ^= 0xFF  # the next tile written too early
        emu.fence_proxy_async()
        emu.wgmma_wait_group(0)

    with pytest.raises(emu.RaceError, match=r"shared byte 0x8005 of its operands changed between its issue and its "
                                            r"execution"):
        emu.launch(kernel, (1,))


def test_tma_load_into_the_stage_before_the_wait_is_a_race():
    """The producer refills the stage an MMA reads before the consumer's wait_group: a pipeline released too early."""
    g = emu.alloc((64, 64), np.uint16, align=128)
    g[:] = 0x3F80  # bf16 1.0
    tm = TensorMap.from_tensor(g, (64, 64), swizzle=SwizzleMode.B128, dtype="bf16")

    def kernel(g):
        img, acc = setup()
        bar = emu.shared_barrier()
        emu.initialize_barrier(bar, 1)
        mma(acc)
        emu.wgmma_commit_group()
        emu.set_barrier_transaction_bytes(bar, 64 * 128)
        emu.tma_load(tm, (0, 0), img[B_AT:], bar)
        emu.wait_barrier(bar, 0)  # MMA and load both complete here, MMA first (issue order)
        emu.wgmma_wait_group(0)

    with pytest.raises(emu.RaceError, match="after it was issued, before the wgmma.wait_group that covers it"):
        emu.launch(kernel, (1,), g)


def test_missing_fence_before_the_first_mma():
    def kernel():
        img, acc = setup()
        mma(acc, warpgroup_fence=False)

    with pytest.raises(emu.RaceError, match="before any wgmma.fence: PTX requires wgmma_fence"):
        emu.launch(kernel, (1,))


def test_register_writes_after_the_fence_need_another_fence():
    def kernel(fence_again):
        img, acc = setup()
        emu.wgmma_fence()
        acc.fill(0)  # zeroing the accumulator after the fence
        if fence_again:
            emu.wgmma_fence()
        emu.wgmma_mma_async(acc, k_desc(A_AT), k_desc(B_AT), 1)
        emu.wgmma_commit_group()
        emu.wgmma_wait_group(0)

    emu.launch(kernel, (1,), True)
    with pytest.raises(emu.RaceError, match="uses accumulator that the program accessed after the last wgmma.fence"):
        emu.launch(kernel, (1,), False)


def test_a_fragment_written_after_the_fence():
    def kernel():
        img, acc = setup()
        frag = emu.wgmma_fragment_a("bf16")
        emu.wgmma_fence()
        frag.load(A_BITS)
        emu.wgmma_mma_async(acc, frag, k_desc(B_AT), 0)

    with pytest.raises(emu.RaceError, match="uses A-fragment registers that the program accessed after the last"):
        emu.launch(kernel, (1,))


def test_a_fragment_overwritten_before_the_wait():
    def kernel():
        img, acc = setup()
        frag = emu.wgmma_fragment_a("bf16")
        frag.load(A_BITS)
        emu.wgmma_fence()
        emu.wgmma_mma_async(acc, frag, k_desc(B_AT), 0)
        emu.wgmma_commit_group()
        frag.load(A_BITS)

    with pytest.raises(emu.RaceError, match="writes the A-fragment registers of wgmma.mma_async"):
        emu.launch(kernel, (1,))


def test_chained_mmas_of_another_shape_need_a_fence():
    def kernel():
        img, acc = setup()
        mma(acc)
        emu.wgmma_mma_async(acc, k_desc(A_AT), k_desc(B_AT), 1, atype="e4m3")  # k32 on a k16 chain

    with pytest.raises(emu.RaceError, match="a different shape, without wgmma_fence"):
        emu.launch(kernel, (1,))


def test_unfenced_generic_operand_writes():
    def kernel():
        img, acc = setup(fence=False)
        mma(acc)

    with pytest.raises(emu.RaceError, match="without fence.proxy.async in between"):
        emu.launch(kernel, (1,))


def test_exit_with_an_mma_in_flight():
    def kernel():
        img, acc = setup()
        mma(acc)
        emu.wgmma_commit_group()

    with pytest.raises(emu.ExitError, match="exited with wgmma.mma_async.* in flight"):
        emu.launch(kernel, (1,))


def test_not_strict_warns_and_runs_on():
    def kernel():
        img, acc = setup()
        mma(acc)
        emu.wgmma_commit_group()
        acc.read()
        emu.wgmma_wait_group(0)

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        emu.launch(kernel, (1,), strict=False)
    assert any("reads the accumulator" in str(x.message) for x in w)


def test_clusters_park_at_wait_group():
    """In a cluster of 2 each CTA parks at its wait; both results arrive."""
    out = np.zeros((2, 64, 64), np.float32)

    def kernel(out):
        img, acc = setup()
        mma(acc)
        emu.wgmma_commit_group()
        emu.wgmma_wait_group(0)
        out[emu.block_rank_in_cluster()] = acc.read()
        emu.cluster_sync()

    emu.launch(kernel, (2,), (2,), out)
    assert np.array_equal(out[0], PRODUCT) and np.array_equal(out[1], PRODUCT)
