"""CuTe's device calls on tmakit.mma's objects in the emulator: gemm(tiled_mma, tCrA, tCrB, tCtAcc) and
copy(make_tmem_copy(...), tDtAcc, tDrAcc) per thread, scattered to global memory through partition_D."""

from __future__ import annotations

import numpy as np
import pytest

import tmakit as tk
from tmakit import emu

I = tk.Int  # noqa: E741
if not hasattr(tk, "make_tmem_copy"):  # tmakit.mma's TMEM copies land separately from the emulator
    pytest.skip("tk.make_tmem_copy / SM100_TMEM_LOAD_* not available yet", allow_module_level=True)
BM, BN, BK = 128, 64, 64


def k_sw128(rows):
    atom = tk.make_composed_layout(tk.Swizzle(3, 3, 3), 0, tk.make_layout((I(8), I(64)), (I(64), I(1))))
    return tk.tile_to_shape(atom, (I(rows), I(BK)))


def kernel(tm, tma_a, tma_b, mA, mB, D, load_op, threads):
    sA, sB = emu.shared_tensor(k_sw128(BM), np.float16), emu.shared_tensor(k_sw128(BN), np.float16)
    bar, mbar = emu.shared_barrier(), emu.shared_barrier()
    slot = emu.shared_alloc(4, 16, np.uint32)
    emu.initialize_barrier(bar, 1)
    emu.initialize_barrier(mbar, 1)
    alloc = emu.Allocator1Sm()
    alloc.allocate(64, slot)
    cta = tm.get_slice(0)
    s_a = tk.UMMA.tile_to_mma_shape(tk.UMMA.Layout_K_SW128_Atom(tk.half_t), tk.partition_shape_A(tm, (I(BM), I(BK))))
    s_b = tk.UMMA.tile_to_mma_shape(tk.UMMA.Layout_K_SW128_Atom(tk.half_t), tk.partition_shape_B(tm, (I(BN), I(BK))))
    tCrA = cta.make_fragment_A(tk.make_tensor(tk.make_smem_ptr(tk.half_t, sA.iterator.address), s_a))
    tCrB = cta.make_fragment_B(tk.make_tensor(tk.make_smem_ptr(tk.half_t, sB.iterator.address), s_b))
    gD = tk.make_tensor(D, tk.make_layout((I(BM), I(BN)), (BN, I(1))))
    tCgD = cta.partition_C(gD)
    tCtAcc = cta.make_fragment_C(tCgD)
    tCtAcc = tk.make_tensor(tCtAcc.iterator.with_address(int(slot[0])), tCtAcc.layout)
    emu.set_barrier_transaction_bytes(bar, (BM + BN) * BK * 2)
    emu.copy(tma_a.with_(bar), tma_a.get_slice(0).partition_S(mA), tma_a.get_slice(0).partition_D(sA))
    emu.copy(tma_b.with_(bar), tma_b.get_slice(0).partition_S(mB), tma_b.get_slice(0).partition_D(sB))
    emu.wait_barrier(bar, 0)
    tm.accumulate_ = tk.UMMA.ScaleOut.Zero
    for k_block in range(4):
        emu.gemm(tm, tCrA[(tk._, tk._, k_block)], tCrB[(tk._, tk._, k_block)], tCtAcc)
        tm.accumulate_ = tk.UMMA.ScaleOut.One
    emu.umma_arrive(mbar)
    emu.wait_barrier(mbar, 0)
    t2r = tk.make_tmem_copy(load_op, tCtAcc)
    for t in threads:
        thr = t2r.get_slice(t)
        tDtAcc, tDgD = thr.partition_S(tCtAcc), thr.partition_D(tCgD)
        regs = np.empty(int(tk.size(tDgD)), np.float32)
        emu.tmem_copy(t2r, tDtAcc, regs, t)
        for i in range(regs.size):  # copy(tDrAcc, tDgD)
            tDgD[i] = regs[i]
    alloc.free(int(slot[0]), 64)


@pytest.mark.parametrize("load_op", [tk.SM100_TMEM_LOAD_32dp32b1x(), tk.SM100_TMEM_LOAD_32dp32b4x(),
                                     tk.SM100_TMEM_LOAD_16dp256b1x()], ids=str)
def test_cute_gemm_and_tmem_copy(load_op):
    rng = np.random.default_rng(5)
    A, B = emu.alloc((BM, BK), np.float16), emu.alloc((BN, BK), np.float16)
    A[:], B[:] = rng.integers(-3, 4, A.shape), rng.integers(-3, 4, B.shape)
    mA = tk.make_tensor(A, tk.make_layout(A.shape, (BK, 1)))
    mB = tk.make_tensor(B, tk.make_layout(B.shape, (BK, 1)))
    tma_a = tk.make_tma_atom(tk.SM90_TMA_LOAD, mA, k_sw128(BM), (I(BM), I(BK)))
    tma_b = tk.make_tma_atom(tk.SM90_TMA_LOAD, mB, k_sw128(BN), (I(BN), I(BK)))
    tm = tk.make_tiled_mma(tk.SM100_MMA_F16BF16_SS(tk.half_t, tk.half_t, np.float32, BM, BN, tk.UMMA.Major.K,
                                                   tk.UMMA.Major.K))
    D = np.full((BM, BN), np.nan, np.float32)
    threads = range(128) if "32dp32b" in str(load_op) else [0, 5, 37, 70, 127]
    emu.launch(kernel, (1, 1, 1), tm, tma_a, tma_b, tma_a.get_tma_tensor(mA.shape), tma_b.get_tma_tensor(mB.shape),
               D, load_op, threads)
    ref = A.astype(np.float32) @ B.astype(np.float32).T
    done = ~np.isnan(D)
    assert done.sum() >= len(threads) * 16
    assert np.array_equal(D[done], ref[done])
    if len(threads) == 128:
        assert done.all()
