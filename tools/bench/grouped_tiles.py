"""The grouped kernels' tiles against each other on random MoE problems: the evidence behind
``gemm_grouped.BF16_TILES`` / ``FP8_TILES`` (the relative speeds ``choose_tile`` weighs).

    python3 tools/bench/grouped_tiles.py sweep OUT.jsonl [--seed 5] [--count 40] [--modes bf16,row,fast,block]
        [--crossing]                                          # only cases whose K is not a multiple of 32
        [--half-line]                                         # K moved: rows an odd multiple of 64 bytes apart
        [--decode]                                            # routed decode-like cases (moe.decode_cases)
    python3 tools/bench/grouped_tiles.py score FILE.jsonl ...   # the chooser in the tree against the best tile
    python3 tools/bench/grouped_tiles.py fit FILE.jsonl ...     # speeds that maximise the score over the files

``sweep`` (GPU): per case of ``tmakit.bench.moe.random_cases(count, seed)`` and per mode (bf16; fp8 row-wise with
two-level or fast accumulation; fp8 block-wise), every candidate tile of the mode launched directly (the kernel's
memoised launcher: no per-call Python of ``tk.ops``, so small problems compare kernels, not host paths), and the
torch peer (``torch._grouped_mm`` / ``torch._scaled_grouped_mm``); interleaved rounds, each call after an L2 flush,
CUDA-event medians; one JSON line per case and mode. Cases whose rows cross 128-byte lines (K bytes not a multiple
of 64) also time the pairs along M (``gemm.cluster_variant``). ``score``: per mode the geomean over cases of best tile
time / chosen tile time (1.0: the chooser always picks the fastest tile) and the cases below 0.9, the chooser
picking among the tiles each record measured (files from before a tile was added score the chooser without it; on
odd pitches with ``ODD_PITCH_SPEED``, as ``gemm_grouped.best_tile`` does); modes a file lacks score nan. ``fit``: a
grid search of the speeds (the largest tile of a mode fixed at 1.0) maximising the geometric mean of the files'
scores.
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


def _configs(mode: str) -> dict:
    from tmakit.kernels import gemm as gk
    from tmakit.kernels import gemm_fp8 as gf

    return gk.CONFIGS if mode == "bf16" else gf.CONFIGS


def odd_pitch(mode: str, case) -> bool:
    """Whether a case's rows (K elements apart: A and K-major B contiguous) are an odd multiple of 16 bytes apart,
    where the chooser weighs pairs along M (``gemm_grouped.odd_pitch_tiles``)."""
    from tmakit.kernels import gemm_grouped as kg

    k = case[3]
    return kg.odd_pitch_of(k, k, 2, 2, k, 2 if mode == "bf16" else 1, 0)


def candidates(mode: str, case=None) -> dict:
    """name -> relative speed of the mode's tiles, as the chooser in the tree has them; with a ``case`` whose rows
    cross 128-byte lines (K bytes not a multiple of 128), also the pairs along M, which ``sweep`` then times."""
    from tmakit.kernels import gemm_grouped as kg

    tiles = dict(kg.BF16_TILES) if mode == "bf16" else dict(kg.FP8_TILES[TILES[mode]])
    if case is not None and case[3] * (2 if mode == "bf16" else 1) % 128:
        tiles = kg.odd_pitch_tiles(tiles, _configs(mode))
    return tiles


def chosen(mode: str, case, tokens: int, speeds: dict | None = None, measured=None) -> str:
    """The tile name the chooser picks for a case (with other ``speeds`` if given; among the ``measured`` names)."""
    from tmakit.kernels import gemm_grouped as kg

    tiles = kg.weighed_tiles(mode if mode == "bf16" else TILES[mode], tokens, case[0], speeds or candidates(mode))
    if odd_pitch(mode, case):
        tiles = kg.odd_pitch_tiles(tiles, _configs(mode))
    if measured is not None:
        tiles = {k: v for k, v in tiles.items() if k in measured}
    return kg.best_tile(tiles, _configs(mode), tokens, case[2], case[0])


def score(recs: list[dict], mode: str, speeds: dict | None = None) -> tuple[float, list]:
    """(geomean of best / chosen time, cases below 0.9) over the records of ``mode``."""
    logs, bad = [], []
    for r in recs:
        if r["mode"] != mode:
            continue
        t = {k: v for k, v in r["ms"].items() if k in candidates(mode, r["case"])}
        pick = chosen(mode, r["case"], r["tokens"], speeds, measured=t)
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


def sweep(out: str, seed: int, count: int, modes: list[str], rounds: int = 3, reps: int = 6,
          crossing: bool = False, half_line: bool = False, decode: bool = False) -> None:
    import torch

    from tmakit.bench.grouped_fp8 import _quantized
    from tmakit.bench.moe import decode_cases, flush_buffer, moe_problem, random_cases, time_rounds
    from tmakit.bench.timing import spin_up
    from tmakit.kernels import gemm_grouped as kg

    flush = flush_buffer(torch)
    spin_up()
    with open(out, "a") as f:
        for case in (decode_cases if decode else random_cases)(count, seed):
            if half_line:  # --half-line: K bytes = 64 mod 128 (bf16 K = 32 mod 64, fp8 K = 64 mod 128)
                step = 64 if modes == ["bf16"] else 128
                case = (*case[:3], case[3] // step * step + step // 2, case[4])
            experts, _, n, k, dist = case
            if crossing and k % 32 == 0:  # --crossing: only cases whose rows cross 128-byte lines (bf16: K % 32)
                continue
            a, b, offs, ends = moe_problem(torch, experts, case[1], n, k, dist)
            for mode in modes:
                fns = {}
                if mode == "bf16":
                    out_t = torch.empty(a.shape[0], n, device="cuda", dtype=torch.bfloat16)
                    fns["torch"] = functools.partial(torch._grouped_mm, a, b, offs=offs)
                    for name in candidates(mode, case):
                        p = kg.plan_grouped(a, b, experts, out_t, None, name)
                        fns[name] = kg.launcher(p, a.data_ptr(), b.data_ptr(), out_t.data_ptr(), offs.data_ptr())
                else:
                    fast = mode == "fast"
                    qa, qb, sa, sb = _quantized(torch, a, b.transpose(-2, -1), "block" if mode == "block" else "row")
                    out_t = torch.empty(qa.shape[0], n, device="cuda", dtype=torch.bfloat16)
                    if mode != "block":
                        fns["torch"] = functools.partial(torch._scaled_grouped_mm, qa, qb, sa, sb, offs=offs,
                                                         use_fast_accum=fast, out_dtype=torch.bfloat16)
                    for name in candidates(mode, case):
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
    ap.add_argument("--crossing", action="store_true", help="sweep: only cases whose K is not a multiple of 32")
    ap.add_argument("--half-line", action="store_true",
                    help="sweep: K moved so that rows are an odd multiple of 64 bytes apart (bf16 alone, or fp8 modes)")
    ap.add_argument("--decode", action="store_true", help="sweep: routed decode-like cases (moe.decode_cases)")
    args = ap.parse_args(argv)
    modes = args.modes.split(",")
    for m in modes:
        if m not in TILES:
            ap.error(f"--modes: {m!r} is not one of {', '.join(TILES)}")
    if args.command == "sweep":
        if args.half_line and "bf16" in modes and len(modes) > 1:
            ap.error("--half-line: sweep bf16 alone or the fp8 modes alone (their K differ)")
        sweep(args.files[0], args.seed, args.count, modes, crossing=args.crossing, half_line=args.half_line,
              decode=args.decode)
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
