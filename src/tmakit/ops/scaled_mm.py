"""``scaled_mm(a, b, scale_a, scale_b, *, bias=None, out_dtype=torch.bfloat16, out=None, strict=False)``: the FP8
GEMM ``(a @ b) * scales (+ bias)`` on Hopper with TMA + fp8 wgmma, mirroring ``torch._scaled_mm``.

a: (M, K) row-major float8 (e4m3fn or e5m2), b: (K, N) column-major float8 (``b = w.t()`` of a row-major (N, K)
``w``), fp32 scales: one element each (per tensor), scale_a (M, 1) and scale_b (1, N) (row-wise), as
``torch._scaled_mm``; or scale_a (M, ceil(K/128)) and scale_b (ceil(N/128), ceil(K/128)) (block-wise, DeepSeek-V3:
each 128-deep partial sum is scaled in fp32 registers, ``tmakit.ops.quantize`` makes these scales). ``bias`` (N,) of
the output dtype, added after the scales. Output bfloat16, float16 or float32. ``use_fast_accum`` as in
``torch._scaled_mm``: False (default) adds each 128-deep K block's tensor-core sum into an fp32 total (two-level
accumulation, accurate); True (tensor- and row-wise only) keeps one tensor-core accumulation over all of K (faster
tiles, the fp8 tensor cores' reduced accumulation precision throughout).

Arguments that mean nothing (shapes that do not compose, scale shapes of no mode, non-fp8 inputs) raise
``GemmError``. Where the kernel cannot take a valid call (CPU tensors, no GPU runtime, a row pitch that is not a
multiple of 16 bytes, a misaligned base, ...) the call falls back to ``torch._scaled_mm`` (tensor- and row-wise) or
to a dequantize + fp32 matmul reference (block-wise, and whatever ``torch._scaled_mm`` refuses), and
``tk.ops.last_path`` says ``"torch:<reason>"``; ``strict=True`` raises the reason as ``GemmError`` instead.
Without a tuning knob (``strict``, ``config``, ``split``), calls in a class of problems where ``torch._scaled_mm``
measured faster go to it too (:func:`slow_pitch`, :func:`slower_class`): the kernel runs block-wise scales, row-wise
fast accumulation, row-wise two-level accumulation from K = ROW_KERNEL_MIN_K and per-tensor two-level accumulation
on problems of at least 4 waves of 128x128 tiles with K <= 1536, except per-tensor calls whose rows are an odd
multiple of 16 bytes apart (cuBLAS; the kernel runs such rows on multicast clusters, ``gemm_fp8.multicast_config``).
The kernel's path is
``"tma:scaled_mm:<mode>"``. Under ``torch.compile`` the call is the custom op ``torch.ops.tmakit.scaled_mm``
(``scaled_mm_out`` with ``out``), which stays in the graph.
"""

from __future__ import annotations

from ..bounded import make_room
from ..kernels import gemm_fp8 as _k
from ..kernels.gemm import GemmError, check_compose, odd_pitch
from . import gemm_cublas as _cublas
from .common import check_tensor, compiling, current_device, on_device, set_path, state, torch_module
from .quantize import dequantize

__all__ = ["GemmError", "scaled_mm", "scaled_mm_reference", "slow_pitch", "slower_class"]

_plans: dict = {}
_buffers: dict = {}  # (device, stream) -> [workspace, flags, allocated while capturing] for split schedules
_retired: list = []  # replaced buffers: a CUDA graph captured earlier may still use their addresses


def _name(dt) -> str:
    return str(dt).rsplit(".", 1)[-1]


def _meaning(a, b, scale_a, scale_b, bias, out, out_dtype) -> str:
    """The scaling mode, after the checks whose failure no path could run (GemmError)."""
    if a.dim() != 2 or b.dim() != 2:
        raise GemmError(f"a and b must be 2-D, got shapes {tuple(a.shape)} and {tuple(b.shape)}")
    (m, k), (kb, n) = a.shape, b.shape
    check_compose(m, k, kb, n)
    for nm, t in (("a", a), ("b", b)):
        if _name(t.dtype) not in _k.FP8_DTYPES:
            raise GemmError(f"{nm}.dtype must be float8_e4m3fn or float8_e5m2, got {_name(t.dtype)}; quantize it "
                            "first (tmakit.ops.quantize)")
    for nm, s in (("scale_a", scale_a), ("scale_b", scale_b)):
        if _name(s.dtype) != "float32":
            raise GemmError(f"{nm} must be float32, got {_name(s.dtype)}")
    od = _name(out.dtype) if out is not None else _name(out_dtype)
    if od not in ("bfloat16", "float16", "float32"):
        raise GemmError(f"out_dtype must be bfloat16, float16 or float32, got {od}")
    if out is not None and tuple(out.shape) != (m, n):
        raise GemmError(f"out has shape {tuple(out.shape)}, expected {(m, n)}")
    if out is not None and _name(out.dtype) != _name(out_dtype):
        raise GemmError(f"out.dtype is {_name(out.dtype)} but out_dtype={_name(out_dtype)}; give one or make them "
                        "agree (no silent conversion)")
    if bias is not None and tuple(bias.shape) != (n,):
        raise GemmError(f"bias must have shape ({n},), got {tuple(bias.shape)}")
    return _k.scaling_of(m, n, k, tuple(scale_a.shape), tuple(scale_b.shape))


def scaled_mm_reference(a, b, scale_a, scale_b, bias=None, out_dtype=None):
    """Dequantize both operands, multiply in fp32, add the bias, convert: what every mode computes, without the
    fp8 tensor cores (the fallback where ``torch._scaled_mm`` has no such mode)."""
    torch = torch_module()
    out_dtype = out_dtype or torch.bfloat16
    m, k = a.shape
    n = b.shape[1]
    row = _k.scaling_of(m, n, k, tuple(scale_a.shape), tuple(scale_b.shape)) == "row"
    sb = scale_b.t() if row else scale_b  # w = b.t() (N, K): row-wise scales of w are scale_b.t() (N, 1)
    c = dequantize(a, scale_a) @ dequantize(b.t(), sb).t()
    if bias is not None:
        c = c + bias.float()
    return c.to(out_dtype)


_refused: dict = {}  # call kinds (_torch_kind) that torch._scaled_mm refused here (as keys)


def _fallback(torch, mode, a, b, scale_a, scale_b, bias, out_dtype, out, use_fast_accum):
    c = None
    if mode != "block" and not (_name(a.dtype) == _name(b.dtype) == "float8_e5m2"):
        if bias is not None and not bias.is_contiguous():  # torch 2.11 reads a strided bias as if contiguous
            bias = bias.contiguous()
        kw = dict(bias=bias, out_dtype=out_dtype, use_fast_accum=use_fast_accum)
        if out is not None and out.dtype == out_dtype and out.is_contiguous():
            try:
                return torch._scaled_mm(a, b, scale_a, scale_b, **kw, out=out)  # no copy of the result
            except (RuntimeError, NotImplementedError, TypeError, ValueError):
                pass  # a torch without the out= variant: a new result and a copy below
        try:
            c = torch._scaled_mm(a, b, scale_a, scale_b, **kw)
        except (RuntimeError, NotImplementedError, ValueError):
            c = None  # e.g. a layout, device or output type torch's kernel does not take: the reference below
            make_room(_refused, 4096)
            _refused[_torch_kind(mode, a, b, out_dtype, use_fast_accum, bias)] = True
    if c is None:
        c = scaled_mm_reference(a, b, scale_a, scale_b, bias, out_dtype)
    if out is None:
        return c
    out.copy_(c)
    return out


_device_reason: dict = {}  # device -> why the kernel cannot run there ('' if it can), asked once per device


def _why_not_kernel(torch, ts) -> str:
    """Why the kernel cannot run these tensors ('' if it can, as far as devices and autograd go)."""
    dev = ts[0].device
    if not all(t.is_cuda and t.device == dev for t in ts):
        return "not all tensors are CUDA tensors" if not all(t.is_cuda for t in ts) else "tensors on different devices"
    reason = _device_reason.get(dev)
    if reason is None:
        from tmakit import cuda as tkc

        if not tkc.is_available():
            reason = "no CUDA runtime for tmakit (driver or NVRTC missing)"
        elif torch.cuda.get_device_capability(dev) != (9, 0):
            reason = "not a Hopper (sm_90) GPU"
        else:
            reason = ""
        _device_reason[dev] = reason
    if not reason and any(t.requires_grad for t in ts) and torch.is_grad_enabled():
        return "autograd is recording (a tensor requires grad)"
    return reason


def _plan(a, b, scale_a, scale_b, bias, out, od, config, fast, split):
    key = tuple((tuple(t.shape), tuple(t.stride()), t.dtype, t.data_ptr()) if t is not None else None
                for t in (a, b, scale_a, scale_b, bias, out)) + (od, config, fast, split)
    p = _plans.get(key)
    if p is None:
        p = _k.plan_fp8(a, b, scale_a, scale_b, bias, out, od, config, fast, split)
        if len(_plans) > 1024:
            _plans.clear()
        _plans[key] = p
    return p


def _split_buffers(torch, sched, device):
    """(fp32 workspace, int32 flags) for a split schedule, per (device, stream), grown on demand and never freed. The
    kernel leaves the flags zeroed; flags allocated inside a CUDA-graph capture are zeroed again on each later use
    until one happens outside a capture (their memset ran only in that graph)."""
    key = (device, torch._C._cuda_getCurrentRawStream(device.index))
    got = _buffers.get(key)
    if got is None or got[0].numel() * 4 < sched.ws_bytes or got[1].numel() < sched.flag_count:
        if got is not None:
            _retired.append(got)
        old_ws, old_fl = (got[0].numel(), got[1].numel()) if got is not None else (0, 0)
        ws = torch.empty(max(sched.ws_bytes // 4, 2 * old_ws, 1), dtype=torch.float32, device=device)
        flags = torch.zeros(max(sched.flag_count, 2 * old_fl, 1), dtype=torch.int32, device=device)
        got = _buffers[key] = [ws, flags, torch.cuda.is_current_stream_capturing()]
    elif got[2]:
        got[1].zero_()
        got[2] = torch.cuda.is_current_stream_capturing()
    return got[0], got[1]


def slow_pitch(p) -> str:
    """Why ``torch._scaled_mm`` runs plan ``p`` faster, or '': per-tensor scales with rows of A or B an odd multiple
    of 16 bytes apart, where the kernel's TMA loads set its pace (docs/GEMM.md, "The cliff"): on multicast clusters
    (``gemm_fp8.multicast_config``) it still ran 0.91x cuBLAS on random such shapes, while row-wise it ran 1.25x
    torch's row-wise kernel (H200), so row-wise calls stay. Only shapes torch takes (K and N multiples of 16)."""
    if p.scaling != "tensor" or p.k % 16 or p.n % 16:
        return ""
    for name, ld, rows in (("a", p.lda, p.m), ("b", p.ldb, p.n)):
        if odd_pitch((ld, rows)):  # fp8: elements are bytes
            return (f"{name}'s rows are {ld} bytes apart, an odd multiple of 16: the kernel's TMA loads are slower "
                    f"there (torch._scaled_mm is not); strict=True or a config runs the kernel")
    return ""


ROW_KERNEL_MIN_K = 1024  # row-wise two-level: the kernel runs (by default) from this K (measured; see slower_class)
TENSOR_KERNEL_MIN_WAVES = 4  # per-tensor two-level: the kernel runs from this many waves of 128x128 tiles ...
TENSOR_KERNEL_MAX_K = 1536  # ... up to this K (measured; see slower_class)


def slower_class(p) -> str:
    """Why ``torch._scaled_mm`` runs plan ``p``'s class of problem faster, or '' (docs/GEMM.md "Where the FP8 kernel
    runs": ``tools/bench/fp8_route.py`` seeds 1 and 2, 180 random shapes on an H200, each timed against
    ``torch._scaled_mm`` with the same accumulation). With two-level accumulation the kernel is ahead of cuBLAS's
    per-tensor GEMM on at least 4 waves of 128x128 tiles with K <= 1536 (1.08x geomean, 13 shapes), at parity on 4+
    waves with a longer K (0.98x, 11 shapes) and behind on fewer waves (0.80x). Against torch's row-wise GEMM, with
    the epilogue's scales staged in shared memory (seeds 1-3, 270 shapes, H200): ahead from K = 2048 (1.17-1.26x
    geomean, 133 shapes) and at K in [1024, 2048) (1.03-1.07x, 57 shapes), nearly level below (1.01-1.03x, 80
    shapes, a third of them slower), where torch keeps the call; before the staging the kernel was behind below
    K = 2048 (0.95x). With fast accumulation the kernel is at parity on
    the suite but was behind cuBLAS on random shapes (0.85-0.87x geomean, H200), so per-tensor fast calls go to
    cuBLAS. Block scales (torch has no such GEMM), row-wise fast accumulation and e5m2 x e5m2 (torch has no kernel)
    stay."""
    if p.scaling == "block" or p.k % 16 or p.n % 16 or p.a_dtype == p.b_dtype == "float8_e5m2":
        return ""
    if p.scaling == "tensor":
        if p.fast_accum:
            return ("per-tensor scales with fast accumulation: torch._scaled_mm (cuBLAS) measured faster on random "
                    "shapes; strict=True or a config runs the kernel")
        waves = -(-p.m // 128) * -(-p.n // 128) / _k.gk.NUM_SMS
        if waves >= TENSOR_KERNEL_MIN_WAVES and p.k <= TENSOR_KERNEL_MAX_K:
            return ""
        return (f"per-tensor scales with two-level accumulation ({waves:.1f} waves of 128x128 tiles, K = {p.k}): "
                f"torch._scaled_mm (cuBLAS) measured faster outside {TENSOR_KERNEL_MIN_WAVES}+ waves with K <= "
                f"{TENSOR_KERNEL_MAX_K}; strict=True or a config runs the kernel")
    if p.fast_accum or p.k >= ROW_KERNEL_MIN_K:
        return ""
    return (f"row-wise scales with two-level accumulation and K = {p.k}: torch._scaled_mm measured faster below K = "
            f"{ROW_KERNEL_MIN_K}; strict=True or a config runs the kernel")


def scaled_mm(a, b, scale_a, scale_b, *, bias=None, out_dtype=None, out=None, use_fast_accum=False, strict=False,
              config=None, split=None):
    """``(a @ b) * scales (+ bias)`` for float8 ``a`` (M, K) row-major and ``b`` (K, N) column-major (module
    docstring: modes, accumulation, fallback, ``strict``). ``out_dtype`` defaults to bfloat16 (or ``out``'s dtype);
    ``config``: a name in ``tmakit.kernels.gemm_fp8.CONFIGS``, ``split``: K ranges per tile (tuning; default: the
    heuristics ``choose_config`` / ``choose_split``). Runs on the tensors' device and its current
    stream."""
    key = None
    if strict is False and config is None and split is None and not compiling():  # a default call: the cached path
        try:
            key = (a.shape, a.stride(), a.dtype, a.data_ptr(), b.shape, b.stride(), b.dtype, b.data_ptr(),
                   scale_a.shape, scale_a.stride(), scale_a.dtype, scale_a.data_ptr(), scale_b.shape,
                   scale_b.stride(), scale_b.dtype, scale_b.data_ptr(),
                   None if bias is None else (bias.shape, bias.stride(), bias.dtype, bias.data_ptr()),
                   None if out is None else (out.shape, out.stride(), out.dtype, out.data_ptr()), out_dtype,
                   use_fast_accum)
            run = _fast.get(key)
        except (AttributeError, TypeError):  # not tensors, unhashable arguments: the checks below say so
            key = run = None
        if run is not None and not (a.requires_grad or b.requires_grad or scale_a.requires_grad
                                    or scale_b.requires_grad) and a.get_device() == current_device():
            return run(a, b, scale_a, scale_b, bias, out)
    torch = torch_module()
    for nm, t in (("a", a), ("b", b), ("scale_a", scale_a), ("scale_b", scale_b)):
        check_tensor(nm, t)
    if out_dtype is None:
        out_dtype = out.dtype if out is not None else torch.bfloat16
    mode = _meaning(a, b, scale_a, scale_b, bias, out, out_dtype)
    if compiling():
        od = _name(out_dtype)
        fast = bool(use_fast_accum)
        if out is None:
            return torch.ops.tmakit.scaled_mm(a, b, scale_a, scale_b, bias, od, fast, strict, config, split)
        torch.ops.tmakit.scaled_mm_out(a, b, scale_a, scale_b, bias, out, od, fast, strict, config, split)
        return out
    ts = [t for t in (a, b, scale_a, scale_b, bias, out) if t is not None]
    reason = _why_not_kernel(torch, ts)
    p = None
    if not reason:
        try:
            p = _plan(a, b, scale_a, scale_b, bias, out, _name(out_dtype), config, bool(use_fast_accum), split)
        except GemmError as e:
            reason = str(e)
    if not reason and not strict and config is None and split is None:
        reason = slow_pitch(p) or slower_class(p)
    if reason:
        if strict:
            raise GemmError(f"scaled_mm cannot run on tmakit's kernel: {reason}")
        set_path(f"torch:{reason}")
        r = _fallback(torch, mode, a, b, scale_a, scale_b, bias, out_dtype, out, bool(use_fast_accum))
        if key is not None and p is not None:  # a CUDA call torch._scaled_mm took: the same call next time
            _remember(key, _routed_runner(torch, mode, a, b, scale_a, scale_b, bias, out, out_dtype,
                                          bool(use_fast_accum), state.path, key))
        return r
    if key is not None and a.get_device() == current_device():
        _remember(key, _kernel_runner(torch, p, out))
    if out is None:
        out = torch.empty((p.m, p.n), dtype=out_dtype, device=a.device)
    with on_device(a.get_device()):  # a context switch only when another device is current
        ws = flags = 0
        if _k.schedule(p).sk_units:
            w, f = _split_buffers(torch, _k.schedule(p), a.device)
            ws, flags = w.data_ptr(), f.data_ptr()
        _k.launcher(p, a.data_ptr(), b.data_ptr(), out.data_ptr(), scale_a.data_ptr(), scale_b.data_ptr(),
                    bias.data_ptr() if bias is not None else 0, ws, flags)()
    set_path(f"tma:scaled_mm:{p.scaling}")
    return out


_fast: dict = {}  # default-call layout (shapes, strides, dtypes, pointers, out_dtype, accumulation) -> runner


def _remember(key, run) -> None:
    if run is not None:
        if len(_fast) >= 1024:
            _fast.clear()
        _fast[key] = run


def _routed_runner(torch, mode, a, b, scale_a, scale_b, bias, out, out_dtype, fast: bool, path: str, key):
    """``run(...)`` for a call routed to ``torch._scaled_mm``: calls without a bias replay recorded kernels from the
    second time a layout is seen -- cuBLAS's for per-tensor scales (``gemm_cublas.scaled_runner``), torch's own
    row-wise kernel's (``gemm_cublas.scaled_row_runner``) --, else (and where that route declines a call)
    ``torch._scaled_mm`` itself."""
    fallback = _torch_runner(torch, mode, a, b, out, out_dtype, fast, path, bias)
    if fallback is None or mode not in ("tensor", "row") or bias is not None:
        return fallback
    launch = _recorded_launch(torch, a, b, scale_a, scale_b, out, out_dtype, fast)
    if launch is None:
        def retry(a, b, sa, sb, bias, out):  # this key's second call: the layout's second sighting records it
            if torch.cuda.is_current_stream_capturing():  # nothing is recorded inside a user's capture: not yet
                return fallback(a, b, sa, sb, bias, out)
            launch = _recorded_launch(torch, a, b, sa, sb, out, out_dtype, fast)
            run = _replaying(launch, fallback, path) if launch is not None else fallback
            if _fast.get(key) is retry:
                _fast[key] = run
            return run(a, b, sa, sb, bias, out)

        return retry
    return _replaying(launch, fallback, path)


def _recorded_launch(torch, a, b, scale_a, scale_b, out, out_dtype, fast: bool):
    try:
        if scale_a.numel() == 1 and scale_b.numel() == 1:
            return _cublas.scaled_runner(torch, a, b, scale_a, scale_b, out, out_dtype, fast)
        return _cublas.scaled_row_runner(torch, a, b, scale_a, scale_b, out, out_dtype, fast)
    except Exception:  # noqa: BLE001 - planning or recording failed: the route stays torch._scaled_mm
        return None


def _replaying(launch, fallback, path: str):
    def run(a, b, sa, sb, bias, out):
        r = launch(out, a.device)
        if r is None:
            return fallback(a, b, sa, sb, bias, out)
        state.path = path
        return r

    return run


def _torch_kind(mode, a, b, out_dtype, fast, bias):
    """What torch._scaled_mm's acceptance of a call depends on: the device, the operands' layouts, the types; a
    refusal of one layout (e.g. a B that is not column-major) says nothing of another."""
    return (a.device.type, mode, tuple(a.shape), tuple(a.stride()), tuple(b.shape), tuple(b.stride()), a.dtype,
            b.dtype, out_dtype, bool(fast), None if bias is None else bias.dtype)


def _torch_runner(torch, mode, a, b, out, out_dtype, fast: bool, path: str, bias=None):
    """``run(a, b, scale_a, scale_b, bias, out)`` for a call routed to ``torch._scaled_mm`` (straight into ``out``,
    or a new result), or None where the fallback takes another way (block scales, e5m2 x e5m2, an ``out`` of another
    dtype or layout)."""
    if mode == "block" or _name(a.dtype) == _name(b.dtype) == "float8_e5m2":
        return None
    if out is not None and not (out.dtype == out_dtype and out.is_contiguous()):
        return None
    if _torch_kind(mode, a, b, out_dtype, fast, bias) in _refused:  # the reference ran: keep the checked path
        return None
    mm = torch._scaled_mm

    def run(a, b, sa, sb, bias, out):
        state.path = path
        if out is None:
            return mm(a, b, sa, sb, bias=bias, out_dtype=out_dtype, use_fast_accum=fast)
        try:
            return mm(a, b, sa, sb, bias=bias, out_dtype=out_dtype, use_fast_accum=fast, out=out)
        except (RuntimeError, NotImplementedError, TypeError):  # a torch without the out= variant
            return _fallback(torch, mode, a, b, sa, sb, bias, out_dtype, out, fast)

    return run


def _kernel_runner(torch, p, out):
    """``run(...)`` launching plan ``p`` on the call's pointers (and, for a schedule with stream-K or split ranges,
    the current stream's workspace); a new result is allocated per call when no ``out`` is given (its address picks
    the memoised launcher)."""
    path, launcher, empty, shape = f"tma:scaled_mm:{p.scaling}", _k.launcher, torch.empty, (p.m, p.n)
    od = getattr(torch, p.out_dtype)
    sched = _k.schedule(p)
    if sched.sk_units:
        def run(a, b, sa, sb, bias, out):
            if out is None:
                out = empty(shape, dtype=od, device=a.device)
            w, f = _split_buffers(torch, sched, a.device)
            launcher(p, a.data_ptr(), b.data_ptr(), out.data_ptr(), sa.data_ptr(), sb.data_ptr(),
                     bias.data_ptr() if bias is not None else 0, w.data_ptr(), f.data_ptr())()
            state.path = path
            return out

        return run

    def run(a, b, sa, sb, bias, out):
        if out is None:
            out = empty(shape, dtype=od, device=a.device)
        launcher(p, a.data_ptr(), b.data_ptr(), out.data_ptr(), sa.data_ptr(), sb.data_ptr(),
                 bias.data_ptr() if bias is not None else 0)()
        state.path = path
        return out

    return run
