"""FP8 quantization for ``tk.ops.scaled_mm``: ``x ~= q * scale`` with ``q`` in float8 (e4m3 by default) and fp32
scales ``amax / fp8_max`` (448 for e4m3, 57344 for e5m2) per tensor, per row, per 1x128 (row, K block) or per
128x128 block, and the matching dequantization. Plain torch code (any device).

    qa, sa = quantize_1x128(a)          # A (M, K): sa (M, ceil(K/128))
    qw, sw = quantize_128x128(w)        # W (N, K): sw (ceil(N/128), ceil(K/128))
    c = tk.ops.scaled_mm(qa, qw.t(), sa, sw)   # block-wise scaled a @ w.t()

For row-wise scaling of ``a @ w.t()``: ``qa, sa = quantize_rows(a)``, ``qw, sw = quantize_rows(w)``, then
``scaled_mm(qa, qw.t(), sa, sw.t())`` (scale_b is (1, N)).
"""

from __future__ import annotations

from .common import torch_module

__all__ = ["BLOCK", "FP8_MAX", "dequantize", "expand_blocks", "quantize_128x128", "quantize_1x128", "quantize_rows",
           "quantize_tensor"]

BLOCK = 128
FP8_MAX = {"float8_e4m3fn": 448.0, "float8_e5m2": 57344.0}


def _fp8(dtype):
    torch = torch_module()
    dtype = dtype or torch.float8_e4m3fn
    name = str(dtype).rsplit(".", 1)[-1]
    if name not in FP8_MAX:
        raise ValueError(f"dtype must be torch.float8_e4m3fn or torch.float8_e5m2, got {dtype}")
    return torch, dtype, FP8_MAX[name]


def _scale_of(amax, fmax):
    """amax / fmax, and 1 where a group is all zeros (its q is 0 whatever the scale)."""
    s = amax.float() / fmax
    return s.masked_fill(s == 0, 1.0)


def _cast(torch, x, scale, fmax, dtype):
    return (x.float() / scale).clamp(-fmax, fmax).to(dtype)


def _check2(x):
    if x.dim() != 2:
        raise ValueError(f"expected a 2-D tensor, got shape {tuple(x.shape)}")


def quantize_tensor(x, dtype=None):
    """(q, scale): one fp32 scale (a 0-d tensor) for the whole tensor."""
    torch, dtype, fmax = _fp8(dtype)
    scale = _scale_of(x.detach().abs().amax().float(), fmax)
    return _cast(torch, x, scale, fmax, dtype), scale


def quantize_rows(x, dtype=None):
    """(q, scale): one scale per row of a 2-D x, scale (rows, 1)."""
    torch, dtype, fmax = _fp8(dtype)
    _check2(x)
    scale = _scale_of(x.detach().abs().amax(dim=1, keepdim=True), fmax)
    return _cast(torch, x, scale, fmax, dtype), scale


def _pad(torch, x, r, c):
    """x zero-padded to multiples (r, c) of its shape (a copy only when needed)."""
    pr, pc = -x.shape[0] % r, -x.shape[1] % c
    return torch.nn.functional.pad(x, (0, pc, 0, pr)) if pr or pc else x


def quantize_1x128(x, dtype=None):
    """(q, scale): one scale per (row, 128 columns) of a 2-D x (A's block-wise scaling), scale (rows,
    ceil(cols/128))."""
    torch, dtype, fmax = _fp8(dtype)
    _check2(x)
    rows, cols = x.shape
    xp = _pad(torch, x.detach().float(), 1, BLOCK)
    scale = _scale_of(xp.abs().view(rows, -1, BLOCK).amax(dim=2), fmax)
    q = _cast(torch, x, scale.repeat_interleave(BLOCK, dim=1)[:, :cols], fmax, dtype)
    return q, scale


def quantize_128x128(x, dtype=None):
    """(q, scale): one scale per 128x128 block of a 2-D x (B's block-wise scaling, x = W (N, K)), scale
    (ceil(rows/128), ceil(cols/128))."""
    torch, dtype, fmax = _fp8(dtype)
    _check2(x)
    rows, cols = x.shape
    xp = _pad(torch, x.detach().float(), BLOCK, BLOCK)
    rb, cb = xp.shape[0] // BLOCK, xp.shape[1] // BLOCK
    scale = _scale_of(xp.abs().view(rb, BLOCK, cb, BLOCK).amax(dim=(1, 3)), fmax)
    return _cast(torch, x, expand_blocks(scale, rows, cols, BLOCK, BLOCK), fmax, dtype), scale


def expand_blocks(scale, rows: int, cols: int, br: int, bc: int):
    """A (ceil(rows/br), ceil(cols/bc)) block-scale grid expanded to one scale per element of (rows, cols)."""
    return scale.repeat_interleave(br, dim=0)[:rows].repeat_interleave(bc, dim=1)[:, :cols]


def dequantize(q, scale):
    """q * scale in fp32, the scale layout read from its shape: one element (per tensor), (rows, 1) (per row),
    (1, cols) (per column), (rows, ceil(cols/128)) (1x128) or (ceil(rows/128), ceil(cols/128)) (128x128)."""
    x = q.float()
    if scale.numel() == 1:
        return x * scale.float().reshape(())
    _check2(q)
    rows, cols = q.shape
    s = scale.float()
    if tuple(s.shape) in ((rows, 1), (1, cols)):
        return x * s
    cb = -(-cols // BLOCK)
    if tuple(s.shape) == (rows, cb):
        return x * expand_blocks(s, rows, cols, 1, BLOCK)
    if tuple(s.shape) == (-(-rows // BLOCK), cb):
        return x * expand_blocks(s, rows, cols, BLOCK, BLOCK)
    raise ValueError(f"scale shape {tuple(s.shape)} does not fit q of shape {(rows, cols)}: expected one element, "
                     f"{(rows, 1)}, {(1, cols)}, {(rows, cb)} or {(-(-rows // BLOCK), cb)}")
