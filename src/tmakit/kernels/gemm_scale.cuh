// gemm_scale.cuh -- the scaled GEMM's (fp8, tmakit_gemm_scaled) scale factors and bias, applied to the m64nBN
// accumulators of one consumer warpgroup. Thread (warp w, lane l) holds acc[4j + 2h + e] = C[16 w + l/4 + 8 h]
// [8 j + 2 (l%4) + e] of its 64-row slab (h, e in {0, 1}, j < BN/8).
//   SCALE 1 (per tensor): C = acc * a[0] * b[0], in the epilogue.
//   SCALE 2 (row-wise):   C[r][c] = acc * a[r * a_m] * b[c * b_n], in the epilogue.
//   SCALE 3 (block-wise, DeepSeek-V3): A scaled per (row, 128-deep K block), B per (128 columns, 128-deep K block);
//     every slab (BK = 128 fp8 = one K block) is summed by the wgmmas into a partial set of registers, which is then
//     scaled into the fp32 total: total[r][c] += part[r][c] * a[r * a_m + kb * a_k] * b[(c / 128) * b_n + kb * b_k].
// Bias (BIAS = 1): C[r][c] += bias[c] (elements of the output type), after the scales.
// Without FAST, SCALE 1 and 2 also sum each slab into a partial set first and add it to the total (promote_sum).
#pragma once
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

  // The scales of group g's B (the grouped kernel; g = 0 elsewhere leaves them as they are).
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

// Block scaling (SCALE 3) for one unit: start() at the unit's first slab, load(kt) once slab kt's wgmmas are issued,
// promote() once they are done. The scales are fetched two slabs ahead (slab kt + 2's during slab kt), so their load
// latency (L2, under a full GPU's traffic) is hidden behind two slabs' wgmmas. A 128-column tile has one B scale per
// slab; a 192-column tile (n0 a multiple of 64) spans two 128-column scale blocks, split at column 128 - n0 % 128 (64
// or 128), which is a whole number of the thread's 8-column groups: promote() takes one of two static splits, no
// select per element.
template <int BN> struct BlockScale {
  static_assert(BN == 128 || BN == 192, "block scaling: 128- or 192-column tiles");
  // Few registers (the two accumulator sets of a 192-column tile leave little room): one pointer per operand,
  // advanced one K block per fetch, and 32-bit offsets to the second row / scale block.
  const float* pa;        // scale of row r at the next K block to fetch
  const float* pb;        // the tile's first B scale block at that K block
  int a8, b1off;          // elements to row r + 8's scale, to the second B scale block (0 past N)
  int a_k, b_k;           // elements per K block
  int left;               // K blocks still to fetch after the next (the unit's last is fetched again past its end)
  int split;              // 8-column groups in the first scale block: 16 (all of a 128-column tile) or 8
  float a0, a1, b, b1;    // this slab's scales: rows r, r + 8; the tile's two column blocks
  float na0, na1, nb, nb1;  // the next slab's
  float ma0, ma1, mb, mb1;  // the slab after that

  // kb0: the unit's first K block (slab); nkt: its slabs
  TMAKIT_DEVICE void start(const Scales& sc, int row0, int n0, int kb0, int nkt, int M, int N, int warp,
                           int lane) {
    const int r = row0 + 16 * warp + lane / 4;
    pa = sc.a + min(r, M - 1) * sc.a_m + kb0 * sc.a_k;
    a8 = (int)((min(r + 8, M - 1) - min(r, M - 1)) * sc.a_m);
    pb = sc.b + (n0 / 128) * sc.b_n + kb0 * sc.b_k;
    b1off = (n0 / 128 + 1) * 128 < N ? (int)sc.b_n : 0;
    a_k = (int)sc.a_k;
    b_k = (int)sc.b_k;
    left = nkt - 1;
    split = (128 - n0 % 128) / 8;
    fetch(na0, na1, nb, nb1);
    fetch(ma0, ma1, mb, mb1);
  }
  TMAKIT_DEVICE void fetch(float& x0, float& x1, float& y0, float& y1) {
    x0 = ldg_f32(pa);
    x1 = ldg_f32(pa + a8);
    y0 = ldg_f32(pb);
    if constexpr (BN > 128) y1 = ldg_f32(pb + b1off);
    if (left > 0) {  // past the unit's last slab its scales again (no read past the unit)
      pa += a_k;
      pb += b_k;
      --left;
    }
  }
  // Slab kt's scales (fetched two slabs ahead, so the wait for them is not in front of the wgmma issue).
  TMAKIT_DEVICE void load(int) {
    a0 = na0;
    a1 = na1;
    b = nb;
    if constexpr (BN > 128) b1 = nb1;
    na0 = ma0;
    na1 = ma1;
    nb = mb;
    if constexpr (BN > 128) nb1 = mb1;
    fetch(ma0, ma1, mb, mb1);
  }
  // total += part * scale (the total starts each unit at zero)
  TMAKIT_DEVICE void promote(float* total, const float* part) const {
    if (BN == 128 || split == 16) promote_split<16>(total, part);
    else promote_split<8>(total, part);
  }
  template <int SPLIT> TMAKIT_DEVICE void promote_split(float* total, const float* part) const {
    const float s0[2] = {a0 * b, a1 * b};
    const float s1[2] = {a0 * b1, a1 * b1};
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
      for (int i = 0; i < 4; ++i)
        total[4 * j + i] = fmaf(part[4 * j + i], j < SPLIT ? s0[i / 2] : s1[i / 2], total[4 * j + i]);
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
