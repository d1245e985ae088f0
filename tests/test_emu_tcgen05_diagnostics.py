"""Each tcgen05 diagnostic fires on a program with that bug and names the CTA, the instruction and the fix."""

from __future__ import annotations

import numpy as np
import pytest

from tmakit import emu
from tmakit.emu.umma_desc import encode_instr_desc, encode_smem_desc
from umma_programs import Problem

IDESC = encode_instr_desc("f16", "bf16", "bf16", 128, 64)
DESC = encode_smem_desc(0, 16, 1024, 2)


def run(kernel, cluster=(1, 1, 1), **kw):
    return emu.launch(kernel, cluster, cluster, **kw)


def test_mma_before_allocation():
    def kernel():
        emu.shared_alloc(16384, 1024)
        emu.umma("f16", 0, DESC, DESC, IDESC, False)

    with pytest.raises(emu.IllegalInstruction, match=r"tcgen05\.mma.*CTA rank 0.*not allocated.*allocate"):
        run(kernel)


def test_ld_before_allocation():
    with pytest.raises(emu.IllegalInstruction, match=r"tcgen05\.ld.*thread 5.*CTA rank 0.*nothing is allocated"):
        run(lambda: emu.tmem_load(0, "32x32b", 4, thread=5))


def test_warp_reading_another_warps_lanes():
    def kernel():
        slot = emu.shared_alloc(4, 4, np.uint32)
        emu.Allocator1Sm().allocate(32, slot)
        emu.tmem_load(int(slot[0]) + (32 << 16), "32x32b", 1, thread=0)  # warp 0 reads lanes 32..63

    with pytest.raises(emu.IllegalInstruction, match=r"warp 0 .*lane 32.*only lanes.*0\.\.31.*get_slice"):
        run(kernel)


def test_warp_5_reaches_quarter_1():
    got = {}

    def kernel():
        slot = emu.shared_alloc(4, 4, np.uint32)
        a = emu.Allocator1Sm()
        a.allocate(32, slot)
        got["v"] = emu.tmem_load(int(slot[0]) + (32 << 16), "16x256b", 1, thread=5 * 32 + 3)
        a.free(int(slot[0]), 32)

    run(kernel)
    assert got["v"].shape == (4,)


def _mma_program(commit: bool, wait: bool, mask=None, late_wait=False):
    def kernel():
        smem = emu.shared_alloc(32768, 1024)
        bar, slot = emu.shared_barrier(), emu.shared_alloc(4, 4, np.uint32)
        emu.initialize_barrier(bar, 1)
        a = emu.Allocator1Sm()
        a.allocate(64, slot)
        t = int(slot[0])
        emu.umma("f16", t, encode_smem_desc(smem.address, 16, 1024, 2),
                 encode_smem_desc(smem.address + 16384, 16, 1024, 2), IDESC, False)
        if commit:
            emu.umma_commit(bar, mask)
        if wait:
            emu.wait_barrier(bar, 0)
        emu.tmem_load(t, "32x32b", 64, thread=0)
        if late_wait:
            emu.wait_barrier(bar, 0)
        a.free(t, 64)
    return kernel


@pytest.mark.parametrize("commit,wait,why", [
    (False, False, "no tcgen05.commit"),
    (True, False, "has not arrived|has not waited"),
])
def test_reading_the_accumulator_before_the_commit_barrier(commit, wait, why):
    with pytest.raises(emu.RaceError, match=rf"tcgen05\.ld.*CTA rank 0.*tcgen05\.mma.*({why}).*Fix: umma_arrive"):
        run(_mma_program(commit, wait))


def test_reading_after_commit_and_wait_is_clean():
    run(_mma_program(True, True))


def test_reading_before_the_commit_barrier_as_a_warning():
    with pytest.warns(emu.EmuWarning, match="before that MMA is known to be complete"):
        run(_mma_program(True, False, late_wait=True), strict=False)


def test_missing_dealloc_at_exit():
    def kernel():
        slot = emu.shared_alloc(4, 4, np.uint32)
        emu.Allocator1Sm().allocate(128, slot)

    with pytest.raises(emu.ExitError, match=r"CTA rank 0.*exited with TMEM still allocated.*columns 0\.\.127.*free"):
        run(kernel)


def test_2sm_mma_from_the_odd_cta():
    def kernel():
        slot = emu.shared_alloc(4, 4, np.uint32)
        emu.shared_alloc(32768, 1024)
        a = emu.Allocator2Sm()
        a.allocate(128, slot)
        emu.cluster_sync()
        if emu.block_rank_in_cluster() == 1:
            emu.umma("f16", int(slot[0]), DESC, DESC, encode_instr_desc("f16", "bf16", "bf16", 256, 64), False, 2)
        a.free(int(slot[0]), 128)

    with pytest.raises(emu.IllegalInstruction, match=r"CTA rank 1.*odd CTA of its pair.*leader"):
        run(kernel, (2, 1, 1))


def test_2sm_peer_without_allocation():
    def kernel():
        slot = emu.shared_alloc(4, 4, np.uint32)
        emu.shared_alloc(32768, 1024)
        rank = emu.block_rank_in_cluster()
        if rank == 0:
            emu.Allocator2Sm().allocate(128, slot)
        emu.cluster_sync()
        if rank == 0:
            emu.umma("f16", int(slot[0]), DESC, DESC, encode_instr_desc("f16", "bf16", "bf16", 256, 64), False, 2)
        emu.cluster_sync()

    with pytest.raises(emu.IllegalInstruction, match=r"CTA rank 0.*peer CTA rank 1.*no TMEM.*Allocator2Sm"):
        run(kernel, (2, 1, 1))


def test_2sm_mma_with_a_1sm_allocation():
    def kernel():
        slot = emu.shared_alloc(4, 4, np.uint32)
        emu.shared_alloc(32768, 1024)
        a = emu.Allocator1Sm()
        a.allocate(128, slot)
        emu.cluster_sync()
        if emu.block_rank_in_cluster() == 0:
            emu.umma("f16", int(slot[0]), DESC, DESC, encode_instr_desc("f16", "bf16", "bf16", 256, 64), False, 2)
        emu.cluster_sync()
        a.free(int(slot[0]), 128)

    with pytest.raises(emu.IllegalInstruction, match=r"cta_group::2, but this kernel already used cta_group::1"):
        run(kernel, (2, 1, 1))


def test_2sm_mma_without_a_peer():
    with pytest.raises(emu.IllegalInstruction, match=r"cta_group::2 needs a peer CTA"):
        run(lambda: emu.Allocator2Sm().allocate(32, emu.shared_alloc(4, 4, np.uint32)))


def test_2sm_commit_that_skips_the_peer():
    """The leader commits only to itself; the peer waits on a barrier nothing arrives on: a hang, explained."""
    p = Problem("bf16", 256, 64, 64, "K", "K", "128B", "128B", cta_group=2, commit_mask=0b01)
    with pytest.raises(emu.Deadlock, match=r"(?s)CTA rank 1.*wait_barrier.*1 of 1 arrival"):
        p.run()


def test_version_0_descriptor_is_refused():
    def kernel():
        slot = emu.shared_alloc(4, 4, np.uint32)
        emu.Allocator1Sm().allocate(64, slot)
        emu.umma("f16", 0, DESC & ~(3 << 46), DESC, IDESC, False)

    with pytest.raises(emu.IllegalInstruction, match="version 0.*make_umma_desc"):
        run(kernel)


def test_first_mma_that_accumulates_reads_uncleared_tmem():
    """tcgen05.alloc does not clear TMEM: accumulating into fresh columns gives NaN in the emulator."""
    got = {}

    def kernel():
        smem = emu.shared_alloc(32768, 1024)
        bar, slot = emu.shared_barrier(), emu.shared_alloc(4, 4, np.uint32)
        emu.initialize_barrier(bar, 1)
        a = emu.Allocator1Sm()
        a.allocate(64, slot)
        t = int(slot[0])
        emu.umma("f16", t, encode_smem_desc(smem.address, 16, 1024, 2),
                 encode_smem_desc(smem.address + 16384, 16, 1024, 2), IDESC, True)  # should be False (ScaleOut::Zero)
        emu.umma_arrive(bar)
        emu.wait_barrier(bar, 0)
        got["row0"] = emu.tmem_load(t, "32x32b", 64, thread=0).view(np.float32)
        a.free(t, 64)

    run(kernel)
    assert np.isnan(got["row0"]).all()


def test_2sm_peer_reads_its_half_before_waiting():
    idesc = encode_instr_desc("f16", "bf16", "bf16", 256, 64)

    def kernel():
        smem = emu.shared_alloc(32768, 1024)
        bar, slot = emu.shared_barrier(), emu.shared_alloc(4, 4, np.uint32)
        emu.initialize_barrier(bar, 1)
        emu.fence_barrier_init()
        a = emu.Allocator2Sm()
        a.allocate(64, slot)
        emu.cluster_sync()
        t = int(slot[0])
        if emu.block_rank_in_cluster() == 0:
            emu.umma("f16", t, encode_smem_desc(smem.address, 16, 1024, 2),
                     encode_smem_desc(smem.address + 16384, 16, 1024, 2), idesc, False, 2)
            emu.umma_arrive_multicast_2x1SM(bar, 0b11)
        emu.cluster_sync()  # the MMA is issued (and its commit delivered) before the peer reads
        if emu.block_rank_in_cluster() == 0:
            emu.wait_barrier(bar, 0)
        emu.tmem_load(t, "32x32b", 64, thread=3)  # the peer skips wait_barrier(bar, 0)
        emu.cluster_sync()
        a.free(t, 64)

    with pytest.raises(emu.RaceError, match=r"CTA rank 1.*tcgen05\.mma\.cta_group::2.*CTA rank 0.*has not waited"):
        run(kernel, (2, 1, 1))
