"""Host side of the ptr-array grouped GEMM (``gemm_ptr_array.cu``): CUTLASS's grouped GEMM semantics.

G problems ``C_g (M_g, N_g) = A_g (M_g, K_g) @ B_g (K_g, N_g)`` with their own shapes, pointers and strides, one
persistent launch. The problems go to the device as an int64 array (gemm_group.cuh's ``Problem`` fields); the
kernel's producer rewrites a per-CTA copy of the A and B tensor maps for each problem it reaches
(``tensormap.replace`` of the base address, extents and row pitch, then the tensormap proxy fences), so the host
encodes only two template maps per call. C is written with predicated stores. All B_g share one layout (K-major
``w.t()`` or row-major) and all problems one dtype.
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
    _b_layout,
    _dtype_name,
    compiled,
    launch_fn,
    map_nd,
    resident_ctas,
    smem_bytes,
)

__all__ = ["ListPlan", "check_shapes", "problem_fit", "plan_list", "problem_rows", "kernel_name", "launcher",
           "MAP_BYTES"]

MAP_BYTES = 128
EDIT_SMEM = 384  # two 128-byte maps being edited, 128-byte aligned after the unit slots


@dataclass(frozen=True)
class ListPlan:
    groups: int
    in_dtype: str
    out_dtype: str
    config: GemmConfig
    b_mn: int
    first: int  # a problem with M, N, K > 0 (its maps are the templates), or -1 when none has work


def check_shapes(As, Bs, outs) -> None:
    """The meaning of a problem list, whatever runs it: as many a's, b's and outs, 2-D operands whose shapes compose,
    each out (M_g, N_g). Raises :class:`GemmError` naming the problem."""
    if not (len(As) == len(Bs) == len(outs)) or not As:
        raise GemmError(f"gemm_list needs as many a's as b's (and outs), at least one: got {len(As)}, {len(Bs)}, "
                        f"{len(outs)}")
    for g, (a, b, c) in enumerate(zip(As, Bs, outs)):
        if a.dim() != 2 or b.dim() != 2:
            raise GemmError(f"problem {g}: a and b must be 2-D, got {a.dim()}-D and {b.dim()}-D")
        (m, k), (kb, n) = tuple(int(s) for s in a.shape), tuple(int(s) for s in b.shape)
        if kb != k:
            raise GemmError(f"problem {g}: shapes do not compose: a is {m}x{k}, b is {kb}x{n}")
        if tuple(int(s) for s in c.shape) != (m, n):
            raise GemmError(f"problem {g}: out must be ({m}, {n}), got {tuple(c.shape)}")


def problem_fit(a, b, c) -> tuple[str, tuple]:
    """Whether the kernel can take one problem (shapes already checked): ``(why, key)``, ``why`` empty when it can.
    ``key`` = (a's dtype, B layout, out dtype): one launch takes problems of one key. A problem with nothing to
    multiply (M, N or K = 0) fits any launch of its dtypes (its B layout is ``None``)."""
    ta, od = _dtype_name(a.dtype), _dtype_name(c.dtype)
    if ta not in _IN or _dtype_name(b.dtype) != ta:
        return f"a and b must both be bfloat16 or float16, got {a.dtype} and {b.dtype}", ()
    if od not in _OUT:
        return f"output dtype must be bfloat16, float16 or float32, got {od}", ()
    (m, k), n = tuple(int(s) for s in a.shape), int(b.shape[1])
    if min(m, n, k) == 0:
        return "", (ta, None, od)
    eb = _ELEM[ta]
    if int(a.stride(1)) != 1 and k > 1:
        return f"a must have contiguous rows, got strides {tuple(a.stride())}", ()
    try:
        b_mn, ldb = _b_layout(b, k, n, eb)
    except GemmError as e:
        return str(e), ()
    lda = int(a.stride(0)) if m > 1 else -(-k * eb // 16) * 16 // eb
    if (lda * eb) % 16 or (ldb * eb) % 16:
        return f"row pitches {lda} / {ldb} elements are not multiples of 16 bytes (TMA)", ()
    if int(a.data_ptr()) % 128 or int(b.data_ptr()) % 128:
        return "a and b must start 128-byte aligned (128-byte-swizzled maps)", ()
    if int(c.stride(1)) != 1 and n > 1:  # (any row pitch and start: the kernel's plain stores check alignment)
        return f"out must have contiguous rows, got strides {tuple(c.stride())}", ()
    for nm, v in (("M", m), ("N", n), ("K", k)):
        if v >= 2**31:
            return f"{nm} = {v} does not fit the kernel's 32-bit indices", ()
    return "", (ta, b_mn, od)


def plan_list(As, Bs, outs, out_dtype=None, config: GemmConfig | str | None = None) -> ListPlan:
    """Check every problem (no GPU needed) and return the plan of one launch; ``outs``: the (M_g, N_g) results
    (already allocated). Raises :class:`GemmError` naming the problem, the rule and a fix."""
    check_shapes(As, Bs, outs)
    dtypes, b_mn, first, rows = None, None, -1, 0
    for g, (a, b, c) in enumerate(zip(As, Bs, outs)):
        why, key = problem_fit(a, b, c)
        if why:
            raise GemmError(f"problem {g}: {why}")
        ta, bm_, od = key
        if dtypes is None:
            dtypes = (ta, od)
        elif (ta, od) != dtypes:
            raise GemmError(f"problem {g}: a, b and out must have problem 0's dtypes ({dtypes[0]} -> {dtypes[1]}), "
                            f"got {ta} -> {od}; one launch runs one dtype pair")
        if bm_ is None:
            continue
        if b_mn is None:
            b_mn, first = bm_, g
        elif bm_ != b_mn:
            raise GemmError(f"problem {g}: every b must have problem {first}'s layout "
                            f"({'row-major (K, N)' if b_mn else 'K-major (w.t())'})")
        rows += int(a.shape[0])
    if isinstance(config, str):
        config = CONFIGS[config]
    if config is None:
        config = CONFIGS["m64_n128_s8_c1_ov1" if rows <= 64 * len(As) else "n256_s4_c1"]
    if config.cluster_size != 1 or config.defer:
        raise GemmError(f"config {config.name}: the ptr-array kernel runs single CTAs without the deferred epilogue")
    if b_mn and (config.bn // 64) % config.cluster:
        raise GemmError(f"config {config.name}: row-major b needs bn / 64 boxes split evenly over the cluster")
    return ListPlan(len(As), dtypes[0], dtypes[1], config, int(b_mn or 0), first)


def problem_rows(As, Bs, outs) -> list[list[int]]:
    """The device problem array's rows: a, b, c addresses, M, N, K, lda, ldb, ldc (elements)."""
    out = []
    for a, b, c in zip(As, Bs, outs):
        (m, k), n = tuple(int(s) for s in a.shape), int(b.shape[1])
        eb = a.element_size()
        if min(m, n, k) == 0:
            out.append([0, 0, int(c.data_ptr()), m, n, 0, 0, 0, int(c.stride(0)) if m else 0])
            continue
        _, ldb = _b_layout(b, k, n, eb)
        lda = int(a.stride(0)) if m > 1 else -(-k * eb // 16) * 16 // eb
        out.append([int(a.data_ptr()), int(b.data_ptr()), int(c.data_ptr()), m, n, k, lda, ldb, int(c.stride(0))])
    return out


def kernel_name(p: ListPlan) -> str:
    c = p.config
    return (f"tmakit_gemm_ptr_array<{_IN[p.in_dtype]}, {_OUT[p.out_dtype]}, {c.bm}, {c.bn}, {c.stages}, {p.b_mn}, "
            f"{c.overlap}, {c.epi}>")


def kernel_for(p):
    """The compiled kernel of a plan's dtypes and config."""
    return compiled("gemm_ptr_array.cu", kernel_name(p))


def template_maps(p: ListPlan, row: list[int]):
    """The A and B maps of one problem (the templates the kernel repoints); C gets a placeholder (unused)."""
    a, b, _, m, n, k, lda, ldb, _ = row
    eb = _ELEM[p.in_dtype]
    ta = map_nd(a, (k, m), (lda * eb,), p.in_dtype, (BK, p.config.bm))
    tb = map_nd(b, (n, k), (ldb * eb,), p.in_dtype, (64, BK)) if p.b_mn else \
        map_nd(b, (k, n), (ldb * eb,), p.in_dtype, (BK, p.config.bn))
    return ta, tb, ta


def grid(p: ListPlan) -> int:
    k = kernel_for(p)
    return resident_ctas(k, p.config)


def launcher(p: ListPlan, template_row: list[int], problems_ptr: int, maps_ptr: int):
    """``fn(stream=None)`` launching the plan on the device problem array at ``problems_ptr`` with this CTA map
    workspace (``grid(p) * 4 * MAP_BYTES`` bytes)."""
    key = (p, tuple(template_row), problems_ptr, maps_ptr)
    fn = _launchers.get(key)
    if fn is not None:
        return fn
    from tmakit.cuda.encode import encode_tensormap

    k = kernel_for(p)
    cfg = p.config
    maps = [encode_tensormap(t) for t in template_maps(p, template_row)]
    args = (*maps, ctypes.c_uint64(problems_ptr), ctypes.c_int32(p.groups), ctypes.c_uint64(maps_ptr))
    fn = launch_fn(k, resident_ctas(k, cfg), cfg.threads, args, smem_bytes(cfg) + EDIT_SMEM, 1, False)
    if len(_launchers) > 512:
        _launchers.clear()
    _launchers[key] = fn
    return fn


_launchers: dict = {}
