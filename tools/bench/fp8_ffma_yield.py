"""The FP8 GEMM with the yield flags of its promotion runs rewritten in the cubin (tmakit.cuda.sass_patch), against
the kernel as compiled, in one process:

    python3 tools/bench/fp8_ffma_yield.py [--reps N] [--shapes MxNxK,...] [--random N --seed S] [--modes M,...]
        [--scalings tensor,block]

Per shape: per-tensor scales (FADD promotion) and block scales (FFMA promotion), each as compiled and with every
``tmakit.cuda.sass_patch.MODES`` rewrite of its runs; the default plans, each call after an L2 flush, the variants
alternating. First checks that every rewrite's output equals the compiled kernel's bit for bit (the flags only
schedule). Prints TFLOP/s and each rewrite's speed over its compiled kernel, then geomeans per rewrite.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 7168, 2048), (4096, 18432, 7168), (4096, 7168, 16384),
          (2048, 4096, 14336), (128, 8192, 8192), (1024, 1024, 65536)]


def variants(modes=None, scalings=("tensor", "block")):
    """(scaling, sass_patch) pairs: each scaling as compiled, then with each mode (default: all of them)."""
    from tmakit.cuda import sass_patch as sp

    out = []
    for scaling in scalings:
        op = sp.FADD if scaling == "tensor" else sp.FFMA
        out.append((scaling, None))
        out += [(scaling, (op, mode)) for mode in (modes or sp.MODES)]
    return out


def label(v) -> str:
    scaling, patch = v
    return f"{scaling} {patch[1] if patch else 'as compiled'}"


def measure(m: int, n: int, k: int, reps: int, flush, vs) -> list[float]:
    """Milliseconds of each :func:`variants` entry on one problem (after checking outputs bit for bit)."""
    import torch

    from tmakit.bench.timing import time_events
    from tmakit.kernels import gemm_fp8 as K
    from tmakit.ops import quantize as Q

    x, w = torch.randn(m, k, device="cuda"), torch.randn(n, k, device="cuda")
    (qa, sa), (qw, sb) = Q.quantize_1x128(x), Q.quantize_128x128(w)
    one = torch.ones((), device="cuda")
    b = qw.t()
    fns, keep, outs = [], [], {}
    for scaling, patch in vs:
        s0, s1 = (one, one) if scaling == "tensor" else (sa, sb)
        p = K.plan_fp8(qa, b, s0, s1, None, None, "bfloat16", None, False, None)
        sched = K.schedule(p)
        ws = torch.empty(max(sched.ws_bytes, 1), dtype=torch.uint8, device="cuda")
        flags = torch.zeros(max(sched.flag_count, 1), dtype=torch.int32, device="cuda")
        out = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
        f = K.launcher(p, qa.data_ptr(), b.data_ptr(), out.data_ptr(), s0.data_ptr(), s1.data_ptr(), 0,
                       ws.data_ptr(), flags.data_ptr(), sass_patch=patch)
        f()
        torch.cuda.synchronize()
        ref = outs.setdefault(scaling, out)
        if not torch.equal(out.view(torch.int16), ref.view(torch.int16)):
            raise AssertionError(f"{m}x{n}x{k} {label((scaling, patch))}: output differs from the compiled kernel's")
        fns.append(lambda i, f=f: f())
        keep.append((ws, flags, out))
    return time_events(fns, 1, flush, 3, reps)


def random_shapes(count: int, seed: int) -> list[tuple[int, int, int]]:
    """M log-uniform in [256, 16384], N, K log-uniform in [1024, 16384], all multiples of 128."""
    rng = random.Random(seed)

    def draw(lo, hi):
        return max(128, round(math.exp(rng.uniform(math.log(lo), math.log(hi))) / 128) * 128)

    return [(draw(256, 16384), draw(1024, 16384), draw(1024, 16384)) for _ in range(count)]


def main(argv=None) -> dict:
    import torch

    from tmakit.bench.timing import spin_up

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--shapes", default=None, help="MxNxK,... (default: issue 24's suite)")
    ap.add_argument("--random", type=int, default=0, help="also this many random shapes")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--modes", default=None, help="sass_patch modes, comma-separated (default: all)")
    ap.add_argument("--scalings", default="tensor,block")
    args = ap.parse_args(argv)
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")] if args.shapes else SHAPES
    shapes = shapes + random_shapes(args.random, args.seed)
    print(torch.cuda.get_device_name(), flush=True)
    spin_up(1.0)
    flush = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")
    vs = variants(args.modes.split(",") if args.modes else None, tuple(args.scalings.split(",")))
    rel = {label(v): [] for v in vs if v[1]}
    for m, n, k in shapes:
        ts = measure(m, n, k, args.reps, flush, vs)
        base = {v[0]: t for v, t in zip(vs, ts) if v[1] is None}
        line = f"{m}x{n}x{k}:"
        for v, t in zip(vs, ts):
            line += f" | {label(v)} {2.0 * m * n * k / t / 1e9:.0f}"
            if v[1]:
                rel[label(v)].append(base[v[0]] / t)
                line += f" ({base[v[0]] / t:.3f})"
        print(line, flush=True)
    for name, r in rel.items():
        print(f"{name:24s} geomean {statistics.geometric_mean(r):.3f}  min {min(r):.3f}  max {max(r):.3f}")
    return rel


if __name__ == "__main__":
    main()
