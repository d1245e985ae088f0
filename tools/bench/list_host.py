"""Host time per ``tk.ops.gemm_list`` call on lists of small problems (bf16, B = ``w.t()``): with ``out=``, with new
outputs the caller keeps, and with new outputs dropped at once (50 calls each after a warm-up pass, wall time of
the Python loop, then with the GPU's work waited for).

    PYTHONPATH=src python3 tools/bench/list_host.py
"""

from __future__ import annotations

import random
import time


def main() -> None:
    import torch

    import tmakit as tk

    rng = random.Random(1)
    print(f"{torch.cuda.get_device_name()}: microseconds per call")
    print("| problems | sides | outputs | host | host + GPU |")
    print("|---:|---|---|---:|---:|")
    for count, lo, hi in ((64, 128, 1024), (128, 64, 512)):
        As, Bs = [], []
        for _ in range(count):
            m, n, k = (8 * rng.randint(lo // 8, hi // 8) for _ in range(3))
            As.append(torch.randn(m, k, device="cuda", dtype=torch.bfloat16))
            Bs.append(torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t())
        outs = tk.ops.gemm_list(As, Bs)
        keep = []
        for mode in ("out=", "new, kept", "new, dropped"):
            for _ in range(2):  # the first pass warms up
                torch.cuda.synchronize()
                t = time.perf_counter()
                for _ in range(50):
                    if mode == "out=":
                        tk.ops.gemm_list(As, Bs, out=outs)
                    elif mode == "new, kept":
                        keep.append(tk.ops.gemm_list(As, Bs))
                    else:
                        tk.ops.gemm_list(As, Bs)
                host = (time.perf_counter() - t) / 50 * 1e6
                torch.cuda.synchronize()
                total = (time.perf_counter() - t) / 50 * 1e6
            keep.clear()
            print(f"| {count} | {lo}-{hi} | {mode} | {host:.0f} | {total:.0f} |", flush=True)


if __name__ == "__main__":
    main()
