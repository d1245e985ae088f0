"""copy, transpose, permute and reduce_into: the eager implementations behind ``tk.ops`` (see its docstring).

Each op first looks for a cached launcher (``fast_path``), else runs the checked path: argument and aliasing checks,
the reason TMA cannot run it (then the torch fallback), planning and launching through ``tmakit.kernels.bandwidth``.
While torch.compile traces, or autograd records a differentiable call, an op calls its custom op
(``torch.ops.tmakit.*``, registered by ``tmakit.ops.library``, which ``tmakit.ops`` imports).
"""

from __future__ import annotations

from ..memory_overlap import Region, relation, self_overlap
from . import fast_path
from .common import check_tensor, compiling, current_device, on_device, recording, set_path, state, torch_module
from .fast_path import COPY, PERMUTE, REDUCE, TRANSPOSE, bandwidth, fresh, note_objects, remember, remember_fresh

__all__ = ["copy", "transpose", "permute", "reduce_into", "reduce_dtype", "torch_reduce", "REDUCE_OPS"]

REDUCE_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")
_get = fast_path.get
_object = fast_path.objects.get  # objects is cleared, never rebound
_take_route = fast_path.take_route
_fresh_route = fast_path.fresh_routes.get
_launch = fast_path.launch


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
        from .. import cuda as tkc
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
        torch = torch_module()
        try:
            ok = tkc.is_available() and torch.cuda.get_device_capability(dev) >= (9, 0)
        except Exception:
            ok = False
        _gpu_cache[dev] = ok
    return ok


def _fallback(reason: str, strict: bool, fn):
    if strict:
        raise ValueError(f"TMA cannot run this op: {reason}")
    set_path("torch:" + reason)
    return fn()


def copy(src, dst, *, strict: bool = False):
    """``dst[...] = src`` through TMA; returns ``dst``.

    ``src`` and ``dst`` must have the same shape (``ValueError`` otherwise); 1–5 dims after merging contiguous ones.
    Contiguous pairs run as a flat byte stream (2-D view plus a rank-1 tail box, one kernel); pairs that share their
    unit-stride dim run as a strided TMA copy (any other strides, e.g. ``permute`` keeping the last dim); pairs whose
    unit-stride dims differ run the shared-memory transpose kernel (TMA; where TMA cannot describe the rows -- a
    stride that is not a multiple of 16 bytes, a base off 16 or 128 bytes -- a plain-load kernel, path
    ``plain:transpose``, for up to one batch dim). Anything else falls back to ``dst.copy_(src)`` (``strict=True``:
    raises ``ValueError`` with the reason).

    Aliasing (checked exactly, from addresses and strides): ``src`` and ``dst`` sharing any byte raise ``ValueError``
    (TMA moves tiles in no fixed order), as does a ``dst`` that writes one address twice; disjoint interleaved views
    (``x[:, ::2]`` into ``x[:, 1::2]``) run on TMA; ``src`` being exactly ``dst`` is a no-op.
    """
    if compiling():
        if recording(src, dst):
            return dst.copy_(src)
        torch_module().ops.tmakit.copy_(src, dst, strict)
        return dst
    try:  # the same tensor objects as an earlier call, still with its layouts (fast_path.objects)
        hit = _object((COPY, id(src), id(dst)))
        ok = hit is not None and hit[0](src, dst)
    except Exception:
        ok = False
    if ok:
        sp, dp, run = src.data_ptr(), dst.data_ptr(), hit[1]
        if (sp | dp) & 127 == hit[2] and (sp + run[2] <= dp + run[3] or dp + run[4] <= sp + run[1]) \
                and (run[5] or src.get_device() == current_device()):
            run[0](sp, dp)
            state.path = run[6]
            return dst
    try:
        sp, dp, dev = src.data_ptr(), dst.data_ptr(), src.get_device()
        key = (COPY, src.shape, src.stride(), src.dtype, dev, dst.shape, dst.stride(), dst.dtype, dst.get_device(),
               (sp | dp) & 127)
        run = _get(key)
    except Exception:  # not tensors: the checks below say so
        key = run = None
    if run is not None:
        if (sp + run[2] <= dp + run[3] or dp + run[4] <= sp + run[1]) and (run[5] or dev == current_device()) \
                and not (src.requires_grad or dst.requires_grad):  # fast_path.launch's common case, inlined
            run[0](sp, dp)
            state.path = run[6]
            note_objects((COPY, id(src), id(dst)), run, (sp | dp) & 127, src, dst)
            return dst
        if _launch(run, sp, dp, src, dst, dev):
            return dst
    elif key is not None and not strict and _take_route(key, sp, dp, src, dst) is not None:
        dst.copy_(src)
        return dst
    run = _copy_run(src, dst, strict)
    if run is not None and key is not None:
        remember(key, run, src, dst)
    return dst


def _copy_run(src, dst, strict):
    """The checked copy; returns the launcher that ran, a ``fast_path.TorchRoute`` after a fallback the layouts
    decide, or None after any other fallback."""
    check_tensor("src", src)
    check_tensor("dst", dst)
    if tuple(src.shape) != tuple(dst.shape):
        raise ValueError(f"copy: shapes differ: src {tuple(src.shape)} vs dst {tuple(dst.shape)}")
    reason = _aliasing("copy", src, dst)
    if reason == "same" and not recording(src, dst):
        set_path("none:src is dst")
        return None
    reason = ("" if reason == "same" else reason) or recording(src, dst)
    keyed = not reason  # from here on the reason depends on the layouts, dtypes and devices alone
    reason = reason or _gpu_reason(src, dst)
    if not reason:
        bw = bandwidth()
        with on_device(src.get_device()):
            run = bw.launcher_for(src, dst)
            if isinstance(run, bw.Launcher):
                run(src.data_ptr(), dst.data_ptr())
                set_path(run.path)
                return run
        reason = run.reason
    _fallback(reason, strict, lambda: dst.copy_(src))
    return fast_path.TorchRoute("torch:" + reason) if keyed else None


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
    if compiling() or (out is None and getattr(x, "requires_grad", False) and torch_module().is_grad_enabled()):
        make_view()  # the argument checks
        n = max(x.dim(), 1)
        perm = [int(d) % n for d in arg]
        if tag == TRANSPOSE:
            perm, (a, b) = list(range(x.dim())), perm
            perm[a], perm[b] = perm[b], perm[a]
        if out is not None and recording(x, out):
            return out.copy_(x.permute(perm))
        if out is None:
            return torch_module().ops.tmakit.permute(x, perm, strict)
        torch_module().ops.tmakit.permute_out(x, perm, out, strict)
        return out
    if out is None:
        try:  # the same tensor object as an earlier call, still with its layout (fast_path.objects)
            seen = _object((tag, id(x), arg))
            ok = seen is not None and seen[0](x)
        except Exception:
            ok = False
        if ok:
            sp, hit = x.data_ptr(), seen[1]
            if sp & 127 == seen[2]:  # a new output: nothing can overlap it
                out = x.new_empty(hit[1])
                if len(hit) == 2:  # a fast_path.fresh_routes entry: torch's op
                    out.copy_(make_view())
                    state.path = hit[0]
                    return out
                dp = out.data_ptr()
                if dp & 127 == hit[2] and (hit[3] or x.get_device() == current_device()):
                    hit[0](sp, dp)
                    state.path = hit[4]
                    return out
    try:
        sp, dev = x.data_ptr(), x.get_device()
        xk = (tag, x.shape, x.stride(), x.dtype, dev, arg)
        hit = fresh.get((xk, sp & 127)) if out is None else None
    except Exception:  # not a tensor, unhashable arg: the checks below say so
        xk = hit = None
    if hit is not None:  # a new output: nothing can overlap it
        out = x.new_empty(hit[1])
        dp = out.data_ptr()
        if dp & 127 == hit[2] and (hit[3] or dev == current_device()):
            hit[0](sp, dp)
            state.path = hit[4]
            note_objects((tag, id(x), arg), hit, sp & 127, x)
            return out
    elif xk is not None and out is None and not strict:
        r = _fresh_route((xk, sp & 127))
        if r is not None:
            out = x.new_empty(r[1])
            out.copy_(make_view())
            state.path = r[0]
            note_objects((tag, id(x), arg), r, sp & 127, x)
            return out
    run = None
    if xk is not None and out is not None:
        try:
            dp = out.data_ptr()
            key = (xk, out.shape, out.stride(), out.dtype, out.get_device(), (sp | dp) & 127)
            run = _get(key)
        except Exception:  # out is not a tensor: _out_for says so
            run = key = None
        if run is None and key is not None and not strict and _take_route(key, sp, dp, x, out) is not None:
            out.copy_(make_view())
            return out
    if run is not None and _launch(run, sp, dp, x, out, dev):
        return out
    check_tensor("x", x)
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
        remember(key, run, v, out)
        if out.is_contiguous():  # the layout a new output gets: later calls without out may take it
            remember_fresh((key[0], sp & 127), run, tuple(v.shape), dp & 127)
    return out


def _out_for(x, shape, out):
    torch = torch_module()
    if out is None:
        return torch.empty(shape, dtype=x.dtype, device=x.device)
    check_tensor("out", out)
    if tuple(out.shape) != tuple(shape):
        raise ValueError(f"out has shape {tuple(out.shape)}, expected {tuple(shape)}")
    return out


def transpose(x, dim0: int = 0, dim1: int = 1, *, out=None, strict: bool = False):
    """``x.transpose(dim0, dim1)`` materialised contiguously (or into ``out``) with TMA; see :func:`copy`."""
    return _view_op(TRANSPOSE, x, (dim0, dim1), out, strict, lambda: x.transpose(dim0, dim1))


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
    return _view_op(PERMUTE, x, arg, out, strict, view)


def torch_reduce(dst, src, op):
    torch = torch_module()
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
    if op in ("inc", "dec"):  # through int64 where narrower: torch has no comparisons of uint32 on CUDA
        _check_integer_operands(op, dst, src)
        d, s = (dst.to(torch.int64), src.to(torch.int64)) if dst.element_size() <= 4 else (dst, src)
        if op == "inc":  # PTX: d = (d >= s) ? 0 : d + 1
            return dst.copy_(torch.where(d >= s, torch.zeros_like(d), d + 1))
        return dst.copy_(torch.where((d == 0) | (d > s), s, d - 1))  # PTX dec: d = (d == 0 || d > s) ? s : d - 1
    raise ValueError(op)


def _check_integer_operands(op: str, dst, src) -> None:
    """inc / dec are integer ops (PTX ``red.inc`` / ``red.dec``): a floating or bool operand has no meaning there
    (comparing a float ``src`` after truncation would silently change the user's values)."""
    for name, t in (("dst", dst), ("src", src)):
        if t.dtype.is_floating_point or t.dtype.is_complex or t.dtype == torch_module().bool:
            raise ValueError(f"reduce_into: {op} is an integer op (PTX .{op}: d = "
                             f"{'(d >= s) ? 0 : d + 1' if op == 'inc' else '(d == 0 || d > s) ? s : d - 1'}), got "
                             f"{name} of {t.dtype}; pass integer tensors (e.g. {name}.to(torch.int32))")


def reduce_dtype(op: str, dst):
    """The TMA data type a reduction of ``dst``'s dtype runs as (bitwise ops: the sign does not matter, and INT64
    maps raised an illegal instruction on H200, so they run unsigned)."""
    from ..tma.dtypes import tma_dtype
    from ..tma.tensormap import DataType

    dt = tma_dtype(dst.dtype)
    if op in ("and", "or", "xor"):
        dt = {4: DataType.UINT32, 8: DataType.UINT64}.get(dst.element_size(), dt)
    return dt


def reduce_into(dst, src, op: str = "add", *, method: str = "auto", strict: bool = False):
    """``dst = dst (op) src`` element-wise with TMA; returns ``dst``.

    ``op``: add, min, max, inc, dec, and, or, xor (PTX semantics; inc/dec wrap as PTX defines). Two TMA paths:

    - ``"store-reduce"``: TMA loads of ``src``, ``cp.reduce.async.bulk.tensor`` into ``dst``; the L2 does the
      read-modify-write, each element update a relaxed atomic at GPU scope (safe against concurrent writers of
      ``dst``). Hardware ops: add u32 s32 u64 f32 f16 bf16; min/max u32 s32 u64 s64 f16 bf16; inc/dec u32;
      and/or/xor 32/64-bit integers (``tmakit.tma.reduce_rules``). Any layout :func:`copy` can describe whose
      rows (contiguous pairs: the whole size) end on a 16-byte unit: a map updates whole units (docs/HARDWARE.md
      §3).
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
    op/dtype pair the hardware lacks). ``ValueError`` for an unknown op or method, mismatched shapes, inc/dec on a
    floating or bool tensor (integer ops: a float ``src`` is not truncated behind your back), or ``src`` and ``dst``
    sharing memory other than as the very same view (``reduce_into(x, x)`` is fine: each element is read before it
    is written; a shifted view such as ``reduce_into(x[1:], x[:-1])`` is refused), see :func:`copy`.
    """
    if compiling():
        if recording(src, dst):
            return torch_reduce(dst, src, op)
        torch_module().ops.tmakit.reduce_into_(dst, src, op, method, strict)
        return dst
    try:  # the same tensor objects as an earlier call, still with its layouts (fast_path.objects)
        hit = _object((REDUCE, id(dst), id(src), op, method))
        ok = hit is not None and hit[0](dst, src)
    except Exception:
        ok = False
    if ok:
        sp, dp, run = src.data_ptr(), dst.data_ptr(), hit[1]
        if (sp | dp) & 127 == hit[2] and (sp + run[2] <= dp + run[3] or dp + run[4] <= sp + run[1]) \
                and (run[5] or dst.get_device() == current_device()):
            run[0](sp, dp)
            state.path = run[6]
            return dst
    try:
        sp, dp, dev = src.data_ptr(), dst.data_ptr(), dst.get_device()
        key = (REDUCE, dst.shape, dst.stride(), dst.dtype, dev, src.shape, src.stride(), src.dtype, src.get_device(),
               (sp | dp) & 127, op, method)
        run = _get(key)
    except Exception:  # not tensors, an unhashable op: the checks below say so
        key = run = None
    if run is not None:
        if (sp + run[2] <= dp + run[3] or dp + run[4] <= sp + run[1]) and (run[5] or dev == current_device()) \
                and not (src.requires_grad or dst.requires_grad):  # fast_path.launch's common case, inlined
            run[0](sp, dp)
            state.path = run[6]
            note_objects((REDUCE, id(dst), id(src), op, method), run, (sp | dp) & 127, dst, src)
            return dst
        if _launch(run, sp, dp, src, dst, dev):
            return dst
    elif key is not None and not strict:
        route = _take_route(key, sp, dp, src, dst)
        if route is not None:
            return torch_reduce(dst, src, route.op)
    run = _reduce_run(dst, src, op, method, strict)
    if run is not None and key is not None:
        remember(key, run, src, dst)
    return dst


def _reduce_run(dst, src, op, method, strict):
    """The checked reduce_into; returns the launcher that ran, a ``fast_path.TorchRoute`` after a fallback the
    layouts, dtypes and op decide, or None after any other fallback."""
    check_tensor("dst", dst)
    check_tensor("src", src)
    from ..tma.reduce_rules import check_reduce, reduce_op_name

    op = reduce_op_name(op)
    if method not in ("auto", "store-reduce", "combine"):
        raise ValueError(f"reduce_into: method must be 'auto', 'store-reduce' or 'combine', got {method!r}")
    if tuple(src.shape) != tuple(dst.shape):
        raise ValueError(f"reduce_into: shapes differ: dst {tuple(dst.shape)} vs src {tuple(src.shape)}")
    reason = _aliasing("reduce_into", src, dst)  # "same" (dst = dst op dst) is safe: each tile reads before it writes
    reason = ("" if reason == "same" else reason) or recording(src, dst)
    keyed = not reason  # from here on the reason depends on the layouts, dtypes, devices and op alone
    reason = reason or _gpu_reason(src, dst)
    if not reason:
        from ..tma.errors import TmaDescriptorError

        bw = bandwidth()
        opi = REDUCE_OPS.index(op)
        dt = reduce_dtype(op, dst)
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
            with on_device(src.get_device()):
                run = bw.launcher_for(src, dst, op=opi, dtype=dt, allow_transpose=False, engine=engine)
                if isinstance(run, bw.Launcher) and (engine == "tensor" or run.kind == "combine"):
                    run(src.data_ptr(), dst.data_ptr())
                    set_path(run.path)
                    return run
            reason = run.reason if not isinstance(run, bw.Launcher) else "combine needs contiguous tensors"
    _fallback(reason, strict, lambda: torch_reduce(dst, src, op))
    if not keyed:
        return None
    route = fast_path.TorchRoute("torch:" + reason)
    route.op = op
    return route
