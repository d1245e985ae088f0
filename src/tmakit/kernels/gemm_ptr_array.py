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
from threading import get_ident

from .gemm import (
    _ELEM,
    _IN,
    _OUT,
    BK,
    CONFIGS,
    SMEM_LIMIT,
    GemmConfig,
    GemmError,
    _b_layout,
    _dtype_name,
    compiled,
    map_nd,
    resident_ctas,
    smem_bytes,
)
from .gemm_fp8 import CONFIGS as FP8_CONFIGS
from .gemm_fp8 import FP8_DTYPES, _scale_strides, scale_smem, scaling_of

__all__ = ["ListPlan", "check_shapes", "problem_fit", "plan_list", "scaled_problem_fit", "plan_scaled_list",
           "problem_rows", "kernel_name", "launcher", "MAP_BYTES"]

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
    b_dtype: str = ""  # fp8: B's dtype (in_dtype is A's); 16-bit inputs: ""
    scaling: str = ""  # fp8: "tensor" (one scale each per problem), "row" or "block"; 16-bit: ""
    fast_accum: bool = True  # fp8: one wgmma chain over all of K (else two-level accumulation)

    @property
    def in_code(self) -> int:
        """The kernel's IN: 0 bf16, 1 fp16, fp8 2 + 2 (A is e5m2) + (B is e5m2)."""
        if not self.scaling:
            return _IN[self.in_dtype]
        return 2 + 2 * (self.in_dtype == "float8_e5m2") + (self.b_dtype == "float8_e5m2")


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
    why = _rows_fit(a, b, c, m, n, k, lda, ldb, eb)
    return (why, ()) if why else ("", (ta, b_mn, od))


def _rows_fit(a, b, c, m: int, n: int, k: int, lda: int, ldb: int, eb: int) -> str:
    """Why the maps and stores of one problem cannot be built ('' when they can): TMA row pitches (``lda``,
    ``ldb`` in elements of ``eb`` bytes), 128-byte starts, C rows, 32-bit extents."""
    if (lda * eb) % 16 or (ldb * eb) % 16:
        return f"row pitches {lda} / {ldb} elements are not multiples of 16 bytes (TMA)"
    if int(a.data_ptr()) % 128 or int(b.data_ptr()) % 128:
        return "a and b must start 128-byte aligned (128-byte-swizzled maps)"
    if int(c.stride(1)) != 1 and n > 1:  # (any row pitch and start: the kernel's plain stores check alignment)
        return f"out must have contiguous rows, got strides {tuple(c.stride())}"
    for nm, v in (("M", m), ("N", n), ("K", k)):
        if v >= 2**31:
            return f"{nm} = {v} does not fit the kernel's 32-bit indices"
    return ""


def _check_single_cta(config: GemmConfig) -> None:
    if config.cluster_size != 1 or config.defer or config.per_sm != 1:
        raise GemmError(f"config {config.name}: the ptr-array kernel runs single CTAs, one per SM, without the "
                        f"deferred epilogue")


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
    _check_single_cta(config)
    if b_mn and (config.bn // 64) % config.cluster:
        raise GemmError(f"config {config.name}: row-major b needs bn / 64 boxes split evenly over the cluster")
    return ListPlan(len(As), dtypes[0], dtypes[1], config, int(b_mn or 0), first)


def scaled_problem_fit(a, b, sa, sb, c, fast_accum: bool) -> tuple[str, tuple]:
    """:func:`problem_fit` for an fp8 problem with its fp32 scales: ``(why, key)``, ``key`` = (in code, out dtype,
    scaling, fast accumulation). Scales as ``tk.ops.scaled_mm`` takes them (``gemm_fp8.scaling_of``): one element
    each (per tensor), scale_a (M, 1) and scale_b (1, N) (row-wise), or scale_a (M, K/128) and scale_b (N/128,
    K/128) (block-wise, two-level accumulation only)."""
    ta, tb, od = _dtype_name(a.dtype), _dtype_name(b.dtype), _dtype_name(c.dtype)
    if ta not in FP8_DTYPES or tb not in FP8_DTYPES:
        return f"a and b must be float8_e4m3fn or float8_e5m2, got {a.dtype} and {b.dtype}", ()
    if od not in _OUT:
        return f"output dtype must be bfloat16, float16 or float32, got {od}", ()
    (m, k), n = tuple(int(s) for s in a.shape), int(b.shape[1])
    for nm, t in (("scale_a", sa), ("scale_b", sb)):
        if _dtype_name(t.dtype) != "float32" or t.device != a.device:
            return f"{nm} must be float32 on {a.device}, got {t.dtype} on {t.device}", ()
    try:
        scaling = scaling_of(m, n, k, tuple(int(x) for x in sa.shape), tuple(int(x) for x in sb.shape))
    except GemmError as e:
        return str(e), ()
    if scaling == "block" and fast_accum:
        return "block scales sum each 128-deep K block apart: fast accumulation does not apply", ()
    key = (2 + 2 * (ta == "float8_e5m2") + (tb == "float8_e5m2"), od, scaling, bool(fast_accum))
    if min(m, n, k) == 0:
        return "", key
    if int(a.stride(1)) != 1 and k > 1:
        return f"a must have contiguous rows, got strides {tuple(a.stride())}", ()
    if int(b.stride(0)) != 1 and k > 1:
        return f"b must be K-major (b = w.t() of a row-major (N, K) w; fp8 wgmma reads B K-major), got strides " \
               f"{tuple(b.stride())}", ()
    lda = int(a.stride(0)) if m > 1 else -(-k // 16) * 16
    ldb = int(b.stride(1)) if n > 1 else -(-k // 16) * 16
    why = _rows_fit(a, b, c, m, n, k, lda, ldb, 1)
    return (why, ()) if why else ("", key)


def plan_scaled_list(As, Bs, scales, outs, config: GemmConfig | str | None = None,
                     fast_accum: bool = False) -> ListPlan:
    """The plan of one fp8 ptr-array launch: every problem fits (:func:`scaled_problem_fit`) with one key.
    ``scales``: one (scale_a, scale_b) per problem. Raises :class:`GemmError` naming the problem, the rule and a
    fix."""
    check_shapes(As, Bs, outs)
    key, first, rows = None, -1, 0
    for g, (a, b, (sa, sb), c) in enumerate(zip(As, Bs, scales, outs)):
        why, kg = scaled_problem_fit(a, b, sa, sb, c, fast_accum)
        if why:
            raise GemmError(f"problem {g}: {why}")
        if key is None:
            key = kg
        elif kg != key:
            raise GemmError(f"problem {g}: dtypes and scaling {kg[:3]} differ from problem 0's {key[:3]}; one launch "
                            "runs one kind")
        if min(int(a.shape[0]), int(b.shape[1]), int(a.shape[1])) > 0:
            first = g if first < 0 else first
            rows += int(a.shape[0])
    if isinstance(config, str):
        if config not in FP8_CONFIGS:
            raise GemmError(f"unknown fp8 config {config!r}; choose one of {sorted(FP8_CONFIGS)}")
        config = FP8_CONFIGS[config]
    if config is None:
        small = rows <= 64 * len(As)
        config = FP8_CONFIGS[("m64_n128_s8_c1_ov1" if small else "n256_s4_c1") if fast_accum else
                             ("m64_n128_s8_c1" if small else "n192_s4_c1")]
    _check_single_cta(config)
    if not fast_accum and (config.bn > 192 or (config.overlap and config.bn > 128)):
        raise GemmError(f"two-level accumulation needs a tile at most 192 columns wide (128 with overlap), got "
                        f"config {config.name}")
    if key[2] == "block" and (config.overlap or config.bn not in (64, 128, 192)
                              or smem_bytes(config) + scale_smem(config) + EDIT_SMEM > SMEM_LIMIT):
        raise GemmError(f"config {config.name} cannot take block scales here (a 64-, 128- or 192-column tile without "
                        f"overlap, with room for each stage's scales and the maps being edited); use n192_s4_c1 or "
                        f"m64_n128_s8_c1")
    a0, b0, o0 = As[0], Bs[0], outs[0]
    return ListPlan(len(As), _dtype_name(a0.dtype), _dtype_name(o0.dtype), config, 0, first, _dtype_name(b0.dtype),
                    key[2], bool(fast_accum))


def problem_rows(As, Bs, outs, scales=None) -> list[list[int]]:
    """The device problem array's rows (gemm_group.cuh's ``Problem``): a, b, c addresses, M, N, K, lda, ldb, ldc
    (elements), then the fp8 scales' addresses and row-wise strides (``scales``: one (scale_a, scale_b) per
    problem; zeros for 16-bit lists)."""
    out = []
    for g, (a, b, c) in enumerate(zip(As, Bs, outs)):
        (m, k), n = tuple(int(s) for s in a.shape), int(b.shape[1])
        eb = a.element_size()
        sc = _scale_fields(*scales[g], m, n, k) if scales is not None else [0] * 6
        if min(m, n, k) == 0:
            out.append([0, 0, int(c.data_ptr()), m, n, 0, 0, 0, int(c.stride(0)) if m else 0, *sc])
            continue
        _, ldb = _b_layout(b, k, n, eb)
        lda = int(a.stride(0)) if m > 1 else -(-k * eb // 16) * 16 // eb
        out.append([int(a.data_ptr()), int(b.data_ptr()), int(c.data_ptr()), m, n, k, lda, ldb, int(c.stride(0)),
                    *sc])
    return out


def _scale_fields(sa, sb, m: int, n: int, k: int) -> list[int]:
    """A problem's scale fields: scale_a and scale_b addresses, then their strides in elements (gemm_fp8's
    ``_scale_strides``: a_m, a_k, b_n, b_k; 0 where the scaling has no such index)."""
    scaling = scaling_of(m, n, k, tuple(int(x) for x in sa.shape), tuple(int(x) for x in sb.shape))
    return [int(sa.data_ptr()), int(sb.data_ptr()), *_scale_strides(sa, sb, scaling)]


_SCALE_CODE = {"": 0, "tensor": 1, "row": 2, "block": 3}


def kernel_name(p: ListPlan) -> str:
    c = p.config
    return (f"tmakit_gemm_ptr_array<{p.in_code}, {_OUT[p.out_dtype]}, {c.bm}, {c.bn}, {c.stages}, {p.b_mn}, "
            f"{c.overlap}, {c.epi}, {_SCALE_CODE[p.scaling]}, {int(p.fast_accum)}>")


def kernel_for(p):
    """The compiled kernel of a plan's dtypes and config."""
    return compiled("gemm_ptr_array.cu", kernel_name(p))


def template_maps(p: ListPlan, row: list[int]):
    """The A and B maps of one problem (the templates the kernel repoints); C gets a placeholder (unused)."""
    a, b, _, m, n, k, lda, ldb = row[:8]
    eb, tdt, bk = (1, "uint8", 2 * BK) if p.scaling else (_ELEM[p.in_dtype], p.in_dtype, BK)  # fp8 moves as bytes
    ta = map_nd(a, (k, m), (lda * eb,), tdt, (bk, p.config.bm))
    tb = map_nd(b, (n, k), (ldb * eb,), tdt, (64, bk)) if p.b_mn else \
        map_nd(b, (k, n), (ldb * eb,), tdt, (bk, p.config.bn))
    return ta, tb, ta


def grid(p: ListPlan) -> int:
    k = kernel_for(p)
    extra = EDIT_SMEM + (scale_smem(p.config) if p.scaling == "block" else 0)
    return resident_ctas(k, p.config, extra)


def launcher(p: ListPlan, template_row: list[int], problems_ptr: int, maps_ptr: int):
    """``fn(c_base=0)`` launching the plan on the device problem array at ``problems_ptr`` with this CTA map
    workspace (``grid(p) * 4 * MAP_BYTES`` bytes); C_g is written at ``c_base`` + the problem's C field."""
    key = (p, tuple(template_row), problems_ptr, maps_ptr)
    fn = _launchers.get(key)
    if fn is not None:
        return fn
    from tmakit.cuda.encode import encode_tensormap

    k = kernel_for(p)
    cfg = p.config
    maps = [encode_tensormap(t) for t in template_maps(p, template_row)]
    args = (*maps, ctypes.c_uint64(problems_ptr), ctypes.c_int32(p.groups), ctypes.c_uint64(maps_ptr))
    smem = smem_bytes(cfg) + EDIT_SMEM + (scale_smem(cfg) if p.scaling == "block" else 0)
    fn = ListLaunch(k, resident_ctas(k, cfg, smem - smem_bytes(cfg)), cfg.threads, args, smem)
    if len(_launchers) > 512:
        _launchers.clear()
    _launchers[key] = fn
    return fn


class ListLaunch:
    """``fn(c_base=0)``: the list kernel's launch with its last argument, the output base, set per call. A thread's
    first launch goes through :mod:`tmakit.cuda` (context, attributes, checks); later ones are its own packed
    ``cuLaunchKernelEx`` (:class:`tmakit.cuda.packed.FixedLaunch`) with the base stored in place: no lock, no
    thread sees another's base."""

    def __init__(self, kernel, grid: int, threads: int, args, smem: int):
        self.kernel, self.grid, self.threads, self.args, self.smem = kernel, grid, threads, tuple(args), smem
        self._fixed: dict = {}  # thread ident -> FixedLaunch

    def __call__(self, c_base: int = 0) -> None:
        fl = self._fixed.get(get_ident())
        if fl is not None:
            fl.set_u64(len(self.args), c_base)
            fl()
            return
        from tmakit.cuda.packed import FixedLaunch

        args = [*self.args, ctypes.c_uint64(c_base)]
        self.kernel(self.grid, self.threads, *args, smem=self.smem)
        if len(self._fixed) >= 64:  # threads come and go
            self._fixed.clear()
        self._fixed[get_ident()] = FixedLaunch(self.kernel, self.grid, self.threads, self.smem, args)


_launchers: dict = {}
