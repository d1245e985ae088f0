"""Host side of the bandwidth kernels (``stream.cu``, ``bandwidth_bulk.cu``, ``transpose.cu``,
``plain_transpose.cu``): layout planning, tensor maps, tile shapes, launches. Used by :mod:`tmakit.ops`; needs torch
tensors (imported lazily by the caller).

A *plan* turns a (src, dst) pair of equal-shape tensors into one of:

- ``flat``      both contiguous: a 2-D view ``(rows, W)`` of the bytes (8/4/2/1-byte words; W a power of two from
                256 up to ``CopyConfig.flat_width``) plus, when W does not divide the size, one tail box of a
                ``{256 + tail, 1}`` map, both handled by the same persistent kernel (OOB clipping, no tail kernel).
                Rank-1 maps are never used: the H200 driver refused every rank-1 tiled map we tried;
- ``strided``   both have the same unit-stride dim: one map per tensor over the same dims in the same order (the
                destination map may carry any strides: a permute that keeps the innermost dim is a pure TMA copy);
- ``transpose`` the unit-stride dims differ: TMA load of T x (KQ*T) boxes, a bank-conflict-free transpose through
                128B-swizzled shared memory, TMA store of T x T boxes;
- ``plain``     a (batched) transpose TMA cannot describe (a row stride not a multiple of 16 bytes, a base off 16
                or 128 bytes): ``plain_transpose.cu``, plain loads and stores through a shared-memory tile;
- ``None``      neither can describe it (no unit-stride dim, strides not multiples of 16 bytes without a transpose,
                rank > 5 after merging dims, broadcast strides ...): ``reason`` says why, the caller falls back.

The package, by job: ``config`` (configs and shipped defaults), ``plan`` (plans and box shapes), ``launchers``
(parameter structs, kernel loading, shared helpers), ``stream`` / ``bulk`` / ``transpose`` (one launcher builder per
kernel family), and here the dispatch (:func:`launcher_for`). The launch mechanism itself (packed parameters,
address patching, stream lookup, locks) is ``tmakit.cuda.packed``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from ...cuda.packed import Launcher
from .bulk import BULK_OPS, BulkDynLauncher, BulkLauncher, _bulk_launcher, bulk_supported
from .config import (
    COPY_CONFIG,
    PERSISTENT_TRANSPOSE,
    REDUCE_CONFIG,
    REDUCE_OPS,
    SMEM_PER_SM,
    TRANSPOSE_CONFIG,
    CacheHint,
    CopyConfig,
    Lean,
    TileOrder,
    TransposeConfig,
    transpose_config_for,
)
from .launchers import BulkParams, DynLauncher, StreamParams, TransposeParams, _grid, _order, sm_count
from .plan import Plan, _boxes, plan_copy, plan_plain_transpose
from .stream import _flat_launcher, _stream_launcher, _strided_launcher
from .transpose import _plain_transpose_launcher, _transpose_launcher, _transpose_params

__all__ = ["CacheHint", "Lean", "TileOrder", "CopyConfig", "TransposeConfig", "Plan", "Launcher", "BulkLauncher",
           "plan_copy", "launcher_for", "transpose_config_for", "flat_config", "COPY_CONFIG", "REDUCE_CONFIG",
           "TRANSPOSE_CONFIG", "PERSISTENT_TRANSPOSE", "REDUCE_OPS", "BULK_OPS", "bulk_supported", "BulkDynLauncher",
           "DynLauncher", "BulkParams", "StreamParams", "TransposeParams", "SMEM_PER_SM", "sm_count", "_boxes",
           "_bulk_launcher", "_flat_launcher", "_grid", "_order", "_stream_launcher", "_strided_launcher",
           "_transpose_launcher", "_transpose_params"]


def flat_config(plan, cfg: CopyConfig, nbytes: int, op: int = -1, dtype=None) -> CopyConfig:
    """``cfg`` with its ``flat`` overrides applied where they belong: a contiguous pair of at least ``flat_min``
    bytes, copied or reduced by the combine (bulk) engine."""
    if plan.kind != "flat" or not cfg.flat or nbytes < cfg.flat_min:
        return cfg
    if op >= 0 and not (cfg.engine == "bulk" and bulk_supported(op, dtype)):
        return cfg
    over = dict(cfg.flat)
    if cfg.flat_big and nbytes >= cfg.flat_big_min:
        over.update(cfg.flat_big)
    return dataclasses.replace(cfg, **over, flat=(), flat_big=())


_launchers: dict = {}


def launcher_for(src, dst, *, op: int = -1, dtype=None, allow_transpose: bool = True, engine: str | None = None,
                 config: CopyConfig | None = None, transpose: Mapping[int, TransposeConfig] | None = None):
    """A cached :class:`Launcher` for this (shape, strides, dtype, alignment, op, configs), or a ``Plan`` with
    ``kind=None`` saying why TMA cannot do it. ``engine`` overrides the config's engine for contiguous pairs
    (``"tensor"``: tensor maps, store-reduce for reductions; ``"bulk"``: bulk copies, load-combine-store).
    ``config``: the copy or reduction config (default :data:`COPY_CONFIG` / :data:`REDUCE_CONFIG`); ``transpose``:
    a :class:`TransposeConfig` per element size (default :data:`TRANSPOSE_CONFIG`). The defaults are constants (the
    ops cache launchers planned with them); tests and benchmarks pass their variants here."""
    sp, dp = src.data_ptr(), dst.data_ptr()
    cfg = config if config is not None else (COPY_CONFIG if op < 0 else REDUCE_CONFIG)
    tcfgs = TRANSPOSE_CONFIG if transpose is None else transpose
    if engine is not None and engine != cfg.engine:
        cfg = dataclasses.replace(cfg, engine=engine)
    key = (tuple(src.shape), tuple(src.stride()), tuple(dst.stride()), src.element_size(), op, dtype,
           sp % 128 == 0, dp % 128 == 0, sp % 16 == 0, dp % 16 == 0, allow_transpose, cfg,
           tuple(sorted(tcfgs.items())), src.device.index)
    got = _launchers.get(key)
    if got is not None:
        return got
    plan = plan_copy(src, dst, allow_transpose=allow_transpose)
    if plan.kind is None and allow_transpose and op < 0:
        plan = plan_plain_transpose(src, dst) or plan
    nsm = sm_count(src) if plan.kind else 0
    nbytes = src.numel() * src.element_size()
    cfg = flat_config(plan, cfg, nbytes, op, dtype)
    if plan.kind == "strided" and op < 0 and cfg.strided:
        cfg = dataclasses.replace(cfg, **dict(cfg.strided), strided=())
    # the bulk engine also takes copies whose last 16-byte unit is partly past dst (it stores those bytes by
    # st.global; a map would write the whole unit, below)
    if plan.kind == "flat" and op < 0 and cfg.engine != "bulk" and (nbytes < cfg.bulk_below or nbytes % 16):
        cfg = dataclasses.replace(cfg, engine="bulk", bulk_mode=0, piece=32768, pieces=1, stages=6, lag=1,
                                  ctas_per_sm=1, order=TileOrder.ROUND_ROBIN, grid_mult=1, tiles_per_cta=0)
    if plan.kind == "flat" and cfg.engine == "bulk" and bulk_supported(op, dtype):
        got = _bulk_launcher(nbytes, op, dtype, cfg, nsm)
        plan.kind = "bulk" if op < 0 else "combine"
        reason = "no bulk view"
    elif plan.kind == "flat" and nbytes % 16:  # the map's last 16-byte unit would reach past dst's end
        got, reason = None, (f"dst is {nbytes} bytes, not a multiple of 16: a TMA store or reduction writes dim 0 in "
                             "whole 16-byte units, so it would also update the bytes after dst up to the next "
                             "16-byte boundary (docs/HARDWARE.md section 3)")
    elif plan.kind == "flat":
        got = _flat_launcher(nbytes, plan.elem, op, dtype, cfg, nsm, sp, dp)
        reason = "no flat TMA view"
    elif plan.kind == "strided":
        got = _strided_launcher(plan, op, dtype, cfg, nsm, sp, dp)
        reason = "no strided TMA view"
    elif plan.kind == "plain":
        got = _plain_transpose_launcher(plan, dp)
        reason = "no plain transpose view"
    elif plan.kind == "transpose":
        tcfg = tcfgs.get(plan.elem) or tcfgs[2]
        got = _transpose_launcher(plan, tcfg, nsm, sp, dp)
        reason = "no transposing TMA view"
    else:
        got, reason = None, plan.reason
    if got is None:
        got = Plan(None, reason)
    else:
        got.kind, got.path = plan.kind, "plain:transpose" if plan.kind == "plain" else "tma:" + plan.kind
    if len(_launchers) > 1024:
        _launchers.clear()
    _launchers[key] = got
    return got
