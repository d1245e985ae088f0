"""Host side of the scaled FP8 GEMM ``tmakit_gemm_scaled`` (``kernels/gemm_fp8.cu``: the bf16 GEMM's kernel,
``gemm.cu``, compiled with fp8 wgmma and scale factors): configurations, argument checks, tensor maps, launch.

``C[M,N] = (A[M,K] @ B[K,N]) * scales (+ bias)`` with A (M, K) row-major fp8 and B column-major fp8 (``b = w.t()``
of a row-major (N, K) ``w``, as ``torch._scaled_mm`` requires: fp8 wgmma reads both operands K-major). Scaling modes
(recognised from the scale shapes, fp32 scales):

- ``"tensor"``: scale_a, scale_b one element each (``torch._scaled_mm``'s per-tensor mode);
- ``"row"``: scale_a (M, 1), scale_b (1, N) (``torch._scaled_mm``'s row-wise mode);
- ``"block"``: scale_a (M, ceil(K/128)) per 1x128 of A, scale_b (ceil(N/128), ceil(K/128)) per 128x128 block of B
  (DeepSeek-V3); each 128-deep partial sum is scaled into the fp32 total in registers.

Accumulation: by default (``fast_accum=False``, as ``torch._scaled_mm``'s ``use_fast_accum=False``) every mode sums
each 128-deep K slab in the tensor cores (whose fp8 accumulation keeps reduced precision) into a second accumulator
set and adds that into the fp32 total after the slab (two-level accumulation; tiles at most 128 columns wide).
``fast_accum=True`` (tensor- and row-wise) keeps one wgmma accumulator chain over all of K and allows 256-column
tiles.

``plan_fp8`` checks a problem without touching the GPU (any objects with ``shape``, ``stride()``, ``dtype`` and
``data_ptr()``) and raises :class:`~tmakit.kernels.gemm.GemmError` naming the rule, the value and a fix.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

from . import gemm as gk
from .gemm import GemmConfig, GemmError, Schedule
from .gemm_fp8_scales import (
    _SCALE_CODE,
    BK,
    _name,
    _scale_strides,
    block_fits,
    block_scale_tma,
    scale_maps,
    scale_smem,
    scaling_of,
)
from .gemm_schedule import STREAM_K_MIN_SLABS, STREAM_K_MODES, tail_schedule

__all__ = ["BK", "CONFIGS", "FP8_DTYPES", "SCALINGS", "Fp8Plan", "block_fits", "choose_config", "choose_split",
           "epilogue_smem", "epilogue_staged", "kernel_for", "kernel_name", "launcher", "multicast_config", "plan_fp8",
           "plan_smem", "scale_maps", "scale_smem", "scaling_of", "schedule", "tensormaps", "two_per_sm"]

FP8_DTYPES = ("float8_e4m3fn", "float8_e5m2")
SCALINGS = ("tensor", "row", "block")
_OUT = {"bfloat16": 0, "float16": 1, "float32": 2}
_ELEM = {"bfloat16": 2, "float16": 2, "float32": 4}
_TMA_UINT8 = 0  # DataType.UINT8: TMA moves fp8 as bytes

# Configs (GemmConfig values; BK = 128 fp8 per stage has the bf16 stage's bytes, so smem_bytes holds). Two-level
# accumulation keeps a partial and a total accumulator set (2 x BN/2 registers): tiles of at most 192 columns,
# wait_group 0.
CONFIGS = {
    "n256_s4_c1_d": GemmConfig(256, 4, 1, 8, defer=1),
    "n256_s4_c1": GemmConfig(256, 4, 1, 8),
    "n256_s4_c2": GemmConfig(256, 4, 2, 8),
    "n256_s4_c2_d": GemmConfig(256, 4, 2, 8, defer=1),
    "n256_s4_c2n2": GemmConfig(256, 4, 2, 8, cluster_n=2),
    "n128_s6_c1": GemmConfig(128, 6, 1, 8),
    "n128_s6_c2": GemmConfig(128, 6, 2, 8),
    # block scaling on 128-column tiles: 5 stages leave room for each stage's scales in shared memory
    "n128_s5_c1": GemmConfig(128, 5, 1, 8),
    "n128_s5_c2": GemmConfig(128, 5, 2, 8),
    "n128_s6_c2n2": GemmConfig(128, 6, 2, 8, cluster_n=2),
    "n128_s6_c1_d": GemmConfig(128, 6, 1, 8, defer=1),
    # deferred epilogue for 128-column 16-bit tiles: one staging box per consumer (2 boxes per tile row), so a
    # tile's boxes are stored during the next tile's first two slabs
    "n128_s6_c1_e1d": GemmConfig(128, 6, 1, 8, 0, 1, defer=1),
    "n128_s6_c2n2_e1d": GemmConfig(128, 6, 2, 8, 0, 1, cluster_n=2, defer=1),
    # 192-column tiles: the widest whose total + partial accumulators (2 x 96 registers) fit two-level accumulation
    "n192_s4_c1": GemmConfig(192, 4, 1, 8),
    "n192_s4_c2": GemmConfig(192, 4, 2, 8),
    "n192_s4_c2n2": GemmConfig(192, 4, 2, 8, cluster_n=2),
    "n192_s5_c1_e1": GemmConfig(192, 5, 1, 8, 0, 1),
    "m64_n128_s8_c1": GemmConfig(128, 8, 1, 8, bm=64),
    "m64_n128_s8_c1_ov1": GemmConfig(128, 8, 1, 8, 1, bm=64),
    # two CTAs per SM, each in half the shared memory (4 stages, one staging box): two single consumers share the
    # tensor cores, which one 64-row consumer leaves idle for most of each slab (docs/GEMM.md "Two CTAs per SM");
    # the 64x64 pair is for tuning (config=): no rule found where it wins
    "m64_n128_s4_c1_e1_x2": GemmConfig(128, 4, 1, 8, 0, 1, bm=64, per_sm=2),
    "m64_n64_s6_c1_e1_x2": GemmConfig(64, 6, 1, 8, 0, 1, bm=64, per_sm=2),
    # decode and other few-tile problems (a few rows against weight-sized N x K): 64x64 tiles, 12 stages
    "m64_n64_s12_c1": GemmConfig(64, 12, 1, 8, bm=64),
    "m64_n64_s12_c1_ov1": GemmConfig(64, 12, 1, 8, 1, bm=64),
    # two-level accumulation with overlap (tensor / row scales): slabs alternate between two partial sets, so one
    # slab's wgmmas run while the previous slab's partial sums are added (three 64-register sets at BN = 128)
    # (not with the deferred epilogue: ptxas then serializes the wgmmas, warning C7520)
    "n128_s6_c2n2_ov1": GemmConfig(128, 6, 2, 8, 1, cluster_n=2),
    "n128_s6_c2_ov1": GemmConfig(128, 6, 2, 8, 1),
    "n128_s6_c1_ov1": GemmConfig(128, 6, 1, 8, 1),
}

for _c in CONFIGS.values():
    assert gk.smem_bytes(_c) <= gk.smem_limit(_c), _c


def smem_for(cfg: GemmConfig, scaling: str, code: int = 3) -> int:
    """Dynamic shared memory of the kernel of a config and scaling mode (without staged epilogue vectors: the
    grouped kernel's, and the dense kernel's before :func:`epilogue_smem`); ``code``: the block scales' kernel
    SCALE (:func:`scale_smem`)."""
    return gk.smem_bytes(cfg) + (scale_smem(cfg, code) if scaling == "block" else 0)


def epilogue_smem(cfg: GemmConfig, scaling: str, bias: bool) -> int:
    """Shared memory of the dense kernel's staged epilogue vectors (gemm.cu EPV): two unit slots of the row scales,
    column scales (row-wise) and bias (BN) as fp32, and four mbarriers; 0 where there is nothing to stage."""
    floats = (cfg.bm + cfg.bn if scaling == "row" else 0) + (cfg.bn if bias else 0)
    return 2 * 4 * floats + 32 if floats else 0


def epilogue_staged(cfg: GemmConfig, scaling: str, bias: bool, code: int = 3) -> bool:
    """Whether the dense kernel stages its epilogue's row-wise scales and bias in shared memory (a producer-side warp
    loads them while the unit's mainloop runs): wherever there are some and they fit beside the ring (not 128x256
    tiles, whose epilogue then loads them from global memory as before)."""
    extra = epilogue_smem(cfg, scaling, bias)
    return extra > 0 and smem_for(cfg, scaling, code) + extra <= gk.smem_limit(cfg)


def plan_smem(p: Fp8Plan) -> int:
    """Dynamic shared memory of a dense plan's kernel."""
    c = p.config
    code = p.scale_code
    return smem_for(c, p.scaling, code) + (epilogue_smem(c, p.scaling, p.bias)
                                           if epilogue_staged(c, p.scaling, p.bias, code) else 0)


def choose_config(m: int, n: int, k: int, scaling: str, out_bytes: int = 2, sms: int = gk.NUM_SMS,
                  fast_accum: bool = False, odd_pitch: bool = False, per_sm: int = 2) -> GemmConfig:
    """A first heuristic, from bandwidth arithmetic rather than measurement (tune on the GPU with ``config=``): an fp8
    slab does twice the bf16 slab's flops per byte, so at ~1300 TFLOP/s a 128x128 tile on single CTAs would pull
    ~10 TB/s out of L2 and a 128x256 one ~8 TB/s; TMA multicast in clusters divides that. Hence:

    - decode and other few-tile problems (K >= 16 slabs, and so few rows and columns that the 64x64 tiles make a
      single wave short enough for :func:`schedule` to deal it out whole as stream-K): 64x64 tiles (overlapped
      with fast accumulation). One SM pulls about 90 GB/s of slabs, so few tiles leave the operands to few SMs;
      64x64 tiles double the tiles, and the CTAs, that stream them. More 64x64 tiles than that run whole on fewer
      CTAs than the 64x128 plan's stream-K ranges and lost up to 2x (``tools/bench/fp8_decode.py``, docs/GEMM.md
      "Decode");
    - few rows (M <= 64, or M <= 128 with enough 64x128 tiles for most of a wave): 64x128 tiles, one consumer
      warpgroup (memory-bound) -- for 65-128 rows only where their waves are at most 5/3 of the 128-row plan's
      (a 64-row tile takes 0.5-0.67 of a 128-row tile's time): with 67-112 column tiles (one wave of 128-row tiles,
      two of 64-row ones) 64x128 tiles ran 1.08-1.27x the 128-row plan's time on 9 shapes, with 144 or 160 columns
      0.88-0.99x, with 224 1.02-1.04x (H100, ``tools/bench/fp8_plans.py``);
    - few 128x128 tiles (at most a quarter of the SMs, or half of them where K is too short to split): 64x128 tiles,
      twice as many (a random sweep on an H200: 1.09-1.21x the 128-row plan on 10 such shapes; at 42-45 tiles with a
      long K the split 128-row plan stays ahead, 0.63-0.67x);
    - two-level accumulation (default, block scaling): single CTAs with two consumer warpgroups; 128x192 tiles
      where they fill at least 90 % of the SMs in at most 1/1.3 of the waves of 128x128 tiles (block scales then
      span two 128-column scale blocks per tile; with as many waves as 128x128 tiles, 289x10272x4352 and
      543x10112x384 ran 0.81-0.92x those), else 128x128 (2x2 clusters, which hold only 120 of 132 SMs, ran
      0.70-0.83x, pairs along M 0.76-0.77x). ``tools/bench/fp8_tiles.py`` (docs/bench/gemm-fp8-tiles.md): the pick
      is at 0.96-0.97x of the faster width's speed on narrow-N random shapes and 0.99-1.00x on any N (H200, H100),
      where an earlier N >= 1536 condition scored 0.89-0.93x and 0.99x; few tiles with a long K (split by
      :func:`choose_split`): pairs along M sharing B;
    - ``fast_accum``: 64x128 tiles (overlapped) by the same few-tiles rule; 128x256 tiles in clusters of 2 along M
      (B multicast) with the deferred epilogue for 16-bit outputs when the tiles fill 3/4 of the GPU in at most
      1/1.72 of the waves of 128x128 tiles, else 128x128 single CTAs (random shapes on an H200: 3351x1280x3648,
      289x10272x4352 and 6010x800x1728 ran 0.76-0.84x on 128x128 tiles what they ran on 128x256 pairs);
    - ``per_sm`` 2 (default): 64x128 tiles two CTAs per SM where that saves waves (:func:`two_per_sm`): in place of
      single 64x128 CTAs, and of 128x128 ones on 129-192 rows; ``per_sm=1`` gives the one-CTA-per-SM plan;
    - ``odd_pitch`` (rows of A or B an odd multiple of 16 bytes apart, where each 128-byte row of a TMA box spans two
      128-byte lines): with more than a wave of 128x128 tiles, the single-CTA 128-row tiles above become clusters
      that multicast (:func:`multicast_config`); below a wave clusters ran 0.90-0.93x on 4 of 5 random shapes.
    """
    tiles_m, cols = -(-m // 128), -(-n // 128)
    tiles = tiles_m * cols  # of 128x128
    s = "5" if scaling == "block" else "6"  # block scales take a stage's worth of shared memory (block_fits)
    narrow = CONFIGS[f"n128_s{s}_c1"]
    few_rows = m <= 64 or (m <= 128 and ((fast_accum and scaling != "block" and k >= 8192) or
                                         rows64_pay(m, n, 128, sms)))  # against 128x128 tiles: 5/3 the waves
    few_tiles = tiles <= sms // 4 or (tiles <= sms // 2 and choose_split(m, n, k, narrow, sms) == 1)
    short_wave64 = 2 * -(-m // 64) * cols <= STREAM_K_ALL_MAX_FILL * sms and k >= DECODE_MIN_SLABS * BK
    if scaling == "block" or not fast_accum:
        if short_wave64:
            return CONFIGS["m64_n64_s12_c1"]
        if few_rows or few_tiles:
            return two_per_sm(m, n, CONFIGS["m64_n128_s8_c1"], sms) if per_sm > 1 else CONFIGS["m64_n128_s8_c1"]
        if tiles_m % 2 == 0 and tiles * 2 <= sms and k >= 64 * BK:
            return CONFIGS[f"n128_s{s}_c2"]  # few tiles, long K: split K (choose_split) on pairs sharing B
        wide = tiles_m * -(-n // 192)  # 128x192 tiles: 1.5x a 128x128 tile's work at ~1.15x its rate: 1/1.3 the waves
        pick = "n192_s4_c1" if 10 * wide >= 9 * sms and 100 * _waves(wide, sms) <= 77 * _waves(tiles, sms) else \
            f"n128_s{s}_c1"
        if odd_pitch and tiles > sms:
            return multicast_config(pick, m, n, sms)
        c = CONFIGS["m64_n128_s8_c1"] if m <= 192 and rows64_pay(m, n, CONFIGS[pick].bn, sms) else CONFIGS[pick]
        return two_per_sm(m, n, c, sms) if per_sm > 1 else c
    if short_wave64:
        return CONFIGS["m64_n64_s12_c1_ov1"]
    if few_rows or few_tiles:
        return CONFIGS["m64_n128_s8_c1_ov1"]
    pairs = -(-tiles_m // 2) * -(-n // 256)  # 128x256 pairs: 2x a 128x128 tile's work at ~1.16x its rate (1/1.72)
    if tiles_m * -(-n // 256) < sms * 3 // 4 or tiles_m < 2 or 172 * _waves(pairs, sms // 2) > 100 * _waves(tiles, sms):
        return multicast_config("n128_s6_c1", m, n, sms) if odd_pitch and tiles > sms else narrow
    return CONFIGS["n256_s4_c2_d" if out_bytes == 2 else "n256_s4_c2"]


# A wave of 64x128 tiles two CTAs per SM takes about 19/12 of a wave of them on single CTAs (H200, docs/GEMM.md
# "Two CTAs per SM"); they are taken where the waves estimate is at least X2_MIN_GAIN faster.
X2_WAVE_COST = 19 / 12
X2_MIN_GAIN = 1.1
# Against 128x128 tiles on 129-192 rows (which they pad to 256): a wave of them costs 20/12 of a wave of single
# 64x128 CTAs (rows64_pay's 1 : 0.6), and pairs are taken from an estimated 1.04x. On 65-128 rows (no padding) the
# same estimate picked pairs that ran 0.90-1.02x per tensor (H200, 13 shapes), so those rows keep 128x128 tiles.
X2_128_COST = 20 / 12
X2_VS_128_MAX_ROWS = 192
X2_VS_128_MIN_GAIN = 1.04


def two_per_sm(m: int, n: int, cfg: GemmConfig, sms: int = gk.NUM_SMS) -> GemmConfig:
    """``cfg`` or, in place of single 64x128 CTAs (``m64_n128_s8_c1``), the same tiles two CTAs per SM
    (``m64_n128_s4_c1_e1_x2``) where the waves estimate finds them ``X2_MIN_GAIN`` faster. A 64-row tile has one
    consumer warpgroup, which leaves the tensor cores idle while it waits for and promotes each slab; two such CTAs
    on an SM fill each other's gaps, each at about 0.63 of a lone CTA's speed (half the stages each). That pays
    where the tiles make just over one or three waves of single CTAs and one or two of pairs (144 tiles: 1.20-1.25x,
    432: 1.03-1.18x), not at two or three (288: 0.96x). In place of 128x128 single CTAs on 129-192 rows (which those
    pad to 256 rows) pairs ran 0.97-1.24x (160x8192x8192 1.13-1.23x); against 128x192 tiles they lost (0.82-0.90x
    block-wise at 300-521 rows), so other plans stay."""
    t64 = -(-m // 64) * -(-n // 128)
    if cfg == CONFIGS["m64_n128_s8_c1"]:
        cost, need = _waves(t64, sms), X2_MIN_GAIN
    elif cfg.bm == 128 and cfg.bn == 128 and cfg.cluster_size == 1 and 128 < m <= X2_VS_128_MAX_ROWS:
        cost, need = X2_128_COST * _waves(-(-m // 128) * -(-n // 128), sms), X2_VS_128_MIN_GAIN
    else:
        return cfg
    gain = cost / (X2_WAVE_COST * _waves(t64, 2 * sms))
    return CONFIGS["m64_n128_s4_c1_e1_x2"] if t64 > sms and gain >= need else cfg


def rows64_pay(m: int, n: int, bn: int, sms: int = gk.NUM_SMS) -> bool:
    """Whether 64x128 tiles beat 128-row tiles ``bn`` wide on ``m`` rows by a waves estimate: a 64x128 tile takes
    about 0.6 of a 128x128 tile's time, a 128x192 one 1.3 (its 1.5x work at ~1.15x the rate), and the 64-row tiles
    must fill most of a wave. For 65-128 rows against 128x128 tiles this is "at most 5/3 the waves" (the few-rows
    rule above); for 129-192 rows, where the 128-row plan pads to 256, 64x128 tiles ran 0.77-0.93x its
    time on 4 shapes of 79-157 column tiles, 1.13-1.18x on one where 128x192 tiles made one wave (H100,
    docs/GEMM.md "Few rows")."""
    cols = -(-n // 128)
    tiles64 = -(-m // 64) * cols
    est64 = 6 * _waves(tiles64, sms)
    est128 = (13 if bn == 192 else 10) * _waves(-(-m // 128) * -(-n // bn), sms)
    return 4 * tiles64 >= 3 * sms and est64 <= est128


DECODE_MIN_SLABS = 16  # the 64x64 (decode) rule's shortest K, in slabs (BK)

QUAD_MIN_COLS = 6  # 2x2 clusters from this many column tiles (fewer: pairing columns wastes too much of a tile)


def multicast_config(name: str, m: int, n: int, sms: int = gk.NUM_SMS) -> GemmConfig:
    """The cluster variant of single-CTA tile ``name`` for operands whose rows are an odd multiple of 16 bytes apart.
    There each 128-byte box row spans two 128-byte lines and the CTA's TMA loads, not its tensor cores, set the pace
    (docs/HARDWARE.md §11); multicast halves the rows each CTA requests: pairs along M share B, 2x2 clusters
    share A and B. Random such shapes on an H200 (``tools/bench/fp8_odd_pitch.py``) ran 1.13-1.43x on pairs or 2x2
    clusters what they ran on single CTAs; 2x2 clusters were the faster of the two from 6 column tiles on (one
    shape of 28 columns excepted, 5 % behind), pairs on 3-5 column tiles (7-11 % ahead); tiles with no 2x2 variant
    (5-stage 128x128, block scales) run in pairs."""
    quad = gk.cluster_variant(CONFIGS, name, 2, 2)
    if quad is not None and -(-n // CONFIGS[name].bn) >= QUAD_MIN_COLS:
        return CONFIGS[quad]
    return CONFIGS[gk.cluster_variant(CONFIGS, name, 2)]


def _waves(units: int, slots: int) -> int:
    """Waves of ``units`` on ``slots`` resident CTAs (clusters)."""
    return -(-units // slots)


MAX_SPLIT = 4  # K ranges per tile at most (the in-kernel fixup adds the others' fp32 partials)


def choose_split(m: int, n: int, k: int, cfg: GemmConfig, sms: int = gk.NUM_SMS) -> int:
    """K ranges per tile: split when the tiles fill less than half the SMs and K is long (>= 32 slabs per range),
    into a number of ranges that divides the slabs (every range one cluster's whole share: one wave, no straddling)
    and keeps the split tiles within one wave. 1: no split."""
    tiles = -(-m // (cfg.bm * cfg.cluster)) * cfg.cluster * -(-n // (cfg.bn * cfg.cluster_n)) * cfg.cluster_n
    kt = -(-k // BK)
    best = 1
    for split in range(2, MAX_SPLIT + 1):
        if tiles * 2 <= sms and tiles * split <= sms and kt % split == 0 and kt // split >= 32:
            best = split
    return best


@dataclass(frozen=True)
class Fp8Plan:
    """A checked scaled-FP8 problem: sizes, row pitches (elements), dtypes, the scaling mode with the scales' element
    strides (a_m, a_k, b_n, b_k; unused ones 0), whether a bias is added, and the config."""

    m: int
    n: int
    k: int
    lda: int
    ldb: int  # elements between rows of Bt (N, K): b.stride(1)
    ldc: int
    a_dtype: str
    b_dtype: str
    out_dtype: str
    scaling: str
    scale_strides: tuple
    bias: bool
    config: GemmConfig
    fast_accum: bool = False
    split: int = 1  # K ranges per tile, finished in the kernel (stream-K segments, one wave)
    scale_tma: int = 0  # block scales loaded by TMA: 4 (A's scales K-major), 5 (M-major); 0: the scale warp

    @property
    def scale_code(self) -> int:
        """The kernel's SCALE: 1 tensor, 2 row, 3 block (scale warp), 4 / 5 block (TMA)."""
        return self.scale_tma or _SCALE_CODE[self.scaling]

    @property
    def units(self) -> int:
        c = self.config
        return -(-self.m // (c.bm * c.cluster)) * -(-self.n // (c.bn * c.cluster_n))

    @property
    def in_code(self) -> int:
        """The kernel's IN: 2 + 2 (A is e5m2) + (B is e5m2)."""
        return 2 + 2 * (self.a_dtype == "float8_e5m2") + (self.b_dtype == "float8_e5m2")


def _shape(x) -> tuple:
    return tuple(int(s) for s in x.shape)


def plan_fp8(a, b, scale_a, scale_b, bias=None, out=None, out_dtype="bfloat16",
             config: GemmConfig | str | None = None, fast_accum: bool = False, split: int | None = None) -> Fp8Plan:
    """Check ``(a @ b) * scales + bias`` (no GPU needed) and return the plan; GemmError with the rule and a fix."""
    sa_, sb_ = _shape(a), _shape(b)
    if len(sa_) != 2 or len(sb_) != 2:
        raise GemmError(f"a and b must be 2-D, got shapes {sa_} and {sb_}")
    (m, k), (kb_, n) = sa_, sb_
    gk.check_compose(m, k, kb_, n)
    ta, tb = _name(a.dtype), _name(b.dtype)
    for nm, t in (("a", ta), ("b", tb)):
        if t not in FP8_DTYPES:
            raise GemmError(f"{nm}.dtype must be float8_e4m3fn or float8_e5m2, got {t}; quantize it first "
                            "(tmakit.ops.quantize)")
    od = _name(out.dtype) if out is not None else _name(out_dtype)
    if out is not None and out_dtype is not None and _name(out_dtype) != od:
        raise GemmError(f"out.dtype is {od} but out_dtype={_name(out_dtype)}; give one or make them agree")
    if od not in _OUT:
        raise GemmError(f"out_dtype must be bfloat16, float16 or float32, got {od}")
    if min(m, n, k) < 1:
        raise GemmError(f"empty problem {m}x{n}x{k}: nothing for the kernel to do")
    for nm, v in (("M", m), ("N", n), ("K", k)):
        if v >= 2**31:
            raise GemmError(f"{nm} = {v} does not fit the kernel's 32-bit indices")
    sa0, sa1 = (int(s) for s in a.stride())
    if sa1 != 1 and k > 1:
        raise GemmError(f"a must be row-major (a.stride(1) == 1), got strides {(sa0, sa1)}; pass a.contiguous()")
    sb0, sb1 = (int(s) for s in b.stride())
    if sb0 != 1 and k > 1:
        raise GemmError(f"b must be column-major (b.stride(0) == 1: b = w.t() of a row-major (N, K) w, as "
                        f"torch._scaled_mm requires; fp8 wgmma reads B K-major), got strides {(sb0, sb1)}; "
                        "pass b.t().contiguous().t()")
    lda = sa0 if m > 1 else -(-k // 16) * 16
    ldb = sb1 if n > 1 else -(-k // 16) * 16
    for nm, ld in (("a.stride(0)", lda), ("b.stride(1)", ldb)):
        if ld % 16:
            raise GemmError(f"{nm} = {ld} fp8 elements is not a multiple of 16 bytes (TMA global stride); K must "
                            "be a multiple of 16 for contiguous operands (pad K with zeros)")
        if ld < k:
            raise GemmError(f"{nm} = {ld} is smaller than K = {k} (rows overlap)")
    for nm, t in (("a", a), ("b", b)):
        if int(t.data_ptr()) % 128:
            raise GemmError(f"{nm}.data_ptr() = {int(t.data_ptr()):#x} is not 128-byte aligned (128-byte-swizzled "
                            f"tensor map); pass {nm}.clone()")
    scaling = scaling_of(m, n, k, _shape(scale_a), _shape(scale_b))
    strides = _scale_strides(scale_a, scale_b, scaling)
    if bias is not None:
        if _shape(bias) != (n,):
            raise GemmError(f"bias must have shape ({n},), got {_shape(bias)}")
        if _name(bias.dtype) != od:
            raise GemmError(f"bias.dtype must be the output dtype {od}, got {_name(bias.dtype)}")
        if n > 1 and int(bias.stride()[0]) != 1:
            raise GemmError(f"bias must be contiguous, got stride {tuple(bias.stride())}; pass bias.contiguous()")
    eo = _ELEM[od]
    ldc = n if m > 1 else -(-n * eo // 16) * 16 // eo
    gk.check_store_rows(n, eo)
    if out is not None:
        if _shape(out) != (m, n):
            raise GemmError(f"out has shape {_shape(out)}, expected {(m, n)}")
        sc0, sc1 = (int(s) for s in out.stride())
        if sc1 != 1 and n > 1:
            raise GemmError(f"out must have contiguous rows (out.stride(1) == 1), got strides {(sc0, sc1)}")
        ldc = sc0 if m > 1 else ldc
        if ldc < n or (ldc * eo) % 16 or int(out.data_ptr()) % 128:
            raise GemmError(f"out is written by TMA stores: out.stride(0) >= N, out.stride(0) * {eo} bytes a multiple "
                            f"of 16 and out.data_ptr() 128-byte aligned, got stride {sc0} and data_ptr "
                            f"{int(out.data_ptr()):#x}; pass a fresh out (or none)")
        gk._check_no_alias(out, (m, n), ldc, eo, ((a, m, lda, 1, k), (b, n, ldb, 1, k)))
    if isinstance(config, str):
        if config not in CONFIGS:
            raise GemmError(f"unknown fp8 config {config!r}; choose one of {sorted(CONFIGS)}")
        config = CONFIGS[config]
    if scaling == "block" and fast_accum:
        raise GemmError("fast_accum applies to tensor- and row-wise scaling only: block scaling always sums each "
                        "128-deep K block apart (that is where its scales apply); pass fast_accum=False")
    odd = gk.odd_pitch((lda, m), (ldb, n))  # fp8: elements are bytes
    config = config or choose_config(m, n, k, scaling, eo, fast_accum=fast_accum, odd_pitch=odd)
    block_tile = config.bn in (64, 128, 192) and not config.overlap
    if not fast_accum and (config.bn > 192 or (scaling == "block" and not block_tile)
                           or (config.overlap and config.bn > 128)):
        raise GemmError(f"two-level accumulation (block scaling, or fast_accum=False) needs a tile at most 192 "
                        f"columns wide (at most 128 with overlap; 64, 128 or 192 for block scaling, without overlap), "
                        f"got config {config.name}")
    if scaling == "block" and not block_fits(config):
        raise GemmError(f"config {config.name} leaves no room for block scales in shared memory (each stage's scales "
                        f"sit beside its operands); use one with fewer stages, e.g. n128_s5_c1")
    kt = -(-k // BK)
    if split is None:
        split = choose_split(m, n, k, config)
    elif not (1 <= int(split) <= MAX_SPLIT and kt % int(split) == 0):
        raise GemmError(f"split = {split}: K ranges per tile must be 1 ... {MAX_SPLIT} and divide the {kt} K slabs "
                        f"of {BK}")
    tma = block_scale_tma(m, n, k, scale_a, scale_b, strides, config) if scaling == "block" else 0
    return Fp8Plan(m, n, k, lda, ldb, ldc, ta, tb, od, scaling, strides, bias is not None, config, bool(fast_accum),
                   int(split), tma)


def kernel_name(p: Fp8Plan) -> str:
    c = p.config
    return (f"tmakit_gemm_scaled<{p.in_code}, {_OUT[p.out_dtype]}, {c.bm}, {c.bn}, {c.stages}, {c.cluster}, "
            f"{c.cluster_n}, {c.overlap}, {c.epi}, {c.defer}, {p.scale_code}, {int(p.bias)}, "
            f"{int(p.fast_accum)}, {int(epilogue_staged(c, p.scaling, p.bias, p.scale_code))}, {c.per_sm}>")


_kernels: dict = {}


def kernel_for(p: Fp8Plan, debug: bool | None = None, defines: tuple[str, ...] = (), sass_patch=None):
    """The compiled kernel of a plan (NVRTC, cached on disk and in memory); ``defines``: extra ``NAME=value``
    macros (diagnostic builds, e.g. ``TMAKIT_GEMM_TRACE=1``); ``sass_patch``: ``(opcode, mode)`` of
    :func:`tmakit.cuda.sass_patch.patch_runs` applied to the cubin before loading."""
    from ..cuda import compile_file, context_id, load_module
    from . import KERNELS_DIR

    name = kernel_name(p)
    key = (name, debug, defines, sass_patch, context_id())
    k = _kernels.get(key)
    if k is None:
        c = compile_file(KERNELS_DIR / "gemm_fp8.cu", name_expressions=(name,), debug=debug,
                         options=[f"-D{d}" for d in defines])
        k = _kernels[key] = load_module(patched(c, sass_patch)).kernel(name)
    return k


def patched(c, sass_patch):
    """``c`` (a :class:`tmakit.cuda.Compiled`) with its SASS control bits rewritten by ``sass_patch`` (see
    :func:`kernel_for`), under its own cache key; ``c`` itself when there is nothing to do."""
    if sass_patch is None:
        return c
    import dataclasses

    from ..cuda import sass_patch as sp

    opcode, mode = sass_patch
    cubin, _ = sp.patch_runs(c.cubin, mode, opcode)
    return dataclasses.replace(c, cubin=cubin, key=f"{c.key}:{opcode:#x}:{mode}")


def tensormaps(p: Fp8Plan, a_ptr: int, b_ptr: int, c_ptr: int = 0):
    """(A, B, C) tensor maps: A {K, M} boxes 128 x bm/cluster_n bytes, B {K, N} boxes 128 x bn/cluster (fp8 as
    UINT8, 128-byte swizzle), C {N, M} boxes of 128 bytes x 64 rows."""
    from tmakit.tma.tensormap import L2Promotion, SwizzleMode, TensorMap

    def tmap(ptr, dims, ld_bytes, dtype, box):
        return TensorMap(dtype=dtype, global_dim=dims, global_strides=(ld_bytes,), box_dim=box,
                         swizzle=SwizzleMode.B128, l2_promotion=L2Promotion.B256, global_address=ptr)

    c = p.config
    ta = tmap(a_ptr, (p.k, p.m), p.lda, _TMA_UINT8, (BK, c.bm // c.cluster_n))
    tb = tmap(b_ptr, (p.k, p.n), p.ldb, _TMA_UINT8, (BK, c.bn // c.cluster))
    eo = _ELEM[p.out_dtype]
    tc = tmap(c_ptr, (p.n, p.m), p.ldc * eo, gk._TMA_DTYPE[p.out_dtype], (128 // eo, 64))
    return ta, tb, tc


_launchers: dict = {}
_schedules: dict = {}


# The last partial wave is dealt out as stream-K ranges (gemm_schedule.tail_schedule) when it is at most this full.
# Measured on an H200 and an H100 (docs/GEMM.md "FP8", stream-K tail): last waves 21-67 % full gained 2-9 % on
# 128x192 tiles (per tensor and block-wise alike), 85 % full was even, 91 % full lost 1-3 %. Not on 64-row tiles:
# with a last wave 21-73 % full they ran 0.82-0.99x as fast with the tail as without on 7 of 8 shapes of 1.2-4.4
# waves (1.00-1.02x on the eighth; H100, docs/GEMM.md "Few rows") -- memory-bound tiles whose row tiles share B
# panels, which the tail's ranges read at different K.
STREAM_K_MAX_FILL = 0.75
# A single wave at most this full is dealt out whole as stream-K ranges: over every SM where that gives each at
# least STREAM_K_MIN_SLABS slabs (random sweep, H200: 23-35 % full 1.04-1.30x; 39 % full, 2x6496x4576, 0.91x; 56 %
# full 0.94x), and for at most a quarter of the SMs in units with at least 16 slabs, over as many SMs as get 8 slabs
# each (decode-like shapes, 1-64 rows: 1.03-2.6x, docs/GEMM.md "Few tiles").
STREAM_K_ALL_MAX_FILL = 0.35


def schedule(p: Fp8Plan, resident: int | None = None, debug: bool | None = None, stream_k: str = "auto") -> Schedule:
    """How the plan's tiles go to the persistent clusters (memoised): min(units, resident) clusters of whole tiles, the
    last partial wave as stream-K slab ranges (``stream_k`` as ``gemm.schedule``'s: ``"auto"`` when that wave is at
    most ``STREAM_K_MAX_FILL`` full; all units when they make a single wave at most ``STREAM_K_ALL_MAX_FILL`` full,
    with at least ``STREAM_K_MIN_SLABS`` slabs per CTA on every SM or, for at most a quarter of the SMs in units of 16
    slabs or more, on as many SMs as get that many), or with ``p.split`` > 1 (and a wave that holds them)
    every tile's K cut into ``split`` ranges, one per cluster -- both finished in the kernel, split ranges by
    reduce-scatter when the ranges divide the tile's staging boxes, else by the range holding the first slab.
    Schedules with stream-K units need ``sched.ws_bytes`` of workspace and ``sched.flag_count`` zeroed 32-bit flags
    (left zeroed by every launch). ``resident``: co-resident CTAs (default: asked of the kernel)."""
    key = (p, resident, debug, stream_k)
    got = _schedules.get(key)
    if got is not None:
        return got
    if stream_k not in STREAM_K_MODES:
        raise GemmError(f"stream_k must be one of {STREAM_K_MODES}, got {stream_k!r}")
    cfg = p.config
    cs = cfg.cluster_size
    units = p.units
    if resident is None:
        resident = gk.resident_ctas(kernel_for(p, debug), cfg, plan_smem(p) - gk.smem_bytes(cfg))
    kt = -(-p.k // BK)
    if p.split > 1 and units * p.split <= resident // cs:
        boxes = cfg.bn * _ELEM[p.out_dtype] // 128
        sched = Schedule(units * p.split, cs, 0, units, p.split + 2, cfg.bn, cfg.consumers, int(boxes % p.split == 0))
        assert kt % p.split == 0
    else:  # split plans whose ranges do not fit one wave run whole tiles
        mode = "off" if p.split > 1 else stream_k
        full = resident // cs
        if mode == "auto" and units <= STREAM_K_ALL_MAX_FILL * full and (units * kt >= STREAM_K_MIN_SLABS * full or
                                                                        (units <= full // 4 and kt >= 16)):
            mode = "all"
        elif mode == "auto" and cfg.bm == 64:
            mode = "off"  # 64-row tiles lose by a stream-K tail (STREAM_K_MAX_FILL)
        sched = tail_schedule(units, kt, cfg, resident, mode, STREAM_K_MAX_FILL)
    if len(_schedules) > 1024:
        _schedules.clear()
    _schedules[key] = sched
    return sched


def launcher(p: Fp8Plan, a_ptr: int, b_ptr: int, c_ptr: int, sa_ptr: int, sb_ptr: int, bias_ptr: int = 0,
             ws_ptr: int = 0, flags_ptr: int = 0, debug: bool | None = None, pdl: bool = False,
             stream_k: str = "auto", defines: tuple[str, ...] = (), sass_patch=None):
    """A memoised ``fn(stream)`` launching plan ``p`` on these pointers with :func:`schedule`'s schedule (tensor maps
    encoded once); a schedule with stream-K or split ranges needs ``ws_ptr`` and ``flags_ptr``. ``defines``: as
    :func:`kernel_for`'s, and so is ``sass_patch``."""
    key = (p, a_ptr, b_ptr, c_ptr, sa_ptr, sb_ptr, bias_ptr, ws_ptr, flags_ptr, debug, pdl, stream_k, defines,
           sass_patch)
    fn = _launchers.get(key)
    if fn is not None:
        return fn
    from tmakit.cuda.encode import encode_tensormap

    k = kernel_for(p, debug, defines, sass_patch)
    cfg = p.config
    cs = cfg.cluster_size
    sched = schedule(p, debug=debug, stream_k=stream_k)
    if sched.sk_units and not (ws_ptr and flags_ptr):
        raise GemmError("a split schedule needs a workspace and zeroed flags (ws_ptr, flags_ptr)")
    maps = [encode_tensormap(t) for t in tensormaps(p, a_ptr, b_ptr, c_ptr)]
    if p.scale_tma:
        if sa_ptr % 16 or sb_ptr % 16:
            raise GemmError(f"this plan loads its block scales by TMA (planned for 16-byte aligned scale tensors), "
                            f"got scale_a at {sa_ptr:#x} and scale_b at {sb_ptr:#x}; plan again with these tensors")
        smaps = [encode_tensormap(t) for t in scale_maps(p, sa_ptr, sb_ptr)]
    else:  # the kernel takes two scale maps whatever the mode; these are never read
        smaps = maps[:2]
    a_m, a_k, b_n, b_k = p.scale_strides
    i32, i64, u64 = ctypes.c_int32, ctypes.c_int64, ctypes.c_uint64
    args = (*maps, i32(p.m), i32(p.n), i32(p.k), i32(cfg.group_m), i32(p.k), i32(sched.dp_units),
            i32(sched.sk_units), i32(sched.maxseg), u64(ws_ptr), u64(flags_ptr), i32(sched.scatter), u64(sa_ptr),
            u64(sb_ptr), u64(bias_ptr), i64(a_m), i64(a_k), i64(b_n), i64(b_k), *smaps)
    fn = gk.launch_fn(k, sched.grid, cfg.threads, args, plan_smem(p), cs, pdl)
    if len(_launchers) > 512:
        _launchers.clear()
    _launchers[key] = fn
    return fn
