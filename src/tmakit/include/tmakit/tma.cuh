// tmakit/tma.cuh -- TMA (cp.async.bulk.tensor) wrappers: tile/im2col loads (+multicast, +L2 cache hint), stores,
// the eight reductions, L2 prefetch, descriptor prefetch and bulk-group completion.
//
// Conventions: `dst`/`src`/`bar` are 32-bit shared-window addresses (tmakit::smem_u32); `desc` points at a
// 128-byte TmaDesc (a `const __grid_constant__` kernel parameter, __constant__ or fenced global memory); coordinates
// c0..c4 are signed element indices, innermost (dim 0) first, and only the first R are used. Loads complete_tx on
// `bar`, which must be in the same CTA as `dst`; multicast writes the same smem offsets in every CTA of `mask`.
#pragma once
#include "types.cuh"

namespace tmakit {

// Coordinates are always operands %0..%4; the PTX text names only the first R of them.
#define TMAKIT_CRD_1 "{%0}"
#define TMAKIT_CRD_2 "{%0, %1}"
#define TMAKIT_CRD_3 "{%0, %1, %2}"
#define TMAKIT_CRD_4 "{%0, %1, %2, %3}"
#define TMAKIT_CRD_5 "{%0, %1, %2, %3, %4}"
#define TMAKIT_CRD_OPS "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
#define TMAKIT_CRD_PARAMS i32 c0, i32 c1 = 0, i32 c2 = 0, i32 c3 = 0, i32 c4 = 0
#define TMAKIT_CRD_PARAMS_NODEF i32 c0, i32 c1, i32 c2, i32 c3, i32 c4
// im2col offsets (one per spatial dim: R-2 of them) are operands %10..%12 (loads) or %7..%9 (prefetch).
#define TMAKIT_OFF_L3 "{%10}"
#define TMAKIT_OFF_L4 "{%10, %11}"
#define TMAKIT_OFF_L5 "{%10, %11, %12}"
#define TMAKIT_OFF_P3 "{%7}"
#define TMAKIT_OFF_P4 "{%7, %8}"
#define TMAKIT_OFF_P5 "{%7, %8, %9}"
#define TMAKIT_OFF_OPS "h"(o0), "h"(o1), "h"(o2)

// L2 cache-hint policies (CUTLASS's constants for createpolicy results; encoding undocumented).
enum : u64 {
  CACHE_EVICT_NORMAL = 0x1000000000000000ull,
  CACHE_EVICT_FIRST = 0x12F0000000000000ull,
  CACHE_EVICT_LAST = 0x14F0000000000000ull,
};

// PTX: createpolicy.fractional.L2::evict_first.b64 policy, 1.0;
TMAKIT_DEVICE u64 policy_evict_first() {
  u64 p;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}

// PTX: createpolicy.fractional.L2::evict_last.b64 policy, 1.0;
TMAKIT_DEVICE u64 policy_evict_last() {
  u64 p;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  return p;
}

// ---------------------------------------------------------------------------------------------------------------
// Loads, tile mode. Operands: %0-%4 coords, %5 dst, %6 desc, %7 bar, %8 ctaMask, %9 policy.
// PTX: cp.async.bulk.tensor.Rd.shared::cluster.global.tile.mbarrier::complete_tx::bytes
//          {.multicast::cluster}{.L2::cache_hint} [dst], [desc, {c...}], [bar] {, ctaMask} {, policy};
template <int R> TMAKIT_DEVICE void tma_load_tile(u32 dst, const TmaDesc* desc, u32 bar, TMAKIT_CRD_PARAMS);
template <int R> TMAKIT_DEVICE void tma_load_tile_hint(u32 dst, const TmaDesc* desc, u32 bar, u64 policy,
                                                      TMAKIT_CRD_PARAMS);
template <int R> TMAKIT_DEVICE void tma_load_tile_mc(u32 dst, const TmaDesc* desc, u32 bar, u16 mask,
                                                    TMAKIT_CRD_PARAMS);
template <int R> TMAKIT_DEVICE void tma_load_tile_mc_hint(u32 dst, const TmaDesc* desc, u32 bar, u16 mask,
                                                         u64 policy, TMAKIT_CRD_PARAMS);

#define TMAKIT_LOAD_OPS(MASK, POL) \
  TMAKIT_CRD_OPS, "r"(dst), "l"(desc_u64(desc)), "r"(bar), "h"(MASK), "l"(POL)
#define TMAKIT_DEF_LOAD_TILE(R)                                                                                   \
  template <> TMAKIT_DEVICE void tma_load_tile<R>(u32 dst, const TmaDesc* desc, u32 bar, TMAKIT_CRD_PARAMS_NODEF) { \
    asm volatile("cp.async.bulk.tensor." #R "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"          \
                 " [%5], [%6, " TMAKIT_CRD_##R "], [%7];" ::TMAKIT_LOAD_OPS((u16)0, 0ull) : "memory");          \
  }                                                                                                               \
  template <> TMAKIT_DEVICE void tma_load_tile_hint<R>(u32 dst, const TmaDesc* desc, u32 bar, u64 policy,         \
                                                       TMAKIT_CRD_PARAMS_NODEF) {                                 \
    asm volatile("cp.async.bulk.tensor." #R "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"          \
                 ".L2::cache_hint [%5], [%6, " TMAKIT_CRD_##R "], [%7], %9;" ::TMAKIT_LOAD_OPS((u16)0, policy)   \
                 : "memory");                                                                                     \
  }                                                                                                               \
  template <> TMAKIT_DEVICE void tma_load_tile_mc<R>(u32 dst, const TmaDesc* desc, u32 bar, u16 mask,            \
                                                     TMAKIT_CRD_PARAMS_NODEF) {                                   \
    asm volatile("cp.async.bulk.tensor." #R "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"          \
                 ".multicast::cluster [%5], [%6, " TMAKIT_CRD_##R "], [%7], %8;" ::TMAKIT_LOAD_OPS(mask, 0ull)    \
                 : "memory");                                                                                     \
  }                                                                                                               \
  template <> TMAKIT_DEVICE void tma_load_tile_mc_hint<R>(u32 dst, const TmaDesc* desc, u32 bar, u16 mask,       \
                                                          u64 policy, TMAKIT_CRD_PARAMS_NODEF) {                  \
    asm volatile("cp.async.bulk.tensor." #R "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"          \
                 ".multicast::cluster.L2::cache_hint [%5], [%6, " TMAKIT_CRD_##R "], [%7], %8, %9;"              \
                 ::TMAKIT_LOAD_OPS(mask, policy) : "memory");                                                     \
  }
TMAKIT_DEF_LOAD_TILE(1)
TMAKIT_DEF_LOAD_TILE(2)
TMAKIT_DEF_LOAD_TILE(3)
TMAKIT_DEF_LOAD_TILE(4)
TMAKIT_DEF_LOAD_TILE(5)
#undef TMAKIT_DEF_LOAD_TILE

// ---------------------------------------------------------------------------------------------------------------
// Loads, im2col mode (R = 3, 4, 5; R-2 u16 offsets o0.. in the pixel box). Operands as tile, %10-%12 offsets.
// PTX: cp.async.bulk.tensor.Rd.shared::cluster.global.im2col.mbarrier::complete_tx::bytes
//          {.multicast::cluster}{.L2::cache_hint} [dst], [desc, {c...}], [bar], {o...} {, ctaMask} {, policy};
template <int R> TMAKIT_DEVICE void tma_load_im2col(u32 dst, const TmaDesc* desc, u32 bar, i32 c0, i32 c1, i32 c2,
                                                   i32 c3, i32 c4, u16 o0, u16 o1 = 0, u16 o2 = 0);
template <int R> TMAKIT_DEVICE void tma_load_im2col_hint(u32 dst, const TmaDesc* desc, u32 bar, u64 policy, i32 c0,
                                                        i32 c1, i32 c2, i32 c3, i32 c4, u16 o0, u16 o1 = 0,
                                                        u16 o2 = 0);
template <int R> TMAKIT_DEVICE void tma_load_im2col_mc(u32 dst, const TmaDesc* desc, u32 bar, u16 mask, i32 c0,
                                                      i32 c1, i32 c2, i32 c3, i32 c4, u16 o0, u16 o1 = 0,
                                                      u16 o2 = 0);
template <int R> TMAKIT_DEVICE void tma_load_im2col_mc_hint(u32 dst, const TmaDesc* desc, u32 bar, u16 mask,
                                                           u64 policy, i32 c0, i32 c1, i32 c2, i32 c3, i32 c4,
                                                           u16 o0, u16 o1 = 0, u16 o2 = 0);
#define TMAKIT_I2C_PARAMS i32 c0, i32 c1, i32 c2, i32 c3, i32 c4, u16 o0, u16 o1, u16 o2
#define TMAKIT_DEF_LOAD_IM2COL(R)                                                                                 \
  template <> TMAKIT_DEVICE void tma_load_im2col<R>(u32 dst, const TmaDesc* desc, u32 bar, TMAKIT_I2C_PARAMS) {  \
    asm volatile("cp.async.bulk.tensor." #R "d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"        \
                 " [%5], [%6, " TMAKIT_CRD_##R "], [%7], " TMAKIT_OFF_L##R ";"                                    \
                 ::TMAKIT_LOAD_OPS((u16)0, 0ull), TMAKIT_OFF_OPS : "memory");                                     \
  }                                                                                                               \
  template <> TMAKIT_DEVICE void tma_load_im2col_hint<R>(u32 dst, const TmaDesc* desc, u32 bar, u64 policy,       \
                                                         TMAKIT_I2C_PARAMS) {                                     \
    asm volatile("cp.async.bulk.tensor." #R "d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"        \
                 ".L2::cache_hint [%5], [%6, " TMAKIT_CRD_##R "], [%7], " TMAKIT_OFF_L##R ", %9;"                 \
                 ::TMAKIT_LOAD_OPS((u16)0, policy), TMAKIT_OFF_OPS : "memory");                                   \
  }                                                                                                               \
  template <> TMAKIT_DEVICE void tma_load_im2col_mc<R>(u32 dst, const TmaDesc* desc, u32 bar, u16 mask,          \
                                                       TMAKIT_I2C_PARAMS) {                                       \
    asm volatile("cp.async.bulk.tensor." #R "d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"        \
                 ".multicast::cluster [%5], [%6, " TMAKIT_CRD_##R "], [%7], " TMAKIT_OFF_L##R ", %8;"             \
                 ::TMAKIT_LOAD_OPS(mask, 0ull), TMAKIT_OFF_OPS : "memory");                                       \
  }                                                                                                               \
  template <> TMAKIT_DEVICE void tma_load_im2col_mc_hint<R>(u32 dst, const TmaDesc* desc, u32 bar, u16 mask,     \
                                                            u64 policy, TMAKIT_I2C_PARAMS) {                      \
    asm volatile("cp.async.bulk.tensor." #R "d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"        \
                 ".multicast::cluster.L2::cache_hint [%5], [%6, " TMAKIT_CRD_##R "], [%7], " TMAKIT_OFF_L##R      \
                 ", %8, %9;" ::TMAKIT_LOAD_OPS(mask, policy), TMAKIT_OFF_OPS : "memory");                         \
  }
TMAKIT_DEF_LOAD_IM2COL(3)
TMAKIT_DEF_LOAD_IM2COL(4)
TMAKIT_DEF_LOAD_IM2COL(5)
#undef TMAKIT_DEF_LOAD_IM2COL
#undef TMAKIT_LOAD_OPS

// ---------------------------------------------------------------------------------------------------------------
// Stores (smem -> global), tile and im2col_no_offs. Operands: %0-%4 coords, %5 desc, %6 src, %7 policy.
// PTX: cp.async.bulk.tensor.Rd.global.shared::cta.tile.bulk_group{.L2::cache_hint} [desc, {c...}], [src] {, policy};
// Complete with bulk_commit_group() + bulk_wait_group_read<0>() (smem reusable) / bulk_wait_group<0>() (written).
// Out-of-bounds parts are not written; negative start coordinates are illegal on sm_90 (validate on the host).
template <int R> TMAKIT_DEVICE void tma_store_tile(const TmaDesc* desc, u32 src, TMAKIT_CRD_PARAMS);
template <int R> TMAKIT_DEVICE void tma_store_tile_hint(const TmaDesc* desc, u32 src, u64 policy, TMAKIT_CRD_PARAMS);
template <int R> TMAKIT_DEVICE void tma_store_im2col(const TmaDesc* desc, u32 src, TMAKIT_CRD_PARAMS);
#define TMAKIT_STORE_OPS(POL) TMAKIT_CRD_OPS, "l"(desc_u64(desc)), "r"(src), "l"(POL)
#define TMAKIT_DEF_STORE(R)                                                                                       \
  template <> TMAKIT_DEVICE void tma_store_tile<R>(const TmaDesc* desc, u32 src, TMAKIT_CRD_PARAMS_NODEF) {       \
    asm volatile("cp.async.bulk.tensor." #R "d.global.shared::cta.tile.bulk_group [%5, " TMAKIT_CRD_##R "], [%6];" \
                 ::TMAKIT_STORE_OPS(0ull) : "memory");                                                            \
  }                                                                                                               \
  template <> TMAKIT_DEVICE void tma_store_tile_hint<R>(const TmaDesc* desc, u32 src, u64 policy,                \
                                                        TMAKIT_CRD_PARAMS_NODEF) {                                \
    asm volatile("cp.async.bulk.tensor." #R "d.global.shared::cta.tile.bulk_group.L2::cache_hint"                 \
                 " [%5, " TMAKIT_CRD_##R "], [%6], %7;" ::TMAKIT_STORE_OPS(policy) : "memory");                   \
  }
#define TMAKIT_DEF_STORE_IM2COL(R)                                                                                \
  template <> TMAKIT_DEVICE void tma_store_im2col<R>(const TmaDesc* desc, u32 src, TMAKIT_CRD_PARAMS_NODEF) {     \
    asm volatile("cp.async.bulk.tensor." #R "d.global.shared::cta.im2col_no_offs.bulk_group"                      \
                 " [%5, " TMAKIT_CRD_##R "], [%6];" ::TMAKIT_STORE_OPS(0ull) : "memory");                         \
  }
TMAKIT_DEF_STORE(1)
TMAKIT_DEF_STORE(2)
TMAKIT_DEF_STORE(3)
TMAKIT_DEF_STORE(4)
TMAKIT_DEF_STORE(5)
TMAKIT_DEF_STORE_IM2COL(3)
TMAKIT_DEF_STORE_IM2COL(4)
TMAKIT_DEF_STORE_IM2COL(5)
#undef TMAKIT_DEF_STORE
#undef TMAKIT_DEF_STORE_IM2COL

// ---------------------------------------------------------------------------------------------------------------
// Reductions into global memory: element type from the tensor map; each element op is .relaxed.gpu.
// PTX: cp.reduce.async.bulk.tensor.Rd.global.shared::cta.<op>.tile.bulk_group{.L2::cache_hint} [desc, {c...}], [src];
//   add: u32 s32 u64 f32 f16 bf16 | min/max: u32 s32 u64 s64 f16 bf16 | inc/dec: u32 | and/or/xor: b32 b64
enum class ReduceOp : int { Add = 0, Min = 1, Max = 2, Inc = 3, Dec = 4, And = 5, Or = 6, Xor = 7 };

template <ReduceOp Op, int R> TMAKIT_DEVICE void tma_reduce_tile(const TmaDesc* desc, u32 src, TMAKIT_CRD_PARAMS);
template <ReduceOp Op, int R> TMAKIT_DEVICE void tma_reduce_tile_hint(const TmaDesc* desc, u32 src, u64 policy,
                                                                     TMAKIT_CRD_PARAMS);
template <ReduceOp Op, int R> TMAKIT_DEVICE void tma_reduce_im2col(const TmaDesc* desc, u32 src, TMAKIT_CRD_PARAMS);
#define TMAKIT_DEF_REDUCE(OP, op, R)                                                                              \
  template <> TMAKIT_DEVICE void tma_reduce_tile<ReduceOp::OP, R>(const TmaDesc* desc, u32 src,                   \
                                                                 TMAKIT_CRD_PARAMS_NODEF) {                       \
    asm volatile("cp.reduce.async.bulk.tensor." #R "d.global.shared::cta." #op ".tile.bulk_group"                 \
                 " [%5, " TMAKIT_CRD_##R "], [%6];" ::TMAKIT_STORE_OPS(0ull) : "memory");                         \
  }                                                                                                               \
  template <> TMAKIT_DEVICE void tma_reduce_tile_hint<ReduceOp::OP, R>(const TmaDesc* desc, u32 src, u64 policy,  \
                                                                      TMAKIT_CRD_PARAMS_NODEF) {                  \
    asm volatile("cp.reduce.async.bulk.tensor." #R "d.global.shared::cta." #op ".tile.bulk_group.L2::cache_hint"  \
                 " [%5, " TMAKIT_CRD_##R "], [%6], %7;" ::TMAKIT_STORE_OPS(policy) : "memory");                   \
  }
#define TMAKIT_DEF_REDUCE_IM2COL(OP, op, R)                                                                       \
  template <> TMAKIT_DEVICE void tma_reduce_im2col<ReduceOp::OP, R>(const TmaDesc* desc, u32 src,                 \
                                                                   TMAKIT_CRD_PARAMS_NODEF) {                     \
    asm volatile("cp.reduce.async.bulk.tensor." #R "d.global.shared::cta." #op ".im2col_no_offs.bulk_group"       \
                 " [%5, " TMAKIT_CRD_##R "], [%6];" ::TMAKIT_STORE_OPS(0ull) : "memory");                         \
  }
#define TMAKIT_DEF_REDUCE_ALL_R(OP, op) \
  TMAKIT_DEF_REDUCE(OP, op, 1)          \
  TMAKIT_DEF_REDUCE(OP, op, 2)          \
  TMAKIT_DEF_REDUCE(OP, op, 3)          \
  TMAKIT_DEF_REDUCE(OP, op, 4)          \
  TMAKIT_DEF_REDUCE(OP, op, 5)          \
  TMAKIT_DEF_REDUCE_IM2COL(OP, op, 3)   \
  TMAKIT_DEF_REDUCE_IM2COL(OP, op, 4)   \
  TMAKIT_DEF_REDUCE_IM2COL(OP, op, 5)
TMAKIT_DEF_REDUCE_ALL_R(Add, add)
TMAKIT_DEF_REDUCE_ALL_R(Min, min)
TMAKIT_DEF_REDUCE_ALL_R(Max, max)
TMAKIT_DEF_REDUCE_ALL_R(Inc, inc)
TMAKIT_DEF_REDUCE_ALL_R(Dec, dec)
TMAKIT_DEF_REDUCE_ALL_R(And, and)
TMAKIT_DEF_REDUCE_ALL_R(Or, or)
TMAKIT_DEF_REDUCE_ALL_R(Xor, xor)
#undef TMAKIT_DEF_REDUCE_ALL_R
#undef TMAKIT_DEF_REDUCE
#undef TMAKIT_DEF_REDUCE_IM2COL
#undef TMAKIT_STORE_OPS

// ---------------------------------------------------------------------------------------------------------------
// L2 prefetch of a box (no smem, no barrier). Operands: %0-%4 coords, %5 desc, %6 policy, %7-%9 im2col offsets.
// PTX: cp.async.bulk.prefetch.tensor.Rd.L2.global.tile{.L2::cache_hint} [desc, {c...}] {, policy};
// PTX: cp.async.bulk.prefetch.tensor.Rd.L2.global.im2col [desc, {c...}], {o...};
template <int R> TMAKIT_DEVICE void tma_prefetch_tile(const TmaDesc* desc, TMAKIT_CRD_PARAMS);
template <int R> TMAKIT_DEVICE void tma_prefetch_tile_hint(const TmaDesc* desc, u64 policy, TMAKIT_CRD_PARAMS);
template <int R> TMAKIT_DEVICE void tma_prefetch_im2col(const TmaDesc* desc, i32 c0, i32 c1, i32 c2, i32 c3, i32 c4,
                                                       u16 o0, u16 o1 = 0, u16 o2 = 0);
#define TMAKIT_PF_OPS(POL) TMAKIT_CRD_OPS, "l"(desc_u64(desc)), "l"(POL)
#define TMAKIT_DEF_PREFETCH(R)                                                                                    \
  template <> TMAKIT_DEVICE void tma_prefetch_tile<R>(const TmaDesc* desc, TMAKIT_CRD_PARAMS_NODEF) {             \
    asm volatile("cp.async.bulk.prefetch.tensor." #R "d.L2.global.tile [%5, " TMAKIT_CRD_##R "];"                 \
                 ::TMAKIT_PF_OPS(0ull) : "memory");                                                               \
  }                                                                                                               \
  template <> TMAKIT_DEVICE void tma_prefetch_tile_hint<R>(const TmaDesc* desc, u64 policy,                       \
                                                           TMAKIT_CRD_PARAMS_NODEF) {                             \
    asm volatile("cp.async.bulk.prefetch.tensor." #R "d.L2.global.tile.L2::cache_hint [%5, " TMAKIT_CRD_##R       \
                 "], %6;" ::TMAKIT_PF_OPS(policy) : "memory");                                                    \
  }
#define TMAKIT_DEF_PREFETCH_IM2COL(R)                                                                             \
  template <> TMAKIT_DEVICE void tma_prefetch_im2col<R>(const TmaDesc* desc, TMAKIT_I2C_PARAMS) {                 \
    asm volatile("cp.async.bulk.prefetch.tensor." #R "d.L2.global.im2col [%5, " TMAKIT_CRD_##R "], "              \
                 TMAKIT_OFF_P##R ";" ::TMAKIT_PF_OPS(0ull), TMAKIT_OFF_OPS : "memory");                           \
  }
TMAKIT_DEF_PREFETCH(1)
TMAKIT_DEF_PREFETCH(2)
TMAKIT_DEF_PREFETCH(3)
TMAKIT_DEF_PREFETCH(4)
TMAKIT_DEF_PREFETCH(5)
TMAKIT_DEF_PREFETCH_IM2COL(3)
TMAKIT_DEF_PREFETCH_IM2COL(4)
TMAKIT_DEF_PREFETCH_IM2COL(5)
#undef TMAKIT_DEF_PREFETCH
#undef TMAKIT_DEF_PREFETCH_IM2COL
#undef TMAKIT_PF_OPS
#undef TMAKIT_I2C_PARAMS

// PTX: prefetch.tensormap [desc];   bring the descriptor into the descriptor cache.
TMAKIT_DEVICE void prefetch_tensormap(const TmaDesc* desc) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(desc_u64(desc)) : "memory");
}

// ---------------------------------------------------------------------------------------------------------------
// Bulk async-groups (stores and reductions).
// PTX: cp.async.bulk.commit_group;
TMAKIT_DEVICE void bulk_commit_group() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }

// PTX: cp.async.bulk.wait_group N;   at most N groups pending, their global writes done.
template <int N = 0> TMAKIT_DEVICE void bulk_wait_group() {
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}

// PTX: cp.async.bulk.wait_group.read N;   at most N groups still reading their smem source.
template <int N = 0> TMAKIT_DEVICE void bulk_wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

// ---------------------------------------------------------------------------------------------------------------
// Run-time rank / op dispatch (coordinates from an array of `rank` ints).
TMAKIT_DEVICE void tma_load_tile_n(int rank, u32 dst, const TmaDesc* d, u32 bar, const i32* c, u16 mask = 0) {
  // mask == 0: plain load into this CTA; else .multicast::cluster to every CTA whose bit is set.
#define TMAKIT_CASE(R, ...)                                                     \
  case R:                                                                       \
    if (mask) tma_load_tile_mc<R>(dst, d, bar, mask, __VA_ARGS__);              \
    else tma_load_tile<R>(dst, d, bar, __VA_ARGS__);                            \
    break;
  switch (rank) {
    TMAKIT_CASE(1, c[0])
    TMAKIT_CASE(2, c[0], c[1])
    TMAKIT_CASE(3, c[0], c[1], c[2])
    TMAKIT_CASE(4, c[0], c[1], c[2], c[3])
    TMAKIT_CASE(5, c[0], c[1], c[2], c[3], c[4])
    default: break;
  }
#undef TMAKIT_CASE
}

TMAKIT_DEVICE void tma_load_im2col_n(int rank, u32 dst, const TmaDesc* d, u32 bar, const i32* c, const u16* o,
                                     u16 mask = 0) {
  switch (rank) {
    case 3:
      if (mask) tma_load_im2col_mc<3>(dst, d, bar, mask, c[0], c[1], c[2], 0, 0, o[0]);
      else tma_load_im2col<3>(dst, d, bar, c[0], c[1], c[2], 0, 0, o[0]);
      break;
    case 4:
      if (mask) tma_load_im2col_mc<4>(dst, d, bar, mask, c[0], c[1], c[2], c[3], 0, o[0], o[1]);
      else tma_load_im2col<4>(dst, d, bar, c[0], c[1], c[2], c[3], 0, o[0], o[1]);
      break;
    case 5:
      if (mask) tma_load_im2col_mc<5>(dst, d, bar, mask, c[0], c[1], c[2], c[3], c[4], o[0], o[1], o[2]);
      else tma_load_im2col<5>(dst, d, bar, c[0], c[1], c[2], c[3], c[4], o[0], o[1], o[2]);
      break;
    default: break;
  }
}

TMAKIT_DEVICE void tma_prefetch_tile_n(int rank, const TmaDesc* d, const i32* c) {
  switch (rank) {
    case 1: tma_prefetch_tile<1>(d, c[0]); break;
    case 2: tma_prefetch_tile<2>(d, c[0], c[1]); break;
    case 3: tma_prefetch_tile<3>(d, c[0], c[1], c[2]); break;
    case 4: tma_prefetch_tile<4>(d, c[0], c[1], c[2], c[3]); break;
    case 5: tma_prefetch_tile<5>(d, c[0], c[1], c[2], c[3], c[4]); break;
    default: break;
  }
}

TMAKIT_DEVICE void tma_store_tile_n(int rank, const TmaDesc* d, u32 src, const i32* c) {
  switch (rank) {
    case 1: tma_store_tile<1>(d, src, c[0]); break;
    case 2: tma_store_tile<2>(d, src, c[0], c[1]); break;
    case 3: tma_store_tile<3>(d, src, c[0], c[1], c[2]); break;
    case 4: tma_store_tile<4>(d, src, c[0], c[1], c[2], c[3]); break;
    case 5: tma_store_tile<5>(d, src, c[0], c[1], c[2], c[3], c[4]); break;
    default: break;
  }
}

TMAKIT_DEVICE void tma_store_im2col_n(int rank, const TmaDesc* d, u32 src, const i32* c) {
  switch (rank) {
    case 3: tma_store_im2col<3>(d, src, c[0], c[1], c[2]); break;
    case 4: tma_store_im2col<4>(d, src, c[0], c[1], c[2], c[3]); break;
    case 5: tma_store_im2col<5>(d, src, c[0], c[1], c[2], c[3], c[4]); break;
    default: break;
  }
}

// im2col: .im2col_no_offs (ranks 3-5); otherwise .tile (ranks 1-5).
template <ReduceOp Op>
TMAKIT_DEVICE void tma_reduce_r(bool im2col, int rank, const TmaDesc* d, u32 src, const i32* c) {
  if (im2col) {
    switch (rank) {
      case 3: tma_reduce_im2col<Op, 3>(d, src, c[0], c[1], c[2]); break;
      case 4: tma_reduce_im2col<Op, 4>(d, src, c[0], c[1], c[2], c[3]); break;
      case 5: tma_reduce_im2col<Op, 5>(d, src, c[0], c[1], c[2], c[3], c[4]); break;
      default: break;
    }
    return;
  }
  switch (rank) {
    case 1: tma_reduce_tile<Op, 1>(d, src, c[0]); break;
    case 2: tma_reduce_tile<Op, 2>(d, src, c[0], c[1]); break;
    case 3: tma_reduce_tile<Op, 3>(d, src, c[0], c[1], c[2]); break;
    case 4: tma_reduce_tile<Op, 4>(d, src, c[0], c[1], c[2], c[3]); break;
    case 5: tma_reduce_tile<Op, 5>(d, src, c[0], c[1], c[2], c[3], c[4]); break;
    default: break;
  }
}

// op: ReduceOp as int (0 add .. 7 xor).
TMAKIT_DEVICE void tma_reduce_n(int op, bool im2col, int rank, const TmaDesc* d, u32 src, const i32* c) {
  switch (op) {
    case 0: tma_reduce_r<ReduceOp::Add>(im2col, rank, d, src, c); break;
    case 1: tma_reduce_r<ReduceOp::Min>(im2col, rank, d, src, c); break;
    case 2: tma_reduce_r<ReduceOp::Max>(im2col, rank, d, src, c); break;
    case 3: tma_reduce_r<ReduceOp::Inc>(im2col, rank, d, src, c); break;
    case 4: tma_reduce_r<ReduceOp::Dec>(im2col, rank, d, src, c); break;
    case 5: tma_reduce_r<ReduceOp::And>(im2col, rank, d, src, c); break;
    case 6: tma_reduce_r<ReduceOp::Or>(im2col, rank, d, src, c); break;
    case 7: tma_reduce_r<ReduceOp::Xor>(im2col, rank, d, src, c); break;
    default: break;
  }
}

TMAKIT_DEVICE void tma_reduce_tile_n(int op, int rank, const TmaDesc* d, u32 src, const i32* c) {
  tma_reduce_n(op, false, rank, d, src, c);
}

}  // namespace tmakit
