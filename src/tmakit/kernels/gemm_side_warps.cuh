// gemm_side_warps.cuh -- the helper warps of the scaled (fp8) GEMM's producer warpgroup (gemm.cu): each walks the
// producer's work list beside it and stages in shared memory what the consumers would otherwise load from global
// memory. Included by gemm.cu after the work lists (Unit, BK) and gemm_scale.cuh.
#pragma once
#include <tmakit/mbarrier.cuh>
#include <tmakit/types.cuh>

namespace tmakit {
namespace gemm {

// The scales of one unit and the extents that bound their reads: the kernel's (grouped: B's of the unit's group),
// or for the ptr-array kernel its problem's, from the problem array.
struct UnitScales {
  Scales s;
  int m, n;
};
template <class Work>
TMAKIT_DEVICE UnitScales scales_of(const Work&, const Scales& sc, const Unit& t, int M, int N) {
  return {sc.of_group(t.slot), M, N};
}
TMAKIT_DEVICE UnitScales scales_of(const ProblemList& w, const Scales&, const Unit& t, int, int) {
  const long long* p = w.prob + (long long)t.slot * P_FIELDS;
  const Scales s{reinterpret_cast<const float*>(__ldg(p + P_SA)), reinterpret_cast<const float*>(__ldg(p + P_SB)),
                 nullptr, __ldg(p + P_SAM), __ldg(p + P_SAK), __ldg(p + P_SBN), __ldg(p + P_SBK), 0};
  return {s, (int)__ldg(p + P_M), (int)__ldg(p + P_N)};
}

// Warp 1 with block scales (SCALE 3): every slab's scales (BlockScaleLoad, one slab ahead in registers) into the
// stage's scale slot (s_sc + stage * slot_bytes) once the stage is free; the 32 lanes then arrive on the stage's full
// barrier (release: the stores before the consumers' wait). The end stage's phase completes with the producer's
// arrival and these lanes'.
template <int BM, int STAGES, int CS, class Work>
TMAKIT_DEVICE void stage_block_scales(Work& work, const Scales& sc, u32 bars, u32 s_sc, u32 slot_bytes, int M, int N,
                                      int lane) {
  int it = 0, kt = 0;
  auto wait_empty = [&](int s) {
    if (CS > 1) mbarrier_wait_cluster(bars + 8 * (STAGES + s), ((it / STAGES) & 1) ^ 1);
    else mbarrier_wait(bars + 8 * (STAGES + s), ((it / STAGES) & 1) ^ 1);
  };
  BlockScaleLoad<BM> v;
  work.start();
  Unit t;
  bool more = work.next(t);
  if (more) {
    const UnitScales u = scales_of(work, sc, t, M, N);
    v.start(u.s, t.m0, t.n0, t.k0 / BK, u.m, u.n, lane);
    v.load(lane);
  }
  while (more) {
    const int s = it % STAGES;
    wait_empty(s);
    v.store(s_sc + s * slot_bytes, lane);
    mbarrier_arrive(bars + 8 * s);
    ++it;
    if (++kt == t.kt) {
      kt = 0;
      more = work.next(t);
      if (more) {
        const UnitScales u = scales_of(work, sc, t, M, N);
        v.start(u.s, t.m0, t.n0, t.k0 / BK, u.m, u.n, lane);
      }
    } else {
      v.advance();
    }
    if (more) v.load(lane);
  }
  wait_empty(it % STAGES);
  mbarrier_arrive(bars + 8 * (it % STAGES));
}

// Warp 2 with staged epilogue vectors (EPV): every unit's row scales, column scales and bias
// (stage_epilogue_vectors) into slot ui % 2 once the consumers applied unit ui - 2 (the slot's empty barrier at
// epv_bars + 16), then the 32 lanes arrive on its full barrier (release).
template <int SCALE, int BIAS, int OUT, int BM, int BN, class Work>
TMAKIT_DEVICE void stage_unit_vectors(Work& work, const Scales& sc, u32 s_epv, u32 slot_bytes, u32 epv_bars, int M,
                                      int N, int lane) {
  work.start();
  Unit t;
  for (int ui = 0; work.next(t); ++ui) {
    mbarrier_wait(epv_bars + 16 + 8 * (ui & 1), ((ui >> 1) & 1) ^ 1);
    stage_epilogue_vectors<SCALE, BIAS, OUT, BM, BN>(s_epv + (ui & 1) * slot_bytes, sc.of_group(t.slot), t.m0, t.n0,
                                                     M, N, lane);
    mbarrier_arrive(epv_bars + 8 * (ui & 1));
  }
}

}  // namespace gemm
}  // namespace tmakit
