// gemm.cu -- C = A @ B on Hopper: TMA loads into a multi-stage shared-memory ring, wgmma (SASS HGMMA) from shared
// memory, fp32 accumulation, warp specialization with setmaxnreg.
//
//   A: (M, K) row-major (K contiguous), tensor map globalDim {K, M}, box {64, BM}, SWIZZLE_128B
//   B: given as Bt (N, K) row-major, i.e. the transpose of a K-major (K, N) view; map {K, N}, box {64, BN}, SW128
//   C: (M, N) with row stride ldc, written from registers with predicated direct stores (bf16 / fp16 / fp32)
//
// One CTA computes one BM x BN tile (BM = 128: two consumer warpgroups of 64 rows each). Threads: 3 warpgroups.
//   warpgroup 0   producer: setmaxnreg.dec to 40; one thread waits empty[s], arms full[s] with the stage's bytes,
//                 issues the two TMA loads (out-of-bounds boxes read as zeros, so M/N/K remainders need nothing)
//   warpgroups 1,2 consumers: setmaxnreg.inc to 232; wait full[s], 4 x wgmma m64nBNk16 over the 64-wide K slab,
//                 release the stage on empty[s] (one arrival per consumer warp: 8) once the wgmmas reading it retired.
// OVERLAP=1 keeps one wgmma group in flight (wait_group 1) and releases the previous stage instead of the current one.
// SPLITK=1: blockIdx.y picks a K range of k_per_split elements (a multiple of BK); the fp32 partial tile is added
// into C (fp32, zeroed by the host) with red.global.add.f32 -- for shapes with too few output tiles to fill the GPU.
// Grid: one CTA per output tile, grouped rasterization (GROUP_M tile rows at a time) for L2 reuse.
#include <tmakit/fence.cuh>
#include <tmakit/mbarrier.cuh>
#include <tmakit/tma.cuh>
#include <tmakit/types.cuh>

#include "gemm_wgmma.cuh"

using namespace tmakit;

namespace tmakit {
namespace gemm {

constexpr int BM = 128;
constexpr int BK = 64;  // 64 x 2 bytes = one 128-byte swizzle row
constexpr int CONSUMER_WARPS = 8;

// Shared-memory matrix descriptor of a K-major tile written by TMA with SWIZZLE_128B (rows of 128 bytes, 8-row,
// 1024-byte swizzle atoms). Bits: [0,14) start address >> 4, [16,30) leading byte offset >> 4 (unused for
// swizzled K-major; 1 by convention), [32,46) stride byte offset >> 4 (1024 B between 8-row groups), [62,64)
// layout type (1 = SWIZZLE_128B). The tile base must be 1024-byte aligned (base offset field 0); stepping K by 16
// elements inside the 128-byte row adds 32 bytes to the start address.
TMAKIT_DEVICE u64 sw128_desc(u32 smem_addr) {
  u64 d = 0;
  d |= (u64)((smem_addr & 0x3FFFF) >> 4);
  d |= (u64)1 << 16;
  d |= (u64)(1024 >> 4) << 32;
  d |= (u64)1 << 62;
  return d;
}

// PTX: wgmma.fence.sync.aligned;   before the first wgmma and whenever accumulator registers were touched.
TMAKIT_DEVICE void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
// PTX: wgmma.commit_group.sync.aligned;
TMAKIT_DEVICE void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
// PTX: wgmma.wait_group.sync.aligned N;   at most N wgmma groups of this warpgroup still pending.
template <int N> TMAKIT_DEVICE void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory"); }

// PTX: setmaxnreg.{dec,inc}.sync.aligned.u32 N;   (whole warpgroup; needs the __launch_bounds__(.., 1) cap)
template <int N> TMAKIT_DEVICE void setmaxnreg_dec() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N)); }
template <int N> TMAKIT_DEVICE void setmaxnreg_inc() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N)); }

// Two fp32 -> one packed 32-bit word of the output type (lo = first element). PTX: cvt.rn.{bf16x2,f16x2}.f32
template <int OUT> TMAKIT_DEVICE u32 pack2(float lo, float hi);
template <> TMAKIT_DEVICE u32 pack2<0>(float lo, float hi) {
  u32 r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
template <> TMAKIT_DEVICE u32 pack2<1>(float lo, float hi) {
  u32 r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

}  // namespace gemm
}  // namespace tmakit

// PTX: red.global.add.f32 [addr], v;   (split-K partial sums; order of additions is not deterministic)
TMAKIT_DEVICE void red_add_f32(float* addr, float v) {
  asm volatile("red.global.add.f32 [%0], %1;" ::"l"(addr), "f"(v) : "memory");
}

// IN_F16: 0 = bf16 inputs, 1 = fp16. OUT: 0 = bf16, 1 = fp16, 2 = fp32. BN in {128, 256}. SPLITK needs OUT = 2.
template <int IN_F16, int OUT, int BN, int STAGES, int OVERLAP, int SPLITK>
__global__ void __launch_bounds__(384, 1)
tmakit_gemm_tn(const __grid_constant__ TmaDesc tm_a, const __grid_constant__ TmaDesc tm_b, void* __restrict__ c,
               int M, int N, int K, long long ldc, int group_m, int k_per_split) {
  static_assert(!SPLITK || OUT == 2, "split-K accumulates in fp32");
  using namespace tmakit::gemm;
  constexpr u32 A_BYTES = BM * BK * 2;
  constexpr u32 B_BYTES = BN * BK * 2;
  extern __shared__ __align__(1024) u8 gemm_smem[];
  const u32 base = (smem_u32(gemm_smem) + 1023u) & ~1023u;
  const u32 s_a = base;
  const u32 s_b = base + STAGES * A_BYTES;
  const u32 bars = s_b + STAGES * B_BYTES;  // full[STAGES], then empty[STAGES]

  const int tid = threadIdx.x;
  const int wg = tid / 128;

  // Grouped rasterization: GROUP_M tile rows sweep the tile columns together.
  const int tiles_m = (M + BM - 1) / BM;
  const int tiles_n = (N + BN - 1) / BN;
  const int pid = blockIdx.x;
  const int per_group = group_m * tiles_n;
  const int first_m = (pid / per_group) * group_m;
  const int gsize = min(tiles_m - first_m, group_m);
  const int tile_m = first_m + (pid % per_group) % gsize;
  const int tile_n = (pid % per_group) / gsize;
  const int m0 = tile_m * BM, n0 = tile_n * BN;
  const int k_begin = SPLITK ? (int)blockIdx.y * k_per_split : 0;
  const int k_end = SPLITK ? min(K, k_begin + k_per_split) : K;
  const int kt_count = (k_end - k_begin + BK - 1) / BK;  // OOB past K (last range only) reads zeros

  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbarrier_init(bars + 8 * s, 1);
      mbarrier_init(bars + 8 * (STAGES + s), CONSUMER_WARPS);
    }
    fence_mbarrier_init();
    prefetch_tensormap(&tm_a);
    prefetch_tensormap(&tm_b);
  }
  __syncthreads();

  if (wg == 0) {
    setmaxnreg_dec<40>();
    if (tid == 0) {
      for (int kt = 0; kt < kt_count; ++kt) {
        const int s = kt % STAGES;
        if (kt >= STAGES) mbarrier_wait(bars + 8 * (STAGES + s), ((kt / STAGES) & 1) ^ 1);
        const u32 full = bars + 8 * s;
        mbarrier_arrive_expect_tx(full, A_BYTES + B_BYTES);
        tma_load_tile<2>(s_a + s * A_BYTES, &tm_a, full, k_begin + kt * BK, m0);
        tma_load_tile<2>(s_b + s * B_BYTES, &tm_b, full, k_begin + kt * BK, n0);
      }
    }
  } else {
    setmaxnreg_inc<232>();
    const int cw = wg - 1;  // consumer 0 / 1: rows [64 cw, 64 cw + 64) of the tile
    const int lane = tid % 32;
    float acc[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) acc[i] = 0.f;
    const u32 a_off = cw * 64 * BK * 2;
    for (int kt = 0; kt < kt_count; ++kt) {
      const int s = kt % STAGES;
      mbarrier_wait(bars + 8 * s, (kt / STAGES) & 1);
      wgmma_fence();
#pragma unroll
      for (int k = 0; k < BK / 16; ++k) {
        Wgmma<BN, IN_F16>::mma(acc, sw128_desc(s_a + s * A_BYTES + a_off + k * 32),
                               sw128_desc(s_b + s * B_BYTES + k * 32), 1);
      }
      wgmma_commit();
      if (OVERLAP) {
        wgmma_wait<1>();
        if (kt > 0 && lane == 0) mbarrier_arrive(bars + 8 * (STAGES + (kt - 1) % STAGES));
      } else {
        wgmma_wait<0>();
        if (lane == 0) mbarrier_arrive(bars + 8 * (STAGES + s));
      }
    }
    wgmma_wait<0>();

    // Epilogue: the m64nBN accumulator layout. Thread (warp w, lane l) holds, for j < BN/8,
    // acc[4j + 2h + e] = C[16 w + l/4 + 8 h][8 j + 2 (l%4) + e] of its 64-row slab (h, e in {0, 1}).
    const int warp = (tid % 128) / 32;
    const int row0 = m0 + cw * 64 + warp * 16 + lane / 4;
    const int col0 = n0 + 2 * (lane % 4);
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
      const int col = col0 + 8 * j;
      if (col < N) {  // N is a multiple of 8: the pair (col, col + 1) is in or out together
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = row0 + 8 * h;
          if (row < M) {
            const long long off = (long long)row * ldc + col;
            const float x0 = acc[4 * j + 2 * h], x1 = acc[4 * j + 2 * h + 1];
            if (SPLITK) {
              red_add_f32(static_cast<float*>(c) + off, x0);
              red_add_f32(static_cast<float*>(c) + off + 1, x1);
            } else if (OUT == 2) {
              *reinterpret_cast<float2*>(static_cast<float*>(c) + off) = make_float2(x0, x1);
            } else {
              *reinterpret_cast<u32*>(static_cast<u16*>(c) + off) = pack2<OUT == 1 ? 1 : 0>(x0, x1);
            }
          }
        }
      }
    }
  }
}
