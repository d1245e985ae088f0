// bandwidth_bulk.cu -- contiguous copies and load-combine-store reductions with non-tensor TMA bulk copies
// (cp.async.bulk: the same copy engine as the tensor path, linear addresses, no tensor map).
//
// The bytes [0, n16) move in tiles. A "main" tile is R pieces of Q bytes, W bytes apart (piece j of tile t starts
// at (t / (W/Q) * R + j) * W + (t % (W/Q)) * Q): with R > 1 a tile touches R places W bytes apart, like the 2-D
// flat view of copy.cu. Bytes past the last whole R*W block form "rest" tiles of R contiguous pieces of up to Q
// bytes. The last n - n16 (< 16) bytes are copied by thread 0 with plain loads/stores: no tail kernel.
//
// BK_MODE 0 (copy): one thread drives a ring of S stages, bulk load -> bulk store, refilling a stage after
//   cp.async.bulk.wait_group.read BK_LAG (as stream.cuh).
// BK_MODE 1: warp 0 lane 0 loads (src, and dst too when combining) into the ring; BK_CONSUMERS warps read each
//   stage's 16-byte chunks, combine them (BK_OP >= 0) and write them with st.global.v4; empty[s] frees a stage.
// BK_MODE 2: as 1, but consumer warp w owns pieces j = w, w + C, ... of every stage: it combines them in place
//   in shared memory, fence.proxy.async, and its lane 0 bulk-stores them (one bulk group per stage); a stage is
//   freed when every warp's store of it has read its smem (wait_group.read 1, one stage later).
// BK_MODE 3: one warp per CTA: lane 0 initialises the ring and loads into it, the whole warp combines a stage in
//   place (BK_OP >= 0) and lane 0 bulk-stores it; a stage is refilled once its store has read its smem. No
//   block-wide barrier and no empty barriers: the shortest CTA (made for one tile per CTA).
// Combining is not atomic (dst is read by a TMA load and written later): src and dst must not overlap, and no
// other kernel may write dst meanwhile -- the same contract as torch's in-place ops.
#include <tmakit/all.cuh>

using namespace tmakit;

#ifndef BK_MODE
#define BK_MODE 0
#endif
#ifndef BK_CONSUMERS
#define BK_CONSUMERS 4
#endif
#ifndef BK_LAG
#define BK_LAG 1
#endif
#ifndef BK_OP
#define BK_OP -1  // -1 copy; 0 add, 1 min, 2 max, 5 and, 6 or, 7 xor (tmakit.ops.REDUCE_OPS indices)
#endif
#ifndef BK_DT
#define BK_DT 0  // combine element type: 0 f32, 1 bf16, 2 f16, 3 s32, 4 u32, 5 s64, 6 u64
#endif
#ifndef BK_DYN
#define BK_DYN 0  // > 0 (modes 1 and 2): persistent CTAs take batches of BK_DYN tiles from a global atomic counter
#endif
#ifndef BK_BF16X2
#define BK_BF16X2 0  // 1: bf16 add with add.rn.bf16x2 (see CopyConfig.bf16x2)
#endif
#ifndef BK_HINT
#define BK_HINT 0  // L2 evict_first cache hint (as TMAKIT_STREAM_HINT): 0 none, 1 loads and stores, 2 loads, 3 stores
#endif
#ifndef BK_ORDER
#define BK_ORDER 0  // 0: tiles round-robin over the CTAs; 1: one contiguous run of tiles per CTA
#endif
#ifndef BK_MINB
#define BK_MINB 1  // __launch_bounds__ minimum resident CTAs per SM (caps the registers per thread)
#endif
#ifndef BK_T1
#define BK_T1 0  // > 0 (modes 2 and 3, one tile of one piece per CTA): the lean one-tile CTA of run_t1; 1: the
#endif           // consumer warps combine, 2: every thread of the CTA combines
#ifndef BK_T1_PIECE
#define BK_T1_PIECE 0  // > 0 (BK_T1, no end tiles): the tile size as a constant (tile t = BK_T1_PIECE bytes at t *
#endif                 // BK_T1_PIECE; only p.n16 is read before the loads)
#ifndef BK_PDL
#define BK_PDL 0  // > 0 (BK_T1, launched with programmatic stream serialization): thread 0 waits for the previous
#endif            // grid (griddepcontrol.wait) before its loads; the last BK_PDL CTAs let the next grid launch early
#define BK_MAX_STAGES 32

// This CTA's tiles: first, first + step, ... (mine of them).
__device__ __forceinline__ void tile_split(i64 n, i64& first, i64& step, i64& mine) {
  if (BK_ORDER) {
    const i64 per = (n + gridDim.x - 1) / gridDim.x;
    first = blockIdx.x * per;
    step = 1;
    mine = first < n ? (n - first < per ? n - first : per) : 0;
  } else {
    first = blockIdx.x;
    step = gridDim.x;
    mine = first < n ? (n - first + step - 1) / step : 0;
  }
}

struct BulkParams {
  i64 n16;           // bytes moved by bulk copies (a multiple of 16)
  i64 main_tiles;    // tiles of the R x Q-every-W pattern
  i64 rest0;         // first byte of the rest region (= main_tiles / cols * R * W)
  i64 tiles;         // main + rest tiles
  i64 row;           // W
  u32 piece;         // Q (a multiple of 16)
  u32 pieces;        // R
  u32 cols;          // W / Q
  u32 stages;        // ring depth
  u32 stage_stride;  // bytes per stage and operand (a multiple of 1024)
  u32 tail;          // n - n16 (< 16), copied by thread 0
  u64* counter;      // BK_DYN: {next tile, CTAs done}, zero at launch; the last CTA to finish zeroes it again
};

// PTX: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], size, [bar];
__device__ __forceinline__ void bulk_load(u32 dst, const void* src, u32 size, u32 bar) {
  if (BK_HINT == 1 || BK_HINT == 2) {  // loads
    // PTX: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [dst], [src], size, [bar], pol;
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;"
                 ::"r"(dst), "l"(src), "r"(size), "r"(bar), "l"(policy_evict_first()) : "memory");
    return;
  }
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               ::"r"(dst), "l"(src), "r"(size), "r"(bar) : "memory");
}

// PTX: cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size;
__device__ __forceinline__ void bulk_store(void* dst, u32 src, u32 size) {
  if (BK_HINT == 1 || BK_HINT == 3) {  // stores
    // PTX: cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [dst], [src], size, pol;
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%0], [%1], %2, %3;"
                 ::"l"(dst), "r"(src), "r"(size), "l"(policy_evict_first()) : "memory");
    return;
  }
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(src), "r"(size)
               : "memory");
}

// Byte offset and length of piece j of tile t (length 0: past the end).
__device__ __forceinline__ void piece_of(const BulkParams& p, i64 t, u32 j, i64& off, u32& len) {
  if (p.pieces == 1) {  // R = 1: main and rest tiles alike are the piece at t * Q (no division)
    off = t * (i64)p.piece;
    const i64 left = p.n16 - off;
    len = left <= 0 ? 0u : (left < (i64)p.piece ? (u32)left : p.piece);
    return;
  }
  if (t < p.main_tiles) {
    const i64 rb = t / p.cols, col = t % p.cols;
    off = (rb * p.pieces + j) * p.row + col * (i64)p.piece;
    len = p.piece;
  } else {
    off = p.rest0 + ((t - p.main_tiles) * p.pieces + j) * (i64)p.piece;
    const i64 left = p.n16 - off;
    len = left <= 0 ? 0u : (left < (i64)p.piece ? (u32)left : p.piece);
  }
}

__device__ __forceinline__ u32 tile_bytes(const BulkParams& p, i64 t) {
  if (p.pieces == 1) {
    i64 off;
    u32 len;
    piece_of(p, t, 0, off, len);
    return len;
  }
  if (t < p.main_tiles) return p.piece * p.pieces;
  const i64 off = p.rest0 + (t - p.main_tiles) * p.pieces * (i64)p.piece;
  const i64 left = p.n16 - off, full = (i64)p.pieces * p.piece;
  return (u32)(left < full ? left : full);
}

__device__ __forceinline__ void load_tile(const BulkParams& p, const u8* g, i64 t, u32 dst, u32 bar) {
  for (u32 j = 0; j < p.pieces; ++j) {
    i64 off;
    u32 len;
    piece_of(p, t, j, off, len);
    if (len) bulk_load(dst + j * p.piece, g + off, len, bar);
  }
}


// ---------------------------------------------------------------------------------------------------------------
// combine 16 bytes (4 words) of dst with 16 bytes of src: d = d (op) s

__device__ __forceinline__ float bf_lo(u32 w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float bf_hi(u32 w) { return __uint_as_float(w & 0xffff0000u); }
// PTX: cvt.rn.bf16x2.f32 d, hi, lo;
__device__ __forceinline__ u32 bf_pack(float lo, float hi) {
  u32 d;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
}
// PTX: cvt.f32.f16 d, a;
__device__ __forceinline__ float h_to_f(u32 h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"((u16)h));
  return f;
}
// PTX: cvt.rn.f16x2.f32 d, hi, lo;
__device__ __forceinline__ u32 h_pack(float lo, float hi) {
  u32 d;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
}
// PTX: min.NaN.f32 / max.NaN.f32 (NaN propagates, as torch.minimum / torch.maximum)
__device__ __forceinline__ float fop(float a, float b) {
#if BK_OP == 0
  return a + b;
#elif BK_OP == 1
  float d;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
  return d;
#else
  float d;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
  return d;
#endif
}
template <typename T> __device__ __forceinline__ T iop(T a, T b) {
#if BK_OP == 0
  return a + b;
#elif BK_OP == 1
  return a < b ? a : b;
#else
  return a > b ? a : b;
#endif
}

__device__ __forceinline__ void combine16(u32 (&d)[4], const u32 (&s)[4]) {
#if BK_OP == 5 || BK_OP == 6 || BK_OP == 7
#pragma unroll
  for (int i = 0; i < 4; ++i) d[i] = BK_OP == 5 ? (d[i] & s[i]) : BK_OP == 6 ? (d[i] | s[i]) : (d[i] ^ s[i]);
#elif BK_DT == 0
#pragma unroll
  for (int i = 0; i < 4; ++i) d[i] = __float_as_uint(fop(__uint_as_float(d[i]), __uint_as_float(s[i])));
#elif BK_DT == 1 && BK_OP == 0 && BK_BF16X2
#pragma unroll
  for (int i = 0; i < 4; ++i) asm("add.rn.bf16x2 %0, %0, %1;" : "+r"(d[i]) : "r"(s[i]));  // PTX: add.rn.bf16x2
#elif BK_DT == 1
#pragma unroll
  for (int i = 0; i < 4; ++i) d[i] = bf_pack(fop(bf_lo(d[i]), bf_lo(s[i])), fop(bf_hi(d[i]), bf_hi(s[i])));
#elif BK_DT == 2
#pragma unroll
  for (int i = 0; i < 4; ++i)
    d[i] = h_pack(fop(h_to_f(d[i] & 0xffffu), h_to_f(s[i] & 0xffffu)), fop(h_to_f(d[i] >> 16), h_to_f(s[i] >> 16)));
#elif BK_DT == 3 || BK_DT == 4
#pragma unroll
  for (int i = 0; i < 4; ++i) d[i] = BK_DT == 3 ? (u32)iop<i32>((i32)d[i], (i32)s[i]) : iop<u32>(d[i], s[i]);
#else
#pragma unroll
  for (int i = 0; i < 4; i += 2) {
    const u64 a = ((u64)d[i + 1] << 32) | d[i], b = ((u64)s[i + 1] << 32) | s[i];
    const u64 r = BK_DT == 5 ? (u64)iop<i64>((i64)a, (i64)b) : iop<u64>(a, b);
    d[i] = (u32)r;
    d[i + 1] = (u32)(r >> 32);
  }
#endif
}

// PTX: st.global.v4.u32
__device__ __forceinline__ void stg16(void* g, const u32 (&w)[4]) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(g), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3])
               : "memory");
}

// Combine `len` bytes at offset `at` of a stage in place (dst operand at da, src at sa): lane l takes 16-byte words
// l, l + 32, ... (the warp-owned pieces of the combine kernels).
__device__ __forceinline__ void combine_piece(u32 sa, u32 da, u32 at, u32 len, u32 lane) {
  for (u32 b = lane * 16; b < len; b += 32 * 16) {
    u32 a[4], d[4];
    lds16(sa + at + b, a);
    lds16(da + at + b, d);
    combine16(d, a);
    sts16(da + at + b, d);
  }
}

// The last p.tail (< 16) bytes: thread 0 of CTA 0, byte by byte (combined when BK_OP >= 0, zero-padded words;
// unrolled with constant indices so the words stay in registers).
__device__ __forceinline__ void tail_bytes(const u8* src, u8* dst, const BulkParams& p) {
  if (blockIdx.x != 0 || threadIdx.x != 0 || p.tail == 0) return;
  if constexpr (BK_PDL > 0) griddep_wait();  // launched early: the previous grid's writes first
  u32 a[4] = {0, 0, 0, 0}, d[4] = {0, 0, 0, 0};
#pragma unroll
  for (int i = 0; i < 16; ++i)
    if ((u32)i < p.tail) {
      a[i / 4] |= (u32)src[p.n16 + i] << (8 * (i % 4));
      d[i / 4] |= (u32)dst[p.n16 + i] << (8 * (i % 4));
    }
#if BK_OP >= 0
  combine16(d, a);
#else
#pragma unroll
  for (int i = 0; i < 4; ++i) d[i] = a[i];
#endif
#pragma unroll
  for (int i = 0; i < 16; ++i)
    if ((u32)i < p.tail) dst[p.n16 + i] = (u8)(d[i / 4] >> (8 * (i % 4)));
}

// ---------------------------------------------------------------------------------------------------------------

__device__ __forceinline__ void run_single(const u8* src, u8* dst, const BulkParams& p, u32 base, u64* full) {
  if (threadIdx.x != 0) return;
  const u32 S = p.stages;
  i64 first, step, mine;
  tile_split(p.tiles, first, step, mine);
  if (mine <= 0) return;
  for (u32 s = 0; s < S; ++s) mbarrier_init(smem_u32(&full[s]), 1);
  fence_mbarrier_init();
  const i64 pro = mine < (i64)S ? mine : (i64)S;
  for (i64 k = 0; k < pro; ++k) {
    const i64 t = first + k * step;
    mbarrier_arrive_expect_tx(smem_u32(&full[k]), tile_bytes(p, t));
    load_tile(p, src, t, base + (u32)k * p.stage_stride, smem_u32(&full[k]));
  }
  u32 s = 0, phase = 0;
  for (i64 k = 0; k < mine; ++k) {
    const i64 t = first + k * step;
    mbarrier_wait(smem_u32(&full[s]), phase);
    for (u32 j = 0; j < p.pieces; ++j) {
      i64 off;
      u32 len;
      piece_of(p, t, j, off, len);
      if (len) bulk_store(dst + off, base + s * p.stage_stride + j * p.piece, len);
    }
    bulk_commit_group();
    const i64 k_free = k - BK_LAG, k_next = k_free + S;
    if (k_free >= 0 && k_next < mine) {
      bulk_wait_group_read<BK_LAG>();
      const u32 sf = (u32)(k_free % S);
      const i64 tn = first + k_next * step;
      mbarrier_arrive_expect_tx(smem_u32(&full[sf]), tile_bytes(p, tn));
      load_tile(p, src, tn, base + sf * p.stage_stride, smem_u32(&full[sf]));
    }
    if (++s == S) {
      s = 0;
      phase ^= 1;
    }
  }
  bulk_wait_group<0>();  // the CTA's last bulk stores are written
}

__device__ __forceinline__ void run_consumers(const u8* src, u8* dst, const BulkParams& p, u32 base, u64* full,
                                              u64* empty) {
  constexpr bool COMBINE = BK_OP >= 0;
  __shared__ i64 stage_tile[BK_DYN ? BK_MAX_STAGES : 1];  // BK_DYN: the tile of each stage (-1: stop)
  const u32 S = p.stages, tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const u32 opnd = S * p.stage_stride;  // dst operand ring follows the src ring
  if (tid == 0) {
    for (u32 s = 0; s < S; ++s) {
      mbarrier_init(smem_u32(&full[s]), 1);
      mbarrier_init(smem_u32(&empty[s]), BK_CONSUMERS);
    }
    fence_mbarrier_init();
  }
  __syncthreads();
  i64 first, step, mine;
  tile_split(p.tiles, first, step, mine);
  if (warp == 0) {
    if (lane != 0) return;
    u32 s = 0, phase = 0;
    i64 grab = 0, grab_end = 0;  // BK_DYN: the current batch of BK_DYN tiles taken from the counter
    for (i64 k = 0; BK_DYN || k < mine; ++k) {
      i64 t = first + k * step;
      if (BK_DYN) {
        if (grab == grab_end) {
          grab = (i64)atomicAdd((unsigned long long*)p.counter, (unsigned long long)BK_DYN);
          grab_end = grab + BK_DYN;
        }
        t = grab++;
      }
      mbarrier_wait(smem_u32(&empty[s]), phase ^ 1);
      if (BK_DYN) {
        if (t >= p.tiles) {  // no more tiles: a stage with tile -1 tells the consumers to stop
          stage_tile[s] = -1;
          mbarrier_arrive(smem_u32(&full[s]));
          break;
        }
        stage_tile[s] = t;  // published to the consumers by the full barrier's completion
      }
      const u32 bar = smem_u32(&full[s]);
      mbarrier_arrive_expect_tx(bar, tile_bytes(p, t) * (COMBINE ? 2u : 1u));
      load_tile(p, src, t, base + s * p.stage_stride, bar);
      if (COMBINE) load_tile(p, dst, t, base + opnd + s * p.stage_stride, bar);
      if (++s == S) {
        s = 0;
        phase ^= 1;
      }
    }
    if (BK_DYN) {  // the last CTA done zeroes the counter for the next launch (every CTA has stopped taking tiles)
      if (atomicAdd((unsigned long long*)p.counter + 1, 1ull) == (unsigned long long)gridDim.x - 1) {
        atomicExch((unsigned long long*)p.counter, 0ull);
        atomicExch((unsigned long long*)p.counter + 1, 0ull);
      }
    }
    return;
  }
  const u32 cw = warp - 1;
  u32 s = 0, phase = 0, prev = 0;
  (void)prev;
  for (i64 k = 0; BK_DYN || k < mine; ++k) {
    mbarrier_wait(smem_u32(&full[s]), phase);
    const i64 t = BK_DYN ? stage_tile[s] : first + k * step;
    if (BK_DYN && t < 0) break;
    const u32 sa = base + s * p.stage_stride, da = sa + opnd;
#if BK_MODE == 1
    // all chunks of the stage over all consumer threads; st.global.v4 straight from registers
    const u32 cpp = p.piece >> 4;  // chunks per piece
    const u32 nch = cpp * p.pieces;
    for (u32 c = cw * 32 + lane; c < nch; c += BK_CONSUMERS * 32) {
      const u32 j = c / cpp, w = c - j * cpp;
      i64 off;
      u32 len;
      piece_of(p, t, j, off, len);
      if (w * 16 >= len) continue;
      u32 a[4];
      lds16(sa + c * 16, a);
      if (COMBINE) {
        u32 d[4];
        lds16(da + c * 16, d);
        combine16(d, a);
        stg16(dst + off + w * 16, d);
      } else {
        stg16(dst + off + w * 16, a);
      }
    }
    __syncwarp();
    if (lane == 0) mbarrier_arrive(smem_u32(&empty[s]));
#else
    // warp-owned pieces: combine in place in the dst operand, then this warp's lane 0 bulk-stores them
    const u32 out = COMBINE ? da : sa;
    for (u32 j = cw; j < p.pieces; j += BK_CONSUMERS) {
      i64 off;
      u32 len;
      piece_of(p, t, j, off, len);
      if (COMBINE) combine_piece(sa, da, j * p.piece, len, lane);
      fence_proxy_async_smem();
      __syncwarp();
      if (lane == 0 && len) bulk_store(dst + off, out + j * p.piece, len);
    }
    if (lane == 0) {
      bulk_commit_group();
      if (k > 0) {
        bulk_wait_group_read<1>();  // this warp's store of the previous stage has read its smem
        mbarrier_arrive(smem_u32(&empty[prev]));
      }
    }
    prev = s;
#endif
    if (++s == S) {
      s = 0;
      phase ^= 1;
    }
  }
#if BK_MODE == 2
  if (lane == 0) bulk_wait_group<0>();  // the CTA's last bulk stores are written
#endif
}

// Load tile t into stage s (src, and dst after it when combining).
__device__ __forceinline__ void load_stage(const u8* src, const u8* dst, const BulkParams& p, i64 t, u32 sa,
                                           u32 opnd, u32 bar) {
  constexpr bool COMBINE = BK_OP >= 0;
  mbarrier_arrive_expect_tx(bar, tile_bytes(p, t) * (COMBINE ? 2u : 1u));
  load_tile(p, src, t, sa, bar);
  if (COMBINE) load_tile(p, dst, t, sa + opnd, bar);
}

__device__ __forceinline__ void run_warp(const u8* src, u8* dst, const BulkParams& p, u32 base, u64* full) {
  constexpr bool COMBINE = BK_OP >= 0;
  const u32 S = p.stages, lane = threadIdx.x & 31;
  const u32 opnd = S * p.stage_stride;  // dst operand ring follows the src ring
  i64 first, step, mine;
  tile_split(p.tiles, first, step, mine);
  if (mine <= 0) return;
  if (lane == 0) {
    for (u32 s = 0; s < S; ++s) mbarrier_init(smem_u32(&full[s]), 1);
    fence_mbarrier_init();
    const i64 pro = mine < (i64)S ? mine : (i64)S;
    for (i64 k = 0; k < pro; ++k)
      load_stage(src, dst, p, first + k * step, base + (u32)k * p.stage_stride, opnd, smem_u32(&full[k]));
  }
  __syncwarp();
  u32 s = 0, phase = 0;
  for (i64 k = 0; k < mine; ++k) {
    const i64 t = first + k * step;
    const u32 sa = base + s * p.stage_stride, da = sa + opnd;
    mbarrier_wait(smem_u32(&full[s]), phase);
    if (COMBINE) {
      for (u32 j = 0; j < p.pieces; ++j) {
        i64 off;
        u32 len;
        piece_of(p, t, j, off, len);
        combine_piece(sa, da, j * p.piece, len, lane);
      }
      fence_proxy_async_smem();
      __syncwarp();
    }
    if (lane == 0) {
      const u32 out = COMBINE ? da : sa;
      for (u32 j = 0; j < p.pieces; ++j) {
        i64 off;
        u32 len;
        piece_of(p, t, j, off, len);
        if (len) bulk_store(dst + off, out + j * p.piece, len);
      }
      bulk_commit_group();
      const i64 kn = k + S;
      if (kn < mine) {  // refill this stage once its store has read it
        bulk_wait_group_read<0>();
        load_stage(src, dst, p, first + kn * step, sa, opnd, smem_u32(&full[s]));
      }
    }
    if (++s == S) {
      s = 0;
      phase ^= 1;
    }
  }
  if (lane == 0) bulk_wait_group<0>();  // the CTA's last bulk stores are written
}

// Tile t of the lean one-tile layout: its byte offset and length (0: past the end). Tiles t < p.main_tiles are
// p.piece bytes at t * p.piece; later ones ("end tiles", CopyConfig.end_piece) are p.row (<= p.piece) bytes from
// p.rest0 on: smaller CTAs for the last waves, a shorter drain.
__device__ __forceinline__ u32 t1_tile(const BulkParams& p, i64 t, i64& off) {
  if constexpr (BK_T1_PIECE > 0) {
    off = t * BK_T1_PIECE;
    const i64 left = p.n16 - off;
    return left <= 0 ? 0u : (u32)(left < BK_T1_PIECE ? left : BK_T1_PIECE);
  }
  const bool big = t < p.main_tiles;
  off = big ? t * (i64)p.piece : p.rest0 + (t - p.main_tiles) * p.row;
  const i64 left = p.n16 - off, cap = big ? (i64)p.piece : p.row;
  return left <= 0 ? 0u : (u32)(left < cap ? left : cap);
}

// One tile (one piece) per CTA, tile = blockIdx.x (BK_T1 > 0; the host launches one CTA per tile and may launch
// more: those have nothing to do). Thread 0 initialises the one full barrier and issues both loads before any block
// barrier: no empty barriers, no tile split (no division), no loop. The combining threads (the consumer warps, or
// every thread with BK_T1 == 2) then combine in place and thread `lead` bulk-stores the tile.
__device__ __forceinline__ void run_t1(const u8* src, u8* dst, const BulkParams& p, u32 base, u64* full) {
  constexpr bool COMBINE = BK_OP >= 0;
  const i64 t = blockIdx.x;
  i64 off;
  const u32 len = t1_tile(p, t, off);
  if (len == 0) return;
  const u32 tid = threadIdx.x, sa = base, da = base + p.stage_stride, bar = smem_u32(&full[0]);
  if (tid == 0) {
    mbarrier_init(bar, 1);
    fence_mbarrier_init();
    if constexpr (BK_PDL > 0) {
      if (blockIdx.x + BK_PDL >= gridDim.x) griddep_launch_dependents();
      griddep_wait();
    }
    mbarrier_arrive_expect_tx(bar, len * (COMBINE ? 2u : 1u));
    bulk_load(sa, src + off, len, bar);
    if (COMBINE) bulk_load(da, dst + off, len, bar);
  }
  constexpr bool ONE_WARP = BK_MODE == 3;
  if (ONE_WARP)
    __syncwarp();
  else
    __syncthreads();
  constexpr u32 c0 = (BK_T1 == 1 && !ONE_WARP) ? 32u : 0u;  // first combining thread
  if constexpr (c0 > 0) {
    if (tid < c0) return;
  }
  const u32 ct = tid - c0, nt = blockDim.x - c0;
  mbarrier_wait(bar, 0);
  if (COMBINE) {
#pragma unroll 4
    for (u32 b = ct * 16; b < len; b += nt * 16) {
      u32 a[4], d[4];
      lds16(sa + b, a);
      lds16(da + b, d);
      combine16(d, a);
      sts16(da + b, d);
    }
    fence_proxy_async_smem();
  }
  if (ONE_WARP || nt == 32)
    __syncwarp();
  else  // the combining threads only (warp 0 may have left): named barrier 1
    asm volatile("bar.sync 1, %0;" ::"r"(nt) : "memory");  // PTX: bar.sync a, b;
  if (ct == 0) {
    bulk_store(dst + off, COMBINE ? da : sa, len);
    bulk_commit_group();
    bulk_wait_group<0>();  // the CTA's last bulk stores are written
  }
}

extern "C" __global__ void __launch_bounds__(BK_MODE == 0 || BK_MODE == 3 ? 32 : 32 * (BK_CONSUMERS + 1), BK_MINB)
tmakit_bulk(const u8* __restrict__ src, u8* __restrict__ dst, const BulkParams p) {
  extern __shared__ __align__(1024) u8 dyn[];
  __shared__ __align__(8) u64 full[BK_MAX_STAGES];
  __shared__ __align__(8) u64 empty[BK_MAX_STAGES];
  const u32 base = (smem_u32(dyn) + 1023u) & ~1023u;
  tail_bytes(src, dst, p);
#if BK_T1 > 0 && (BK_MODE == 2 || BK_MODE == 3)
  (void)empty;
  run_t1(src, dst, p, base, full);
#elif BK_MODE == 0
  (void)empty;
  run_single(src, dst, p, base, full);
#elif BK_MODE == 3
  (void)empty;
  run_warp(src, dst, p, base, full);
#else
  run_consumers(src, dst, p, base, full, empty);
#endif
}
