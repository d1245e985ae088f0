"""A CUTLASS-style Blackwell mainloop on the emulator: seed 004's tutorial-03 structure (1-SM ``tcgen05.mma``, A
multicast along the cluster's N mode, B along its M mode) with its single TMA/MMA barrier pair replaced by
``cutlass::PipelineTmaUmmaAsync`` stages, and the accumulator handed to the epilogue through ``PipelineUmmaAsync``.
D = A . B^T, half inputs (K-major), fp32 accumulators in TMEM, CTA tiles 128x64 with K tiles of 64, 2x2 clusters.

One CTA program plays the warp-specialized roles in turn: the TMA producer (warp 0, its leader arrives with
``expect_tx``), the MMA warp (warp 1: consumes stages, and frees each with ``consumer_release`` = one
``tcgen05.commit`` multicast to every CTA of its cluster row and column, whose loads wrote that stage here), and the
epilogue warpgroup (threads 128..255) that waits on the accumulator's full barrier before reading TMEM.
Run: ``python examples/blackwell_pipeline_tma_umma.py``.
"""

import copy

import numpy as np

import tmakit as tk
from tmakit import emu
from tmakit.emu.umma import reference_mma

I = tk.Int  # noqa: E741
BM, BN, BK, MMA_K = 128, 64, 64, 16
STAGES = 3
CLUSTER = (2, 2, 1)
MainloopPipeline = emu.PipelineTmaUmmaAsync[STAGES]
AccumPipeline = emu.PipelineUmmaAsync[1]


def kernel(tiled_mma, mma_tiler, sA_layout, sB_layout, tma_atom_A, tma_atom_B, mA, mB, D, trace):  # noqa: N803
    tiled_mma = copy.copy(tiled_mma)  # by value: each CTA flips its own accumulate_
    cluster_shape = emu.cluster_shape()
    vmnk = tk.tiled_divide(tk.make_layout((I(CLUSTER[0]), I(CLUSTER[1]), I(1))), (tiled_mma.AtomThrID,))
    b = emu.block_idx()
    mma_coord = (b.x, b.y, tk._)
    gA = tk.local_tile(mA, mma_tiler, mma_coord, (I(1), None, I(1)))  # noqa: N806
    gB = tk.local_tile(mB, mma_tiler, mma_coord, (None, I(1), I(1)))  # noqa: N806
    sA = [tk.make_tensor(tk.make_smem_ptr(tk.half_t, emu.shared_alloc(int(tk.cosize(sA_layout)) * 2, 1024).address),  # noqa: N806
                         sA_layout) for _ in range(STAGES)]
    sB = [tk.make_tensor(tk.make_smem_ptr(tk.half_t, emu.shared_alloc(int(tk.cosize(sB_layout)) * 2, 1024).address),  # noqa: N806
                         sB_layout) for _ in range(STAGES)]
    tmem_base_ptr = emu.shared_alloc(4, 16, np.uint32)

    cta_mma = tiled_mma.get_slice(0)
    tCgA, tCgB = cta_mma.partition_A(gA), cta_mma.partition_B(gB)  # noqa: N806
    tCrA = [cta_mma.make_fragment_A(s) for s in sA]  # noqa: N806
    tCrB = [cta_mma.make_fragment_B(s) for s in sB]  # noqa: N806
    gC = tk.make_tensor(tk.make_gmem_ptr(np.float32, 0), tk.make_layout((I(BM), I(BN))))  # noqa: N806
    tCtAcc = cta_mma.make_fragment_C(cta_mma.partition_C(gC))  # noqa: N806
    tmem_allocator = emu.Allocator1Sm()
    tmem_allocator.allocate(BN, tmem_base_ptr)
    tCtAcc = tk.make_tensor(tCtAcc.iterator.with_address(int(tmem_base_ptr[0])), tCtAcc.layout)  # noqa: N806

    coord = vmnk.get_flat_coord(emu.block_rank_in_cluster())
    part_a = [tk.tma_partition(tma_atom_A, tk.get(coord, 2), tk.make_layout(tk.size(vmnk, 2)),
                               tk.group_modes(s, 0, 3), tk.group_modes(tCgA, 0, 3)) for s in sA]
    part_b = [tk.tma_partition(tma_atom_B, tk.get(coord, 1), tk.make_layout(tk.size(vmnk, 1)),
                               tk.group_modes(s, 0, 3), tk.group_modes(tCgB, 0, 3)) for s in sB]
    mask_a = tk.create_tma_multicast_mask(vmnk, coord, 2)
    mask_b = tk.create_tma_multicast_mask(vmnk, coord, 1)
    tx = (int(tk.size(part_a[0][1])) + int(tk.size(part_b[0][1]))) * 2

    # the pipelines: warp 0 initializes the mainloop's barriers, warp 1 the accumulator's
    storage, acc_storage = MainloopPipeline.SharedStorage(), AccumPipeline.SharedStorage()
    P, Role = MainloopPipeline.Params, MainloopPipeline.ThreadCategory  # noqa: N806
    producer = MainloopPipeline(storage, P(tx, Role.Producer, is_leader=1), cluster_shape)  # warp 0
    mma = MainloopPipeline(storage, P(role=Role.Consumer), cluster_shape)  # warp 1: tcgen05.commit releases
    AP = AccumPipeline.Params  # noqa: N806
    acc_mma = AccumPipeline(acc_storage, AP(Role.Producer, 1, 128, initializing_warp=1), cluster_shape,
                            threads=range(32, 33))
    acc_epi = AccumPipeline(acc_storage, AP(Role.Consumer, 1, 128, initializing_warp=1), cluster_shape,
                            threads=range(128, 256))
    emu.cluster_sync()  # barrier inits visible to the peers before their multicasts and commits

    def load(state, k):  # the producer warp's elected thread
        producer.producer_acquire(state)
        bar = producer.producer_get_barrier(state)
        (tAgA, tAsA), (tBgB, tBsB) = part_a[state.index()], part_b[state.index()]  # noqa: N806
        emu.copy(tma_atom_A.with_(bar, mask_a), tAgA[(tk._, k)], tAsA)
        emu.copy(tma_atom_B.with_(bar, mask_b), tBgB[(tk._, k)], tBsB)
        producer.producer_commit(state, tx)  # a no-op: the TMA completes the bytes

    k_tiles = int(tk.size(tk.get(tCgA.shape, 3)))
    write, read = emu.make_producer_start_state(MainloopPipeline), MainloopPipeline.PipelineState()
    k_load = 0
    while k_load < min(STAGES, k_tiles):  # prologue: fill the stages
        load(write, k_load)
        write.increment()
        k_load += 1
    acc_write = emu.make_producer_start_state(AccumPipeline)
    acc_mma.producer_acquire(acc_write)  # the accumulator is free (epilogue of a previous tile done)
    tiled_mma.accumulate_ = tk.UMMA.ScaleOut.Zero
    for _ in range(k_tiles):  # the MMA warp, with the producer refilling behind it
        mma.consumer_wait(read)
        for k_block in range(int(tk.size(tk.get(tCrA[0].shape, 2)))):
            emu.gemm(tiled_mma, tCrA[read.index()][(tk._, tk._, k_block)], tCrB[read.index()][(tk._, tk._, k_block)],
                     tCtAcc)
            tiled_mma.accumulate_ = tk.UMMA.ScaleOut.One
        mma.consumer_release(read)  # umma_arrive_multicast: freed once these MMAs have read the stage
        if trace and (b.x, b.y) == (0, 0):
            print(f"  CTA (0,0): MMAs on {read}, producer at {write}")
        read.increment()
        if k_load < k_tiles:
            load(write, k_load)
            write.increment()
            k_load += 1
    acc_mma.producer_commit(acc_write)  # umma_arrive: the accumulator is complete once the MMAs are

    acc_read = AccumPipeline.PipelineState()
    acc_epi.consumer_wait(acc_read)  # the epilogue warpgroup: thread 128 + t reads TMEM lane t
    tmem = int(tmem_base_ptr[0])
    for t in range(BM):
        acc = emu.tmem_load(tmem + ((t // 32 * 32) << 16), "32x32b", BN, thread=128 + t)
        D[b.x * BM + t, b.y * BN:(b.y + 1) * BN] = acc.view(np.float32)
    acc_epi.consumer_release(acc_read)
    producer.producer_tail(write)  # every stage freed by every CTA that writes into it
    emu.cluster_sync()
    tmem_allocator.release_allocation_lock()
    tmem_allocator.free(tmem, BN)


def run(m=256, n=128, k=256, seed=0, trace=False):
    """A (M,K), B (N,K) half; returns (D, the emulator's fp32 reference, numpy's float64 product, launch stats)."""
    if m % (BM * CLUSTER[0]) or n % (BN * CLUSTER[1]) or k % BK:
        raise ValueError(f"M must be a multiple of {BM * CLUSTER[0]}, N of {BN * CLUSTER[1]}, K of {BK}")
    rng = np.random.default_rng(seed)
    A, B = emu.alloc((m, k), np.float16), emu.alloc((n, k), np.float16)  # noqa: N806
    A[:], B[:] = rng.uniform(-1, 1, A.shape), rng.uniform(-1, 1, B.shape)
    mA = tk.make_tensor(A, tk.make_layout(A.shape, (k, I(1))))  # noqa: N806
    mB = tk.make_tensor(B, tk.make_layout(B.shape, (k, I(1))))  # noqa: N806
    tiled_mma = tk.make_tiled_mma(tk.SM100_MMA_F16BF16_SS(tk.half_t, tk.half_t, np.float32, BM, BN, tk.UMMA.Major.K,
                                                          tk.UMMA.Major.K))
    mma_tiler = (tk.tile_size(tiled_mma, 0), tk.tile_size(tiled_mma, 1), tk.tile_size(tiled_mma, 2) * I(BK // MMA_K))
    shape_a = tk.partition_shape_A(tiled_mma, (mma_tiler[0], mma_tiler[2]))
    shape_b = tk.partition_shape_B(tiled_mma, (mma_tiler[1], mma_tiler[2]))
    sA_layout = tk.UMMA.tile_to_mma_shape(tk.UMMA.Layout_K_SW128_Atom(tk.half_t), shape_a)  # noqa: N806
    sB_layout = tk.UMMA.tile_to_mma_shape(tk.UMMA.Layout_K_SW128_Atom(tk.half_t), shape_b)  # noqa: N806
    vmnk = tk.tiled_divide(tk.make_layout((I(CLUSTER[0]), I(CLUSTER[1]), I(1))), (tiled_mma.AtomThrID,))
    tma_atom_A = tk.make_tma_atom(tk.SM90_TMA_LOAD_MULTICAST, mA, sA_layout, (mma_tiler[0], mma_tiler[2]),  # noqa: N806
                                  tk.size(vmnk, 2))
    tma_atom_B = tk.make_tma_atom(tk.SM90_TMA_LOAD_MULTICAST, mB, sB_layout, (mma_tiler[1], mma_tiler[2]),  # noqa: N806
                                  tk.size(vmnk, 1))
    D = np.full((m, n), np.nan, np.float32)  # noqa: N806
    stats = emu.launch(kernel, (m // BM, n // BN, 1), CLUSTER, tiled_mma, mma_tiler, sA_layout, sB_layout,
                       tma_atom_A, tma_atom_B, tma_atom_A.get_tma_tensor(mA.shape),
                       tma_atom_B.get_tma_tensor(mB.shape), D, trace)
    af, bf = A.astype(np.float32), B.astype(np.float32)
    return D, reference_mma(af, bf.T, MMA_K), af.astype(np.float64) @ bf.T.astype(np.float64), stats


def main():
    d, ref, exact, stats = run(trace=True)
    same = bool(np.array_equal(d.view(np.uint32), ref.view(np.uint32)))
    err = float(np.max(np.abs(d - exact)))
    print(f"PipelineTmaUmmaAsync<{STAGES}> mainloop, 256x128x256, 2x2 clusters with A/B multicast: {stats}")
    print(f"D equals the emulator's fp32 MMA order bit for bit: {same}; max |D - numpy float64| = {err:.2e}")
    print("Execution is " + ("successful." if same and err < 1e-3 else "failed."))


if __name__ == "__main__":
    main()
