// gemm.cu -- C = A @ B on Hopper: a persistent, warp-specialized TMA + wgmma (SASS HGMMA) GEMM with fp32
// accumulation, clusters of CM x CN CTAs (CM along M share the B tile, CN along N share the A tile, through TMA
// multicast), and an epilogue that goes through 128B-swizzled shared memory to TMA stores (or TMA reduce-adds for
// split-K) overlapped with the next tile.
//
//   A: (M, K) row-major.            map {K, M}, box {64, BM/CN}, SWIZZLE_128B        (K-major smem tile)
//   B, B_MN = 0: Bt (N, K) row-major (b = w.t()).  map {K, N}, box {64, BN/CM}      (K-major smem tile)
//   B, B_MN = 1: (K, N) row-major.  map {N, K}, box {64, 64}: BN/64 boxes per stage (MN-major smem tile)
//   C: (M, N), rows 16-byte aligned. map {N, M}, box {128 / sizeof(out), 64}, SWIZZLE_128B
//   (the grouped kernel along K, KG: A (M, K) M-major, map {M, K}, BM / 64 boxes {64, 64} per stage, MN-major tile)
//
// Threads: 1 + BM/64 warpgroups (BM = 128: 384 threads, BM = 64: 256), __launch_bounds__(.., PER_SM): one CTA per
// SM, or two 64-row CTAs of the scaled kernel (PER_SM = 2, at 128 registers a thread; docs/HARDWARE.md §12);
// grid = min(work units, resident CTAs).
//   warpgroup 0  producer: setmaxnreg.dec 40 or 56; one thread walks the CTA's work units (static schedule: unit =
//                cluster id + i * clusters, grouped rasterization) and their 64-wide K slabs through a STAGES-deep
//                ring: wait empty[s], arm full[s] with the stage's bytes, TMA-load A and B. It hands each unit to the
//                consumers through a shared-memory slot written before the unit's first stage is armed, and ends
//                with a stage completed without data whose slot says "no more units". In a cluster, CTA
//                (rm, rn) = (rank % CM, rank / CM) loads 1/CN of its A tile and multicasts it to the CN CTAs of its
//                tile row, and 1/CM of its B tile, multicast to the CM CTAs of its tile column. The scaled (fp8)
//                kernel gives two of the other warps work on the same units: warp 1 stages block scales per slab
//                (SCALE 3), warp 2 the epilogue's row-wise scales and bias per unit (EPV; gemm_side_warps.cuh).
//   warpgroups 1 .. BM/64  consumers (rows 64 cw .. 64 cw + 63 of the tile): setmaxnreg.inc 224 or 232 (200 at
//                PER_SM = 2); read the
//                unit's slot after its first full barrier; wait full[s], 4 x wgmma m64nBNk16, release empty[s] in
//                every CTA of the cluster; after the last slab, stage the accumulators in 8 KiB swizzled boxes and
//                TMA-store them, draining while the next unit runs. Remainders: loads zero-fill, stores clip.
//   BM = 64 (one consumer): m64n128k16 reads 6 KiB of operands per 128 tensor clocks (two m64n64k16: 8 KiB per 64).
// SPLITK = 1: a work unit is (tile, K range); partial tiles are added into a zeroed fp32 C with TMA reduce-add.
// Stream-K (sk_units > 0, SPLITK = 0): after the `units` whole units, the last sk_units units' K slabs are dealt out
//   as one contiguous range per cluster (no idle SMs in the last wave). The cluster owning a split unit's first slabs
//   (the "head": they end its range) finishes it: the others store fp32 partials to a workspace slot and raise a
//   flag; the head waits for the flags, adds the partials, resets the flags and runs the normal epilogue.
#include <tmakit/cluster.cuh>
#include <tmakit/fence.cuh>
#include <tmakit/griddep.cuh>
#include <tmakit/mbarrier.cuh>
#include <tmakit/smem.cuh>
#include <tmakit/tma.cuh>
#include <tmakit/types.cuh>

#include "gemm_scale.cuh"
#include "gemm_wgmma.cuh"
#include "gemm_wgmma_fp8.cuh"
#include "gemm_wgmma_mn.cuh"

#include "gemm_variants.cuh"

using namespace tmakit;

namespace tmakit {
namespace gemm {

// A K slab (one pipeline stage) is one 128-byte swizzle row of each operand row: 64 bf16/fp16 or 128 fp8 elements.
// One wgmma reads 32 bytes of it (k16 for 16-bit inputs, k32 for fp8): 4 wgmmas per slab. The work list (units,
// K ranges, K, k_per_split, Unit::k0) counts K in 2-byte units, BK = 64 of them per slab, whatever the input type.
constexpr int BK = 64;
constexpr int BK_BYTES = 128;
constexpr u32 EPI_BOX_BYTES = 64 * 128;  // staging box: 64 rows x 128 bytes

// Shared-memory matrix descriptor (wgmma) of a tile written by TMA with SWIZZLE_128B: [0,14) start address >> 4,
// [16,30) leading byte offset >> 4, [32,46) stride byte offset >> 4, [62,64) layout type 1 = SWIZZLE_128B.
// K-major (A, and B with B_MN = 0): rows of 64 K-elements = 128 B, 8-row atoms 1024 B apart (SBO); LBO unused (1).
//   Stepping K by 16 elements inside the 128-byte row adds 32 bytes to the start address.
// MN-major (B with B_MN = 1): TMA boxes of 64 K-rows x 64 N-elements (8 KiB) side by side along N. Within a box,
//   8-row K groups are 1024 B apart (SBO), and the next 64-wide N block is one box further (LBO = 8 KiB).
//   Stepping K by 16 rows adds 2048 bytes. Tile bases are 1024-byte aligned (base-offset field 0).
TMAKIT_DEVICE u64 sw128_desc(u32 smem_addr, u32 lbo, u32 sbo) {
  u64 d = 0;
  d |= (u64)((smem_addr & 0x3FFFF) >> 4);
  d |= (u64)((lbo >> 4) & 0x3FFF) << 16;
  d |= (u64)((sbo >> 4) & 0x3FFF) << 32;
  d |= (u64)1 << 62;
  return d;
}
// The descriptor of a tile `bytes` (a multiple of 16) further on: shared addresses stay below 256 KiB, so the 14-bit
// start-address field (address >> 4) never carries into the next field. One add instead of rebuilding the fields.
TMAKIT_DEVICE u64 desc_plus(u64 desc, u32 bytes) { return desc + (bytes >> 4); }

// PTX: wgmma.fence.sync.aligned;   before the first wgmma and whenever accumulator registers were touched.
TMAKIT_DEVICE void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
// PTX: wgmma.commit_group.sync.aligned;
TMAKIT_DEVICE void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
// PTX: wgmma.wait_group.sync.aligned N;   at most N wgmma groups of this warpgroup still pending.
template <int N> TMAKIT_DEVICE void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory"); }

// PTX: setmaxnreg.{dec,inc}.sync.aligned.u32 N;   (whole warpgroup; needs the __launch_bounds__(.., 1) cap)
template <int N> TMAKIT_DEVICE void setmaxnreg_dec() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N)); }
template <int N> TMAKIT_DEVICE void setmaxnreg_inc() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N)); }

// PTX: bar.sync id, n;   named barrier over n threads (id 0 is __syncthreads).
TMAKIT_DEVICE void named_sync(u32 id, u32 n) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory"); }

// PTX: st.shared.v2.f32 [addr], {x, y};
TMAKIT_DEVICE void st_shared_v2f32(u32 addr, float x, float y) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(addr), "f"(x), "f"(y));
}

// Two fp32 -> one packed 32-bit word of the output type (lo = first element). PTX: cvt.rn.{bf16x2,f16x2}.f32
template <int OUT> TMAKIT_DEVICE u32 pack2(float lo, float hi);
template <> TMAKIT_DEVICE u32 pack2<0>(float lo, float hi) {
  u32 r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
template <> TMAKIT_DEVICE u32 pack2<1>(float lo, float hi) {
  u32 r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

#include "gemm_work.cuh"
#include "gemm_stream_k.cuh"

}  // namespace gemm
}  // namespace tmakit

#include "gemm_group.cuh"
#include "gemm_side_warps.cuh"

// IN: the input types, 0 = bf16, 1 = fp16, 2..5 = fp8 A x B: e4m3 x e4m3, e4m3 x e5m2, e5m2 x e4m3, e5m2 x e5m2
// (fp8: B_MN = 0 only, both operands K-major). OUT: 0 = bf16, 1 = fp16, 2 = fp32. BM in {64, 128}, BN in {64, 128, 256}.
// CM, CN: CTAs per cluster along M and N (1, 2 or 4; CM * CN <= 4). B_MN: 0 = B given K-major (Bt (N, K) row-major), 1 = B (K, N)
// row-major. SPLITK needs OUT = 2.
// OVERLAP = 1: wait_group 1 instead of 0, so one slab's wgmmas run while the next slab is issued; a stage is released
// one slab later. EPI: 8 KiB staging boxes per consumer warpgroup; with EPI >= BN / (128 / sizeof(out)) a whole
// tile is staged at once (2 named barriers per tile instead of 2 per box). DEFER = 1: 16-bit outputs with streamed
// staging boxes are written during the next tile's first slabs (see "Deferred epilogue" below).
// SCALE (gemm_scale.cuh): 0 none, 1 per tensor, 2 per row of A and column of B (both in the epilogue), 3 block-wise
// (each 128-deep slab's partial sum scaled into the fp32 total in registers). BIAS = 1: add bias[col] (of the
// output type) in the epilogue. FAST = 0 (fp8): two-level accumulation for every SCALE (see TWO below).
// gemm.cu compiles as tmakit_gemm (SCALE = BIAS = 0); gemm_fp8.cu compiles the same kernel as tmakit_gemm_scaled:
// template arguments IN, OUT, BM, BN, STAGES, CM, CN, OVERLAP, EPI, DEFER, SCALE, BIAS, FAST, EPV (B_MN = SPLITK = 0,
// no k_rotate) and, after tmakit_gemm's arguments, the scales and bias (tmakit::gemm::Scales). EPV = 1: the
// epilogue's row-wise scales and bias are staged in shared memory per unit by warp 2 (below).
#if TMAKIT_GEMM_SCALED
template <int IN, int OUT, int BM, int BN, int STAGES, int CM, int CN, int OVERLAP, int EPI, int DEFER, int SCALE,
          int BIAS, int FAST, int EPV, int PER_SM>
__global__ void __launch_bounds__(128 * (1 + BM / 64), PER_SM)
tmakit_gemm_scaled(const __grid_constant__ TmaDesc tm_a, const __grid_constant__ TmaDesc tm_b,
                   const __grid_constant__ TmaDesc tm_c, int M, int N, int K, int group_m, int k_per_split,
                   int units, int sk_units, int maxseg, float4* __restrict__ sk_ws, u32* __restrict__ sk_flags,
                   int scatter, const float* scale_a, const float* scale_b, const void* bias, long long a_m,
                   long long a_k, long long b_n, long long b_k, const __grid_constant__ TmaDesc tm_sa,
                   const __grid_constant__ TmaDesc tm_sb) {
  constexpr int B_MN = 0, SPLITK = 0, k_rotate = 0, IDLE = 0, KG = 0;
  TmaDesc* const maps = nullptr;
  const tmakit::gemm::Scales sc{scale_a, scale_b, bias, a_m, a_k, b_n, b_k};
#elif TMAKIT_GEMM_GROUPED
// Grouped (torch._grouped_mm's 2-D A x 3-D B): A (M, K) rows grouped by offs, B (groups, N, K) K-major or (groups,
// K, N) row-major (B_MN), C (M, N); single CTAs or pairs along M (CM = 2, B multicast), whole-K units from
// GroupList. Tiles inside a group use the TMA store; a tile that the group's end cuts stores its group's rows with
// plain predicated stores (the TMA store would also write the next group's rows).
// fp8 (IN >= 2): SCALE 2 (scale_a per row of A, scale_b per column of B[g]: b + g * b_g) or 3 (block-wise, B's
// blocks of group g from b + g * b_g), two-level accumulation unless FAST; 16-bit inputs: SCALE = 0, FAST = 1.
// DEFER (16-bit inputs and outputs): the dense kernel's deferred epilogue for the tiles that go out through TMA
// stores; a tile that the group's end cuts is stored at once, while the previous tile's boxes may still be pending.
// IDLE (128-row tiles): on a group's only row tile, a consumer whose 64 rows lie past the group's end skips it.
// KG = 1: grouped along K (torch._grouped_mm's 2-D x 2-D, weight gradients): A (Mg, K) M-major, B (K, N) row-major
// (B_MN = 1), group g owns the K rows [offs[g-1], offs[g]) of both and the C rows [g Mg, (g + 1) Mg) (M = groups
// Mg). A loads as MN-major boxes of 64 K-rows x 64 M-elements (wgmma imm-trans-a). The producer points per-CTA copies
// of the A and B maps at each group's end row (extent K = offs[g]: the rows past it, the next group's, load as
// zeros; docs/HARDWARE.md §6) in `maps` (as the ptr-array kernel does, two slots alternated); an empty group
// multiplies one slab of zeros.
template <int IN, int OUT, int BM, int BN, int STAGES, int CM, int B_MN, int OVERLAP, int EPI, int SCALE, int FAST,
          int EPV, int DEFER, int IDLE, int KG>
__global__ void __launch_bounds__(128 * (1 + BM / 64), 1)
tmakit_gemm_grouped(const __grid_constant__ TmaDesc tm_a, const __grid_constant__ TmaDesc tm_b,
                    const __grid_constant__ TmaDesc tm_c, int M, int N, int K, const int* __restrict__ offs,
                    int groups, u8* __restrict__ c_ptr, long long ldc, const float* scale_a, const float* scale_b,
                    long long a_m, long long a_k, long long b_n, long long b_k, long long b_g,
                    TmaDesc* __restrict__ maps) {
  constexpr int CN = 1, SPLITK = 0, BIAS = 0, k_rotate = 0, PER_SM = 1;
  static_assert(SCALE == 0 || SCALE == 2 || SCALE == 3, "grouped: no scales, row-wise or block-wise");
  static_assert(!KG || (IN < 2 && B_MN && CM == 1 && !IDLE), "grouped along K: 16-bit inputs, B row-major, "
                "single CTAs, no idle consumers");
  static_assert(!IDLE || (BM == 128 && !OVERLAP), "idle consumers: 128-row tiles without overlap");
  static_assert(!DEFER || SCALE == 0, "grouped: the deferred epilogue for 16-bit inputs");
  const tmakit::gemm::Scales sc{scale_a, scale_b, nullptr, a_m, a_k, b_n, b_k, b_g};
  const TmaDesc &tm_sa = tm_a, &tm_sb = tm_a;  // block scales by TMA: dense kernel only
  const int group_m = 1, k_per_split = K, units = 0, sk_units = 0, maxseg = 0, scatter = 0;
  float4* const sk_ws = nullptr;
  u32* const sk_flags = nullptr;
#elif TMAKIT_GEMM_PTRARRAY
// Ptr-array (CUTLASS's grouped GEMM): problem g is C_g = A_g @ B_g with its own shapes, pointers and strides
// (gemm_group.cuh's Problem fields). The producer points per-CTA copies of the A and B template maps at each new
// problem on the device (switch_map: two slots per operand, alternated, each rewritten only after the loads that
// last used it were consumed); C tiles go out with predicated st.global (no C map) at c_base + the problem's C
// field (c_base = 0: addresses; else the base of one buffer holding every output, the fields their byte offsets,
// so new outputs per call need no new problem array). fp8 (IN >= 2, B K-major):
// SCALE 1 (one scale_a, one scale_b per problem), 2 (row-wise: scale_a per row of A_g, scale_b per column of B_g)
// or 3 (block-wise, staged per slab by the scale warp), each problem's scales from its row of the problem array;
// two-level accumulation unless FAST.
template <int IN, int OUT, int BM, int BN, int STAGES, int B_MN, int OVERLAP, int EPI, int SCALE, int FAST>
__global__ void __launch_bounds__(128 * (1 + BM / 64), 1)
tmakit_gemm_ptr_array(const __grid_constant__ TmaDesc tm_a, const __grid_constant__ TmaDesc tm_b,
                      const __grid_constant__ TmaDesc tm_c, const long long* __restrict__ problems, int groups,
                      TmaDesc* __restrict__ maps, unsigned long long c_base) {
  constexpr int CM = 1, CN = 1, SPLITK = 0, DEFER = 0, BIAS = 0, EPV = 0, k_rotate = 0, PER_SM = 1, IDLE = 0, KG = 0;
  static_assert(IN >= 2 ? SCALE >= 1 && SCALE <= 3 && !(SCALE == 3 && FAST) : SCALE == 0 && FAST, "ptr-array: "
                "16-bit inputs without scales, or fp8 with per-tensor, row-wise or block-wise scales (two-level)");
  const tmakit::gemm::Scales sc{};
  const TmaDesc &tm_sa = tm_a, &tm_sb = tm_a;
  const int M = 0x7fffffff, N = 0x7fffffff, K = 0, group_m = 1, k_per_split = 0, units = 0, sk_units = 0;
  const int maxseg = 0, scatter = 0;
  float4* const sk_ws = nullptr;
  u32* const sk_flags = nullptr;
  u8* const c_ptr = nullptr;
  const long long ldc = 0;
#else
template <int IN, int OUT, int BM, int BN, int STAGES, int CM, int CN, int B_MN, int SPLITK, int OVERLAP, int EPI,
          int DEFER>
__global__ void __launch_bounds__(128 * (1 + BM / 64), 1)
tmakit_gemm(const __grid_constant__ TmaDesc tm_a, const __grid_constant__ TmaDesc tm_b,
            const __grid_constant__ TmaDesc tm_c, int M, int N, int K, int group_m, int k_per_split, int units,
            int sk_units, int maxseg, float4* __restrict__ sk_ws, u32* __restrict__ sk_flags, int k_rotate,
            int scatter) {
  constexpr int SCALE = 0, BIAS = 0, FAST = 1, EPV = 0, PER_SM = 1, IDLE = 0, KG = 0;
  TmaDesc* const maps = nullptr;
  const tmakit::gemm::Scales sc{};
  const TmaDesc &tm_sa = tm_a, &tm_sb = tm_a;
#endif
  static_assert(!SPLITK || OUT == 2, "split-K accumulates in fp32");
  static_assert(IN < 2 || (!B_MN && !SPLITK), "fp8: B K-major (Bt (N, K) row-major), no split-K reduce-add");
  // Two-level accumulation (fp8 without FAST, always for block scaling): each slab's wgmmas sum into a second set
  // (pacc), added (scaled, SCALE 3) into the fp32 total once done. FAST: one reduced-precision chain over all of K.
  // Block scales: SCALE 3 staged per stage by the scale warp; 4 / 5 loaded per stage by the producer's TMA from A's
  // scales K-major / M-major and B's K-major (gemm_scale.cuh "Block scaling").
  constexpr bool BLK = SCALE >= 3, SC_TMA = SCALE >= 4;
  constexpr bool TWO = BLK || (IN >= 2 && !FAST);
  // TWO with OVERLAP (tensor / row scales, BN <= 128): slabs alternate between two partial sets, one slab's wgmmas
  // running while the previous slab's partial sums are added (three sets in registers).
  static_assert(!TWO || (IN >= 2 && BN <= 192 && (!OVERLAP || (!BLK && BN <= 128))),
                "two-level accumulation: fp8, BN <= 192 (two accumulator sets in registers); with overlap BN <= 128 "
                "(three sets) and no block scaling");
  constexpr bool TWO_OV = TWO && OVERLAP;
  static_assert(!BLK || BN == 64 || BN == 128 || BN == 192, "block scaling: 64-, 128- or 192-column tiles");
  static_assert(BM == 64 || BM == 128, "tile rows: one or two consumer warpgroups of 64");
  constexpr int NC = BM / 64;  // consumer warpgroups
  constexpr int CS = CM * CN;  // CTAs per cluster
  static_assert((CM == 1 || CM == 2 || CM == 4) && (CN == 1 || CN == 2 || CN == 4) && CS <= 4, "cluster shape");
  static_assert(!B_MN || (BN / 64) % CM == 0, "row-major B: equal shares of 64-wide boxes per CTA");
  using namespace tmakit::gemm;
  constexpr int EB = IN >= 2 ? 1 : 2;  // input element bytes (K, k_per_split: 2-byte units, see BK)
  constexpr u32 A_BYTES = BM * BK_BYTES;
  constexpr u32 B_BYTES = BN * BK_BYTES;
  constexpr int OUT_BYTES = OUT == 2 ? 4 : 2;
  constexpr int BOX_COLS = 128 / OUT_BYTES;  // output columns per 128-byte staging row
  constexpr int NBOX = BN / BOX_COLS;
  constexpr int JPB = BOX_COLS / 8;          // 8-column accumulator groups per staging box
  constexpr u32 B_LBO = B_MN ? 64 * 128 : 16, B_SBO = 1024;
  constexpr u32 B_KSTEP = B_MN ? 16 * 128 : 32;  // bytes per wgmma K step (16 elements; fp8: 32) in a B stage
  constexpr u32 A_LBO = KG ? 64 * 128 : 16, A_KSTEP = KG ? 16 * 128 : 32;  // A MN-major (KG): as B's
  constexpr int TRANS = B_MN + 2 * KG;  // wgmma imm-trans-b, imm-trans-a

  constexpr bool DEF = DEFER && OUT != 2 && EPI < NBOX;  // deferred epilogue (below)
  // setmaxnreg split of the 64 K registers of a 384-thread CTA (launched at 168 each): the producer gives up exactly
  // what the consumers take. The deferred epilogue's consumers hold the packed tile too: 232 for them, 40 for the
  // producer; otherwise 224 / 56 (the producer's stream-K work list fits 56 without spills). 256-thread CTAs (one
  // consumer) have registers to spare: 56 / 232.
  // Two 256-thread CTAs per SM (PER_SM = 2, one consumer each: the two consumers' wgmmas interleave on the SM's
  // tensor cores as a 128-row tile's do) are launched at 128 registers each: 56 / 200.
  static_assert(PER_SM == 1 || (PER_SM == 2 && NC == 1), "two CTAs per SM: 64-row tiles (one consumer)");
  constexpr int P_REGS = NC == 1 || !DEF ? 56 : 40;
  constexpr int C_REGS = PER_SM == 2 ? 200 : NC == 2 && !DEF ? 224 : 232;
  extern __shared__ __align__(1024) u8 gemm_smem[];
  const u32 base = (smem_u32(gemm_smem) + 1023u) & ~1023u;
  const u32 s_a = base;
  const u32 s_b = s_a + STAGES * A_BYTES;
  const u32 s_epi = s_b + STAGES * B_BYTES;
  const u32 bars = s_epi + NC * EPI * EPI_BOX_BYTES;  // full[STAGES], then empty[STAGES]
  // STAGES + 1 unit slots (unit i in slot i % (STAGES + 1)). The producer writes a slot after the empty wait of the
  // unit's first slab; every unit has >= 1 slab, so that wait needs the consumers' release of a slab of a later unit
  // than the slot's previous occupant, whose slot they read before its first slab.
  const u32 slots = bars + 16 * STAGES;
  // Block scaling: each stage's scales (BM rows of A, two B blocks) after the slots (gemm_scale.cuh).
  constexpr u32 SC_BYTES = SCALE == 3 ? scale_stage_bytes<BM>() : SC_TMA ? scale_tma_stage_bytes<SCALE, BM>() : 0;
  const u32 s_sc = SC_TMA ? (slots + 32 * (STAGES + 1) + 127u) & ~127u : slots + 32 * (STAGES + 1);
  // Staged epilogue vectors (EPV): two slots (units alternate) of the unit's row scales, column scales and bias as
  // fp32 (gemm_scale.cuh), then full[2] and empty[2] mbarriers.
  static_assert(!EPV || SCALE == 2 || BIAS, "staged epilogue vectors: row-wise scales or a bias");
  constexpr u32 EPV_BYTES = EPV ? epilogue_vector_bytes<SCALE, BIAS, BM, BN>() : 0;
  const u32 s_epv = s_sc + STAGES * SC_BYTES;
  const u32 epv_bars = s_epv + 2 * EPV_BYTES;

  const int tid = threadIdx.x;
  // The warpgroup index through a shuffle: the compiler then knows it (and all the role's loop state derived from
  // it) is warp-uniform and keeps that state in uniform registers; from tid / 128 it put the mainloop's stage
  // indices and wgmma descriptors in per-thread registers, converted (R2UR) before every wgmma (FP8 two-level
  // 5-7 % slower, bf16 1-4 %; docs/HARDWARE.md §10).
  const int wg = __shfl_sync(0xffffffffu, tid / 128, 0);
  const int rank = CS == 1 ? 0 : (int)cluster_ctarank();
  const int rm = rank % CM, rn = rank / CM;
  const int cid = blockIdx.x / CS, ncl = gridDim.x / CS;
  // K in 2-byte units (BK per slab): fp8 K elements are half as many units
  const int KU = EB == 2 ? K : (K + 1) / 2, kpsu = EB == 2 ? k_per_split : (k_per_split + 1) / 2;
#if TMAKIT_GEMM_GROUPED
  GroupList work{offs, groups, M, N, KU, BM, BN, cid, ncl, rm, CM, KG};
#elif TMAKIT_GEMM_PTRARRAY
  ProblemList work{problems, groups, BM, BN, cid, ncl, EB};
#else
  WorkList work{rm, rn, CM, CN, BM, BN, M, N, KU, group_m, kpsu, units, SPLITK ? 0 : sk_units, cid, ncl,
                (KU + BK - 1) / BK};
#endif

  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbarrier_init(bars + 8 * s, SCALE == 3 && !TMAKIT_GEMM_BLOCK_PROBE ? 1 + 32 : 1);  // block scales: + the scale warp's lanes
      mbarrier_init(bars + 8 * (STAGES + s), 4 * NC * CS * (BLK ? 32 : 1));  // block scales: every lane
    }
    if (EPV) {
      for (int i = 0; i < 2; ++i) {
        mbarrier_init(epv_bars + 8 * i, 32);             // full: the staging warp's lanes
        mbarrier_init(epv_bars + 16 + 8 * i, 128 * NC);  // empty: every consumer lane (its own shared loads)
      }
    }
    fence_mbarrier_init();
    prefetch_tensormap(&tm_a);
    prefetch_tensormap(&tm_b);
    prefetch_tensormap(&tm_c);
    if (SC_TMA) {
      prefetch_tensormap(&tm_sa);
      prefetch_tensormap(&tm_sb);
    }
  }
  if (CS > 1) cluster_sync(); else __syncthreads();
  // Programmatic dependent launch: the prologue above may overlap the previous kernel's tail; nothing below touches
  // global memory before that kernel is done. No explicit launch_dependents: the next kernel is released as our CTAs
  // exit (an early trigger measured 18 % slower back-to-back; docs/design/gemm.md).
  griddep_wait();

  if (wg == 0) {
    setmaxnreg_dec<P_REGS>();
    if (tid == 0) {
      u16 mask_a = 0;  // the CN CTAs of this tile row, the CM CTAs of this tile column
#pragma unroll
      for (int j = 0; j < CN; ++j) mask_a |= (u16)(1u << (rm + CM * j));
      const u16 mask_b = (u16)(((1u << CM) - 1) << (CM * rn));
      int it = 0, ui = 0;
      work.start();
      Unit t;
      const TmaDesc* pa = &tm_a;  // the maps the loads go through (ptr-array: this CTA's slot of the problem's maps)
      const TmaDesc* pb = &tm_b;
#if TMAKIT_GEMM_PTRARRAY || TMAKIT_GEMM_GROUPED
      int cur_g = -1, nsw = 0, last_it[2] = {-1, -1};
      const u32 smap = (s_sc + STAGES * SC_BYTES + 127u) & ~127u;  // two 128-byte maps being edited
      // This CTA's other pair of map slots (A, B), once the last load through it was consumed: slots alternate, and
      // one is rewritten only after the stage of its last load was released (gemm_group.cuh's switch_map).
      auto free_slots = [&]() -> TmaDesc* {
        const int sl = nsw & 1;
        const int j = last_it[sl];
        if (j >= 0 && it <= j + STAGES) mbarrier_wait(bars + 8 * (STAGES + j % STAGES), (j / STAGES) & 1);
        return maps + (cid * 2 + sl) * 2;
      };
      auto load_through = [&](TmaDesc* ga, int slot) {  // the unit's loads go through the rewritten pair
        pa = ga;
        pb = ga + 1;
        cur_g = slot;
        ++nsw;
      };
#endif
      auto wait_empty = [&](int s) {
        if (CS > 1) mbarrier_wait_cluster(bars + 8 * (STAGES + s), ((it / STAGES) & 1) ^ 1);
        else mbarrier_wait(bars + 8 * (STAGES + s), ((it / STAGES) & 1) ^ 1);
      };
      for (; work.next(t); ++ui) {
#if TMAKIT_GEMM_PTRARRAY
        if (t.slot != cur_g) {  // a new problem: repoint this CTA's other map slots at its operands
          TmaDesc* ga = free_slots();
          const long long* pg = problems + (long long)t.slot * P_FIELDS;
          const int m = (int)pg[P_M], n = (int)pg[P_N], k = (int)pg[P_K];
          switch_map(smap, &tm_a, ga, (u64)pg[P_A], (u32)k, (u32)m, (u64)pg[P_LDA] * EB);
          if (B_MN) switch_map(smap + 128, &tm_b, ga + 1, (u64)pg[P_B], (u32)n, (u32)k, (u64)pg[P_LDB] * EB);
          else switch_map(smap + 128, &tm_b, ga + 1, (u64)pg[P_B], (u32)k, (u32)n, (u64)pg[P_LDB] * EB);
          load_through(ga, t.slot);
        }
        last_it[(nsw - 1) & 1] = it + t.kt - 1;
#elif TMAKIT_GEMM_GROUPED
        if (KG && t.slot != cur_g) {  // a new group: the other map slots end A's and B's rows at its end
          TmaDesc* ga = free_slots();
          const u32 kend = (u32)max(work.rend, 1);  // an extent of at least 1 (an empty group loads past it)
          switch_map_extent1(smap, &tm_a, ga, kend);
          switch_map_extent1(smap + 128, &tm_b, ga + 1, kend);
          load_through(ga, t.slot);
        }
        if (KG) last_it[(nsw - 1) & 1] = it + t.kt - 1;
#endif
        wait_empty(it % STAGES);  // the unit's first slab
        // IDLE: on its group's only row tile, consumer c skips the unit if its 64 rows all lie past the group's end
        const u32 idle = IDLE && t.nseg == 1 ? (t.m0 >= min(M, t.su)) | (t.m0 + 64 >= min(M, t.su)) << 1 : 0u;
        put_unit(slots + 32 * (ui % (STAGES + 1)), t, idle);  // published by the stage's arrive (release)
        // k_rotate: each cluster starts its K loop at its own slab (cid / ncl of the way), so the clusters do not all
        // read the same A slab from one L2 slice at once (one tile row: every CTA shares A). Sum order only changes.
        const int rot = k_rotate ? (int)((long long)cid * t.kt / ncl) : 0;
        for (int kt = 0; kt < t.kt; ++kt, ++it) {
          const int s = it % STAGES;
          const u32 full = bars + 8 * s;
          if (kt > 0) wait_empty(s);
          mbarrier_arrive_expect_tx(full, A_BYTES + B_BYTES + (SC_TMA ? scale_tma_box_bytes<SCALE, BM>() : 0u));
          const int kr = kt + rot < t.kt ? kt + rot : kt + rot - t.kt;
          const int k = (t.k0 + kr * BK) * (2 / EB);  // in elements
          if constexpr (KG) {  // A MN-major: BM / 64 boxes of 64 K-rows x 64 M-elements at the tile's row in its group
            const int am = t.m0 - t.slot * group_rows(work);
#pragma unroll
            for (int i = 0; i < BM / 64; ++i) tma_load_tile<2>(s_a + s * A_BYTES + i * 8192, pa, full, am + 64 * i, k);
          } else if (CN > 1) {
            tma_load_tile_mc<2>(s_a + s * A_BYTES + rn * (A_BYTES / CN), pa, full, mask_a, k,
                                t.m0 + rn * (BM / CN));
          } else {
            tma_load_tile<2>(s_a + s * A_BYTES, pa, full, k, t.m0);
          }
          const u32 sb = s_b + s * B_BYTES;
          if (B_MN) {
            constexpr int NB = BN / 64, PER = NB / CM;
#pragma unroll
            for (int i = rm * PER; i < rm * PER + PER; ++i) {
              if (KG) tma_load_tile<2>(sb + i * 8192, pb, full, t.n0 + 64 * i, k);  // B (K, N): one matrix
              else if (CM > 1 && TMAKIT_GEMM_GROUPED)
                tma_load_tile_mc<3>(sb + i * 8192, pb, full, mask_b, t.n0 + 64 * i, k, t.slot);
              else if (CM > 1) tma_load_tile_mc<2>(sb + i * 8192, pb, full, mask_b, t.n0 + 64 * i, k);
              else if (TMAKIT_GEMM_GROUPED) tma_load_tile<3>(sb + i * 8192, pb, full, t.n0 + 64 * i, k, t.slot);
              else tma_load_tile<2>(sb + i * 8192, pb, full, t.n0 + 64 * i, k);
            }
          } else if (CM > 1) {
            if (TMAKIT_GEMM_GROUPED)  // B[group]: the pair's two CTAs run the same group and column tile
              tma_load_tile_mc<3>(sb + rm * (B_BYTES / CM), pb, full, mask_b, k, t.n0 + rm * (BN / CM), t.slot);
            else
              tma_load_tile_mc<2>(sb + rm * (B_BYTES / CM), pb, full, mask_b, k, t.n0 + rm * (BN / CM));
          } else if (TMAKIT_GEMM_GROUPED) {
            tma_load_tile<3>(sb, pb, full, k, t.n0, t.slot);  // B[group]
          } else {
            tma_load_tile<2>(sb, pb, full, k, t.n0);
          }
          // block scales after the operands: the slab's bytes are requested first
          if constexpr (SC_TMA) load_block_scales<SCALE, BM>(s_sc + s * SC_BYTES, &tm_sa, &tm_sb, full, k, t.m0, t.n0);
        }
      }
      // the end: one more stage completes without data and its slot says kt = 0
      const int s = it % STAGES;
      wait_empty(s);
      put_end(slots + 32 * (ui % (STAGES + 1)));
      mbarrier_arrive(bars + 8 * s);
    } else if (SCALE == 3 && !TMAKIT_GEMM_BLOCK_PROBE && tid / 32 == 1) {  // the scale warp: the same units and slabs (gemm_side_warps.cuh)
      stage_block_scales<BM, STAGES, CS>(work, sc, bars, s_sc, SC_BYTES, M, N, tid % 32);
    } else if (EPV && tid / 32 == 2) {  // the epilogue-vector warp: the same units (gemm_side_warps.cuh)
      stage_unit_vectors<SCALE, BIAS, OUT, BM, BN>(work, sc, s_epv, EPV_BYTES, epv_bars, M, N, tid % 32);
    }
  } else {
    setmaxnreg_inc<C_REGS>();
    const int cw = wg - 1;  // consumer 0 / 1: rows [64 cw, 64 cw + 64) of the tile
    const int wtid = tid % 128;
    const int warp = wtid / 32, lane = tid % 32;
    const u32 a_off = cw * 64 * BK_BYTES;
    const u32 epi = s_epi + cw * EPI * EPI_BOX_BYTES;
    float acc[BN / 2];
    float pacc[TWO ? BN / 2 : 1];  // two-level accumulation: the slab's partial sums (acc holds the total)
    float pacc2[TWO_OV ? BN / 2 : 1];  // ... and the odd slabs' with overlap
    int it = 0, ebox = 0;
    // one arrival per consumer warp (per lane with block scales, whose shared loads each lane makes) on a stage's
    // empty barrier, in every CTA of the cluster; predicated in PTX, not
    // branched, so no divergent path separates in-flight wgmmas from their accumulators
    auto release = [&](u32 empty, bool pred = true) {
      const bool p = pred && (BLK || lane == 0);  // block scales: each lane's own shared loads released
      mbarrier_arrive_if(empty, p);
#pragma unroll
      for (int d = 1; d < CS; ++d) mbarrier_arrive_remote_cta_if(empty, (rank + d) % CS, p);
    };
    // Deferred epilogue (DEFER, 16-bit output, staging boxes streamed): a tile's accumulators are packed into
    // bf16x2 / f16x2 registers after its last slab, and its boxes are written to shared memory and stored one per
    // slab of the next tile, while that slab's wgmmas run: the tensor cores do not wait for the epilogue.
    // (fp32 outputs keeping half a tile in those registers measured no gain; docs/design/gemm.md.)
    u32 pk[DEF ? BN / 4 : 1];
    int pb = NBOX, pe = NBOX, pm0 = 0, pn0 = 0;  // the pending tile's next and end box (pb = pe: none), row, column
    auto flush_next = [&]() {         // write and store box pb of the pending tile (uniform over the warpgroup)
      if constexpr (DEF) {
#pragma unroll
        for (int b = 0; b < NBOX; ++b) {
          if (b != pb || pn0 + b * BOX_COLS >= N) continue;
          const u32 box = epi + (ebox % EPI) * EPI_BOX_BYTES;
          ++ebox;
          if (wtid == 0) bulk_wait_group_read<EPI - 1>();  // the store that last read this box is done
          named_sync(1 + cw, 128);
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int r = warp * 16 + lane / 4 + 8 * h;
#pragma unroll
            for (int jj = 0; jj < JPB; ++jj)
              sts4(box + r * 128 + ((jj ^ (r % 8)) << 4) + 4 * (lane % 4), pk[2 * (b * JPB + jj) + h]);
          }
          fence_proxy_async_smem();
          named_sync(1 + cw, 128);
          if (wtid == 0) {
            tma_store_tile<2>(&tm_c, box, pn0 + b * BOX_COLS, pm0);
            bulk_commit_group();
          }
        }
        ++pb;
      }
    };
    // Descriptors are built once and advanced by adds, and the first wgmma of a tile ignores the accumulators
    // (scale-d = 0) instead of zeroing them first: a tile boundary is covered only by the other warpgroup's last slab.
    // Every unit has at least one K slab (the host launches nothing for K = 0 and never makes an empty K range).
    const u64 desc_a0 = sw128_desc(s_a + a_off, A_LBO, 1024);
    const u64 desc_b0 = sw128_desc(s_b, B_LBO, B_SBO);
    // The producer's units, read from their slots: no per-tile index arithmetic here. Only the slab count is held
    // through the mainloop; the rest is read again after it (the slot is not rewritten before the consumers release
    // the next unit's first slab).
    for (int ui = 0;; ++ui) {
      const u32 uslot = slots + 32 * (ui % (STAGES + 1));
      mbarrier_wait_spin(bars + 8 * (it % STAGES), (it / STAGES) & 1);  // the unit's first slab (or the end)
      const int kinfo = get_unit_kt(uslot);
      const int nkt = kinfo & 0xFFFFFF;
      if (nkt == 0) break;
      // IDLE (grouped): on the only row tile of its group, a consumer whose 64 rows all lie past the group's end
      // issues no wgmmas for the unit, releasing each slab once it is full; its epilogue stores nothing, and the
      // other consumer has the tensor cores to itself. Not on a group's last tile of several: that tile would run
      // ahead of the tiles reading the same B slabs, which then come from DRAM again (docs/GROUPED.md). A loop of its
      // own: a branch around the wgmmas inside the slab loop makes ptxas serialize them (C7515), as it does with
      // overlap whatever the loop.
      const bool idle = IDLE && (kinfo >> (24 + cw)) & 1;  // set by the producer (put_unit)
      if (idle) {
        for (int kt = 0; kt < nkt; ++kt, ++it) {
          mbarrier_wait_spin(bars + 8 * (it % STAGES), (it / STAGES) & 1);
          release(bars + 8 * (STAGES + it % STAGES));
          if constexpr (DEF) {
            if (pb < pe) flush_next();
          }
        }
      } else {
        BlockScale<BLK ? BN : 128> bsc;
        if constexpr (BLK) bsc.start(get_unit(uslot).n0, SC_TMA ? get_unit_k0(uslot) / BK : 0);
        if constexpr (TWO) {  // the total starts at zero, so a promotion adds without a select per element
#pragma unroll
          for (int i = 0; i < BN / 2; ++i) acc[i] = 0.f;
        }
        bool ready = false;  // this slab's stage was seen full while the previous slab's wgmmas ran
        for (int kt = 0; kt < nkt; ++kt, ++it) {
          const int s = it % STAGES;
          // TMAKIT_GEMM_TRACE: lane 0 of each consumer's first warp in CTA 0 writes clock64() for its first 512 slabs
          // into the workspace (the tool passes a buffer and no stream-K): loop top, stage seen full, wgmmas waited
          // for, promoted.
          long long* const trace = TMAKIT_GEMM_TRACE && blockIdx.x == 0 && wtid == 0 && it < 512 && sk_ws
                                       ? reinterpret_cast<long long*>(sk_ws) + (cw * 512 + it) * 4 : nullptr;
          if (TMAKIT_GEMM_TRACE && trace) trace[0] = clock64();
          if (!ready) mbarrier_wait_spin(bars + 8 * s, (it / STAGES) & 1);
          if (TMAKIT_GEMM_TRACE && trace) trace[1] = clock64();
          wgmma_fence();
          const u64 da = desc_plus(desc_a0, s * A_BYTES), db = desc_plus(desc_b0, s * B_BYTES);
#pragma unroll
          for (int k = 0; k < BK_BYTES / 32; ++k) {  // 32 bytes of K per wgmma (k16 for 16-bit inputs, k32 for fp8)
            if constexpr (TMAKIT_GEMM_NO_MMA) {
            } else if constexpr (TWO_OV) {
              if (kt & 1) Wgmma<BN, IN, TRANS>::mma(pacc2, desc_plus(da, k * A_KSTEP), desc_plus(db, k * B_KSTEP),
                                                    k > 0);
              else Wgmma<BN, IN, TRANS>::mma(pacc, desc_plus(da, k * A_KSTEP), desc_plus(db, k * B_KSTEP), k > 0);
            } else if constexpr (TWO) {
              Wgmma<BN, IN, TRANS>::mma(pacc, desc_plus(da, k * A_KSTEP), desc_plus(db, k * B_KSTEP), k > 0);
            } else {
              Wgmma<BN, IN, TRANS>::mma(acc, desc_plus(da, k * A_KSTEP), desc_plus(db, k * B_KSTEP),
                                        kt > 0 || k > 0);
            }
          }
          wgmma_commit();
          if (kt + 1 < nkt)  // probe the next slab's stage now, not after this slab's wgmmas are waited for
            ready = mbarrier_test_wait_parity(bars + 8 * ((it + 1) % STAGES), ((it + 1) / STAGES) & 1);
          if constexpr (BLK)  // this slab's scales (before the stage is released), once its wgmmas are issued
            bsc.template load<BM, SCALE>(s_sc + s * SC_BYTES, cw * 64 + 16 * warp + lane / 4, kt);
          if constexpr (DEF) {  // one box of the previous tile while this slab's wgmmas run
            if (pb < pe) flush_next();
          }
          if (OVERLAP) {  // keep this slab's wgmmas in flight; the previous slab's are done: release its stage
            wgmma_wait<1>();
            release(bars + 8 * (STAGES + (it + STAGES - 1) % STAGES), kt > 0);
            if constexpr (TWO_OV) {  // the previous slab's partial sums (in the other set) into the total
              if (kt & 1) promote_sum<BN>(acc, pacc);
              else if (kt > 0) promote_sum<BN>(acc, pacc2);
            }
          } else {
            wgmma_wait<0>();
            release(bars + 8 * (STAGES + s));
          }
          if (TMAKIT_GEMM_TRACE && trace) trace[2] = clock64();
          if constexpr (BLK) bsc.promote(acc, pacc);
          else if constexpr (TWO && !TWO_OV) promote_sum<BN>(acc, pacc);
          if (TMAKIT_GEMM_TRACE && trace) trace[3] = clock64();
        }
        if (OVERLAP) {
          wgmma_wait<0>();
          release(bars + 8 * (STAGES + (it + STAGES - 1) % STAGES));
          if constexpr (TWO_OV) {  // the last slab
            if ((nkt - 1) & 1) promote_sum<BN>(acc, pacc2);
            else promote_sum<BN>(acc, pacc);
          }
        }
      }
      if constexpr (DEF) {  // a tile shorter than NBOX slabs: the rest of the previous tile's boxes now
        while (pb < pe) flush_next();
      }

      // Epilogue. The m64nBN accumulator layout: thread (warp w, lane l) holds, for j < BN/8,
      // acc[4j + 2h + e] = C[16 w + l/4 + 8 h][8 j + 2 (l%4) + e] of its 64-row slab (h, e in {0, 1}).
      // Staging box b holds columns [b BOX_COLS, (b+1) BOX_COLS) as 64 rows of 128 bytes, 16-byte chunk c of
      // row r stored at chunk c ^ (r % 8) (SWIZZLE_128B): the 8 rows a warp writes at once hit distinct banks.
      const Unit t = get_unit(uslot);
      const int row_m0 = t.m0 + cw * 64;
      // Staged epilogue vectors: every consumer lane waits for unit ui's slot and releases it once, on every path
      // (waiting first: a lane that ran a unit ahead must not count towards the slot's previous phase).
      auto epv_wait = [&]() { mbarrier_wait_spin(epv_bars + 8 * (ui & 1), (ui >> 1) & 1); };
      auto epv_release = [&]() { mbarrier_arrive(epv_bars + 16 + 8 * (ui & 1)); };
      auto epv_skip = [&]() { if constexpr (EPV) { epv_wait(); epv_release(); } };  // applies none, takes its turn
      auto epv_apply = [&]() {  // the unit's staged vectors into acc (rows from this thread's first row of the tile)
        epv_wait();
        scale_epilogue_staged<SCALE, BIAS, BM, BN>(acc, sc, s_epv + (ui & 1) * EPV_BYTES,
                                                   cw * 64 + 16 * warp + lane / 4, lane);
        epv_release();  // release: this lane's shared loads before the staging warp's next stores
      };
      if (row_m0 >= M || (TMAKIT_GEMM_NO_EPI && t.role == 0)) {  // rows all past M (remainder tile)
        epv_skip();
        continue;
      }
#if TMAKIT_GEMM_GROUPED || TMAKIT_GEMM_PTRARRAY
      if (row_m0 >= t.su) {  // rows of the next group (ptr-array: past M_g)
        epv_skip();
        continue;
      }
#if TMAKIT_GEMM_PTRARRAY
      const long long* pg = problems + (long long)t.slot * P_FIELDS;
      u8* const cg = reinterpret_cast<u8*>(c_base + (u64)__ldg(pg + P_C));  // (outputs the op allocates: offsets)
      const long long ldg = __ldg(pg + P_LDC);
      const int n_end = (int)__ldg(pg + P_N);
      if (true) {  // no C map: every tile stores its problem's rows and columns directly
#else
      u8* const cg = c_ptr;
      const long long ldg = ldc;
      const int n_end = N;
      if (row_m0 + 64 > t.su) {  // the group ends inside these rows: st.global of its rows only
#endif
#if TMAKIT_GEMM_PTRARRAY
        if constexpr (SCALE == 1 || SCALE == 2) {  // the problem's own scales, its rows and columns
          const Scales ps{reinterpret_cast<const float*>(__ldg(pg + P_SA)),
                          reinterpret_cast<const float*>(__ldg(pg + P_SB)), nullptr, __ldg(pg + P_SAM), 0,
                          __ldg(pg + P_SBN), 0, 0};
          scale_epilogue<SCALE, 0, OUT, BN>(acc, ps, row_m0, t.n0, t.su, n_end, warp, lane);
        }
        store_rows<BN, OUT, false>(acc, cg, ldg, row_m0, t.n0, t.su, n_end, warp, lane);
#else
        if constexpr (EPV) {
          epv_apply();
        } else if constexpr (SCALE == 2) {
          scale_epilogue<2, 0, OUT, BN>(acc, sc.of_group(t.slot), row_m0, t.n0, M, N, warp, lane);
        }
        store_rows<BN, OUT>(acc, cg, ldg, row_m0, t.n0, t.su, n_end, warp, lane);
#endif
        continue;
      }
#endif

      int part = -1;  // reduce-scatter: the column part of the tile this CTA finishes (-1: the whole tile)
      if (t.role != 0 && scatter) {
        // Split-K reduce-scatter (every segment of the unit is one CTA's whole range): segment `slot` owns column
        // part `slot` of nseg equal parts (whole staging boxes). It stores its other parts' partials into their
        // owners' workspace slots (region `slot` of each), raises their flags, waits until its own flag counts the
        // nseg - 1 others, adds their regions in segment order and stores its part. Each CTA moves (nseg - 1) / nseg
        // of a tile each way instead of one head reading nseg - 1 whole tiles.
        const int idx0 = ((t.su * CS + rank) * maxseg) * NC + cw;
        const int nseg = t.nseg, g = (BN / 8) / nseg;  // 8-column groups per part
        part = t.slot;
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
          const int pj = j * nseg / (BN / 8);
          if (pj == part) continue;
          float4* w = sk_ws + (size_t)(idx0 + NC * pj) * (BN / 8) * 128 + (part * g + j - pj * g) * 128 + wtid;
          st_cg_v4(w, acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]);
        }
        named_sync(1 + cw, 128);
        if (wtid == 0) {
          for (int o = 0; o < nseg; ++o)
            if (o != part) red_release_gpu(sk_flags + idx0 + NC * o, 1u);
          while (ld_acquire_gpu(sk_flags + idx0 + NC * part) != (u32)(nseg - 1)) {
          }
          st_relaxed_gpu(sk_flags + idx0 + NC * part, 0u);
        }
        named_sync(1 + cw, 128);
        const float4* w = sk_ws + (size_t)(idx0 + NC * part) * (BN / 8) * 128 + wtid;
        // the part's accumulators by compile-time index, one source at a time with all its loads in flight
        if (nseg == 2) add_part<BN, 2>(acc, w, part);
        else if (nseg == 4) add_part<BN, 4>(acc, w, part);
        else add_part<BN, 8>(acc, w, part);
      } else if (t.role != 0) {  // stream-K fixup: slot (unit, CTA of the cluster, segment, warpgroup), BN/8 x 128 float4
        const int idx0 = ((t.su * CS + rank) * maxseg) * NC + cw;
        if (t.role == 1) {  // contributor: store the partial, then raise its flag
          float4* w = sk_ws + (size_t)(idx0 + NC * t.slot) * (BN / 8) * 128 + wtid;
#pragma unroll
          for (int i = 0; i < BN / 8; ++i) st_cg_v4(w + i * 128, acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]);
          named_sync(1 + cw, 128);
          if (wtid == 0) red_release_gpu(sk_flags + idx0 + NC * t.slot, 1u);
          epv_skip();
          continue;
        }
        if (wtid == 0) {  // head: wait for every contributor, reset the flags for the next launch
          for (int sl = 1; sl < t.nseg; ++sl) {
            while (ld_acquire_gpu(sk_flags + idx0 + NC * sl) == 0u) {
            }
            st_relaxed_gpu(sk_flags + idx0 + NC * sl, 0u);
          }
        }
        named_sync(1 + cw, 128);
        for (int sl = 1; sl < t.nseg; ++sl) {
          const float4* w = sk_ws + (size_t)(idx0 + NC * sl) * (BN / 8) * 128 + wtid;
#pragma unroll
          for (int i = 0; i < BN / 8; ++i) {
            const float4 v = ld_cg_v4(w + i * 128);
            acc[4 * i] += v.x;
            acc[4 * i + 1] += v.y;
            acc[4 * i + 2] += v.z;
            acc[4 * i + 3] += v.w;
          }
        }
      }
      // Write accumulator columns of box b into the staging box at `box`.
      auto write_box = [&](const int b, const u32 box) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int r = warp * 16 + lane / 4 + 8 * h;
          const u32 row = box + r * 128;
#pragma unroll
          for (int jj = 0; jj < JPB; ++jj) {
            const int j = b * JPB + jj;
            const float x0 = acc[4 * j + 2 * h], x1 = acc[4 * j + 2 * h + 1];
            if constexpr (OUT == 2) {
              const int chunk = 2 * jj + (lane % 4) / 2;
              st_shared_v2f32(row + ((chunk ^ (r % 8)) << 4) + 8 * (lane % 2), x0, x1);
            } else {
              sts4(row + ((jj ^ (r % 8)) << 4) + 4 * (lane % 4), pack2<OUT == 1 ? 1 : 0>(x0, x1));
            }
          }
        }
      };
      auto store_box = [&](const int b, const u32 box) {
        if constexpr (SPLITK) tma_reduce_tile<ReduceOp::Add, 2>(&tm_c, box, t.n0 + b * BOX_COLS, row_m0);
        else tma_store_tile<2>(&tm_c, box, t.n0 + b * BOX_COLS, row_m0);
      };
      if constexpr (EPV) {
        epv_apply();
      } else if constexpr (SCALE == 1 || SCALE == 2 || BIAS) {  // (grouped: B's scales of the unit's group)
        scale_epilogue<SCALE, BIAS, OUT, BN>(acc, sc.of_group(t.slot), row_m0, t.n0, M, N, warp, lane);
      }
      // boxes of this CTA's part (whole boxes: the host uses reduce-scatter only when nseg divides NBOX)
      const int b_lo = part < 0 ? 0 : part * (NBOX / t.nseg), b_hi = part < 0 ? NBOX : b_lo + NBOX / t.nseg;
      if constexpr (DEF) {
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
          for (int h = 0; h < 2; ++h) pk[2 * j + h] = pack2<OUT == 1 ? 1 : 0>(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
        }
        pb = b_lo;
        pe = b_hi;
        pm0 = row_m0;
        pn0 = t.n0;
      } else if constexpr (EPI >= NBOX) {  // the whole tile fits: one wait, two barriers, one bulk group per tile
        if (wtid == 0) bulk_wait_group_read<0>();  // the previous tile's stores have read their boxes
        named_sync(1 + cw, 128);
#pragma unroll
        for (int b = 0; b < NBOX; ++b)
          if (b >= b_lo && b < b_hi && t.n0 + b * BOX_COLS < N) write_box(b, epi + b * EPI_BOX_BYTES);
        fence_proxy_async_smem();
        named_sync(1 + cw, 128);
        if (wtid == 0) {
#pragma unroll
          for (int b = 0; b < NBOX; ++b)
            if (b >= b_lo && b < b_hi && t.n0 + b * BOX_COLS < N) store_box(b, epi + b * EPI_BOX_BYTES);
          bulk_commit_group();
        }
      } else {  // stream the tile through EPI boxes
#pragma unroll
        for (int b = 0; b < NBOX; ++b) {
          if (t.n0 + b * BOX_COLS >= N) break;  // uniform: columns past N
          if (b < b_lo || b >= b_hi) continue;   // another CTA's part (reduce-scatter)
          const u32 box = epi + (ebox % EPI) * EPI_BOX_BYTES;
          ++ebox;
          if (wtid == 0) bulk_wait_group_read<EPI - 1>();  // the store that last read this box is done
          named_sync(1 + cw, 128);
          write_box(b, box);
          fence_proxy_async_smem();
          named_sync(1 + cw, 128);
          if (wtid == 0) {
            store_box(b, box);
            bulk_commit_group();
          }
        }
      }
    }
    if constexpr (DEF) {
      while (pb < pe) flush_next();
    }
    if (wtid == 0) bulk_wait_group<0>();
  }
  if (CS > 1) cluster_sync();  // no CTA leaves while its peer may still multicast into it or arrive on its barriers
}
