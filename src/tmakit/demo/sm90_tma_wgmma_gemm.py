"""A Hopper GEMM on the emulator: TMA loads with 128-byte swizzle into a multi-stage ring guarded by full / empty
mbarriers, ``wgmma.mma_async`` m64n128k16 (bf16 in, fp32 accumulators) by two consumer warpgroups, the accumulator
fragments written to shared memory thread by thread, and a TMA store of the result.

D = A.B^T with A (M x K) and B (N x K) bf16, both K-major (the "TN" layout of ``src/tmakit/kernels/gemm.cu``), D
fp32. One CTA computes a 128 x 128 tile: warpgroup w owns rows 64w..64w+63. A K-tile is 64 bf16 = one 128-byte
swizzle row per operand row, read by 4 wgmmas of K=16 whose descriptors step 32 bytes inside that row (gemm.cu's
``sw128_desc`` and ``desc_plus``). The consumer keeps one K-tile's MMAs in flight (``wgmma_wait_group(1)``) and
releases the previous stage to the producer, as gemm.cu's OVERLAP path does.

Run: ``tmakit demo hopper`` or ``python examples/hopper_tma_wgmma_gemm.py``.
"""

from __future__ import annotations

import numpy as np

from .. import emu
from ..emu.wgmma_desc import decode_wgmma_desc, encode_wgmma_desc
from ..tma.tensormap import SwizzleMode, TensorMap

BM, BN, BK, MMA_K = 128, 128, 64, 16
STAGES = 3
WARPGROUPS = BM // 64  # consumer warpgroups, 64 rows each
TILE_BYTES = (BM + BN) * BK * 2  # transaction bytes of one stage


def desc_a(stage_addr: int, warpgroup: int, kk: int) -> int:
    """K-major SW128 A: 8-row core groups 1024 B apart (SBO), LBO unused (16); warpgroup w starts 64 rows (8 KiB)
    further; K-block kk of 16 elements is 32 bytes further inside the 128-byte row."""
    return encode_wgmma_desc(stage_addr + warpgroup * 64 * 128 + 32 * kk, 16, 1024, 128)


def desc_b(stage_addr: int, kk: int) -> int:
    """K-major SW128 B: all BN rows of the stage, same core-matrix strides as A."""
    return encode_wgmma_desc(stage_addr + 32 * kk, 16, 1024, 128)


def gemm_kernel(tma_a, tma_b, tma_c, num_k: int) -> None:
    """One CTA: a producer (one elected thread) and two consumer warpgroups, written as one program."""
    b = emu.block_idx()
    m0, n0 = b.y * BM, b.x * BN
    s_a = [emu.shared_alloc(BM * BK * 2, 1024).address for _ in range(STAGES)]
    s_b = [emu.shared_alloc(BN * BK * 2, 1024).address for _ in range(STAGES)]
    s_c = [emu.shared_array((64, BN), np.float32) for _ in range(WARPGROUPS)]
    full, empty = emu.shared_barrier(STAGES), emu.shared_barrier(STAGES)
    for s in range(STAGES):
        emu.initialize_barrier(full[s], 1)  # the producer's expect_tx arrival (+ the TMA bytes)
        emu.initialize_barrier(empty[s], WARPGROUPS)  # one arrival per consumer warpgroup
    emu.fence_barrier_init()

    def produce(kt: int) -> None:
        s = kt % STAGES
        emu.wait_barrier(empty[s], ((kt // STAGES) & 1) ^ 1)  # the first pass waits for nothing (parity 1)
        emu.set_barrier_transaction_bytes(full[s], TILE_BYTES)
        emu.tma_load(tma_a, (kt * BK, m0), s_a[s], full[s])
        emu.tma_load(tma_b, (kt * BK, n0), s_b[s], full[s])

    def release(kt: int) -> None:
        for _ in range(WARPGROUPS):  # each consumer warpgroup, after its wgmma_wait_group covering K-tile kt
            emu.arrive_barrier(empty[kt % STAGES])
        if kt + STAGES < num_k:
            produce(kt + STAGES)

    acc = [emu.wgmma_accumulator(BN, "f32", warpgroup=w) for w in range(WARPGROUPS)]
    for kt in range(min(STAGES, num_k)):
        produce(kt)
    for kt in range(num_k):
        s = kt % STAGES
        emu.wait_barrier(full[s], (kt // STAGES) & 1)
        for w in range(WARPGROUPS):
            emu.wgmma_fence(w)
            for kk in range(BK // MMA_K):  # the first MMA of the tile overwrites (scale-d 0): no zero fill
                emu.wgmma_mma_async(acc[w], desc_a(s_a[s], w, kk), desc_b(s_b[s], kk), kt > 0 or kk > 0,
                                    atype="bf16")
            emu.wgmma_commit_group(w)
        for w in range(WARPGROUPS):
            emu.wgmma_wait_group(1, w)  # K-tile kt may still run; kt - 1 is complete
        if kt > 0:
            release(kt - 1)
    for w in range(WARPGROUPS):
        emu.wgmma_wait_group(0, w)

    for w in range(WARPGROUPS):  # epilogue: each thread writes its registers (PTX accumulator layout), then TMA
        for t in range(128):
            rows, cols = emu.accumulator_coords(BN, t)
            s_c[w][rows, cols] = acc[w].fragment(t)
        emu.fence_proxy_async()
        emu.tma_store(tma_c, (n0, m0 + 64 * w), s_c[w])
    emu.tma_store_arrive()
    emu.tma_store_wait(0)


def to_bf16(x: np.ndarray) -> np.ndarray:
    """float32 -> bf16 bits (round to nearest even)."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_values(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def make_problem(m: int = 128, n: int = 256, k: int = 256, seed: int = 0):
    """A (m x k) and B (n x k) bf16 bits in emulated global memory (128-byte aligned for the swizzled maps)."""
    rng = np.random.default_rng(seed)
    a, b = emu.alloc((m, k), np.uint16, align=128), emu.alloc((n, k), np.uint16, align=128)
    a[:], b[:] = to_bf16(rng.uniform(-1, 1, a.shape)), to_bf16(rng.uniform(-1, 1, b.shape))
    return a, b


def run(a: np.ndarray, b: np.ndarray, verbose: bool = False):
    """D = A.B^T (fp32) on the emulator; returns (D, launch stats)."""
    (m, k), n = a.shape, b.shape[0]
    if m % BM or n % BN or k % BK:
        raise ValueError(f"M {m} must be a multiple of {BM}, N {n} of {BN}, K {k} of {BK}")
    d = emu.alloc((m, n), np.float32, align=128)
    d[:] = np.nan
    tma_a = TensorMap.from_tensor(a, (BM, BK), swizzle=SwizzleMode.B128, dtype="bf16")
    tma_b = TensorMap.from_tensor(b, (BN, BK), swizzle=SwizzleMode.B128, dtype="bf16")
    tma_c = TensorMap.from_tensor(d, (64, BN))
    if verbose:
        print(f"tma_a: {tma_a}\ntma_b: {tma_b}\ntma_c: {tma_c}")
    stats = emu.launch(gemm_kernel, (n // BN, m // BM), tma_a, tma_b, tma_c, k // BK)
    return d, stats


def walkthrough() -> None:
    """The descriptors and the fragment layout the kernel uses."""
    print(f"CTA tile {BM}x{BN}, K-tile {BK} (128 B of bf16 = one SWIZZLE_128B row), {STAGES} stages, "
          f"{WARPGROUPS} consumer warpgroups x wgmma.mma_async.sync.aligned.m64n{BN}k{MMA_K}.f32.bf16.bf16")
    for w, kk in ((0, 0), (0, 1), (1, 0)):
        d = desc_a(0x0, w, kk)
        print(f"  desc_a(stage @0x0, warpgroup {w}, k-block {kk}) = {d:#018x}: {decode_wgmma_desc(d)}")
    print(f"  desc_b(stage @0xc000, k-block 3) = {desc_b(0xC000, 3):#018x}: {decode_wgmma_desc(desc_b(0xC000, 3))}")
    rows, cols = emu.accumulator_coords(BN, 5)
    regs = ", ".join(f"d{i}->({rows[i]},{cols[i]})" for i in range(6))
    print(f"  accumulator fragment of thread 5 ({BN // 2} fp32 registers): {regs}, ...")


def main() -> None:
    walkthrough()
    a, b = make_problem()
    d, stats = run(a, b, verbose=True)
    af, bf = bf16_values(a), bf16_values(b)
    ref = emu.reference_wgmma(af, bf.T, MMA_K)
    exact = np.array_equal(d.view(np.uint32), ref.view(np.uint32))
    err = float(np.max(np.abs(d - af.astype(np.float64) @ bf.T.astype(np.float64))))
    print(f"Problem (MxNxK) {a.shape[0]}x{b.shape[0]}x{a.shape[1]} on the emulator: {stats}")
    print(f"D equals the emulator's defined fp32 order bit for bit: {exact}; max |D - numpy float64| = {err:.2e}")
    print("Execution is " + ("successful." if exact and err < 1e-3 else "failed."))


if __name__ == "__main__":
    main()
