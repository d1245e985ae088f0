// tmakit/wgmma.cuh -- Hopper warpgroup MMA (wgmma.mma_async, sm_90a): the synchronisation instructions, the 64-bit
// shared-memory matrix descriptor, and the MMA wrappers (SS: A and B from shared memory through descriptors; RS: A
// from registers). Needs -arch=sm_90a (tmakit's default JIT target). Not part of all.cuh: include it yourself.
//
//   #include <tmakit/wgmma.cuh>
//   using namespace tmakit;  namespace wg = tmakit::wgmma;
//   float acc[64];                                   // m64n128, f32: N/2 registers per thread of the warpgroup
//   const u64 da = wg::make_desc(smem_u32(a_tile), 16, 1024, 128);   // K-major, 128B swizzle (TMA SWIZZLE_128B)
//   const u64 db = wg::make_desc(smem_u32(b_tile), 16, 1024, 128);
//   tmakit::wgmma_fence();
//   for (int k = 0; k < 4; ++k)                      // K = 64 of bf16: 4 x k16, 32 bytes further in the 128-byte row
//     wg::mma_ss<128, wg::BF16, wg::BF16>(acc, wg::desc_add(da, 32 * k), wg::desc_add(db, 32 * k), k > 0);
//   tmakit::wgmma_commit_group();
//   tmakit::wgmma_wait_group<0>();
//
// The asm statements are generated (tools/codegen/wgmma_header.py) into wgmma_ss_16bit.cuh, wgmma_ss_fp8.cuh,
// wgmma_ss_tf32.cuh and wgmma_rs.cuh (one line per specialization, through the macros of wgmma_ops.cuh); this
// file is the hand-written API over them.
#pragma once
#include "types.cuh"

namespace tmakit {

// PTX: wgmma.fence.sync.aligned;   before the first wgmma.mma_async, and after the accumulator (or RS A) registers
// were written by other instructions. The whole warpgroup executes it.
TMAKIT_DEVICE void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }

// PTX: wgmma.commit_group.sync.aligned;   closes the group of this warpgroup's outstanding wgmma.mma_async.
TMAKIT_DEVICE void wgmma_commit_group() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }

// PTX: wgmma.wait_group.sync.aligned N;   waits until at most N committed groups are pending (N = 0: all done; the
// accumulators may be read and the shared operands overwritten only after this).
template <int N> TMAKIT_DEVICE void wgmma_wait_group() {
  static_assert(N >= 0 && N <= 7, "wgmma.wait_group: N is an immediate 0..7");
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// Compiler-only register fence (no instruction; CuTe's warpgroup_fence_operand): keeps the compiler from moving
// reads or writes of an accumulator register across the wgmma.mma_async / wait_group that use it. Apply it to the
// accumulators before wgmma_fence() and after wgmma_wait_group().
TMAKIT_DEVICE void warpgroup_fence_operand(float& r) { asm volatile("" : "+f"(r)::"memory"); }
TMAKIT_DEVICE void warpgroup_fence_operand(u32& r) { asm volatile("" : "+r"(r)::"memory"); }
template <int N> TMAKIT_DEVICE void warpgroup_fence_operand(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) warpgroup_fence_operand(r[i]);
}
template <int N> TMAKIT_DEVICE void warpgroup_fence_operand(u32 (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) warpgroup_fence_operand(r[i]);
}

namespace wgmma {

// Element types (operands) and accumulator types (F32, F16) of wgmma.mma_async.
enum Type : int { BF16 = 0, F16 = 1, TF32 = 2, E4M3 = 3, E5M2 = 4, F32 = 5 };

// ---- the shared-memory matrix descriptor (PTX ISA: "Matrix Descriptor Format" of wgmma) ----
// bits [0,14) start address >> 4, [16,30) leading byte offset >> 4, [32,46) stride byte offset >> 4, [49,52) matrix
// base offset, [62,64) swizzle mode (0 none, 1 128B, 2 64B, 3 32B); every other bit 0. The same encoding as the
// emulator's tmakit.emu.encode_wgmma_desc(start, lbo, sbo, swizzle, base_offset) and the GEMM kernels' sw128_desc.
enum Swizzle : int { SWIZZLE_NONE = 0, SWIZZLE_128B = 1, SWIZZLE_64B = 2, SWIZZLE_32B = 3 };  // the 2-bit field

// The field value of a swizzle span in bytes (0, 32, 64, 128; anything else gives none).
__host__ __device__ constexpr int swizzle_code(int span_bytes) {
  return span_bytes == 128 ? SWIZZLE_128B : span_bytes == 64 ? SWIZZLE_64B : span_bytes == 32 ? SWIZZLE_32B
                                                                                               : SWIZZLE_NONE;
}

// The descriptor word. `start`: the 32-bit shared address (smem_u32) of the tile; `lbo_bytes`, `sbo_bytes`: leading /
// stride byte offsets (multiples of 16); `swizzle_bytes`: 0 (none), 32, 64 or 128 (the TMA swizzle the tile was
// loaded with); `base_offset`: 0..7, for swizzled tiles that do not start on a pattern boundary. Usable in
// constant expressions. Canonical K-major 128B-swizzled tile: make_desc(addr, 16, 1024, 128).
__host__ __device__ constexpr u64 make_desc(u32 start, u32 lbo_bytes, u32 sbo_bytes, int swizzle_bytes = 128,
                                            u32 base_offset = 0) {
  return (u64)((start & 0x3FFFFu) >> 4) | (u64)((lbo_bytes >> 4) & 0x3FFFu) << 16 |
         (u64)((sbo_bytes >> 4) & 0x3FFFu) << 32 | (u64)(base_offset & 7u) << 49 |
         (u64)swizzle_code(swizzle_bytes) << 62;
}

// The descriptor of the same layout `bytes` (a multiple of 16) further on: one add to the start-address field
// (shared addresses are below 256 KiB, so it never carries out). Steps K inside a swizzle row (+32 per k16 of
// 16-bit types) and moves between stages.
__host__ __device__ constexpr u64 desc_add(u64 desc, u32 bytes) { return desc + (bytes >> 4); }

// Field readers (the inverse of make_desc).
__host__ __device__ constexpr u32 desc_start(u64 d) { return (u32)(d & 0x3FFFu) << 4; }
__host__ __device__ constexpr u32 desc_lbo(u64 d) { return (u32)((d >> 16) & 0x3FFFu) << 4; }
__host__ __device__ constexpr u32 desc_sbo(u64 d) { return (u32)((d >> 32) & 0x3FFFu) << 4; }
__host__ __device__ constexpr u32 desc_base_offset(u64 d) { return (u32)((d >> 49) & 7u); }
__host__ __device__ constexpr int desc_swizzle(u64 d) { return (int)(d >> 62); }

namespace detail {
// Specialised by the generated headers for every (N, accumulator, A, B) PTX allows; others do not exist.
template <int N, int D, int A, int B> struct SS;
template <int N, int D, int A, int B> struct RS;

template <int N, int A, int B, int SA, int SB, int TA, int TB>
__host__ __device__ constexpr bool check() {
  static_assert(N % 8 == 0 && N >= 8 && N <= 256, "wgmma: N must be a multiple of 8 in 8..256");
  static_assert((SA == 1 || SA == -1) && (SB == 1 || SB == -1), "wgmma: imm-scale-a/b are 1 or -1");
  static_assert((TA == 0 || TA == 1) && (TB == 0 || TB == 1), "wgmma: imm-trans-a/b are 0 or 1");
  static_assert(A == BF16 || A == F16 || (TA == 0 && TB == 0),
                "wgmma: only 16-bit types (bf16, f16) have transposed (MN-major) operands; tf32 and fp8 are K-major");
  static_assert(A == B || ((A == E4M3 || A == E5M2) && (B == E4M3 || B == E5M2)),
                "wgmma: A and B have the same type, except e4m3/e5m2 which mix freely");
  return true;
}
}  // namespace detail

// PTX: wgmma.mma_async.sync.aligned.m64nNkK.f32.A.B d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b
//      [, imm-trans-a, imm-trans-b];   (K = 16 for bf16/f16, 8 for tf32, 32 for e4m3/e5m2)
// d: the N/2 f32 accumulators of this thread; scale_d: 0 computes D = A*B, nonzero D = A*B + D (run time);
// SA, SB: imm-scale-a/b (1, or -1 to negate); TA, TB: imm-trans-a/b (0 K-major, 1 MN-major; 16-bit types only).
template <int N, int A, int B, int SA = 1, int SB = 1, int TA = 0, int TB = 0>
TMAKIT_DEVICE void mma_ss(float (&d)[N / 2], u64 desc_a, u64 desc_b, int scale_d = 1) {
  static_assert(detail::check<N, A, B, SA, SB, TA, TB>(), "");
  if constexpr (A == BF16 || A == F16)
    detail::SS<N, F32, A, B>::template mma<SA, SB, TA, TB>(d, desc_a, desc_b, scale_d);
  else
    detail::SS<N, F32, A, B>::template mma<SA, SB>(d, desc_a, desc_b, scale_d);
}

// PTX: wgmma.mma_async.sync.aligned.m64nNk16.f16.f16.f16 d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b,
//      imm-trans-a, imm-trans-b;   f16 accumulators: N/4 .b32 registers per thread, each two packed f16 (f16x2).
template <int N, int A, int B, int SA = 1, int SB = 1, int TA = 0, int TB = 0>
TMAKIT_DEVICE void mma_ss(u32 (&d)[N / 4], u64 desc_a, u64 desc_b, int scale_d = 1) {
  static_assert(detail::check<N, A, B, SA, SB, TA, TB>(), "");
  static_assert(A == F16 && B == F16, "wgmma: this header has f16 accumulators for f16 x f16 only");
  detail::SS<N, F16, A, B>::template mma<SA, SB, TA, TB>(d, desc_a, desc_b, scale_d);
}

// PTX: wgmma.mma_async.sync.aligned.m64nNk16.f32.A.B d, {a0, a1, a2, a3}, b-desc, scale-d, imm-scale-a, imm-scale-b,
//      imm-trans-b;   A (bf16 or f16) from registers: 4 .b32 per thread, each two packed elements, in the layout of
// the m64k16 A fragment (the same as the f32 accumulator fragment of m64n16 with pairs packed); no imm-trans-a.
template <int N, int A, int B, int SA = 1, int SB = 1, int TB = 0>
TMAKIT_DEVICE void mma_rs(float (&d)[N / 2], const u32 (&a)[4], u64 desc_b, int scale_d = 1) {
  static_assert(detail::check<N, A, B, SA, SB, 0, TB>(), "");
  static_assert(A == BF16 || A == F16, "wgmma: this header has the RS form for bf16 and f16");
  detail::RS<N, F32, A, B>::template mma<SA, SB, TB>(d, a, desc_b, scale_d);
}

// PTX: wgmma.mma_async.sync.aligned.m64nNk16.f16.f16.f16 d, {a0, a1, a2, a3}, b-desc, scale-d, imm-scale-a,
//      imm-scale-b, imm-trans-b;   f16 accumulators (N/4 packed registers), A from registers.
template <int N, int A, int B, int SA = 1, int SB = 1, int TB = 0>
TMAKIT_DEVICE void mma_rs(u32 (&d)[N / 4], const u32 (&a)[4], u64 desc_b, int scale_d = 1) {
  static_assert(detail::check<N, A, B, SA, SB, 0, TB>(), "");
  static_assert(A == F16 && B == F16, "wgmma: this header has f16 accumulators for f16 x f16 only");
  detail::RS<N, F16, A, B>::template mma<SA, SB, TB>(d, a, desc_b, scale_d);
}

// The K of one instruction for an operand type (elements).
template <int A> __host__ __device__ constexpr int k_per_mma() {
  return A == TF32 ? 8 : (A == E4M3 || A == E5M2) ? 32 : 16;
}

}  // namespace wgmma
}  // namespace tmakit

#include "wgmma_ss_16bit.cuh"
#include "wgmma_ss_fp8.cuh"
#include "wgmma_ss_tf32.cuh"
#include "wgmma_rs.cuh"
