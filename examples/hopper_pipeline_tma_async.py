"""A CUTLASS-style TMA mainloop on the emulator through ``cutlass::PipelineTmaAsync``: C = A . B^T in fp32, CTA
tiles of 32x32 with K tiles of 32, a 3-stage pipeline, clusters of 2x1 CTAs that share the B tile (each CTA
multicasts half of its rows to both), checked against numpy.

The two roles of a warp-specialized CUTLASS kernel are two pipeline objects of one CTA program: the producer warp
(warp 0, the leader arrives with ``expect_tx``) and one consumer warpgroup (threads 128..255). The consumer's
``consumer_release`` sends one arrival to each CTA of its cluster row/column, so a CTA refills a stage only once
both CTAs finished reading it (its multicast writes into both). The "MMA" is numpy on the shared tiles.
Run: ``python examples/hopper_pipeline_tma_async.py``.
"""

import numpy as np

import tmakit as tk
from tmakit import emu

BM = BN = BK = 32
STAGES = 3
MainloopPipeline = emu.PipelineTmaAsync[STAGES]


def kernel(tma_a, tma_b, mA, mB, C, k_tiles, trace):  # noqa: N803
    sA = [emu.shared_tensor(tk.make_layout((tk.Int(BM), tk.Int(BK)), tk.LayoutRight)) for _ in range(STAGES)]  # noqa: N806
    sB = [emu.shared_tensor(tk.make_layout((tk.Int(BN), tk.Int(BK)), tk.LayoutRight)) for _ in range(STAGES)]  # noqa: N806
    storage = MainloopPipeline.SharedStorage()
    cluster = emu.cluster_shape()
    P, Role = MainloopPipeline.Params, MainloopPipeline.ThreadCategory  # noqa: N806
    tx = (BM + BN) * BK * 4  # the A tile and the whole B tile land in this CTA each stage
    producer = MainloopPipeline(storage, P(tx, Role.Producer, is_leader=1, num_consumers=128), cluster,
                                threads=range(32))  # warp 0: initializes the barriers
    consumer = MainloopPipeline(storage, P(role=Role.Consumer, num_consumers=128), cluster,
                                threads=range(128, 256))
    emu.cluster_sync()  # barrier inits visible to the peer before its multicasts and remote arrivals

    b, rank = emu.block_idx(), emu.block_rank_in_cluster()
    gA = tk.local_tile(tma_a.get_tma_tensor(mA.shape), (tk.Int(BM), tk.Int(BK)), (b.x, tk._))  # noqa: N806
    gB = tk.local_tile(tma_b.get_tma_tensor(mB.shape), (tk.Int(BN), tk.Int(BK)), (b.y, tk._))  # noqa: N806
    a_cp, b_cp = tma_a.get_slice(0), tma_b.get_slice(rank)
    mcast = (1 << emu.cluster_size()) - 1

    def load(state, k):  # the producer warp's elected thread
        producer.producer_acquire(state)
        bar = producer.producer_get_barrier(state)
        emu.copy(tma_a.with_(bar), a_cp.partition_S(gA[(tk._, tk._, k)]), a_cp.partition_D(sA[state.index()]))
        emu.copy(tma_b.with_(bar, mcast), b_cp.partition_S(gB[(tk._, tk._, k)]), b_cp.partition_D(sB[state.index()]))
        producer.producer_commit(state, tx)  # a no-op: the TMA completes the bytes

    write, read = emu.make_producer_start_state(MainloopPipeline), MainloopPipeline.PipelineState()
    k_load = 0
    while k_load < min(STAGES, k_tiles):  # prologue: fill the pipeline
        load(write, k_load)
        write.increment()
        k_load += 1
    acc = np.zeros((BM, BN))
    for _ in range(k_tiles):  # the consumer warpgroup, with the producer refilling behind it
        consumer.consumer_wait(read)
        a = sA[read.index()].iterator.view((BM, BK)).astype(np.float64)
        bt = sB[read.index()].iterator.view((BN, BK)).astype(np.float64)
        acc += a @ bt.T
        consumer.consumer_release(read)
        if trace and (b.x, b.y) == (0, 0):
            print(f"  CTA (0,0): consumed {read}, producer at {write}")
        read.increment()
        if k_load < k_tiles:
            load(write, k_load)
            write.increment()
            k_load += 1
    producer.producer_tail(write)  # every stage released by both CTAs: no arrival or multicast still on its way
    C[b.x * BM:(b.x + 1) * BM, b.y * BN:(b.y + 1) * BN] = acc


def run(m=128, n=64, k=192, seed=0, trace=False):
    """A (M,K), B (N,K) of small integers (exact sums); returns (C, the numpy reference, launch stats)."""
    rng = np.random.default_rng(seed)
    A = emu.alloc((m, k), np.float32, align=128)  # noqa: N806
    B = emu.alloc((n, k), np.float32, align=128)  # noqa: N806
    A[:], B[:] = rng.integers(-2, 3, (m, k)), rng.integers(-2, 3, (n, k))
    mA = tk.make_tensor(A, tk.make_layout((m, k), tk.LayoutRight))  # noqa: N806
    mB = tk.make_tensor(B, tk.make_layout((n, k), tk.LayoutRight))  # noqa: N806
    s_layout = tk.make_layout((tk.Int(BM), tk.Int(BK)), tk.LayoutRight)
    tma_a = tk.make_tma_copy(tk.SM90_TMA_LOAD, mA, s_layout)
    tma_b = tk.make_tma_copy(tk.SM90_TMA_LOAD_MULTICAST, mB, s_layout, cluster_size=tk.Int(2))
    C = np.zeros((m, n))  # noqa: N806
    stats = emu.launch(kernel, (m // BM, n // BN), (2, 1, 1), tma_a, tma_b, mA, mB, C, k // BK, trace)
    return C, A.astype(np.float64) @ B.astype(np.float64).T, stats


def main():
    c, ref, stats = run(trace=True)
    print(f"PipelineTmaAsync<{STAGES}> mainloop, 128x64x192, 2x1 clusters with B multicast: {stats}")
    print(f"C equals numpy exactly: {bool(np.array_equal(c, ref))}")


if __name__ == "__main__":
    main()
