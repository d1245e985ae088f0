"""``tk.ops.gemm_list``: the ptr-array grouped GEMM (problems with their own M, N, K, pointers and strides; the
kernel rewrites its tensor maps on the device per problem). CPU: the plan's rules and the torch path; GPU (marked):
random problem lists against fp32, many more problems than CTAs (every CTA switches maps many times), in a CUDA
graph."""

from __future__ import annotations

import random

import pytest

torch = pytest.importorskip("torch")

import tmakit as tk  # noqa: E402
from fake_tensors import FakeTensor as _T  # noqa: E402
from tmakit.kernels import gemm_ptr_array as kp  # noqa: E402
from tmakit.kernels.gemm import GemmError  # noqa: E402


def test_plan_and_problem_rows():
    As = [_T((100, 64), (64, 1)), _T((0, 64), (64, 1)), _T((7, 128), (128, 1))]
    Bs = [_T((64, 32), (1, 64)), _T((64, 32), (1, 64)), _T((128, 48), (1, 128))]
    outs = [_T((100, 32), (32, 1)), _T((0, 32), (32, 1)), _T((7, 48), (48, 1))]
    p = kp.plan_list(As, Bs, outs)
    assert (p.groups, p.b_mn, p.first, p.config.bm) == (3, 0, 0, 64)  # 107 rows over 3 problems: 64-row tiles
    rows = kp.problem_rows(As, Bs, outs)
    assert rows[0][3:] == [100, 32, 64, 64, 64, 32] + [0] * 6 and rows[1][5] == 0 and rows[2][3:6] == [7, 48, 128]
    assert kp.kernel_name(p).startswith("tmakit_gemm_ptr_array<0, 0, 64, 128, 8, 0, 1,")


@pytest.mark.parametrize("bad,match", [
    ("layout", "layout"), ("pitch", "multiples of 16 bytes"), ("align", "128-byte aligned"), ("shape", "compose"),
    ("column", "layout"),  # one column of a row-major list is a K-major read: one launch cannot mix them
])
def test_plan_rules(bad, match):
    As = [_T((10, 64), (64, 1)), _T((10, 64), (64, 1))]
    Bs = [_T((64, 32), (1, 64)), _T((64, 32), (1, 64))]
    outs = [_T((10, 32), (32, 1)), _T((10, 32), (32, 1))]
    if bad == "layout":
        Bs[1] = _T((64, 32), (32, 1))
    elif bad == "pitch":
        As[1] = _T((10, 60), (60, 1))
        Bs[1] = _T((60, 32), (1, 60))
    elif bad == "column":
        Bs = [_T((64, 32), (32, 1)), _T((64, 1), (1, 1))]
        outs[1] = _T((10, 1), (8, 1))
    elif bad == "align":
        As[1] = _T((10, 64), (64, 1), ptr=(1 << 20) + 64)
    else:
        Bs[1] = _T((32, 32), (1, 32))
    with pytest.raises(GemmError, match=match):
        kp.plan_list(As, Bs, outs)


def test_outputs_at_any_row_pitch_and_start_plan():
    """C has no tensor map: outputs at an odd row pitch and an odd element start plan (the stores check alignment)."""
    As, Bs = [_T((10, 64), (64, 1))], [_T((64, 32), (1, 64))]
    for od, eo in ((torch.float32, 4), (torch.bfloat16, 2)):
        outs = [_T((10, 32), (33, 1), dtype=od, element_size=eo, ptr=(1 << 20) + eo)]
        assert kp.plan_list(As, Bs, outs).out_dtype == str(od).split(".")[1]
    with pytest.raises(GemmError, match="contiguous rows"):
        kp.plan_list(As, Bs, [_T((10, 32), (1, 10))])


def test_cpu_lists_run_dense_calls():
    """Problems the kernel cannot take (here CPU tensors) run as tk.ops.gemm calls; last_path names the first and
    why; strict raises; shapes that do not compose raise either way."""
    As = [torch.randn(5, 8), torch.randn(3, 16), torch.randn(0, 16), torch.randn(2, 0)]
    Bs = [torch.randn(8, 4), torch.randn(16, 2), torch.randn(16, 3), torch.randn(0, 5)]
    got = tk.ops.gemm_list(As, Bs)
    assert tk.ops.last_path.startswith("tk.ops.gemm x4; problem 0 and 3 more by tk.ops.gemm: tensors on ['cpu']"), \
        tk.ops.last_path
    assert all(torch.allclose(g, a @ b) for g, a, b in zip(got, As, Bs))
    assert got[3].shape == (2, 5) and not got[3].any()
    with pytest.raises(GemmError, match="strict=True"):
        tk.ops.gemm_list(As, Bs, strict=True)
    with pytest.raises(GemmError, match="problem 1: shapes do not compose"):
        tk.ops.gemm_list(As[:2], [Bs[0], Bs[0]])
    with pytest.raises(GemmError, match=r"problem 0: out must be \(5, 4\)"):
        tk.ops.gemm_list(As[:1], Bs[:1], out=[torch.empty(4, 5)])


def test_plan_rules_dtypes_and_problem_fit():
    """One launch runs one dtype pair; problem_fit names each problem's rule break and its launch key."""
    As = [_T((10, 64), (64, 1)), _T((10, 64), (64, 1), dtype=torch.float16)]
    Bs = [_T((64, 32), (1, 64)), _T((64, 32), (1, 64), dtype=torch.float16)]
    outs = [_T((10, 32), (32, 1)), _T((10, 32), (32, 1), dtype=torch.float16)]
    with pytest.raises(GemmError, match="problem 1: a, b and out must have problem 0's dtypes"):
        kp.plan_list(As, Bs, outs)
    assert kp.problem_fit(As[0], Bs[0], outs[0]) == ("", ("bfloat16", 0, "bfloat16"))
    assert kp.problem_fit(As[1], Bs[1], outs[1]) == ("", ("float16", 0, "float16"))
    assert kp.problem_fit(As[0], _T((64, 32), (32, 1)), outs[0]) == ("", ("bfloat16", 1, "bfloat16"))
    assert kp.problem_fit(_T((10, 0), (1, 1)), _T((0, 32), (1, 1)), outs[0])[1] == ("bfloat16", None, "bfloat16")
    why, _ = kp.problem_fit(_T((10, 60), (60, 1)), _T((60, 32), (1, 60)), outs[0])
    assert "multiples of 16 bytes" in why
    why, _ = kp.problem_fit(As[0], Bs[1], outs[0])
    assert "bfloat16 or float16" in why


def _err(o, a, b) -> float:
    """Relative error of one result against the fp32 product (the largest magnitude where the product is zero)."""
    ref = a.float() @ b.float()
    if ref.numel() == 0:
        return 0.0
    return float((o.float() - ref).norm() / ref.norm().clamp_min(1e-30)) if ref.abs().sum() else \
        float(o.float().abs().max())


def _problems(rng, count, dtype, b_mn):
    As, Bs = [], []
    for _ in range(count):
        m = rng.choice([0, 1, 5, 64, 100, 129, 300, 1000])
        n = rng.choice([8, 24, 72, 128, 200, 256, 520])  # (N = 1 reads only as K-major: test_plan_rules)
        k = 8 * rng.randint(0, 96) if rng.random() < 0.9 else 8
        As.append(torch.randn(m, k, device="cuda", dtype=dtype))
        Bs.append(torch.randn(k, n, device="cuda", dtype=dtype) if b_mn else
                  torch.randn(n, k, device="cuda", dtype=dtype).t())
    return As, Bs


@pytest.mark.gpu
@pytest.mark.parametrize("seed", range(3))
def test_random_problem_lists_match_fp32(seed):
    rng = random.Random(seed)
    for _ in range(25):
        count = rng.choice([1, 2, 7, 40, 400])  # 400: every CTA switches its maps a few times
        dtype = rng.choice([torch.bfloat16, torch.float16])
        b_mn = rng.random() < 0.4
        As, Bs = _problems(rng, count, dtype, b_mn)
        od = torch.float32 if rng.random() < 0.2 else dtype
        outs = [torch.full((a.shape[0], b.shape[1]), float("nan"), device="cuda", dtype=od) for a, b in zip(As, Bs)]
        tk.ops.gemm_list(As, Bs, out=outs)
        work = sum(min(a.shape[0], a.shape[1], b.shape[1]) > 0 for a, b in zip(As, Bs))
        assert tk.ops.last_path == ("tk.ops.gemm x1" if work == 1 else "tma:ptr-array"), tk.ops.last_path
        for g, (a, b, o) in enumerate(zip(As, Bs, outs)):
            err = _err(o, a, b)
            assert err < 1e-2, f"problem {g} of {count}: {tuple(a.shape)} x {tuple(b.shape)} b_mn={b_mn}: {err}"


@pytest.mark.gpu
@pytest.mark.parametrize("od", [torch.float32, torch.bfloat16, torch.float16])
def test_outputs_at_an_odd_pitch_and_start(od):
    """Outputs that are views of a padded buffer (row pitch N + 3, first element one past a row start): column pairs
    at unaligned addresses are stored one element at a time (a paired store there faulted: misaligned address); the
    padding around each view stays untouched."""
    rng = random.Random(9)
    As, Bs = _problems(rng, 12, torch.bfloat16, False)
    bufs, outs = [], []
    for a, b in zip(As, Bs):
        m, n = a.shape[0], b.shape[1]
        buf = torch.full((m + 1, n + 3), float("nan"), device="cuda", dtype=od)
        bufs.append(buf)
        outs.append(buf[1:, 1:n + 1])
    tk.ops.gemm_list(As, Bs, out=outs, strict=True)
    torch.cuda.synchronize()
    assert tk.ops.last_path == "tma:ptr-array", tk.ops.last_path
    for g, (a, b, o, buf) in enumerate(zip(As, Bs, outs, bufs)):
        n = b.shape[1]
        assert bool(buf[0].isnan().all() and buf[:, 0].isnan().all() and buf[:, n + 1:].isnan().all()), g
        ref = a.float() @ b.float()
        if ref.numel() and ref.abs().sum():
            assert float((o.float() - ref).norm() / ref.norm()) < 1e-2, g


@pytest.mark.gpu
def test_gemm_list_in_a_cuda_graph():
    rng = random.Random(5)
    As, Bs = _problems(rng, 30, torch.bfloat16, False)
    outs = tk.ops.gemm_list(As, Bs)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        tk.ops.gemm_list(As, Bs, out=outs)
    for a in As:
        a.copy_(torch.randn_like(a))
    for o in outs:
        o.fill_(float("nan"))
    g.replay()
    torch.cuda.synchronize()
    for a, b, o in zip(As, Bs, outs):
        ref = a.float() @ b.float()
        if ref.numel() and ref.abs().sum():
            assert float((o.float() - ref).norm() / ref.norm()) < 1e-2


def test_problems_that_fill_the_gpu_alone_run_alone():
    """A problem with a K to reduce and either 2MNK >= ALONE_FLOP or 128x256 tiles that fill every SM on its own
    runs as its own tk.ops.gemm call; smaller ones, and K = 0, stay in the list."""
    from tmakit.ops.grouped import ALONE_FLOP, alone_problems

    def t(*shape):
        return torch.empty(*shape, device="meta")

    As = [t(2048, 1024), t(100, 64), t(1536, 64), t(4096, 0), t(1408, 64), t(2048, 1023)]
    Bs = [t(1024, 2048), t(64, 200), t(64, 2816), t(0, 4096), t(64, 2816), t(1023, 2048)]
    outs = [t(a.shape[0], b.shape[1]) for a, b in zip(As, Bs)]
    assert 2 * 2048 * 2048 * 1024 == ALONE_FLOP
    # 2^33 flop; small; 12 x 11 = 132 tiles (exactly every SM); K = 0; 11 x 11 = 121 tiles; just under 2^33
    assert alone_problems(As, Bs, outs, sms=132) == [0, 2]


@pytest.mark.gpu
def test_lists_with_large_problems_run_them_alone():
    """Large problems of a default call run as dense calls after the list's launch, the rest in the list; strict
    and config keep every problem in the list kernel; a list of only large problems runs none in the list."""
    shapes = [(2048, 4224, 512, False), (100, 200, 64, False), (60, 72, 128, False), (1500, 4096, 320, True),
              (300, 520, 96, True), (8, 256, 64, True)]
    As = [torch.randn(m, k, device="cuda", dtype=torch.bfloat16) for m, n, k, _ in shapes]
    Bs = [torch.randn(k, n, device="cuda", dtype=torch.bfloat16) if b_mn else
          torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t() for m, n, k, b_mn in shapes]
    for kw, path in ((dict(), "tma:ptr-array+1 alone"), (dict(strict=True), "tma:ptr-array")):
        for b_mn in (False, True):  # the list kernel takes one B layout per list
            idx = [g for g, s in enumerate(shapes) if s[3] == b_mn]
            A, B = [As[g] for g in idx], [Bs[g] for g in idx]
            outs = [torch.full((a.shape[0], b.shape[1]), float("nan"), device="cuda", dtype=torch.float32)
                    for a, b in zip(A, B)]
            tk.ops.gemm_list(A, B, out=outs, **kw)
            assert tk.ops.last_path == path, (kw, b_mn, tk.ops.last_path)
            for a, b, o in zip(A, B, outs):
                ref = a.float() @ b.float()
                assert float((o - ref).norm() / ref.norm()) < 1e-2
    big = [As[0], As[0]]
    outs = tk.ops.gemm_list(big, [Bs[0], Bs[0]])
    assert tk.ops.last_path == "tk.ops.gemm x2"
    assert all(float((o.float() - As[0].float() @ Bs[0].float()).norm()) < 1e-2 *
               float((As[0].float() @ Bs[0].float()).norm()) for o in outs)


@pytest.mark.gpu
def test_mixed_lists_launch_per_kind_and_run_rule_breakers_as_dense_calls():
    """A list mixing dtypes, B layouts and output dtypes launches the kernel once per kind; a problem the kernel
    cannot take (120-byte rows, CPU tensors) runs as a tk.ops.gemm call while the rest stays in the kernel; the
    cached second call (new data, same tensors) replays all of it; strict raises."""
    rng = random.Random(3)
    A1, B1 = _problems(rng, 9, torch.bfloat16, False)
    A2, B2 = _problems(rng, 7, torch.bfloat16, True)
    A3, B3 = _problems(rng, 5, torch.float16, False)
    odd = (torch.randn(40, 60, device="cuda", dtype=torch.bfloat16), torch.randn(60, 72, device="cuda",
                                                                                 dtype=torch.bfloat16))
    cpu = (torch.randn(6, 16), torch.randn(16, 10))
    As = A1[:4] + [odd[0]] + A2 + A3 + [cpu[0]] + A1[4:]
    Bs = B1[:4] + [odd[1]] + B2 + B3 + [cpu[1]] + B1[4:]
    ods = [torch.float32 if g < 4 else a.dtype for g, a in enumerate(As)]
    outs = [torch.full((a.shape[0], b.shape[1]), float("nan"), device=a.device, dtype=od)
            for a, b, od in zip(As, Bs, ods)]
    import collections

    kinds = collections.Counter(kp.problem_fit(a, b, o)[1] for a, b, o in zip(As, Bs, outs) if a.is_cuda and min(
        a.shape[0], a.shape[1], b.shape[1]) > 0 and a is not odd[0])
    launches, single = sum(v > 1 for v in kinds.values()), sum(v == 1 for v in kinds.values())
    assert launches >= 3
    for round_ in range(2):
        tk.ops.gemm_list(As, Bs, out=outs)
        path = tk.ops.last_path
        assert path.startswith(f"tma:ptr-array x{launches}+{2 + single} alone; problem 4 and 1 more by tk.ops.gemm: "
                               "row pitches"), path
        for g, (a, b, o) in enumerate(zip(As, Bs, outs)):
            err = _err(o, a, b)
            assert err < 1e-2, (round_, g, tuple(a.shape), tuple(b.shape), err)
        for a, o in zip(As, outs):
            a.copy_(torch.randn_like(a))
            o.fill_(float("nan"))
    with pytest.raises(GemmError, match="problem 4: row pitches"):
        tk.ops.gemm_list(As, Bs, out=outs, strict=True)


# ---------------------------------------------------------------------------------------------------------------
# fp8 (tk.ops.scaled_gemm_list)

E4, E5 = torch.float8_e4m3fn, torch.float8_e5m2


@pytest.mark.parametrize("scaling, fast, cfg, code", [
    ("tensor", False, "n192_s4_c1", 2), ("row", False, "m64_n128_s8_c1", 3), ("tensor", True, "n256_s4_c1", 4),
    ("row", True, "m64_n128_s8_c1_ov1", 5), ("block", False, "n192_s4_c1", 2), ("block", False, "m64_n128_s8_c1", 5)])
def test_fp8_list_kernels_compile_with_qgmma_and_device_side_maps(scaling, fast, cfg, code):
    """The fp8 ptr-array kernel: QGMMA of the list's types, TMA loads through maps it rewrites on the device
    (tensormap.replace, the proxy fences), nothing spilled in the mainloop."""
    from sass_checks import SASS_TYPES, fp8_sass
    from tmakit.kernels.gemm_fp8 import CONFIGS

    c = CONFIGS[cfg]
    p = kp.ListPlan(3, "float8_e5m2" if code >= 4 else "float8_e4m3fn", "bfloat16", c, 0, 0,
                    "float8_e5m2" if code % 2 else "float8_e4m3fn", scaling, fast)
    assert p.in_code == code
    text, ops, kinds = fp8_sass("gemm_ptr_array.cu", kp.kernel_name(p))
    assert kinds == {(str(c.bn), SASS_TYPES[code])}, kinds
    assert ops["UTMALDG"] > 0 and ops["UTMASTG"] == 0  # C goes out with plain stores
    assert "UTMACCTL.IV" in text and "UTMACCTL.PF" in text  # the rewritten maps acquired, the templates prefetched
    lines = text.splitlines()
    mma = [i for i, ln in enumerate(lines) if "QGMMA" in ln]
    assert not any("LDL" in ln or "STL" in ln for ln in lines[mma[0]:mma[-1]])


def _fp8_problem(rng, m, n, k, scaling, ta=E4, tb=E4, dev="cuda"):
    a = (torch.randn(m, k, device=dev) * 2).to(ta)
    b = (torch.randn(n, k, device=dev) * 2).to(tb).t()  # K-major, as fp8 wgmma reads it
    if scaling == "tensor":
        sa, sb = torch.rand((), device=dev) + 0.5, torch.rand((), device=dev) + 0.5
    elif scaling == "row":
        sa, sb = torch.rand(m, 1, device=dev) + 0.5, torch.rand(1, n, device=dev) + 0.5
    else:  # block-wise: 1x128 of A, 128x128 of w = b.t()
        kb, nb = -(-k // 128), -(-n // 128)
        sa, sb = torch.rand(m, kb, device=dev) + 0.5, torch.rand(nb, kb, device=dev) + 0.5
    return a, b, sa, sb


def _fp8_ref(a, b, sa, sb):
    m, k = a.shape
    n = b.shape[1]
    kb, nb = -(-k // 128), -(-n // 128)
    if tuple(sa.shape) == (m, kb) and tuple(sb.shape) == (nb, kb) and tuple(sb.shape) != (1, n):  # block-wise
        ea = sa.double().repeat_interleave(128, dim=1)[:, :k]
        eb = sb.double().repeat_interleave(128, dim=0).repeat_interleave(128, dim=1)[:n, :k]
        return (a.double() * ea) @ (b.double().t() * eb).t()
    return (a.double() @ b.double()) * sa.double() * sb.double()


def _fp8_err(o, ref) -> float:
    if ref.numel() == 0:
        return 0.0
    return float((o.double() - ref).norm() / ref.norm().clamp_min(1e-30)) if ref.abs().sum() else \
        float(o.double().abs().max())


def test_fp8_lists_on_the_cpu_run_scaled_mm_per_problem():
    rng = random.Random(1)
    probs = [_fp8_problem(rng, m, n, k, sc, dev="cpu") for m, n, k, sc in ((5, 16, 32, "tensor"), (3, 8, 64, "row"))]
    outs = tk.ops.scaled_gemm_list(*(list(x) for x in zip(*probs)))
    assert tk.ops.last_path.startswith("tk.ops.scaled_mm x2; problem 0 and 1 more by tk.ops.scaled_mm: tensors on")
    assert all(_fp8_err(o, _fp8_ref(*p)) < 1e-2 for o, p in zip(outs, probs))
    with pytest.raises(GemmError, match="strict=True"):
        tk.ops.scaled_gemm_list(*(list(x) for x in zip(*probs)), strict=True)
    with pytest.raises(ValueError, match="as many"):
        tk.ops.scaled_gemm_list([probs[0][0]], [probs[0][1]], [], [])


@pytest.mark.gpu
@pytest.mark.parametrize("seed", range(3))
def test_random_fp8_lists_match_the_dequantized_product(seed):
    """Random fp8 lists (empty problems, M_g = 1, K_g not a multiple of the 128-deep slab, both scalings, both
    accumulations, every type pair, bf16 / fp16 / fp32 out) in one launch against the fp64 product of the
    dequantized operands."""
    rng = random.Random(100 + seed)
    for _ in range(12):
        count = rng.choice([1, 3, 17, 120])
        scaling = rng.choice(["tensor", "row", "block"])
        fast = scaling != "block" and rng.random() < 0.3
        ta, tb = rng.choice([E4, E5]), rng.choice([E4, E5])
        od = rng.choice([torch.bfloat16, torch.float16, torch.float32])
        probs = []
        for _ in range(count):
            m = rng.choice([0, 1, 7, 64, 100, 129, 300, 700])
            n = 16 * rng.randint(1, 40)
            k = 16 * rng.randint(0, 80) if rng.random() < 0.95 else 16
            probs.append(_fp8_problem(rng, m, n, k, scaling, ta, tb))
        As, Bs, SA, SB = (list(x) for x in zip(*probs))
        outs = [torch.full((a.shape[0], b.shape[1]), float("nan"), device="cuda", dtype=od) for a, b in zip(As, Bs)]
        tk.ops.scaled_gemm_list(As, Bs, SA, SB, out=outs, use_fast_accum=fast)
        assert tk.ops.last_path.startswith(("tma:ptr-array", "tk.ops.scaled_mm x1")), tk.ops.last_path
        assert "; problem" not in tk.ops.last_path, tk.ops.last_path
        tol = 2e-2 if fast or od != torch.float32 else 2e-3
        for g, (p, o) in enumerate(zip(probs, outs)):
            err = _fp8_err(o, _fp8_ref(*p))
            assert err < tol, (count, scaling, fast, ta, tb, od, g, tuple(p[0].shape), tuple(p[1].shape), err)


@pytest.mark.gpu
def test_fp8_lists_mixing_kinds_and_rule_breakers_and_in_a_cuda_graph():
    """A list mixing per-tensor and row-wise scales launches once per kind; a problem whose K is not a multiple of 16
    and the only block-scaled one run as tk.ops.scaled_mm calls; strict raises; the cached list replays in a CUDA
    graph on new data."""
    from tmakit.ops.quantize import quantize_1x128, quantize_128x128

    rng = random.Random(7)
    probs = [_fp8_problem(rng, m, n, k, sc) for m, n, k, sc in (
        (100, 64, 256, "tensor"), (37, 208, 512, "row"), (5, 32, 128, "tensor"), (256, 128, 384, "row"))]
    w = torch.randn(256, 512, device="cuda", dtype=torch.bfloat16)
    x = torch.randn(64, 512, device="cuda", dtype=torch.bfloat16)
    qx, sx = quantize_1x128(x)
    qw, sw = quantize_128x128(w)
    odd = _fp8_problem(rng, 20, 48, 40, "tensor")  # K = 40: 40-byte rows
    As, Bs, SA, SB = (list(v) for v in zip(*probs))
    As[2:2], Bs[2:2], SA[2:2], SB[2:2] = [qx, odd[0]], [qw.t(), odd[1]], [sx, odd[2]], [sw, odd[3]]
    refs = [_fp8_ref(*p) for p in probs]
    refs[2:2] = [_fp8_ref(qx, qw.t(), sx, sw), _fp8_ref(*odd)]
    outs = [torch.full((a.shape[0], b.shape[1]), float("nan"), device="cuda", dtype=torch.float32)
            for a, b in zip(As, Bs)]
    tk.ops.scaled_gemm_list(As, Bs, SA, SB, out=outs)
    assert tk.ops.last_path.startswith("tma:ptr-array x2+2 alone; problem 3 by tk.ops.scaled_mm: row pitches"), \
        tk.ops.last_path  # (the block-scaled problem, the only one of its kind, runs as its own call)
    for g, (o, r) in enumerate(zip(outs, refs)):
        assert _fp8_err(o, r) < 2e-3, (g, _fp8_err(o, r))
    with pytest.raises(GemmError, match="problem 3: row pitches"):
        tk.ops.scaled_gemm_list(As, Bs, SA, SB, out=outs, strict=True)
    keep = [0, 1, 4, 5]
    A, B, S1, S2, O = ([v[i] for i in keep] for v in (As, Bs, SA, SB, outs))
    tk.ops.scaled_gemm_list(A, B, S1, S2, out=O)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        tk.ops.scaled_gemm_list(A, B, S1, S2, out=O)
    for a, o in zip(A, O):
        a.copy_((torch.randn(a.shape, device="cuda") * 2).to(a.dtype))
        o.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    for a, b, s1, s2, o in zip(A, B, S1, S2, O):
        assert _fp8_err(o, _fp8_ref(a, b, s1, s2)) < 2e-3


@pytest.mark.parametrize("with_out", [False, True])
def test_lists_stay_in_a_torch_compile_graph(with_out):
    """gemm_list and scaled_gemm_list are custom ops under torch.compile: no graph break (fullgraph), results as
    eager (CPU tensors: the ops' dense calls inside the custom op)."""
    As = [torch.randn(5, 8), torch.randn(3, 16)]
    Bs = [torch.randn(8, 4), torch.randn(16, 2)]
    q = [_fp8_problem(None, m, n, k, sc, dev="cpu") for m, n, k, sc in ((5, 16, 32, "tensor"), (3, 8, 64, "row"))]
    qA, qB, SA, SB = (list(x) for x in zip(*q))

    def f(As, Bs, qA, qB, SA, SB):
        if with_out:
            o1 = [torch.empty(a.shape[0], b.shape[1]) for a, b in zip(As, Bs)]
            o2 = [torch.empty(a.shape[0], b.shape[1], dtype=torch.bfloat16) for a, b in zip(qA, qB)]
            tk.ops.gemm_list(As, Bs, out=o1)
            tk.ops.scaled_gemm_list(qA, qB, SA, SB, out=o2)
            return o1, o2
        return tk.ops.gemm_list(As, Bs), tk.ops.scaled_gemm_list(qA, qB, SA, SB)

    g1, g2 = torch.compile(f, fullgraph=True, backend="eager")(As, Bs, qA, qB, SA, SB)
    assert all(torch.allclose(g, a @ b) for g, a, b in zip(g1, As, Bs))
    assert all(_fp8_err(o, _fp8_ref(*p)) < 1e-2 for o, p in zip(g2, q))


@pytest.mark.gpu
def test_lists_under_torch_compile_on_the_gpu():
    """Compiled (inductor) calls run the list kernels inside the graph and match the eager results."""
    rng = random.Random(11)
    As, Bs = _problems(rng, 9, torch.bfloat16, False)
    q = [_fp8_problem(rng, m, n, k, "row") for m, n, k in ((64, 128, 256), (7, 48, 512), (300, 256, 128))]
    qA, qB, SA, SB = (list(x) for x in zip(*q))
    f = torch.compile(lambda *xs: (tk.ops.gemm_list(xs[0], xs[1]), tk.ops.scaled_gemm_list(*xs[2:])), fullgraph=True)
    g1, g2 = f(As, Bs, qA, qB, SA, SB)
    torch.cuda.synchronize()
    for a, b, o in zip(As, Bs, g1):
        ref = a.float() @ b.float()
        if ref.numel() and ref.abs().sum():
            assert float((o.float() - ref).norm() / ref.norm()) < 1e-2
    assert all(_fp8_err(o, _fp8_ref(*p)) < 1e-2 for o, p in zip(g2, q))  # bf16 out


@pytest.mark.gpu
def test_default_calls_reuse_the_plan_with_new_outputs():
    """Calls without out= get new outputs each time (views of fresh buffers, as torch.split's) and reuse the cached
    plan and problem array: the outputs' addresses are a launch argument, not part of the problem array."""
    from tmakit.ops import grouped

    rng = random.Random(21)
    As, Bs = _problems(rng, 30, torch.bfloat16, False)
    As[3] = As[3].half()  # a second kind, and dtypes per problem
    Bs[3] = Bs[3].half()
    q = [_fp8_problem(rng, m, n, k, "row") for m, n, k in ((64, 128, 256), (7, 48, 512), (300, 256, 128))]
    qA, qB, SA, SB = (list(x) for x in zip(*q))
    kept, before = [], None
    for i in range(3):
        outs = tk.ops.gemm_list(As, Bs)
        fouts = tk.ops.scaled_gemm_list(qA, qB, SA, SB, out_dtype=torch.float32)
        kept.append((outs, fouts))
        if i == 0:
            before = len(grouped._lists)
        assert len(grouped._lists) == before  # no new plan after the first call
        assert outs[3].dtype == torch.float16 and outs[0].dtype == torch.bfloat16
        for a, b, o in zip(As, Bs, outs):
            ref = a.float() @ b.float()
            if ref.numel() and ref.abs().sum():
                assert float((o.float() - ref).norm() / ref.norm()) < 1e-2
        assert all(_fp8_err(o, _fp8_ref(*p)) < 2e-3 for o, p in zip(fouts, q))
        for a in As + qA:
            a.copy_((torch.randn(a.shape, device="cuda") * 2).to(a.dtype))
    ptrs = [o.data_ptr() for outs, _ in kept for o in outs if o.numel()]
    assert len(set(ptrs)) == len(ptrs)  # every call's outputs are its own


@pytest.mark.gpu
def test_a_cached_run_keeps_its_problem_array_when_the_upload_cache_drops_it():
    """A planned list call launches on its device problem array by address; the upload cache of problem arrays
    empties itself when full (every 256 distinct lists), and the cached run must not then read memory torch's
    allocator has handed to someone else (found by fuzz_ops: a list of 64 fp8 problems returned garbage for one of
    them after thousands of earlier calls). Here the cache is emptied by hand and zeros take every freed block of
    the array's size class; the run's second call must still compute its own problems."""
    from tmakit.ops import grouped

    rng = random.Random(5)
    As, Bs = _problems(rng, 6, torch.bfloat16, False)
    outs = [torch.empty(a.shape[0], b.shape[1], device="cuda", dtype=torch.bfloat16) for a, b in zip(As, Bs)]
    tk.ops.gemm_list(As, Bs, out=outs)
    assert tk.ops.last_path.startswith("tma:ptr-array"), tk.ops.last_path
    torch.cuda.synchronize()
    grouped._problem_arrays.clear()
    junk = [torch.zeros(n, dtype=torch.int64, device="cuda") for n in (16, 32, 64, 128) for _ in range(300)]
    for o in outs:
        o.fill_(float("nan"))
    tk.ops.gemm_list(As, Bs, out=outs)
    torch.cuda.synchronize()
    for g, (a, b, o) in enumerate(zip(As, Bs, outs)):
        assert _err(o, a, b) < 1e-2, f"problem {g}: {tuple(a.shape)} x {tuple(b.shape)}"
    del junk
