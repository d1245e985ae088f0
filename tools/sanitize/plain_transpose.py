"""compute-sanitizer target for ``plain_transpose.cu`` (transposes TMA cannot describe): odd row widths of 1-, 2-, 4-
and 8-byte elements, a batched permute; exits 1 on a mismatch or another path.

    compute-sanitizer --tool memcheck --report-api-errors no python3 tools/sanitize/plain_transpose.py
    compute-sanitizer --tool racecheck python3 tools/sanitize/plain_transpose.py
"""

from __future__ import annotations

import sys

import torch

import tmakit as tk


def main() -> int:
    cases = [(torch.bfloat16, (91, 58)), (torch.float32, (130, 67)), (torch.uint8, (33, 65)), (torch.int64, (17, 9))]
    for dtype, shape in cases:
        x = torch.randint(0, 100, shape, device="cuda").to(dtype)
        y = tk.ops.transpose(x)
        if not torch.equal(y, x.t()) or tk.ops.last_path != "plain:transpose":
            print("mismatch", dtype, shape, tk.ops.last_path)
            return 1
    b = torch.randn(3, 33, 17, device="cuda").half()
    if not torch.equal(tk.ops.permute(b, (0, 2, 1)), b.permute(0, 2, 1)):
        print("mismatch: batched permute")
        return 1
    torch.cuda.synchronize()
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
