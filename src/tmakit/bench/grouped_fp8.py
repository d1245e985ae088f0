"""``tmakit bench grouped --dtype fp8 [--scaling row|block]``: ``tk.ops.scaled_grouped_mm`` on mixture-of-experts
problems against torch's FP8 grouped GEMM and tmakit's dense FP8 kernel, in one process.

The cases are ``tmakit bench grouped``'s (G experts with N x K weights, G x Mg tokens sorted by expert, uniform or
skewed with empty experts), quantized to e4m3 with ``tmakit.ops.quantize``: row-wise (a per token, w per output
channel of each expert: scale_a (M,), scale_b (G, N), torch._scaled_grouped_mm's layout) or block-wise (1x128 of a,
128x128 of each w[g]). Timed, interleaved, each call after an L2 flush (CUDA-event medians):

- ``tmakit``: the default (two-level accumulation), ``tmakit fast``: ``use_fast_accum=True`` (row-wise only);
- ``torch`` / ``torch fast``: ``torch._scaled_grouped_mm`` with ``use_fast_accum`` False / True (row-wise scales:
  the FP8 grouped path torch has on Hopper; for block-wise cases it runs the same problem row-wise quantized, the
  nearest torch offers); the faster of the two is "best torch";
- ``dense``: ``tk.ops.scaled_mm`` on the same total work (all tokens x one N x K weight, same scaling mode).

Ratios: best torch time / tmakit time (> 1: tmakit faster), and dense time / grouped time. Results are checked
against a dequantized fp32 reference on up to 4 non-empty groups.
"""

from __future__ import annotations

import math
import statistics
import sys

from .moe import CASES, flush_buffer, moe_problem, rows_per_expert, time_rounds

__all__ = ["run_fp8", "markdown_fp8"]


def _quantized(torch, a, w, scaling: str):
    """(qa, qb, sa, sb): a and w (G, N, K) quantized to e4m3, qb = qw.transpose(-2, -1)."""
    from ..ops.quantize import quantize_1x128, quantize_128x128, quantize_rows

    g = int(w.shape[0])
    if scaling == "block":
        qa, sa = quantize_1x128(a)
        qs = [quantize_128x128(w[i]) for i in range(g)]
        return qa, torch.stack([q for q, _ in qs]).transpose(-2, -1), sa, torch.stack([s for _, s in qs])
    qa, sa = quantize_rows(a)
    qs = [quantize_rows(w[i]) for i in range(g)]
    return (qa, torch.stack([q for q, _ in qs]).transpose(-2, -1), sa[:, 0].contiguous(),
            torch.stack([s[:, 0] for _, s in qs]).contiguous())


def _error(torch, qa, qb, sa, sb, ends, out) -> float:
    """Largest relative error of ``out`` against the dequantized fp32 product on up to 4 non-empty groups."""
    from ..ops.scaled_grouped import scaled_grouped_mm_reference

    errs, lo = [], 0
    for gi, hi in enumerate(ends):
        if hi > lo and len(errs) < 4:
            offs = torch.tensor([hi - lo], dtype=torch.int32, device=qa.device)
            ref = scaled_grouped_mm_reference(qa[lo:hi], qb[gi:gi + 1], sa[lo:hi], sb[gi:gi + 1], offs,
                                              torch.float32)
            errs.append(float((out[lo:hi].float() - ref).norm() / ref.norm().clamp_min(1e-30)))
        lo = max(lo, hi)
    return max(errs) if errs else 0.0


def _calls(torch, tk, qa, qb, sa, sb, offs, out, scaling, row_peer, dense) -> dict:
    fns = {"tmakit": lambda: tk.ops.scaled_grouped_mm(qa, qb, sa, sb, offs, out=out)}
    if scaling == "row":
        fns["tmakit fast"] = lambda: tk.ops.scaled_grouped_mm(qa, qb, sa, sb, offs, out=out, use_fast_accum=True)
    if row_peer is not None:
        ra, rb, rsa, rsb = row_peer
        for name, fast in (("torch", False), ("torch fast", True)):
            try:
                torch._scaled_grouped_mm(ra, rb, rsa, rsb, offs=offs, out_dtype=torch.bfloat16, use_fast_accum=fast)
            except (AttributeError, RuntimeError, TypeError, NotImplementedError) as ex:
                print(f"  {name}: {str(ex).splitlines()[0][:120]}", file=sys.stderr)
                continue
            fns[name] = (lambda f=fast: torch._scaled_grouped_mm(ra, rb, rsa, rsb, offs=offs, out_dtype=torch.bfloat16,
                                                                 use_fast_accum=f))
    da, db, dsa, dsb, dout = dense
    fns["dense"] = lambda: tk.ops.scaled_mm(da, db, dsa, dsb, out=dout)
    return fns


def _dense(torch, qa, n: int, k: int, scaling: str, sa):
    """The same total work as one dense fp8 GEMM: all tokens times one (K, N) weight, same scaling mode."""
    from ..ops.quantize import quantize_128x128, quantize_rows

    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    if scaling == "block":
        qw, sw = quantize_128x128(w)
        dsa = sa
    else:
        qw, sw = quantize_rows(w)
        sw, dsa = sw.t(), sa.reshape(-1, 1)
    return qa, qw.t(), dsa, sw, torch.empty(qa.shape[0], n, device="cuda", dtype=torch.bfloat16)


def run_fp8(scaling: str = "row", cases=CASES, rounds: int = 5, reps: int = 20) -> dict:
    import torch

    import tmakit as tk

    from .timing import spin_up

    flush = flush_buffer(torch)
    spin_up()
    rows_out = []
    for experts, rows, n, k, dist in cases:
        a, b, offs, ends = moe_problem(torch, experts, rows, n, k, dist)
        rpe = rows_per_expert(rows, dist, experts)
        w = b.transpose(-2, -1)
        qa, qb, sa, sb = _quantized(torch, a, w, scaling)
        row_peer = (qa, qb, sa, sb) if scaling == "row" else _quantized(torch, a, w, "row")
        del a, b, w
        out = torch.full((qa.shape[0], n), float("nan"), device="cuda", dtype=torch.bfloat16)
        tk.ops.scaled_grouped_mm(qa, qb, sa, sb, offs, out=out)
        path = tk.ops.last_path
        err = _error(torch, qa, qb, sa, sb, ends, out)
        fns = _calls(torch, tk, qa, qb, sa, sb, offs, out, scaling, row_peer, _dense(torch, qa, n, k, scaling, sa))
        for f in fns.values():
            for _ in range(3):
                f()
        t = {name: statistics.median(v) for name, v in time_rounds(fns, flush, rounds, reps).items()}
        best = min((t[x] for x in ("torch", "torch fast") if x in t), default=float("nan"))
        flop = 2.0 * ends[-1] * n * k
        row = dict(experts=experts, rows_per_expert=rpe, n=n, k=k, dist=dist, tokens=ends[-1], path=path,
                   rel_err=err, ms={name: v for name, v in t.items()},
                   tflops={name: flop / v / 1e9 for name, v in t.items()}, best_torch_ms=best,
                   ratio=best / t["tmakit"], ratio_fast=best / t["tmakit fast"] if "tmakit fast" in t else None,
                   vs_dense=t["dense"] / t["tmakit"])
        rows_out.append(row)
        print(f"  G={experts:3d} rows/expert={rpe:5.3g} N={n} K={k} {dist:13s} "
              f"tmakit {row['tflops']['tmakit']:5.0f} TF "
              f"vs best torch {row['ratio']:.3f} (fast {row['ratio_fast'] or float('nan'):.3f}), vs dense "
              f"{row['vs_dense']:.3f}, err {err:.1e}", file=sys.stderr, flush=True)
        del qa, qb, sa, sb, row_peer, out, fns
        torch.cuda.empty_cache()
    return dict(device=torch.cuda.get_device_name(), torch=torch.__version__, scaling=scaling, rounds=rounds,
                reps=reps, rows=rows_out, summary=_summary(rows_out))


def _geo(xs):
    xs = [x for x in xs if x is not None and x == x]
    return (math.exp(sum(map(math.log, xs)) / len(xs)), min(xs)) if xs else (float("nan"), float("nan"))


def _summary(rows) -> dict:
    return {key: dict(zip(("geomean", "min"), _geo([r[key] for r in rows]))) for key in ("ratio", "ratio_fast",
                                                                                       "vs_dense")}


def markdown_fp8(res: dict) -> str:
    block = res["scaling"] == "block"
    peer = "torch._scaled_grouped_mm on the same problem quantized row-wise" if block else "torch._scaled_grouped_mm"
    lines = [f"{res['device']}, torch {res['torch']}, {res['scaling']}-wise e4m3, bf16 out; medians of "
             f"{res['rounds']} interleaved rounds of {res['reps']} single calls, each after an L2 flush. vs torch = "
             f"best of {peer} (use_fast_accum False / True) time / tmakit time; vs dense = tk.ops.scaled_mm on the "
             "same total work / grouped time.", "",
             "| experts | rows/expert | N x K | split | tokens | tmakit TF/s | " + ("" if block else "fast TF/s | ")
             + "torch TF/s (fast) | vs torch | " + ("" if block else "fast vs torch | ") + "vs dense | rel err |",
             "|---:|---:|---|---|---:|---:|" + ("" if block else "---:|") + "---|---:|" + ("" if block else "---:|")
             + "---:|---:|"]
    for r in res["rows"]:
        tf = r["tflops"]
        th = f"{tf.get('torch', float('nan')):.0f} ({tf.get('torch fast', float('nan')):.0f})"
        fast = "" if block else f"{tf['tmakit fast']:.0f} | "
        rf = "" if block else f"{r['ratio_fast']:.3f} | "
        lines.append(f"| {r['experts']} | {r['rows_per_expert']:.3g} | {r['n']}x{r['k']} | {r['dist']} | "
                     f"{r['tokens']} | {tf['tmakit']:.0f} | {fast}{th} | **{r['ratio']:.3f}** | {rf}"
                     f"{r['vs_dense']:.3f} | {r['rel_err']:.1e} |")
    lines.append("")
    names = {"ratio": "vs best torch", "ratio_fast": "fast accumulation vs best torch", "vs_dense": "vs dense"}
    for key, s in res["summary"].items():
        if s["geomean"] == s["geomean"]:
            lines.append(f"- {names[key]}: geomean **{s['geomean']:.3f}x**, min {s['min']:.3f}x")
    return "\n".join(lines) + "\n"
