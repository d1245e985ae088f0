"""Host cost per call of the tk.ops (microseconds of Python + launch per call, GPU never the bottleneck) against the
same torch op, on small tensors so that the kernels finish long before the next launch.

    python3 tools/bench/host_cost.py [--calls N] [--rounds R]

Each case runs R rounds of N back-to-back calls, tmakit and torch alternating; the fastest round of each is
reported (host speed varies between rounds more than the ops differ). Prints one line per case and a JSON list.
"""

from __future__ import annotations

import argparse
import json
import time


def _per_call_us(fn, calls: int) -> float:
    import torch

    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / calls * 1e6


def cases():
    """(name, tmakit call, torch call) on tensors of a few KiB (gemm: 256^3)."""
    import torch

    import tmakit as tk

    dev, bf16 = "cuda", torch.bfloat16
    a, b = torch.randn(4096, device=dev, dtype=bf16), torch.empty(4096, device=dev, dtype=bf16)
    x = torch.randn(4, 8, 16, 8, device=dev, dtype=bf16)
    t = torch.randn(64, 64, device=dev, dtype=bf16)
    ga, gw = torch.randn(256, 256, device=dev, dtype=bf16), torch.randn(256, 256, device=dev, dtype=bf16)
    gc = torch.empty(256, 256, device=dev, dtype=bf16)
    return [
        ("copy 8 KiB", lambda: tk.ops.copy(a, b), lambda: b.copy_(a)),
        ("reduce_into add 8 KiB", lambda: tk.ops.reduce_into(b, a, "add"), lambda: b.add_(a)),
        ("transpose 64x64", lambda: tk.ops.transpose(t), lambda: t.t().contiguous()),
        ("permute (0,2,1,3)", lambda: tk.ops.permute(x, (0, 2, 1, 3)), lambda: x.permute(0, 2, 1, 3).contiguous()),
        ("gemm 256^3", lambda: tk.ops.gemm(ga, gw.t(), out=gc), lambda: torch.matmul(ga, gw.t(), out=gc)),
    ]


def main(argv=None) -> list:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    import tmakit as tk

    rows = []
    for name, ours, theirs in cases():
        tk_us, torch_us = [], []
        for _ in range(args.rounds):
            tk_us.append(_per_call_us(ours, args.calls))
            torch_us.append(_per_call_us(theirs, args.calls))
        rows.append(dict(case=name, tmakit_us=round(min(tk_us), 2), torch_us=round(min(torch_us), 2),
                         path=tk.ops.last_path))
        print(f"{name:24s} tmakit {min(tk_us):6.2f} us  torch {min(torch_us):6.2f} us  ({tk.ops.last_path})")
    print(json.dumps(rows))
    return rows


if __name__ == "__main__":
    main()
