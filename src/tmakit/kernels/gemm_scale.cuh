// gemm_scale.cuh -- the scaled GEMM's (fp8, tmakit_gemm_scaled) scale factors and bias, applied to the m64nBN
// accumulators of one consumer warpgroup. Thread (warp w, lane l) holds acc[4j + 2h + e] = C[16 w + l/4 + 8 h]
// [8 j + 2 (l%4) + e] of its 64-row slab (h, e in {0, 1}, j < BN/8).
//   SCALE 1 (per tensor): C = acc * a[0] * b[0], in the epilogue.
//   SCALE 2 (row-wise):   C[r][c] = acc * a[r * a_m] * b[c * b_n], in the epilogue.
//   SCALE 3 (block-wise, DeepSeek-V3): A scaled per (row, 128-deep K block), B per (128 columns, 128-deep K block);
//     every slab (BK = 128 fp8 = one K block) is summed by the wgmmas into a partial set of registers, which is then
//     scaled into the fp32 total: total[r][c] += part[r][c] * a[r * a_m + kb * a_k] * b[(c / 128) * b_n + kb * b_k],
//     the slab's scales staged in shared memory by a producer warp (BlockScaleLoad).
// Bias (BIAS = 1): C[r][c] += bias[c] (elements of the output type), after the scales.
// Without FAST, SCALE 1 and 2 also sum each slab into a partial set first and add it to the total (promote_sum).
#pragma once
#include <tmakit/tma.cuh>
#include <tmakit/types.cuh>

namespace tmakit {
namespace gemm {

// Scale and bias arguments (device pointers; strides in elements). Unused fields are null / zero. b_g: the grouped
// kernel's stride between the B scales of consecutive groups.
struct Scales {
  const float* a;
  const float* b;
  const void* bias;
  long long a_m, a_k, b_n, b_k, b_g;

  // The scales of group g's B (the grouped kernel; elsewhere b_g = 0 leaves them as they are for any g).
  TMAKIT_DEVICE Scales of_group(int g) const {
    Scales s = *this;
    s.b = b + g * b_g;
    return s;
  }
};

// PTX: ld.global.nc.f32   (read-only for the kernel's lifetime)
TMAKIT_DEVICE float ldg_f32(const float* p) {
  float v;
  asm("ld.global.nc.f32 %0, [%1];" : "=f"(v) : "l"(p));
  return v;
}
// PTX: st.shared.f32
TMAKIT_DEVICE void sts_f32(u32 addr, float v) { asm volatile("st.shared.f32 [%0], %1;" ::"r"(addr), "f"(v) : "memory"); }
// PTX: ld.shared.f32
TMAKIT_DEVICE float lds_f32(u32 addr) {
  float v;
  asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(addr) : "memory");
  return v;
}
// PTX: ld.global.nc.u16 + cvt.f32.{bf16,f16} (bf16: the high half of an fp32)
template <int OUT> TMAKIT_DEVICE float ldg_bias(const void* p, int c) {
  if constexpr (OUT == 2) {
    return ldg_f32((const float*)p + c);
  } else {
    unsigned short h;
    asm("ld.global.nc.u16 %0, [%1];" : "=h"(h) : "l"((const unsigned short*)p + c));
    if constexpr (OUT == 0) return __uint_as_float((u32)h << 16);
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
  }
}

// The epilogue's scales and bias (SCALE 1, 2; bias for every mode), in place on the accumulators of rows
// row0 + 16 w + l/4 + {0, 8}, columns n0 + .... Rows and columns past M / N read a clamped / no element (the
// TMA store clips them).
template <int SCALE, int BIAS, int OUT, int BN>
TMAKIT_DEVICE void scale_epilogue(float* acc, const Scales& sc, int row0, int n0, int M, int N, int warp, int lane) {
  if constexpr (SCALE == 1) {
    const float s = ldg_f32(sc.a) * ldg_f32(sc.b);
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) acc[i] *= s;
  }
  if constexpr (SCALE == 2 || BIAS) {
    float sa[2] = {1.f, 1.f};
    if constexpr (SCALE == 2) {
#pragma unroll
      for (int h = 0; h < 2; ++h) sa[h] = ldg_f32(sc.a + min(row0 + 16 * warp + lane / 4 + 8 * h, M - 1) * sc.a_m);
    }
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int c = n0 + 8 * j + 2 * (lane % 4) + e;
        const bool in = c < N;
        float sb = 1.f, bias = 0.f;
        if constexpr (SCALE == 2) sb = in ? ldg_f32(sc.b + c * sc.b_n) : 0.f;
        if constexpr (BIAS) bias = in ? ldg_bias<OUT>(sc.bias, c) : 0.f;
#pragma unroll
        for (int h = 0; h < 2; ++h) acc[4 * j + 2 * h + e] = fmaf(acc[4 * j + 2 * h + e], sa[h] * sb, bias);
      }
    }
  }
}

// Staged epilogue vectors (EPV, dense kernel): a warp of the producer warpgroup loads each unit's row scales of A (BM,
// clamped at M - 1), column scales of B and bias (BN each, zero past N) as fp32 into one of two shared slots while
// the unit's mainloop runs; the consumers' epilogue reads them with shared loads instead of 2 + BN / 4 (+ BN / 4)
// global loads per thread, whose latency each tile's epilogue waited for (row-wise 3-15 % slower than per tensor;
// docs/GEMM.md). Slot layout: [row scales (SCALE 2)][column scales (SCALE 2)][bias (BIAS)].
template <int SCALE, int BIAS, int BM, int BN> TMAKIT_DEVICE constexpr u32 epilogue_vector_bytes() {
  return 4u * ((SCALE == 2 ? BM + BN : 0) + (BIAS ? BN : 0));
}
// PTX: ld.shared.v2.f32
TMAKIT_DEVICE void lds_v2f32(u32 addr, float& x, float& y) {
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];" : "=f"(x), "=f"(y) : "r"(addr) : "memory");
}
// One lane's share of a unit's vectors: element lane + 32 k of the slot, all loads issued before the stores.
template <int SCALE, int BIAS, int OUT, int BM, int BN>
TMAKIT_DEVICE void stage_epilogue_vectors(u32 slot, const Scales& sc, int m0, int n0, int M, int N, int lane) {
  constexpr int RA = SCALE == 2 ? BM / 32 : 0, CB = SCALE == 2 ? BN / 32 : 0, CC = BIAS ? BN / 32 : 0;
  float v[RA + CB + CC > 0 ? RA + CB + CC : 1];
#pragma unroll
  for (int k = 0; k < RA; ++k) v[k] = ldg_f32(sc.a + min(m0 + lane + 32 * k, M - 1) * sc.a_m);
#pragma unroll
  for (int k = 0; k < CB; ++k) {
    const int c = n0 + lane + 32 * k;
    v[RA + k] = c < N ? ldg_f32(sc.b + c * sc.b_n) : 0.f;
  }
#pragma unroll
  for (int k = 0; k < CC; ++k) {
    const int c = n0 + lane + 32 * k;
    v[RA + CB + k] = c < N ? ldg_bias<OUT>(sc.bias, c) : 0.f;
  }
#pragma unroll
  for (int k = 0; k < RA + CB + CC; ++k) sts_f32(slot + 4 * (lane + 32 * k), v[k]);
}
// scale_epilogue with the row scales, column scales and bias from a staged slot (row: the thread's first row in the
// tile); per tensor still reads its two scalars.
template <int SCALE, int BIAS, int BM, int BN>
TMAKIT_DEVICE void scale_epilogue_staged(float* acc, const Scales& sc, u32 slot, int row, int lane) {
  if constexpr (SCALE == 1) {
    const float s = ldg_f32(sc.a) * ldg_f32(sc.b);
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) acc[i] *= s;
  }
  constexpr u32 COLS = SCALE == 2 ? 4 * BM : 0, BIAS_AT = COLS + (SCALE == 2 ? 4 * BN : 0);
  float sa[2] = {1.f, 1.f};
  if constexpr (SCALE == 2) {
    sa[0] = lds_f32(slot + 4 * row);
    sa[1] = lds_f32(slot + 4 * (row + 8));
  }
#pragma unroll
  for (int j = 0; j < BN / 8; ++j) {
    const u32 c = 4 * (8 * j + 2 * (lane % 4));
    float sb[2] = {1.f, 1.f}, bias[2] = {0.f, 0.f};
    if constexpr (SCALE == 2) lds_v2f32(slot + COLS + c, sb[0], sb[1]);
    if constexpr (BIAS) lds_v2f32(slot + BIAS_AT + c, bias[0], bias[1]);
#pragma unroll
    for (int e = 0; e < 2; ++e) {
#pragma unroll
      for (int h = 0; h < 2; ++h) acc[4 * j + 2 * h + e] = fmaf(acc[4 * j + 2 * h + e], sa[h] * sb[e], bias[e]);
    }
  }
}

// Block scaling (SCALE 3). The scales of every slab reach shared memory beside the slab's operands: a warp of the
// producer warpgroup loads, per stage, the scale of each of the tile's BM rows of A for that K block and the tile's
// two 128-column B scale blocks (the second clamped at N) one slab ahead into registers (BlockScaleLoad), stores them
// to the stage's scale slot once the stage is free, and its lanes arrive on the stage's full barrier (release: the
// consumers' wait orders their shared loads after the stores). The consumers read their four values with shared
// loads: no global load, address or prefetch in the mainloop. A 192-column tile (n0 a multiple of 64) spans two scale
// blocks, split at column 128 - n0 % 128 (64 or 128), a whole number of the thread's 8-column groups: promote() picks
// the middle groups' block once per slab, no select per element and no branch. 64- and 128-column tiles lie in one
// scale block (the first).
// Diagnostic for tools/bench/fp8_block_cost.py only (wrong results when > 0): 1 block scales without the scale
// warp (gemm.cu), 2 scales 1.0 (no shared loads), 3 per-unit register scales (no shared loads).
#ifndef TMAKIT_GEMM_BLOCK_PROBE
#define TMAKIT_GEMM_BLOCK_PROBE 0
#endif
template <int BM> TMAKIT_DEVICE constexpr u32 scale_stage_bytes() { return ((BM + 2) * 4 + 15) / 16 * 16; }

// Block scales by TMA (SCALE 4: A's scales K-major, 5: M-major; B's K-major in both): the producer loads each slab's
// scales into the stage's scale slot with the operands, on the same full barrier -- no scale warp. A TMA box's
// inner extent is at least 16 bytes and its inner start coordinate a multiple of 16 bytes (else the load is an
// illegal instruction, docs/CONFORMANCE.md), so a K-major box holds the 4 K blocks kb & ~3 .. (kb & ~3) + 3 per row
// and the slab's scale is column kb & 3: SCALE 4 stores row r of A at 16 r, SCALE 5 (a {BM, 1} box of the slab's
// column) at 4 r. Then, 128-byte aligned, B's {4, 2} box: the tile's first scale block at +0, its second at +16. Out-of-bounds parts (rows past M, blocks past
// N or K) arrive as zeros and are never stored. The host builds both maps (gemm_fp8.scale_maps).
template <int SCALE, int BM> TMAKIT_DEVICE constexpr u32 scale_tma_a_bytes() { return (SCALE == 4 ? 16 : 4) * BM; }
template <int SCALE, int BM> TMAKIT_DEVICE constexpr u32 scale_tma_box_bytes() {
  return scale_tma_a_bytes<SCALE, BM>() + 32;
}
template <int SCALE, int BM> TMAKIT_DEVICE constexpr u32 scale_tma_b_offset() {  // B's box, 128-byte aligned
  return (scale_tma_a_bytes<SCALE, BM>() + 127) / 128 * 128;
}
template <int SCALE, int BM> TMAKIT_DEVICE constexpr u32 scale_tma_stage_bytes() {
  return scale_tma_b_offset<SCALE, BM>() + 128;
}
// PTX: cp.async.bulk.tensor.2d (tma_load_tile), A's and B's scale boxes of the slab at K element k.
template <int SCALE, int BM>
TMAKIT_DEVICE void load_block_scales(u32 slot, const TmaDesc* sa, const TmaDesc* sb, u32 bar, int k, int m0, int n0) {
  const int kb = k / 128, k4 = kb & ~3;
  if (SCALE == 4) tma_load_tile<2>(slot, sa, bar, k4, m0);
  else tma_load_tile<2>(slot, sa, bar, m0, kb);
  tma_load_tile<2>(slot + scale_tma_b_offset<SCALE, BM>(), sb, bar, k4, n0 / 128);
}

// One lane's share of a stage's block scales: rows m0 + lane + 32 j of A (clamped to M - 1: rows past M are never
// stored), and for lanes 0 and 1 the two B blocks. start() points at a unit's first K block (the address arithmetic
// once per unit), load() reads the current K block from global memory, advance() steps to the next one, store()
// writes a slot. The scale warp shares an SM sub-partition with consumer warps; its per-slab instructions delay
// their warpgroup's wgmmas, so a slab costs it only the loads and pointer steps (docs/HARDWARE.md §10).
template <int BM> struct BlockScaleLoad {
  float a[BM / 32];
  float b;
  const float* pa[BM / 32];
  const float* pb;
  long long a_k, b_k;
  TMAKIT_DEVICE void start(const Scales& g, int m0, int n0, long long kb, int M, int N, int lane) {
#pragma unroll
    for (int j = 0; j < BM / 32; ++j) pa[j] = g.a + min(m0 + lane + 32 * j, M - 1) * g.a_m + kb * g.a_k;
    const long long nb = n0 / 128 + (lane == 1 && (n0 / 128 + 1) * 128 < N);
    pb = g.b + nb * g.b_n + kb * g.b_k;
    a_k = g.a_k;
    b_k = g.b_k;
  }
  TMAKIT_DEVICE void load(int lane) {
#pragma unroll
    for (int j = 0; j < BM / 32; ++j) a[j] = ldg_f32(pa[j]);
    b = lane < 2 ? ldg_f32(pb) : 0.f;
  }
  TMAKIT_DEVICE void advance() {
#pragma unroll
    for (int j = 0; j < BM / 32; ++j) pa[j] += a_k;
    pb += b_k;
  }
  // PTX: st.shared.f32
  TMAKIT_DEVICE void store(u32 slot, int lane) const {
#pragma unroll
    for (int j = 0; j < BM / 32; ++j) sts_f32(slot + 4 * (lane + 32 * j), a[j]);
    if (lane < 2) sts_f32(slot + 4 * (BM + lane), b);
  }
};

template <int BN> struct BlockScale {
  static_assert(BN == 64 || BN == 128 || BN == 192, "block scaling: 64-, 128- or 192-column tiles");
  int split;              // 8-column groups in the first scale block: 16 (all of a 128-column tile) or 8
  int kb0;                // the unit's first K block (TMA boxes: the slab's column is its K block & 3)
  float a0, a1, b, b1;    // this slab's scales: rows r, r + 8; the tile's two column blocks

  TMAKIT_DEVICE void start(int n0, int kb) {
    split = (128 - n0 % 128) / 8;
    kb0 = kb;
#if TMAKIT_GEMM_BLOCK_PROBE == 3  // diagnostic: scales that vary per unit, held in registers
    a0 = 1.f + (n0 & 1), a1 = 1.f + (n0 & 2), b = 1.f + (n0 & 4), b1 = 1.f + (n0 & 8);
#endif
  }
  // Slab scales from the stage's copy at `stage` (row r of the tile's A rows, r + 8, then the two B blocks; layout
  // per SCALE: 3 as BlockScaleLoad stores it, 4 and 5 as the TMA boxes land);
  // read before the stage is released.
  template <int BM, int SCALE> TMAKIT_DEVICE void load(u32 stage, int r, int kt) {
#if TMAKIT_GEMM_BLOCK_PROBE == 2  // diagnostic: constant scales, no shared loads
    a0 = a1 = b = b1 = 1.f;
    return;
#elif TMAKIT_GEMM_BLOCK_PROBE == 3
    return;
#endif
    constexpr u32 ROW = SCALE == 4 ? 16 : 4;  // bytes between rows of A's scales
    constexpr u32 B0 = SCALE == 3 ? 4 * BM : scale_tma_b_offset<SCALE, BM>(), B1 = SCALE == 3 ? 4 : 16;
    const u32 col = SCALE >= 4 ? 4u * ((kb0 + kt) & 3) : 0u;  // the slab's column of K-major boxes
    const u32 ca = SCALE == 4 ? col : 0u;
    a0 = lds_f32(stage + ROW * r + ca);
    a1 = lds_f32(stage + ROW * (r + 8) + ca);
    b = lds_f32(stage + B0 + col);
    if constexpr (BN > 128) b1 = lds_f32(stage + B0 + B1 + col);
  }
  // total += part * scale (the total starts each unit at zero). Groups 0-7 of a 192-column tile always lie in its
  // first scale block and groups 16-23 in its second; groups 8-15 take the block `split` says, chosen once per slab
  // (a select per row), so the promotion is one branch-free run of FFMAs.
  TMAKIT_DEVICE void promote(float* total, const float* part) const {
    const float s0[2] = {a0 * b, a1 * b};
    const float s1[2] = {a0 * b1, a1 * b1};
    const float sm[2] = {split == 16 ? s0[0] : s1[0], split == 16 ? s0[1] : s1[1]};
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float sc = BN <= 128 || j < 8 ? s0[i / 2] : j < 16 ? sm[i / 2] : s1[i / 2];
        total[4 * j + i] = fmaf(part[4 * j + i], sc, total[4 * j + i]);
      }
    }
  }
};

// Two-level accumulation without block scales: total += part (the total starts each unit at zero).
template <int BN> TMAKIT_DEVICE void promote_sum(float* total, const float* part) {
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) total[i] += part[i];
}

}  // namespace gemm
}  // namespace tmakit
