"""``torch.ops.tmakit.grouped_mm`` / ``grouped_mm_out``, ``scaled_grouped_mm`` / ``scaled_grouped_mm_out``,
``gemm_list`` / ``gemm_list_out`` and ``scaled_gemm_list`` / ``scaled_gemm_list_out``: ``tk.ops.grouped_mm``,
``tk.ops.scaled_grouped_mm``, ``tk.ops.gemm_list`` and ``tk.ops.scaled_gemm_list`` as torch custom ops, so
``torch.compile`` keeps it in its graph (the eager op calls these while tracing; at run time they run the eager op).
Registered when ``tmakit.ops`` is imported with torch installed. ``grouped_mm`` carries its autograd formula (two more
grouped products, ``tmakit.ops.grouped_grad.grouped_grads``; eager calls under autograd use the same formula through a
plain ``torch.autograd.Function``, which costs a fraction of a custom op's dispatch); the others have none."""

from __future__ import annotations

import torch
from torch import Tensor

from .grouped import gemm_list as tk_gemm_list
from .grouped import grouped_mm as tk_grouped_mm
from .grouped import scaled_gemm_list as tk_scaled_gemm_list
from .grouped_grad import grouped_grads
from .scaled_grouped import scaled_grouped_mm as tk_scaled_grouped_mm

__all__: list = []


def _dtype(out_dtype, a):
    return getattr(torch, out_dtype) if out_dtype is not None else a.dtype


@torch.library.custom_op("tmakit::grouped_mm", mutates_args=())
def _grouped_mm(a: Tensor, b: Tensor, offs: Tensor | None, out_dtype: str | None, strict: bool, check_offs: bool,
                config: str | None) -> Tensor:
    with torch.no_grad():  # the op's own autograd formula is registered below
        return tk_grouped_mm(a, b, offs, out_dtype=_dtype(out_dtype, a), strict=strict, check_offs=check_offs,
                             config=config)


@_grouped_mm.register_fake
def _(a, b, offs, out_dtype, strict, check_offs, config):
    dt = _dtype(out_dtype, a)
    if a.dim() == 2 and b.dim() == 3:
        return a.new_empty((a.shape[0], b.shape[2]), dtype=dt)
    if a.dim() == 3 and b.dim() == 3:
        return a.new_empty((a.shape[0], a.shape[1], b.shape[2]), dtype=dt)
    if a.dim() == 2 and b.dim() == 2 and offs is not None:  # grouped along K: one (M, N) result per group
        return a.new_empty((offs.shape[0], a.shape[0], b.shape[1]), dtype=dt)
    return torch._grouped_mm(a, b, offs=offs, out_dtype=dt)


def _grouped_ctx(ctx, inputs, output):
    ctx.save_for_backward(inputs[0], inputs[1], inputs[2])


def _grouped_backward(ctx, g):
    """The custom op's gradients (under ``torch.compile``): :func:`tmakit.ops.grouped_grad.grouped_grads` through the op
    itself, so the compiled backward keeps the grouped products in its graph."""
    a, b, offs = ctx.saved_tensors
    op = torch.ops.tmakit.grouped_mm
    da, db = grouped_grads(a, b, offs, g, ctx.needs_input_grad[:2],
                           lambda x, y, o: op(x, y, o, None, False, False, None))
    return da, db, None, None, None, None, None


_grouped_mm.register_autograd(_grouped_backward, setup_context=_grouped_ctx)


@torch.library.custom_op("tmakit::grouped_mm_out", mutates_args=("out",))
def _grouped_mm_out(a: Tensor, b: Tensor, offs: Tensor | None, out: Tensor, strict: bool, check_offs: bool,
                    config: str | None) -> None:
    tk_grouped_mm(a, b, offs, out=out, strict=strict, check_offs=check_offs, config=config)


_grouped_mm_out.register_fake(lambda a, b, offs, out, strict, check_offs, config: None)


@torch.library.custom_op("tmakit::scaled_grouped_mm", mutates_args=())
def _scaled_grouped_mm(a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor, offs: Tensor | None, out_dtype: str,
                       use_fast_accum: bool, strict: bool, check_offs: bool, config: str | None) -> Tensor:
    return tk_scaled_grouped_mm(a, b, scale_a, scale_b, offs, out_dtype=getattr(torch, out_dtype),
                                use_fast_accum=use_fast_accum, strict=strict, check_offs=check_offs, config=config)


@_scaled_grouped_mm.register_fake
def _(a, b, scale_a, scale_b, offs, out_dtype, use_fast_accum, strict, check_offs, config):
    if a.dim() == 2 and b.dim() == 3:
        return a.new_empty((a.shape[0], b.shape[2]), dtype=getattr(torch, out_dtype))
    if a.dim() == 3 and b.dim() == 3 and offs is None:
        return a.new_empty((a.shape[0], a.shape[1], b.shape[2]), dtype=getattr(torch, out_dtype))
    return torch._scaled_grouped_mm(a, b, scale_a, scale_b, offs=offs, out_dtype=getattr(torch, out_dtype),
                                    use_fast_accum=use_fast_accum)


@torch.library.custom_op("tmakit::scaled_grouped_mm_out", mutates_args=("out",))
def _scaled_grouped_mm_out(a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor, offs: Tensor | None, out: Tensor,
                           use_fast_accum: bool, strict: bool, check_offs: bool, config: str | None) -> None:
    tk_scaled_grouped_mm(a, b, scale_a, scale_b, offs, out=out, use_fast_accum=use_fast_accum, strict=strict,
                         check_offs=check_offs, config=config)


_scaled_grouped_mm_out.register_fake(lambda a, b, scale_a, scale_b, offs, out, *rest: None)


@torch.library.custom_op("tmakit::gemm_list", mutates_args=())
def _gemm_list(As: list[Tensor], Bs: list[Tensor], out_dtype: str | None, strict: bool,
               config: str | None) -> list[Tensor]:
    # outputs of their own (a custom op's outputs may not alias one another; the op's own are views of one buffer)
    outs = [a.new_empty((a.shape[0], b.shape[1]), dtype=_dtype(out_dtype, a)) for a, b in zip(As, Bs)]
    return tk_gemm_list(As, Bs, out=outs, strict=strict, config=config)


@_gemm_list.register_fake
def _(As, Bs, out_dtype, strict, config):
    return [a.new_empty((a.shape[0], b.shape[1]), dtype=_dtype(out_dtype, a)) for a, b in zip(As, Bs)]


@torch.library.custom_op("tmakit::gemm_list_out", mutates_args=("out",))
def _gemm_list_out(As: list[Tensor], Bs: list[Tensor], out: list[Tensor], strict: bool, config: str | None) -> None:
    tk_gemm_list(As, Bs, out=out, strict=strict, config=config)


_gemm_list_out.register_fake(lambda As, Bs, out, strict, config: None)


@torch.library.custom_op("tmakit::scaled_gemm_list", mutates_args=())
def _scaled_gemm_list(As: list[Tensor], Bs: list[Tensor], scales_a: list[Tensor], scales_b: list[Tensor],
                      out_dtype: str, use_fast_accum: bool, strict: bool, config: str | None) -> list[Tensor]:
    outs = [a.new_empty((a.shape[0], b.shape[1]), dtype=getattr(torch, out_dtype)) for a, b in zip(As, Bs)]
    return tk_scaled_gemm_list(As, Bs, scales_a, scales_b, out=outs, use_fast_accum=use_fast_accum, strict=strict,
                               config=config)


@_scaled_gemm_list.register_fake
def _(As, Bs, scales_a, scales_b, out_dtype, use_fast_accum, strict, config):
    return [a.new_empty((a.shape[0], b.shape[1]), dtype=getattr(torch, out_dtype)) for a, b in zip(As, Bs)]


@torch.library.custom_op("tmakit::scaled_gemm_list_out", mutates_args=("out",))
def _scaled_gemm_list_out(As: list[Tensor], Bs: list[Tensor], scales_a: list[Tensor], scales_b: list[Tensor],
                          out: list[Tensor], use_fast_accum: bool, strict: bool, config: str | None) -> None:
    tk_scaled_gemm_list(As, Bs, scales_a, scales_b, out=out, use_fast_accum=use_fast_accum, strict=strict,
                        config=config)


_scaled_gemm_list_out.register_fake(lambda As, Bs, scales_a, scales_b, out, *rest: None)
