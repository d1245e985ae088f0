"""Clock and power while FP8 GEMMs run back to back: tmakit's default plan and ``torch._scaled_mm`` (cuBLAS), each
looped for a few seconds beside ``nvidia-smi`` sampling the SM clock, the board power, its limit and the active
clock throttle reasons (0x4: software power cap). Prints TFLOP/s per contender and the samples after the first
second (docs/HARDWARE.md section 12).

    python3 tools/bench/fp8_power.py [--shape 8192x8192x8192] [--seconds 3]
"""

from __future__ import annotations

import argparse
import subprocess
import time

QUERY = "clocks.sm,power.draw,power.limit,clocks_throttle_reasons.active"


def run(fn, seconds: float) -> tuple[float, list[str]]:
    """Seconds per call of ``fn`` looped for ``seconds`` and the nvidia-smi samples taken meanwhile (200 ms apart)."""
    import torch

    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    mon = subprocess.Popen(["nvidia-smi", f"--query-gpu={QUERY}", "--format=csv,noheader", "-lms", "200"],
                           stdout=subprocess.PIPE, text=True)
    t0, calls = time.perf_counter(), 0
    while time.perf_counter() - t0 < seconds:
        for _ in range(50):
            fn()
        calls += 50
        torch.cuda.synchronize()
    dt = (time.perf_counter() - t0) / calls
    mon.terminate()
    return dt, mon.communicate()[0].strip().splitlines()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", default="8192x8192x8192")
    ap.add_argument("--seconds", type=float, default=3.0)
    args = ap.parse_args(argv)
    import torch

    import tmakit as tk
    from tmakit.ops import quantize as Q

    m, n, k = (int(v) for v in args.shape.split("x"))
    (qa, sa), (qw, sb) = Q.quantize_tensor(torch.randn(m, k, device="cuda")), \
        Q.quantize_tensor(torch.randn(n, k, device="cuda"))
    out = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
    print(torch.cuda.get_device_name(), args.shape, f"samples: {QUERY}")
    for name, fn in (("tmakit", lambda: tk.ops.scaled_mm(qa, qw.t(), sa, sb, out=out, strict=True)),
                     ("cuBLAS", lambda: torch._scaled_mm(qa, qw.t(), sa, sb, out_dtype=torch.bfloat16, out=out))):
        dt, samples = run(fn, args.seconds)
        print(f"{name}: {2 * m * n * k / dt / 1e12:.0f} TFLOP/s back to back; {samples[5:11]}")


if __name__ == "__main__":
    main()
