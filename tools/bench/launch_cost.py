"""What one kernel launch costs the host, by driver entry point: ``cuLaunchKernelEx`` with and without the
programmatic-stream-serialization (PDL) attribute, the same through ``ctypes.PyDLL`` (the GIL kept), the legacy
``cuLaunchKernel`` (also for an empty kernel), beside torch's ``add_`` and ``tk.ops.reduce_into`` on 8 KiB tensors.

    python3 tools/bench/launch_cost.py [--number N] [--rounds R]

Each row runs ``N`` calls per round (rounds alternate the order of the rows); the median round's ns per call is
printed, then the same per call for loops of 100 .. 3000 calls timed from an idle stream (if the GPU's queue held
the host back, the long loops would cost more per call than the short ones).
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import threading
import time


def setup():
    """(rows, keep): the calls to time, as (name, zero-argument callable), and the objects whose raw addresses they
    use (the launch configs, the empty kernel's module, the tensors), to be kept alive while they run."""
    import torch

    import tmakit as tk
    from tmakit import cuda as tkc
    from tmakit.cuda import packed
    from tmakit.ops import fast_path

    x, y = torch.randn(2048, device="cuda"), torch.randn(2048, device="cuda")
    for _ in range(3):  # checked, keyed, per-object entry made
        tk.ops.reduce_into(y, x)
    torch.cuda.synchronize()
    launcher = fast_path.objects[(fast_path.REDUCE, id(y), id(x), "add", "auto")][1][0]
    slot = launcher._slots[threading.get_ident()]
    stream = torch.cuda.current_stream().cuda_stream
    plain, pdl = (packed.launch_config(launcher.grid, launcher.block, launcher.smem, pdl=p) for p in (False, True))
    plain.stream = pdl.stream = stream

    def bind(lib):
        f = lib.cuLaunchKernelEx
        f.argtypes = [ctypes.c_void_p] * 4
        f.restype = ctypes.c_int
        return f

    ex, ex_gil = bind(ctypes.CDLL("libcuda.so.1")), bind(ctypes.PyDLL("libcuda.so.1"))
    legacy = ctypes.CDLL("libcuda.so.1").cuLaunchKernel
    legacy.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
    legacy.restype = ctypes.c_int
    empty_kernel = tkc.kernel('extern "C" __global__ void tmakit_empty() {}', "tmakit_empty")
    empty = int(empty_kernel.handle)
    no_args = (ctypes.c_void_p * 1)()
    fn, params = launcher._fn, slot.params_addr
    a_plain, a_pdl = ctypes.addressof(plain), ctypes.addressof(pdl)
    grid, block, smem = launcher.grid, launcher.block, launcher.smem
    rows = [
        ("torch y.add_(x)", lambda: y.add_(x)),
        ("tk.ops.reduce_into(y, x)", lambda: tk.ops.reduce_into(y, x)),
        ("cuLaunchKernelEx, PDL attribute", lambda: ex(a_pdl, fn, params, None)),
        ("cuLaunchKernelEx, no attribute", lambda: ex(a_plain, fn, params, None)),
        ("cuLaunchKernelEx, PDL, GIL kept", lambda: ex_gil(a_pdl, fn, params, None)),
        ("cuLaunchKernel", lambda: legacy(fn, grid, 1, 1, block, 1, 1, smem, stream, params, None)),
        ("cuLaunchKernel, empty kernel", lambda: legacy(empty, 1, 1, 1, 32, 1, 1, 0, stream,
                                                        ctypes.addressof(no_args), None)),
    ]
    return rows, (plain, pdl, empty_kernel, no_args, x, y, slot)


def _loop_ns(fn, n: int, torch) -> float:
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    dt = time.perf_counter() - t
    torch.cuda.synchronize()
    return dt / n * 1e9


def main(argv=None) -> dict:
    import torch
    from host_profile import time_rows  # this directory is on sys.path when run as a script

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--number", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args(argv)
    rows, keep = setup()  # noqa: F841 - keep: alive until main returns
    out = time_rows(rows, args.number, args.rounds)
    print("# ns per call of loops of n calls started on an idle stream")
    for n in (100, 300, 1000, 3000):
        per = {name: [] for name, _ in rows}
        for r in range(args.rounds):
            for name, fn in rows if r % 2 == 0 else rows[::-1]:
                per[name].append(_loop_ns(fn, n, torch))
        print(f"n={n:<5d}" + "".join(f" {statistics.median(v):7.0f}" for v in per.values()))
    return out


if __name__ == "__main__":
    main()
