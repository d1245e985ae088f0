"""Autograd for the ops whose gradient is another TMA op: permute/transpose (the inverse permutation) and gemm (two
more GEMMs). Imported lazily by ``tmakit.ops`` when grad mode is on and an input requires grad."""

from __future__ import annotations

import torch

__all__ = ["permute", "gemm"]


class _Permute(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, dims, strict):
        from . import ops

        ctx.inverse, ctx.strict = tuple(sorted(range(len(dims)), key=dims.__getitem__)), strict
        return ops.permute(x, dims, strict=strict)

    @staticmethod
    def backward(ctx, g):
        from . import ops

        return ops.permute(g, ctx.inverse, strict=ctx.strict), None, None


def permute(x, dims: tuple, strict: bool):
    """``ops.permute(x, dims)`` recorded for autograd (``dims`` normalised to non-negative ints)."""
    return _Permute.apply(x, dims, strict)


def _mm(x, y, kw):
    """``x @ y`` (``x`` contiguous) with tmakit's GEMM, or ``torch.matmul`` where its shape rules refuse (e.g. a
    reduction dim that is not a multiple of 16 bytes)."""
    from .kernels.gemm import GemmError
    from .ops_gemm import gemm as tk_gemm

    try:
        return tk_gemm(x, y, **kw)
    except GemmError:
        return torch.matmul(x, y)


class _Gemm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, kw):
        from .ops_gemm import gemm as tk_gemm

        ctx.save_for_backward(a, b)
        return tk_gemm(a, b, **kw)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        g = g.to(a.dtype).contiguous()
        kw = dict(out_dtype=None)
        da = _mm(g, b.t(), kw) if ctx.needs_input_grad[0] else None
        db = None
        if ctx.needs_input_grad[1]:
            from . import ops

            if a.numel() <= g.numel():  # dB = A^T @ G, transposing the smaller operand
                db = _mm(ops.transpose(a, 0, 1), g, kw)
            else:  # dB = (G^T @ A)^T
                db = _mm(ops.transpose(g, 0, 1), a, kw).t()
        return da, db, None


def gemm(a, b, kw: dict):
    """``tk.ops.gemm(a, b, **kw)`` recorded for autograd: the backward GEMMs run in the input dtype with fp32
    accumulation (the incoming gradient is cast to it)."""
    return _Gemm.apply(a, b, kw)
