"""``tmakit bench grouped``: ``tk.ops.grouped_mm`` against ``torch._grouped_mm`` on mixture-of-experts problems, and
``tk.ops.gemm_list`` (ptr-array) against the same problems as separate ``tk.ops.gemm`` calls and a cuBLAS loop.

Each case is G experts with N x K weights (bf16, ``b = w.transpose(-2, -1)`` of a (G, N, K) ``w``, as an MoE
layer holds them) and G x Mg tokens sorted by expert, split evenly ("uniform") or by Pareto weights with about 15 %
of the experts empty ("skewed"); ``--decode N`` draws cases of a few tokens each routed to k experts ("top{k}",
"top{k}-skewed": decode-like calls, most experts empty). Both results are checked against each other and an fp32
reference on a sample of groups; times are CUDA-event medians of single calls, each after an L2 flush, the two
libraries alternating in ``--rounds`` interleaved rounds; ratio = torch time / tmakit time (> 1: tmakit faster).
The summary splits the cases at 256 rows per expert on average (issue 25's two goals). ``--dtype fp8 [--scaling
row|block]``: the FP8 grouped GEMM instead (``tmakit.bench.grouped_fp8``); ``--form k|batch|train``: the weight
gradient (grouped along K), the batched form, or forward and backward under autograd, on the same cases
(``tmakit.bench.grouped_forms``).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys

from .moe import CASES, decode_cases, flush_buffer, moe_problem, random_cases, rows_per_expert, time_rounds

__all__ = ["CASES", "moe_problem", "run", "main"]

def _check(torch, a, b, ends, out, peer) -> float:
    """Relative error of ``out`` against fp32 on up to 4 non-empty groups; also vs the peer's result."""
    errs, lo = [], 0
    for gi, hi in enumerate(ends):
        if hi > lo and len(errs) < 4:
            ref = a[lo:hi].float() @ b[gi].float()
            errs.append(float((out[lo:hi].float() - ref).norm() / ref.norm().clamp_min(1e-30)))
        lo = hi
    if ends and ends[-1]:
        rows = ends[-1]
        errs.append(float((out[:rows].float() - peer[:rows].float()).norm() / peer[:rows].float().norm()))
    return max(errs) if errs else 0.0


def run(cases=CASES, rounds: int = 5, reps: int = 20, config: str | None = None) -> dict:
    import torch

    import tmakit as tk

    from .timing import spin_up

    flush = flush_buffer(torch)
    spin_up()
    rows_out = []
    for experts, rows, n, k, dist in cases:
        a, b, offs, ends = moe_problem(torch, experts, rows, n, k, dist)
        rpe = rows_per_expert(rows, dist, experts)
        out = torch.empty(a.shape[0], n, device="cuda", dtype=torch.bfloat16)
        peer = torch._grouped_mm(a, b, offs=offs)
        tk.ops.grouped_mm(a, b, offs, out=out, config=config)
        err = _check(torch, a, b, ends, out, peer)
        path = tk.ops.last_path
        fns = _calls(torch, tk, a, b, offs, out, config)
        for f in fns.values():
            for _ in range(3):
                f()
        times = time_rounds(fns, flush, rounds, reps)
        ratios = [th / tk_ for th, tk_ in zip(times["torch"], times["tmakit"])]
        flop = 2.0 * ends[-1] * n * k
        t_tk, t_th = statistics.median(times["tmakit"]), statistics.median(times["torch"])
        row = dict(experts=experts, rows_per_expert=rpe, n=n, k=k, dist=dist, tokens=ends[-1],
                   empty=sum(1 for lo, hi in zip([0] + ends[:-1], ends) if hi == lo), tmakit_ms=t_tk, torch_ms=t_th,
                   tmakit_tflops=flop / t_tk / 1e9, torch_tflops=flop / t_th / 1e9,
                   ratio=statistics.median(ratios), rel_err=err, path=path)
        rows_out.append(row)
        print(f"  G={experts:3d} rows/expert={rpe:5.3g} N={n} K={k} {dist:13s} tmakit {row['tmakit_tflops']:5.0f} TF "
              f"torch {row['torch_tflops']:5.0f} TF ratio {row['ratio']:.3f} err {err:.1e}", file=sys.stderr,
              flush=True)
        torch.cuda.empty_cache()
    return dict(device=torch.cuda.get_device_name(), torch=torch.__version__, rounds=rounds, reps=reps,
                config=config or "default", rows=rows_out, summary=summarize(rows_out))


def _calls(torch, tk, a, b, offs, out, config) -> dict:
    """The two timed calls on one problem's tensors."""
    return {"tmakit": lambda: tk.ops.grouped_mm(a, b, offs, out=out, config=config),
            "torch": lambda: torch._grouped_mm(a, b, offs=offs)}


# ptr-array lists: (problems, smallest side, largest side): M, N, K drawn uniformly (multiples of 8) per problem
LISTS = [(8, 1024, 4096), (16, 256, 2048), (64, 128, 1024), (32, 512, 4096), (128, 64, 512)]


def run_lists(lists=LISTS, rounds: int = 5, reps: int = 20) -> list[dict]:
    """``tk.ops.gemm_list`` (default calls) against the same problems as separate default ``tk.ops.gemm`` calls (each
    with its own plan and route, as a user would loop) and as a loop of ``torch.matmul`` on one stream (events after
    an L2 flush, interleaved rounds, medians)."""
    import torch

    import tmakit as tk

    flush = flush_buffer(torch)
    out_rows = []
    for count, lo, hi in lists:
        rng = random.Random(count * 1000 + lo)
        As, Bs = [], []
        for _ in range(count):
            m, n, k = (8 * rng.randint(lo // 8, hi // 8) for _ in range(3))
            As.append(torch.randn(m, k, device="cuda", dtype=torch.bfloat16))
            Bs.append(torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t())
        outs = [torch.empty(a.shape[0], b.shape[1], device="cuda", dtype=torch.bfloat16) for a, b in zip(As, Bs)]
        outs2 = [torch.empty_like(o) for o in outs]
        fns = _list_calls(torch, tk, As, Bs, outs, outs2)
        fns["list"]()
        err = max(float((o.float() - a.float() @ b.float()).norm() / (a.float() @ b.float()).norm())
                  for a, b, o in zip(As, Bs, outs))
        path = tk.ops.last_path
        for f in fns.values():
            f()
        t = {name: statistics.median(v) for name, v in time_rounds(fns, flush, rounds, reps).items()}
        flop = sum(2.0 * a.shape[0] * a.shape[1] * b.shape[1] for a, b in zip(As, Bs))
        row = dict(problems=count, sides=f"{lo}-{hi}", list_tflops=flop / t["list"] / 1e9,
                   gemm_loop_tflops=flop / t["gemm loop"] / 1e9, cublas_loop_tflops=flop / t["cublas loop"] / 1e9,
                   vs_gemm_loop=t["gemm loop"] / t["list"], vs_cublas_loop=t["cublas loop"] / t["list"],
                   rel_err=err, path=path)
        out_rows.append(row)
        print(f"  {count} problems, sides {lo}-{hi}: list {row['list_tflops']:.0f} TF, vs tk.ops.gemm loop "
              f"{row['vs_gemm_loop']:.3f}, vs cuBLAS loop {row['vs_cublas_loop']:.3f}", file=sys.stderr, flush=True)
    return out_rows


def _list_calls(torch, tk, As, Bs, outs, outs2) -> dict:
    return {"list": lambda: tk.ops.gemm_list(As, Bs, out=outs),
            "gemm loop": lambda: [tk.ops.gemm(a, b, out=o) for a, b, o in zip(As, Bs, outs2)],
            "cublas loop": lambda: [torch.matmul(a, b, out=o) for a, b, o in zip(As, Bs, outs2)]}


def summarize(rows) -> dict:
    def part(rs):
        x = [r["ratio"] for r in rs]
        if not x:
            return None
        lo = min(rs, key=lambda r: r["ratio"])
        return dict(n=len(x), geomean=math.exp(sum(map(math.log, x)) / len(x)), min=lo["ratio"],
                    min_case=f"G={lo['experts']} rows/expert={lo['rows_per_expert']:.3g} {lo['n']}x{lo['k']} "
                             f"{lo['dist']}")
    return {"rows/expert <= 256": part([r for r in rows if r["rows_per_expert"] <= 256]),
            "rows/expert > 256": part([r for r in rows if r["rows_per_expert"] > 256]), "all": part(rows)}


def markdown(res: dict) -> str:
    lines = [f"{res['device']}, torch {res['torch']}, config {res['config']}; medians of {res['rounds']} "
             f"interleaved rounds of {res['reps']} single calls, each after an L2 flush; ratio = torch._grouped_mm "
             f"time / tk.ops.grouped_mm time.", "",
             "| experts | rows/expert | N x K | split | tokens | empty experts | tmakit TF/s | torch TF/s | ratio | "
             "rel err |", "|---:|---:|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in res["rows"]:
        lines.append(f"| {r['experts']} | {r['rows_per_expert']:.3g} | {r['n']}x{r['k']} | {r['dist']} | "
                     f"{r['tokens']} | {r['empty']} | {r['tmakit_tflops']:.0f} | {r['torch_tflops']:.0f} | "
                     f"**{r['ratio']:.3f}** | {r['rel_err']:.1e} |")
    if res.get("lists"):
        lines += ["", "ptr-array (`tk.ops.gemm_list`, bf16, B = w.t(), M, N, K uniform multiples of 8 per problem): "
                  "ratio = the loop's time / the list's time", "",
                  "| problems | sides | list TF/s | tk.ops.gemm loop TF/s | cuBLAS loop TF/s | vs tk.ops.gemm loop | "
                  "vs cuBLAS loop | rel err |", "|---:|---|---:|---:|---:|---:|---:|---:|"]
        for r in res["lists"]:
            lines.append(f"| {r['problems']} | {r['sides']} | {r['list_tflops']:.0f} | {r['gemm_loop_tflops']:.0f} | "
                         f"{r['cublas_loop_tflops']:.0f} | **{r['vs_gemm_loop']:.3f}** | {r['vs_cublas_loop']:.3f} | "
                         f"{r['rel_err']:.1e} |")
    lines.append("")
    for name, s in res["summary"].items():
        if s:
            lines.append(f"- {name}: geomean **{s['geomean']:.3f}x**, min {s['min']:.3f}x ({s['min_case']}), "
                         f"{s['n']} cases")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="tmakit bench grouped", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--config", default=None, help="a single-CTA name in tmakit.kernels.gemm.CONFIGS (default: the "
                                                   "heuristic)")
    ap.add_argument("--dtype", choices=("bf16", "fp8"), default="bf16",
                    help="fp8: tk.ops.scaled_grouped_mm against torch._scaled_grouped_mm (tmakit.bench.grouped_fp8)")
    ap.add_argument("--scaling", choices=("row", "block"), default="row", help="fp8 scales (default: row-wise)")
    ap.add_argument("--form", choices=("rows", "k", "batch", "train"), default="rows",
                    help="rows = the MoE layer (2-D x 3-D with offs); k = its weight gradient (2-D x 2-D grouped "
                         "along K); batch = 3-D x 3-D (also fp8); train = the layer's forward and backward under "
                         "autograd (tmakit.bench.grouped_forms)")
    ap.add_argument("--random", type=int, default=0, metavar="N",
                    help="N random MoE cases (moe.random_cases: experts 8-256, 1-4096 rows per expert, N, K "
                         "256-8192) instead of the list; ptr-array lists are skipped")
    ap.add_argument("--decode", type=int, default=0, metavar="N",
                    help="N random routed cases (moe.decode_cases: 1-512 tokens, each to 1-8 of 8-256 experts, N, K "
                         "256-8192) instead of the list; ptr-array lists are skipped")
    ap.add_argument("--seed", type=int, default=0, help="seed of --random or --decode")
    ap.add_argument("--json", default=None)
    ap.add_argument("--md", default=None)
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    if args.rounds < 1 or args.reps < 1 or args.random < 0 or args.decode < 0 or (args.random and args.decode):
        print("tmakit bench grouped: --rounds and --reps must be >= 1, --random and --decode >= 0 and not both",
              file=sys.stderr)
        return 2
    if args.form in ("k", "train") and args.dtype == "fp8":
        print("tmakit bench grouped: --form k and train time bf16 (drop --dtype fp8)", file=sys.stderr)
        return 2
    from .gemm import gpu_problem

    problem = gpu_problem()
    if problem:
        print(f"tmakit bench grouped: {problem.replace('tmakit bench gemm ', '')}", file=sys.stderr)
        return 2
    import torch

    if not hasattr(torch, "_grouped_mm"):
        print(f"tmakit bench grouped: torch {torch.__version__} has no torch._grouped_mm to compare with",
              file=sys.stderr)
        return 2
    if args.random:
        cases = random_cases(args.random, args.seed)
    elif args.decode:
        cases = decode_cases(args.decode, args.seed)
    else:
        cases = CASES
    if args.form != "rows":
        from .grouped_forms import markdown_forms, run_forms

        res = run_forms(args.form, cases=cases, rounds=args.rounds, reps=args.reps, fp8=args.dtype == "fp8",
                        scaling=args.scaling)
        md = markdown_forms(res)
    elif args.dtype == "fp8":
        from .grouped_fp8 import markdown_fp8, run_fp8

        res = run_fp8(args.scaling, cases=cases, rounds=args.rounds, reps=args.reps)
        md = markdown_fp8(res)
    else:
        res = run(cases=cases, rounds=args.rounds, reps=args.reps, config=args.config)
        if not (args.random or args.decode):
            res["lists"] = run_lists(rounds=args.rounds, reps=args.reps)
        md = markdown(res)
    res["random"] = dict(count=args.random, seed=args.seed) if args.random else None
    res["decode"] = dict(count=args.decode, seed=args.seed) if args.decode else None
    print(md)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    if args.md:
        with open(args.md, "w") as f:
            f.write(md)
    return 0
