"""How far `tk.ops.grouped_mm` and `torch._grouped_mm` are from what the GPU allows on the MoE suite's cases.

    python3 tools/bench/grouped_bound.py [--rounds 5] [--reps 7] [--all]

Per case of ``tmakit.bench.moe.CASES`` (by default those of at most 256 rows per expert, issue 25's 1.3x group):
both contenders timed in interleaved rounds (each call after an L2 flush, CUDA events, medians), and a lower bound
on any kernel's time, ``max(bytes / copy ceiling, flops / dense ceiling)``: bytes = weights + A + C read or written
once; the copy ceiling is ``copy_`` of 2 GiB (read + write bytes per second); the dense ceiling is ``torch.matmul``
of 8192^3 bf16 (TFLOP/s), both measured in the same process. Prints per case torch / tmakit, torch / bound (the
largest ratio a kernel at both ceilings could reach) and bound / tmakit (tmakit's share of the bound), then their
geomeans.
"""

from __future__ import annotations

import argparse
import math
import statistics


def ceilings(torch, flush) -> tuple[float, float]:
    """(copy bytes/s, dense bf16 flop/s) measured here."""
    from tmakit.bench.timing import time_events

    src = torch.empty(1 << 31, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    t_copy = time_events([lambda i, d=dst, s=src: d.copy_(s)], 1, flush, 3, 9)[0] * 1e-3
    del src, dst
    x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    t_mm = time_events([lambda i: torch.matmul(x, x)], 1, flush, 3, 9)[0] * 1e-3
    return 2 * (1 << 31) / t_copy, 2 * 8192**3 / t_mm


def case_times(torch, case, flush, rounds: int, reps: int) -> tuple[float, float, int, int]:
    """(torch s, tmakit s, bytes, flops) of one suite case."""
    import tmakit as tk
    from tmakit.bench.moe import moe_problem, time_rounds

    experts, rows, n, k, dist = case
    a, b, offs, ends = moe_problem(torch, experts, rows, n, k, dist)
    m = ends[-1]
    out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    times = time_rounds({"torch": lambda: torch._grouped_mm(a, b, offs),
                         "tmakit": lambda: tk.ops.grouped_mm(a, b, offs, out=out)}, flush, rounds, reps)
    nbytes = 2 * (experts * n * k + m * k + m * n)
    return (statistics.median(times["torch"]) * 1e-3, statistics.median(times["tmakit"]) * 1e-3, nbytes,
            2 * m * n * k)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--all", action="store_true", help="every suite case, not only <= 256 rows per expert")
    args = ap.parse_args(argv)
    import torch

    from tmakit.bench.moe import CASES, flush_buffer

    flush = flush_buffer(torch)
    copy_bw, dense = ceilings(torch, flush)
    print(f"{torch.cuda.get_device_name()}: copy ceiling {copy_bw / 1e12:.2f} TB/s, dense bf16 {dense / 1e12:.0f} "
          "TFLOP/s")
    print("| experts x rows | N x K | split | torch / tmakit | torch / bound | bound / tmakit | bound by |")
    print("|---|---|---|---:|---:|---:|---|")
    got = []
    for case in CASES:
        if case[1] > 256 and not args.all:
            continue
        t_torch, t_tk, nbytes, flops = case_times(torch, case, flush, args.rounds, args.reps)
        t_mem, t_mma = nbytes / copy_bw, flops / dense
        bound = max(t_mem, t_mma)
        got.append((t_torch / t_tk, t_torch / bound, bound / t_tk))
        print(f"| {case[0]} x {case[1]} | {case[2]}x{case[3]} | {case[4]} | {got[-1][0]:.3f} | {got[-1][1]:.3f} | "
              f"{got[-1][2]:.3f} | {'DRAM' if t_mem >= t_mma else 'tensor cores'} |", flush=True)
    geo = [math.exp(statistics.fmean(math.log(g[j]) for g in got)) for j in range(3)]
    print(f"geomean: torch / tmakit {geo[0]:.3f}, torch / bound {geo[1]:.3f}, bound / tmakit {geo[2]:.3f} "
          f"({len(got)} cases)")


if __name__ == "__main__":
    main()
