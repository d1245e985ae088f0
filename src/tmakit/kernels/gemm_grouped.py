"""Host side of the grouped GEMM kernel (``gemm_grouped.cu``): ``torch._grouped_mm``'s 2-D A x 3-D B.

A (M, K) row-major holds the tokens of all groups, sorted by group: group g owns rows [offs[g-1], offs[g]) (offs[-1]
= 0) of A and of C (M, N); B (G, K, N) holds one matrix per group, either K-major (``w.transpose(-2, -1)`` of a
row-major (G, N, K) ``w``) or row-major. The kernel is the dense GEMM's persistent, warp-specialized TMA + wgmma
kernel with a work list over the groups' tiles (gemm.cu's ``GroupList``), read on the device from ``offs``: the host
never reads the offsets, so a launch needs no synchronisation and captures into CUDA graphs. B is one rank-3 tensor
map (the group is its third coordinate). Offsets are clamped on the device to be non-decreasing and at most M, so
any ``offs`` is memory-safe; rows past the last offset are not written.
"""

from __future__ import annotations

import ctypes
import dataclasses
from dataclasses import dataclass

from .gemm import (
    _ELEM,
    _IN,
    _OUT,
    BK,
    CONFIGS,
    NUM_SMS,
    GemmConfig,
    GemmError,
    _dtype_name,
    check_store_rows,
    cluster_variant,
    compiled,
    launch_fn,
    map_nd,
    resident_ctas,
    smem_bytes,
)
from .gemm import odd_pitch as rows_odd_pitch
from .gemm_fp8 import CONFIGS as _FP8
from .gemm_fp8 import epilogue_smem, epilogue_staged, smem_for
from .gemm_ptr_array import EDIT_SMEM, MAP_BYTES  # along K, the maps are edited as the ptr-array kernel's are

__all__ = ["GroupedPlan", "plan_grouped", "plan_grouped_k", "plan_grouped_fp8", "grid", "map_slot_bytes",
           "choose_grouped_config", "choose_grouped_fp8_config",
           "deferred", "best_tile", "choose_tile", "grouped_tile_cost", "idle_consumers",
           "IDLE_MIN_FLOP_PER_BYTE", "IDLE_L2_BYTES", "odd_pitch_of", "odd_pitch_tiles", "short_group_tiles",
           "weighed_tiles", "BF16_TILES", "FP8_TILES", "ODD_PITCH_SPEED",
           "kernel_name", "launcher"]


@dataclass(frozen=True)
class GroupedPlan:
    m: int  # rows of A and C (all groups)
    n: int
    k: int
    groups: int
    lda: int  # elements between rows of A
    ldb: int  # elements between the rows of one group's B (N rows if K-major, K rows if row-major)
    ldb_group: int  # elements between groups of B
    ldc: int
    in_dtype: str
    out_dtype: str
    config: GemmConfig
    b_mn: int  # 0: B K-major, 1: row-major (K, N) per group
    b_dtype: str = ""  # fp8: B's dtype (in_dtype is A's); 16-bit inputs: ""
    scaling: str = ""  # fp8: "row" (also per tensor / per expert, as zero strides) or "block"; 16-bit: ""
    scale_strides: tuple = (0, 0, 0, 0, 0)  # (a_m, a_k, b_n, b_k, b_g) in elements of the fp32 scales
    fast_accum: bool = True  # fp8: one wgmma chain over all of K (else two-level accumulation)
    staged: bool = False  # fp8 row-wise: epilogue scales staged in shared memory per unit (gemm_fp8.epilogue_staged)
    idle: int = 0  # 1: a lone tile's consumer whose rows all lie past its group's end skips (idle_consumers)
    k_grouped: int = 0  # 1: offs cuts K (plan_grouped_k): m = groups * A's rows, A M-major, per-CTA map slots

    @property
    def in_code(self) -> int:
        """The kernel's IN: 0 bf16, 1 fp16, fp8 2 + 2 (A is e5m2) + (B is e5m2)."""
        if not self.scaling:
            return _IN[self.in_dtype]
        return 2 + 2 * (self.in_dtype == "float8_e5m2") + (self.b_dtype == "float8_e5m2")


# The grouped kernels' single-CTA tiles with their speed per output element relative to the fastest (1.0), fitted
# on random MoE problems measured on an H200 and an H100 (docs/GROUPED.md, "Tile choice"; the 64x64 tiles' 0.5 on
# routed decode-like problems, "Few rows per group"). The chooser takes the tile of least estimated time; larger
# tiles first (they win ties).
BF16_TILES = {"n256_s4_c1": 1.0, "n192_s4_c1": 1.0, "n128_s6_c1": 0.8, "m64_n256_s5_c1_ov1": 0.5,
              "m64_n128_s8_c1_ov1": 0.6, "m64_n64_s12_c1_ov1": 0.5}
FP8_TILES = {
    "two-level": {"n192_s4_c1": 1.0, "n128_s6_c1": 0.8, "m64_n128_s8_c1": 0.6, "m64_n64_s12_c1": 0.5},
    "fast": {"n256_s4_c1": 1.0, "n192_s4_c1": 1.0, "n128_s6_c1": 0.7, "m64_n128_s8_c1_ov1": 0.7,
             "m64_n64_s12_c1_ov1": 0.5},
    "block": {"n192_s4_c1": 1.0, "n128_s5_c1": 0.8, "m64_n128_s8_c1": 0.6},  # block scales: 5 stages at 128x128
}


# 16-bit inputs keep every consumer busy where the B slabs the running tiles read do not fit in the L2
# (IDLE_L2_BYTES, the smaller L2 of the two GPUs) and the problem moves fewer flops per byte than
# IDLE_MIN_FLOP_PER_BYTE (weights, A and C once): there the row tiles of a group read the same B slabs in step, from
# DRAM once, and a skip anywhere shifts the CTAs against each other so that slabs come from DRAM again (skewed
# 64 x 128 x 4096x7168: 0.97-0.99x on both GPUs; docs/GROUPED.md, "Idle consumers").
IDLE_MIN_FLOP_PER_BYTE = 200
IDLE_L2_BYTES = 50 << 20


def idle_consumers(cfg: GemmConfig, m: int, n: int, k: int, groups: int, in_bytes: int, out_bytes: int,
                   sms: int = NUM_SMS) -> int:
    """The kernel's IDLE: 1 where, on a group's only row tile, the consumer whose 64 rows all lie past the group's
    end should skip the unit's wgmmas (the kernel decides per unit). Needs two consumers and no overlap; fp8 always,
    16-bit inputs where the running tiles' B slabs fit in the L2 or the problem moves at least
    ``IDLE_MIN_FLOP_PER_BYTE`` flops per byte."""
    if cfg.bm != 128 or cfg.overlap:
        return 0
    if in_bytes == 1:
        return 1
    tiles = (-(-m // 128) + groups) * -(-n // cfg.bn)  # at most: each group adds one partial row tile
    if min(tiles, sms) * cfg.bn * k * in_bytes <= IDLE_L2_BYTES:
        return 1
    moved = in_bytes * (groups * n * k + m * k) + out_bytes * m * n
    return int(2 * m * n * k >= IDLE_MIN_FLOP_PER_BYTE * moved)


def grouped_tile_cost(cfg: GemmConfig, speed: float, m: int, n: int, groups: int, sms: int = NUM_SMS) -> float:
    """Estimated time (arbitrary units) of a grouped problem on tiles of ``cfg``: waves of tiles over the SMs times
    one tile's area over its relative ``speed``. The host never reads ``offs``, so each group that can hold rows (all
    of them, or M of them where M is smaller) counts an equal share of the M rows (at least one): the tiles a row
    count wastes (a 128-row tile on 20-row groups, a 256-column one on N = 320; pairs along M run an even number of
    row tiles per group) and the last wave's idle SMs are what the estimate weighs."""
    g, cm = max(min(groups, m), 1), cfg.cluster
    tiles = g * cm * -(-max(m, g) // (g * cfg.bm * cm)) * -(-n // cfg.bn)
    return -(-max(tiles, 1) // sms) * cfg.bm * cfg.bn / speed


# Pairs along M (B multicast; gemm.cluster_variant of a single-CTA tile), for operands whose rows are an odd multiple
# of 16 bytes apart: there each 128-byte row of a TMA box spans two 128-byte lines and the loads, not the tensor
# cores, set a single CTA's pace (docs/HARDWARE.md §11); a pair requests half of B per CTA. ODD_PITCH_SPEED: a single
# CTA's speed there relative to the pair's (measured, docs/GROUPED.md).
ODD_PITCH_SPEED = 0.7


def odd_pitch_tiles(tiles: dict, configs: dict, b_mn: int = 0) -> dict:
    """``tiles`` (name -> relative speed) for operands on an odd pitch: each single-CTA tile slowed by
    ODD_PITCH_SPEED, followed by its pair (at the tile's own speed) where ``configs`` has one (row-major B: only
    pairs that split B's 64-column boxes evenly)."""
    out = {}
    for name, speed in tiles.items():
        out[name] = speed * ODD_PITCH_SPEED
        pair = cluster_variant(configs, name, 2)
        if pair is not None and not (b_mn and configs[pair].bn // 64 % 2):
            out[pair] = speed
    return out


def best_tile(tiles: dict, configs: dict, m: int, n: int, groups: int, sms: int = NUM_SMS,
              odd_pitch: bool = False, b_mn: int = 0) -> str:
    """The name of least :func:`grouped_tile_cost` among ``tiles`` (name -> relative speed; the first wins ties,
    so list larger tiles first: at equal waves and speed they run fewer per-tile prologues and epilogues);
    ``odd_pitch``: among :func:`odd_pitch_tiles`."""
    tiles = odd_pitch_tiles(tiles, configs, b_mn) if odd_pitch else tiles
    return min(tiles, key=lambda name: grouped_tile_cost(configs[name], tiles[name], m, n, groups, sms))


def choose_tile(tiles: dict, configs: dict, m: int, n: int, groups: int, sms: int = NUM_SMS,
                odd_pitch: bool = False, b_mn: int = 0) -> GemmConfig:
    """The config :func:`best_tile` names."""
    return configs[best_tile(tiles, configs, m, n, groups, sms, odd_pitch, b_mn)]


def odd_pitch_of(lda: int, ldb: int, m: int, n: int, k: int, eb: int, b_mn: int) -> bool:
    """Whether A's or B's rows are an odd multiple of 16 bytes apart (the rows TMA reads: A's M rows, B's N rows if
    K-major, else its K rows); ``ld*`` in elements of ``eb`` bytes."""
    return rows_odd_pitch((lda * eb, m), (ldb * eb, k if b_mn else n))


def _check_cluster(config: GemmConfig, b_mn: int = 0, scaled: bool = False) -> None:
    if config.cluster_n != 1 or config.cluster > 2 or config.per_sm != 1:
        raise GemmError(f"config {config.name}: the grouped kernel runs single CTAs or pairs along M, one per SM")
    if scaled and config.defer:
        plain = dataclasses.replace(config, defer=0)
        name = next((k for k, v in _FP8.items() if v == plain), plain.name)
        raise GemmError(f"config {config.name}: the fp8 grouped kernel has no deferred epilogue (its accumulators "
                        f"leave no registers for a packed tile); use {name}")
    if b_mn and config.bn // 64 % config.cluster:
        raise GemmError(f"config {config.name}: a pair splits a row-major B's {config.bn // 64} boxes of 64 columns "
                        f"per stage unevenly; use a 128- or 256-column pair")


def deferred(config: GemmConfig, out_dtype: str) -> GemmConfig:
    """``config`` with the deferred epilogue (``GemmConfig.defer``) where it applies: 16-bit outputs on 128-row
    tiles of 192 or 256 columns, whose staging boxes stream (the kernel writes a tile's boxes during the next tile's
    first slabs, while their wgmmas run). 128x128 and 64-row tiles stage a whole tile at once and stay as they are.
    Measured: docs/GROUPED.md ("Deferred epilogue")."""
    if _ELEM[out_dtype] != 2 or config.bm != 128 or config.bn not in (192, 256):
        return config
    return dataclasses.replace(config, defer=1)


def choose_grouped_config(m: int, n: int, groups: int, sms: int = NUM_SMS, odd_pitch: bool = False,
                          b_mn: int = 0) -> GemmConfig:
    """The bf16/fp16 grouped kernel's tile (:func:`choose_tile` over ``BF16_TILES``): 64-row tiles where groups are
    short or the problem is less than a wave of larger tiles, 128x192 or 128x128 where N wastes much of a 256-column
    tile, 128x256 otherwise; on odd pitches pairs along M where their even row-tile counts cost less than the single
    CTAs' slower loads."""
    return choose_tile(weighed_tiles("bf16", m, groups), CONFIGS, m, n, groups, sms, odd_pitch, b_mn)


def weighed_tiles(kind: str, m: int, groups: int, tiles: dict | None = None) -> dict:
    """The tiles (name -> relative speed) the chooser weighs for ``m`` rows on ``groups`` groups of mode ``kind``
    ("bf16", or an ``FP8_TILES`` key): ``tiles`` (default: the mode's table) through :func:`short_group_tiles`,
    except with block scales, whose measured sweeps did not favour that rule."""
    fp8 = kind != "bf16"
    tiles = tiles if tiles is not None else FP8_TILES[kind] if fp8 else BF16_TILES
    return tiles if kind == "block" else short_group_tiles(tiles, _FP8 if fp8 else CONFIGS, m, groups)


def short_group_tiles(tiles: dict, configs: dict, m: int, groups: int) -> dict:
    """``tiles`` without its 128-row tiles where the groups holding rows average at most 64 rows (at most ``m`` of
    them hold any): there B streams past few rows, a 64-row tile's lighter slabs keep more CTAs streaming it, and
    the area model (:func:`grouped_tile_cost`), fitted where tiles are full, favours the wider 128-row tiles wrongly
    (bf16, 48 experts holding 184 rows, N = 272: 128 x 192 at 0.82x the speed of 64 x 128; fp8 row-wise alike;
    docs/GROUPED.md, "Few rows per group")."""
    if m > 64 * min(groups, m):
        return tiles
    short = {name: speed for name, speed in tiles.items() if configs[name].bm == 64}
    return short or tiles


def plan_grouped(a, b, offs_len: int, out=None, out_dtype=None, config: GemmConfig | str | None = None) -> GroupedPlan:
    """Check ``C[rows of g] = A[rows of g] @ B[g]`` (no GPU needed) and return the plan. ``offs_len``: the number of
    group offsets. Raises :class:`GemmError` with the rule and a fix."""
    m, n, k, g = _shapes(a, b, offs_len)
    ta, tb = _dtype_name(a.dtype), _dtype_name(b.dtype)
    if ta not in _IN or tb != ta:
        raise GemmError(f"a and b must both be bfloat16 or both float16, got {ta} and {tb}")
    od = _out_dtype(out, out_dtype if out is not None else (out_dtype or a.dtype))
    lda, ldb, ldg, ldc, b_mn = _layout(a, b, out, m, n, k, g, _ELEM[ta], _ELEM[od])
    if isinstance(config, str):
        config = CONFIGS[config]
    if config is None:
        config = deferred(choose_grouped_config(m, n, g, odd_pitch=odd_pitch_of(lda, ldb, m, n, k, _ELEM[ta], b_mn),
                                                b_mn=b_mn), od)
    _check_cluster(config, b_mn)
    idle = idle_consumers(config, m, n, k, g, _ELEM[ta], _ELEM[od])
    return GroupedPlan(m, n, k, g, lda, ldb, ldg, ldc, ta, od, config, b_mn, idle=idle)


def plan_grouped_k(a, b, offs_len: int, out=None, out_dtype=None,
                   config: GemmConfig | str | None = None) -> GroupedPlan:
    """Check ``C[g] = A[:, K rows of g] @ B[K rows of g]`` (``torch._grouped_mm``'s 2-D x 2-D form, the weight
    gradient of an MoE layer: ``a = x.t()`` of the tokens x (K, M), ``b`` the output gradients (K, N), ``offs_len``
    groups along K; C (G, M, N)) and return the plan (no GPU needed). The kernel reads ``a`` M-major (imm-trans-a) and
    ``b`` row-major; it zero-fills each group's last slab past the group's end through per-group tensor maps, so the
    offsets need no alignment. Raises :class:`GemmError` with the rule and a fix."""
    if a.dim() != 2 or b.dim() != 2:
        raise GemmError(f"the grouped kernel along K takes a 2-D a and a 2-D b, got {a.dim()}-D and {b.dim()}-D")
    (m, k), (kb, n), g = tuple(int(x) for x in a.shape), tuple(int(x) for x in b.shape), int(offs_len)
    if kb != k:
        raise GemmError(f"shapes do not compose: a is {m}x{k}, b is {kb}x{n} (a.shape[1] must equal b.shape[0])")
    for nm, v in (("groups x M", g * m), ("N", n), ("K", k)):
        if v >= 2**31:
            raise GemmError(f"{nm} = {v} does not fit the kernel's 32-bit indices")
    ta, tb = _dtype_name(a.dtype), _dtype_name(b.dtype)
    if ta not in _IN or tb != ta:
        raise GemmError(f"a and b must both be bfloat16 or both float16, got {ta} and {tb}")
    od = _out_dtype(out, out_dtype if out is not None else (out_dtype or a.dtype))
    eb, eo = _ELEM[ta], _ELEM[od]
    (sa0, sa1), (sb0, sb1) = (tuple(int(x) for x in t.stride()) for t in (a, b))
    if sa0 != 1 and m > 1:
        raise GemmError(f"along K the kernel reads a M-major (a.stride(0) == 1: a = x.t() of a row-major (K, M) x), "
                        f"got strides {(sa0, sa1)}; other layouts run torch's op")
    if sb1 != 1 and n > 1:
        raise GemmError(f"b must have contiguous rows (b.stride(1) == 1), got strides {(sb0, sb1)}")
    lda, ldb = (sa1 if k > 1 else 16), (sb0 if k > 1 else 16)
    check_store_rows(n, eo)
    ldc = n
    if out is not None:
        if tuple(int(x) for x in out.shape) != (g, m, n):
            raise GemmError(f"out has shape {tuple(out.shape)}, expected {(g, m, n)}")
        so = tuple(int(x) for x in out.stride())
        if so[2] != 1 or (g > 1 and so[0] != m * so[1]):
            raise GemmError(f"out must be (G, M, N) with contiguous rows, each group's M rows after the previous "
                            f"group's, got strides {so}")
        ldc = so[1]
    _check_tma_operands((("a's K stride", lda, eb), ("b's row stride", ldb, eb), ("out's row stride", ldc, eo)),
                        a, b, out)
    if isinstance(config, str):
        config = CONFIGS[config]
    if config is None:
        config = deferred(choose_grouped_config(g * m, n, g, b_mn=1), od)
    if config.cluster != 1:
        raise GemmError(f"config {config.name}: the kernel along K runs single CTAs; pick a _c1 config")
    return GroupedPlan(g * m, n, k, g, lda, ldb, 0, ldc, ta, od, config, 1, k_grouped=1)


def _check_tma_operands(strides, a, b, out) -> None:
    """TMA's rules on the operands: each (name, stride in elements, element bytes) a multiple of 16 bytes, each
    tensor's address 128-byte aligned (128-byte-swizzled maps)."""
    for nm, v, e in strides:
        if v * e % 16:
            raise GemmError(f"{nm} = {v} elements is not a multiple of 16 bytes (TMA global stride); pass a padded "
                            f"or contiguous tensor")
    for nm, t in (("a", a), ("b", b)) + ((("out", out),) if out is not None else ()):
        if int(t.data_ptr()) % 128:
            raise GemmError(f"{nm}.data_ptr() is not 128-byte aligned (128-byte-swizzled tensor map); pass "
                            f"{nm}.clone()")


def _shapes(a, b, offs_len: int) -> tuple[int, int, int, int]:
    """(M, N, K, groups) of a 2-D a and a 3-D b that compose, with one offset per group."""
    if a.dim() != 2 or b.dim() != 3:
        raise GemmError(f"the grouped kernel takes a 2-D a and a 3-D b, got {a.dim()}-D and {b.dim()}-D")
    (m, k), (g, kb, n) = tuple(int(s) for s in a.shape), tuple(int(s) for s in b.shape)
    if kb != k:
        raise GemmError(f"shapes do not compose: a is {m}x{k}, b is {g}x{kb}x{n} (a.shape[1] must equal b.shape[1])")
    if offs_len != g:
        raise GemmError(f"offs has {offs_len} entries for {g} groups of b; give one end offset per group")
    for nm, v in (("M", m), ("N", n), ("K", k), ("groups", g)):
        if v >= 2**31:
            raise GemmError(f"{nm} = {v} does not fit the kernel's 32-bit indices")
    return m, n, k, g


def _out_dtype(out, out_dtype) -> str:
    od = _dtype_name(out.dtype if out is not None else out_dtype)
    if od not in _OUT:
        raise GemmError(f"output dtype must be bfloat16, float16 or float32, got {od}")
    if out is not None and out_dtype is not None and _dtype_name(out_dtype) != od:
        raise GemmError(f"out.dtype is {od} but out_dtype={_dtype_name(out_dtype)}; give one or make them agree")
    return od


def _layout(a, b, out, m: int, n: int, k: int, g: int, eb: int, eo: int) -> tuple[int, int, int, int, int]:
    """(lda, ldb, ldb_group, ldc, b_mn) in elements, once the strides pass TMA's rules (``eb``, ``eo``: input and
    output element bytes)."""
    sa0, sa1 = (int(s) for s in a.stride())
    if sa1 != 1 and k > 1:
        raise GemmError(f"a must have contiguous rows (a.stride(1) == 1), got strides {(sa0, sa1)}")
    sg, sk, sn = (int(s) for s in b.stride())
    if sk == 1 and k > 1 or (k == 1 and sn != 1):
        b_mn, ldb = 0, sn
    elif sn == 1:
        b_mn, ldb = 1, sk
    else:
        raise GemmError(f"each b[g] must be K-major (b = w.transpose(-2, -1) of a contiguous (G, N, K) w) or row-major "
                        f"(K, N), got strides {(sg, sk, sn)}; pass b.contiguous()")
    ldc = n
    check_store_rows(n, eo)  # (full tiles go out through TMA stores)
    if out is not None:
        if tuple(int(s) for s in out.shape) != (m, n):
            raise GemmError(f"out has shape {tuple(out.shape)}, expected {(m, n)}")
        if int(out.stride(1)) != 1:
            raise GemmError(f"out must have contiguous rows, got strides {tuple(out.stride())}")
        ldc = int(out.stride(0))
    _check_tma_operands((("a.stride(0)", sa0 if m > 1 else 16, eb), ("b's row stride", ldb, eb),
                         ("b.stride(0)", sg if g > 1 else 16, eb), ("out's row stride", ldc, eo)), a, b, out)
    ldg = sg if g > 1 else max(ldb * (k if b_mn else n), 16)
    return sa0 if m > 1 else 16, ldb, ldg, ldc, b_mn


def choose_grouped_fp8_config(m: int, n: int, groups: int, scaling: str, fast_accum: bool,
                              sms: int = NUM_SMS, odd_pitch: bool = False) -> GemmConfig:
    """The fp8 grouped kernel's tile (:func:`choose_tile`): over ``FP8_TILES["block"]`` for block scales, ``"fast"``
    with fast accumulation (tensor- and row-wise), else ``"two-level"`` (128x192 at most: two accumulator sets);
    row-wise scales only their 64-row tiles where groups are short (:func:`weighed_tiles`);
    ``odd_pitch``: with the pairs along M (:func:`odd_pitch_tiles`)."""
    kind = "block" if scaling == "block" else "fast" if fast_accum else "two-level"
    return choose_tile(weighed_tiles(kind, m, groups), _FP8, m, n, groups, sms, odd_pitch)


def _grouped_scales(scale_a, scale_b, m: int, n: int, k: int, g: int) -> tuple[str, tuple]:
    """(scaling, (a_m, a_k, b_n, b_k, b_g)) the scale shapes name, or GemmError listing the accepted shapes."""
    from .gemm_fp8 import BK as FP8_BK

    for nm, t in (("scale_a", scale_a), ("scale_b", scale_b)):
        if _dtype_name(t.dtype) != "float32":
            raise GemmError(f"{nm} must be float32, got {_dtype_name(t.dtype)}; pass {nm}.float()")
    sa, sb = tuple(int(x) for x in scale_a.shape), tuple(int(x) for x in scale_b.shape)
    ta, tb = tuple(int(x) for x in scale_a.stride()), tuple(int(x) for x in scale_b.stride())
    kb, nb = -(-k // FP8_BK), -(-n // FP8_BK)
    if len(sb) == 3 and sa == (m, kb) and sb == (g, nb, kb):  # block-wise: 1x128 of A, 128x128 of each B[g]
        return "block", (ta[0], ta[1], tb[1], tb[2], tb[0])
    a_ok = {(): (0,), (1,): (0,), (m,): ta[:1], (m, 1): ta[:1]}
    b_ok = {(g,): (0, tb[0] if tb else 0), (g, 1): (0, tb[0]), (g, n): (tb[1] if len(tb) > 1 else 0, tb[0])}
    if sa in a_ok and sb in b_ok and len(sb) >= 1:
        (a_m,), (b_n, b_g) = a_ok[sa], b_ok[sb]
        return "row", (a_m if m > 1 else 0, 0, b_n if n > 1 else 0, 0, b_g if g > 1 else 0)
    raise GemmError(f"scale shapes {sa} and {sb} name no scaling mode for {g} groups of {m}x{k} @ {k}x{n}; use "
                    f"scale_a ({m},) and scale_b ({g}, {n}) (row-wise, as torch._scaled_grouped_mm; ({g},) for one "
                    f"scale per expert, one element of scale_a per tensor), or scale_a ({m}, {kb}) and scale_b "
                    f"({g}, {nb}, {kb}) (block-wise: 1x128 of A, 128x128 of each B[g])")


def plan_grouped_fp8(a, b, scale_a, scale_b, offs_len: int, out=None, out_dtype="bfloat16",
                     config: GemmConfig | str | None = None, fast_accum: bool = False) -> GroupedPlan:
    """Check the scaled fp8 grouped product ``C[rows of g] = (A[rows of g] @ B[g]) * scales`` (no GPU needed) and
    return its plan. A (M, K) row-major fp8, B (G, K, N) fp8 with each B[g] K-major (``w.transpose(-2, -1)`` of a
    contiguous (G, N, K) ``w``: fp8 wgmma reads both operands K-major), fp32 scales (:func:`_grouped_scales`).
    Raises :class:`GemmError` with the rule and a fix."""
    from .gemm_fp8 import FP8_DTYPES

    m, n, k, g = _shapes(a, b, offs_len)
    ta, tb = _dtype_name(a.dtype), _dtype_name(b.dtype)
    for nm, t in (("a", ta), ("b", tb)):
        if t not in FP8_DTYPES:
            raise GemmError(f"{nm}.dtype must be float8_e4m3fn or float8_e5m2, got {t}; quantize it first "
                            "(tmakit.ops.quantize)")
    od = _out_dtype(out, out_dtype)
    lda, ldb, ldg, ldc, b_mn = _layout(a, b, out, m, n, k, g, 1, _ELEM[od])
    if b_mn:  # with K = 1 too: rows of N contiguous bytes are not K-major rows 16-byte multiples apart
        raise GemmError(f"each b[g] must be K-major (b = w.transpose(-2, -1) of a contiguous (G, N, K) w, as "
                        f"torch._scaled_grouped_mm requires; fp8 wgmma reads B K-major), got strides "
                        f"{tuple(b.stride())}; pass w.transpose(-2, -1) of a contiguous w")
    scaling, strides = _grouped_scales(scale_a, scale_b, m, n, k, g)
    if scaling == "block" and fast_accum:
        raise GemmError("fast_accum applies to row-wise scaling only: block scaling sums each 128-deep K block apart "
                        "(that is where its scales apply); pass fast_accum=False")
    if isinstance(config, str):
        if config not in _FP8:
            raise GemmError(f"unknown fp8 config {config!r}; choose one of {sorted(_FP8)}")
        config = _FP8[config]
    config = config or choose_grouped_fp8_config(m, n, g, scaling, fast_accum,
                                                 odd_pitch=odd_pitch_of(lda, ldb, m, n, k, 1, 0))
    _check_cluster(config, scaled=True)
    from .gemm_fp8 import block_fits

    if not fast_accum and (config.bn > 192 or config.overlap or (scaling == "block" and config.bn not in (128, 192))):
        raise GemmError(f"two-level accumulation needs a tile at most 192 columns wide without overlap (128 or 192 "
                        f"for block scaling), got config {config.name}")
    if scaling == "block" and not block_fits(config):
        raise GemmError(f"config {config.name} leaves no room for block scales in shared memory (each stage's scales "
                        f"sit beside its operands); use one with fewer stages, e.g. n128_s5_c1")
    return GroupedPlan(m, n, k, g, lda, ldb, ldg, ldc, ta, od, config, 0, tb, scaling, strides, bool(fast_accum),
                       scaling == "row" and epilogue_staged(config, "row", False),
                       idle_consumers(config, m, n, k, g, 1, _ELEM[od]))




def plan_smem(p: GroupedPlan) -> int:
    """Dynamic shared memory of a grouped plan's kernel: the ring, block scales per stage, staged epilogue scales,
    the maps being edited (along K)."""
    return (smem_for(p.config, p.scaling) + (epilogue_smem(p.config, "row", False) if p.staged else 0)
            + (EDIT_SMEM if p.k_grouped else 0))


def kernel_name(p: GroupedPlan) -> str:
    c = p.config
    return (f"tmakit_gemm_grouped<{p.in_code}, {_OUT[p.out_dtype]}, {c.bm}, {c.bn}, {c.stages}, {c.cluster}, {p.b_mn}, "
            f"{c.overlap}, {c.epi}, {_SCALE_CODE[p.scaling]}, {int(p.fast_accum)}, {int(p.staged)}, {c.defer}, "
            f"{p.idle}, {p.k_grouped}>")


def grid(p: GroupedPlan) -> int:
    """The persistent grid of a plan's launch (one CTA per SM, or as many as fit)."""
    return resident_ctas(kernel_for(p), p.config, plan_smem(p) - smem_bytes(p.config))


def map_slot_bytes(p: GroupedPlan) -> int:
    """Bytes of the per-CTA map slots a plan along K writes (``launcher``'s ``maps_ptr``); 0 for other plans."""
    return grid(p) * 4 * MAP_BYTES if p.k_grouped else 0


_SCALE_CODE = {"": 0, "row": 2, "block": 3}


_launchers: dict = {}


def kernel_for(p, defines: tuple[str, ...] = ()):
    """The compiled kernel of a plan's dtypes and config (``defines``: as ``gemm.compiled``'s)."""
    return compiled("gemm_grouped.cu", kernel_name(p), defines)


def tensormaps(p: GroupedPlan, a_ptr: int, b_ptr: int, c_ptr: int):
    """A: {K, M} boxes 64 x bm; B: {K, N, G} boxes 64 x bn/cluster x 1 (K-major) or {N, K, G} boxes 64 x 64 x 1
    (row-major); C: {N, M} boxes (128 bytes) x 64. Along K: A {M / G, K} and B {N, K}, boxes 64 x 64 (the
    templates whose K extent the kernel sets per group)."""
    eo = _ELEM[p.out_dtype]
    eb, tdt, bk = (1, "uint8", 2 * BK) if p.scaling else (_ELEM[p.in_dtype], p.in_dtype, BK)  # fp8 moves as bytes
    tc = map_nd(c_ptr, (p.n, p.m), (p.ldc * eo,), p.out_dtype, (128 // eo, 64))
    if p.k_grouped:
        mg = p.m // max(p.groups, 1)
        return (map_nd(a_ptr, (max(mg, 1), p.k), (p.lda * eb,), tdt, (64, bk)),
                map_nd(b_ptr, (p.n, p.k), (p.ldb * eb,), tdt, (64, bk)), tc)
    ta = map_nd(a_ptr, (p.k, p.m), (p.lda * eb,), tdt, (bk, p.config.bm))
    if p.b_mn:
        tb = map_nd(b_ptr, (p.n, p.k, p.groups), (p.ldb * eb, p.ldb_group * eb), tdt, (64, bk, 1))
    else:
        tb = map_nd(b_ptr, (p.k, p.n, p.groups), (p.ldb * eb, p.ldb_group * eb), tdt,
                    (bk, p.config.bn // p.config.cluster, 1))  # pairs: half of B per CTA, multicast
    return ta, tb, tc


def launcher(p: GroupedPlan, a_ptr: int, b_ptr: int, c_ptr: int, offs_ptr: int, sa_ptr: int = 0, sb_ptr: int = 0,
             defines: tuple[str, ...] = (), maps_ptr: int = 0):
    """A memoised ``fn(stream=None)`` launching plan ``p`` on these pointers (fp8: and the fp32 scales): one
    persistent CTA per SM (the work list is read from the offsets on the device). ``defines``: as ``kernel_for``'s;
    ``maps_ptr``: along K, ``map_slot_bytes(p)`` of device memory for the per-CTA maps (one launch at a time)."""
    if p.k_grouped and not maps_ptr:
        raise GemmError("a plan along K needs maps_ptr: map_slot_bytes(p) bytes of device memory for its tensor maps")
    key = (p, a_ptr, b_ptr, c_ptr, offs_ptr, sa_ptr, sb_ptr, defines, maps_ptr)
    fn = _launchers.get(key)
    if fn is not None:
        return fn
    from tmakit.cuda.encode import encode_tensormap

    k = kernel_for(p, defines)
    cfg = p.config
    maps = [encode_tensormap(t) for t in tensormaps(p, a_ptr, b_ptr, c_ptr)]
    args = (*maps, ctypes.c_int32(p.m), ctypes.c_int32(p.n), ctypes.c_int32(p.k), ctypes.c_uint64(offs_ptr),
            ctypes.c_int32(p.groups), ctypes.c_uint64(c_ptr), ctypes.c_int64(p.ldc), ctypes.c_uint64(sa_ptr),
            ctypes.c_uint64(sb_ptr), *(ctypes.c_int64(v) for v in p.scale_strides), ctypes.c_uint64(maps_ptr))
    smem = plan_smem(p)
    fn = launch_fn(k, resident_ctas(k, cfg, smem - smem_bytes(cfg)), cfg.threads, args, smem, cfg.cluster_size, False)
    if len(_launchers) > 512:
        _launchers.clear()
    _launchers[key] = fn
    return fn
