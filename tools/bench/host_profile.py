"""Where the host microseconds of a cached ``tk.ops`` call go: the op against torch's op, against its own launcher
called directly and against the bare ``cuLaunchKernelEx``, with the op's steps timed one by one (CUDA tensors of
8 KiB, so that the GPU never holds the host back).

    python3 tools/bench/host_profile.py [--number N] [--rounds R]

Each expression runs ``N`` times per round with ``timeit``; rounds alternate the order of the expressions; the
median round is printed in nanoseconds. "keyed" rows run the op with its per-object table emptied before every
call (the path of tensors the op has not seen twice: the layout key built from the tensor attributes); subtract
the "clearing" row.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import timeit


def setup():
    """The tensors, the op's cached entries and the expressions to time (name, statement)."""
    import torch

    import tmakit as tk
    from tmakit.cuda import packed
    from tmakit.ops import common, fast_path

    x, y = torch.randn(2048, device="cuda"), torch.randn(2048, device="cuda")
    for _ in range(3):  # checked, keyed, keyed + per-object check made
        tk.ops.reduce_into(y, x)
        tk.ops.copy(x, y)
    torch.cuda.synchronize()
    launcher = fast_path.objects[(fast_path.REDUCE, id(y), id(x), "add", "auto")][1][0]
    slot = launcher._slots[threading.get_ident()]
    objects = dict(fast_path.objects)

    def forget():  # the op has not seen these objects: no per-object entry, not seen once either
        fast_path.objects.clear()
        fast_path._seen.clear()

    def keyed_reduce():
        forget()
        tk.ops.reduce_into(y, x)
        fast_path.objects.update(objects)

    g = dict(tk=tk, torch=torch, x=x, y=y, L=launcher, s=slot, ex=packed._launch_ex, sp=x.data_ptr(),
             dp=y.data_ptr(), compiling=common.compiling, check=objects[(fast_path.REDUCE, id(y), id(x), "add",
                                                                           "auto")][0],
             keyed_reduce=keyed_reduce, clear_objects=lambda: (forget(), fast_path.objects.update(objects)))
    rows = [
        ("torch y.add_(x)", "y.add_(x)"),
        ("tk.ops.reduce_into(y, x)", "tk.ops.reduce_into(y, x)"),
        ("  keyed (+ clearing the tables)", "keyed_reduce()"),
        ("  clearing the tables alone", "clear_objects()"),
        ("torch y.copy_(x)", "y.copy_(x)"),
        ("tk.ops.copy(x, y)", "tk.ops.copy(x, y)"),
        ("launcher(sp, dp)", "L(sp, dp)"),
        ("cuLaunchKernelEx alone", "ex(s.cfg_addr, L._fn, s.params_addr, None)"),
        ("step: torch.compiler.is_compiling", "compiling()"),
        ("step: per-object check", "check(y, x)"),
        ("step: layout key build + hash", "hash((3, y.shape, y.stride(), y.dtype, y.get_device(), x.shape, x.stride(),"
                                          " x.dtype, x.get_device(), 0, 'add', 'auto'))"),
        ("step: two data_ptr reads", "x.data_ptr(); y.data_ptr()"),
        ("step: requires_grad x2", "x.requires_grad or y.requires_grad"),
        ("step: current device query", "torch._C._cuda_getDevice()"),
    ]
    return g, rows


def time_rows(rows, number: int, rounds: int, globals=None) -> dict:
    """Median ns per call of each row (name, statement or callable), ``number`` calls per round, the rows in
    reverse order every other round; prints them and returns {name: ns}."""
    import torch

    times: dict = {name: [] for name, _ in rows}
    for r in range(rounds):
        for name, stmt in rows if r % 2 == 0 else rows[::-1]:
            times[name].append(timeit.timeit(stmt, globals=globals, number=number) / number * 1e9)
            torch.cuda.synchronize()
    out = {name: statistics.median(v) for name, v in times.items()}
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}; ns per call, median of {rounds} rounds")
    for name, ns in out.items():
        print(f"{name:36s} {ns:8.0f}")
    return out


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--number", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args(argv)
    g, rows = setup()
    return time_rows(rows, args.number, args.rounds, g)


if __name__ == "__main__":
    main()
