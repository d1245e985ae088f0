"""The gradients of ``tk.ops.grouped_mm``: the formula (:func:`grouped_grads`), shared by the eager
``torch.autograd.Function`` (:func:`autograd_function`) and the custom op's registered backward
(``grouped_library``), and the zeroing of gradient rows past the last group offset."""

from __future__ import annotations

from ..kernels.zero_tail import zero_rows_past_end
from .common import current_device, on_device, torch_module

__all__ = ["autograd_function", "grouped_grads"]


_function: list = []  # the autograd.Function of eager calls under autograd (built once torch is imported)


def autograd_function(torch, grouped_mm):
    """``torch.autograd.Function`` running ``grouped_mm`` (``tk.ops.grouped_mm``) forward and :func:`grouped_grads`
    backward through it (eager calls under autograd)."""
    if not _function:
        class GroupedMM(torch.autograd.Function):
            @staticmethod
            def forward(ctx, a, b, offs, out_dtype, strict, check_offs, config):
                ctx.save_for_backward(a, b, offs)
                return grouped_mm(a, b, offs, out_dtype=out_dtype, strict=strict, check_offs=check_offs,
                                  config=config)

            @staticmethod
            def backward(ctx, g):
                a, b, offs = ctx.saved_tensors
                return (*grouped_grads(a, b, offs, g, ctx.needs_input_grad[:2], grouped_mm), None, None, None, None,
                        None)

        _function.append(GroupedMM)
    return _function[0]


def grouped_grads(a, b, offs, g, needs, mm):
    """(dA, dB) of ``C = grouped_mm(a, b, offs)`` for the incoming gradient ``g`` (None where ``needs`` says no):
    dA = dC B^T and dB = A^T dC as grouped products ``mm(x, y, offs)`` of the same form's transposes, in the inputs'
    dtype and layouts (a gradient with other strides than its input costs a transposing copy when autograd
    accumulates it): for ``b = w.transpose(-2, -1)`` (K-major) dB is ``(dC^T A)^T`` (an MoE layer's weight gradient:
    along K on the kernel); for an M-major ``a = x.t()`` dA is ``(B dC^T)^T``. Rows or columns of a gradient past
    the last offset (no group reads them) are zero."""
    g = g.to(a.dtype)
    da = db = None
    if needs[0]:
        da = mm(b, g.transpose(-2, -1), offs).transpose(-2, -1) if _mn_major(a) else mm(g, b.transpose(-2, -1), offs)
        if offs is not None and a.dim() == 2:  # rows grouped: a's rows; along K: a's columns
            da = _zero_past_end(da, offs, 0 if b.dim() == 3 else 1)
    if needs[1]:
        db = mm(g.transpose(-2, -1), a, offs).transpose(-2, -1) if _mn_major(b) else mm(a.transpose(-2, -1), g, offs)
        if offs is not None and b.dim() == 2:  # along K: b's rows; along N: b's columns
            db = _zero_past_end(db, offs, 0 if a.dim() == 2 else 1)
    return da, db


def _mn_major(t) -> bool:
    """Whether the matrices of ``t`` are stored transposed (unit stride down a column: a K-major b, an M-major a)."""
    return t.stride(-2) == 1 and t.stride(-1) != 1 and t.shape[-1] > 1


_positions: dict = {}  # (length, device) -> arange(length) on the device, for _zero_past_end


def _zero_past_end(t, offs, dim: int):
    """``t`` with its entries past ``offs[-1]`` along ``dim`` set to zero (on the device: no synchronisation). A
    CUDA gradient whose ``dim`` is its rows (the layouts :func:`grouped_grads` produces for row-major inputs) is
    zeroed in place by a kernel whose CTAs exit where their rows lie before the end (``kernels.zero_tail``: a
    launch, where a masked copy of the whole gradient took 10-15 % of an MoE layer's backward); else a masked copy."""
    torch = torch_module()
    if offs.numel() == 0:
        return torch.zeros_like(t)
    n = t.shape[dim]
    plain = type(t) is torch.Tensor  # not a tracing subclass (fake, functional): those must not be kept
    if plain and t.is_cuda and t.dim() == 2 and t.stride(1 - dim) == 1 and t.get_device() == current_device():
        eb = t.element_size()
        with on_device(t.get_device()):
            zero_rows_past_end(t.data_ptr(), t.stride(dim) * eb, n, t.shape[1 - dim] * eb, offs.data_ptr(),
                               offs.numel() - 1)
        return t
    pos = _positions.get((n, t.device)) if plain else None
    if pos is None:
        pos = torch.arange(n, device=t.device, dtype=torch.int32)
        if plain:
            if len(_positions) >= 64:
                _positions.clear()
            _positions[(n, t.device)] = pos
    shape = [1] * t.dim()
    shape[dim] = -1
    return torch.where((pos < offs[-1]).view(shape), t, 0)
