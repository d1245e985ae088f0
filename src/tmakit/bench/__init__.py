"""``tmakit bench``: tmakit's TMA ops against the torch code users would write, timed in the same run.

    tmakit bench [copy|transpose|permute|reduce|all] [--sizes 1M,64M,1G] [--rounds 3] [--json FILE] [--md FILE]
                 [--plot FILE]
    tmakit bench gemm [...]      (tmakit's GEMM against cuBLAS: ``tmakit.bench.gemm``; not part of ``all``)
    tmakit bench grouped [...]   (tk.ops.grouped_mm against torch._grouped_mm: ``tmakit.bench.grouped``)

Method: random data (never zeros); CUDA-event timing of each call; warm-up calls first; the median over ``--reps``
calls a loop; buffers rotated among enough sets that their total exceeds 4x the L2, so small sizes are not served from
cache; tmakit and its peer alternate in the same process, ``--rounds`` loops each, and the ratio is the median of the
rounds' ratios. Bytes counted: every byte read plus every byte written once
(copy/transpose/permute 2x the tensor, reduce 3x). ``frac_ceiling`` = TB/s over the peer copy's TB/s at the largest
size measured in this run. Each case is also timed back to back (``ratio_b2b``): ``--reps`` calls between two
CUDA events, nothing between the kernels (the throughput of a stream of calls, where a kernel launched with
programmatic dependent launch overlaps the previous one's drain), the median of three such chains, and as CUDA-graph
replays (``ratio_graph``): about 5 ms of back-to-back calls captured once, the median of 10 replays per call (no
Python launch cost on either side).
"""

from __future__ import annotations

import sys

from . import harness
from .harness import run_suite

__all__ = ["main", "run_suite"]


def main(argv: list[str] | None = None) -> int:
    """``tmakit bench ...``: ``gemm`` goes to :mod:`tmakit.bench.gemm`, everything else to the bandwidth harness."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["gemm"] and any(a in ("--dtype=fp8", "fp8") for a in argv):  # --dtype fp8: bench.gemm_fp8
        from .gemm_fp8 import main as fp8_main

        return fp8_main(argv[1:])
    if argv[:1] == ["grouped"]:
        from .grouped import main as grouped_main

        return grouped_main(argv[1:])
    if argv[:1] == ["gemm"]:
        from .gemm import main as gemm_main

        return gemm_main(argv[1:])
    return harness.main(argv)
