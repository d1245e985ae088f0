"""Host cost per call of the tk.ops (microseconds of Python + launch per call, GPU never the bottleneck) against the
same torch op, on small tensors so that the kernels finish long before the next launch.

    python3 tools/bench/host_cost.py [--calls N] [--rounds R]

Each case runs R rounds of N back-to-back calls, tmakit and torch alternating; the median round of each is
reported with torch's time over tmakit's (> 1: tmakit's host path is cheaper). Prints one line per case and a JSON
list.
"""

from __future__ import annotations

import argparse
import json
import statistics
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
    """(name, tmakit call, torch call, calls per round): tensors of a few KiB (gemm routed to cuBLAS: 256^3; on the
    small-problem kernel: 256x256x64; FP8 per-tensor scaled_mm, routed to cuBLAS: 256^3; row-wise, routed to
    torch's kernel: 64x4096x1024); copies and reductions
    that rotate over 64 pairs of 1 MiB tensors, as the
    bandwidth benchmark does (new addresses every call); a 4096^3 GEMM on the TMA kernel, host time of 100 queued
    calls (the GPU runs behind)."""
    import itertools

    import torch

    import tmakit as tk

    dev, bf16 = "cuda", torch.bfloat16
    a, b = torch.randn(4096, device=dev, dtype=bf16), torch.empty(4096, device=dev, dtype=bf16)
    x = torch.randn(4, 8, 16, 8, device=dev, dtype=bf16)
    t = torch.randn(64, 64, device=dev, dtype=bf16)
    ga, gw = torch.randn(256, 256, device=dev, dtype=bf16), torch.randn(256, 256, device=dev, dtype=bf16)
    gc = torch.empty(256, 256, device=dev, dtype=bf16)
    sa, sw = torch.randn(256, 64, device=dev, dtype=bf16), torch.randn(256, 64, device=dev, dtype=bf16).t()
    xs = [torch.randn(1 << 19, device=dev, dtype=bf16) for _ in range(64)]
    ys = [torch.empty_like(xs[0]) for _ in range(64)]
    fs = [torch.randn(1 << 18, device=dev) for _ in range(64)]
    ds = [torch.randn(1 << 18, device=dev) for _ in range(64)]
    ring = itertools.cycle(range(64)).__next__
    big = [torch.randn(4096, 4096, device=dev, dtype=bf16) for _ in range(2)]
    bw, bc = big[1].t(), torch.empty(4096, 4096, device=dev, dtype=bf16)
    qa, qw = (torch.randn(256, 256, device=dev).to(torch.float8_e4m3fn) for _ in range(2))
    qb, one = qw.t(), torch.ones((), device=dev)
    ra, rw = (torch.randn(r, 1024, device=dev).to(torch.float8_e4m3fn) for r in (64, 4096))
    rb, rsa, rsb = rw.t(), torch.rand(64, 1, device=dev) + 0.5, torch.rand(1, 4096, device=dev) + 0.5
    rc = torch.empty(64, 4096, device=dev, dtype=bf16)
    return [
        ("copy 8 KiB", lambda: tk.ops.copy(a, b), lambda: b.copy_(a), 2000),
        ("reduce_into add 8 KiB", lambda: tk.ops.reduce_into(b, a, "add"), lambda: b.add_(a), 2000),
        ("transpose 64x64", lambda: tk.ops.transpose(t), lambda: t.t().contiguous(), 2000),
        ("permute (0,2,1,3)", lambda: tk.ops.permute(x, (0, 2, 1, 3)), lambda: x.permute(0, 2, 1, 3).contiguous(),
         2000),
        ("copy 1 MiB, 64 pairs", lambda: (lambda i: tk.ops.copy(xs[i], ys[i]))(ring()),
         lambda: (lambda i: ys[i].copy_(xs[i]))(ring()), 2000),
        ("reduce add f32 1 MiB, 64 pairs", lambda: (lambda i: tk.ops.reduce_into(ds[i], fs[i], "add"))(ring()),
         lambda: (lambda i: ds[i].add_(fs[i]))(ring()), 2000),
        ("gemm 256^3 out= (cuBLAS route)", lambda: tk.ops.gemm(ga, gw.t(), out=gc),
         lambda: torch.matmul(ga, gw.t(), out=gc), 2000),
        ("gemm 256^3 (cuBLAS route)", lambda: tk.ops.gemm(ga, gw.t()), lambda: torch.matmul(ga, gw.t()), 2000),
        ("gemm 256x256x64 out= (small kernel)", lambda: tk.ops.gemm(sa, sw, out=gc),
         lambda: torch.matmul(sa, sw, out=gc), 2000),
        ("gemm 256x256x64 (small kernel)", lambda: tk.ops.gemm(sa, sw), lambda: torch.matmul(sa, sw), 2000),
        ("scaled_mm 256^3 out= (cuBLAS route)", lambda: tk.ops.scaled_mm(qa, qb, one, one, out=gc),
         lambda: torch._scaled_mm(qa, qb, one, one, out_dtype=bf16, out=gc), 2000),
        ("scaled_mm 256^3 (cuBLAS route)", lambda: tk.ops.scaled_mm(qa, qb, one, one),
         lambda: torch._scaled_mm(qa, qb, one, one, out_dtype=bf16), 2000),
        ("scaled_mm row-wise 64x4096x1024 out= (torch's kernel)", lambda: tk.ops.scaled_mm(ra, rb, rsa, rsb, out=rc),
         lambda: torch._scaled_mm(ra, rb, rsa, rsb, out_dtype=bf16, out=rc), 2000),
        ("gemm 4096^3 out= (kernel)", lambda: tk.ops.gemm(big[0], bw, out=bc), lambda: torch.matmul(big[0], bw, out=bc),
         100),
        ("gemm 4096^3 (kernel)", lambda: tk.ops.gemm(big[0], bw), lambda: torch.matmul(big[0], bw), 100),
    ]


def main(argv=None) -> list:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args(argv)
    import tmakit as tk

    rows = []
    for name, ours, theirs, calls in cases():
        calls = min(calls, args.calls)
        tk_us, torch_us = [], []
        for _ in range(args.rounds):
            tk_us.append(_per_call_us(ours, calls))
            torch_us.append(_per_call_us(theirs, calls))
        ours_us, peer_us = statistics.median(tk_us), statistics.median(torch_us)
        rows.append(dict(case=name, tmakit_us=round(ours_us, 2), torch_us=round(peer_us, 2),
                         torch_over_tmakit=round(peer_us / ours_us, 3), path=tk.ops.last_path[:40]))
        print(f"{name:32s} tmakit {ours_us:6.2f} us  torch {peer_us:6.2f} us  torch/tmakit {peer_us / ours_us:5.3f}"
              f"  ({tk.ops.last_path[:40]})")
    print(json.dumps(rows))
    return rows


if __name__ == "__main__":
    main()
