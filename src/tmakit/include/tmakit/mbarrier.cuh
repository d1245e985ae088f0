// tmakit/mbarrier.cuh -- mbarrier primitives (one 8-byte-aligned .b64 in shared memory).
// `bar` arguments are 32-bit shared-window addresses (tmakit::smem_u32(&barrier)).
#pragma once
#include "debug.cuh"
#include "types.cuh"

namespace tmakit {

// PTX: mbarrier.init.shared::cta.b64 [bar], count;   (phase 0, pending count = count)
TMAKIT_DEVICE void mbarrier_init(u32 bar, u32 count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

// PTX: mbarrier.inval.shared::cta.b64 [bar];   (before reusing the 8 bytes or re-initialising)
TMAKIT_DEVICE void mbarrier_inval(u32 bar) {
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(bar) : "memory");
}

// PTX: mbarrier.arrive.shared::cta.b64 state, [bar];   returns the opaque state token.
TMAKIT_DEVICE u64 mbarrier_arrive(u32 bar) {
  u64 state;
  asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(state) : "r"(bar) : "memory");
  return state;
}

// PTX: mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], tx;   arrive once and expect `tx` more bytes.
TMAKIT_DEVICE void mbarrier_arrive_expect_tx(u32 bar, u32 tx) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(tx) : "memory");
}

// PTX: mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [bar], tx;   expect `tx` more bytes, no arrival.
TMAKIT_DEVICE void mbarrier_expect_tx(u32 bar, u32 tx) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(tx) : "memory");
}

// PTX: mapa.shared::cluster.u32 remote, bar, rank;   the same barrier offset in CTA `rank` of the cluster.
TMAKIT_DEVICE u32 mapa_shared(u32 addr, u32 rank) {
  u32 r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(rank));
  return r;
}

// PTX: mapa.shared::cluster.u32 + mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];
TMAKIT_DEVICE void mbarrier_arrive_remote(u32 bar, u32 rank) {
  u32 remote = mapa_shared(bar, rank);
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
}

// PTX: mapa.shared::cluster.u32 + mbarrier.arrive.shared::cluster.b64 _, [remote];   release at CTA scope only, so
// no MEMBAR.ALL.GPU precedes it (the .release.cluster form above costs one per call). For a consumer whose reads
// of the guarded buffer were all async-proxy reads (wgmma, TMA) that already completed: nothing needs publishing.
TMAKIT_DEVICE void mbarrier_arrive_remote_cta(u32 bar, u32 rank) {
  u32 remote = mapa_shared(bar, rank);
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
}

// PTX: @p mbarrier.arrive.shared::cta.b64 _, [bar];   (predicated: the caller's control flow stays uniform)
TMAKIT_DEVICE void mbarrier_arrive_if(u32 bar, bool pred) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %1, 0;\n@p mbarrier.arrive.shared::cta.b64 _, [%0];\n}"
               ::"r"(bar), "r"((int)pred) : "memory");
}

// PTX: mapa.shared::cluster.u32 r, bar, rank; @p mbarrier.arrive.shared::cluster.b64 _, [r];   (CTA-scope release)
TMAKIT_DEVICE void mbarrier_arrive_remote_cta_if(u32 bar, u32 rank, bool pred) {
  asm volatile("{\n.reg .pred p;\n.reg .b32 r;\nsetp.ne.b32 p, %2, 0;\nmapa.shared::cluster.u32 r, %0, %1;\n"
               "@p mbarrier.arrive.shared::cluster.b64 _, [r];\n}" ::"r"(bar), "r"(rank), "r"((int)pred) : "memory");
}

// PTX: mapa + mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [remote], tx;
TMAKIT_DEVICE void mbarrier_arrive_expect_tx_remote(u32 bar, u32 rank, u32 tx) {
  u32 remote = mapa_shared(bar, rank);
  asm volatile("mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [%0], %1;" ::"r"(remote), "r"(tx)
               : "memory");
}

// PTX: mbarrier.try_wait.parity.shared::cta.b64 p, [bar], parity;   one bounded (hardware time limit) probe.
TMAKIT_DEVICE bool mbarrier_try_wait_parity(u32 bar, u32 parity) {
  u32 done;
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  return done != 0;
}

// PTX: mbarrier.test_wait.parity.shared::cta.b64 -- whether the phase of that parity completed; never suspends
// (try_wait may, for a time limit), so it can probe a barrier while other work is in flight.
TMAKIT_DEVICE bool mbarrier_test_wait_parity(u32 bar, u32 parity) {
  u32 done;
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  return done != 0;
}

// PTX: mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 -- acquire at cluster scope (remote arrivals).
TMAKIT_DEVICE bool mbarrier_try_wait_parity_cluster(u32 bar, u32 parity) {
  u32 done;
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  return done != 0;
}

// The raw 64-bit barrier word (format undocumented; printed by the debug mode). PTX: ld.volatile.shared.b64
TMAKIT_DEVICE u64 mbarrier_raw_state(u32 bar) {
  u64 v;
  asm volatile("ld.volatile.shared.b64 %0, [%1];" : "=l"(v) : "r"(bar) : "memory");
  return v;
}

// Wait until the phase with parity `parity` has completed: a try_wait.parity loop.
// Returns true when it completed. With TMAKIT_DEBUG=1 the loop gives up after TMAKIT_DEBUG_TIMEOUT_NS, prints the
// barrier, phase and CTA, and returns false (or traps with TMAKIT_DEBUG_TRAP=1) instead of hanging.
TMAKIT_DEVICE bool mbarrier_wait(u32 bar, u32 parity) {
#if TMAKIT_DEBUG
  u64 start = globaltimer_ns();
  while (!mbarrier_try_wait_parity(bar, parity)) {
    if (globaltimer_ns() - start > TMAKIT_DEBUG_TIMEOUT_NS) {
      debug_report_wait_timeout("mbarrier_wait", bar, parity, mbarrier_raw_state(bar));
      return false;
    }
  }
  return true;
#else
  while (!mbarrier_try_wait_parity(bar, parity)) {
  }
  return true;
#endif
}

// As mbarrier_wait, with cluster-scope acquire (use when peers arrive remotely or multicast into this CTA).
TMAKIT_DEVICE bool mbarrier_wait_cluster(u32 bar, u32 parity) {
#if TMAKIT_DEBUG
  u64 start = globaltimer_ns();
  while (!mbarrier_try_wait_parity_cluster(bar, parity)) {
    if (globaltimer_ns() - start > TMAKIT_DEBUG_TIMEOUT_NS) {
      debug_report_wait_timeout("mbarrier_wait_cluster", bar, parity, mbarrier_raw_state(bar));
      return false;
    }
  }
  return true;
#else
  while (!mbarrier_try_wait_parity_cluster(bar, parity)) {
  }
  return true;
#endif
}

// As mbarrier_wait, with the retry loop inside one asm statement, so the caller's control flow has no divergent
// branch (ptxas serializes wgmma across divergent paths while a wgmma group is in flight). Debug builds use the
// bounded C++ loop instead.
// PTX: WAIT: mbarrier.try_wait.parity.shared::cta.b64 p, [bar], parity; @!p bra WAIT;
TMAKIT_DEVICE void mbarrier_wait_spin(u32 bar, u32 parity) {
#if TMAKIT_DEBUG
  mbarrier_wait(bar, parity);
#else
  asm volatile(
      "{\n\t.reg .pred p;\n"
      "TMAKIT_WAIT_%=:\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n\t"
      "@!p bra TMAKIT_WAIT_%=;\n\t}"
      ::"r"(bar), "r"(parity) : "memory");
#endif
}

}  // namespace tmakit
