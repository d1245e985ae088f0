// tmakit/fence.cuh -- proxy and barrier-init fences.
#pragma once
#include "types.cuh"

namespace tmakit {

// PTX: fence.proxy.async.shared::cta;   generic-proxy smem writes -> visible to TMA (async proxy) reads.
TMAKIT_DEVICE void fence_proxy_async_smem() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// PTX: fence.proxy.async.global;   the same for global memory.
TMAKIT_DEVICE void fence_proxy_async_global() { asm volatile("fence.proxy.async.global;" ::: "memory"); }

// PTX: fence.proxy.async;   all state spaces.
TMAKIT_DEVICE void fence_proxy_async() { asm volatile("fence.proxy.async;" ::: "memory"); }

// PTX: fence.mbarrier_init.release.cluster;   make mbarrier.init visible cluster-wide (then a cluster barrier).
TMAKIT_DEVICE void fence_mbarrier_init() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }

// PTX: fence.proxy.tensormap::generic.release.gpu;   publish generic writes of a tensor map (writer side).
TMAKIT_DEVICE void fence_proxy_tensormap_release() {
  asm volatile("fence.proxy.tensormap::generic.release.gpu;" ::: "memory");
}

// PTX: fence.proxy.tensormap::generic.acquire.gpu [map], 128;   before the first TMA use of a global-memory map.
TMAKIT_DEVICE void fence_proxy_tensormap_acquire(const void* gmem_map) {
  asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(gmem_map) : "memory");
}

// PTX: fence.acq_rel.cluster;
TMAKIT_DEVICE void fence_cluster() { asm volatile("fence.acq_rel.cluster;" ::: "memory"); }

}  // namespace tmakit
