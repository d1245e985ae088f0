"""Which path ``tk.ops.gemm`` takes for a call that the TMA kernel cannot read as given, and the paths themselves.

The kernel reads A and B, and writes C, through 128-byte-swizzled tensor maps: each operand needs unit inner stride
(B: either one), a row pitch that is a multiple of 16 bytes and a 128-byte-aligned start (docs/HARDWARE.md §1).
``torch.matmul`` takes any strides, so a call that breaks these rules is not an error. Two correct paths remain:

- ``pad``: copy each offending operand into a scratch buffer whose rows are padded to 32 bytes (the tensor map keeps
  the true extent, so the kernel reads zeros past it and never the padding), run the kernel, and copy a padded
  result into the caller's tensor. The copies cost bytes; the kernel then runs at full speed.
- ``torch``: ``torch.matmul``. cuBLAS itself drops to much slower kernels when a row pitch is not 16-byte aligned
  (4.5-8x slower on an H200 at 1-8k per side), so padding wins once the product is large enough to hide the copies.

:func:`choose` compares the two by a cost model whose constants are measured (docs/GEMM.md, "Shapes the kernel
cannot read"). The user's tensors are never modified except ``out``, which receives the result either way.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..kernels.gemm import odd_pitch

__all__ = ["Repair", "not_for_the_kernel", "needs_repair", "choose", "slow_rows", "small_wins", "tile_fill",
           "padded_copy", "padded_empty", "torch_gemm"]

# cost model (seconds), measured on an H200 (docs/GEMM.md, "Shapes the kernel cannot read as given")
COPY_BYTES_PER_S = 2.2e12  # a strided torch copy into a padded buffer (bytes read + written); H100-safe
KERNEL_FLOPS_PER_S = 5.5e14  # the TMA kernel on aligned rows
UNALIGNED_SLOWDOWN = 4.0  # cuBLAS on rows that are not 16-byte aligned: 4.5-8x slower than on aligned rows
PAD_HOST_S = 90e-6  # host time of the padded path (copies, plan, launch): its floor per call
TORCH_HOST_S = 10e-6  # torch.matmul's
SMALL_FLOP = 1 << 31  # at or below: torch.matmul is faster than the kernel (slow_rows)
BIG_FLOP = 1 << 37  # below (and not tuned): cuBLAS measured faster on random shapes (slow_rows)
SMALL_K_MAX = 128  # small_wins: the small-problem kernel's K ...
SMALL_MN_MAX = 1 << 20  # ... outputs ...
SKINNY_M = 4096  # ... and tall-narrow limits (measured, docs/GEMM.md "Small problems")
MIN_FILL = 0.85  # 128x256 tiles x waves at least this full, else cuBLAS measured faster (slow_rows)


@dataclass(frozen=True)
class Repair:
    """Which operands a call must copy before the kernel can take it, and why (for ``last_path``)."""

    a: bool
    b: str  # "" (as given), "nk" (copy to K-major rows, as w.t()) or "kn" (copy to row-major (K, N))
    out: bool
    reasons: tuple[str, ...]
    cublas_slow: bool  # a row pitch / inner stride / 16-byte base that also sends cuBLAS to its slow kernels

    def __bool__(self) -> bool:
        return self.a or bool(self.b) or self.out


def not_for_the_kernel(a, b) -> str:
    """Why the kernel cannot take ``a @ b`` at all (then ``torch.matmul`` runs it)."""
    if not (a.is_cuda and b.is_cuda):
        return f"a and b are on {a.device} and {b.device}: the kernel runs on CUDA tensors (CPU tensors go to torch)"
    if a.device != b.device:
        return f"a is on {a.device}, b on {b.device}"
    if a.dim() != 2 or b.dim() != 2:
        return f"a is {a.dim()}-D and b {b.dim()}-D: the kernel takes 2-D operands (batched matmul goes to torch)"
    return f"a is {a.dtype} and b {b.dtype}: the kernel takes bfloat16 or float16, both the same"


def _rows_ok(shape, strides, ptr: int, eb: int) -> tuple[bool, bool]:
    """(TMA can read these rows, cuBLAS's fast kernels can) for a 2-D operand read as row-major."""
    r, c = shape
    s0, s1 = strides
    if c > 1 and s1 != 1:
        return False, False
    pitch_ok = r <= 1 or ((s0 * eb) % 16 == 0 and s0 >= c)  # one row: its stride is never used
    return pitch_ok and ptr % 128 == 0, pitch_ok and ptr % 16 == 0


def needs_repair(a, b, out, eb: int, eo: int) -> Repair:
    """Which of ``a`` (M, K), ``b`` (K, N) and ``out`` (M, N, or None) the kernel cannot read or write as given."""
    reasons, slow = [], False
    pa = int(a.data_ptr())
    tma_a, fast_a = _rows_ok(tuple(a.shape), tuple(a.stride()), pa, eb)
    if not tma_a:
        reasons.append(f"a (strides {tuple(a.stride())}, data_ptr % 128 = {pa % 128}) is not TMA-readable rows")
        slow |= not fast_a
    pb = int(b.data_ptr())
    tma_kn, fast_kn = _rows_ok(tuple(b.shape), tuple(b.stride()), pb, eb)
    tma_nk, fast_nk = _rows_ok(tuple(b.shape)[::-1], tuple(b.stride())[::-1], pb, eb)
    b_fix = ""
    if not (tma_kn or tma_nk):
        s0, s1 = (abs(int(s)) for s in b.stride())
        b_fix = "nk" if s0 <= s1 else "kn"
        reasons.append(f"b (strides {tuple(b.stride())}, data_ptr % 128 = {pb % 128}) is not TMA-readable rows")
        slow |= not (fast_kn or fast_nk)
    m, n = int(a.shape[0]), int(b.shape[1])
    whole = (n * eo) % 16 == 0  # TMA stores write whole 16-byte units of a row (kernels.gemm.check_store_rows)
    if out is not None:
        rows_o, fast_o = _rows_ok(tuple(out.shape), tuple(out.stride()), int(out.data_ptr()), eo)
    else:
        rows_o, fast_o = True, whole or m <= 1  # a fresh contiguous (M, N) result
    tma_o = rows_o and whole
    if not tma_o:
        reasons.append(f"the result's rows ({n} x {eo} bytes) are not a multiple of 16 bytes" if rows_o else
                       f"out (strides {tuple(out.stride())}) is not TMA-writable rows")
        slow |= not fast_o
    return Repair(not tma_a, b_fix, not tma_o, tuple(reasons), slow)


def slow_rows(p) -> str:
    """Why ``torch.matmul`` would run plan ``p`` faster than the kernel, or '' where the kernel is measured ahead
    (docs/GEMM.md, "Where the kernel runs"). A sweep of 438 random shapes on an H200 found the kernel at or above
    cuBLAS only on large problems whose 128x256 tiles fill whole waves with B K-major; elsewhere cuBLAS's
    shape-fitted tiles win (0.4-0.95x): problems at or below ``SMALL_FLOP``, B rows whose pitch is an odd multiple of
    16 bytes (TMA loads 20-45 % slower, "The cliff"), row-major B, and tiles or waves that are partly empty."""
    flop = 2 * p.m * p.n * p.k
    if flop <= SMALL_FLOP:
        return (f"small problem (2MNK = {flop} <= 2^31): cuBLAS's small kernels have less fixed "
                f"latency than the persistent TMA kernel; strict=True runs the kernel anyway")
    eb = 1 if p.in_dtype.startswith("float8") else 2
    rows = p.k if p.b_mn else p.n
    if odd_pitch((p.ldb * eb, rows)):
        return (f"b's rows are {p.ldb * eb} bytes apart, an odd multiple of 16: the kernel's TMA loads are 20-45 % "
                f"slower there (cuBLAS does not); strict=True runs the kernel anyway")
    fill = tile_fill(p.m, p.n)
    if flop < BIG_FLOP or p.b_mn or fill < MIN_FILL:
        what = ("b is row-major (K, N)" if p.b_mn else
                f"2MNK = {flop} < 2^37" if flop < BIG_FLOP else f"128x256 tiles x waves {fill:.0%} full")
        return (f"cuBLAS measured faster on this shape class ({what}; the kernel leads only with b K-major, "
                f"2MNK >= 2^37 and tiles x waves >= {MIN_FILL:.0%} full); strict=True, a config or "
                f"`tmakit tune gemm` runs the kernel")
    return ""


def small_wins(m: int, n: int, k: int) -> bool:
    """Whether the small-problem kernel (``tmakit.kernels.gemm_small``) runs ``m x n x k`` faster than cuBLAS:
    short K (its K loop runs on one CTA per tile), at most ``SMALL_MN_MAX`` outputs (past that cuBLAS's wider
    tiles store faster), and not tall and narrow (M > ``SKINNY_M``, N <= 64: 64-column tiles waste most of their
    work). Measured on random shapes, docs/GEMM.md "Small problems"."""
    return 1 <= k <= SMALL_K_MAX and m * n <= SMALL_MN_MAX and not (m > SKINNY_M and n <= 64)


def tile_fill(m: int, n: int, sms: int = 132) -> float:
    """The useful share of the work of (M, N) in 128x256 output tiles dealt in whole waves over ``sms`` SMs: the
    tiles' covered share of the output times the waves' occupied share."""
    tiles = -(-m // 128) * -(-n // 256)
    waves = -(-tiles // sms)
    return (m * n) / (tiles * 128 * 256) * tiles / (waves * sms)


def choose(m: int, n: int, k: int, eb: int, eo: int, rep: Repair) -> str:
    """``"pad"`` or ``"torch"``: the faster correct path by the cost model (module docstring)."""
    t_kernel = 2.0 * m * n * k / KERNEL_FLOPS_PER_S
    copied = (2 * m * k * eb if rep.a else 0) + (2 * k * n * eb if rep.b else 0) + (2 * m * n * eo if rep.out else 0)
    t_pad = max(PAD_HOST_S, t_kernel + copied / COPY_BYTES_PER_S)
    t_torch = max(TORCH_HOST_S, t_kernel * (UNALIGNED_SLOWDOWN if rep.cublas_slow else 1.0))
    return "pad" if t_pad < t_torch else "torch"


def padded_empty(torch, rows: int, cols: int, dtype, device):
    """A (rows, cols) view of a fresh buffer whose rows are padded to a multiple of 32 bytes (16 is TMA's rule; a
    pitch that is an odd multiple of 16 slows the kernel's loads, docs/GEMM.md) -- the caching allocator returns
    512-byte-aligned blocks, so the start is 128-byte aligned."""
    eb = dtype.itemsize
    pitch = -(-max(cols, 1) * eb // 32) * 32 // eb
    return torch.empty(rows, pitch, dtype=dtype, device=device)[:, :cols]


def padded_copy(torch, t):
    """``t`` (2-D) copied into :func:`padded_empty` rows."""
    v = padded_empty(torch, int(t.shape[0]), int(t.shape[1]), t.dtype, t.device)
    v.copy_(t)
    return v


def torch_gemm(torch, a, b, out, out_dtype):
    """``a @ b`` by torch in the requested output dtype, written straight into ``out`` when given (no temporary):
    fp32 from 16-bit inputs through ``torch.mm(out_dtype=)`` where torch has it, so the sum is not rounded to 16
    bits first."""
    od = out.dtype if out is not None else (out_dtype or a.dtype)
    if od == a.dtype or a.dim() != 2 or b.dim() != 2:
        if out is not None and od == a.dtype:
            return torch.matmul(a, b, out=out)
        r = torch.matmul(a, b)
        r = r if r.dtype == od else r.to(od)
    else:
        try:
            if out is not None:
                return torch.mm(a, b, out_dtype=od, out=out)
            return torch.mm(a, b, out_dtype=od)
        except (TypeError, RuntimeError):
            r = torch.matmul(a.float(), b.float()).to(od)
    if out is None:
        return r
    return out.copy_(r)
