"""The dense FP8 kernel on operands whose rows are an odd multiple of 16 bytes apart (K = 16 mod 32 for packed fp8):
the default plan (multicast clusters, ``gemm_fp8.multicast_config``) against the single-CTA tile the rule picks on
an even pitch, and against torch (``torch._scaled_mm``, per tensor and row-wise; block scales have no torch peer).

    python3 tools/bench/fp8_odd_pitch.py [--seed 1] [--count 16] [--reps 8] [--half-line]

Random shapes: M log-uniform in [512, 16384], N a multiple of 16 log-uniform in [512, 16384], K = 32 j + 16 in
[528, 8208]; e4m3, bf16 out, two-level accumulation (and row-wise fast accumulation). The contenders alternate, each
call after an L2 flush; CUDA-event medians. Prints TFLOP/s per shape and the geomeans of clusters / single CTAs and
of tmakit / torch per mode. Shapes whose plan has 64-row tiles (no cluster variant) are skipped. ``--half-line``:
K = 128 j + 64 in [1088, 8256] instead (rows an odd multiple of 64 bytes apart, where the default plan keeps single
CTAs), the multicast variant (``multicast_config``) timed in place of the default plan.
"""

from __future__ import annotations

import argparse
import math
import random

MODES = (("tensor", False), ("row", False), ("block", False), ("row", True))


def _name(K, cfg) -> str:
    return next(nm for nm, v in K.CONFIGS.items() if v == cfg)


def _operands(Q, mode, x, w):
    if mode == "tensor":
        (qa, sa), (qw, sb) = Q.quantize_tensor(x), Q.quantize_tensor(w)
    elif mode == "row":
        (qa, sa), (qw, sb) = Q.quantize_rows(x), Q.quantize_rows(w)
        sa, sb = sa.reshape(-1, 1), sb.reshape(1, -1)
    else:
        (qa, sa), (qw, sb) = Q.quantize_1x128(x), Q.quantize_128x128(w)
    return qa, qw, sa, sb


def measure(m: int, n: int, k: int, mode: str, fast: bool, reps: int, flush, multicast: bool = False):
    """(single-CTA config, default config, [torch ms or None, single ms, default ms]) or None (64-row tiles);
    ``multicast``: the single tile's multicast variant in place of the default config."""
    import torch

    from tmakit.bench.timing import time_events
    from tmakit.kernels import gemm_fp8 as K
    from tmakit.ops import quantize as Q

    x, w = torch.randn(m, k, device="cuda"), torch.randn(n, k, device="cuda")
    qa, qw, sa, sb = _operands(Q, mode, x, w)
    scaling = "block" if mode == "block" else mode
    single = _name(K, K.choose_config(m, n, k, scaling, 2, fast_accum=fast))
    default = _name(K, K.plan_fp8(qa, qw.t(), sa, sb, None, None, "bfloat16", None, fast).config)
    if multicast and K.CONFIGS[single].bm > 64:
        default = _name(K, K.multicast_config(single, m, n))
    if single == default:
        return None
    fns, keep = [], []
    if mode != "block":
        o = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
        fns.append(lambda i: torch._scaled_mm(qa, qw.t(), sa, sb, out_dtype=torch.bfloat16, out=o, use_fast_accum=fast))
    for cfg in (single, default):
        out = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
        p = K.plan_fp8(qa, qw.t(), sa, sb, None, out, "bfloat16", cfg, fast)
        s = K.schedule(p)
        ws = torch.empty(max(s.ws_bytes, 1), dtype=torch.uint8, device="cuda")
        flags = torch.zeros(max(s.flag_count, 1), dtype=torch.int32, device="cuda")
        fn = K.launcher(p, qa.data_ptr(), qw.data_ptr(), out.data_ptr(), sa.data_ptr(), sb.data_ptr(), 0,
                        ws.data_ptr(), flags.data_ptr())
        keep.append((out, ws, flags))
        fns.append(lambda i, f=fn: f())
    t = time_events(fns, 1, flush, 2, reps)
    return single, default, ([None] if mode == "block" else []) + t


def geomean(xs) -> float:
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=16)
    ap.add_argument("--reps", type=int, default=8)
    ap.add_argument("--half-line", action="store_true", help="K = 64 mod 128; time the multicast variant")
    a = ap.parse_args(argv)
    import torch

    rng = random.Random(a.seed)
    flush = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")
    print(torch.cuda.get_device_name(), "seed", a.seed, flush=True)
    gains: dict = {}
    for _ in range(a.count):
        m = int(math.exp(rng.uniform(math.log(512), math.log(16384))))
        n = 16 * int(math.exp(rng.uniform(math.log(512), math.log(16384))) // 16)
        k = 128 * rng.randint(8, 64) + 64 if a.half_line else 32 * rng.randint(16, 256) + 16
        for mode, fast in MODES:
            r = measure(m, n, k, mode, fast, a.reps, flush, a.half_line)
            if r is None:
                continue
            single, default, (tt, ts, td) = r
            key = mode + (" fast" if fast else "")
            vs = (None, None) if tt is None else (tt / td, tt / ts)
            gains.setdefault(key, []).append((ts / td, *vs))
            tf = 2.0 * m * n * k / 1e9
            print(f"{key:9} {m:5d}x{n:5d}x{k:5d}  {single:13} {tf / ts:6.0f}  {default:13} {tf / td:6.0f}"
                  + (f"  torch {tf / tt:6.0f}" if tt else ""), flush=True)
    for key, g in gains.items():
        msg = (f"{key}: {len(g)} shapes, clusters / single CTAs {geomean([x[0] for x in g]):.3f} "
               f"(min {min(x[0] for x in g):.3f})")
        if g[0][1] is not None:
            msg += (f"; vs torch: clusters {geomean([x[1] for x in g]):.3f}, single CTAs "
                    f"{geomean([x[2] for x in g]):.3f}")
        print(msg)


if __name__ == "__main__":
    main()
