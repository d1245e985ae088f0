"""Seed 004 / CuTe's Blackwell tutorial 03 (``mma_tma_multicast_sm100``) on the emulator: D = A.B^T with half A
(M x K) and B (N x K), both K-major, float D; one 128x256 ``tcgen05.mma`` tile per CTA, K-tiles of 64 (4 UMMAs of
K=16), a 4x4 cluster in which A is multicast along the cluster's N mode and B along its M mode, and the MMA's
commit multicast to every CTA that shares this CTA's A or B (``umma_arrive_multicast``).

Prints what the seed walks through (cluster layout, multicast masks, ``tma_partition`` offsets, transaction bytes,
the UMMA instruction), runs the kernel, and compares D with numpy.
Run: ``tmakit demo blackwell`` or ``python examples/blackwell_mma_tma_multicast.py``.
The same kernel in CUDA C++ for sm_100a is ``src/tmakit/kernels/blackwell/mma_tma_multicast_sm100.cu``.
"""

from __future__ import annotations

import copy

import numpy as np

import tmakit as tk

from .. import emu
from ..emu.umma import reference_mma
from ..emu.umma_desc import decode_instr_desc, encode_instr_desc, encode_smem_desc

I = tk.Int  # noqa: E741
BM, BN, BK, MMA_K = 128, 256, 64, 16
CLUSTER = (4, 4, 1)


def k_sw128_atom():
    """CuTe's ``UMMA::Layout_K_SW128_Atom<half_t>``: 8 rows of 64 halves (128 B), 128-byte swizzle (element units)."""
    return tk.make_composed_layout(tk.Swizzle(3, 3, 3), 0, tk.make_layout((I(8), I(64)), (I(64), I(1))))


def k_sw128_desc(smem_addr: int, k_block: int) -> int:
    """``make_umma_desc<Major::K>`` of that layout, advanced to UMMA K-block ``k_block`` (32 bytes of K each):
    8-row core groups 1024 B apart (SBO), LBO unused (1 unit), layout type SWIZZLE_128B."""
    return encode_smem_desc(smem_addr + 32 * k_block, 16, 1024, 2)


def cluster_layout_vmnk():
    """``tiled_divide(make_layout(cluster_shape), make_tile(AtomThrID))`` for a 1-SM atom: ((_1),_4,_4,_1)."""
    return tk.tiled_divide(tk.make_layout((I(4), I(4), I(1))), (I(1),))


def masks(vmnk, coord):
    a = tk.create_tma_multicast_mask(vmnk, coord, 2)
    b = tk.create_tma_multicast_mask(vmnk, coord, 1)
    c = tk.create_tma_multicast_mask(vmnk, coord, (0, 1)) | tk.create_tma_multicast_mask(vmnk, coord, (0, 2))
    return a, b, c


def gemm_kernel(tiled_mma, tma_a, tma_b, mA, mB, D, gemm_k, alpha, beta, C):
    tiled_mma = copy.copy(tiled_mma)  # a by-value kernel parameter: each CTA flips its own accumulate_
    vmnk = cluster_layout_vmnk()
    rank = emu.block_rank_in_cluster()
    coord = vmnk.get_flat_coord(rank)  # (v, m, n, k) of this CTA in the cluster
    b = emu.block_idx()
    m_tile, n_tile = b.x, b.y  # mma_coord (V = 1)
    sA = emu.shared_tensor(tk.tile_to_shape(k_sw128_atom(), (I(BM), I(BK))), np.float16)
    sB = emu.shared_tensor(tk.tile_to_shape(k_sw128_atom(), (I(BN), I(BK))), np.float16)
    mma_bar, tma_bar = emu.shared_barrier(), emu.shared_barrier()
    tmem_slot = emu.shared_alloc(4, 16, np.uint32)

    allocator = emu.Allocator1Sm()
    allocator.allocate(allocator.Sm100TmemCapacityColumns, tmem_slot)  # if (elect_one_warp)
    tmem_acc = int(tmem_slot[0])

    gA = tk.local_tile(mA, (I(BM), I(BK)), (m_tile, tk._))  # (BM, BK, k_tiles)
    gB = tk.local_tile(mB, (I(BN), I(BK)), (n_tile, tk._))
    thr_a, thr_b = tma_a.get_slice(int(tk.get(coord, 2))), tma_b.get_slice(int(tk.get(coord, 1)))
    mask_a, mask_b, mask_c = masks(vmnk, coord)
    tx_bytes = (BM * BK + BN * BK) * 2

    emu.initialize_barrier(mma_bar, int(tk.size(vmnk, 1)) + int(tk.size(vmnk, 2)) - 1)
    emu.initialize_barrier(tma_bar, 1)
    emu.fence_barrier_init()
    emu.cluster_sync()

    cta_mma = tiled_mma.get_slice(0)  # mma_v = 0: a 1-SM atom
    tCrA, tCrB, tCtAcc = mma_fragments(cta_mma, sA, sB, tmem_acc)
    tiled_mma.accumulate_ = tk.UMMA.ScaleOut.Zero
    tma_phase = mma_phase = 0
    for k_tile in range(gemm_k // BK):
        emu.set_barrier_transaction_bytes(tma_bar, tx_bytes)
        emu.copy(tma_a.with_(tma_bar, mask_a), thr_a.partition_S(gA[(tk._, tk._, k_tile)]), thr_a.partition_D(sA))
        emu.copy(tma_b.with_(tma_bar, mask_b), thr_b.partition_S(gB[(tk._, tk._, k_tile)]), thr_b.partition_D(sB))
        emu.wait_barrier(tma_bar, tma_phase)
        tma_phase ^= 1
        for k_block in range(BK // MMA_K):  # one tcgen05.mma.cta_group::1.kind::f16 each
            emu.gemm(tiled_mma, tCrA[(tk._, tk._, k_block)], tCrB[(tk._, tk._, k_block)], tCtAcc)
            tiled_mma.accumulate_ = tk.UMMA.ScaleOut.One
        emu.umma_arrive_multicast(mma_bar, mask_c)
        emu.wait_barrier(mma_bar, mma_phase)
        mma_phase ^= 1

    # make_tmem_copy(SM100_TMEM_LOAD_32dp32b1x, tCtAcc): thread t of the 128 reads TMEM lane t (its warp's quarter).
    for t in range(BM):
        lane_addr = tmem_acc + ((t // 32 * 32) << 16)
        acc = np.concatenate([emu.tmem_load(lane_addr + c, "32x32b", 128, thread=t) for c in (0, 128)])
        row, cols = m_tile * BM + t, slice(n_tile * BN, (n_tile + 1) * BN)
        D[row, cols] = alpha * acc.view(np.float32) + beta * C[row, cols]
    emu.cluster_sync()  # peers may still multicast into this CTA's shared memory until every CTA is done
    allocator.release_allocation_lock()
    allocator.free(tmem_acc, allocator.Sm100TmemCapacityColumns)


def mma_fragments(cta_mma, sA, sB, tmem_base):  # noqa: N803 - CuTe's names
    """CuTe's ``make_fragment_A/B`` (UMMA descriptor iterators over this CTA's shared tiles, laid out by
    ``UMMA::tile_to_mma_shape(Layout_K_SW128_Atom<half_t>, partition_shape_A/B)``) and ``make_fragment_C`` (the
    accumulator in TMEM, ``tCtAcc.data() = tmem_base_ptr``)."""
    tm = cta_mma.tiled_mma
    bm, bn = (int(tk.size(tk.get(sA.layout.shape, 0))), int(tk.size(tk.get(sB.layout.shape, 0))))
    shape_a = tk.partition_shape_A(tm, (I(bm * int(tk.size(tm.AtomThrID))), I(BK)))
    shape_b = tk.partition_shape_B(tm, (I(bn * int(tk.size(tm.AtomThrID))), I(BK)))
    s_a = tk.UMMA.tile_to_mma_shape(tk.UMMA.Layout_K_SW128_Atom(tk.half_t), shape_a)
    s_b = tk.UMMA.tile_to_mma_shape(tk.UMMA.Layout_K_SW128_Atom(tk.half_t), shape_b)
    tCrA = cta_mma.make_fragment_A(tk.make_tensor(tk.make_smem_ptr(tk.half_t, sA.iterator.address), s_a))
    tCrB = cta_mma.make_fragment_B(tk.make_tensor(tk.make_smem_ptr(tk.half_t, sB.iterator.address), s_b))
    g_c = tk.make_tensor(tk.make_gmem_ptr(np.float32, 0), tk.make_layout((tk.tile_size(tm, 0), tk.tile_size(tm, 1))))
    tCtAcc = cta_mma.make_fragment_C(cta_mma.partition_C(g_c))
    return tCrA, tCrB, tk.make_tensor(tCtAcc.iterator.with_address(tmem_base), tCtAcc.layout)


def make_tiled_mma():
    """``make_tiled_mma(SM100_MMA_F16BF16_SS<half_t, half_t, float, 128, 256, UMMA::Major::K, UMMA::Major::K>{})``."""
    return tk.make_tiled_mma(tk.SM100_MMA_F16BF16_SS(tk.half_t, tk.half_t, np.float32, BM, BN, tk.UMMA.Major.K,
                                                     tk.UMMA.Major.K))


def make_problem(gemm_m=512, gemm_n=1024, gemm_k=256, seed=0):
    """A (M x K) and B (N x K) half, K-major, registered for the emulator; C zero; D NaN."""
    rng = np.random.default_rng(seed)
    A, B = emu.alloc((gemm_m, gemm_k), np.float16), emu.alloc((gemm_n, gemm_k), np.float16)
    A[:], B[:] = rng.uniform(-1, 1, A.shape), rng.uniform(-1, 1, B.shape)
    return A, B


def run(A, B, alpha=1.0, beta=0.0, C=None, verbose=False):
    """D = alpha * A.B^T + beta * C on the emulator (grid: one CTA per 128x256 tile, 4x4 clusters)."""
    gemm_m, gemm_k = A.shape
    gemm_n = B.shape[0]
    if gemm_m % (BM * 4) or gemm_n % (BN * 4) or gemm_k % BK:
        raise ValueError(f"M {gemm_m} must be a multiple of {BM * 4}, N {gemm_n} of {BN * 4}, K {gemm_k} of {BK}")
    C = np.zeros((gemm_m, gemm_n), np.float32) if C is None else C
    D = np.full((gemm_m, gemm_n), np.nan, np.float32)
    mA = tk.make_tensor(A, tk.make_layout(A.shape, (gemm_k, 1)))
    mB = tk.make_tensor(B, tk.make_layout(B.shape, (gemm_k, 1)))
    sA = tk.tile_to_shape(k_sw128_atom(), (I(BM), I(BK)))
    sB = tk.tile_to_shape(k_sw128_atom(), (I(BN), I(BK)))
    tma_a = tk.make_tma_atom(tk.SM90_TMA_LOAD_MULTICAST, mA, sA, (I(BM), I(BK)), I(4))  # multicast along N
    tma_b = tk.make_tma_atom(tk.SM90_TMA_LOAD_MULTICAST, mB, sB, (I(BN), I(BK)), I(4))  # multicast along M
    if verbose:
        print("tma_atom_A:\t", tma_a, sep="")
        print("tma_atom_B:\t", tma_b, sep="")
    grid = (gemm_m // BM, gemm_n // BN, 1)
    tiled_mma = make_tiled_mma()
    if verbose:
        print(tiled_mma)
    stats = emu.launch(gemm_kernel, grid, CLUSTER, tiled_mma, tma_a, tma_b, tma_a.get_tma_tensor(mA.shape),
                       tma_b.get_tma_tensor(mB.shape), D, gemm_k, alpha, beta, C, non_portable_cluster=True)
    return D, stats


def walkthrough():
    """The seed's values for tutorial 03, from tmakit's CuTe algebra."""
    vmnk = cluster_layout_vmnk()
    print(f"cluster_layout_vmnk:\t{vmnk}")
    coord = (0, 1, 2, 0)
    a, b, c = masks(vmnk, coord)
    print(f"CTA (V,M,N,K) = {coord} (rank {vmnk(coord)}):")
    print(f"  tma_mcast_mask_a = create_tma_multicast_mask<2>   = {a:#06x}  (same M, every N)")
    print(f"  tma_mcast_mask_b = create_tma_multicast_mask<1>   = {b:#06x}  (same N, every M)")
    print(f"  mma_mcast_mask_c = <0,1> | <0,2>                  = {c:#06x}  (every CTA sharing A or B)")
    seed_layout = tk.make_layout((I(2), I(2), I(4), I(1)), (I(8), I(4), I(1), I(0)))
    sb = tk.create_tma_multicast_mask(seed_layout, coord, 1)
    print(f"  note: seed 004 states tma_mcast_mask_b = 0b110011 for this coordinate of {seed_layout}; CuTe's "
          f"algorithm gives {sb:#x} (bits {[i for i in range(16) if sb >> i & 1]}: V=0, N=2, M=0..1), and tmakit "
          "follows CuTe")
    print(f"  tma_partition multicast offset of A for N-coord 2: 2 * ({BM * BK} / 4) = {2 * BM * BK // 4} elements")
    print(f"tma_transaction_bytes: {(BM * BK + BN * BK) * 2}")
    idesc = encode_instr_desc("f16", "f16", "f16", BM, BN)
    print(f"UMMA: tcgen05.mma.cta_group::1.kind::f16 [tmem_c], desc_a, desc_b, idesc = {idesc:#010x}, p")
    print(f"  idesc: {decode_instr_desc(idesc)}")
    print(f"  desc_a (k_block 1 at smem 0x400): {k_sw128_desc(0x400, 1):#018x}")


def main():
    walkthrough()
    A, B = make_problem()
    D, stats = run(A, B, verbose=True)
    af, bf = A.astype(np.float32), B.astype(np.float32)
    ref = reference_mma(af, bf.T, MMA_K)
    exact = np.array_equal(D.view(np.uint32), ref.view(np.uint32))
    err = float(np.max(np.abs(D - af.astype(np.float64) @ bf.T.astype(np.float64))))
    print(f"Running for problem shape (MxNxK): {A.shape[0]}x{B.shape[0]}x{A.shape[1]} on the emulator: {stats}")
    print(f"D equals the emulator's defined fp32 order bit for bit: {exact}; max |D - numpy float64| = {err:.2e}")
    print("Execution is " + ("successful." if exact and err < 1e-3 else "failed."))


if __name__ == "__main__":
    main()
