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
from dataclasses import dataclass

from .gemm import (
    _ELEM,
    _IN,
    _OUT,
    BK,
    CONFIGS,
    GemmConfig,
    GemmError,
    _dtype_name,
    compiled,
    launch_fn,
    map_nd,
    resident_ctas,
    smem_bytes,
)

__all__ = ["GroupedPlan", "plan_grouped", "choose_grouped_config", "kernel_name", "launcher"]


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


def choose_grouped_config(m: int, groups: int) -> GemmConfig:
    """64-row tiles when groups average at most 64 rows (a 128-row tile would be mostly empty), else 128x256."""
    return CONFIGS["m64_n128_s8_c1_ov1" if m <= 64 * max(groups, 1) else "n256_s4_c1"]


def plan_grouped(a, b, offs_len: int, out=None, out_dtype=None, config: GemmConfig | str | None = None) -> GroupedPlan:
    """Check ``C[rows of g] = A[rows of g] @ B[g]`` (no GPU needed) and return the plan. ``offs_len``: the number of
    group offsets. Raises :class:`GemmError` with the rule and a fix."""
    if a.dim() != 2 or b.dim() != 3:
        raise GemmError(f"the grouped kernel takes a 2-D a and a 3-D b, got {a.dim()}-D and {b.dim()}-D")
    (m, k), (g, kb, n) = tuple(int(s) for s in a.shape), tuple(int(s) for s in b.shape)
    if kb != k:
        raise GemmError(f"shapes do not compose: a is {m}x{k}, b is {g}x{kb}x{n} (a.shape[1] must equal b.shape[1])")
    if offs_len != g:
        raise GemmError(f"offs has {offs_len} entries for {g} groups of b; give one end offset per group")
    ta, tb = _dtype_name(a.dtype), _dtype_name(b.dtype)
    if ta not in _IN or tb != ta:
        raise GemmError(f"a and b must both be bfloat16 or both float16, got {ta} and {tb}")
    od = _dtype_name(out.dtype if out is not None else (out_dtype or a.dtype))
    if od not in _OUT:
        raise GemmError(f"output dtype must be bfloat16, float16 or float32, got {od}")
    eb, eo = _ELEM[ta], _ELEM[od]
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
    if out is not None:
        if tuple(int(s) for s in out.shape) != (m, n):
            raise GemmError(f"out has shape {tuple(out.shape)}, expected {(m, n)}")
        if int(out.stride(1)) != 1:
            raise GemmError(f"out must have contiguous rows, got strides {tuple(out.stride())}")
        ldc = int(out.stride(0))
    for nm, v in (("a.stride(0)", sa0 if m > 1 else 16), ("b's row stride", ldb), ("b.stride(0)", sg if g > 1 else 16),
                  ("out's row stride", ldc)):
        if (v * (eo if nm.startswith("out") else eb)) % 16:
            raise GemmError(f"{nm} = {v} elements is not a multiple of 16 bytes (TMA global stride); pass a padded "
                            f"or contiguous tensor")
    for nm, t in (("a", a), ("b", b)) + ((("out", out),) if out is not None else ()):
        if int(t.data_ptr()) % 128:
            raise GemmError(f"{nm}.data_ptr() is not 128-byte aligned (128-byte-swizzled tensor map); pass "
                            f"{nm}.clone()")
    for nm, v in (("M", m), ("N", n), ("K", k), ("groups", g)):
        if v >= 2**31:
            raise GemmError(f"{nm} = {v} does not fit the kernel's 32-bit indices")
    if isinstance(config, str):
        config = CONFIGS[config]
    config = config or choose_grouped_config(m, g)
    if config.cluster_size != 1 or config.defer:
        raise GemmError(f"config {config.name}: the grouped kernel runs single CTAs without the deferred epilogue")
    return GroupedPlan(m, n, k, g, sa0 if m > 1 else 16, ldb, sg if g > 1 else max(ldb * (k if b_mn else n), 16),
                       ldc, ta, od, config, b_mn)


def kernel_name(p: GroupedPlan) -> str:
    c = p.config
    return (f"tmakit_gemm_grouped<{_IN[p.in_dtype]}, {_OUT[p.out_dtype]}, {c.bm}, {c.bn}, {c.stages}, {p.b_mn}, "
            f"{c.overlap}, {c.epi}>")


_launchers: dict = {}


def kernel_for(p):
    """The compiled kernel of a plan's dtypes and config."""
    return compiled("gemm_grouped.cu", kernel_name(p))


def tensormaps(p: GroupedPlan, a_ptr: int, b_ptr: int, c_ptr: int):
    """A: {K, M} boxes 64 x bm; B: {K, N, G} boxes 64 x bn x 1 (K-major) or {N, K, G} boxes 64 x 64 x 1
    (row-major); C: {N, M} boxes (128 bytes) x 64."""
    eb, eo = _ELEM[p.in_dtype], _ELEM[p.out_dtype]
    ta = map_nd(a_ptr, (p.k, p.m), (p.lda * eb,), p.in_dtype, (BK, p.config.bm))
    if p.b_mn:
        tb = map_nd(b_ptr, (p.n, p.k, p.groups), (p.ldb * eb, p.ldb_group * eb), p.in_dtype, (64, BK, 1))
    else:
        tb = map_nd(b_ptr, (p.k, p.n, p.groups), (p.ldb * eb, p.ldb_group * eb), p.in_dtype, (BK, p.config.bn, 1))
    tc = map_nd(c_ptr, (p.n, p.m), (p.ldc * eo,), p.out_dtype, (128 // eo, 64))
    return ta, tb, tc


def launcher(p: GroupedPlan, a_ptr: int, b_ptr: int, c_ptr: int, offs_ptr: int):
    """A memoised ``fn(stream=None)`` launching plan ``p`` on these pointers: one persistent CTA per SM (the work
    list is read from the offsets on the device)."""
    key = (p, a_ptr, b_ptr, c_ptr, offs_ptr)
    fn = _launchers.get(key)
    if fn is not None:
        return fn
    from tmakit.cuda.encode import encode_tensormap

    k = kernel_for(p)
    cfg = p.config
    maps = [encode_tensormap(t) for t in tensormaps(p, a_ptr, b_ptr, c_ptr)]
    args = (*maps, ctypes.c_int32(p.m), ctypes.c_int32(p.n), ctypes.c_int32(p.k), ctypes.c_uint64(offs_ptr),
            ctypes.c_int32(p.groups), ctypes.c_uint64(c_ptr), ctypes.c_int64(p.ldc))
    fn = launch_fn(k, resident_ctas(k, cfg), cfg.threads, args, smem_bytes(cfg), 1, False)
    if len(_launchers) > 512:
        _launchers.clear()
    _launchers[key] = fn
    return fn
