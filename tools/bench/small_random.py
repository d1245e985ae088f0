"""Random small tensors against torch: copy, reduce_into add and transpose at log-uniform sizes (4 KiB - 64 MiB),
random dtypes and odd lengths / widths (so that some rows are not 16-byte multiples and fall back to torch's op),
each result checked against torch's, per call and back to back.

    python3 tools/bench/small_random.py [--seed S] [--cases N] [--rounds R]

Per case: R interleaved rounds of CUDA-event-timed calls (tmakit, torch; order alternating), three back-to-back
chains each; buffer sets rotated past the L2. Prints one line per case (ratio = torch time / tmakit time, the path)
and the geometric means.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics


def _case(rng, torch):
    op = rng.choice(["copy", "reduce", "reduce", "transpose"])
    dtypes = [torch.bfloat16, torch.float16, torch.float32] + ([torch.int32] if op != "transpose" else [])
    dtype = rng.choice(dtypes)
    esz = torch.tensor([], dtype=dtype).element_size()
    nbytes = int(2 ** rng.uniform(12, 26))
    if op == "transpose":
        rows = max(8, int(math.sqrt(nbytes / esz) * rng.uniform(0.5, 2.0)))
        shape = (rows, max(8, nbytes // esz // rows))
    else:
        shape = (max(1, nbytes // esz - rng.randrange(0, 64)),)
    return op, dtype, shape


def _fns(op, xs, ys, tk):
    if op == "copy":
        return (lambda i: tk.ops.copy(xs[i], ys[i])), (lambda i: ys[i].copy_(xs[i]))
    if op == "reduce":
        return (lambda i: tk.ops.reduce_into(ys[i], xs[i])), (lambda i: ys[i].add_(xs[i]))
    return (lambda i: tk.ops.transpose(xs[i])), (lambda i: xs[i].t().contiguous())


def _correct(op, xs, ys, mine, torch) -> bool:
    if op == "transpose":
        return torch.equal(mine(0), xs[0].t())
    ref = ys[0].clone()
    ref.copy_(xs[0]) if op == "copy" else ref.add_(xs[0])
    mine(0)
    return torch.equal(ys[0], ref)


def main(argv=None) -> list:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=36)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    import torch

    import tmakit as tk
    from tmakit.bench.timing import nsets, spin_up, time_chain, time_op

    rng = random.Random(args.seed)
    spin_up(1.0)
    rows = []
    for _ in range(args.cases):
        op, dtype, shape = _case(rng, torch)
        size = math.prod(shape) * torch.tensor([], dtype=dtype).element_size()
        k = nsets(3 * size)
        xs = [(torch.randn(shape, device="cuda") * 100).to(dtype) for _ in range(k)]
        ys = [(torch.randn(shape, device="cuda") * 100).to(dtype) for _ in range(k)]
        mine, peer = _fns(op, xs, ys, tk)
        ok = _correct(op, xs, ys, mine, torch)
        path = tk.ops.last_path
        per_call = []
        for r in range(args.rounds):
            a, b = (mine, peer) if r % 2 == 0 else (peer, mine)
            ta, tb = time_op(a, k, reps=30), time_op(b, k, reps=30)
            per_call.append(tb / ta if r % 2 == 0 else ta / tb)
        chains = [time_chain(peer, k, reps=30) / time_chain(mine, k, reps=30) for _ in range(3)]
        row = dict(op=op, dtype=str(dtype)[6:], shape=shape, kib=size / 1024, per_call=statistics.median(per_call),
                   b2b=statistics.median(chains), ok=ok, path=path)
        rows.append(row)
        print(f"{op:9s} {row['dtype']:9s} {str(shape):18s} {row['kib']:10.1f} KiB  per call {row['per_call']:.3f}  "
              f"back to back {row['b2b']:.3f}  correct {ok}  {path[:40]}", flush=True)
    gm = lambda v: math.exp(sum(map(math.log, v)) / len(v))  # noqa: E731
    tma = [r for r in rows if r["path"].startswith("tma")]
    print(f"seed {args.seed}, {torch.cuda.get_device_name()}: per call geomean {gm([r['per_call'] for r in rows]):.3f} "
          f"(min {min(r['per_call'] for r in rows):.3f}), back to back {gm([r['b2b'] for r in rows]):.3f}; on TMA "
          f"({len(tma)} cases) {gm([r['per_call'] for r in tma]):.3f} / {gm([r['b2b'] for r in tma]):.3f}; "
          f"all correct: {all(r['ok'] for r in rows)}")
    return rows


if __name__ == "__main__":
    main()
