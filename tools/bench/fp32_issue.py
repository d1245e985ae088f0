"""Issue rate of a promotion-like run of 96 independent FADD / FFMA per thread (the two-level FP8 GEMM's
accumulator update), with one and two warps per SM sub-partition: cycles per warp instruction per warp, from
clock64 around 4000 unrolled rounds on one CTA.

    python3 tools/bench/fp32_issue.py

Modes: FADD total += part (two register sources); FFMA with a uniform-register scale; FADD with a uniform operand
(one register source); FFMA with three different register sources; FFMA with one per-thread scale for all 96 (as
block scaling's per-row scale; the compiler serves it from the operand-reuse cache). docs/HARDWARE.md §10 quotes the
numbers.
"""

from __future__ import annotations

SRC = r"""
extern "C" __global__ void rate(long long* out, float* sink, int iters, float s) {
  float a[96], b[96];
#pragma unroll
  for (int i = 0; i < 96; ++i) { a[i] = threadIdx.x * 0.001f + i; b[i] = threadIdx.x * 0.25f - i; }
  const float sl = 1.0f + threadIdx.x * 1e-6f;  // a per-thread scale, as block scaling's per-row one
  __syncthreads();
  const long long t0 = clock64();
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int i = 0; i < 96; ++i) {
#if MODE == 0
      a[i] += b[i];
#elif MODE == 1
      a[i] = fmaf(b[i], s, a[i]);
#elif MODE == 2
      a[i] += s;
#elif MODE == 3
      a[i] = fmaf(b[i], b[(i + 48) % 96], a[i]);
#else
      a[i] = fmaf(b[i], sl, a[i]);
#endif
    }
    asm volatile("" ::: "memory");
  }
  const long long t1 = clock64();
  float acc = 0.f;
#pragma unroll
  for (int i = 0; i < 96; ++i) acc += a[i];
  sink[threadIdx.x] = acc;
  if (threadIdx.x % 32 == 0) out[threadIdx.x / 32] = t1 - t0;
}
"""
MODES = ("FADD total += part", "FFMA part * uniform", "FADD total += uniform", "FFMA three registers",
         "FFMA part * per-thread")


def main() -> None:
    import numpy as np
    import torch

    import tmakit.cuda as tkc

    iters = 4000
    print(torch.cuda.get_device_name(), "(cycles per warp instruction per warp)")
    for mode, label in enumerate(MODES):
        k = tkc.kernel(SRC, "rate", options=[f"-DMODE={mode}"])
        row = []
        for threads in (128, 256):  # one, two warps per sub-partition
            out = torch.zeros(8, dtype=torch.int64, device="cuda")
            sink = torch.zeros(threads, dtype=torch.float32, device="cuda")
            k((1, 1, 1), (threads, 1, 1), out, sink, np.int32(iters), np.float32(1.0001))
            torch.cuda.synchronize()
            row.append(out[: threads // 32].double().mean().item() / (iters * 96))
        print(f"{label:24s} 1 warp: {row[0]:.2f}   2 warps: {row[1]:.2f}")


if __name__ == "__main__":
    main()
