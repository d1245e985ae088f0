"""compute-sanitizer target: the kernels that rewrite their tensor maps on the device, per CTA in two alternating
slots -- grouped_mm along K (six groups: empty, unaligned and short ones) and a ptr-array gemm_list (18 mixed
problems) -- checked against fp32; exits 1 on a mismatch or when a call did not take the kernel.

    compute-sanitizer --tool racecheck python3 tools/sanitize/map_slots.py
"""

from __future__ import annotations

import sys

import torch

import tmakit as tk


def _rel(got, ref) -> float:
    return float((got.float() - ref).norm() / ref.norm().clamp_min(1e-30))


def along_k() -> float:
    ends = [0, 37, 37, 200, 203, 330]
    x = torch.randn(330, 192, device="cuda", dtype=torch.bfloat16)  # tokens x M
    dy = torch.randn(330, 128, device="cuda", dtype=torch.bfloat16)  # tokens x N
    out = tk.ops.grouped_mm(x.t(), dy, torch.tensor(ends, device="cuda", dtype=torch.int32), strict=True)
    torch.cuda.synchronize()
    errs, lo = [], 0
    for g, hi in enumerate(ends):
        errs.append(_rel(out[g], x[lo:hi].float().t() @ dy[lo:hi].float()) if hi > lo else float(out[g].abs().max()))
        lo = hi
    return max(errs)


def ptr_array() -> float:
    shapes = [(100, 64, 32), (7, 128, 48), (300, 192, 256), (1, 64, 16), (64, 64, 64), (129, 256, 128)] * 3
    As = [torch.randn(m, k, device="cuda", dtype=torch.bfloat16) for m, k, _ in shapes]
    Bs = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t() for _, k, n in shapes]
    outs = tk.ops.gemm_list(As, Bs, strict=True)
    torch.cuda.synchronize()
    return max(_rel(o, a.float() @ b.float()) for o, a, b in zip(outs, As, Bs))


def main() -> int:
    torch.manual_seed(0)
    bad = 0
    for name, fn, path in (("along K", along_k, "tma:grouped-k"), ("ptr-array", ptr_array, "tma:ptr-array")):
        err = fn()
        ok = err < 1e-2 and tk.ops.last_path.startswith(path)
        print(f"{name}: {tk.ops.last_path}, max rel. err {err:.2e}{'' if ok else ' FAILED'}")
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
