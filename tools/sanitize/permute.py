"""compute-sanitizer target for the bandwidth kernels: the lean one-box strided CTA (permutes keeping the inner dim,
copies through the tensor path with the flat view's tail box), the one-slab and two-slab lean transposes with
multiply-shift tile coordinates, and the in-place transpose knob; fresh tensors every call (the re-pointed
parameter block); exits 1 on a mismatch.

    compute-sanitizer --tool memcheck --report-api-errors no python3 tools/sanitize/permute.py
"""

from __future__ import annotations

import dataclasses
import sys

import torch

from tmakit import ops
from tmakit.kernels import bandwidth as bw

CASES = [((3, 5, 7, 40), (0, 2, 1, 3)), ((4, 64, 48, 128), (0, 2, 1, 3)), ((4, 6, 64, 128), (0, 3, 1, 2)),
         ((1008, 784), (1, 0)), ((16, 32, 48, 16), (3, 2, 1, 0)), ((2, 3, 4, 80, 48), (0, 1, 2, 4, 3))]


def run_cases(tag: str) -> bool:
    ok = True
    for shape, dims in CASES:
        for dt in (torch.bfloat16, torch.float32):
            for _ in range(2):  # a second pair of addresses: the block is re-pointed
                x = torch.randn(shape, device="cuda").to(dt)
                y = ops.permute(x, dims)
                good = torch.equal(y, x.permute(dims))
                ok = ok and good
                if not good:
                    print("mismatch", tag, shape, dims, dt, ops.last_path)
    return ok


def main() -> int:
    ok = run_cases("default")
    bw.COPY_CONFIG = dataclasses.replace(bw.COPY_CONFIG, flat=(), flat_min=0, bulk_below=0, tiles_per_cta=1,
                                         box_bytes=8192, lean=1, resident=12, stages=1, flat_width=256)
    for n in (257, (1 << 20) + 6):
        a = torch.randn(n, device="cuda").to(torch.bfloat16)
        b = torch.empty_like(a)
        ops.copy(a, b)
        ok = ok and torch.equal(a, b) and ops.last_path == "tma:flat"
    t2 = bw.TRANSPOSE_CONFIG[2]
    bw.TRANSPOSE_CONFIG = {**bw.TRANSPOSE_CONFIG, 2: dataclasses.replace(t2, kq=2, inplace=1, wide=())}
    ok = run_cases("inplace") and ok
    torch.cuda.synchronize()
    print("exact:", ok)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
