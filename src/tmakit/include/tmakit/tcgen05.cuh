// tmakit/tcgen05.cuh -- Blackwell (sm_100a) tensor memory and 5th-generation tensor core instructions.
// Compiled and SASS-checked in the CPU tests; never run here (no Blackwell hardware): see docs/BLACKWELL.md.
// `bar` / `dst` arguments are 32-bit shared-window addresses (tmakit::smem_u32); `taddr` is a TMEM address
// (lane << 16 | column) as tcgen05.alloc writes it. The whole header is empty below sm_100a, so all.cuh users on
// Hopper are unaffected (it is not part of all.cuh).
#pragma once
#include "types.cuh"

#if !defined(__CUDA_ARCH__) || (__CUDA_ARCH__ >= 1000 && (defined(__CUDA_ARCH_FEAT_SM100_ALL) || \
    defined(__CUDA_ARCH_FEAT_SM103_ALL) || defined(__CUDA_ARCH_FAMILY_SPECIFIC__)))
#define TMAKIT_HAS_TCGEN05 1

namespace tmakit {

// ------------------------------------------------------------------ TMEM allocation (one full warp executes these)
// PTX: tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [dst], ncols;   (ncols: power of two, 32..512)
TMAKIT_DEVICE void tmem_alloc(u32 dst, u32 ncols) {
  asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(dst), "r"(ncols) : "memory");
}
// PTX: tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [dst], ncols;   (one warp in each CTA of the pair)
TMAKIT_DEVICE void tmem_alloc_2sm(u32 dst, u32 ncols) {
  asm volatile("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(dst), "r"(ncols) : "memory");
}
// PTX: tcgen05.dealloc.cta_group::1.sync.aligned.b32 taddr, ncols;
TMAKIT_DEVICE void tmem_dealloc(u32 taddr, u32 ncols) {
  asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" ::"r"(taddr), "r"(ncols) : "memory");
}
// PTX: tcgen05.dealloc.cta_group::2.sync.aligned.b32 taddr, ncols;
TMAKIT_DEVICE void tmem_dealloc_2sm(u32 taddr, u32 ncols) {
  asm volatile("tcgen05.dealloc.cta_group::2.sync.aligned.b32 %0, %1;" ::"r"(taddr), "r"(ncols) : "memory");
}
// PTX: tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
TMAKIT_DEVICE void tmem_relinquish_alloc_permit() {
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
}
// PTX: tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;
TMAKIT_DEVICE void tmem_relinquish_alloc_permit_2sm() {
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;" ::: "memory");
}

// ------------------------------------------------------------------ MMA (one thread issues; D in TMEM)
// `idesc` is the 32-bit instruction descriptor (CuTe: the upper half of idescE); `accumulate` != 0 adds to D.
// PTX: tcgen05.mma.cta_group::1.kind::f16 [d], a_desc, b_desc, idesc, p;   (A and B in shared memory: SS)
TMAKIT_DEVICE void umma_f16_ss(u32 d, u64 a_desc, u64 b_desc, u32 idesc, u32 accumulate) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
               "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}"
               ::"r"(d), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}
// PTX: tcgen05.mma.cta_group::1.kind::tf32 [d], a_desc, b_desc, idesc, p;
TMAKIT_DEVICE void umma_tf32_ss(u32 d, u64 a_desc, u64 b_desc, u32 idesc, u32 accumulate) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
               "tcgen05.mma.cta_group::1.kind::tf32 [%0], %1, %2, %3, p;\n}"
               ::"r"(d), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}
// PTX: tcgen05.mma.cta_group::1.kind::f16 [d], [a_tmem], b_desc, idesc, p;   (A in TMEM: TS)
TMAKIT_DEVICE void umma_f16_ts(u32 d, u32 a_tmem, u64 b_desc, u32 idesc, u32 accumulate) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
               "tcgen05.mma.cta_group::1.kind::f16 [%0], [%1], %2, %3, p;\n}"
               ::"r"(d), "r"(a_tmem), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}
// PTX: tcgen05.mma.cta_group::1.kind::tf32 [d], [a_tmem], b_desc, idesc, p;
TMAKIT_DEVICE void umma_tf32_ts(u32 d, u32 a_tmem, u64 b_desc, u32 idesc, u32 accumulate) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
               "tcgen05.mma.cta_group::1.kind::tf32 [%0], [%1], %2, %3, p;\n}"
               ::"r"(d), "r"(a_tmem), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}
// PTX: tcgen05.mma.cta_group::2.kind::f16 [d], a_desc, b_desc, idesc, p;   (issued by the even CTA of the pair)
TMAKIT_DEVICE void umma_f16_ss_2sm(u32 d, u64 a_desc, u64 b_desc, u32 idesc, u32 accumulate) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
               "tcgen05.mma.cta_group::2.kind::f16 [%0], %1, %2, %3, p;\n}"
               ::"r"(d), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}
// PTX: tcgen05.mma.cta_group::2.kind::tf32 [d], a_desc, b_desc, idesc, p;
TMAKIT_DEVICE void umma_tf32_ss_2sm(u32 d, u64 a_desc, u64 b_desc, u32 idesc, u32 accumulate) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
               "tcgen05.mma.cta_group::2.kind::tf32 [%0], %1, %2, %3, p;\n}"
               ::"r"(d), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}
// PTX: tcgen05.mma.cta_group::2.kind::f16 [d], [a_tmem], b_desc, idesc, p;
TMAKIT_DEVICE void umma_f16_ts_2sm(u32 d, u32 a_tmem, u64 b_desc, u32 idesc, u32 accumulate) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
               "tcgen05.mma.cta_group::2.kind::f16 [%0], [%1], %2, %3, p;\n}"
               ::"r"(d), "r"(a_tmem), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}
// PTX: tcgen05.mma.cta_group::2.kind::tf32 [d], [a_tmem], b_desc, idesc, p;
TMAKIT_DEVICE void umma_tf32_ts_2sm(u32 d, u32 a_tmem, u64 b_desc, u32 idesc, u32 accumulate) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
               "tcgen05.mma.cta_group::2.kind::tf32 [%0], [%1], %2, %3, p;\n}"
               ::"r"(d), "r"(a_tmem), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}

// ------------------------------------------------------------------ commit: arrive on an mbarrier when MMAs finish
// PTX: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [bar];   (CUTLASS umma_arrive)
TMAKIT_DEVICE void umma_commit(u32 bar) {
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(bar) : "memory");
}
// PTX: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [bar], mask;
TMAKIT_DEVICE void umma_commit_multicast(u32 bar, u16 mask) {
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;"
               ::"r"(bar), "h"(mask) : "memory");
}
// PTX: tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.b64 [bar];   (umma_arrive_2x1SM)
TMAKIT_DEVICE void umma_commit_2sm(u32 bar) {
  asm volatile("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(bar) : "memory");
}
// PTX: tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [bar], mask;
//      (CUTLASS umma_arrive_multicast_2x1SM)
TMAKIT_DEVICE void umma_commit_multicast_2sm(u32 bar, u16 mask) {
  asm volatile("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;"
               ::"r"(bar), "h"(mask) : "memory");
}

// ------------------------------------------------------------------ TMEM <-> registers (one warp; its lane quarter)
// PTX: tcgen05.ld.sync.aligned.32x32b.x1.b32 {r}, [taddr];   (thread t: lane t of the warp's quarter)
TMAKIT_DEVICE void tmem_ld_32x32b_x1(u32 taddr, u32 (&r)[1]) {
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x1.b32 {%0}, [%1];" : "=r"(r[0]) : "r"(taddr));
}
// PTX: tcgen05.ld.sync.aligned.32x32b.x4.b32 {r0..r3}, [taddr];   (4 consecutive columns)
TMAKIT_DEVICE void tmem_ld_32x32b_x4(u32 taddr, u32 (&r)[4]) {
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x4.b32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(taddr));
}
// PTX: tcgen05.ld.sync.aligned.16x64b.x1.b32 {r}, [taddr];
TMAKIT_DEVICE void tmem_ld_16x64b_x1(u32 taddr, u32 (&r)[1]) {
  asm volatile("tcgen05.ld.sync.aligned.16x64b.x1.b32 {%0}, [%1];" : "=r"(r[0]) : "r"(taddr));
}
// PTX: tcgen05.ld.sync.aligned.16x128b.x1.b32 {r0, r1}, [taddr];
TMAKIT_DEVICE void tmem_ld_16x128b_x1(u32 taddr, u32 (&r)[2]) {
  asm volatile("tcgen05.ld.sync.aligned.16x128b.x1.b32 {%0, %1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(taddr));
}
// PTX: tcgen05.ld.sync.aligned.16x256b.x1.b32 {r0..r3}, [taddr];
TMAKIT_DEVICE void tmem_ld_16x256b_x1(u32 taddr, u32 (&r)[4]) {
  asm volatile("tcgen05.ld.sync.aligned.16x256b.x1.b32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(taddr));
}
// PTX: tcgen05.st.sync.aligned.32x32b.x1.b32 [taddr], {r};
TMAKIT_DEVICE void tmem_st_32x32b_x1(u32 taddr, const u32 (&r)[1]) {
  asm volatile("tcgen05.st.sync.aligned.32x32b.x1.b32 [%0], {%1};" ::"r"(taddr), "r"(r[0]) : "memory");
}
// PTX: tcgen05.st.sync.aligned.32x32b.x4.b32 [taddr], {r0..r3};
TMAKIT_DEVICE void tmem_st_32x32b_x4(u32 taddr, const u32 (&r)[4]) {
  asm volatile("tcgen05.st.sync.aligned.32x32b.x4.b32 [%0], {%1, %2, %3, %4};"
               ::"r"(taddr), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
}
// PTX: tcgen05.st.sync.aligned.16x64b.x1.b32 [taddr], {r};
TMAKIT_DEVICE void tmem_st_16x64b_x1(u32 taddr, const u32 (&r)[1]) {
  asm volatile("tcgen05.st.sync.aligned.16x64b.x1.b32 [%0], {%1};" ::"r"(taddr), "r"(r[0]) : "memory");
}
// PTX: tcgen05.st.sync.aligned.16x128b.x1.b32 [taddr], {r0, r1};
TMAKIT_DEVICE void tmem_st_16x128b_x1(u32 taddr, const u32 (&r)[2]) {
  asm volatile("tcgen05.st.sync.aligned.16x128b.x1.b32 [%0], {%1, %2};" ::"r"(taddr), "r"(r[0]), "r"(r[1]) : "memory");
}
// PTX: tcgen05.st.sync.aligned.16x256b.x1.b32 [taddr], {r0..r3};
TMAKIT_DEVICE void tmem_st_16x256b_x1(u32 taddr, const u32 (&r)[4]) {
  asm volatile("tcgen05.st.sync.aligned.16x256b.x1.b32 [%0], {%1, %2, %3, %4};"
               ::"r"(taddr), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
}
// PTX: tcgen05.wait::ld.sync.aligned;   (registers of earlier tcgen05.ld are valid after it)
TMAKIT_DEVICE void tmem_wait_ld() { asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory"); }
// PTX: tcgen05.wait::st.sync.aligned;
TMAKIT_DEVICE void tmem_wait_st() { asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory"); }

// ------------------------------------------------------------------ ordering around thread barriers
// PTX: tcgen05.fence::before_thread_sync;
TMAKIT_DEVICE void tcgen05_fence_before_thread_sync() {
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
}
// PTX: tcgen05.fence::after_thread_sync;
TMAKIT_DEVICE void tcgen05_fence_after_thread_sync() {
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
}

// ------------------------------------------------------------------ 2-SM TMA loads (CuTe SM100_TMA_2SM_LOAD*)
// Both CTAs of the pair issue; the bytes complete on the mbarrier of the even CTA (peer bit of `bar` cleared).
constexpr u32 SM100_PEER_BIT_MASK = 0xFEFFFFFFu;  // CuTe Sm100MmaPeerBitMask

// PTX: cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes
//      [dst], [desc, {c0, c1}], [bar];
TMAKIT_DEVICE void tma_load_2sm_2d(u32 dst, const TmaDesc* desc, u32 bar, i32 c0, i32 c1) {
  asm volatile("cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%3, %4}], [%2];"
               ::"r"(dst), "l"(desc_u64(desc)), "r"(bar & SM100_PEER_BIT_MASK), "r"(c0), "r"(c1) : "memory");
}
// PTX: cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster
//      [dst], [desc, {c0, c1}], [bar], mask;
TMAKIT_DEVICE void tma_load_2sm_mc_2d(u32 dst, const TmaDesc* desc, u32 bar, u16 mask, i32 c0, i32 c1) {
  asm volatile("cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes"
               ".multicast::cluster [%0], [%1, {%4, %5}], [%2], %3;"
               ::"r"(dst), "l"(desc_u64(desc)), "r"(bar & SM100_PEER_BIT_MASK), "h"(mask), "r"(c0), "r"(c1)
               : "memory");
}
// PTX: cp.async.bulk.tensor.3d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster
//      [dst], [desc, {c0, c1, c2}], [bar], mask;
TMAKIT_DEVICE void tma_load_2sm_mc_3d(u32 dst, const TmaDesc* desc, u32 bar, u16 mask, i32 c0, i32 c1, i32 c2) {
  asm volatile("cp.async.bulk.tensor.3d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes"
               ".multicast::cluster [%0], [%1, {%4, %5, %6}], [%2], %3;"
               ::"r"(dst), "l"(desc_u64(desc)), "r"(bar & SM100_PEER_BIT_MASK), "h"(mask), "r"(c0), "r"(c1),
                 "r"(c2) : "memory");
}

// ------------------------------------------------------------------ UMMA descriptors (CuTe UMMA::SmemDescriptor)
// start/lbo/sbo in bytes (multiples of 16); layout: 0 none, 2 SW128, 4 SW64, 6 SW32; version 1 (bit 46).
TMAKIT_DEVICE u64 umma_smem_desc(u32 start, u32 lbo, u32 sbo, u32 layout) {
  return u64((start >> 4) & 0x3FFF) | (u64((lbo >> 4) & 0x3FFF) << 16) | (u64((sbo >> 4) & 0x3FFF) << 32) |
         (u64(1) << 46) | (u64(layout & 7) << 61);
}
// Instruction descriptor, F32 accumulator: a/b format (f16 0, bf16 1, tf32 2), majors (K 0, MN 1), M, N.
TMAKIT_DEVICE constexpr u32 umma_instr_desc(u32 a_fmt, u32 b_fmt, u32 a_major, u32 b_major, u32 m, u32 n) {
  return (1u << 4) | (a_fmt << 7) | (b_fmt << 10) | (a_major << 15) | (b_major << 16) | ((n >> 3) << 17) |
         ((m >> 4) << 24);
}

}  // namespace tmakit

#endif
