"""Timing harness and report writers for ``tmakit bench`` (see the package docstring)."""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from .timing import capture, nsets, time_chain, time_graphs, time_op

__all__ = ["main", "run_suite", "parse_size", "time_op", "time_chain", "markdown", "plot"]

MiB = 1 << 20
DEFAULT_SIZES = [1 * MiB, 4 * MiB, 16 * MiB, 64 * MiB, 256 * MiB, 1024 * MiB, 4096 * MiB]
WORKLOADS = ("copy", "transpose", "permute", "reduce")


def parse_size(s: str) -> int:
    """``"64M"`` / ``"1G"`` / ``"4096"`` (bytes) -> bytes."""
    s = s.strip().upper().removesuffix("IB").removesuffix("B")
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(s[-1:], 1)
    return int(float(s[:-1] if mult > 1 else s) * mult)


def _fmt_size(n: int) -> str:
    for unit, k in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= k:
            v = n / k
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.1f} {unit}"
    return f"{n} B"


def _rand(shape, dtype):
    import torch

    if dtype.is_floating_point:
        return torch.randn(shape, device="cuda", dtype=torch.float32).to(dtype)
    info = torch.iinfo(dtype)
    lo, hi = max(info.min, -(1 << 20)), min(info.max, 1 << 20)
    return torch.randint(lo, hi, shape, device="cuda", dtype=torch.int64).to(dtype)


def round_stats(tk_ms: list, peer_ms: list) -> dict:
    """Per-call results of interleaved rounds (each round timed tmakit and the peer a moment apart): the median times
    and the median, min and max of the per-round ratios peer / tmakit (a round's ratio compares two loops a moment
    apart, so slow drift of the machine cancels)."""
    ratios = [p / t for t, p in zip(tk_ms, peer_ms)]
    return dict(tmakit_ms=statistics.median(tk_ms), peer_ms=statistics.median(peer_ms),
                ratio=statistics.median(ratios), ratio_min=min(ratios), ratio_max=max(ratios), rounds=len(ratios))


def interleaved_rounds(tk_fn, peer_fn, nsets: int, reps: int, rounds: int):
    """(tmakit, peer) lists of per-call and of back-to-back ms, one of each per round. Both sides run in every
    round, tmakit first in even rounds and the peer first in odd ones: neither always follows the other (the same
    kernel measured up to 4 % apart by its position in such a sequence, and per call at 1-16 MiB is mostly host time,
    which drifts)."""
    pc = ([], [])
    bb = ([], [])
    sides = ((0, tk_fn), (1, peer_fn))
    for r in range(max(1, rounds)):
        for j, fn in sides if r % 2 == 0 else sides[::-1]:
            pc[j].append(time_op(fn, nsets, reps=reps))
            bb[j].append(time_chain(fn, nsets, reps=reps))
    return pc, bb


def _graph_times(tk_fn, peer_fn, nsets: int, ms_per_call: float):
    """(tmakit, peer) ms per call replaying a CUDA graph of back-to-back calls (about 5 ms of work, 3..200 calls;
    no launch cost from Python), or (None, None) where a side cannot be captured."""
    import torch

    calls = max(3, min(200, int(5.0 / max(ms_per_call, 1e-3))))
    no_flush = torch.empty(1, device="cuda")
    try:
        graphs = [capture(tk_fn, nsets, calls), capture(peer_fn, nsets, calls)]
        return tuple(time_graphs(graphs, calls, no_flush, 10))
    except Exception:  # noqa: BLE001 - a capture failure is reported as a missing number, not a failed suite
        return None, None


def _case(op, name, nbytes_moved, tk_fn, peer_fn, nsets, reps, extra=None, rounds=1):
    (tk_ms, peer_ms), (tk_bb, peer_bb) = interleaved_rounds(tk_fn, peer_fn, nsets, reps, rounds)
    st = round_stats(tk_ms, peer_ms)
    b2b_tk, b2b_peer = statistics.median(tk_bb), statistics.median(peer_bb)
    ratio_b2b = statistics.median(p / t for t, p in zip(tk_bb, peer_bb))
    g_tk, g_peer = _graph_times(tk_fn, peer_fn, nsets, min(b2b_tk, b2b_peer))
    row = dict(
        op=op,
        case=name,
        bytes=nbytes_moved,
        **st,
        tmakit_tbs=nbytes_moved / st["tmakit_ms"] / 1e9,
        peer_tbs=nbytes_moved / st["peer_ms"] / 1e9,
        tmakit_b2b_ms=b2b_tk,
        peer_b2b_ms=b2b_peer,
        ratio_b2b=ratio_b2b,
        tmakit_graph_ms=g_tk,
        peer_graph_ms=g_peer,
        ratio_graph=g_peer / g_tk if g_tk and g_peer else None,
    )
    if extra:
        row.update(extra)
    return row


def _copy_cases(sizes, reps, rounds=1, dtype_name="bfloat16"):
    import torch

    from .. import ops

    dtype = getattr(torch, dtype_name)
    for size in sizes:
        n = size // torch.tensor([], dtype=dtype).element_size()
        k = nsets(2 * size)
        xs = [_rand((n,), dtype) for _ in range(k)]
        ys = [torch.empty_like(xs[0]) for _ in range(k)]
        ops.copy(xs[0], ys[0])
        assert torch.equal(xs[0], ys[0]), "copy mismatch"
        yield _case(
            "copy",
            f"{dtype_name} {_fmt_size(size)}",
            2 * size,
            lambda i, xs=xs, ys=ys: ops.copy(xs[i], ys[i]),
            lambda i, xs=xs, ys=ys: ys[i].copy_(xs[i]),
            k,
            reps,
            dict(size=size, path=ops.last_path, peer="y.copy_(x)"),
            rounds,
        )


def _transpose_cases(sizes, reps, rounds=1):
    import torch

    from .. import ops

    for dtype_name in ("bfloat16", "float32"):
        dtype = getattr(torch, dtype_name)
        e = torch.tensor([], dtype=dtype).element_size()
        lo, hi = min(sizes), max(sizes)
        for n in (512, 1024, 2048, 4096, 8192, 16384, 32768):
            if not lo <= n * n * e <= hi:
                continue
            nb = n * n * e
            k = nsets(2 * nb)
            xs = [_rand((n, n), dtype) for _ in range(k)]
            ys = [torch.empty_like(xs[0]) for _ in range(k)]
            ops.transpose(xs[0], 0, 1, out=ys[0])
            assert torch.equal(ys[0], xs[0].t()), "transpose mismatch"
            yield _case(
                "transpose",
                f"{dtype_name} {n}x{n}",
                2 * nb,
                lambda i, xs=xs, ys=ys: ops.transpose(xs[i], 0, 1, out=ys[i]),
                lambda i, xs=xs, ys=ys: ys[i].copy_(xs[i].t()),
                k,
                reps,
                dict(size=nb, path=ops.last_path, peer="y.copy_(x.t())"),
                rounds,
            )


PERMUTE_CASES = (
    ((32, 64, 128, 128), (0, 2, 1, 3)),
    ((32, 64, 128, 128), (0, 3, 1, 2)),
    ((8, 128, 256, 64), (0, 2, 1, 3)),
    ((64, 64, 64, 64), (3, 2, 1, 0)),
)


def head_shuffles(sizes) -> list:
    """Attention-style permutes at the requested sizes from 1 to 64 MiB: bf16 (1, S, 16, 128) to heads-first
    (0, 2, 1, 3) (a strided TMA copy) and to (0, 3, 1, 2) (the transposing path)."""
    cases = []
    for size in sorted(set(sizes)):
        if 1 << 20 <= size <= 64 << 20 and size % 4096 == 0:
            cases += [((1, size // 4096, 16, 128), (0, 2, 1, 3)), ((1, size // 4096, 16, 128), (0, 3, 1, 2))]
    return cases


def _permute_cases(reps, rounds=1, sizes=()):
    import torch

    from .. import ops

    dtype = torch.bfloat16
    for shape, dims in head_shuffles(sizes) + list(PERMUTE_CASES):
        nb = 2
        for s in shape:
            nb *= s
        k = nsets(2 * nb)
        xs = [_rand(shape, dtype) for _ in range(k)]
        out_shape = tuple(shape[d] for d in dims)
        ys = [torch.empty(out_shape, dtype=dtype, device="cuda") for _ in range(k)]
        ops.permute(xs[0], dims, out=ys[0])
        assert torch.equal(ys[0], xs[0].permute(dims)), "permute mismatch"
        yield _case(
            "permute",
            f"bf16 {shape} -> {dims}",
            2 * nb,
            lambda i, xs=xs, ys=ys, dims=dims: ops.permute(xs[i], dims, out=ys[i]),
            lambda i, xs=xs, ys=ys, dims=dims: ys[i].copy_(xs[i].permute(dims)),
            k,
            reps,
            dict(size=nb, path=ops.last_path, peer="y.copy_(x.permute(dims))"),
            rounds,
        )


def _reduce_cases(sizes, reps, rounds=1):
    import torch

    from .. import ops

    for dtype_name in ("float32", "bfloat16"):
        dtype = getattr(torch, dtype_name)
        e = torch.tensor([], dtype=dtype).element_size()
        for size in sizes:
            n = size // e
            k = nsets(2 * size)
            ds = [_rand((n,), dtype) for _ in range(k)]
            ss = [_rand((n,), dtype) for _ in range(k)]
            ref = ds[0].float() + ss[0].float()
            ops.reduce_into(ds[0], ss[0], "add")
            err = ((ds[0].float() - ref).norm() / ref.norm()).item()
            assert err < 1e-2, f"reduce mismatch {err}"
            yield _case(
                "reduce",
                f"add {dtype_name} {_fmt_size(size)}",
                3 * size,
                lambda i, ds=ds, ss=ss: ops.reduce_into(ds[i], ss[i], "add"),
                lambda i, ds=ds, ss=ss: ds[i].add_(ss[i]),
                k,
                reps,
                dict(size=size, path=ops.last_path, peer="d.add_(s)"),
                rounds,
            )


def source_revision(where: Path) -> str:
    """The git commit of the checkout holding ``where`` (short hash), with ``+changes`` when tracked files differ
    from it (a copied working tree whose ``.git`` lags behind names the commit it started from, not the code that
    ran); '' outside a checkout or without git."""
    def git(*args):
        return subprocess.run(["git", *args], capture_output=True, text=True, cwd=where, timeout=5)

    try:
        head = git("rev-parse", "--short", "HEAD")
        if head.returncode or not head.stdout.strip():
            return ""
        dirty = git("status", "--porcelain", "--untracked-files=no")
        return head.stdout.strip() + ("+changes" if dirty.returncode == 0 and dirty.stdout.strip() else "")
    except Exception:
        return ""


def _env() -> dict:
    import torch

    commit = os.environ.get("TMAKIT_COMMIT", "") or source_revision(Path(__file__).resolve().parent)
    p = torch.cuda.get_device_properties(0)
    return dict(
        date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        commit=commit,
        device=p.name,
        sms=p.multi_processor_count,
        torch=torch.__version__,
        python=sys.version.split()[0],
    )


def burn_in(seconds: float) -> None:
    """Keep the GPU and the host busy for ``seconds`` (64 MiB copies) so that the first cases do not run on a machine
    still ramping its clocks."""
    import time

    import torch

    if seconds <= 0:
        return
    x = torch.empty(64 * MiB, dtype=torch.uint8, device="cuda")
    y = torch.empty_like(x)
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(20):
            y.copy_(x)
        torch.cuda.synchronize()


def run_suite(which=("all",), sizes=None, reps: int = 30, progress: bool = True, rounds: int = 3,
              burn: float = 3.0) -> dict:
    """Run the workloads after a ``burn`` seconds burn-in; returns ``{"env": ..., "rows": [...], "ceiling_tbs":
    ...}``. Each case alternates tmakit and its peer ``rounds`` times (see :func:`round_stats`)."""
    burn_in(burn)
    sizes = sorted(sizes or DEFAULT_SIZES)
    which = WORKLOADS if "all" in which else tuple(which)
    gens = []
    if "copy" in which:
        gens.append(_copy_cases(sizes, reps, rounds))
    if "transpose" in which:
        gens.append(_transpose_cases([s for s in sizes if s >= MiB] or sizes, reps, rounds))
    if "permute" in which:
        gens.append(_permute_cases(reps, rounds, sizes))
    if "reduce" in which:
        gens.append(_reduce_cases(sizes, reps, rounds))
    rows = []
    for g in gens:
        for row in g:
            rows.append(row)
            if progress:
                print(
                    f"  [{len(rows):3d}] {row['op']:9s} {row['case']:34s} tmakit {row['tmakit_tbs']:5.2f} TB/s"
                    f"  peer {row['peer_tbs']:5.2f} TB/s  x{row['ratio']:.3f}  b2b x{row['ratio_b2b']:.3f}"
                    f"  graph x{row['ratio_graph'] or float('nan'):.3f}",
                    file=sys.stderr,
                    flush=True,
                )
    copies = [r for r in rows if r["op"] == "copy"]
    ceiling = max(copies, key=lambda r: r["bytes"])["peer_tbs"] if copies else None
    if ceiling is None:
        ceiling = _measure_ceiling(reps)
    for r in rows:
        r["frac_ceiling"] = r["tmakit_tbs"] / ceiling
        r["peer_frac_ceiling"] = r["peer_tbs"] / ceiling
    return dict(env=_env(), ceiling_tbs=ceiling, rows=rows)


def _measure_ceiling(reps) -> float:
    import torch

    n = 1 << 30
    x = torch.empty(n, dtype=torch.uint8, device="cuda").random_()
    y = torch.empty_like(x)
    ms = time_op(lambda i: y.copy_(x), 1, reps=reps)
    return 2 * n / ms / 1e9


def markdown(result: dict) -> str:
    env = result["env"]
    lines = [
        f"{env['date']} · commit `{env['commit']}` · {env['device']} ({env['sms']} SMs) · torch {env['torch']} · "
        f"copy ceiling (torch copy_, largest size) {result['ceiling_tbs']:.2f} TB/s",
        "",
        "| op | case | bytes moved | tmakit TB/s | peer TB/s | tmakit / peer | tmakit / ceiling | "
        "back-to-back tmakit / peer | CUDA graph tmakit / peer | path |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in result["rows"]:
        b2b = f"{r['ratio_b2b']:.3f}" if "ratio_b2b" in r else "-"
        graph = f"{r['ratio_graph']:.3f}" if r.get("ratio_graph") else "-"
        lines.append(
            f"| {r['op']} | {r['case']} | {_fmt_size(r['bytes'])} | {r['tmakit_tbs']:.2f} | "
            f"{r['peer_tbs']:.2f} | {r['ratio']:.3f} | {r['frac_ceiling']:.3f} | {b2b} | {graph} | "
            f"{r.get('path', '')} |"
        )
    return "\n".join(lines) + "\n"


def plot(result: dict, path) -> bool:
    """Bandwidth vs size, tmakit vs peer, one panel per op. False when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:
        return False
    groups: dict = {}
    for r in result["rows"]:
        if r["op"] == "permute":
            continue
        key = (r["op"], r["case"].split()[0] if r["op"] != "reduce" else " ".join(r["case"].split()[:2]))
        groups.setdefault(key, []).append(r)
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for i, ((op, sub), rs) in enumerate(sorted(groups.items())):
        rs = sorted(rs, key=lambda r: r["size"])
        xs = [r["size"] / MiB for r in rs]
        c = f"C{i}"
        ax.plot(xs, [r["tmakit_tbs"] for r in rs], "-o", color=c, label=f"tmakit {op} {sub}")
        ax.plot(xs, [r["peer_tbs"] for r in rs], "--x", color=c, alpha=0.6, label=f"torch {op} {sub}")
    ax.axhline(result["ceiling_tbs"], color="k", lw=0.8, ls=":", label="measured copy ceiling")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("tensor size (MiB)")
    ax.set_ylabel("TB/s (bytes read + written)")
    env = result["env"]
    ax.set_title(f"tmakit vs torch, {env['device']}, {env['date']}, {env['commit']}")
    ax.legend(fontsize=7, ncol=2)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="tmakit bench", description=__doc__,
                                 epilog="GEMM against cuBLAS: tmakit bench gemm --help (not part of 'all')")
    ap.add_argument("workloads", nargs="*", metavar="WORKLOAD",
                    help=f"{', '.join(WORKLOADS)} or all (default: all)")  # no choices=: argparse < 3.12 checks
    # the empty list against them and refuses a bare `tmakit bench`
    ap.add_argument("--sizes", default=None, help="comma-separated tensor sizes, e.g. 1M,64M,1G (default 1M..4G)")
    ap.add_argument("--reps", type=int, default=30, help="timed calls per loop (its median is the loop's time)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="rounds per case, each timing both sides per call and back to back (which side goes first "
                         "alternates); the ratios are the medians of the rounds' ratios")
    ap.add_argument("--burn-in", type=float, default=3.0, help="seconds of GPU work before the first case")
    ap.add_argument("--json", default=None, help="write results JSON here")
    ap.add_argument("--md", default=None, help="write the markdown table here")
    ap.add_argument("--plot", default=None, help="write a PNG plot here")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    args = ap.parse_args(argv)
    unknown = [w for w in args.workloads if w not in (*WORKLOADS, "all")]
    if unknown:
        ap.error(f"argument WORKLOAD: invalid choice: {unknown[0]!r} (choose from {', '.join(WORKLOADS)}, all)")
    try:
        import torch
    except ImportError:
        print("tmakit bench needs torch", file=sys.stderr)
        return 2
    if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] < 9:
        print("tmakit bench needs a Hopper (sm_90) or newer GPU: "
              + ("torch sees no CUDA GPU" if not torch.cuda.is_available()
                 else f"{torch.cuda.get_device_name()} is sm_{''.join(map(str, torch.cuda.get_device_capability()))}"),
              file=sys.stderr)
        return 2
    sizes = [parse_size(s) for s in args.sizes.split(",")] if args.sizes else None
    result = run_suite(args.workloads or ["all"], sizes, args.reps, progress=not args.quiet,
                       rounds=max(1, args.rounds), burn=args.burn_in)
    md = markdown(result)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    if args.md:
        Path(args.md).write_text(md)
    if args.plot and not plot(result, args.plot):
        print("matplotlib not available: no plot", file=sys.stderr)
    print(md)
    return 0
