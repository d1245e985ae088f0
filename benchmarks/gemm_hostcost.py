"""Host cost per tmakit GEMM call by path (plain, stream-K, split fixup, split atomic) vs torch.matmul, and the
events-mode time of one call after an L2 flush with and without a host-side delay. Prints a table."""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import torch  # noqa: E402

from tmakit.ops_gemm import gemm  # noqa: E402

SHAPES = [(4096, 4096, 4096), (128, 1024, 8192), (256, 1024, 8192), (1024, 1024, 65536), (1, 8192, 8192)]


def host_us(fn, n=300):
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / n * 1e6


def events_us(fn, flush, reps=30):
    s = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    e = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for r in range(reps):
        flush.zero_()
        s[r].record()
        fn()
        e[r].record()
    torch.cuda.synchronize()
    return sorted(a.elapsed_time(b) for a, b in zip(s, e))[reps // 2] * 1e3


flush = torch.empty(64 << 20, dtype=torch.int32, device="cuda")
def rotated(m, n, k, nsets=13):
    """Events time with rotating operand sets, as `tmakit bench gemm` does."""
    a = [torch.randn(m, k, device="cuda", dtype=torch.bfloat16) for _ in range(nsets)]
    b = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t() for _ in range(nsets)]
    c = [torch.empty(m, n, device="cuda", dtype=torch.bfloat16) for _ in range(nsets)]
    it = {"i": 0}

    def nxt():
        it["i"] = (it["i"] + 1) % nsets
        return it["i"]

    fns = {"cublas": lambda: (lambda i: torch.matmul(a[i], b[i], out=c[i]))(nxt()),
           "tmakit": lambda: (lambda i: gemm(a[i], b[i], out=c[i]))(nxt())}
    for fn in fns.values():
        for _ in range(2 * nsets):
            fn()
    cells = [f"{name} ev {events_us(fn, flush, 39):7.1f} us" for name, fn in fns.items()]
    print(f"{m}x{n}x{k} rotated x{nsets}: " + " | ".join(cells), flush=True)


def run_shape(m, n, k):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t()
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    fns = {"cublas": lambda: torch.matmul(a, b, out=c), "tmakit": lambda: gemm(a, b, out=c),
           "atomic": lambda: gemm(a, b, out=c, split_mode="atomic")}
    cells = [f"{name} host {host_us(fn):6.1f} us ev {events_us(fn, flush):7.1f} us" for name, fn in fns.items()]
    print(f"{m}x{n}x{k}: " + " | ".join(cells), flush=True)


for shape in SHAPES:
    run_shape(*shape)
for shape in [(128, 1024, 8192), (256, 1024, 8192), (4096, 4096, 4096)]:
    rotated(*shape)
