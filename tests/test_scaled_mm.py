"""FP8 scaled GEMM (tmakit_gemm_scaled in kernels/gemm.cu, kernels/gemm_fp8.py, ops.scaled_mm, ops.quantize):
CPU checks (NVRTC compile + SASS per mode and output type, argument rules on fake tensors, the scaling math in
torch/numpy, the custom op under torch.compile on the fallback path) and GPU checks against an fp64 reference of
the dequantized product (skipped without a Hopper GPU)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sass_checks import SASS_TYPES, fp8_sass
from tmakit.kernels import KERNELS_DIR
from tmakit.kernels import gemm as gk
from tmakit.kernels import gemm_fp8 as gf
from tmakit.kernels.gemm import GemmError

torch = pytest.importorskip("torch")

E4, E5 = "torch.float8_e4m3fn", "torch.float8_e5m2"


class Fake:
    """Just enough of a tensor for ``plan_fp8``: shape, stride(), dtype, data_ptr()."""

    def __init__(self, shape, stride=None, dtype=E4, ptr=1 << 20):
        self.shape = tuple(shape)
        if stride is None:
            stride = (shape[1], 1) if len(shape) == 2 else (1,) * len(shape)
        self._stride, self.dtype, self._ptr = tuple(stride), dtype, ptr

    def stride(self):
        return self._stride

    def data_ptr(self):
        return self._ptr


def bt(n, k, ld=None, **kw):
    """``w.t()`` of a row-major (n, k) fp8 w: shape (k, n), strides (1, ld)."""
    return Fake((k, n), (1, ld or k), ptr=1 << 24, **kw)


def f32(*shape, stride=None, ptr=1 << 28):
    return Fake(shape, stride, dtype="torch.float32", ptr=ptr)


def scales(mode, m, n, k):
    if mode == "tensor":
        return f32(), f32()
    if mode == "row":
        return f32(m, 1, stride=(1, 1)), f32(1, n, stride=(n, 1))
    kb, nb = -(-k // 128), -(-n // 128)
    return f32(m, kb), f32(nb, kb)


# ---------------------------------------------------------------------------------------------------------------
# plan: argument rules (no GPU)

@pytest.mark.parametrize("mode", gf.SCALINGS)
def test_plan_modes(mode):
    m, n, k = 1300, 1000, 512  # 88 tiles of 128x128
    p = gf.plan_fp8(Fake((m, k)), bt(n, k), *scales(mode, m, n, k))
    assert (p.m, p.n, p.k, p.lda, p.ldb, p.ldc, p.scaling) == (m, n, k, k, k, n, mode)
    assert p.in_code == 2 and not p.bias and p.out_dtype == "bfloat16"
    assert p.config.bn <= 128 and not p.fast_accum  # two-level accumulation
    assert p.config.overlap == 0 and p.config.bm == 128  # two consumers, each promoting after its slab
    if mode == "block":
        assert p.config.bn == 128 and p.scale_strides == (4, 1, 4, 1)
    if mode == "row":
        assert p.scale_strides == (1, 0, 1, 0)
    name = gf.kernel_name(p)
    code = gf._SCALE_CODE[mode]  # block on single 128-row CTAs: the scale warp (block_scale_tma)
    assert p.scale_code == code
    staged = int(gf.epilogue_staged(p.config, mode, False, code))
    assert name.startswith("tmakit_gemm_scaled<2, 0, ")
    assert name.endswith(f", {code}, 0, 0, {staged}, 1>")


@pytest.mark.parametrize("case, code", [
    ("k-major", 4), ("m-major", 5), ("k-major, 5 K blocks (20-byte pitch)", 0), ("m-major, M = 1302", 0),
    ("scale_a off 16-byte alignment", 0), ("scale_b n-major", 0), ("one K block, contiguous (B pitch 4 bytes)", 0),
    ("one row", 4), ("single 128-row CTAs", 0), ("64-row tiles", 4)])
def test_plan_block_scales_by_tma(case, code):
    """Block scales go by TMA (kernel SCALE 4: A's scales K-major, 5: M-major as torch._scaled_mm's 1x128 layout) on
    CTA clusters and 64-row tiles wherever TMA can describe both scale tensors -- B's K-major, 16-byte pitches and
    addresses -- else the scale warp stages them (SCALE 3); the maps are valid TensorMaps with the documented
    boxes."""
    m, n, k = 1300, 1000, 512
    if "5 K blocks" in case:
        k = 640
    if "1302" in case:
        m = 1302
    if "one K block" in case:
        k = 128
    if "one row" in case:
        m = 1
    kb, nb = -(-k // 128), -(-n // 128)
    sa = f32(m, kb, stride=(1, m) if "m-major" in case else None, ptr=(1 << 28) + (8 if "off 16-byte" in case else 0))
    if "one K block" in case:
        sa = f32(m, 1, stride=(1, 1))
    sb = f32(nb, kb, stride=(1, nb) if "n-major" in case else None, ptr=1 << 29)
    config = {"single 128-row CTAs": "n128_s5_c1", "64-row tiles": "m64_n128_s8_c1"}.get(case, "n128_s5_c2")
    p = gf.plan_fp8(Fake((m, k)), bt(n, k), sa, sb, config=config)
    assert p.scale_tma == code and p.scale_code == (code or 3)
    assert f", {code or 3}, 0, 0, " in gf.kernel_name(p)
    if code:
        ta, tb = gf.scale_maps(p, sa.data_ptr(), sb.data_ptr())
        ta.validate(), tb.validate()
        assert tb.box_dim == (4, 2) and tb.global_dim == (kb, nb)
        assert ta.box_dim == ((4, p.config.bm) if code == 4 else (p.config.bm, 1))
        assert gf.plan_smem(p) <= gf.gk.smem_limit(p.config)


def test_plan_fast_accum():
    m, n, k = 4096, 4096, 4096
    p = gf.plan_fp8(Fake((m, k)), bt(n, k), *scales("tensor", m, n, k), fast_accum=True)
    assert p.fast_accum and p.config.bn == 256 and gf.kernel_name(p).endswith(", 1, 0, 1, 0, 1>")
    with pytest.raises(GemmError, match="fast_accum applies to tensor- and row-wise"):
        gf.plan_fp8(Fake((m, k)), bt(n, k), *scales("block", m, n, k), fast_accum=True)
    with pytest.raises(GemmError, match="at most 192 columns"):
        gf.plan_fp8(Fake((m, k)), bt(n, k), *scales("row", m, n, k), config="n256_s4_c1")


def test_plan_dtype_codes_and_bias():
    m, n, k = 128, 256, 128
    for ta, tb, code in ((E4, E4, 2), (E4, E5, 3), (E5, E4, 4), (E5, E5, 5)):
        p = gf.plan_fp8(Fake((m, k), dtype=ta), bt(n, k, dtype=tb), f32(), f32(),
                        bias=Fake((n,), dtype="torch.float32"), out_dtype="torch.float32")
        assert p.in_code == code and p.bias and p.out_dtype == "float32"
        assert gf.kernel_name(p).startswith(f"tmakit_gemm_scaled<{code}, 2, ")


@pytest.mark.parametrize("args, kw, match", [
    ((Fake((8, 64)), bt(16, 32), f32(), f32()), {}, "do not compose"),
    ((Fake((8, 64), dtype="torch.bfloat16"), bt(16, 64), f32(), f32()), {}, "float8_e4m3fn or float8_e5m2"),
    ((Fake((8, 64)), Fake((64, 16), (16, 1), ptr=1 << 24), f32(), f32()), {}, "column-major"),
    ((Fake((8, 64), (1, 8)), bt(16, 64), f32(), f32()), {}, "row-major"),
    ((Fake((8, 40)), bt(16, 40), f32(), f32()), {}, "multiple of 16 bytes"),
    ((Fake((8, 64), (72, 1)), bt(16, 64), f32(), f32()), {}, "multiple of 16 bytes"),
    ((Fake((8, 64), ptr=(1 << 20) + 16), bt(16, 64), f32(), f32()), {}, "128-byte aligned"),
    ((Fake((8, 64)), bt(12, 64), f32(), f32()), {}, "N \\* 2 = 24 bytes"),
    ((Fake((8, 64)), bt(16, 64), f32(8, 2), f32(1, 16)), {}, "name no scaling mode"),
    ((Fake((8, 64)), bt(16, 64), f32(8, 1), f32(16, 1)), {}, "name no scaling mode"),
    ((Fake((8, 64)), bt(16, 64), Fake((), (), dtype="torch.bfloat16"), f32()), {}, "scale_a must be float32"),
    ((Fake((8, 64)), bt(16, 64), f32(), f32()), {"out_dtype": "torch.float8_e4m3fn"}, "out_dtype must be"),
    ((Fake((8, 64)), bt(16, 64), f32(), f32()), {"bias": Fake((8,), dtype="torch.bfloat16")}, "bias must have"),
    ((Fake((8, 64)), bt(16, 64), f32(), f32()), {"bias": Fake((16,), dtype="torch.float32")}, "bias.dtype"),
    ((Fake((8, 64)), bt(16, 64), f32(8, 1), f32(1, 16)), {"config": "n256_s4_c1", "fast_accum": True}, None),
    ((Fake((8, 256)), bt(128, 256), f32(8, 2), f32(1, 2)), {"config": "n256_s4_c1"}, "128 or 192 for block"),
    ((Fake((8, 256)), bt(128, 256), f32(8, 2), f32(1, 2)), {"config": "m64_n128_s8_c1_ov1"}, "without overlap"),
    ((Fake((8, 64)), bt(16, 64), f32(), f32()), {"config": "nope"}, "unknown fp8 config"),
    ((Fake((0, 64)), bt(16, 64), f32(), f32()), {}, "empty problem"),
])
def test_plan_rules(args, kw, match):
    if match is None:
        gf.plan_fp8(*args, **kw)
        return
    with pytest.raises(GemmError, match=match):
        gf.plan_fp8(*args, **kw)


@settings(max_examples=200, deadline=None)
@given(m=st.integers(1, 5000), n=st.integers(1, 5000), k=st.integers(1, 5000), pad_a=st.integers(0, 40),
       pad_b=st.integers(0, 40), off=st.sampled_from([0, 16, 64, 128]), mode=st.sampled_from(gf.SCALINGS),
       od=st.sampled_from(["bfloat16", "float16", "float32"]))
def test_plan_property(m, n, k, pad_a, pad_b, off, mode, od):
    """Any problem either plans -- TMA-legal pitches and bases, a config the mode allows, K slabs the split divides,
    a kernel name with the mode's code -- or raises GemmError naming the broken rule."""
    a = Fake((m, k), (k + pad_a, 1), ptr=(1 << 20) + off)
    b = Fake((k, n), (1, k + pad_b), ptr=1 << 30)
    try:
        p = gf.plan_fp8(a, b, *scales(mode, m, n, k), out_dtype=od)
    except GemmError as e:
        msg = str(e)
        assert any(w in msg for w in ("multiple of 16", "128-byte aligned", "TMA store pitch",
                                      "TMA stores write whole 16-byte units")), msg
        assert ((k + pad_a) % 16 if m > 1 else 0) or ((k + pad_b) % 16 if n > 1 else 0) or off % 128 or \
            (n * {"float32": 4}.get(od, 2)) % 16 or (m == 1 and k % 16 and n == 1), msg
        return
    assert p.lda % 16 == 0 and p.ldb % 16 == 0 and p.lda >= k and p.ldb >= k and off % 128 == 0
    assert p.scaling == gf.scaling_of(m, n, k, *(tuple(x.shape) for x in scales(mode, m, n, k)))
    assert p.config.bn <= (128 if p.config.overlap else 192) and (p.scaling != "block" or p.config.bn in (64, 128, 192))
    assert not (p.config.overlap and p.scaling == "block")
    assert -(-k // gf.BK) % p.split == 0 and 1 <= p.split <= gf.MAX_SPLIT
    assert p.scale_code == (p.scale_tma or gf._SCALE_CODE[p.scaling]) and p.scale_tma in (0, 4, 5)
    assert not p.scale_tma or (p.scaling == "block" and gf.block_fits(p.config, p.scale_tma))
    staged = int(gf.epilogue_staged(p.config, p.scaling, False, p.scale_code))
    assert gf.kernel_name(p).endswith(f", {p.scale_code}, 0, 0, {staged}, {p.config.per_sm}>")
    assert gf.plan_smem(p) <= gf.gk.smem_limit(p.config)


@pytest.mark.parametrize("cfg", list(gf.CONFIGS))
@pytest.mark.parametrize("mode, bias", [("tensor", False), ("tensor", True), ("row", False), ("row", True),
                                        ("block", False), ("block", True)])
def test_epilogue_staging_rule(cfg, mode, bias):
    """Row-wise scales and bias are staged in shared memory wherever they are and fit (never for per-tensor scales
    alone); a staged plan's shared memory is the ring's plus two slots of fp32 vectors and four mbarriers, within
    the limit."""
    c = gf.CONFIGS[cfg]
    if mode == "block" and not gf.block_fits(c):
        return
    staged = gf.epilogue_staged(c, mode, bias)
    floats = (c.bm + c.bn if mode == "row" else 0) + (c.bn if bias else 0)
    assert gf.epilogue_smem(c, mode, bias) == (8 * floats + 32 if floats else 0)
    if mode == "tensor" and not bias:
        assert not staged
    assert staged == (floats > 0 and gf.smem_for(c, mode) + 8 * floats + 32 <= gk.smem_limit(c))
    if c.bn == 192 or c.bm == 64:  # the row-wise default tiles have room
        assert staged == (floats > 0)


def test_plan_out_rules():
    a, b = Fake((8, 64)), bt(16, 64)
    with pytest.raises(GemmError, match="expected \\(8, 16\\)"):
        gf.plan_fp8(a, b, f32(), f32(), out=Fake((8, 8), dtype="torch.bfloat16", ptr=1 << 26))
    with pytest.raises(GemmError, match="128-byte aligned"):
        gf.plan_fp8(a, b, f32(), f32(), out=Fake((8, 16), dtype="torch.bfloat16", ptr=(1 << 26) + 64))
    with pytest.raises(GemmError, match="overlaps a"):
        gf.plan_fp8(a, b, f32(), f32(), out=Fake((8, 16), dtype="torch.bfloat16", ptr=1 << 20))
    p = gf.plan_fp8(a, b, f32(), f32(), out=Fake((8, 16), (64, 1), dtype="torch.bfloat16", ptr=1 << 26))
    assert p.ldc == 64


@pytest.mark.parametrize("mode", ["tensor", "block"])
def test_stream_k_tail_schedule(mode):
    """The last partial wave goes to stream-K ranges when it is at most STREAM_K_MAX_FILL full and the ranges are at
    least STREAM_K_MIN_SLABS long; otherwise whole tiles (docs/GEMM.md "Stream-K tail")."""
    def sched(m, n, k, stream_k="auto"):
        p = gf.plan_fp8(Fake((m, k)), bt(n, k), *scales(mode, m, n, k))
        assert p.config.bn == 192 and p.split == 1
        return p, gf.schedule(p, resident=132, stream_k=stream_k)

    p, s = sched(4096, 4096, 4096)  # 704 tiles: 5 waves and 44 of 132
    assert (s.clusters, s.dp_units, s.sk_units) == (132, 660, 44)
    assert s.maxseg == 32 // (44 * 32 // 132) + 2 and s.ws_bytes == s.flag_count * 64 * 192 * 4
    assert sched(4096, 4096, 4096, "off")[1] == gf.Schedule(132, 1, 704, bn=192, consumers=2)
    assert sched(2048, 4096, 14336)[1].sk_units == 88  # 67 % full: taken
    assert sched(3072, 3072, 8192)[1].sk_units == 0  # 91 % full: whole tiles
    assert sched(3072, 3072, 8192, "tail")[1].sk_units == 120
    assert sched(8192, 7168, 2048)[1].sk_units == 0  # 56 tiles x 16 slabs over 132 CTAs: ranges under 8 slabs
    assert sched(6144, 4096, 4096)[1].sk_units == 0  # 1056 tiles: 8 whole waves


def test_65_to_128_rows_take_64_row_tiles_only_where_their_waves_pay():
    """65-128 rows: 64x128 tiles where they fill most of a wave and take at most 5/3 the waves of 128-row tiles
    (a 64-row tile takes 0.5-0.67 of a 128-row tile's time; docs/GEMM.md "Few rows"); at most 64 rows always."""
    m64, n128 = gf.CONFIGS["m64_n128_s8_c1"], gf.CONFIGS["n128_s5_c1"]
    assert gf.choose_config(128, 8192, 8192, "block", per_sm=1) == m64  # 128 of 64x128: one wave either way
    assert gf.choose_config(128, 8704, 4096, "block", per_sm=1) == n128  # 136 of 64x128: two waves against one
    assert gf.choose_config(96, 14336, 4096, "block", per_sm=1) == n128  # 224 against 112
    assert gf.choose_config(120, 20480, 4096, "block", per_sm=1) == m64  # 320 (3 waves) against 160 (2)
    assert gf.choose_config(72, 27648, 8192, "block", per_sm=1) == n128  # 432 (4 waves) against 216 (2)
    assert gf.choose_config(64, 27648, 8192, "block", per_sm=1) == m64  # a 128-row tile would be half empty
    # two CTAs per SM (two_per_sm) then take 216 64x128 tiles: 2 waves of single CTAs, 1 of pairs
    assert gf.choose_config(64, 27648, 8192, "block") == gf.CONFIGS["m64_n128_s4_c1_e1_x2"]
    assert gf.choose_config(128, 8704, 4096, "tensor", per_sm=1) == gf.CONFIGS["n128_s6_c1"]
    # 129-192 rows (the 128-row plan pads to 256): by the same estimate, 128x192 tiles counted 1.3
    assert gf.choose_config(150, 9728, 4096, "block", per_sm=1) == m64  # 228 tiles (2 waves x 0.6) against 152 (2)
    assert gf.choose_config(170, 6400, 5120, "block", per_sm=1) == n128  # 150 tiles (2 waves x 0.6) against 100 (1)
    assert gf.choose_config(160, 12288, 8192, "block", per_sm=1) == gf.CONFIGS["n192_s4_c1"]  # 3 x 0.6 against 1 x 1.3
    assert gf.choose_config(256, 8192, 8192, "block", per_sm=1) == n128  # 193+ rows: the 128-row rules


def test_64_row_tiles_take_no_stream_k_tail():
    """A stream-K tail slowed 64-row tiles on 7 of 8 shapes (docs/GEMM.md "Few rows"): their schedules run whole
    tiles past one wave; a single short wave still goes all stream-K (decode)."""
    def sched(m, n, k):
        p = gf.plan_fp8(Fake((m, k)), bt(n, k), *scales("block", m, n, k))
        return p, gf.schedule(p, resident=132)

    p, s = sched(150, 9728, 4096)  # 228 tiles: 96 in the last wave
    assert p.config.bm == 64 and s.sk_units == 0 and s.dp_units == 228
    p, s = sched(30, 3936, 5504)
    assert p.config.bm == 64 and s.sk_units == 31  # one short wave: all stream-K
    p, s = sched(4096, 4096, 4096)
    assert p.config.bm == 128 and s.sk_units == 44  # 128x192: 704 tiles, the last wave's 44 as stream-K


def test_few_tiles_take_64_row_tiles_and_a_single_short_wave_goes_stream_k():
    """Few 128x128 tiles (at most a quarter of the SMs, or half of them where the 128-row plan does not split K):
    64x128 tiles, twice as many. A single wave at most STREAM_K_ALL_MAX_FILL full, with at least STREAM_K_MIN_SLABS
    slabs per CTA, runs as stream-K ranges on every CTA; at most a quarter of a wave with at least 16 slabs per tile,
    on as many CTAs as get 8 slabs each (docs/GEMM.md "Few tiles")."""
    m64 = gf.CONFIGS["m64_n128_s8_c1"]
    assert gf.choose_config(437, 544, 2080, "block") == m64  # 20 tiles
    assert gf.choose_config(674, 256, 9152, "block") == gf.CONFIGS["m64_n64_s12_c1"]  # 22 of 64x128: 64x64 tiles
    assert gf.choose_config(155, 2880, 3040, "tensor") == m64  # 46 tiles, K too short to split
    assert gf.choose_config(1066, 608, 9984, "block") == gf.CONFIGS["n128_s5_c1"]  # 45 tiles, long K: split
    assert gf.choose_config(300, 3200, 4160, "tensor") == gf.CONFIGS["n128_s6_c1"]  # 75 tiles
    assert gf.choose_config(160, 4640, 4160, "tensor") == m64  # 74 tiles, but 111 of 64x128 are one wave too
    assert gf.choose_config(4096, 4096, 4096, "row") == gf.CONFIGS["n192_s4_c1"]  # 6 waves of 128x192, 8 of 128x128
    assert gf.choose_config(289, 10272, 4352, "block") == gf.CONFIGS["n128_s5_c1"]  # 2 waves either way
    # narrow N counts too: 6 waves of 128x192 against 9 (13216x1344); one wave filling 120 of 132 SMs against two
    assert gf.choose_config(13216, 1344, 2272, "tensor") == gf.CONFIGS["n192_s4_c1"]
    assert gf.choose_config(2496, 992, 4224, "block") == gf.CONFIGS["n192_s4_c1"]
    assert gf.choose_config(9920, 640, 8896, "tensor") == gf.CONFIGS["n128_s6_c1"]  # 3 waves either way
    assert gf.choose_config(2240, 640, 4096, "tensor") == gf.CONFIGS["n128_s6_c1"]  # 72 wide tiles: 55 % of the SMs
    assert gf.choose_config(437, 544, 2080, "tensor", fast_accum=True) == gf.CONFIGS["m64_n128_s8_c1_ov1"]
    fast = [gf.choose_config(m, n, k, "row", fast_accum=True) for m, n, k in ((3351, 1280, 3648), (8221, 8160, 15776))]
    assert fast == [gf.CONFIGS["n128_s6_c1"], gf.CONFIGS["n256_s4_c2_d"]]  # 128x256 pairs: 2 waves vs 3; 16 vs 32

    def sched(m, n, k, config=None):
        p = gf.plan_fp8(Fake((m, k)), bt(n, k), *scales("block", m, n, k), config=config)
        return p, gf.schedule(p, resident=132)

    p, s = sched(30, 3936, 5504, "m64_n128_s8_c1")  # 31 tiles x 43 slabs: 10 slabs per CTA
    assert p.config == m64 and (s.clusters, s.dp_units, s.sk_units) == (132, 0, 31)
    p, s = sched(18, 768, 6336, "m64_n128_s8_c1")  # 6 tiles x 50 slabs: over the 37 CTAs that get 8 slabs each
    assert (s.clusters, s.dp_units, s.sk_units, s.maxseg) == (37, 0, 6, 50 // 8 + 2)
    assert sched(2, 6496, 4576)[1].sk_units == 0  # 51 tiles: more than STREAM_K_ALL_MAX_FILL of a wave
    assert sched(8, 7168, 2048)[1].sk_units == 0  # 56 tiles of 16 slabs
    p, s = sched(300, 3200, 4160)  # 75 tiles: more than STREAM_K_ALL_MAX_FILL of a wave
    assert p.units == 75 and s.sk_units == 0 and s.clusters == 75


@pytest.mark.parametrize("mode, fast", [("block", False), ("tensor", False), ("row", False), ("tensor", True)])
def test_decode_shapes_take_64x64_tiles(mode, fast):
    """Decode and other few-tile problems: K of 16 slabs or more and at most STREAM_K_ALL_MAX_FILL of the SMs' worth
    of 64x64 tiles run 64x64 tiles (overlapped with fast accumulation), a single short wave dealt out as stream-K."""
    n64 = gf.CONFIGS["m64_n64_s12_c1_ov1" if fast else "m64_n64_s12_c1"]
    m64 = gf.CONFIGS["m64_n128_s8_c1_ov1" if fast else "m64_n128_s8_c1"]
    for m, n, k in ((1, 2112, 7168), (64, 2944, 7168), (16, 576, 2048), (3, 192, 14720), (271, 192, 3712),
                    (128, 704, 3712)):
        assert gf.choose_config(m, n, k, mode, fast_accum=fast) == n64, (m, n, k)
    # 48 tiles of 64x64 (more than 35 % of 132 SMs), twice, and K of 15 slabs: the 64x128 plan
    for m, n, k in ((65, 2112, 7168), (16, 3072, 7168), (16, 2112, 1920)):
        assert gf.choose_config(m, n, k, mode, fast_accum=fast) == m64, (m, n, k)
    p = gf.plan_fp8(Fake((1, 7168)), bt(2112, 7168), *scales(mode, 1, 2112, 7168), fast_accum=fast)
    s = gf.schedule(p, resident=132)
    assert p.config == n64 and p.units == 33 and (s.clusters, s.dp_units, s.sk_units) == (132, 0, 33)


def test_split_heuristic_and_schedule():
    p = gf.plan_fp8(Fake((1024, 65536)), bt(1024, 65536), f32(), f32())
    # 64 tiles of 128x128 in pairs along M sharing B: two K ranges each fill 128 SMs
    assert p.config == gf.CONFIGS["n128_s6_c2"] and p.split == 2
    s = gf.schedule(p, resident=132)
    assert (s.clusters, s.grid, s.dp_units, s.sk_units, s.scatter) == (64, 128, 0, 32, 1)  # 2 boxes per tile: scatter
    assert s.ws_bytes == s.flag_count * 64 * 128 * 4 and s.flag_count == 32 * 2 * (2 + 2) * 2
    assert gf.schedule(p, resident=100).sk_units == 0  # the split tiles do not fit one wave: whole tiles
    assert gf.plan_fp8(Fake((256, 16384)), bt(256, 16384), f32(), f32()).config == gf.CONFIGS["m64_n64_s12_c1"]
    m64 = "m64_n128_s8_c1"
    p = gf.plan_fp8(Fake((256, 16384)), bt(256, 16384), f32(), f32(), out_dtype="float32", config=m64)
    assert p.split == 4 and gf.schedule(p, resident=132).scatter == 1  # fp32: 4 boxes per tile row
    p = gf.plan_fp8(Fake((256, 16384)), bt(256, 16384), f32(), f32(), config=m64)
    assert p.split == 4 and gf.schedule(p, resident=132).scatter == 0  # bf16: 2 boxes, 4 ranges: head adds
    assert gf.plan_fp8(Fake((4096, 4096)), bt(4096, 4096), f32(), f32()).split == 1
    assert gf.plan_fp8(Fake((256, 4096)), bt(256, 4096), f32(), f32()).split == 1  # 32 slabs: too short to split
    assert gf.plan_fp8(Fake((256, 16384)), bt(256, 16384), f32(), f32(), split=2).split == 2
    with pytest.raises(GemmError, match="divide the 128 K slabs"):
        gf.plan_fp8(Fake((256, 16384)), bt(256, 16384), f32(), f32(), split=3)


@pytest.mark.parametrize("cfg", ["n128_s6_c2n2_e1d", "n256_s4_c2", "m64_n128_s8_c1", "n192_s4_c2n2"])
def test_tensormaps(cfg):
    """fp8 maps: bytes (UINT8), 128-element (128-byte) K boxes of bm/cluster_n rows of A and bn/cluster rows of B;
    C boxes of 128 bytes x 64 rows of the output type."""
    c = gf.CONFIGS[cfg]
    p = gf.plan_fp8(Fake((4096, 4096)), bt(8192, 4096), f32(), f32(), config=cfg, fast_accum=c.bn > 192,
                    out_dtype="float32")
    ta, tb, tc = gf.tensormaps(p, 1 << 20, 1 << 24, 1 << 26)
    assert ta.dtype == tb.dtype == 0 and tc.dtype == 7
    assert ta.box_dim == (128, c.bm // c.cluster_n) and tb.box_dim == (128, c.bn // c.cluster)
    assert ta.global_dim == (4096, 4096) and tb.global_dim == (4096, 8192) and tc.global_dim == (8192, 4096)
    assert tc.box_dim == (32, 64) and tc.global_strides == (8192 * 4,)


def test_configs_fit_smem():
    from tmakit.kernels import gemm as gk

    for c in gf.CONFIGS.values():
        assert gk.smem_bytes(c) <= gk.SMEM_LIMIT


# ---------------------------------------------------------------------------------------------------------------
# NVRTC + SASS (no GPU needed)



@pytest.mark.parametrize("mode, fast", [(s, False) for s in gf.SCALINGS] + [("tensor", True), ("row", True)])
@pytest.mark.parametrize("out", ["bfloat16", "float16", "float32"])
def test_kernel_compiles_with_qgmma_and_tma(mode, fast, out):
    m, n, k = 4096, 4096, 4096
    a_t, b_t = (E4, E5) if out == "float16" else (E4, E4)
    p = gf.plan_fp8(Fake((m, k), dtype=a_t), bt(n, k, dtype=b_t), *scales(mode, m, n, k),
                    bias=Fake((n,), dtype=f"torch.{out}") if out != "bfloat16" else None, out_dtype=out,
                    fast_accum=fast)
    text, ops, kinds = fp8_sass("gemm_fp8.cu", gf.kernel_name(p))  # QGMMA only (no 16-bit MMA)
    assert ops["UTMALDG"] > 0 and ops["UTMASTG"] > 0, ops
    assert kinds == {(str(p.config.bn), SASS_TYPES[p.in_code])}, kinds
    # accumulators (and block scaling's partials) stay in registers: nothing spills in the mainloop, and at most a
    # few scalars around the epilogue (row-wise scales and the deferred epilogue's packed tile)
    lines = text.splitlines()
    mma = [i for i, ln in enumerate(lines) if "QGMMA" in ln]
    assert not any("LDL" in ln or "STL" in ln for ln in lines[mma[0]:mma[-1]])
    # (the overlapped two-level kernels hold three accumulator sets: their epilogue spills a few dozen words per tile)
    # (128x192 two-level tiles hold two 96-register sets: with row or block scales their prologue and epilogue
    # spill a few dozen words per tile)
    limit = 48 if p.config.defer else 64 if (p.config.overlap and not fast) or p.config.bn == 192 else 12
    assert ops["LDL"] + ops["STL"] <= limit, (ops["LDL"], ops["STL"])


@pytest.mark.parametrize("cfg", list(gf.CONFIGS))
def test_every_config_compiles(cfg):
    """Every fp8 config compiles (two-level where its tile allows, else fast accumulation) with multicast loads
    where it has clusters, and no spills in the mainloop."""
    pytest.importorskip("cuda.bindings.nvrtc")
    from tmakit import cuda as tkc
    from tmakit.cuda import sass

    c = gf.CONFIGS[cfg]
    two = c.bn <= 192 and not c.overlap
    mode = "block" if c.bn == 128 and two and gf.block_fits(c) else "row"
    p = gf.plan_fp8(Fake((512, 1024)), bt(512, 1024), *scales(mode, 512, 512, 1024), config=cfg,
                    fast_accum=not two)
    comp = tkc.compile_file(KERNELS_DIR / "gemm_fp8.cu", name_expressions=[gf.kernel_name(p)])
    try:
        text = sass.disassemble(comp.cubin)
    except tkc.RuntimeUnavailable:
        pytest.skip("no nvdisasm/cuobjdump")
    assert f"QGMMA.64x{c.bn}x32.F32.E4M3.E4M3" in text
    assert ("UTMALDG.2D.MULTICAST" in text) == (c.cluster_size > 1)
    lines = text.splitlines()
    mma = [i for i, ln in enumerate(lines) if "QGMMA" in ln]
    assert not any("LDL" in ln or "STL" in ln for ln in lines[mma[0]:mma[-1]])


def test_staged_epilogue_reads_shared_memory():
    """With staged epilogue vectors (row-wise scales and bias on 128x192 tiles) the epilogue reads its column scales
    and bias as paired shared loads (BN/8 each per thread) instead of global loads: the staging warp's few loads
    replace the consumers' 2 + BN/4 + BN/4 per tile."""
    pytest.importorskip("cuda.bindings.nvrtc")
    from tmakit import cuda as tkc
    from tmakit.cuda import sass

    m, n, k = 4096, 4096, 4096
    p = gf.plan_fp8(Fake((m, k)), bt(n, k), *scales("row", m, n, k), bias=Fake((n,), dtype="torch.bfloat16"),
                    config="n192_s4_c1")
    assert gf.epilogue_staged(p.config, "row", True)
    staged = gf.kernel_name(p)
    assert staged.endswith(", 2, 1, 0, 1, 1>")
    texts = []
    for name in (staged, staged[:-5] + "0, 1>"):
        comp = tkc.compile_file(KERNELS_DIR / "gemm_fp8.cu", name_expressions=[name])
        try:
            texts.append(sass.disassemble(comp.cubin))
        except tkc.RuntimeUnavailable:
            pytest.skip("no nvdisasm/cuobjdump")
    on, off = texts
    assert on.count("LDS.64") >= 2 * p.config.bn // 8 and off.count("LDS.64") == 0
    bm, bn = p.config.bm, p.config.bn
    epilogue_loads, staging_loads = 2 + bn // 4 + bn // 4, (bm + 2 * bn) // 32  # per thread / per lane
    assert sass.opcodes(off)["LDG"] - sass.opcodes(on)["LDG"] >= epilogue_loads - staging_loads


@pytest.mark.parametrize("mode", ["tensor", "block"])
def test_trace_build_reads_the_clock_only_when_asked(mode):
    """tools/bench/gemm_trace.py's build (TMAKIT_GEMM_TRACE=1) reads the SM clock at the mainloop's four trace
    points and stores them; the default build reads no clock and has the same wgmmas."""
    pytest.importorskip("cuda.bindings.nvrtc")
    from tmakit import cuda as tkc
    from tmakit.cuda import sass

    p = gf.plan_fp8(Fake((4096, 4096)), bt(4096, 4096), *scales(mode, 4096, 4096, 4096))
    name = gf.kernel_name(p)
    texts = []
    for opts in ([], ["-DTMAKIT_GEMM_TRACE=1"]):
        comp = tkc.compile_file(KERNELS_DIR / "gemm_fp8.cu", name_expressions=[name], options=opts)
        try:
            texts.append(sass.disassemble(comp.cubin))
        except tkc.RuntimeUnavailable:
            pytest.skip("no nvdisasm/cuobjdump")
    plain, traced = texts
    assert "SR_CLOCKLO" not in plain
    assert traced.count("SR_CLOCKLO") >= 4, traced.count("SR_CLOCKLO")
    assert sass.opcodes(plain)["QGMMA"] == sass.opcodes(traced)["QGMMA"]


# ---------------------------------------------------------------------------------------------------------------
# scaling math (torch / numpy, no GPU)

def _q(seed, shape, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape, generator=g) * scale).to(torch.bfloat16)


def test_quantize_roundtrip_and_scales():
    from tmakit.ops import quantize as q

    x = _q(0, (200, 300), 3.0)
    x[5, 7] = 100.0  # one outlier: per-tensor scale follows it, 1x128 only in its block
    for fn, shape in ((q.quantize_tensor, ()), (q.quantize_rows, (200, 1)), (q.quantize_1x128, (200, 3)),
                      (q.quantize_128x128, (2, 3))):
        qx, s = fn(x)
        assert qx.dtype == torch.float8_e4m3fn and s.dtype == torch.float32 and tuple(s.shape) == shape
        assert float(qx.float().abs().max()) <= 448.0
        d = q.dequantize(qx, s)
        rel = float(((d - x.float()).abs() / (x.float().abs() + 1e-3)).median())
        assert rel < 0.04, (fn.__name__, rel)  # e4m3: 3 mantissa bits, 2^-4 relative half-ulp at most
    _, s = q.quantize_1x128(x)
    assert float(s[5, 0]) == pytest.approx(100.0 / 448.0) and float(s[5, 1]) < 100.0 / 448.0
    zq, zs = q.quantize_rows(torch.zeros(3, 4))
    assert float(zs.min()) == 1.0 and float(zq.float().abs().max()) == 0.0
    with pytest.raises(ValueError, match="scale shape"):
        q.dequantize(qx, torch.ones(7, 7))


def _block_problem(m, n, k, seed=1):
    from tmakit.ops import quantize as q

    a, w = _q(seed, (m, k)), _q(seed + 1, (n, k))
    qa, sa = q.quantize_1x128(a)
    qw, sw = q.quantize_128x128(w)
    return qa, sa, qw, sw


def _fp64_ref(qa, sa, qw, sw):
    from tmakit.ops import quantize as q

    return q.dequantize(qa, sa).double() @ q.dequantize(qw, sw).double().t()


def test_block_two_level_accumulation_matches_reference():
    """The kernel's block-wise math, emulated: per 128-deep K block an fp32 partial sum of exact fp8 products, scaled
    by sa[row, kb] * sb[nb, kb] and added into an fp32 total. Equals the fp64 product of the dequantized operands to
    fp32 rounding (relative 1e-6), so the kernel's error is the tensor cores' accumulation inside a block."""
    m, n, k = 96, 200, 520  # K and N not multiples of 128: zero-filled last blocks
    qa, sa, qw, sw = _block_problem(m, n, k)
    A, W = qa.float().numpy(), qw.float().numpy()
    SA, SB = sa.numpy(), sw.numpy()
    total = np.zeros((m, n), np.float32)
    for kb in range(-(-k // 128)):
        ks = slice(128 * kb, min(k, 128 * kb + 128))
        part = (A[:, ks] @ W[:, ks].T).astype(np.float32)  # fp8 x fp8 products are exact in fp32
        scale = (SA[:, kb:kb + 1] * SB[np.arange(n) // 128, kb][None, :]).astype(np.float32)
        total = (total + part * scale).astype(np.float32)
    ref = _fp64_ref(qa, sa, qw, sw).numpy()
    err = np.abs(total - ref).max() / np.abs(ref).max()
    assert err < 1e-6, err
    # the scale is per block: a wrong K block index or N block gives a visibly different product
    wrong = A @ W.T * SA[:, :1] * SB[0, 0]
    assert np.abs(wrong - ref).max() / np.abs(ref).max() > 1e-2


@pytest.mark.parametrize("mode", ["tensor", "row", "block"])
def test_fallback_matches_reference(mode):
    import tmakit as tk
    from tmakit.ops import quantize as q

    m, n, k = 64, 96, 256
    a, w = _q(3, (m, k)), _q(4, (n, k))
    if mode == "tensor":
        (qa, sa), (qw, sw) = q.quantize_tensor(a), q.quantize_tensor(w)
        sb = sw
    elif mode == "row":
        (qa, sa), (qw, sw) = q.quantize_rows(a), q.quantize_rows(w)
        sb = sw.t()
    else:
        (qa, sa), (qw, sw) = q.quantize_1x128(a), q.quantize_128x128(w)
        sb = sw
    bias = _q(5, (n,))
    c = tk.ops.scaled_mm(qa, qw.t(), sa, sb, bias=bias, out_dtype=torch.bfloat16)
    assert tk.ops.last_path.startswith("torch:") and c.dtype == torch.bfloat16 and c.shape == (m, n)
    ref = q.dequantize(qa, sa).double() @ q.dequantize(qw, sw if mode != "row" else sw).double().t() + bias.double()
    err = float((c.double() - ref).abs().max() / ref.abs().max())
    assert err < 8e-3, err  # bf16 output rounding
    with pytest.raises(GemmError, match="not all tensors are CUDA"):
        tk.ops.scaled_mm(qa, qw.t(), sa, sb, strict=True)
    out = torch.empty(m, n, dtype=torch.float32)
    got = tk.ops.scaled_mm(qa, qw.t(), sa, sb, bias=bias.float(), out=out)
    assert got is out and float((out.double() - ref).abs().max() / ref.abs().max()) < 1e-5


def test_op_meaning_errors_raise_without_strict():
    import tmakit as tk

    qa = torch.zeros(8, 64).to(torch.float8_e4m3fn)
    qb = torch.zeros(16, 64).to(torch.float8_e4m3fn).t()
    one = torch.ones(())
    with pytest.raises(GemmError, match="do not compose"):
        tk.ops.scaled_mm(qa, qb[:32], one, one)
    with pytest.raises(GemmError, match="name no scaling mode"):
        tk.ops.scaled_mm(qa, qb, torch.ones(8, 2), torch.ones(1, 16))
    with pytest.raises(GemmError, match="float8"):
        tk.ops.scaled_mm(qa.float(), qb, one, one)
    with pytest.raises(GemmError, match="scale_b must be float32"):
        tk.ops.scaled_mm(qa, qb, one, one.double())
    with pytest.raises(GemmError, match="out.dtype is float32 but out_dtype=bfloat16"):
        tk.ops.scaled_mm(qa, qb, one, one, out=torch.empty(8, 16), out_dtype=torch.bfloat16)


def test_custom_op_under_torch_compile():
    import tmakit as tk
    from tmakit.ops import quantize as q

    qa, sa = q.quantize_rows(_q(6, (32, 128)))
    qw, sw = q.quantize_rows(_q(7, (48, 128)))

    def f(x, w, s1, s2):
        return tk.ops.scaled_mm(x, w.t(), s1, s2.t(), out_dtype=torch.float32) * 2

    got = torch.compile(f, backend="aot_eager", fullgraph=True)(qa, qw, sa, sw)
    ref = f(qa, qw, sa, sw)
    torch.testing.assert_close(got, ref)
    assert hasattr(torch.ops.tmakit, "scaled_mm") and hasattr(torch.ops.tmakit, "scaled_mm_out")


def test_bench_fp8_cli_and_random_shapes(capsys):
    from tmakit.bench import gemm_fp8 as bf
    from tmakit.bench import main as bench_main

    shapes = bf.random_shapes(50, seed=1)
    assert shapes == bf.random_shapes(50, seed=1) and len(set(shapes)) > 40
    assert all(1 <= m <= 8192 and n % 8 == 0 and k % 16 == 0 for m, n, k in shapes)
    with pytest.raises(SystemExit) as e:
        bench_main(["gemm", "--dtype", "fp8", "--help"])
    assert e.value.code == 0 and "--scaling" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------------------------
# GPU

def _gpu_problem(mode, m, n, k, ta=torch.float8_e4m3fn, tb=torch.float8_e4m3fn, seed=0):
    from tmakit.ops import quantize as q

    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, k, device="cuda", generator=g).to(torch.bfloat16)
    w = torch.randn(n, k, device="cuda", generator=g).to(torch.bfloat16)
    if mode == "tensor":
        (qa, sa), (qw, sw) = q.quantize_tensor(a, ta), q.quantize_tensor(w, tb)
        sb = sw
    elif mode == "row":
        (qa, sa), (qw, sw) = q.quantize_rows(a, ta), q.quantize_rows(w, tb)
        sb = sw.t()
    else:
        (qa, sa), (qw, sw) = q.quantize_1x128(a, ta), q.quantize_128x128(w, tb)
        sb = sw
    ref = q.dequantize(qa, sa).double() @ q.dequantize(qw, sw).double().t()
    return qa, qw.t(), sa, sb, ref


# Relative error (max |C - ref| / max |ref|) allowed: the output rounding (bf16 2^-9, fp16 2^-12 of an element) plus
# the accumulation. Two-level accumulation (default, block): fp32 sums of 128-deep tensor-core partials, fp32 output
# within 1e-3 (the issue's bound). fast accumulation: the fp8 tensor cores' reduced-precision accumulation over all
# of K (measured and printed; docs/GEMM.md "FP8").
TOL_FP8 = {torch.bfloat16: 8e-3, torch.float16: 2e-3, torch.float32: 1e-3}
TOL_FAST = 3e-2
MODES = [(s, False) for s in gf.SCALINGS] + [("tensor", True), ("row", True)]


def _err(out, ref) -> float:
    return float((out.double() - ref).abs().max() / ref.abs().max())


# shapes x output types: every shape with bf16 output, a few with fp16 / fp32 (each distinct kernel is one NVRTC
# compile on the test machine; this covers every default config: 64x128, 128x128 single / split K / 2x2 clusters,
# and with fast accumulation 128x256 clusters with and without the deferred epilogue)
_BF16_SHAPES = [(1, 16, 16), (100, 200, 160), (129, 264, 1040), (333, 520, 1024), (256, 512, 4096),
                (1000, 1000, 512), (2048, 2048, 2048), (256, 256, 16384), (200, 136, 8192), (64, 4096, 1024)]
_CASES = ([(s, torch.bfloat16) for s in _BF16_SHAPES]
          + [(s, od) for s in ((129, 264, 1040), (256, 256, 16384), (2048, 2048, 2048))
             for od in (torch.float16, torch.float32)])


@pytest.mark.gpu
@pytest.mark.parametrize("mode, fast", MODES)
@pytest.mark.parametrize("shape, out_dtype", _CASES)
def test_scaled_mm_gpu(mode, fast, shape, out_dtype):
    m, n, k = shape
    import tmakit as tk

    if (n * torch.tensor([], dtype=out_dtype).element_size()) % 16:
        pytest.skip("output rows not 16-byte aligned")
    qa, qb, sa, sb, ref = _gpu_problem(mode, m, n, k)
    out = torch.full((m, n), float("nan"), dtype=out_dtype, device="cuda")  # poisoned: every element written
    got = tk.ops.scaled_mm(qa, qb, sa, sb, out=out, use_fast_accum=fast, strict=True)
    torch.cuda.synchronize()
    seen = gf.scaling_of(m, n, k, tuple(sa.shape), tuple(sb.shape))  # 1 x 16 x 16 block scales are one element each
    assert got is out and tk.ops.last_path == f"tma:scaled_mm:{seen}"
    assert bool(torch.isfinite(out).all())
    err = _err(out, ref)
    print(f"{mode} fast={fast} {out_dtype} {m}x{n}x{k}: rel err {err:.2e}")
    assert err < (max(TOL_FAST, TOL_FP8[out_dtype]) if fast else TOL_FP8[out_dtype]), err


@pytest.mark.gpu
@pytest.mark.parametrize("mode, fast", MODES)
def test_scaled_mm_gpu_accuracy_long_k(mode, fast):
    """fp32 output, K = 16384: two-level accumulation stays within 1e-3 of the fp64 product of the dequantized
    operands; the fast chain's error is printed (docs/GEMM.md)."""
    import tmakit as tk

    qa, qb, sa, sb, ref = _gpu_problem(mode, 512, 512, 16384, seed=3)
    out = tk.ops.scaled_mm(qa, qb, sa, sb, out_dtype=torch.float32, use_fast_accum=fast, strict=True)
    err = _err(out, ref)
    fro = float((out.double() - ref).norm() / ref.norm())
    print(f"ACCURACY {mode} fast={fast} 512x512x16384 fp32 out: max-rel {err:.2e}, frobenius-rel {fro:.2e}")
    assert err < (TOL_FAST if fast else 1e-3), err


@pytest.mark.gpu
@pytest.mark.parametrize("mode", gf.SCALINGS)
@pytest.mark.parametrize("ta, tb", [(torch.float8_e4m3fn, torch.float8_e5m2), (torch.float8_e5m2, torch.float8_e4m3fn),
                                    (torch.float8_e5m2, torch.float8_e5m2)])
def test_scaled_mm_gpu_types_and_bias(mode, ta, tb):
    import tmakit as tk

    m, n, k = 300, 392, 640
    qa, qb, sa, sb, ref = _gpu_problem(mode, m, n, k, ta, tb)
    bias = torch.randn(n, device="cuda").to(torch.bfloat16)
    got = tk.ops.scaled_mm(qa, qb, sa, sb, bias=bias, strict=True)
    ref = ref + bias.double()
    err = _err(got, ref)
    assert tk.ops.last_path == f"tma:scaled_mm:{mode}" and err < TOL_FP8[torch.bfloat16], err


@pytest.mark.gpu
@pytest.mark.parametrize("mode, shape, config", [
    ("block", (1024, 1024, 16384), None),          # 128x128 pairs along M, K split in two (reduce-scatter)
    ("row", (256, 264, 16384), None),              # 64x128 tiles, K over stream-K ranges, a partial column tile
    ("row", (1000, 1000, 2048), "n192_s4_c2"),     # 128x192 pairs, remainder rows and columns
    ("tensor", (4096, 4096, 4096), "n192_s4_c1"),  # a stream-K tail
    ("row", (4000, 4096, 1024), "m64_n128_s8_c1"),  # ~15 units per CTA through the two staging slots, rows past M
])
def test_scaled_mm_gpu_staged_epilogue_plans(mode, shape, config):
    """Staged epilogue vectors (row-wise scales, bias) on the plans whose units are not plain whole tiles: split K,
    stream-K ranges, clusters, remainders; every output element against the fp64 reference plus bias."""
    import tmakit as tk

    m, n, k = shape
    qa, qb, sa, sb, ref = _gpu_problem(mode, m, n, k, seed=5)
    bias = torch.randn(n, device="cuda").to(torch.bfloat16)
    p = gf.plan_fp8(qa, qb, sa, sb, bias, None, "bfloat16", config, False, None)
    assert gf.epilogue_staged(p.config, p.scaling, True), p.config
    out = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    tk.ops.scaled_mm(qa, qb, sa, sb, bias=bias, out=out, strict=True, config=config)
    torch.cuda.synchronize()
    assert tk.ops.last_path == f"tma:scaled_mm:{mode}" and bool(torch.isfinite(out).all())
    err = _err(out, ref + bias.double())
    assert err < TOL_FP8[torch.bfloat16], err


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["tensor", "row"])
@pytest.mark.parametrize("fast", [False, True])
def test_scaled_mm_gpu_matches_torch(mode, fast):
    """Same inputs through torch._scaled_mm (cuBLAS), same accumulation setting: the two agree closely."""
    import tmakit as tk

    qa, qb, sa, sb, ref = _gpu_problem(mode, 512, 768, 1024)
    od = torch.float32 if mode == "tensor" else torch.bfloat16  # cuBLAS's row-wise scaling writes bf16 only
    got = tk.ops.scaled_mm(qa, qb, sa, sb, out_dtype=od, use_fast_accum=fast, strict=True)
    want = torch._scaled_mm(qa, qb, sa, sb, out_dtype=od, use_fast_accum=fast)
    err = float((got.float() - want.float()).abs().max() / want.float().abs().max())
    print(f"vs torch._scaled_mm {mode} fast={fast}: {err:.2e}; tmakit vs fp64 {_err(got, ref):.2e}, "
          f"torch vs fp64 {_err(want, ref):.2e}")
    assert err < (TOL_FAST if fast else (2e-3 if od == torch.float32 else 8e-3)), err


@pytest.mark.gpu
def test_scaled_mm_gpu_fallback_on_unaligned_k():
    import tmakit as tk

    qa, qb, sa, sb, ref = _gpu_problem("tensor", 64, 64, 40)  # K = 40: a's rows are 40 bytes, not 16-aligned
    got = tk.ops.scaled_mm(qa, qb, sa, sb)
    assert tk.ops.last_path.startswith("torch:") and "multiple of 16" in tk.ops.last_path
    assert _err(got, ref) < 8e-3
    with pytest.raises(GemmError, match="multiple of 16"):
        tk.ops.scaled_mm(qa, qb, sa, sb, strict=True)


@pytest.mark.gpu
def test_scaled_mm_gpu_under_compile_and_graph():
    import tmakit as tk

    qa, qb, sa, sb, ref = _gpu_problem("block", 256, 384, 512)
    f = torch.compile(lambda *xs: tk.ops.scaled_mm(*xs, out_dtype=torch.float32), backend="aot_eager",
                      fullgraph=True)
    assert _err(f(qa, qb, sa, sb), ref) < 1e-3
    out = torch.full((256, 384), float("nan"), device="cuda")
    tk.ops.scaled_mm(qa, qb, sa, sb, out=out)  # plan and compile outside the capture
    out.fill_(float("nan"))
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        tk.ops.scaled_mm(qa, qb, sa, sb, out=out)
    g.replay()
    torch.cuda.synchronize()
    assert _err(out, ref) < 1e-3


def _log_and_sass(p):
    """NVRTC's log and the SASS lines of a plan's kernel (skips without NVRTC or a disassembler)."""
    pytest.importorskip("cuda.bindings.nvrtc")
    from tmakit import cuda as tkc
    from tmakit.cuda import sass

    comp = tkc.compile_file(KERNELS_DIR / "gemm_fp8.cu", name_expressions=[gf.kernel_name(p)])
    try:
        return comp.log or "", sass.disassemble(comp.cubin).splitlines()
    except tkc.RuntimeUnavailable:
        pytest.skip("no nvdisasm/cuobjdump")


@pytest.mark.parametrize("cfg", [c for c, v in gf.CONFIGS.items() if v.overlap and v.bn <= 128 and v.bm == 128])
def test_two_level_with_overlap_compiles_without_serialized_wgmma(cfg):
    """Tensor / row scales with two-level accumulation and overlap: the slabs alternate between two partial sets;
    ptxas must not serialize the wgmmas (warning C7520) and nothing spills in the mainloop."""
    p = gf.plan_fp8(Fake((512, 1024)), bt(512, 1024), *scales("tensor", 512, 512, 1024), config=cfg)
    log, lines = _log_and_sass(p)
    assert "C7520" not in log, log
    mma = [i for i, ln in enumerate(lines) if "QGMMA" in ln]
    assert len(mma) == 8  # four k32 steps into each of the two partial sets
    assert not any("LDL" in ln or "STL" in ln for ln in lines[mma[0]:mma[-1]])


@pytest.mark.parametrize("mode", ["tensor", "row", "block"])
def test_two_level_default_one_group_per_slab_with_plain_promotion(mode):
    """The default two-level kernel of a large problem (128x192, no overlap): the slab's four k32 wgmmas form one
    group (no fence or wait between them, no ptxas serialization note) fed by descriptors in uniform registers (no
    R2UR among them); the two consumers issue and promote side by side in every mode (no 256-thread named barrier
    anywhere: taking turns measured slower, docs/design/gemm.md); the promotion is one branch-free run of one FADD
    (FFMA with block scales) per accumulator element with no select per element (the total starts each unit at
    zero; block scales: one select per row and slab picks the scale block of the tile's middle column groups)."""
    m, n, k = 4096, 4096, 4096
    p = gf.plan_fp8(Fake((m, k)), bt(n, k), *scales(mode, m, n, k))
    assert p.config == gf.CONFIGS["n192_s4_c1"]
    log, lines = _log_and_sass(p)
    assert "C7514" not in log and "C7520" not in log, log
    mma = [i for i, ln in enumerate(lines) if "QGMMA" in ln]
    assert len(mma) == 4 and mma[-1] - mma[0] < 60
    body = lines[mma[0]:mma[-1]]
    assert not any("WARPGROUP" in ln or "LDL" in ln or "STL" in ln or "R2UR" in ln for ln in body)
    assert not any(("BAR.SYNC" in ln or "BAR.ARV" in ln) and "0x100" in ln for ln in lines)
    promo = lines[mma[-1]:mma[-1] + 200]
    op = "FFMA" if mode == "block" else "FADD"
    at = [i for i, ln in enumerate(promo) if f" {op} " in ln]
    assert len(at) >= p.config.bn // 2
    assert not any("BRA" in ln for ln in promo[at[0]:at[p.config.bn // 2 - 1]])  # one run, no second path
    assert sum("FSEL" in ln for ln in promo) <= (2 if mode == "block" else 0)


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(300, 1000, 1040), (128, 576, 384), (257, 392, 2048)])
def test_scaled_mm_gpu_block_on_192_column_tiles(shape):
    """Block scales on 128x192 tiles: each tile spans two 128-column scale blocks, split at column 128 or 64 of the
    tile (n0 = 192 j), the second block clamped at N; every element against the fp64 product, fp32 output."""
    m, n, k = shape
    import tmakit as tk

    qa, qb, sa, sb, ref = _gpu_problem("block", m, n, k)
    out = torch.full((m, n), float("nan"), dtype=torch.float32, device="cuda")
    tk.ops.scaled_mm(qa, qb, sa, sb, out=out, config="n192_s4_c1", strict=True)
    torch.cuda.synchronize()
    assert bool(torch.isfinite(out).all()) and _err(out, ref) < TOL_FP8[torch.float32], _err(out, ref)


@pytest.mark.gpu
@pytest.mark.parametrize("layout", ["k-major", "m-major"])
@pytest.mark.parametrize("shape, config", [((300, 1000, 1536), "n192_s4_c2"), ((260, 392, 2048), None),
                                           ((1, 512, 1024), None), ((1000, 1000, 512), "n128_s5_c2"),
                                           ((1000, 1000, 1024), "n192_s4_c2n2"),
                                           ((128, 576, 4096), "m64_n128_s8_c1")])
def test_scaled_mm_gpu_block_scales_by_tma_match_the_scale_warp(layout, shape, config):
    """Block scales loaded by TMA (SCALE 4 from K-major scale_a, 5 from M-major, torch._scaled_mm's 1x128 layout)
    give the same bits as the scale warp's staging (SCALE 3: the same scales, the same sums) on 64-, 128- and
    192-column tiles, 64-row tiles, clusters, split K and partial tiles, and match the fp64 product (fp32 output)."""
    import dataclasses

    m, n, k = shape
    qa, qb, sa, sb, ref = _gpu_problem("block", m, n, k, seed=7)
    if layout == "m-major":
        sa = sa.t().contiguous().t()
    p = gf.plan_fp8(qa, qb, sa, sb, None, None, "float32", config, False, None)
    assert p.scale_tma == (4 if layout == "k-major" or m == 1 else 5)  # one row: either layout is K-major
    outs = []
    for plan in (p, dataclasses.replace(p, scale_tma=0)):
        sched = gf.schedule(plan)
        ws = torch.empty(max(sched.ws_bytes, 1), dtype=torch.uint8, device="cuda")
        flags = torch.zeros(max(sched.flag_count, 1), dtype=torch.int32, device="cuda")
        out = torch.full((m, n), float("nan"), dtype=torch.float32, device="cuda")
        gf.launcher(plan, qa.data_ptr(), qb.data_ptr(), out.data_ptr(), sa.data_ptr(), sb.data_ptr(), 0,
                    ws.data_ptr(), flags.data_ptr())()
        torch.cuda.synchronize()
        outs.append(out)
    assert torch.equal(outs[0], outs[1])
    assert bool(torch.isfinite(outs[0]).all()) and _err(outs[0], ref) < TOL_FP8[torch.float32], _err(outs[0], ref)


@pytest.mark.gpu
def test_scaled_mm_gpu_block_scales_by_tma_refuse_other_pointers():
    """A plan made for 16-byte aligned scale tensors (TMA maps) refuses a scale pointer that is not, naming the
    rule, instead of encoding a map the hardware would reject."""
    m, n, k = 256, 256, 512
    qa, qb, sa, sb, _ = _gpu_problem("block", m, n, k)
    p = gf.plan_fp8(qa, qb, sa, sb, config="n128_s5_c2")
    assert p.scale_tma == 4
    out = torch.empty((m, n), dtype=torch.bfloat16, device="cuda")
    with pytest.raises(GemmError, match="16-byte aligned"):
        gf.launcher(p, qa.data_ptr(), qb.data_ptr(), out.data_ptr(), sa.data_ptr() + 4, sb.data_ptr())


def test_rows_an_odd_multiple_of_16_bytes_apart_go_to_torch_per_tensor():
    """Per-tensor scales whose A or B rows are an odd multiple of 16 bytes apart (K = 16 mod 32 for packed fp8
    operands) go to torch._scaled_mm without a knob; row-wise and block scales, shapes torch refuses (N not a multiple
    of 16) and single-row operands stay on the kernel."""
    from tmakit.ops.scaled_mm import slow_pitch

    def plan(m, n, k, mode="tensor"):
        return gf.plan_fp8(Fake((m, k)), bt(n, k), *scales(mode, m, n, k))

    assert "a's rows are 12208 bytes apart" in slow_pitch(plan(7515, 7136, 12208))
    assert slow_pitch(plan(512, 512, 4112, "row")) == ""
    assert slow_pitch(plan(4243, 7968, 13280)) == ""  # 13280 = 32 x 415
    assert slow_pitch(plan(512, 512, 4112, "block")) == ""
    assert slow_pitch(plan(512, 520, 4112)) == ""  # torch._scaled_mm needs N % 16 == 0
    assert slow_pitch(plan(1, 512, 4112)).startswith("b's rows")  # A's single row: only B's pitch matters


@pytest.mark.parametrize("mode", ["tensor", "row", "block"])
def test_odd_pitch_plans_multicast_clusters(mode):
    """Rows an odd multiple of 16 bytes apart: past a wave of tiles, the 128-row tiles the rule picks run in clusters
    that multicast (2x2 from 6 column tiles, pairs along M below; 128x128 block tiles in pairs), with the same tile
    width as on an even pitch; 64-row tiles (few rows or tiles) and problems under a wave stay single."""
    def cfg(m, n, k, **kw):
        return gf.plan_fp8(Fake((m, k)), bt(n, k), *scales(mode, m, n, k), **kw).config

    width = cfg(4096, 4096, 4096).bn
    c = cfg(4096, 4096, 4112)  # 4112 = 16 x 257
    assert (c.bn, c.cluster, c.cluster_n) == (width, 2, 2 if width == 192 or mode != "block" else 1)
    c = cfg(11642, 560, 720)  # 3 column tiles of 192: pairs
    assert (c.cluster, c.cluster_n) == (2, 1)
    assert cfg(64, 4096, 4112).cluster_size == 1  # 64x128 tiles
    assert cfg(1224, 1056, 816).cluster_size == 1  # 90 tiles of 128x128: less than a wave
    assert cfg(4096, 4096, 4112, config="n192_s4_c1").cluster_size == 1  # a config is kept


def test_a_layout_torch_refuses_does_not_refuse_other_layouts(monkeypatch):
    """torch._scaled_mm refusing one call (here: a B that is not column-major) sends that layout to the reference
    again without asking torch, but other layouts of the same types keep torch's route: the refusal is remembered per
    device and layout, not per dtype (a refused CPU or row-major call once cost every later call its cached route)."""
    import importlib

    import tmakit as tk

    sm = importlib.import_module("tmakit.ops.scaled_mm")
    real = torch._scaled_mm

    def picky(a, b, *args, **kw):
        if b.stride(0) != 1:
            raise RuntimeError("mat2 must be col_major")
        return real(a, b, *args, **kw)

    monkeypatch.setattr(torch, "_scaled_mm", picky)
    monkeypatch.setattr(sm, "_refused", {})
    g = torch.Generator().manual_seed(0)
    a = torch.randn(32, 64, generator=g).to(torch.float8_e4m3fn)
    b_rows = torch.randn(64, 48, generator=g).to(torch.float8_e4m3fn)
    one = torch.tensor(1.0)
    c = tk.ops.scaled_mm(a, b_rows, one, one)
    assert torch.allclose(c.float(), (a.float() @ b_rows.float()).bfloat16().float())
    assert sm._torch_kind("tensor", a, b_rows, torch.bfloat16, False, None) in sm._refused
    b_cols = b_rows.t().contiguous().t()
    assert sm._torch_kind("tensor", a, b_cols, torch.bfloat16, False, None) not in sm._refused


def test_torch_gets_a_contiguous_bias_and_may_refuse_with_value_error(monkeypatch):
    """The torch path hands torch._scaled_mm a contiguous bias (torch 2.11 read a strided one as if contiguous: wrong
    results), and a ValueError from torch (its refusal of some layouts) falls through to the reference."""
    import importlib

    import tmakit as tk

    sm = importlib.import_module("tmakit.ops.scaled_mm")
    real, seen = torch._scaled_mm, []

    def spy(a, b, *args, bias=None, **kw):
        seen.append(None if bias is None else bias.is_contiguous())
        return real(a, b, *args, bias=bias, **kw)

    monkeypatch.setattr(torch, "_scaled_mm", spy)
    monkeypatch.setattr(sm, "_refused", {})
    g = torch.Generator().manual_seed(1)
    a = torch.randn(16, 64, generator=g).to(torch.float8_e4m3fn)
    b = torch.randn(32, 64, generator=g).to(torch.float8_e4m3fn).t()
    bias = torch.randn(32, 2, generator=g).to(torch.bfloat16)[:, 1]  # stride 2
    one = torch.tensor(1.0)
    want = (a.float() @ b.float() + bias.float()).bfloat16().float()
    try:
        c = tk.ops.scaled_mm(a, b, one, one, bias=bias)
    except Exception as e:  # pragma: no cover - a torch without this CPU kernel takes the reference below
        pytest.skip(f"torch._scaled_mm on the CPU: {e}")
    if seen:
        assert seen[-1] is True
    assert torch.allclose(c.float(), want, rtol=2e-2, atol=2e-2)

    def refuse(*args, **kw):
        raise ValueError("this layout is not supported")

    monkeypatch.setattr(torch, "_scaled_mm", refuse)
    monkeypatch.setattr(sm, "_refused", {})
    c = tk.ops.scaled_mm(a, b, one, one, bias=bias)
    assert torch.allclose(c.float(), want, rtol=2e-2, atol=2e-2)


def test_measured_classes_route_to_torch():
    """Without a knob, per-tensor calls go to torch._scaled_mm with fast accumulation and, with two-level
    accumulation, below 4 waves of 128x128 tiles or above K = 1536; two-level row-wise ones below K = 2048; block
    scales, row-wise fast accumulation, e5m2 x e5m2 and shapes torch refuses stay."""
    from tmakit.kernels.gemm import NUM_SMS
    from tmakit.ops.scaled_mm import ROW_KERNEL_MIN_K, TENSOR_KERNEL_MAX_K, TENSOR_KERNEL_MIN_WAVES, slower_class

    def plan(m, n, k, mode="tensor", fast=False, types=(E4, E4)):
        return gf.plan_fp8(Fake((m, k), dtype=types[0]), bt(n, k, dtype=types[1]), *scales(mode, m, n, k),
                           fast_accum=fast)

    tiles = TENSOR_KERNEL_MIN_WAVES * NUM_SMS  # of 128x128: 4 x 132 = 528 = 24 x 22
    assert tiles == 24 * 22
    assert slower_class(plan(24 * 128, 22 * 128, TENSOR_KERNEL_MAX_K)) == ""
    assert slower_class(plan(24 * 128, 21 * 128, 1024)).startswith("per-tensor scales with two-level")
    assert slower_class(plan(8192, 8192, TENSOR_KERNEL_MAX_K + 32)).startswith("per-tensor scales with two-level")
    assert slower_class(plan(8192, 8192, 256)) == ""
    assert slower_class(plan(16, 4096, 4096)).startswith("per-tensor scales")
    assert slower_class(plan(4096, 4096, ROW_KERNEL_MIN_K - 32, "row")).startswith("row-wise scales")
    assert slower_class(plan(64, 4096, ROW_KERNEL_MIN_K - 32, "row")).startswith("row-wise scales")
    assert slower_class(plan(4096, 4096, ROW_KERNEL_MIN_K, "row")) == ""
    assert slower_class(plan(64, 128, ROW_KERNEL_MIN_K, "row")) == ""
    assert slower_class(plan(4096, 4096, 4096, "block")) == ""
    assert slower_class(plan(16, 128, 256, "block")) == ""
    assert slower_class(plan(4096, 4096, 4096, fast=True)).startswith("per-tensor scales with fast accumulation")
    assert slower_class(plan(4096, 4096, 4096, "row", fast=True)) == ""
    assert slower_class(plan(4096, 4096, 4096, types=("torch.float8_e5m2",) * 2)) == ""
    assert slower_class(plan(4096, 4104, 4096)) == ""  # torch._scaled_mm needs N % 16 == 0


@pytest.mark.gpu
def test_scaled_mm_gpu_routes_odd_16_byte_rows_to_torch():
    """A default call whose rows are 16 mod 32 bytes apart runs torch._scaled_mm (and says so); strict=True runs
    the kernel; both match the fp64 product."""
    import tmakit as tk

    qa, qb, sa, sb, ref = _gpu_problem("tensor", 300, 512, 1040)
    got = tk.ops.scaled_mm(qa, qb, sa, sb, out_dtype=torch.float32)
    assert tk.ops.last_path.startswith("torch:a's rows are 1040 bytes apart") and _err(got, ref) < 1e-3
    got = tk.ops.scaled_mm(qa, qb, sa, sb, out_dtype=torch.float32, strict=True)
    assert tk.ops.last_path == "tma:scaled_mm:tensor" and _err(got, ref) < 1e-3


@pytest.mark.gpu
@pytest.mark.parametrize("mode, m, route", [("tensor", 256, "torch:per-tensor"), ("row", 64, "tma:scaled_mm:row"),
                                            ("block", 300, "tma:scaled_mm:block")])
def test_repeated_default_calls_take_the_cached_path(mode, m, route):
    """A default call made again runs from the cache (tmakit.ops.scaled_mm._fast): the same route and result, with a
    fresh ``out`` each time and with a new result tensor per call; a call with a knob never uses the cache."""
    import importlib

    import tmakit as tk

    sm = importlib.import_module("tmakit.ops.scaled_mm")  # the module (tk.ops.scaled_mm is the function)
    n, k = 512, 2048
    qa, qb, sa, sb, ref = _gpu_problem(mode, m, n, k)
    results = []
    for _ in range(3):
        out = torch.full((m, n), float("nan"), dtype=torch.float32, device="cuda")
        got = tk.ops.scaled_mm(qa, qb, sa, sb, out=out)
        assert got is out and tk.ops.last_path.startswith(route), tk.ops.last_path
        results.append(got)
        new = tk.ops.scaled_mm(qa, qb, sa, sb, out_dtype=torch.float32)
        assert new.data_ptr() != out.data_ptr() and tk.ops.last_path.startswith(route)
        results.append(new)
    torch.cuda.synchronize()
    assert any(key[3] == qa.data_ptr() for key in sm._fast)
    for r in results:
        assert _err(r, ref) < TOL_FP8[torch.float32], _err(r, ref)
    tk.ops.scaled_mm(qa, qb, sa, sb, out_dtype=torch.float32, strict=True)
    assert tk.ops.last_path == f"tma:scaled_mm:{mode}"


# (mode, fast, shape, out dtype, bias): shapes whose last wave of tiles is partial, so the default schedule deals it
# out as stream-K ranges finished in the kernel (128x192, 128x128 and, with fast accumulation, 128x256 cluster tiles;
# ragged M, N and K)
_STREAM_K_CASES = [("tensor", False, (1024, 5120, 4096), torch.bfloat16, False),  # 128x192: 216 tiles
                   ("tensor", False, (1000, 5104, 4000), torch.float32, True),
                   ("row", False, (1024, 2688, 4096), torch.float16, False),  # 128x128: 168 tiles
                   ("block", False, (1000, 5104, 4000), torch.bfloat16, False),
                   ("block", False, (2048, 1280, 8192), torch.float32, False),  # 128x128: 160 tiles
                   ("row", True, (1000, 5104, 8000), torch.bfloat16, False),  # fast: 320 tiles of 128x128
                   ("block", False, (18, 768, 6336), torch.float32, False),  # 12 tiles of 64x64 over 75 CTAs
                   ("tensor", False, (1, 160, 4256), torch.bfloat16, True)]  # 3 tiles of 64x64 over 12 CTAs


# decode plans (64x64 tiles): a whole short wave as stream-K, rows and columns past the problem's, 128-column
# B scale blocks split across tiles, a bias, fp16 / fp32 outputs
_DECODE_CASES = [("block", False, shape, torch.bfloat16, True) for shape in
                 ((1, 2112, 7168), (37, 960, 4096), (64, 2880, 2048))] + \
                [(mode, fast, (5, 1344, 2560), od, bias) for mode, fast in MODES
                 for od, bias in ((torch.bfloat16, False), (torch.float16, True), (torch.float32, False))]


@pytest.mark.gpu
@pytest.mark.parametrize("mode, fast, shape, out_dtype, bias", _DECODE_CASES)
def test_scaled_mm_gpu_decode_plans(mode, fast, shape, out_dtype, bias):
    """Decode shapes on 64x64 tiles: every mode's result against the fp64 reference, call after call."""
    p = _check_calls(mode, fast, shape, out_dtype, bias, seed=9, strict=True)
    assert p.config.bn == 64 and p.config.bm == 64, p.config


def _check_calls(mode, fast, shape, out_dtype, bias, seed, strict):
    """Three calls of ``tk.ops.scaled_mm`` (checked, then the cached path twice) into NaN-poisoned outputs, each
    against the fp64 reference; returns the plan."""
    import tmakit as tk

    m, n, k = shape
    qa, qb, sa, sb, ref = _gpu_problem(mode, m, n, k, seed=seed)
    od = str(out_dtype).split(".")[-1]
    bvec = torch.randn(n, device="cuda").to(out_dtype) if bias else None
    if bias:
        ref = ref + bvec.double()
    p = gf.plan_fp8(qa, qb, sa, sb, bvec, None, od, None, fast, None)
    for _ in range(3):
        out = torch.full((m, n), float("nan"), dtype=out_dtype, device="cuda")
        tk.ops.scaled_mm(qa, qb, sa, sb, bias=bvec, out=out, use_fast_accum=fast, strict=strict)
        torch.cuda.synchronize()
        assert tk.ops.last_path == f"tma:scaled_mm:{mode}"
        err = _err(out, ref)
        assert err < (max(TOL_FAST, TOL_FP8[out_dtype]) if fast else TOL_FP8[out_dtype]), err
    return p


@pytest.mark.gpu
@pytest.mark.parametrize("mode, fast, shape, out_dtype, bias", _STREAM_K_CASES)
def test_scaled_mm_gpu_stream_k_tail(mode, fast, shape, out_dtype, bias):
    """The partial last wave (or a whole short wave, over fewer CTAs) as stream-K ranges: every scaling mode's
    result, fixed up across CTAs before the epilogue's scales and bias, matches the fp64 reference, call after call
    (block-wise and fast accumulation: default calls, whose cached path fetches the stream's workspace)."""
    strict = mode != "block" and not fast  # default calls of these classes go to cuBLAS (docs/GEMM.md)
    p = _check_calls(mode, fast, shape, out_dtype, bias, seed=5, strict=strict)
    assert gf.schedule(p).sk_units > 0, (p.units, gf.schedule(p))


# ---------------------------------------------------------------------------------------------------------------
# two CTAs per SM (64x128 tiles in half an SM's shared memory each)

X2 = "m64_n128_s4_c1_e1_x2"


@pytest.mark.parametrize("mode, bias", [("tensor", False), ("row", True), ("block", False)])
def test_two_per_sm_config_fits_half_an_sm(mode, bias):
    """Each of two resident CTAs takes at most half the SM's 228 KiB less the 1 KiB reserved per CTA, with the block
    scales or the staged epilogue vectors; the kernel is instantiated for two CTAs per SM."""
    c = gf.CONFIGS[X2]
    assert (c.bm, c.bn, c.per_sm, c.consumers) == (64, 128, 2, 1) and gk.smem_limit(c) == 228 * 1024 // 2 - 1024
    p = gf.plan_fp8(Fake((100, 1024)), bt(18432, 1024), *scales(mode, 100, 18432, 1024), config=X2,
                    bias=Fake((18432,), dtype="torch.bfloat16") if bias else None)
    assert gf.plan_smem(p) <= gk.smem_limit(c)
    assert gf.epilogue_staged(c, mode, bias) == (mode == "row")
    assert gf.kernel_name(p).endswith(", 2>")
    assert gk.smem_limit(gf.CONFIGS["m64_n128_s8_c1"]) == gk.SMEM_LIMIT


def test_two_per_sm_rule():
    """choose_config takes two 64x128 CTAs per SM where the waves estimate finds them 10 % faster than single 64x128
    CTAs: just over one wave of single CTAs (144 tiles) or over three (432); not at two or three waves (288), not
    below a wave, not with fast accumulation, never with per_sm=1; and 4 % faster than 128x128 tiles on 129-192
    rows."""
    def pick(m, n, k, mode="tensor", **kw):
        return gf.choose_config(m, n, k, mode, **kw)

    x2 = gf.CONFIGS[X2]
    for m, n in ((32, 18432), (160, 18432)):  # 144 and 432 tiles of 64x128
        assert pick(m, n, 7168) == x2 and pick(m, n, 7168, "block") == x2
        assert pick(m, n, 7168, per_sm=1).per_sm == 1
    for m, n in ((96, 18432), (128, 18432), (128, 8192), (1, 7168), (4096, 4096)):
        assert pick(m, n, 7168).per_sm == 1, (m, n)
    assert pick(32, 18432, 7168, fast_accum=True).per_sm == 1
    # 129-192 rows, which 128x128 tiles pad to 256: pairs from an estimated 1.04x (160x8192x8192: 192 tiles of
    # 64x128 in one wave of pairs against 128 of 128x128 in one wave); 65-128 rows keep 128x128 tiles
    assert pick(160, 8192, 8192) == x2 and pick(160, 8192, 8192, "block") == x2
    assert pick(160, 8192, 8192, per_sm=1) == gf.CONFIGS["n128_s6_c1"]
    assert pick(88, 12544, 12032) == gf.CONFIGS["n128_s6_c1"] and pick(256, 8192, 8192).per_sm == 1
    assert gf.two_per_sm(32, 18432, gf.CONFIGS["n128_s6_c1"]) == gf.CONFIGS["n128_s6_c1"]  # only 64-row plans
    assert pick(300, 18432, 7168).bm == 128  # 128x192 tiles stay (block-scaled: 0.88x on pairs of 64-row CTAs)


@pytest.mark.parametrize("mode", ["tensor", "block"])
def test_two_per_sm_kernel_compiles_without_spills(mode):
    """Launched at 128 registers a thread (two 256-thread CTAs per SM), the consumer takes 200 by setmaxnreg: the
    two-level mainloop and epilogue fit without local memory."""
    p = gf.plan_fp8(Fake((100, 1024)), bt(18432, 1024), *scales(mode, 100, 18432, 1024), config=X2)
    log, lines = _log_and_sass(p)
    assert "C7514" not in log and "C7520" not in log, log
    assert sum("QGMMA" in ln for ln in lines) == 4
    assert not any("LDL" in ln or "STL" in ln for ln in lines)
    assert any("SETMAXREG" in ln and "0xc8" in ln for ln in lines)  # 200


@pytest.mark.gpu
@pytest.mark.parametrize("mode, out_dtype, bias", [("tensor", torch.bfloat16, False), ("row", torch.float32, True),
                                                   ("block", torch.float32, False), ("block", torch.bfloat16, True)])
def test_scaled_mm_gpu_two_per_sm(mode, out_dtype, bias):
    """64x128 tiles two CTAs per SM: twice the SMs' CTAs resident (the persistent grid sizes by occupancy), every
    element of a NaN-poisoned output against the fp64 product (rows past M in the last tile, N past the last column
    tile)."""
    import tmakit as tk

    m, n, k = 100, 18400, 1536
    qa, qb, sa, sb, ref = _gpu_problem(mode, m, n, k)
    b = torch.randn(n, device="cuda").to(out_dtype) if bias else None
    if bias:
        ref = ref + b.double()
    p = gf.plan_fp8(qa, qb, sa, sb, config=X2)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    assert gf.schedule(p).clusters == min(p.units, 2 * sms)  # two resident per SM
    out = torch.full((m, n), float("nan"), dtype=out_dtype, device="cuda")
    tk.ops.scaled_mm(qa, qb, sa, sb, bias=b, out=out, config=X2, strict=True)
    torch.cuda.synchronize()
    assert bool(torch.isfinite(out).all()) and _err(out, ref) < TOL_FP8[out_dtype], _err(out, ref)


def test_two_per_sm_refused_by_grouped_and_ptr_array_kernels():
    """Only the dense kernel is built for two CTAs per SM; the grouped and ptr-array kernels refuse such a config."""
    from tmakit.kernels import gemm_grouped, gemm_ptr_array

    with pytest.raises(GemmError, match="one per SM"):
        gemm_grouped._check_cluster(gf.CONFIGS[X2])
    with pytest.raises(GemmError, match="one per SM"):
        gemm_ptr_array._check_single_cta(gf.CONFIGS[X2])
