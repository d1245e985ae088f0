"""The cached GEMM calls routed to cuBLAS: its kernels, recorded once per call layout and launched directly.

``gemm`` sends a call to cuBLAS where cuBLAS runs it faster than tmakit's kernels (``gemm_route``). Through
``torch.mm`` every repeated call would pay torch's dispatch and cuBLAS's per-call planning on top of tmakit's own
lookup, i.e. more host time than ``torch.matmul``. Instead the second time a layout (shapes, strides, dtypes,
address alignments) is seen -- a layout used once does not pay for it -- it is planned with cuBLASLt
(``tmakit.cuda.cublaslt``: the algorithm its heuristic ranks first, which is the one ``torch.matmul`` runs) and
that call's kernel launches are recorded (``tmakit.cuda.replay``); later calls patch their addresses into the
recorded parameters and launch the same kernels on torch's current stream. Where the library or the recording is
not available, or the layout does not fit, the route stays ``torch.mm``. ``scaled_mm``'s per-tensor calls that
go to ``torch._scaled_mm`` (cuBLAS's FP8 GEMM) take the same route, with the two scale addresses recorded too.
"""

from __future__ import annotations

import threading

from ..bounded import make_room
from .common import on_device, state
from .gemm_route import torch_gemm

__all__ = ["runner", "scaled_runner", "scaled_row_runner", "record_torch_call", "forget"]

_MOVE = 1 << 32  # the recordings' alternate addresses: 4 GiB further (same alignment), never dereferenced
_layouts: dict = {}  # layout key -> (LtMatmul, {workspace address: RecordedLaunch}) or None
_seen: dict = {}  # layout key -> times seen before it was planned
_side: dict = {}  # device -> the idle stream recordings are captured on
_workspaces: dict = {}  # (device, stream) -> cuBLASLt workspace tensor
_retired: list = []  # workspaces a larger one replaced
_lock = threading.Lock()
_record_lock = threading.Lock()  # one capture at a time on a device's side stream
_get_ident = threading.get_ident


def forget() -> None:
    """Drop the recorded layouts (their kernels stay loaded in cuBLAS)."""
    with _lock:
        _layouts.clear()
        _seen.clear()


def _dtype(t) -> str:
    return str(t).removeprefix("torch.")


def _layout_key(dev, a, b, od, ldc, out_align, *extra):
    from ..cuda.cublaslt import alignment

    return (dev, *a.shape, b.shape[1], a.dtype, b.dtype, od, a.stride(), b.stride(), ldc, alignment(a.data_ptr()),
            alignment(b.data_ptr()), out_align, *extra)


def _layout(key, plan):
    """(plan, recordings) of this layout, planned once (``plan()`` on the device: an LtMatmul, whose recordings are
    by workspace address, or a torch op's marker); None where it cannot be planned, or (False) on the layout's first
    sighting: a layout is planned and recorded the second time it is seen."""
    got = _layouts.get(key, False)
    if got is False:
        seen = _seen.get(key, 0) + 1
        if seen < 2:
            make_room(_seen, 4096)
            _seen[key] = seen
            return False
        _seen.pop(key, None)
        with on_device(key[0]):
            lt = plan()
        got = (lt, {}) if lt is not None else None
        with _lock:
            make_room(_layouts, 1024)
            _layouts[key] = got
    return got


def _workspace(torch, dev: int, stream: int, nbytes: int) -> int:
    """This stream's workspace address (0 when none is needed): one buffer per (device, stream), grown to the
    largest need seen (a replaced buffer is kept: recordings and captured graphs still hold its address); stream
    order makes sharing it between layouts safe."""
    if not nbytes:
        return 0
    w = _workspaces.get((dev, stream))
    if w is None or w.numel() < nbytes:
        if w is not None:
            _retired.append(w)
        size = max(nbytes, 2 * w.numel() if w is not None else 0)
        w = _workspaces[(dev, stream)] = torch.empty(size, dtype=torch.uint8, device=f"cuda:{dev}")
    return w.data_ptr()


def _side_stream(torch, dev: int):
    side = _side.get(dev)
    if side is None:
        side = _side[dev] = torch.cuda.Stream(dev)
    return side


def _recorded(torch, dev, layout, ws: int, ptrs):
    """The layout's recording over workspace ``ws`` (recorded on first use, one recording at a time), or None where
    it cannot be recorded. ``ptrs``: A, B, D and (FP8) the two scale addresses."""
    from ..cuda import replay

    lt, recs = layout
    rec = recs.get(ws, False)
    if rec is False:
        with _record_lock, on_device(dev):
            side = _side_stream(torch, dev)
            rec = replay.record(lambda st, a, b, d, *scales: lt(a, b, d, ws, st, *scales), side.cuda_stream, ptrs,
                                tuple(p + _MOVE for p in ptrs))
        recs[ws] = rec
    return rec


# record_torch_call's moved captures need same-shaped tensors in new memory: calls whose tensors span more than
# this are not recorded (their GPU time hides the host time a replay would save, and the copies' memory would stay
# in torch's cache)
RECORD_COPY_LIMIT = 64 << 20


def _extent_bytes(t) -> int:
    return (1 + sum((n - 1) * st for n, st in zip(t.shape, t.stride())) if t.numel() else 1) * t.element_size()


def _alternate(torch, t):
    """(a tensor like ``t`` -- shape, strides, dtype, address modulo 256 -- in new memory, its buffer)."""
    buf = torch.empty(_extent_bytes(t) + 512, dtype=torch.uint8, device=t.device)
    skip = (t.data_ptr() - buf.data_ptr()) % 256
    alt = torch.empty(0, dtype=t.dtype, device=t.device)
    alt.set_(buf.untyped_storage(), skip // t.element_size(), t.shape, t.stride())
    return alt, buf


def _allocations(torch, dev: int) -> int:
    return torch.cuda.memory_stats(dev).get("allocation.all.allocated", 0)


def record_torch_call(torch, dev: int, call, tensors):
    """Record ``call(*tensors)`` -- a torch op that launches kernels on the current stream, the tensors its operands,
    scales and output -- with each tensor's address as an address slot (moved to a same-shaped tensor in new memory
    for the moved captures), or None: not a chain of kernels explained by those addresses, an op that allocated
    memory from torch's allocator while it was captured, or kernels that hold any other device address (a
    workspace the recording would keep). The call first runs once for real on the new-memory tensors on the side
    stream, so that torch's lazy per-stream set-up (handles, workspaces) happens outside the capture."""
    from ..cuda import replay

    if sum(_extent_bytes(t) for t in tensors) > RECORD_COPY_LIMIT:
        return None
    with _record_lock, on_device(dev):
        alts = [_alternate(torch, t) for t in tensors]
        base, moved = tuple(t.data_ptr() for t in tensors), tuple(a.data_ptr() for a, _ in alts)
        side = _side_stream(torch, dev)
        side.wait_stream(torch.cuda.current_stream(dev))  # the new buffers were allocated on the current stream
        try:
            with torch.cuda.stream(side):
                call(*[a for a, _ in alts])
        except (RuntimeError, NotImplementedError, TypeError):
            return None
        finally:
            side.synchronize()

        def issue(st, *ptrs):
            with torch.cuda.stream(side):
                call(*[t if p == b else a for p, b, t, (a, _) in zip(ptrs, base, tensors, alts)])

        before = _allocations(torch, dev)
        rec = replay.record(issue, side.cuda_stream, base, moved)
        if rec is not None and (_allocations(torch, dev) != before
                                or replay.other_addresses(rec, replay.device_address)):
            rec = None
    return rec


def _replayer(torch, dev, record, ws_bytes: int, ptrs, shape, od):
    """``launch(out, device)`` -> ``out`` (a new result when None), launching ``record(workspace, ptrs)``'s
    recording over ``ptrs`` (A, B, D, scales...; D is replaced by each new result's address) on the current stream;
    None when the call must take the library's own path (inside a user's capture before this stream was recorded, a
    misaligned new result). Returns None when the call cannot be recorded at all."""
    ap, bp, dp0 = ptrs[:3]
    rest = tuple(ptrs[3:])
    stream_of = torch._C._cuda_getCurrentRawStream
    slots: dict = {}  # (stream, thread) -> this thread's copy of the recording for that stream's workspace

    def slot(st: int, dp: int):
        if torch.cuda.is_current_stream_capturing():  # no recording or allocation inside a user's capture
            return None
        rec = record(_workspace(torch, dev, st, ws_bytes), (ap, bp, dp, *rest))
        if rec is None:
            return None
        mine = slots[(st, _get_ident())] = rec.copy()
        return mine

    dp_first = dp0 or (ap | 0xFFFF) + 1  # a new output's stand-in while recording: 64 KiB aligned, never touched
    if slot(stream_of(dev), dp_first) is None:  # records now: a call that cannot be recorded keeps the library
        return None
    empty = torch.empty

    def launch(out, device):
        st = stream_of(dev)
        rec = slots.get((st, _get_ident()))
        if rec is None:
            rec = slot(st, dp_first)
            if rec is None:
                return None
        if out is None:
            out = empty(shape, dtype=od, device=device)
            dp = out.data_ptr()
            if dp & 255:  # an allocator that gave less alignment than the plan assumed
                return None
            rec(st, ap, bp, dp, *rest)
        else:
            rec(st, ap, bp, dp0, *rest)
        return out

    return launch


def _lt_replayer(torch, dev, layout, ptrs, shape, od):
    """:func:`_replayer` of a planned cuBLASLt layout: one recording per stream's workspace."""
    return _replayer(torch, dev, lambda ws, p: _recorded(torch, dev, layout, ws, p), layout[0].workspace_bytes, ptrs,
                     shape, od)


def runner(torch, a, b, out, od, path: str):
    """``run(a, b, out)`` for a cached call routed to cuBLAS (the ``_fast`` entry of ``gemm``: ``a``, ``b`` and a
    given ``out`` keep these addresses), or None where the recorded route cannot take it (yet): the layout's first
    sighting, no cuBLASLt, a stream being captured now, a dtype, shape or stride cuBLASLt is not given here, a call
    that did not record."""
    if a.dtype not in (torch.bfloat16, torch.float16) or b.dtype != a.dtype or od not in (a.dtype, torch.float32):
        return None
    m, k = a.shape
    n = b.shape[1]
    if min(m, n, k) < 1 or torch.cuda.is_current_stream_capturing():
        return None
    if out is not None and (out.dtype != od or (out.stride(1) != 1 and n > 1)):
        return None
    from ..cuda import cublaslt

    if not cublaslt.available():
        return None
    dev = a.get_device()
    ldc = n if out is None or m == 1 else out.stride(0)
    out_align = 256 if out is None else cublaslt.alignment(out.data_ptr())
    ap, bp = a.data_ptr(), b.data_ptr()
    layout = _layout(_layout_key(dev, a, b, od, ldc, out_align), lambda: cublaslt.plan(
        dev, _dtype(a.dtype), _dtype(od), m, n, k, a.stride(), b.stride(), ldc, ap, bp, out_align))
    if not layout:
        return None
    launch = _lt_replayer(torch, dev, layout, (ap, bp, out.data_ptr() if out is not None else 0), (m, n), od)
    if launch is None:
        return None

    def run(a, b, out):
        r = launch(out, a.device)
        state.path = path
        return r if r is not None else torch_gemm(torch, a, b, out, od)

    return run


def _scaled_call_fits(torch, a, b, out, od) -> bool:
    """A non-empty FP8 call, not inside a capture, into a new result or a contiguous ``out`` of the output dtype."""
    if min(*a.shape, b.shape[1]) < 1 or torch.cuda.is_current_stream_capturing():
        return False
    return out is None or (out.dtype == od and out.is_contiguous())


def scaled_runner(torch, a, b, scale_a, scale_b, out, od, fast_accum: bool):
    """``launch(out, device)`` -> the result, for a cached ``scaled_mm`` call with per-tensor scales routed to cuBLAS
    (``a``, ``b``, the scales and a given ``out`` keep these addresses), or None where the recorded route cannot
    take it (yet): as :func:`runner`; ``launch`` itself returns None where the call must go to ``torch._scaled_mm``.
    cuBLASLt is given what ``torch._scaled_mm`` gives it (TN operands, scale pointers, fast accumulation flag), so
    its heuristic picks the same kernel."""
    if not _scaled_call_fits(torch, a, b, out, od):
        return None
    m, k = a.shape
    n = b.shape[1]
    from ..cuda import cublaslt

    if not cublaslt.available():
        return None
    dev = a.get_device()
    out_align = 256 if out is None else cublaslt.alignment(out.data_ptr())
    ap, bp = a.data_ptr(), b.data_ptr()
    layout = _layout(_layout_key(dev, a, b, od, n, out_align, "tensor", fast_accum), lambda: cublaslt.plan(
        dev, _dtype(a.dtype), _dtype(od), m, n, k, a.stride(), b.stride(), n, ap, bp, out_align,
        b_dtype=_dtype(b.dtype), scaling="tensor", fast_accum=fast_accum))
    if not layout:
        return None
    return _lt_replayer(torch, dev, layout, (ap, bp, out.data_ptr() if out is not None else 0, scale_a.data_ptr(),
                                             scale_b.data_ptr()), (m, n), od)


def scaled_row_runner(torch, a, b, scale_a, scale_b, out, od, fast_accum: bool):
    """``launch(out, device)`` -> the result, for a cached ``scaled_mm`` call with row-wise scales routed to
    ``torch._scaled_mm`` (its own kernel: cuBLASLt offers no row-wise FP8 algorithm on Hopper), recorded on the
    layout's second sighting and replayed; None where it cannot be (as :func:`scaled_runner`). The recording is
    made on the call's own tensors (and same-shaped ones in new memory) with the output in a tensor of its own,
    and, holding no workspace of its own (``record_torch_call`` refuses calls that allocate), serves every
    stream."""
    if not _scaled_call_fits(torch, a, b, out, od):
        return None
    m, k = a.shape
    n = b.shape[1]
    from ..cuda.cublaslt import alignment

    dev = a.get_device()
    out_align = 256 if out is None else alignment(out.data_ptr())
    key = (_layout_key(dev, a, b, od, n, out_align, "row", fast_accum, scale_a.shape, scale_a.stride(),
                       scale_b.shape, scale_b.stride()))
    layout = _layout(key, lambda: _TorchCall())
    if not layout:
        return None
    tensors = [a, b, out if out is not None else torch.empty((m, n), dtype=od, device=a.device), scale_a, scale_b]

    def call(a, b, out, sa, sb):
        torch._scaled_mm(a, b, sa, sb, out_dtype=od, use_fast_accum=fast_accum, out=out)

    def record(ws, ptrs):
        recs = layout[1]
        if "any" not in recs:
            recs["any"] = record_torch_call(torch, dev, call, tensors)
        return recs["any"]

    launch = _replayer(torch, dev, record, 0, (a.data_ptr(), b.data_ptr(), out.data_ptr() if out is not None else 0,
                                               scale_a.data_ptr(), scale_b.data_ptr()), (m, n), od)
    tensors.clear()  # recorded (or not): keep no reference to the call's tensors
    return launch


class _TorchCall:
    """A layout whose recording is a torch op's own launch (no cuBLASLt plan, no workspace of tmakit's)."""

    workspace_bytes = 0
