"""Two CTAs per SM against one (the evidence behind ``gemm_fp8.two_per_sm``): random FP8 shapes whose default plan
is 64x128 tiles two CTAs per SM (``m64_n128_s4_c1_e1_x2``), each timed against the plan ``choose_config`` makes
with ``per_sm=1`` (single 64x128 CTAs, 8 stages) in every scaling mode, plus ``torch._scaled_mm`` per tensor; each
call after an L2 flush, the contenders alternating; outputs NaN-poisoned and checked against the fp32 product of
the dequantized operands.

    python3 tools/bench/fp8_two_per_sm.py [--seed 1] [--shapes 24] [--mnk MxNxK,...] [--reps 12]

Shapes: M log-uniform in [1, 2048], N in [512, 32768] (multiples of 64), K in [512, 16384] (multiples of 128), kept
where the two rules differ; ``--mnk`` adds named shapes. Prints per shape new / old speed per mode (> 1: two CTAs
per SM faster) and both plans against cuBLAS per tensor, then the geomean per mode.
"""

from __future__ import annotations

import argparse
import math
import random

MODES = ("tensor", "row", "block")


def shapes(n: int, seed: int) -> list[tuple[int, int, int]]:
    from tmakit.kernels import gemm_fp8 as K

    rng = random.Random(seed)
    out = []
    while len(out) < n:
        m = max(1, int(math.exp(rng.uniform(0, math.log(2048)))))
        nn = int(math.exp(rng.uniform(math.log(512), math.log(32768)))) // 64 * 64
        k = int(math.exp(rng.uniform(math.log(512), math.log(16384)))) // 128 * 128
        if K.choose_config(m, nn, k, "tensor") != K.choose_config(m, nn, k, "tensor", per_sm=1):
            out.append((m, nn, k))
    return out


def measure(m: int, n: int, k: int, reps: int, flush) -> dict:
    import torch
    from fp8_plans import launch_plan

    from tmakit.bench.timing import time_events
    from tmakit.kernels import gemm_fp8 as K
    from tmakit.ops import quantize as Q

    x, w = torch.randn(m, k, device="cuda"), torch.randn(n, k, device="cuda")
    quant = {"tensor": (Q.quantize_tensor, Q.quantize_tensor), "row": (Q.quantize_rows, Q.quantize_rows),
             "block": (Q.quantize_1x128, Q.quantize_128x128)}
    o = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
    fns, labels, outs = [], [], []
    for mode in MODES:
        (qa, sa), (qw, sw) = quant[mode][0](x), quant[mode][1](w)
        ref = Q.dequantize(qa, sa) @ Q.dequantize(qw, sw).t()
        args = (qa, qw.t(), sa, sw.t() if mode == "row" else sw)
        if mode == "tensor":
            fns.append(lambda i, a=args: torch._scaled_mm(*a, out_dtype=torch.bfloat16, out=o))
            labels.append("cublas")
        for name, cfg in (("new", None), ("old", K.choose_config(m, n, k, mode, per_sm=1))):
            out = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
            f, p, _ = launch_plan(K, args, out, cfg)
            fns.append(f)
            labels.append(f"{mode} {name}")
            outs.append((out, ref, p))
    for f in fns:
        f(0)
    torch.cuda.synchronize()
    err = max(float((out.float() - ref).norm() / ref.norm()) for out, ref, _ in outs)
    t = dict(zip(labels, time_events(fns, 1, flush, 3, reps)))
    return dict(t=t, err=err, new=outs[0][2].config.name, old=outs[1][2].config.name)


def main(argv=None) -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--shapes", type=int, default=24)
    ap.add_argument("--mnk", default="", help="MxNxK,... measured besides the random shapes")
    ap.add_argument("--reps", type=int, default=12)
    args = ap.parse_args(argv)
    import torch

    print(torch.cuda.get_device_name(), "seed", args.seed, flush=True)
    flush = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")
    named = [tuple(int(v) for v in s.split("x")) for s in args.mnk.split(",") if s]
    gains = {mode: [] for mode in MODES}
    for m, n, k in named + shapes(args.shapes, args.seed):
        r = measure(m, n, k, args.reps, flush)
        t = r["t"]
        for mode in MODES:
            gains[mode].append(t[f"{mode} old"] / t[f"{mode} new"])
        cells = " ".join(f"{mode} {gains[mode][-1]:.3f}" for mode in MODES)
        print(f"{m:5}x{n:6}x{k:6} {r['old']} -> {r['new']} | new/old {cells} | per tensor vs cuBLAS old "
              f"{t['cublas'] / t['tensor old']:.3f} new {t['cublas'] / t['tensor new']:.3f} | err {r['err']:.1e}",
              flush=True)
    for mode, g in gains.items():
        print(f"{mode}: new/old geomean {math.exp(sum(map(math.log, g)) / len(g)):.3f} min {min(g):.3f} "
              f"max {max(g):.3f} over {len(g)}")


if __name__ == "__main__":
    main()
