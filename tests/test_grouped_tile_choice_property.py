"""The grouped kernels' tile choice as properties over random problems (no GPU): every pick is a candidate of its
mode, groups averaging at most 64 rows get 64-row tiles (bf16 and fp8 row-wise), block scales keep whole 128-column
scale blocks, and the time estimate grows with the rows and the columns."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tmakit.kernels import gemm_fp8 as gf
from tmakit.kernels import gemm_grouped as kg
from tmakit.kernels.gemm import CONFIGS

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ROWS = st.integers(0, 1 << 20)
COLS = st.integers(1, 2048).map(lambda x: 8 * x)
GROUPS = st.integers(1, 512)


def _short(m: int, g: int) -> bool:
    return m <= 64 * min(g, m)


@SETTINGS
@given(m=ROWS, n=COLS, g=GROUPS, odd=st.booleans(), b_mn=st.booleans())
def test_bf16_pick_is_a_candidate_and_short_groups_get_64_row_tiles(m, n, g, odd, b_mn):
    got = kg.choose_grouped_config(m, n, g, odd_pitch=odd, b_mn=int(b_mn))
    names = kg.odd_pitch_tiles(kg.BF16_TILES, CONFIGS, int(b_mn)) if odd else kg.BF16_TILES
    assert got in [CONFIGS[name] for name in names]
    if _short(m, g):
        assert got.bm == 64, (m, n, g, got.name)


@SETTINGS
@given(m=ROWS, n=COLS, g=GROUPS, odd=st.booleans(), kind=st.sampled_from(["two-level", "fast", "block"]))
def test_fp8_pick_is_a_candidate_of_its_mode(m, n, g, odd, kind):
    scaling, fast = ("block", False) if kind == "block" else ("row", kind == "fast")
    got = kg.choose_grouped_fp8_config(m, n, g, scaling, fast, odd_pitch=odd)
    names = kg.odd_pitch_tiles(kg.FP8_TILES[kind], gf.CONFIGS) if odd else kg.FP8_TILES[kind]
    assert got in [gf.CONFIGS[name] for name in names]
    if kind == "block":
        assert got.bn in (128, 192)  # whole 128-column scale blocks, or one and a half with the split at 64 / 128
    elif _short(m, g):
        assert got.bm == 64, (m, n, g, kind, got.name)
    if not fast:
        assert got.bn <= 192 and not got.overlap  # two accumulator sets


@SETTINGS
@given(m=ROWS, n=COLS, g=GROUPS, dm=st.integers(0, 5000), dn=st.integers(0, 512).map(lambda x: 8 * x),
       name=st.sampled_from(sorted(kg.odd_pitch_tiles(kg.BF16_TILES, CONFIGS))))
def test_tile_estimate_grows_with_rows_and_columns(m, n, g, dm, dn, name):
    """More rows or columns never make a problem's estimate smaller: below G rows each row holds a group of its own
    (one row tile each), above it the G groups' equal shares only grow. (Not so for more groups at equal M: the
    shares can drop under a tile's rows, 6913 rows on 27 groups of 64-row tiles are 135 row tiles, on 28 groups 112.)"""
    cfg = CONFIGS[name]
    base = kg.grouped_tile_cost(cfg, 1.0, m, n, g)
    assert kg.grouped_tile_cost(cfg, 1.0, m + dm, n, g) >= base
    assert kg.grouped_tile_cost(cfg, 1.0, m, n + dn, g) >= base


@SETTINGS
@given(m=st.integers(0, 8192), k=st.integers(0, 1 << 17), n=st.integers(0, 8192), g=st.integers(0, 300),
       a_mmajor=st.booleans(), pad_a=st.integers(0, 9), pad_b=st.integers(0, 9), align=st.sampled_from([128, 64, 16]),
       fp16=st.booleans(), out32=st.booleans())
def test_plans_along_k_hold_the_kernels_rules_or_refuse(m, k, n, g, a_mmajor, pad_a, pad_b, align, fp16, out32):
    """Any 2-D x 2-D layout either plans for the kernel along K -- a M-major with a K stride of whole 16 bytes, b
    row-major likewise, 16-byte output rows, 128-byte aligned bases, one-CTA tiles, groups x M rows -- or raises
    ``GemmError`` naming the rule; nothing else escapes."""
    import pytest

    torch = pytest.importorskip("torch")
    from fake_tensors import FakeTensor
    from tmakit.kernels.gemm import GemmError

    dt = torch.float16 if fp16 else torch.bfloat16
    a_strides = (1, max(m, 1) + pad_a) if a_mmajor else (k + pad_a, 1)
    a = FakeTensor((m, k), a_strides, ptr=align * 1001, dtype=dt)
    b = FakeTensor((k, n), (n + pad_b, 1), ptr=1 << 20, dtype=dt)
    try:
        p = kg.plan_grouped_k(a, b, g, out_dtype=torch.float32 if out32 else None)
    except GemmError:
        return
    eb, eo = 2, 4 if out32 else 2
    assert (p.m, p.n, p.k, p.groups, p.k_grouped, p.b_mn) == (g * m, n, k, g, 1, 1)
    assert p.config.cluster == 1 and (n * eo) % 16 == 0
    assert k <= 1 or ((p.lda * eb) % 16 == 0 and (p.ldb * eb) % 16 == 0)
    assert m <= 1 or a.stride(0) == 1
    assert align == 128
    assert kg.kernel_name(p).endswith(", 1>")
