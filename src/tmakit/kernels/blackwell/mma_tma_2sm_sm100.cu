// CuTe's Blackwell tutorial 04 (mma_tma_2sm_sm100) with tmakit's device headers: as tutorial 03, but each MMA is a
// 256x256 tcgen05.mma.cta_group::2 over a CTA pair (the cluster's V mode): each CTA holds 128 rows of A and 128 rows
// of B; both CTAs load with the 2-SM TMA (bytes complete on the even CTA's barrier), only the even CTA waits and
// issues the MMAs, and its commit is multicast to every CTA sharing its A or B. Cluster 4x4 = (V 2, M 2, N 4).
// Compiled for sm_100a and SASS-checked by the CPU tests; never run (no Blackwell GPU): docs/BLACKWELL.md.
#include <tmakit/cluster.cuh>
#include <tmakit/fence.cuh>
#include <tmakit/mbarrier.cuh>
#include <tmakit/tcgen05.cuh>
#include <tmakit/tma.cuh>

namespace tmakit::sm100_2sm {

constexpr u32 MMA_M = 256, MMA_N = 256, BM = MMA_M / 2, BN = MMA_N / 2, BK = 64, MMA_K = 16;
constexpr u32 CV = 2, CM = 2, CN = 4;  // cluster_layout_vmnk ((2),2,4,1):((1),2,4,0)
constexpr u32 TMEM_COLUMNS = 512;
constexpr u32 IDESC = umma_instr_desc(0, 0, 0, 0, MMA_M, MMA_N);

struct SharedStorage {
  alignas(1024) u16 A[BM * BK];
  alignas(1024) u16 B[BN * BK];
  alignas(16) u64 mma_barrier;
  alignas(16) u64 tma_barrier;
  alignas(16) u32 tmem_base_ptr;
};

TMAKIT_DEVICE u64 k_sw128_desc(u32 smem, u32 k_block) { return umma_smem_desc(smem + 32 * k_block, 16, 1024, 2); }

TMAKIT_DEVICE u16 vmnk_mask(u32 v0, u32 v1, u32 m0, u32 m1, u32 n0, u32 n1) {
  u16 mask = 0;
  for (u32 v = v0; v < v1; ++v)
    for (u32 m = m0; m < m1; ++m)
      for (u32 n = n0; n < n1; ++n) mask |= u16(1u << (v + CV * m + CV * CM * n));
  return mask;
}

}  // namespace tmakit::sm100_2sm

using namespace tmakit;
using namespace tmakit::sm100_2sm;

extern "C" __global__ void __cluster_dims__(4, 4, 1) __launch_bounds__(128)
tmakit_sm100_mma_tma_2sm(const __grid_constant__ TmaDesc tma_a,  // box 64 x 32 (K x M rows), SW128
                         const __grid_constant__ TmaDesc tma_b,  // box 64 x 64 (K x N rows), SW128
                         const float* C, float* D, u32 gemm_n, u32 gemm_k, float alpha, float beta) {
  extern __shared__ __align__(1024) u8 shared_memory[];
  SharedStorage& s = *reinterpret_cast<SharedStorage*>(shared_memory);
  const u32 rank = cluster_ctarank();
  const u32 v = rank % CV, cm = (rank / CV) % CM, cn = rank / (CV * CM);
  const u32 m_tile = blockIdx.x / CV, n_tile = blockIdx.y;  // mma_coord_vmnk
  const u16 mask_a = vmnk_mask(v, v + 1, cm, cm + 1, 0, CN);  // create_tma_multicast_mask<2>
  const u16 mask_b = vmnk_mask(v, v + 1, 0, CM, cn, cn + 1);  // create_tma_multicast_mask<1>
  const u16 mask_c = vmnk_mask(0, CV, 0, CM, cn, cn + 1) | vmnk_mask(0, CV, cm, cm + 1, 0, CN);
  const bool elect_one_warp = threadIdx.x / 32 == 0, elect_one_cta = v == 0;
  const bool elect_one_thr = elect_one();
  const u32 tma_bar = smem_u32(&s.tma_barrier), mma_bar = smem_u32(&s.mma_barrier);

  if (elect_one_warp) tmem_alloc_2sm(smem_u32(&s.tmem_base_ptr), TMEM_COLUMNS);  // TMEM::Allocator2Sm
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  const u32 tmem_acc = s.tmem_base_ptr;

  if (elect_one_warp && elect_one_thr) {
    mbarrier_init(mma_bar, CM + CN - 1);
    mbarrier_init(tma_bar, 1);
    fence_mbarrier_init();
  }
  cluster_sync();  // barrier inits and both TMEM allocations visible to the pair

  const u32 tx_bytes = CV * (BM * BK + BN * BK) * sizeof(u16);  // the leader counts its peer's bytes too
  u32 tma_phase = 0, mma_phase = 0;
  const u32 a_row = m_tile * MMA_M + v * BM, b_row = n_tile * MMA_N + v * BN;
  for (u32 k_tile = 0; k_tile < gemm_k / BK; ++k_tile) {
    if (elect_one_warp && elect_one_thr) {
      if (elect_one_cta) mbarrier_arrive_expect_tx(tma_bar, tx_bytes);
      tma_load_2sm_mc_2d(smem_u32(s.A) + cn * (BM / CN) * BK * 2, &tma_a, tma_bar, mask_a, k_tile * BK,
                         a_row + cn * (BM / CN));
      tma_load_2sm_mc_2d(smem_u32(s.B) + cm * (BN / CM) * BK * 2, &tma_b, tma_bar, mask_b, k_tile * BK,
                         b_row + cm * (BN / CM));
    }
    if (elect_one_cta) {
      mbarrier_wait(tma_bar, tma_phase);
      tma_phase ^= 1;
      if (elect_one_warp) {
        if (elect_one()) {
          for (u32 k_block = 0; k_block < BK / MMA_K; ++k_block)
            umma_f16_ss_2sm(tmem_acc, k_sw128_desc(smem_u32(s.A), k_block), k_sw128_desc(smem_u32(s.B), k_block),
                            IDESC, k_tile > 0 || k_block > 0);
          umma_commit_multicast_2sm(mma_bar, mask_c);  // cutlass::arch::umma_arrive_multicast_2x1SM
        }
        __syncwarp();
      }
    }
    mbarrier_wait(mma_bar, mma_phase);
    mma_phase ^= 1;
  }

  tcgen05_fence_after_thread_sync();
  const u32 row = a_row + threadIdx.x;  // this CTA's TMEM holds rows v*128 .. +127 of the 256-row MMA
  const u32 lane_addr = tmem_acc + ((threadIdx.x / 32 * 32) << 16);
  for (u32 col = 0; col < MMA_N; col += 4) {
    u32 r[4];
    tmem_ld_32x32b_x4(lane_addr + col, r);
    tmem_wait_ld();
    for (u32 j = 0; j < 4; ++j) {
      const u64 i = u64(row) * gemm_n + n_tile * MMA_N + col + j;
      D[i] = alpha * __uint_as_float(r[j]) + beta * C[i];
    }
  }
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  if (elect_one_warp) {
    tmem_relinquish_alloc_permit_2sm();
    tmem_dealloc_2sm(tmem_acc, TMEM_COLUMNS);
  }
}
