"""How fast the grouped kernel streams expert weights, against what plain loads reach on the same GPU.

    python3 tools/bench/grouped_stream.py [--rounds 3] [--reps 10]     # GPU; needs triton for the read ceilings

Three measurements in one process (docs/GROUPED.md, "Weight streaming"):

1. Read ceilings: a Triton kernel XOR-reducing 4 GiB flat (16-byte loads), and one reading tiles of 128 or 64 rows
   x 64 bf16 columns of a K = 4096 matrix, stepping along K as the kernel's B loads do (128 bytes per row per step),
   at 1-4 programs per SM; best rate per pattern.
2. Weight-bound MoE problems (16-64 rows per expert) on every candidate tile, each with and without its wgmmas
   (``TMAKIT_GEMM_NO_MMA``: the TMA pipeline alone): bytes moved (weights, A, C once) per second.
3. The same problem at group counts whose tile count is / is not a multiple of the SMs, and at twice the groups:
   the cost of the last partial wave and the fixed cost per launch (twice the work minus twice the time of one).
"""

from __future__ import annotations

import argparse
import functools
import statistics

TILES = ["m64_n128_s8_c1_ov1", "m64_n256_s5_c1_ov1", "m64_n64_s12_c1_ov1", "n128_s6_c1", "n256_s4_c1"]
STREAM_CASES = [(64, 16, 4096, 4096), (128, 32, 2048, 4096), (256, 64, 2048, 2048)]
WAVE_CASES = [(16, 4096, 4096, "m64_n128_s8_c1_ov1", (33, 62, 64, 66)), (128, 4096, 7168, "n256_s4_c1", (33, 64, 66))]


def read_ceilings(torch) -> dict:
    """Best TB/s of the flat and the 2-D (128 bytes per row per step) Triton reads."""
    import triton
    import triton.language as tl
    from triton.testing import do_bench

    @triton.jit
    def flat(x, out, n, BLOCK: tl.constexpr, ITERS: tl.constexpr):
        pid, nprog = tl.program_id(0), tl.num_programs(0)
        acc = tl.zeros([BLOCK], dtype=tl.int32)
        for i in range(ITERS):
            off = pid * BLOCK + i * nprog * BLOCK + tl.arange(0, BLOCK)
            acc ^= tl.load(x + off, mask=off < n, other=0)
        tl.store(out + pid * BLOCK + tl.arange(0, BLOCK), acc)

    @triton.jit
    def rows(x, out, K, TILES, R: tl.constexpr, C: tl.constexpr):
        pid, nprog = tl.program_id(0), tl.num_programs(0)
        acc = tl.zeros([R, C], dtype=tl.int16)
        r, c = tl.arange(0, R)[:, None], tl.arange(0, C)[None, :]
        for t in range(pid, TILES, nprog):
            base = x + (t * R + r).to(tl.int64) * K + c
            for k in range(0, K, C):
                acc ^= tl.load(base + k)
        tl.store(out + pid * R * C + r * C + c, acc)

    nbytes, k, sms = 1 << 32, 4096, torch.cuda.get_device_properties(0).multi_processor_count
    x = torch.randint(-30000, 30000, (nbytes // 2,), dtype=torch.int16, device="cuda")
    out = torch.empty(1 << 24, dtype=torch.int32, device="cuda")
    xi = x.view(torch.int32)
    iters = -(-xi.numel() // (8 * sms * 4096))
    got = {"flat": nbytes / do_bench(lambda: flat[(8 * sms,)](xi, out, xi.numel(), BLOCK=4096, ITERS=iters,
                                                              num_warps=4), warmup=5, rep=200) / 1e9}
    for r in (128, 64):
        tiles = nbytes // 2 // k // r
        best = 0.0
        for progs in (sms, 2 * sms, 4 * sms):
            for nw in (4, 8):
                ms = do_bench(lambda p=progs, w=nw, t=tiles, rr=r: rows[(p,)](x, out.view(torch.int16), k, t, R=rr,
                                                                              C=64, num_warps=w), warmup=3, rep=100)
                best = max(best, tiles * r * k * 2 / ms / 1e9)
        got[f"{r} rows x 128 B"] = best
    return got


def stream_rate(torch, flush, e: int, rows: int, n: int, k: int, configs: list, rounds: int, reps: int,
                no_mma: bool = True) -> dict:
    """TB/s (weights, A and C moved once) per config name (and name/no-mma) on a uniform MoE problem."""
    from tmakit.bench.moe import moe_problem, time_rounds
    from tmakit.kernels import gemm_grouped as kg
    from tmakit.kernels.gemm import CONFIGS

    a, b, offs, ends = moe_problem(torch, e, rows, n, k, "uniform")
    nbytes = 2 * (e * n * k + ends[-1] * k + ends[-1] * n)
    out = torch.empty(a.shape[0], n, device="cuda", dtype=torch.bfloat16)
    fns = {}
    for name in configs:
        p = kg.plan_grouped(a, b, e, out, config=CONFIGS[name])
        for tag, defines in (("", ()), ("/no-mma", ("TMAKIT_GEMM_NO_MMA=1",)))[:2 if no_mma else 1]:
            fns[name + tag] = kg.launcher(p, a.data_ptr(), b.data_ptr(), out.data_ptr(), offs.data_ptr(),
                                          defines=defines)
    fns["torch"] = functools.partial(torch._grouped_mm, a, b, offs=offs)
    t = time_rounds(fns, flush, rounds, reps)
    del fns, a, b, offs, out
    torch.cuda.empty_cache()  # each problem in fresh allocations (rates moved by 10-25 % with reused blocks)
    return {name: nbytes / (statistics.median(ms) * 1e-3) / 1e12 for name, ms in t.items()}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    args = ap.parse_args(argv)
    import torch

    from tmakit.bench.moe import flush_buffer
    from tmakit.bench.timing import spin_up
    from tmakit.kernels.gemm import CONFIGS

    flush = flush_buffer(torch)
    spin_up()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    print(torch.cuda.get_device_name())
    for name, tbs in read_ceilings(torch).items():
        print(f"read ceiling, {name}: {tbs:.3f} TB/s")
    torch.cuda.empty_cache()
    for e, rows, n, k in STREAM_CASES:
        got = stream_rate(torch, flush, e, rows, n, k, TILES, args.rounds, args.reps)
        print(f"{e} x {rows} rows x {n}x{k}: " + ", ".join(f"{nm} {v:.3f}" for nm, v in got.items()) + " TB/s")
    for rows, n, k, cfg, counts in WAVE_CASES:
        c = CONFIGS[cfg]
        for e in counts:
            got = stream_rate(torch, flush, e, rows, n, k, [cfg], args.rounds, args.reps, no_mma=False)
            units = e * -(-rows // c.bm) * -(-n // c.bn)
            print(f"{cfg} {e} x {rows} rows x {n}x{k}: {units} tiles = {units / sms:.2f} waves, {got[cfg]:.3f} TB/s "
                  f"(torch {got['torch']:.3f})")


if __name__ == "__main__":
    main()
