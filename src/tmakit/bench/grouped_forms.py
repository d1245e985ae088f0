"""``tmakit bench grouped --form k|batch``: the other two forms of ``torch._grouped_mm`` that ``tk.ops.grouped_mm``
runs on its kernel, on the MoE cases of ``tmakit bench grouped`` (docs/GROUPED.md, "Along K and batched").

- ``k``: an MoE layer's weight gradient, grouped along K: per expert ``dW[g] = dY[g].t() @ X[g]`` (N x K, from the
  expert's tokens), called as autograd does, ``grouped_mm(dy.t(), x, offs)`` with ``dy`` (T, N) and ``x`` (T, K)
  row-major and ``offs`` the experts' end tokens. Same flops as the layer's forward GEMM.
- ``batch``: 3-D x 3-D without offsets, ``a`` (G, Mg, K) x ``b`` (G, K, N) (``w.transpose(-2, -1)``), Mg the case's
  rows per expert (routed and skewed cases take their mean, at least one row); ``torch.bmm`` is timed as a second
  peer. With ``--dtype fp8``: ``tk.ops.scaled_grouped_mm`` on the same batch in e4m3 (``--scaling row``: against
  ``torch._scaled_grouped_mm``; ``block``: against tmakit's 2-D x 3-D call on the same rows).
- ``train``: the layer's forward and backward under autograd, ``grouped_mm(x, w.transpose(-2, -1), offs)`` with ``x``
  and ``w`` requiring grad, then ``out.backward(dy)`` (three grouped products: forward, dX, dW), against the same
  with ``torch._grouped_mm``. Three times the forward's flops.

Times and ratios as ``tmakit bench grouped``: CUDA-event medians of single calls after an L2 flush, the contenders
alternating in interleaved rounds; ratio = torch time / tmakit time.
"""

from __future__ import annotations

import statistics
import sys

from .moe import CASES, flush_buffer, moe_problem, rows_per_expert, time_rounds

__all__ = ["run_forms", "markdown_forms"]


def _problem(torch, form: str, case, fp8: bool = False, scaling: str = "row"):
    """(tmakit call, {peer name: call}, check(out) -> rel. error, flops, label) of one case in ``form`` (``fp8``:
    the batch in float8_e4m3fn with ``scaling`` "row" or "block")."""
    import tmakit as tk

    experts, rows, n, k, dist = case
    a, b, offs, ends = moe_problem(torch, experts, rows, n, k, dist)
    g = torch.Generator(device="cuda").manual_seed(1)
    if form == "k":
        x = a[:ends[-1]] if ends[-1] else a[:1]
        dy = torch.randn(x.shape[0], n, device="cuda", dtype=torch.bfloat16, generator=g)
        at = dy.t()
        out = torch.empty(experts, n, k, device="cuda", dtype=torch.bfloat16)

        def check(o):
            errs, lo = [], 0
            for gi, hi in enumerate(ends):
                if hi > lo and len(errs) < 4:
                    ref = at[:, lo:hi].float() @ x[lo:hi].float()
                    errs.append(float((o[gi].float() - ref).norm() / ref.norm()))
                lo = max(lo, hi)
            return max(errs) if errs else 0.0

        return (lambda: tk.ops.grouped_mm(at, x, offs, out=out),
                {"torch": lambda: torch._grouped_mm(at, x, offs=offs)}, check, 2.0 * ends[-1] * n * k,
                f"G={experts:3d} tokens={ends[-1]:6d} dW {n}x{k} {dist}")
    if form == "train":
        x = a.detach().requires_grad_()
        w = b.detach().transpose(-2, -1).contiguous().requires_grad_()  # (G, N, K), as a layer holds it
        dy = torch.randn(a.shape[0], n, device="cuda", dtype=torch.bfloat16, generator=g)

        def step(fn):
            x.grad = w.grad = None
            fn(x, w.transpose(-2, -1), offs).backward(dy)
            return x.grad, w.grad

        def torch_op(u, v, o):
            return torch._grouped_mm(u, v, offs=o)

        def check(grads):
            got = [t.detach().clone() for t in grads]
            ref, t = step(torch_op), ends[-1]
            return max(_rel(got[0][:t], ref[0][:t]), _rel(got[1], ref[1]))

        label = f"G={experts:3d} rows/expert={rows_per_expert(rows, dist, experts):5.3g} {n}x{k} {dist}"
        return (lambda: step(tk.ops.grouped_mm), {"torch": lambda: step(torch_op)}, check, 6.0 * ends[-1] * n * k,
                label)
    mg = max(1, round(rows_per_expert(rows, dist, experts)))
    if fp8:
        return _fp8_batch(torch, tk, b, experts, mg, n, k, scaling)
    a3 = torch.randn(experts, mg, k, device="cuda", dtype=torch.bfloat16, generator=g)
    out = torch.empty(experts, mg, n, device="cuda", dtype=torch.bfloat16)

    def check(o):
        idx = sorted({0, experts // 2, experts - 1})
        ref = torch.bmm(a3[idx].float(), b[idx].float())
        return float((o[idx].float() - ref).norm() / ref.norm())

    return (lambda: tk.ops.grouped_mm(a3, b, out=out),
            {"torch": lambda: torch._grouped_mm(a3, b), "bmm": lambda: torch.bmm(a3, b)}, check,
            2.0 * experts * mg * n * k, f"G={experts:3d} Mg={mg:5d} N={n} K={k}")


def _fp8_batch(torch, tk, b, experts, mg, n, k, scaling):
    """The fp8 batch (``--form batch --dtype fp8``): e4m3 ``a`` (G, Mg, K) x ``b`` (G, K, N) K-major, bf16 out.
    Row-wise scales are torch's (G, Mg) and (G, N), timed against ``torch._scaled_grouped_mm``; block-wise ones have
    no torch peer and are timed against tmakit's own 2-D x 3-D call on the same rows (offs every Mg rows)."""
    from ..ops import quantize

    g = torch.Generator(device="cuda").manual_seed(2)
    x = torch.randn(experts, mg, k, device="cuda", dtype=torch.bfloat16, generator=g)
    w = b.transpose(-2, -1)  # (G, N, K) bf16
    kb = -(-k // 128)
    if scaling == "block":
        qa, sa = quantize.quantize_1x128(x.reshape(-1, k))
        qa, sa = qa.view(experts, mg, k), sa.view(experts, mg, kb)
        qw = [quantize.quantize_128x128(w[i]) for i in range(experts)]
    else:
        qa, sa = quantize.quantize_rows(x.reshape(-1, k))
        qa, sa = qa.view(experts, mg, k), sa.view(experts, mg)
        qw = [quantize.quantize_rows(w[i]) for i in range(experts)]  # per row of w[i]: per column of b[i]
    sb = torch.stack([s.squeeze(-1) if scaling != "block" else s for _, s in qw])
    qb = torch.stack([q for q, _ in qw]).transpose(-2, -1)
    out = torch.empty(experts, mg, n, device="cuda", dtype=torch.bfloat16)

    def check(o):
        idx = sorted({0, experts // 2, experts - 1})
        ref = torch.stack([tk.ops.scaled_grouped_mm(qa[i:i + 1].cpu(), qb[i:i + 1].cpu(), sa[i:i + 1].cpu(),
                                                    sb[i:i + 1].cpu(), out_dtype=torch.float32)[0] for i in idx])
        return _rel(o[idx].cpu(), ref)

    if scaling == "block":
        offs = torch.arange(1, experts + 1, device="cuda", dtype=torch.int32) * mg
        qa2, sa2, out2 = qa.view(-1, k), sa.view(-1, kb), out.view(-1, n)
        peers = {"tk-rows": lambda: tk.ops.scaled_grouped_mm(qa2, qb, sa2, sb, offs, out=out2)}
    else:
        peers = {"torch": lambda: torch._scaled_grouped_mm(qa, qb, sa, sb, out_dtype=torch.bfloat16)}
    return (lambda: tk.ops.scaled_grouped_mm(qa, qb, sa, sb, out=out), peers, check, 2.0 * experts * mg * n * k,
            f"fp8 {scaling} G={experts:3d} Mg={mg:5d} N={n} K={k}")


def _rel(x, ref) -> float:
    return float((x.float() - ref.float()).norm() / ref.float().norm().clamp_min(1e-30))


def run_forms(form: str, cases=CASES, rounds: int = 5, reps: int = 20, fp8: bool = False, scaling: str = "row") -> dict:
    """Time ``form`` ("k", "batch" or "train"; ``fp8``: the batch in fp8 with ``scaling``) on ``cases`` against
    torch (module docstring)."""
    import torch

    import tmakit as tk

    from .timing import spin_up

    flush = flush_buffer(torch)
    spin_up()
    rows = []
    for case in cases:
        ours, peers, check, flop, label = _problem(torch, form, case, fp8, scaling)
        got = ours()
        path = tk.ops.last_path
        err = check(got)
        fns = {"tmakit": ours, **peers}
        times = time_rounds(fns, flush, rounds, reps)
        med = {name: statistics.median(ts) for name, ts in times.items()}
        row = dict(case=list(case), label=label, path=path, rel_err=err, tmakit_tflops=flop / med["tmakit"] / 1e9,
                   **{f"{p}_ratio": statistics.median(tp / tt for tp, tt in zip(times[p], times["tmakit"]))
                      for p in peers})
        rows.append(row)
        peer_txt = " ".join(f"{p} {row[f'{p}_ratio']:.3f}" for p in peers)
        print(f"  {label:45s} tmakit {row['tmakit_tflops']:5.0f} TF ratio {peer_txt} err {err:.1e} {path}",
              file=sys.stderr, flush=True)
        torch.cuda.empty_cache()
    return dict(device=torch.cuda.get_device_name(), torch=torch.__version__,
                form=f"{form} fp8 {scaling}" if fp8 else form, rounds=rounds, reps=reps, rows=rows)


def _geomean(xs) -> float:
    xs = list(xs)
    return statistics.geometric_mean(xs) if xs else float("nan")


def markdown_forms(res: dict) -> str:
    """A table of one ``run_forms`` result and its geomeans per peer."""
    peers = [key[:-6] for key in res["rows"][0] if key.endswith("_ratio")] if res["rows"] else []
    head = "| case | TFLOP/s | " + " | ".join(f"{p} / tmakit" for p in peers) + " | rel. err | path |"
    lines = [f"{res['device']}, torch {res['torch']}, form {res['form']}, {res['rounds']} rounds", "", head,
             "|" + "---|" * (4 + len(peers))]
    for r in res["rows"]:
        ratios = " | ".join(f"{r[f'{p}_ratio']:.3f}" for p in peers)
        lines.append(f"| {r['label']} | {r['tmakit_tflops']:.0f} | {ratios} | {r['rel_err']:.1e} | {r['path']} |")
    lines.append("")
    for p in peers:
        lines.append(f"{p} / tmakit geomean **{_geomean(r[f'{p}_ratio'] for r in res['rows']):.3f}**, min "
                     f"{min(r[f'{p}_ratio'] for r in res['rows']):.3f}")
    return "\n".join(lines) + "\n"
