"""Where the FP8 kernel should run by default: the kernel's default plan (``strict=True``) against
``torch._scaled_mm`` with the same scales and accumulation, on random shapes, per-tensor and row-wise scales (the
evidence behind ``tmakit.ops.scaled_mm.slower_class``).

    python3 tools/bench/fp8_route.py [--shapes 90] [--seed 1] [--reps 10] [--fast-accum]

Shapes: M log-uniform in [1, 16384], N in [128, 16384] and K in [256, 16384], multiples of 32 (even 16-byte
pitches), 2MNK <= 4e12; per shape both scalings, the contenders alternating, each call after an L2 flush (CUDA
events, medians). Prints per shape the ratio torch time / kernel time (> 1: the kernel is faster) with the waves of
128x128 tiles on the GPU, then the geomean per class of the rule in ``slower_class`` and per wave bucket.
"""

from __future__ import annotations

import argparse

from fp8_plans import gm, shapes  # the same random shapes (tools/bench is the script's directory)


def measure(m: int, n: int, k: int, reps: int, flush, fast: bool) -> dict:
    import torch

    import tmakit as tk
    from tmakit.bench.timing import time_events
    from tmakit.ops import quantize as Q

    x, w = torch.randn(m, k, device="cuda"), torch.randn(n, k, device="cuda")
    cases = {"tensor": (Q.quantize_tensor(x), Q.quantize_tensor(w)), "row": (Q.quantize_rows(x), Q.quantize_rows(w))}
    fns, labels = [], []
    for mode, ((qa, sa), (qw, sb)) in cases.items():
        sbt = sb.reshape(1, -1) if mode == "row" else sb
        ot = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
        ok = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
        fns.append(lambda i, a=qa, b=qw.t(), s1=sa, s2=sbt, o=ot: torch._scaled_mm(
            a, b, s1, s2, out_dtype=torch.bfloat16, out=o, use_fast_accum=fast))
        fns.append(lambda i, a=qa, b=qw.t(), s1=sa, s2=sbt, o=ok: tk.ops.scaled_mm(
            a, b, s1, s2, out=o, use_fast_accum=fast, strict=True))
        labels += [f"{mode} torch", f"{mode} kernel"]
    t = dict(zip(labels, time_events(fns, 1, flush, 3, reps)))
    return {mode: t[f"{mode} torch"] / t[f"{mode} kernel"] for mode in cases}


def main(argv=None) -> list:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", type=int, default=90)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--fast-accum", action="store_true")
    args = ap.parse_args(argv)
    import torch

    from tmakit.kernels.gemm import NUM_SMS

    print(torch.cuda.get_device_name(), f"seed {args.seed}", "fast accumulation" if args.fast_accum else "two-level",
          flush=True)
    flush = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")
    rows = []
    for m, n, k in shapes(args.shapes, args.seed):
        waves = -(-m // 128) * -(-n // 128) / NUM_SMS
        r = measure(m, n, k, args.reps, flush, args.fast_accum)
        rows.append(((m, n, k), waves, r))
        print(f"{m:5}x{n:5}x{k:5}  waves {waves:6.2f}  tensor {r['tensor']:.3f}  row {r['row']:.3f}", flush=True)
    buckets = ((0, 0.5), (0.5, 1), (1, 2), (2, 4), (4, 8), (8, 1e9))
    for mode in ("tensor", "row"):
        for lo, hi in buckets:
            xs = [r[mode] for _, w, r in rows if lo <= w < hi]
            if xs:
                print(f"{mode}: waves [{lo}, {hi}): {len(xs)} shapes, geomean {gm(xs):.3f}, min {min(xs):.3f}, "
                      f"max {max(xs):.3f}")
        small = [r[mode] for (m, n, k), _, r in rows if m <= 128 and k >= 2048]
        print(f"{mode}: M <= 128 and K >= 2048: {len(small)} shapes, geomean {gm(small):.3f}")
        print(f"{mode}: all {len(rows)} shapes, geomean {gm([r[mode] for *_, r in rows]):.3f}")
    return rows


if __name__ == "__main__":
    main()
