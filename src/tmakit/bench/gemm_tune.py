"""``tmakit tune gemm M N K``: time every GEMM kernel configuration, the small-problem kernel and ``torch.matmul`` on
one problem and keep the fastest for ``tk.ops.gemm`` (``tmakit.ops.gemm_tuned``: a JSON file per device kind in the
kernel cache directory).

Each candidate is checked against an fp32 reference first (a wrong or failing candidate is never kept), then all are
timed in interleaved rounds, each call after an L2 flush, by CUDA events; the median wins. Later ``tk.ops.gemm``
calls on that problem class (dtypes, B layout, M, N, K) and device kind take the winner without tuning knobs.
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["candidates", "tune", "main"]

SPLITS = (2, 3, 4)  # K ranges tried with the configs whose tiles are few


def candidates(m: int, n: int, k: int) -> list[tuple[str, dict]]:
    """(name, gemm keyword arguments) of every configuration worth timing on (M, N, K), torch.matmul first."""
    from ..kernels.gemm import CONFIGS, choose_split

    out = [("torch", {}), ("heuristic", {"strict": True}), ("small", {"config": "small"})]
    for name, cfg in CONFIGS.items():
        out.append((name, {"config": name}))
        tiles = -(-m // cfg.bm) * -(-n // cfg.bn)
        if tiles < 132 * 3 // 4 and k >= 8 * 64 and choose_split(m, n, k, cfg)[0] == 1:
            out += [(f"{name}/split{s}", {"config": name, "split": s}) for s in SPLITS if k >= s * 4 * 64]
    return out


def tune(m: int, n: int, k: int, *, dtype: str = "bfloat16", out_dtype: str | None = None, b_layout: str = "nk",
         reps: int = 15, warmup: int = 3, save: bool = True) -> dict:
    """Time the candidates on (M, N, K) and (``save``) store the fastest; returns ``{"key", "device", "times_ms",
    "errors", "best", "entry", "file"}``."""
    import torch

    from ..kernels.gemm import GemmError
    from ..ops import gemm_tuned
    from ..ops.gemm import forget_plans, gemm
    from .timing import time_events

    out_dtype = out_dtype or dtype
    tdt, odt = getattr(torch, dtype), getattr(torch, out_dtype)
    if b_layout not in ("nk", "kn"):
        raise GemmError(f"b_layout must be 'nk' (b = w.t()) or 'kn' (row-major (K, N)), got {b_layout!r}")
    g = torch.Generator(device="cuda").manual_seed(m * 7919 + n * 104729 + k)
    a = torch.randn(m, k, device="cuda", dtype=tdt, generator=g)
    b = (torch.randn(n, k, device="cuda", dtype=tdt, generator=g).t() if b_layout == "nk"
         else torch.randn(k, n, device="cuda", dtype=tdt, generator=g))
    c = torch.empty(m, n, device="cuda", dtype=odt)
    ref = a.float() @ b.float()
    flush = torch.empty(2 * torch.cuda.get_device_properties(a.device).L2_cache_size // 4 + 1, dtype=torch.int32,
                        device="cuda")
    cands = dict(candidates(m, n, k))
    fns, errors = {}, {}
    for name, kw in cands.items():
        if name == "torch":
            def fn(kw=kw):
                torch.matmul(a, b, out=c) if odt == tdt else c.copy_(torch.matmul(a.float(), b.float()))
        else:
            def fn(kw=kw):
                gemm(a, b, out=c, **kw)
        try:
            c.fill_(float("nan"))
            fn()
            torch.cuda.synchronize()
            err = ((c.float() - ref).norm() / ref.norm().clamp_min(1e-30)).item()
        except (GemmError, RuntimeError, ValueError) as ex:
            errors[name] = f"{type(ex).__name__}: {ex}"[:200]
            continue
        if not err <= 2e-2:
            errors[name] = f"relative error {err:.2e}"
            continue
        fns[name] = fn
    ms = time_events([lambda i, f=f: f() for f in fns.values()], 1, flush, warmup, reps)
    times = dict(zip(fns, ms))
    best = min(times, key=times.get)
    if best == "heuristic":  # keep what the heuristics chose for the kernel
        from ..kernels.gemm import CONFIGS, plan

        p = plan(a, b, c)
        entry = {"path": "kernel", "config": next(nm for nm, cf in CONFIGS.items() if cf == p.config),
                 "split": p.split}
    elif best in ("torch", "small"):
        entry = {"path": best}
    else:
        kw = cands[best]
        entry = {"path": "kernel", "config": kw["config"], "split": kw.get("split", 0) or 0}
    if entry.get("split") in (0, 1):
        entry.pop("split")
    key = gemm_tuned.problem_key(m, n, k, dtype, out_dtype, b_layout == "kn")
    tag = gemm_tuned.device_tag(a.get_device())
    path = gemm_tuned.store(tag, key, entry) if save else None
    forget_plans()
    return dict(key=key, device=tag, times_ms=times, errors=errors, best=best, entry=entry, file=path)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tmakit tune gemm", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("m", type=int)
    p.add_argument("n", type=int)
    p.add_argument("k", type=int)
    p.add_argument("--dtype", default="bfloat16", choices=("bfloat16", "float16"))
    p.add_argument("--out-dtype", default=None, choices=("bfloat16", "float16", "float32"))
    p.add_argument("--b-layout", default="nk", choices=("nk", "kn"),
                   help="nk: b = w.t() with w row-major (N, K) (default); kn: b row-major (K, N)")
    p.add_argument("--reps", type=int, default=15)
    p.add_argument("--dry-run", action="store_true", help="measure and print, keep nothing")
    return p


def main(argv: list[str]) -> int:
    if argv[:1] != ["gemm"]:
        print("usage: tmakit tune gemm M N K [--dtype D] [--out-dtype D] [--b-layout nk|kn] [--reps R] [--dry-run]",
              file=sys.stderr)
        return 2
    try:
        args = build_parser().parse_args(argv[1:])
    except SystemExit as e:
        return int(e.code or 0)
    from .gemm import gpu_problem

    problem = gpu_problem()
    if problem:
        print(f"tmakit tune gemm: {problem.replace('tmakit bench gemm ', '')}", file=sys.stderr)
        return 2
    for nm in ("m", "n", "k"):
        if getattr(args, nm) < 1:
            print(f"tmakit tune gemm: {nm.upper()} must be >= 1, got {getattr(args, nm)}", file=sys.stderr)
            return 2
    r = tune(args.m, args.n, args.k, dtype=args.dtype, out_dtype=args.out_dtype, b_layout=args.b_layout,
             reps=args.reps, save=not args.dry_run)
    t_torch = r["times_ms"].get("torch")
    print(f"{r['key']} on {r['device']}: {len(r['times_ms'])} candidates timed, {len(r['errors'])} not usable")
    for name, ms in sorted(r["times_ms"].items(), key=lambda x: x[1])[:12]:
        vs = f"  {t_torch / ms:6.3f}x torch.matmul" if t_torch else ""
        print(f"  {name:28s} {ms * 1e3:10.1f} us{vs}")
    print(f"kept: {r['entry']}" + (f" in {r['file']}" if r["file"] else " (not saved)"))
    return 0
