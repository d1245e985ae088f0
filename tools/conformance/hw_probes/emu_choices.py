"""GPU probes of the two emulator choices docs/EMULATOR.md still lists as UNVERIFIED, one subprocess per case.

    python3 -m tools.conformance.hw_probes.emu_choices # every case; JSON lines to $OUT/emu_choices.json
    python3 -m tools.conformance.hw_probes.emu_choices one NAME   # one case, in this process

``exit_*``: does ``barrier.cluster.wait`` wait for CTAs (or threads) that exited without arriving? PTX says the wait
is for "all non-exited threads of the cluster"; a hang (the case times out) would say exited CTAs never arrive.
Each CTA writes its release time (``%globaltimer``) after the wait; ``exit_late`` also records when the silent peer
exits, so the release can be placed before or after that exit.

``store_read_*``: when does a bulk store (``cp.async.bulk`` / ``cp.async.bulk.tensor`` shared -> global) read shared
memory? Thread 0 issues the store of a 16 KiB image holding pattern A, spins ``delay`` clocks, then all threads
overwrite the image with pattern B before ``cp.async.bulk.wait_group.read 0``. Counting A and B bytes in global
memory says whether the engine read the image at issue, later, or piecewise.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
OUT = Path(os.environ.get("OUT", ROOT / "bench_out"))

SOURCE = r"""
#include <tmakit/all.cuh>
using namespace tmakit;

// PTX: mov.u64 %globaltimer
__device__ __forceinline__ unsigned long long now_ns() {
  unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t;
}
// PTX: barrier.cluster.arrive; barrier.cluster.wait  (non-.aligned: callers may diverge)
__device__ __forceinline__ void cluster_barrier() {
  asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
}
__device__ __forceinline__ void spin_ns(unsigned long long ns) {
  unsigned long long t0 = now_ns();
  while (now_ns() - t0 < ns) {}
}

// out[rank] = release time of the last barrier; out[16] = when the silent CTA exited (mode 3)
extern "C" __global__ void exit_probe(int mode, unsigned long long* out) {
  unsigned rank = cluster_ctarank();
  if (mode == 1 && rank == 1) return;                            // a peer exits before anyone arrives
  if (mode == 2) {                                               // a peer takes part once, then exits
    cluster_barrier();
    if (rank == 1) return;
  }
  if (mode == 3 && rank == 1) {                                  // a peer exits 200 us later, never arriving
    spin_ns(200000);
    __syncthreads();
    if (threadIdx.x == 0) { out[16] = now_ns(); __threadfence(); }
    return;
  }
  if (mode == 4 && threadIdx.x >= 32) return;                    // half of every CTA's threads exit
  if (mode == 5 && rank == 1 && threadIdx.x >= 32) return;       // half of one CTA's threads exit
  cluster_barrier();
  if (threadIdx.x == 0) out[rank] = now_ns();
}

// PTX: cp.async.bulk.global.shared::cta.bulk_group / cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
extern "C" __global__ void store_read_probe(const __grid_constant__ TmaDesc tm, unsigned char* dst, int tensor,
                                            long long delay) {
  extern __shared__ __align__(1024) unsigned char img[];
  const int n = 16384;
  for (int i = threadIdx.x * 16; i < n; i += blockDim.x * 16)
    *reinterpret_cast<uint4*>(img + i) = make_uint4(0xA5A5A5A5u, 0xA5A5A5A5u, 0xA5A5A5A5u, 0xA5A5A5A5u);
  fence_proxy_async_smem();
  __syncthreads();
  if (threadIdx.x == 0) {
    u32 s = smem_u32(img);
    if (tensor) {
      asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
                   :: "l"(desc_u64(&tm)), "r"(0), "r"(0), "r"(s) : "memory");
    } else {
      asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" :: "l"(dst), "r"(s), "r"(n)
                   : "memory");
    }
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    long long t0 = clock64();
    while (clock64() - t0 < delay) {}
  }
  __syncthreads();
  for (int i = threadIdx.x * 16; i < n; i += blockDim.x * 16)
    *reinterpret_cast<uint4*>(img + i) = make_uint4(0x5A5A5A5Au, 0x5A5A5A5Au, 0x5A5A5A5Au, 0x5A5A5A5Au);
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
  __syncthreads();
}
"""

EXIT_CASES = {"exit_control": (0, 2), "exit_before": (1, 2), "exit_after_one": (2, 2), "exit_late": (3, 2),
              "exit_threads_all": (4, 2), "exit_threads_one": (5, 2), "exit_before_c4": (1, 4),
              "exit_late_c4": (3, 4)}
STORE_CASES = {f"store_read_{kind}_{d}": (kind == "tensor", d) for kind in ("bulk", "tensor")
               for d in (0, 200, 1000, 4000, 20000)}
CASES = [*EXIT_CASES, *STORE_CASES]


def _kernel(name):
    from tmakit import cuda as tkc

    return tkc.kernel(SOURCE, name, filename="emu_choices_probe.cu")


def exit_case(name):
    from tmakit import cuda as tkc

    mode, size = EXIT_CASES[name]
    k = _kernel("exit_probe")
    out = tkc.DeviceBuffer(32 * 8)
    out.upload(bytes(32 * 8))
    tkc.launch(k, (size, 1, 1), (64, 1, 1), (ctypes.c_int32(mode), tkc.Ptr(out.ptr)), cluster=(size, 1, 1))
    tkc.synchronize()
    t = np.frombuffer(out.download(), dtype=np.uint64)
    rel = [int(x) for x in t[:size]]
    row = dict(case=name, mode=mode, cluster=size, released=[x != 0 for x in rel])
    if mode == 3:
        row["release_minus_exit_us"] = [round((x - int(t[16])) / 1e3, 2) if x else None for x in rel]
    return row


def store_case(name):
    from tmakit import cuda as tkc
    from tmakit.tma import tensormap as tmm

    tensor, delay = STORE_CASES[name]
    k = _kernel("store_read_probe")
    buf = tkc.DeviceBuffer(16384)
    buf.upload(bytes(16384))
    tm = tmm.TensorMap(global_address=buf.ptr, dtype=tmm.DataType.UINT32, global_dim=[64, 64],
                       global_strides=[256], box_dim=[64, 64], element_strides=[1, 1], swizzle=0, oob_fill=0)
    enc = tkc.encode_tensormap(tm)
    tkc.launch(k, 1, 128, (enc, tkc.Ptr(buf.ptr), ctypes.c_int32(int(tensor)), ctypes.c_int64(delay)), smem=16384)
    tkc.synchronize()
    got = np.frombuffer(buf.download(), dtype=np.uint8)
    a, b = int((got == 0xA5).sum()), int((got == 0x5A).sum())
    first_b = np.nonzero(got == 0x5A)[0]
    return dict(case=name, tensor=bool(tensor), delay_clocks=delay, a_bytes=a, b_bytes=b, other=got.size - a - b,
                first_b=int(first_b[0]) if first_b.size else None)


def one(name):
    from tmakit import cuda as tkc

    tkc.ensure_context()
    row = exit_case(name) if name in EXIT_CASES else store_case(name)
    print(json.dumps(row))


def main(argv):
    if argv and argv[0] == "one":
        return one(argv[1])
    from . import run_cases

    run_cases("tools.conformance.hw_probes.emu_choices", argv or CASES, "emu_choices", timeout=30)


if __name__ == "__main__":
    main(sys.argv[1:])
