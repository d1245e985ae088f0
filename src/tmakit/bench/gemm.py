"""``tmakit bench gemm``: tmakit's GEMM against ``torch.matmul`` (cuBLAS), timed in the same run.

    tmakit bench gemm [--shapes MxNxK,...] [--suite] [--squares [1024,2048,...]] [--dtype bf16|fp16]
                      [--out-dtype bf16|fp16|fp32] [--b-layout nk|kn] [--json FILE] [--md FILE] [--plot FILE]
                      [--reps N]

Default shapes: the issue-8 suite plus the squares 1024..16384 (``--shapes`` / ``--suite`` / ``--squares`` pick
instead; given together they are joined, duplicates once). Inputs are random normal; ``--b-layout nk`` passes
``b = w.t()`` of a row-major (N, K) ``w``, ``kn`` a row-major (K, N) ``b``. Per shape:

- correctness, once: tmakit's output (pre-filled with NaN) and cuBLAS's against an fp32 ``torch.matmul`` of the
  same inputs; relative Frobenius-norm error, flagged above 1e-2 (NaN is flagged too);
- events: warm-up, then ``--reps`` single calls, each after a 256 MiB L2 flush (outside the timed interval), tmakit
  and cuBLAS alternating; the median of the CUDA-event times. Host time per call that the flush does not hide is
  included, as a Python caller would see it;
- graph: N back-to-back calls captured in one CUDA graph (rotating over enough input sets that they exceed 4x the
  L2, so operands are not cache-resident from the previous call), each replay after an L2 flush; the median over
  replays divided by N. This is the device time without Python's launch cost. A first replay into a NaN-filled
  output must reproduce the direct call's result, else the graph timing is dropped (the call was not captured).

TFLOP/s = 2MNK / t; ratio = tmakit TFLOP/s / cuBLAS TFLOP/s; geometric mean and minimum over the issue suite and
over all shapes. A shape that fails records its error and the run goes on; NotImplementedError from tmakit is
recorded as ``unsupported``; ``--json`` is rewritten after every shape. Not part of ``tmakit bench all`` (that stays
the bandwidth ops).
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import time
from pathlib import Path

from . import timing
from .gemm_report import ERR_LIMIT, SHORT, SUITE, markdown, plot, progress_line, summarize, to_json
from .timing import capture, context_ok, spin_up, time_events, time_graphs

__all__ = ["SUITE", "SQUARES", "main", "markdown", "parse_dtype", "parse_shape", "parse_shapes", "parse_squares",
           "plot", "run", "select_shapes", "summarize", "to_json"]

SQUARES = [1024, 2048, 4096, 8192, 12288, 16384]
FLUSH_BYTES = 256 << 20
IN_DTYPES = {"bf16": "bfloat16", "bfloat16": "bfloat16", "fp16": "float16", "float16": "float16", "half": "float16"}
OUT_DTYPES = {**IN_DTYPES, "fp32": "float32", "float32": "float32", "float": "float32"}
B_LAYOUTS = {"nk": "b = w.t(), w row-major (N, K)", "kn": "b row-major (K, N)"}


# ---------------------------------------------------------------- arguments


def parse_shape(s: str) -> tuple[int, int, int]:
    """``"8192x7168x2048"`` -> ``(8192, 7168, 2048)`` (M, N, K); ``X``, ``×`` and ``*`` also separate."""
    t = s.strip()
    for sep in ("X", "×", "*"):
        t = t.replace(sep, "x")
    parts = t.split("x")
    try:
        dims = tuple(int(p) for p in parts)
    except ValueError:
        dims = ()
    if len(dims) != 3 or min(dims) < 1:
        raise ValueError(f"bad shape {s!r}: expected MxNxK, three positive integers, e.g. 4096x4096x4096 or "
                         "128x8192x8192")
    return dims


def parse_shapes(s: str) -> list[tuple[int, int, int]]:
    """Comma-separated ``MxNxK`` shapes."""
    items = [p for p in s.split(",") if p.strip()]
    if not items:
        raise ValueError(f"--shapes {s!r} names no shape: give e.g. --shapes 4096x4096x4096,128x8192x8192")
    return [parse_shape(p) for p in items]


def parse_squares(s: str) -> list[int]:
    """Comma-separated square sizes (M = N = K)."""
    out = []
    for p in s.split(","):
        if not p.strip():
            continue
        try:
            v = int(p)
        except ValueError:
            v = 0
        if v < 1:
            raise ValueError(f"bad square size {p.strip()!r} in --squares: expected comma-separated positive "
                             "integers, e.g. --squares 1024,2048,4096")
        out.append(v)
    if not out:
        raise ValueError(f"--squares {s!r} names no size: give e.g. --squares 1024,2048,4096")
    return out


def parse_dtype(s: str, table: dict = IN_DTYPES) -> str:
    """``"bf16"`` -> ``"bfloat16"`` (torch's name); raises naming the accepted spellings."""
    v = table.get(s.strip().lower())
    if v is None:
        short = ", ".join(sorted({k for k, t in table.items() if SHORT[t] == k}))
        raise ValueError(f"bad dtype {s!r}: expected one of {short}")
    return v


def select_shapes(shapes=None, suite: bool = False, squares=None) -> list[dict]:
    """The shapes to run, each ``{"m", "n", "k", "sets"}``; nothing chosen = the suite plus :data:`SQUARES`.
    ``sets`` says where a shape came from ("suite", "square", "custom"); a shape named twice runs once."""
    if shapes is None and not suite and squares is None:
        suite, squares = True, SQUARES
    picked: dict = {}

    def add(mnk, tag):
        row = picked.setdefault(tuple(mnk), dict(m=mnk[0], n=mnk[1], k=mnk[2], sets=[]))
        if tag not in row["sets"]:
            row["sets"].append(tag)

    # suite membership is a property of the shape (for the suite summary), whichever option named it
    suite_set = set(SUITE)
    for mnk in SUITE if suite else ():
        add(mnk, "suite")
    for s in squares or ():
        add((s, s, s), "square")
    for mnk in shapes or ():
        add(mnk, "custom")
    for key, row in picked.items():
        if key in suite_set and "suite" not in row["sets"]:
            row["sets"].insert(0, "suite")
    return list(picked.values())


# ---------------------------------------------------------------- timing (needs torch + a GPU)


def _check_replay(graph, out, expected) -> None:
    """Replay once into a NaN-filled ``out`` and compare with the direct call's output: a launch that went to
    another stream than the capture stream would leave a graph that times nothing."""
    import torch

    out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    d = _rel_err(out, expected.float())
    if not d <= ERR_LIMIT:
        raise RuntimeError(f"the graph replay's output differs from the direct call's (relative {d:.1e}): "
                           "the call was not captured; graph timing dropped")


def _rel_err(c, ref) -> float:
    import torch

    num = torch.linalg.vector_norm(c.float() - ref)
    return float(num / torch.linalg.vector_norm(ref).clamp_min(1e-30))


def _short_error(ex: BaseException) -> str:
    s = f"{type(ex).__name__}: {ex}".strip()
    return s if len(s) <= 500 else s[:497] + "..."


def _peer(a, b, out_dtype: str, in_dtype: str):
    """``(fn(a, b, c), description, c's dtype)`` for cuBLAS: ``torch.matmul`` into ``c``; for an fp32 output from
    16-bit inputs ``torch.mm(..., out_dtype=torch.float32)`` where this torch has it, else the input dtype."""
    import torch

    def matmul(a, b, c):
        return torch.matmul(a, b, out=c)

    if out_dtype == in_dtype:
        return matmul, "torch.matmul(a, b, out=c)", in_dtype
    if out_dtype == "float32":
        try:
            probe = torch.empty(1, min(8, b.shape[1]), dtype=torch.float32, device=a.device)
            torch.mm(a[:1], b[:, :8], out_dtype=torch.float32, out=probe)

            def mm32(a, b, c):
                return torch.mm(a, b, out_dtype=torch.float32, out=c)

            return mm32, "torch.mm(a, b, out_dtype=torch.float32, out=c)", "float32"
        except (TypeError, RuntimeError):
            pass
    return matmul, f"torch.matmul(a, b, out=c), c in {in_dtype} (no {in_dtype} -> {out_dtype} in torch)", in_dtype


def bench_shape(m: int, n: int, k: int, *, dtype: str = "bfloat16", out_dtype: str | None = None,
                b_layout: str = "nk", reps: int = 50, warmup: int = 10, graph: bool = True,
                graph_calls: int = 0, graph_replays: int = 10, flush=None, seed: int = 0) -> dict:
    """Check and time one shape (see the module docstring); never raises for a failing tmakit call: the row's
    ``tmakit_status`` is ``ok``, ``unsupported`` or ``error`` (with ``tmakit_error``), likewise for cuBLAS."""
    import torch

    from ..ops.gemm import gemm

    out_dtype = out_dtype or dtype
    tdt, odt = getattr(torch, dtype), getattr(torch, out_dtype)
    flop = 2.0 * m * n * k
    row = dict(m=m, n=n, k=k, flop=flop, tmakit_status="ok", cublas_status="ok")
    if flush is None:
        flush = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    esz = torch.tensor([], dtype=tdt).element_size()
    set_bytes = (m * k + k * n) * esz + m * n * torch.tensor([], dtype=odt).element_size()
    nsets = row["input_sets"] = timing.nsets(set_bytes)
    g = torch.Generator(device="cuda").manual_seed(seed + 1000003 * m + 1009 * n + k)
    a_s, b_s = [], []
    for _ in range(nsets):
        a_s.append(torch.randn(m, k, device="cuda", dtype=tdt, generator=g))
        if b_layout == "nk":
            b_s.append(torch.randn(n, k, device="cuda", dtype=tdt, generator=g).t())
        else:
            b_s.append(torch.randn(k, n, device="cuda", dtype=tdt, generator=g))
    c_tk = [torch.empty(m, n, device="cuda", dtype=odt) for _ in range(nsets)]
    peer, row["cublas_call"], peer_dt = _peer(a_s[0], b_s[0], out_dtype, dtype)
    c_peer = [torch.empty(m, n, device="cuda", dtype=getattr(torch, peer_dt)) for _ in range(nsets)]

    def tk_fn(i):
        gemm(a_s[i], b_s[i], out=c_tk[i])

    def peer_fn(i):
        peer(a_s[i], b_s[i], c_peer[i])

    # correctness, once, against fp32 torch
    precision = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")  # no TF32 in the reference
    try:
        ref = a_s[0].float() @ b_s[0].float()
    finally:
        torch.set_float32_matmul_precision(precision)
    t0 = time.perf_counter()
    try:
        c_tk[0].fill_(float("nan"))
        tk_fn(0)
        torch.cuda.synchronize()
        row["tmakit_first_call_s"] = time.perf_counter() - t0  # includes a first-time kernel compile
        row["rel_err_tmakit"] = _rel_err(c_tk[0], ref)
    except NotImplementedError as ex:
        row["tmakit_status"], row["tmakit_error"] = "unsupported", _short_error(ex)
    except Exception as ex:
        row["tmakit_status"], row["tmakit_error"] = "error", _short_error(ex)
        if not context_ok():
            raise
    try:
        peer_fn(0)
        torch.cuda.synchronize()
        row["rel_err_cublas"] = _rel_err(c_peer[0], ref)
    except Exception as ex:
        row["cublas_status"], row["cublas_error"] = "error", _short_error(ex)
        if not context_ok():
            raise
    del ref
    outs = {"tmakit": c_tk, "cublas": c_peer}
    first = {name: outs[name][0].clone() for name in outs if row[f"{name}_status"] == "ok"}
    err = row.get("rel_err_tmakit")
    row["err_flag"] = err is not None and not err <= ERR_LIMIT  # NaN is flagged

    sides = [(name, fn) for name, fn in (("tmakit", tk_fn), ("cublas", peer_fn)) if row[f"{name}_status"] == "ok"]
    if not sides:
        return row
    try:
        times = time_events([fn for _, fn in sides], nsets, flush, warmup, reps)
    except Exception as ex:
        row["events_error"] = _short_error(ex)
        if not context_ok():
            raise
        return row
    for (name, _), ms in zip(sides, times):
        row[f"{name}_ms"] = ms
        row[f"{name}_tflops"] = flop / ms / 1e9
    if graph:
        calls = graph_calls or max(3, min(200, math.ceil(20.0 / min(times))))
        row["graph_calls"] = calls
        for name, fn in sides:
            try:
                gr = capture(fn, nsets, calls)
                _check_replay(gr, outs[name][0], first[name])
                (ms,) = time_graphs([gr], calls, flush, graph_replays)
                del gr
            except Exception as ex:
                row[f"{name}_graph_error"] = _short_error(ex)
                if not context_ok():
                    raise
                continue
            row[f"{name}_graph_ms"] = ms
            row[f"{name}_graph_tflops"] = flop / ms / 1e9
    for suffix in ("", "_graph"):
        tk, cb = row.get(f"tmakit{suffix}_ms"), row.get(f"cublas{suffix}_ms")
        if tk and cb:
            row[f"ratio{suffix}"] = cb / tk
    return row


def _env() -> dict:
    import torch

    from .harness import _env as base_env

    env = base_env()
    p = torch.cuda.get_device_properties(0)
    env["capability"] = "sm_%d%d" % torch.cuda.get_device_capability(0)
    env["l2_mib"] = round((getattr(p, "L2_cache_size", 0) or 0) / (1 << 20), 1)
    env["cuda_runtime"] = torch.version.cuda
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader", "-i", "0"],
                           capture_output=True, text=True, timeout=10)
        env["driver"] = r.stdout.strip().splitlines()[0] if r.returncode == 0 and r.stdout.strip() else ""
    except Exception:
        env["driver"] = ""
    try:
        from ..cuda.driver import driver_version

        v = driver_version()
        env["cuda_driver_api"] = f"{v // 1000}.{v % 1000 // 10}"
    except Exception:
        env["cuda_driver_api"] = ""
    # the harness names the commit, '+changes' when tracked files differ (never for a TMAKIT_COMMIT-named tree)
    commit = env.get("commit", "")
    env["dirty"] = commit.endswith("+changes")
    env["commit"] = commit.removesuffix("+changes")
    env["bf16_reduced_precision_reduction"] = bool(
        getattr(torch.backends.cuda.matmul, "allow_bf16_reduced_precision_reduction", False))
    return env


def run(shapes: list[dict], *, dtype: str = "bfloat16", out_dtype: str | None = None, b_layout: str = "nk",
        reps: int = 50, warmup: int = 10, graph: bool = True, graph_calls: int = 0, graph_replays: int = 10,
        seed: int = 0, progress: bool = True, on_row=None) -> dict:
    """Benchmark ``shapes`` (from :func:`select_shapes`); returns ``{"env", "options", "rows", "summary"}``.
    ``on_row(partial_result)`` is called after each shape (to save what is done if a later shape hangs)."""
    import torch

    out_dtype = out_dtype or dtype
    options = dict(dtype=dtype, out_dtype=out_dtype, b_layout=b_layout, b_layout_means=B_LAYOUTS[b_layout],
                   reps=reps, warmup=warmup, graph=graph, graph_calls=graph_calls or "auto",
                   graph_replays=graph_replays, seed=seed, err_limit=ERR_LIMIT, flush_mib=FLUSH_BYTES >> 20,
                   tmakit_call="tmakit.ops.gemm(a, b, out=c)")
    env = _env()
    flush = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    spin_up()
    rows: list[dict] = []
    lost = None
    if progress:
        print(f"tmakit bench gemm: {len(shapes)} shapes, {SHORT[dtype]} -> {SHORT[out_dtype]}, B {b_layout}, "
              f"{env['device']}", file=sys.stderr, flush=True)
    for i, s in enumerate(shapes):
        m, n, k = s["m"], s["n"], s["k"]
        base = dict(m=m, n=n, k=k, sets=list(s.get("sets", ())))
        if lost:
            rows.append(dict(base, tmakit_status="skipped", cublas_status="skipped", error=lost))
            continue
        t0 = time.perf_counter()
        try:
            row = dict(base, **bench_shape(m, n, k, dtype=dtype, out_dtype=out_dtype, b_layout=b_layout, reps=reps,
                                           warmup=warmup, graph=graph, graph_calls=graph_calls,
                                           graph_replays=graph_replays, flush=flush, seed=seed))
        except Exception as ex:  # noqa: BLE001 - one shape must not end the suite
            row = dict(base, tmakit_status="error", cublas_status="error", error=_short_error(ex))
            if not context_ok():
                lost = f"skipped: the CUDA context was lost at {m}x{n}x{k} ({_short_error(ex)[:200]})"
        row["seconds"] = round(time.perf_counter() - t0, 2)
        rows.append(row)
        try:
            torch.cuda.empty_cache()
        except Exception:
            pass
        if progress:
            print(f"  [{i + 1:2d}/{len(shapes)}] {progress_line(row)}", file=sys.stderr, flush=True)
        if on_row is not None:
            on_row(dict(env=env, options=options, rows=rows, summary=summarize(rows), partial=True))
    return dict(env=env, options=options, rows=rows, summary=summarize(rows), partial=False)


# ---------------------------------------------------------------- reports


# ---------------------------------------------------------------- command


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="tmakit bench gemm", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", help="comma-separated MxNxK shapes, e.g. 4096x4096x4096,128x8192x8192")
    ap.add_argument("--suite", action="store_true", help="the issue-8 shape suite (8 shapes)")
    ap.add_argument("--squares", nargs="?", const=",".join(map(str, SQUARES)),
                    help="square sizes M=N=K, comma-separated (alone: 1024..16384)")
    ap.add_argument("--dtype", default="bf16", help="input dtype: bf16 (default) or fp16")
    ap.add_argument("--out-dtype", default=None, help="output dtype: bf16, fp16 or fp32 (default: the input's)")
    ap.add_argument("--b-layout", default="nk", choices=sorted(B_LAYOUTS),
                    help="nk: b = w.t() of a row-major (N, K) w (default); kn: b row-major (K, N)")
    ap.add_argument("--reps", type=int, default=50, help="timed single calls per shape and library (median)")
    ap.add_argument("--warmup", type=int, default=10, help="untimed calls first")
    ap.add_argument("--graph-calls", type=int, default=0, help="calls per CUDA graph (default: ~20 ms worth, 3..200)")
    ap.add_argument("--graph-replays", type=int, default=10, help="timed graph replays (median)")
    ap.add_argument("--no-graph", action="store_true", help="skip the CUDA-graph timing")
    ap.add_argument("--random", type=int, default=0, metavar="N",
                    help="N random shapes (M, N, K log-uniform in [1, 16384], half with unaligned rows; "
                         "bench/gemm_random.py) instead of the lists")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None, help="write results JSON here")
    ap.add_argument("--md", default=None, help="write the markdown report here")
    ap.add_argument("--plot", default=None, help="write a PNG plot here (needs matplotlib)")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    return ap


def parse_args(argv: list[str]) -> argparse.Namespace:
    """Parse and validate; bad values exit 2 with the reason and the fix (argparse's usage error)."""
    ap = build_parser()
    args = ap.parse_args(argv)
    try:
        args.shape_list = select_shapes(parse_shapes(args.shapes) if args.shapes is not None else None, args.suite,
                                        parse_squares(args.squares) if args.squares is not None else None)
        args.dtype = parse_dtype(args.dtype)
        args.out_dtype = parse_dtype(args.out_dtype, OUT_DTYPES) if args.out_dtype else args.dtype
    except ValueError as e:
        ap.error(str(e))
    if args.random < 0:
        ap.error(f"--random must be >= 0, got {args.random}")
    for name in ("reps", "graph_replays"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    for name in ("warmup", "graph_calls"):
        if getattr(args, name) < 0:
            ap.error(f"--{name.replace('_', '-')} must be >= 0, got {getattr(args, name)}")
    return args


def gpu_problem() -> str | None:
    """Why this machine cannot run the benchmark (one line), or None."""
    try:
        import torch
    except ImportError:
        return "tmakit bench gemm needs torch (pip install torch)"
    if not torch.cuda.is_available():
        return "tmakit bench gemm needs a CUDA GPU (sm_90); torch sees none"
    cap = torch.cuda.get_device_capability(0)
    if cap < (9, 0):
        return f"tmakit bench gemm needs a Hopper GPU (sm_90); device 0 is sm_{cap[0]}{cap[1]}"
    return None


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else list(argv))
    problem = gpu_problem()
    if problem:
        print(problem, file=sys.stderr)
        return 2
    def save_partial(partial):
        Path(args.json).write_text(to_json(partial))

    if args.random:
        from .gemm_random import markdown_random, run_random

        result = run_random(args.random, args.seed, bench_shape, _env(), FLUSH_BYTES, reps=args.reps,
                            warmup=args.warmup, graph=not args.no_graph, progress=not args.quiet)
        md = markdown_random(result)
        if args.json:
            Path(args.json).write_text(to_json(result))
        if args.md:
            Path(args.md).write_text(md)
        print(md)
        return 0
    result = run(args.shape_list, dtype=args.dtype, out_dtype=args.out_dtype, b_layout=args.b_layout,
                 reps=args.reps, warmup=args.warmup, graph=not args.no_graph, graph_calls=args.graph_calls,
                 graph_replays=args.graph_replays, seed=args.seed, progress=not args.quiet,
                 on_row=save_partial if args.json else None)
    md = markdown(result)
    if args.json:
        Path(args.json).write_text(to_json(result))
    if args.md:
        Path(args.md).write_text(md)
    if args.plot and not plot(result, args.plot):
        print("matplotlib not available: no plot (pip install matplotlib)", file=sys.stderr)
    print(md)
    return 0
