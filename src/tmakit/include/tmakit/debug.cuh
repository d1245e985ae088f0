// tmakit/debug.cuh -- TMAKIT_DEBUG=1 (a compile define; tmakit.cuda.compile adds it when $TMAKIT_DEBUG=1):
// barrier waits are bounded (TMAKIT_DEBUG_TIMEOUT_NS, default 2 s of %globaltimer) and print the barrier, phase
// and CTA instead of hanging. With TMAKIT_DEBUG_TRAP=1 a timed-out wait also traps (kills the launch).
#pragma once
#include "types.cuh"

#ifndef TMAKIT_DEBUG
#define TMAKIT_DEBUG 0
#endif
#ifndef TMAKIT_DEBUG_TIMEOUT_NS
#define TMAKIT_DEBUG_TIMEOUT_NS 2000000000ull
#endif
#ifndef TMAKIT_DEBUG_TRAP
#define TMAKIT_DEBUG_TRAP 0
#endif

namespace tmakit {

// PTX: mov.u64 %globaltimer (nanoseconds).
TMAKIT_DEVICE u64 globaltimer_ns() {
  u64 t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// PTX: mov.u32 %cluster_ctarank (0 without a cluster launch).
TMAKIT_DEVICE u32 debug_cta_rank() {
  u32 r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

#if TMAKIT_DEBUG
// Printed when a bounded wait gives up: which barrier, which phase parity, which CTA/thread, and the raw state.
__device__ __noinline__ void debug_report_wait_timeout(const char* what, u32 bar_smem, u32 parity, u64 raw_state) {
  printf("tmakit: %s timed out: mbarrier smem 0x%x, waiting for phase parity %u, CTA (%u,%u,%u) cluster rank %u, "
         "thread %u, raw barrier state 0x%llx\n",
         what, bar_smem, parity, blockIdx.x, blockIdx.y, blockIdx.z, debug_cta_rank(), thread_linear(), raw_state);
#if TMAKIT_DEBUG_TRAP
  asm volatile("trap;");  // PTX: trap
#endif
}
#endif

}  // namespace tmakit
