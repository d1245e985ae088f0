// transpose.cu -- tmakit.ops.transpose / permute when the innermost (unit-stride) dimension changes.
//
// Maps (built by tmakit/kernels/bandwidth.py), both SWIZZLE_128B, rank R = 2..5:
//   load  map over the input,  dims (p, q, rest...): p = the input's unit-stride dim, box (T, KQ*T, 1, ...)
//   store map over the output, dims (q, p, rest...): q = the output's unit-stride dim, box (T, T, 1, ...)
// with T = 128 / sizeof(elem), so a box row is exactly one 128-byte swizzle span. One load brings KQ slabs of
// T x T elements; consumers transpose each slab into its own 128B-swizzled output image and one thread stores it.
//
// Bank conflicts: lane = row r of the input slab, all lanes read the same logical 16-byte chunk; under SW128 the
// physical chunk is chunk ^ (r & 7), so every 8-lane phase of the 16-byte loads hits 8 different chunks. The writes
// (element k of the chunk goes to output row j = chunk*EPC + k, column r) land in chunk (r*E/16) ^ (j & 7): distinct
// words for distinct r, so the scalar stores are conflict-free too (lanes sharing a word write different bytes).
//
// Warp 0 (one lane) is the producer: a ring of S input stages with full/empty mbarriers. Warps 1..TP_CONSUMERS
// consume; the
// output images form a ring of NO buffers, recycled with cp.async.bulk.wait_group.read NO-2 before the named barrier.
#include <tmakit/all.cuh>

using namespace tmakit;

#define TP_MAX_STAGES 16
#ifndef TP_CONSUMERS
#define TP_CONSUMERS 4
#endif
#ifndef TP_NO
#define TP_NO 3
#endif

struct TransposeParams {
  i32 tiles[5];      // tiles per dim of the load map: ceil(P/T), ceil(Q/(KQ*T)), rest dims
  i32 qdim;          // Q (extent of the output's inner dim), to skip slabs that start past the end
  i32 rank;          // 2..5
  u32 stages;        // input ring depth
  u32 kq;            // slabs per load box
  i32 group;         // > 0: tiles run in column groups of this many p-tiles (see tile_coords); 0: p-tiles fastest
  i64 ntiles;
  u64* counter;      // TP_DYN: {next tile, CTAs done}, zero at launch; the last CTA to finish zeroes it again
  FastDiv fd[9];     // divisors of tile_coords_fast: tiles[0..4], tiles[0] * tiles[1], group * tiles[1], group,
                     // tiles[0] % group (the last column group's width; group when that is 0)
};
static_assert(sizeof(TransposeParams) == 128, "TransposeParams layout (bandwidth.py mirrors it)");

template <int E> struct ElemT;
template <> struct ElemT<1> { typedef u8 T; };
template <> struct ElemT<2> { typedef u16 T; };
template <> struct ElemT<4> { typedef u32 T; };
template <> struct ElemT<8> { typedef u64 T; };

__device__ __forceinline__ void named_sync(u32 id, u32 n) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory"); }

// Tile t -> coordinates (p-tile, q-tile, rest...). group 0: p-tiles fastest. group G > 0: within each (p, q) plane
// the tiles go in column groups of G p-tiles, q-tiles next, so the tiles in flight at once (consecutive t) form a
// G x (n/G) block: the loads read G*128-byte runs of the input rows and the stores write (n/G)*KQ*128-byte runs of
// the output rows, instead of one 128-byte slab column per output row when p-tiles run fastest.
template <typename I>
__device__ __forceinline__ void tile_coords_t(const TransposeParams& p, I t, i32* c) {
  int d0 = 0;
  if (p.group > 0) {
    const I n0 = (I)p.tiles[0], n1 = (I)p.tiles[1], plane = n0 * n1;
    const I u = t % plane;
    t /= plane;
    const I G = (I)p.group, g = u / (G * n1), local = u - g * G * n1;
    const I w = G < n0 - g * G ? G : n0 - g * G;
    c[0] = static_cast<i32>(g * G + local % w);
    c[1] = static_cast<i32>(local / w);
    d0 = 2;
  }
#pragma unroll
  for (int d = 0; d < 5; ++d) {
    if (d < d0) continue;
    if (d < p.rank) {
      const I n = (I)p.tiles[d];
      c[d] = static_cast<i32>(t % n);
      t /= n;
    } else {
      c[d] = 0;
    }
  }
}

#ifndef TP_DYN
#define TP_DYN 0  // 1: persistent CTAs take tiles from a global atomic counter (dynamic balance), modes 0 and 2
#endif

#ifndef TP_ORDER
#define TP_ORDER 0  // 0: tiles round-robin over the CTAs; 1: one contiguous run per CTA (with grid_mult > 1)
#endif

#ifndef TP_COORDS
#define TP_COORDS 2  // 0: 64-bit tile math, store leader recomputes; 1: 32-bit division where it fits; 2: 32-bit
#endif                // multiply-shift division (fastdiv.cuh), and (persistent) published by the producer

// tile_coords_t for t < 2^31 with multiply-shift division (tmakit/fastdiv.cuh): the same coordinates, no div.
__device__ __forceinline__ void tile_coords_fast(const TransposeParams& p, u32 t, i32* c) {
  int d0 = 0;
  if (p.group > 0) {
    const u32 n0 = (u32)p.tiles[0], n1 = (u32)p.tiles[1], G = (u32)p.group;
    const u32 q = fast_div(t, p.fd[5]), u = t - q * (n0 * n1);
    t = q;
    const u32 g = fast_div(u, p.fd[6]), local = u - g * G * n1;
    const u32 w = G < n0 - g * G ? G : n0 - g * G;
    const u32 lq = fast_div(local, w == G ? p.fd[7] : p.fd[8]);
    c[0] = static_cast<i32>(g * G + (local - lq * w));
    c[1] = static_cast<i32>(lq);
    d0 = 2;
  }
#pragma unroll
  for (int d = 0; d < 5; ++d) {
    if (d < d0) continue;
    if (d < p.rank) {
      const u32 q = fast_div(t, p.fd[d]);
      c[d] = static_cast<i32>(t - q * (u32)p.tiles[d]);
      t = q;
    } else {
      c[d] = 0;
    }
  }
}

// 32-bit division when the tile count allows (a 64-bit one is a long software sequence).
__device__ __forceinline__ void tile_coords(const TransposeParams& p, i64 t, i32* c) {
  if (TP_COORDS >= 2 && p.ntiles < (i64)0x7fffffff) tile_coords_fast(p, (u32)t, c);
  else if (TP_COORDS == 1 && p.ntiles < (i64)0x7fffffff) tile_coords_t<u32>(p, (u32)t, c);
  else tile_coords_t<i64>(p, t, c);
}

#ifndef TP_BATCH
#define TP_BATCH 4  // 16-byte chunks each lane loads before it stores any (independent smem loads in flight)
#endif

// Element k of a loaded 16-byte chunk (4 words) as the element type.
template <int E>
__device__ __forceinline__ typename ElemT<E>::T chunk_elem(const u32 (&w)[4], int k) {
  typedef typename ElemT<E>::T Elem;
  if (E == 8) return (Elem)(((u64)w[2 * k + 1] << 32) | w[2 * k]);
  return (Elem)(w[(k * E) / 4] >> (8 * ((k * E) % 4)));
}

template <int E>
__device__ __forceinline__ void store_elem(u32 o, typename ElemT<E>::T v) {
  if (E == 1) asm volatile("st.shared.u8 [%0], %1;" ::"r"(o), "r"((u32)v) : "memory");
  else if (E == 2) asm volatile("st.shared.u16 [%0], %1;" ::"r"(o), "h"((u16)v) : "memory");
  else if (E == 4) asm volatile("st.shared.u32 [%0], %1;" ::"r"(o), "r"((u32)v) : "memory");
  else asm volatile("st.shared.u64 [%0], %1;" ::"r"(o), "l"((u64)v) : "memory");
}

// Transpose the `kq` slabs of one input stage into `kq` output images. Work items are (slab, row group, chunk); this
// warp takes items warp, warp + C, ... in batches of TP_BATCH: all loads of a batch, then all of its stores.
#ifndef TP_XPOSE
#define TP_XPOSE 0  // smem transposition: 0 lane = row, scalar stores; 1 (2-byte) packed u32 stores of row pairs;
#endif              // 2 (2-byte) ldmatrix + stmatrix.trans; 9 diagnostic: no transposition (wrong output)

// 16-bit slabs (64 x 64) through ldmatrix / stmatrix.trans: item (row group g of 32 rows, chunk c) = 4 blocks of
// 8 x 8 (input rows 32g + 8i .. +7, columns 8c .. 8c+7). Lane l addresses input row 32g + l (block i = l / 8), chunk
// c: 8 rows per block at chunks c ^ (r & 7), conflict-free. stmatrix.trans writes block i transposed to output rows
// 8c + m (m = l % 8, addressed by lane 8i + m) at chunk 4g + i, physical (4g + i) ^ m: conflict-free. One ldmatrix.x4
// and one stmatrix.x4 move 512 bytes (the scalar path needs one ld.v4 and 8 st.u16 per 512 bytes).
__device__ __forceinline__ void transpose_stage_mx(u32 in_img, u32 out_img, u32 kq, u32 warp, u32 lane) {
  constexpr u32 SLAB = 64u * 128u;
  const int total = (int)kq * 16;
  for (int base = (int)warp; base < total; base += TP_CONSUMERS * TP_BATCH) {
    u32 w[TP_BATCH][4];
#pragma unroll
    for (int b = 0; b < TP_BATCH; ++b) {
      const int item = base + b * TP_CONSUMERS;
      if (item < total) {
        const u32 slab = (u32)item >> 4, g = ((u32)item >> 3) & 1u, c = (u32)item & 7u, r = g * 32u + lane;
        const u32 a = in_img + slab * SLAB + r * 128u + ((c ^ (r & 7u)) << 4);
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(w[b][0]), "=r"(w[b][1]), "=r"(w[b][2]), "=r"(w[b][3]) : "r"(a));
      }
    }
#pragma unroll
    for (int b = 0; b < TP_BATCH; ++b) {
      const int item = base + b * TP_CONSUMERS;
      if (item < total) {
        const u32 slab = (u32)item >> 4, g = ((u32)item >> 3) & 1u, c = (u32)item & 7u, m = lane & 7u;
        const u32 a = out_img + slab * SLAB + (c * 8u + m) * 128u + (((g * 4u + (lane >> 3)) ^ m) << 4);
        asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};"
                     ::"r"(a), "r"(w[b][0]), "r"(w[b][1]), "r"(w[b][2]), "r"(w[b][3]) : "memory");
      }
    }
  }
}

// 16-bit slabs with packed 4-byte stores: lane l owns input rows 2l, 2l+1 (all 64 rows per warp) and packs their
// element k of chunk c_l into one word of output row 8 c_l + k. c_l = c ^ ((l >> 2) & 1) keeps the 16-byte loads
// conflict-free (row 2l sits at chunk c_l ^ (2l & 7)); the stores of one instruction fill 32 distinct words of the
// output rows (word l of row j sits at ((l >> 2) ^ (j & 7)) * 4 + (l & 3), independent of c_l).
__device__ __forceinline__ void transpose_stage_pk(u32 in_img, u32 out_img, u32 kq, u32 warp, u32 lane) {
  constexpr u32 SLAB = 64u * 128u;
  const int total = (int)kq * 8;
  for (int base = (int)warp; base < total; base += TP_CONSUMERS * TP_BATCH) {
    u32 w0[TP_BATCH][4], w1[TP_BATCH][4];
#pragma unroll
    for (int b = 0; b < TP_BATCH; ++b) {
      const int item = base + b * TP_CONSUMERS;
      if (item < total) {
        const u32 slab = (u32)item >> 3, c = ((u32)item & 7u) ^ ((lane >> 2) & 1u), r = 2u * lane;
        const u32 a0 = in_img + slab * SLAB + r * 128u + ((c ^ (r & 7u)) << 4);
        const u32 a1 = in_img + slab * SLAB + (r + 1u) * 128u + ((c ^ ((r + 1u) & 7u)) << 4);
        asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(w0[b][0]), "=r"(w0[b][1]), "=r"(w0[b][2]), "=r"(w0[b][3]) : "r"(a0));
        asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(w1[b][0]), "=r"(w1[b][1]), "=r"(w1[b][2]), "=r"(w1[b][3]) : "r"(a1));
      }
    }
#pragma unroll
    for (int b = 0; b < TP_BATCH; ++b) {
      const int item = base + b * TP_CONSUMERS;
      if (item < total) {
        const u32 slab = (u32)item >> 3, c = ((u32)item & 7u) ^ ((lane >> 2) & 1u);
        const u32 img = out_img + slab * SLAB, wl = ((lane >> 2) << 4) | ((lane & 3u) << 2);
#pragma unroll
        for (int k = 0; k < 8; ++k) {
          const u32 j = c * 8u + (u32)k;
          const u32 v = __byte_perm(w0[b][k >> 1], w1[b][k >> 1], (k & 1) ? 0x7632 : 0x5410);
          asm volatile("st.shared.u32 [%0], %1;" ::"r"(img + j * 128u + (wl ^ ((u32)k << 4))), "r"(v) : "memory");
        }
      }
    }
  }
}

#ifndef TP_INPLACE
#define TP_INPLACE 0  // 1 (TP_LEAN, 2-byte, TP_XPOSE 2, kq <= 2): transpose in place, one image per CTA
#endif

// transpose_stage_mx in place: every warp holds all of its 8x8 blocks in registers (kq <= 2: at most 32 / C items
// of 4 words), a block barrier, then the transposed blocks go back into the same image.
__device__ __forceinline__ void transpose_stage_mx_inplace(u32 img, u32 kq, u32 warp, u32 lane) {
  constexpr u32 SLAB = 64u * 128u;
  constexpr int PER = (32 + TP_CONSUMERS - 1) / TP_CONSUMERS;
  const int total = (int)kq * 16;
  u32 w[PER][4];
#pragma unroll
  for (int b = 0; b < PER; ++b) {
    const int item = (int)warp + b * TP_CONSUMERS;
    if (item < total) {
      const u32 slab = (u32)item >> 4, g = ((u32)item >> 3) & 1u, c = (u32)item & 7u, r = g * 32u + lane;
      const u32 a = img + slab * SLAB + r * 128u + ((c ^ (r & 7u)) << 4);
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                   : "=r"(w[b][0]), "=r"(w[b][1]), "=r"(w[b][2]), "=r"(w[b][3]) : "r"(a) : "memory");
    }
  }
  __syncthreads();
#pragma unroll
  for (int b = 0; b < PER; ++b) {
    const int item = (int)warp + b * TP_CONSUMERS;
    if (item < total) {
      const u32 slab = (u32)item >> 4, g = ((u32)item >> 3) & 1u, c = (u32)item & 7u, m = lane & 7u;
      const u32 a = img + slab * SLAB + (c * 8u + m) * 128u + (((g * 4u + (lane >> 3)) ^ m) << 4);
      asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};"
                   ::"r"(a), "r"(w[b][0]), "r"(w[b][1]), "r"(w[b][2]), "r"(w[b][3]) : "memory");
    }
  }
}

template <int E>
__device__ __forceinline__ void transpose_stage(u32 in_img, u32 out_img, u32 kq, u32 warp, u32 lane) {
  if (TP_XPOSE == 9) return;
  if (E == 2 && TP_XPOSE == 2) { transpose_stage_mx(in_img, out_img, kq, warp, lane); return; }
  if (E == 2 && TP_XPOSE == 1) { transpose_stage_pk(in_img, out_img, kq, warp, lane); return; }
  constexpr int T = 128 / E;        // rows and columns of a slab
  constexpr int EPC = 16 / E;       // elements per 16-byte chunk
  constexpr int G = (T + 31) / 32;  // row groups of 32 lanes
  constexpr u32 SLAB = (u32)T * 128u;
  const int total = (int)kq * G * 8;
  for (int base = (int)warp; base < total; base += TP_CONSUMERS * TP_BATCH) {
    u32 w[TP_BATCH][4];
    int rr[TP_BATCH], cc[TP_BATCH], ss[TP_BATCH];
#pragma unroll
    for (int b = 0; b < TP_BATCH; ++b) {
      const int item = base + b * TP_CONSUMERS;
      const int slab = item / (G * 8), rem = item % (G * 8);
      rr[b] = (rem >> 3) * 32 + (int)lane;
      cc[b] = rem & 7;
      ss[b] = slab;
      if (item < total && rr[b] < T) {
        const u32 a = in_img + (u32)slab * SLAB + (u32)rr[b] * 128u + ((u32)(cc[b] ^ (rr[b] & 7)) << 4);
        asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(w[b][0]), "=r"(w[b][1]), "=r"(w[b][2]), "=r"(w[b][3]) : "r"(a));
      }
    }
#pragma unroll
    for (int b = 0; b < TP_BATCH; ++b) {
      const int item = base + b * TP_CONSUMERS;
      if (item < total && rr[b] < T) {
        const u32 rb = (u32)rr[b] * E;  // byte column in the output row
        const u32 img = out_img + (u32)ss[b] * SLAB;
#pragma unroll
        for (int k = 0; k < EPC; ++k) {
          const u32 j = (u32)(cc[b] * EPC + k);
          store_elem<E>(img + j * 128u + ((((rb >> 4) ^ (j & 7u)) << 4) | (rb & 15u)), chunk_elem<E>(w[b], k));
        }
      }
    }
  }
}

#ifndef TP_MODE
#define TP_MODE 0  // 0: consumers share each stage, one store issuer after a named barrier; 1: warp-owned slabs;
#endif             // 2: as 0, but a dedicated store warp waits on per-image mbarriers (no named barrier)
#ifndef TP_LEAN
#define TP_LEAN 0  // 1: one tile per CTA (tile = blockIdx.x), all TP_CONSUMERS warps transpose (transpose_lean)
#endif
#define TP_WARPS (TP_LEAN ? TP_CONSUMERS : TP_CONSUMERS + 1 + (TP_MODE == 2 ? 1 : 0))

// TP_MODE 1: consumer warp w owns slabs g = w, w + C, ... (g = k * KQ + q over this CTA's tiles k): it loads the
// whole slab into registers, frees its share of the input stage (empty[s] counts KQ arrivals), writes one of its own
// TP_NO output images, fences, and its lane 0 stores the slab: no cross-warp barrier, one bulk group per slab.
template <int E>
__device__ __forceinline__ void transpose_warp_slabs(const TmaDesc* dst, const TransposeParams& p, u32 base,
                                                     u32 out_base, u64* full, u64* empty, i64 first, i64 step,
                                                     i64 mine, u32 cw, u32 lane) {
  constexpr int T = 128 / E, EPC = 16 / E, G = (T + 31) / 32;
  constexpr u32 SLAB = (u32)T * 128u;
  const u32 S = p.stages, KQ = p.kq;
  const u32 my_out = out_base + cw * TP_NO * SLAB;
  u32 o = 0;
  for (i64 g = cw; g < mine * (i64)KQ; g += TP_CONSUMERS) {
    const i64 k = g / KQ;
    const u32 q = (u32)(g - k * KQ), s = (u32)(k % S), phase = (u32)((k / S) & 1);
    mbarrier_wait(smem_u32(&full[s]), phase);
    const u32 in_slab = base + s * KQ * SLAB + q * SLAB;
    u32 w[G * 8][4];
#pragma unroll
    for (int it = 0; it < G * 8; ++it) {
      const int r = (it >> 3) * 32 + (int)lane, c = it & 7;
      if (r < T) {
        const u32 a = in_slab + (u32)r * 128u + ((u32)(c ^ (r & 7)) << 4);
        asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(w[it][0]), "=r"(w[it][1]), "=r"(w[it][2]), "=r"(w[it][3]) : "r"(a));
      }
    }
    __syncwarp();
    if (lane == 0) {
      mbarrier_arrive(smem_u32(&empty[s]));
      bulk_wait_group_read<TP_NO - 1>();  // the store that last used output image o has read it
    }
    __syncwarp();
    const u32 img = my_out + o * SLAB;
#pragma unroll
    for (int it = 0; it < G * 8; ++it) {
      const int r = (it >> 3) * 32 + (int)lane, c = it & 7;
      if (r < T) {
        const u32 rb = (u32)r * E;
#pragma unroll
        for (int e = 0; e < EPC; ++e) {
          const u32 j = (u32)(c * EPC + e);
          store_elem<E>(img + j * 128u + ((((rb >> 4) ^ (j & 7u)) << 4) | (rb & 15u)), chunk_elem<E>(w[it], e));
        }
      }
    }
    fence_proxy_async_smem();
    __syncwarp();
    if (lane == 0) {
      i32 c[5];
      tile_coords(p, first + k * step, c);
      const i32 qs = c[1] * T * (i32)KQ + (i32)q * T;
      if (qs < p.qdim) {
        i32 d[5] = {qs, c[0] * T, c[2], c[3], c[4]};
        tma_store_tile_n(p.rank, dst, img, d);
      }
      bulk_commit_group();
    }
    if (++o == TP_NO) o = 0;
  }
  if (lane == 0) bulk_wait_group<0>();
}

// TP_MODE 2, the store warp (one lane): out_full[o] completes when every consumer warp has written and fenced output
// image o; the warp stores the tile's KQ slabs, commits, and once the previous tile's stores have read their image
// (wait_group.read 1) frees that image (out_empty). It computes the tile coordinates itself (off the consumers' path).
__device__ __forceinline__ void transpose_storer(const TmaDesc* dst, const TransposeParams& p, u32 out_base,
                                                 u32 in_bytes, u32 slab, i32 T, u64* out_full, u64* out_empty,
                                                 i64 first, i64 step, i64 mine, volatile i64* out_tile) {
  const u32 KQ = p.kq;
  u32 o = 0, phase = 0, prev = TP_NO - 1;
  prefetch_tensormap(dst);
  for (i64 k = 0; TP_DYN || k < mine; ++k) {
    mbarrier_wait(smem_u32(&out_full[o]), phase);
    const i64 t = TP_DYN ? out_tile[o] : first + k * step;
    if (t < 0) break;
    i32 c[5];
    tile_coords(p, t, c);
    const i32 p0 = c[0] * T, q0 = c[1] * T * (i32)KQ;
    const u32 img = out_base + o * in_bytes;
    for (u32 q = 0; q < KQ; ++q) {
      const i32 qs = q0 + (i32)q * T;
      if (qs >= p.qdim) break;
      i32 d[5] = {qs, p0, c[2], c[3], c[4]};
      tma_store_tile_n(p.rank, dst, img + q * slab, d);
    }
    bulk_commit_group();
    if (k > 0) {
      bulk_wait_group_read<1>();
      mbarrier_arrive(smem_u32(&out_empty[prev]));
    }
    prev = o;
    if (++o == TP_NO) { o = 0; phase ^= 1; }
  }
  bulk_wait_group<0>();
}

// TP_LEAN: one tile per CTA, the hardware hands out the CTAs (a short CTA: no ring, no tile loop, no producer
// warp). Thread 0 initialises one barrier and loads the tile's KQ slabs; every warp transposes its share into the
// output images; after the proxy fence and a block barrier thread 0 stores the slabs and waits for their reads.
template <int E>
__device__ __forceinline__ void transpose_lean(const TmaDesc* src, const TmaDesc* dst, const TransposeParams& p,
                                               u8* dyn, u64* full) {
  constexpr int T = 128 / E;
  constexpr u32 SLAB = (u32)T * 128u;
  const u32 KQ = p.kq, in_bytes = SLAB * KQ;
  constexpr bool INPLACE = TP_INPLACE && E == 2 && TP_XPOSE == 2;
  const u32 base = (smem_u32(dyn) + 1023u) & ~1023u, out_img = INPLACE ? base : base + in_bytes;
  const i64 t = blockIdx.x;
  if (t >= p.ntiles) return;
  const u32 tid = threadIdx.x, bar = smem_u32(&full[0]);
  i32 c[5];
  tile_coords(p, t, c);
  c[0] *= T;
  c[1] *= T * (i32)KQ;
  if (tid == 0) {
    mbarrier_init(bar, 1);
    fence_mbarrier_init();
    mbarrier_arrive_expect_tx(bar, in_bytes);
    tma_load_tile_n(p.rank, base, src, bar, c);
  }
  __syncthreads();
  mbarrier_wait(bar, 0);
  if constexpr (INPLACE)
    transpose_stage_mx_inplace(base, KQ, tid >> 5, tid & 31);
  else
    transpose_stage<E>(base, out_img, KQ, tid >> 5, tid & 31);
  fence_proxy_async_smem();
  __syncthreads();
  if (tid == 0) {
    for (u32 q = 0; q < KQ; ++q) {
      const i32 qs = c[1] + (i32)q * T;
      if (qs >= p.qdim) break;
      i32 d[5] = {qs, c[0], c[2], c[3], c[4]};
      tma_store_tile_n(p.rank, dst, out_img + q * SLAB, d);
    }
    bulk_commit_group();
    bulk_wait_group_read<0>();
  }
}

template <int E>
__device__ __forceinline__ void transpose_run(const TmaDesc* src, const TmaDesc* dst, const TransposeParams& p,
                                              u8* dyn, u64* full, u64* empty, i32 (*coords)[5], u64* out_full,
                                              u64* out_empty, volatile i64* stage_tile, volatile i64* out_tile) {
  if constexpr (TP_LEAN) {
    transpose_lean<E>(src, dst, p, dyn, full);
    return;
  }
  constexpr int T = 128 / E;
  constexpr u32 SLAB = (u32)T * 128u;
  const u32 S = p.stages, KQ = p.kq;
  const u32 in_bytes = SLAB * KQ;
  const u32 base = (smem_u32(dyn) + 1023u) & ~1023u;
  const u32 out_base = base + S * in_bytes;
  const u32 tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  if (tid == 0) {
    for (u32 s = 0; s < S; ++s) {
      mbarrier_init(smem_u32(&full[s]), 1);
      mbarrier_init(smem_u32(&empty[s]), TP_MODE == 1 ? KQ : TP_CONSUMERS);
    }
    if (TP_MODE == 2) {
      for (u32 o = 0; o < TP_NO; ++o) {
        mbarrier_init(smem_u32(&out_full[o]), TP_CONSUMERS);
        mbarrier_init(smem_u32(&out_empty[o]), 1);
      }
    }
    fence_mbarrier_init();
  }
  __syncthreads();
#if TP_ORDER  // one contiguous run of tiles per CTA
  const i64 per = (p.ntiles + gridDim.x - 1) / gridDim.x;
  const i64 first = blockIdx.x * per, step = 1;
  const i64 mine = first < p.ntiles ? (p.ntiles - first < per ? p.ntiles - first : per) : 0;
#else  // round-robin
  const i64 first = blockIdx.x, step = gridDim.x;
  const i64 mine = first < p.ntiles ? (p.ntiles - first + step - 1) / step : 0;
#endif
  if (warp == 0) {
    if (lane != 0) return;
    prefetch_tensormap(src);
    if (TP_MODE != 2) prefetch_tensormap(dst);
    u32 s = 0, phase = 0;
    for (i64 k = 0; TP_DYN || k < mine; ++k) {
      const i64 t = TP_DYN ? (i64)atomicAdd((unsigned long long*)p.counter, 1ull) : first + k * step;
      mbarrier_wait(smem_u32(&empty[s]), phase ^ 1);
      if (TP_DYN) {
        if (t >= p.ntiles) {  // no more tiles: a stage with tile -1 tells the consumers to stop
          stage_tile[s] = -1;
          mbarrier_arrive(smem_u32(&full[s]));
          break;
        }
        stage_tile[s] = t;
      }
      i32 c[5];
      tile_coords(p, t, c);
      c[0] *= T;
      c[1] *= T * (i32)KQ;
      if (TP_MODE == 0 && TP_COORDS == 2) {  // for the store leader: published by the arrive below (release)
#pragma unroll
        for (int d = 0; d < 5; ++d) coords[s][d] = c[d];
      }
      const u32 bar = smem_u32(&full[s]);
      mbarrier_arrive_expect_tx(bar, in_bytes);
      tma_load_tile_n(p.rank, base + s * in_bytes, src, bar, c);
      if (++s == S) { s = 0; phase ^= 1; }
    }
    if (TP_DYN) {  // the last CTA done zeroes the counter for the next launch (every CTA has stopped taking tiles)
      if (atomicAdd((unsigned long long*)p.counter + 1, 1ull) == (unsigned long long)gridDim.x - 1) {
        atomicExch((unsigned long long*)p.counter, 0ull);
        atomicExch((unsigned long long*)p.counter + 1, 0ull);
      }
    }
    return;
  }
  if (TP_MODE == 2 && warp == TP_CONSUMERS + 1) {
    if (lane == 0)
      transpose_storer(dst, p, out_base, in_bytes, SLAB, T, out_full, out_empty, first, step, mine, out_tile);
    return;
  }
  const u32 cw = warp - 1;  // consumer warp 0..TP_CONSUMERS-1
  if (TP_MODE == 2) {
    u32 s = 0, phase = 0, o = 0, ophase = 0;
    for (i64 k = 0; TP_DYN || k < mine; ++k) {
      mbarrier_wait(smem_u32(&full[s]), phase);
      mbarrier_wait(smem_u32(&out_empty[o]), ophase ^ 1);
      const i64 t = TP_DYN ? stage_tile[s] : 0;
      if (TP_DYN && t < 0) {  // pass the stop on to the store warp
        if (cw == 0 && lane == 0) out_tile[o] = -1;
        __syncwarp();
        if (lane == 0) mbarrier_arrive(smem_u32(&out_full[o]));
        break;
      }
      transpose_stage<E>(base + s * in_bytes, out_base + o * in_bytes, KQ, cw, lane);
      fence_proxy_async_smem();
      __syncwarp();
      if (lane == 0) {
        if (TP_DYN && cw == 0) out_tile[o] = t;
        mbarrier_arrive(smem_u32(&empty[s]));
        mbarrier_arrive(smem_u32(&out_full[o]));
      }
      if (++s == S) { s = 0; phase ^= 1; }
      if (++o == TP_NO) { o = 0; ophase ^= 1; }
    }
    return;
  }
  if (TP_MODE == 1) {
    transpose_warp_slabs<E>(dst, p, base, out_base, full, empty, first, step, mine, cw, lane);
    return;
  }
  const bool leader = (cw == 0 && lane == 0);
  u32 s = 0, phase = 0, o = 0;
  for (i64 k = 0; TP_DYN || k < mine; ++k) {
    mbarrier_wait(smem_u32(&full[s]), phase);
    const i64 t = TP_DYN ? stage_tile[s] : first + k * step;
    if (t < 0) break;
    i32 c[5];
    if (leader && TP_COORDS == 2) {  // before this warp frees the stage: the producer rewrites coords[s] after
#pragma unroll
      for (int d = 0; d < 5; ++d) c[d] = coords[s][d];
    }
    const u32 in_img = base + s * in_bytes;
    const u32 out_img = out_base + o * in_bytes;
    transpose_stage<E>(in_img, out_img, KQ, cw, lane);
    fence_proxy_async_smem();
    __syncwarp();
    if (lane == 0) mbarrier_arrive(smem_u32(&empty[s]));
    if (leader) bulk_wait_group_read<TP_NO - 2>();
    named_sync(1, 32 * TP_CONSUMERS);
    if (leader) {
      if (TP_COORDS != 2) {
        tile_coords(p, t, c);
        c[0] *= T;
        c[1] *= T * (i32)KQ;
      }
      const i32 p0 = c[0], q0 = c[1];
      for (u32 q = 0; q < KQ; ++q) {
        const i32 qs = q0 + (i32)q * T;
        if (qs >= p.qdim) break;
        i32 d[5] = {qs, p0, c[2], c[3], c[4]};
        tma_store_tile_n(p.rank, dst, out_img + q * SLAB, d);
      }
      bulk_commit_group();
    }
    if (++s == S) { s = 0; phase ^= 1; }
    if (++o == TP_NO) o = 0;
  }
  if (leader) bulk_wait_group<0>();
}

#define TP_KERNEL(E)                                                                                               \
  extern "C" __global__ void __launch_bounds__(32 * TP_WARPS, 1)                                                   \
  tmakit_transpose_e##E(const __grid_constant__ TmaDesc src, const __grid_constant__ TmaDesc dst,                  \
                        const TransposeParams p) {                                                                 \
    extern __shared__ __align__(1024) u8 dyn[];                                                                    \
    __shared__ __align__(8) u64 full[TP_MAX_STAGES];                                                               \
    __shared__ __align__(8) u64 empty[TP_MAX_STAGES];                                                              \
    __shared__ i32 coords[TP_MAX_STAGES][5];                                                                       \
    __shared__ __align__(8) u64 out_full[TP_NO];                                                                   \
    __shared__ __align__(8) u64 out_empty[TP_NO];                                                                  \
    __shared__ i64 stage_tile[TP_MAX_STAGES];                                                                      \
    __shared__ i64 out_tile[TP_NO];                                                                                \
    transpose_run<E>(&src, &dst, p, dyn, full, empty, coords, out_full, out_empty, stage_tile, out_tile);          \
  }
TP_KERNEL(1)
TP_KERNEL(2)
TP_KERNEL(4)
TP_KERNEL(8)
