"""TMA boxes against cp.async for streaming a weight matrix into shared memory (docs/GROUPED.md, "Weight
streaming").

    python3 tools/bench/tma_vs_cp_async.py [--k 4096] [--modes 0,1,2,3,4] [--ctas-per-sm 1,2]  # GPU; triton

``tma_vs_cp_async.cu``: one CTA per SM (or as many as ``--ctas-per-sm`` lists, each with its own ring where the
shared memory allows: shapes that do not fit are skipped) streams 2 GiB of a (rows x K) bf16 matrix through a ring
of 128-byte-swizzled slabs (the GEMM's B slabs: ROWS rows x 128 bytes, stepping along K), released by one consumer
thread. Modes: 0 one TMA box per slab; 1 boxes of 32 rows; 2 those boxes from four warps; 3 cp.async by 128 threads
with ``cp.async.mbarrier.arrive.noinc``; 4 cp.async groups, each thread waiting STAGES - 2 slabs back, fencing to
the async proxy and arriving (the protocol a wgmma consumer needs). Prints TB/s per mode, stage count and slab rows.
"""

from __future__ import annotations

import argparse
import ctypes
from pathlib import Path

SHAPES = ((8, 128), (12, 128), (16, 64), (24, 64), (6, 256))  # (stages, rows per slab)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--k", type=int, default=4096)
    ap.add_argument("--modes", default="0,1,2,3,4")
    ap.add_argument("--ctas-per-sm", default="1", help="comma-separated CTAs per SM to try (default 1)")
    ap.add_argument("--shapes", default=None, help="STAGESxROWS,... (default: %s)" % ",".join(
        f"{s}x{r}" for s, r in SHAPES))
    args = ap.parse_args(argv)
    import torch
    from triton.testing import do_bench

    from tmakit.cuda import compile_file, load_module
    from tmakit.cuda.encode import encode_tensormap
    from tmakit.kernels.gemm import launch_fn, map_nd

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    nbytes, k = 2 << 30, args.k
    rows_total = nbytes // 2 // k
    w = torch.randn(rows_total, k, device="cuda").to(torch.bfloat16)
    out = torch.zeros(4096, dtype=torch.int32, device="cuda")
    print(torch.cuda.get_device_name(), "K", k)
    src = Path(__file__).with_suffix(".cu")
    shapes = [tuple(int(v) for v in x.split("x")) for x in args.shapes.split(",")] if args.shapes else SHAPES
    per_sm = [int(c) for c in args.ctas_per_sm.split(",")]
    smem_per_sm = torch.cuda.get_device_properties(0).shared_memory_per_multiprocessor
    for mode, (stages, rows), c in ((int(m), sh, c) for m in args.modes.split(",") for sh in shapes for c in per_sm):
        if mode in (1, 2) and rows % 128:
            continue
        smem = stages * rows * 128 + 16 * stages + 1024
        if c * (smem + 1024) > smem_per_sm:
            continue
        name = f"stream_slabs<{mode}, {stages}, {rows}>"
        kern = load_module(compile_file(src, name_expressions=(name,))).kernel(name)
        box = (64, rows if mode in (0, 3, 4) else 32)
        tm = encode_tensormap(map_nd(w.data_ptr(), (k, rows_total), (k * 2,), "bfloat16", box))
        fn = launch_fn(kern, sms * c, 256, (tm, ctypes.c_uint64(w.data_ptr()), ctypes.c_int32(k),
                                            ctypes.c_int32(rows_total // rows), ctypes.c_uint64(out.data_ptr())),
                       smem, 1, False)
        ms = do_bench(fn, warmup=5, rep=200)
        print(f"mode {mode} stages {stages:2d} x {rows:3d} rows ({stages * rows * 128 >> 10} KiB), {c} per SM: "
              f"{nbytes / ms / 1e9:.3f} TB/s", flush=True)


if __name__ == "__main__":
    main()
