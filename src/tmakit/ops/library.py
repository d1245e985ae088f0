"""``tk.ops`` as torch custom ops (``torch.ops.tmakit.*``), so ``torch.compile`` keeps them in its graph.

Under compilation each ``tk.ops`` function calls its custom op here instead of its eager body (which reads data
pointers and so cannot be traced); at run time the op runs that eager body. The fake implementations give shapes and
dtypes only; ``permute`` (backward: the inverse permute) and ``gemm`` (backward: two more GEMMs) carry their autograd
formulas, which eager calls use too whenever autograd records. Imported by ``tmakit.ops`` (when torch is
installed); the eager implementations call the ops by name (``torch.ops.tmakit.*``), so they do not import this.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .gemm import GemmError
from .gemm import gemm as tk_gemm
from .memory_ops import copy as tk_copy
from .memory_ops import permute as tk_permute
from .memory_ops import reduce_into as tk_reduce_into

__all__: list = []  # registers torch.ops.tmakit.{copy_, reduce_into_, permute, permute_out, gemm, gemm_out, mm}

@torch.library.custom_op("tmakit::copy_", mutates_args=("dst",))
def _copy(src: Tensor, dst: Tensor, strict: bool) -> None:
    tk_copy(src, dst, strict=strict)


_copy.register_fake(lambda src, dst, strict: None)


@torch.library.custom_op("tmakit::reduce_into_", mutates_args=("dst",))
def _reduce_into(dst: Tensor, src: Tensor, op: str, method: str, strict: bool) -> None:
    tk_reduce_into(dst, src, op, method=method, strict=strict)


_reduce_into.register_fake(lambda dst, src, op, method, strict: None)


@torch.library.custom_op("tmakit::permute", mutates_args=())
def _permute(x: Tensor, dims: list[int], strict: bool) -> Tensor:
    with torch.no_grad():  # the op's own autograd formula is registered below
        return tk_permute(x, tuple(dims), strict=strict)


@_permute.register_fake
def _(x, dims, strict):
    return x.new_empty([x.shape[d] for d in dims])


def _permute_ctx(ctx, inputs, output):
    ctx.dims, ctx.strict = inputs[1], inputs[2]


def _permute_backward(ctx, g):
    inverse = sorted(range(len(ctx.dims)), key=ctx.dims.__getitem__)
    return torch.ops.tmakit.permute(g, inverse, ctx.strict), None, None


_permute.register_autograd(_permute_backward, setup_context=_permute_ctx)


@torch.library.custom_op("tmakit::permute_out", mutates_args=("out",))
def _permute_out(x: Tensor, dims: list[int], out: Tensor, strict: bool) -> None:
    tk_permute(x, tuple(dims), out=out, strict=strict)


_permute_out.register_fake(lambda x, dims, out, strict: None)


def _gemm_kw(out_dtype, config, split, stream_k, k_rotate, pdl, split_mode) -> dict:
    return dict(out_dtype=out_dtype, config=config, split=split, stream_k=stream_k, k_rotate=k_rotate, pdl=pdl,
                split_mode=split_mode)


@torch.library.custom_op("tmakit::gemm", mutates_args=())
def _gemm(a: Tensor, b: Tensor, out_dtype: str | None, config: str | None, split: int | None, stream_k: str,
          k_rotate: bool | None, pdl: bool, split_mode: str) -> Tensor:
    with torch.no_grad():  # the op's own autograd formula is registered below
        return tk_gemm(a, b, **_gemm_kw(out_dtype, config, split, stream_k, k_rotate, pdl, split_mode))


@_gemm.register_fake
def _(a, b, out_dtype, config, split, stream_k, k_rotate, pdl, split_mode):
    dt = getattr(torch, str(out_dtype).removeprefix("torch.")) if out_dtype is not None else a.dtype
    return a.new_empty((a.shape[0], b.shape[1]), dtype=dt)


@torch.library.custom_op("tmakit::mm", mutates_args=())
def _mm(x: Tensor, y: Tensor) -> Tensor:
    """``x @ y`` in ``x``'s dtype (gemm's backward): tmakit's GEMM, or ``torch.matmul`` where its shape rules refuse
    (e.g. a reduction dim that is not a multiple of 16 bytes)."""
    x, y = x.contiguous(), y.to(x.dtype)
    try:
        return tk_gemm(x, y)
    except GemmError:
        return torch.matmul(x, y)


_mm.register_fake(lambda x, y: x.new_empty((x.shape[0], y.shape[1])))


def _gemm_ctx(ctx, inputs, output):
    ctx.save_for_backward(inputs[0], inputs[1])


def _gemm_backward(ctx, g):
    """dA = dC @ B^T, dB = A^T @ dC (transposing the smaller of A and dC), in the input dtype."""
    a, b = ctx.saved_tensors
    g = g.to(a.dtype)
    mm, permute = torch.ops.tmakit.mm, torch.ops.tmakit.permute
    da = mm(g, b.t()) if ctx.needs_input_grad[0] else None
    db = None
    if ctx.needs_input_grad[1]:
        db = mm(permute(a, [1, 0], False), g) if a.numel() <= g.numel() else mm(permute(g, [1, 0], False), a).t()
    return da, db, None, None, None, None, None, None, None


_gemm.register_autograd(_gemm_backward, setup_context=_gemm_ctx)


@torch.library.custom_op("tmakit::gemm_out", mutates_args=("out",))
def _gemm_out(a: Tensor, b: Tensor, out: Tensor, out_dtype: str | None, config: str | None, split: int | None,
              stream_k: str, k_rotate: bool | None, pdl: bool, split_mode: str) -> None:
    tk_gemm(a, b, out=out, **_gemm_kw(out_dtype, config, split, stream_k, k_rotate, pdl, split_mode))


_gemm_out.register_fake(lambda a, b, out, out_dtype, config, split, stream_k, k_rotate, pdl, split_mode: None)
