"""Launchers of the streaming copy/store-reduce kernel (``stream.cu`` over ``stream.cuh``): contiguous
pairs as a flat 2-D view plus a tail box, and strided pairs with one map per tensor."""

from __future__ import annotations

import math

from ...cuda.packed import Launcher, MapTemplate
from ...tma.tensormap import SwizzleMode
from ..fastdiv import set_divisor
from .config import SMEM_PER_SM, CopyConfig
from .launchers import _WORD, StreamParams, _grid, _kernel, _map, _order, _pad_smem
from .plan import Plan, _boxes, _boxes_balanced


def _stream_options(cfg: CopyConfig, lag: int, one: bool = False):
    opts = (f"-DTMAKIT_STREAM_LAG={lag}", f"-DTMAKIT_STREAM_ORDER={_order(cfg)}", f"-DTMAKIT_STREAM_HINT={cfg.hint}",
            f"-DTMAKIT_STREAM_PREFETCH={cfg.prefetch}")
    return opts + ("-DTMAKIT_STREAM_ONE=1",) if one else opts


def _stream_launcher(kfile, kname, maps, sizes, box, elem_bytes, tail_bytes, tail_coord, op, cfg, nsm):
    rank = len(sizes)
    tiles = [-(-n // b) for n, b in zip(sizes, box)]
    main_tiles = math.prod(tiles) if sizes else 0
    main_bytes = math.prod(box) * elem_bytes if sizes else 0
    stage = -(-max(main_bytes, tail_bytes) // 1024) * 1024
    stages = max(2, min(cfg.stages, 32, (SMEM_PER_SM // cfg.ctas_per_sm - 1024 - 512) // stage))
    lag = min(cfg.lag, stages - 1)
    p = StreamParams()
    for i in range(5):
        p.tiles[i] = tiles[i] if i < rank else 1
        p.box[i] = box[i] if i < rank else 1
        set_divisor(p.fd[i], min(p.tiles[i], (1 << 31) - 1))
    p.rank, p.main_bytes, p.tail_bytes, p.tail_coord = max(rank, 1), main_bytes, tail_bytes, tail_coord
    p.stages, p.stage_stride, p.op, p.main_tiles = stages, stage, op, main_tiles
    total = main_tiles + (1 if tail_bytes else 0)
    if cfg.lean > 0 and cfg.tiles_per_cta == 1 and total < 1 << 31:  # the one-box CTA of stream_one
        p.stages = 1
        k = _kernel(kfile, kname, _stream_options(cfg, 0, one=True))
        return Launcher(k, total, 32, _pad_smem(stage + 1024, cfg.resident), p, maps)
    grid = _grid(cfg, total, nsm)
    k = _kernel(kfile, kname, _stream_options(cfg, lag))
    return Launcher(k, grid, 32, stages * stage + 1024, p, maps)


def _row_map(dt, ptr, n, box0, word, l2, offset=0):
    """A ``{n, 1}`` map (rank 2: rank-1 maps were refused by the driver) over ``n`` contiguous words."""
    pitch = -(-max(n, box0) * word // 16) * 16
    return MapTemplate(_map(dt, ptr, [n, 1], [pitch], [box0, 1], l2=l2), offset)


def _flat_launcher(nbytes, elem, op, dtype, cfg, nsm, sp, dp):
    """Contiguous bytes: a (rows, W) view + at most one tail box; copies use the widest word dividing the size."""
    if op < 0:
        word = next(w for w in (8, 4, 2, 1) if nbytes % w == 0)
        dt = _WORD[word]
        kfile, kname = "stream.cu", "tmakit_stream"
    else:
        word, dt = elem, dtype
        kfile, kname = "stream.cu", "tmakit_stream"
    n = nbytes // word
    unit = max(1, 16 // word)
    l2 = cfg.l2
    if n < 256:  # tiny: one box over a {n, 1} map (the box may overhang the tensor: clipped / zero-filled)
        box0 = -(-n // unit) * unit
        t_s, t_d = _row_map(dt, sp, n, box0, word, l2), _row_map(dt, dp, n, box0, word, l2)
        maps = [(t_s, True), (t_d, False), (t_s, True), (t_d, False)]
        return _stream_launcher(kfile, kname, maps, [n, 1], [box0, 1], word, 0, 0, op, cfg, nsm)
    w = 256
    while w * 2 <= cfg.flat_width and n % (w * 2) == 0:
        w *= 2
    rows, tail = divmod(n, w)
    if cfg.swizzle and op < 0:  # (128-byte chunks, chunks per row, rows), SWIZZLE_128B, 16 x 2 KiB boxes
        cw = 128 // word
        sizes = [cw, w // cw, rows]
        b1 = min(16, w // cw)  # 2 KiB runs per row, like the unswizzled 256-word rows
        box = [cw, b1, max(1, min(256, rows, cfg.box_bytes // (128 * b1)))]
        strides = [128, w * word]
        sw = SwizzleMode.B128
    else:
        sizes = [w, rows]
        box = _boxes(sizes, word, cfg.box_bytes)
        strides = [w * word]
        sw = SwizzleMode.NONE
    m_s = MapTemplate(_map(dt, sp, sizes, strides, box, sw, l2=l2))
    m_d = MapTemplate(_map(dt, dp, sizes, strides, box, sw, l2=l2))
    tail_bytes = 0
    tt_s, tt_d = m_s, m_d
    if tail:  # {256 + tail, 1} over the last 256 words of the full rows and the tail; one box at coordinate 256
        off = (rows * w - 256) * word
        tt_s = _row_map(dt, sp + off, 256 + tail, 256, word, l2, off)
        tt_d = _row_map(dt, dp + off, 256 + tail, 256, word, l2, off)
        tail_bytes = 256 * word
    maps = [(m_s, True), (m_d, False), (tt_s, True), (tt_d, False)]
    return _stream_launcher(kfile, kname, maps, sizes, box, word, tail_bytes, 256, op, cfg, nsm)



def _strided_launcher(plan, op, dtype, cfg, nsm, sp, dp):
    e = plan.elem
    dims = plan.dims
    if cfg.rest_order == 1:
        dims = dims[:1] + sorted(dims[1:], key=lambda d: d[2])
    plan = Plan(plan.kind, plan.reason, dims, e)
    sizes = [d[0] for d in plan.dims]
    if op < 0:
        dt = _WORD[e]
        kfile, kname = "stream.cu", "tmakit_stream"
    else:
        dt = dtype
        kfile, kname = "stream.cu", "tmakit_stream"
    sw = SwizzleMode.NONE
    n0 = sizes[0] * e
    if cfg.swizzle and n0 % 128 == 0 and (n0 == 128 or len(sizes) < 5):
        sw = SwizzleMode.B128  # 128-byte inner chunks: split dim 0 into (128 B, n0 / 128 B)
        c = 128 // e
        if n0 > 128:
            dims = [(c, 1, 1), (sizes[0] // c, c, c)] + list(plan.dims[1:])
            plan = Plan(plan.kind, plan.reason, dims, e)
            sizes = [d[0] for d in dims]
    box = _boxes_balanced(plan.dims, e, cfg.box_bytes) if cfg.box_mode == 1 else _boxes(sizes, e, cfg.box_bytes)
    if box is None:
        return None
    if sw != SwizzleMode.NONE:
        box[0] = 128 // e
    m_s = MapTemplate(_map(dt, sp, sizes, [d[1] * e for d in plan.dims[1:]], box, sw, l2=cfg.l2))
    m_d = MapTemplate(_map(dt, dp, sizes, [d[2] * e for d in plan.dims[1:]], box, sw, l2=cfg.l2))
    maps = [(m_s, True), (m_d, False), (m_s, True), (m_d, False)]
    return _stream_launcher(kfile, kname, maps, sizes, box, e, 0, 0, op, cfg, nsm)

