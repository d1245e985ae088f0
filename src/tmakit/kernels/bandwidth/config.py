"""Configurations of the bandwidth kernels: tile shapes, pipelines and the shipped defaults (docs/PERFORMANCE.md
says why each default is what it is)."""

from __future__ import annotations

import dataclasses
import enum
import math
from types import MappingProxyType

__all__ = ["CacheHint", "Lean", "TileOrder", "CopyConfig", "TransposeConfig", "COPY_CONFIG", "REDUCE_CONFIG",
           "TRANSPOSE_CONFIG", "PERSISTENT_TRANSPOSE", "REDUCE_OPS", "SMEM_PER_SM", "transpose_config_for"]

REDUCE_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")
SMEM_PER_SM = 227 * 1024  # usable dynamic shared memory per block on sm_90 (228 KiB per SM, 1 KiB reserved)


class TileOrder(enum.IntEnum):
    """How a persistent CTA walks the tiles (``-DTMAKIT_STREAM_ORDER`` / ``-DBK_ORDER`` / ``-DTP_ORDER``)."""

    ROUND_ROBIN = 0  # tile i goes to CTA i mod grid
    CONTIGUOUS_RUNS = 1  # each CTA takes one contiguous run of tiles


class CacheHint(enum.IntEnum):
    """L2 ``evict_first`` cache hints on the data touched once (``-DTMAKIT_STREAM_HINT`` / ``-DBK_HINT``)."""

    NONE = 0
    LOADS_AND_STORES = 1
    LOADS = 2
    STORES = 3


class Lean(enum.IntEnum):
    """The lean one-tile CTA (grid = tiles, one barrier, no ring) instead of a pipelined one (``-DBK_T1`` on the bulk
    engine, ``stream_one`` on the tensor engine, ``-DTP_LEAN`` for transposes)."""

    OFF = 0
    ONE_TILE = 1  # bulk engine: the consumer warps combine (thread 0 of warp 0 only loads)
    ONE_TILE_ALL_THREADS = 2  # bulk engine: every thread of the CTA combines


@dataclasses.dataclass(frozen=True)
class CopyConfig:
    """Tile shape and pipeline of the load->store (and load->reduce) kernel.

    ``box_bytes``: target bytes per box; ``stages``: boxes in the smem ring per CTA; ``ctas_per_sm``: persistent
    CTAs per SM (grid = SMs x ctas_per_sm, capped by the tile count); ``lag``: stores allowed in flight before a
    stage is refilled; ``order``: a :class:`TileOrder`; ``hint``: the :class:`CacheHint` (tensor path and bulk
    engine);
    ``prefetch``: L2-prefetch each destination box when its source load is issued (helps store-reduce); ``l2``: L2
    promotion of the maps (0 none .. 3 256B); ``flat_width``: widest row (words) of the flat 2-D view;
    ``rest_order``: strided copies order the outer dims of their maps by src (0) or dst (1) stride. ``engine``:
    contiguous pairs use tensor maps (``"tensor"``, stream.cu) or non-tensor bulk copies (``"bulk"``,
    bandwidth_bulk.cu: tiles of ``pieces`` x ``piece`` bytes, ``row`` bytes apart; ``bulk_mode`` 0 one thread bulk
    load -> bulk store, 1 ``consumers`` warps store with st.global.v4, 2 warps bulk-store their pieces; a reduction
    on the bulk engine loads dst too and combines in registers: not atomic). ``box_mode``: strided boxes fill dims
    in order (0) or balance the contiguous runs of both sides (1). ``bulk_below``: contiguous copies under this many
    bytes take the bulk engine (32 KiB pieces) whatever ``engine`` says: its launch is cheaper (two pointers instead
    of four tensor maps). ``swizzle``: 1 = maps over 128-byte inner chunks with SWIZZLE_128B (load and store use the
    same swizzle, so the bytes round-trip); the flat view becomes (16-word chunks, chunks per row, rows) with 16 x 2
    KiB boxes. ``bf16x2``: bf16 add on the combine path with the packed ``add.rn.bf16x2`` (one rounding of the exact
    sum, equal to torch's fp32 add + round: the fp32 sum of two bf16 values is exact unless their exponents differ
    by more than 15, and then the smaller is below half a bf16 ulp either way) instead of fp32 unpack/add/pack.
    ``dyn`` > 0 (bulk engine, modes 1 and 2): a persistent grid of SMs x ``ctas_per_sm`` CTAs whose producers take
    batches of ``dyn`` tiles from a global atomic counter (as ``TransposeConfig.dyn``; ``tiles_per_cta`` and
    ``grid_mult`` are ignored). Off: every variant lost to the short hardware-scheduled CTAs at 256 MiB .. 1 GiB.
    ``grid_mult``: launch SMs x ctas_per_sm x grid_mult CTAs (> 1: not persistent; CTAs beyond the resident ones
    start as others finish, so the hardware balances the work between SMs; with ``CONTIGUOUS_RUNS`` each CTA takes one
    contiguous run of tiles). ``tiles_per_cta`` > 0: launch ceil(tiles / tiles_per_cta) CTAs (never fewer than the
    persistent grid), each copying one contiguous run of that many tiles (forces ``CONTIGUOUS_RUNS``; replaces
    ``grid_mult``). ``flat``: field overrides (``(name, value)`` pairs) for contiguous pairs (flat plans) of at
    least ``flat_min`` bytes on the copy path or the combine (bulk) reduce: strided permutes, store-reduce and small
    tensors keep the fields above. ``flat_big``: further overrides, applied on top of ``flat`` from ``flat_big_min``
    bytes. ``strided``: field overrides for strided copies (permutes that keep the unit-stride dim). ``min_ctas``
    (bulk engine): the kernel's ``__launch_bounds__`` minimum of resident CTAs per SM, which caps its registers per
    thread (at 1, 52 registers: twelve 3-warp CTAs per SM, whatever the shared memory allows). ``resident`` > 0
    (bulk engine, lean tensor CTA): pad each CTA's dynamic shared memory so that at most that many CTAs fit per SM.
    ``bulk_mode`` 3: one warp per CTA (lane 0 loads, the warp combines in place, lane 0 bulk-stores; no block
    barrier), made for ``tiles_per_cta=1``. ``lean`` > 0 on the tensor engine with ``tiles_per_cta=1``: the lean
    one-box CTA (stream.cuh's ``stream_one``: grid = boxes, one thread, one barrier, 32-bit box coordinates computed
    once, no ring; ``resident`` pads its shared memory). ``lean`` > 0 (bulk engine, modes 2 and 3, one tile of one
    piece per CTA: ``tiles_per_cta=1``, ``pieces=1``, not ``dyn``; ignored otherwise): the lean one-tile CTA
    (``run_t1`` in bandwidth_bulk.cu: tile = blockIdx.x, thread 0 initialises one barrier and issues both loads
    before any block barrier; no empty barriers, no tile split); 1 the consumer warps combine, 2 every thread of the
    CTA combines. ``end_piece`` > 0 (lean only, <= ``piece``, a multiple of 16): the last ``end_bytes`` of the
    tensor move in tiles of ``end_piece`` bytes (smaller CTAs for the last waves: a shorter drain). ``t1_const`` 1
    (lean, no end tiles): the tile size is a compile-time constant (fewer parameter reads before a CTA's loads).
    ``pdl`` > 0 (lean only): launch with programmatic stream serialization; each CTA's loads wait for the previous
    grid (``griddepcontrol.wait``) and the CTAs of the last ``pdl`` waves let the next grid launch early, so
    back-to-back calls overlap one's drain with the next one's launch.
    Compile-time knobs become ``-D`` options (cached kernels).
    Why the defaults are what they are: docs/PERFORMANCE.md ("Why it is fast") and docs/design/bandwidth.md.
    """

    box_bytes: int = 32 * 1024
    stages: int = 6
    ctas_per_sm: int = 1
    lag: int = 1
    order: TileOrder = TileOrder.ROUND_ROBIN
    hint: CacheHint = CacheHint.NONE
    prefetch: int = 0
    l2: int = 3
    flat_width: int = 16384
    rest_order: int = 0
    engine: str = "tensor"
    bulk_mode: int = 0
    piece: int = 2048
    pieces: int = 16
    row: int = 128 * 1024
    consumers: int = 4
    box_mode: int = 0
    swizzle: int = 0
    bulk_below: int = 0
    grid_mult: int = 1
    tiles_per_cta: int = 0
    flat: tuple = ()
    flat_min: int = 0
    flat_big: tuple = ()
    flat_big_min: int = 0
    strided: tuple = ()
    bf16x2: int = 0
    dyn: int = 0
    min_ctas: int = 1
    resident: int = 0
    lean: Lean = Lean.OFF
    end_piece: int = 0
    end_bytes: int = 0
    t1_const: int = 0
    pdl: int = 0


@dataclasses.dataclass(frozen=True)
class TransposeConfig:
    """``kq``: T x T slabs per load box; ``stages``: input ring depth; ``ctas_per_sm``: persistent CTAs per SM;
    ``consumers``: transposing warps per CTA; ``no``: output staging buffers (recycled with wait_group.read no-2);
    ``batch``: 16-byte chunks a lane loads from smem before storing any (``-DTP_BATCH``); ``mode``: 0 consumers
    share each stage and one thread stores after a named barrier, 1 each warp owns whole slabs and stores them;
    ``group``: tile order, 0 = p-tiles (input columns) fastest, G > 0 = column groups of G p-tiles with the q-tiles
    inside a group next (longer output-row runs among the tiles in flight; a runtime parameter); ``coords``: tile
    coordinates 0 in 64-bit math recomputed by the store leader, 1 in 32-bit math where the tile count fits,
    2 = 1 and published by the producer per stage in shared memory (no division on the store path). The 32-bit
    tile math divides by multiply and shift (``tmakit/fastdiv.cuh``).
    ``mode`` 2: as 0, but a dedicated store warp issues the stores when per-image mbarriers say every consumer warp
    has written its part (no named barrier among the consumers). ``xpose`` (2-byte elements; ``-DTP_XPOSE``): smem
    transposition 0 lane = row with scalar u16 stores, 1 packed u32 stores of row pairs, 2 ldmatrix +
    stmatrix.trans (8x8 blocks), 9 diagnostic only (no transposition: wrong output). ``l2``: L2 promotion of the
    maps (0 none .. 3 256B). ``wide``: field overrides (``(name, value)`` pairs) applied when the input's unit-stride
    dim spans at least ``wide_min`` slab columns (T = 128 / elem elements each) and the tensor holds at least
    ``wide_bytes``: large 2-D-like transposes and narrow or small ones prefer different tile/CTA shapes.
    ``grid_mult``: as CopyConfig's (more CTAs than fit at once: the hardware balances the tiles between SMs);
    ``order``: a :class:`TileOrder` (``-DTP_ORDER``).
    ``dyn`` 1 (modes 0 and 2): the persistent CTAs take tiles from a global atomic counter (one 16-byte zeroed
    word per launcher and stream; the kernel's last CTA zeroes it again), so faster SMs take more tiles; only for
    tensors of at least ``dyn_bytes``. ``lean`` 1: one tile (``kq`` slabs) per CTA, ``consumers`` warps that all
    transpose, one CTA per tile handed out by the hardware (no ring, no producer warp; ``stages``, ``no``, ``mode``,
    ``dyn`` and ``grid_mult`` do not apply); ``resident`` > 0 pads its shared memory so that at most that many CTAs
    fit per SM. ``inplace`` 1 (lean, 2-byte elements, ``xpose`` 2, ``kq`` <= 2): the warps hold their 8 x 8 blocks
    in registers across a block barrier and write them back transposed into the input image (one image per CTA:
    twice the CTAs per SM)."""

    kq: int = 4
    stages: int = 4
    ctas_per_sm: int = 1
    consumers: int = 4
    no: int = 3
    batch: int = 4
    mode: int = 0
    group: int = 0
    coords: int = 2
    xpose: int = 0
    l2: int = 3
    dyn: int = 0
    dyn_bytes: int = 0
    wide: tuple = ()
    wide_min: int = 0
    wide_bytes: int = 0
    grid_mult: int = 1
    order: TileOrder = TileOrder.ROUND_ROBIN
    lean: Lean = Lean.OFF
    resident: int = 0
    inplace: int = 0


#: contiguous copies of any size: the lean one-tile CTA of the bulk engine (one 4 KiB piece per CTA, bulk load then
#: bulk store, 14 resident per SM), launched with PDL so back-to-back calls overlap (1.00-1.42x torch in CUDA graphs,
#: 1.01-1.7x back to back from 64 KiB to 1 GiB, where the persistent pipelines ran 0.4-0.97x); strided copies: one
#: 8 KiB box per lean CTA, 12 per SM. Measurements: docs/PERFORMANCE.md, docs/design/bandwidth.md.
LEAN_COPY = (("engine", "bulk"), ("bulk_mode", 2), ("tiles_per_cta", 1), ("pieces", 1), ("piece", 4096),
             ("row", 4096), ("consumers", 3), ("stages", 1), ("ctas_per_sm", 24),
             ("lean", Lean.ONE_TILE_ALL_THREADS), ("resident", 14), ("t1_const", 1), ("pdl", 1))
COPY_CONFIG = CopyConfig(box_mode=1, bulk_below=64 << 20, flat_min=0, flat=LEAN_COPY,
                         strided=(("tiles_per_cta", 1), ("box_bytes", 8192), ("ctas_per_sm", 12), ("stages", 1),
                                  ("l2", 0), ("lean", Lean.ONE_TILE), ("resident", 12)))
#: reductions: load-combine-store on the bulk engine where it applies (lag/prefetch serve the store-reduce path).
#: Combine of any size: the lean one-tile CTA (one 2 KiB tile, 3 combining warps + thread 0 loading, bf16x2, 13 per
#: SM, launched with PDL so back-to-back calls overlap; below 32 MiB 1.1-1.35x torch back to back where the
#: persistent pipeline ran 0.5-0.99x); from 1 GiB a plain one-tile CTA (18 resident) is ahead (``flat_big``).
#: Measurements: docs/PERFORMANCE.md, docs/design/bandwidth.md.
REDUCE_CONFIG = CopyConfig(engine="bulk", bulk_mode=2, piece=4096, pieces=4, stages=6, consumers=2, lag=3,
                           prefetch=1, flat_min=0,
                           flat=(("tiles_per_cta", 1), ("pieces", 1), ("piece", 2048), ("row", 2048),
                                 ("consumers", 3), ("stages", 1), ("ctas_per_sm", 24),
                                 ("lean", Lean.ONE_TILE_ALL_THREADS), ("resident", 14), ("t1_const", 1), ("bf16x2", 1),
                                 ("pdl", 1)),
                           flat_big=(("row", 128 << 10), ("consumers", 1), ("lean", Lean.OFF), ("resident", 0),
                                     ("t1_const", 0), ("bf16x2", 0), ("pdl", 0)), flat_big_min=1 << 30)
#: the persistent transpose pipelines (tile counter from 64 MiB, wide overrides for large 2-byte transposes): kept
#: for tile counts a lean grid cannot launch (2^31 CTAs) and as the reference the lean shape is tested against.
PERSISTENT_TRANSPOSE = MappingProxyType({
    2: TransposeConfig(kq=4, stages=4, consumers=8, group=16, xpose=2, dyn=1, dyn_bytes=64 << 20,
                       wide=(("kq", 2), ("ctas_per_sm", 2), ("mode", 2), ("consumers", 2)), wide_min=16,
                       wide_bytes=256 << 20),
    4: TransposeConfig(kq=2, stages=4, ctas_per_sm=2, no=4, batch=1, group=4, mode=2, consumers=2, dyn=1,
                       dyn_bytes=64 << 20)})
#: per element size (bytes; missing sizes use the 2-byte entry): lean one-tile CTAs handed out by the hardware,
#: 2-byte tiles of one slab (12 per SM), two slabs for wide tensors from 128 MiB (``wide``). Measurements:
#: docs/PERFORMANCE.md, docs/design/bandwidth.md.
TRANSPOSE_CONFIG = MappingProxyType({
    2: TransposeConfig(kq=1, consumers=4, group=16, xpose=2, lean=Lean.ONE_TILE, resident=12,
                       wide=(("kq", 2), ("resident", 8)), wide_min=16, wide_bytes=128 << 20),
    4: TransposeConfig(kq=2, consumers=4, group=4, batch=4, lean=Lean.ONE_TILE)})


def transpose_config_for(plan, cfg: TransposeConfig | None = None) -> TransposeConfig:
    """The effective config of a ``transpose`` plan: TRANSPOSE_CONFIG's entry for its element size (2-byte entry
    for missing sizes) with the ``wide`` overrides applied when the input's inner dim spans ``wide_min`` slabs and
    the tensor holds ``wide_bytes`` or more."""
    if cfg is None:
        cfg = TRANSPOSE_CONFIG.get(plan.elem) or TRANSPOSE_CONFIG[2]
    nbytes = math.prod(d[0] for d in plan.dims) * plan.elem
    if cfg.wide and -(-plan.dims[0][0] // (128 // plan.elem)) >= cfg.wide_min and nbytes >= cfg.wide_bytes:
        cfg = dataclasses.replace(cfg, **dict(cfg.wide), wide=())
    return cfg

