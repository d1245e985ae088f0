"""The FP8 two-level kernel's two tile widths, 128x192 and 128x128, against each other on random shapes (the evidence
behind ``gemm_fp8.choose_config``'s width rule): per shape and scaling (per tensor, block-wise) the default plan and
both widths forced, each call after an L2 flush, contenders alternating; per tensor also ``torch._scaled_mm``.

    python3 tools/bench/fp8_tiles.py [--shapes 14] [--seed 33] [--reps 8] [--narrow]

Shapes: M log-uniform in [512, 16384] (``--narrow``: [1024, 16384]), N in [512, 16384] (``--narrow``: uniform in
[512, 1600)) and K in [512, 16384] (``--narrow``: [1024, 16384]), multiples of 32, 2MNK <= 4e12. Prints per shape
each width's time relative to the default's, then per mode how far the rule's pick is from the faster width
(geomean of picked / best speed) and the shapes where it is more than 5 % off.
"""

from __future__ import annotations

import argparse
import math
import random

from fp8_plans import gm, launch_plan  # tools/bench is the script's directory


def shapes(n: int, seed: int, narrow: bool) -> list[tuple[int, int, int]]:
    rng = random.Random(seed)
    out = []
    lo = 1024 if narrow else 512
    while len(out) < n:
        m = int(math.exp(rng.uniform(math.log(lo), math.log(16384)))) // 32 * 32
        nn = rng.randrange(512, 1600) // 32 * 32 if narrow else \
            int(math.exp(rng.uniform(math.log(512), math.log(16384)))) // 32 * 32
        k = int(math.exp(rng.uniform(math.log(lo), math.log(16384)))) // 32 * 32
        if 2.0 * m * nn * k <= 4e12:
            out.append((m, nn, k))
    return out


def measure(m: int, n: int, k: int, mode: str, reps: int, flush) -> dict:
    import torch

    from tmakit.bench.timing import time_events
    from tmakit.kernels import gemm_fp8 as K
    from tmakit.ops import quantize as Q

    x, w = torch.randn(m, k, device="cuda"), torch.randn(n, k, device="cuda")
    (qa, sa), (qw, sb) = (Q.quantize_tensor(x), Q.quantize_tensor(w)) if mode == "tensor" else \
        (Q.quantize_1x128(x), Q.quantize_128x128(w))
    args = (qa, qw.t(), sa, sb)
    narrow = "n128_s5_c1" if mode == "block" else "n128_s6_c1"
    fns, labels, default = [], [], None
    if mode == "tensor":
        o = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
        fns.append(lambda i: torch._scaled_mm(qa, qw.t(), sa, sb, out_dtype=torch.bfloat16, out=o))
        labels.append("torch")
    for name, config in (("default", None), ("128x192", "n192_s4_c1"), ("128x128", narrow)):
        f, p, _ = launch_plan(K, args, torch.empty(m, n, dtype=torch.bfloat16, device="cuda"), config)
        fns.append(f)
        labels.append(name)
        default = default or p.config
    t = dict(zip(labels, time_events(fns, 1, flush, 3, reps)))
    return dict(t=t, default=f"{default.bm}x{default.bn} c{default.cluster}")


def main(argv=None) -> list:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", type=int, default=14)
    ap.add_argument("--seed", type=int, default=33)
    ap.add_argument("--reps", type=int, default=8)
    ap.add_argument("--narrow", action="store_true")
    args = ap.parse_args(argv)
    import torch

    print(torch.cuda.get_device_name(), f"seed {args.seed}", "narrow" if args.narrow else "", flush=True)
    flush = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")
    rows = []
    for mode in ("tensor", "block"):
        for m, n, k in shapes(args.shapes, args.seed, args.narrow):
            r = measure(m, n, k, mode, args.reps, flush)
            t = r["t"]
            if r["default"] not in ("128x192 c1", "128x128 c1"):
                print(f"{mode:6} {m:5}x{n:5}x{k:5}  default {r['default']}: another rule (few tiles, split K)")
                continue
            rows.append((mode, (m, n, k), t))
            vs = f"  torch/default {t['torch'] / t['default']:.3f}" if "torch" in t else ""
            print(f"{mode:6} {m:5}x{n:5}x{k:5}  default {r['default']}  128x192 {t['default'] / t['128x192']:.3f}  "
                  f"128x128 {t['default'] / t['128x128']:.3f}{vs}", flush=True)
    for mode in ("tensor", "block"):
        picked = [(s, min(t["128x192"], t["128x128"]) / t["default"]) for md, s, t in rows if md == mode]
        off = [f"{s} {v:.2f}" for s, v in picked if v < 0.95]
        print(f"{mode}: the rule's pick at {gm([v for _, v in picked]):.3f} of the faster width's speed over "
              f"{len(picked)} shapes; more than 5 % off on {len(off)}: {', '.join(off)}")
    return rows


if __name__ == "__main__":
    main()
