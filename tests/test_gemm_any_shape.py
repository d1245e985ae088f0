"""``tk.ops.gemm`` takes every matmul that ``torch.matmul`` takes (2-D): any M, N, K (0 and 1 included), any
strides, bf16/fp16 in, bf16/fp16/fp32 out; the path it took is in ``tk.ops.last_path``; ``strict=True`` raises where
the TMA kernel cannot take the call as given. GPU tests check results against an fp32 reference; CPU tests check
the routing rules and the CPU fallback."""

from __future__ import annotations

import random

import pytest

torch = pytest.importorskip("torch")

import tmakit as tk  # noqa: E402
from gemm_operands import KINDS  # noqa: E402
from gemm_operands import operand as _operand  # noqa: E402
from tmakit.ops import gemm_route as route  # noqa: E402

DT = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def _rel(c, ref):
    return ((c.float() - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def _ref(a, b):
    return a.double().matmul(b.double()).float()




def _dim(rng):
    r = rng.random()
    if r < 0.08:
        return 0
    if r < 0.18:
        return 1
    v = rng.randrange(2, 130) if r < 0.5 else int(round(2 ** rng.uniform(7, 11.5)))
    return max(8, v - v % 8) if rng.random() < 0.6 else v  # 16-byte rows more often than chance


def _cases(n, seed):
    rng = random.Random(seed)
    for _ in range(n):
        m, nn, k = _dim(rng), _dim(rng), _dim(rng)
        dt = rng.choice(("bf16", "fp16"))
        odt = rng.choice((dt, dt, "fp32"))
        ka = rng.choice(("contig",) * 3 + KINDS)
        kb = rng.choice(("contig", "colmajor") * 2 + KINDS)
        with_out = rng.random() < 0.3
        yield m, nn, k, dt, odt, ka, kb, with_out


# ---------------------------------------------------------------------------------------------------- CPU: routing
class _T:
    """A stand-in with the tensor attributes the routing and the plan read."""

    def __init__(self, shape, strides, ptr=0, dtype=torch.bfloat16):
        self.shape, self._s, self._p, self.dtype = shape, strides, ptr, dtype

    def stride(self):
        return self._s

    def data_ptr(self):
        return self._p


def test_aligned_operands_need_no_repair():
    rep = route.needs_repair(_T((64, 128), (128, 1)), _T((128, 256), (1, 128)), None, 2, 2)
    assert not rep and rep.reasons == ()


@pytest.mark.parametrize("a,b,want", [
    (_T((64, 100), (100, 1)), _T((100, 256), (1, 100)), "a"),  # A's pitch 200 B
    (_T((64, 128), (128, 1)), _T((128, 250), (1, 130)), "b"),  # B (K-major) pitch 260 B
    (_T((64, 128), (1, 64)), _T((128, 256), (1, 128)), "a"),  # A column-major
    (_T((64, 128), (128, 1), 64), _T((128, 256), (1, 128)), "a"),  # A starts 64 B into a line
])
def test_repair_names_the_operand(a, b, want):
    rep = route.needs_repair(a, b, None, 2, 2)
    assert rep and (rep.a if want == "a" else bool(rep.b))
    assert any(r.startswith(want) for r in rep.reasons)


def test_unaligned_result_rows_need_a_padded_result():
    rep = route.needs_repair(_T((64, 128), (128, 1)), _T((128, 250), (1, 128)), None, 2, 2)
    assert rep.out and not rep.a and not rep.b and rep.cublas_slow


def test_single_row_strides_are_never_read():
    rep = route.needs_repair(_T((1, 128), (7, 1)), _T((128, 256), (1, 128)), None, 2, 2)
    assert not rep


def test_cost_model_small_goes_to_torch_large_unaligned_pads():
    rep = route.Repair(True, "", False, ("a",), True)
    assert route.choose(32, 32, 33, 2, 2, rep) == "torch"
    assert route.choose(4096, 4096, 4095, 2, 2, rep) == "pad"
    fine_for_cublas = route.Repair(True, "", False, ("a",), False)  # only the 128-byte base: cuBLAS is fast
    assert route.choose(4096, 4096, 4096, 2, 2, fine_for_cublas) == "torch"


@pytest.mark.parametrize("b,b_mn", [
    (_T((1, 104), (104, 1)), 1),  # K = 1, one row-major row of B: its stride is never read
    (_T((1, 104), (1, 1)), 1),  # K = 1 as the transpose of a (104, 1) column
    (_T((104, 1), (1, 104)), 0),  # N = 1: one K-major column (the result's 2-byte rows refuse TMA stores, below)
])
def test_single_row_or_column_b_plans_without_a_copy(b, b_mn):
    from tmakit.kernels import gemm as gk

    k, n = b.shape
    a = _T((64, k), (k, 1)) if k > 1 else _T((64, 1), (8, 1))
    out = _T((64, n), (-(-n // 8) * 8, 1), 1 << 20)
    if n * 2 % 16:
        with pytest.raises(gk.GemmError, match="16-byte units"):
            gk.plan(a, b, out)
        return
    p = gk.plan(a, b, out)
    assert p.b_mn == b_mn and (p.ldb * 2) % 16 == 0


@pytest.mark.parametrize("m,n,pitch", [(2, 100, 104), (1, 3, 8), (64, 9, 16), (1, 1, 8)])
def test_results_whose_rows_end_inside_a_16_byte_unit_are_not_tma_stored(m, n, pitch):
    """TMA stores write whole 16-byte units of a row (docs/HARDWARE.md §3, measured on the H200: a 100-column bf16
    view of 104-column rows got columns 100-103 zeroed): the kernels refuse such a result, and a default call repairs
    it (padded scratch output or torch), whatever its pitch -- also for a one-row result."""
    from tmakit.kernels import gemm as gk
    from tmakit.kernels import gemm_fp8 as gf

    a, b = _T((m, 64), (64, 1)), _T((64, n), (1, 64))
    out = _T((m, n), (pitch, 1), 1 << 20)
    with pytest.raises(gk.GemmError, match="16-byte units"):
        gk.plan(a, b, out)
    with pytest.raises(gk.GemmError, match="16-byte units"):
        gk.plan(a, b)
    rep = route.needs_repair(a, b, out, 2, 2)
    assert rep.out and "not a multiple of 16 bytes" in " ".join(rep.reasons)
    # the repair's own scratch (route.padded_empty rows: the pitch's padding is tmakit's) takes the whole units
    scratch = _T((m, n), (-(-n * 2 // 32) * 16, 1), 1 << 20)
    assert gk.plan(a, b, scratch, padded_rows=True).n == n
    from fake_tensors import FakeTensor

    e4 = torch.float8_e4m3fn
    qa = FakeTensor((m, 64), (64, 1), dtype=e4, element_size=1)
    qb = FakeTensor((64, n), (1, 64), dtype=e4, element_size=1)
    one = FakeTensor((), (), dtype=torch.float32, element_size=4)
    with pytest.raises(gk.GemmError, match="16-byte units"):
        gf.plan_fp8(qa, qb, one, one, out=FakeTensor((m, n), (pitch, 1), 1 << 20))
    from tmakit.kernels import gemm_grouped as gg

    bg = FakeTensor((4, 64, n), (64 * n, 1, 64))  # four K-major experts
    with pytest.raises(gk.GemmError, match="16-byte units"):
        gg.plan_grouped(FakeTensor((m, 64), (64, 1)), bg, 4, out=FakeTensor((m, n), (pitch, 1), 1 << 20))


def test_b_rows_an_odd_multiple_of_16_bytes_go_to_torch():
    from tmakit.kernels import gemm as gk

    slow = gk.plan(_T((2048, 3000), (3000, 1)), _T((3000, 2048), (1, 3000)))  # 6000 B = 187.5 x 32
    fast = gk.plan(_T((4096, 8192), (8192, 1)), _T((8192, 4096), (1, 8192)))
    small = gk.plan(_T((256, 3008), (3008, 1)), _T((3008, 512), (1, 3008)))
    assert "odd multiple of 16" in route.slow_rows(slow) and route.slow_rows(fast) == ""
    assert "small problem" in route.slow_rows(small)


def test_kernel_runs_by_default_only_where_measured_ahead():
    """b K-major, 2MNK >= 2^37 and 128x256 tiles x waves >= 85 % full: the kernel; else cuBLAS (docs/GEMM.md)."""
    from tmakit.kernels import gemm as gk

    def why(m, n, k, b_mn=False):
        b = _T((k, n), (n, 1)) if b_mn else _T((k, n), (1, k))
        return route.slow_rows(gk.plan(_T((m, k), (k, 1)), b))

    assert why(4096, 4096, 4096) == "" and why(8192, 7168, 2048) == ""
    assert "b is row-major" in why(4096, 4096, 4096, b_mn=True)
    assert "2MNK" in why(2048, 2048, 4096)  # 2^35
    assert "full" in why(1024, 1024, 65536)  # 32 tiles on 132 SMs
    assert "full" in why(4352, 4096, 8192)  # 34 x 16 = 544 tiles: a fifth wave, 544 / 660 busy
    assert abs(route.tile_fill(4096, 4096) - 512 / 528) < 1e-12


def test_cpu_tensors_fall_back_and_say_why():
    g = torch.Generator().manual_seed(0)
    a = torch.randn(5, 7, generator=g).bfloat16()
    b = torch.randn(7, 3, generator=g).bfloat16()
    c = tk.ops.gemm(a, b)
    assert c.shape == (5, 3) and c.dtype == torch.bfloat16
    assert tk.ops.last_path.startswith("torch:") and "CPU" in tk.ops.last_path
    assert _rel(c, _ref(a, b)) < 1e-2
    with pytest.raises(tk.ops.GemmError, match="CPU"):
        tk.ops.gemm(a, b, strict=True)


def test_cpu_fp32_out_and_out_tensor():
    a = torch.randn(4, 6).half()
    b = torch.randn(6, 2).half()
    out = torch.full((4, 2), float("nan"))
    r = tk.ops.gemm(a, b, out=out)
    assert r is out and _rel(out, _ref(a, b)) < 1e-3


def test_cpu_bad_shapes_still_raise():
    with pytest.raises((tk.ops.GemmError, RuntimeError)):
        tk.ops.gemm(torch.randn(4, 6).half(), torch.randn(5, 2).half())


# ---------------------------------------------------------------------------------------------------- GPU
@pytest.mark.gpu
@pytest.mark.parametrize("seed", range(4))
def test_random_shapes_and_layouts_match_fp32(seed):
    """>= 300 random calls over 4 seeds: shapes with 0 and 1 in every position, aligned and unaligned rows, strided
    and misaligned views, with and without out; none raises, every result within 16-bit tolerance."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    paths = {}
    for m, n, k, dt, odt, ka, kb, with_out in _cases(80, seed):
        a = _operand(m, k, ka, DT[dt], "cuda", g)
        b = _operand(k, n, kb, DT[dt], "cuda", g)
        out = torch.full((m, n), float("nan"), dtype=DT[odt], device="cuda") if with_out else None
        od = None if with_out else DT[odt]
        try:  # the kernel itself wherever it can take the call (the default sends small problems to torch)
            c = tk.ops.gemm(a, b, out=out, out_dtype=od, strict=True)
        except tk.ops.GemmError:
            c = tk.ops.gemm(a, b, out=out, out_dtype=od)
        where = f"{m}x{n}x{k} {dt}->{odt} a={ka} b={kb} out={with_out}: {tk.ops.last_path}"
        assert c.shape == (m, n) and c.dtype == DT[odt], where
        if with_out:
            assert c is out, where
        paths[tk.ops.last_path.split(":")[0]] = paths.get(tk.ops.last_path.split(":")[0], 0) + 1
        if m and n:
            ref = _ref(a, b)
            if k == 0:
                assert torch.all(c == 0), where
            else:
                assert torch.isfinite(c).all(), where
                assert _rel(c, ref) < (1e-2 if dt == "bf16" else 2e-3), where
    assert paths.get("tma", 0) >= 5 and len(paths) >= 2, paths  # the kernel and at least one other path


@pytest.mark.gpu
def test_strict_raises_where_the_kernel_cannot_take_the_call():
    a = torch.randn(256, 100, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(100, 256, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(tk.ops.GemmError, match="a.stride"):
        tk.ops.gemm(a, b, strict=True)
    c = tk.ops.gemm(a, b)
    assert _rel(c, _ref(a, b)) < 1e-2


@pytest.mark.gpu
def test_large_unaligned_k_takes_the_padded_kernel():
    a = torch.randn(2048, 4095, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4095, 2048, device="cuda", dtype=torch.bfloat16)
    c = tk.ops.gemm(a, b)
    assert tk.ops.last_path.startswith("tma+pad"), tk.ops.last_path
    assert _rel(c, _ref(a, b)) < 1e-2


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k,kw", [(4093, 2039, 1536, {}), (1287, 1303, 4096, {"split": 2, "split_mode": "fixup"}),
                                      (1, 2039, 4096, {})])
def test_unaligned_n_takes_a_padded_scratch_output(m, n, k, kw):
    """N * 2 bytes not a multiple of 16: the kernel cannot store into an (M, N) result (whole 16-byte units), so a
    default call (or one with tuning knobs, not strict) runs it into padded scratch rows, or torch, and returns the
    (M, N) result; out= keeps its padding. Found by tools/fuzz_ops.py: both calls raised GemmError."""
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    c = tk.ops.gemm(a, b, **kw)
    assert c.shape == (m, n) and _rel(c, _ref(a, b)) < 1e-2, tk.ops.last_path
    buf = torch.full((m, n + 9), 7.0, device="cuda", dtype=torch.bfloat16)
    c = tk.ops.gemm(a, b, out=buf[:, :n], **kw)
    assert _rel(c, _ref(a, b)) < 1e-2 and torch.all(buf[:, n:] == 7.0), tk.ops.last_path


@pytest.mark.gpu
def test_user_tensors_are_not_modified():
    a = torch.randn(300, 1001, device="cuda", dtype=torch.float16)
    b = torch.randn(1001, 517, device="cuda", dtype=torch.float16)
    a0, b0 = a.clone(), b.clone()
    tk.ops.gemm(a, b)
    assert torch.equal(a, a0) and torch.equal(b, b0)
