// gemm_group.cuh -- the work lists and descriptor switch of the grouped GEMM kernels (gemm.cu compiled with
// TMAKIT_GEMM_GROUPED or TMAKIT_GEMM_PTRARRAY; host sides gemm_grouped.py, gemm_ptr_array.py).
#pragma once
#include <tmakit/fence.cuh>
#include <tmakit/tensormap.cuh>
#include <tmakit/types.cuh>

namespace tmakit {
namespace gemm {

// The work of one CTA of the grouped kernel: groups g = 0 .. groups-1 own the A / C rows [offs[g-1], offs[g]) (offs
// clamped to be non-decreasing and <= M, so any offs is memory-safe) and B[g]; a group's units are its 64- or 128-row
// tiles times the column tiles, numbered n-tile-major so consecutive CTAs share a B tile. Cluster cid takes units
// cid, cid + ncl, ... walking the groups once. In pairs along M (cm = 2, B multicast) a unit is two row tiles of one
// group and column tile, CTA rm taking row tile 2 i + rm (past the group's end on an odd count: it loads and
// multiplies its share, and its epilogue stores nothing). A unit's su field carries its group's end row (for the
// epilogue), slot its group (for the producer's B coordinate), nseg 1 on a group's only row tile (or pair), else 2.
// offs = nullptr: a batch of equal groups (torch._grouped_mm's 3-D A x 3-D B, A and C flattened to (M, .) rows):
// group g owns rows [g M / groups, (g + 1) M / groups), M a multiple of groups (the host checks).
// kg = 1 (grouped along K): offs cuts K instead (clamped to be non-decreasing and <= K); group g owns the C rows
// [g mg, (g + 1) mg) (mg = M / groups, A's rows) and the K range [rstart, rend), its units the mg-row matrix's tiles,
// each a unit over the group's K slabs (at least one: an empty group's one slab starts past rend, all zeros).
struct GroupList {
  const int* offs;
  int groups, M, N, K, bm, bn, cid, ncl, rm, cm, kg;
  int u, g, ustart, gunits, gtm, rstart, rend, mg;

  TMAKIT_DEVICE void start() {
    u = cid;
    g = -1;
    ustart = gunits = gtm = rstart = rend = 0;
    mg = groups > 0 ? M / groups : 0;
  }

  TMAKIT_DEVICE bool next(Unit& t) {
    const int tiles_n = (N + bn - 1) / bn;
    while (u >= ustart + gunits) {
      if (++g >= groups) return false;
      ustart += gunits;
      rstart = rend;
      if (kg) {
        rend = min(max(__ldg(offs + g), rstart), K);
        gtm = (mg + bm - 1) / bm;
      } else {
        rend = offs ? min(max(__ldg(offs + g), rstart), M) : (g + 1) * mg;
        gtm = (rend - rstart + bm * cm - 1) / (bm * cm);  // row tiles of the group (pairs of them: cm = 2)
      }
      gunits = gtm * tiles_n;
    }
    const int r = u - ustart;
    t.n0 = (r / gtm) * bn;
    t.role = 0;
    t.slot = g;
    t.nseg = min(gtm, 2);  // (no stream-K here) 1: the group's only row tile, which shares its B with no other unit
    if (kg) {
      t.m0 = g * mg + (r % gtm) * bm;
      t.k0 = rend > rstart ? rstart : max(rend, 1);
      t.kt = max((rend - rstart + BK - 1) / BK, 1);
      t.su = (g + 1) * mg;
    } else {
      t.m0 = rstart + ((r % gtm) * cm + rm) * bm;
      t.k0 = 0;
      t.kt = (K + BK - 1) / BK;
      t.su = rend;
    }
    u += ncl;
    return true;
  }
};

// A's rows per group of the grouped kernel along K (its C rows are groups x these); 0 for the other work lists.
TMAKIT_DEVICE int group_rows(const GroupList& w) { return w.mg; }
template <class W> TMAKIT_DEVICE int group_rows(const W&) { return 0; }

// One problem of the ptr-array kernel: 15 int64 per group in global memory. fp8 lists add the problem's fp32
// scales: scale_a and scale_b addresses (one element each per tensor), then their strides in elements -- A's along
// M and along K blocks, B's along N (row-wise: per column; block-wise: per 128-column block) and along K blocks
// (0 where a scale does not vary that way).
enum Problem { P_A = 0, P_B, P_C, P_M, P_N, P_K, P_LDA, P_LDB, P_LDC, P_SA, P_SB, P_SAM, P_SAK, P_SBN, P_SBK,
               P_FIELDS };

// The work of one CTA of the ptr-array kernel: problem g is C_g (M_g, N_g) = A_g (M_g, K_g) @ B_g with its own
// pointers and strides; its units are its tiles (n-tile-major), each with the whole K_g. su carries M_g, slot g.
// eb: input element bytes (fp8: 1, K counted in 2-byte units as everywhere in the kernel).
struct ProblemList {
  const long long* prob;
  int groups, bm, bn, cid, ncl, eb;
  int u, g, ustart, gunits, gtm, kt, rend;

  TMAKIT_DEVICE void start() {
    u = cid;
    g = -1;
    ustart = gunits = gtm = kt = rend = 0;
  }

  TMAKIT_DEVICE bool next(Unit& t) {
    while (u >= ustart + gunits) {
      if (++g >= groups) return false;
      ustart += gunits;
      const long long* p = prob + (long long)g * P_FIELDS;
      const int m = (int)__ldg(p + P_M), n = (int)__ldg(p + P_N), k = (int)__ldg(p + P_K);
      gtm = (m + bm - 1) / bm;
      gunits = k > 0 ? gtm * ((n + bn - 1) / bn) : 0;  // the host zeroes C_g when K_g = 0
      kt = ((eb == 2 ? k : (k + 1) / 2) + BK - 1) / BK;
      rend = m;
    }
    const int r = u - ustart;
    t.m0 = (r % gtm) * bm;
    t.n0 = (r / gtm) * bn;
    t.k0 = 0;
    t.kt = kt;
    t.role = 0;
    t.su = rend;
    t.slot = g;
    t.nseg = 1;
    u += ncl;
    return true;
  }
};

// The map at `tmpl` (a __grid_constant__ template) copied into 128 bytes of shared memory at `smem_map`, to edit.
TMAKIT_DEVICE void map_to_smem(u32 smem_map, const TmaDesc* tmpl) {
  const uint4* src = reinterpret_cast<const uint4*>(tmpl);
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const uint4 v = src[i];
    asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(smem_map + 16 * i), "r"(v.x), "r"(v.y), "r"(v.z),
                 "r"(v.w) : "memory");
  }
}

// The edited map at `smem_map` published to its global slot `gmap` for this thread's TMA loads: a generic copy to
// global memory, then the release and acquire proxy fences (the writer is the thread that loads through the map).
TMAKIT_DEVICE void publish_map(u32 smem_map, TmaDesc* gmap) {
  uint4* dst = reinterpret_cast<uint4*>(gmap);
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(smem_map + 16 * i) : "memory");
    dst[i] = v;
  }
  fence_proxy_tensormap_release();
  tensormap_acquire(gmap);
}

// Point a copy of the template map at one problem's operand (ptr-array kernel): tensormap.replace of the base
// address, the two extents and the row pitch, then publish it to `gmap`. The caller makes sure no TMA load that used
// `gmap` is still in flight.
TMAKIT_DEVICE void switch_map(u32 smem_map, const TmaDesc* tmpl, TmaDesc* gmap, u64 addr, u32 dim0, u32 dim1,
                              u64 pitch_bytes) {
  map_to_smem(smem_map, tmpl);
  tensormap_replace_global_address(smem_map, addr);
  tensormap_replace_global_dim<0>(smem_map, dim0);
  tensormap_replace_global_dim<1>(smem_map, dim1);
  tensormap_replace_global_stride<0>(smem_map, pitch_bytes);
  publish_map(smem_map, gmap);
}

// A copy of the template map with its extent along dimension 1 set to `dim1` (the grouped kernel along K: rows past
// a group's end load as zeros), published to `gmap` (same conditions as switch_map).
TMAKIT_DEVICE void switch_map_extent1(u32 smem_map, const TmaDesc* tmpl, TmaDesc* gmap, u32 dim1) {
  map_to_smem(smem_map, tmpl);
  tensormap_replace_global_dim<1>(smem_map, dim1);
  publish_map(smem_map, gmap);
}

// The epilogue without a C map: this thread's accumulators of a 64-row slab (rows row_m0 + 16 w + l/4 + 8 h,
// columns n0 + 8 j + 2 (l%4) + e) stored straight to C, rows below m_end and columns below n_end only.
// PTX: st.global.{v2.f32, b32, b16} (an odd n_end's last column alone). ALIGNED = 0 (C rows at any pitch and start,
// the ptr-array kernel): a column pair whose address is not a multiple of its size goes out as two scalar stores.
template <int BN, int OUT, bool ALIGNED = true>
TMAKIT_DEVICE void store_rows(const float* acc, u8* c, long long ldc, int row_m0, int n0, int m_end, int n_end,
                              int warp, int lane) {
  constexpr int OB = OUT == 2 ? 4 : 2;
#pragma unroll
  for (int j = 0; j < BN / 8; ++j) {
    const int col = n0 + 8 * j + 2 * (lane % 4);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = row_m0 + warp * 16 + lane / 4 + 8 * h;
      if (row >= m_end || col >= n_end) continue;
      u8* p = c + ((long long)row * ldc + col) * OB;
      const float x0 = acc[4 * j + 2 * h], x1 = acc[4 * j + 2 * h + 1];
      const bool pair = col + 1 < n_end, vec = pair && (ALIGNED || (reinterpret_cast<size_t>(p) & (2 * OB - 1)) == 0);
      if constexpr (OUT == 2) {
        if (vec) {
          *reinterpret_cast<float2*>(p) = make_float2(x0, x1);
        } else {
          *reinterpret_cast<float*>(p) = x0;
          if (!ALIGNED && pair) *reinterpret_cast<float*>(p + 4) = x1;
        }
      } else {
        const u32 w = pack2<OUT == 1 ? 1 : 0>(x0, x1);
        if (vec) {
          *reinterpret_cast<u32*>(p) = w;
        } else {
          *reinterpret_cast<unsigned short*>(p) = (unsigned short)(w & 0xffffu);
          if (!ALIGNED && pair) *reinterpret_cast<unsigned short*>(p + 2) = (unsigned short)(w >> 16);
        }
      }
    }
  }
}

}  // namespace gemm
}  // namespace tmakit
