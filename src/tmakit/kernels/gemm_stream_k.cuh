// gemm_stream_k.cuh -- how stream-K and split CTAs of gemm.cu exchange fp32 partial tiles through global memory:
// flag loads and releases at GPU scope, L2-only vector stores and loads, and the reduce-scatter add of one part.
// Included by gemm.cu inside namespace tmakit::gemm.
#pragma once

// PTX: ld.acquire.gpu.global.u32
TMAKIT_DEVICE u32 ld_acquire_gpu(const u32* p) {
  u32 v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
// PTX: fence.acq_rel.gpu; red.relaxed.gpu.global.add.u32   (release: the partial's stores before the flag)
TMAKIT_DEVICE void red_release_gpu(u32* p, u32 v) {
  asm volatile("fence.acq_rel.gpu;\n\tred.relaxed.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
// PTX: st.relaxed.gpu.global.u32
TMAKIT_DEVICE void st_relaxed_gpu(u32* p, u32 v) {
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
// PTX: st.global.cg.v4.f32 / ld.global.cg.v4.f32   (L2 only: the partial crosses SMs)
TMAKIT_DEVICE void st_cg_v4(float4* p, float a, float b, float c, float d) {
  asm volatile("st.global.cg.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(a), "f"(b), "f"(c), "f"(d) : "memory");
}
TMAKIT_DEVICE float4 ld_cg_v4(const float4* p) {
  float4 v;
  asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p)
               : "memory");
  return v;
}

// Reduce-scatter: add the NS - 1 other segments' partials of column part `part` (BN/8/NS 8-column groups, region sl
// of the slot at w) into the accumulators. One uniform branch per part keeps every accumulator index compile-time.
template <int BN, int NS> TMAKIT_DEVICE void add_part(float* acc, const float4* w, int part) {
  constexpr int G = (BN / 8) / NS;
#pragma unroll
  for (int q = 0; q < NS; ++q) {
    if (q != part) continue;
#pragma unroll 1
    for (int sl = 0; sl < NS; ++sl) {
      if (sl == q) continue;
      float4 v[G];
#pragma unroll
      for (int jj = 0; jj < G; ++jj) v[jj] = ld_cg_v4(w + (sl * G + jj) * 128);
#pragma unroll
      for (int jj = 0; jj < G; ++jj) {
        acc[4 * (q * G + jj)] += v[jj].x;
        acc[4 * (q * G + jj) + 1] += v[jj].y;
        acc[4 * (q * G + jj) + 2] += v[jj].z;
        acc[4 * (q * G + jj) + 3] += v[jj].w;
      }
    }
  }
}
