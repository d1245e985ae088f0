// seeds.cu -- the TMA walkthroughs of the seed tutorials as generic kernels that take tensor maps:
//   tmakit_seed_load   one box per CTA (tile or im2col, optional multicast, optional L2/descriptor prefetch),
//                      then every CTA dumps its shared-memory image to global memory;
//   tmakit_seed_store  each CTA stores or reduces (8 ops) one box from a given shared-memory image;
//   tmakit_seed_copy   seed 001's copy: TMA-load a 2-D tile, TMA-store it through a second map.
// Shared images start at a 1024-byte-aligned shared address, so swizzle patterns match the absolute-address formula.
#include <tmakit/all.cuh>

using namespace tmakit;

// One CTA's load job (16 x 32-bit words; host packs it with numpy, see tmakit/cuda/seeds.py).
struct LoadJob {
  i32 coords[5];   // start coordinates, innermost first
  u32 offsets[3];  // im2col offsets (u16 each)
  u32 mask;        // multicast ctaMask (0 = plain load into this CTA)
  u32 rank;        // 1..5
  u32 mode;        // 0 = tile, 1 = im2col
  u32 issue;       // 1 = this CTA issues its load
  u32 expect;      // bytes this CTA's barrier receives (sum over issuers that target it)
  u32 dst_offset;  // destination offset (bytes) inside the aligned image
  u32 flags;       // bit0: L2 prefetch of the box first; bit1: prefetch.tensormap
  u32 pad;
};
static_assert(sizeof(LoadJob) == 64, "LoadJob is 64 bytes");

struct StoreJob {
  i32 coords[5];
  u32 rank;        // 1..5
  u32 mode;        // 0 = tile, 1 = im2col_no_offs
  i32 op;          // -1 = store, 0..7 = reduce add/min/max/inc/dec/and/or/xor
  u32 src_offset;  // source offset (bytes) inside the aligned image
  u32 pad[7];
};
static_assert(sizeof(StoreJob) == 64, "StoreJob is 64 bytes");

enum : u32 { STATUS_OK = 1, STATUS_TIMEOUT = 2 };

__device__ __forceinline__ u8* aligned_image(u8* dyn) {
  u32 a = smem_u32(dyn);
  return dyn + (((a + 1023u) & ~1023u) - a);
}

__device__ __forceinline__ u32 cta_linear() { return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z); }

// Copy `n` bytes global -> shared (or fill with `fill` when src is null), 16 bytes at a time where aligned.
__device__ __forceinline__ void fill_image(u8* dst, const u8* src, u32 n, u8 fill) {
  for (u32 i = threadIdx.x; i < n; i += blockDim.x) dst[i] = src ? src[i] : fill;
}

extern "C" __global__ void tmakit_seed_load(const __grid_constant__ TmaDesc desc, const LoadJob* __restrict__ jobs,
                                            u8* __restrict__ dump, const u8* __restrict__ init, u32 image_bytes,
                                            u32* __restrict__ status) {
  extern __shared__ __align__(1024) u8 dyn[];
  __shared__ __align__(8) u64 bar;
  const u32 cta = cta_linear();
  const LoadJob job = jobs[cta];
  u8* image = aligned_image(dyn);
  const u32 b = smem_u32(&bar);
  const bool clustered = is_explicit_cluster();

  fill_image(image, init ? init + (size_t)cta * image_bytes : nullptr, image_bytes, 0xA5);
  fence_proxy_async_smem();  // generic writes of the image before the TMA (async proxy) overwrites it
  if (threadIdx.x == 0) {
    mbarrier_init(b, 1);
    fence_mbarrier_init();
  }
  __syncthreads();
  if (clustered) cluster_sync();  // every CTA's barrier is initialised before any multicast lands

  if (threadIdx.x == 0) {
    if (job.flags & 2u) prefetch_tensormap(&desc);
    if ((job.flags & 1u) && job.mode == 0) tma_prefetch_tile_n((int)job.rank, &desc, job.coords);
    mbarrier_arrive_expect_tx(b, job.expect);
    if (job.issue) {
      const u32 dst = smem_u32(image) + job.dst_offset;
      if (job.mode == 0) {
        tma_load_tile_n((int)job.rank, dst, &desc, b, job.coords, (u16)job.mask);
      } else {
        const u16 o[3] = {(u16)job.offsets[0], (u16)job.offsets[1], (u16)job.offsets[2]};
        tma_load_im2col_n((int)job.rank, dst, &desc, b, job.coords, o, (u16)job.mask);
      }
    }
  }
  const bool ok = clustered ? mbarrier_wait_cluster(b, 0) : mbarrier_wait(b, 0);
  __syncthreads();
  u8* out = dump + (size_t)cta * image_bytes;
  for (u32 i = threadIdx.x; i < image_bytes; i += blockDim.x) out[i] = image[i];
  if (status && threadIdx.x == 0) status[cta] = ok ? STATUS_OK : STATUS_TIMEOUT;
  if (clustered) cluster_sync();  // no CTA exits while a peer's multicast may still target it
}

extern "C" __global__ void tmakit_seed_store(const __grid_constant__ TmaDesc desc, const StoreJob* __restrict__ jobs,
                                             const u8* __restrict__ images, u32 image_bytes,
                                             u32* __restrict__ status) {
  extern __shared__ __align__(1024) u8 dyn[];
  const u32 cta = cta_linear();
  const StoreJob job = jobs[cta];
  u8* image = aligned_image(dyn);
  fill_image(image, images + (size_t)cta * image_bytes, image_bytes, 0);
  fence_proxy_async_smem();  // (1) each writer fences its generic smem writes for the async proxy
  __syncthreads();           // (2) CTA barrier
  if (threadIdx.x == 0) {    // (3) one thread issues
    const u32 src = smem_u32(image) + job.src_offset;
    if (job.op >= 0) tma_reduce_n(job.op, job.mode == 1, (int)job.rank, &desc, src, job.coords);
    else if (job.mode == 0) tma_store_tile_n((int)job.rank, &desc, src, job.coords);
    else tma_store_im2col_n((int)job.rank, &desc, src, job.coords);
    bulk_commit_group();  // (4)
    bulk_wait_group<0>(); // (5) global writes complete before the kernel ends
    if (status) status[cta] = STATUS_OK;
  }
  __syncthreads();
}

// Seed 001: tile (blockIdx.x, blockIdx.y) of a 2-D tensor, loaded through `src` and stored through `dst`.
extern "C" __global__ void tmakit_seed_copy(const __grid_constant__ TmaDesc src, const __grid_constant__ TmaDesc dst,
                                            i32 box0, i32 box1, u32 tile_bytes, u32 prefetch) {
  extern __shared__ __align__(1024) u8 dyn[];
  __shared__ __align__(8) u64 bar;
  u8* tile = aligned_image(dyn);
  const u32 b = smem_u32(&bar);
  const i32 c0 = (i32)blockIdx.x * box0, c1 = (i32)blockIdx.y * box1;
  if (threadIdx.x == 0) {
    if (prefetch) {
      prefetch_tensormap(&src);
      tma_prefetch_tile<2>(&src, c0, c1);
    }
    mbarrier_init(b, 1);
    fence_mbarrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(b, tile_bytes);
    tma_load_tile<2>(smem_u32(tile), &src, b, c0, c1);
  }
  mbarrier_wait(b, 0);
  __syncthreads();
  if (threadIdx.x == 0) {
    tma_store_tile<2>(&dst, smem_u32(tile), c0, c1);
    bulk_commit_group();
    bulk_wait_group_read<0>();
    bulk_wait_group<0>();
  }
  __syncthreads();
}
