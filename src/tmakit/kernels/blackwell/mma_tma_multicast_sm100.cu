// CuTe's Blackwell tutorial 03 (mma_tma_multicast_sm100) with tmakit's device headers: D = alpha * A.B^T + beta * C,
// A (M x K) and B (N x K) half, K-major; C, D float, row-major. One 128x256 tcgen05.mma tile per CTA, K in tiles of
// 64 (4 UMMAs of K=16 each), a 4x4 cluster: A multicast along the cluster's N mode, B along its M mode, the MMA's
// commit multicast to every CTA that shares this CTA's A or B. 128 threads per CTA.
// Compiled for sm_100a and SASS-checked by the CPU tests; never run (no Blackwell GPU): docs/BLACKWELL.md.
#include <tmakit/cluster.cuh>
#include <tmakit/fence.cuh>
#include <tmakit/mbarrier.cuh>
#include <tmakit/tcgen05.cuh>
#include <tmakit/tma.cuh>

namespace tmakit::sm100 {

constexpr u32 BM = 128, BN = 256, BK = 64, MMA_K = 16;
constexpr u32 CLUSTER_M = 4, CLUSTER_N = 4;
constexpr u32 TMEM_COLUMNS = 512;  // CuTe's Sm100TmemCapacityColumns (the example allocates all of TMEM)
constexpr u32 IDESC = umma_instr_desc(0, 0, 0, 0, BM, BN);  // f16 x f16 -> f32, both K-major

struct SharedStorage {
  alignas(1024) u16 A[BM * BK];  // Layout_K_SW128_Atom<half_t> tiled to (128, 64): rows of 128 B, 128B swizzle
  alignas(1024) u16 B[BN * BK];
  alignas(16) u64 mma_barrier;
  alignas(16) u64 tma_barrier;
  alignas(16) u32 tmem_base_ptr;
};

// K-major SW128 descriptor of 8-row groups 1024 B apart (SBO), advanced by 32 B per UMMA K-block.
TMAKIT_DEVICE u64 k_sw128_desc(u32 smem, u32 k_block) { return umma_smem_desc(smem + 32 * k_block, 16, 1024, 2); }

}  // namespace tmakit::sm100

using namespace tmakit;
using namespace tmakit::sm100;

extern "C" __global__ void __cluster_dims__(CLUSTER_M, CLUSTER_N, 1) __launch_bounds__(128)
tmakit_sm100_mma_tma_multicast(const __grid_constant__ TmaDesc tma_a,  // box 64 x 32 (K x M rows), SW128
                               const __grid_constant__ TmaDesc tma_b,  // box 64 x 64 (K x N rows), SW128
                               const float* C, float* D, u32 gemm_n, u32 gemm_k, float alpha, float beta) {
  extern __shared__ __align__(1024) u8 shared_memory[];
  SharedStorage& s = *reinterpret_cast<SharedStorage*>(shared_memory);
  const u32 m_tile = blockIdx.x, n_tile = blockIdx.y;
  const u32 rank = cluster_ctarank();          // cluster_layout_vmnk ((1),4,4,1):((0),1,4,0)
  const u32 cm = rank % CLUSTER_M, cn = rank / CLUSTER_M;
  const u16 mask_a = u16(0x1111u << cm);       // create_tma_multicast_mask<2>: same M, every N
  const u16 mask_b = u16(0xFu << (4 * cn));    // create_tma_multicast_mask<1>: same N, every M
  const u16 mask_c = mask_a | mask_b;          // <0,1> | <0,2>
  const bool elect_one_warp = threadIdx.x / 32 == 0;
  const bool elect_one_thr = elect_one();
  const u32 tma_bar = smem_u32(&s.tma_barrier), mma_bar = smem_u32(&s.mma_barrier);

  if (elect_one_warp) tmem_alloc(smem_u32(&s.tmem_base_ptr), TMEM_COLUMNS);
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  const u32 tmem_acc = s.tmem_base_ptr;

  if (elect_one_warp && elect_one_thr) {
    mbarrier_init(mma_bar, CLUSTER_M + CLUSTER_N - 1);  // one commit from each CTA sharing A or B
    mbarrier_init(tma_bar, 1);
    fence_mbarrier_init();
  }
  cluster_sync();

  const u32 tx_bytes = (BM * BK + BN * BK) * sizeof(u16);
  u32 tma_phase = 0, mma_phase = 0;
  for (u32 k_tile = 0; k_tile < gemm_k / BK; ++k_tile) {
    if (elect_one_warp && elect_one_thr) {
      mbarrier_arrive_expect_tx(tma_bar, tx_bytes);
      // tma_partition: this CTA loads 1/4 of the A tile (its N coordinate) and 1/4 of B (its M coordinate).
      tma_load_tile_mc<2>(smem_u32(s.A) + cn * (BM / CLUSTER_N) * BK * 2, &tma_a, tma_bar, mask_a,
                          k_tile * BK, m_tile * BM + cn * (BM / CLUSTER_N));
      tma_load_tile_mc<2>(smem_u32(s.B) + cm * (BN / CLUSTER_M) * BK * 2, &tma_b, tma_bar, mask_b,
                          k_tile * BK, n_tile * BN + cm * (BN / CLUSTER_M));
    }
    mbarrier_wait(tma_bar, tma_phase);
    tma_phase ^= 1;
    if (elect_one_warp) {
      if (elect_one()) {
        for (u32 k_block = 0; k_block < BK / MMA_K; ++k_block)  // gemm(tiled_mma, tCrA(_,_,k), tCrB(_,_,k), tCtAcc)
          umma_f16_ss(tmem_acc, k_sw128_desc(smem_u32(s.A), k_block), k_sw128_desc(smem_u32(s.B), k_block), IDESC,
                      k_tile > 0 || k_block > 0);
        umma_commit_multicast(mma_bar, mask_c);  // cutlass::arch::umma_arrive_multicast
      }
      __syncwarp();
    }
    mbarrier_wait(mma_bar, mma_phase);
    mma_phase ^= 1;
  }

  // Epilogue: make_tmem_copy(SM100_TMEM_LOAD_32dp32b1x, tCtAcc): thread t owns row t (lane t of its warp's quarter).
  tcgen05_fence_after_thread_sync();
  const u32 row = m_tile * BM + threadIdx.x;
  const u32 lane_addr = tmem_acc + ((threadIdx.x / 32 * 32) << 16);
  for (u32 col = 0; col < BN; col += 4) {
    u32 r[4];
    tmem_ld_32x32b_x4(lane_addr + col, r);
    tmem_wait_ld();
    for (u32 j = 0; j < 4; ++j) {
      const u64 i = u64(row) * gemm_n + n_tile * BN + col + j;
      D[i] = alpha * __uint_as_float(r[j]) + beta * C[i];
    }
  }
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  if (elect_one_warp) {
    tmem_relinquish_alloc_permit();
    tmem_dealloc(tmem_acc, TMEM_COLUMNS);
  }
}
