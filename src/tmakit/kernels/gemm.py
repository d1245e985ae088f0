"""Host side of ``kernels/gemm.cu``: configurations, argument checks, tensor maps, compile and launch.

``plan(a, b, out, out_dtype)`` checks a problem without touching the GPU (works on any objects with ``shape``,
``stride()``, ``dtype`` and ``data_ptr()``, so the checks are testable without torch or a GPU) and returns a
:class:`GemmPlan`; ``launch(plan, a, b, out)`` encodes the two tensor maps and launches on torch's current stream.

Layout contract (first step of issue 8): ``C[M,N] = A[M,K] @ B[K,N]`` with A row-major (``a.stride(1) == 1``)
and B K-major, i.e. ``b.stride(0) == 1``: ``b = w.t()`` for a row-major ``w`` of shape (N, K) (nn.Linear's weight).
A row-major (K, N) B needs a transposed-smem wgmma descriptor and is refused with a clear error for now.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

__all__ = ["BM", "BK", "CONFIGS", "DEFAULT_CONFIG", "GemmConfig", "GemmError", "GemmPlan", "choose_config",
           "choose_split", "kernel_for", "launch", "plan", "smem_bytes"]

BM = 128  # tile rows (two consumer warpgroups of 64)
BK = 64  # K slab per stage: 64 x 2 bytes = one 128-byte swizzle row
THREADS = 384  # producer warpgroup + two consumer warpgroups
SMEM_LIMIT = 227 * 1024

_IN = {"bfloat16": 0, "float16": 1}
_OUT = {"bfloat16": 0, "float16": 1, "float32": 2}
_ELEM = {"bfloat16": 2, "float16": 2, "float32": 4}
_TMA_DTYPE = {"bfloat16": 9, "float16": 6}  # DataType.BFLOAT16 / FLOAT16


class GemmError(ValueError):
    """An argument tmakit's GEMM cannot take; the message names the argument, the value and a fix."""


@dataclass(frozen=True)
class GemmConfig:
    """One compiled variant: tile ``BM x bn x BK``, ``stages`` deep smem ring, ``overlap`` (keep one wgmma group in
    flight and release the previous stage), ``group_m`` tile rows per rasterization group."""

    bn: int = 256
    stages: int = 4
    overlap: int = 1
    group_m: int = 8

    @property
    def name(self) -> str:
        return f"128x{self.bn}x64_s{self.stages}_ov{self.overlap}_g{self.group_m}"


CONFIGS = {
    "n256_s4_ov1": GemmConfig(256, 4, 1, 8),
    "n256_s4_ov0": GemmConfig(256, 4, 0, 8),
    "n128_s6_ov1": GemmConfig(128, 6, 1, 8),
}
DEFAULT_CONFIG = "n256_s4_ov0"  # run 1: ov0 >= ov1 by 1-2% on every large shape


def smem_bytes(cfg: GemmConfig) -> int:
    """Dynamic shared memory of a config: the ring, 2 x stages mbarriers, 1 KiB for the 1024-byte alignment."""
    return cfg.stages * (BM * BK * 2 + cfg.bn * BK * 2) + 16 * cfg.stages + 1024


for _c in CONFIGS.values():
    assert smem_bytes(_c) <= SMEM_LIMIT, _c


NUM_SMS = 132  # H100 SXM / H200; only used by the heuristics below


def _tiles(m: int, n: int, bn: int) -> int:
    return -(-m // BM) * -(-n // bn)


def choose_config(m: int, n: int, k: int) -> GemmConfig:
    """The configuration for a shape. Device runs 1-2 (docs/GEMM.md): 128x256 tiles beat 128x128 on every suite
    shape, also with split-K on the few-tile shapes, so one config for now; split-K (:func:`choose_split`) supplies
    the CTAs when the output has few tiles."""
    return CONFIGS[DEFAULT_CONFIG]


def choose_split(m: int, n: int, k: int, cfg: GemmConfig) -> tuple[int, int]:
    """(splits, k_per_split): split K when the output tiles fill less than ~3/4 of the SMs, keeping >= 4 K-slabs
    (256 elements) per split and at most one wave of CTAs. Returns (1, k) when no split pays."""
    tiles = _tiles(m, n, cfg.bn)
    kt = -(-k // BK)
    if tiles >= NUM_SMS * 3 // 4 or kt < 8:
        return 1, k
    split = max(1, min(NUM_SMS // tiles, kt // 4, 16))
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
    ldb: int  # elements between rows of Bt (= b.stride(1))
    ldc: int
    in_dtype: str  # "bfloat16" | "float16"
    out_dtype: str  # "bfloat16" | "float16" | "float32"
    config: GemmConfig
    split: int = 1  # K ranges (split-K: fp32 partial tiles added with red.global.add)
    k_per_split: int = 0

    @property
    def grid(self) -> int:
        return _tiles(self.m, self.n, self.config.bn)


def _shape2(x, name: str) -> tuple[int, int]:
    shp = tuple(int(s) for s in x.shape)
    if len(shp) != 2:
        raise GemmError(f"{name} must be 2-D, got shape {shp}; reshape batched inputs to 2-D first")
    return shp


def plan(a, b, out=None, out_dtype=None, config: GemmConfig | str | None = None, split: int | None = None) -> GemmPlan:
    """Check ``C = a @ b`` (no GPU needed) and return the plan. Raises :class:`GemmError` (or ``NotImplementedError``
    for layouts not supported yet) with the rule and a fix."""
    (m, k), (kb, n) = _shape2(a, "a"), _shape2(b, "b")
    if kb != k:
        raise GemmError(f"shapes do not compose: a is {m}x{k}, b is {kb}x{n} (a.shape[1] must equal b.shape[0])")
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
    # A: row-major (K contiguous)
    sa0, sa1 = (int(s) for s in a.stride())
    if sa1 != 1 and k > 1:
        raise GemmError(f"a must be row-major with contiguous rows (a.stride(1) == 1), got strides {(sa0, sa1)}; "
                        "pass a.contiguous()")
    lda = sa0 if m > 1 else k
    # B: K-major, i.e. the transpose of a row-major (N, K) tensor
    sb0, sb1 = (int(s) for s in b.stride())
    if sb0 != 1 and k > 1:
        if sb1 == 1:
            raise NotImplementedError(
                "b is row-major (K, N); this kernel takes b as the transpose of a row-major (N, K) tensor "
                "(b = w.t(), b.stride(0) == 1), as nn.Linear weights are. Pass w.t() for w of shape (N, K), or "
                "b.t().contiguous().t() (one copy); the (K, N) layout needs a transposed wgmma operand (not yet).")
        raise GemmError(f"b must be K-major (b.stride(0) == 1, i.e. w.t() of a row-major (N, K) w), "
                        f"got strides {(sb0, sb1)}")
    ldb = sb1 if n > 1 else k
    # TMA rules (global strides multiple of 16 bytes; swizzled maps: 128-byte aligned base)
    if (k * eb) % 16:
        raise GemmError(f"K * {eb} bytes must be a multiple of 16 (TMA row pitch): K = {k}; pad K to a multiple "
                        f"of {16 // eb}")
    if (n * eb) % 16:
        raise GemmError(f"N * {eb} bytes must be a multiple of 16: N = {n}; pad N to a multiple of {16 // eb}")
    for nm, ld in (("a.stride(0)", lda), ("b.stride(1)", ldb)):
        if (ld * eb) % 16:
            raise GemmError(f"{nm} = {ld} elements = {ld * eb} bytes is not a multiple of 16 (TMA global stride)")
        if ld < k:
            raise GemmError(f"{nm} = {ld} is smaller than K = {k} (rows overlap)")
    for nm, t in (("a", a), ("b", b)):
        p = int(t.data_ptr())
        if p % 128:
            raise GemmError(f"{nm}.data_ptr() = {p:#x} is not 128-byte aligned (needed by the 128-byte-swizzled "
                            f"tensor map); slice at a multiple of 128 bytes or pass {nm}.clone()")
    for nm, v in (("M", m), ("N", n), ("K", k)):
        if v >= 2**31:
            raise GemmError(f"{nm} = {v} does not fit the kernel's 32-bit indices")
    ldc = n
    if out is not None:
        so = tuple(int(s) for s in out.shape)
        if so != (m, n):
            raise GemmError(f"out has shape {so}, expected {(m, n)}")
        sc0, sc1 = (int(s) for s in out.stride())
        if sc1 != 1 and n > 1:
            raise GemmError(f"out must have contiguous rows (out.stride(1) == 1), got strides {(sc0, sc1)}")
        ldc = sc0 if m > 1 else n
        if ldc < n or ldc % 2 or int(out.data_ptr()) % (2 * _ELEM[od]):
            raise GemmError(f"out rows must not overlap and pairs of elements must be aligned: out.stride(0) = "
                            f"{sc0}, data_ptr = {int(out.data_ptr()):#x}")
        _check_no_alias(out, so, ldc, _ELEM[od], ((a, m, lda, eb, k), (b, n, ldb, eb, k)))
    if isinstance(config, str):
        config = CONFIGS[config]
    config = config or choose_config(m, n, k)
    if split is None:
        nsplit, kps = choose_split(m, n, k, config)
    else:
        kt = -(-k // BK) if k else 1
        kt_per = -(-kt // max(1, min(int(split), kt)))
        nsplit, kps = -(-kt // kt_per), kt_per * BK
    return GemmPlan(m, n, k, lda, ldb, ldc, ta, od, config, nsplit, kps)


def _check_no_alias(out, shape, ldc, eo, inputs) -> None:
    lo = int(out.data_ptr())
    hi = lo + ((shape[0] - 1) * ldc + shape[1]) * eo
    for (t, rows, ld, e, cols), nm in zip(inputs, ("a", "b")):
        tlo = int(t.data_ptr())
        thi = tlo + ((rows - 1) * ld + cols) * e
        if lo < thi and tlo < hi:
            raise GemmError(f"out overlaps {nm} in memory; the kernel reads {nm} while writing out: "
                            "pass a separate out tensor")


_kernels: dict = {}


def kernel_name(p: GemmPlan) -> str:
    c = p.config
    out = 2 if p.split > 1 else _OUT[p.out_dtype]
    return f"tmakit_gemm_tn<{_IN[p.in_dtype]}, {out}, {c.bn}, {c.stages}, {c.overlap}, {int(p.split > 1)}>"


def kernel_for(p: GemmPlan, debug: bool | None = None):
    """The compiled kernel of a plan's dtypes and config (NVRTC, cached on disk and in memory)."""
    from tmakit.cuda import KERNELS_DIR, compile_file, load_module

    name = kernel_name(p)
    key = (name, debug)
    k = _kernels.get(key)
    if k is None:
        k = _kernels[key] = load_module(compile_file(KERNELS_DIR / "gemm.cu", name_expressions=(name,),
                                                     debug=debug)).kernel(name)
    return k


def _tensormap(ptr: int, rows: int, k: int, ld: int, dtype: str, box_rows: int):
    from tmakit.tma.tensormap import L2Promotion, SwizzleMode, TensorMap

    return TensorMap(dtype=_TMA_DTYPE[dtype], global_dim=(k, rows), global_strides=(ld * _ELEM[dtype],),
                     box_dim=(BK, box_rows), swizzle=SwizzleMode.B128, l2_promotion=L2Promotion.B256,
                     global_address=ptr)


def tensormaps(p: GemmPlan, a_ptr: int, b_ptr: int):
    """The (A, Bt) ``tk.TensorMap``s of a plan: innermost dim K, 64 x rows boxes, 128-byte swizzle."""
    return (_tensormap(a_ptr, p.m, p.k, p.lda, p.in_dtype, BM),
            _tensormap(b_ptr, p.n, p.k, p.ldb, p.in_dtype, p.config.bn))


def launch(p: GemmPlan, a_ptr: int, b_ptr: int, c_ptr: int, stream=None, debug: bool | None = None,
           ldc: int | None = None) -> None:
    """Launch the plan's kernel: ``grid x split`` CTAs of 384 threads on ``stream`` (default: torch's current
    stream). With ``p.split > 1``, ``c_ptr`` must be a zeroed fp32 (M, N) buffer with row stride ``ldc``."""
    from tmakit.cuda import Ptr
    from tmakit.cuda.encode import encode_cached

    k = kernel_for(p, debug)
    tm_a, tm_b = tensormaps(p, a_ptr, b_ptr)
    k((p.grid, p.split), THREADS, encode_cached(tm_a), encode_cached(tm_b), Ptr(c_ptr), ctypes.c_int32(p.m),
      ctypes.c_int32(p.n), ctypes.c_int32(p.k), ctypes.c_int64(p.ldc if ldc is None else ldc),
      ctypes.c_int32(p.config.group_m), ctypes.c_int32(p.k_per_split or p.k), smem=smem_bytes(p.config),
      stream=stream)
