"""Host side of the bandwidth kernels (``copy.cu``, ``transpose.cu``, ``reduce.cu``): layout planning, tensor maps,
tile shapes, launches. Used by :mod:`tmakit.ops`; needs torch tensors (imported lazily by the caller).

A *plan* turns a (src, dst) pair of equal-shape tensors into one of:

- ``flat``      both contiguous: a 2-D view ``(rows, W)`` of the bytes (8/4/2/1-byte words; W a power of two from
                256 up to ``CopyConfig.flat_width``) plus, when W does not divide the size, one tail box of a
                ``{256 + tail, 1}`` map, both handled by the same persistent kernel (OOB clipping, no tail kernel).
                Rank-1 maps are never used: the H200 driver refused every rank-1 tiled map we tried;
- ``strided``   both have the same unit-stride dim: one map per tensor over the same dims in the same order (the
                destination map may carry any strides: a permute that keeps the innermost dim is a pure TMA copy);
- ``transpose`` the unit-stride dims differ: TMA load of T x (KQ*T) boxes, a bank-conflict-free transpose through
                128B-swizzled shared memory, TMA store of T x T boxes;
- ``None``      TMA cannot describe it (no unit-stride dim, strides not multiples of 16 bytes, misaligned base,
                rank > 5 after merging dims, broadcast strides ...): ``reason`` says why, the caller falls back.
"""

from __future__ import annotations

import ctypes
import dataclasses
import math
import threading

from ..tma.tensormap import DataType, L2Promotion, SwizzleMode, TensorMap
from .fastdiv import FastDiv, set_divisor

__all__ = ["CopyConfig", "TransposeConfig", "Plan", "Launcher", "BulkLauncher", "plan_copy", "launcher_for",
           "transpose_config_for", "flat_config",
           "COPY_CONFIG", "REDUCE_CONFIG", "TRANSPOSE_CONFIG", "PERSISTENT_TRANSPOSE", "REDUCE_OPS", "BULK_OPS",
           "bulk_supported"]

REDUCE_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")
_WORD = {8: DataType.UINT64, 4: DataType.UINT32, 2: DataType.UINT16, 1: DataType.UINT8}
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


class StreamParams(ctypes.Structure):
    _fields_ = [("tiles", ctypes.c_int32 * 5), ("box", ctypes.c_int32 * 5), ("rank", ctypes.c_int32),
                ("main_bytes", ctypes.c_uint32), ("tail_bytes", ctypes.c_uint32), ("stages", ctypes.c_uint32),
                ("stage_stride", ctypes.c_uint32), ("op", ctypes.c_int32), ("tail_coord", ctypes.c_int32),
                ("main_tiles", ctypes.c_int64), ("fd", FastDiv * 5)]


class TransposeParams(ctypes.Structure):
    _fields_ = [("tiles", ctypes.c_int32 * 5), ("qdim", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("stages", ctypes.c_uint32), ("kq", ctypes.c_uint32), ("group", ctypes.c_int32),
                ("ntiles", ctypes.c_int64), ("counter", ctypes.c_uint64), ("fd", FastDiv * 9)]


class BulkParams(ctypes.Structure):
    _fields_ = [("n16", ctypes.c_int64), ("main_tiles", ctypes.c_int64), ("rest0", ctypes.c_int64),
                ("tiles", ctypes.c_int64), ("row", ctypes.c_int64), ("piece", ctypes.c_uint32),
                ("pieces", ctypes.c_uint32), ("cols", ctypes.c_uint32), ("stages", ctypes.c_uint32),
                ("stage_stride", ctypes.c_uint32), ("tail", ctypes.c_uint32), ("counter", ctypes.c_uint64)]


assert ctypes.sizeof(StreamParams) == 120 and ctypes.sizeof(TransposeParams) == 128
assert ctypes.sizeof(BulkParams) == 72


@dataclasses.dataclass
class Plan:
    kind: str | None  # "flat" | "strided" | "transpose" | None
    reason: str = ""
    dims: list = dataclasses.field(default_factory=list)  # [(size, src_stride, dst_stride)] in elements, inner first
    elem: int = 0


def _merge_dims(shape, s_src, s_dst):
    """Drop size-1 dims and merge neighbours that are contiguous in both tensors; inner first."""
    dims = [(n, a, b) for n, a, b in zip(shape, s_src, s_dst) if n != 1]
    out: list = []
    for n, a, b in reversed(dims):  # innermost first
        if out:
            m, x, y = out[-1]
            if a == x * m and b == y * m:
                out[-1] = (m * n, x, y)
                continue
        out.append((n, a, b))
    return out


def plan_copy(src, dst, *, allow_transpose: bool = True) -> Plan:
    """How to move ``src`` into ``dst`` (same shape and dtype, CUDA tensors) with TMA; see the module docstring."""
    e = src.element_size()
    if src.numel() == 0:
        return Plan(None, "empty tensor")
    for name, t in (("src", src), ("dst", dst)):
        if t.data_ptr() % 16:
            return Plan(None, f"{name} base address is not 16-byte aligned")
    dims = _merge_dims(tuple(src.shape), tuple(src.stride()), tuple(dst.stride()))
    if not dims:  # a single element
        dims = [(1, 1, 1)]
    if any(a == 0 or b == 0 for _, a, b in dims):
        return Plan(None, "broadcast (stride-0) dimension")
    if any(a < 0 or b < 0 for _, a, b in dims):
        return Plan(None, "negative stride")
    if len(dims) == 1 and dims[0][1] == 1 and dims[0][2] == 1:
        return Plan("flat", dims=dims, elem=e)
    ps = [i for i, d in enumerate(dims) if d[1] == 1]
    qs = [i for i, d in enumerate(dims) if d[2] == 1]
    if not ps or not qs:
        return Plan(None, "no unit-stride dimension in " + ("src" if not ps else "dst"))
    p, q = ps[0], qs[0]
    if len(dims) > 5:
        return Plan(None, f"{len(dims)} dimensions after merging contiguous ones (TMA maps have at most 5)")
    for i, (n, a, b) in enumerate(dims):
        if n >= 2 ** 32:
            return Plan(None, "a dimension has 2^32 or more elements")
        if i != p and (a * e) % 16:
            return Plan(None, f"src stride {a * e} bytes is not a multiple of 16")
        if i != q and (b * e) % 16:
            return Plan(None, f"dst stride {b * e} bytes is not a multiple of 16")
    if p == q:
        rest = sorted((d for i, d in enumerate(dims) if i != p), key=lambda d: d[1])
        return Plan("strided", dims=[dims[p]] + rest, elem=e)
    if not allow_transpose:
        return Plan(None, "the unit-stride dimension differs between src and dst")
    for name, t in (("src", src), ("dst", dst)):
        if t.data_ptr() % 128:
            return Plan(None, f"{name} base address is not 128-byte aligned (needed with a swizzled map)")
    rest = sorted((d for i, d in enumerate(dims) if i not in (p, q)), key=lambda d: d[2])
    return Plan("transpose", dims=[dims[p], dims[q]] + rest, elem=e)


# ------------------------------------------------------------------------------------------------------------------
# kernels, device facts, tensor-map templates

_kernels: dict = {}
_sm_count: dict = {}


def _kernel(filename: str, name: str, options=()):
    """The kernel loaded in the current context (one module per device)."""
    from .. import cuda as tkc

    key = (filename, name, tuple(options), tkc.context_id())
    k = _kernels.get(key)
    if k is None:
        k = _kernels[key] = tkc.package_kernel(filename, name, options=list(options))
    return k


def sm_count(t) -> int:
    dev = t.device.index if t.device.index is not None else 0
    n = _sm_count.get(dev)
    if n is None:
        import torch

        n = _sm_count[dev] = torch.cuda.get_device_properties(dev).multi_processor_count
    return n


def _map(dtype, ptr, dims, strides_b, box, swizzle=SwizzleMode.NONE, l2=3) -> TensorMap:
    return TensorMap(dtype=dtype, global_dim=tuple(dims), global_strides=tuple(strides_b), box_dim=tuple(box),
                     swizzle=swizzle, l2_promotion=L2Promotion(l2), global_address=int(ptr))


class MapTemplate:
    """A validated, encoded tensor map that is re-pointed per address (``cuTensorMapReplaceAddress``): the geometry
    is checked and encoded once. (A private helper: tmakit.cuda's ``encode_cached`` keys on the address, which
    changes with every new tensor; launchers re-point their packed copy of the map in place, see :class:`Launcher`.)"""

    def __init__(self, tm: TensorMap, offset: int = 0):
        from ..cuda import encode_tensormap
        from ..cuda.driver import cu

        self.tm, self.offset = tm, offset
        self._d = cu()
        self._tmpl = encode_tensormap(tm)
        self._base = tm.global_address - offset

    def at(self, base: int):
        """The map over the tensor at ``base`` (a new ``CUtensorMap`` unless it is the template's own address)."""
        if base == self._base:
            return self._tmpl
        m = self._d.CUtensorMap()
        ctypes.memmove(m.getPtr(), self._tmpl.getPtr(), 128)
        replace_map_address(m.getPtr(), base + self.offset)
        return m


def _fit_inner_box(n, elem, cap=256):
    """Inner box: a multiple of 16 bytes, at most ``cap`` elements, at most ``n`` unless ``n`` is under 16 bytes."""
    unit = max(1, 16 // elem)
    if n < unit:
        return unit  # overhangs the tensor: zero-filled on load, clipped on store (accepted for rank >= 2 maps)
    return min(cap, (n // unit) * unit)


def _boxes(sizes, elem, target_bytes):
    """Box per dim (inner first): inner up to 256 elements (a multiple of 16 bytes, <= the dim), then fill outer dims
    (each <= its dim) up to about ``target_bytes``. None when the inner dim is under 16 bytes."""
    b0 = _fit_inner_box(sizes[0], elem)
    if b0 is None:
        return None
    box = [b0]
    budget = max(1, target_bytes // (b0 * elem))
    for n in sizes[1:]:
        b = max(1, min(256, n, budget))
        box.append(b)
        budget = max(1, budget // b)
    return box


_cu_launch_kernel = None


def _raw_launch():
    """``cuLaunchKernel`` from libcuda through ctypes (a few microseconds less per call than the bindings)."""
    global _cu_launch_kernel
    if _cu_launch_kernel is None:
        f = ctypes.CDLL("libcuda.so.1").cuLaunchKernel
        u = ctypes.c_uint
        f.argtypes = [ctypes.c_void_p, u, u, u, u, u, u, u, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        f.restype = ctypes.c_int
        _cu_launch_kernel = f
    return _cu_launch_kernel


class _LaunchAttr(ctypes.Structure):
    """``CUlaunchAttribute``: an id, padding to 8 bytes, a 64-byte value union."""

    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", ctypes.c_uint32 * 16)]


class _LaunchConfig(ctypes.Structure):
    """``CUlaunchConfig`` (grid, block, dynamic smem, stream, attributes)."""

    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3), ("smem", ctypes.c_uint),
                ("stream", ctypes.c_void_p), ("attrs", ctypes.POINTER(_LaunchAttr)), ("nattrs", ctypes.c_uint)]


_PDL_ATTR = 6  # CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
_cu_launch_kernel_ex = None


def _raw_launch_ex():
    """``cuLaunchKernelEx`` from libcuda through ctypes (launches with attributes, e.g. programmatic dependent
    launch, at ``cuLaunchKernel``'s host cost)."""
    global _cu_launch_kernel_ex
    if _cu_launch_kernel_ex is None:
        f = ctypes.CDLL("libcuda.so.1").cuLaunchKernelEx
        f.argtypes = [ctypes.POINTER(_LaunchConfig), ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        f.restype = ctypes.c_int
        _cu_launch_kernel_ex = f
    return _cu_launch_kernel_ex


def _pdl_config(grid: int, block: int, smem: int) -> _LaunchConfig:
    """A 1-D launch config with programmatic stream serialization allowed (the attribute array lives on the
    config object)."""
    attr = _LaunchAttr()
    attr.id = _PDL_ATTR
    attr.value[0] = 1  # programmaticStreamSerializationAllowed
    cfg = _LaunchConfig()
    cfg.grid[:] = (grid, 1, 1)
    cfg.block[:] = (block, 1, 1)
    cfg.smem = smem
    cfg._attr = attr
    cfg.attrs = ctypes.pointer(attr)
    cfg.nattrs = 1
    return cfg


class Launcher:
    """Everything about one (layout, dtype, op) problem that does not depend on the addresses: maps as templates,
    params, grid, kernel. ``launcher(src_ptr, dst_ptr)`` launches on torch's current stream.

    The first call goes through :mod:`tmakit.cuda` (context, smem attribute, argument checks). Later calls launch
    with ``cuLaunchKernel`` through ctypes from one packed parameter block that is re-pointed in place when the
    addresses change (the driver copies the parameters at launch): two 64-bit stores, or one
    ``cuTensorMapReplaceAddress`` per tensor map, so a call on tensors never seen before costs about what a repeated
    call does. ``FAST = False`` turns that off."""

    FAST = True
    pdl = False  # launch with programmatic stream serialization (cuLaunchKernelEx; the kernel waits in-grid)

    def __init__(self, kernel, grid, block, smem, params, maps):
        self.kernel, self.grid, self.block, self.smem, self.params, self.maps = kernel, grid, block, smem, params, maps
        self._blk = None  # (raw buffer, void*[] over its slots, [(slot address, is_src, offset, is_map)])
        self._cur = None  # the (src, dst) addresses the block holds
        self._fn = self._launch = self._cfg = None
        self._lock = threading.Lock()  # ctypes releases the GIL in the driver calls: threads share this launcher
        self.kind, self.path = "", ""

    def _args(self, sp: int, dp: int) -> list:
        return [m.at(sp if is_src else dp) for m, is_src in self.maps] + [self.params]

    def _address_slots(self) -> list:
        """(argument index, is_src, byte offset, is_map) of every argument that carries an address."""
        return [(i, is_src, m.offset, True) for i, (m, is_src) in enumerate(self.maps)]

    def _pack(self, args):
        """A 128-byte slot per argument (64-byte aligned) and the ``void*[]`` over them; kept alive together."""
        raw = ctypes.create_string_buffer(128 * len(args) + 64)
        base = (ctypes.addressof(raw) + 63) & ~63
        for i, a in enumerate(args):
            if isinstance(a, int):
                ctypes.c_uint64.from_address(base + 128 * i).value = a
            elif isinstance(a, ctypes.Structure):
                ctypes.memmove(base + 128 * i, ctypes.addressof(a), ctypes.sizeof(a))
            else:  # CUtensorMap
                ctypes.memmove(base + 128 * i, a.getPtr(), 128)
        ptrs = (ctypes.c_void_p * len(args))(*[base + 128 * i for i in range(len(args))])
        return raw, ptrs

    def _build(self, sp: int, dp: int) -> None:
        raw, ptrs = self._pack(self._args(sp, dp))
        slots = [(ptrs[i], is_src, off, is_map) for i, is_src, off, is_map in self._address_slots()]
        self._blk, self._cur = (raw, ptrs, slots), (sp, dp)

    def _repoint(self, sp: int, dp: int) -> None:
        """Patch the packed block's addresses to (sp, dp)."""
        self._cur = None  # until every slot is patched: a failure leaves it to be re-pointed completely next time
        for slot, is_src, off, is_map in self._blk[2]:
            a = (sp if is_src else dp) + off
            if is_map:
                replace_map_address(slot, a)
            else:
                ctypes.c_uint64.from_address(slot).value = a
        self._cur = (sp, dp)

    def __call__(self, sp: int, dp: int):
        with self._lock:  # the packed block (and the PDL config's stream) are shared: patch and launch as one step
            self._call(sp, dp)

    def _call(self, sp: int, dp: int):
        """The launch itself; the caller holds ``self._lock``."""
        if self._fn is not None and self.FAST:
            if self._blk is None:
                self._build(sp, dp)
            elif self._cur != (sp, dp):
                self._repoint(sp, dp)
            blk = self._blk
            if self.pdl:
                cfg = self._cfg
                cfg.stream = _current_stream()
                r = self._launch(ctypes.byref(cfg), self._fn, blk[1], None)
            else:
                r = self._launch(self._fn, self.grid, 1, 1, self.block, 1, 1, self.smem, _current_stream(), blk[1],
                                 None)
            if r != 0:
                from ..cuda.driver import check, cu

                check((cu().CUresult(r),), "cuLaunchKernelEx" if self.pdl else "cuLaunchKernel",
                      kernel=str(self.kernel), grid=self.grid, smem=self.smem)
            return
        self.kernel(self.grid, self.block, *self._args(sp, dp), smem=self.smem, pdl=self.pdl)
        if self.FAST and self._fn is None:
            try:
                self._launch = _raw_launch_ex() if self.pdl else _raw_launch()
                if self.pdl:
                    self._cfg = _pdl_config(self.grid, self.block, self.smem)
                _replace_address()
                self._fn = int(self.kernel.handle)
            except Exception:  # pragma: no cover - no libcuda / odd bindings: stay on the slow path
                self.FAST = False


class DynLauncher(Launcher):
    """A transpose launcher with ``TransposeConfig.dyn``: its params carry a per-stream tile counter (two zeroed
    words from torch's allocator on the current stream; launches on one stream are ordered, and the kernel's last CTA
    zeroes the counter again), so it keeps one packed parameter block per stream."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self._counters: dict = {}
        self._by_stream: dict = {}  # stream -> (block, addresses it holds)

    def _call(self, sp: int, dp: int):
        st = _current_stream()
        c = self._counters.get(st)
        if c is None:
            import torch

            c = self._counters[st] = torch.zeros(2, dtype=torch.int64, device="cuda")
        self.params.counter = c.data_ptr()
        self._blk, self._cur = self._by_stream.get(st, (None, None))
        super()._call(sp, dp)
        self._by_stream[st] = (self._blk, self._cur)


_cu_replace_address = None


def _replace_address():
    """``cuTensorMapReplaceAddress`` from libcuda through ctypes (re-points a packed map in place)."""
    global _cu_replace_address
    if _cu_replace_address is None:
        f = ctypes.CDLL("libcuda.so.1").cuTensorMapReplaceAddress
        f.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        f.restype = ctypes.c_int
        _cu_replace_address = f
    return _cu_replace_address


def replace_map_address(ptr: int, address: int) -> None:
    """Re-point the encoded ``CUtensorMap`` at host address ``ptr`` to the global ``address``."""
    r = _replace_address()(ptr, address)
    if r != 0:
        from ..cuda.driver import check, cu

        check((cu().CUresult(r),), "cuTensorMapReplaceAddress", address=hex(address))


_stream_fn = None


def _current_stream() -> int:
    """torch's current stream on the current device, as a raw handle (``_cuda_getCurrentRawStream`` when torch has
    it: a few microseconds less than ``torch.cuda.current_stream().cuda_stream``)."""
    global _stream_fn
    f = _stream_fn
    if f is None:
        import torch

        raw, dev = getattr(torch._C, "_cuda_getCurrentRawStream", None), getattr(torch._C, "_cuda_getDevice", None)
        if raw is not None and dev is not None:
            f = _stream_fn = lambda: raw(dev())
        else:  # pragma: no cover - older torch
            f = _stream_fn = lambda: torch.cuda.current_stream().cuda_stream
    return f()


def _order(cfg: CopyConfig) -> int:
    return 1 if cfg.tiles_per_cta > 0 else cfg.order


def _grid(cfg: CopyConfig, total: int, nsm: int) -> int:
    """CTAs for ``total`` tiles: persistent (SMs x ctas_per_sm x grid_mult, capped by the tiles) or, with
    ``tiles_per_cta``, one CTA per run of that many tiles (at least the persistent grid's count)."""
    persistent = max(1, min(total, nsm * cfg.ctas_per_sm * max(1, cfg.grid_mult)))
    if cfg.tiles_per_cta > 0:
        return max(persistent, -(-total // cfg.tiles_per_cta))
    return persistent


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
        kfile, kname = "copy.cu", "tmakit_copy"
    else:
        word, dt = elem, dtype
        kfile, kname = "reduce.cu", "tmakit_reduce"
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


#: combine element type codes of bandwidth_bulk.cu (BK_DT) per TMA data type
_BK_DT = {DataType.FLOAT32: 0, DataType.BFLOAT16: 1, DataType.FLOAT16: 2, DataType.INT32: 3, DataType.UINT32: 4,
          DataType.INT64: 5, DataType.UINT64: 6}
#: reductions the bulk (load-combine-store) engine implements, by REDUCE_OPS index
BULK_OPS = {0: "add", 1: "min", 2: "max", 5: "and", 6: "or", 7: "xor"}


class BulkLauncher(Launcher):
    """A launcher of ``tmakit_bulk`` (pointers + params; no tensor maps)."""

    def _args(self, sp: int, dp: int) -> list:
        from ..cuda import Ptr

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


def _pad_smem(smem: int, resident: int) -> int:
    """Dynamic shared memory padded so that at most ``resident`` CTAs fit per SM (each CTA also holds ~1.6 KiB of
    static and reserved shared memory); ``resident`` 0 leaves it as is."""
    if resident <= 0:
        return smem
    return max(smem, ((SMEM_PER_SM + 1024) // resident - 1664) // 128 * 128)


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
            f"-DBK_BF16X2={cfg.bf16x2}", f"-DBK_DYN={dyn}", f"-DBK_EXIT_READ={cfg.exit_read}",
            f"-DBK_MINB={max(1, cfg.min_ctas)}", f"-DBK_T1={lean}", f"-DBK_AHEAD={cfg.ahead if lean else 0}",
            f"-DBK_AHEAD_END={cfg.ahead_end}", f"-DBK_T1_STG={cfg.stg if lean else 0}"]
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


def _run_bytes(box, dims, side, elem):
    """Contiguous bytes of one box row-run on ``side`` (1 src, 2 dst): dim 0 times every following dim (in that
    side's stride order) whose box covers the whole previous extent."""
    run, span = box[0] * elem, dims[0][0]
    if box[0] < dims[0][0]:
        return run
    left = list(range(1, len(dims)))
    while left:
        nxt = next((i for i in left if dims[i][side] == span), None)
        if nxt is None:
            break
        run *= box[nxt]
        if box[nxt] < dims[nxt][0]:
            break
        span *= dims[nxt][0]
        left.remove(nxt)
    return run


def _boxes_balanced(dims, elem, target_bytes):
    """Box per dim (inner first) of about ``target_bytes`` maximising the shorter of the two sides' contiguous runs
    (then the box size): a permute that keeps the inner dim gets runs of kilobytes on both sides, not 256 bytes on
    one. Powers of two or the whole dim per outer dim, each <= 256."""
    b0 = _fit_inner_box(dims[0][0], elem)
    rest = dims[1:]
    choices = []
    for n, _, _ in rest:
        c = {min(n, 256)} | {1 << i for i in range(9) if (1 << i) < n}
        choices.append(sorted(c))
    best, best_key = None, None

    def rec(i, box, nbytes):
        nonlocal best, best_key
        if i == len(rest):
            full = [b0] + box
            runs = (_run_bytes(full, dims, 1, elem), _run_bytes(full, dims, 2, elem))
            key = (min(runs), nbytes, max(runs))
            if best_key is None or key > best_key:
                best, best_key = full, key
            return
        for b in choices[i]:
            if nbytes * b > target_bytes and b > 1:
                break
            rec(i + 1, box + [b], nbytes * b)

    rec(0, [], b0 * elem)
    return best


def _strided_launcher(plan, op, dtype, cfg, nsm, sp, dp):
    e = plan.elem
    dims = plan.dims
    if cfg.rest_order == 1:
        dims = dims[:1] + sorted(dims[1:], key=lambda d: d[2])
    plan = Plan(plan.kind, plan.reason, dims, e)
    sizes = [d[0] for d in plan.dims]
    if op < 0:
        dt = _WORD[e]
        kfile, kname = "copy.cu", "tmakit_copy"
    else:
        dt = dtype
        kfile, kname = "reduce.cu", "tmakit_reduce"
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


def launcher_for(src, dst, *, op: int = -1, dtype=None, allow_transpose: bool = True, engine: str | None = None):
    """A cached :class:`Launcher` for this (shape, strides, dtype, alignment, op, config), or a ``Plan`` with
    ``kind=None`` saying why TMA cannot do it. ``engine`` overrides the config's engine for contiguous pairs
    (``"tensor"``: tensor maps, store-reduce for reductions; ``"bulk"``: bulk copies, load-combine-store)."""
    sp, dp = src.data_ptr(), dst.data_ptr()
    cfg = COPY_CONFIG if op < 0 else REDUCE_CONFIG
    if engine is not None and engine != cfg.engine:
        cfg = dataclasses.replace(cfg, engine=engine)
    key = (tuple(src.shape), tuple(src.stride()), tuple(dst.stride()), src.element_size(), op, dtype,
           sp % 128 == 0, dp % 128 == 0, sp % 16 == 0, dp % 16 == 0, allow_transpose, cfg,
           tuple(sorted(TRANSPOSE_CONFIG.items())), src.device.index)
    got = _launchers.get(key)
    if got is not None:
        return got
    plan = plan_copy(src, dst, allow_transpose=allow_transpose)
    nsm = sm_count(src) if plan.kind else 0
    cfg = flat_config(plan, cfg, src.numel() * src.element_size(), op, dtype)
    if plan.kind == "strided" and op < 0 and cfg.strided:
        cfg = dataclasses.replace(cfg, **dict(cfg.strided), strided=())
    if plan.kind == "flat" and op < 0 and cfg.engine != "bulk" and src.numel() * src.element_size() < cfg.bulk_below:
        cfg = dataclasses.replace(cfg, engine="bulk", bulk_mode=0, piece=32768, pieces=1, stages=6, lag=1,
                                  ctas_per_sm=1, order=0, grid_mult=1, tiles_per_cta=0)
    if plan.kind == "flat" and cfg.engine == "bulk" and bulk_supported(op, dtype):
        got = _bulk_launcher(src.numel() * src.element_size(), op, dtype, cfg, nsm)
        plan.kind = "bulk" if op < 0 else "combine"
        reason = "no bulk view"
    elif plan.kind == "flat":
        got = _flat_launcher(src.numel() * src.element_size(), plan.elem, op, dtype, cfg, nsm, sp, dp)
        reason = "no flat TMA view"
    elif plan.kind == "strided":
        got = _strided_launcher(plan, op, dtype, cfg, nsm, sp, dp)
        reason = "no strided TMA view"
    elif plan.kind == "transpose":
        tcfg = TRANSPOSE_CONFIG.get(plan.elem) or TRANSPOSE_CONFIG[2]
        got = _transpose_launcher(plan, tcfg, nsm, sp, dp)
        reason = "no transposing TMA view"
    else:
        got, reason = None, plan.reason
    if got is None:
        got = Plan(None, reason)
    else:
        got.kind, got.path = plan.kind, "tma:" + plan.kind
    if len(_launchers) > 1024:
        _launchers.clear()
    _launchers[key] = got
    return got
