"""Launchers of ``transpose.cu`` (the lean one-tile CTA, the default, and the persistent pipelines) and of
``plain_transpose.cu`` (transposes TMA cannot describe)."""

from __future__ import annotations

import ctypes
import dataclasses
import math

from ...cuda.packed import Launcher, MapTemplate
from ...tma.tensormap import SwizzleMode
from ..fastdiv import set_divisor
from .bulk import BulkLauncher
from .config import PERSISTENT_TRANSPOSE, SMEM_PER_SM, TransposeConfig, transpose_config_for
from .launchers import _WORD, DynLauncher, TransposeParams, _kernel, _map, _pad_smem


class PlainTransposeParams(ctypes.Structure):
    _fields_ = [(n, ctypes.c_int64) for n in ("np", "nq", "nb", "sq", "sb", "dp", "db", "tiles_p", "tiles_q")]


def plain_store_pack(plan, dp: int) -> int:
    """Elements per 32-bit store in ``plain_transpose.cu``'s write phase: 4 // elem for 1- and 2-byte elements when
    every destination row starts 4-byte aligned (a 16-byte aligned base ``dp`` -- the launcher cache keys on that --
    and row and batch strides that are multiples of the word), else 1."""
    e = plan.elem
    (_, _, d_p), _, (n_b, _, d_b) = plan.dims
    rows_aligned = dp % 16 == 0 and (d_p * e) % 4 == 0 and (n_b == 1 or (d_b * e) % 4 == 0)
    return 4 // e if e <= 2 and rows_aligned else 1


def _plain_transpose_launcher(plan, dp: int):
    """``plain_transpose.cu`` for a ``plan_plain_transpose`` plan: tiles of 64 x 64 elements of 1 or 2 bytes (128-byte
    rows), 32 x 32 otherwise; one CTA per tile and batch; stores packed per :func:`plain_store_pack`."""
    e = plan.elem
    (n_p, _, d_p), (n_q, s_q, _), (n_b, s_b, d_b) = plan.dims
    tile = 64 if e <= 2 else 32
    pack = plain_store_pack(plan, dp)
    tp, tq = -(-n_p // tile), -(-n_q // tile)
    params = PlainTransposeParams(n_p, n_q, n_b, s_q, s_b, d_p, d_b, tp, tq)
    opts = [f"-DPT_ELEM={e}", f"-DPT_TILE={tile}", f"-DPT_PACK={pack}"]
    return BulkLauncher(_kernel("plain_transpose.cu", "tmakit_plain_transpose", opts), tp * tq * n_b, 256, 0, params,
                        [])


def _transpose_launcher(plan, cfg: TransposeConfig, nsm, sp, dp):
    e = plan.elem
    t_ = 128 // e
    dims = plan.dims
    sizes = [d[0] for d in dims]
    cfg = transpose_config_for(plan, cfg)
    kq = max(1, min(cfg.kq, 256 // t_, -(-sizes[1] // t_)))  # boxes may overhang small dims (OOB fill / clip)
    if cfg.lean and math.prod(_transpose_tiles(sizes, t_, kq)) >= 1 << 31:  # one CTA per tile: grid.x < 2^31
        return _transpose_launcher(plan, PERSISTENT_TRANSPOSE.get(e) or PERSISTENT_TRANSPOSE[2], nsm, sp, dp)
    rank = len(dims)
    dt = _WORD[e]
    lbox = [t_, kq * t_] + [1] * (rank - 2)
    sbox = [t_, t_] + [1] * (rank - 2)
    m_s = MapTemplate(_map(dt, sp, sizes, [d[1] * e for d in dims[1:]], lbox, SwizzleMode.B128, l2=cfg.l2))
    dsizes = [sizes[1], sizes[0]] + sizes[2:]
    dstr = [dims[0][2] * e] + [d[2] * e for d in dims[2:]]
    m_d = MapTemplate(_map(dt, dp, dsizes, dstr, sbox, SwizzleMode.B128, l2=cfg.l2))
    in_bytes = t_ * 128 * kq
    budget = SMEM_PER_SM // cfg.ctas_per_sm - 1024 - 512
    if cfg.lean:
        return _transpose_lean_launcher(plan, cfg, kq, in_bytes, sizes, m_s, m_d)
    if cfg.mode == 1:  # every consumer warp owns `no` slab images and sees every tile (consumers divide kq)
        cfg = dataclasses.replace(cfg, consumers=math.gcd(kq, cfg.consumers))
        slab = t_ * 128
        no = max(2, min(cfg.no, (budget - 2 * in_bytes) // (cfg.consumers * slab)))
        stages = max(2, min(cfg.stages, 16, (budget - cfg.consumers * no * slab) // in_bytes))
        out_bytes = cfg.consumers * no * slab
    else:
        fit = budget // in_bytes  # stage buffers that fit (in + out)
        no = max(2, min(cfg.no, fit - 2))
        stages = max(2, min(cfg.stages, 16, fit - no))
        out_bytes = no * in_bytes
    p = _transpose_params(sizes, t_, kq, stages, cfg.group)
    grid = max(1, min(p.ntiles, nsm * cfg.ctas_per_sm * max(1, cfg.grid_mult)))
    dyn = 1 if cfg.dyn and cfg.mode in (0, 2) and math.prod(sizes) * e >= cfg.dyn_bytes else 0
    k = _kernel("transpose.cu", f"tmakit_transpose_e{e}",
                (f"-DTP_NO={no}", f"-DTP_CONSUMERS={cfg.consumers}", f"-DTP_BATCH={max(1, cfg.batch)}",
                 f"-DTP_MODE={cfg.mode}", f"-DTP_COORDS={cfg.coords}", f"-DTP_XPOSE={cfg.xpose}",
                 f"-DTP_ORDER={cfg.order}", f"-DTP_DYN={dyn}"))
    warps = cfg.consumers + 1 + (1 if cfg.mode == 2 else 0)
    cls = DynLauncher if dyn else Launcher
    return cls(k, grid, 32 * warps, stages * in_bytes + out_bytes + 1024, p,
                    [(m_s, True), (m_d, False)])


def _transpose_tiles(sizes, t_, kq) -> list:
    """Tiles per dim of a transpose's load map: T-wide p-tiles, (kq x T)-long q-tiles, the rest dims one by one."""
    return [-(-sizes[0] // t_), -(-sizes[1] // (kq * t_))] + list(sizes[2:])


def _transpose_params(sizes, t_, kq, stages, group) -> TransposeParams:
    """The kernel's tile grid (``group``: column groups of p-tiles when there are more p-tiles than that)."""
    tiles = _transpose_tiles(sizes, t_, kq)
    p = TransposeParams()
    for i in range(5):
        p.tiles[i] = tiles[i] if i < len(sizes) else 1
    p.qdim, p.rank, p.stages, p.kq = sizes[1], len(sizes), stages, kq
    p.group = max(0, group) if group < tiles[0] else 0
    p.ntiles = math.prod(tiles)
    if p.ntiles < 0x7FFFFFFF:  # the kernel's 32-bit tile math (tile_coords_fast)
        n0, n1, g = p.tiles[0], p.tiles[1], max(1, p.group)
        for i, d in enumerate([p.tiles[i] for i in range(5)] + [n0 * n1, g * n1, g, n0 % g or g]):
            set_divisor(p.fd[i], d)
    return p


def _transpose_lean_launcher(plan, cfg: TransposeConfig, kq, in_bytes, sizes, m_s, m_d):
    """``TransposeConfig.lean``: one CTA per tile of ``kq`` slabs, ``consumers`` warps (all transposing), an input
    and an output image in shared memory (padded to ``resident`` CTAs per SM)."""
    p = _transpose_params(sizes, 128 // plan.elem, kq, 1, cfg.group)
    inplace = bool(cfg.inplace) and plan.elem == 2 and cfg.xpose == 2 and kq <= 2
    smem = _pad_smem((1 if inplace else 2) * in_bytes + 1024, cfg.resident)
    k = _kernel("transpose.cu", f"tmakit_transpose_e{plan.elem}",
                (f"-DTP_CONSUMERS={cfg.consumers}", f"-DTP_BATCH={max(1, cfg.batch)}", f"-DTP_XPOSE={cfg.xpose}",
                 f"-DTP_COORDS={cfg.coords}", "-DTP_LEAN=1") + (("-DTP_INPLACE=1",) if inplace else ()))
    return Launcher(k, max(1, p.ntiles), 32 * cfg.consumers, smem, p, [(m_s, True), (m_d, False)])

