"""FP8 decode and other few-tile shapes (a few rows against weight-sized N x K): the default plan against the 64x128
plan it replaced, and per tensor against ``torch._scaled_mm`` (cuBLAS), the evidence behind
``gemm_fp8.choose_config``'s 64x64 rule.

    python3 tools/bench/fp8_decode.py [--seed S ...] [--count 16] [--rows LO HI] [--model]

Per shape and mode (block-wise, per tensor, row-wise two-level; per tensor with fast accumulation) each contender
runs in a CUDA graph of calls over 8 weight sets (more bytes than the L2 holds, so the weights stream from DRAM as
in a decode step), medians of 7 replays per call. ``--model``: DeepSeek-V3-like projections (M = 1 .. 64) instead
of random shapes (M log-uniform in ``--rows`` [1, 64], N a multiple of 64, K 16-128 slabs of 128, at most 33 tiles
of 64x128, a quarter of the SMs). Prints per shape the times in microseconds and per mode the geomean of previous /
default time.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics

MODEL = [(1, 2112, 7168), (16, 2112, 7168), (64, 2112, 7168), (1, 576, 7168), (16, 576, 7168), (8, 1536, 7168),
         (64, 1536, 7168), (16, 4096, 7168), (64, 4096, 7168), (4, 3072, 1536), (32, 1024, 16384)]
SETS = 8


def shapes(count: int, seed: int, rows: tuple[int, int] = (1, 64)) -> list[tuple[int, int, int]]:
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        m = max(1, int(math.exp(rng.uniform(math.log(rows[0]), math.log(rows[1])))))
        n, k = 64 * rng.randrange(2, 65), 128 * rng.randrange(16, 129)
        if -(-m // 64) * -(-n // 128) <= 33:
            out.append((m, n, k))
    return out


def graph_time(fns, calls: int = 6) -> float:
    """Seconds per call of ``fns`` (cycled) replayed from one CUDA graph: median of 7 replays."""
    from tmakit.bench import timing

    n = calls * len(fns)
    return timing.replay_ms(timing.capture(lambda i: fns[i](), len(fns), n), n) * 1e-3


def quantized(mode: str, x, ws):
    from tmakit.ops import quantize as Q

    if mode == "block":
        return Q.quantize_1x128(x), [Q.quantize_128x128(w) for w in ws]
    if mode == "row":
        return Q.quantize_rows(x), [(q, s.t().contiguous()) for q, s in (Q.quantize_rows(w) for w in ws)]
    return Q.quantize_tensor(x), [Q.quantize_tensor(w) for w in ws]


def measure(m: int, n: int, k: int) -> dict:
    import sys
    from pathlib import Path

    import torch

    from tmakit.kernels import gemm_fp8 as K

    sys.path.insert(0, str(Path(__file__).parent))
    from fp8_plans import launch_plan

    x = torch.randn(m, k, device="cuda")
    ws = [torch.randn(n, k, device="cuda") for _ in range(SETS)]
    row = {}
    for mode, fast in (("block", False), ("tensor", False), ("row", False), ("tensor", True)):
        (qa, sa), qs = quantized(mode, x, ws)
        tag = mode + ("-fast" if fast else "")
        prev = "m64_n128_s8_c1_ov1" if fast else "m64_n128_s8_c1"
        for name, cfg in (("default", None), ("previous", prev)):
            outs = [torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda") for _ in range(SETS)]
            fns = [(lambda f=launch_plan(K, (qa, qw.t(), sa, sb), o, config=cfg, fast=fast)[0]: f(0))
                   for (qw, sb), o in zip(qs, outs)]
            row[(tag, name)] = graph_time(fns)
            if torch.isnan(outs[0]).any():
                raise AssertionError(f"{tag} {name}: NaN left in the output of {m}x{n}x{k}")
        if mode == "tensor":
            row[(tag, "torch")] = graph_time([
                (lambda qa=qa, sa=sa, qw=qw, sb=sb, fast=fast: torch._scaled_mm(
                    qa, qw.t(), sa, sb, out_dtype=torch.bfloat16, use_fast_accum=fast)) for qw, sb in qs])
        row[(tag, "config")] = K.plan_fp8(qa, qs[0][0].t(), sa, qs[0][1], None, None, "bfloat16", None, fast,
                                          None).config
    return row


def main(argv=None) -> dict:
    import torch

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, nargs="+", default=[11])
    ap.add_argument("--count", type=int, default=16)
    ap.add_argument("--rows", type=int, nargs=2, default=[1, 64], metavar=("LO", "HI"))
    ap.add_argument("--model", action="store_true")
    args = ap.parse_args(argv)
    todo = MODEL if args.model else [s for seed in args.seed for s in shapes(args.count, seed, tuple(args.rows))]
    print(torch.cuda.get_device_name(), "model shapes" if args.model else f"seeds {args.seed}, rows {args.rows}")
    gains: dict = {}
    for m, n, k in todo:
        r = measure(m, n, k)
        cells = []
        for tag in ("block", "tensor", "row", "tensor-fast"):
            c = r[(tag, "config")]
            t, tp = r[(tag, "default")], r[(tag, "previous")]
            gains.setdefault(tag, []).append(tp / t)
            extra = f" cuBLAS {r[(tag, 'torch')] * 1e6:5.1f}" if (tag, "torch") in r else ""
            cells.append(f"{tag} {c.bm}x{c.bn} {t * 1e6:5.1f} (prev {tp * 1e6:5.1f}){extra}")
        print(f"{m:3d}x{n:5d}x{k:5d} | " + " | ".join(cells), flush=True)
    for tag, v in gains.items():
        print(f"{tag:12s} previous / default time: geomean {statistics.geometric_mean(v):.3f}, min {min(v):.3f}, "
              f"max {max(v):.3f} ({len(v)} shapes)")
    return gains


if __name__ == "__main__":
    main()
