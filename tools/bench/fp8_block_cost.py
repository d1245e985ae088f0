"""Where block scaling's cost goes in the FP8 GEMM: tmakit's per-tensor kernel, the block-wise kernel as planned
(scales by TMA on CTA clusters and 64-row tiles, else staged by the scale warp; gemm_fp8_scales.block_scale_tma),
the same with ``scale_a`` stored M-major, the plan forced onto the scale warp, and diagnostic builds
(``TMAKIT_GEMM_BLOCK_PROBE``, wrong results by design):

    1  scale warp plan without its scale warp (the consumers read whatever the scale slots hold)
    2  scales 1.0 (no shared loads; the promotion multiplies by a constant)
    3  scales that vary per unit, held in registers (no shared loads; the promotion as in the kernel)

    python3 tools/bench/fp8_block_cost.py [--reps N] [--shapes MxNxK,...]

Each shape: the default plans, each call after an L2 flush, the variants alternating; prints TFLOP/s and each
variant's speed relative to the per-tensor kernel (its time / the variant's), then the geomeans.
"""

from __future__ import annotations

import argparse
import statistics

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 7168, 2048), (4096, 18432, 7168), (4096, 7168, 16384),
          (2048, 4096, 14336), (128, 8192, 8192), (1024, 1024, 65536)]
# (name, defines, the plan's scale delivery: "tma" as planned, "m-major" as planned for scale_a stored M-major
# (torch._scaled_mm's 1x128 layout), "warp" the scale warp)
VARIANTS = [("block", (), "tma"), ("block, M-major sa", (), "m-major"), ("block, scale warp", (), "warp"),
            ("warp plan, no warp", ("TMAKIT_GEMM_BLOCK_PROBE=1",), "warp"),
            ("scales 1.0", ("TMAKIT_GEMM_BLOCK_PROBE=2",), "tma"),
            ("register scales", ("TMAKIT_GEMM_BLOCK_PROBE=3",), "tma")]


def measure(m: int, n: int, k: int, reps: int, flush) -> list[float]:
    """Milliseconds of the per-tensor kernel, then of each VARIANTS entry, on one problem."""
    import dataclasses

    import torch

    from tmakit.bench.timing import time_events
    from tmakit.kernels import gemm_fp8 as K
    from tmakit.ops import quantize as Q

    x, w = torch.randn(m, k, device="cuda"), torch.randn(n, k, device="cuda")
    (qa, sa), (qw, sb) = Q.quantize_1x128(x), Q.quantize_128x128(w)
    one = torch.ones((), device="cuda")
    b = qw.t()
    fns, keep = [], []
    sa_m = sa.t().contiguous().t()
    for scales, defines, how in [((one, one), (), "tma")] + [((sa_m if h == "m-major" else sa, sb), d, h)
                                                             for _, d, h in VARIANTS]:
        p = K.plan_fp8(qa, b, scales[0], scales[1], None, None, "bfloat16", None, False, None)
        if how == "warp":
            p = dataclasses.replace(p, scale_tma=0)
        sched = K.schedule(p)
        ws = torch.empty(max(sched.ws_bytes, 1), dtype=torch.uint8, device="cuda")
        flags = torch.zeros(max(sched.flag_count, 1), dtype=torch.int32, device="cuda")
        out = torch.empty((m, n), dtype=torch.bfloat16, device="cuda")
        f = K.launcher(p, qa.data_ptr(), b.data_ptr(), out.data_ptr(), scales[0].data_ptr(), scales[1].data_ptr(),
                       0, ws.data_ptr(), flags.data_ptr(), defines=defines)
        fns.append(lambda i, f=f: f())
        keep.append((ws, flags, out))
    for f in fns:
        f(0)
    torch.cuda.synchronize()
    return time_events(fns, 1, flush, 3, reps)


def main(argv=None) -> list:
    import torch

    from tmakit.bench.timing import spin_up

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--shapes", default=None, help="MxNxK,... (default: issue 24's suite)")
    args = ap.parse_args(argv)
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")] if args.shapes else SHAPES
    print(torch.cuda.get_device_name(), flush=True)
    spin_up(1.0)
    flush = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")
    rel = {name: [] for name, _, _ in VARIANTS}
    for m, n, k in shapes:
        ts = measure(m, n, k, args.reps, flush)
        tf = [2.0 * m * n * k / t / 1e9 for t in ts]
        line = f"{m}x{n}x{k}: per tensor {tf[0]:.0f} TF"
        for (name, _, _), t, f in zip(VARIANTS, ts[1:], tf[1:]):
            rel[name].append(ts[0] / t)
            line += f" | {name} {f:.0f} ({ts[0] / t:.3f})"
        print(line, flush=True)
    for name, r in rel.items():
        print(f"{name:18s} geomean vs per tensor {statistics.geometric_mean(r):.3f}")
    return [rel]


if __name__ == "__main__":
    main()
