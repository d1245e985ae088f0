// tma_vs_cp_async.cu -- the kernel of tools/bench/tma_vs_cp_async.py: one CTA per SM streams a (rows x K) bf16
// matrix through a ring of STAGES shared-memory slabs (ROWS rows x 128 bytes, 128-byte swizzled, as the GEMM's B
// slabs), filled by the producer warpgroup (threads 0-127) and released by one consumer thread (128) that reads a
// word of each slab. Tile t = rows [t ROWS, t ROWS + ROWS), all of K; CTA c takes tiles c, c + grid, ...
#include <tmakit/all.cuh>
using namespace tmakit;

// PTX: cp.async.cg.shared.global [dst], [src], 16;
__device__ __forceinline__ void copy16(u32 dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}

// Thread tid's 16-byte pieces of one slab: chunk tid % 8 of rows tid / 8 + 16 j, swizzled as TMA's SWIZZLE_128B.
template <int ROWS>
__device__ __forceinline__ void copy_slab(u32 dst, const u8* w, int K, int row0, int k, int tid) {
#pragma unroll
  for (int j = 0; j < ROWS / 16; ++j) {
    const int row = tid / 8 + 16 * j, c = tid % 8;
    copy16(dst + row * 128 + ((c ^ (row % 8)) * 16), w + ((long long)(row0 + row) * K + k) * 2 + c * 16);
  }
}

// MODE 0: thread 0 loads one {64, ROWS} TMA box per slab; 1: ROWS / 32 boxes of 32 rows; 2: those boxes issued by
// lane 0 of each producer warp; 3: cp.async by the 128 producer threads, each arriving through
// cp.async.mbarrier.arrive.noinc; 4: cp.async groups, each thread waiting for the group STAGES - 2 slabs back,
// fence.proxy.async, then mbarrier.arrive (what a wgmma consumer needs).
template <int MODE, int STAGES, int ROWS>
__global__ void __launch_bounds__(256, 1) stream_slabs(const __grid_constant__ TmaDesc tm, const u8* __restrict__ w,
                                                       int K, int tiles, u32* out) {
  extern __shared__ __align__(1024) u8 smem[];
  constexpr u32 SLAB = ROWS * 128;
  constexpr int LAG = STAGES - 2;
  const u32 base = (smem_u32(smem) + 1023u) & ~1023u, bars = base + STAGES * SLAB;
  const int tid = threadIdx.x, kt = K / 64;
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbarrier_init(bars + 8 * s, MODE >= 3 ? 128 : MODE == 2 ? 4 : 1);
      mbarrier_init(bars + 8 * (STAGES + s), 1);
    }
    fence_mbarrier_init();
  }
  __syncthreads();
  int it = 0;
  if (tid < 128) {
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
      for (int k = 0; k < kt; ++k, ++it) {
        const int s = it % STAGES;
        const u32 full = bars + 8 * s, dst = base + s * SLAB, empty = bars + 8 * (STAGES + s);
        const u32 parity = ((it / STAGES) & 1) ^ 1;
        if (MODE <= 1 && tid == 0) {
          mbarrier_wait(empty, parity);
          mbarrier_arrive_expect_tx(full, SLAB);
          if (MODE == 0) tma_load_tile<2>(dst, &tm, full, 64 * k, ROWS * t);
          for (int j = 0; MODE == 1 && j < ROWS / 32; ++j) tma_load_tile<2>(dst + 4096 * j, &tm, full, 64 * k, ROWS * t + 32 * j);
        } else if (MODE == 2 && tid % 32 == 0) {
          mbarrier_wait(empty, parity);
          mbarrier_arrive_expect_tx(full, SLAB / 4);
          for (int j = tid / 32 * ROWS / 128; j < (tid / 32 + 1) * ROWS / 128; ++j)
            tma_load_tile<2>(dst + 4096 * j, &tm, full, 64 * k, ROWS * t + 32 * j);
        } else if (MODE >= 3) {
          mbarrier_wait(empty, parity);
          copy_slab<ROWS>(dst, w, K, ROWS * t, 64 * k, tid);
          if (MODE == 3) {
            asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(full) : "memory");
          } else {
            asm volatile("cp.async.commit_group;" ::: "memory");
            asm volatile("cp.async.wait_group %0;" ::"n"(LAG) : "memory");
            if (it >= LAG) {
              fence_proxy_async_smem();
              mbarrier_arrive(bars + 8 * ((it - LAG) % STAGES));
            }
          }
        }
      }
    }
    if (MODE == 4) {  // the last LAG slabs
      asm volatile("cp.async.wait_group 0;" ::: "memory");
      fence_proxy_async_smem();
      for (int j = it - LAG < 0 ? 0 : it - LAG; j < it; ++j) mbarrier_arrive(bars + 8 * (j % STAGES));
    }
  } else if (tid == 128) {
    u32 acc = 0;
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
      for (int k = 0; k < kt; ++k, ++it) {
        const int s = it % STAGES;
        mbarrier_wait(bars + 8 * s, (it / STAGES) & 1);
        acc += lds4(base + s * SLAB + (it % 32) * 4);
        mbarrier_arrive(bars + 8 * (STAGES + s));
      }
    }
    out[blockIdx.x] = acc;
  }
}
