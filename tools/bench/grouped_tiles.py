"""The grouped kernels' tiles against each other on random MoE problems: the evidence behind
``gemm_grouped.BF16_TILES`` / ``FP8_TILES`` (the relative speeds ``choose_tile`` weighs).

    python3 tools/bench/grouped_tiles.py sweep OUT.jsonl [--seed 5] [--count 40] [--modes bf16,row,fast,block]
    python3 tools/bench/grouped_tiles.py score FILE.jsonl ...   # the chooser in the tree against the best tile
    python3 tools/bench/grouped_tiles.py fit FILE.jsonl ...     # speeds that maximise the score over the files

``sweep`` (GPU): per case of ``tmakit.bench.moe.random_cases(count, seed)`` and per mode (bf16; fp8 row-wise with
two-level or fast accumulation; fp8 block-wise), every candidate tile of the mode launched directly (the kernel's
memoised launcher: no per-call Python of ``tk.ops``, so small problems compare kernels, not host paths), and the
torch peer (``torch._grouped_mm`` / ``torch._scaled_grouped_mm``); interleaved rounds, each call after an L2 flush,
CUDA-event medians; one JSON line per case and mode. ``score``: per mode the geomean over cases of best tile time /
chosen tile time (1.0: the chooser always picks the fastest tile) and the cases below 0.9, the chooser picking
among the tiles each record measured (files from before a tile was added score the chooser without it); modes a
file lacks score nan. ``fit``: a grid search of the speeds (the largest tile of a mode fixed at 1.0) maximising the
geometric mean of the files' scores.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import math
import statistics
import sys

TILES = {"bf16": "BF16_TILES", "row": "two-level", "fast": "fast", "block": "block"}


def candidates(mode: str) -> dict:
    """name -> relative speed of the mode's tiles, as the chooser in the tree has them."""
    from tmakit.kernels import gemm_grouped as kg

    return dict(kg.BF16_TILES) if mode == "bf16" else dict(kg.FP8_TILES[TILES[mode]])


def chosen(mode: str, case, tokens: int, speeds: dict | None = None) -> str:
    """The tile name the chooser picks for a case (with other ``speeds`` if given)."""
    from tmakit.kernels import gemm as gk
    from tmakit.kernels import gemm_fp8 as gf
    from tmakit.kernels import gemm_grouped as kg

    configs = gk.CONFIGS if mode == "bf16" else gf.CONFIGS
    return kg.best_tile(speeds or candidates(mode), configs, tokens, case[2], case[0])


def score(recs: list[dict], mode: str, speeds: dict | None = None) -> tuple[float, list]:
    """(geomean of best / chosen time, cases below 0.9) over the records of ``mode``."""
    logs, bad = [], []
    for r in recs:
        if r["mode"] != mode:
            continue
        t = {k: v for k, v in r["ms"].items() if k in candidates(mode)}
        sp = {k: v for k, v in (speeds or candidates(mode)).items() if k in t}  # the tiles the record measured
        pick = chosen(mode, r["case"], r["tokens"], sp)
        x = min(t.values()) / t[pick]
        logs.append(math.log(x))
        if x < 0.9:
            bad.append((r["case"], pick, min(t, key=t.get), round(x, 3)))
    return (math.exp(sum(logs) / len(logs)) if logs else float("nan")), bad


def fit(files: list[list[dict]], mode: str) -> tuple[float, dict]:
    grid = [0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0]
    names = list(candidates(mode))
    best = (0.0, {})
    for rest in itertools.product(grid, repeat=len(names) - 1):
        speeds = {names[0]: 1.0, **dict(zip(names[1:], rest))}
        s = math.exp(statistics.mean(math.log(score(recs, mode, speeds)[0]) for recs in files))
        best = max(best, (s, speeds), key=lambda x: x[0])
    return best


def sweep(out: str, seed: int, count: int, modes: list[str], rounds: int = 3, reps: int = 6) -> None:
    import torch

    from tmakit.bench.grouped_fp8 import _quantized
    from tmakit.bench.moe import flush_buffer, moe_problem, random_cases, time_rounds
    from tmakit.bench.timing import spin_up
    from tmakit.kernels import gemm_grouped as kg

    flush = flush_buffer(torch)
    spin_up()
    with open(out, "a") as f:
        for case in random_cases(count, seed):
            experts, _, n, k, dist = case
            a, b, offs, ends = moe_problem(torch, experts, case[1], n, k, dist)
            for mode in modes:
                fns = {}
                if mode == "bf16":
                    out_t = torch.empty(a.shape[0], n, device="cuda", dtype=torch.bfloat16)
                    fns["torch"] = functools.partial(torch._grouped_mm, a, b, offs=offs)
                    for name in candidates(mode):
                        p = kg.plan_grouped(a, b, experts, out_t, None, name)
                        fns[name] = kg.launcher(p, a.data_ptr(), b.data_ptr(), out_t.data_ptr(), offs.data_ptr())
                else:
                    fast = mode == "fast"
                    qa, qb, sa, sb = _quantized(torch, a, b.transpose(-2, -1), "block" if mode == "block" else "row")
                    out_t = torch.empty(qa.shape[0], n, device="cuda", dtype=torch.bfloat16)
                    if mode != "block":
                        fns["torch"] = functools.partial(torch._scaled_grouped_mm, qa, qb, sa, sb, offs=offs,
                                                         use_fast_accum=fast, out_dtype=torch.bfloat16)
                    for name in candidates(mode):
                        p = kg.plan_grouped_fp8(qa, qb, sa, sb, experts, out_t, "bfloat16", name, fast)
                        fns[name] = kg.launcher(p, qa.data_ptr(), qb.data_ptr(), out_t.data_ptr(), offs.data_ptr(),
                                                sa.data_ptr(), sb.data_ptr())
                for fn in fns.values():
                    fn()
                torch.cuda.synchronize()
                t = {name: statistics.median(v) for name, v in time_rounds(fns, flush, rounds, reps).items()}
                f.write(json.dumps(dict(case=list(case), mode=mode, tokens=ends[-1], ms=t,
                                        device=torch.cuda.get_device_name())) + "\n")
                f.flush()
                print(case, mode, {k: round(v, 4) for k, v in t.items()}, file=sys.stderr, flush=True)
            del a, b, fns
            torch.cuda.empty_cache()


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=("sweep", "score", "fit"))
    ap.add_argument("files", nargs="+")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--count", type=int, default=40)
    ap.add_argument("--modes", default="bf16,row,fast,block")
    args = ap.parse_args(argv)
    modes = args.modes.split(",")
    for m in modes:
        if m not in TILES:
            ap.error(f"--modes: {m!r} is not one of {', '.join(TILES)}")
    if args.command == "sweep":
        sweep(args.files[0], args.seed, args.count, modes)
        return 0
    files = [[json.loads(line) for line in open(p)] for p in args.files]
    for mode in modes:
        if args.command == "score":
            for p, recs in zip(args.files, files):
                s, bad = score(recs, mode)
                print(f"{mode:5s} {p}: chosen at {s:.3f} of the best tile's speed; below 0.9: {bad}")
        else:
            s, speeds = fit(files, mode)
            print(f"{mode:5s} fitted speeds {speeds}: geomean score {s:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
