"""The small-problem GEMM (``kernels/gemm_small.cu``, ``config="small"``) as a specification.

CPU: the plan's shared layouts and errors, the tile rule (grid within about 3 / 4 / 4.5 CTAs per SM), the 16-byte
load rule, the default-route class (K <= 128, M*N <= 2^20, not tall-narrow), the kernel's SASS (HMMA count per
32-deep chunk, ldmatrix, cp.async iff both operands take 16-byte loads, no local memory, no wgmma/TMA) and CPU
tensors going to torch. GPU: random shapes and layouts against an fp64 reference, every tile and layout, the
default route, the cached path and CUDA graphs, the errors (aliasing, shapes, zero strides) and zero sizes.
"""

from __future__ import annotations

import math
import random

import pytest

torch = pytest.importorskip("torch")

import tmakit as tk  # noqa: E402
from gemm_operands import KINDS  # noqa: E402
from gemm_operands import operand as _operand  # noqa: E402
from tmakit.kernels.gemm import GemmError  # noqa: E402
from tmakit.kernels.gemm_small import TILES, Operand, _vector_ok, choose_tile, kernel_name, plan_small  # noqa: E402
from tmakit.ops import gemm_route as route  # noqa: E402

DT = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def _rel(c, ref):
    return ((c.double() - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def _ref(a, b):
    return a.double().matmul(b.double())




# ---------------------------------------------------------------------------------------------------- CPU: plan
@pytest.mark.parametrize("a_s,b_s,a_kc,b_kc", [
    ((96, 1), (1, 96), 1, 1),  # A row-major, B = w.t() (K-major)
    ((96, 1), (200, 1), 1, 0),  # B row-major (K, N)
    ((1, 100), (1, 96), 0, 1),  # A column-major (a.t() of a contiguous (K, M))
    ((1, 100), (200, 1), 0, 0),
    ((192, 2), (400, 2), 1, 1),  # generic strides (no unit stride): [MN][K]
    ((7, 3), (5, 9), 1, 1),
])
def test_plan_shared_layouts(a_s, b_s, a_kc, b_kc):
    p = plan_small(100, 200, 96, "bfloat16", "float32", a_s, b_s, (200, 1))
    assert (p.a_kc, p.b_kc) == (a_kc, b_kc)
    assert (p.m, p.n, p.k, p.a_strides, p.b_strides, p.c_strides) == (100, 200, 96, a_s, b_s, (200, 1))


def test_plan_tile_override_tiles_and_k1():
    p = plan_small(100, 130, 8, "float16", "bfloat16", (8, 1), (130, 1), (130, 1), tile=[32, 64])
    assert (p.bm, p.bn) == (32, 64) and p.tiles == 4 * 3
    assert plan_small(1, 1, 1, "bfloat16", "bfloat16", (1, 1), (1, 1), (1, 1)).tiles == 1
    q = plan_small(300, 200, 64, "bfloat16", "bfloat16", (64, 1), (200, 1), (200, 1))
    assert (q.bm, q.bn) == choose_tile(300, 200) and q.tiles == math.ceil(300 / q.bm) * math.ceil(200 / q.bn)
    assert plan_small(2**31 - 1, 1, 1, "bfloat16", "bfloat16", (1, 1), (1, 1), (1, 1)).m == 2**31 - 1
    assert kernel_name(p, 1, 0, 1) == "tmakit_gemm_small<1, 0, 32, 64, 1, 0, 1, 0, 1>"
    # K = 1: its stride is never used; a unit M (N) stride gives the [K][MN] tile (16-byte loads along M / N)
    r = plan_small(64, 64, 1, "float16", "float16", (1, 1), (64, 1), (64, 1))
    assert (r.a_kc, r.b_kc) == (0, 0)


@pytest.mark.parametrize("kw", [
    dict(in_dtype="float32"), dict(in_dtype="float8_e4m3fn"), dict(out_dtype="int32"), dict(out_dtype="float64"),
    dict(m=0), dict(n=0), dict(k=0), dict(m=2**31), dict(n=2**31), dict(k=2**31), dict(m=-1),
    dict(tile=(128, 128)), dict(tile=(64, 32)), dict(m=2**30, n=2**30),  # 2^47 tiles: past the grid's limit
])
def test_plan_errors(kw):
    args = dict(m=64, n=64, k=64, in_dtype="bfloat16", out_dtype="bfloat16")
    args.update({k: v for k, v in kw.items() if k != "tile"})
    with pytest.raises(GemmError):
        plan_small(args["m"], args["n"], args["k"], args["in_dtype"], args["out_dtype"], (64, 1), (64, 1), (64, 1),
                   tile=kw.get("tile"))


# ---------------------------------------------------------------------------------------------------- CPU: tiles
def test_choose_tile_rule():
    assert choose_tile(1, 1) == choose_tile(64, 64) == choose_tile(1000, 1) == (16, 64)
    # (16, 64) while its grid <= 3 x 132 CTAs, (32, 64) <= 4 x 132, (64, 64) <= 4.5 x 132, else (64, 128)
    assert choose_tile(384, 1024) == (16, 64)  # 24 x 16 = 384 tiles
    assert choose_tile(400, 1024) == (32, 64)  # 25 x 16 = 400 > 396; 13 x 16 = 208
    assert choose_tile(6336, 64) == (16, 64) and choose_tile(6337, 64) == (32, 64)
    assert choose_tile(1024, 1024) == (32, 64)  # 32 x 16 = 512 <= 528
    assert choose_tile(1024, 1088) == (64, 64)  # 32 x 17 = 544 > 528; 16 x 17 = 272
    assert choose_tile(16896, 64) == (32, 64) and choose_tile(16897, 64) == (64, 64)
    assert choose_tile(1536, 1536) == (64, 64)  # 24 x 24 = 576 <= 594
    assert choose_tile(1600, 1536) == (64, 128)  # 25 x 24 = 600 > 594
    assert choose_tile(38016, 64) == (64, 64) and choose_tile(38017, 64) == (64, 128)
    assert choose_tile(2048, 2048) == choose_tile(10**6, 10**4) == (64, 128)
    assert choose_tile(400, 1024, sms=200) == (16, 64)  # 400 <= 600


def test_choose_tile_grows_with_the_problem():
    for fixed in (1, 64, 200, 1000, 3000):
        seq = [TILES.index(choose_tile(m, fixed)) for m in range(1, 40000, 97)]
        assert seq == sorted(seq) and seq[0] == 0 and seq[-1] == 3, fixed
        seq = [TILES.index(choose_tile(fixed, n)) for n in range(1, 40000, 97)]
        assert seq == sorted(seq), fixed
    squares = [TILES.index(choose_tile(s, s)) for s in range(1, 4000, 7)]
    assert squares == sorted(squares) and set(squares) == {0, 1, 2, 3}


# ---------------------------------------------------------------------------------------------------- CPU: loads
@pytest.mark.parametrize("op,want", [
    (Operand(4096, 64, 1, 10, 64), 1),  # unit column stride, 16-byte base and pitch
    (Operand(4096 + 16, 8, 1, 3, 5), 1),
    (Operand(4098, 64, 1, 10, 64), 0),  # base 2 bytes into a 16-byte line
    (Operand(4096 + 8, 64, 1, 10, 64), 0),
    (Operand(4096, 63, 1, 10, 63), 0),  # odd pitch (126 bytes)
    (Operand(4096, 12, 1, 10, 12), 0),  # 24-byte pitch
    (Operand(4096, 128, 2, 10, 64), 0),  # non-unit column stride
    (Operand(4096, 63, 1, 1, 63), 1),  # one row: its pitch is never used
    (Operand(4098, 63, 1, 1, 63), 0),  # ... but the base still is
    (Operand(4096, 8, 5, 10, 1), 1),  # one column: its stride is never used
])
def test_vector_ok(op, want):
    assert _vector_ok(op, 2) == want


# ---------------------------------------------------------------------------------------------------- CPU: route
@pytest.mark.parametrize("m,n,k,want", [
    (300, 200, 64, True), (1, 1, 1, True), (64, 64, 128, True), (64, 64, 129, False), (64, 64, 0, False),
    (1024, 1024, 64, True), (1024, 1025, 64, False), (2**20, 1, 8, False), (1, 2**20, 8, True),
    (4096, 64, 64, True), (4097, 64, 64, False), (4097, 65, 64, True), (16384, 64, 32, False),
    (5000, 8, 16, False), (256, 256, 256, False), (2048, 512, 128, True),
])
def test_small_wins(m, n, k, want):
    assert route.small_wins(m, n, k) is want


def test_cpu_tensors_go_to_torch_even_in_the_small_class():
    g = torch.Generator().manual_seed(0)
    a = torch.randn(300, 64, generator=g).bfloat16()
    b = torch.randn(64, 200, generator=g).bfloat16()
    assert route.small_wins(300, 200, 64)
    for cfg in (None, "small"):
        c = tk.ops.gemm(a, b, config=cfg)
        assert tk.ops.last_path.startswith("torch:"), (cfg, tk.ops.last_path)
        assert c.shape == (300, 200) and c.dtype == torch.bfloat16 and _rel(c, _ref(a, b)) < 1e-2


# ---------------------------------------------------------------------------------------------------- CPU: SASS
SASS_CASES = [  # in, out, (BM, BN), A row-major, B K-major (w.t()), VA, VB, VC
    ("bfloat16", "bfloat16", (16, 64), True, True, 1, 1, 1),
    ("float16", "float16", (32, 64), False, True, 1, 1, 0),
    ("bfloat16", "float32", (64, 64), True, False, 1, 0, 1),
    ("float16", "float32", (64, 128), False, False, 0, 0, 0),
    ("bfloat16", "float16", (64, 128), True, True, 1, 1, 1),
    ("float16", "bfloat16", (16, 64), False, False, 0, 1, 0),
    ("bfloat16", "float32", (32, 64), True, False, 1, 1, 0),
]


@pytest.mark.parametrize("case", SASS_CASES, ids=lambda c: "-".join(map(str, c)))
def test_sass(case):
    ind, outd, (bm, bn), a_row, b_nk, va, vb, vc = case
    pytest.importorskip("cuda.bindings.nvrtc")
    from tmakit import cuda as tkc
    from tmakit.cuda import sass
    from tmakit.kernels import KERNELS_DIR

    m, n, k = 100, 200, 96
    p = plan_small(m, n, k, ind, outd, (k, 1) if a_row else (1, m), (1, k) if b_nk else (n, 1), (n, 1), (bm, bn))
    assert (p.a_kc, p.b_kc) == (int(a_row), int(b_nk))
    try:
        text = sass.disassemble(tkc.compile_file(KERNELS_DIR / "gemm_small.cu",
                                                 name_expressions=[kernel_name(p, va, vb, vc)]).cubin)
    except tkc.RuntimeUnavailable as e:
        pytest.skip(str(e))
    ops = sass.opcodes(text)
    wm, wn = (1, 4) if bm == 16 else (2, 2)
    mt, nt = bm // wm // 16, bn // wn // 8
    assert ops["HMMA"] == 2 * mt * nt, ops["HMMA"]  # one 32-deep chunk: 2 k16 steps x MT x NT (the K loop rolled)
    hmma = [ln for ln in text.splitlines() if "HMMA." in ln]
    assert all(".16816.F32" in ln and ("BF16" in ln) == (ind == "bfloat16") for ln in hmma), hmma
    assert ops["LDSM"] > 0
    assert ("LDSM.16.MT88" in text) == (not (a_row and b_nk))  # .trans where an operand's unit dim is M or N
    asynchronous = bool(va and vb)
    assert (ops["LDGSTS"] > 0) == asynchronous and (ops["LDG"] == 0) == asynchronous, ops
    assert asynchronous or ("LDG.E.128" in text) == bool(va or vb)  # the gather: 16-byte loads where allowed
    assert ("STG.E.128" in text) == bool(vc)  # 16-byte stores into C iff VC
    assert ops["LDL"] == ops["STL"] == 0, "local memory"
    assert ops["HGMMA"] == ops["UTMALDG"] == ops["UTMASTG"] == 0


# ---------------------------------------------------------------------------------------------------- GPU
def _dim(rng, hi):
    r = rng.random()
    if r < 0.15:
        return 1
    v = rng.randrange(2, 130) if r < 0.6 else int(round(2 ** rng.uniform(7, math.log2(hi))))
    return max(8, v - v % 8) if rng.random() < 0.5 else v  # 16-byte rows (the cp.async path) often


@pytest.mark.gpu
@pytest.mark.parametrize("seed", range(4))
def test_random_shapes_and_layouts(seed):
    """80 calls per seed: 1 in every position, up to 3000 x 3000 x 600, every operand and out layout."""
    rng = random.Random(seed)
    g = torch.Generator(device="cuda").manual_seed(seed)
    nan = float("nan")
    for _ in range(80):
        m, n, k = _dim(rng, 3000), _dim(rng, 3000), _dim(rng, 600)
        dt = rng.choice(("bf16", "fp16"))
        odt = rng.choice((dt, "bf16", "fp16", "fp32"))
        ka, kb = rng.choice(KINDS), rng.choice(KINDS)
        ko, off = rng.choice(("none", "none", "contig", "wide", "colmajor")), rng.choice((0, 1))
        a = _operand(m, k, ka, DT[dt], "cuda", g)
        b = _operand(k, n, kb, DT[dt], "cuda", g)
        a0, b0 = a.clone(), b.clone()
        buf = torch.full({"colmajor": (n, m), "wide": (m, n + 9)}.get(ko, (m, n)), nan, dtype=DT[odt], device="cuda")
        out = {"none": None, "contig": buf, "wide": buf[:, off:off + n], "colmajor": buf.t()}[ko]
        od = DT[odt] if out is None else rng.choice((None, DT[odt]))
        where = f"{m}x{n}x{k} {dt}->{odt} a={ka} b={kb} out={ko}/{off}"
        c = tk.ops.gemm(a, b, out=out, out_dtype=od, config="small")
        assert tk.ops.last_path == "small", (where, tk.ops.last_path)
        assert c.shape == (m, n) and c.dtype == DT[odt], where
        assert out is None or c is out, where
        assert torch.isfinite(c).all(), where  # every element written (out was NaN)
        assert _rel(c, _ref(a, b)) < (1e-2 if "bf16" in (dt, odt) else 2e-3), where
        assert torch.equal(a, a0) and torch.equal(b, b0), where
        if ko == "wide":  # a strided view of a wider buffer, aligned or not: nothing written outside it
            assert buf[:, :off].isnan().all() and buf[:, off + n:].isnan().all(), where


@pytest.mark.gpu
@pytest.mark.parametrize("tile", TILES)
def test_every_tile_and_layout(tile):
    """Each tile on A row-/column-major and B row-major / w.t(), through cp.async (16-byte rows) and the gather
    (misaligned or stepped); K = 264: more chunks than cp.async stages, the last one partial."""
    from tmakit.ops import gemm_small as ops_small

    g = torch.Generator(device="cuda").manual_seed(1)
    m, n, k = 80, 200, 264
    for ka in ("contig", "colmajor", "offset"):
        for kb in ("contig", "colmajor", "step"):
            a = _operand(m, k, ka, torch.bfloat16, "cuda", g)
            b = _operand(k, n, kb, torch.bfloat16, "cuda", g)
            r, _ = ops_small.call(torch, a, b, None, torch.float32, tile=tile)
            assert tk.ops.last_path == "small" and r.dtype == torch.float32
            assert _rel(r, _ref(a, b)) < 1e-4, (tile, ka, kb)


@pytest.mark.gpu
def test_default_route():
    a = torch.randn(300, 64, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(64, 200, device="cuda", dtype=torch.bfloat16)
    assert route.small_wins(300, 200, 64)
    for od in (None, torch.float32):
        c = tk.ops.gemm(a, b, out_dtype=od)
        assert tk.ops.last_path == "small" and _rel(c, _ref(a, b)) < 1e-2
    at = torch.randn(64, 304, device="cuda", dtype=torch.float16).t()  # column-major A, 16-byte rows
    wt = torch.randn(200, 64, device="cuda", dtype=torch.float16).t()  # B = w.t()
    c = tk.ops.gemm(at, wt)
    assert tk.ops.last_path == "small" and _rel(c, _ref(at, wt)) < 2e-3
    r = lambda *s: torch.randn(*s, device="cuda", dtype=torch.bfloat16)  # noqa: E731
    # K = 256; tall and narrow; an operand the kernel cannot load 16 bytes at a time (misaligned base)
    for x, y in ((r(256, 256), r(256, 256)), (r(5000, 64), r(64, 64)), (r(300 * 64 + 1)[1:].view(300, 64), b)):
        c = tk.ops.gemm(x, y)
        assert tk.ops.last_path != "small" and _rel(c, _ref(x, y)) < 1e-2
    c = tk.ops.gemm(a, b, strict=True)  # strict: the TMA kernel
    assert tk.ops.last_path == "tma" and _rel(c, _ref(a, b)) < 1e-2


@pytest.mark.gpu
def test_cached_path_and_graph():
    a = torch.randn(300, 64, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(64, 200, device="cuda", dtype=torch.bfloat16)
    c1 = tk.ops.gemm(a, b)
    c2 = tk.ops.gemm(a, b)  # the cached path: a new result
    assert tk.ops.last_path == "small" and c2.data_ptr() != c1.data_ptr() and torch.equal(c1, c2)
    out = torch.full((300, 200), float("nan"), device="cuda", dtype=torch.bfloat16)
    assert tk.ops.gemm(a, b, out=out) is out and tk.ops.last_path == "small" and torch.equal(out, c1)
    out.fill_(float("nan"))
    assert tk.ops.gemm(a, b, out=out) is out and tk.ops.last_path == "small" and torch.equal(out, c1)
    x = torch.randn(200, 96, device="cuda", dtype=torch.float16)  # a CUDA graph replays on new data
    w = torch.randn(160, 96, device="cuda", dtype=torch.float16).t()
    y = torch.full((200, 160), float("nan"), device="cuda", dtype=torch.float16)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        tk.ops.gemm(x, w, out=y)  # compile, plan and cache outside the capture
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    assert tk.ops.last_path == "small"
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        tk.ops.gemm(x, w, out=y)
    for _ in range(2):
        x.copy_(torch.randn(x.shape, device="cuda"))
        w.copy_(torch.randn(w.shape, device="cuda"))
        y.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert _rel(y, _ref(x, w)) < 2e-3


@pytest.mark.gpu
def test_errors_and_inputs_untouched():
    a = torch.randn(64, 64, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(64, 48, device="cuda", dtype=torch.bfloat16)
    a0, b0 = a.clone(), b.clone()
    e = torch.empty(64, 48, device="cuda", dtype=torch.bfloat16)
    bad = {"overlaps a": a[:, :48], "overlaps b": b, "wrong shape": e[:, :47], "zero stride": e[:1].expand(64, 48)}
    for why, out in bad.items():
        for cfg in ("small", None) if why != "wrong shape" else ("small",):
            try:
                tk.ops.gemm(a, b, out=out, config=cfg)
            except tk.ops.GemmError:
                continue
            pytest.fail(f"{why}, config={cfg}: no GemmError")
    with pytest.raises(tk.ops.GemmError):
        tk.ops.gemm(a, b[:47], config="small")  # shapes do not compose
    assert torch.equal(a, a0) and torch.equal(b, b0)
    tk.ops.gemm(a, b, config="small")
    assert torch.equal(a, a0) and torch.equal(b, b0)


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", [(0, 5, 7), (5, 0, 7), (5, 7, 0), (0, 0, 0), (40, 24, 0)])
def test_zero_sizes(m, n, k):
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    for od in (None, torch.float32):
        c = tk.ops.gemm(a, b, out_dtype=od, config="small")
        assert tk.ops.last_path.startswith("torch:"), tk.ops.last_path
        assert c.shape == (m, n) and c.dtype == (od or torch.float16) and torch.all(c == 0)
        out = torch.full((m, n), float("nan"), device="cuda", dtype=od or torch.float16)
        assert tk.ops.gemm(a, b, out=out, config="small") is out and torch.all(out == 0)
        assert tk.ops.last_path.startswith("torch:"), tk.ops.last_path
