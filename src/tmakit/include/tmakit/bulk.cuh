// tmakit/bulk.cuh -- non-tensor bulk copies (cp.async.bulk, sm_90): contiguous bytes between global and shared
// memory without a tensor map (CuTe's SM90_BULK_COPY_G2S / SM90_BULK_COPY_S2G, what SM90_BULK_COPY_AUTO issues).
// Include it by name: all.cuh leaves it out, so kernels that define their own bulk helpers keep compiling.
//
// Conventions: `dst`/`src`/`bar` in shared memory are 32-bit shared-window addresses (tmakit::smem_u32); global
// operands are generic pointers. Addresses 16-byte aligned, `bytes` a multiple of 16. Global -> shared completes
// with complete_tx(bytes) on `bar` (announce them with mbarrier expect_tx); shared -> global joins the bulk
// async-group: complete with bulk_commit_group() + bulk_wait_group_read<N>() (smem reusable) or
// bulk_wait_group<N>() (global written), from tma.cuh.
#pragma once
#include "types.cuh"
#include "tma.cuh"

namespace tmakit {

// PTX: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], bytes, [bar];
TMAKIT_DEVICE void bulk_copy_g2s(u32 dst, const void* src, u32 bytes, u32 bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               ::"r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
}

// Multicast: the same bytes land at `dst` (and complete_tx on `bar`) in every CTA of the cluster named by `mask`.
// PTX: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [dst], [src], bytes,
//      [bar], mask;
TMAKIT_DEVICE void bulk_copy_g2s_mc(u32 dst, const void* src, u32 bytes, u32 bar, u16 mask) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
               " [%0], [%1], %2, [%3], %4;"
               ::"r"(dst), "l"(src), "r"(bytes), "r"(bar), "h"(mask) : "memory");
}

// PTX: cp.async.bulk.global.shared::cta.bulk_group [dst], [src], bytes;
TMAKIT_DEVICE void bulk_copy_s2g(void* dst, u32 src, u32 bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(src), "r"(bytes)
               : "memory");
}

// PTX: cp.async.bulk.prefetch.L2.global [src], bytes;
TMAKIT_DEVICE void bulk_prefetch_l2(const void* src, u32 bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(src), "r"(bytes) : "memory");
}

}  // namespace tmakit
