"""``gemm(a, b, *, out=None, out_dtype=None)``: ``C = A @ B`` on Hopper with TMA + wgmma (torch tensors).

fp16/bf16 inputs, fp32 accumulation, bf16/fp16/fp32 output. A is row-major (M, K); B is (K, N), either row-major
or the transpose of a row-major (N, K) tensor (``w.t()``), both taken without a copy. M, N, K need not be multiples
of the tile: remainders go through TMA's out-of-bounds zero fill and store clipping. Checks that need no GPU raise
``GemmError`` before anything is launched; see ``tmakit.kernels.gemm`` for the rules. torch is imported only when
called. Plans and encoded tensor maps are memoised per (pointers, shapes, strides, dtypes), so a repeated call costs
one dictionary lookup plus the launch.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..bounded import make_room
from ..kernels import gemm as _k
from ..kernels.gemm import GemmConfig, GemmError, check_compose, plan
from . import gemm_cublas as _cublas
from . import gemm_route as _route
from . import gemm_small as _small
from . import gemm_tuned as _gemm_tuned
from .common import compiling, current_device, on_device, set_path, state, torch_module

__all__ = ["GemmError", "GemmOptions", "gemm", "forget_plans"]

FIXUP_MAX_SPLIT = 4  # split_mode="auto": in-kernel fixup up to this many K ranges per tile, TMA reduce-add above
SPLIT_MODES = ("auto", "fixup", "head", "atomic")


@dataclass(frozen=True)
class GemmOptions:
    """The GEMM's tuning knobs, one value per call (``gemm``'s keyword arguments of the same names say what each
    does); the defaults are the shipped heuristics."""

    config: str | GemmConfig | None = None
    split: int | None = None
    stream_k: str = "auto"
    k_rotate: bool | None = None
    pdl: bool = False
    split_mode: str = "auto"


DEFAULT_OPTIONS = GemmOptions()
_options: dict = {}  # (knobs) -> GemmOptions: one object per distinct set of knobs, built once
_plans: dict = {}
_workspaces: dict = {}
_schedules: dict = {}
_sk_buffers: dict = {}
# Workspaces that a larger one replaced. A CUDA graph captured earlier still launches kernels on their addresses, so
# they are kept for the life of the process (each replacement at least doubles the size: little memory).
_retired: list = []


def _workspace(torch, m: int, n: int, device):
    """A zeroed fp32 (m, n) split-K workspace with 16-byte rows: a view of one buffer per (device, stream), grown
    on demand (never freed: see ``_retired``); stream order makes the reuse safe (each call zeroes its view before
    the kernel)."""
    key = (device, torch.cuda.current_stream(device).cuda_stream)
    pitch = -(-n // 4) * 4
    buf = _workspaces.get(key)
    if buf is None or buf.numel() < m * pitch:
        if buf is not None:
            _retired.append(buf)
        buf = _workspaces[key] = torch.empty(max(m * pitch, 2 * buf.numel() if buf is not None else 0),
                                             dtype=torch.float32, device=device)
    return buf[: m * pitch].view(m, pitch)[:, :n].zero_()


def _schedule(k, p, stream_k):
    """The plan's launch schedule (resident CTAs are queried once per kernel)."""
    key = (p, stream_k)
    s = _schedules.get(key)
    if s is None:
        if len(_schedules) > 1024:
            _schedules.clear()
        s = _schedules[key] = k.schedule(p, k.resident_ctas(k.kernel_for(p), p.config), stream_k)
    return s


def _split_fixup(k, p, scatter=True):
    """(whole-K plan, schedule) of a split-K plan run as in-kernel split ranges, or None (memoised)."""
    key = (p, "fixup", scatter)
    got = _schedules.get(key, False)
    if got is False:
        got = _schedules[key] = k.split_schedule(p, k.resident_ctas(k.kernel_for(k.whole_k(p)), p.config),
                                                 scatter=scatter)
    return got


def _sk_workspace(torch, sched, device):
    """(partials, flags) for a stream-K or split schedule, per (device, stream); grown on demand, never freed (see
    ``_retired``). The flags start zeroed and every launch leaves them zeroed (each finishing CTA resets the flags it
    consumed), so they are not cleared per call. Nothing here synchronizes, so CUDA-graph capture works. Flags
    allocated inside a capture are zeroed by a captured memset, i.e. only when that graph runs: until they have been
    zeroed outside a capture, every use zeroes them first (in a capture: as a node of that graph too)."""
    key = (device, torch.cuda.current_stream(device).cuda_stream)
    got = _sk_buffers.get(key)
    if got is None or got[0].numel() * 4 < sched.ws_bytes or got[1].numel() < sched.flag_count:
        capturing = torch.cuda.is_current_stream_capturing()  # asked only here and below: not on every call
        if got is not None:
            _retired.append(got)
        old_ws, old_flags = (got[0].numel(), got[1].numel()) if got is not None else (0, 0)
        ws = torch.empty(max(sched.ws_bytes // 4, 2 * old_ws, 1), dtype=torch.float32, device=device)
        flags = torch.zeros(max(sched.flag_count, 2 * old_flags, 1), dtype=torch.int32, device=device)
        got = _sk_buffers[key] = [ws, flags, capturing]
    elif got[2]:
        got[1].zero_()
        got[2] = torch.cuda.is_current_stream_capturing()
    return got[0], got[1]


class _Refusal:
    """A call the plan refused, memoised like a plan: the error, and (once computed) the repair route. A call the
    kernel can take but runs far slower than ``torch.matmul`` (``gemm_route.slow_rows``) is a refusal that keeps
    its ``plan``: ``strict=True`` runs it."""

    __slots__ = ("error", "route", "plan")

    def __init__(self, error: GemmError | None, route=None, plan=None):
        self.error, self.route, self.plan = error, route, plan


def _plan_cached(a, b, out, out_dtype, config, split, auto=False, padded_rows=False):
    """The plan of a call, or its :class:`_Refusal`, memoised on pointers, shapes, strides, dtypes and knobs.
    ``auto`` (no tuning knob given): calls that ``torch.matmul`` runs faster are refused with their plan kept.
    ``padded_rows``: ``out`` is a padded scratch output (``kernels.gemm.plan``'s argument)."""
    key = (a.shape, a.stride(), a.dtype, a.data_ptr(), b.shape, b.stride(), b.dtype, b.data_ptr(),
           None if out is None else (out.shape, out.stride(), out.dtype, out.data_ptr()), out_dtype, config, split,
           auto, padded_rows)
    p = _plans.get(key)
    if p is None:
        try:
            if 0 in a.shape or 0 in b.shape:  # torch gives the empty or zero-filled result: no kernel needed
                p = _Refusal(None, (None, "torch", "an empty operand (M, N or K is 0): torch.matmul's result"))
                _plans[key] = p
                return p
            p = plan(a, b, out, out_dtype, config, split, padded_rows)
            tuned = _tuned(a, p) if auto else None
            if tuned is not None and tuned["path"] != "small":  # `tmakit tune gemm` measured this problem here
                if tuned["path"] == "torch":
                    p = _Refusal(None, (None, "torch", "tuned: torch.matmul measured fastest on this problem "
                                                      "(tmakit tune gemm)"), p)
                else:
                    p = plan(a, b, out, out_dtype, tuned["config"], tuned.get("split"), padded_rows)
            else:
                why = _route.slow_rows(p) if auto else ""
                if why:
                    p = _Refusal(None, (None, "torch", why), p)
        except GemmError as e:
            p = _Refusal(e)
        make_room(_plans, 1024)
        _plans[key] = p
    return p


def _tuned(a, p):
    """The tuned entry (``tmakit.ops.gemm_tuned``) of plan ``p`` on ``a``'s device, or None (also when the device
    cannot be queried: the heuristics then decide)."""
    try:
        return _gemm_tuned.lookup(a.get_device(), p.m, p.n, p.k, p.in_dtype, p.out_dtype, bool(p.b_mn))
    except Exception:  # noqa: BLE001 - a tuning table must never break a GEMM
        return None


def _small_route(a, b, out, out_dtype) -> bool:
    """Whether a default call runs the small-problem kernel: where ``tmakit tune gemm`` stored a choice for the
    problem, that choice; else the measured class (``gemm_small.takes``)."""
    try:
        m, k = a.shape
        n = b.shape[1]
        od = _k._dtype_name(out.dtype if out is not None else (out_dtype or a.dtype))
        b_mn = _k._b_layout(b, k, n, a.element_size())[0]
        tuned = _gemm_tuned.lookup(a.get_device(), m, n, k, _k._dtype_name(a.dtype), od, bool(b_mn))
    except Exception:  # noqa: BLE001 - a tuning table must never break a GEMM (b with no unit stride: untuned)
        tuned = None
    if tuned is not None:
        return tuned["path"] == "small" and _small.fits(a, b, out, out_dtype)
    return _small.takes(a, b, out, out_dtype)


def forget_plans() -> None:
    """Drop the memoised plans, routes and cached call paths (after a tune changed what the default would pick)."""
    _plans.clear()
    _fast.clear()
    _cublas.forget()
    _gemm_tuned.forget()


def gemm(a, b, *, out=None, out_dtype=None, strict=False, config=None, split=None, stream_k="auto", k_rotate=None,
         pdl=False, split_mode="auto"):
    """``a @ b`` (2-D), fp32 accumulation; the TMA + wgmma kernel reads ``a`` (M, K) row-major and ``b`` (K, N)
    row-major or K-major (``w.t()``) without a copy.

    Every call ``torch.matmul`` takes works (any M, N, K including 0, any strides, CPU tensors, other dtypes):
    where the kernel cannot read an operand as given (a row pitch that is not a multiple of 16 bytes, a start that
    is not 128-byte aligned, no unit stride), the faster correct path runs -- the kernel on padded scratch copies,
    or ``torch.matmul`` (``tmakit.ops.gemm_route`` decides and says why) -- and ``tk.ops.last_path`` names it:
    ``"tma"``, ``"small"``, ``"tma+pad(a,b,out): <reason>"`` or ``"torch:<reason>"``. Small problems of short K
    (``gemm_route.small_wins``) with 16-byte-loadable operands run the one-tile-per-CTA ``mma.sync`` kernel of
    ``tmakit.kernels.gemm_small`` (``"small"``; ``config="small"`` forces it on any call). ``strict=True`` raises
    ``GemmError`` instead of taking another path. Shapes that do not compose and ``out`` overlapping an input
    raise either way. ``out``: optional (M, N) tensor, not overlapping ``a`` or ``b``; ``out_dtype``: bfloat16,
    float16 or float32 (default: the input dtype). ``config``: ``"small"`` or a name in
    ``tmakit.kernels.gemm.CONFIGS``, ``split``: number of K ranges (tuning knobs, grouped per call as a
    :class:`GemmOptions`; default: the heuristics ``choose_config`` / ``choose_split``). ``split_mode`` (split-K
    only): ``"fixup"`` runs the K ranges of a tile on different clusters in one wave and finishes the tile in the
    kernel, deterministically (a fixed summation order, no extra kernels): when the ranges divide the tile's staging
    boxes (2 or 4 ranges of a 128x256 16-bit tile) by reduce-scatter -- each range's CTA adds the others' fp32
    partials for 1/split of the columns and stores them -- else (``"head"`` forces this) the range holding slab 0
    adds all the others' partials; ``"atomic"`` adds fp32 partial tiles with TMA reduce-add into a zeroed buffer (an
    fp32 workspace plus a conversion copy unless ``out`` is fp32; not bitwise deterministic); ``"auto"`` (default):
    fixup up to ``FIXUP_MAX_SPLIT`` ranges per tile, atomic above (a head adding many partials is slower than the
    reduce-adds; docs/GEMM.md). ``stream_k``: ``"auto"`` (default) deals the last partial wave of tiles out to all
    SMs as stream-K K-ranges (partial sums added in a fixed order: deterministic), ``"off"`` or ``"all"`` (see
    ``tmakit.kernels.gemm.schedule``). ``k_rotate``: start each cluster's K loop at its own slab (default off:
    measured no gain). ``pdl``: programmatic dependent launch, so the kernel's launch and prologue may overlap the
    previous kernel's end (always safe: the kernel waits for the previous kernel before it touches global memory).
    Off by default: an early trigger made back-to-back calls slower, the implicit trigger at exit measured within
    the noise (docs/GEMM.md).
    Runs on torch's current stream; returns ``out``. Differentiable: with grad mode on and ``a`` or ``b`` requiring
    grad (and no ``out``), the backward runs two more GEMMs (dA = dC @ B^T, dB = A^T @ dC, transposing the smaller
    of A and dC with ``tk.ops.transpose``) in the input dtype with fp32 accumulation, through ``torch.matmul`` where
    a shape breaks the GEMM's rules. Under ``torch.compile`` the call is the custom op ``torch.ops.tmakit.gemm`` (with
    the same backward), so it stays in the compiled graph.
    """
    if (config is None and split is None and strict is False and stream_k == "auto" and k_rotate is None
            and pdl is False and split_mode == "auto" and a.is_cuda and not compiling()):  # a default call
        key = (a.shape, a.stride(), a.dtype, a.data_ptr(), b.shape, b.stride(), b.dtype, b.data_ptr(),
               None if out is None else (out.shape, out.stride(), out.dtype, out.data_ptr()), out_dtype)
        run = _fast.get(key)
        if run is not None and not (a.requires_grad or b.requires_grad) and a.get_device() == current_device():
            return run(a, b, out)
    else:
        key = None
    torch = _torch or _load_torch()
    if out_dtype.__class__ is str:  # the custom ops pass dtype names
        out_dtype = getattr(torch, out_dtype.removeprefix("torch."))
    if not (a.is_cuda and b.is_cuda) or a.device != b.device or a.dim() != 2 or b.dim() != 2 \
            or a.dtype not in _IN_DTYPES or b.dtype != a.dtype:
        return _not_for_the_kernel(torch, a, b, out, out_dtype, strict)
    knobs = (config, split, stream_k, k_rotate, pdl, split_mode)
    opts = _options.get(knobs)
    if opts is None:
        opts = _options_for(knobs)
    recording = (a.requires_grad or b.requires_grad) and torch.is_grad_enabled()
    if recording and out is not None:
        raise GemmError("gemm(out=...) does not support autograd (as torch.matmul's out=): drop out, or run "
                        "under torch.no_grad()")
    if recording or torch.compiler.is_compiling():  # the custom op tmakit::gemm: its autograd, and no graph break
        return _custom_op(torch, a, b, out, out_dtype, opts)
    if opts.config == "small" or (opts is DEFAULT_OPTIONS and not strict and _small_route(a, b, out, out_dtype)):
        r, run = _small.call(torch, a, b, out, out_dtype)
        if key is not None:
            _remember(key, run)
        return r
    p = _plan_cached(a, b, out, out_dtype, opts.config, opts.split, opts is DEFAULT_OPTIONS)
    if p.__class__ is _Refusal:
        r = _repair(torch, a, b, out, out_dtype, opts, strict, p)
        if key is not None and p.route is not None and p.route[1] == "torch":  # the same layout routes the same
            _remember(key, _routed_runner(torch, a, b, out, out_dtype, state.path, key))
        return r
    set_path("tma")
    r = _run(torch, p, a, b, out, opts)
    if key is not None and a.get_device() == current_device():
        _remember(key, _kernel_runner(torch, p, a, b, out))
    return r


_fast: dict = {}  # call layout (shapes, strides, dtypes, pointers, out) -> runner(a, b, out) of a default call


def _remember(key, run) -> None:
    if run is not None:
        make_room(_fast, 1024)
        _fast[key] = run


def _routed_runner(torch, a, b, out, out_dtype, path: str, key):
    """``run(a, b, out)`` for a call routed to cuBLAS: its recorded kernels (``gemm_cublas``, from the second time
    a layout is seen: a layout used once never pays for the recording), else ``torch.mm``."""
    od = out.dtype if out is not None else (out_dtype or a.dtype)
    fallback = _torch_runner(torch, a, out, out_dtype, path)
    run = _recorded_runner(torch, a, b, out, od, path)
    if run is not None or fallback is None:  # no fallback (fp32 out): the checked path asks again next time
        return run

    def retry(a, b, out):  # this key's second call: the layout's second sighting records it
        if torch.cuda.is_current_stream_capturing():  # nothing is recorded inside a user's capture: not yet
            return fallback(a, b, out)
        run = _recorded_runner(torch, a, b, out, od, path) or fallback
        if _fast.get(key) is retry:
            _fast[key] = run
        return run(a, b, out)

    return retry


def _recorded_runner(torch, a, b, out, od, path: str):
    try:
        return _cublas.runner(torch, a, b, out, od, path)
    except Exception:  # noqa: BLE001 - planning or recording failed: the route stays torch.mm, as before
        return None


def _torch_runner(torch, a, out, out_dtype, path: str):
    """``run(a, b, out)`` for a call routed to torch: ``torch.mm`` (the 2-D ``torch.matmul``) straight into ``out``
    or a new result, in the input dtype; other output dtypes keep the checked path."""
    od = out.dtype if out is not None else (out_dtype or a.dtype)
    if od != a.dtype:
        return None
    mm = torch.mm

    def run(a, b, out):
        state.path = path
        return mm(a, b) if out is None else mm(a, b, out=out)

    return run


def _kernel_runner(torch, p, a, b, out):
    """``run(a, b, out)`` for a plan launched whole (no K split, no stream-K workspace): the memoised launcher of
    these pointers; a new result is allocated per call (its address picks the launcher)."""
    if p.split > 1 or p.m == 0 or p.n == 0 or p.k == 0:
        return None
    sched = _schedule(_k, p, "auto")
    if sched.sk_units:
        return None
    launcher, empty, dt = _k.launcher, torch.empty, getattr(torch, p.out_dtype)
    shape = (p.m, p.n)

    fixed = None

    def run(a, b, out):
        if out is None:
            out = empty(shape, dtype=dt, device=a.device)
            launcher(p, a.data_ptr(), b.data_ptr(), out.data_ptr(), sched=sched)()
        else:
            fixed()
        state.path = "tma"
        return out

    if out is not None:
        fixed = launcher(p, a.data_ptr(), b.data_ptr(), out.data_ptr(), sched=sched)
    return run


def _not_for_the_kernel(torch, a, b, out, out_dtype, strict):
    """CPU tensors, other devices, batched or other-dtype inputs: ``torch.matmul`` (``strict``: GemmError). 2-D
    shapes that do not compose raise GemmError here as on the kernel's path (not torch's RuntimeError)."""
    if a.dim() == 2 and b.dim() == 2:
        check_compose(*a.shape, *b.shape)
    why = _route.not_for_the_kernel(a, b)
    if strict:
        raise GemmError(f"the TMA GEMM cannot take this call: {why} (strict=True)")
    set_path("torch:" + why)
    return _route.torch_gemm(torch, a, b, out, out_dtype)


def _repair(torch, a, b, out, out_dtype, opts, strict, refusal: _Refusal):
    """A call the plan refused: the padded kernel or ``torch.matmul`` where copies fix it (module
    ``gemm_route``), else the plan's error (shapes that do not compose, aliasing, bad knobs). The route is
    computed once per refused plan."""
    err = refusal.error
    od = out.dtype if out is not None else (out_dtype or a.dtype)
    if refusal.route is None:
        refusal.route = _route_of(a, b, out, out_dtype, od)
    rep, choice, why = refusal.route
    if refusal.plan is not None:  # the kernel can run it as given
        if strict:
            set_path("tma")
            return _run(torch, refusal.plan, a, b, out, opts)
        set_path("torch:" + why)
        return _route.torch_gemm(torch, a, b, out, out_dtype)
    if rep is None:
        if err is None:  # nothing for the kernel to do
            set_path("torch:" + why)
            return _route.torch_gemm(torch, a, b, out, out_dtype)
        raise err
    if strict:
        raise GemmError(f"{err} ({why}; strict=True)") from err
    m, n = int(a.shape[0]), int(b.shape[1])
    if choice == "torch":
        set_path("torch:" + why)
        return _route.torch_gemm(torch, a, b, out, out_dtype)
    a2 = _route.padded_copy(torch, a) if rep.a else a
    b2 = b if not rep.b else _route.padded_copy(torch, b.t()).t() if rep.b == "nk" else _route.padded_copy(torch, b)
    o2 = _route.padded_empty(torch, m, n, od, a.device) if rep.out else out
    p = _plan_cached(a2, b2, o2, None if o2 is not None else od, opts.config, opts.split, padded_rows=rep.out)
    if p.__class__ is _Refusal:  # the copies satisfy every rule the plan checks
        raise p.error
    r = _run(torch, p, a2, b2, o2, opts)
    set_path("tma+pad(" + ",".join(x for x, f in (("a", rep.a), ("b", rep.b), ("out", rep.out)) if f) + "): "
             + why)
    if not rep.out:
        return r
    if out is None:
        out = torch.empty((m, n), dtype=od, device=a.device)
    return out.copy_(o2)


_torch = None


def _load_torch():
    global _torch, _IN_DTYPES, _OUT_DTYPES
    torch = torch_module()
    _IN_DTYPES = (torch.bfloat16, torch.float16)
    _OUT_DTYPES = (torch.bfloat16, torch.float16, torch.float32)
    _torch = torch
    return torch


_IN_DTYPES = _OUT_DTYPES = ()


def _options_for(knobs) -> GemmOptions:
    if len(_options) > 1024:
        _options.clear()
    opts = GemmOptions(*knobs)
    opts = _options[knobs] = DEFAULT_OPTIONS if opts == DEFAULT_OPTIONS else opts
    return opts


def _custom_op(torch, a, b, out, out_dtype, opts: GemmOptions):
    """The call as ``torch.ops.tmakit.gemm`` / ``gemm_out`` (registered by ``tmakit.ops.library``)."""
    args = (out_dtype if out_dtype is None else str(out_dtype).removeprefix("torch."), opts.config, opts.split,
            opts.stream_k, opts.k_rotate, opts.pdl, opts.split_mode)
    if out is None:
        return torch.ops.tmakit.gemm(a, b, *args)
    torch.ops.tmakit.gemm_out(a, b, out, *args)
    return out


def _route_of(a, b, out, out_dtype, od):
    """(repair, "pad" or "torch", reason) of a refused call, or (None, "", "") when no copy fixes it."""
    if od not in _OUT_DTYPES or (out is not None and out_dtype is not None and out_dtype != out.dtype):
        return None, "", ""
    eb, eo = a.element_size(), od.itemsize
    rep = _route.needs_repair(a, b, out, eb, eo)
    if not rep:
        return None, "", ""
    m, k, n = int(a.shape[0]), int(a.shape[1]), int(b.shape[1])
    return rep, _route.choose(m, n, k, eb, eo, rep), "; ".join(rep.reasons)


def _run(torch, p, a, b, out, opts: GemmOptions):
    """Allocate ``out`` if needed and launch plan ``p``'s kernel(s) on the current stream."""
    split_mode = opts.split_mode
    if out is None:
        out = torch.empty((p.m, p.n), dtype=getattr(torch, p.out_dtype), device=a.device)
    elif out.device != a.device:
        raise GemmError(f"out is on {out.device}, inputs on {a.device}")
    if p.m == 0 or p.n == 0:
        return out
    if p.k == 0:
        return out.zero_()
    if split_mode not in SPLIT_MODES:
        raise GemmError(f"split_mode must be 'auto', 'fixup', 'head' or 'atomic', got {split_mode!r}")
    if split_mode == "auto":
        split_mode = "fixup" if p.split <= FIXUP_MAX_SPLIT else "atomic"
    pdl = opts.pdl
    with on_device(a.get_device()):
        fix = _split_fixup(_k, p, split_mode == "fixup") if p.split > 1 and split_mode in ("fixup", "head") else None
        if fix is not None or p.split == 1:  # one launch, whole K per unit or split ranges as stream-K segments
            lp, sched = fix or (p, _schedule(_k, p, opts.stream_k))
            ws = flags = 0
            if sched.sk_units:
                w, f = _sk_workspace(torch, sched, a.device)
                ws, flags = w.data_ptr(), f.data_ptr()
            _k.launcher(lp, a.data_ptr(), b.data_ptr(), out.data_ptr(), sched=sched, ws_ptr=ws, flags_ptr=flags,
                        k_rotate=opts.k_rotate, pdl=pdl)()
        elif p.out_dtype == "float32":
            out.zero_()
            _k.launcher(p, a.data_ptr(), b.data_ptr(), out.data_ptr(), pdl=pdl)()
        else:
            ws = _workspace(torch, p.m, p.n, a.device)
            _k.launcher(p, a.data_ptr(), b.data_ptr(), ws.data_ptr(), ldc=ws.stride(0), pdl=pdl)()
            out.copy_(ws)
    return out
