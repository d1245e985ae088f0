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
from ..layout.integer import to_str

I = tk.Int  # noqa: E741
BM, BN, BK, MMA_K = 128, 256, 64, 16
CLUSTER = (4, 4, 1)
CLUSTER_SHAPE = (I(4), I(4), I(1))


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


def print_trace(tensors: dict, tma_transaction_bytes: int, mcast_masks) -> None:
    """The traced CTA's partitions, transaction bytes and multicast masks, as the tutorials' comments show them."""
    for name, v in tensors.items():
        print(f"{name}:\t{v}")
    print(f"tma_transaction_bytes: {tma_transaction_bytes}")
    a, b, c = mcast_masks
    print(f"tma_mcast_mask_a: {a:x}\ntma_mcast_mask_b: {b:x}\nmma_mcast_mask_c: {c:x}")


def gemm_kernel(tiled_mma, mma_tiler, sA_layout, sB_layout, tma_atom_A, tma_atom_B, mA, mB, D, alpha, beta, C,
                trace=None):  # noqa: N803 - CuTe's names
    """CuTe's ``gemm_device`` of tutorial 03, line by line (a CTA is one thread; the epilogue loops over the 128)."""
    tiled_mma = copy.copy(tiled_mma)  # a by-value kernel parameter: each CTA flips its own accumulate_
    cluster_layout_vmnk = tk.tiled_divide(tk.make_layout(CLUSTER_SHAPE), (tiled_mma.AtomThrID,))
    b = emu.block_idx()
    mma_coord = (b.x // int(tk.size(cluster_layout_vmnk, 0)), b.y, tk._)  # (MMA-M, MMA-N, MMA-K) coordinate
    gA = tk.local_tile(mA, mma_tiler, mma_coord, (I(1), None, I(1)))  # (MmaTile_M, MmaTile_K, Tiles_K)
    gB = tk.local_tile(mB, mma_tiler, mma_coord, (None, I(1), I(1)))  # (MmaTile_N, MmaTile_K, Tiles_K)

    a_ptr = emu.shared_alloc(int(tk.cosize(sA_layout)) * 2, 1024)  # SharedStorage: A, B, barriers, tmem_base_ptr
    b_ptr = emu.shared_alloc(int(tk.cosize(sB_layout)) * 2, 1024)
    mma_barrier, tma_barrier = emu.shared_barrier(), emu.shared_barrier()
    tmem_base_ptr = emu.shared_alloc(4, 16, np.uint32)
    tCsA = tk.make_tensor(tk.make_smem_ptr(tk.half_t, a_ptr.address), sA_layout)  # (MmaA, NumMma_M, NumMma_K)
    tCsB = tk.make_tensor(tk.make_smem_ptr(tk.half_t, b_ptr.address), sB_layout)

    cta_mma = tiled_mma.get_slice(0)  # mma_v: the peer coordinate (0 for a 1-SM atom)
    tCgA = cta_mma.partition_A(gA)  # (MmaA, NumMma_M, NumMma_K, Tiles_K)
    tCgB = cta_mma.partition_B(gB)
    tCrA = cta_mma.make_fragment_A(tCsA)  # UMMA::DescriptorIterator o (_1,_1,_4):(_0,_0,_2)
    tCrB = cta_mma.make_fragment_B(tCsB)
    gC = tk.make_tensor(tk.make_gmem_ptr(np.float32, 0), tk.make_layout((I(BM), I(BN))))
    tCtAcc = cta_mma.make_fragment_C(cta_mma.partition_C(gC))  # ((_128,_256),_1,_1) in TMEM

    tmem_allocator = emu.Allocator1Sm()
    tmem_allocator.allocate(tmem_allocator.Sm100TmemCapacityColumns, tmem_base_ptr)  # if (elect_one_warp)
    tCtAcc = tk.make_tensor(tCtAcc.iterator.with_address(int(tmem_base_ptr[0])), tCtAcc.layout)

    cta_in_cluster_coord_vmnk = cluster_layout_vmnk.get_flat_coord(emu.block_rank_in_cluster())
    tAgA, tAsA = tk.tma_partition(tma_atom_A, tk.get(cta_in_cluster_coord_vmnk, 2),
                                  tk.make_layout(tk.size(cluster_layout_vmnk, 2)),
                                  tk.group_modes(tCsA, 0, 3), tk.group_modes(tCgA, 0, 3))
    tBgB, tBsB = tk.tma_partition(tma_atom_B, tk.get(cta_in_cluster_coord_vmnk, 1),
                                  tk.make_layout(tk.size(cluster_layout_vmnk, 1)),
                                  tk.group_modes(tCsB, 0, 3), tk.group_modes(tCgB, 0, 3))
    tma_mcast_mask_a, tma_mcast_mask_b, mma_mcast_mask_c = masks(cluster_layout_vmnk, cta_in_cluster_coord_vmnk)
    tma_transaction_bytes = (int(tk.size(tAsA)) + int(tk.size(tBsB))) * 2
    if trace is not None and tuple(int(x) for x in cta_in_cluster_coord_vmnk) == trace:
        print_trace(dict(tCgA=tCgA, tCsA=tCsA, tCrA=tCrA, tCtAcc=tCtAcc, tAgA=tAgA, tAsA=tAsA, tBgB=tBgB, tBsB=tBsB),
                    tma_transaction_bytes, (tma_mcast_mask_a, tma_mcast_mask_b, mma_mcast_mask_c))

    num_mcast_participants = int(tk.size(cluster_layout_vmnk, 1)) + int(tk.size(cluster_layout_vmnk, 2)) - 1
    emu.initialize_barrier(mma_barrier, num_mcast_participants)
    emu.initialize_barrier(tma_barrier, 1)
    emu.fence_barrier_init()
    mma_barrier_phase_bit = tma_barrier_phase_bit = 0
    emu.cluster_sync()

    tiled_mma.accumulate_ = tk.UMMA.ScaleOut.Zero
    for k_tile in range(int(tk.size(tk.get(tCgA.shape, 3)))):
        emu.set_barrier_transaction_bytes(tma_barrier, tma_transaction_bytes)
        emu.copy(tma_atom_A.with_(tma_barrier, tma_mcast_mask_a), tAgA[(tk._, k_tile)], tAsA)
        emu.copy(tma_atom_B.with_(tma_barrier, tma_mcast_mask_b), tBgB[(tk._, k_tile)], tBsB)
        emu.wait_barrier(tma_barrier, tma_barrier_phase_bit)
        tma_barrier_phase_bit ^= 1
        for k_block in range(int(tk.size(tk.get(tCrA.shape, 2)))):  # tcgen05.mma.cta_group::1.kind::f16 each
            emu.gemm(tiled_mma, tCrA[(tk._, tk._, k_block)], tCrB[(tk._, tk._, k_block)], tCtAcc)
            tiled_mma.accumulate_ = tk.UMMA.ScaleOut.One
        emu.umma_arrive_multicast(mma_barrier, mma_mcast_mask_c)
        emu.wait_barrier(mma_barrier, mma_barrier_phase_bit)
        mma_barrier_phase_bit ^= 1

    # copy(make_tmem_copy(SM100_TMEM_LOAD_32dp32b1x, tCtAcc), ...): thread t of the 128 reads TMEM lane t.
    tmem = int(tmem_base_ptr[0])
    for t in range(BM):
        lane_addr = tmem + ((t // 32 * 32) << 16)
        acc = np.concatenate([emu.tmem_load(lane_addr + c, "32x32b", 128, thread=t) for c in (0, 128)])
        row, cols = mma_coord[0] * BM + t, slice(mma_coord[1] * BN, (mma_coord[1] + 1) * BN)
        D[row, cols] = alpha * acc.view(np.float32) + beta * C[row, cols]
    emu.cluster_sync()  # peers may still multicast into this CTA's shared memory until every CTA is done
    tmem_allocator.release_allocation_lock()
    tmem_allocator.free(tmem, tmem_allocator.Sm100TmemCapacityColumns)


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


def run(A, B, alpha=1.0, beta=0.0, C=None, verbose=False, trace=None):  # noqa: N803
    """``gemm_host_f16xf16_f32_f32_tnt``: D = alpha * A.B^T + beta * C on the emulator (one CTA per 128x256 tile,
    4x4 clusters). ``trace``: print the seed's device objects of the CTA at that (V,M,N,K) cluster coordinate."""
    gemm_m, gemm_k = A.shape
    gemm_n = B.shape[0]
    if gemm_m % (BM * 4) or gemm_n % (BN * 4) or gemm_k % BK:
        raise ValueError(f"M {gemm_m} must be a multiple of {BM * 4}, N {gemm_n} of {BN * 4}, K {gemm_k} of {BK}")
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
    cluster_layout_vmnk = tk.tiled_divide(tk.make_layout(CLUSTER_SHAPE), (tiled_mma.AtomThrID,))
    tma_atom_A = tk.make_tma_atom(tk.SM90_TMA_LOAD_MULTICAST, mA, sA_layout, (mma_tiler[0], mma_tiler[2]),  # noqa: N806
                                  tk.size(cluster_layout_vmnk, 2))
    tma_atom_B = tk.make_tma_atom(tk.SM90_TMA_LOAD_MULTICAST, mB, sB_layout, (mma_tiler[1], mma_tiler[2]),  # noqa: N806
                                  tk.size(cluster_layout_vmnk, 1))
    if verbose:
        print(f"Running for problem shape (MxNxK): {gemm_m}x{gemm_n}x{gemm_k}")
        print(tiled_mma)
        print(f"mma_shape_A:\t{to_str(mma_shape_A)}\nmma_shape_B:\t{to_str(mma_shape_B)}")
        print(f"sA_layout:\t{sA_layout}\nsB_layout:\t{sB_layout}")
        print(f"tma_atom_A:\t{tma_atom_A}tma_atom_B:\t{tma_atom_B}")
    grid = (gemm_m // BM, gemm_n // BN, 1)
    stats = emu.launch(gemm_kernel, grid, CLUSTER, tiled_mma, mma_tiler, sA_layout, sB_layout, tma_atom_A,
                       tma_atom_B, tma_atom_A.get_tma_tensor(mA.shape), tma_atom_B.get_tma_tensor(mB.shape), D, alpha,
                       beta, C, trace=trace, non_portable_cluster=True)
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
    D, stats = run(A, B, verbose=True, trace=(0, 1, 2, 0))
    af, bf = A.astype(np.float32), B.astype(np.float32)
    ref = reference_mma(af, bf.T, MMA_K)
    exact = np.array_equal(D.view(np.uint32), ref.view(np.uint32))
    err = float(np.max(np.abs(D - af.astype(np.float64) @ bf.T.astype(np.float64))))
    print(f"Running for problem shape (MxNxK): {A.shape[0]}x{B.shape[0]}x{A.shape[1]} on the emulator: {stats}")
    print(f"D equals the emulator's defined fp32 order bit for bit: {exact}; max |D - numpy float64| = {err:.2e}")
    print("Execution is " + ("successful." if exact and err < 1e-3 else "failed."))


if __name__ == "__main__":
    main()
