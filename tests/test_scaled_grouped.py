"""``tk.ops.scaled_grouped_mm``: torch._scaled_grouped_mm's FP8 MoE GEMM (2-D a x 3-D b, row-wise / per-expert /
block-wise scales) on the grouped TMA + fp8 wgmma kernel.

Specified here:

- CPU, fake tensors: ``plan_grouped_fp8``'s rules (each refusal's message), the scale strides
  ``(a_m, a_k, b_n, b_k, b_g)`` every accepted scale shape maps to, the tile choice
  (``choose_grouped_fp8_config``) and the kernel names (SCALE 2 row / 3 block, FAST 0 / 1 last);
- CPU tensors: the op falls back (``last_path`` "torch:...") and matches an fp64 product of the operands
  dequantized by hand per group (row, per-expert, block; empty and one-row groups), the argument errors
  (``strict``, ``bias`` / ``scale_result``, bad ``offs``, ``check_offs``, non-fp8 inputs, scales of no mode), the
  offsets' clamping, ``scaled_grouped_mm_reference`` against the same hand computation, and the custom op under
  ``torch.compile(fullgraph=True)``;
- NVRTC + SASS (no GPU; skips without NVRTC or a disassembler): QGMMA with the plan's fp8 types and tile width, no
  HGMMA, TMA loads (B's rank-3 map), no local memory in the two-level kernels;
- GPU (marked ``gpu``): random group lists against the reference (poisoned outputs, rows past the last offset left
  alone), 128x192 / 128x256 tiles, clamped offsets, CUDA-graph replay with new offsets, ``torch.compile``.
"""

from __future__ import annotations

import dataclasses
import random
import re

import pytest

torch = pytest.importorskip("torch")

import tmakit as tk  # noqa: E402
from fake_tensors import FakeTensor as _T  # noqa: E402
from sass_checks import SASS_TYPES, fp8_sass  # noqa: E402
from tmakit.kernels import gemm_fp8 as gf  # noqa: E402
from tmakit.kernels import gemm_grouped as kg  # noqa: E402
from tmakit.kernels.gemm import GemmError  # noqa: E402
from tmakit.ops import quantize as q  # noqa: E402
from tmakit.ops.scaled_grouped import scaled_grouped_mm_reference  # noqa: E402

E4, E5 = torch.float8_e4m3fn, torch.float8_e5m2
F32, BF16, F16 = torch.float32, torch.bfloat16, torch.float16


# ---------------------------------------------------------------------------------------------------------------
# fake tensors for the plan


def _contiguous(shape):
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(int(s), 1)
    return tuple(reversed(strides))


def fa(m, k, ld=None, dtype=E4, ptr=1 << 20):
    """A (M, K) row-major fp8."""
    return _T((m, k), (ld or k, 1), ptr=ptr, dtype=dtype, element_size=1)


def fb(g, k, n, dtype=E4, ptr=1 << 24, strides=None):
    """B (G, K, N): ``w.transpose(-2, -1)`` of a contiguous (G, N, K) w unless ``strides`` say otherwise."""
    return _T((g, k, n), strides or (n * k, 1, k), ptr=ptr, dtype=dtype, element_size=1)


def fs(*shape, strides=None, dtype=F32, ptr=1 << 28):
    """An fp32 scale tensor (contiguous unless ``strides``)."""
    return _T(shape, strides or _contiguous(shape), ptr=ptr, dtype=dtype, element_size=4)


def fo(m, n, dtype=BF16, ld=None, ptr=1 << 30):
    return _T((m, n), (ld or n, 1), ptr=ptr, dtype=dtype, element_size=4 if dtype == F32 else 2)


def _row(m, n, g):
    return fs(m), fs(g, n)


def _block(m, n, k, g):
    kb, nb = -(-k // 128), -(-n // 128)
    return fs(m, kb), fs(g, nb, kb)


# ---------------------------------------------------------------------------------------------------------------
# plan: rules, scale strides, tile choice, kernel names (no GPU)


def test_plan_fields_of_a_row_wise_problem():
    m, n, k, g = 300, 256, 512, 8
    p = kg.plan_grouped_fp8(fa(m, k), fb(g, k, n), *_row(m, n, g), g)
    assert (p.m, p.n, p.k, p.groups, p.lda, p.ldb, p.ldb_group, p.ldc, p.b_mn) == (
        m, n, k, g, k, k, n * k, n, 0)
    assert (p.in_dtype, p.b_dtype, p.out_dtype, p.scaling, p.fast_accum) == (
        "float8_e4m3fn", "float8_e4m3fn", "bfloat16", "row", False)
    assert p.in_code == 2 and p.scale_strides == (1, 0, 1, 0, n)
    p = kg.plan_grouped_fp8(fa(m, k), fb(g, k, n), *_row(m, n, g), g,
                            out=fo(m, n, F32, ld=n + 32, ptr=1 << 30), out_dtype=None)
    assert p.out_dtype == "float32" and p.ldc == n + 32


@pytest.mark.parametrize("ta, tb, code", [(E4, E4, 2), (E4, E5, 3), (E5, E4, 4), (E5, E5, 5)])
def test_plan_dtype_codes(ta, tb, code):
    m, n, k, g = 256, 128, 256, 2
    p = kg.plan_grouped_fp8(fa(m, k, dtype=ta), fb(g, k, n, dtype=tb), *_row(m, n, g), g)
    assert p.in_code == code and kg.kernel_name(p).startswith(f"tmakit_gemm_grouped<{code}, 0, ")


_M, _N, _K, _G = 10, 256, 256, 4  # rule cases: kb = nb = 2


def _ok_scales():
    return _row(_M, _N, _G)


@pytest.mark.parametrize("args, kw, match", [
    # dtypes
    ((fa(_M, _K, dtype=BF16), fb(_G, _K, _N), *_ok_scales(), _G), {},
     "a.dtype must be float8_e4m3fn or float8_e5m2, got bfloat16"),
    ((fa(_M, _K), fb(_G, _K, _N, dtype=F16), *_ok_scales(), _G), {},
     "b.dtype must be float8_e4m3fn or float8_e5m2, got float16"),
    ((fa(_M, _K), fb(_G, _K, _N), fs(_M, dtype=BF16), fs(_G, _N), _G), {}, "scale_a must be float32, got bfloat16"),
    ((fa(_M, _K), fb(_G, _K, _N), fs(_M), fs(_G, _N, dtype=torch.float64), _G), {},
     "scale_b must be float32, got float64"),
    ((fa(_M, _K), fb(_G, _K, _N), *_ok_scales(), _G), {"out_dtype": "float8_e4m3fn"},
     "output dtype must be bfloat16, float16 or float32"),
    # shapes
    ((_T((2, _M, _K), (_M * _K, _K, 1), dtype=E4), fb(_G, _K, _N), *_ok_scales(), _G), {}, "2-D a and a 3-D b"),
    ((fa(_M, _K), fb(_G, 128, _N), *_ok_scales(), _G), {}, "do not compose"),
    ((fa(_M, _K), fb(_G, _K, _N), *_ok_scales(), 3), {}, "offs has 3 entries for 4 groups"),
    ((fa(_M, _K), fb(_G, _K, _N), *_ok_scales(), _G), {"out": fo(_M, 128)}, "out has shape"),
    # scale shapes of no mode: the message lists the accepted shapes
    ((fa(_M, _K), fb(_G, _K, _N), fs(_M, 3), fs(_G, _N), _G), {},
     re.escape("scale shapes (10, 3) and (4, 256) name no scaling mode for 4 groups of 10x256 @ 256x256; use "
               "scale_a (10,) and scale_b (4, 256) (row-wise")),
    ((fa(_M, _K), fb(_G, _K, _N), fs(_M), fs(_N), _G), {}, re.escape("(4,) for one scale per expert")),
    ((fa(_M, _K), fb(_G, _K, _N), fs(_M), fs(_N, _G), _G), {}, "name no scaling mode"),
    ((fa(_M, _K), fb(_G, _K, _N), fs(_M, 2), fs(_G, 2, 3), _G), {},
     re.escape("scale_a (10, 2) and scale_b (4, 2, 2) (block-wise")),
    ((fa(_M, _K), fb(_G, _K, _N), fs(_M, 2), fs(_G, 2), _G), {}, "name no scaling mode"),
    ((fa(_M, _K), fb(_G, _K, _N), fs(_M, 2), fs(1, 2, 2), _G), {}, "name no scaling mode"),
    ((fa(_M, _K), fb(_G, _K, _N), fs(_M + 1), fs(_G, _N), _G), {}, "name no scaling mode"),
    # layouts
    ((fa(_M, _K), fb(_G, _K, _N, strides=(_K * _N, _N, 1)), *_ok_scales(), _G), {},
     "must be K-major .*fp8 wgmma reads B K-major"),
    ((fa(_M, _K), fb(_G, _K, _N, strides=(_K * _N * 4, 2 * _N, 2)), *_ok_scales(), _G), {}, "must be K-major"),
    # K = 1 with each b[g] a row-major (1, N): its N "rows" of one K element are 1 byte apart, not K-major ones 16
    # bytes apart (read as K-major with the K stride as pitch, this returned wrong results)
    ((fa(1, 1), fb(1, 1, _N, strides=(_N, _N, 1)), fs(1, 1), fs(1, 2, 1), 1), {}, "must be K-major"),
    ((fa(_M, 1, ld=16), fb(_G, 1, _N, strides=(_N, _N, 1)), *_ok_scales(), _G), {}, "must be K-major"),
    ((fa(_M, 40), fb(_G, 40, _N), *_ok_scales(), _G), {}, "a.stride\\(0\\) = 40 elements is not a multiple of 16"),
    ((fa(_M, _K, ld=_K + 8), fb(_G, _K, _N), *_ok_scales(), _G), {}, "multiple of 16 bytes"),
    ((fa(_M, _K), fb(_G, _K, _N, strides=(_K * _N * 2, 1, _K + 8)), *_ok_scales(), _G), {},
     "b's row stride = 264 elements is not a multiple of 16 bytes"),
    ((fa(_M, _K), fb(_G, _K, _N), *_ok_scales(), _G), {"out": fo(_M, _N, ld=_N + 4)},
     "out's row stride .* multiple of 16 bytes"),
    ((fa(_M, _K, ptr=(1 << 20) + 64), fb(_G, _K, _N), *_ok_scales(), _G), {}, "a.data_ptr\\(\\) is not 128-byte"),
    ((fa(_M, _K), fb(_G, _K, _N, ptr=(1 << 24) + 16), *_ok_scales(), _G), {}, "b.data_ptr\\(\\) is not 128-byte"),
    ((fa(_M, _K), fb(_G, _K, _N), *_ok_scales(), _G), {"out": fo(_M, _N, ptr=(1 << 30) + 32)},
     "out.data_ptr\\(\\) is not 128-byte"),
    # configs
    ((fa(_M, _K), fb(_G, _K, _N), *_ok_scales(), _G), {"config": "nope"}, "unknown fp8 config 'nope'"),
    ((fa(_M, _K), fb(_G, _K, _N), *_ok_scales(), _G), {"config": "n256_s4_c1"}, "at most 192 columns"),
    ((fa(_M, _K), fb(_G, _K, _N), *_ok_scales(), _G), {"config": "m64_n128_s8_c1_ov1"}, "without overlap"),
    ((fa(_M, _K), fb(_G, _K, _N), *_ok_scales(), _G), {"config": "n128_s6_c1_ov1"}, "without overlap"),
    ((fa(_M, _K), fb(_G, _K, _N), *_block(_M, _N, _K, _G), _G), {"config": "n256_s4_c1"},
     "128 or 192 for block scaling"),
    ((fa(_M, _K), fb(_G, _K, _N), *_ok_scales(), _G), {"config": "n128_s6_c2"}, None),  # pairs along M
    ((fa(_M, _K), fb(_G, _K, _N), *_ok_scales(), _G), {"config": "n128_s6_c2n2_ov1", "fast_accum": True},
     "single CTAs or pairs along M"),
    ((fa(_M, _K), fb(_G, _K, _N), *_ok_scales(), _G), {"config": "n256_s4_c1_d", "fast_accum": True},
     "no deferred epilogue"),
    ((fa(_M, _K), fb(_G, _K, _N), *_ok_scales(), _G), {"config": "n128_s6_c1_d"}, "deferred epilogue"),
    ((fa(_M, _K), fb(_G, _K, _N), *_block(_M, _N, _K, _G), _G), {"fast_accum": True},
     "fast_accum applies to row-wise scaling only"),
    # accepted
    ((fa(_M, _K), fb(_G, _K, _N), *_ok_scales(), _G), {"config": "n256_s4_c1", "fast_accum": True}, None),
    ((fa(_M, _K), fb(_G, _K, _N), *_ok_scales(), _G), {"config": "m64_n128_s8_c1_ov1", "fast_accum": True}, None),
    ((fa(_M, _K), fb(_G, _K, _N), *_ok_scales(), _G), {"config": "n192_s4_c1"}, None),
    ((fa(_M, _K), fb(_G, _K, _N), *_block(_M, _N, _K, _G), _G), {"config": "n192_s4_c1"}, None),
    ((fa(_M, _K), fb(_G, _K, _N), *_block(_M, _N, _K, _G), _G), {"config": "m64_n128_s8_c1"}, None),
    ((fa(_M, _K), fb(_G, _K, _N), *_ok_scales(), _G), {"config": gf.CONFIGS["n128_s6_c1"]}, None),
    ((fa(_M, _K, ld=_K + 16), fb(_G, _K, _N), *_ok_scales(), _G),
     {"out": fo(_M, _N, F32, ld=_N + 8), "out_dtype": "float32"}, None),
    ((fa(_M, _K), fb(_G, _K, _N), *_ok_scales(), _G), {"out": fo(_M, _N, F32), "out_dtype": torch.float32}, None),
    ((fa(_M, _K), fb(_G, _K, _N), *_ok_scales(), _G), {"out": fo(_M, _N, F32)},
     "out.dtype is float32 but out_dtype=bfloat16"),
])
def test_plan_rules(args, kw, match):
    if match is None:
        p = kg.plan_grouped_fp8(*args, **kw)
        cfg = kw.get("config")
        if cfg is not None:
            assert p.config == (gf.CONFIGS[cfg] if isinstance(cfg, str) else cfg)
        return
    with pytest.raises(GemmError, match=match):
        kg.plan_grouped_fp8(*args, **kw)


# (m, n, k, g, scale_a, scale_b, mode, (a_m, a_k, b_n, b_k, b_g))
_STRIDE_CASES = [
    ("(M,) (G,N)", 300, 256, 400, 8, fs(300), fs(8, 256), "row", (1, 0, 1, 0, 256)),
    ("(M,1) (G,N)", 300, 256, 400, 8, fs(300, 1), fs(8, 256), "row", (1, 0, 1, 0, 256)),
    ("(1,) (G,)", 300, 256, 400, 8, fs(1), fs(8), "row", (0, 0, 0, 0, 1)),
    ("() (G,)", 300, 256, 400, 8, fs(), fs(8), "row", (0, 0, 0, 0, 1)),
    ("() (G,N)", 300, 256, 400, 8, fs(), fs(8, 256), "row", (0, 0, 1, 0, 256)),
    ("(M,) (G,)", 300, 256, 400, 8, fs(300), fs(8), "row", (1, 0, 0, 0, 1)),
    ("(M,) (G,1)", 300, 256, 400, 8, fs(300), fs(8, 1), "row", (1, 0, 0, 0, 1)),
    ("(1,1) (G,1) one row", 1, 256, 400, 8, fs(1, 1), fs(8, 1), "row", (0, 0, 0, 0, 1)),
    ("(M,) strided", 300, 256, 400, 8, fs(300, strides=(2,)), fs(8, 256), "row", (2, 0, 1, 0, 256)),
    ("(G,N) transposed", 300, 256, 400, 8, fs(300), fs(8, 256, strides=(1, 8)), "row", (1, 0, 8, 0, 1)),
    ("(G,N) padded", 300, 256, 400, 8, fs(300), fs(8, 256, strides=(320, 1)), "row", (1, 0, 1, 0, 320)),
    ("one row", 1, 256, 400, 8, fs(1), fs(8, 256), "row", (0, 0, 1, 0, 256)),
    ("one group", 300, 256, 400, 1, fs(300), fs(1, 256), "row", (1, 0, 1, 0, 0)),
    ("one group per expert", 300, 256, 400, 1, fs(300), fs(1), "row", (1, 0, 0, 0, 0)),
    ("block", 300, 256, 400, 8, fs(300, 4), fs(8, 2, 4), "block", (4, 1, 4, 1, 8)),
    ("block N, K not multiples of 128", 300, 200, 272, 8, fs(300, 3), fs(8, 2, 3), "block", (3, 1, 3, 1, 6)),
    ("block K <= 128", 300, 256, 64, 8, fs(300, 1), fs(8, 2, 1), "block", (1, 1, 1, 1, 2)),
    ("block transposed", 300, 256, 400, 8, fs(300, 4, strides=(1, 300)), fs(8, 2, 4, strides=(1, 32, 8)), "block",
     (1, 300, 32, 8, 1)),
]


@pytest.mark.parametrize("m, n, k, g, sa, sb, mode, strides", [c[1:] for c in _STRIDE_CASES],
                         ids=[c[0] for c in _STRIDE_CASES])
def test_plan_scale_strides(m, n, k, g, sa, sb, mode, strides):
    """Every accepted scale shape as (a_m, a_k, b_n, b_k, b_g) element strides: a one-element scale_a, a per-expert
    scale_b, a single row, a single group are zero strides (the kernel reads one element)."""
    p = kg.plan_grouped_fp8(fa(m, k), fb(g, k, n), sa, sb, g)
    assert (p.scaling, p.scale_strides) == (mode, strides)
    assert kg.kernel_name(p).endswith(f", {2 if mode == 'row' else 3}, 0, {int(p.staged)}, 0, {p.idle}, 0>")
    assert p.staged == (mode == "row" and p.config.name in ("128x192x64_s4_c1_g8_ov0_e2", "64x128x64_s8_c1_g8_ov0_e2",
                                                            "64x64x64_s12_c1_g8_ov0_e2"))


@pytest.mark.parametrize("m, n, g, scaling, fast, want", [
    (400, 256, 8, "row", False, "m64_n64_s12_c1"),  # 50 rows per group: 32 tiles of 64x64, under a wave
    (512, 256, 8, "row", False, "m64_n64_s12_c1"),  # exactly 64 per group
    (400, 256, 8, "block", False, "m64_n128_s8_c1"),  # block scales: no 64x64 tile
    (400, 256, 8, "row", True, "m64_n64_s12_c1_ov1"),
    (64, 4096, 1, "row", True, "m64_n64_s12_c1_ov1"),  # 64 tiles of 64x64: one wave
    (64, 16384, 1, "row", True, "m64_n128_s8_c1_ov1"),  # 256 tiles of 64x64 (2 waves) against 128 of 64x128 (1)
    (0, 256, 8, "row", False, "m64_n64_s12_c1"),
    (513, 256, 8, "row", False, "m64_n64_s12_c1"),  # 64 of 64x64, 32 of 64x128 or 16 of 128x128: all under a wave
    (130 * 60, 4096, 60, "row", False, "n192_s4_c1"),  # 130 rows per group: 128-row tiles weighed again
    (4000, 1024, 100, "row", False, "m64_n128_s8_c1"),  # 40 per group: 128-row tiles excluded (short groups)
    (640, 1536, 16, "row", False, "m64_n64_s12_c1"),  # 40 per group: 128-row tiles excluded
    (640, 1536, 16, "block", False, "n192_s4_c1"),  # block scales weigh them anyway (16 x 8 tiles: one wave)
    (8192, 4096, 8, "row", False, "n192_s4_c1"),
    (8192, 4096, 8, "block", False, "n192_s4_c1"),
    (8192, 4096, 8, "row", True, "n256_s4_c1"),
    (8192, 1024, 8, "row", False, "n192_s4_c1"),  # 384 tiles of 128x192 (3 waves) against 512 of 128x128 (4)
    (8192, 1024, 8, "row", True, "n256_s4_c1"),
    (2048, 2048, 8, "row", False, "n128_s6_c1"),  # 176 tiles of 128x192 need 2 waves, as 256 of 128x128 do
    (1024, 2048, 8, "block", False, "n128_s5_c1"),  # 88 tiles of 128x192 against 128 of 128x128: one wave each
    (2048, 4096, 8, "row", True, "n256_s4_c1"),  # 16 x 16 = 256 tiles of 128x256
    (1024, 4096, 8, "row", True, "n256_s4_c1"),  # 8 x 16 = 128 tiles of 128x256: one wave
    (35466, 1200, 28, "row", False, "n192_s4_c1"),
    (889, 256, 253, "row", False, "m64_n128_s8_c1"),
])
def test_config_choice(m, n, g, scaling, fast, want):
    """The tile of least estimated time (``kg.grouped_tile_cost``: waves of each group's tiles, counting M / groups
    rows per group, times a tile's area over its relative speed) among the mode's ``kg.FP8_TILES``."""
    got = kg.choose_grouped_fp8_config(m, n, g, scaling, fast)
    assert got == gf.CONFIGS[want], (got.name, want)
    k = 512
    sc = _block(m, n, k, g) if scaling == "block" else _row(m, n, g)
    p = kg.plan_grouped_fp8(fa(m, k), fb(g, k, n), *sc, g, fast_accum=fast)
    assert p.config == gf.CONFIGS[want] and p.fast_accum == fast


def test_config_choice_follows_the_sm_count():
    # 8 x 11 = 88 tiles of 128x192 or 8 x 16 = 128 of 128x128: on 132 SMs one wave each, the smaller tile is done
    # sooner; on 88 SMs the 128x192 tiles still take one wave, the 128x128 ones two
    assert kg.choose_grouped_fp8_config(1024, 2048, 8, "row", False, sms=132) == gf.CONFIGS["n128_s6_c1"]
    assert kg.choose_grouped_fp8_config(1024, 2048, 8, "row", False, sms=88) == gf.CONFIGS["n192_s4_c1"]
    # one SM: waves are tiles, so the choice is the least padded work per speed (N = 1024: 128x128 tiles at 0.8
    # cost 8 x 16384 / 0.8; 128x192: 6 x 24576)
    assert kg.choose_grouped_fp8_config(1024, 1024, 8, "row", False, sms=1) == gf.CONFIGS["n192_s4_c1"]


@pytest.mark.parametrize("mode, fast, out, cfg, want", [
    # the last four arguments: row scales staged in shared memory where they fit beside the ring (not 128x256 nor
    # six 128x128 stages; block scales are staged per stage instead), no deferred epilogue, idle consumers skip
    # (fp8: on every 128-row tile without overlap), not grouped along K
    ("row", False, "bfloat16", "n128_s6_c1", "tmakit_gemm_grouped<2, 0, 128, 128, 6, 1, 0, 0, 2, 2, 0, 0, 0, 1, 0>"),
    ("row", True, "bfloat16", "n128_s6_c1", "tmakit_gemm_grouped<2, 0, 128, 128, 6, 1, 0, 0, 2, 2, 1, 0, 0, 1, 0>"),
    ("row", False, "bfloat16", "n192_s4_c1", "tmakit_gemm_grouped<2, 0, 128, 192, 4, 1, 0, 0, 2, 2, 0, 1, 0, 1, 0>"),
    ("block", False, "float32", "n128_s5_c1", "tmakit_gemm_grouped<2, 2, 128, 128, 5, 1, 0, 0, 2, 3, 0, 0, 0, 1, 0>"),
    ("block", False, "float16", "n192_s4_c1", "tmakit_gemm_grouped<2, 1, 128, 192, 4, 1, 0, 0, 2, 3, 0, 0, 0, 1, 0>"),
    ("row", True, "bfloat16", "m64_n128_s8_c1_ov1",
     "tmakit_gemm_grouped<2, 0, 64, 128, 8, 1, 0, 1, 2, 2, 1, 1, 0, 0, 0>"),
    ("row", True, "float32", "n256_s4_c1", "tmakit_gemm_grouped<2, 2, 128, 256, 4, 1, 0, 0, 2, 2, 1, 0, 0, 1, 0>"),
    ("block", False, "bfloat16", "n192_s4_c2", "tmakit_gemm_grouped<2, 0, 128, 192, 4, 2, 0, 0, 2, 3, 0, 0, 0, 1, 0>"),
])
def test_kernel_names(mode, fast, out, cfg, want):
    m, n, k, g = 1024, 512, 512, 4
    sc = _block(m, n, k, g) if mode == "block" else _row(m, n, g)
    p = kg.plan_grouped_fp8(fa(m, k), fb(g, k, n), *sc, g, out_dtype=out, config=cfg, fast_accum=fast)
    assert kg.kernel_name(p) == want


def test_default_plans_of_random_problems_are_legal():
    """Any legal layout plans with its default config: a tile the accumulation mode allows, the mode's SCALE and
    FAST codes at the end of the kernel name."""
    rng = random.Random(0)
    for _ in range(400):
        m, g = rng.randint(0, 20000), rng.randint(1, 128)
        n, k = 16 * rng.randint(1, 512), 16 * rng.randint(1, 512)
        mode = rng.choice(["row", "expert", "block"])
        fast = mode != "block" and rng.random() < 0.5
        sc = _block(m, n, k, g) if mode == "block" else (fs(m), fs(g)) if mode == "expert" else _row(m, n, g)
        p = kg.plan_grouped_fp8(fa(m, k), fb(g, k, n), *sc, g, fast_accum=fast)
        c = p.config
        odd = k % 32 == 16  # fp8 rows an odd multiple of 16 bytes apart: pairs along M may be chosen
        assert (c.cluster_size == 1 or (odd and c.cluster == 2 and c.cluster_n == 1)) and not c.defer
        if not fast:
            assert c.bn <= 192 and not c.overlap
        if mode == "block":
            assert c.bn in (128, 192)
        kind = "block" if mode == "block" else "fast" if fast else "two-level"
        tiles = kg.odd_pitch_tiles(kg.FP8_TILES[kind], gf.CONFIGS) if odd else kg.FP8_TILES[kind]
        assert c in [gf.CONFIGS[name] for name in tiles]
        assert kg.kernel_name(p).endswith(f", {3 if mode == 'block' else 2}, {int(fast)}, {int(p.staged)}, 0, "
                                          f"{p.idle}, 0>")
        assert p.staged == (mode != "block" and gf.epilogue_staged(c, "row", False))


# ---------------------------------------------------------------------------------------------------------------
# MoE problems and an independent reference


def _moe(mode, sizes, n, k, ta=E4, tb=E4, *, seed=0, device="cpu", tail=0, sa_form="rows"):
    """A random MoE problem quantized with ``tmakit.ops.quantize``: rows of a and experts of w at different
    magnitudes (the scales matter). mode "row": scale_a (M,) or (M, 1) (``sa_form`` "rows" / "col") and scale_b
    (G, N); "expert": scale_a as "row" (or one element: ``sa_form`` "one") and scale_b (G,) (``sa_form`` "g1":
    (G, 1)); "block": scale_a (M, ceil(K/128)) and scale_b (G, ceil(N/128), ceil(K/128)). ``tail`` rows of a past
    the last offset. Returns qa, b, scale_a, scale_b, offs, ends and qw (G, N, K) for a reference by hand."""
    gen = torch.Generator(device=device).manual_seed(seed)
    groups = len(sizes)
    m = sum(sizes) + tail
    x = torch.randn(m, k, generator=gen, device=device)
    x = x * torch.exp(0.5 * torch.randn(m, 1, generator=gen, device=device))
    w = torch.randn(groups, n, k, generator=gen, device=device)
    w = w * torch.exp(0.5 * torch.randn(groups, 1, 1, generator=gen, device=device))
    if mode == "block":
        qa, sa = q.quantize_1x128(x, ta)
        parts = [q.quantize_128x128(w[i], tb) for i in range(groups)]
        sb = torch.stack([s for _, s in parts])
    else:
        if sa_form == "one":
            qa, sa = q.quantize_tensor(x, ta)
        else:
            qa, sa = q.quantize_rows(x, ta)
            sa = sa if sa_form == "col" else sa.reshape(-1)
        if mode == "row":
            parts = [q.quantize_rows(w[i], tb) for i in range(groups)]
            sb = torch.stack([s.reshape(-1) for _, s in parts])
        else:
            parts = [q.quantize_tensor(w[i], tb) for i in range(groups)]
            sb = torch.stack([s.reshape(()) for _, s in parts])
            if sa_form == "g1":
                sb = sb.reshape(groups, 1)
    qw = torch.stack([p for p, _ in parts])
    ends, acc = [], 0
    for s in sizes:
        acc += s
        ends.append(acc)
    offs = torch.tensor(ends, dtype=torch.int32, device=device)
    return qa, qw.transpose(-2, -1), sa, sb, offs, ends, qw


def _by_hand(qa, qw, sa, sb, ends):
    """fp64 rows [0, ends[-1]) of the grouped product, each operand dequantized here: scale_a per row (or one),
    each w[g] (N, K) by its row scales (or one), block scales expanded by 128."""
    m, k = qa.shape
    n = qw.shape[1]
    a = qa.double()
    if sb.dim() == 3:
        a = a * sa.double().repeat_interleave(128, dim=1)[:, :k]
    elif sa.numel() == 1:
        a = a * float(sa.reshape(()))
    else:
        a = a * sa.double().reshape(m, 1)
    rows = ends[-1] if ends else 0
    out = torch.zeros(rows, n, dtype=torch.float64, device=qa.device)
    lo = 0
    for g, hi in enumerate(ends):
        w = qw[g].double()
        if sb.dim() == 3:
            w = w * sb[g].double().repeat_interleave(128, dim=0)[:n].repeat_interleave(128, dim=1)[:, :k]
        else:
            w = w * sb[g].double().reshape(-1, 1)  # (N, 1) per output column, or (1, 1) per expert
        if hi > lo:
            out[lo:hi] = a[lo:hi] @ w.t()
        lo = hi
    return out


def _rel(got, want) -> float:
    """Relative Frobenius error."""
    return float((got.double() - want.double()).norm() / want.double().norm().clamp_min(1e-30))


_SIZES = [5, 0, 1, 130, 7, 0, 40]  # empty groups, a one-row group, one over a 128-row tile


# ---------------------------------------------------------------------------------------------------------------
# the op on CPU tensors: fallback and argument errors


@pytest.mark.parametrize("mode, sa_form", [("row", "rows"), ("row", "col"), ("expert", "rows"), ("expert", "one"),
                                           ("expert", "g1"), ("block", "rows")])
@pytest.mark.parametrize("ta, tb, od", [(E4, E4, BF16), (E4, E5, F32), (E5, E4, F16)])
def test_cpu_tensors_fall_back_and_match_a_hand_computation(mode, sa_form, ta, tb, od):
    qa, b, sa, sb, offs, ends, qw = _moe(mode, _SIZES, 48, 272, ta, tb, seed=1, tail=3, sa_form=sa_form)
    c = tk.ops.scaled_grouped_mm(qa, b, sa, sb, offs, out_dtype=od)
    assert tk.ops.last_path.startswith("torch:") and "CUDA" in tk.ops.last_path, tk.ops.last_path
    assert c.dtype == od and tuple(c.shape) == (qa.shape[0], 48)
    ref = _by_hand(qa, qw, sa, sb, ends)
    err = _rel(c[:ends[-1]], ref)
    assert err < (1e-5 if od == F32 else 8e-3), err
    for lo, hi in zip([0] + ends[:-1], ends):  # every group, the one-row group included, on its own
        if hi > lo:
            assert _rel(c[lo:hi], ref[lo:hi]) < (1e-5 if od == F32 else 8e-3), (lo, hi)
    out = torch.full((qa.shape[0], 48), float("nan"), dtype=od)
    got = tk.ops.scaled_grouped_mm(qa, b, sa, sb, offs, out=out)
    assert got is out and tk.ops.last_path.startswith("torch:")
    assert torch.equal(out[:ends[-1]], c[:ends[-1]])


def test_cpu_block_scales_reach_every_k_block_and_n_block():
    """Block scales that differ per 1x128 of a and per 128x128 of each w[g]: N and K not multiples of 128."""
    qa, b, sa, sb, offs, ends, qw = _moe("block", [70, 0, 200], 300, 400, seed=2)
    sa = sa * torch.linspace(0.5, 2.0, sa.numel()).reshape(sa.shape)  # scales are just numbers: vary them all
    sb = sb * torch.linspace(0.25, 4.0, sb.numel()).reshape(sb.shape)
    c = tk.ops.scaled_grouped_mm(qa, b, sa, sb, offs, out_dtype=F32)
    assert _rel(c, _by_hand(qa, qw, sa, sb, ends)) < 1e-5


def test_cpu_strict_raises():
    qa, b, sa, sb, offs, _, _ = _moe("row", [3, 5], 32, 64)
    with pytest.raises(GemmError, match="cannot run on tmakit's kernel: not all tensors are CUDA.*strict=True"):
        tk.ops.scaled_grouped_mm(qa, b, sa, sb, offs, strict=True)


@pytest.mark.parametrize("kw", [{"bias": torch.zeros(32, dtype=BF16)}, {"scale_result": torch.ones(())}])
def test_bias_and_scale_result_raise(kw):
    qa, b, sa, sb, offs, _, _ = _moe("row", [3, 5], 32, 64)
    with pytest.raises(GemmError, match="bias and scale_result are not supported"):
        tk.ops.scaled_grouped_mm(qa, b, sa, sb, offs, **kw)


def test_bad_offs_raise_value_error():
    qa, b, sa, sb, offs, _, _ = _moe("row", [3, 5, 4], 32, 64)
    with pytest.raises(ValueError, match="1-D int32 tensor .* got torch.int64"):
        tk.ops.scaled_grouped_mm(qa, b, sa, sb, offs.long())
    with pytest.raises(ValueError, match="1-D int32"):
        tk.ops.scaled_grouped_mm(qa, b, sa, sb, offs.reshape(3, 1))
    with pytest.raises(ValueError, match="offs has 2 entries for 3 groups"):
        tk.ops.scaled_grouped_mm(qa, b, sa, sb, offs[:2])
    with pytest.raises(GemmError, match="needs offs"):
        tk.ops.scaled_grouped_mm(qa, b, sa, sb, None)
    with pytest.raises(ValueError, match=re.escape("non-decreasing: offs[1] = 2 < 3")):
        tk.ops.scaled_grouped_mm(qa, b, sa, sb, torch.tensor([3, 2, 12], dtype=torch.int32), check_offs=True)
    with pytest.raises(ValueError, match=re.escape("offs[-1] = 13 is past the end of a (12 rows)")):
        tk.ops.scaled_grouped_mm(qa, b, sa, sb, torch.tensor([3, 8, 13], dtype=torch.int32), check_offs=True)
    tk.ops.scaled_grouped_mm(qa, b, sa, sb, offs, check_offs=True)  # good offsets pass the check


def test_offsets_are_clamped_without_check_offs():
    """Decreasing and past-M offsets (no check_offs) are clamped as on the device: groups [0, 7), [7, 7),
    [7, M)."""
    qa, b, sa, sb, _, _, qw = _moe("block", [7, 5, 8], 32, 64, seed=3)
    bad = torch.tensor([7, 2, 400], dtype=torch.int32)
    c = tk.ops.scaled_grouped_mm(qa, b, sa, sb, bad, out_dtype=F32)
    assert _rel(c, _by_hand(qa, qw, sa, sb, [7, 7, 20])) < 1e-5


def test_meaningless_arguments_raise_gemm_error():
    qa, b, sa, sb, offs, _, _ = _moe("row", [3, 5], 32, 64)
    with pytest.raises(GemmError, match="a.dtype must be float8_e4m3fn or float8_e5m2, got bfloat16"):
        tk.ops.scaled_grouped_mm(qa.to(BF16), b, sa, sb, offs)
    with pytest.raises(GemmError, match="b.dtype must be float8_e4m3fn or float8_e5m2, got float32"):
        tk.ops.scaled_grouped_mm(qa, b.float(), sa, sb, offs)
    with pytest.raises(GemmError, match="2-D or 3-D operands"):
        tk.ops.scaled_grouped_mm(qa, b[None], sa, sb, offs)
    with pytest.raises(GemmError, match="do not compose"):
        tk.ops.scaled_grouped_mm(qa[:, :32], b, sa, sb, offs)
    with pytest.raises(GemmError, match="name no scaling mode"):
        tk.ops.scaled_grouped_mm(qa, b, sa, sb[:, :16], offs)
    with pytest.raises(GemmError, match="scale_b must be float32"):
        tk.ops.scaled_grouped_mm(qa, b, sa, sb.double(), offs)
    with pytest.raises(GemmError, match="out_dtype must be"):
        tk.ops.scaled_grouped_mm(qa, b, sa, sb, offs, out_dtype=torch.float8_e4m3fn)
    with pytest.raises(GemmError, match="out must be a \\(8, 32\\) float32 tensor"):
        tk.ops.scaled_grouped_mm(qa, b, sa, sb, offs, out=torch.empty(8, 32, dtype=BF16), out_dtype=F32)
    with pytest.raises(GemmError, match="out must be a"):
        tk.ops.scaled_grouped_mm(qa, b, sa, sb, offs, out=torch.empty(8, 16, dtype=BF16))
    with pytest.raises(TypeError, match="scale_a must be a torch.Tensor"):
        tk.ops.scaled_grouped_mm(qa, b, 1.0, sb, offs)


def test_forms_only_torch_has_run_torch_and_say_so(monkeypatch):
    """2-D x 2-D grouped along K (and 3-D x 2-D) go to torch._scaled_grouped_mm with the same arguments (here a
    stand-in: this CPU torch has no kernel for it); strict=True refuses them."""
    qa, b, sa, sb, offs, _, _ = _moe("row", [3, 5], 32, 64)
    seen = []

    def fake(a, b, scale_a, scale_b, offs=None, out_dtype=None, use_fast_accum=False):
        seen.append((a.dim(), b.dim(), offs is None, out_dtype, use_fast_accum))
        return torch.zeros(2, 8, 32, dtype=out_dtype)

    monkeypatch.setattr(torch, "_scaled_grouped_mm", fake)
    bk = torch.randn(64, 32).to(E4)
    koffs = torch.tensor([16, 64], dtype=torch.int32)
    c = tk.ops.scaled_grouped_mm(qa.t().contiguous().t(), bk, torch.ones(8), torch.ones(32), koffs,
                                 use_fast_accum=True)
    assert tuple(c.shape) == (2, 8, 32) and seen == [(2, 2, False, torch.bfloat16, True)]
    assert tk.ops.last_path.startswith("torch:a is 2-D, b 2-D")
    with pytest.raises(GemmError, match="kernel takes 2-D x 3-D"):
        tk.ops.scaled_grouped_mm(qa, b[0], sa, sb, offs, strict=True)


def _batch(mode, g, m, n, k, ta=E4, tb=E4, device="cpu", seed=0):
    """A 3-D x 3-D fp8 batch: a (G, M, K), b (G, K, N) K-major, and its scales of ``mode`` ("row": torch's (G, M) and
    (G, N); "expert": one scale for a, (G,) for b; "block": (G, M, K/128) and (G, N/128, K/128))."""
    gen = torch.Generator().manual_seed(seed)
    a = torch.randn(g, m, k, generator=gen).to(ta).to(device)
    b = torch.randn(g, n, k, generator=gen).to(tb).to(device).transpose(-2, -1)
    kb, nb = -(-k // 128), -(-n // 128)
    shapes = {"row": ((g, m), (g, n)), "expert": ((), (g,)), "block": ((g, m, kb), (g, nb, kb))}[mode]
    sa, sb = (torch.rand(sh, generator=gen).add(0.5).to(device) for sh in shapes)
    return a, b, sa, sb


def _batch_by_hand(a, b, sa, sb):
    """fp64 batch of the operands dequantized element by element (block scales expanded per 1x128 / 128x128)."""
    g, m, k = a.shape
    n = b.shape[2]
    ad, bd = a.double(), b.double()
    if sa.dim() == 3:
        ad = ad * sa.double().repeat_interleave(128, -1)[..., :k]
        bd = bd * sb.double().repeat_interleave(128, 1)[:, :n].repeat_interleave(128, 2)[..., :k].transpose(1, 2)
    else:
        ad = ad * (sa.double().reshape(g, m, 1) if sa.numel() > 1 else sa.double().reshape(()))
        bd = bd * sb.double().reshape(g, 1, -1)
    return torch.bmm(ad, bd)


@pytest.mark.parametrize("mode", ["row", "expert", "block"])
def test_cpu_batches_fall_back_and_match_a_hand_computation(mode):
    a, b, sa, sb = _batch(mode, 3, 9, 160, 200)
    c = tk.ops.scaled_grouped_mm(a, b, sa, sb, out_dtype=F32)
    assert tuple(c.shape) == (3, 9, 160) and c.dtype == F32 and tk.ops.last_path.startswith("torch:")
    assert _rel(c, _batch_by_hand(a, b, sa, sb)) < 1e-6


@pytest.mark.parametrize("change, match", [
    (lambda a, b, sa, sb: (a, b[:2], sa, sb), "do not compose as a batch"),
    (lambda a, b, sa, sb: (a, b, sa[:, :4], sb), "name no scaling mode for a batch of 3"),
    (lambda a, b, sa, sb: (a, b, sa, sb[:, :5]), r"scale_b \(3, 160\)"),
    (lambda a, b, sa, sb: (a, b, sa.double(), sb), "scale_a must be float32"),
])
def test_batch_arguments_of_no_meaning_raise(change, match):
    with pytest.raises(GemmError, match=match):
        tk.ops.scaled_grouped_mm(*change(*_batch("row", 3, 9, 160, 200)))


def test_offs_where_the_form_has_none_or_needs_one_raise():
    """3-D x 3-D takes no offs (a batch); a 2-D operand needs them (2-D x 2-D along K, 3-D x 2-D along N): GemmError
    before any path runs."""
    a, b, sa, sb = _batch("row", 2, 8, 16, 32)
    with pytest.raises(GemmError, match="offs must be None for a 3-D a and a 3-D b"):
        tk.ops.scaled_grouped_mm(a, b, sa, sb, torch.tensor([4, 8], dtype=torch.int32))
    with pytest.raises(GemmError, match=r"offs is required where a or b is 2-D \(a is 2-D, b 2-D\)"):
        tk.ops.scaled_grouped_mm(a[0], b[0], sa[0], sb[0])
    with pytest.raises(GemmError, match=r"offs is required where a or b is 2-D \(a is 3-D, b 2-D\)"):
        tk.ops.scaled_grouped_mm(a, b[0], sa, sb[0])
    with pytest.raises(GemmError, match="takes 2-D or 3-D operands"):
        tk.ops.scaled_grouped_mm(a[None], b, sa, sb)


def test_batch_rules_beside_the_scales():
    a, b, sa, sb = _batch("block", 2, 4, 128, 128)
    with pytest.raises(GemmError, match="use_fast_accum applies to row-wise"):
        tk.ops.scaled_grouped_mm(a, b, sa, sb, use_fast_accum=True)
    with pytest.raises(GemmError, match=r"out must be a \(2, 4, 128\) bfloat16"):
        tk.ops.scaled_grouped_mm(a, b, sa, sb, out=torch.empty(8, 128, dtype=BF16))
    with pytest.raises(GemmError, match="strict=True"):
        tk.ops.scaled_grouped_mm(a, b, sa, sb, strict=True)


def test_a_value_error_from_torch_falls_through_to_the_reference(monkeypatch):
    """torch._scaled_grouped_mm refuses some calls with ValueError (torch 2.11: N not a multiple of 16, e5m2, outputs
    other than bf16, B not K-major); the torch path then computes the reference instead of raising."""
    qa, b, sa, sb, offs, _, _ = _moe("row", [3, 5], 32, 64)

    def refuse(*args, **kw):
        raise ValueError("not supported")

    monkeypatch.setattr(torch, "_scaled_grouped_mm", refuse)
    c = tk.ops.scaled_grouped_mm(qa, b, sa, sb, offs)
    ref = scaled_grouped_mm_reference(qa, b, sa, sb, offs)
    assert tk.ops.last_path.startswith("torch:") and torch.equal(c, ref)


def test_no_tokens_block_wise_gives_an_empty_result():
    qa = torch.zeros(0, 64).to(E4)
    b = torch.zeros(2, 32, 64).to(E4).transpose(-2, -1)
    c = tk.ops.scaled_grouped_mm(qa, b, torch.ones(0, 1), torch.ones(2, 1, 1), torch.zeros(2, dtype=torch.int32))
    assert tuple(c.shape) == (0, 32) and tk.ops.last_path.startswith("torch:")


@pytest.mark.parametrize("sa_shape", [(0,), (0, 1)])
def test_no_tokens_row_wise_gives_an_empty_result(sa_shape):
    """M = 0 (no token routed to any expert): the fallback returns an empty (0, N) result."""
    qa = torch.zeros(0, 64).to(E4)
    b = torch.zeros(2, 32, 64).to(E4).transpose(-2, -1)
    c = tk.ops.scaled_grouped_mm(qa, b, torch.ones(sa_shape), torch.ones(2, 32), torch.zeros(2, dtype=torch.int32))
    assert tuple(c.shape) == (0, 32)


def test_no_experts_gives_untouched_rows():
    """G = 0: no group covers a row; the reference is zero and out= keeps its rows."""
    qa = torch.ones(5, 64).to(E4)
    b = torch.zeros(0, 32, 64).to(E4).transpose(-2, -1)
    offs = torch.zeros(0, dtype=torch.int32)
    ref = scaled_grouped_mm_reference(qa, b, torch.ones(5), torch.ones(0, 32), offs, out_dtype=F32)
    assert tuple(ref.shape) == (5, 32) and bool((ref == 0).all())
    out = torch.full((5, 32), 7.0, dtype=torch.bfloat16)
    tk.ops.scaled_grouped_mm(qa, b, torch.ones(5), torch.ones(0, 32), offs, out=out)
    assert bool((out == 7).all())


def test_fallback_with_out_leaves_rows_past_the_last_offset():
    """Rows after offs[-1] belong to no group: the fallback leaves them as they are, as the kernel does."""
    qa, b, sa, sb, offs, ends, qw = _moe("row", [3, 0, 5], 48, 128, E4, E4, seed=2, tail=6)
    out = torch.full((qa.shape[0], 48), -3.0, dtype=torch.bfloat16)
    tk.ops.scaled_grouped_mm(qa, b, sa, sb, offs, out=out)
    assert tk.ops.last_path.startswith("torch:")
    assert bool((out[ends[-1]:] == -3).all()) and not bool((out[:ends[-1]] == -3).any())


@pytest.mark.parametrize("kw, match", [(dict(use_fast_accum=True), "row-wise scaling only"),
                                       (dict(config="n999"), "unknown fp8 config")])
def test_meaningless_knobs_raise_on_every_path(kw, match):
    """A block-wise call with fast accumulation, or a config name that does not exist, is refused on the CPU path too
    (not silently run by the fallback)."""
    qa, b, sa, sb, offs, ends, qw = _moe("block" if "use_fast_accum" in kw else "row", [4, 4], 32, 128, E4, E4,
                                         seed=3)
    with pytest.raises(GemmError, match=match):
        tk.ops.scaled_grouped_mm(qa, b, sa, sb, offs, **kw)


@pytest.mark.parametrize("mode, sa_form", [("row", "rows"), ("expert", "rows"), ("expert", "one"), ("expert", "g1"),
                                           ("block", "rows")])
def test_reference_matches_a_hand_computation(mode, sa_form):
    """``scaled_grouped_mm_reference``: fp32 products of the dequantized operands per group; rows past the last
    offset zero (or ``rows_after``); bfloat16 by default."""
    qa, b, sa, sb, offs, ends, qw = _moe(mode, [9, 0, 1, 150, 33], 144, 400, E4, E5, seed=4, tail=4,
                                         sa_form=sa_form)
    ref = scaled_grouped_mm_reference(qa, b, sa, sb, offs, out_dtype=F32)
    assert ref.dtype == F32 and tuple(ref.shape) == (qa.shape[0], 144)
    assert _rel(ref[:ends[-1]], _by_hand(qa, qw, sa, sb, ends)) < 1e-6
    assert bool((ref[ends[-1]:] == 0).all())
    assert scaled_grouped_mm_reference(qa, b, sa, sb, offs).dtype == BF16
    filled = scaled_grouped_mm_reference(qa, b, sa, sb, offs, out_dtype=F32, rows_after=float("nan"))
    assert bool(filled[ends[-1]:].isnan().all()) and torch.equal(filled[:ends[-1]], ref[:ends[-1]])


def test_torch_compile_keeps_scaled_grouped_mm_as_one_custom_op():
    """CPU tensors: the custom op (and its out= variant) runs the fallback inside the compiled graph, without a
    graph break."""
    qa, b, sa, sb, offs, ends, _ = _moe("block", [4, 0, 9], 32, 256, seed=5)

    def f(a, b, sa, sb, offs):
        return tk.ops.scaled_grouped_mm(a, b, sa, sb, offs, out_dtype=torch.float32) * 2

    got = torch.compile(f, fullgraph=True, backend="aot_eager")(qa, b, sa, sb, offs)
    want = f(qa, b, sa, sb, offs)
    assert torch.equal(got[:ends[-1]], want[:ends[-1]])
    with torch.no_grad():
        explain = torch._dynamo.explain(f)(qa, b, sa, sb, offs)
    assert explain.graph_break_count == 0

    def g(a, b, sa, sb, offs, out):
        tk.ops.scaled_grouped_mm(a, b, sa, sb, offs, out=out)
        return out + 1

    out = torch.zeros(qa.shape[0], 32, dtype=BF16)
    got = torch.compile(g, fullgraph=True, backend="aot_eager")(qa, b, sa, sb, offs, out)
    assert torch.equal(got[:ends[-1]], (want[:ends[-1]] / 2).to(BF16) + 1)
    assert hasattr(torch.ops.tmakit, "scaled_grouped_mm") and hasattr(torch.ops.tmakit, "scaled_grouped_mm_out")


def test_torch_compile_takes_a_batch_as_one_custom_op():
    """CPU tensors: a 3-D x 3-D batch (block scales, which torch's op lacks) inside a compiled graph: the custom op's
    fake result has the batch's shape, no graph break, the same values as eager."""
    a, b, sa, sb = _batch("block", 3, 9, 160, 200, seed=2)

    def f(a, b, sa, sb):
        return tk.ops.scaled_grouped_mm(a, b, sa, sb, out_dtype=torch.float32) + 1

    got = torch.compile(f, fullgraph=True, backend="aot_eager")(a, b, sa, sb)
    assert tuple(got.shape) == (3, 9, 160) and torch.equal(got, f(a, b, sa, sb))


# ---------------------------------------------------------------------------------------------------------------
# NVRTC + SASS (no GPU needed)


# (id, mode, config, fast, a dtype, b dtype, out dtype)
_SASS_CASES = [
    ("row_128x128", "row", "n128_s6_c1", False, E4, E4, "bfloat16"),
    ("row_128x192", "row", "n192_s4_c1", False, E4, E4, "bfloat16"),
    ("row_64x128", "row", "m64_n128_s8_c1", False, E4, E4, "float32"),
    ("block_128x128", "block", "n128_s5_c1", False, E4, E4, "bfloat16"),
    ("block_128x192", "block", "n192_s4_c1", False, E4, E4, "float32"),
    ("block_64x128", "block", "m64_n128_s8_c1", False, E4, E4, "bfloat16"),
    ("fast_row_64x128_ov1", "row", "m64_n128_s8_c1_ov1", True, E4, E4, "bfloat16"),
    ("fast_row_128x256", "row", "n256_s4_c1", True, E4, E4, "bfloat16"),
    ("row_64x64", "row", "m64_n64_s12_c1", False, E4, E4, "bfloat16"),
    ("fast_row_64x64_ov1", "row", "m64_n64_s12_c1_ov1", True, E4, E5, "float32"),
    ("row_e4m3_e5m2", "row", "n128_s6_c1", False, E4, E5, "float16"),
    ("block_e5m2_e4m3", "block", "n128_s5_c1", False, E5, E4, "bfloat16"),
]


@pytest.mark.parametrize("mode, cfg, fast, ta, tb, out", [c[1:] for c in _SASS_CASES],
                         ids=[c[0] for c in _SASS_CASES])
def test_grouped_fp8_kernels_compile_with_qgmma_tma_and_no_spills(mode, cfg, fast, ta, tb, out):
    """The plan's kernel: fp8 wgmma (QGMMA 64 x BN x 32 with the operands' fp8 types, fp32 accumulators), no 16-bit
    MMA, TMA loads (B's rank-3 map) and stores; nothing in local memory (no LDL/STL), except a little around the
    MMA loop of the fast 128x256 kernel."""
    m, n, k, g = 4096, 2048, 1024, 8
    sc = _block(m, n, k, g) if mode == "block" else _row(m, n, g)
    p = kg.plan_grouped_fp8(fa(m, k, dtype=ta), fb(g, k, n, dtype=tb), *sc, g, out_dtype=out, config=cfg,
                            fast_accum=fast)
    text, ops, kinds = fp8_sass("gemm_grouped.cu", kg.kernel_name(p))
    assert kinds == {(str(p.config.bn), SASS_TYPES[p.in_code])}, kinds
    assert f"QGMMA.64x{p.config.bn}x32.F32.{SASS_TYPES[p.in_code]}" in text
    assert ops["UTMALDG"] > 0 and "UTMALDG.3D" in text and ops["UTMASTG"] > 0, ops
    lines = text.splitlines()
    mma = [i for i, ln in enumerate(lines) if "QGMMA" in ln]
    assert not any("LDL" in ln or "STL" in ln for ln in lines[mma[0]:mma[-1]])
    if not (fast and p.config.bn == 256):  # (the fast 128x256 kernel spills a word or two outside the loop)
        assert ops["LDL"] == 0 and ops["STL"] == 0, (ops["LDL"], ops["STL"])


def test_grouped_row_scales_are_staged_in_shared_memory():
    """Row-wise plans whose tiles leave room (128x192 here) stage each unit's row and column scales in shared memory
    (a producer-side warp loads them during the mainloop): both epilogues (TMA-stored tiles and tiles a group's end
    cuts) read the column scales as paired shared loads, and the consumers' per-tile global scale loads go."""
    m, n, k, g = 4096, 2048, 1024, 8
    p = kg.plan_grouped_fp8(fa(m, k), fb(g, k, n), *_row(m, n, g), g, config="n192_s4_c1")
    assert p.staged and kg.plan_smem(p) == gf.smem_for(p.config, "row") + 2 * 4 * (128 + 192) + 32
    on, on_ops, _ = fp8_sass("gemm_grouped.cu", kg.kernel_name(p))
    assert kg.kernel_name(p).endswith(f", 1, 0, {p.idle}, 0>")  # EPV, DEFER, IDLE, KG
    off, off_ops, _ = fp8_sass("gemm_grouped.cu", kg.kernel_name(dataclasses.replace(p, staged=False)))
    assert on.count("LDS.64") >= 2 * p.config.bn // 8 and off.count("LDS.64") == 0
    assert off_ops["LDG"] - on_ops["LDG"] >= 2 + p.config.bn // 4 - (p.config.bm + p.config.bn) // 32


# ---------------------------------------------------------------------------------------------------------------
# GPU

# Relative Frobenius error against the fp32 reference: the output rounding (16-bit) on top of two-level
# accumulation's fp32 sums; fast accumulation (one fp8 tensor-core chain over all of K, reduced accumulation
# precision: tests/test_scaled_mm.py's TOL_FAST) gets a looser bound, its error printed.
TOL = {F32: 1e-3, BF16: 8e-3, F16: 8e-3}
TOL_FAST = 1e-2

# One (a, b, out) dtype triple per seed: every list of a seed shares a handful of kernels (two-level row, block and
# fast row, on 64- and 128-row tiles), so the file compiles few kernels. Rows stay below ~1,600, where the
# chooser keeps 128x128 tiles; the wider tiles are test_wide_tiles's.
_SEED_TYPES = {0: (E4, E4, BF16), 1: (E4, E5, F32), 2: (E5, E4, F16)}


def _random_case(rng):
    groups = rng.choice([1, 2, 3, 5, 8, 16, 33, 64, rng.randint(1, 64)])
    mean = rng.choice([1, 4, 16, 60, 100, 300])
    skew = rng.random() < 0.5
    sizes = []
    for _ in range(groups):
        r = rng.random()
        if r < 0.15:
            sizes.append(0)
        elif r < 0.25:
            sizes.append(1)
        elif skew:
            sizes.append(min(int(mean * rng.paretovariate(1.2) / 3), 6 * mean))
        else:
            sizes.append(rng.randint(0, 2 * mean))
    while sum(sizes) > 1600:
        sizes = [s // 2 for s in sizes]
    n = 16 * rng.randint(1, 128)
    k = rng.choice([16 * rng.randint(1, 128), 128 * rng.randint(1, 16), 16 * rng.randint(1, 16)])
    mode = rng.choice(["row", "expert", "block"])
    fast = mode != "block" and rng.random() < 0.4
    sa_form = rng.choice({"row": ["rows", "col"], "expert": ["rows", "one", "g1"], "block": ["rows"]}[mode])
    tail = rng.choice([0, 0, 3]) or (0 if sum(sizes) else 2)
    return sizes, n, k, mode, fast, sa_form, tail


def _check_gpu(qa, b, sa, sb, offs, ends, od, fast, where, **kw):
    n = b.shape[2]
    out = torch.full((qa.shape[0], n), float("nan"), device="cuda", dtype=od)
    got = tk.ops.scaled_grouped_mm(qa, b, sa, sb, offs, out=out, use_fast_accum=fast, strict=True, **kw)
    torch.cuda.synchronize()
    want = "block" if sb.dim() == 3 else "row"
    assert got is out and tk.ops.last_path == f"tma:scaled_grouped:{want}", where + tk.ops.last_path
    rows = ends[-1]
    assert bool(out[rows:].isnan().all()), where + ": rows past the last offset were written"
    if rows == 0:
        return 0.0
    assert bool(torch.isfinite(out[:rows]).all()), where + ": unwritten or non-finite rows"
    ref = scaled_grouped_mm_reference(qa, b, sa, sb, offs, out_dtype=torch.float32)
    err = _rel(out[:rows], ref[:rows])
    tol = max(TOL[od], TOL_FAST) if fast else TOL[od]
    assert err < tol, where + f": rel err {err:.2e}"
    return err


@pytest.mark.gpu
def test_random_batches_run_the_kernel_and_match_by_hand():
    """3-D x 3-D batches on the grouped kernel (G equal groups, no offs): 40 random cases, row / per-expert / block
    scales, fp8 type pairs, bf16 / fp16 / fp32 out, M not a multiple of the tile, poisoned out=; the cached second
    call gives the same bits; a batch whose rows are apart in memory runs torch's path and says why."""
    rng = random.Random(31)
    for i in range(40):
        mode = rng.choice(["row", "expert", "block"])
        g, m = rng.choice([1, 2, 5, 16]), rng.choice([1, 7, 64, 100, 300])
        n, k = 16 * rng.randint(1, 48), 16 * rng.randint(1, 64)
        ta, tb = rng.choice([(E4, E4), (E4, E5), (E5, E4)])
        od = rng.choice([BF16, BF16, F16, F32])
        fast = mode != "block" and rng.random() < 0.3
        a, b, sa, sb = _batch(mode, g, m, n, k, ta, tb, device="cuda", seed=i)
        where = f"case {i}: G={g} M={m} N={n} K={k} {mode} fast={fast} {ta}x{tb}->{od}"
        out = torch.full((g, m, n), float("nan"), device="cuda", dtype=od)
        got = tk.ops.scaled_grouped_mm(a, b, sa, sb, out=out, use_fast_accum=fast, strict=True)
        want = "block" if mode == "block" else "row"
        assert got is out and tk.ops.last_path == f"tma:scaled_grouped:{want}", where + tk.ops.last_path
        err = _rel(out, _batch_by_hand(a, b, sa, sb))
        assert err < (max(TOL[od], TOL_FAST) if fast else TOL[od]), where + f": rel err {err:.2e}"
        first = tk.ops.scaled_grouped_mm(a, b, sa, sb, out_dtype=od, use_fast_accum=fast)
        assert torch.equal(tk.ops.scaled_grouped_mm(a, b, sa, sb, out_dtype=od, use_fast_accum=fast), first), where
    a, b, sa, sb = _batch("row", 4, 72, 64, 128, device="cuda")
    gap = torch.empty(4, 80, 128, device="cuda", dtype=E4)[:, :72]
    gap.copy_(a)
    c = tk.ops.scaled_grouped_mm(gap, b, sa, sb)
    assert tk.ops.last_path.startswith("torch:a's batches are"), tk.ops.last_path
    assert _rel(c, _batch_by_hand(a, b, sa, sb)) < TOL[BF16]


@pytest.mark.gpu
@pytest.mark.parametrize("seed", sorted(_SEED_TYPES))
def test_random_group_lists_match_the_reference(seed):
    """60 random MoE problems per seed: 1-64 groups with empty and one-row groups, uniform or skewed sizes, N and K
    multiples of 16 up to 2048 (K often not a multiple of 128), row / per-expert / block scales, fast accumulation
    on or off (row-wise), the seed's fp8 and output types; poisoned outputs."""
    rng = random.Random(seed)
    ta, tb, od = _SEED_TYPES[seed]
    worst = {}
    for i in range(60):
        sizes, n, k, mode, fast, sa_form, tail = _random_case(rng)
        qa, b, sa, sb, offs, ends, _ = _moe(mode, sizes, n, k, ta, tb, seed=1000 * seed + i, device="cuda",
                                            tail=tail, sa_form=sa_form)
        where = (f"case {i}: G={len(sizes)} M={qa.shape[0]} N={n} K={k} {mode}/{sa_form} fast={fast} "
                 f"{ta}x{tb}->{od} sizes={sizes[:8]}")
        err = _check_gpu(qa, b, sa, sb, offs, ends, od, fast, where)
        worst[(mode, fast)] = max(worst.get((mode, fast), 0.0), err)
    print(f"seed {seed}: worst rel err {worst}")


@pytest.mark.gpu
@pytest.mark.parametrize("mode, cfg, fast, ta, tb, od", [
    ("row", "n192_s4_c1", False, E4, E4, BF16),
    ("block", "n192_s4_c1", False, E4, E4, F32),
    ("expert", "n192_s4_c1", False, E5, E5, F32),
    ("row", "n256_s4_c1", True, E4, E4, BF16),
    ("block", None, False, E4, E4, BF16),  # default choice: 128x192 (asserted below)
])
def test_wide_tiles(mode, cfg, fast, ta, tb, od):
    """128x192 two-level tiles (block scales: each tile spans two 128-column scale blocks, N not a multiple of 192)
    and 128x256 fast tiles; the last case lets the chooser pick 128x192."""
    if cfg is None:
        sizes, n, k = [700, 0, 1, 900, 1, 1000], 1616, 272
        assert kg.choose_grouped_fp8_config(sum(sizes) + 5, n, len(sizes), "block", False) == gf.CONFIGS["n192_s4_c1"]
    else:
        sizes, n, k = [130, 0, 1, 257, 64], 400, 400
    qa, b, sa, sb, offs, ends, _ = _moe(mode, sizes, n, k, ta, tb, seed=7, device="cuda", tail=5)
    _check_gpu(qa, b, sa, sb, offs, ends, od, fast, f"{mode} {cfg} fast={fast}", config=cfg)


@pytest.mark.gpu
@pytest.mark.parametrize("mode, cfg, fast, ta, tb, od", [
    ("row", "m64_n64_s12_c1", False, E4, E4, BF16),  # staged epilogue scales
    ("expert", "m64_n64_s12_c1", False, E5, E4, F32),
    ("row", "m64_n64_s12_c1_ov1", True, E4, E5, BF16),
    ("row", "m64_n64_s12_c1", True, E4, E4, F32),
])
def test_64x64_tiles(mode, cfg, fast, ta, tb, od):
    """The row-wise modes' 64x64 tiles (the chooser's pick for decode-like problems): groups past one 64-row tile,
    empty and one-row groups, N and K not multiples of 64."""
    sizes, n, k = [130, 0, 1, 64, 65, 7], 208, 592
    qa, b, sa, sb, offs, ends, _ = _moe(mode, sizes, n, k, ta, tb, seed=13, device="cuda", tail=2)
    _check_gpu(qa, b, sa, sb, offs, ends, od, fast, f"{mode} {cfg} fast={fast} {ta}x{tb}->{od}", config=cfg)


@pytest.mark.gpu
@pytest.mark.parametrize("mode, cfg, fast", [
    ("row", "n192_s4_c2", False), ("row", "n128_s6_c2", False), ("row", "n256_s4_c2", True),
    ("expert", "n128_s6_c2", True), ("block", "n192_s4_c2", False), ("block", "n128_s5_c2", False),
])
def test_pairs_along_m(mode, cfg, fast):
    """Pairs of CTAs along M (B multicast; the odd-pitch choice): groups of odd and even row-tile counts, so some
    pairs' second tile lies past its group (it loads and multiplies, and stores nothing), empty and one-row groups,
    K an odd multiple of 16 bytes (the pitch that makes the chooser take pairs)."""
    sizes, n, k = [300, 0, 1, 129, 512, 700, 64], 656, 528
    qa, b, sa, sb, offs, ends, _ = _moe(mode, sizes, n, k, E4, E4, seed=11, device="cuda", tail=3)
    _check_gpu(qa, b, sa, sb, offs, ends, BF16, fast, f"{mode} {cfg} fast={fast}", config=cfg)


@pytest.mark.gpu
def test_offsets_are_clamped_on_the_device_and_checked_on_request():
    qa, b, sa, sb, _, _, qw = _moe("row", [50, 30, 20], 64, 128, device="cuda", seed=8)
    bad = torch.tensor([50, 20, 400], dtype=torch.int32, device="cuda")  # decreasing, past M
    out = torch.full((100, 64), float("nan"), device="cuda", dtype=F32)
    tk.ops.scaled_grouped_mm(qa, b, sa, sb, bad, out=out)  # memory-safe: groups [0, 50), [50, 50), [50, 100)
    assert tk.ops.last_path == "tma:scaled_grouped:row"
    assert _rel(out, _by_hand(qa, qw, sa, sb, [50, 50, 100])) < 1e-3
    with pytest.raises(ValueError, match="non-decreasing"):
        tk.ops.scaled_grouped_mm(qa, b, sa, sb, bad, check_offs=True)
    with pytest.raises(ValueError, match="past the end"):
        tk.ops.scaled_grouped_mm(qa, b, sa, sb, torch.tensor([10, 20, 101], dtype=torch.int32, device="cuda"),
                                 check_offs=True)


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["row", "block"])
def test_cuda_graph_replay_reads_new_offsets(mode):
    qa, b, sa, sb, offs, _, qw = _moe(mode, [100, 100, 100, 212], 256, 384, device="cuda", seed=9)
    out = torch.empty(512, 256, device="cuda", dtype=BF16)
    tk.ops.scaled_grouped_mm(qa, b, sa, sb, offs, out=out, strict=True)  # plan and compile outside the capture
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        tk.ops.scaled_grouped_mm(qa, b, sa, sb, offs, out=out, strict=True)
    offs.copy_(torch.tensor([0, 256, 256, 500], dtype=torch.int32))
    out.fill_(float("nan"))
    g.replay()
    torch.cuda.synchronize()
    ends = [0, 256, 256, 500]
    assert _rel(out[:500], _by_hand(qa, qw, sa, sb, ends)) < TOL[BF16]
    assert bool(out[500:].isnan().all())


@pytest.mark.gpu
def test_torch_compile_runs_the_kernel():
    qa, b, sa, sb, offs, ends, qw = _moe("block", [40, 0, 1, 200], 128, 256, device="cuda", seed=10)

    def f(a, b, sa, sb, offs):
        return tk.ops.scaled_grouped_mm(a, b, sa, sb, offs, out_dtype=torch.float32, strict=True) * 2

    got = torch.compile(f, fullgraph=True, backend="aot_eager")(qa, b, sa, sb, offs)
    assert tk.ops.last_path == "tma:scaled_grouped:block"
    assert _rel(got[:ends[-1]] / 2, _by_hand(qa, qw, sa, sb, ends)) < TOL[F32]


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["row", "block"])
def test_one_deep_row_major_b_runs_a_fallback_and_is_right(mode):
    """K = 1 with each b[g] a row-major (1, N) slice: its N elements are 1 byte apart, not K-major rows 16 bytes
    apart, so the default call takes a fallback (the plan used to pass it to the kernel, which read B with the K
    stride as the row pitch and returned wrong results); checked against a by-hand fp64 product."""
    g, n, m = 2, 256, 3
    qa = torch.randn(m, 1, device="cuda").to(E4)
    b = torch.randn(g, 1, n, device="cuda").to(E4)  # contiguous (G, 1, N): strides (N, N, 1)
    offs = torch.tensor([1, 3], dtype=torch.int32, device="cuda")
    if mode == "block":
        sa, sb = torch.rand(m, 1, device="cuda") + 0.5, torch.rand(g, 2, 1, device="cuda") + 0.5
        sb_cols = sb[:, :, 0].repeat_interleave(128, dim=1)[:, :n]
    else:
        sa, sb = torch.rand(m, device="cuda") + 0.5, torch.rand(g, n, device="cuda") + 0.5
        sb_cols = sb
    out = tk.ops.scaled_grouped_mm(qa, b, sa, sb, offs, out_dtype=torch.float32)
    torch.cuda.synchronize()
    assert not tk.ops.last_path.startswith("tma:"), tk.ops.last_path
    ad = qa.double()[:, 0] * sa.double().reshape(-1)
    want = torch.stack([ad[r] * b[int(r >= 1), 0].double() * sb_cols[int(r >= 1)].double() for r in range(m)])
    assert _rel(out, want) < 1e-6
