"""``tk.ops.gemm_list`` on lists that mix what one launch can take: the same small problems (bf16, B = ``w.t()``)
clean, with one problem whose rows TMA cannot read (120-byte pitch), and split between bf16 and fp16. Each list
against the loops a user would otherwise write (default ``tk.ops.gemm`` calls, ``torch.matmul``), events after an L2
flush, interleaved rounds, medians; the "torch loop" is also what a list with one such problem ran before it was
split (every problem through ``torch.matmul``).

    PYTHONPATH=src python3 tools/bench/list_mixed.py [--rounds 5] [--reps 15] [--fp8]

``--fp8``: ``tk.ops.scaled_gemm_list`` on the same shapes in e4m3 (B = ``w.t()``, bf16 out, per-tensor, row-wise
and block-wise scales, two-level accumulation) against loops of ``tk.ops.scaled_mm`` and of ``torch._scaled_mm``
(where torch has the mode).
"""

from __future__ import annotations

import argparse
import random
import statistics


def lists(torch, count: int, lo: int, hi: int, seed: int) -> dict:
    rng = random.Random(seed)
    As, Bs = [], []
    for _ in range(count):
        m, n, k = (8 * rng.randint(lo // 8, hi // 8) for _ in range(3))
        As.append(torch.randn(m, k, device="cuda", dtype=torch.bfloat16))
        Bs.append(torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t())
    odd_a = torch.randn(lo, 60, device="cuda", dtype=torch.bfloat16)
    odd_b = torch.randn(60, lo, device="cuda", dtype=torch.bfloat16)
    half = [a.half() if g % 2 else a for g, a in enumerate(As)], [b.half() if g % 2 else b for g, b in enumerate(Bs)]
    return {"clean": (As, Bs), "one odd pitch": (As[:-1] + [odd_a], Bs[:-1] + [odd_b]), "bf16+fp16": half}


def fp8_lists(torch, count: int, lo: int, hi: int, seed: int) -> dict:
    rng = random.Random(seed)
    out = {"tensor": ([], [], [], []), "row": ([], [], [], []), "block": ([], [], [], [])}
    for _ in range(count):
        m, n, k = (16 * rng.randint(lo // 16, hi // 16) for _ in range(3))
        a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()
        kb, nb = -(-k // 128), -(-n // 128)
        for mode, scales in (("tensor", (torch.rand((), device="cuda") + 0.5, torch.rand((), device="cuda") + 0.5)),
                             ("row", (torch.rand(m, 1, device="cuda") + 0.5, torch.rand(1, n, device="cuda") + 0.5)),
                             ("block", (torch.rand(m, kb, device="cuda") + 0.5,
                                        torch.rand(nb, kb, device="cuda") + 0.5))):
            for lst, v in zip(out[mode], (a, b, *scales)):
                lst.append(v)
    return out


def _rel_err(o, a, b, sa, sb) -> float:
    """Relative error of one result against the fp64 product of the dequantized operands (any scaling)."""
    k, n = a.shape[1], b.shape[1]
    if tuple(sa.shape) == (a.shape[0], -(-k // 128)) and tuple(sb.shape) == (-(-n // 128), -(-k // 128)) \
            and tuple(sb.shape) != (1, n):  # block-wise
        ea = sa.double().repeat_interleave(128, dim=1)[:, :k]
        eb = sb.double().repeat_interleave(128, dim=0).repeat_interleave(128, dim=1)[:n, :k]
        ref = (a.double() * ea) @ (b.double().t() * eb).t()
    else:
        ref = (a.double() @ b.double()) * sa.double() * sb.double()
    return float((o.double() - ref).norm() / ref.norm())


def run_fp8(torch, tk, flush, args) -> None:
    from tmakit.bench.moe import time_rounds

    print("\n| problems | sides | scales | last_path | list µs | vs tk.ops.scaled_mm loop | vs torch._scaled_mm loop "
          "| max rel err |")
    print("|---:|---|---|---|---:|---:|---:|---:|")
    for count, lo, hi in ((64, 128, 1024), (128, 64, 512), (16, 256, 2048), (8, 1024, 4096)):
        for mode, (As, Bs, SA, SB) in fp8_lists(torch, count, lo, hi, count).items():
            outs = [torch.empty(a.shape[0], b.shape[1], device="cuda", dtype=torch.bfloat16) for a, b in zip(As, Bs)]
            o2 = [torch.empty_like(o) for o in outs]
            probs = list(zip(As, Bs, SA, SB, o2))
            fns = {"list": lambda As=As, Bs=Bs, SA=SA, SB=SB, outs=outs: tk.ops.scaled_gemm_list(As, Bs, SA, SB,
                                                                                                 out=outs),
                   "tk loop": lambda probs=probs: [tk.ops.scaled_mm(a, b, x, y, out=o) for a, b, x, y, o in probs]}
            if mode != "block":  # (this torch has no block-wise _scaled_mm on sm_90)
                fns["torch loop"] = lambda probs=probs: [torch._scaled_mm(a, b, x, y, out_dtype=torch.bfloat16, out=o)
                                                         for a, b, x, y, o in probs]
            fns["list"]()
            path = tk.ops.last_path
            err = max(_rel_err(o, a, b, x, y) for a, b, x, y, o in zip(As, Bs, SA, SB, outs))
            t = {k: statistics.median(v) for k, v in time_rounds(fns, flush, args.rounds, args.reps).items()}
            print(f"| {count} | {lo}-{hi} | {mode} | `{path[:40]}` | {t['list'] * 1e3:.0f} | "
                  f"{t['tk loop'] / t['list']:.3f} | "
                  f"{t['torch loop'] / t['list'] if 'torch loop' in t else float('nan'):.3f} | {err:.1e} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--fp8", action="store_true", help="scaled_gemm_list on fp8 lists instead")
    args = ap.parse_args()
    import torch

    import tmakit as tk
    from tmakit.bench.grouped import _list_calls
    from tmakit.bench.moe import flush_buffer, time_rounds

    flush = flush_buffer(torch)
    print(f"{torch.cuda.get_device_name()}; ratio = loop time / list time")
    if args.fp8:
        run_fp8(torch, tk, flush, args)
        return
    print("| problems | sides | list | last_path | list µs | vs tk.ops.gemm loop | vs torch loop | max rel err |")
    print("|---:|---|---|---|---:|---:|---:|---:|")
    for count, lo, hi in ((64, 128, 1024), (128, 64, 512), (16, 256, 2048)):
        for name, (As, Bs) in lists(torch, count, lo, hi, count).items():
            outs = [torch.empty(a.shape[0], b.shape[1], device="cuda", dtype=a.dtype) for a, b in zip(As, Bs)]
            outs2 = [torch.empty_like(o) for o in outs]
            fns = _list_calls(torch, tk, As, Bs, outs, outs2)  # list, gemm loop, cublas loop (torch.matmul)
            fns["list"]()
            path = tk.ops.last_path
            err = max(float((o.float() - a.float() @ b.float()).norm() / (a.float() @ b.float()).norm())
                      for a, b, o in zip(As, Bs, outs))
            t = {k: statistics.median(v) for k, v in time_rounds(fns, flush, args.rounds, args.reps).items()}
            print(f"| {count} | {lo}-{hi} | {name} | `{path[:60]}` | {t['list'] * 1e3:.0f} | "
                  f"{t['gemm loop'] / t['list']:.3f} | {t['cublas loop'] / t['list']:.3f} | {err:.1e} |", flush=True)


if __name__ == "__main__":
    main()
