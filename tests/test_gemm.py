"""GEMM (kernels/gemm.cu, ops.gemm): CPU checks (NVRTC compile + SASS, argument rules on fake tensors) and GPU
checks against an fp32 torch reference (skipped without a Hopper GPU)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tmakit.kernels import gemm as gk


class Fake:
    """Just enough of a tensor for ``plan``: shape, stride(), dtype, data_ptr()."""

    def __init__(self, shape, stride=None, dtype="torch.bfloat16", ptr=1 << 20):
        self.shape = tuple(shape)
        if stride is None:
            stride = (shape[1], 1)
        self._stride, self.dtype, self._ptr = tuple(stride), dtype, ptr

    def stride(self):
        return self._stride

    def data_ptr(self):
        return self._ptr


def wt(n, k, ld=None, **kw):
    """``w.t()`` for a row-major (n, k) w: shape (k, n), strides (1, ld)."""
    return Fake((k, n), (1, ld or k), **kw)


def test_plan_ok():
    p = gk.plan(Fake((300, 200)), wt(264, 200, ptr=1 << 24))
    assert (p.m, p.n, p.k, p.lda, p.ldb, p.ldc) == (300, 264, 200, 200, 200, 264)
    assert p.in_dtype == p.out_dtype == "bfloat16"
    assert p.config == gk.CONFIGS["m64_n128_s8_c1_ov1"] and p.b_mn == 0  # few tiles, short K: one wave of 64x128
    assert p.units == p.grid == 3 * 5
    p = gk.plan(Fake((300, 200)), wt(264, 200, ptr=1 << 24), config="n256_s4_c1")
    assert p.units == p.grid == 3 * 2
    p = gk.plan(Fake((300, 200)), wt(264, 200, ptr=1 << 24), config="n256_s4_c2")
    assert p.units == 2 * 2 and p.grid == 2 * 2 * 2  # 3 tile rows -> 2 cluster rows of 2 CTAs, 2 tile columns
    p = gk.plan(Fake((8, 64), dtype="torch.float16"), wt(16, 64, dtype="torch.float16", ptr=1 << 24),
                out_dtype="torch.float32")
    assert p.out_dtype == "float32" and p.in_dtype == "float16"


@pytest.mark.parametrize("args, match", [
    ((Fake((8, 64)), wt(16, 32)), "do not compose"),
    ((Fake((8, 64), dtype="torch.float32"), wt(16, 64)), "bfloat16 or float16"),
    ((Fake((8, 64)), wt(16, 64, dtype="torch.float16")), "same dtype"),
    ((Fake((8, 60)), wt(16, 60)), "multiple of 16"),
    ((Fake((8, 64)), wt(12, 64)), "16-byte units"),
    ((Fake((8, 64), (1, 8)), wt(16, 64)), "row-major"),
    ((Fake((8, 64), (68, 1)), wt(16, 64)), "not a multiple of 16"),
    ((Fake((8, 64), ptr=(1 << 20) + 16), wt(16, 64)), "128-byte aligned"),
    ((Fake((8, 64)), Fake((64, 16), (32, 2))), "row-major"),
    ((Fake((8, 64)), Fake((64, 16), (8, 1), ptr=1 << 24)), "smaller than the row length 16"),
    ((Fake((8, 64)), Fake((64, 16), (20, 1), ptr=1 << 24)), "b.stride\\(0\\) = 20"),
    ((Fake((8, 64, 1)), wt(16, 64)), "2-D"),
])
def test_plan_errors(args, match):
    with pytest.raises(gk.GemmError, match=match):
        gk.plan(*args)


def test_plan_row_major_b():
    p = gk.plan(Fake((8, 64)), Fake((64, 16), ptr=1 << 24))
    assert p.b_mn == 1 and p.ldb == 16
    assert gk.kernel_name(p) == "tmakit_gemm<0, 0, 64, 128, 8, 1, 1, 1, 0, 1, 2, 0>"
    p = gk.plan(Fake((8, 64)), Fake((64, 16), (24, 1), ptr=1 << 24))
    assert p.b_mn == 1 and p.ldb == 24


def test_plan_out_rules():
    a, b = Fake((8, 64), ptr=1 << 20), wt(16, 64, ptr=1 << 21)
    with pytest.raises(gk.GemmError, match="shape"):
        gk.plan(a, b, out=Fake((8, 8), ptr=1 << 22))
    with pytest.raises(gk.GemmError, match="out_dtype"):
        gk.plan(a, b, out=Fake((8, 16), ptr=1 << 22), out_dtype="torch.float32")
    with pytest.raises(gk.GemmError, match="overlaps a"):
        gk.plan(a, b, out=Fake((8, 16), ptr=(1 << 20) + 128))
    # one (8, 128) bf16 buffer: a = columns 0..63, out = columns 64..79 -- interleaved rows, no shared byte
    a2 = Fake((8, 64), (128, 1), ptr=1 << 20)
    p = gk.plan(a2, b, out=Fake((8, 16), (128, 1), ptr=(1 << 20) + 128))
    assert p.ldc == 128
    with pytest.raises(gk.GemmError, match="overlaps a"):  # rows 1..8, columns 0..15: inside a's rows 1..7
        gk.plan(a2, b, out=Fake((8, 16), (128, 1), ptr=(1 << 20) + 256))
    p = gk.plan(a, b, out=Fake((8, 16), (24, 1), dtype="torch.float32", ptr=1 << 22))
    assert p.ldc == 24 and p.out_dtype == "float32"
    with pytest.raises(gk.GemmError, match="multiple of 16"):  # TMA-store epilogue: 16-byte row pitch
        gk.plan(a, b, out=Fake((8, 16), (20, 1), ptr=1 << 22))
    with pytest.raises(gk.GemmError, match="128-byte aligned"):
        gk.plan(a, b, out=Fake((8, 16), ptr=(1 << 22) + 64))
    with pytest.raises(gk.GemmError, match="smaller than N"):
        gk.plan(a, b, out=Fake((8, 16), (8, 1), ptr=1 << 22))


def test_tensormaps_validate():
    p = gk.plan(Fake((1000, 136)), wt(520, 136, ptr=1 << 24), config="n256_s4_c2")
    assert p.config.cluster == 2
    ta, tb, tc = gk.tensormaps(p, 1 << 20, 1 << 24, 1 << 26)
    assert ta.global_dim == (136, 1000) and ta.box_dim == (64, 128)
    assert tb.global_dim == (136, 520) and tb.box_dim == (64, p.config.bn // 2)  # each CTA multicasts half of B
    assert tc.global_dim == (520, 1000) and tc.box_dim == (64, 64) and tc.global_strides == (520 * 2,)
    for t in (ta, tb, tc):
        t.validate("sm_90")
    assert ta.tx_bytes + 2 * tb.tx_bytes == 64 * 2 * (128 + p.config.bn)  # the full barrier's byte count
    # row-major B: 64 x 64 boxes, bn / 64 of them per stage; fp32 split-K partials: 32-column boxes
    p = gk.plan(Fake((128, 136)), Fake((136, 520), ptr=1 << 24), config="n256_s4_c1", split=2)
    ta, tb, tc = gk.tensormaps(p, 1 << 20, 1 << 24, 1 << 26)
    assert p.b_mn == 1 and tb.global_dim == (520, 136) and tb.box_dim == (64, 64)
    assert tc.dtype.name == "FLOAT32" and tc.box_dim == (32, 64)
    for t in (ta, tb, tc):
        t.validate("sm_90")


def test_heuristics():
    assert gk.choose_config(4096, 4096, 4096).bn == 256
    assert gk.choose_split(4096, 4096, 4096, gk.choose_config(4096, 4096, 4096)) == (1, 4096)
    cfg = gk.choose_config(1024, 1024, 65536)
    split, kps = gk.choose_split(1024, 1024, 65536, cfg)
    assert split > 1 and kps % gk.BK == 0 and (split - 1) * kps < 65536 <= split * kps
    p = gk.plan(Fake((300, 4104)), wt(136, 4104, ptr=1 << 26), split=7)
    assert p.split == 7 and p.k_per_split % gk.BK == 0 and (p.split - 1) * p.k_per_split < p.k
    args = gk.kernel_name(p).removeprefix("tmakit_gemm<").removesuffix(">").split(", ")
    assert args[1] == "2" and args[8] == "1"  # split-K partials: fp32 output, SPLITK
    assert gk.choose_config(128, 8192, 8192) == gk.CONFIGS["m64_n128_s8_c1_ov1"]  # 2 x 64 tiles of 64 x 128
    assert gk.choose_split(128, 8192, 8192, gk.CONFIGS["m64_n128_s8_c1_ov1"]) == (1, 8192)
    assert gk.choose_config(64, 8192, 8192) == gk.CONFIGS["m64_n128_s8_c1_ov1"]  # decode-like: 64 tiles of 64x128
    m64 = gk.CONFIGS["m64_n128_s8_c1_ov1"]
    assert gk.choose_config(1, 4096, 14336) == m64 and gk.choose_split(1, 4096, 14336, m64) == (4, 3584)
    assert gk.choose_split(16, 4096, 4096, m64) == (2, 2048)  # >= 32 slabs per range
    assert gk.choose_split(64, 8192, 8192, m64) == (2, 4096)  # 64 tiles: two ranges fill 128 SMs
    assert gk.choose_split(128, 8192, 8192, m64) == (1, 8192)  # 128 tiles: one wave already
    assert gk.choose_config(128, 1024, 8192) == m64  # too few columns: 64-row tiles, split K
    assert gk.choose_split(128, 1024, 8192, m64) == (4, 2048)
    assert gk.choose_config(256, 1024, 8192) == gk.CONFIGS["n256_s4_c1"]  # 128x256 + split-K
    assert gk.choose_split(256, 1024, 8192, gk.CONFIGS["n256_s4_c1"])[0] > 1
    assert gk.choose_config(2048, 1024, 1024) == gk.CONFIGS["n128_s6_c1"]  # short K: narrower tiles, no split
    assert gk.choose_split(2048, 1024, 1024, gk.CONFIGS["n128_s6_c1"]) == (1, 1024)
    assert gk.choose_config(1024, 1024, 1024) == gk.CONFIGS["m64_n128_s8_c1_ov1"]  # one wave of 128 64x128 tiles
    assert gk.choose_config(1024, 1024, 65536) == gk.CONFIGS["n256_s4_c1"]  # split-K shapes: single CTAs
    assert gk.choose_config(8192, 8192, 8192) == gk.CONFIGS["n256_s4_c1_d"]  # 16-bit out: deferred epilogue
    assert gk.choose_config(8192, 8192, 8192, out_bytes=4).cluster == 2  # fp32 out: no deferral, pairs
    assert gk.choose_config(384, 8192, 8192, out_bytes=4).cluster == 1  # 3 tile rows do not pair up
    assert gk.plan(Fake((4096, 4096)), wt(4096, 4096, ptr=1 << 26), out_dtype="float32").config.cluster == 2


def test_schedule_stream_k():
    p = gk.plan(Fake((4096, 4096)), wt(4096, 4096, ptr=1 << 26), config="n256_s4_c2")  # pairs: 256 cluster units
    assert gk.schedule(p, 132).sk_units == 0  # auto: the last wave (58 of 66 clusters) is too full to pay
    s = gk.schedule(p, 132, "all")
    assert (s.clusters, s.cluster_size, s.dp_units, s.sk_units) == (66, 2, 0, 256)
    big = gk.plan(Fake((8192, 8192)), wt(8192, 8192, ptr=1 << 28), config="n256_s4_c2")
    assert gk.schedule(gk.plan(Fake((8192, 8192)), wt(8192, 8192, ptr=1 << 28)), 132).sk_units == 2048 % 132
    assert gk.schedule(big, 132).sk_units == 1024 % 66  # 34 of 66: half a wave idle -> stream-K
    s = gk.Schedule(66, 2, 198, 58, 64 // (58 * 64 // 66) + 2)
    assert s.maxseg == 64 // (58 * 64 // 66) + 2 and s.flag_count == 58 * 2 * s.maxseg * 2
    assert s.ws_bytes == s.flag_count * 64 * 256 * 4
    assert gk.schedule(p, 132, "off") == gk.Schedule(66, 2, 256, bn=256)
    assert gk.schedule(p, 128).sk_units == 0  # 256 units on 64 clusters: no partial wave
    few = gk.plan(Fake((1024, 65536)), wt(1024, 65536, ptr=1 << 26), config="n256_s4_c1", split=1)
    s = gk.schedule(few, 132, "all")
    assert (s.clusters, s.dp_units, s.sk_units) == (132, 0, 32)
    assert gk.schedule(few, 132).sk_units == 0  # auto: fewer units than clusters -> whole units (or split-K)
    split = gk.plan(Fake((1024, 65536)), wt(1024, 65536, ptr=1 << 26), config="n256_s4_c1", split=4)
    assert gk.schedule(split, 132, "all").sk_units == 0  # split-K plans never use stream-K
    with pytest.raises(gk.GemmError, match="stream_k"):
        gk.schedule(p, 132, "yes")


@pytest.mark.parametrize("units, clusters, kt", [(256, 66, 64), (32, 132, 1024), (7, 5, 3), (133, 132, 200),
                                                 (2304, 66, 112), (3, 132, 130), (1000, 131, 17)])
def test_stream_k_segments_cover_each_slab_once(units, clusters, kt):
    """The kernel's work split, mirrored: every stream-K (unit, slab) once, slots within the workspace, the head of a
    split unit owns its slab 0 and reaches it last (its range ends there), contributors start their range."""
    sk = units % clusters if units > clusters else units
    s = gk.Schedule(clusters, 1, units - sk, sk, kt // max(1, sk * kt // clusters) + 2)
    seen = {}
    for cid in range(clusters):
        segs = gk.stream_k_segments(s, kt, cid)
        for i, (u, ks, ke, role, slot, nseg) in enumerate(segs):
            assert s.dp_units <= u < units and 0 <= ks < ke <= kt and 0 <= slot < nseg <= s.maxseg
            for x in range(ks, ke):
                assert (u, x) not in seen
                seen[(u, x)] = cid
            if role == 2:
                assert ks == 0 and i == len(segs) - 1
            if role == 1:
                assert i == 0 and ks > 0
            if role == 0:
                assert (ks, ke) == (0, kt)
    assert len(seen) == sk * kt


@pytest.mark.parametrize("m, n, k, split", [(1024, 1024, 65536, 4), (300, 520, 4104, 3), (129, 264, 1000, 7)])
def test_split_schedule_segments(m, n, k, split):
    """In-kernel split-K: every tile's K cut into `split` ranges (one per cluster, one wave), the head owns slab 0."""
    p = gk.plan(Fake((m, k)), wt(n, k, ptr=1 << 28), config="n256_s4_c1", split=split)
    p1, s = gk.split_schedule(p, 132)
    assert p1.split == 1 and p1.k_per_split == k and s.dp_units == 0 and s.sk_units == p1.units
    split = p.split  # plan() may merge ranges so that none is empty
    assert s.clusters == p1.units * split <= 132
    kt = -(-k // gk.BK)
    per_unit = {}
    for cid in range(s.clusters):
        for unit, ks, ke, role, slot, nseg in gk.stream_k_segments(s, kt, cid):
            assert slot < s.maxseg and (role == 2) == (ks == 0 and nseg > 1)
            per_unit.setdefault(unit, []).append((ks, ke))
    for segs in per_unit.values():
        assert sorted(segs)[0][0] == 0 and sum(e - b for b, e in segs) == kt and len(segs) <= split + 1
    assert s.scatter == int(4 % split == 0)  # 128x256 bf16 tiles: 4 staging boxes of 64 columns
    assert gk.split_schedule(gk.plan(Fake((m, k)), wt(n, k, ptr=1 << 28), split=1), 132) is None
    assert gk.split_schedule(p, s.clusters - 1) is None  # does not fit one wave


@settings(max_examples=200, deadline=None)
@given(m=st.integers(1, 5000), n=st.sampled_from([8, 136, 1024, 4096]), k=st.integers(1, 40000).map(lambda x: 8 * x),
       split=st.one_of(st.none(), st.integers(1, 80)))
def test_every_unit_has_a_slab(m, n, k, split):
    """The kernel's consumers learn each unit's slab count from the producer and stop at a count of 0, so no unit
    (tile and K range) may be empty: every K range of a plan starts before K, whatever split is asked for."""
    p = gk.plan(Fake((m, k)), wt(n, k, ptr=1 << 30), split=split)
    kt = -(-k // gk.BK)
    assert 1 <= p.split <= kt and (p.split == 1 or p.k_per_split % gk.BK == 0)
    assert all(r * p.k_per_split < k for r in range(p.split))


def test_configs_fit_smem():
    for c in gk.CONFIGS.values():
        assert gk.smem_bytes(c) <= gk.SMEM_LIMIT


# ---------------------------------------------------------------------------------------------------------------
# NVRTC + SASS (no GPU needed)

@pytest.mark.parametrize("cfg", list(gk.CONFIGS))
def test_kernel_compiles_with_hgmma_and_tma(cfg):
    pytest.importorskip("cuda.bindings.nvrtc")
    from tmakit import cuda as tkc
    from tmakit.cuda import sass
    from tmakit.kernels import KERNELS_DIR

    c = gk.CONFIGS[cfg]
    layouts = (0, 1) if c.bn // 64 % c.cluster == 0 else (0,)  # row-major B: each CTA an equal share of the boxes
    names = [gk.kernel_name(gk.GemmPlan(1, 8, 8, 8, 8, 8, i, o, c, split, 64, bmn))
             for i in ("bfloat16", "float16") for o in ("bfloat16", "float32") for split in (1, 2)
             for bmn in layouts]
    names = list(dict.fromkeys(names))
    c = tkc.compile_file(KERNELS_DIR / "gemm.cu", name_expressions=names)
    assert "serialized" not in c.log and "C7508" not in c.log, c.log
    try:
        ops = sass.opcodes(c.cubin)
    except tkc.RuntimeUnavailable:
        pytest.skip("no nvdisasm/cuobjdump")
    assert ops["HGMMA"] > 0 and ops["UTMALDG"] > 0 and ops["UTMASTG"] > 0 and ops["UTMAREDG"] > 0
    if gk.CONFIGS[cfg].cluster_size > 1:
        assert "UTMALDG.2D.MULTICAST" in sass.disassemble(c.cubin)
    if gk.CONFIGS[cfg].defer:  # acc + packed tile: a few scalars spill, but never inside the wgmma loop
        for fn in sass.disassemble(c.cubin).split("\t.section\t.text.")[1:]:  # one kernel at a time
            lines = fn.splitlines()
            hg = [i for i, ln in enumerate(lines) if "HGMMA" in ln]
            assert hg and not any("LDL" in ln or "STL" in ln for ln in lines[hg[0]:hg[-1]]), fn.split(",")[0]
            assert sum("LDL" in ln or "STL" in ln for ln in lines) < 48, fn.split(",")[0]
    else:
        assert ops["LDL"] == 0 and ops["STL"] == 0  # accumulators stay in registers


# ---------------------------------------------------------------------------------------------------------------
# GPU

def _gpu():
    torch = pytest.importorskip("torch")
    from tmakit import cuda as tkc

    if not torch.cuda.is_available() or not tkc.is_available():
        pytest.skip("needs a Hopper GPU")
    return torch


TOL = {"bfloat16": 1e-2, "float16": 4e-3, "float32": 1e-4}


def _operands(torch, m, n, k, dt, b_layout):
    """Random a (M, K) and b (K, N) in the requested layout ("nk": w.t() of an (N, K) w; "kn": row-major)."""
    a = torch.randn(m, k, device="cuda", dtype=getattr(torch, dt))
    if b_layout == "nk":
        b = torch.randn(n, k, device="cuda", dtype=getattr(torch, dt)).t()
    else:
        b = torch.randn(k, n, device="cuda", dtype=getattr(torch, dt))
    return a, b


def _check(torch, out, a, b, od):
    ref = a.float() @ b.float()
    err = float((out.float() - ref).norm() / ref.norm())
    assert err < TOL[od], err


@pytest.mark.gpu
@pytest.mark.parametrize("m, n, k", [(1, 8, 8), (100, 200, 72), (129, 264, 136), (333, 520, 1000), (256, 512, 256),
                                     (384, 776, 520)])
@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
@pytest.mark.parametrize("od", ["bfloat16", "float16", "float32"])
@pytest.mark.parametrize("b_layout", ["nk", "kn"])
def test_gemm_gpu(m, n, k, dt, od, b_layout):
    torch = _gpu()
    from tmakit.ops import gemm

    a, b = _operands(torch, m, n, k, dt, b_layout)
    # a padded out view (16-byte rows): the pad columns must stay NaN
    pad = 16 // (4 if od == "float32" else 2)
    buf = torch.full((m, n + pad), float("nan"), device="cuda", dtype=getattr(torch, od))
    out = buf[:, :n]
    gemm(a, b, out=out, strict=True)  # the kernel, also where the default would pick torch.matmul (small problems)
    _check(torch, out, a, b, od)
    assert torch.isnan(buf[:, n:]).all() and not torch.isnan(out).any()


@pytest.mark.gpu
@pytest.mark.parametrize("config", ["n256_s4_c1", "n256_s4_c2", "n128_s6_c1", "n128_s6_c2", "n64_s8_n2", "n64_s8_n4",
                                    "n128_s6_n4", "n256_s4_c2n2", "m64_n128_s8_c2", "m64_n128_s8_c2_ov1",
                                    "m64_n128_s8_c1_ov1", "m64_n256_s5_c2_ov1", "m64_n256_s5_c1_ov1",
                                    "m64_n128_s9_c1_ov1_e1", "m64_n64_s12_c1_ov1", "n256_s4_c2_d",
                                    "n256_s4_c1_d", "n128_s6_c1_d"])
@pytest.mark.parametrize("b_layout", ["nk", "kn"])
@pytest.mark.parametrize("m, n, k", [(129, 264, 136), (1000, 1000, 264), (640, 2056, 4104),
                                     (2000, 4000, 200), (1500, 3000, 72)])  # several tiles per CTA, short K
def test_gemm_gpu_configs(config, b_layout, m, n, k):
    torch = _gpu()
    from tmakit.ops import gemm

    a, b = _operands(torch, m, n, k, "bfloat16", b_layout)
    out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    gemm(a, b, out=out, config=config)
    _check(torch, out, a, b, "bfloat16")


@pytest.mark.gpu
@pytest.mark.parametrize("config, m, n, k, mode", [
    ("n256_s4_c1", 1700, 2800, 8200, "auto"),  # 154 tiles: 132 whole + 22 dealt out as stream-K ranges
    ("n256_s4_c2", 1700, 2800, 8200, "auto"),  # 77 cluster units on 66 clusters
    ("n256_s4_c1", 256, 520, 32768, "all"),  # 6 tiles over every SM: up to ~17 partials per tile
    ("n256_s4_c2", 300, 520, 32768, "all"),
    ("n128_s6_c1", 1100, 2104, 3000, "all"),
    ("m64_n128_s8_c2_ov1", 300, 520, 32768, "all"),  # one consumer warpgroup: slots per warpgroup differ
    ("m64_n256_s5_c1_ov1", 1100, 2104, 3000, "all"),
    ("n256_s4_c1_d", 1700, 2800, 8200, "auto"),  # deferred epilogue after a head's fixup
])
@pytest.mark.parametrize("od", ["bfloat16", "float16", "float32"])
@pytest.mark.parametrize("b_layout", ["nk", "kn"])
def test_gemm_gpu_stream_k(config, m, n, k, mode, od, b_layout):
    torch = _gpu()
    from tmakit.ops import gemm

    a, b = _operands(torch, m, n, k, "bfloat16", b_layout)
    p = gk.plan(a, b, config=config, split=1)
    sched = gk.schedule(p, gk.resident_ctas(gk.kernel_for(p), p.config), mode)
    assert sched.sk_units > 0, sched
    for _ in range(2):  # the second launch relies on the first one's flag resets
        out = torch.full((m, n), float("nan"), device="cuda", dtype=getattr(torch, od))
        gemm(a, b, out=out, config=config, split=1, stream_k=mode)
        _check(torch, out, a, b, od)
        assert not torch.isnan(out).any()
    ref = gemm(a, b, out_dtype=getattr(torch, od), config=config, split=1, stream_k="off")
    assert float((out.float() - ref.float()).norm() / ref.float().norm()) < TOL[od]  # other sum order only


@pytest.mark.gpu
@pytest.mark.parametrize("m, n, k", [(128, 2048, 4104), (100, 520, 1000), (1000, 264, 200)])
def test_gemm_gpu_k_rotate(m, n, k):
    torch = _gpu()
    from tmakit.ops import gemm

    a, b = _operands(torch, m, n, k, "bfloat16", "nk")
    for rot in (True, False):
        out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float32)
        gemm(a, b, out=out, k_rotate=rot)
        _check(torch, out, a, b, "float32")


@pytest.mark.gpu
@pytest.mark.parametrize("split", [2, 3, 4, 5])
@pytest.mark.parametrize("od", ["bfloat16", "float32"])
@pytest.mark.parametrize("b_layout", ["nk", "kn"])
@pytest.mark.parametrize("config", [None, "m64_n256_s5_c2_ov1", "n128_s6_c1"])
@pytest.mark.parametrize("mode", ["fixup", "head", "atomic"])
def test_gemm_gpu_split_k(split, od, b_layout, config, mode):
    """fixup with split 2 / 4 dividing the staging boxes: reduce-scatter; 3 / 5: the head adds every partial."""
    torch = _gpu()
    from tmakit.ops import gemm

    a, b = _operands(torch, 129, 264, 1000, "bfloat16", b_layout)
    for _ in range(2):  # fixup: the second launch relies on the first one's flag resets
        c = gemm(a, b, out_dtype=getattr(torch, od), split=split, config=config, split_mode=mode)
        _check(torch, c, a, b, od)
    if mode != "atomic":  # deterministic: a fixed summation order
        assert torch.equal(c, gemm(a, b, out_dtype=getattr(torch, od), split=split, config=config, split_mode=mode))
    _check(torch, c, a, b, od)


@pytest.mark.gpu
def test_gemm_gpu_graphs_keep_workspaces():
    """Split GEMMs captured in CUDA graphs one after another, each wanting a larger split workspace (or more flags)
    than the last, replay correctly in any order: a grown workspace never frees the one an earlier graph launches on,
    and flags first allocated inside a capture are zeroed before a graph or an eager call relies on them."""
    torch = _gpu()
    from tmakit.ops import gemm

    cases = [(64, 4096, 4096, {}), (64, 4096, 4096, dict(split=4)), (129, 264, 1000, dict(split=3)),
             (1, 1024, 8192, dict(split=8, split_mode="atomic")), (200, 2048, 4096, dict(split=12)),
             (64, 4096, 4096, dict(split=4, split_mode="head"))]
    stream = torch.cuda.Stream()  # its workspaces are first allocated inside a capture
    runs = []
    for m, n, k, kw in cases:
        a, b = _operands(torch, m, n, k, "bfloat16", "nk")
        out = torch.empty((m, n), device="cuda", dtype=torch.bfloat16)
        gemm(a, b, out=out, **kw)  # compile and plan outside the capture
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=stream):
            gemm(a, b, out=out, **kw)
        runs.append((g, a, b, out, kw))
    for g, a, b, out, _ in [*reversed(runs), *runs]:
        out.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        _check(torch, out, a, b, "bfloat16")
    with torch.cuda.stream(stream):  # eager calls on the capture stream after the captures
        for _, a, b, _, kw in runs:
            c = gemm(a, b, **kw)
            torch.cuda.synchronize()
            _check(torch, c, a, b, "bfloat16")


@pytest.mark.gpu
def test_gemm_gpu_graph_rounds_like_the_bench():
    """`tmakit bench gemm`'s graph phase for two shapes in a row: per shape, graphs of split variants captured with
    the bench's own helper (warm-up on a fresh side stream, capture on torch's capture stream), replayed, deleted."""
    torch = _gpu()
    from tmakit.bench import gemm as bg
    from tmakit.ops import gemm

    variants = [{}, dict(split=4), dict(split=3), dict(config="m64_n64_s12_c1_ov1", split=2),
                dict(config="m64_n64_s12_c1_ov1", split=4)]
    for m in (64, 1, 32):
        a, b = _operands(torch, m, 4096, 4096, "bfloat16", "nk")
        outs = [torch.empty((m, 4096), device="cuda", dtype=torch.bfloat16) for _ in variants]
        graphs = [bg.capture(lambda i, a=a, b=b, kw=kw, o=o: gemm(a, b, out=o, **kw), 1, 3)
                  for kw, o in zip(variants, outs)]
        for _ in range(2):
            for g, o in zip(graphs, outs):
                o.fill_(float("nan"))
                g.replay()
        torch.cuda.synchronize()
        for o in outs:
            _check(torch, o, a, b, "bfloat16")
        del graphs


@pytest.mark.gpu
@pytest.mark.parametrize("config", [None, "m64_n128_s8_c1_ov1", "n256_s4_c2"])
def test_gemm_gpu_pdl_chain(config):
    """Back-to-back dependent GEMMs (programmatic dependent launch): the second reads the first's output and the third
    overwrites the first's input, eagerly and in a CUDA graph."""
    torch = _gpu()
    from tmakit.ops import gemm

    a, b = _operands(torch, 256, 1024, 1024, "bfloat16", "nk")
    c1 = torch.full((256, 1024), float("nan"), device="cuda", dtype=torch.bfloat16)
    c2 = torch.full_like(c1, float("nan"))

    def chain():
        gemm(a, b, out=c1, config=config, pdl=True)
        gemm(c1, b, out=c2, config=config, pdl=True)
        gemm(c2, b, out=a, config=config, pdl=True)  # a is rewritten only after the first GEMM has read it

    a0 = a.clone()
    chain()
    r1 = (a0.float() @ b.float()).to(torch.bfloat16)
    r2 = (r1.float() @ b.float()).to(torch.bfloat16)
    for got, ref in ((c1, r1), (c2, r2)):
        assert float((got.float() - ref.float()).norm() / ref.float().norm()) < 2e-2
    a.copy_(a0)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        chain()
    a.copy_(a0)
    c1.fill_(float("nan"))
    c2.fill_(float("nan"))
    g.replay()
    torch.cuda.synchronize()
    for got, ref in ((c1, r1), (c2, r2)):
        assert float((got.float() - ref.float()).norm() / ref.float().norm()) < 2e-2


@pytest.mark.gpu
def test_gemm_gpu_default_out_and_repeat():
    torch = _gpu()
    from tmakit.ops import gemm

    a, b = _operands(torch, 300, 264, 200, "float16", "nk")
    c = gemm(a, b, strict=True)
    assert c.dtype == torch.float16 and c.shape == (300, 264)
    _check(torch, c, a, b, "float16")
    a.copy_(torch.randn_like(a))  # same pointers, new data: the memoised launch must read it
    c2 = gemm(a, b, strict=True)
    _check(torch, c2, a, b, "float16")


@pytest.mark.gpu
def test_gemm_gpu_out_rules():
    torch = _gpu()
    from tmakit.ops import GemmError, gemm

    a, b = _operands(torch, 64, 64, 64, "bfloat16", "kn")
    with pytest.raises(GemmError, match="overlaps a"):
        gemm(a, b, out=a)
    with pytest.raises(GemmError, match="CUDA tensors"):
        gemm(a.cpu(), b.cpu(), strict=True)


@pytest.mark.gpu
@pytest.mark.parametrize("m, n, k, b_layout", [(384, 776, 520, "nk"), (256, 512, 128, "kn"), (100, 264, 136, "kn")])
def test_gemm_gpu_autograd(m, n, k, b_layout):
    """Gradients of tk.ops.gemm match fp32 references (M = 100: dB's reduction dim is not a multiple of 16 bytes, so
    that product runs through torch.matmul)."""
    torch = _gpu()
    from tmakit.ops import GemmError, gemm

    a, b = _operands(torch, m, n, k, "bfloat16", b_layout)
    a.requires_grad_()
    b.requires_grad_()
    g = torch.randn(m, n, device="cuda")
    c = gemm(a, b, out_dtype="float32")
    assert c.grad_fn is not None
    (c * g).sum().backward()
    ga, gb = g @ b.detach().float().t(), a.detach().float().t() @ g
    for got, ref in ((a.grad, ga), (b.grad, gb)):
        assert got.shape == ref.shape and float((got.float() - ref).norm() / ref.norm()) < 1e-2
    with pytest.raises(GemmError, match="autograd"):
        gemm(a, b, out=torch.empty(m, n, device="cuda", dtype=torch.bfloat16))
    with torch.no_grad():
        assert not gemm(a, b).requires_grad


@pytest.mark.gpu
@pytest.mark.parametrize("config", sorted(gk.CONFIGS))
def test_resident_ctas_is_the_occupancy_query(config):
    """The persistent grid is what the driver says fits at once, asked before the kernel's first launch (the query
    needs the dynamic shared-memory attribute raised first: it failed before, and the fallback of SMs / cluster size
    clusters of 4 did not fit -- 33 launched, 30 resident on an H200 -- so the last cluster ran its whole share in a
    second wave and the kernel took twice as long)."""
    _gpu()
    cfg = gk.CONFIGS[config]
    p = gk.plan(Fake((1024, 1024)), wt(1024, 1024), config=config)
    k = gk.kernel_for(p)
    gk._resident.pop((k.name, cfg.cluster_size), None)
    fits = k.max_active_clusters(cfg.cluster_size, cfg.threads, gk.smem_bytes(cfg))
    assert fits > 0 and gk.resident_ctas(k, cfg) == fits * cfg.cluster_size
