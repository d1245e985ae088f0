"""User-facing bandwidth ops on torch tensors, built on TMA (``tk.ops``).

    import tmakit as tk
    tk.ops.copy(src, dst)                      # dst[...] = src
    y = tk.ops.transpose(x, 0, 1)              # contiguous x.transpose(0, 1)
    y = tk.ops.permute(x, (0, 3, 1, 2))        # contiguous x.permute(...)
    tk.ops.reduce_into(dst, src, op="add")     # dst = dst (op) src: TMA load-combine-store or store-reduce

Every op is one kernel launch of TMA loads into shared memory and TMA stores or store-reduces out of it: persistent,
pipelined CTAs (a ring of stages) for copies and store-reduce, or -- where that measured faster on an H200 -- one short
CTA per tile handed out by the hardware (transposes, the combine reduce from 32 MiB; docs/PERFORMANCE.md says which
shape each op takes and why). What TMA can describe: CUDA tensors on a Hopper GPU, 16-byte-aligned base addresses
(128-byte for the transposing path), at most 5 dimensions after merging contiguous ones, one unit-stride dimension in
each tensor, every other stride a multiple of 16 bytes, no broadcast (stride 0) dims. When a call falls outside that
(or the dtypes differ, or no GPU runtime is present), the op **falls back to the equivalent torch code** and records why
in :data:`last_path`; pass ``strict=True`` to get a ``ValueError`` naming the reason instead. A source and destination
that share memory (other than as the very same view) are refused with ``ValueError`` whatever the path
(``tmakit.memory_overlap`` decides exactly). Autograd: with grad mode on and an input requiring grad, ``transpose`` /
``permute`` (without ``out``) are differentiable (custom ops of ``tmakit.ops_library``; the backward is the inverse
permute, on TMA too); ``copy``, ``reduce_into`` and ``out=`` calls run torch's op, which records the graph (or raises
where torch does). Devices and
threads: the ops launch on the tensors' device (switching to it when another is current) and its current stream;
threads may share the cached launchers (each patches and launches under its launcher's lock). ``torch.compile``:
while it traces, each op is the custom op ``torch.ops.tmakit.*`` (``tmakit.ops_library``), which stays in the compiled
graph (no graph break) and runs the eager op at run time.

torch is imported lazily: ``import tmakit`` does not need it.
"""

from __future__ import annotations

import contextlib
import sys

from .memory_overlap import Region, byte_extent, relation, self_overlap
from .ops_gemm import gemm  # noqa: E402,F401  (torch is imported lazily inside)

__all__ = ["copy", "transpose", "permute", "reduce_into", "gemm", "last_path", "REDUCE_OPS"]

REDUCE_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")

#: How the last op ran: ``"tma:flat"`` / ``"tma:bulk"`` (contiguous copies: tensor maps / non-tensor bulk copies),
#: ``"tma:strided"``, ``"tma:transpose"``, ``"tma:combine"`` (reduce_into's load-combine-store) or
#: ``"torch:<reason>"`` (the fallback ran) or ``"none:src is dst"`` (a copy onto itself: nothing to do).
last_path: str = ""


def _torch():
    try:
        import torch
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("tmakit.ops needs torch (pip install torch)") from e
    return torch


def _check_tensor(name, t):
    global _is_compiling
    torch = _torch()
    _is_compiling = torch.compiler.is_compiling
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


def _current_device() -> int:
    global _get_device
    if _get_device is None:
        _get_device = _torch()._C._cuda_getDevice
    return _get_device()


_get_device = None  # torch._C._cuda_getDevice once torch is in use


def _on_device(dev: int):
    """``torch.cuda.device(dev)`` when ``dev`` is another GPU than the current one, else a no-op: kernels load and
    launch in the context of the tensors' device, on that device's current stream (as torch's own ops do)."""
    if dev < 0 or dev == _current_device():
        return contextlib.nullcontext()
    return _torch().cuda.device(dev)


def _compiling() -> bool:
    """Whether torch.compile is tracing this call (then the ops go through ``tmakit.ops_library``'s custom ops).
    ``torch.compiler.is_compiling`` is kept once an op has run eagerly (it sits on every call's path)."""
    f = _is_compiling
    if f is None:
        t = sys.modules.get("torch")
        return t is not None and t.compiler.is_compiling()
    return f()


_is_compiling = None  # torch.compiler.is_compiling, set by the first checked call (_check_tensor)


def _recording(*ts) -> str:
    """A fallback reason when autograd records this call (grad mode on, a tensor requires grad), else ''. In-place
    TMA writes would be invisible to autograd; torch's op keeps the graph (and raises where torch would)."""
    if any(t.requires_grad for t in ts) and _torch().is_grad_enabled():
        return "autograd is recording (a tensor requires grad): torch's op keeps the graph"
    return ""


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
    (``strict=True``: raises ``ValueError`` with the reason).

    Aliasing (checked exactly, from addresses and strides): ``src`` and ``dst`` sharing any byte raise ``ValueError``
    (TMA moves tiles in no fixed order), as does a ``dst`` that writes one address twice; disjoint interleaved views
    (``x[:, ::2]`` into ``x[:, 1::2]``) run on TMA; ``src`` being exactly ``dst`` is a no-op.
    """
    global last_path
    if _compiling():
        if _recording(src, dst):
            return dst.copy_(src)
        from . import ops_library

        return ops_library.copy(src, dst, strict)
    try:
        sp, dp = src.data_ptr(), dst.data_ptr()
        key = (_COPY, src.shape, src.stride(), src.dtype, src.get_device(), dst.shape, dst.stride(), dst.dtype,
               dst.get_device(), (sp | dp) & 127)
        run = _fast.get(key) if _fast and _cfg_state() == _fast_cfg else None
    except Exception:  # not tensors: the checks below say so
        key = run = None
    if run is not None and _fast_ok(run, sp, dp, src, dst, key[4]):
        last_path = run[0].path
        return dst
    run = _copy_run(src, dst, strict)
    if run is not None and key is not None:
        _remember(key, run, src, dst)
    return dst


def _copy_run(src, dst, strict):
    """The checked copy; returns the launcher that ran, or None after the torch fallback."""
    _check_tensor("src", src)
    _check_tensor("dst", dst)
    if tuple(src.shape) != tuple(dst.shape):
        raise ValueError(f"copy: shapes differ: src {tuple(src.shape)} vs dst {tuple(dst.shape)}")
    reason = _aliasing("copy", src, dst)
    if reason == "same" and not _recording(src, dst):
        _set_path("none:src is dst")
        return None
    reason = ("" if reason == "same" else reason) or _recording(src, dst) or _gpu_reason(src, dst)
    if not reason:
        bw = _bandwidth()
        with _on_device(src.get_device()):
            run = bw.launcher_for(src, dst)
            if isinstance(run, bw.Launcher):
                run(src.data_ptr(), dst.data_ptr())
                _set_path(run.path)
                return run
        reason = run.reason
    _fallback(reason, strict, lambda: dst.copy_(src))
    return None


# ------------------------------------------------------------------------------------------------------------------
# fast path: after a call has been checked, planned and launched once, later calls with the same layouts (shape,
# strides, dtype, device, op arguments, address alignment mod 128) go straight to its launcher. The cache is keyed
# on everything the plan depends on and is dropped when a bandwidth config object is replaced; fallbacks are never
# cached (they take the checked path every time, with the same errors and reasons).

_COPY, _PERMUTE, _TRANSPOSE, _REDUCE = range(4)
_fast: dict = {}  # key -> (Launcher, src lo, src hi, dst lo, dst hi): the byte extents around each base address
_out_shape: dict = {}  # (op, x layout, dims) -> shape of the contiguous output
_fast_cfg: tuple = ()  # the bandwidth configs the cached launchers were planned with
_bw = None


def _bandwidth():
    global _bw
    if _bw is None:
        from .kernels import bandwidth

        _bw = bandwidth
    return _bw


def _cfg_state() -> tuple:
    bw = _bw
    return (bw.COPY_CONFIG, bw.REDUCE_CONFIG, bw.TRANSPOSE_CONFIG, tuple(bw.TRANSPOSE_CONFIG.values()))


def _remember(key, run, src, dst) -> None:
    global _fast_cfg
    st = _cfg_state()
    if st != _fast_cfg or len(_fast) >= 4096:
        _fast.clear()
        _out_shape.clear()
        _fast_cfg = st
    s, d = Region.of(src), Region.of(dst)
    _fast[key] = (run, *byte_extent(s.shape, s.strides, s.elem), *byte_extent(d.shape, d.strides, d.elem))


def _fast_ok(entry, sp: int, dp: int, src, dst, dev: int) -> bool:
    """Launch a cached launcher and return True, unless these tensors need the checked path: autograd recording
    (requires_grad), or byte extents that intersect at these addresses with a shared byte (interleaved views with
    no shared byte still run). Launches on ``dev`` (a ``get_device()`` index) when another device is current."""
    if src.requires_grad or dst.requires_grad:
        return False
    if not (sp + entry[2] <= dp + entry[3] or dp + entry[4] <= sp + entry[1]) and \
            relation(Region.of(src), Region.of(dst)) != "disjoint":
        return False
    if dev < 0 or dev == _current_device():  # the common case without a context manager (hot path)
        entry[0](sp, dp)
    else:
        with _on_device(dev):
            entry[0](sp, dp)
    return True


def _aliasing(what: str, src, dst) -> str:
    """'' when ``src`` and ``dst`` are safe to run, ``"same"`` for identical views, a fallback reason when the test
    cannot decide; raises ``ValueError`` for shared bytes or a destination that writes an address twice."""
    if src.device != dst.device:
        return ""
    d = Region.of(dst)
    selfo = self_overlap(d)
    if selfo:
        raise ValueError(f"{what}: the destination writes some addresses more than once (shape {d.shape}, strides "
                         f"{tuple(dst.stride())}): write into a tensor whose elements do not share memory")
    rel = relation(Region.of(src), d)
    if rel == "overlap":
        raise ValueError(f"{what}: source and destination overlap in memory; TMA moves tiles in no fixed order, so "
                         f"the result would depend on scheduling: pass a clone of the source (src.clone())")
    if rel == "same":
        return "same" if src.dtype == dst.dtype else "source and destination are one memory read as two dtypes"
    if rel == "unknown" or selfo is None:
        return "cannot prove that source and destination do not share memory"
    return ""


def _view_op(tag, x, arg, out, strict, make_view):
    """transpose/permute: the cached launcher for (x layout, arg, out layout, alignment), else the checked path;
    with autograd recording and no ``out``, a differentiable op whose backward is the inverse permute."""
    global last_path
    compiling = _compiling()
    if compiling or (out is None and getattr(x, "requires_grad", False) and _torch().is_grad_enabled()):
        make_view()  # the argument checks
        n = max(x.dim(), 1)
        perm = [int(d) % n for d in arg]
        if tag == _TRANSPOSE:
            perm, (a, b) = list(range(x.dim())), perm
            perm[a], perm[b] = perm[b], perm[a]
        if out is not None and _recording(x, out):
            return out.copy_(x.permute(perm))
        from . import ops_library

        return ops_library.permute(x, perm, out, strict)
    try:
        xk = (tag, x.shape, x.stride(), x.dtype, x.get_device(), arg)
        ok = _fast and _cfg_state() == _fast_cfg
        shape = _out_shape.get(xk) if ok and out is None else None
    except Exception:  # not a tensor, unhashable arg: the checks below say so
        ok, shape = False, None
    if shape is not None:
        out = x.new_empty(shape)
    run = None
    if ok and out is not None:
        try:
            sp, dp = x.data_ptr(), out.data_ptr()
            key = (xk, out.shape, out.stride(), out.dtype, out.get_device(), (sp | dp) & 127)
            run = _fast.get(key)
        except Exception:  # out is not a tensor: _out_for says so
            run = None
    if run is not None and _fast_ok(run, sp, dp, x, out, xk[4]):
        last_path = run[0].path
        return out
    _check_tensor("x", x)
    v = make_view()
    out = _out_for(x, v.shape, out)
    run = _copy_run(v, out, strict)
    if run is not None:
        try:
            sp, dp = x.data_ptr(), out.data_ptr()
            key = ((tag, x.shape, x.stride(), x.dtype, x.get_device(), arg), out.shape, out.stride(), out.dtype,
                   out.get_device(), (sp | dp) & 127)
            hash(key)
        except TypeError:  # an unhashable arg (e.g. a list of dims): no fast path
            return out
        _remember(key, run, v, out)
        _out_shape[key[0]] = tuple(v.shape)
    return out


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
    return _view_op(_TRANSPOSE, x, (dim0, dim1), out, strict, lambda: x.transpose(dim0, dim1))


def permute(x, dims, *, out=None, strict: bool = False):
    """``x.permute(dims)`` materialised contiguously (or into ``out``) with TMA; see :func:`copy`.

    A permutation that keeps the last dimension last is a pure TMA copy (the destination map carries the permuted
    strides); one that moves it goes through the shared-memory transpose kernel.
    """
    def view():
        d = tuple(int(i) for i in dims)
        if sorted(i % max(x.dim(), 1) for i in d) != list(range(x.dim())):
            raise ValueError(f"permute: {d} is not a permutation of {x.dim()} dims")
        return x.permute(d)

    try:
        arg = dims if dims.__class__ is tuple else tuple(dims)
    except TypeError:
        arg = dims
    return _view_op(_PERMUTE, x, arg, out, strict, view)


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
      f32 f16 bf16 s32 u32 s64 u64, and/or/xor on any integer type. bf16 add uses ``add.rn.bf16x2`` (one rounding
      of the exact sum: bit-identical to torch's fp32 add + round). From 32 MiB to 1 GiB the kernel launches with
      programmatic dependent launch: it may start while the stream's previous kernel drains and waits in-kernel
      (``griddepcontrol.wait``) before reading, so back-to-back calls overlap.

    ``method="auto"`` takes the path ``bandwidth.REDUCE_CONFIG.engine`` names (``"bulk"`` = combine) where it
    applies, else the other; :data:`last_path` says which ran (``tma:combine``, ``tma:flat``/``tma:strided`` for
    store-reduce). Other cases (float64, a transposing layout pair, what neither path can describe) fall back to the
    torch op (``strict=True``: ``ValueError``, or ``TmaDescriptorError`` when ``method="store-reduce"`` names an
    op/dtype pair the hardware lacks). ``ValueError`` for an unknown op or method, mismatched shapes, or ``src`` and
    ``dst`` sharing memory other than as the very same view (``reduce_into(x, x)`` is fine: each element is read
    before it is written; a shifted view such as ``reduce_into(x[1:], x[:-1])`` is refused), see :func:`copy`.
    """
    global last_path
    if _compiling():
        if _recording(src, dst):
            return _torch_reduce(dst, src, op)
        from . import ops_library

        return ops_library.reduce_into(dst, src, op, method, strict)
    try:
        sp, dp = src.data_ptr(), dst.data_ptr()
        key = (_REDUCE, dst.shape, dst.stride(), dst.dtype, dst.get_device(), src.shape, src.stride(), src.dtype,
               src.get_device(), (sp | dp) & 127, op, method)
        run = _fast.get(key) if _fast and _cfg_state() == _fast_cfg else None
    except Exception:  # not tensors, an unhashable op: the checks below say so
        key = run = None
    if run is not None and _fast_ok(run, sp, dp, src, dst, key[4]):
        last_path = run[0].path
        return dst
    run = _reduce_run(dst, src, op, method, strict)
    if run is not None and key is not None:
        _remember(key, run, src, dst)
    return dst


def _reduce_run(dst, src, op, method, strict):
    """The checked reduce_into; returns the launcher that ran, or None after the torch fallback."""
    _check_tensor("dst", dst)
    _check_tensor("src", src)
    from .tma.reduce_rules import check_reduce, reduce_op_name

    op = reduce_op_name(op)
    if method not in ("auto", "store-reduce", "combine"):
        raise ValueError(f"reduce_into: method must be 'auto', 'store-reduce' or 'combine', got {method!r}")
    if tuple(src.shape) != tuple(dst.shape):
        raise ValueError(f"reduce_into: shapes differ: dst {tuple(dst.shape)} vs src {tuple(src.shape)}")
    reason = _aliasing("reduce_into", src, dst)  # "same" (dst = dst op dst) is safe: each tile reads before it writes
    reason = ("" if reason == "same" else reason) or _recording(src, dst) or _gpu_reason(src, dst)
    if not reason:
        from .tma.dtypes import tma_dtype
        from .tma.errors import TmaDescriptorError
        from .tma.tensormap import DataType

        bw = _bandwidth()
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
            with _on_device(src.get_device()):
                run = bw.launcher_for(src, dst, op=opi, dtype=dt, allow_transpose=False, engine=engine)
                if isinstance(run, bw.Launcher) and (engine == "tensor" or run.kind == "combine"):
                    run(src.data_ptr(), dst.data_ptr())
                    _set_path(run.path)
                    return run
            reason = run.reason if not isinstance(run, bw.Launcher) else "combine needs contiguous tensors"
    _fallback(reason, strict, lambda: _torch_reduce(dst, src, op))
    return None
