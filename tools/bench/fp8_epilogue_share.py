"""How much of the FP8 GEMM's time its epilogue takes: each shape's default per-tensor and block-wise plans against
the same plans built with ``TMAKIT_GEMM_NO_EPI=1`` (whole-tile units skip the epilogue: nothing is written, so the
result is wrong by design), beside ``torch._scaled_mm`` (cuBLAS), each call after an L2 flush, alternating, medians
over rounds. The ratio default / no-epilogue time bounds what any epilogue overlap could gain (docs/GEMM.md).

    python3 tools/bench/fp8_epilogue_share.py [--reps N] [--rounds R] [--shapes MxNxK,...]
"""

from __future__ import annotations

import argparse
import statistics

from fp8_block_cost import SHAPES  # tools/bench is the script's directory: issue 24's suite

from tmakit.bench.gemm_report import geomean


def measure(m: int, n: int, k: int, reps: int, rounds: int, flush) -> dict:
    """Milliseconds per variant: tensor, tensor without epilogue, block, block without epilogue, cuBLAS."""
    import torch

    from tmakit.bench.timing import time_events
    from tmakit.kernels import gemm_fp8 as K
    from tmakit.ops import quantize as Q

    x, w = torch.randn(m, k, device="cuda"), torch.randn(n, k, device="cuda")
    (qa, sa), (qw, sb) = Q.quantize_1x128(x), Q.quantize_128x128(w)
    one, b = torch.ones((), device="cuda"), qw.t()
    fns, names, keep = [], [], []
    for mode, (s0, s1) in (("tensor", (one, one)), ("block", (sa, sb))):
        for defines in ((), ("TMAKIT_GEMM_NO_EPI=1",)):
            p = K.plan_fp8(qa, b, s0, s1, None, None, "bfloat16", None, False, None)
            sched = K.schedule(p)
            ws = torch.empty(max(sched.ws_bytes, 1), dtype=torch.uint8, device="cuda")
            flags = torch.zeros(max(sched.flag_count, 1), dtype=torch.int32, device="cuda")
            out = torch.empty((m, n), dtype=torch.bfloat16, device="cuda")
            f = K.launcher(p, qa.data_ptr(), b.data_ptr(), out.data_ptr(), s0.data_ptr(), s1.data_ptr(), 0,
                           ws.data_ptr(), flags.data_ptr(), defines=defines)
            fns.append(lambda i, f=f: f())
            names.append(mode + (" no epilogue" if defines else ""))
            keep.append((ws, flags, out))
    c = torch.empty((m, n), dtype=torch.bfloat16, device="cuda")
    fns.append(lambda i: torch._scaled_mm(qa, b, one, one, out_dtype=torch.bfloat16, out=c))
    names.append("cublas")
    for f in fns:
        f(0)
    torch.cuda.synchronize()
    runs = [time_events(fns, 1, flush, 3, reps) for _ in range(rounds)]
    return {nm: statistics.median(r[i] for r in runs) for i, nm in enumerate(names)}


def main(argv=None) -> list:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--shapes", default=None, help="MxNxK,... (default: issue 24's suite)")
    args = ap.parse_args(argv)
    import torch

    from tmakit.bench.timing import spin_up

    print(torch.cuda.get_device_name(), flush=True)
    spin_up(1.0)
    flush = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")
    rows = []
    for m, n, k in ([tuple(int(v) for v in x.split("x")) for x in args.shapes.split(",")] if args.shapes else SHAPES):
        t = measure(m, n, k, args.reps, args.rounds, flush)
        rows.append(t)
        print(f"{m}x{n}x{k}: default / no epilogue  tensor {t['tensor'] / t['tensor no epilogue']:.3f}  block "
              f"{t['block'] / t['block no epilogue']:.3f}  | cuBLAS / tensor {t['cublas'] / t['tensor']:.3f}",
              flush=True)
        torch.cuda.empty_cache()
    print(f"geomean: default / no epilogue  tensor {geomean([t['tensor'] / t['tensor no epilogue'] for t in rows]):.3f}"
          f"  block {geomean([t['block'] / t['block no epilogue'] for t in rows]):.3f}  | cuBLAS / tensor "
          f"{geomean([t['cublas'] / t['tensor'] for t in rows]):.3f}  cuBLAS / tensor without epilogue "
          f"{geomean([t['cublas'] / t['tensor no epilogue'] for t in rows]):.3f}")
    return rows


if __name__ == "__main__":
    main()
