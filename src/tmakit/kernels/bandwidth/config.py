"""Configurations of the bandwidth kernels: tile shapes, pipelines and the shipped defaults (docs/PERFORMANCE.md
says why each default is what it is)."""

from __future__ import annotations

import dataclasses
import math

__all__ = ["CopyConfig", "TransposeConfig", "COPY_CONFIG", "REDUCE_CONFIG", "TRANSPOSE_CONFIG",
           "PERSISTENT_TRANSPOSE", "REDUCE_OPS", "SMEM_PER_SM", "transpose_config_for"]

REDUCE_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")
SMEM_PER_SM = 227 * 1024  # usable dynamic shared memory per block on sm_90 (228 KiB per SM, 1 KiB reserved)


@dataclasses.dataclass(frozen=True)
class CopyConfig:
    """Tile shape and pipeline of the load->store (and load->reduce) kernel.

    ``box_bytes``: target bytes per box; ``stages``: boxes in the smem ring per CTA; ``ctas_per_sm``: persistent
    CTAs per SM (grid = SMs x ctas_per_sm, capped by the tile count); ``lag``: stores allowed in flight before a
    stage is refilled; ``order``: 0 round-robin tiles, 1 a contiguous run per CTA; ``hint``: L2 evict_first cache
    hint (data touched once), 0 none, 1 loads and stores, 2 loads, 3 stores (tensor path and bulk engine);
    ``prefetch``: L2-prefetch each destination box when its source load is issued (helps store-reduce); ``l2``: L2
    promotion of the maps (0 none .. 3 256B); ``flat_width``: widest row (words) of the flat 2-D view;
    ``rest_order``: strided copies order the outer dims of their maps by src (0) or dst (1) stride. ``engine``:
    contiguous pairs use tensor maps (``"tensor"``, copy.cu / reduce.cu) or non-tensor bulk copies (``"bulk"``,
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
    ``grid_mult`` are ignored). Off: every variant lost to the short hardware-scheduled CTAs at 256 MiB .. 1 GiB
    (one tile per atomic 0.89x ``add_``, batches of 8 .. 32 tiles 0.97 .. 0.92x; NOTES-perf.md calls 28-29).
    ``grid_mult``: launch SMs x ctas_per_sm x grid_mult CTAs (> 1: not persistent; CTAs beyond the resident ones
    start as others finish, so the hardware balances the work between SMs; with ``order=1`` each CTA takes one
    contiguous run of tiles). ``tiles_per_cta`` > 0: launch ceil(tiles / tiles_per_cta) CTAs (never fewer than the
    persistent grid), each copying one contiguous run of that many tiles (forces ``order=1``; replaces
    ``grid_mult``). ``flat``: field overrides (``(name, value)`` pairs) for contiguous pairs (flat plans) of at
    least ``flat_min`` bytes on the copy path or the combine (bulk) reduce: strided permutes, store-reduce and small
    tensors keep the fields above. ``flat_big``: further overrides, applied on top of ``flat`` from ``flat_big_min``
    bytes. ``strided``: field overrides for strided copies (permutes that keep the unit-stride dim). ``exit_read`` 1
    (bulk engine, modes 0 and 2): a CTA exits once its last bulk stores have *read* their shared memory
    (``cp.async.bulk.wait_group.read 0``, as CUTLASS ends its TMA-store epilogues) instead of waiting until they are
    written; the writes still complete before the kernel does. ``min_ctas`` (bulk engine): the kernel's
    ``__launch_bounds__`` minimum of resident CTAs per SM, which caps its registers per thread (at 1, 52 registers:
    twelve 3-warp CTAs per SM, whatever the shared memory allows). ``resident`` > 0 (bulk engine, lean tensor CTA):
    pad each CTA's dynamic shared memory so that at most that many CTAs fit per SM. ``bulk_mode`` 3: one warp per
    CTA (lane 0 loads, the warp combines in place, lane 0 bulk-stores; no block barrier), made for
    ``tiles_per_cta=1``. ``lean`` > 0 on the tensor engine with ``tiles_per_cta=1``: the lean one-box CTA
    (stream.cuh's ``stream_one``: grid = boxes, one thread, one barrier, 32-bit box coordinates computed once, no
    ring; ``resident`` pads its shared memory). ``lean`` > 0 (bulk engine, modes 2 and 3, one tile of one piece per
    CTA: ``tiles_per_cta=1``, ``pieces=1``, not ``dyn``; ignored otherwise): the lean one-tile CTA (``run_t1`` in
    bandwidth_bulk.cu: tile = blockIdx.x, thread 0 initialises one barrier and issues both loads before any block
    barrier; no empty barriers, no tile split); 1 the consumer warps combine, 2 every thread of the CTA combines.
    ``end_piece`` > 0 (lean only, <= ``piece``, a multiple of 16): the last ``end_bytes`` of the tensor move in
    tiles of ``end_piece`` bytes (smaller CTAs for the last waves: a shorter drain). ``ahead`` > 0 (lean only): each
    CTA also L2-prefetches (``cp.async.bulk.prefetch.L2``) the tile ``ahead`` tiles after its own (``ahead_end`` 1:
    only when that is an end tile), so later waves load from L2 (measured: costs DRAM rate; off). ``stg`` 1 (lean
    only): the combining threads write with ``st.global.v4`` from registers instead of one bulk store (the CTA
    leaves once its stores are issued); 2 only the end tiles do. ``t1_const`` 1 (lean, no end tiles): the tile size
    is a compile-time constant (fewer parameter reads before a CTA's loads). ``pdl`` > 0 (lean only): launch with
    programmatic stream serialization; each CTA's loads wait for the previous grid (``griddepcontrol.wait``) and the
    CTAs of the last ``pdl`` waves let the next grid launch early, so back-to-back calls overlap one's drain with
    the next one's launch.
    Compile-time knobs become ``-D`` options (cached kernels).
    Defaults chosen from the H200 sweep in NOTES-perf.md.
    """

    box_bytes: int = 32 * 1024
    stages: int = 6
    ctas_per_sm: int = 1
    lag: int = 1
    order: int = 0
    hint: int = 0
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
    exit_read: int = 0
    min_ctas: int = 1
    resident: int = 0
    lean: int = 0
    end_piece: int = 0
    end_bytes: int = 0
    ahead: int = 0
    ahead_end: int = 0
    stg: int = 0
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
    ``order``: 0 tiles round-robin over the CTAs, 1 one contiguous run of tiles per CTA (``-DTP_ORDER``).
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
    order: int = 0
    lean: int = 0
    resident: int = 0
    inplace: int = 0


#: contiguous copies >= 128 MiB: runs of 2 tiles per CTA, sized for two resident CTAs per SM (3 stages of 32 KiB);
#: runs cost a 64 MiB copy 3 % (call 21). Strided copies (session 7, call 69): one 8 KiB box per CTA, 12 per SM, no
#: L2 promotion: +4 / +7 / +6 % on the (0,2,1,3) permutes of 64 / 256 / 512 MiB bf16, +6 % f32, +3 % on a 3-D
#: permute, -1 % on (8,128,256,64) (32 MiB; runs of 2 x 32 KiB cost it 5 % in call 20). Session 8 (call 73): that
#: box in the lean one-box CTA (`lean`, stream.cuh's stream_one: one barrier, 32-bit coordinates computed once, no
#: ring), 12 per SM: (0,2,1,3) bf16 64 / 256 MiB 0.846 -> 0.867 / 0.958 -> 0.966 of the copy ceiling, f32 128 MiB
#: +1.2 %, (8,128,256,64) +5 %, a 3-D permute +1.2 %
COPY_CONFIG = CopyConfig(box_mode=1, bulk_below=64 << 20, flat_min=128 << 20,
                         flat=(("tiles_per_cta", 2), ("ctas_per_sm", 2), ("stages", 3)),
                         strided=(("tiles_per_cta", 1), ("box_bytes", 8192), ("ctas_per_sm", 12), ("stages", 1),
                                  ("l2", 0), ("lean", 1), ("resident", 12)))
#: reductions: load-combine-store on the bulk engine where it applies (2 warps x 2 pieces of 4 KiB per stage);
#: lag/prefetch serve the store-reduce (tensor) path
#: combine >= 32 MiB: one tile per CTA (ceil(bytes / tile) CTAs of a producer and one consumer warp, 1 stage), like
#: add_'s many small blocks. Session 5 (calls 30-36): one 2 KiB tile, 18 resident (register-bound): f32 / bf16
#: 256 MiB 0.988 / 0.977 (runs of 2 x 4 KiB) -> 1.002-1.005 / 0.993-0.994; 64 MiB 0.83 / 0.81 (persistent) -> 0.99 /
#: 0.97. Session 6 (calls 38-40): the lean CTA (`lean`: loads issued before any block barrier, no tile split; 32
#: registers) removes ~1 us of the per-kernel latency, but at the same residency puts more loads in flight and loses
#: rate; fewer in flight wins it back: 4 KiB tiles with 8 resident (64 KiB of loads in flight per SM) f32 / bf16
#: 256 MiB 1.008-1.009 / 0.997-0.998, 3 KiB with 10 (`resident` 11, 60 KiB) the same, and 2 KiB "end tiles" over
#: the last 4 MiB (a shorter drain) +0.1 %: 3 KiB r11 + end tiles 1.0097-1.0099 / 0.9982-0.9989 (calls 41-42).
#: From 1 GiB the session-5 shape (2 KiB, 18 resident, not lean) stays ahead (calls 41-42: f32 / bf16 1 GiB
#: 1.008 / 1.007 vs 1.007 / 1.004, 4 GiB 1.012 / 1.007 vs 1.008 / 1.005): `flat_big`. Some (piece, resident) pairs
#: collapse by 2-6 % (1.5 KiB with 18, 8 KiB with 4-5). Session 7 (calls 43-50): the lean CTAs launch with PDL
#: (`pdl` 1: the last wave lets the next grid launch; each CTA waits for the previous grid before its loads):
#: back-to-back bf16 / f32 256 MiB 0.9965 -> 1.0038, 1.0067 -> 1.0104 of add_; per-call (events between calls)
#: unchanged. L2 prefetch ahead and st.global stores lose. A minimal TMA kernel (one 2 KiB tile, four warps each
#: combining one 16-byte word with bf16x2, 13 per SM) beat the 3 KiB lean CTA per call (calls 53-54); the lean CTA
#: in that shape (`lean` 2 + 3 consumers, `bf16x2`, `t1_const`, 2 KiB, `resident` 14 = 13 per SM) is the default
#: since call 55: per call bf16 / f32 32-512 MiB +0.1-1.6 % over the 3 KiB shape (256 MiB 1.0003 / 1.0112 of add_,
#: back to back 1.008 / 1.020)
REDUCE_CONFIG = CopyConfig(engine="bulk", bulk_mode=2, piece=4096, pieces=4, stages=6, consumers=2, lag=3,
                           prefetch=1, flat_min=32 << 20,
                           flat=(("tiles_per_cta", 1), ("pieces", 1), ("piece", 2048), ("row", 2048),
                                 ("consumers", 3), ("stages", 1), ("ctas_per_sm", 24), ("lean", 2), ("resident", 14),
                                 ("t1_const", 1), ("bf16x2", 1), ("pdl", 1)),
                           flat_big=(("row", 128 << 10), ("consumers", 1), ("lean", 0), ("resident", 0),
                                     ("t1_const", 0), ("bf16x2", 0), ("pdl", 0)), flat_big_min=1 << 30)
#: per element size (bytes); missing sizes use the 2-byte entry. Session 7 (calls 62-63): one tile of 2 slabs per
#: lean CTA (4 warps transposing, 2 x 16 KiB images: 6 per SM) beats the persistent pipelines at every size, per
#: call, in one process: bf16 2048² .. 16384² +1.1 / +1.8 / +1.9 / +0.6 %, (32,64,128,128)->(0,3,1,2) +3.1 %,
#: (64,64,64,64)->(3,2,1,0) +15 %; f32 2048² .. 16384² +6.6 / +5.9 / +3.2 / +1.8 %. The session-4 persistent
#: shapes (dyn tile counter from 64 MiB, wide overrides for large 2-byte transposes) stay as PERSISTENT_TRANSPOSE.
PERSISTENT_TRANSPOSE: dict = {2: TransposeConfig(kq=4, stages=4, consumers=8, group=16, xpose=2, dyn=1,
                                                 dyn_bytes=64 << 20,
                                                 wide=(("kq", 2), ("ctas_per_sm", 2), ("mode", 2),
                                                       ("consumers", 2)), wide_min=16, wide_bytes=256 << 20),
                              4: TransposeConfig(kq=2, stages=4, ctas_per_sm=2, no=4, batch=1, group=4, mode=2,
                                                 consumers=2, dyn=1, dyn_bytes=64 << 20)}
#: Session 8 (calls 74-75): 2-byte tiles of one slab (2 x 8 KiB images: 12 per SM, bound by shared memory) for
#: narrow or < 128 MiB tensors: (32,64,128,128)->(0,3,1,2) 64 MiB 0.843-0.844 -> 0.843-0.854 of the ceiling (four
#: runs, mean 0.849), 256 MiB +-0.1 %; 16384² bf16 lost 1 % with them, so wide tensors keep 2 slabs at 6 per SM
#: (`wide`). In-place transposition (`inplace`, one image per CTA, 8-13 per SM) lost 0.5-1.3 %.
TRANSPOSE_CONFIG: dict = {2: TransposeConfig(kq=1, consumers=4, group=16, xpose=2, lean=1, resident=12,
                                             wide=(("kq", 2), ("resident", 8)), wide_min=16, wide_bytes=128 << 20),
                          4: TransposeConfig(kq=2, consumers=4, group=4, batch=4, lean=1)}



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

