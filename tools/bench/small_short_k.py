"""The small-problem GEMM kernel against cuBLAS where K is short: random shapes (M, N log-uniform with M*N <= 2^20,
K log-uniform in [1, 128], bf16 / fp16, both B layouts, operands 16-byte loadable where the draw allows). Each shape
the default route sends to the small kernel (``gemm_small.takes``; the others are skipped) is timed as a default
``tk.ops.gemm`` call (the cached path) and as ``torch.matmul`` (events after an L2 flush, interleaved rounds,
medians) and checked against fp32. Prints, per K band, the geomean and minimum of cuBLAS time / small-kernel time,
and the worst shapes.

    PYTHONPATH=src python3 tools/bench/small_short_k.py [--cases 200] [--seed 1] [--rounds 3] [--reps 10]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics

BANDS = ((1, 7), (8, 15), (16, 31), (32, 63), (64, 128))


def draw(rng):
    k = max(1, int(round(math.exp(rng.uniform(0, math.log(128))))))
    m = max(1, int(round(math.exp(rng.uniform(0, math.log(16384))))))
    n = max(1, min(16384, int(round(math.exp(rng.uniform(0, math.log(max(2, (1 << 20) // m))))))))
    if rng.random() < 0.7:
        k, n = -(-k // 8) * 8, -(-n // 8) * 8
    return m, n, k, rng.choice(["bfloat16", "float16"]), rng.choice(["nk", "kn"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    args = ap.parse_args()
    import torch

    import tmakit as tk
    from tmakit.bench.moe import flush_buffer, time_rounds
    from tmakit.ops import gemm_small

    flush = flush_buffer(torch)
    rng = random.Random(args.seed)
    rows = []
    for _ in range(args.cases):
        m, n, k, dt, lay = draw(rng)
        dtype = getattr(torch, dt)
        a = torch.randn(m, k, device="cuda", dtype=dtype)
        b = torch.randn(k, n, device="cuda", dtype=dtype) if lay == "kn" else \
            torch.randn(n, k, device="cuda", dtype=dtype).t()
        takes = gemm_small.takes(a, b, None, None)
        o1, o2 = torch.empty(m, n, device="cuda", dtype=dtype), torch.empty(m, n, device="cuda", dtype=dtype)
        if not takes:
            continue
        fns = {"small": lambda a=a, b=b, o=o1: tk.ops.gemm(a, b, out=o),  # a default call: the cached path
               "cublas": lambda a=a, b=b, o=o2: torch.matmul(a, b, out=o)}
        fns["small"]()
        assert tk.ops.last_path == "small", (m, n, k, tk.ops.last_path)
        ref = a.float() @ b.float()
        err = float((o1.float() - ref).norm() / ref.norm().clamp_min(1e-30))
        t = {n_: statistics.median(v) for n_, v in time_rounds(fns, flush, args.rounds, args.reps).items()}
        rows.append(dict(m=m, n=n, k=k, dt=dt, lay=lay, takes=takes, ratio=t["cublas"] / t["small"],
                         us=t["small"] * 1e3, err=err))
    print(f"{torch.cuda.get_device_name()}; {args.cases} shapes, seed {args.seed}; ratio = cuBLAS time / small time")
    print("| K | routed to small: n | geomean | min |")
    print("|---|---:|---:|---:|")
    for lo, hi in BANDS:
        for_band = [r for r in rows if lo <= r["k"] <= hi]
        t = [r["ratio"] for r in for_band if r["takes"]]

        def gm(x):
            return math.exp(sum(map(math.log, x)) / len(x)) if x else float("nan")
        print(f"| {lo}-{hi} | {len(t)} | {gm(t):.3f} | {min(t, default=float('nan')):.3f} |")
    print("\nworst routed shapes:")
    for r in sorted((r for r in rows if r["takes"]), key=lambda r: r["ratio"])[:12]:
        print(f"  {r['m']}x{r['n']}x{r['k']} {r['dt']} {r['lay']}: {r['ratio']:.3f} ({r['us']:.1f} us, "
              f"err {r['err']:.1e})")
    print(f"max rel err {max(r['err'] for r in rows):.1e}")


if __name__ == "__main__":
    main()
