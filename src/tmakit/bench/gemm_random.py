"""``tmakit bench gemm --random N --seed S``: tmakit's GEMM against cuBLAS on shapes users have, not a tuned list.

Draws N shapes with M, N, K log-uniform in [1, 16384]; half of them have N and K rounded to 16-byte rows (the
kernel reads them as given), the rest keep whatever they drew (most then need a padded copy or torch.matmul: the
row reports the path ``tk.ops.last_path`` named). bf16 and fp16 inputs and both B layouts are drawn too. Each shape
is checked and timed like ``tmakit bench gemm`` (``bench_shape``), in the same process as cuBLAS. The summary gives,
separately for shapes whose rows are TMA-legal as given and for the others, the geometric mean of the ratio
(cuBLAS time / tmakit time), its 5th percentile, the minimum with its shape, and the share of shapes on each path.
"""

from __future__ import annotations

import math
import random
import sys

__all__ = ["draw_shapes", "run_random", "summarize_random", "markdown_random"]

MAX_SIDE = 16384
DTYPES = ("bfloat16", "float16")
LAYOUTS = ("nk", "kn")


def draw_shapes(count: int, seed: int) -> list[dict]:
    """``count`` shapes (dicts with m, n, k, dtype, b_layout, aligned), reproducible from ``seed``."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        m, n, k = (max(1, int(round(math.exp(rng.uniform(0.0, math.log(MAX_SIDE)))))) for _ in range(3))
        aligned = i % 2 == 0
        if aligned:
            n, k = -(-n // 8) * 8, -(-k // 8) * 8
        out.append(dict(m=m, n=n, k=k, dtype=rng.choice(DTYPES), b_layout=rng.choice(LAYOUTS), aligned=aligned))
    return out


def tma_legal(s: dict) -> bool:
    """Whether the operands' rows, as the benchmark lays them out, are 16-byte multiples (2-byte inputs)."""
    return (s["k"] * 2) % 16 == 0 and (s["n"] * 2) % 16 == 0 or s["m"] == 1 and (s["n"] * 2) % 16 == 0


def run_random(count: int, seed: int, bench_shape, env: dict, flush_bytes: int, *, reps: int = 20, warmup: int = 5,
               graph: bool = False, progress: bool = True) -> dict:
    """Benchmark :func:`draw_shapes` ``(count, seed)`` with ``bench_shape`` (``tmakit.bench.gemm``'s, which checks
    and times one shape against cuBLAS); returns ``{"env", "options", "rows", "summary"}``."""
    import torch

    import tmakit as tk

    from .timing import context_ok, spin_up

    flush = torch.empty(flush_bytes // 4, dtype=torch.int32, device="cuda")
    spin_up()
    rows = []
    for i, s in enumerate(draw_shapes(count, seed)):
        try:
            row = bench_shape(s["m"], s["n"], s["k"], dtype=s["dtype"], b_layout=s["b_layout"], reps=reps,
                              warmup=warmup, graph=graph, flush=flush, seed=seed)
            row["path"] = tk.ops.last_path
        except Exception as ex:  # noqa: BLE001 - one shape must not end the run
            row = dict(m=s["m"], n=s["n"], k=s["k"], tmakit_status="error", error=f"{type(ex).__name__}: {ex}"[:300])
            if not context_ok():
                raise
        row.update(dtype=s["dtype"], b_layout=s["b_layout"], tma_legal=tma_legal(s))
        rows.append(row)
        torch.cuda.empty_cache()
        if progress:
            print(f"  [{i + 1}/{count}] {s['m']}x{s['n']}x{s['k']} {s['dtype'][:4]} {s['b_layout']} "
                  f"ratio {row.get('ratio', float('nan')):.3f} err {row.get('rel_err_tmakit', float('nan')):.1e} "
                  f"{row.get('path', row.get('error', ''))[:48]}", file=sys.stderr, flush=True)
    options = dict(count=count, seed=seed, reps=reps, warmup=warmup, graph=graph, max_side=MAX_SIDE)
    return dict(env=env, options=options, rows=rows, summary=summarize_random(rows))


def _group(rows: list[dict]) -> dict:
    ok = [r for r in rows if isinstance(r.get("ratio"), float) and r["ratio"] > 0]
    paths: dict = {}
    for r in rows:
        p = r.get("path", "error").split(":")[0] or "?"
        paths[p] = paths.get(p, 0) + 1
    if not ok:
        return dict(shapes=len(rows), timed=0, paths=paths)
    ratios = sorted(r["ratio"] for r in ok)
    worst = min(ok, key=lambda r: r["ratio"])
    p5 = ratios[max(0, math.ceil(0.05 * len(ratios)) - 1)]
    bad = [r for r in rows if r.get("err_flag") or r.get("tmakit_status") not in ("ok", None)]
    return dict(shapes=len(rows), timed=len(ok), geomean=math.exp(sum(map(math.log, ratios)) / len(ratios)),
                p5=p5, min=worst["ratio"], min_shape=f"{worst['m']}x{worst['n']}x{worst['k']} {worst.get('dtype')} "
                f"{worst.get('b_layout')} ({worst.get('path', '')})", paths=paths, errors=len(bad))


def summarize_random(rows: list[dict]) -> dict:
    return dict(tma_legal=_group([r for r in rows if r.get("tma_legal")]),
                other=_group([r for r in rows if not r.get("tma_legal")]), all=_group(rows))


def markdown_random(result: dict) -> str:
    o, env = result["options"], result["env"]
    lines = [f"# tmakit bench gemm --random {o['count']} --seed {o['seed']}", "",
             f"{env.get('device', '?')}, torch {env.get('torch', '?')}, commit {env.get('commit', '?')}, "
             f"{env.get('date', '')}", "",
             "| shapes | n | geomean | p5 | min (shape, path) | paths | errors |", "|---|---|---|---|---|---|---|"]
    for name, label in (("tma_legal", "rows TMA-legal as given"), ("other", "other rows"), ("all", "all")):
        g = result["summary"][name]
        if not g.get("timed"):
            lines.append(f"| {label} | {g['shapes']} | - | - | - | {g['paths']} | - |")
            continue
        lines.append(f"| {label} | {g['shapes']} | {g['geomean']:.3f} | {g['p5']:.3f} | {g['min']:.3f} "
                     f"({g['min_shape']}) | {g['paths']} | {g['errors']} |")
    lines += ["", "ratio = cuBLAS time / tmakit time (events, median per shape; > 1: tmakit faster).", ""]
    return "\n".join(lines)
