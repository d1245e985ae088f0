"""The FP8 GEMM's consumer timeline: the kernel built with ``TMAKIT_GEMM_TRACE=1`` records, in CTA 0, clock64() at
four points of each slab for the first warp of every consumer warpgroup (loop top, stage seen full, wgmmas waited
for, partial sums promoted); this prints the per-slab medians over slabs 100-499 (a steady state).

    python3 tools/bench/gemm_trace.py [--scaling tensor|row|block ...] [--config NAME] [--shape MxNxK] [--fast-accum]

Per consumer warpgroup: the slab period, issue -> done (the wgmmas' time from issue to their wait, queueing behind
the other warpgroup's included), the promotion, the rest of the way to the next loop top (release, loop, the next
slab's descriptors), the full-barrier wait, and the offset between the warpgroups' issue times. Two-level
accumulation keeps the tensor cores busy only while each warpgroup's done -> next issue path is shorter than the
other's wgmma time (docs/GEMM.md, "Where the two-level time goes"). Shapes need at least 512 slabs on CTA 0
(M N K / (BM BN 128 SMs) >= 512) and no stream-K (launched with ``stream_k="off"``).
"""

from __future__ import annotations

import argparse
import statistics

SLABS = 512  # trace slots per consumer (gemm.cu)


def trace(mode: str, m: int, n: int, k: int, config: str | None, fast: bool) -> dict:
    """Median per-slab times (cycles) of each consumer warpgroup of CTA 0, slabs 100..SLABS-13."""
    import torch

    from tmakit.kernels import gemm_fp8 as K
    from tmakit.ops import quantize as Q

    x, w = torch.randn(m, k, device="cuda"), torch.randn(n, k, device="cuda")
    quant = {"tensor": (Q.quantize_tensor, Q.quantize_tensor), "row": (Q.quantize_rows, Q.quantize_rows),
             "block": (Q.quantize_1x128, Q.quantize_128x128)}[mode]
    (qa, sa), (qw, sb) = quant[0](x), quant[1](w)
    if mode == "row":
        sb = sb.reshape(1, -1)
    b = qw.t()
    cfg = K.CONFIGS[config] if config else None
    out = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
    p = K.plan_fp8(qa, b, sa, sb, None, out, "bfloat16", cfg, fast, None)
    nc = p.config.consumers
    buf = torch.zeros(nc * SLABS * 4, dtype=torch.int64, device="cuda")
    flags = torch.zeros(1, dtype=torch.int32, device="cuda")
    fn = K.launcher(p, qa.data_ptr(), b.data_ptr(), out.data_ptr(), sa.data_ptr(), sb.data_ptr(), 0, buf.data_ptr(),
                    flags.data_ptr(), stream_k="off", defines=("TMAKIT_GEMM_TRACE=1",))
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    t = buf.view(nc, SLABS, 4).tolist()
    slabs = range(100, SLABS - 12)
    if any(t[c][i + 1][0] == 0 for c in range(nc) for i in slabs):
        raise SystemExit(f"{m}x{n}x{k}: CTA 0 runs fewer than {SLABS} slabs; take a larger shape")
    med = statistics.median
    res = {"config": p.config.name, "consumers": []}
    for c in range(nc):
        res["consumers"].append({
            "period": med(t[c][i + 1][1] - t[c][i][1] for i in slabs),
            "issue_done": med(t[c][i][2] - t[c][i][1] for i in slabs),
            "promote": med(t[c][i][3] - t[c][i][2] for i in slabs),
            "to_next": med(t[c][i + 1][0] - t[c][i][3] for i in slabs),
            "full_wait": med(t[c][i + 1][1] - t[c][i + 1][0] for i in slabs),
            "offset": med(t[c][i][1] - t[0][i][1] for i in slabs),
        })
    return res


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scaling", nargs="+", default=["tensor", "block"], choices=["tensor", "row", "block"])
    ap.add_argument("--config", default=None, help="a tmakit.kernels.gemm_fp8.CONFIGS name (default: the plan's)")
    ap.add_argument("--shape", default="8192x8192x8192")
    ap.add_argument("--fast-accum", action="store_true")
    a = ap.parse_args(argv)
    import torch

    m, n, k = (int(v) for v in a.shape.split("x"))
    print(torch.cuda.get_device_name(), a.shape, "(cycles, medians per slab)")
    for mode in a.scaling:
        r = trace(mode, m, n, k, a.config, a.fast_accum)
        for c, d in enumerate(r["consumers"]):
            print(f"{mode:6} {r['config']:28} wg{c}  period {d['period']:5.0f}  issue->done {d['issue_done']:5.0f}  "
                  f"promote {d['promote']:4.0f}  ->next {d['to_next']:4.0f}  full wait {d['full_wait']:4.0f}  "
                  f"offset {d['offset']:5.0f}")


if __name__ == "__main__":
    main()
