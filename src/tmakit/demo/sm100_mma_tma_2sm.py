"""Seed 004 / CuTe's Blackwell tutorial 04 (``mma_tma_2sm_sm100``) on the emulator: as tutorial 03, but every MMA
is a 256x256 ``tcgen05.mma.cta_group::2`` over a CTA pair (the cluster's V mode). Each CTA of a pair holds 128 rows
of A and 128 rows of B; both load with ``SM100_TMA_2SM_LOAD_MULTICAST`` (the bytes complete on the even CTA's
barrier, which expects both CTAs' bytes), only the even CTA waits and issues the MMAs, and its commit
(``umma_arrive_multicast_2x1SM``) reaches every CTA that shares its A or B. CTA v of a pair holds accumulator rows
v*128..+127 in its TMEM.

Run: ``tmakit demo blackwell`` or ``python examples/blackwell_mma_tma_2sm.py``. The CUDA C++ kernel for sm_100a is
``src/tmakit/kernels/blackwell/mma_tma_2sm_sm100.cu``.
"""

from __future__ import annotations

import copy

import numpy as np

from .. import emu
from ..emu.umma import reference_mma
from ..emu.umma_desc import decode_instr_desc, encode_instr_desc
from ..layout.integer import to_str
from .sm100_mma_tma_multicast import BK, CLUSTER, CLUSTER_SHAPE, MMA_K, make_problem, masks, print_trace, tk

I = tk.Int  # noqa: E741
MMA_M, MMA_N = 256, 256
BM, BN = MMA_M // 2, MMA_N // 2  # per CTA of the pair


def cluster_layout_vmnk():
    """``tiled_divide(make_layout(cluster_shape), make_tile(AtomThrID = _2))``: ((_2),_2,_4,_1):((_1),_2,_4,_0)."""
    return tk.tiled_divide(tk.make_layout(CLUSTER_SHAPE), (I(2),))


def gemm_kernel(tiled_mma, mma_tiler, sA_layout, sB_layout, tma_atom_A, tma_atom_B, mA, mB, D, alpha, beta, C,
                trace=None):  # noqa: N803 - CuTe's names
    """CuTe's ``gemm_device`` of tutorial 04, line by line (a CTA is one thread; the epilogue loops over the 128)."""
    tiled_mma = copy.copy(tiled_mma)  # a by-value kernel parameter: each CTA flips its own accumulate_
    cluster_layout_vmnk = tk.tiled_divide(tk.make_layout(CLUSTER_SHAPE), (tiled_mma.AtomThrID,))
    b = emu.block_idx()
    v_size = int(tk.size(cluster_layout_vmnk, 0))
    mma_coord_vmnk = (b.x % v_size, b.x // v_size, b.y, tk._)  # (peer CTA, MMA-M, MMA-N, MMA-K)
    mma_coord = mma_coord_vmnk[1:]
    gA = tk.local_tile(mA, mma_tiler, mma_coord, (I(1), None, I(1)))  # (MmaTile_M, MmaTile_K, Tiles_K)
    gB = tk.local_tile(mB, mma_tiler, mma_coord, (None, I(1), I(1)))

    a_ptr = emu.shared_alloc(int(tk.cosize(sA_layout)) * 2, 1024)  # SharedStorage (same offsets in both CTAs)
    b_ptr = emu.shared_alloc(int(tk.cosize(sB_layout)) * 2, 1024)
    mma_barrier, tma_barrier = emu.shared_barrier(), emu.shared_barrier()
    tmem_base_ptr = emu.shared_alloc(4, 16, np.uint32)
    tCsA = tk.make_tensor(tk.make_smem_ptr(tk.half_t, a_ptr.address), sA_layout)
    tCsB = tk.make_tensor(tk.make_smem_ptr(tk.half_t, b_ptr.address), sB_layout)

    mma_v = mma_coord_vmnk[0]
    cta_mma = tiled_mma.get_slice(mma_v)  # this CTA's half of the 2x1SM MMA
    tCgA = cta_mma.partition_A(gA)
    tCgB = cta_mma.partition_B(gB)
    tCrA = cta_mma.make_fragment_A(tCsA)
    tCrB = cta_mma.make_fragment_B(tCsB)
    gC = tk.make_tensor(tk.make_gmem_ptr(np.float32, 0), tk.make_layout((I(MMA_M), I(MMA_N))))
    tCtAcc = cta_mma.make_fragment_C(cta_mma.partition_C(gC))

    tmem_allocator = emu.Allocator2Sm()
    tmem_allocator.allocate(tmem_allocator.Sm100TmemCapacityColumns, tmem_base_ptr)
    tCtAcc = tk.make_tensor(tCtAcc.iterator.with_address(int(tmem_base_ptr[0])), tCtAcc.layout)

    cta_in_cluster_coord_vmnk = cluster_layout_vmnk.get_flat_coord(emu.block_rank_in_cluster())
    elect_one_cta = int(tk.get(cta_in_cluster_coord_vmnk, 0)) == 0
    tAgA, tAsA = tk.tma_partition(tma_atom_A, tk.get(cta_in_cluster_coord_vmnk, 2),
                                  tk.make_layout(tk.size(cluster_layout_vmnk, 2)),
                                  tk.group_modes(tCsA, 0, 3), tk.group_modes(tCgA, 0, 3))
    tBgB, tBsB = tk.tma_partition(tma_atom_B, tk.get(cta_in_cluster_coord_vmnk, 1),
                                  tk.make_layout(tk.size(cluster_layout_vmnk, 1)),
                                  tk.group_modes(tCsB, 0, 3), tk.group_modes(tCgB, 0, 3))
    tma_mcast_mask_a, tma_mcast_mask_b, mma_mcast_mask_c = masks(cluster_layout_vmnk, cta_in_cluster_coord_vmnk)
    tma_transaction_bytes = v_size * (int(tk.size(tAsA)) + int(tk.size(tBsB))) * 2  # the leader counts its peer's
    if trace is not None and tuple(int(x) for x in cta_in_cluster_coord_vmnk) == trace:
        print_trace(dict(tCgA=tCgA, tCsA=tCsA, tCrA=tCrA, tCtAcc=tCtAcc, tAgA=tAgA, tAsA=tAsA, tBgB=tBgB, tBsB=tBsB),
                    tma_transaction_bytes, (tma_mcast_mask_a, tma_mcast_mask_b, mma_mcast_mask_c))

    num_mcast_participants = int(tk.size(cluster_layout_vmnk, 1)) + int(tk.size(cluster_layout_vmnk, 2)) - 1
    emu.initialize_barrier(mma_barrier, num_mcast_participants)
    emu.initialize_barrier(tma_barrier, 1)
    emu.fence_barrier_init()
    mma_barrier_phase_bit = tma_barrier_phase_bit = 0
    emu.cluster_sync()  # barrier inits and both CTAs' TMEM allocations visible to the pair

    tiled_mma.accumulate_ = tk.UMMA.ScaleOut.Zero
    for k_tile in range(int(tk.size(tk.get(tCgA.shape, 3)))):
        if elect_one_cta:  # only the leader CTA waits for TMA transactions
            emu.set_barrier_transaction_bytes(tma_barrier, tma_transaction_bytes)
        emu.copy_2sm(tma_atom_A.with_(tma_barrier, tma_mcast_mask_a), tAgA[(tk._, k_tile)], tAsA)
        emu.copy_2sm(tma_atom_B.with_(tma_barrier, tma_mcast_mask_b), tBgB[(tk._, k_tile)], tBsB)
        if elect_one_cta:
            emu.wait_barrier(tma_barrier, tma_barrier_phase_bit)
            tma_barrier_phase_bit ^= 1
            for k_block in range(int(tk.size(tk.get(tCrA.shape, 2)))):  # tcgen05.mma.cta_group::2.kind::f16
                emu.gemm(tiled_mma, tCrA[(tk._, tk._, k_block)], tCrB[(tk._, tk._, k_block)], tCtAcc)
                tiled_mma.accumulate_ = tk.UMMA.ScaleOut.One
            emu.umma_arrive_multicast_2x1SM(mma_barrier, mma_mcast_mask_c)
        emu.wait_barrier(mma_barrier, mma_barrier_phase_bit)
        mma_barrier_phase_bit ^= 1

    tmem = int(tmem_base_ptr[0])
    for t in range(BM):  # copy(make_tmem_copy(SM100_TMEM_LOAD_32dp32b1x, tCtAcc), ...) as thread t
        lane_addr = tmem + ((t // 32 * 32) << 16)
        acc = np.concatenate([emu.tmem_load(lane_addr + c, "32x32b", 128, thread=t) for c in (0, 128)])
        row = mma_coord[0] * MMA_M + mma_v * BM + t
        cols = slice(mma_coord[1] * MMA_N, (mma_coord[1] + 1) * MMA_N)
        D[row, cols] = alpha * acc.view(np.float32) + beta * C[row, cols]
    emu.cluster_sync()
    tmem_allocator.release_allocation_lock()
    tmem_allocator.free(tmem, tmem_allocator.Sm100TmemCapacityColumns)


def make_tiled_mma():
    """``make_tiled_mma(SM100_MMA_F16BF16_2x1SM_SS<half_t, half_t, float, 256, 256, K, K>{})``."""
    return tk.make_tiled_mma(tk.SM100_MMA_F16BF16_2x1SM_SS(tk.half_t, tk.half_t, np.float32, MMA_M, MMA_N,
                                                           tk.UMMA.Major.K, tk.UMMA.Major.K))


def run(A, B, alpha=1.0, beta=0.0, C=None, verbose=False, trace=None):  # noqa: N803
    """D = alpha * A.B^T + beta * C on the emulator (one CTA pair per 256x256 tile, 4x4 clusters)."""
    gemm_m, gemm_k = A.shape
    gemm_n = B.shape[0]
    if gemm_m % (MMA_M * 2) or gemm_n % (MMA_N * 4) or gemm_k % BK:
        raise ValueError(f"M {gemm_m} must be a multiple of {MMA_M * 2}, N {gemm_n} of {MMA_N * 4}, K {gemm_k} "
                         f"of {BK}")
    C = np.zeros((gemm_m, gemm_n), np.float32) if C is None else C
    D = np.full((gemm_m, gemm_n), np.nan, np.float32)
    mA = tk.make_tensor(A, tk.make_layout(A.shape, (gemm_k, I(1))))
    mB = tk.make_tensor(B, tk.make_layout(B.shape, (gemm_k, I(1))))
    tiled_mma = make_tiled_mma()
    mma_tiler = (tk.tile_size(tiled_mma, 0), tk.tile_size(tiled_mma, 1), tk.tile_size(tiled_mma, 2) * I(4))
    mma_shape_A = tk.partition_shape_A(tiled_mma, (mma_tiler[0], mma_tiler[2]))  # noqa: N806
    mma_shape_B = tk.partition_shape_B(tiled_mma, (mma_tiler[1], mma_tiler[2]))  # noqa: N806
    sA_layout = tk.UMMA.tile_to_mma_shape(tk.UMMA.Layout_K_SW128_Atom(tk.half_t), mma_shape_A)  # noqa: N806
    sB_layout = tk.UMMA.tile_to_mma_shape(tk.UMMA.Layout_K_SW128_Atom(tk.half_t), mma_shape_B)  # noqa: N806
    vmnk = tk.tiled_divide(tk.make_layout(CLUSTER_SHAPE), (tiled_mma.AtomThrID,))
    tma_atom_A = tk.make_tma_atom_A_sm100(tk.SM100_TMA_2SM_LOAD_MULTICAST, mA, sA_layout, mma_tiler, tiled_mma,  # noqa: N806
                                          vmnk)
    tma_atom_B = tk.make_tma_atom_B_sm100(tk.SM100_TMA_2SM_LOAD_MULTICAST, mB, sB_layout, mma_tiler, tiled_mma,  # noqa: N806
                                          vmnk)
    if verbose:
        print(f"Running for problem shape (MxNxK): {gemm_m}x{gemm_n}x{gemm_k}")
        print(tiled_mma)
        print(f"mma_shape_A:\t{to_str(mma_shape_A)}\nmma_shape_B:\t{to_str(mma_shape_B)}")
        print(f"sA_layout:\t{sA_layout}\nsB_layout:\t{sB_layout}")
        print(f"tma_atom_A:\t{tma_atom_A}tma_atom_B:\t{tma_atom_B}")
    grid = (gemm_m // MMA_M * 2, gemm_n // MMA_N, 1)
    stats = emu.launch(gemm_kernel, grid, CLUSTER, tiled_mma, mma_tiler, sA_layout, sB_layout, tma_atom_A,
                       tma_atom_B, tma_atom_A.get_tma_tensor(mA.shape), tma_atom_B.get_tma_tensor(mB.shape), D, alpha,
                       beta, C, trace=trace, non_portable_cluster=True)
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
    D, stats = run(A, B, verbose=True, trace=(0, 1, 2, 0))
    af, bf = A.astype(np.float32), B.astype(np.float32)
    exact = np.array_equal(D.view(np.uint32), reference_mma(af, bf.T, MMA_K).view(np.uint32))
    err = float(np.max(np.abs(D - af.astype(np.float64) @ bf.T.astype(np.float64))))
    print(f"Running for problem shape (MxNxK): {A.shape[0]}x{B.shape[0]}x{A.shape[1]} on the emulator: {stats}")
    print(f"D equals the emulator's defined fp32 order bit for bit: {exact}; max |D - numpy float64| = {err:.2e}")
    print("Execution is " + ("successful." if exact and err < 1e-3 else "failed."))


if __name__ == "__main__":
    main()
