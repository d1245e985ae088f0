"""Seed 004 / CuTe's Blackwell tutorial 04 (``mma_tma_2sm_sm100``) on the emulator: as tutorial 03, but every MMA
is a 256x256 ``tcgen05.mma.cta_group::2`` over a CTA pair (the cluster's V mode). Each CTA of a pair holds 128 rows
of A and 128 rows of B; both load with the 2-SM TMA (the bytes complete on the even CTA's barrier, which expects
both CTAs' bytes), only the even CTA waits and issues the MMAs, and its commit (``umma_arrive_multicast_2x1SM``)
reaches every CTA that shares its A or B. The accumulator is split by rows: CTA v of a pair holds rows v*128..+127.

Run: ``tmakit demo blackwell`` or ``python examples/blackwell_mma_tma_2sm.py``. The CUDA C++ kernel for sm_100a is
``src/tmakit/kernels/blackwell/mma_tma_2sm_sm100.cu``.
"""

from __future__ import annotations

import copy

import numpy as np

from .. import emu
from ..emu.umma import reference_mma
from ..emu.umma_desc import decode_instr_desc, encode_instr_desc
from .sm100_mma_tma_multicast import BK, MMA_K, k_sw128_atom, make_problem, masks, tk

I = tk.Int  # noqa: E741
MMA_M, MMA_N = 256, 256
BM, BN = MMA_M // 2, MMA_N // 2  # per CTA of the pair
CLUSTER = (4, 4, 1)


def cluster_layout_vmnk():
    """``tiled_divide(make_layout(cluster_shape), make_tile(AtomThrID = _2))``: ((_2),_2,_4,_1):((_1),_2,_4,_0)."""
    return tk.tiled_divide(tk.make_layout((I(4), I(4), I(1))), (I(2),))


def mma_fragments(cta_mma, sA, sB, tmem_base):  # noqa: N803 - CuTe's names
    """CuTe's ``make_fragment_A/B`` (UMMA descriptor iterators over this CTA's shared tiles, laid out by
    ``UMMA::tile_to_mma_shape(Layout_K_SW128_Atom<half_t>, partition_shape_A/B)``) and ``make_fragment_C`` (the
    accumulator in TMEM, ``tCtAcc.data() = tmem_base_ptr``)."""
    tm = cta_mma.tiled_mma
    shape_a = tk.partition_shape_A(tm, (I(MMA_M), I(BK)))
    shape_b = tk.partition_shape_B(tm, (I(MMA_N), I(BK)))
    s_a = tk.UMMA.tile_to_mma_shape(tk.UMMA.Layout_K_SW128_Atom(tk.half_t), shape_a)
    s_b = tk.UMMA.tile_to_mma_shape(tk.UMMA.Layout_K_SW128_Atom(tk.half_t), shape_b)
    tCrA = cta_mma.make_fragment_A(tk.make_tensor(tk.make_smem_ptr(tk.half_t, sA.iterator.address), s_a))
    tCrB = cta_mma.make_fragment_B(tk.make_tensor(tk.make_smem_ptr(tk.half_t, sB.iterator.address), s_b))
    g_c = tk.make_tensor(tk.make_gmem_ptr(np.float32, 0), tk.make_layout((tk.tile_size(tm, 0), tk.tile_size(tm, 1))))
    tCtAcc = cta_mma.make_fragment_C(cta_mma.partition_C(g_c))
    return tCrA, tCrB, tk.make_tensor(tCtAcc.iterator.with_address(tmem_base), tCtAcc.layout)


def gemm_kernel(tiled_mma, tma_a, tma_b, mA, mB, D, gemm_k, alpha, beta, C):
    tiled_mma = copy.copy(tiled_mma)  # a by-value kernel parameter: each CTA flips its own accumulate_
    vmnk = cluster_layout_vmnk()
    rank = emu.block_rank_in_cluster()
    coord = vmnk.get_flat_coord(rank)
    v = int(tk.get(coord, 0))
    elect_one_cta = v == 0
    b = emu.block_idx()
    m_tile, n_tile = b.x // 2, b.y  # mma_coord_vmnk = (blockIdx.x % 2, blockIdx.x / 2, blockIdx.y, _)
    sA = emu.shared_tensor(tk.tile_to_shape(k_sw128_atom(), (I(BM), I(BK))), np.float16)
    sB = emu.shared_tensor(tk.tile_to_shape(k_sw128_atom(), (I(BN), I(BK))), np.float16)
    mma_bar, tma_bar = emu.shared_barrier(), emu.shared_barrier()
    tmem_slot = emu.shared_alloc(4, 16, np.uint32)

    allocator = emu.Allocator2Sm()
    allocator.allocate(allocator.Sm100TmemCapacityColumns, tmem_slot)
    tmem_acc = int(tmem_slot[0])

    gA = tk.local_tile(mA, (I(BM), I(BK)), (2 * m_tile + v, tk._))  # this CTA's 128 rows of the 256-row MMA tile
    gB = tk.local_tile(mB, (I(BN), I(BK)), (2 * n_tile + v, tk._))
    thr_a, thr_b = tma_a.get_slice(int(tk.get(coord, 2))), tma_b.get_slice(int(tk.get(coord, 1)))
    mask_a, mask_b, mask_c = masks(vmnk, coord)
    tx_bytes = int(tk.size(vmnk, 0)) * (BM * BK + BN * BK) * 2  # the leader also counts its peer's bytes

    emu.initialize_barrier(mma_bar, int(tk.size(vmnk, 1)) + int(tk.size(vmnk, 2)) - 1)
    emu.initialize_barrier(tma_bar, 1)
    emu.fence_barrier_init()
    emu.cluster_sync()  # barrier inits and both CTAs' TMEM allocations visible to the pair

    cta_mma = tiled_mma.get_slice(v)  # the peer coordinate in the pair
    tCrA, tCrB, tCtAcc = mma_fragments(cta_mma, sA, sB, tmem_acc)
    tiled_mma.accumulate_ = tk.UMMA.ScaleOut.Zero
    tma_phase = mma_phase = 0
    for k_tile in range(gemm_k // BK):
        if elect_one_cta:
            emu.set_barrier_transaction_bytes(tma_bar, tx_bytes)
        emu.copy_2sm(emu.with_(tma_a, tma_bar, mask_a), thr_a.partition_S(gA[(tk._, tk._, k_tile)]),
                     thr_a.partition_D(sA))
        emu.copy_2sm(emu.with_(tma_b, tma_bar, mask_b), thr_b.partition_S(gB[(tk._, tk._, k_tile)]),
                     thr_b.partition_D(sB))
        if elect_one_cta:
            emu.wait_barrier(tma_bar, tma_phase)
            tma_phase ^= 1
            for k_block in range(BK // MMA_K):  # one tcgen05.mma.cta_group::2.kind::f16 each
                emu.gemm(tiled_mma, tCrA[(tk._, tk._, k_block)], tCrB[(tk._, tk._, k_block)], tCtAcc)
                tiled_mma.accumulate_ = tk.UMMA.ScaleOut.One
            emu.umma_arrive_multicast_2x1SM(mma_bar, mask_c)
        emu.wait_barrier(mma_bar, mma_phase)
        mma_phase ^= 1

    for t in range(BM):  # make_tmem_copy(SM100_TMEM_LOAD_32dp32b1x, tCtAcc).get_slice(t)
        lane_addr = tmem_acc + ((t // 32 * 32) << 16)
        acc = np.concatenate([emu.tmem_load(lane_addr + c, "32x32b", 128, thread=t) for c in (0, 128)])
        row, cols = m_tile * MMA_M + v * BM + t, slice(n_tile * MMA_N, (n_tile + 1) * MMA_N)
        D[row, cols] = alpha * acc.view(np.float32) + beta * C[row, cols]
    emu.cluster_sync()
    allocator.release_allocation_lock()
    allocator.free(tmem_acc, allocator.Sm100TmemCapacityColumns)


def run(A, B, alpha=1.0, beta=0.0, C=None):
    """D = alpha * A.B^T + beta * C on the emulator (one CTA pair per 256x256 tile, 4x4 clusters)."""
    gemm_m, gemm_k = A.shape
    gemm_n = B.shape[0]
    if gemm_m % (MMA_M * 2) or gemm_n % (MMA_N * 4) or gemm_k % BK:
        raise ValueError(f"M {gemm_m} must be a multiple of {MMA_M * 2}, N {gemm_n} of {MMA_N * 4}, K {gemm_k} "
                         f"of {BK}")
    C = np.zeros((gemm_m, gemm_n), np.float32) if C is None else C
    D = np.full((gemm_m, gemm_n), np.nan, np.float32)
    mA = tk.make_tensor(A, tk.make_layout(A.shape, (gemm_k, 1)))
    mB = tk.make_tensor(B, tk.make_layout(B.shape, (gemm_k, 1)))
    sA = tk.tile_to_shape(k_sw128_atom(), (I(BM), I(BK)))
    sB = tk.tile_to_shape(k_sw128_atom(), (I(BN), I(BK)))
    # The boxes of SM100_TMA_2SM_LOAD_MULTICAST: A's 128 rows split over the 4 CTAs along N, B's over the 2 along M.
    tma_a = tk.make_tma_atom(tk.SM90_TMA_LOAD_MULTICAST, mA, sA, (I(BM), I(BK)), I(4))
    tma_b = tk.make_tma_atom(tk.SM90_TMA_LOAD_MULTICAST, mB, sB, (I(BN), I(BK)), I(2))
    grid = (gemm_m // MMA_M * 2, gemm_n // MMA_N, 1)
    tiled_mma = tk.make_tiled_mma(tk.SM100_MMA_F16BF16_2x1SM_SS(tk.half_t, tk.half_t, np.float32, MMA_M, MMA_N,
                                                                tk.UMMA.Major.K, tk.UMMA.Major.K))
    stats = emu.launch(gemm_kernel, grid, CLUSTER, tiled_mma, tma_a, tma_b, tma_a.get_tma_tensor(mA.shape),
                       tma_b.get_tma_tensor(mB.shape), D, gemm_k, alpha, beta, C, non_portable_cluster=True)
    return D, stats


def walkthrough():
    vmnk = cluster_layout_vmnk()
    print(f"cluster_layout_vmnk:\t{vmnk}")
    for coord in [(0, 1, 2, 0), (1, 1, 2, 0)]:
        a, b, c = masks(vmnk, coord)
        print(f"CTA (V,M,N,K) = {coord} (rank {vmnk(coord)}): tma_mcast_mask_a {a:#06x}, tma_mcast_mask_b {b:#06x}, "
              f"mma_mcast_mask_c {c:#06x}")
    seed_layout = tk.make_layout((I(2), I(2), I(4), I(1)), (I(8), I(4), I(1), I(0)))
    print("note: seed 004 writes this layout as (2,2,4,1):(8,4,1,0) and tma_mcast_mask_b = 0b110011; CuTe's "
          f"tiled_divide gives {vmnk}, and CuTe's mask for (0,1,2,0) of the seed's own layout is "
          f"{tk.create_tma_multicast_mask(seed_layout, (0, 1, 2, 0), 1):#x}; tmakit follows CuTe")
    print(f"tma_transaction_bytes (leader, both CTAs of the pair): {2 * (BM * BK + BN * BK) * 2}")
    idesc = encode_instr_desc("f16", "f16", "f16", MMA_M, MMA_N)
    print(f"UMMA: tcgen05.mma.cta_group::2.kind::f16 [tmem_c], desc_a, desc_b, idesc = {idesc:#010x}, p  "
          f"(M={decode_instr_desc(idesc).m}, N={decode_instr_desc(idesc).n}; issued by the even CTA only)")
    print("commit: tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 "
          "[mma_barrier], mma_mcast_mask_c")


def main():
    walkthrough()
    A, B = make_problem()
    D, stats = run(A, B)
    af, bf = A.astype(np.float32), B.astype(np.float32)
    exact = np.array_equal(D.view(np.uint32), reference_mma(af, bf.T, MMA_K).view(np.uint32))
    err = float(np.max(np.abs(D - af.astype(np.float64) @ bf.T.astype(np.float64))))
    print(f"Running for problem shape (MxNxK): {A.shape[0]}x{B.shape[0]}x{A.shape[1]} on the emulator: {stats}")
    print(f"D equals the emulator's defined fp32 order bit for bit: {exact}; max |D - numpy float64| = {err:.2e}")
    print("Execution is " + ("successful." if exact and err < 1e-3 else "failed."))


if __name__ == "__main__":
    main()
