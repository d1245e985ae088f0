"""The grouped bf16 kernel's deferred epilogue against the same tile without it, and both against
``torch._grouped_mm``, in one process (docs/GROUPED.md, "Deferred epilogue").

    python3 tools/bench/grouped_defer.py [--random N] [--seed S] [--rounds R] [--odd]

Per case the default plan's tile is launched with ``defer=0`` and ``defer=1`` (the launchers directly, each call
after an L2 flush, interleaved rounds); the two outputs must be bit-identical. Cases: ``tmakit bench grouped``'s
list plus ``--random`` random ones (``tmakit.bench.moe.random_cases``), or with ``--odd`` six problems whose rows are
an odd multiple of 16 bytes apart (the chooser takes pairs along M there). Prints one line per case and geomeans.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import statistics

ODD = [(8, 4096, 4096, 4104, "uniform"), (16, 2048, 2048, 7176, "uniform"), (32, 1024, 2048, 4104, "skewed"),
       (8, 1024, 4096, 2056, "uniform"), (64, 512, 1536, 2056, "uniform"), (128, 256, 1536, 2056, "uniform")]


def _geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def measure(case, rounds: int, flush) -> dict:
    """Times of one case: the default tile without and with deferral, and torch."""
    import torch

    from tmakit.bench.moe import moe_problem, time_rounds
    from tmakit.kernels import gemm_grouped as kg

    e, rows, n, k, dist = case
    a, b, offs, ends = moe_problem(torch, e, rows, n, k, dist)
    outs = [torch.full((a.shape[0], n), float("nan"), device="cuda", dtype=torch.bfloat16) for _ in range(2)]
    cfg = kg.plan_grouped(a, b, e, outs[0]).config
    fns = {}
    for d, out in enumerate(outs):
        p = kg.plan_grouped(a, b, e, out, config=dataclasses.replace(cfg, defer=d))
        fns[f"defer{d}"] = kg.launcher(p, a.data_ptr(), b.data_ptr(), out.data_ptr(), offs.data_ptr())
        fns[f"defer{d}"]()
    torch.cuda.synchronize()
    if not torch.equal(outs[0][:ends[-1]], outs[1][:ends[-1]]):
        raise AssertionError(f"{case}: deferred and immediate epilogues differ")
    fns["torch"] = lambda: torch._grouped_mm(a, b, offs=offs)
    t = time_rounds(fns, flush, rounds, 20)
    ratio = lambda x, y: statistics.median(p / q for p, q in zip(t[x], t[y]))  # noqa: E731
    return dict(case=case, tile=f"{cfg.bm}x{cfg.bn}c{cfg.cluster}", defer_gain=ratio("defer0", "defer1"),
                torch_over_immediate=ratio("torch", "defer0"), torch_over_deferred=ratio("torch", "defer1"))


def main(argv=None) -> list:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--random", type=int, default=16)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--odd", action="store_true")
    args = ap.parse_args(argv)
    import torch

    from tmakit.bench.moe import CASES, flush_buffer, random_cases
    from tmakit.bench.timing import spin_up

    flush = flush_buffer(torch)
    spin_up()
    print(torch.cuda.get_device_name())
    groups = {"odd pitch": ODD} if args.odd else {"<= 256 rows": [c for c in CASES if c[1] <= 256],
                                                  "> 256 rows": [c for c in CASES if c[1] > 256],
                                                  "random": random_cases(args.random, args.seed)}
    rows = []
    for label, cases in groups.items():
        got = []
        for case in cases:
            r = measure(case, args.rounds, flush)
            got.append(r)
            print(f"{str(case):40s} {r['tile']:10s} deferred / immediate {r['defer_gain']:.3f}  torch / deferred "
                  f"{r['torch_over_deferred']:.3f}", flush=True)
            torch.cuda.empty_cache()
        if got:
            g = [r["defer_gain"] for r in got]
            print(f"{label}: deferred / immediate geomean {_geomean(g):.3f} ({min(g):.3f}-{max(g):.3f}), torch / "
                  f"deferred {_geomean([r['torch_over_deferred'] for r in got]):.3f}", flush=True)
        rows += got
    return rows


if __name__ == "__main__":
    main()
