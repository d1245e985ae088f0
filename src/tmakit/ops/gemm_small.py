"""``tk.ops.gemm``'s small-problem path: the one-tile-per-CTA kernel of ``tmakit.kernels.gemm_small``.

``takes``: a default call of the class where that kernel measured ahead of cuBLAS (``gemm_route.small_wins``)
whose operands it can load 16 bytes at a time (it reads any strides, but gathered element by element it is not
ahead). ``fits``: the kernel can take the call at all (``config="small"`` and tuned entries use it; ``strict`` does
not refuse it: the user named it). ``call`` checks, plans, launches and returns the result with a runner for the
ops' cached path.
"""

from __future__ import annotations

from ..bounded import make_room
from ..kernels import gemm_small as _ks
from ..kernels.gemm import GemmError, _dtype_name, check_compose
from ..memory_overlap import Region, relation, self_overlap
from . import gemm_route as _route
from .common import on_device, state

__all__ = ["PATH", "fits", "takes", "call"]

PATH = "small"
_OUT_NAMES = ("bfloat16", "float16", "float32")
_plans: dict = {}


def _out_dtype(a, out, out_dtype):
    """The result's dtype name, or None when the small kernel cannot write it (or out and out_dtype disagree)."""
    if out is not None and out_dtype is not None and out_dtype != out.dtype:
        return None
    od = _dtype_name(out.dtype if out is not None else (out_dtype or a.dtype))
    return od if od in _OUT_NAMES else None


def fits(a, b, out, out_dtype) -> bool:
    """The small kernel can take this call (2-D CUDA bf16/fp16 operands already checked by the caller): sizes that
    compose (none 0), an output dtype it writes, ``out`` of the result's shape on the inputs' device. Anything else
    is left to the main path, which reports it."""
    m, k = a.shape
    kb, n = b.shape
    if kb != k or 0 in (m, n, k) or _out_dtype(a, out, out_dtype) is None:
        return False
    return out is None or (out.device == a.device and tuple(out.shape) == (m, n))


def takes(a, b, out, out_dtype) -> bool:
    """A call the small kernel :func:`fits` of the class it runs faster than cuBLAS in."""
    m, k = a.shape
    n = b.shape[1]
    return (_route.small_wins(m, n, k) and fits(a, b, out, out_dtype)
            and _ks.loads_async(m, n, k, a.stride(), b.stride(), a.data_ptr(), b.data_ptr()))


def _check(a, b, out) -> None:
    """The rules the plan cannot see: shapes compose, and ``out`` (if any) has the result's shape, is on the inputs'
    device, writes no address twice and shares no byte with ``a`` or ``b``."""
    (m, k), (kb, n) = a.shape, b.shape
    check_compose(m, k, kb, n)
    if out is None:
        return
    if tuple(out.shape) != (m, n):
        raise GemmError(f"out has shape {tuple(out.shape)}, expected {(m, n)}")
    if out.device != a.device:
        raise GemmError(f"out is on {out.device}, inputs on {a.device}")
    o = Region.of(out)
    if self_overlap(o) is not False:
        raise GemmError(f"out (strides {tuple(out.stride())}) writes some address twice: pass a tensor whose "
                        "elements are distinct")
    for nm, t in (("a", a), ("b", b)):
        rel = relation(o, Region.of(t))
        if rel != "disjoint":
            why = "cannot be shown not to overlap" if rel == "unknown" else "overlaps"
            raise GemmError(f"out {why} {nm} in memory; the kernel reads {nm} while writing out: pass a separate "
                            "out tensor")


def _plan(a, b, out, od: str, tile=None):
    """The memoised plan for these shapes, strides and dtypes."""
    m, k = a.shape
    n = b.shape[1]
    cs = tuple(out.stride()) if out is not None else (n, 1)
    key = (m, n, k, a.dtype, od, tuple(a.stride()), tuple(b.stride()), cs, tile)
    p = _plans.get(key)
    if p is None:
        make_room(_plans, 1024)
        p = _plans[key] = _ks.plan_small(m, n, k, _dtype_name(a.dtype), od, a.stride(), b.stride(), cs, tile)
    return p


def call(torch, a, b, out, out_dtype, tile=None):
    """``(result, runner)``: run ``a @ b`` on the small kernel now; ``runner(a, b, out)`` repeats it for tensors of
    the same layout (the ops' cached path), or is None where the call must take the checked path each time."""
    _check(a, b, out)
    od = _out_dtype(a, out, out_dtype)
    if od is None:
        raise GemmError(f"the small GEMM writes bfloat16, float16 or float32; got out "
                        f"{None if out is None else out.dtype} and out_dtype {out_dtype}")
    m, n = a.shape[0], b.shape[1]
    if 0 in (m, n, a.shape[1]):
        state.path = "torch:an empty operand (M, N or K is 0): torch.matmul's result"
        return _route.torch_gemm(torch, a, b, out, getattr(torch, od)), None
    p = _plan(a, b, out, od, tile)
    dt = getattr(torch, od)
    launcher = _ks.launcher
    shape = (m, n)
    with on_device(a.get_device()):
        if out is None:
            r = torch.empty(shape, dtype=dt, device=a.device)
            launcher(p, a.data_ptr(), b.data_ptr(), r.data_ptr())()
        else:
            r = out
            fixed = launcher(p, a.data_ptr(), b.data_ptr(), out.data_ptr())
            fixed()
    state.path = PATH

    def run(a, b, out):  # the cached path: same layouts and addresses (out=None: a new result per call)
        if out is None:
            out = torch.empty(shape, dtype=dt, device=a.device)
            launcher(p, a.data_ptr(), b.data_ptr(), out.data_ptr())()
        else:
            fixed()
        state.path = PATH
        return out

    return r, run
