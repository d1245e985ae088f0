"""GPU timing shared by the benchmarks: CUDA-event loops (optionally after an L2 flush), back-to-back chains,
CUDA-graph capture and replay, input-set counts that defeat the L2, and warming the GPU up. torch is imported when
a function runs."""

from __future__ import annotations

import statistics
import time

__all__ = ["time_op", "time_chain", "time_events", "capture", "time_graphs", "nsets", "spin_up", "context_ok"]

MiB = 1 << 20


def _warm_up(fn, nsets: int, warmup: int) -> None:
    """``warmup`` calls, and every input set at least twice: a tk op plans on its first call of a layout and makes
    its per-object check on the second keyed call of the same tensors (``tmakit.ops.fast_path``); the timed loop
    then sees what a loop over the same tensors sees."""
    import torch

    for i in range(max(warmup, 2 * nsets)):
        fn(i % nsets)
    torch.cuda.synchronize()


def time_op(fn, nsets: int, warmup: int = 5, reps: int = 30) -> float:
    """Median milliseconds of ``fn(i)`` (i = buffer set), timed with CUDA events around each call."""
    import torch

    _warm_up(fn, nsets, warmup)
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        starts[i].record()
        fn((i + warmup) % nsets)
        ends[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


def time_chain(fn, nsets: int, warmup: int = 5, reps: int = 30, chains: int = 3) -> float:
    """Median over ``chains`` of the milliseconds per call of ``reps`` back-to-back calls between two CUDA events
    (nothing between the kernels: the throughput of a stream of calls, where a launch may overlap the previous
    kernel's drain)."""
    import torch

    _warm_up(fn, nsets, warmup)
    per = []
    for _ in range(chains):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for i in range(reps):
            fn((i + warmup) % nsets)
        b.record()
        b.synchronize()
        per.append(a.elapsed_time(b) / reps)
    return statistics.median(per)


def nsets(nbytes_per_set: int) -> int:
    import torch

    l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 60 * MiB) or 60 * MiB
    return max(1, min(64, -(-4 * l2 // max(nbytes_per_set, 1))))


def spin_up(seconds: float = 0.5) -> None:
    """Keep the GPU busy (4096^3 bf16 matmuls) for ``seconds`` so that clocks have left idle before the first timed
    shape (from idle clocks, cuBLAS measured 280 instead of 372 TF/s on the first shape of a run)."""
    import torch

    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(10):
            torch.matmul(a, a)
        torch.cuda.synchronize()


def time_events(fns, nsets: int, flush, warmup: int, reps: int) -> list[float]:
    """Median ms of each ``fn(i)``, the fns alternating (in reverse order every other round: no fn always runs in
    the same position of the sequence, which measured up to 4 % apart for the very same kernel), each call after an
    L2 flush (host time per call that the flush does not hide is included, as a Python caller would see it).
    Warm-up: every input set at least twice per fn (:func:`_warm_up`), so no timed call is a key's first or
    second sighting (the ops plan, record or upgrade a route there)."""
    import torch

    for f in fns:
        _warm_up(f, nsets, warmup)
    ev = [[(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
          for _ in fns]
    order = list(enumerate(fns))
    for r in range(reps):
        for j, f in order if r % 2 == 0 else order[::-1]:
            flush.zero_()
            ev[j][r][0].record()
            f(r % nsets)
            ev[j][r][1].record()
    torch.cuda.synchronize()
    return [statistics.median(s.elapsed_time(e) for s, e in evs) for evs in ev]


def capture(fn, nsets: int, calls: int):
    """A CUDA graph of ``calls`` back-to-back ``fn(i % nsets)``."""
    import torch

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up on a side stream, as torch's graph docs ask
        for i in range(2):
            fn(i % nsets)
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for i in range(calls):
            fn(i % nsets)
    return g


def replay_ms(graph, calls: int, replays: int = 7) -> float:
    """Median ms per call of replaying ``graph`` (``calls`` calls) back to back, without a flush in between."""
    import torch

    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(replays):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        graph.replay()
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1) / calls)
    return statistics.median(times)


def time_graphs(graphs, calls: int, flush, replays: int) -> list[float]:
    """Median ms per call of each graph's replay, graphs alternating, each replay after an L2 flush."""
    import torch

    for g in graphs:
        g.replay()
    torch.cuda.synchronize()
    ev = [[(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(replays)]
          for _ in graphs]
    for r in range(replays):
        for j, g in enumerate(graphs):
            flush.zero_()
            ev[j][r][0].record()
            g.replay()
            ev[j][r][1].record()
    torch.cuda.synchronize()
    return [statistics.median(s.elapsed_time(e) for s, e in evs) / calls for evs in ev]


def context_ok() -> bool:
    """False when the CUDA context is broken (a sticky error): nothing more can run in this process."""
    import torch

    try:
        torch.cuda.synchronize()
        return True
    except Exception:
        return False
