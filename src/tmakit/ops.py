"""User-facing bandwidth ops on torch tensors, built on TMA (``tk.ops``).

    import tmakit as tk
    tk.ops.copy(src, dst)                      # dst[...] = src
    y = tk.ops.transpose(x, 0, 1)              # contiguous x.transpose(0, 1)
    y = tk.ops.permute(x, (0, 3, 1, 2))        # contiguous x.permute(...)
    tk.ops.reduce_into(dst, src, op="add")     # dst = dst (op) src, by TMA store-reduce

Every op moves data with one persistent, pipelined kernel (TMA loads into a ring of shared-memory stages, TMA stores or
store-reduces out of it). What TMA can describe: CUDA tensors on a Hopper GPU, 16-byte-aligned base addresses
(128-byte for the transposing path), at most 5 dimensions after merging contiguous ones, one unit-stride dimension in
each tensor, every other stride a multiple of 16 bytes, no broadcast (stride 0) dims. When a call falls outside that
(or the dtypes differ, or no GPU runtime is present), the op **falls back to the equivalent torch code** and records why
in :data:`last_path`; pass ``strict=True`` to get a ``ValueError`` naming the reason instead.

torch is imported lazily: ``import tmakit`` does not need it.
"""

from __future__ import annotations

from .ops_gemm import gemm  # noqa: E402,F401  (torch is imported lazily inside)

__all__ = ["copy", "transpose", "permute", "reduce_into", "gemm", "last_path", "REDUCE_OPS"]

REDUCE_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")

#: How the last op ran: ``"tma:flat"``, ``"tma:strided"``, ``"tma:transpose"`` or ``"torch:<reason>"``.
last_path: str = ""


def _torch():
    try:
        import torch
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("tmakit.ops needs torch (pip install torch)") from e
    return torch


def _check_tensor(name, t):
    torch = _torch()
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")


def _set_path(p: str) -> None:
    global last_path
    last_path = p


def _gpu_reason(src, dst) -> str:
    """'' when both tensors can go to the TMA kernels, else why not."""
    if not (src.is_cuda and dst.is_cuda):
        return "not CUDA tensors"
    if src.device != dst.device:
        return "tensors on different devices"
    if src.dtype != dst.dtype:
        return f"dtypes differ ({src.dtype} -> {dst.dtype})"
    if src.dtype.is_complex or src.element_size() not in (1, 2, 4, 8):
        return f"dtype {src.dtype} is not a TMA element type"
    try:
        from . import cuda as tkc
    except Exception as e:  # pragma: no cover
        return f"tmakit.cuda unavailable ({e})"
    if not _gpu_ok(tkc, src):
        return "the GPU runtime is unavailable or the device is older than sm_90"
    return ""


_gpu_cache: dict = {}


def _gpu_ok(tkc, t) -> bool:
    dev = t.device.index or 0
    ok = _gpu_cache.get(dev)
    if ok is None:
        torch = _torch()
        try:
            ok = tkc.is_available() and torch.cuda.get_device_capability(dev) >= (9, 0)
        except Exception:
            ok = False
        _gpu_cache[dev] = ok
    return ok


def _fallback(reason: str, strict: bool, fn):
    if strict:
        raise ValueError(f"TMA cannot run this op: {reason}")
    _set_path("torch:" + reason)
    return fn()


def copy(src, dst, *, strict: bool = False):
    """``dst[...] = src`` through TMA; returns ``dst``.

    ``src`` and ``dst`` must have the same shape (``ValueError`` otherwise); 1–5 dims after merging contiguous ones.
    Contiguous pairs run as a flat byte stream (2-D view plus a rank-1 tail box, one kernel); pairs that share their
    unit-stride dim run as a strided TMA copy (any other strides, e.g. ``permute`` keeping the last dim); pairs whose
    unit-stride dims differ run the shared-memory transpose kernel. Anything else falls back to ``dst.copy_(src)``
    (``strict=True``: raises ``ValueError`` with the reason). ``src`` and ``dst`` must not overlap.
    """
    _check_tensor("src", src)
    _check_tensor("dst", dst)
    if tuple(src.shape) != tuple(dst.shape):
        raise ValueError(f"copy: shapes differ: src {tuple(src.shape)} vs dst {tuple(dst.shape)}")
    reason = _gpu_reason(src, dst)
    if not reason:
        from .kernels import bandwidth as bw

        run = bw.launcher_for(src, dst)
        if isinstance(run, bw.Launcher):
            run(src.data_ptr(), dst.data_ptr())
            _set_path("tma:" + run.kind)
            return dst
        reason = run.reason
    return _fallback(reason, strict, lambda: dst.copy_(src))


def _out_for(x, shape, out):
    torch = _torch()
    if out is None:
        return torch.empty(shape, dtype=x.dtype, device=x.device)
    _check_tensor("out", out)
    if tuple(out.shape) != tuple(shape):
        raise ValueError(f"out has shape {tuple(out.shape)}, expected {tuple(shape)}")
    return out


def transpose(x, dim0: int = 0, dim1: int = 1, *, out=None, strict: bool = False):
    """``x.transpose(dim0, dim1)`` materialised contiguously (or into ``out``) with TMA; see :func:`copy`."""
    _check_tensor("x", x)
    v = x.transpose(dim0, dim1)
    return copy(v, _out_for(x, v.shape, out), strict=strict)


def permute(x, dims, *, out=None, strict: bool = False):
    """``x.permute(dims)`` materialised contiguously (or into ``out``) with TMA; see :func:`copy`.

    A permutation that keeps the last dimension last is a pure TMA copy (the destination map carries the permuted
    strides); one that moves it goes through the shared-memory transpose kernel.
    """
    _check_tensor("x", x)
    dims = tuple(int(d) for d in dims)
    if sorted(d % max(x.dim(), 1) for d in dims) != list(range(x.dim())):
        raise ValueError(f"permute: {dims} is not a permutation of {x.dim()} dims")
    v = x.permute(dims)
    return copy(v, _out_for(x, v.shape, out), strict=strict)


def _torch_reduce(dst, src, op):
    torch = _torch()
    if op == "add":
        return dst.add_(src)
    if op == "min":
        return torch.minimum(dst, src, out=dst)
    if op == "max":
        return torch.maximum(dst, src, out=dst)
    if op == "and":
        return dst.bitwise_and_(src)
    if op == "or":
        return dst.bitwise_or_(src)
    if op == "xor":
        return dst.bitwise_xor_(src)
    if op == "inc":  # PTX: d = (d >= s) ? 0 : d + 1
        return dst.copy_(torch.where(dst >= src, torch.zeros_like(dst), dst + 1))
    if op == "dec":  # PTX: d = (d == 0 || d > s) ? s : d - 1
        return dst.copy_(torch.where((dst == 0) | (dst > src), src, dst - 1))
    raise ValueError(op)


def reduce_into(dst, src, op: str = "add", *, method: str = "auto", strict: bool = False):
    """``dst = dst (op) src`` element-wise with TMA; returns ``dst``.

    ``op``: add, min, max, inc, dec, and, or, xor (PTX semantics; inc/dec wrap as PTX defines). Two TMA paths:

    - ``"store-reduce"``: TMA loads of ``src``, ``cp.reduce.async.bulk.tensor`` into ``dst``; the L2 does the
      read-modify-write, each element update a relaxed atomic at GPU scope (safe against concurrent writers of
      ``dst``). Hardware ops: add u32 s32 u64 f32 f16 bf16; min/max u32 s32 u64 s64 f16 bf16; inc/dec u32;
      and/or/xor 32/64-bit integers (``tmakit.tma.reduce_rules``). Any layout :func:`copy` can describe.
    - ``"combine"``: bulk TMA loads of both ``src`` and ``dst``, the op in registers (floats through fp32, rounded
      to nearest even, NaN-propagating min/max, like torch), bulk TMA stores (or ``st.global``, per
      ``bandwidth.REDUCE_CONFIG``). Not atomic: like torch's in-place ops. Contiguous pairs only; add/min/max on
      f32 f16 bf16 s32 u32 s64 u64, and/or/xor on any integer type.

    ``method="auto"`` takes the path ``bandwidth.REDUCE_CONFIG.engine`` names (``"bulk"`` = combine) where it
    applies, else the other; :data:`last_path` says which ran (``tma:combine``, ``tma:flat``/``tma:strided`` for
    store-reduce). Other cases (float64, a transposing layout pair, what neither path can describe) fall back to the
    torch op (``strict=True``: ``ValueError``, or ``TmaDescriptorError`` when ``method="store-reduce"`` names an
    op/dtype pair the hardware lacks). ``ValueError`` for an unknown op or method, or mismatched shapes.
    """
    _check_tensor("dst", dst)
    _check_tensor("src", src)
    from .tma.reduce_rules import check_reduce, reduce_op_name

    op = reduce_op_name(op)
    if method not in ("auto", "store-reduce", "combine"):
        raise ValueError(f"reduce_into: method must be 'auto', 'store-reduce' or 'combine', got {method!r}")
    if tuple(src.shape) != tuple(dst.shape):
        raise ValueError(f"reduce_into: shapes differ: dst {tuple(dst.shape)} vs src {tuple(src.shape)}")
    reason = _gpu_reason(src, dst)
    if not reason:
        from .kernels import bandwidth as bw
        from .tma.dtypes import tma_dtype
        from .tma.errors import TmaDescriptorError
        from .tma.tensormap import DataType

        opi = REDUCE_OPS.index(op)
        dt = tma_dtype(dst.dtype)
        if op in ("and", "or", "xor"):  # bitwise: the sign does not matter; INT64 maps raised an illegal
            dt = {4: DataType.UINT32, 8: DataType.UINT64}.get(dst.element_size(), dt)  # instruction on H200
        hw_err = None
        try:
            check_reduce(op, dt)
        except TmaDescriptorError as e:
            hw_err = e
        bitwise = op in ("and", "or", "xor")
        comb_ok = bw.bulk_supported(opi, dt) and not (bitwise and dst.dtype.is_floating_point)
        order = {"auto": ("bulk", "tensor") if bw.REDUCE_CONFIG.engine == "bulk" else ("tensor", "bulk"),
                 "store-reduce": ("tensor",), "combine": ("bulk",)}[method]
        for engine in order:
            if engine == "tensor" and hw_err is not None:
                reason = f"{op} on {dst.dtype} is not a TMA reduction ({hw_err.what})"
                if strict and method == "store-reduce":
                    raise hw_err
                continue
            if engine == "bulk" and not comb_ok:
                reason = f"combine has no {op} on {dst.dtype}"
                continue
            run = bw.launcher_for(src, dst, op=opi, dtype=dt, allow_transpose=False, engine=engine)
            if isinstance(run, bw.Launcher) and (engine == "tensor" or run.kind == "combine"):
                run(src.data_ptr(), dst.data_ptr())
                _set_path("tma:" + run.kind)
                return dst
            reason = run.reason if not isinstance(run, bw.Launcher) else "combine needs contiguous tensors"
    return _fallback(reason, strict, lambda: _torch_reduce(dst, src, op))
