"""Reports of ``tmakit bench gemm``: the summary (geomean and worst ratio per timing method), the progress line,
markdown, strict JSON and the plot."""

from __future__ import annotations

import json
import math

__all__ = ["geomean", "summarize", "progress_line", "markdown", "to_json", "plot", "SHORT", "SUITE", "ERR_LIMIT"]

#: the shapes of the GEMM acceptance suite (a summary reports them apart from the others)
SUITE = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 7168, 2048), (4096, 18432, 7168), (4096, 7168, 16384),
         (2048, 4096, 14336), (128, 8192, 8192), (1024, 1024, 65536)]
ERR_LIMIT = 1e-2  # relative Frobenius error above which a result is flagged
SHORT = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}


def geomean(xs) -> float | None:
    """Geometric mean of positive numbers; None for none."""
    xs = [float(x) for x in xs]
    if not xs:
        return None
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def _shape_name(r: dict) -> str:
    return f"{r['m']}x{r['n']}x{r['k']}"


def summarize(rows: list[dict]) -> dict:
    """Geomean and minimum of the tmakit/cuBLAS ratio (events and graph) over the suite shapes and over all rows.
    Rows without a ratio (errors, unsupported) are counted in ``missing``."""
    out = {}
    for scope in ("suite", "all"):
        rs = [r for r in rows if scope == "all" or "suite" in r.get("sets", ())]
        part = dict(shapes=len(rs), of=len(SUITE) if scope == "suite" else len(rows),
                    flagged=sum(1 for r in rs if r.get("err_flag")))
        for method in ("events", "graph"):
            key = "ratio" if method == "events" else "ratio_graph"
            have = [r for r in rs if isinstance(r.get(key), (int, float)) and r[key] > 0]
            worst = min(have, key=lambda r: r[key]) if have else None
            part[method] = dict(geomean=geomean(r[key] for r in have), min=worst[key] if worst else None,
                                min_shape=_shape_name(worst) if worst else None, measured=len(have),
                                missing=len(rs) - len(have))
        out[scope] = part
    return out


def _tf(x) -> str:
    if not isinstance(x, (int, float)) or not math.isfinite(x):
        return "—"
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}"


def _us(ms) -> str:
    if not isinstance(ms, (int, float)):
        return "—"
    us = ms * 1000
    return f"{us:.0f}" if us >= 100 else f"{us:.1f}"


def _err(x, flag: bool = False, plain: bool = False) -> str:
    if x is None:
        return "—"
    s = f"{x:.1e}" if isinstance(x, float) and math.isfinite(x) else str(x)
    if not flag:
        return s
    return f"{s} (> {ERR_LIMIT:g}!)" if plain else f"**{s} ⚠**"


def _ratio(x) -> str:
    return f"{x:.3f}" if isinstance(x, (int, float)) else "—"


def progress_line(r: dict) -> str:
    """One progress line for a finished shape."""
    name = f"{_shape_name(r):18s}"
    if r.get("tmakit_status") == "skipped":
        return f"{name} skipped"
    tk = r.get("tmakit_status")
    tk_s = (f"tmakit {_tf(r.get('tmakit_tflops')):>6s} TF/s (graph {_tf(r.get('tmakit_graph_tflops')):>6s})"
            if tk == "ok" else f"tmakit {tk}")
    cb_s = (f"cuBLAS {_tf(r.get('cublas_tflops')):>6s} (graph {_tf(r.get('cublas_graph_tflops')):>6s})"
            if r.get("cublas_status") == "ok" else f"cuBLAS {r.get('cublas_status')}")
    ratio = f"x{_ratio(r.get('ratio'))} (graph x{_ratio(r.get('ratio_graph'))})"
    err = f"err {_err(r.get('rel_err_tmakit'), r.get('err_flag', False), plain=True)}"
    why = r.get("tmakit_error") or r.get("error") or r.get("events_error") or ""
    return f"{name} {tk_s}  {cb_s}  {ratio}  {err}  {r.get('seconds', 0):.1f} s" + (f"  [{why[:120]}]" if why else "")


def _summary_line(label: str, part: dict) -> str:
    bits = []
    for method in ("events", "graph"):
        p = part[method]
        if p["geomean"] is None:
            bits.append(f"{method}: no ratios")
            continue
        s = f"{method}: geomean **{p['geomean']:.3f}×**, min {p['min']:.3f}× ({p['min_shape']})"
        if p["missing"]:
            s += f", {p['missing']} of {part['shapes']} not measured"
        bits.append(s)
    flagged = f"; {part['flagged']} flagged (rel err > {ERR_LIMIT:g})" if part["flagged"] else ""
    count = f"{part['shapes']} of {part['of']}" if part["shapes"] != part["of"] else str(part["shapes"])
    return f"- {label} ({count} shape{'s' if part['of'] != 1 else ''}): " + "; ".join(bits) + flagged


def markdown(result: dict) -> str:
    """The report: one header line, method, the table, summary lines, errors."""
    env, opt = result["env"], result["options"]
    dirty = " (+ uncommitted changes)" if env.get("dirty") else ""
    lines = [
        f"{env.get('date', '')} · commit `{env.get('commit', '')}`{dirty} · {env.get('device', '')} "
        f"({env.get('sms', '?')} SMs, {env.get('capability', '?')}) · driver {env.get('driver') or '?'} "
        f"(CUDA {env.get('cuda_driver_api') or '?'}) · torch {env.get('torch', '')} (CUDA {env.get('cuda_runtime')})"
        f" · Python {env.get('python', '')}",
        "",
        f"{SHORT[opt['dtype']]} inputs, {SHORT[opt['out_dtype']]} output, B {opt['b_layout']} "
        f"({opt['b_layout_means']}), random normal. tmakit: `{opt['tmakit_call']}`; cuBLAS: "
        f"`{_peer_call(result)}`. TF/s = 2MNK/t. Events: median of {opt['reps']} single calls, each after a "
        f"{opt['flush_mib']} MiB L2 flush (includes host time the flush does not hide). Graph: {opt['graph_replays']}"
        f" replays of N back-to-back calls in a CUDA graph (N in the table), median / N. Ratio = tmakit / cuBLAS "
        f"(> 1: tmakit faster). rel err = ‖C − C_fp32‖_F / ‖C_fp32‖_F, ⚠ above {opt['err_limit']:g}.",
        "",
        "| M×N×K | set | tmakit TF/s | cuBLAS TF/s | ratio | tmakit TF/s graph | cuBLAS TF/s graph | ratio graph | "
        "tmakit µs graph | cuBLAS µs graph | N | rel err tmakit | rel err cuBLAS |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    notes = []
    for r in result["rows"]:
        st = r.get("tmakit_status", "ok")
        tk_tf = _tf(r.get("tmakit_tflops")) if st == "ok" else st
        tk_tfg = _tf(r.get("tmakit_graph_tflops")) if st == "ok" else st
        lines.append(
            f"| {_shape_name(r).replace('x', '×')} | {', '.join(r.get('sets', ()))} | {tk_tf} | "
            f"{_tf(r.get('cublas_tflops'))} | **{_ratio(r.get('ratio'))}** | {tk_tfg} | "
            f"{_tf(r.get('cublas_graph_tflops'))} | **{_ratio(r.get('ratio_graph'))}** | "
            f"{_us(r.get('tmakit_graph_ms'))} | {_us(r.get('cublas_graph_ms'))} | {r.get('graph_calls', '—')} | "
            f"{_err(r.get('rel_err_tmakit'), r.get('err_flag', False))} | {_err(r.get('rel_err_cublas'))} |")
        for key in ("error", "tmakit_error", "cublas_error", "events_error", "tmakit_graph_error",
                    "cublas_graph_error"):
            if r.get(key):
                what = "tmakit unsupported" if key == "tmakit_error" and st == "unsupported" else key.replace("_", " ")
                notes.append(f"- {_shape_name(r)} {what}: `{r[key]}`")
    lines.append("")
    summ = result.get("summary") or summarize(result["rows"])
    if summ["suite"]["shapes"]:
        lines.append(_summary_line("issue suite", summ["suite"]))
    lines.append(_summary_line("all shapes", summ["all"]))
    if notes:
        lines += ["", "Errors:", *notes]
    return "\n".join(lines) + "\n"


def _peer_call(result: dict) -> str:
    calls = {r.get("cublas_call") for r in result["rows"] if r.get("cublas_call")}
    return "; ".join(sorted(calls)) if calls else "torch.matmul(a, b, out=c)"


def _clean(x):
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def to_json(result: dict) -> str:
    """Strict JSON (NaN / inf written as strings)."""
    return json.dumps(_clean(result), indent=1, allow_nan=False)


def plot(result: dict, path) -> bool:
    """TFLOP/s per shape (tmakit vs cuBLAS; bars = graph timing, dots = events) and the ratio per shape.
    False when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:
        return False
    rows = result["rows"]
    names = [_shape_name(r) for r in rows]
    xs = list(range(len(rows)))

    def vals(key):
        return [r.get(key) if isinstance(r.get(key), (int, float)) else float("nan") for r in rows]

    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(max(8.0, 0.75 * len(rows) + 3), 7.5), sharex=True,
                                  gridspec_kw=dict(height_ratios=[3, 1.3]))
    w = 0.38
    ax.bar([x - w / 2 for x in xs], vals("tmakit_graph_tflops"), w, color="C0", label="tmakit (graph)")
    ax.bar([x + w / 2 for x in xs], vals("cublas_graph_tflops"), w, color="C1", label="cuBLAS (graph)")
    ax.plot([x - w / 2 for x in xs], vals("tmakit_tflops"), "o", color="navy", ms=5, label="tmakit (events)")
    ax.plot([x + w / 2 for x in xs], vals("cublas_tflops"), "o", color="saddlebrown", ms=5, label="cuBLAS (events)")
    ax.set_ylabel("TFLOP/s (2MNK / t)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    env, opt = result["env"], result["options"]
    summ = result.get("summary") or summarize(rows)
    scope = summ["suite"] if summ["suite"]["shapes"] else summ["all"]
    gm = scope["graph"]["geomean"] or scope["events"]["geomean"]
    ax.set_title(f"tmakit GEMM vs cuBLAS, {SHORT[opt['dtype']]}->{SHORT[opt['out_dtype']]}, B {opt['b_layout']}; "
                 f"{env.get('device', '')}, {env.get('date', '')}, {env.get('commit', '')}"
                 + (f"\n{'suite' if summ['suite']['shapes'] else 'all'} geomean ratio {gm:.3f}" if gm else ""),
                 fontsize=9)
    ax2.plot(xs, vals("ratio_graph"), "-o", color="C2", label="graph")
    ax2.plot(xs, vals("ratio"), "--x", color="C3", label="events")
    ax2.axhline(1.0, color="k", lw=0.8)
    ax2.axhline(0.9, color="k", lw=0.8, ls=":")
    ax2.set_ylabel("tmakit / cuBLAS")
    ax2.grid(alpha=0.3)
    ax2.legend(fontsize=8)
    ax2.set_xticks(xs)
    ax2.set_xticklabels(names, rotation=35, ha="right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
