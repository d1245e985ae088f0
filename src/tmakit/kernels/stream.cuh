// stream.cuh -- a persistent, pipelined TMA load -> TMA store (or store-reduce) loop (stream.cu: copy and store-reduce).
//
// One thread per CTA drives the whole pipeline (TMA is asynchronous: a single issuing thread keeps the copy engine
// busy). Tiles are boxes of a "main" map of rank 1..5 plus, optionally, one tail box of a rank-2 {len, 1} map (the flat view's
// last partial row); out-of-bounds parts of boxes are zero-filled on load and clipped on store, so there is no tail
// kernel. Shared memory holds a ring of STAGES boxes, each completing on its own mbarrier ("full").
//
//   prologue: load tiles 0..S-1 into stages 0..S-1
//   tile k:   wait full[k % S] -> store/reduce stage k % S -> commit_group
//             -> cp.async.bulk.wait_group.read LAG  (stores up to k-LAG have read their smem)
//             -> refill stage (k-LAG) % S with tile k-LAG+S
// So S-1-LAG loads and up to 1+LAG stores are in flight per CTA.
#pragma once
#include <tmakit/all.cuh>

#ifndef TMAKIT_STREAM_LAG
#define TMAKIT_STREAM_LAG 1
#endif
#ifndef TMAKIT_STREAM_ORDER
#define TMAKIT_STREAM_ORDER 0  // 0: tile k of CTA b is b + k*grid (round robin); 1: each CTA takes a contiguous run
#endif
#ifndef TMAKIT_STREAM_HINT
#define TMAKIT_STREAM_HINT 0  // L2 evict_first cache hint (data touched once): 1 loads and (plain) stores, 2 loads, 3 stores
#endif
#ifndef TMAKIT_STREAM_PREFETCH
#define TMAKIT_STREAM_PREFETCH 0  // 1: when a tile's load is issued, also prefetch its destination box into L2
#endif
#ifndef TMAKIT_STREAM_ONE
#define TMAKIT_STREAM_ONE 0  // 1: the lean one-box CTA of stream_one (grid = tiles, one barrier, 32-bit tile math)
#endif
#ifndef TMAKIT_STREAM_FASTDIV
#define TMAKIT_STREAM_FASTDIV 1  // stream_one's coordinates: 1 multiply-shift division, 0 the div instruction sequence
#endif
#define TMAKIT_STREAM_MAX_STAGES 32

namespace tmakit_kernels {
using namespace tmakit;

struct StreamParams {
  i32 tiles[5];       // tiles per dim of the main map (innermost first)
  i32 box[5];         // main box per dim
  i32 rank;           // main map rank, 1..5
  u32 main_bytes;     // tx bytes of one main box (full box, OOB included)
  u32 tail_bytes;     // tx bytes of the tail box; 0 = no tail
  u32 stages;         // ring depth, 2..32
  u32 stage_stride;   // bytes between stages (multiple of 128)
  i32 op;             // -1 = store, 0..7 = reduce add/min/max/inc/dec/and/or/xor
  i32 tail_coord;     // dim-0 start coordinate of the tail box in the {len, 1} tail maps
  i64 main_tiles;     // product of tiles[]
  FastDiv fd[5];      // tiles[d] as multiply-shift divisors (stream_coords32)
};
static_assert(sizeof(StreamParams) == 120, "StreamParams layout (bandwidth.py mirrors it)");

__device__ __forceinline__ void stream_coords(const StreamParams& p, i64 t, i32* c) {
#pragma unroll
  for (int d = 0; d < 5; ++d) {
    if (d < p.rank) {
      i64 n = p.tiles[d];
      c[d] = static_cast<i32>(t % n) * p.box[d];
      t /= n;
    } else {
      c[d] = 0;
    }
  }
}

__device__ __forceinline__ void load_n_hint(int rank, u32 dst, const TmaDesc* d, u32 bar, const i32* c, u64 pol) {
  switch (rank) {
    case 1: tma_load_tile_hint<1>(dst, d, bar, pol, c[0]); break;
    case 2: tma_load_tile_hint<2>(dst, d, bar, pol, c[0], c[1]); break;
    case 3: tma_load_tile_hint<3>(dst, d, bar, pol, c[0], c[1], c[2]); break;
    case 4: tma_load_tile_hint<4>(dst, d, bar, pol, c[0], c[1], c[2], c[3]); break;
    default: tma_load_tile_hint<5>(dst, d, bar, pol, c[0], c[1], c[2], c[3], c[4]); break;
  }
}

__device__ __forceinline__ void store_n_hint(int rank, const TmaDesc* d, u32 src, const i32* c, u64 pol) {
  switch (rank) {
    case 1: tma_store_tile_hint<1>(d, src, pol, c[0]); break;
    case 2: tma_store_tile_hint<2>(d, src, pol, c[0], c[1]); break;
    case 3: tma_store_tile_hint<3>(d, src, pol, c[0], c[1], c[2]); break;
    case 4: tma_store_tile_hint<4>(d, src, pol, c[0], c[1], c[2], c[3]); break;
    default: tma_store_tile_hint<5>(d, src, pol, c[0], c[1], c[2], c[3], c[4]); break;
  }
}

// Issue the load of tile `t` into `dst`, completing on `bar` (and, with TMAKIT_STREAM_PREFETCH, an L2 prefetch of
// the destination box, so that a store-reduce finds its lines in L2).
__device__ __forceinline__ void stream_load(const StreamParams& p, const TmaDesc* src, const TmaDesc* tsrc,
                                            const TmaDesc* gdst, const TmaDesc* tdst, i64 t, u32 dst, u32 bar,
                                            u64 pol) {
  i32 c[5];
  const TmaDesc* d = src;
  const TmaDesc* pd = gdst;
  int rank = p.rank;
  u32 bytes = p.main_bytes;
  if (t < p.main_tiles) {
    stream_coords(p, t, c);
  } else {
    d = tsrc;
    pd = tdst;
    rank = 2;  // tail maps are rank 2 ({len, 1}): the driver refused every rank-1 tiled map we tried
    bytes = p.tail_bytes;
    c[0] = p.tail_coord;
    c[1] = c[2] = c[3] = c[4] = 0;
  }
  if (TMAKIT_STREAM_PREFETCH) tma_prefetch_tile_n(rank, pd, c);
  mbarrier_arrive_expect_tx(bar, bytes);
  if (TMAKIT_STREAM_HINT == 1 || TMAKIT_STREAM_HINT == 2) load_n_hint(rank, dst, d, bar, c, pol);
  else tma_load_tile_n(rank, dst, d, bar, c);
  (void)pd;
}

__device__ __forceinline__ void stream_store(const StreamParams& p, const TmaDesc* dst, const TmaDesc* tdst, i64 t,
                                             u32 src, u64 pol) {
  i32 c[5];
  const TmaDesc* d = dst;
  int rank = p.rank;
  if (t < p.main_tiles) {
    stream_coords(p, t, c);
  } else {
    d = tdst;
    rank = 2;  // tail maps are rank 2 ({len, 1}): the driver refused every rank-1 tiled map we tried
    c[0] = p.tail_coord;
    c[1] = c[2] = c[3] = c[4] = 0;
  }
  if (p.op < 0 && (TMAKIT_STREAM_HINT == 1 || TMAKIT_STREAM_HINT == 3)) store_n_hint(rank, d, src, c, pol);
  else if (p.op < 0) tma_store_tile_n(rank, d, src, c);
  else tma_reduce_tile_n(p.op, rank, d, src, c);
}

// Tile t's box coordinates with multiply-shift division (t < 2^31: one CTA per tile).
__device__ __forceinline__ void stream_coords32(const StreamParams& p, u32 t, i32* c) {
#pragma unroll
  for (int d = 0; d < 5; ++d) {
    if (d < p.rank) {
      const u32 q = TMAKIT_STREAM_FASTDIV ? fast_div(t, p.fd[d]) : t / static_cast<u32>(p.tiles[d]);
      c[d] = static_cast<i32>(t - q * static_cast<u32>(p.tiles[d])) * p.box[d];
      t = q;
    } else {
      c[d] = 0;
    }
  }
}

// The lean one-box CTA (TMAKIT_STREAM_ONE): CTA b moves tile b. Thread 0 initialises one barrier, loads the box,
// waits, stores it and leaves once the store has read its shared memory (the write completes before the grid
// does). No ring, no tensormap prefetch, the coordinates computed once for both maps.
__device__ __forceinline__ void stream_one(const TmaDesc* src, const TmaDesc* dst, const TmaDesc* tsrc,
                                           const TmaDesc* tdst, const StreamParams& p, u8* dyn, u64* full) {
  if (threadIdx.x != 0) return;
  const u32 t = blockIdx.x;
  const u32 base = (smem_u32(dyn) + 1023u) & ~1023u, bar = smem_u32(&full[0]);
  i32 c[5];
  const TmaDesc* ds = src;
  const TmaDesc* dd = dst;
  int rank = p.rank;
  u32 bytes = p.main_bytes;
  if ((i64)t < p.main_tiles) {
    stream_coords32(p, t, c);
  } else {  // the flat view's tail box (rank-2 {len, 1} maps)
    ds = tsrc;
    dd = tdst;
    rank = 2;
    bytes = p.tail_bytes;
    c[0] = p.tail_coord;
    c[1] = c[2] = c[3] = c[4] = 0;
  }
  mbarrier_init(bar, 1);
  fence_mbarrier_init();
  const u64 pol = TMAKIT_STREAM_HINT ? policy_evict_first() : 0ull;
  mbarrier_arrive_expect_tx(bar, bytes);
  if (TMAKIT_STREAM_HINT == 1 || TMAKIT_STREAM_HINT == 2) load_n_hint(rank, base, ds, bar, c, pol);
  else tma_load_tile_n(rank, base, ds, bar, c);
  mbarrier_wait(bar, 0);
  if (p.op < 0 && (TMAKIT_STREAM_HINT == 1 || TMAKIT_STREAM_HINT == 3)) store_n_hint(rank, dd, base, c, pol);
  else if (p.op < 0) tma_store_tile_n(rank, dd, base, c);
  else tma_reduce_tile_n(p.op, rank, dd, base, c);
  bulk_commit_group();
  bulk_wait_group_read<0>();
}

__device__ __forceinline__ void stream_run(const TmaDesc* src, const TmaDesc* dst, const TmaDesc* tsrc,
                                           const TmaDesc* tdst, const StreamParams& p, u8* dyn, u64* full) {
  if (threadIdx.x != 0) return;
  const u32 S = p.stages;
  const u32 base0 = smem_u32(dyn);
  const u32 base = (base0 + 1023u) & ~1023u;
  const i64 total = p.main_tiles + (p.tail_bytes ? 1 : 0);
#if TMAKIT_STREAM_ORDER
  const i64 per = (total + gridDim.x - 1) / gridDim.x;
  const i64 first = blockIdx.x * per, step = 1;
  if (first >= total) return;
  const i64 mine = (total - first < per) ? total - first : per;
#else
  const i64 first = blockIdx.x, step = gridDim.x;
  if (first >= total) return;
  const i64 mine = (total - first + step - 1) / step;
#endif
  const u64 pol = TMAKIT_STREAM_HINT ? policy_evict_first() : 0ull;
  prefetch_tensormap(src);
  prefetch_tensormap(dst);
  for (u32 s = 0; s < S; ++s) mbarrier_init(smem_u32(&full[s]), 1);
  fence_mbarrier_init();
  fence_proxy_async_smem();
  const i64 pro = mine < (i64)S ? mine : (i64)S;
  for (i64 k = 0; k < pro; ++k)
    stream_load(p, src, tsrc, dst, tdst, first + k * step, base + (u32)k * p.stage_stride, smem_u32(&full[k]), pol);
  u32 s = 0, phase = 0;
  for (i64 k = 0; k < mine; ++k) {
    mbarrier_wait(smem_u32(&full[s]), phase);
    stream_store(p, dst, tdst, first + k * step, base + s * p.stage_stride, pol);
    bulk_commit_group();
    const i64 k_free = k - TMAKIT_STREAM_LAG;  // its stage is free once wait_group.read LAG returns
    const i64 k_next = k_free + S;
    if (k_free >= 0 && k_next < mine) {
      bulk_wait_group_read<TMAKIT_STREAM_LAG>();
      const u32 sf = (u32)(k_free % S);
      stream_load(p, src, tsrc, dst, tdst, first + k_next * step, base + sf * p.stage_stride, smem_u32(&full[sf]),
                  pol);
    }
    if (++s == S) {
      s = 0;
      phase ^= 1;
    }
  }
  bulk_wait_group<0>();
}

}  // namespace tmakit_kernels
