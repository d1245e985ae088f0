"""compute-sanitizer target: the default combine reduce (lean CTAs, bf16x2, PDL launches) forced onto small sizes
with tails, chained so that each call reads what the previous one wrote; exits 1 on a mismatch.

    compute-sanitizer --tool racecheck python3 tools/sanitize/reduce.py
"""

from __future__ import annotations

import dataclasses
import sys

import torch

from tmakit import ops
from tmakit.kernels import bandwidth as bw


def main() -> int:
    bw.REDUCE_CONFIG = dataclasses.replace(bw.REDUCE_CONFIG, flat_min=0)
    ok = True
    for dt in (torch.bfloat16, torch.float32):
        for n in (5, 4097 * 3, (1 << 18) + 13):
            a, b, c = (torch.randn(n, device="cuda").to(dt) for _ in range(3))
            ra, rb, rc = a.clone(), b.clone(), c.clone()
            for _ in range(2):
                ops.reduce_into(b, a, "add")
                ops.reduce_into(c, b, "add")
                rb.add_(ra)
                rc.add_(rb)
            torch.cuda.synchronize()
            ok = ok and torch.equal(b, rb) and torch.equal(c, rc) and ops.last_path == "tma:combine"
    launcher = bw.launcher_for(a, b, op=0, dtype=bw.DataType.FLOAT32, allow_transpose=False)
    print("pdl launcher:", getattr(launcher, "pdl", None), "exact:", ok)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
