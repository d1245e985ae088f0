"""Host side of ``kernels/gemm.cu``: configurations, argument checks, tensor maps, compile and launch.

``plan(a, b, out, out_dtype)`` checks a problem without touching the GPU (works on any objects with ``shape``,
``stride()``, ``dtype`` and ``data_ptr()``, so the checks are testable without torch or a GPU) and returns a
:class:`GemmPlan`; ``launch(plan, a, b, out)`` encodes the two tensor maps and launches on torch's current stream.

Layout contract: ``C[M,N] = A[M,K] @ B[K,N]`` with A row-major (``a.stride(1) == 1``) and B either K-major
(``b.stride(0) == 1``: ``b = w.t()`` for a row-major ``w`` of shape (N, K), nn.Linear's weight) or row-major
(``b.stride(1) == 1``), read as an MN-major wgmma operand. C rows must be 16-byte aligned (TMA-store epilogue).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field, replace

from ..bounded import make_room
from ..memory_overlap import Region, relation
from .gemm_schedule import (
    STREAM_K_MAX_FILL,
    STREAM_K_MIN_SLABS,
    STREAM_K_MODES,
    Schedule,
    stream_k_segments,
    tail_schedule,
)

__all__ = ["BM", "BK", "CONFIGS", "GemmConfig", "GemmError", "GemmPlan", "Schedule", "choose_config", "launch_fn",
           "choose_split", "kernel_for", "launch", "plan", "schedule", "smem_bytes", "split_schedule",
           "stream_k_segments", "tail_schedule", "whole_k", "STREAM_K_MAX_FILL", "STREAM_K_MIN_SLABS",
           "STREAM_K_MODES"]

BM = 128  # default tile rows (two consumer warpgroups of 64); GemmConfig.bm = 64 runs one consumer warpgroup
BK = 64  # K slab per stage: 64 x 2 bytes = one 128-byte swizzle row
SMEM_LIMIT = 227 * 1024  # dynamic shared memory of one CTA at most (docs/HARDWARE.md)
SMEM_PER_SM = 228 * 1024  # an SM's shared memory, of which the system reserves 1 KiB per resident CTA
EPI_BOX = 64 * 128  # one 8 KiB epilogue staging box (64 rows x 128 bytes)

_IN = {"bfloat16": 0, "float16": 1}
_OUT = {"bfloat16": 0, "float16": 1, "float32": 2}
_ELEM = {"bfloat16": 2, "float16": 2, "float32": 4}
_TMA_DTYPE = {"bfloat16": 9, "float16": 6, "float32": 7, "uint8": 0}  # DataType.BFLOAT16 / FLOAT16 / FLOAT32 / UINT8


class GemmError(ValueError):
    """An argument tmakit's GEMM cannot take; the message names the argument, the value and a fix."""


@dataclass(frozen=True)
class GemmConfig:
    """One compiled variant: tile ``bm x bn x BK`` (``bm`` 128: two consumer warpgroups, 64: one), a ``stages`` deep
    smem ring, clusters of ``cluster`` CTAs along M
    sharing the B tile and ``cluster_n`` CTAs along N sharing the A tile by TMA multicast (1, 2 or 4 each, at most 4
    CTAs per cluster), ``group_m`` cluster rows per rasterization group, ``overlap`` (keep one
    wgmma group in flight and release each stage one slab later), ``epi`` 8 KiB staging boxes per consumer
    warpgroup for the TMA-store epilogue (4 stages a whole 128x256 16-bit tile at once), ``defer`` (16-bit outputs:
    write a tile's staging boxes during the next tile's first slabs, while their wgmmas run), ``per_sm`` CTAs resident
    per SM (2: 64-row tiles of the scaled kernel in at most half an SM's shared memory each, launched at 128
    registers a thread, so two single-consumer CTAs share the tensor cores)."""

    bn: int = 256
    stages: int = 4
    cluster: int = 2
    group_m: int = 8
    overlap: int = 0
    epi: int = 2
    cluster_n: int = 1
    bm: int = 128
    defer: int = 0
    per_sm: int = 1

    @property
    def name(self) -> str:
        cn = f"n{self.cluster_n}" if self.cluster_n > 1 else ""
        d = "_d" if self.defer else ""
        x = f"_x{self.per_sm}" if self.per_sm > 1 else ""
        return (f"{self.bm}x{self.bn}x64_s{self.stages}_c{self.cluster}{cn}_g{self.group_m}_ov{self.overlap}"
                f"_e{self.epi}{d}{x}")

    @property
    def cluster_size(self) -> int:
        return self.cluster * self.cluster_n

    @property
    def consumers(self) -> int:
        """Consumer warpgroups (64 tile rows each)."""
        return self.bm // 64

    @property
    def threads(self) -> int:
        """Threads per CTA: the producer warpgroup and the consumers."""
        return 128 * (1 + self.consumers)


def smem_limit(cfg: "GemmConfig") -> int:
    """Dynamic shared memory one CTA of ``cfg`` may take: everything a CTA may have, or with ``per_sm`` CTAs
    resident on an SM their share, less the 1 KiB reserved for each."""
    return SMEM_LIMIT if cfg.per_sm == 1 else SMEM_PER_SM // cfg.per_sm - 1024


CONFIGS = {
    "n256_s4_c2": GemmConfig(256, 4, 2, 8),
    "n256_s4_c1": GemmConfig(256, 4, 1, 8),
    "n128_s6_c2": GemmConfig(128, 6, 2, 8),
    "n128_s6_c1": GemmConfig(128, 6, 1, 8),
    "n64_s8_c1": GemmConfig(64, 8, 1, 8),
    "n64_s8_n2": GemmConfig(64, 8, 1, 8, cluster_n=2),
    "n64_s8_n4": GemmConfig(64, 8, 1, 8, cluster_n=4),
    "n128_s6_n2": GemmConfig(128, 6, 1, 8, cluster_n=2),
    "n128_s6_n4": GemmConfig(128, 6, 1, 8, cluster_n=4),
    "n256_s4_c2n2": GemmConfig(256, 4, 2, 8, cluster_n=2),
    "n256_s4_c1_ov1": GemmConfig(256, 4, 1, 8, 1),
    "n256_s3_c1_e4": GemmConfig(256, 3, 1, 8, 0, 4),
    "n256_s3_c2_e4": GemmConfig(256, 3, 2, 8, 0, 4),
    "n256_s4_c2_d": GemmConfig(256, 4, 2, 8, defer=1),
    "n256_s4_c1_d": GemmConfig(256, 4, 1, 8, defer=1),
    "n128_s6_c1_d": GemmConfig(128, 6, 1, 8, defer=1),
    # 192-column tiles (three 64-column staging boxes): N just past a multiple of 256 (N = 1296 computes 1344 columns
    # on them, 1536 on 128x256 tiles) in the grouped kernel
    "n192_s4_c1": GemmConfig(192, 4, 1, 8),
    "n192_s4_c2": GemmConfig(192, 4, 2, 8),  # the grouped kernel's pairs on odd pitches (cluster_variant)
    # 64-row tiles, one consumer warpgroup: few-row (M <= 128) problems. With one consumer nothing hides the wait for
    # a slab's wgmmas, so the _ov1 variants keep one wgmma group in flight.
    "m64_n128_s8_c2": GemmConfig(128, 8, 2, 8, bm=64),
    "m64_n128_s8_c2_ov1": GemmConfig(128, 8, 2, 8, 1, bm=64),
    "m64_n128_s8_c1_ov1": GemmConfig(128, 8, 1, 8, 1, bm=64),
    "m64_n256_s5_c2_ov1": GemmConfig(256, 5, 2, 8, 1, bm=64),
    "m64_n256_s5_c1_ov1": GemmConfig(256, 5, 1, 8, 1, bm=64),
    "m64_n128_s9_c1_ov1_e1": GemmConfig(128, 9, 1, 8, 1, 1, bm=64),  # 9 x 24 KiB in flight, one staging box
    "m64_n64_s12_c1_ov1": GemmConfig(64, 12, 1, 8, 1, bm=64),  # M <= 64 (decode-like): 64x64 tiles, 192 KiB ring
}


def smem_bytes(cfg: GemmConfig) -> int:
    """Dynamic shared memory of a config: the ring, the epilogue staging boxes, 2 x stages mbarriers, stages + 1
    unit slots of 32 bytes (producer -> consumers) and 1 KiB for the 1024-byte alignment."""
    return (cfg.stages * (cfg.bm * BK * 2 + cfg.bn * BK * 2) + cfg.consumers * cfg.epi * EPI_BOX + 16 * cfg.stages
            + 32 * (cfg.stages + 1) + 1024)


for _c in CONFIGS.values():
    assert smem_bytes(_c) <= SMEM_LIMIT, _c


NUM_SMS = 132  # H100 SXM / H200; the heuristics' default when no GPU is queried


def cluster_variant(configs: dict, name: str, cluster: int, cluster_n: int = 1) -> str | None:
    """The name in ``configs`` of config ``name`` in clusters of ``cluster`` x ``cluster_n`` CTAs (all else equal),
    or None where ``configs`` has no such variant (or no ``name``)."""
    if name not in configs:
        return None
    want = replace(configs[name], cluster=cluster, cluster_n=cluster_n)
    return next((nm for nm, c in configs.items() if c == want), None)


def odd_pitch(*operands: tuple[int, int]) -> bool:
    """Whether any (row pitch in bytes, rows) operand has more than one row, an odd multiple of 16 bytes apart: nearly
    every 128-byte TMA box row then spans two 128-byte lines (docs/HARDWARE.md §11)."""
    return any(rows > 1 and pitch % 32 == 16 for pitch, rows in operands)


def _tiles(m: int, n: int, bn: int) -> int:
    return -(-m // BM) * -(-n // bn)


def choose_config(m: int, n: int, k: int, sms: int = NUM_SMS, out_bytes: int = 2) -> GemmConfig:
    """The configuration for a shape and output element size, measured on an H100/H200 (docs/design/gemm.md):

    - 64 < M <= 128 and enough 64x128 tiles to fill 3/4 of the SMs: 64-row tiles, one consumer warpgroup, 8 stages
      (memory-latency-bound: 1.00x cuBLAS at 128x8192x8192 against 0.83-0.95x for 128x64 tiles);
    - M <= 64, or M <= 128 with K >= 8192 (decode-like): 64x128 tiles, K split up to 4 ways by :func:`choose_split`
      when they are few (0.82-1.0x cuBLAS at M = 1 ... 64, where 128x64 tiles ran 0.52-0.66x);
    - few output tiles otherwise: with K >= 8192, 128x256 single CTAs and :func:`choose_split` splits K; with shorter
      K, 128x128 tiles or one wave of 64x128 tiles, and no split (the split's zeroed fp32 workspace and final copy
      cost more);
    - else 128x256 tiles: 16-bit outputs on single CTAs with the deferred epilogue (0.98-1.07x, ahead of
      clusters of 2 with or without deferral on all six large suite shapes); fp32 outputs (no deferral) in clusters
      of 2 along M with B multicast when the tile rows pair up evenly or are many (single CTAs without deferral lose
      2-9 %).
    """
    tiles_m = -(-m // BM)
    if m <= 64 or (m <= 128 and (k >= 8192 or -(-n // 128) * 2 >= sms * 3 // 4)):
        # few rows: 64-row tiles, K split by choose_split when they are few (0.84-1.0x cuBLAS where 128x64
        # tiles ran 0.52-0.66x; 64x128 + 2 K ranges beat 64x64 tiles)
        return CONFIGS["m64_n128_s8_c1_ov1"]
    if _tiles(m, n, 256) < sms * 3 // 4:
        if k >= 8192:  # long K: split it (each split keeps >= 32 slabs)
            return CONFIGS["n256_s4_c1"]
        # short K: a split's workspace pass costs more than narrower tiles (1024^3: 15.8 us split vs cuBLAS 6.3)
        if _tiles(m, n, 128) >= sms // 2:
            return CONFIGS["n128_s6_c1"]
        # fewer than sms/2 tiles of 128x128: at most one wave of 64x128 tiles, one consumer each (1024^3: 0.95x vs
        # 0.90x for 128x64 tiles)
        return CONFIGS["m64_n128_s8_c1_ov1"]
    if out_bytes == 2:
        return CONFIGS["n256_s4_c1_d"]
    return CONFIGS["n256_s4_c2" if tiles_m >= 2 and (tiles_m % 2 == 0 or tiles_m >= 8) else "n256_s4_c1"]


def choose_split(m: int, n: int, k: int, cfg: GemmConfig, sms: int = NUM_SMS) -> tuple[int, int]:
    """(splits, k_per_split): split K when the output tiles fill less than ~3/4 of the SMs, at most one wave of CTAs.
    128-row tiles (128x256 only) keep >= 4 K-slabs per split, up to 16 splits; 64-row tiles keep >= 32 slabs and
    split at most 4 ways (the in-kernel fixup's limit; 1x4096x14336 0.65 -> 0.94x cuBLAS with 2 ranges).
    Returns (1, k) when no split pays."""
    tiles = -(-m // (cfg.bm * cfg.cluster)) * cfg.cluster * -(-n // (cfg.bn * cfg.cluster_n)) * cfg.cluster_n
    kt = -(-k // BK)
    if tiles == 0 or tiles >= sms * 3 // 4 or kt < 8:  # (no tiles: an empty result, nothing to split)
        return 1, k
    if cfg.bm == 64:
        split = max(1, min(sms // tiles, kt // 32, 4))
    elif cfg.bn < 256:
        return 1, k
    else:
        split = max(1, min(sms // tiles, kt // 4, 16))
    if split == 1:
        return 1, k
    kt_per = -(-kt // split)
    split = -(-kt // kt_per)  # no empty ranges
    return split, kt_per * BK


def _dtype_name(dt) -> str:
    s = str(dt)
    return s.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class GemmPlan:
    m: int
    n: int
    k: int
    lda: int  # elements between rows of A
    ldb: int  # elements between rows of Bt (b_mn = 0: b.stride(1)) or of B (b_mn = 1: b.stride(0))
    ldc: int
    in_dtype: str  # "bfloat16" | "float16"
    out_dtype: str  # "bfloat16" | "float16" | "float32"
    config: GemmConfig
    split: int = 1  # K ranges (split-K: fp32 partial tiles added with TMA reduce-add)
    k_per_split: int = 0
    b_mn: int = 0  # 0: B K-major (w.t()), 1: B row-major (K, N)
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self):  # plans key the launch caches on every call: hash once
        object.__setattr__(self, "_hash", hash((self.m, self.n, self.k, self.lda, self.ldb, self.ldc, self.in_dtype,
                                                 self.out_dtype, self.config, self.split, self.k_per_split, self.b_mn)))

    def __hash__(self) -> int:
        return self._hash

    @property
    def units(self) -> int:
        """Work units: (cluster of tiles, K range) pairs the persistent CTAs loop over."""
        c = self.config
        return -(-self.m // (c.bm * c.cluster)) * -(-self.n // (c.bn * c.cluster_n)) * self.split

    @property
    def grid(self) -> int:
        """CTAs if every unit had its own (the persistent launch uses min(this, resident CTAs))."""
        return self.units * self.config.cluster_size


def _pitch(cols: int, eb: int) -> int:
    """The row stride (elements) given to a map whose second dimension has extent 1: never used for addressing,
    but the driver wants every global stride to be a multiple of 16 bytes."""
    return -(-max(cols, 1) * eb // 16) * 16 // eb


def _shape2(x, name: str) -> tuple[int, int]:
    shp = tuple(int(s) for s in x.shape)
    if len(shp) != 2:
        raise GemmError(f"{name} must be 2-D, got shape {shp}; reshape batched inputs to 2-D first")
    return shp


def _b_layout(b, k: int, n: int, eb: int) -> tuple[int, int]:
    """(b_mn, ldb) of B: K-major (``w.t()``) or row-major (K, N). A single row or column takes the layout whose
    inner stride is 1, with a padded, never-read row stride."""
    sb0, sb1 = (int(s) for s in b.stride())
    if k == 1:
        return (1, _pitch(n, eb)) if sb1 == 1 or n == 1 else (0, sb1)
    if n == 1:
        return (0, _pitch(k, eb)) if sb0 == 1 else (1, sb0)
    if sb0 == 1:
        return 0, sb1
    if sb1 == 1:
        return 1, sb0
    raise GemmError(f"b must be row-major (K, N) (b.stride(1) == 1) or the transpose of a row-major (N, K) tensor "
                    f"(b.stride(0) == 1), got strides {(sb0, sb1)}; pass b.contiguous()")


def plan(a, b, out=None, out_dtype=None, config: GemmConfig | str | None = None, split: int | None = None,
         padded_rows: bool = False) -> GemmPlan:
    """Check ``C = a @ b`` (no GPU needed) and return the plan. Raises :class:`GemmError` with the rule and a fix.
    ``padded_rows``: ``out`` is the caller's own scratch whose row pitch runs to a 16-byte boundary past column N,
    so the stores' whole 16-byte units may write there (:func:`check_store_rows` is then checked on the pitch)."""
    (m, k), (kb, n) = _shape2(a, "a"), _shape2(b, "b")
    check_compose(m, k, kb, n)
    ta, tb = _dtype_name(a.dtype), _dtype_name(b.dtype)
    if ta not in _IN:
        raise GemmError(f"a.dtype must be bfloat16 or float16, got {ta}")
    if tb != ta:
        raise GemmError(f"a and b must have the same dtype, got {ta} and {tb}")
    eb = _ELEM[ta]
    if out is not None:
        od = _dtype_name(out.dtype)
        if out_dtype is not None and _dtype_name(out_dtype) != od:
            raise GemmError(f"out.dtype is {od} but out_dtype={_dtype_name(out_dtype)}; give one or make them agree")
    else:
        od = _dtype_name(out_dtype) if out_dtype is not None else ta
    if od not in _OUT:
        raise GemmError(f"output dtype must be bfloat16, float16 or float32, got {od}")
    sa0, sa1 = (int(s) for s in a.stride())
    if sa1 != 1 and k > 1:
        raise GemmError(f"a must be row-major with contiguous rows (a.stride(1) == 1), got strides {(sa0, sa1)}; "
                        "pass a.contiguous()")
    lda = sa0 if m > 1 else _pitch(k, eb)
    b_mn, ldb = _b_layout(b, k, n, eb)
    # TMA rules (global strides multiple of 16 bytes; swizzled maps: 128-byte aligned base)
    # (K and N themselves may be anything: the maps keep the true extents; only the row pitches below matter)
    ldb_name, ldb_min = ("b.stride(0)", n) if b_mn else ("b.stride(1)", k)
    for nm, ld, lo in (("a.stride(0)", lda, k), (ldb_name, ldb, ldb_min)):
        if (ld * eb) % 16:
            raise GemmError(f"{nm} = {ld} elements = {ld * eb} bytes is not a multiple of 16 (TMA global stride)")
        if ld < lo:
            raise GemmError(f"{nm} = {ld} is smaller than the row length {lo} (rows overlap)")
    for nm, t in (("a", a), ("b", b)):
        ptr = int(t.data_ptr())
        if ptr % 128:
            raise GemmError(f"{nm}.data_ptr() = {ptr:#x} is not 128-byte aligned (needed by the 128-byte-swizzled "
                            f"tensor map); slice at a multiple of 128 bytes or pass {nm}.clone()")
    for nm, v in (("M", m), ("N", n), ("K", k)):
        if v >= 2**31:
            raise GemmError(f"{nm} = {v} does not fit the kernel's 32-bit indices")
    eo = _ELEM[od]
    ldc = n if m > 1 else _pitch(n, eo)
    scratch = tuple(int(s) for s in out.stride()) if padded_rows and out is not None else ()
    if not (len(scratch) == 2 and scratch[1] == 1 and scratch[0] * eo >= -(-n * eo // 16) * 16):
        check_store_rows(n, eo)
    if out is not None:
        so = tuple(int(s) for s in out.shape)
        if so != (m, n):
            raise GemmError(f"out has shape {so}, expected {(m, n)}")
        sc0, sc1 = (int(s) for s in out.stride())
        if sc1 != 1 and n > 1:
            raise GemmError(f"out must have contiguous rows (out.stride(1) == 1), got strides {(sc0, sc1)}")
        ldc = sc0 if m > 1 else _pitch(n, eo)
        if ldc < n:
            raise GemmError(f"out.stride(0) = {sc0} is smaller than N = {n} (rows overlap)")
        if (ldc * eo) % 16 or int(out.data_ptr()) % 128:
            raise GemmError(f"out is written by TMA stores through a 128-byte-swizzled map: out.stride(0) * {eo} "
                            f"bytes must be a multiple of 16 and out.data_ptr() 128-byte aligned, got stride "
                            f"{sc0} and data_ptr {int(out.data_ptr()):#x}; pass a fresh out (or none)")
        b_rows, b_cols = (k, n) if b_mn else (n, k)
        _check_no_alias(out, so, ldc, eo, ((a, m, lda, eb, k), (b, b_rows, ldb, eb, b_cols)))
    if isinstance(config, str):
        config = CONFIGS[config]
    config = config or choose_config(m, n, k, out_bytes=_ELEM[od])
    if b_mn and (config.bn // 64) % config.cluster:
        raise GemmError(f"config {config.name}: a row-major b is loaded in 64-column boxes that the {config.cluster} "
                        f"CTAs of a cluster share evenly; {config.bn // 64} boxes do not divide; pick a config whose "
                        f"bn / 64 is a multiple of its cluster (or pass b as w.t())")
    if split is None:
        nsplit, kps = choose_split(m, n, k, config)
    else:
        kt = -(-k // BK) if k else 1
        kt_per = -(-kt // max(1, min(int(split), kt)))
        nsplit, kps = -(-kt // kt_per), kt_per * BK
    return GemmPlan(m, n, k, lda, ldb, ldc, ta, od, config, nsplit, kps, b_mn)


def check_compose(m: int, k: int, kb: int, n: int) -> None:
    """``a`` (m, k) and ``b`` (kb, n) multiply: k == kb."""
    if kb != k:
        raise GemmError(f"shapes do not compose: a is {m}x{k}, b is {kb}x{n} (a.shape[1] must equal b.shape[0])")


def check_store_rows(n: int, eo: int) -> None:
    """The output's rows hold a whole number of 16-byte units, as the kernels' TMA stores write them: a tensor-map
    store writes dim 0 in whole 16-byte chunks, so the elements past column N up to the next 16-byte boundary of
    each row would be written too (docs/HARDWARE.md §3) -- another tensor's data where ``out`` is a view into a
    wider buffer, or past the end of a one-row result."""
    if (n * eo) % 16:
        raise GemmError(f"TMA stores write whole 16-byte units of a row: the result's rows are N * {eo} = {n * eo} "
                        f"bytes, not a multiple of 16, so the elements after column {n - 1} up to the next 16-byte "
                        f"boundary would be overwritten; N must be a multiple of {16 // eo} for the kernel (default "
                        f"calls run such shapes another way)")


def _check_no_alias(out, shape, ldc, eo, inputs) -> None:
    """``out`` must share no byte with ``a`` or ``b`` (exact test: interleaved row blocks of one buffer are fine)."""
    o = Region(int(out.data_ptr()), tuple(shape), (ldc * eo, eo), eo)
    for (t, rows, ld, e, cols), nm in zip(inputs, ("a", "b")):
        rel = relation(o, Region(int(t.data_ptr()), (rows, cols), (ld * e, e), e))
        if rel != "disjoint":
            why = "cannot be shown not to overlap" if rel == "unknown" else "overlaps"
            raise GemmError(f"out {why} {nm} in memory; the kernel reads {nm} while writing out: "
                            "pass a separate out tensor")


_kernels: dict = {}


def kernel_name(p: GemmPlan) -> str:
    c = p.config
    out = 2 if p.split > 1 else _OUT[p.out_dtype]
    return (f"tmakit_gemm<{_IN[p.in_dtype]}, {out}, {c.bm}, {c.bn}, {c.stages}, {c.cluster}, {c.cluster_n}, {p.b_mn}, "
            f"{int(p.split > 1)}, {c.overlap}, {c.epi}, {c.defer}>")


def kernel_for(p: GemmPlan, debug: bool | None = None):
    """The compiled kernel of a plan's dtypes and config (NVRTC, cached on disk and in memory)."""
    from ..cuda import compile_file, context_id, load_module
    from . import KERNELS_DIR

    name = kernel_name(p)
    key = (name, debug, context_id())  # one module per device
    k = _kernels.get(key)
    if k is None:
        k = _kernels[key] = load_module(compile_file(KERNELS_DIR / "gemm.cu", name_expressions=(name,),
                                                     debug=debug)).kernel(name)
    return k


def map_nd(ptr: int, dims, strides_bytes, dtype: str, box):
    """A 128-byte-swizzled ``tk.TensorMap`` of the GEMM kernels (any rank; 256-byte L2 promotion)."""
    from tmakit.tma.tensormap import L2Promotion, SwizzleMode, TensorMap

    return TensorMap(dtype=_TMA_DTYPE[dtype], global_dim=tuple(dims), global_strides=tuple(strides_bytes),
                     box_dim=tuple(box), swizzle=SwizzleMode.B128, l2_promotion=L2Promotion.B256,
                     global_address=ptr)


def compiled(cu_file: str, name: str, defines: tuple[str, ...] = ()):
    """Kernel ``name`` of one of the GEMM's ``.cu`` files (gemm_grouped.cu, gemm_ptr_array.cu), compiled by NVRTC
    once (cached on disk) and loaded once per device; ``defines``: extra ``NAME=value`` macros (A/B builds)."""
    from ..cuda import compile_file, context_id, load_module
    from . import KERNELS_DIR

    key = (cu_file, name, defines, context_id())
    k = _kernels.get(key)
    if k is None:
        k = _kernels[key] = load_module(compile_file(KERNELS_DIR / cu_file, name_expressions=(name,),
                                                     options=[f"-D{d}" for d in defines])).kernel(name)
    return k


def tensormaps(p: GemmPlan, a_ptr: int, b_ptr: int, c_ptr: int = 0, ldc: int | None = None):
    """The (A, B, C) ``tk.TensorMap``s of a plan. A: {K, M} boxes 64 x bm/cluster_n; B: {K, N} boxes 64 x bn/cluster
    (K-major) or {N, K} boxes 64 x 64 (row-major B); C: {N, M} boxes (128 bytes) x 64, fp32 for split-K."""
    eb = _ELEM[p.in_dtype]
    cl = p.config.cluster
    ta = map_nd(a_ptr, (p.k, p.m), (p.lda * eb,), p.in_dtype, (BK, p.config.bm // p.config.cluster_n))
    if p.b_mn:
        tb = map_nd(b_ptr, (p.n, p.k), (p.ldb * eb,), p.in_dtype, (64, BK))
    else:
        tb = map_nd(b_ptr, (p.k, p.n), (p.ldb * eb,), p.in_dtype, (BK, p.config.bn // cl))
    cd = "float32" if p.split > 1 else p.out_dtype
    ec = _ELEM[cd]
    tc = map_nd(c_ptr, (p.n, p.m), ((p.ldc if ldc is None else ldc) * ec,), cd, (128 // ec, 64))
    return ta, tb, tc


def schedule(p: GemmPlan, resident: int, stream_k: str = "auto") -> Schedule:
    """The schedule of plan ``p`` on ``resident`` co-resident CTAs. ``stream_k``: ``"auto"`` deals the last partial
    wave's units out as stream-K ranges when that wave is at most ``STREAM_K_MAX_FILL`` full, ``"all"`` does so
    for every unit (instead of split-K on few-tile shapes), ``"tail"`` for the last partial wave however full,
    ``"off"`` keeps whole units only. Split-K plans never
    use stream-K."""
    if stream_k not in STREAM_K_MODES:
        raise GemmError(f"stream_k must be one of {STREAM_K_MODES}, got {stream_k!r}")
    return tail_schedule(p.units, -(-p.k // BK), p.config, resident, "off" if p.split > 1 else stream_k,
                         STREAM_K_MAX_FILL)


def whole_k(p: GemmPlan) -> GemmPlan:
    """The plan with its K split undone (one K range per tile)."""
    return replace(p, split=1, k_per_split=p.k)


# split_schedule: finish split tiles by reduce-scatter (every segment adds and stores 1/split of the columns) when the
# split divides the tile's staging boxes; else the head (slab 0's segment) adds all partials.
SPLIT_SCATTER = True


def split_schedule(p: GemmPlan, resident: int, scatter: bool = True) -> tuple[GemmPlan, Schedule] | None:
    """Split-K without a workspace pass: each tile's K is cut into ``p.split`` ranges run by ``p.split`` clusters as
    stream-K segments (one range per cluster, one wave). With ``scatter`` (and ``SPLIT_SCATTER``) and a split that
    divides the tile's staging boxes, every range finishes 1/split of the tile's columns (reduce-scatter); else the
    range holding slab 0 is the head, which adds the others' fp32 partials in a fixed order and stores the tile.
    Deterministic, and no memset or conversion kernel. Returns the whole-K plan and its schedule, or None when the
    ranges do not fit one wave."""
    if p.split <= 1:
        return None
    cs = p.config.cluster_size
    p1 = whole_k(p)
    clusters = p1.units * p.split
    if clusters > resident // cs:
        return None
    kt = -(-p.k // BK)
    per = max(1, kt // p.split)
    boxes = p.config.bn * _ELEM[p.out_dtype] // 128  # staging boxes per tile row: the parts are whole boxes
    scatter = int(scatter and SPLIT_SCATTER and boxes % p.split == 0)
    return p1, Schedule(clusters, cs, 0, p1.units, kt // per + 2, p.config.bn, p.config.consumers, scatter)


_resident: dict = {}


def resident_ctas(kernel, cfg: GemmConfig, extra_smem: int = 0) -> int:
    """CTAs of this kernel that fit on the GPU at once (cuOccupancyMaxActiveClusters x cluster size); ``extra_smem``:
    dynamic shared memory beyond ``smem_bytes(cfg)`` (block scales)."""
    cs = cfg.cluster_size
    key = (kernel.name, cs)
    r = _resident.get(key)
    if r is None:
        try:
            r = kernel.max_active_clusters(cs, cfg.threads, smem_bytes(cfg) + extra_smem) * cs
        except Exception:  # noqa: BLE001 - an occupancy query failing must not stop the GEMM
            r = 0
        r = _resident[key] = r if r > 0 else NUM_SMS // cs * cs
    return r


def launch(p: GemmPlan, a_ptr: int, b_ptr: int, c_ptr: int, stream=None, debug: bool | None = None,
           ldc: int | None = None, pdl: bool = False) -> None:
    """Launch the plan's persistent kernel (min(units, resident) clusters of 256- or 384-thread CTAs, whole units
    only) on ``stream`` (default: torch's current stream). With ``p.split > 1``, ``c_ptr`` must be a zeroed fp32 (M, N)
    buffer with row stride ``ldc`` (elements)."""
    launcher(p, a_ptr, b_ptr, c_ptr, debug, ldc, pdl=pdl)(stream)


_launchers: dict = {}


def launch_fn(k, grid: int, threads: int, args, smem: int, cluster: int, pdl: bool):
    """``fn(stream=None)`` launching kernel ``k`` with fixed ``args``: the first launch through :mod:`tmakit.cuda`
    (context, attributes, checks), later ones on torch's current stream as one packed ``cuLaunchKernelEx``
    (:class:`tmakit.cuda.packed.FixedLaunch`); an explicit ``stream`` always takes the first path."""
    from tmakit.cuda.packed import FixedLaunch

    dims = (cluster, 1, 1) if cluster > 1 else None
    fixed = []

    def fn(stream=None):
        if fixed and stream is None:
            fixed[0]()
            return
        k(grid, threads, *args, smem=smem, stream=stream, cluster=dims, pdl=pdl)
        if not fixed:
            fixed.append(FixedLaunch(k, grid, threads, smem, list(args), cluster, pdl))

    return fn


def launcher(p: GemmPlan, a_ptr: int, b_ptr: int, c_ptr: int, debug: bool | None = None, ldc: int | None = None,
             sched: Schedule | None = None, ws_ptr: int = 0, flags_ptr: int = 0, k_rotate: bool | None = None,
             pdl: bool = False):
    """A memoised ``fn(stream)`` that launches ``p`` on these pointers (tensor maps encoded once). ``sched``
    (default: whole units, no stream-K) with ``sk_units > 0`` needs ``ws_ptr`` (``sched.ws_bytes``) and
    ``flags_ptr`` (``sched.flag_count`` zeroed uint32, left zeroed by every launch). ``pdl``: launch as a
    programmatic dependent launch (the kernel's prologue overlaps the previous kernel's tail; the kernel waits with
    ``griddepcontrol.wait`` before touching global memory, so this is safe after any kernel)."""
    key = (p, a_ptr, b_ptr, c_ptr, debug, ldc, sched, ws_ptr, flags_ptr, k_rotate, pdl)
    fn = _launchers.get(key)
    if fn is not None:
        return fn
    from tmakit.cuda.encode import encode_tensormap

    k = kernel_for(p, debug)
    cfg = p.config
    cs = cfg.cluster_size
    if sched is None:
        sched = schedule(p, resident_ctas(k, cfg), "off")
    if sched.sk_units and not (ws_ptr and flags_ptr):
        raise GemmError("a stream-K schedule needs a workspace and zeroed flags (ws_ptr, flags_ptr)")
    grid = sched.grid
    maps = [encode_tensormap(t) for t in tensormaps(p, a_ptr, b_ptr, c_ptr, ldc)]
    args = (*maps, ctypes.c_int32(p.m), ctypes.c_int32(p.n), ctypes.c_int32(p.k), ctypes.c_int32(cfg.group_m),
            ctypes.c_int32(p.k_per_split or p.k), ctypes.c_int32(sched.dp_units), ctypes.c_int32(sched.sk_units),
            ctypes.c_int32(sched.maxseg), ctypes.c_uint64(ws_ptr), ctypes.c_uint64(flags_ptr),
            ctypes.c_int32(int(bool(k_rotate))),  # off by default: no gain measured
            ctypes.c_int32(sched.scatter))
    fn = launch_fn(k, grid, cfg.threads, args, smem_bytes(cfg), cs, pdl)
    make_room(_launchers, 512)
    _launchers[key] = fn
    return fn
