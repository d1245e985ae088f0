"""``torch.ops.tmakit.scaled_mm`` / ``scaled_mm_out``: ``tk.ops.scaled_mm`` as torch custom ops, so
``torch.compile`` keeps it in its graph (the eager op calls these while tracing; at run time they run the eager op).
Registered when ``tmakit.ops`` is imported with torch installed. No autograd formula (fp8 inputs)."""

from __future__ import annotations

import torch
from torch import Tensor

from .scaled_mm import scaled_mm as tk_scaled_mm

__all__: list = []


@torch.library.custom_op("tmakit::scaled_mm", mutates_args=())
def _scaled_mm(a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor, bias: Tensor | None, out_dtype: str,
               use_fast_accum: bool, strict: bool, config: str | None, split: int | None) -> Tensor:
    return tk_scaled_mm(a, b, scale_a, scale_b, bias=bias, out_dtype=getattr(torch, out_dtype),
                        use_fast_accum=use_fast_accum, strict=strict, config=config, split=split)


@_scaled_mm.register_fake
def _(a, b, scale_a, scale_b, bias, out_dtype, use_fast_accum, strict, config, split):
    return a.new_empty((a.shape[0], b.shape[1]), dtype=getattr(torch, out_dtype))


@torch.library.custom_op("tmakit::scaled_mm_out", mutates_args=("out",))
def _scaled_mm_out(a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor, bias: Tensor | None, out: Tensor,
                   out_dtype: str, use_fast_accum: bool, strict: bool, config: str | None, split: int | None) -> None:
    tk_scaled_mm(a, b, scale_a, scale_b, bias=bias, out=out, out_dtype=getattr(torch, out_dtype),
                 use_fast_accum=use_fast_accum, strict=strict, config=config, split=split)


_scaled_mm_out.register_fake(lambda a, b, scale_a, scale_b, bias, out, out_dtype, use_fast_accum, strict, config,
                             split: None)
