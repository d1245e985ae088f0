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
