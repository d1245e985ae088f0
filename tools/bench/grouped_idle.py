"""Consumers whose 64 rows all lie past their group's end skip their wgmmas on a group's only row tile (docs/GROUPED.md,
"Idle consumers"): the grouped kernels' default plan built with and without the skip (the kernel's IDLE,
``GroupedPlan.idle``), and against ``torch._grouped_mm``, in one process.

    python3 tools/bench/grouped_idle.py [--random N] [--seed S] [--rounds R] [--fp8] [--control] [--as-planned]
        [--cases E:ROWS:N:K:DIST,...]

Per case the default plan's tile is launched with and without the skip (the launchers directly, each call after an
L2 flush, interleaved rounds; tiles of 64 rows or with overlap cannot skip, so their ratio shows the method's
spread, as does ``--control``: both with the skip; ``--as-planned``: the skip only where ``idle_consumers`` takes
it); the outputs must be bit-identical; "default" says which one the plan picks. Cases: ``tmakit bench grouped``'s
list plus ``--random`` random ones (``tmakit.bench.moe.random_cases``), or ``--cases``. ``--fp8``: the FP8 grouped
kernel with row-wise scales instead (no torch column). Prints one line per case and geomeans per set.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import statistics


def _geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def measure(case, rounds: int, flush, fp8: bool, control: bool = False, as_planned: bool = False) -> dict:
    """Times of one case: the default plan without and with the skip, and torch (bf16)."""
    import torch

    from tmakit.bench.moe import moe_problem, time_rounds
    from tmakit.kernels import gemm_grouped as kg

    e, rows, n, k, dist = case
    a, b, offs, ends = moe_problem(torch, e, rows, n, k, dist)
    outs = [torch.full((a.shape[0], n), float("nan"), device="cuda", dtype=torch.bfloat16) for _ in range(2)]
    fns, extra = {}, ()
    if fp8:
        a = a.to(torch.float8_e4m3fn)
        w = b.transpose(-2, -1).contiguous().to(torch.float8_e4m3fn)
        b = w.transpose(-2, -1)
        sa = torch.rand(a.shape[0], device="cuda") + 0.5
        sb = torch.rand(e, n, device="cuda") + 0.5
        extra = (sa.data_ptr(), sb.data_ptr())
    for skip, out in enumerate(outs):
        p = kg.plan_grouped_fp8(a, b, sa, sb, e, out) if fp8 else kg.plan_grouped(a, b, e, out)
        default = p.idle
        can = p.config.bm == 128 and not p.config.overlap
        on = default if as_planned else int(can)
        p = dataclasses.replace(p, idle=on if skip or control else 0)
        fns[f"skip{skip}"] = kg.launcher(p, a.data_ptr(), b.data_ptr(), out.data_ptr(), offs.data_ptr(), *extra)
        fns[f"skip{skip}"]()
    torch.cuda.synchronize()
    if not torch.equal(outs[0][:ends[-1]].view(torch.int16), outs[1][:ends[-1]].view(torch.int16)):
        raise AssertionError(f"{case}: the builds with and without the skip differ")
    if not fp8:
        fns["torch"] = lambda: torch._grouped_mm(a, b, offs=offs)
    t = time_rounds(fns, flush, rounds, 20)
    ratio = lambda x, y: statistics.median(p / q for p, q in zip(t[x], t[y]))  # noqa: E731
    cfg = p.config
    eb = 1 if fp8 else 2
    flops, nbytes = 2.0 * a.shape[0] * n * k, eb * (e * n * k + a.shape[0] * k) + 2 * a.shape[0] * n
    return dict(case=case, tile=f"{cfg.bm}x{cfg.bn}c{cfg.cluster}", gain=ratio("skip0", "skip1"), fpb=flops / nbytes,
                default="skip" if default else "-",
                torch_over=None if fp8 else ratio("torch", "skip1"))


def main(argv=None) -> list:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--random", type=int, default=16)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--fp8", action="store_true")
    ap.add_argument("--control", action="store_true", help="both builds with the skip (the spread of the method)")
    ap.add_argument("--as-planned", action="store_true", help="the skip where the plan takes it, against none")
    ap.add_argument("--cases", default=None, help="experts:rows:N:K:dist,... instead of the lists")
    args = ap.parse_args(argv)
    import torch

    from tmakit.bench.moe import CASES, flush_buffer, random_cases
    from tmakit.bench.timing import spin_up

    flush = flush_buffer(torch)
    spin_up()
    print(torch.cuda.get_device_name(), "fp8 row-wise" if args.fp8 else "bf16")
    groups = {"<= 256 rows": [c for c in CASES if c[1] <= 256], "> 256 rows": [c for c in CASES if c[1] > 256],
              "random": random_cases(args.random, args.seed)}
    if args.cases:
        groups = {"cases": [tuple(int(v) if v.isdigit() else v for v in c.split(":")) for c in args.cases.split(",")]}
    rows = []
    for label, cases in groups.items():
        got = []
        for case in cases:
            r = measure(case, args.rounds, flush, args.fp8, args.control, args.as_planned)
            got.append(r)
            vs = "" if r["torch_over"] is None else f"  torch / skip {r['torch_over']:.3f}"
            print(f"{str(case):40s} {r['tile']:10s} {r['fpb']:6.0f} flop/B  default {r['default']:4s}  skip / no skip "
                  f"{r['gain']:.3f}{vs}", flush=True)
            torch.cuda.empty_cache()
        if got:
            g = [r["gain"] for r in got]
            vs = "" if args.fp8 else f", torch / skip {_geomean([r['torch_over'] for r in got]):.3f}"
            print(f"{label}: skip / no skip geomean {_geomean(g):.3f} ({min(g):.3f}-{max(g):.3f}){vs}", flush=True)
        rows += got
    return rows


if __name__ == "__main__":
    main()
