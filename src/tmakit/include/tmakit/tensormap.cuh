// tmakit/tensormap.cuh -- editing a tensor map on the device (sm_90a): tensormap.replace on a 128-byte-aligned
// shared-memory copy, then tensormap.cp_fenceproxy to global memory; consumers acquire before use.
// Note: the rank field holds rank-1, and the elemtype numbering is the PTX one (not the driver enum).
#pragma once
#include "types.cuh"

namespace tmakit {

// PTX: tensormap.replace.tile.global_address.shared::cta.b1024.b64 [map], addr;
TMAKIT_DEVICE void tensormap_replace_global_address(u32 smem_map, u64 addr) {
  asm volatile("tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%0], %1;" ::"r"(smem_map), "l"(addr)
               : "memory");
}

// PTX: tensormap.replace.tile.rank.shared::cta.b1024.b32 [map], rank_minus_1;
TMAKIT_DEVICE void tensormap_replace_rank(u32 smem_map, u32 rank_minus_1) {
  asm volatile("tensormap.replace.tile.rank.shared::cta.b1024.b32 [%0], %1;" ::"r"(smem_map), "r"(rank_minus_1)
               : "memory");
}

// PTX: tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [map], ORD, v;
template <int ORD> TMAKIT_DEVICE void tensormap_replace_box_dim(u32 smem_map, u32 v) {
  asm volatile("tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], %1, %2;" ::"r"(smem_map), "n"(ORD), "r"(v)
               : "memory");
}

// PTX: tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [map], ORD, v;
template <int ORD> TMAKIT_DEVICE void tensormap_replace_global_dim(u32 smem_map, u32 v) {
  asm volatile("tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], %1, %2;" ::"r"(smem_map), "n"(ORD),
               "r"(v) : "memory");
}

// PTX: tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [map], ORD, bytes;   (ORD indexes strides 1..)
template <int ORD> TMAKIT_DEVICE void tensormap_replace_global_stride(u32 smem_map, u64 bytes) {
  asm volatile("tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%0], %1, %2;" ::"r"(smem_map), "n"(ORD),
               "l"(bytes) : "memory");
}

// PTX: tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [map], ORD, v;
template <int ORD> TMAKIT_DEVICE void tensormap_replace_element_stride(u32 smem_map, u32 v) {
  asm volatile("tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%0], %1, %2;" ::"r"(smem_map), "n"(ORD),
               "r"(v) : "memory");
}

// PTX: tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [map], V;   (V: PTX elemtype code, immediate)
template <int V> TMAKIT_DEVICE void tensormap_replace_elemtype(u32 smem_map) {
  asm volatile("tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [%0], %1;" ::"r"(smem_map), "n"(V) : "memory");
}

// PTX: tensormap.replace.tile.interleave_layout.shared::cta.b1024.b32 [map], V;
template <int V> TMAKIT_DEVICE void tensormap_replace_interleave_layout(u32 smem_map) {
  asm volatile("tensormap.replace.tile.interleave_layout.shared::cta.b1024.b32 [%0], %1;" ::"r"(smem_map), "n"(V)
               : "memory");
}

// PTX: tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [map], V;
template <int V> TMAKIT_DEVICE void tensormap_replace_swizzle_mode(u32 smem_map) {
  asm volatile("tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [%0], %1;" ::"r"(smem_map), "n"(V)
               : "memory");
}

// PTX: tensormap.replace.tile.fill_mode.shared::cta.b1024.b32 [map], V;
template <int V> TMAKIT_DEVICE void tensormap_replace_fill_mode(u32 smem_map) {
  asm volatile("tensormap.replace.tile.fill_mode.shared::cta.b1024.b32 [%0], %1;" ::"r"(smem_map), "n"(V)
               : "memory");
}

// Whole warp (after __syncwarp): copy the edited smem map to global and release it to the tensormap proxy.
// PTX: tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [gmem], [smem], 128;
TMAKIT_DEVICE void tensormap_cp_fenceproxy(void* gmem_map, u32 smem_map) {
  asm volatile("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%0], [%1], 128;"
               ::"l"(gmem_map), "r"(smem_map) : "memory");
}

// Consumer side, before the first TMA use of a map in global memory.
// PTX: fence.proxy.tensormap::generic.acquire.gpu [gmem], 128;
TMAKIT_DEVICE void tensormap_acquire(const void* gmem_map) {
  asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(gmem_map) : "memory");
}

}  // namespace tmakit
