"""Transposes with odd row widths (not a multiple of 16 bytes: TMA cannot describe them, ``plain_transpose.cu`` runs
them) against ``x.t().contiguous()``, per call, beside ``tk.ops.transpose`` on the next aligned shape (TMA).

    python3 tools/bench/odd_transpose.py [--rounds R]

Per shape: R rounds of CUDA-event-timed calls (tmakit, torch, aligned), buffer sets rotated past the L2; prints
TB/s (bytes read + written) and the median of the rounds' ratios.
"""

from __future__ import annotations

import argparse
import statistics

SHAPES = [("bfloat16", (1023, 1025)), ("bfloat16", (4095, 4097)), ("bfloat16", (8191, 8193)),
          ("bfloat16", (16383, 16385)), ("float16", (4559, 3607)), ("float32", (1023, 1023)),
          ("float32", (4095, 4095)), ("float32", (8191, 8191)), ("uint8", (8191, 8191))]


def _measure(name, r, c, rounds):
    import torch

    import tmakit as tk
    from tmakit.bench.timing import nsets, time_op

    dtype = getattr(torch, name)
    esz = torch.tensor([], dtype=dtype).element_size()
    size = r * c * esz
    k = nsets(2 * size)
    xs = [torch.randint(0, 100, (r, c), device="cuda").to(dtype) for _ in range(k)]
    ra, ca = (r // 64 + 1) * 64, (c // 64 + 1) * 64
    ka = nsets(2 * ra * ca * esz)
    xa = [torch.randint(0, 100, (ra, ca), device="cuda").to(dtype) for _ in range(ka)]

    def mine(i):
        return tk.ops.transpose(xs[i])

    def peer(i):
        return xs[i].t().contiguous()

    def aligned(i):
        return tk.ops.transpose(xa[i % ka])

    assert torch.equal(mine(0), xs[0].t())
    path = tk.ops.last_path
    aligned(0)
    apath = tk.ops.last_path
    tm, tp, ta = [], [], []
    for _ in range(rounds):
        tm.append(time_op(mine, k, reps=20))
        tp.append(time_op(peer, k, reps=20))
        ta.append(time_op(aligned, k, reps=20))
    return dict(dtype=name, shape=(r, c), mib=size / 2**20, tmakit_tbs=2 * size / statistics.median(tm) / 1e9,
                torch_tbs=2 * size / statistics.median(tp) / 1e9,
                ratio=statistics.median(b / a for a, b in zip(tm, tp)),
                aligned_tbs=2 * ra * ca * esz / statistics.median(ta) / 1e9, path=path, aligned_path=apath)


def main(argv=None) -> list:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    import torch

    from tmakit.bench.timing import spin_up

    spin_up(1.0)
    rows = []
    for name, (r, c) in SHAPES:
        row = _measure(name, r, c, args.rounds)
        rows.append(row)
        print(f"{name:9s} {r}x{c} {row['mib']:7.1f} MiB  tmakit {row['tmakit_tbs']:5.2f} TB/s ({row['path']})  torch "
              f"{row['torch_tbs']:5.2f}  ratio {row['ratio']:.2f}  aligned {row['aligned_tbs']:5.2f} "
              f"({row['aligned_path']})", flush=True)
    print(torch.cuda.get_device_name())
    return rows


if __name__ == "__main__":
    main()
