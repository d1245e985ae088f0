"""Host cost of one ``tmakit.ops_gemm.gemm`` call (device script): calls/s with the GPU kept busy, plus a profile.

    PYTHONPATH=src python3 benchmarks/gemm_host.py [MxNxK ...]
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import time

import torch

from tmakit.ops_gemm import gemm


def main() -> None:
    shapes = [tuple(int(x) for x in s.split("x")) for s in sys.argv[1:]] or [(1024, 1024, 1024), (2048, 2048, 2048)]
    for m, n, k in shapes:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t()
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        for _ in range(20):
            gemm(a, b, out=c)
            torch.matmul(a, b, out=c)
        torch.cuda.synchronize()
        for name, fn in (("tmakit", lambda: gemm(a, b, out=c)), ("torch", lambda: torch.matmul(a, b, out=c))):  # noqa: B023
            t0 = time.perf_counter()
            for _ in range(2000):
                fn()
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            t2 = time.perf_counter()
            print(f"{m}x{n}x{k} {name}: host {1e6 * (t1 - t0) / 2000:.1f} us/call, wall {1e6 * (t2 - t0) / 2000:.1f}")
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(500):
            gemm(a, b, out=c)
        pr.disable()
        torch.cuda.synchronize()
        pstats.Stats(pr).sort_stats("tottime").print_stats(8)


if __name__ == "__main__":
    main()
