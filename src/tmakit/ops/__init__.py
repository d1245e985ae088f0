"""User-facing ops on torch tensors, built on TMA (``tk.ops``).

    import tmakit as tk
    tk.ops.copy(src, dst)                      # dst[...] = src
    y = tk.ops.transpose(x, 0, 1)              # contiguous x.transpose(0, 1)
    y = tk.ops.permute(x, (0, 3, 1, 2))        # contiguous x.permute(...)
    tk.ops.reduce_into(dst, src, op="add")     # dst = dst (op) src: TMA load-combine-store or store-reduce
    c = tk.ops.gemm(a, b)                      # a @ b with TMA + wgmma
    c = tk.ops.grouped_mm(a, b, offs)          # torch._grouped_mm: rows of a grouped by offs, one b per group
    cs = tk.ops.gemm_list(As, Bs)              # [a @ b for a, b in zip(As, Bs)] in one launch (ptr-array)
    cs = tk.ops.scaled_gemm_list(qAs, qBs, sas, sbs)  # the same for FP8 with per-tensor / row-wise scales
    c = tk.ops.scaled_mm(qa, qb, sa, sb)       # FP8 GEMM: torch._scaled_mm's modes + block-wise
    c = tk.ops.scaled_grouped_mm(qa, qb, sa, sb, offs)  # FP8 MoE GEMM: torch._scaled_grouped_mm + block-wise

Every bandwidth op is one kernel launch of TMA loads into shared memory and TMA stores or store-reduces out of it:
persistent, pipelined CTAs (a ring of stages) for copies and store-reduce, or -- where that measured faster on an
H200 -- one short CTA per tile handed out by the hardware (transposes, the combine reduce from 32 MiB;
docs/PERFORMANCE.md says which shape each op takes and why). What TMA can describe: CUDA tensors on a Hopper GPU,
16-byte-aligned base addresses (128-byte for the transposing path), at most 5 dimensions after merging contiguous
ones, one unit-stride dimension in each tensor, every other stride a multiple of 16 bytes, no broadcast (stride 0)
dims. When a call falls outside that (or the dtypes differ, or no GPU runtime is present), the op **falls back to
the equivalent torch code** and records why in :data:`last_path`; pass ``strict=True`` to get a ``ValueError``
naming the reason instead. A source and destination that share memory (other than as the very same view) are
refused with ``ValueError`` whatever the path (``tmakit.memory_overlap`` decides exactly). Autograd: with grad mode
on and an input requiring grad, ``transpose`` / ``permute`` (without ``out``) are differentiable (the backward is the
inverse permute, on TMA too); ``copy``, ``reduce_into`` and ``out=`` calls run torch's op, which records the graph
(or raises where torch does). Devices and threads: the ops launch on the tensors' device (switching to it when
another is current) and its current stream; threads may share the cached launchers (each thread patches and
launches its own packed copy), and :data:`last_path` is per thread. ``torch.compile``: while it traces, each op is the
custom op ``torch.ops.tmakit.*`` (``tmakit.ops.library``), which stays in the compiled graph (no graph break) and
runs the eager op at run time.

Where things are: ``memory_ops`` (copy, transpose, permute, reduce_into), ``gemm``, ``grouped`` (grouped_mm and
the ptr-array lists; ``grouped_grad`` its gradients, ``grouped_torch`` its torch paths), ``fast_path`` (the cache of
planned launchers all ops share), ``common`` (per-thread state, devices, compile/autograd checks), ``library`` and
``grouped_library`` (the torch custom ops). torch is imported when ``tk.ops`` is first used: ``import tmakit`` does
not need it.
"""

from __future__ import annotations

import sys as _sys
import types as _types

from .common import state as _state
from .gemm import GemmError, GemmOptions, gemm
from .grouped import gemm_list, grouped_mm, scaled_gemm_list
from .memory_ops import REDUCE_OPS, copy, permute, reduce_into, transpose
from .scaled_grouped import scaled_grouped_mm  # FP8 MoE GEMM (torch._scaled_grouped_mm + block-wise)
from .scaled_mm import scaled_mm  # FP8 GEMM (torch._scaled_mm's modes + block-wise); quantizers: tk.ops.quantize

__all__ = ["copy", "transpose", "permute", "reduce_into", "gemm", "GemmOptions", "GemmError", "last_path",
           "REDUCE_OPS", "scaled_mm", "grouped_mm", "gemm_list", "scaled_gemm_list",
           "scaled_grouped_mm"]

try:
    import torch as _torch  # noqa: F401  (the ops take torch tensors; without torch they raise when called)
except ImportError:  # pragma: no cover - depends on the environment
    pass
else:
    from . import (
        grouped_library,  # noqa: F401  (registers torch.ops.tmakit.grouped_mm / grouped_mm_out)
        library,  # noqa: F401  (registers torch.ops.tmakit.*: torch.compile and autograd call them)
        scaled_mm_library,  # noqa: F401  (registers torch.ops.tmakit.scaled_mm / scaled_mm_out)
    )


class _OpsModule(_types.ModuleType):
    """``tk.ops`` itself, so that ``last_path`` is a per-thread property: how the calling thread's last op ran --
    ``"tma:flat"`` / ``"tma:bulk"`` (contiguous copies: tensor maps / non-tensor bulk copies), ``"tma:strided"``,
    ``"tma:transpose"``, ``"plain:transpose"`` (a transpose whose rows TMA cannot describe, without TMA),
    ``"tma:combine"`` (reduce_into's load-combine-store), ``"tma"`` / ``"tma+pad(...)"`` (gemm),
    ``"torch:<reason>"`` (the fallback ran) or ``"none:src is dst"`` (a copy onto itself: nothing to do); ``""``
    before the thread's first op. Assigning it (``tk.ops.last_path = ""``) sets the calling thread's value."""

    @property
    def last_path(self) -> str:
        return _state.path

    @last_path.setter
    def last_path(self, value: str) -> None:
        _state.path = value


_sys.modules[__name__].__class__ = _OpsModule
