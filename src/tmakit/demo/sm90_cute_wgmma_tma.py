"""CuTe's Hopper tutorial ``examples/cute/tutorial/hopper/wgmma_tma_sm90.cu`` on the emulator, line by line: half
A, B, C, CTA tiles of 128x128x64 in a 3-stage pipeline of TMA loads guarded by full (TMA) and empty (MMA) mbarriers,
``SM90_64x64x16_F16F16F16_SS`` GMMAs issued by one warpgroup with ``warpgroup_arrive`` / ``gemm`` /
``warpgroup_commit_batch`` / ``warpgroup_wait<0>``, and the epilogue ``axpby(alpha, tCrC, beta, tCgC)``; clusters
of 2x1 CTAs as the tutorial launches them. ``gemm_tn`` (K-major A and B: ``GMMA::Layout_K_SW128_Atom``) and
``gemm_nt`` (M/N-major: ``Layout_MN_SW128_Atom``, the tutorial's default) are its two host functions.

A CTA is one program: the warpgroup-wide calls run once, and what each of the 128 threads does with its own
registers (``clear(tCrC)``, the epilogue) loops over the threads, thread ``t`` using ``tiled_mma.get_thread_slice(t)``
and ``tCrC[t]`` (``emu.thread_fragments_C``). Run: ``tmakit demo hopper-cute`` or
``python examples/hopper_cute_wgmma_tma.py``.
"""

from __future__ import annotations

import numpy as np

import tmakit as tk

from .. import emu

I = tk.Int  # noqa: E741
_ = tk._


class PipelineState:
    """``cutlass::PipelineState<Stages>``: a circular stage index and a phase that flips at each wrap-around."""

    def __init__(self, stages: int):
        self.stages, self.index, self.phase = stages, 0, 0

    def advance(self) -> None:  # ++state
        self.index += 1
        if self.index == self.stages:
            self.index, self.phase = 0, self.phase ^ 1


def gemm_device(shape_MNK, cta_tiler, sA_layout, sB_layout, tma_a, tma_b, C, dC, mma, alpha, beta,  # noqa: N803
                trace=False):
    """The tutorial's ``gemm_device`` (SmemLayoutA/B, template arguments there, are arguments here)."""
    M, N, K = shape_MNK  # noqa: N806
    mA = tma_a.get_tma_tensor((M, K))  # (M,K) TMA tensor
    mB = tma_b.get_tma_tensor((N, K))  # (N,K) TMA tensor
    mC = tk.make_tensor(C, tk.make_layout((M, N), dC))  # (M,N)
    b = emu.block_idx()
    cta_coord = (b.x, b.y, _)  # (m,n,k)
    gA = tk.local_tile(mA, cta_tiler, cta_coord, (I(1), None, I(1)))  # (BLK_M,BLK_K,k)
    gB = tk.local_tile(mB, cta_tiler, cta_coord, (None, I(1), I(1)))  # (BLK_N,BLK_K,k)
    gC = tk.local_tile(mC, cta_tiler, cta_coord, (I(1), I(1), None))  # (BLK_M,BLK_N)

    # SharedStorage: A, B (1024-byte aligned: a 128B-swizzle pattern starts there), tma_barrier[P], mma_barrier[P]
    a_smem = emu.shared_alloc(int(tk.cosize(sA_layout)) * 2, 1024)
    b_smem = emu.shared_alloc(int(tk.cosize(sB_layout)) * 2, 1024)
    producer_mbar, consumer_mbar = emu.shared_barrier(int(tk.size(sA_layout, 2))), emu.shared_barrier(
        int(tk.size(sA_layout, 2)))
    sA = tk.make_tensor(tk.make_smem_ptr(tk.half_t, a_smem.address), sA_layout)  # (BLK_M,BLK_K,PIPE)
    sB = tk.make_tensor(tk.make_smem_ptr(tk.half_t, b_smem.address), sB_layout)  # (BLK_N,BLK_K,PIPE)

    tAgA, tAsA = tk.tma_partition(tma_a, 0, tk.make_layout(I(1)), tk.group_modes(sA, 0, 2),
                                  tk.group_modes(gA, 0, 2))  # (TMA,k) and (TMA,PIPE)
    tBgB, tBsB = tk.tma_partition(tma_b, 0, tk.make_layout(I(1)), tk.group_modes(sB, 0, 2),
                                  tk.group_modes(gB, 0, 2))
    tma_transaction_bytes = (int(tk.size(tAsA.layout[0])) + int(tk.size(tBsB.layout[0]))) * 2

    K_PIPE_MAX = int(tk.size(tAsA.layout[1]))  # noqa: N806
    k_tile_count, k_tile = int(tk.size(tAgA.layout[1])), 0
    for pipe in range(K_PIPE_MAX):  # warp 0's elected thread
        emu.initialize_barrier(producer_mbar[pipe], 1)  # ClusterTransactionBarrier::init
        emu.initialize_barrier(consumer_mbar[pipe], 128)  # ClusterBarrier::init: one arrival per thread
    emu.cluster_sync()
    for pipe in range(K_PIPE_MAX):  # start async loads for all pipes
        emu.set_barrier_transaction_bytes(producer_mbar[pipe], tma_transaction_bytes)  # arrive_and_expect_tx
        emu.copy(tma_a.with_(producer_mbar[pipe]), tAgA[(_, k_tile)], tAsA[(_, pipe)])
        emu.copy(tma_b.with_(producer_mbar[pipe]), tBgB[(_, k_tile)], tBsB[(_, pipe)])
        k_tile_count -= 1
        k_tile += 1

    thr_mma = [mma.get_thread_slice(t) for t in range(128)]  # thread t's ThrMMA (threadIdx.x = t)
    tCsA = thr_mma[0].partition_A(sA)  # (MMA,MMA_M,MMA_K,PIPE): the same for the warpgroup's 128 threads
    tCsB = thr_mma[0].partition_B(sB)  # (MMA,MMA_N,MMA_K,PIPE)
    tCgC = [thr.partition_C(gC) for thr in thr_mma]  # (MMA,MMA_M,MMA_N) of each thread
    tCrC = emu.thread_fragments_C(mma, thr_mma[0].make_fragment_C(tCgC[0]))  # tCrC[t]: thread t's registers
    for t in range(128):
        tk.clear(tCrC[t])
    tCrA = thr_mma[0].make_fragment_A(tCsA)  # (MMA,MMA_M,MMA_K,PIPE) GMMA descriptors
    tCrB = thr_mma[0].make_fragment_B(tCsB)  # (MMA,MMA_N,MMA_K,PIPE)
    if trace and (b.x, b.y) == (0, 0):
        print("\n".join(f"{k}:\t{v}" for k, v in dict(tAgA=tAgA, tAsA=tAsA, tCsA=tCsA, tCgC=tCgC[0], tCrC=tCrC[0],
                                                         tCrA=tCrA, tCrB=tCrB).items()))
        print(f"tma_transaction_bytes: {tma_transaction_bytes}")

    write_state, read_state = PipelineState(K_PIPE_MAX), PipelineState(K_PIPE_MAX)
    while k_tile_count > -K_PIPE_MAX:
        read_pipe = read_state.index
        emu.wait_barrier(producer_mbar[read_pipe], read_state.phase)  # wait for the producer (the TMA bytes)
        emu.warpgroup_arrive()  # MMAs to cover one K_TILE
        emu.gemm(mma, tCrA[(_, _, _, read_pipe)], tCrB[(_, _, _, read_pipe)], tCrC[0])  # (V,M) x (V,N) => (V,M,N)
        emu.warpgroup_commit_batch()
        emu.warpgroup_wait(0)  # wait for all MMAs of the K_TILE
        emu.arrive_barrier(consumer_mbar[read_pipe], 128)  # each of the 128 threads: consumption done
        read_state.advance()
        if k_tile_count > 0:  # warp 0's elected thread issues the next TMA copies
            pipe = write_state.index
            emu.wait_barrier(consumer_mbar[pipe], write_state.phase)
            emu.set_barrier_transaction_bytes(producer_mbar[pipe], tma_transaction_bytes)
            emu.copy(tma_a.with_(producer_mbar[pipe]), tAgA[(_, k_tile)], tAsA[(_, pipe)])
            emu.copy(tma_b.with_(producer_mbar[pipe]), tBgB[(_, k_tile)], tBsB[(_, pipe)])
            write_state.advance()
        k_tile_count -= 1
        k_tile += 1

    for t in range(128):  # epilogue (unpredicated), thread by thread
        tk.axpby(alpha, tCrC[t], beta, tCgC[t])


def _gemm(major, m, n, k, alpha, A, dA, B, dB, beta, C, dC, trace):  # noqa: N803
    """The body shared by the tutorial's ``gemm_nt`` and ``gemm_tn`` (they differ in the majors only)."""
    prob_shape = (m, n, k)
    bM, bN, bK, bP = I(128), I(128), I(64), I(3)  # noqa: N806
    cta_tiler = (bM, bN, bK)
    if m % (2 * bM) or n % bN or k % bK or k < bK * bP:
        raise ValueError(f"M {m} must be a multiple of 256 (128-row tiles in clusters of 2, unpredicated), N {n} of "
                         f"128, K {k} a multiple of 64 of at least 192 (the 3 stages are loaded up front)")
    atom = tk.GMMA.Layout_K_SW128_Atom if major == tk.GMMA.Major.K else tk.GMMA.Layout_MN_SW128_Atom
    sA = tk.tile_to_shape(atom(tk.half_t), (bM, bK, bP))  # noqa: N806
    sB = tk.tile_to_shape(atom(tk.half_t), (bN, bK, bP))  # noqa: N806
    tiled_mma = tk.make_tiled_mma(tk.SM90_64x64x16_F16F16F16_SS(major, major))
    mA = tk.make_tensor(A, tk.make_layout((m, k), dA))  # noqa: N806
    mB = tk.make_tensor(B, tk.make_layout((n, k), dB))  # noqa: N806
    tmaA = tk.make_tma_atom(tk.SM90_TMA_LOAD, mA, sA(_, _, 0), (bM, bK))  # noqa: N806
    tmaB = tk.make_tma_atom(tk.SM90_TMA_LOAD, mB, sB(_, _, 0), (bN, bK))  # noqa: N806
    if trace:
        print(f"sA:\t{sA}\nsB:\t{sB}\n{tiled_mma}\ntmaA:\t{tmaA}")
    dim_cluster = (2, 1, 1)
    dim_grid = (-(-(m // bM) // 2) * 2, n // bN)  # round_up(ceil_div(m, bM), 2), ceil_div(n, bN)
    return emu.launch(gemm_device, dim_grid, dim_cluster, prob_shape, cta_tiler, sA, sB, tmaA, tmaB, C, dC,
                      tiled_mma, alpha, beta, trace=trace)


def gemm_nt(m, n, k, alpha, A, ldA, B, ldB, beta, C, ldC, trace=False):  # noqa: N803
    """``gemm_nt``: A (M,K) and B (N,K) M/N-major (strides (1, ld)), ``Layout_MN_SW128_Atom``, GMMA <MN, MN>."""
    return _gemm(tk.GMMA.Major.MN, m, n, k, alpha, A, (I(1), ldA), B, (I(1), ldB), beta, C, (I(1), ldC), trace)


def gemm_tn(m, n, k, alpha, A, ldA, B, ldB, beta, C, ldC, trace=False):  # noqa: N803
    """``gemm_tn``: A (M,K) and B (N,K) K-major (strides (ld, 1)), ``Layout_K_SW128_Atom``, GMMA <K, K>."""
    return _gemm(tk.GMMA.Major.K, m, n, k, alpha, A, (ldA, I(1)), B, (ldB, I(1)), beta, C, (I(1), ldC), trace)


def gemm(trans_a, trans_b, m, n, k, alpha, A, ldA, B, ldB, beta, C, ldC, trace=False):  # noqa: N803
    """The tutorial's ``gemm(transA, transB, ...)``: 'N','T' -> gemm_nt, 'T','N' -> gemm_tn."""
    if (trans_a, trans_b) == ("N", "T"):
        return gemm_nt(m, n, k, alpha, A, ldA, B, ldB, beta, C, ldC, trace)
    if (trans_a, trans_b) == ("T", "N"):
        return gemm_tn(m, n, k, alpha, A, ldA, B, ldB, beta, C, ldC, trace)
    raise ValueError(f"transA {trans_a!r} transB {trans_b!r}: not implemented (the tutorial's NT and TN only)")


def run(trans_a="T", trans_b="N", m=256, n=128, k=256, seed=0, trace=False):
    """The tutorial's ``main``: A, B of +-1 (half), C = 0, alpha 1, beta 0; returns (C (M,N) as float32, the
    reference A.B^T in float64, launch stats)."""
    rng = np.random.default_rng(seed)
    h_A = np.where(rng.integers(0, 2, m * k) == 1, 1.0, -1.0).astype(np.float16)  # noqa: N806
    h_B = np.where(rng.integers(0, 2, n * k) == 1, 1.0, -1.0).astype(np.float16)  # noqa: N806
    d_A, d_B = emu.alloc((m * k,), np.float16, align=128), emu.alloc((n * k,), np.float16, align=128)  # noqa: N806
    d_C = emu.alloc((m * n,), np.float16, align=128)  # noqa: N806
    d_A[:], d_B[:], d_C[:] = h_A, h_B, 0
    ldA = m if trans_a == "N" else k  # noqa: N806
    ldB = k if trans_b == "N" else n  # noqa: N806
    stats = gemm(trans_a, trans_b, m, n, k, 1.0, d_A, ldA, d_B, ldB, 0.0, d_C, m, trace=trace)
    a = h_A.reshape(k, m).T if trans_a == "N" else h_A.reshape(m, k)  # (M,K) values
    b = h_B.reshape(k, n).T if trans_b == "T" else h_B.reshape(n, k)  # (N,K) values
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    return d_C.reshape(n, m).T.astype(np.float32), ref, stats


def main() -> None:
    for ta, tb in (("T", "N"), ("N", "T")):
        c, ref, stats = run(ta, tb, trace=(ta == "T"))
        ok = np.array_equal(c, ref)
        print(f"gemm {ta}{tb} (MxNxK) 256x128x256 on the emulator: {stats}; C equals numpy exactly: {ok}")
        print("Execution is " + ("successful." if ok else "failed."))


if __name__ == "__main__":
    main()
