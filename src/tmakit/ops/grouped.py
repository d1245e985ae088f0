"""``grouped_mm(a, b, offs)``: ``torch._grouped_mm``'s mixture-of-experts GEMM on the TMA + wgmma kernel, and
``gemm_list(As, Bs)``: CUTLASS's ptr-array grouped GEMM (problems with their own shapes and pointers).

The kernel takes the layout MoE layers use: ``a`` (M, K) with the tokens sorted by expert, ``b`` (G, K, N) one weight
per expert (``w.transpose(-2, -1)`` of a (G, N, K) ``w``, or row-major), ``offs`` (G,) int32 end rows:
``out[offs[g-1]:offs[g]] = a[offs[g-1]:offs[g]] @ b[g]``; the batched form, 3-D ``a`` (G, M, K) x 3-D ``b``
without ``offs``, as G equal groups of a's rows; and 2-D x 2-D grouped along K (``out[g] = a[:, K rows of g] @ b[K
rows of g]``, an MoE layer's weight gradient) with ``a`` M-major and ``b`` row-major, as autograd passes them
(``x.t()``, ``grad``). The other forms ``torch._grouped_mm`` accepts (3-D x 2-D, other layouts along K) and calls
the kernel cannot read (CPU tensors, other dtypes,
strides TMA cannot describe) run ``torch._grouped_mm`` (or a loop of ``torch.mm`` where torch has none), and
``tk.ops.last_path`` says why; ``strict=True`` raises instead. The offsets stay on the device: the kernel reads them
itself and clamps them (non-decreasing, at most M), so a launch never synchronises and any ``offs`` is
memory-safe; ``check_offs=True`` checks them on the host first (one synchronisation) and raises ``ValueError`` for
offsets that decrease or pass M. Rows after the last offset are left as they are (``torch._grouped_mm`` leaves them
uninitialised). Under ``torch.compile`` the call is the custom op ``torch.ops.tmakit.grouped_mm`` (``grouped_mm_out``
with ``out=``), so it stays in the compiled graph. Where autograd records (a tensor requires grad), the call runs
through a ``torch.autograd.Function`` (eager) or that custom op (compiled), both with the backward of
``grouped_grad``: two more grouped products, so an MoE layer's forward and both its gradients run on the kernel
(the weight gradient along K).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

from ..kernels import gemm_grouped as _kg
from ..kernels.gemm import GemmError
from .common import compiling, current_device, on_device, recording, set_path, state, torch_module
from .gemm import gemm
from .grouped_grad import autograd_function
from .grouped_torch import torch_grouped as _torch_grouped

__all__ = ["grouped_mm", "gemm_list", "scaled_gemm_list"]

_plans: dict = {}


def grouped_mm(a, b, offs=None, *, out_dtype=None, out=None, strict: bool = False, check_offs: bool = False,
               config=None):
    """``torch._grouped_mm(a, b, offs, out_dtype=...)`` with the TMA kernel for 2-D ``a`` x 3-D ``b`` (module
    docstring); ``out``: an optional (M, N) result tensor; ``config``: a name in ``tmakit.kernels.gemm.CONFIGS``
    (single-CTA configs; default: ``tmakit.kernels.gemm_grouped.choose_grouped_config``)."""
    key = None
    if not check_offs and not compiling():  # the cached path of a call that ran before (with its config, if named)
        try:
            key = (a.shape, a.stride(), a.dtype, a.data_ptr(), b.shape, b.stride(), b.dtype, b.data_ptr(),
                   None if offs is None else (offs.shape, offs.dtype, offs.data_ptr()),
                   None if out is None else (out.shape, out.stride(), out.dtype, out.data_ptr()), out_dtype, config)
            if a.dim() == 2 == b.dim() and a.is_cuda:  # along K: the launch writes its maps to this stream's buffer
                key += (_stream(),)
            run = _fast.get(key)
        except (AttributeError, TypeError):  # not tensors: the checks below say so
            key = run = None
        if run is not None and a.get_device() == current_device() and not (
                (a.requires_grad or b.requires_grad) and torch_module().is_grad_enabled()):
            return run(a, out)
    torch = torch_module()
    grad = isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and recording(a, b)
    if grad and out is not None:
        raise GemmError("grouped_mm(out=...) does not support autograd (as torch's out= ops): drop out, or run "
                        "under torch.no_grad()")
    if grad and not compiling():  # eager autograd: the op's formula through a plain autograd.Function
        return autograd_function(torch, grouped_mm).apply(a, b, offs, out_dtype, strict, check_offs, config)
    if compiling():  # the custom op tmakit::grouped_mm: no graph break under torch.compile (and its autograd)
        if out is None:
            od = None if out_dtype is None else str(out_dtype).removeprefix("torch.")
            return torch.ops.tmakit.grouped_mm(a, b, offs, od, strict, check_offs, config)
        torch.ops.tmakit.grouped_mm_out(a, b, offs, out, strict, check_offs, config)
        return out
    if offs is not None:  # on every path: torch's loop would read a float or mis-sized offs silently
        _check_offs_tensor(torch, a, b, offs)
        if check_offs:
            _check_offs_values(torch, offs, *_offs_extent(a, b))
    elif getattr(a, "dim", None) and getattr(b, "dim", None) and 2 in (a.dim(), b.dim()):
        raise GemmError(f"offs is required where a or b is 2-D (a is {a.dim()}-D, b {b.dim()}-D): it says where each "
                        f"group ends, as for torch._grouped_mm")
    if offs is None and getattr(a, "dim", None) and a.dim() == 3 and getattr(b, "dim", None) and b.dim() == 3:
        return _batched(torch, a, b, out_dtype, out, strict, config, key)
    if offs is not None and a.dim() == 2 and b.dim() == 2:
        return _along_k(torch, a, b, offs, out_dtype, out, strict, config, key)
    ap, bp = a.data_ptr(), b.data_ptr()
    op = offs.data_ptr() if offs is not None else 0
    return _kernel_call(torch, a, b, offs, out_dtype, out, strict, key, _not_for_the_kernel(torch, a, b, offs),
                        lambda: _plan(a, b, offs, out, out_dtype, config), lambda p: (p.m, p.n),
                        lambda p: lambda c: _kg.launcher(p, ap, bp, c, op), "tma:grouped")


def _kernel_call(torch, a, b, offs, out_dtype, out, strict, key, why, plan, shape_of, make_launch, path):
    """The kernel paths' common tail: ``plan()`` (unless ``why`` already refuses; a ``GemmError`` refuses too, and
    torch's op then runs with ``last_path`` saying why), the result (``out`` or a new one of ``shape_of(plan)``),
    the launch (``make_launch(plan)(c_ptr)`` is the memoised launcher on output address c_ptr; nothing to multiply:
    zeros) and the cached run of this call's layout (``key``)."""
    if not why:
        try:
            p = plan()
        except GemmError as e:
            why = str(e)
    if why:
        _refuse_or_record("grouped kernel", why, strict)
        return _torch_grouped(torch, a, b, offs, out_dtype, out)
    shape = shape_of(p)
    if out is None:
        out = torch.empty(shape, dtype=getattr(torch, p.out_dtype), device=a.device)
    if p.m and p.n and p.groups:
        if p.k == 0:
            out.zero_()
        else:
            with on_device(a.get_device()):
                launch = make_launch(p)
                launch(out.data_ptr())()
            if key is not None and a.get_device() == current_device():
                remember_launch(_fast, key, torch, p, path, lambda o: launch(o.data_ptr()), shape)
    set_path(path)
    return out


def _batched(torch, a, b, out_dtype, out, strict, config, key):
    """3-D ``a`` (G, M, K) x 3-D ``b`` (G, K, N) -> (G, M, N), ``torch._grouped_mm``'s batched form, on the grouped
    kernel as G equal groups: ``a`` and the result as (G M, K) and (G M, N) views (no copy), the kernel's group
    bounds computed from M instead of read from ``offs``. Calls whose rows do not flatten so run torch's op."""
    why = _not_for_the_kernel(torch, a, b, None, form="batch")
    if not why:
        g, m, k = (int(x) for x in a.shape)
        n = int(b.shape[2])
        if int(b.shape[0]) != g or int(b.shape[1]) != k:
            raise GemmError(f"a {tuple(a.shape)} and b {tuple(b.shape)} do not compose as a batch: b must be "
                            f"(G, K, N) = ({g}, {k}, N)")
        a2, why = _flat_rows(a, "a")
        if out is not None and not why:
            if tuple(out.shape) != (g, m, n):
                raise GemmError(f"out has shape {tuple(out.shape)}; a batched product of a {tuple(a.shape)} and b "
                                f"{tuple(b.shape)} needs ({g}, {m}, {n})")
            out2, why = _flat_rows(out, "out")
        else:
            out2 = None
    ap, bp = a.data_ptr(), b.data_ptr()
    return _kernel_call(torch, a, b, None, out_dtype, out, strict, key, why,
                        lambda: _plan(a2, b, None, out2, out_dtype, config, g), lambda p: (g, m, p.n),
                        lambda p: lambda c: _kg.launcher(p, ap, bp, c, 0), "tma:grouped")


def _along_k(torch, a, b, offs, out_dtype, out, strict, config, key):
    """2-D ``a`` (M, K) x 2-D ``b`` (K, N) grouped along K by ``offs`` -> (G, M, N): ``out[g] = a[:, K rows of g] @
    b[K rows of g]``, the weight gradient of an MoE layer, on the grouped kernel along K (``a`` M-major, ``b``
    row-major: ``a = x.t()`` of the tokens, as autograd passes it; :func:`tmakit.kernels.gemm_grouped.plan_grouped_k`).
    Empty groups give zeros; other layouts run torch's op."""
    ap, bp, op = a.data_ptr(), b.data_ptr(), offs.data_ptr()

    def make_launch(p):
        maps = _map_buffer_for(torch, a.device, _kg.map_slot_bytes(p))
        return lambda c: _kg.launcher(p, ap, bp, c, op, maps_ptr=maps)

    why = _not_for_the_kernel(torch, a, b, offs, form="k")
    return _kernel_call(torch, a, b, offs, out_dtype, out, strict, key, why,
                        lambda: _plan(a, b, offs, out, out_dtype, config, along_k=True),
                        lambda p: (p.groups, int(a.shape[0]), p.n), make_launch, "tma:grouped-k")


def _flat_rows(t, name: str):
    """``(view, '')``: 3-D ``t`` (G, R, C) as the (G R, C) rows the kernel reads, when its batches follow each other
    row by row (stride(0) = R stride(1)); else ``(None, why)``."""
    g, r, c = t.shape
    if g > 1 and r > 0 and t.stride(0) != r * t.stride(1):
        return None, (f"{name}'s batches are {t.stride(0)} elements apart, not {r} rows of {t.stride(1)}: the kernel "
                      f"reads the batch as one (G*M, .) matrix")
    return t.as_strided((g * r, c), (t.stride(1), t.stride(2))), ""


_fast: dict = {}  # call layout (shapes, strides, dtypes, pointers, config) -> run(a, out) of a call the kernel took


def remember_launch(cache: dict, key, torch, p, path: str, launch_for, shape=None) -> None:
    """Cache ``run(a, out)`` for a grouped call the kernel took: the memoised launch on the call's pointers, into
    ``out`` or a new result of the plan's dtype, (M, N) or ``shape`` (``launch_for(out)`` gives the launch for that
    result)."""
    shape, od, empty = shape or (p.m, p.n), getattr(torch, p.out_dtype), torch.empty

    def run(a, out):
        if out is None:
            out = empty(shape, dtype=od, device=a.device)
        launch_for(out)()
        state.path = path
        return out

    if len(cache) >= 256:
        cache.clear()
    cache[key] = run


def _plan(a, b, offs, out, out_dtype, config, groups=None, along_k=False):
    """The cached plan of a call; ``groups``: a batch of equal groups (no ``offs``); ``along_k``: 2-D x 2-D."""
    groups = int(offs.shape[0]) if groups is None else groups
    key = (a.shape, a.stride(), a.dtype, a.data_ptr() % 128, b.shape, b.stride(), b.dtype, b.data_ptr() % 128,
           groups, offs is None, None if out is None else (out.shape, out.stride(), out.dtype, out.data_ptr() % 128),
           out_dtype, config, along_k)
    p = _plans.get(key)
    if p is None:
        if len(_plans) > 1024:
            _plans.clear()
        plan = _kg.plan_grouped_k if along_k else _kg.plan_grouped
        p = _plans[key] = plan(a, b, groups, out, out_dtype, config)
    return p


def _not_for_the_kernel(torch, a, b, offs, form: str = "rows") -> str:
    """Why the kernel cannot take these tensors ('' if it can, as far as form, devices and dtypes go); ``form``:
    "rows" (2-D x 3-D with offs), "batch" (3-D x 3-D), "k" (2-D x 2-D with offs)."""
    batched = form == "batch"
    if form == "rows" and (offs is None or a.dim() != 2 or b.dim() != 3):
        return (f"a is {a.dim()}-D, b {b.dim()}-D{'' if offs is not None else ', no offs'}: the kernel takes a "
                f"2-D a, a 3-D b and offs")
    devs = [a.device, b.device] + ([] if batched else [offs.device])
    if not all(d.type == "cuda" for d in devs) or len(set(devs)) != 1:
        names = "a, b" + ("" if batched else " and offs")
        return f"{names} are on {', '.join(map(str, devs))}: the kernel runs on one CUDA device"
    if a.dtype not in (torch.bfloat16, torch.float16) or b.dtype != a.dtype:
        return f"a is {a.dtype} and b {b.dtype}: the kernel takes bfloat16 or float16, both the same"
    return ""


def _check_offs_tensor(torch, a, b, offs) -> None:
    """The checks that need no synchronisation: type, dtype, rank, length (one end offset per group of the 3-D
    operand; any number of groups along K for 2-D x 2-D)."""
    if not isinstance(offs, torch.Tensor) or offs.dtype != torch.int32 or offs.dim() != 1:
        got = f"{offs.dtype} with shape {tuple(offs.shape)}" if isinstance(offs, torch.Tensor) else type(offs).__name__
        raise GemmError(f"offs must be a 1-D int32 tensor of group end offsets, got {got}; pass "
                        f"torch.tensor(ends, dtype=torch.int32, device=a.device)")
    if a.dim() == 3 and b.dim() == 3:
        raise GemmError("offs must be None for a 3-D a and a 3-D b (a batched product: one group per batch entry)")
    groups, of = (int(b.shape[0]), "b (b.shape[0])") if b.dim() == 3 else (int(a.shape[0]), "a (a.shape[0])") \
        if a.dim() == 3 else (None, "")
    if groups is not None and int(offs.shape[0]) != groups:
        raise GemmError(f"offs has {int(offs.shape[0])} entries for {groups} groups of {of}; give one end offset "
                        f"per group")


def _offs_extent(a, b) -> tuple[int, str]:
    """The extent ``offs`` cuts into groups and its name: a's rows (2-D x 3-D), b's columns (3-D x 2-D) or K
    (2-D x 2-D)."""
    if a.dim() == 2 and b.dim() == 3:
        return int(a.shape[0]), "a ({} rows)"
    return (int(b.shape[-1]), "b ({} columns)") if a.dim() == 3 else (int(a.shape[1]), "K ({})")


def _check_offs_values(torch, offs, m: int, what: str = "a ({} rows)") -> None:
    """Non-decreasing and at most ``m``, the grouped extent (``what``, formatted with ``m``) (one device-to-host
    copy)."""
    v = offs.tolist()
    for g, (lo, hi) in enumerate(zip([0] + v[:-1], v)):
        if hi < lo:
            raise GemmError(f"offs must be non-decreasing: offs[{g}] = {hi} < {lo}")
    if v and v[-1] > m:
        raise GemmError(f"offs[-1] = {v[-1]} is past the end of {what.format(m)}")


_map_buffers: dict = {}  # (device, stream) -> per-CTA map slots of the ptr-array kernel (grown, never shrunk)
_problem_arrays: dict = {}  # (device, rows) -> (pinned host copy, device array)
_retired: list = []  # problem arrays planned or uploaded in a CUDA-graph capture, replaced map buffers: kept


def _problem_array(torch, rows, dev):
    """The device copy of a problem list, uploaded once per distinct list (from pinned memory, stream-ordered); kept
    with its pinned source, so a CUDA graph that captured the upload replays it from memory that is still valid.
    Dropping the cache frees nothing a planned run still launches on: each run holds its arrays (``ListRun``)."""
    key = (dev, tuple(map(tuple, rows)))
    got = _problem_arrays.get(key)
    if got is None:
        if len(_problem_arrays) >= 256:
            _retired.extend(v for v in _problem_arrays.values() if v[2])
            _problem_arrays.clear()
        host = torch.tensor(rows, dtype=torch.int64).pin_memory()
        got = _problem_arrays[key] = (host, host.to(dev, non_blocking=True), torch.cuda.is_current_stream_capturing())
    return got[1]


def gemm_list(As, Bs, out=None, *, out_dtype=None, strict: bool = False, config=None):
    """``[a @ b for a, b in zip(As, Bs)]`` in one launch (CUTLASS's ptr-array grouped GEMM): each problem has its own M,
    N, K, pointers and strides; the kernel's producer rewrites its tensor maps on the device for each problem
    (``tmakit.kernels.gemm_ptr_array``). ``out``: optional list of (M_g, N_g) results (default: new tensors of
    ``out_dtype``, else of each a's dtype -- views of one buffer per dtype, as ``torch.split``'s results are). One
    launch takes problems of one dtype pair and one B layout: a list that mixes them launches once per kind. A problem
    the kernel cannot take (CPU tensors, other dtypes, pitches TMA cannot read) runs as its own ``tk.ops.gemm`` call,
    the rest of the list still in the kernel, and ``tk.ops.last_path`` names the first such problem and why;
    ``strict=True`` raises ``GemmError`` instead. Without ``strict`` or ``config``, a large problem
    (:func:`alone_problems`), or the only problem of its kind, runs as its own ``tk.ops.gemm`` call after the list's
    launch (its own plan and route: the list's one tile shape measured slower on such problems, docs/GROUPED.md).
    ``last_path``: ``tma:ptr-array`` (``x2`` for two launches), then ``+N alone`` for the problems run as dense calls
    (``tk.ops.gemm xN`` where none runs in the list kernel), then the first problem that broke a rule. Shapes that do
    not compose raise ``GemmError`` either way. Under ``torch.compile`` the call is the custom op
    ``torch.ops.tmakit.gemm_list`` (``gemm_list_out`` with ``out=``), so it stays in the compiled graph. Returns the
    list of results."""

    torch = torch_module()
    As, Bs = list(As), list(Bs)
    if len(As) != len(Bs) or not As:
        raise ValueError(f"gemm_list needs as many a's as b's, at least one: got {len(As)} and {len(Bs)}")
    if compiling():  # the custom op tmakit::gemm_list: no graph break under torch.compile
        if out is None:
            od = None if out_dtype is None else str(out_dtype).removeprefix("torch.")
            return torch.ops.tmakit.gemm_list(As, Bs, od, strict, config)
        torch.ops.tmakit.gemm_list_out(As, Bs, list(out), strict, config)
        return list(out)
    dtypes = None if out is not None else [out_dtype or t.dtype for t in As]
    return _call_list(torch, As, Bs, out, dtypes, strict, config, None, False,
                      lambda g, outs: gemm(As[g], Bs[g], out=outs[g]))


def scaled_gemm_list(As, Bs, scales_a, scales_b, out=None, *, out_dtype=None, use_fast_accum: bool = False,
                     strict: bool = False, config=None):
    """``[tk.ops.scaled_mm(a, b, sa, sb) for ...]`` in one launch: seed 003's ptr-array FP8 GEMM. Each problem has its
    own M, N, K, pointers and strides, fp8 ``a`` (M, K) row-major and ``b`` (K, N) K-major (``w.t()``), and its own fp32
    scales as ``tk.ops.scaled_mm`` takes them: one element each (per tensor, as ``torch._scaled_mm``), scale_a (M, 1)
    and scale_b (1, N) (row-wise), applied to the fp32 sum in the epilogue, or scale_a (M, K/128) and scale_b (N/128,
    K/128) (block-wise, DeepSeek-V3's: each 128-deep partial sum scaled into the fp32 total); two-level accumulation
    unless ``use_fast_accum`` (not with block scales). The kernel (``gemm_ptr_array.cu`` with fp8 wgmma) rewrites its
    tensor maps on the device per problem. ``out``: optional list of (M_g, N_g) results (default: new tensors of
    ``out_dtype``, else bfloat16, views of one buffer). As in :func:`gemm_list`: one launch per kind (dtype pair, out
    dtype, scaling), problems the kernel cannot take (other layouts, pitches TMA cannot read, CPU tensors) and large
    ones run as their own ``tk.ops.scaled_mm`` calls, and ``last_path`` says which; ``strict=True`` raises ``GemmError``
    instead of running a problem outside the kernel. Under ``torch.compile`` the call is the custom op
    ``torch.ops.tmakit.scaled_gemm_list`` (``_out`` with ``out=``). Returns the list of results."""
    from .scaled_mm import scaled_mm

    torch = torch_module()
    As, Bs, SA, SB = list(As), list(Bs), list(scales_a), list(scales_b)
    if not (len(As) == len(Bs) == len(SA) == len(SB)) or not As:
        raise ValueError(f"scaled_gemm_list needs as many a's, b's, scales_a and scales_b, at least one: got "
                         f"{len(As)}, {len(Bs)}, {len(SA)}, {len(SB)}")
    if compiling():  # the custom op tmakit::scaled_gemm_list: no graph break under torch.compile
        if out is None:
            od = str(out_dtype or torch.bfloat16).removeprefix("torch.")
            return torch.ops.tmakit.scaled_gemm_list(As, Bs, SA, SB, od, bool(use_fast_accum), strict, config)
        torch.ops.tmakit.scaled_gemm_list_out(As, Bs, SA, SB, list(out), bool(use_fast_accum), strict, config)
        return list(out)
    dtypes = None if out is not None else [out_dtype or torch.bfloat16] * len(As)
    return _call_list(torch, As, Bs, out, dtypes, strict, config, list(zip(SA, SB)), bool(use_fast_accum),
                      lambda g, outs: scaled_mm(As[g], Bs[g], SA[g], SB[g], out=outs[g],
                                                use_fast_accum=use_fast_accum))


def _call_list(torch, As, Bs, out, dtypes, strict, config, scales, fast, dense_call):
    """One list call: outputs (``out``, else new ones of ``dtypes``, one buffer per dtype), the cached run of this
    list's layout (else planned now: :func:`_list_run`), then its zeroing, launches and dense calls. The cache key
    holds every input's address, sizes, strides and dtype, and the outputs' when given; new outputs are views of
    fresh buffers at the offsets the run planned, whose bases the launches take as an argument (no new problem
    array per call)."""
    if out is not None and len(out) != len(As):
        raise ValueError(f"out has {len(out)} tensors for {len(As)} problems")
    cuda = As[0].is_cuda and As[0].get_device() == current_device()
    run = key = None
    if cuda:
        T = torch.Tensor
        ts = As + Bs + ([t for pair in scales for t in pair] if scales is not None else []) + \
            (list(out) if out is not None else [])
        key = (tuple(map(T.data_ptr, ts)), tuple(map(T.size, ts)), tuple(map(T.stride, ts)),
               tuple(map(_dtype_of, ts)), None if dtypes is None else tuple(dtypes), config, bool(strict), bool(fast),
               scales is None, _stream())
        run = _lists.get(key)
    layout = None if run is None else run.layout
    if out is not None:
        outs, bases = list(out), None
    else:
        outs, bases, layout = _new_outputs(torch, As, Bs, dtypes, layout)
    if run is None:
        run = _list_run(torch, As, Bs, outs, strict, config, scales, fast, bases, layout)
        if cuda:
            if len(_lists) > 256:
                _lists.clear()
            _lists[key] = run
    for g in run.zero:
        outs[g].zero_()
    for fn, buf, _ in run.launches:
        fn(bases[buf] if bases is not None else 0)
    for g in run.dense:
        dense_call(g, outs)
    set_path(run.path)
    return outs


def _new_outputs(torch, As, Bs, dtypes, layout=None):
    """``(outs, bases, layout)``: new (M_g, N_g) outputs on their a's device as views of one fresh buffer per dtype
    and device, each starting 128-byte aligned, the buffers' addresses by (dtype, device), and the layout (per
    output: buffer, shape, strides, offset; the elements per buffer). ``layout``: a run's, from an earlier call."""
    if layout is None:
        per, totals = [], {}
        for a, b, dt in zip(As, Bs, dtypes):
            shape, buf = (int(a.shape[0]), int(b.shape[-1])), (dt, a.device)
            align = 128 // dt.itemsize
            off = totals.get(buf, 0)
            per.append((buf, shape, (shape[1], 1), off))
            totals[buf] = off + -(-shape[0] * shape[1] // align) * align
        layout = (tuple(per), tuple(totals.items()))
    per, totals = layout
    bufs = {buf: torch.empty(n, dtype=buf[0], device=buf[1]) for buf, n in totals}
    outs = [bufs[buf].as_strided(shape, stride, off) for buf, shape, stride, off in per]
    return outs, {buf: t.data_ptr() for buf, t in bufs.items()}, layout


@dataclass(frozen=True)
class ListRun:
    """A planned list call: the outputs to zero (K_g = 0), the launches (each with the dtype of its outputs, whose
    buffer's base it takes when the op allocated them, and the device problem array it reads: the run keeps it
    alive), the problems run as dense calls, ``last_path``, and the outputs' layout when the op allocates them."""
    zero: tuple
    launches: tuple
    dense: tuple
    path: str
    layout: tuple | None


_lists: dict = {}  # list layout (addresses, sizes, strides, dtypes, options) -> ListRun


_dtype_of = operator.attrgetter("dtype")  # a C-level getter: the list key reads it per tensor


def _stream() -> int:
    from ..cuda.packed import current_raw_stream

    return current_raw_stream()


def _map_buffer_for(torch, dev, nbytes):
    """The address of the per-CTA map slots on ``dev`` for the current stream (one buffer per stream: launches on two
    streams never share slots). A buffer a larger one replaces is kept: memoised launches still point at it."""
    key = (dev, torch.cuda.current_stream(dev).cuda_stream)
    maps = _map_buffers.get(key)
    if maps is None or maps.numel() < nbytes:
        if maps is not None:
            _retired.append(maps)
        maps = _map_buffers[key] = torch.empty(max(nbytes, 1 << 16), dtype=torch.uint8, device=dev)
    return maps.data_ptr()


ALONE_FLOP = 1 << 33  # 2MNK from which a problem runs as its own tk.ops.gemm call (~12 us at 700 TFLOP/s)


def alone_problems(As, Bs, outs, sms: int | None = None) -> list[int]:
    """The problems of a list that run as their own ``tk.ops.gemm`` calls: those with a K to reduce and either at
    least ``ALONE_FLOP`` of work (long enough that a launch of its own costs little, and the dense call's own plan
    and route -- cuBLAS for most such shapes, docs/GEMM.md -- beat the list kernel's one tile shape) or 128x256
    tiles (the list kernel's) that fill every SM on their own. A list of only such problems runs as a loop of dense
    calls."""
    from ..kernels.gemm import NUM_SMS

    sms = sms or NUM_SMS
    alone = []
    for g, (a, b) in enumerate(zip(As, Bs)):
        m, k, n = int(a.shape[0]), int(a.shape[1]), int(b.shape[-1])
        if k > 0 and (2 * m * n * k >= ALONE_FLOP or -(-m // 128) * -(-n // 256) >= sms):
            alone.append(g)
    return alone


def _list_run(torch, As, Bs, outs, strict, config, scales=None, fast=False, bases=None, layout=None) -> ListRun:
    """Plan a problem list (:class:`ListRun`). The kernel's problems launch once per kind (dtypes, B layout, out
    dtype; fp8: scaling and accumulation); problems it cannot take run as dense calls (``strict`` raises);
    problems with nothing to multiply only have their outputs zeroed. ``scales``: fp8 lists, one (scale_a,
    scale_b) per problem; ``bases``: the outputs' buffers by dtype when the op allocated them (the problem array
    then holds offsets from them)."""
    from ..kernels import gemm_ptr_array as _kp

    _kp.check_shapes(As, Bs, outs)
    dense = set() if strict or config is not None else set(alone_problems(As, Bs, outs))
    groups, broken, zero = {}, [], []
    for g, (a, b, o) in enumerate(zip(As, Bs, outs)):
        if g in dense:
            continue
        why, key = _not_on_this_device(a, b, o), ()
        if not why:
            why, key = _kp.problem_fit(a, b, o) if scales is None else \
                _kp.scaled_problem_fit(a, b, *scales[g], o, fast)
        if why:
            broken.append((g, why))
        elif min(int(a.shape[0]), int(a.shape[1]), int(b.shape[1])) > 0:
            groups.setdefault(key, []).append(g)
        elif int(a.shape[1]) == 0 and o.numel():
            zero.append(g)
    if broken:
        g, why = broken[0]
        if strict:
            raise GemmError(f"the ptr-array kernel cannot take this call: problem {g}: {why} (strict=True)")
        dense.update(g for g, _ in broken)
    if not strict and config is None:  # a kind of one problem: its dense call (own plan, stream-K, cuBLAS route)
        for key in [key for key, idx in groups.items() if len(idx) == 1]:
            dense.add(groups.pop(key)[0])
    launches = _list_launches(torch, As, Bs, outs, list(groups.values()), config, scales, fast, bases) \
        if groups else []
    name = "tk.ops.gemm" if scales is None else "tk.ops.scaled_mm"
    return ListRun(tuple(zero), tuple(launches), tuple(sorted(dense)),
                   _list_path(len(launches), len(dense), broken, name), layout)


def _list_path(launches: int, dense: int, broken: list, name: str = "tk.ops.gemm") -> str:
    """``last_path`` of a list: its launches, the problems run as dense calls, the first that broke a rule."""
    if launches:
        path = "tma:ptr-array" + (f" x{launches}" if launches > 1 else "") + (f"+{dense} alone" if dense else "")
    else:
        path = f"{name} x{dense}" if dense else "tma:ptr-array"
    if broken:
        more = f" and {len(broken) - 1} more" if len(broken) > 1 else ""
        path += f"; problem {broken[0][0]}{more} by {name}: {broken[0][1]}"
    return path


def _not_on_this_device(a, b, o) -> str:
    """Why a problem's tensors are not all on the current CUDA device ('' when they are)."""
    devs = {a.device, b.device, o.device}
    if len(devs) == 1 and a.is_cuda and a.get_device() == current_device():
        return ""
    return f"tensors on {sorted(map(str, devs))}: the kernel runs on the current CUDA device"


def _list_launches(torch, As, Bs, outs, groups, config, scales=None, fast=False, bases=None) -> list:
    """``(launch, output buffer, problem array)`` per group of problem indices, each launch with its own problem array
    (returned so that the run holds it: the launch has only its address, and the upload cache may drop it) and its
    own per-CTA map slots (one buffer per device and stream, split between the launches). ``bases``: C fields become
    offsets from the output buffer (dtype, device) of the group."""
    from ..kernels import gemm_ptr_array as _kp

    dev = As[groups[0][0]].device
    plans = []
    for idx in groups:
        sub = ([As[g] for g in idx], [Bs[g] for g in idx], [outs[g] for g in idx])
        if scales is None:
            p, rows = _kp.plan_list(*sub, config=config), _kp.problem_rows(*sub)
        else:
            sc = [scales[g] for g in idx]
            p = _kp.plan_scaled_list(sub[0], sub[1], sc, sub[2], config=config, fast_accum=fast)
            rows = _kp.problem_rows(*sub, scales=sc)
        buf = (outs[idx[0]].dtype, outs[idx[0]].device)  # (one kind: one output dtype, on this device)
        if bases is not None:
            for r in rows:
                r[2] -= bases[buf]
        plans.append((p, rows, buf))
    with on_device(dev.index):
        sizes = [_kp.grid(p) * 4 * _kp.MAP_BYTES for p, _, _ in plans]
        maps = _map_buffer_for(torch, dev, sum(sizes))
        fns = []
        for (p, rows, buf), off in zip(plans, (sum(sizes[:i]) for i in range(len(sizes)))):
            prob = _problem_array(torch, rows, dev)
            fns.append((_kp.launcher(p, rows[p.first], prob.data_ptr(), maps + off), buf, prob))
        if torch.cuda.is_current_stream_capturing():  # a captured graph replays these launches after the run is gone
            _retired.extend(prob for _, _, prob in fns)
    return fns


def _refuse_or_record(kernel: str, why: str, strict: bool) -> None:
    """Before a torch fallback: ``strict`` raises ``GemmError`` with the reason, else ``last_path`` records it."""
    if strict:
        raise GemmError(f"the {kernel} cannot take this call: {why} (strict=True)")
    set_path("torch:" + why)
