"""``scaled_grouped_mm(a, b, scale_a, scale_b, offs)``: ``torch._scaled_grouped_mm``'s FP8 mixture-of-experts GEMM
on the grouped TMA + fp8 wgmma kernel, plus DeepSeek-V3's block-wise scales.

The kernel takes the MoE layout: ``a`` (M, K) float8 with the tokens sorted by expert, ``b`` (G, K, N) float8 with
each ``b[g]`` K-major (``w.transpose(-2, -1)`` of a contiguous (G, N, K) ``w``, as torch requires), ``offs`` (G,)
int32 end rows, fp32 scales:

- row-wise (torch's): scale_a (M,) per row of ``a``, scale_b (G, N) per column of each ``b[g]``; scale_b (G,)
  gives one scale per expert and a one-element scale_a one scale for all of ``a`` (zero strides in the kernel);
- block-wise: scale_a (M, ceil(K/128)) per 1x128 of ``a``, scale_b (G, ceil(N/128), ceil(K/128)) per 128x128 block
  of each ``w[g]`` (``tmakit.ops.quantize`` makes both); each 128-deep partial sum is scaled in fp32 registers.

``out[offs[g-1]:offs[g]] = (a[offs[g-1]:offs[g]] @ b[g]) * scales``. Accumulation as in ``tk.ops.scaled_mm``:
two-level by default (every 128-deep K block's tensor-core sum added into an fp32 total), ``use_fast_accum=True``
(row-wise only) one tensor-core accumulation over all of K. Output bfloat16 (default), float16 or float32. The offsets
stay on the device (clamped there, so any ``offs`` is memory-safe; ``check_offs=True`` checks them on the host and
raises ``ValueError``); rows past the last offset are left as they are.

Arguments that mean nothing (non-fp8 inputs, shapes that do not compose, scale shapes of no mode, a bad ``offs``)
raise ``GemmError`` / ``ValueError``. The batched form, 3-D ``a`` (G, M, K) x 3-D ``b`` (G, K, N) without offs, runs
on the kernel as G equal groups (scale_a (G, M) and scale_b (G, N) row-wise as torch's; scale_a (G, M, ceil(K/128))
and scale_b (G, ceil(N/128), ceil(K/128)) block-wise). The other forms ``torch._scaled_grouped_mm`` has (2-D x 2-D
grouped along K, 3-D x 2-D) run torch's op. Valid MoE calls the kernel cannot take (CPU tensors, not a Hopper
GPU, strides TMA cannot read, B not K-major) run ``torch._scaled_grouped_mm`` where torch takes them, else a
dequantize + fp32 matmul per group (:func:`scaled_grouped_mm_reference`; it reads the last offset, so that rows past
it stay as they are here too). ``tk.ops.last_path`` says why; ``strict=True`` raises instead. The
kernel's path is ``"tma:scaled_grouped:<mode>"``. Under ``torch.compile`` the call is the custom op
``torch.ops.tmakit.scaled_grouped_mm`` (``scaled_grouped_mm_out`` with ``out``).
"""

from __future__ import annotations

from ..kernels import gemm_grouped as _kg
from ..kernels.gemm import GemmError
from .common import check_tensor, compiling, current_device, on_device, set_path, torch_module
from .grouped import _check_offs_tensor, _check_offs_values, _flat_rows, remember_launch
from .quantize import BLOCK, expand_blocks
from .scaled_mm import _why_not_kernel

_FP8_CONFIGS = _kg._FP8  # the configs a call may name
__all__ = ["scaled_grouped_mm", "scaled_grouped_mm_reference"]

_plans: dict = {}


def _name(dt) -> str:
    return str(dt).rsplit(".", 1)[-1]


def scaled_grouped_mm(a, b, scale_a, scale_b, offs=None, *, bias=None, scale_result=None, out_dtype=None,
                      use_fast_accum=False, out=None, strict=False, check_offs=False, config=None):
    """``torch._scaled_grouped_mm(a, b, scale_a, scale_b, offs, out_dtype=..., use_fast_accum=...)`` with the TMA
    kernel for 2-D ``a`` x 3-D ``b`` (module docstring: modes, fallback, ``strict``, ``check_offs``). ``out``: an
    optional (M, N) result; ``config``: a name in ``tmakit.kernels.gemm_fp8.CONFIGS`` (single-CTA configs; default:
    ``tmakit.kernels.gemm_grouped.choose_grouped_fp8_config``). ``bias`` and ``scale_result`` must be None (torch
    supports neither here). Runs on the tensors' device and its current stream; returns the result."""
    key = None
    if not check_offs and not compiling():  # the cached path of a call that ran before (with its config, if named)
        try:
            key = (a.shape, a.stride(), a.dtype, a.data_ptr(), b.shape, b.stride(), b.dtype, b.data_ptr(),
                   scale_a.shape, scale_a.stride(), scale_a.dtype, scale_a.data_ptr(), scale_b.shape, scale_b.stride(),
                   scale_b.dtype, scale_b.data_ptr(),
                   None if offs is None else (offs.shape, offs.dtype, offs.data_ptr()),
                   None if out is None else (out.shape, out.stride(), out.dtype, out.data_ptr()), out_dtype,
                   use_fast_accum, bias is None and scale_result is None, config)
            run = _fast.get(key)
        except (AttributeError, TypeError):  # not tensors: the checks below say so
            key = run = None
        if run is not None and not (a.requires_grad or b.requires_grad) and a.get_device() == current_device():
            return run(a, out)
    torch = torch_module()
    for nm, t in (("a", a), ("b", b), ("scale_a", scale_a), ("scale_b", scale_b)):
        check_tensor(nm, t)
    if bias is not None or scale_result is not None:
        raise GemmError("scaled_grouped_mm: bias and scale_result are not supported (as torch._scaled_grouped_mm); "
                        "add a bias after the call")
    if out_dtype is None:
        out_dtype = out.dtype if out is not None else torch.bfloat16
    mode, views = _meaning(torch, a, b, scale_a, scale_b, offs, out, out_dtype, use_fast_accum, config)
    if compiling():
        od, fast = _name(out_dtype), bool(use_fast_accum)
        if out is None:
            return torch.ops.tmakit.scaled_grouped_mm(a, b, scale_a, scale_b, offs, od, fast, strict, check_offs,
                                                      config)
        torch.ops.tmakit.scaled_grouped_mm_out(a, b, scale_a, scale_b, offs, out, fast, strict, check_offs, config)
        return out
    if mode == "batch":
        return _batched(torch, a, b, scale_a, scale_b, out_dtype, out, bool(use_fast_accum), strict, config, key,
                        views)
    if mode == "other":  # a form torch has and the kernel does not take (2-D x 2-D along K, 3-D x 2-D)
        why = f"a is {a.dim()}-D, b {b.dim()}-D{'' if offs is not None else ', no offs'}: the kernel takes 2-D x 3-D " \
              "and 3-D x 3-D"
        if strict:
            raise GemmError(f"scaled_grouped_mm cannot run on tmakit's kernel: {why} (strict=True)")
        set_path(f"torch:{why}")
        c = torch._scaled_grouped_mm(a, b, scale_a, scale_b, offs=offs, out_dtype=out_dtype,
                                     use_fast_accum=bool(use_fast_accum))
        return c if out is None else out.copy_(c)
    if check_offs:
        _check_offs_values(torch, offs, int(a.shape[0]))
    p = _plan_or_refuse(torch, "", (a, b, scale_a, scale_b, offs, out), strict,
                        lambda: _plan(a, b, scale_a, scale_b, int(offs.shape[0]), out, _name(out_dtype), config,
                                      bool(use_fast_accum)))
    if p is None:
        return _fallback(torch, mode, a, b, scale_a, scale_b, offs, out_dtype, out, bool(use_fast_accum))
    if out is None:
        out = torch.empty((p.m, p.n), dtype=out_dtype, device=a.device)
    if p.m and p.n and p.groups:
        if p.k == 0:  # an empty sum: the grouped rows are zero (one read of the last offset)
            out[:_rows_used(offs, p.m)].zero_()
        else:
            with on_device(a.get_device()):
                _kg.launcher(p, a.data_ptr(), b.data_ptr(), out.data_ptr(), offs.data_ptr(), scale_a.data_ptr(),
                             scale_b.data_ptr())()
            if key is not None and a.get_device() == current_device():
                ptrs = (a.data_ptr(), b.data_ptr())
                tail = (offs.data_ptr(), scale_a.data_ptr(), scale_b.data_ptr())
                remember_launch(_fast, key, torch, p, f"tma:scaled_grouped:{p.scaling}",
                                lambda o: _kg.launcher(p, *ptrs, o.data_ptr(), *tail))
    set_path(f"tma:scaled_grouped:{p.scaling}")
    return out


def _plan_or_refuse(torch, why: str, tensors, strict: bool, plan):
    """The kernel's plan of a call (``plan()``), or None with ``last_path`` saying why the kernel does not take it
    (``why``, the tensors' devices, the plan's ``GemmError``); ``strict=True`` raises instead."""
    why = why or _why_not_kernel(torch, [t for t in tensors if t is not None])
    if not why:
        try:
            return plan()
        except GemmError as e:
            why = str(e)
    if strict:
        raise GemmError(f"scaled_grouped_mm cannot run on tmakit's kernel: {why} (strict=True)")
    set_path(f"torch:{why}")
    return None


_fast: dict = {}  # call layout (shapes, strides, dtypes, pointers, knobs) -> run(a, out) of a call the kernel took


def _meaning(torch, a, b, scale_a, scale_b, offs, out, out_dtype, fast, config) -> tuple[str, tuple | None]:
    """(The scaling mode ("row" or "block"; "batch" for 3-D x 3-D, "other" for the forms only torch runs), the batch's
    views (:func:`_batch_views`) or None), after the checks whose failure no path could run (meaningless arguments
    and knobs raise whichever path would run)."""
    for nm, t in (("a", a), ("b", b)):
        if _name(t.dtype) not in ("float8_e4m3fn", "float8_e5m2"):
            raise GemmError(f"{nm}.dtype must be float8_e4m3fn or float8_e5m2, got {_name(t.dtype)}; quantize it "
                            "first (tmakit.ops.quantize)")
    if a.dim() not in (2, 3) or b.dim() not in (2, 3):
        raise GemmError(f"scaled_grouped_mm takes 2-D or 3-D operands, got {a.dim()}-D and {b.dim()}-D")
    if a.dim() == 2 and b.dim() == 3 and offs is None:
        raise GemmError("scaled_grouped_mm of a 2-D a and a 3-D b (the MoE layout) needs offs: one int32 end row per "
                        "group of b")
    if a.dim() == 3 and b.dim() == 3:
        if offs is not None:
            raise GemmError("offs must be None for a 3-D a and a 3-D b (a batch: one group per batch entry)")
        return "batch", _batch_views(a, b, scale_a, scale_b, out, out_dtype, fast)
    if offs is None and 2 in (a.dim(), b.dim()):
        raise GemmError(f"offs is required where a or b is 2-D (a is {a.dim()}-D, b {b.dim()}-D): it says where each "
                        f"group ends, as for torch._scaled_grouped_mm")
    if a.dim() != 2 or b.dim() != 3:
        return "other", None
    (m, k), (g, kb, n) = tuple(int(s) for s in a.shape), tuple(int(s) for s in b.shape)
    if kb != k:
        raise GemmError(f"shapes do not compose: a is {m}x{k}, b is {g}x{kb}x{n} (a.shape[1] must equal b.shape[1])")
    od = _name(out_dtype)
    if od not in ("bfloat16", "float16", "float32"):
        raise GemmError(f"out_dtype must be bfloat16, float16 or float32, got {od}")
    if out is not None and (tuple(out.shape) != (m, n) or _name(out.dtype) != od):
        raise GemmError(f"out must be a ({m}, {n}) {od} tensor, got {tuple(out.shape)} {_name(out.dtype)}")
    _check_offs_tensor(torch, a, b, offs)
    scaling, _ = _kg._grouped_scales(scale_a, scale_b, m, n, k, g)
    _check_fast(scaling, fast)
    if config is not None and config not in _FP8_CONFIGS:
        raise GemmError(f"unknown fp8 config {config!r}; choose one of {sorted(_FP8_CONFIGS)}")
    return scaling, None


def _plan(a, b, scale_a, scale_b, groups: int, out, od, config, fast):
    key = tuple((tuple(t.shape), tuple(t.stride()), t.dtype, t.data_ptr() % 128) if t is not None else None
                for t in (a, b, scale_a, scale_b, out)) + (groups, od, config, fast)
    p = _plans.get(key)
    if p is None:
        p = _kg.plan_grouped_fp8(a, b, scale_a, scale_b, groups, out, od, config, fast)
        if len(_plans) > 1024:
            _plans.clear()
        _plans[key] = p
    return p


def _check_fast(scaling: str, fast) -> None:
    if scaling == "block" and fast:
        raise GemmError("use_fast_accum applies to row-wise scaling only: block scaling sums each 128-deep K block "
                        "apart (that is where its scales apply); pass use_fast_accum=False")


def _batch_views(a, b, scale_a, scale_b, out, out_dtype, fast):
    """The checks of a 3-D x 3-D call (whichever path runs) and its (G M, .) views for the kernel: ``(a2, sa2, out2,
    scaling, why)``, ``why`` saying why a view would need a copy (the kernel then does not take the call)."""
    (g, m, k), (gb, kb, n) = tuple(int(x) for x in a.shape), tuple(int(x) for x in b.shape)
    if (gb, kb) != (g, k):
        raise GemmError(f"a {tuple(a.shape)} and b {tuple(b.shape)} do not compose as a batch: b must be (G, K, N) = "
                        f"({g}, {k}, N)")
    od = _name(out_dtype)
    if od not in ("bfloat16", "float16", "float32"):
        raise GemmError(f"out_dtype must be bfloat16, float16 or float32, got {od}")
    if out is not None and (tuple(out.shape) != (g, m, n) or _name(out.dtype) != od):
        raise GemmError(f"out must be a ({g}, {m}, {n}) {od} tensor, got {tuple(out.shape)} {_name(out.dtype)}")
    scaling = _batch_scaling(g, m, n, k, scale_a, scale_b)
    _check_fast(scaling, fast)
    a2, why = _flat_rows(a, "a")
    sa2, why_s = scale_a, ""
    if scale_a.dim() == 3:  # per 1x128: (G M, K/128)
        sa2, why_s = _flat_rows(scale_a, "scale_a")
    elif scale_a.dim() == 2:  # per row: (G M,)
        sa2, why_s = _flat_rows(scale_a.unsqueeze(-1), "scale_a")
        sa2 = None if sa2 is None else sa2[:, 0]
    out2, why_o = _flat_rows(out, "out") if out is not None else (None, "")
    return a2, sa2, out2, scaling, why or why_s or why_o


def _batch_scaling(g, m, n, k, scale_a, scale_b) -> str:
    """The scaling mode a batch's scale shapes name ("row" or "block"), or GemmError with the accepted shapes."""
    for nm, t in (("scale_a", scale_a), ("scale_b", scale_b)):
        if _name(t.dtype) != "float32":
            raise GemmError(f"{nm} must be float32, got {_name(t.dtype)}; pass {nm}.float()")
    sa, sb = tuple(int(x) for x in scale_a.shape), tuple(int(x) for x in scale_b.shape)
    kb, nb = -(-k // BLOCK), -(-n // BLOCK)
    if sa == (g, m, kb) and sb == (g, nb, kb):
        return "block"
    if sa in ((g, m), (), (1,)) and sb in ((g, n), (g,), (g, 1)):
        return "row"
    raise GemmError(_batch_scales_rule(g, m, n, k, scale_a, scale_b))


def _batch_scales_rule(g, m, n, k, scale_a, scale_b) -> str:
    kb, nb = -(-k // BLOCK), -(-n // BLOCK)
    return (f"scale shapes {tuple(scale_a.shape)} and {tuple(scale_b.shape)} name no scaling mode for a batch of {g} "
            f"products {m}x{k} @ {k}x{n}; use scale_a ({g}, {m}) and scale_b ({g}, {n}) (row-wise, as "
            f"torch._scaled_grouped_mm; scale_b ({g},) for one scale per batch entry, a one-element scale_a for all "
            f"of a), or scale_a ({g}, {m}, {kb}) and scale_b ({g}, {nb}, {kb}) (block-wise)")


def _batched(torch, a, b, scale_a, scale_b, out_dtype, out, fast, strict, config, key, views):
    """3-D ``a`` (G, M, K) x 3-D ``b`` (G, K, N) -> (G, M, N), ``torch._scaled_grouped_mm``'s batched form, on the
    grouped kernel as G equal groups (group bounds from M on the device, no offs): ``a``, its row or 1x128 scales and
    the result as (G M, .) views, no copies. Calls that do not flatten so, or that the kernel cannot take, run
    ``torch._scaled_grouped_mm`` where torch takes them, else the dequantized fp32 product."""
    g, m, n = int(a.shape[0]), int(a.shape[1]), int(b.shape[2])
    od = _name(out_dtype)
    a2, sa2, out2, scaling, why = views
    p = _plan_or_refuse(torch, why, (a, b, scale_a, scale_b, out), strict,
                        lambda: _plan(a2, b, sa2, scale_b, g, out2, od, config, fast))
    if p is None:
        c = _batched_torch(torch, a, b, scale_a, scale_b, scaling, out_dtype, fast)
        return c if out is None else out.copy_(c)
    if out is None:
        out = torch.empty((g, m, n), dtype=out_dtype, device=a.device)
    path = f"tma:scaled_grouped:{p.scaling}"
    if p.m and p.n and p.groups:
        if p.k == 0:
            out.zero_()
        else:
            ptrs = (a.data_ptr(), b.data_ptr())
            scales = (scale_a.data_ptr(), scale_b.data_ptr())
            with on_device(a.get_device()):
                _kg.launcher(p, *ptrs, out.data_ptr(), 0, *scales)()
            if key is not None and a.get_device() == current_device():
                remember_launch(_fast, key, torch, p, path, lambda o: _kg.launcher(p, *ptrs, o.data_ptr(), 0, *scales),
                                (g, m, n))
    set_path(path)
    return out


def _batched_torch(torch, a, b, scale_a, scale_b, scaling, out_dtype, fast):
    """A batch off the kernel: ``torch._scaled_grouped_mm`` (row-wise scales of torch's shapes), else the product of
    the dequantized operands in fp32."""
    g, m, k = (int(x) for x in a.shape)
    n = int(b.shape[2])
    if scaling == "row" and tuple(scale_a.shape) == (g, m) and tuple(scale_b.shape) == (g, n):
        try:
            return torch._scaled_grouped_mm(a, b, scale_a, scale_b, out_dtype=out_dtype, use_fast_accum=fast)
        except (AttributeError, RuntimeError, NotImplementedError, TypeError, ValueError):  # torch refused it
            pass
    sa, sb = scale_a.float(), scale_b.float()
    if scaling == "block":
        ad = torch.stack([a[i].float() * expand_blocks(sa[i], m, k, 1, BLOCK) for i in range(g)])
        bd = torch.stack([b[i].float() * expand_blocks(sb[i], n, k, BLOCK, BLOCK).t() for i in range(g)])
    else:
        ad = a.float() * (sa.reshape(g, m, 1) if sa.numel() > 1 else sa.reshape(()))
        bd = b.float() * sb.reshape(g, 1, -1)
    return torch.bmm(ad, bd).to(out_dtype)


def _fallback(torch, mode, a, b, scale_a, scale_b, offs, out_dtype, out, fast):
    """``torch._scaled_grouped_mm`` where torch takes the call (row-wise, e4m3, bfloat16 out), else the reference."""
    c = None
    if mode == "row" and tuple(scale_a.shape) == (a.shape[0],) and tuple(scale_b.shape) == (b.shape[0], b.shape[2]):
        try:
            c = torch._scaled_grouped_mm(a, b, scale_a, scale_b, offs=offs, out_dtype=out_dtype, use_fast_accum=fast)
        except (AttributeError, RuntimeError, NotImplementedError, TypeError, ValueError):  # torch refused it
            c = None
    if c is None:
        c = scaled_grouped_mm_reference(a, b, scale_a, scale_b, offs, out_dtype)
    if out is None:
        return c
    used = _rows_used(offs, int(a.shape[0]))  # rows past the last offset stay as they are, as on the kernel path
    out[:used].copy_(c[:used])
    return out


def _rows_used(offs, m: int) -> int:
    """The rows the groups cover: the last offset clamped to [0, M] (a device-to-host read)."""
    return min(max(int(offs[-1]), 0), m) if int(offs.shape[0]) else 0


def scaled_grouped_mm_reference(a, b, scale_a, scale_b, offs, out_dtype=None, rows_after=None):
    """What every mode computes, without the fp8 tensor cores: both operands dequantized, each group's rows times its
    B in fp32 (``torch.float64`` inputs are not needed: fp32 products of fp8 values are exact), converted to
    ``out_dtype`` (default bfloat16). Rows past the last offset are zero (``rows_after`` fills them with another
    value). Reads ``offs`` on the host (one synchronisation)."""
    torch = torch_module()
    out_dtype = out_dtype or torch.bfloat16
    (m, k), (g, _, n) = tuple(a.shape), tuple(b.shape)
    scaling, _ = _kg._grouped_scales(scale_a, scale_b, m, n, k, g)
    c = torch.full((m, n), 0.0 if rows_after is None else rows_after, dtype=torch.float32, device=a.device)
    if m == 0 or g == 0:
        return c.to(out_dtype)
    sa, sb = scale_a.float(), scale_b.float()
    if scaling == "block":
        ad = a.float() * expand_blocks(sa, m, k, 1, BLOCK)
        bd = torch.stack([b[i].float() * expand_blocks(sb[i], n, k, BLOCK, BLOCK).t() for i in range(g)]) if g else \
            b.float()
    else:
        ad = a.float() * (sa.reshape(-1, 1) if sa.numel() == m and m > 1 else sa.reshape(()))
        bd = b.float() * sb.reshape(g, 1, -1)
    lo = 0
    for i, hi in enumerate(int(x) for x in offs.tolist()):
        hi = min(max(hi, lo), m)
        if hi > lo:
            c[lo:hi] = ad[lo:hi] @ bd[i]
        lo = hi
    return c.to(out_dtype)
