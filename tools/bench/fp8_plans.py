"""The FP8 kernel's default plan against its alternatives on random shapes (the evidence behind ``choose_config``'s
64-row rules and ``schedule``'s stream-K rules): per shape and scaling mode (per tensor, block-wise), the default
plan, the 128x128-, 128x192- and 64x128-tile plans, and the default with stream-K off and with a stream-K tail
however full, each call after an L2 flush, contenders alternating; per tensor also ``torch._scaled_mm``.
``--fast-accum``: per tensor only, both sides with fast accumulation (64x128 alternative: the overlapped
``m64_n128_s8_c1_ov1``).

    python3 tools/bench/fp8_plans.py [--shapes 48] [--seed 3] [--reps 10] [--fast-accum] [--mnk MxNxK,...]

Prints per shape each alternative's time over the default's (> 1: the default is faster) and the default's plan,
then per mode the geomean of the best alternative over the default and the shapes where an alternative is ahead by
more than 5 %. Shapes: M log-uniform in [1, 16384], N in [128, 16384] and K in [256, 16384], multiples of 32, or
the list ``--mnk`` names (``DECODE``: ``--mnk decode``, rows of 1-64 against weight-sized N x K).
"""

from __future__ import annotations

import argparse
import math
import random

from tmakit.bench.gemm_report import geomean

DECODE = [(18, 768, 6336), (1, 4096, 4096), (20, 736, 3040), (1, 2016, 5440), (42, 672, 2912), (1, 160, 4256),
          (20, 160, 3072), (18, 128, 9344), (2, 6496, 4576), (30, 3936, 5504), (16, 4096, 7168), (64, 2048, 7168),
          (32, 1536, 4096), (1, 7168, 2048), (4, 2048, 7168)]


ALTS = ("128x128", "128x192", "64x128", "no stream-K", "stream-K tail")


def shapes(n: int, seed: int) -> list[tuple[int, int, int]]:
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        m = max(1, int(math.exp(rng.uniform(0, math.log(16384)))))
        nn = max(128, int(math.exp(rng.uniform(math.log(128), math.log(16384)))) // 32 * 32)
        k = max(256, int(math.exp(rng.uniform(math.log(256), math.log(16384)))) // 32 * 32)
        if 2.0 * m * nn * k <= 4e12:
            out.append((m, nn, k))
    return out


def launch_plan(K, args, out, config=None, stream_k="auto", fast=False, bias=None):
    """(fn(i), plan, schedule): ``gemm_fp8`` (``K``) planned on ``args`` = (a, b, scale_a, scale_b) into ``out``,
    launched through its memoised launcher with a stream-K workspace of its own. The launcher holds raw pointers
    only, so ``fn`` holds the operands, the output and the workspace (a caller that rebinds its operand names
    between plans would otherwise time kernels reading freed, reused memory)."""
    import torch

    p = K.plan_fp8(*args, bias, out, "bfloat16", config, fast, None)
    sched = K.schedule(p, stream_k=stream_k)
    ws = torch.empty(max(sched.ws_bytes, 1), dtype=torch.uint8, device="cuda")
    flags = torch.zeros(max(sched.flag_count, 1), dtype=torch.int32, device="cuda")
    fn = K.launcher(p, *(a.data_ptr() for a in args[:2]), out.data_ptr(), *(a.data_ptr() for a in args[2:]),
                    bias.data_ptr() if bias is not None else 0, ws.data_ptr(), flags.data_ptr(), stream_k=stream_k)
    return (lambda i, f=fn, keep=(ws, flags, args, out, bias): f()), p, sched


def measure(m: int, n: int, k: int, reps: int, flush, fast: bool = False) -> dict:
    import torch

    from tmakit.bench.timing import time_events
    from tmakit.kernels import gemm_fp8 as K
    from tmakit.ops import quantize as Q

    x, w = torch.randn(m, k, device="cuda"), torch.randn(n, k, device="cuda")
    (qa, sa), (qw, sb) = Q.quantize_tensor(x), Q.quantize_tensor(w)
    (qa3, sa3), (qw3, sb3) = Q.quantize_1x128(x), Q.quantize_128x128(w)
    ref = Q.dequantize(qa3, sa3) @ Q.dequantize(qw3, sb3).t()
    fns, labels, outs, plans = [], [], [], {}
    o = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
    fns.append(lambda i: torch._scaled_mm(qa, qw.t(), sa, sb, out_dtype=torch.bfloat16, out=o, use_fast_accum=fast))
    labels.append("tensor torch")
    modes = (("tensor", (qa, qw.t(), sa, sb)),) + (() if fast else (("block", (qa3, qw3.t(), sa3, sb3)),))
    for mode, args in modes:
        narrow = "n128_s5_c1" if mode == "block" else "n128_s6_c1"
        for name, config, sk in (("default", None, "auto"), ("128x128", narrow, "auto"),
                                 ("128x192", "n192_s4_c1", "auto"),
                                 ("64x128", "m64_n128_s8_c1" + ("_ov1" if fast else ""), "auto"),
                                 ("no stream-K", None, "off"), ("stream-K tail", None, "tail")):
            out = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
            f, p, sched = launch_plan(K, args, out, config, sk, fast)
            fns.append(f)
            labels.append(f"{mode} {name}")
            outs.append((mode, out))
            c = p.config
            plans[f"{mode} {name}"] = f"{c.bm}x{c.bn} c{c.cluster} split {p.split} stream-K {sched.sk_units}/{p.units}"
    for f in fns:
        f(0)
    torch.cuda.synchronize()
    ref = Q.dequantize(qa, sa) @ Q.dequantize(qw, sb).t() if fast else ref
    err = max(float((o.float() - ref).norm() / ref.norm()) for md, o in outs if md == ("tensor" if fast else "block"))
    t = dict(zip(labels, time_events(fns, 1, flush, 3, reps)))
    return dict(shape=(m, n, k), t=t, plans=plans, err=err)


def gm(xs) -> float:
    """Geometric mean (tmakit.bench.gemm_report.geomean); nan for no values, so it prints with a format."""
    g = geomean(xs)
    return float("nan") if g is None else g


def main(argv=None) -> list:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", type=int, default=48)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--fast-accum", action="store_true")
    ap.add_argument("--mnk", default=None, help="MxNxK,... or 'decode' (instead of random shapes)")
    args = ap.parse_args(argv)
    import torch

    print(torch.cuda.get_device_name(), f"shapes {args.mnk}" if args.mnk else f"seed {args.seed}", flush=True)
    flush = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")
    rows = []
    todo = (DECODE if args.mnk == "decode" else [tuple(int(v) for v in s.split("x")) for s in args.mnk.split(",")]) \
        if args.mnk else shapes(args.shapes, args.seed)
    for m, n, k in todo:
        r = measure(m, n, k, args.reps, flush, args.fast_accum)
        rows.append(r)
        t = r["t"]
        cells = [f"cuBLAS/default {t['tensor torch'] / t['tensor default']:.2f}"]
        for mode in ("tensor",) + (() if args.fast_accum else ("block",)):
            cells.append(mode + " " + " ".join(f"{alt} {t[f'{mode} {alt}'] / t[f'{mode} default']:.2f}"
                                               for alt in ALTS))
        print(f"{m:5}x{n:5}x{k:5}  " + " | ".join(cells) + f" | default {r['plans']['tensor default']}", flush=True)
    for mode in ("tensor",) + (() if args.fast_accum else ("block",)):
        best = [min(r["t"][f"{mode} {a}"] for a in ALTS) / r["t"][f"{mode} default"]
                for r in rows]
        behind = [f"{r['shape']} {b:.2f}" for r, b in zip(rows, best) if b < 0.95]
        print(f"{mode}: best alternative / default geomean {gm(best):.3f}, ahead by > 5 % on {len(behind)} of "
              f"{len(rows)}: {', '.join(behind)}")
    vs = gm([r["t"]["tensor torch"] / r["t"]["tensor default"] for r in rows])
    print(f"tensor: default vs cuBLAS geomean {vs:.3f}; max error {max(r['err'] for r in rows):.1e}")
    return rows


if __name__ == "__main__":
    main()
