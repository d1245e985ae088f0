"""The mixture-of-experts cases of ``tmakit bench grouped`` (bf16 and fp8): the problems, the L2 flush buffer and
the interleaved timing rounds both benchmarks share."""

from __future__ import annotations

import math
import random

__all__ = ["CASES", "random_cases", "decode_cases", "routed_sizes", "rows_per_expert", "moe_problem", "flush_buffer",
           "time_rounds"]

# (experts, mean rows per expert, N, K, distribution): the three peers first, then group counts 8-256 and
# rows per expert 16-4096 over weight shapes of common MoE layers
CASES = [
    (8, 512, 4096, 4096, "uniform"), (64, 128, 4096, 7168, "uniform"), (16, 2048, 2048, 7168, "uniform"),
    (8, 4096, 4096, 2048, "uniform"), (32, 1024, 2048, 4096, "uniform"), (128, 256, 1536, 2048, "uniform"),
    (256, 64, 2048, 2048, "uniform"), (64, 16, 4096, 4096, "uniform"), (256, 16, 1536, 2048, "uniform"),
    (128, 32, 2048, 4096, "uniform"), (64, 128, 4096, 7168, "skewed"), (128, 64, 2048, 4096, "skewed"),
    (8, 1024, 4096, 4096, "skewed"), (32, 256, 2048, 2048, "skewed"),
]


MAX_TOKENS = 1 << 16  # tokens (rows of A) per random case at most
MAX_WEIGHT_BYTES = 4 << 30  # bf16 expert weights per random case at most


def _log_uniform(rng: random.Random, lo: int, hi: int) -> int:
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def _weight_shape(rng: random.Random, i: int) -> tuple[int, int]:
    """N and K of the ``i``-th random case: log-uniform in [256, 8192], multiples of 64 (odd ``i``: of 16)."""
    step = 64 if i % 2 == 0 else 16
    n, k = (max(step, _log_uniform(rng, 256, 8192) // step * step) for _ in range(2))
    return n, k


def random_cases(count: int, seed: int) -> list[tuple]:
    """``count`` cases in ``CASES``'s form, reproducible from ``seed``, for sweeps beyond the tuned list: experts
    log-uniform in [8, 256], mean rows per expert log-uniform in [1, 4096] (at most ``MAX_TOKENS`` tokens), N and K
    log-uniform in [256, 8192] (multiples of 64, every other case multiples of 16 only), weights at most
    ``MAX_WEIGHT_BYTES`` in bf16, uniform or skewed alike."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        experts = _log_uniform(rng, 8, 256)
        rows = min(_log_uniform(rng, 1, 4096), MAX_TOKENS // experts)
        n, k = _weight_shape(rng, len(out))
        dist = rng.choice(("uniform", "skewed"))
        if experts * n * k * 2 <= MAX_WEIGHT_BYTES:
            out.append((experts, rows, n, k, dist))
    return out


TOP_K = (1, 2, 4, 6, 8)  # experts per token of the routed cases


def decode_cases(count: int, seed: int) -> list[tuple]:
    """``count`` routed cases, reproducible from ``seed``: the decode and small-batch shapes of MoE inference, where
    each of 1-512 tokens (log-uniform) goes to ``top`` distinct experts of 8-256 (``TOP_K``), uniformly or with
    Pareto weights per expert; N and K as in :func:`random_cases`. In ``CASES``'s form, ``rows`` being the tokens and
    ``dist`` ``"top{k}"`` or ``"top{k}-skewed"`` (:func:`routed_sizes`)."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        experts, tokens = _log_uniform(rng, 8, 256), _log_uniform(rng, 1, 512)
        top = min(rng.choice(TOP_K), experts)
        n, k = _weight_shape(rng, len(out))
        if experts * n * k * 2 <= MAX_WEIGHT_BYTES:
            out.append((experts, tokens, n, k, f"top{top}" + ("-skewed" if rng.random() < 0.5 else "")))
    return out


def _top_k(dist: str) -> int:
    """k of a routed case's ``"top{k}[-skewed]"``."""
    return int(dist.split("-")[0].removeprefix("top"))


def routed_sizes(experts: int, tokens: int, dist: str, rng: random.Random) -> list[int]:
    """Rows per expert of ``tokens`` tokens routed as ``dist`` says (``"top{k}[-skewed]"``): each token to k
    distinct experts drawn with equal or Pareto weights."""
    top = _top_k(dist)
    w = [rng.paretovariate(1.2) if dist.endswith("-skewed") else 1.0 for _ in range(experts)]
    sizes = [0] * experts
    for _ in range(tokens):
        chosen = set()
        while len(chosen) < min(top, experts):
            chosen.add(rng.choices(range(experts), weights=w)[0])
        for e in chosen:
            sizes[e] += 1
    return sizes


def rows_per_expert(rows: int, dist: str, experts: int) -> float:
    """Mean rows per expert of a case: ``rows``, or for routed cases tokens x k / experts."""
    if not dist.startswith("top"):
        return rows
    return rows * _top_k(dist) / experts


def moe_problem(torch, experts: int, rows: int, n: int, k: int, dist: str, seed: int = 0):
    """(a, b, offs, ends) for ``experts`` experts averaging ``rows`` tokens each (routed cases: ``rows`` tokens
    routed as ``dist`` says, :func:`routed_sizes`)."""
    rng = random.Random(seed * 7919 + experts * 31 + rows)
    if dist == "uniform":
        sizes = [rows] * experts
    elif dist.startswith("top"):
        sizes = routed_sizes(experts, rows, dist, rng)
    else:
        w = [0.0 if rng.random() < 0.15 else rng.paretovariate(1.2) for _ in range(experts)]
        tot = sum(w) or 1.0
        sizes = [int(experts * rows * x / tot) for x in w]
    ends, acc = [], 0
    for s in sizes:
        acc += s
        ends.append(acc)
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(max(acc, 1), k, device="cuda", dtype=torch.bfloat16, generator=g)
    w = torch.randn(experts, n, k, device="cuda", dtype=torch.bfloat16, generator=g)
    offs = torch.tensor(ends, dtype=torch.int32, device="cuda")
    return a, w.transpose(-2, -1), offs, ends


def flush_buffer(torch):
    """An int32 buffer of twice the L2's size: zeroing it before a timed call evicts the previous call's data."""
    return torch.empty(2 * torch.cuda.get_device_properties(0).L2_cache_size // 4 + 1, dtype=torch.int32,
                       device="cuda")


def time_rounds(fns: dict, flush, rounds: int, reps: int) -> dict:
    """Per name, the median milliseconds of ``reps`` single calls (``timing.time_events``: each after an L2 flush,
    CUDA events) in each of ``rounds`` rounds; the order of the callables reverses from round to round."""
    from .timing import time_events

    times = {name: [] for name in fns}
    for r in range(rounds):
        names = list(fns) if r % 2 == 0 else list(fns)[::-1]
        for name, ms in zip(names, time_events([lambda i, f=fns[n]: f() for n in names], 1, flush, 0, reps)):
            times[name].append(ms)
    return times
