"""Launchers of ``bandwidth_bulk.cu``: contiguous copies with non-tensor bulk copies, and reduce_into's
load-combine-store."""

from __future__ import annotations

from ...cuda.packed import Launcher
from ...tma.tensormap import DataType
from .config import SMEM_PER_SM, CopyConfig
from .launchers import BulkParams, DynLauncher, _grid, _kernel, _order, _pad_smem

__all__ = ["BULK_OPS", "BulkLauncher", "BulkDynLauncher", "bulk_supported"]


#: combine element type codes of bandwidth_bulk.cu (BK_DT) per TMA data type
_BK_DT = {DataType.FLOAT32: 0, DataType.BFLOAT16: 1, DataType.FLOAT16: 2, DataType.INT32: 3, DataType.UINT32: 4,
          DataType.INT64: 5, DataType.UINT64: 6}
#: reductions the bulk (load-combine-store) engine implements, by REDUCE_OPS index
BULK_OPS = {0: "add", 1: "min", 2: "max", 5: "and", 6: "or", 7: "xor"}


class BulkLauncher(Launcher):
    """A launcher of ``tmakit_bulk`` (pointers + params; no tensor maps)."""

    def _args(self, sp: int, dp: int) -> list:
        from ...cuda import Ptr

        return [Ptr(sp), Ptr(dp), self.params]

    def _address_slots(self) -> list:
        return [(0, True, 0, False), (1, False, 0, False)]


class BulkDynLauncher(DynLauncher, BulkLauncher):
    """``tmakit_bulk`` with ``CopyConfig.dyn``: the per-stream tile counter of :class:`DynLauncher`."""


def bulk_supported(op: int, dtype) -> bool:
    """Whether the bulk engine's combine implements ``op`` (a REDUCE_OPS index) on this TMA data type."""
    if op < 0:
        return True
    if op not in BULK_OPS:
        return False
    return op >= 5 or dtype in _BK_DT



def _bulk_launcher(nbytes, op, dtype, cfg: CopyConfig, nsm):
    """Contiguous bytes through ``bandwidth_bulk.cu``: tiles of R pieces of Q bytes W apart, contiguous rest tiles,
    the last ``nbytes % 16`` bytes by thread 0."""
    q, r = cfg.piece, cfg.pieces
    w = max(cfg.row, q)
    if q % 16 or w % q:
        raise ValueError(f"bulk tiles: piece {q} must be a multiple of 16 and row {w} a multiple of the piece")
    n16 = nbytes // 16 * 16
    cols = w // q
    blocks = n16 // (r * w)
    main_tiles = blocks * cols
    rest0 = blocks * r * w
    rest_tiles = -(-(n16 - rest0) // (r * q))
    combine = op >= 0
    stage = -(-(q * r) // 1024) * 1024
    per = stage * (2 if combine else 1)
    budget = SMEM_PER_SM // cfg.ctas_per_sm - 1024 - 512
    mode = cfg.bulk_mode if not combine else max(1, cfg.bulk_mode)
    dyn = cfg.dyn if mode in (1, 2) else 0
    # one tile per CTA (tiles_per_cta=1, not dyn) needs one stage; otherwise two at least (refills)
    lo = 1 if cfg.tiles_per_cta == 1 and not dyn else 2
    lean = cfg.lean if cfg.lean > 0 and cfg.tiles_per_cta == 1 and r == 1 and not dyn and mode in (2, 3) else 0
    stages = 1 if lean else max(lo, min(cfg.stages, 32, budget // per))
    p = BulkParams()
    p.n16, p.main_tiles, p.rest0, p.tiles, p.row = n16, main_tiles, rest0, main_tiles + rest_tiles, w
    p.piece, p.pieces, p.cols, p.stages, p.stage_stride, p.tail = q, r, cols, stages, stage, nbytes - n16
    if lean:  # tiles of q bytes, then (end_piece) tiles of e bytes over the last end_bytes (whole q tiles before)
        e = cfg.end_piece if 0 < cfg.end_piece <= q and cfg.end_piece % 16 == 0 and cfg.end_bytes > 0 else q
        main = max(0, n16 - cfg.end_bytes) // q if e < q else -(-n16 // q)
        p.main_tiles, p.rest0, p.row = main, main * q, e
        p.tiles = main + -(-(n16 - main * q) // e)
    grid = max(1, min(p.tiles, nsm * cfg.ctas_per_sm)) if dyn else _grid(cfg, max(p.tiles, 1), nsm)
    opts = [f"-DBK_MODE={mode}", f"-DBK_CONSUMERS={cfg.consumers}", f"-DBK_LAG={min(cfg.lag, stages - 1)}",
            f"-DBK_OP={op}", f"-DBK_DT={_BK_DT.get(dtype, 0)}", f"-DBK_HINT={cfg.hint}", f"-DBK_ORDER={_order(cfg)}",
            f"-DBK_BF16X2={cfg.bf16x2}", f"-DBK_DYN={dyn}", f"-DBK_MINB={max(1, cfg.min_ctas)}", f"-DBK_T1={lean}"]
    waves = cfg.pdl if lean else 0
    if waves:
        res = max(1, cfg.resident - 1) if cfg.resident > 0 else cfg.ctas_per_sm
        opts.append(f"-DBK_PDL={waves * res * nsm}")
    if lean and cfg.t1_const and p.main_tiles == p.tiles:
        opts.append(f"-DBK_T1_PIECE={q}")
    block = 32 if mode in (0, 3) else 32 * (cfg.consumers + 1)
    smem = stages * per + 1024
    smem = _pad_smem(smem, cfg.resident)
    cls = BulkDynLauncher if dyn else BulkLauncher
    launcher = cls(_kernel("bandwidth_bulk.cu", "tmakit_bulk", opts), grid, block, smem, p, [])
    if waves:
        launcher.pdl = True
    return launcher

