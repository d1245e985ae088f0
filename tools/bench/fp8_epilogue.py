"""The FP8 GEMM's staged epilogue vectors, measured: each shape's default plan with its row-wise scales and bias
staged in shared memory by a producer-side warp (the default, ``gemm_fp8.epilogue_staged``) against the same plan
loading them from global memory in the epilogue (staging forced off), alternating, each call after an L2 flush.

    python3 tools/bench/fp8_epilogue.py [--modes row row+bias tensor+bias] [--reps N]

Prints per shape the tile config, TFLOP/s of both, the gain (global time / staged time) and both results' relative
error against the dequantized fp32 product plus bias; then the geomean per mode.
"""

from __future__ import annotations

import argparse

from fp8_plans import launch_plan  # tools/bench is the script's directory

from tmakit.bench.gemm_report import geomean

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 7168, 2048), (4096, 18432, 7168), (4096, 7168, 16384),
          (2048, 4096, 14336), (128, 8192, 8192), (1024, 1024, 65536), (2496, 992, 4224), (13216, 1344, 2272),
          (3072, 5120, 1536)]


def _launch(K, args, bias, out, staged: bool):
    orig = K.epilogue_staged
    if not staged:
        K.epilogue_staged = lambda *a: False
    try:
        fn, p, _ = launch_plan(K, args, out, bias=bias)
    finally:
        K.epilogue_staged = orig
    return fn, p


def measure(mode: str, m: int, n: int, k: int, reps: int, flush) -> tuple:
    import torch

    from tmakit.bench.timing import time_events
    from tmakit.kernels import gemm_fp8 as K
    from tmakit.ops import quantize as Q

    x, w = torch.randn(m, k, device="cuda"), torch.randn(n, k, device="cuda")
    bias = torch.randn(n, device="cuda").to(torch.bfloat16) if "bias" in mode else None
    if mode.startswith("row"):
        (qa, sa), (qw, sb) = Q.quantize_rows(x), Q.quantize_rows(w)
        ref = Q.dequantize(qa, sa) @ Q.dequantize(qw, sb).t()
        sb = sb.reshape(1, -1)
    else:
        (qa, sa), (qw, sb) = Q.quantize_tensor(x), Q.quantize_tensor(w)
        ref = Q.dequantize(qa, sa) @ Q.dequantize(qw, sb).t()
    if bias is not None:
        ref = ref + bias.float()
    args = (qa, qw.t(), sa, sb)
    fns, outs = [], []
    for staged in (False, True):
        out = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
        fn, p = _launch(K, args, bias, out, staged)
        fns.append(fn)
        outs.append(out)
    for f in fns:
        f(0)
    torch.cuda.synchronize()
    errs = [float((o.float() - ref).norm() / ref.norm()) for o in outs]
    t_global, t_staged = time_events(fns, 1, flush, 3, reps)
    return p.config.name, K.epilogue_staged(p.config, p.scaling, p.bias), t_global, t_staged, errs


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--modes", nargs="+", default=["row", "row+bias", "tensor+bias"],
                    choices=["row", "row+bias", "tensor+bias"])
    ap.add_argument("--reps", type=int, default=12)
    a = ap.parse_args(argv)
    import torch

    print(torch.cuda.get_device_name())
    flush = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")
    for mode in a.modes:
        gains = []
        for m, n, k in SHAPES:
            cfg, staged, tg, ts, errs = measure(mode, m, n, k, a.reps, flush)
            gains.append(tg / ts)
            tf = 2.0 * m * n * k / 1e9
            print(f"{mode:11} {m}x{n}x{k}".ljust(32) + f"{cfg:30} staged={int(staged)}  global {tf / tg:7.1f} TF  "
                  f"staged {tf / ts:7.1f} TF  gain {tg / ts:.3f}  err {errs[0]:.1e} {errs[1]:.1e}", flush=True)
        print(f"{mode}: geomean gain {geomean(gains):.3f}, min {min(gains):.3f}")


if __name__ == "__main__":
    main()
