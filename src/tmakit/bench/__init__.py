"""``tmakit bench``: tmakit's TMA ops against the torch code users would write, timed in the same run.

    tmakit bench [copy|transpose|permute|reduce|all] [--sizes 1M,64M,1G] [--json FILE] [--md FILE] [--plot FILE]

Method: random data (never zeros); CUDA-event timing of each call; warm-up calls first; the median over ``--reps``
calls; buffers rotated among enough sets that their total exceeds 4x the L2, so small sizes are not served from cache;
tmakit and its peer alternate in the same process. Bytes counted: every byte read plus every byte written once
(copy/transpose/permute 2x the tensor, reduce 3x). ``frac_ceiling`` = TB/s over the peer copy's TB/s at the largest
size measured in this run.
"""

from __future__ import annotations

from .harness import main, run_suite

__all__ = ["main", "run_suite"]
