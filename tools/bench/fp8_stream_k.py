"""The FP8 GEMM's stream-K tail, measured: each shape's default plan launched with its last partial wave of tiles
as whole tiles (``stream_k="off"``) and as stream-K ranges (``"tail"``), alternating, each call after an L2 flush.

    python3 tools/bench/fp8_stream_k.py [--reps N] [--scaling tensor|block ...] [--shapes MxNxK,...]

Prints per shape the tile config, waves of units on the persistent grid, how full the last wave is, TFLOP/s of
both and the gain (off time / tail time), and both results' relative error against the dequantized fp32 product.
``tmakit.kernels.gemm_fp8.STREAM_K_MAX_FILL`` (the default schedule's threshold) comes from these numbers.
"""

from __future__ import annotations

import argparse

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 7168, 2048), (4096, 18432, 7168), (4096, 7168, 16384),
          (2048, 4096, 14336), (3072, 3072, 8192), (6144, 4096, 4096), (2048, 7168, 4096), (5120, 5120, 2048)]


def measure(mode: str, m: int, n: int, k: int, reps: int) -> dict:
    import torch

    from tmakit.bench.timing import time_events
    from tmakit.kernels import gemm_fp8 as K
    from tmakit.ops import quantize as Q

    x, w = torch.randn(m, k, device="cuda"), torch.randn(n, k, device="cuda")
    if mode == "tensor":
        (qa, sa), (qw, sb) = Q.quantize_tensor(x), Q.quantize_tensor(w)
    else:
        (qa, sa), (qw, sb) = Q.quantize_1x128(x), Q.quantize_128x128(w)
    ref = Q.dequantize(qa, sa) @ Q.dequantize(qw, sb).t()
    b = qw.t()
    p = K.plan_fp8(qa, b, sa, sb, None, None, "bfloat16", None, False, None)
    fns, outs, scheds = [], [], []
    for variant in ("off", "tail"):
        sched = K.schedule(p, stream_k=variant)
        ws = torch.empty(max(sched.ws_bytes, 1), dtype=torch.uint8, device="cuda")
        flags = torch.zeros(max(sched.flag_count, 1), dtype=torch.int32, device="cuda")
        out = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
        launch = K.launcher(p, qa.data_ptr(), b.data_ptr(), out.data_ptr(), sa.data_ptr(), sb.data_ptr(), 0,
                            ws.data_ptr(), flags.data_ptr(), stream_k=variant)
        fns.append(lambda i, f=launch, keep=(ws, flags): f())
        outs.append(out)
        scheds.append(sched)
    for f in fns:
        f(0)
    torch.cuda.synchronize()
    errs = [float((o.float() - ref).norm() / ref.norm()) for o in outs]
    flush = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")
    t_off, t_tail = time_events(fns, 1, flush, 3, reps)
    clusters = scheds[0].clusters
    fill = (p.units % clusters) / clusters if p.units > clusters else 1.0
    flop = 2.0 * m * n * k
    return dict(mode=mode, shape=f"{m}x{n}x{k}", bn=p.config.bn, waves=p.units / clusters, fill=fill,
                sk_units=scheds[1].sk_units, off_tflops=flop / t_off / 1e9, tail_tflops=flop / t_tail / 1e9,
                gain=t_off / t_tail, err_off=errs[0], err_tail=errs[1])


def main(argv=None) -> list:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--scaling", nargs="+", default=["tensor", "block"], choices=["tensor", "block"])
    ap.add_argument("--shapes", default=None, help="MxNxK,... (default: the suite and partial-wave shapes)")
    args = ap.parse_args(argv)
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")] if args.shapes else SHAPES
    rows = []
    for mode in args.scaling:
        for m, n, k in shapes:
            r = measure(mode, m, n, k, args.reps)
            rows.append(r)
            print(f"{mode:6s} {r['shape']:>16s} 128x{r['bn']} waves {r['waves']:5.2f} last wave {r['fill']:.2f} full, "
                  f"stream-K units {r['sk_units']:3d}: off {r['off_tflops']:6.0f} TF  tail {r['tail_tflops']:6.0f} TF"
                  f"  gain {r['gain']:.3f}  err {r['err_off']:.1e} / {r['err_tail']:.1e}", flush=True)
    return rows


if __name__ == "__main__":
    main()
