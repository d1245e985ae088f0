"""GEMM operands laid out the ways users pass them, for the GEMM tests that compare every layout against fp64."""

from __future__ import annotations

import torch

KINDS = ("contig", "colmajor", "slice", "step", "offset")


def operand(rows, cols, kind, dtype, device, g):
    """A (rows, cols) operand laid out as ``kind``: contiguous, transposed (column-major), a strided slice of a
    wider buffer, a stepped view, or a view starting at an odd element (misaligned base)."""
    if kind == "contig":
        return torch.randn(rows, cols, dtype=dtype, device=device, generator=g)
    if kind == "colmajor":
        return torch.randn(cols, rows, dtype=dtype, device=device, generator=g).t()
    if kind == "slice":
        return torch.randn(rows, cols + 3, dtype=dtype, device=device, generator=g)[:, 1:cols + 1]
    if kind == "step":
        return torch.randn(rows, 2 * cols, dtype=dtype, device=device, generator=g)[:, ::2]
    if kind == "offset":
        return torch.randn(rows * cols + 1, dtype=dtype, device=device, generator=g)[1:].view(rows, cols)
    raise AssertionError(kind)
