"""``tmakit bench gemm --dtype fp8``: tmakit's scaled FP8 GEMM (``tk.ops.scaled_mm``) against its peer, timed in
the same process.

    tmakit bench gemm --dtype fp8 [--scaling tensor|row|block|all] [--shapes MxNxK,...] [--suite] [--random N]
                      [--seed S] [--out-dtype bf16|fp16|fp32] [--types e4m3,e4m3] [--fast-accum] [--reps N]
                      [--config NAME] [--split N] [--json FILE]

Peers: ``torch._scaled_mm`` (cuBLAS FP8) for tensor- and row-wise scaling; for block-wise, tmakit's own per-tensor
kernel on the same operands (the cost of block scaling) and ``torch._scaled_mm`` with the block scales where this
torch build accepts them. ``--fast-accum``: both sides with ``use_fast_accum=True`` (one tensor-core accumulation
chain; tensor- and row-wise only), else both with two-level accumulation (torch's default). Inputs: random normal
bf16 quantized to fp8 (``tk.ops.quantize``), b = w.t(). Per shape:
the error of tmakit's output (pre-filled with NaN) against an fp32 product of the dequantized operands (max |C - ref|
/ max |ref|); then warm-up and ``--reps`` single calls of each contender, alternating, each after a 256 MiB L2 flush,
the median CUDA-event time. TFLOP/s = 2MNK / t; ratio = tmakit / peer; geometric mean and minimum over the shapes.
Shapes ``torch._scaled_mm`` refuses (N or K not a multiple of 16) run on tmakit alone: their lines say so and the
summary counts them apart from the ratio.
Default shapes: the FP8 suite (issue 24). ``--random N``: N random shapes with M, N in [1, 8192], K in [16, 16384]
(K a multiple of 16, N of 8: TMA-legal rows). ``--config``: force one of ``tmakit.kernels.gemm_fp8.CONFIGS``
and ``--split``: K ranges per tile (tuning; the block-wise peer keeps the heuristics). Suite and ``--shapes`` time
the kernel (``strict=True``); ``--random`` times the default call, as a user makes it, whose path (kernel or
``torch._scaled_mm``, ``tk.ops.last_path``) each line names.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys

__all__ = ["SUITE", "bench_shape", "main", "random_shapes"]

SUITE = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 7168, 2048), (4096, 18432, 7168), (4096, 7168, 16384),
         (2048, 4096, 14336), (128, 8192, 8192), (1024, 1024, 65536)]
FLUSH_BYTES = 256 << 20
OUT = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}
FP8 = {"e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}


def random_shapes(n: int, seed: int = 0) -> list[tuple[int, int, int]]:
    rng = random.Random(seed)
    return [(rng.randint(1, 8192), rng.randint(1, 1024) * 8, rng.randint(1, 1024) * 16) for _ in range(n)]


def _operands(torch, mode, m, n, k, ta, tb):
    from tmakit.ops import quantize as q

    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    if mode == "tensor":
        (qa, sa), (qw, sw) = q.quantize_tensor(a, ta), q.quantize_tensor(w, tb)
        return qa, qw.t(), sa, sw, sw
    if mode == "row":
        (qa, sa), (qw, sw) = q.quantize_rows(a, ta), q.quantize_rows(w, tb)
        return qa, qw.t(), sa, sw.t(), sw
    (qa, sa), (qw, sw) = q.quantize_1x128(a, ta), q.quantize_128x128(w, tb)
    return qa, qw.t(), sa, sw, sw


def _time(torch, fns, reps: int, warmup: int = 3) -> list[float]:
    """Median CUDA-event ms of each fn, alternating, each call after an L2 flush (``timing.time_events``)."""
    from .timing import time_events

    flush = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device="cuda")
    return time_events([lambda i, f=fn: f() for fn in fns], 1, flush, warmup, reps)


def bench_shape(m, n, k, mode, out_dtype="bfloat16", types=("float8_e4m3fn", "float8_e4m3fn"), reps=20,
                fast=False, config=None, split=None, strict=True) -> dict:
    import torch

    import tmakit as tk
    from tmakit.ops import quantize as q

    od = getattr(torch, out_dtype)
    ta, tb = (getattr(torch, t) for t in types)
    qa, qb, sa, sb, sw = _operands(torch, mode, m, n, k, ta, tb)
    r = {"m": m, "n": n, "k": k, "scaling": mode, "out_dtype": out_dtype, "fast_accum": fast}
    out = torch.full((m, n), float("nan"), dtype=od, device="cuda")
    kw = dict(use_fast_accum=fast, strict=strict, config=config, split=split)
    tk.ops.scaled_mm(qa, qb, sa, sb, out=out, **kw)
    r["path"] = tk.ops.last_path
    r["config"] = _config_name(qa, qb, sa, sb, out, fast, config, split) if r["path"].startswith("tma") else "torch"
    ref = q.dequantize(qa, sa) @ q.dequantize(qb.t(), sw).t()
    r["err"] = float((out.float() - ref).abs().max() / ref.abs().max())
    del ref
    fns = {"tmakit": lambda: tk.ops.scaled_mm(qa, qb, sa, sb, out=out, **kw)}
    if mode != "block":  # into an output of its own, as tmakit's call
        t_out = torch.empty_like(out)
        peer_call = lambda: torch._scaled_mm(qa, qb, sa, sb, out_dtype=od, use_fast_accum=fast, out=t_out)  # noqa: E731
        try:  # torch._scaled_mm refuses some shapes tmakit takes (N or K not a multiple of 16)
            peer_call()
            fns["torch"] = peer_call
        except (RuntimeError, NotImplementedError, ValueError) as e:
            r["peer_refused"] = str(e).splitlines()[0][:120]
    else:
        one = torch.ones((), device="cuda")
        pt_out = torch.empty_like(out)
        fns["tmakit_tensor"] = lambda: tk.ops.scaled_mm(qa, qb, one, one, out=pt_out, strict=True)
        fns["tmakit_tensor_fast"] = lambda: tk.ops.scaled_mm(qa, qb, one, one, out=pt_out, use_fast_accum=True,
                                                             strict=True)
        try:  # torch builds with block-wise _scaled_mm (1x128 / 128x128): scale_a K-major as cuBLAS wants
            sa_t = sa.t().contiguous().t()
            torch._scaled_mm(qa, qb, sa_t, sb, out_dtype=od)
            fns["torch_block"] = lambda: torch._scaled_mm(qa, qb, sa_t, sb, out_dtype=od)
        except (RuntimeError, NotImplementedError, ValueError):
            pass
    ms = _time(torch, list(fns.values()), reps)
    flop = 2.0 * m * n * k
    for name, t in zip(fns, ms):
        r[f"{name}_ms"] = t
        r[f"{name}_tflops"] = flop / t / 1e9
    peer = "torch" if mode != "block" else "tmakit_tensor"
    if f"{peer}_tflops" in r:
        r["ratio"] = r["tmakit_tflops"] / r[f"{peer}_tflops"]
    return r


def _config_name(qa, qb, sa, sb, out, fast, config, split) -> str:
    from tmakit.kernels import gemm_fp8

    p = gemm_fp8.plan_fp8(qa, qb, sa, sb, out=out, config=config, fast_accum=fast, split=split)
    name = next((k for k, c in gemm_fp8.CONFIGS.items() if c == p.config), p.config.name)
    return name + (f" split {p.split}" if p.split > 1 else "")


def _line(r: dict) -> str:
    peers = " ".join(f"{k[:-7]} {r[k]:7.1f}" for k in r if k.endswith("_tflops") and k != "tmakit_tflops")
    ratio = f"ratio {r['ratio']:.3f}" if "ratio" in r else f"torch refuses ({r.get('peer_refused', '')})"
    return (f"{r['m']:>6}x{r['n']:<6}x{r['k']:<6} {r['scaling']:<6} tmakit {r['tmakit_tflops']:7.1f} TF  {peers}  "
            f"{ratio}  err {r['err']:.2e}  {r['config']}")


def _geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="tmakit bench gemm --dtype fp8", description=__doc__.split("\n\n")[0])
    ap.add_argument("--dtype", default="fp8", choices=["fp8"])
    ap.add_argument("--scaling", default="tensor", choices=["tensor", "row", "block", "all"])
    ap.add_argument("--shapes", default=None, help="MxNxK,MxNxK,...")
    ap.add_argument("--suite", action="store_true")
    ap.add_argument("--random", type=int, default=0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out-dtype", default="bf16", choices=sorted(OUT))
    ap.add_argument("--types", default="e4m3,e4m3", help="A,B fp8 types (e4m3 / e5m2)")
    ap.add_argument("--fast-accum", action="store_true")
    ap.add_argument("--config", default=None)
    ap.add_argument("--split", type=int, default=None)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    shapes = []
    if args.shapes:
        shapes += [tuple(int(x) for x in s.lower().split("x")) for s in args.shapes.split(",") if s]
    if args.suite or not (args.shapes or args.random):
        shapes += SUITE
    kernel_shapes = len(shapes)  # timed on the kernel (strict); the random ones as default calls
    if args.random:
        shapes += random_shapes(args.random, args.seed)
    knobs = args.config is not None or args.split is not None
    types = tuple(FP8[t.strip()] for t in args.types.split(","))
    modes = ["tensor", "row", "block"] if args.scaling == "all" else [args.scaling]
    rows = []
    for mode in modes:
        for i, (m, n, k) in enumerate(shapes):
            try:
                fast = args.fast_accum and mode != "block"
                r = bench_shape(m, n, k, mode, OUT[args.out_dtype], types, args.reps, fast, args.config, args.split,
                                strict=knobs or i < kernel_shapes)
                print(_line(r), flush=True)
            except Exception as e:  # noqa: BLE001 - one failing shape must not end the run
                r = {"m": m, "n": n, "k": k, "scaling": mode, "error": f"{type(e).__name__}: {e}"[:300]}
                print(f"{m}x{n}x{k} {mode}: {r['error']}", flush=True)
            rows.append(r)
            if args.json:
                with open(args.json, "w") as f:
                    json.dump({"rows": rows}, f, indent=1)
    for mode in modes:
        rs = [r["ratio"] for r in rows if r["scaling"] == mode and "ratio" in r]
        alone = sum(1 for r in rows if r["scaling"] == mode and "peer_refused" in r)
        note = f" ({alone} more that torch refuses ran on tmakit alone)" if alone else ""
        if rs:
            print(f"{mode}: geomean ratio {_geomean(rs):.3f}, min {min(rs):.3f} over {len(rs)} shapes{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
