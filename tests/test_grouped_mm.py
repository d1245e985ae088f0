"""``tk.ops.grouped_mm``: torch._grouped_mm's MoE GEMM. CPU: the plan's rules, the offsets' checks, the torch
fallback; GPU (marked): 1,000 random group lists (empty groups, one-row groups, groups shorter than a tile, both B
layouts, bf16/fp16, fp32 out) against an fp32 reference, with poisoned outputs."""

from __future__ import annotations

import random

import pytest

torch = pytest.importorskip("torch")

import tmakit as tk  # noqa: E402
from fake_tensors import FakeTensor as _T  # noqa: E402
from tmakit.kernels import gemm_grouped as kg  # noqa: E402
from tmakit.kernels.gemm import CONFIGS, GemmError  # noqa: E402


def test_plan_reads_both_b_layouts_and_picks_the_tile_by_rows_per_group():
    a = _T((1000, 512), (512, 1))
    kmaj = _T((8, 512, 256), (256 * 512, 1, 512))  # w.transpose(-2, -1) of a contiguous (8, 256, 512) w
    rowm = _T((8, 512, 256), (512 * 256, 256, 1))
    p = kg.plan_grouped(a, kmaj, 8)
    assert (p.b_mn, p.ldb, p.ldb_group, p.m, p.n, p.k, p.groups) == (0, 512, 256 * 512, 1000, 256, 512, 8)
    assert p.config.bm == 64  # 8 x 2 x 2 tiles of 64x128: less than a wave, the smallest tile finishes first
    assert kg.plan_grouped(a, rowm, 8).b_mn == 1
    big = kg.plan_grouped(_T((65536, 512), (512, 1)), _T((8, 512, 4096), (4096 * 512, 1, 512)), 8)
    assert big.config == CONFIGS["n256_s4_c1_d"]  # 8 x 64 x 16 tiles of 128x256: 8 waves against 16 of 128x128
    assert kg.kernel_name(big).startswith("tmakit_gemm_grouped<0, 0, 128, 256, 4, 1, 0,")  # one CTA, K-major B
    assert kg.kernel_name(big).endswith(", 1, 1, 0>")  # deferred epilogue (bf16 output), idle consumers skip


@pytest.mark.parametrize("m, n, g, out, want", [
    (65536, 4096, 8, "bfloat16", "n256_s4_c1"),  # 128x256 tiles, 16-bit output: deferred
    (65536, 4096, 8, "float16", "n256_s4_c1"),
    (65536, 4096, 8, "float32", "n256_s4_c1"),  # fp32 output: the kernel has no deferral for it
    (65520, 1296, 65, "bfloat16", "n192_s4_c1"),  # 128x192: deferred (below)
    (10612, 384, 14, "bfloat16", "n128_s6_c1"),  # 128x128 stages a whole tile at once: as chosen
    (400, 256, 8, "bfloat16", "m64_n64_s12_c1_ov1"),  # 64-row tiles: as chosen
])
def test_plan_defers_the_epilogue_of_16_bit_outputs_on_streamed_tiles(m, n, g, out, want):
    """The chosen tile (``want``) with the deferred epilogue where the output is 16-bit and the tile 128x256 or
    128x192 (a tile's staging boxes written during the next tile's first slabs); others keep the chosen tile as it
    is; an explicit config is taken as given."""
    k = 512
    a, b = _T((m, k), (k, 1)), _T((g, k, n), (k * n, 1, k))
    p = kg.plan_grouped(a, b, g, out_dtype=getattr(torch, out))
    chosen = kg.choose_grouped_config(m, n, g)
    assert chosen == CONFIGS[want]
    defer = out != "float32" and chosen.bm == 128 and chosen.bn in (192, 256)
    assert p.config.defer == defer and kg.kernel_name(p).endswith(f", {int(defer)}, {p.idle}, 0>")
    assert kg.plan_grouped(a, b, g, out_dtype=getattr(torch, out), config="n256_s4_c1").config.defer == 0
    assert kg.plan_grouped(a, b, g, out_dtype=getattr(torch, out), config="n256_s4_c1_d").config.defer == 1


@pytest.mark.parametrize("m, n, g, want", [
    (400, 256, 8, "m64_n64_s12_c1_ov1"),  # 50 rows per group, 16 tiles of 64x128: 32 of 64x64 (one wave) stream B
    # faster
    (64 * 120, 2048, 120, "m64_n128_s8_c1_ov1"),  # 64 rows per group: 128-row tiles would stream B past empty rows
    (64 * 120 + 120, 2048, 120, "n192_s4_c1"),  # 65: the area model weighs 128-row tiles again
    (40, 7808, 36, "m64_n128_s8_c1_ov1"),  # 40 tokens over 36 experts: 128-row tiles excluded
    (960, 1536, 16, "m64_n64_s12_c1_ov1"),  # 60 rows per group: the area model alone would take 128x192 (one wave)
    (65536, 4096, 64, "n256_s4_c1"),  # 1024 rows per group, wide N: 128x256
    (10612, 384, 14, "n128_s6_c1"),  # N = 384: 3 x 128 columns, where 2 x 256 waste a third of each row of tiles
    (4096, 7168, 64, "m64_n128_s8_c1_ov1"),  # 64 rows per group: half of every 128-row tile would be empty
    (65520, 1296, 65, "n192_s4_c1"),  # N = 1296: 7 x 192 columns (96 % used) where 6 x 256 use 84 %
    (0, 256, 8, "m64_n64_s12_c1_ov1"),
])
def test_tile_choice(m, n, g, want):
    """The tile of least estimated time: waves of each group's tiles (M / groups rows per group) times a tile's area
    over its relative speed (``kg.BF16_TILES``)."""
    assert kg.choose_grouped_config(m, n, g) == CONFIGS[want]


def test_tile_cost_counts_waves_and_wasted_columns():
    c256, c128 = CONFIGS["n256_s4_c1"], CONFIGS["n128_s6_c1"]
    assert kg.grouped_tile_cost(c256, 1.0, 128 * 132, 256, 1) == 128 * 256  # one full wave
    assert kg.grouped_tile_cost(c256, 1.0, 128 * 133, 256, 1) == 2 * 128 * 256  # one tile more: two waves
    assert kg.grouped_tile_cost(c128, 0.5, 128, 320, 1) == 128 * 128 / 0.5  # 3 tiles, one wave
    assert kg.grouped_tile_cost(c128, 1.0, 0, 128, 4) == 128 * 128  # no rows: one tile still
    assert kg.grouped_tile_cost(c128, 1.0, 4 * 132, 128, 132) == 128 * 128  # each group 4 rows: one wave
    assert kg.grouped_tile_cost(c128, 1.0, 4 * 133, 128, 133) == 2 * 128 * 128  # 133 groups hold rows: two waves
    assert kg.grouped_tile_cost(c128, 1.0, 132, 128, 1000) == 128 * 128  # at most 132 of 1000 groups hold rows


def test_short_groups_take_64_row_tiles():
    """Where the groups that can hold rows (at most M of them) average at most 64 rows, only 64-row tiles are
    candidates; above that, or where a mode has no 64-row tile, all of them."""
    short = kg.short_group_tiles(kg.BF16_TILES, CONFIGS, 64 * 10, 10)
    assert short and all(CONFIGS[name].bm == 64 for name in short)
    assert kg.short_group_tiles(kg.BF16_TILES, CONFIGS, 64 * 10 + 1, 10) == kg.BF16_TILES
    assert kg.short_group_tiles(kg.BF16_TILES, CONFIGS, 5, 1000) == short  # 5 rows: at most 5 groups hold any
    wide = {"n256_s4_c1": 1.0}
    assert kg.short_group_tiles(wide, CONFIGS, 1, 8) == wide


def test_odd_pitches_weigh_pairs_along_m():
    """Rows an odd multiple of 16 bytes apart (bf16 K = 8 mod 16): single CTAs count at ODD_PITCH_SPEED of a pair, so
    large groups take the pair of the tile they would take on an even pitch; pairs count an even number of row tiles
    per group (a 130-row group: 2 tiles single, 2 paired; a 129-row group of 64-row tiles: 3 vs 4); small problems and
    row-major B with 192-column tiles (boxes that do not split over two CTAs) stay single."""
    def plan(m, k, n=4096, g=8, b_mn=0):
        b = _T((g, k, n), (k * n, n, 1)) if b_mn else _T((g, k, n), (k * n, 1, k))
        return kg.plan_grouped(_T((m, k), (k, 1)), b, g)

    assert plan(65536, 4096).config == CONFIGS["n256_s4_c1_d"]  # (bf16 output: deferred epilogue)
    assert plan(65536, 4104).config == CONFIGS["n256_s4_c2_d"]  # 8208 bytes = 16 x 513
    assert plan(65536, 4104, b_mn=1).config == CONFIGS["n256_s4_c2_d"]  # row-major B: K rows of 2 N bytes, A odd
    assert plan(64, 4104).config.cluster_size == 1  # 8 rows per group: 64-row tiles, less than a wave
    c2, c1 = CONFIGS["n256_s4_c2"], CONFIGS["n256_s4_c1"]
    assert kg.grouped_tile_cost(c2, 1.0, 130, 256, 1) == kg.grouped_tile_cost(c1, 1.0, 130, 256, 1)  # 2 row tiles
    m64c2, m64c1 = CONFIGS["m64_n128_s8_c2_ov1"], CONFIGS["m64_n128_s8_c1_ov1"]
    assert kg.grouped_tile_cost(m64c2, 1.0, 129 * 132, 128, 132) == 4 / 3 * kg.grouped_tile_cost(
        m64c1, 1.0, 129 * 132, 128, 132)  # 3 vs 4 row tiles per group, 396 vs 528 tiles: 3 vs 4 waves
    assert "n192_s4_c2" not in kg.odd_pitch_tiles(kg.BF16_TILES, CONFIGS, b_mn=1)
    with pytest.raises(GemmError, match="unevenly"):
        kg.plan_grouped(_T((1000, 520), (520, 1)), _T((8, 520, 256), (520 * 256, 256, 1)), 8, config="n192_s4_c2")


@pytest.mark.parametrize("a,b,n_offs,match", [
    (_T((10, 64), (64, 1)), _T((4, 32, 16), (512, 16, 1)), 4, "do not compose"),
    (_T((10, 64), (64, 1)), _T((4, 64, 16), (1024, 16, 1)), 3, "3 entries for 4 groups"),
    (_T((10, 60), (60, 1)), _T((4, 60, 16), (960, 16, 1)), 4, "multiple of 16 bytes"),
    (_T((10, 64), (64, 1), ptr=(1 << 20) + 64), _T((4, 64, 16), (1024, 16, 1)), 4, "128-byte aligned"),
    (_T((10, 64), (64, 1)), _T((4, 64, 16), (1024, 1, 64)), 4, None),  # K-major: fine
    (_T((10, 64), (64, 1)), _T((4, 64, 16), (1024, 32, 2)), 4, "K-major"),
])
def test_plan_rules(a, b, n_offs, match):
    if match is None:
        assert kg.plan_grouped(a, b, n_offs).b_mn == 0
        return
    with pytest.raises(GemmError, match=match):
        kg.plan_grouped(a, b, n_offs)


def test_cpu_tensors_run_torch_and_say_so():
    a = torch.randn(12, 32, dtype=torch.bfloat16)
    w = torch.randn(3, 16, 32, dtype=torch.bfloat16)
    offs = torch.tensor([4, 4, 12], dtype=torch.int32)
    out = tk.ops.grouped_mm(a, w.transpose(-2, -1), offs)
    assert tk.ops.last_path.startswith("torch:") and "CUDA" in tk.ops.last_path
    ref = torch.cat([a[:4].float() @ w[0].float().t(), a[4:12].float() @ w[2].float().t()])
    assert float((out.float() - ref).norm() / ref.norm()) < 1e-2
    with pytest.raises(GemmError, match="strict=True"):
        tk.ops.grouped_mm(a, w.transpose(-2, -1), offs, strict=True)


@pytest.mark.parametrize("a_shape, b_shape, offs, match", [
    ((12, 32), (3, 32, 16), torch.tensor([4.0, 4, 12]), "1-D int32"),  # float offs: not rounded behind the user
    ((12, 32), (3, 32, 16), torch.tensor([4, 4, 12]), "1-D int32"),  # int64
    ((12, 32), (3, 32, 16), [4, 4, 12], "got list"),
    ((12, 32), (3, 32, 16), torch.tensor([[4, 4, 12]], dtype=torch.int32), "1-D int32"),
    ((12, 32), (3, 32, 16), torch.tensor([4, 12], dtype=torch.int32), "2 entries for 3 groups of b"),
    ((3, 12, 32), (32, 16), torch.tensor([4, 12], dtype=torch.int32), "2 entries for 3 groups of a"),
    ((3, 12, 32), (3, 32, 16), torch.tensor([4, 8, 12], dtype=torch.int32), "must be None"),
    ((12, 32), (3, 32, 16), None, "offs is required"),
    ((12, 32), (32, 16), None, "offs is required"),
])
def test_bad_offs_fail_on_every_path(a_shape, b_shape, offs, match):
    """offs is checked before any path is taken -- the CPU fallback as well as the kernel -- with torch's rules:
    a 1-D int32 tensor, one end offset per group of the 3-D operand, given exactly where an operand is 2-D."""
    a, b = torch.randn(*a_shape, dtype=torch.bfloat16), torch.randn(*b_shape, dtype=torch.bfloat16)
    with pytest.raises(GemmError, match=match):
        tk.ops.grouped_mm(a, b, offs)


@pytest.mark.parametrize("a_shape, b_shape, ends, match", [
    ((12, 32), (3, 32, 16), [4, 2, 12], "non-decreasing"),
    ((12, 32), (3, 32, 16), [4, 8, 13], r"past the end of a \(12 rows\)"),
    ((3, 12, 32), (32, 16), [4, 8, 17], r"past the end of b \(16 columns\)"),
    ((12, 32), (32, 16), [8, 33], r"past the end of K \(32\)"),
])
def test_check_offs_reads_the_values_on_every_path(a_shape, b_shape, ends, match):
    a, b = torch.randn(*a_shape, dtype=torch.bfloat16), torch.randn(*b_shape, dtype=torch.bfloat16)
    offs = torch.tensor(ends, dtype=torch.int32)
    with pytest.raises(GemmError, match=match):
        tk.ops.grouped_mm(a, b, offs, check_offs=True)
    tk.ops.grouped_mm(a, b, offs)  # without check_offs: clamped, as the kernel does (no synchronisation)


@pytest.mark.parametrize("form", ["2d3d", "3d2d", "2d2d"])
def test_torch_loop_computes_every_offs_form(form):
    """The loop of products the fallback runs where torch._grouped_mm cannot take the call (no such op, or operands
    it would misread: strides not multiples of 16 bytes), for each form with ``offs``: rows of a grouped, columns of
    b grouped, K grouped (one product per group); an empty group included."""
    from tmakit.ops.grouped_torch import _loop

    offs = torch.tensor([3, 3, 7], dtype=torch.int32)
    shapes = {"2d3d": ((7, 5), (3, 5, 4)), "3d2d": ((3, 6, 5), (5, 7)), "2d2d": ((6, 7), (7, 4))}[form]
    a, b = torch.randn(*shapes[0]), torch.randn(*shapes[1])
    got = _loop(torch, a, b, offs, torch.float32)
    cuts = [(0, 3, 0), (3, 7, 2)]  # (lo, hi, group) of the non-empty groups
    if form == "2d3d":
        want = torch.cat([a[lo:hi] @ b[g] for lo, hi, g in cuts])
    elif form == "3d2d":
        want = torch.cat([a[g] @ b[:, lo:hi] for lo, hi, g in cuts], dim=1)
    else:
        want = torch.stack([a[:, 0:3] @ b[0:3], torch.zeros(6, 4), a[:, 3:7] @ b[3:7]])
    assert got.shape == want.shape and torch.allclose(got, want, atol=1e-5)


def test_torch_path_skips_operands_torch_would_misread():
    """A ``b`` whose groups start 124 bytes apart, or an ``a`` stored column-major (torch._grouped_mm faulted on the
    GPU on both) is computed by the loop instead of being handed to torch."""
    from tmakit.ops.grouped_torch import _tma_readable, _torch_takes

    w = torch.randn(16, 8, 62, dtype=torch.bfloat16)
    assert not _tma_readable(w.permute(1, 0, 2))  # shape (8, 16, 62), strides (62, 496, 1)
    b = torch.randn(8, 16, 64, dtype=torch.bfloat16)
    a = torch.randn(24, 16, dtype=torch.bfloat16)
    assert _tma_readable(b) and _torch_takes(a, b) and _torch_takes(a, b.transpose(-2, -1).contiguous().mT)
    assert not _torch_takes(a.t().contiguous().t(), b)  # a column-major a: a device-side assert in torch


def _moe(rng, dev, groups, m_total, n, k, dtype, b_mn, skew):
    """A, B, offs of a random MoE problem: group sizes uniform or skewed, some empty."""
    if skew:
        weights = [rng.paretovariate(1.2) for _ in range(groups)]
    else:
        weights = [rng.random() + 0.5 for _ in range(groups)]
    for g in range(groups):
        if rng.random() < 0.15:
            weights[g] = 0.0
    tot = sum(weights) or 1.0
    sizes = [int(m_total * w / tot) for w in weights]
    ends, acc = [], 0
    for s in sizes:
        acc += s
        ends.append(acc)
    a = torch.randn(max(acc, 1), k, device=dev, dtype=dtype)
    if b_mn:
        b = torch.randn(groups, k, n, device=dev, dtype=dtype)
    else:
        b = torch.randn(groups, n, k, device=dev, dtype=dtype).transpose(-2, -1)
    return a, b, torch.tensor(ends, dtype=torch.int32, device=dev), ends


def _reference(a, b, ends):
    rows, lo = [], 0
    for g, hi in enumerate(ends):
        rows.append(a[lo:hi].float() @ b[g].float())
        lo = hi
    return torch.cat(rows) if rows else a[:0].float()


@pytest.mark.gpu
@pytest.mark.parametrize("seed", range(4))
def test_random_group_lists_match_fp32(seed):
    """250 random MoE problems per seed (1,000 in all): 1-64 groups, 0-3000 rows (one-row and empty groups among
    them), N and K multiples of 8 up to 1024 (K mostly not a multiple of the 64-wide slab)."""
    rng = random.Random(seed)
    for i in range(250):
        groups = rng.choice([1, 2, 3, 8, 16, 33, 64])
        m_total = rng.choice([0, 1, 7, 64, 130, 700, 3000])
        n, k = 8 * rng.randint(1, 128), 8 * rng.randint(1, 128)
        dtype = rng.choice([torch.bfloat16, torch.float16])
        b_mn = rng.random() < 0.4
        out_dtype = torch.float32 if rng.random() < 0.2 else None
        a, b, offs, ends = _moe(rng, "cuda", groups, m_total, n, k, dtype, b_mn, rng.random() < 0.5)
        out = torch.full((a.shape[0], n), float("nan"), device="cuda", dtype=out_dtype or dtype)
        got = tk.ops.grouped_mm(a, b, offs, out=out)
        where = (f"case {i}: G={groups} M={a.shape[0]} N={n} K={k} {dtype} b_mn={b_mn} ends={ends[:6]}: "
                 f"{tk.ops.last_path}")
        assert got is out and tk.ops.last_path == "tma:grouped", where
        ref = _reference(a, b, ends)
        rows = ends[-1]
        if rows:
            err = float((out[:rows].float() - ref).norm() / ref.norm().clamp_min(1e-30))
            assert err < 1e-2, where + f" err {err:.2e}"


def _tiles_and_deferred():
    """(id, config) of every tile the chooser may pick (pairs included) and, where the plan defers their epilogue
    (16-bit outputs, ``kg.deferred``), the deferred variant as a GemmConfig."""
    out = []
    for name in kg.odd_pitch_tiles(kg.BF16_TILES, CONFIGS):
        out.append((name, name))
        d = kg.deferred(CONFIGS[name], "bfloat16")
        if d.defer:
            out.append((name + "+defer", d))
    return out


@pytest.mark.gpu
@pytest.mark.parametrize("config", [c for _, c in _tiles_and_deferred()], ids=[i for i, _ in _tiles_and_deferred()])
def test_every_tile_matches_fp32(config):
    """Each tile the chooser may pick (pairs along M included), forced, and with the deferred epilogue where the plan
    takes it, on 24 random group lists (both B layouts -- 128x192 pairs only K-major --, bf16 and fp16, empty and
    one-row groups, groups ending inside tiles and pairs whose second tile lies past the group, N and K multiples
    of 8)."""
    cfg = CONFIGS[config] if isinstance(config, str) else config
    rng = random.Random(cfg.name)
    for i in range(24):
        groups, m_total = rng.choice([1, 3, 8, 33]), rng.choice([1, 130, 700, 3000])
        n, k = 8 * rng.randint(1, 100), 8 * rng.randint(1, 100)
        dtype = rng.choice([torch.bfloat16, torch.float16])
        b_mn = i % 2 == 1 and not cfg.bn // 64 % cfg.cluster
        a, b, offs, ends = _moe(rng, "cuda", groups, m_total, n, k, dtype, b_mn, rng.random() < 0.5)
        out = torch.full((a.shape[0], n), float("nan"), device="cuda", dtype=dtype)
        tk.ops.grouped_mm(a, b, offs, out=out, config=config, strict=True)
        rows = ends[-1]
        if rows:
            ref = _reference(a, b, ends)
            err = float((out[:rows].float() - ref).norm() / ref.norm().clamp_min(1e-30))
            assert err < 1e-2, f"{cfg.name} case {i}: G={groups} N={n} K={k} b_mn={b_mn} ends={ends[:6]} err {err:.2e}"


def test_batched_form_checks_shapes_and_runs_torch_on_the_cpu():
    a = torch.randn(3, 5, 16, dtype=torch.bfloat16)
    b = torch.randn(3, 16, 8, dtype=torch.bfloat16)
    out = tk.ops.grouped_mm(a, b)
    assert out.shape == (3, 5, 8) and tk.ops.last_path.startswith("torch:") and "CUDA" in tk.ops.last_path
    assert float((out.float() - torch.bmm(a.float(), b.float())).norm() / torch.bmm(a.float(), b.float()).norm()) < 1e-2
    with pytest.raises(GemmError, match="offs must be None"):
        tk.ops.grouped_mm(a, b, torch.tensor([1, 2, 3], dtype=torch.int32))
    with pytest.raises(GemmError, match="strict=True"):
        tk.ops.grouped_mm(a, b, strict=True)


def test_batched_fallback_to_fp32_does_not_round_through_the_input_dtype():
    """A batch that runs torch's loop with out_dtype=float32 keeps fp32 products: rounding them to bf16 first (bmm in
    the inputs' dtype, then a cast) left a 1.6e-3 error where fp32 accumulation gives about 1e-7 (found by
    tools/fuzz_ops.py)."""
    g = torch.Generator().manual_seed(5)
    a = torch.randn(3, 8, 64, generator=g).to(torch.bfloat16)
    b = torch.randn(3, 64, 40, generator=g).to(torch.bfloat16)
    ref = torch.bmm(a.double(), b.double())
    got = tk.ops.grouped_mm(a, b, out_dtype=torch.float32)
    assert got.dtype == torch.float32 and float((got.double() - ref).norm() / ref.norm()) < 1e-5


@pytest.mark.gpu
@pytest.mark.parametrize("seed", range(2))
def test_batched_form_matches_fp32(seed):
    """3-D a x 3-D b on the grouped kernel (G equal groups of a's rows): 60 random batches per seed, both B layouts,
    bf16 / fp16, fp32 out, M not a multiple of the tile, a batch of one, poisoned outputs; rows that do not flatten
    (a gap between batches) run torch's op and say why."""
    rng = random.Random(100 + seed)
    for i in range(60):
        g, m = rng.choice([1, 2, 5, 16, 64]), rng.choice([1, 7, 64, 100, 256, 1000])
        n, k = 8 * rng.randint(1, 96), 8 * rng.randint(1, 96)
        dtype = rng.choice([torch.bfloat16, torch.float16])
        od = torch.float32 if rng.random() < 0.2 else dtype
        a = torch.randn(g, m, k, device="cuda", dtype=dtype)
        b = (torch.randn(g, n, k, device="cuda", dtype=dtype).transpose(-2, -1) if rng.random() < 0.5
             else torch.randn(g, k, n, device="cuda", dtype=dtype))
        out = torch.full((g, m, n), float("nan"), device="cuda", dtype=od)
        got = tk.ops.grouped_mm(a, b, out=out)
        where = f"case {i}: G={g} M={m} N={n} K={k} {dtype} b {tuple(b.stride())}: {tk.ops.last_path}"
        assert got is out and tk.ops.last_path == "tma:grouped", where
        ref = torch.bmm(a.float(), b.float())
        err = float((out.float() - ref).norm() / ref.norm())
        assert err < 1e-2, where + f" err {err:.2e}"
        again = tk.ops.grouped_mm(a, b, out_dtype=od)  # new output; the second call takes the cached path
        assert again.shape == (g, m, n) and torch.equal(tk.ops.grouped_mm(a, b, out_dtype=od), again)
    a = torch.randn(4, 80, 64, device="cuda", dtype=torch.bfloat16)[:, :72]  # 8 rows between batches
    b = torch.randn(4, 64, 32, device="cuda", dtype=torch.bfloat16)
    out = tk.ops.grouped_mm(a, b)
    assert tk.ops.last_path.startswith("torch:") and "batches are" in tk.ops.last_path
    assert float((out.float() - torch.bmm(a.float(), b.float())).norm() / torch.bmm(a.float(), b.float()).norm()) < 1e-2


def test_torch_fallback_reads_group_sizes_torch_would_assert_on():
    """torch's grouped kernel asserts on the device (a broken context) for group sizes that are not 16-byte
    multiples along K with a K-major a or b, or along N; the fallback reads the offsets there and loops instead."""
    from tmakit.ops import grouped_torch as og

    x, dy = torch.randn(40, 16, dtype=torch.bfloat16), torch.randn(40, 8, dtype=torch.bfloat16)
    ok, odd = torch.tensor([8, 16, 40], dtype=torch.int32), torch.tensor([8, 13, 40], dtype=torch.int32)
    assert og._torch_group_sizes_ok(x.t(), dy, odd)  # M-major a, row-major b: any sizes
    assert og._torch_group_sizes_ok(x.t().contiguous(), dy, ok)
    assert not og._torch_group_sizes_ok(x.t().contiguous(), dy, odd)
    assert not og._torch_group_sizes_ok(x.t().contiguous(), dy, torch.tensor([8, 8, 40], dtype=torch.int32))
    a3, b2 = torch.randn(3, 4, 16, dtype=torch.bfloat16), torch.randn(16, 40, dtype=torch.bfloat16)
    assert og._torch_group_sizes_ok(a3, b2, ok) and not og._torch_group_sizes_ok(a3, b2, odd)
    got = tk.ops.grouped_mm(x.t().contiguous(), dy, odd)
    ref = torch.stack([x.t()[:, lo:hi].float() @ dy[lo:hi].float() for lo, hi in ((0, 8), (8, 13), (13, 40))])
    assert float((got.float() - ref).norm() / ref.norm()) < 1e-2


def _grouped_reference(a, b, offs):
    """torch._grouped_mm's meaning in fp32 by loops of differentiable products (rows or columns past the last
    offset: zero)."""
    if offs is None:
        return torch.bmm(a.float(), b.float())
    ends, lo = offs.tolist(), 0
    spans = []
    for hi in ends:
        spans.append((lo, max(hi, lo)))
        lo = max(hi, lo)
    if a.dim() == 2 and b.dim() == 3:
        out = [a[lo:hi].float() @ b[g].float() for g, (lo, hi) in enumerate(spans)]
        rest = a.shape[0] - lo
        return torch.cat(out + [a.new_zeros(rest, b.shape[2]).float()])
    if a.dim() == 3 and b.dim() == 2:
        out = [a[g].float() @ b[:, lo:hi].float() for g, (lo, hi) in enumerate(spans)]
        return torch.cat(out + [a.new_zeros(a.shape[1], b.shape[1] - lo).float()], dim=1)
    return torch.stack([a[:, lo:hi].float() @ b[lo:hi].float() for lo, hi in spans])


def _grad_case(form, device):
    g = torch.Generator(device=device).manual_seed(3)
    r = lambda *s: torch.randn(*s, device=device, dtype=torch.bfloat16, generator=g)  # noqa: E731
    offs = lambda v: torch.tensor(v, dtype=torch.int32, device=device)  # noqa: E731
    if form == "rows":  # an MoE layer: tokens x w[g].t(), an empty expert, tokens past the last offset
        return r(100, 64), r(4, 48, 64).transpose(-2, -1), offs([30, 30, 72, 96])
    if form == "k":
        return r(200, 48).t(), r(200, 32), offs([40, 40, 136, 192])
    if form == "n":
        return r(3, 24, 64), r(64, 96), offs([32, 64, 80])
    return r(3, 40, 64), r(3, 64, 24), None


@pytest.mark.parametrize("form", ["rows", "k", "n", "batch"])
def test_autograd_through_grouped_mm_matches_the_reference(form):
    """With a tensor requiring grad, grouped_mm goes through the custom op and its backward formula (two more
    grouped products; on the CPU torch's op or the loop runs them): gradients equal those of fp32 loops."""
    a, b, offs = _grad_case(form, "cpu")
    a1, b1 = a.detach().requires_grad_(), b.detach().requires_grad_()
    out = tk.ops.grouped_mm(a1, b1, offs)
    assert out.grad_fn is not None
    gout = torch.randn(out.shape, generator=torch.Generator().manual_seed(5)).to(out.dtype)
    out.backward(gout)
    a2, b2 = a.detach().float().requires_grad_(), b.detach().float().requires_grad_()
    _grouped_reference(a2, b2, offs).backward(gout.float())
    for x, got, want in ((a, a1.grad, a2.grad), (b, b1.grad, b2.grad)):
        assert got.dtype == torch.bfloat16 and got.shape == want.shape and got.stride() == x.stride()
        assert float((got.float() - want).norm() / want.norm()) < 1e-2
    with pytest.raises(GemmError, match="autograd"):
        tk.ops.grouped_mm(a1, b1, offs, out=torch.empty_like(out))


def test_autograd_under_torch_compile_uses_the_custom_ops_formula():
    """Compiled (AOTAutograd traces the custom op's backward), the gradients equal eager ones, in the inputs'
    layouts."""
    a = torch.randn(12, 32, dtype=torch.bfloat16, requires_grad=True)
    w = torch.randn(3, 16, 32, dtype=torch.bfloat16, requires_grad=True)
    offs = torch.tensor([4, 4, 12], dtype=torch.int32)

    def f(a, w, offs):
        return tk.ops.grouped_mm(a, w.transpose(-2, -1), offs).float().sum()

    torch.compile(f, fullgraph=True, backend="aot_eager")(a, w, offs).backward()
    ga, gw = a.grad.clone(), w.grad.clone()
    a.grad = w.grad = None
    f(a, w, offs).backward()
    assert torch.equal(ga, a.grad) and torch.equal(gw, w.grad) and gw.stride() == w.stride()


def test_plan_along_k_reads_a_m_major_and_b_row_major():
    """2-D x 2-D grouped along K (weight gradients): a = x.t() of row-major tokens x (K, M), b row-major (K, N);
    the plan's rows are groups x M, its kernel the grouped one with KG = 1; other layouts and misfits are refused."""
    a, b = _T((4096, 65536), (1, 4096)), _T((65536, 2048), (2048, 1))
    p = kg.plan_grouped_k(a, b, 16)
    assert (p.m, p.n, p.k, p.groups, p.lda, p.ldb, p.ldc, p.b_mn, p.k_grouped) == \
        (16 * 4096, 2048, 65536, 16, 4096, 2048, 2048, 1, 1)
    assert p.config.cluster == 1 and kg.kernel_name(p).endswith(", 0, 1>")
    assert kg.plan_smem(p) == kg.plan_smem(kg.GroupedPlan(p.m, p.n, p.k, 16, 1, 1, 0, 1, "bfloat16", "bfloat16",
                                                          p.config, 1)) + kg.EDIT_SMEM
    for a2, b2, match in [(_T((4096, 1000), (1000, 1)), _T((1000, 256), (256, 1)), "M-major"),
                          (a, _T((65536, 2048), (1, 65536)), "contiguous rows"),
                          (_T((100, 64), (1, 100)), _T((64, 256), (256, 1)), "16 bytes"),
                          (a, _T((4096, 2048), (2048, 1)), "do not compose"),
                          (a, _T((65536, 2048), (2048, 1), dtype=torch.float16), "both float16")]:
        with pytest.raises(GemmError, match=match):
            kg.plan_grouped_k(a2, b2, 4)
    with pytest.raises(GemmError, match="single CTAs"):
        kg.plan_grouped_k(a, b, 16, config="n256_s4_c2")


def test_grouped_kernel_along_k_compiles_with_transposed_a():
    """The kernel along K: wgmma with both operands MN-major (HGMMA ... tnspA.tnspB), rank-2 TMA loads; local memory
    only in the producer (its map-slot counters), none among the consumers' wgmmas."""
    pytest.importorskip("cuda.bindings.nvrtc")
    from tmakit import cuda as tkc
    from tmakit.cuda import sass
    from tmakit.kernels import KERNELS_DIR

    names = []
    for cfg in ("n256_s4_c1", "n128_s6_c1", "m64_n128_s8_c1_ov1"):
        for od in ("bfloat16", "float32"):
            c = kg.deferred(CONFIGS[cfg], od)
            names.append(kg.kernel_name(kg.GroupedPlan(8, 8, 8, 1, 8, 8, 0, 8, "bfloat16", od, c, 1, k_grouped=1)))
    c = tkc.compile_file(KERNELS_DIR / "gemm_grouped.cu", name_expressions=names)
    try:
        text = sass.disassemble(c.cubin)
    except tkc.RuntimeUnavailable:
        pytest.skip("no nvdisasm/cuobjdump")
    for fn in text.split("\t.section\t.text.")[1:]:
        lines = fn.splitlines()
        hg = [i for i, ln in enumerate(lines) if "HGMMA" in ln]
        assert hg and all(".tnspA.tnspB" in lines[i] for i in hg), fn.split(",")[0]
        assert "UTMALDG.2D" in fn and "UTMALDG.3D" not in fn
        local = [i for i, ln in enumerate(lines) if "LDL" in ln or "STL" in ln]
        assert not any(hg[0] < i < hg[-1] for i in local), fn.split(",")[0]


def _along_k_case(rng, g, m, n, k, dtype, ends=None):
    """a = x.t() (M-major), b row-major, offs over K (empty groups, unaligned ends, tokens past the last end)."""
    x = torch.randn(k, m, device="cuda", dtype=dtype)
    b = torch.randn(k, n, device="cuda", dtype=dtype)
    if ends is None:
        cuts = sorted(rng.randint(0, k) for _ in range(g))
        ends = cuts if rng.random() < 0.7 else cuts[:-1] + [k]
    offs = torch.tensor(ends, dtype=torch.int32, device="cuda")
    return x.t(), b, offs, ends


def _along_k_reference(a, b, ends):
    ref, lo = [], 0
    for hi in ends:
        hi = max(hi, lo)
        ref.append(a[:, lo:hi].float() @ b[lo:hi].float())
        lo = hi
    return torch.stack(ref)


@pytest.mark.gpu
@pytest.mark.parametrize("seed", range(3))
def test_along_k_matches_fp32(seed):
    """Weight gradients: 2-D x 2-D grouped along K on the kernel, 60 random problems per seed (1-33 groups, empty
    groups, group ends not a multiple of the 64-row slab or of 8, M and N multiples of 8, bf16 / fp16, fp32 out),
    poisoned outputs: each group's product of its own rows only (the next group's rows load as zeros)."""
    rng = random.Random(200 + seed)
    for i in range(60):
        g, m, n = rng.choice([1, 2, 4, 8, 16, 33]), 8 * rng.randint(1, 64), 8 * rng.randint(1, 64)
        k = rng.choice([1, 63, 64, 200, 1000, 4000])
        dtype = rng.choice([torch.bfloat16, torch.float16])
        od = torch.float32 if rng.random() < 0.2 else dtype
        a, b, offs, ends = _along_k_case(rng, g, m, n, k, dtype)
        out = torch.full((g, m, n), float("nan"), device="cuda", dtype=od)
        got = tk.ops.grouped_mm(a, b, offs, out=out)
        where = f"case {i}: G={g} M={m} N={n} K={k} {dtype} ends={ends[:8]}: {tk.ops.last_path}"
        assert got is out and tk.ops.last_path == "tma:grouped-k", where
        ref = _along_k_reference(a, b, ends)
        assert not out.isnan().any(), where
        err = float((out.float() - ref).norm() / ref.norm().clamp_min(1e-30))
        assert err < 1e-2 or ref.norm() == 0, where + f" err {err:.2e}"
        if ref.norm() == 0:
            assert not out.any(), where
        again = tk.ops.grouped_mm(a, b, offs, out_dtype=od)  # a new output, then the cached path
        assert torch.equal(again, out) and torch.equal(tk.ops.grouped_mm(a, b, offs, out_dtype=od), out), where


@pytest.mark.gpu
def test_along_k_in_a_cuda_graph_reads_new_offsets_and_other_layouts_run_torch():
    rng = random.Random(7)
    a, b, offs, _ = _along_k_case(rng, 4, 256, 192, 1000, torch.bfloat16, [100, 300, 300, 1000])
    out = torch.empty(4, 256, 192, device="cuda", dtype=torch.bfloat16)
    tk.ops.grouped_mm(a, b, offs, out=out)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        tk.ops.grouped_mm(a, b, offs, out=out)
    ends = [0, 517, 900, 900]
    offs.copy_(torch.tensor(ends, dtype=torch.int32))
    out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    ref = _along_k_reference(a, b, ends)
    assert float((out.float() - ref).norm() / ref.norm()) < 1e-2 and not out[0].any() and not out[3].any()
    row_major_a = a.contiguous()  # K-major a: torch's op, and last_path says why
    got = tk.ops.grouped_mm(row_major_a, b, offs)
    assert tk.ops.last_path.startswith("torch:") and "M-major" in tk.ops.last_path
    assert float((got.float() - ref).norm() / ref.norm()) < 1e-2
    with pytest.raises(GemmError, match="strict=True"):
        tk.ops.grouped_mm(row_major_a, b, offs, strict=True)


@pytest.mark.gpu
@pytest.mark.parametrize("form", ["rows", "k", "n", "batch"])
def test_autograd_on_the_gpu_matches_the_reference(form):
    """The same on the GPU, where the forward and most gradients run the kernel (an MoE layer: forward rows
    grouped, dA rows grouped, dB along K); each gradient has its input's strides (no transposing copy when autograd
    accumulates it); gradients past the last offset are zero, not uninitialised memory."""
    a, b, offs = _grad_case(form, "cuda")
    a1, b1 = a.detach().requires_grad_(), b.detach().requires_grad_()
    out = tk.ops.grouped_mm(a1, b1, offs)
    gout = torch.randn(out.shape, device="cuda", generator=torch.Generator(device="cuda").manual_seed(5))
    out.backward(gout.to(out.dtype))
    a2, b2 = a.detach().float().requires_grad_(), b.detach().float().requires_grad_()
    _grouped_reference(a2, b2, offs).backward(gout.to(out.dtype).float())
    for x, got, want in ((a, a1.grad, a2.grad), (b, b1.grad, b2.grad)):
        assert got.shape == want.shape and got.stride() == x.stride() and not got.isnan().any()
        assert float((got.float() - want).norm() / want.norm()) < 1e-2


@pytest.mark.gpu
def test_zero_rows_past_a_device_side_end():
    """kernels.zero_tail: rows [offs[last], rows) zeroed in place, the end clamped to [0, rows], rows before it
    untouched; 16-byte rows by vectors, odd widths and pitched views byte by byte."""
    from tmakit.kernels.zero_tail import zero_rows_past_end

    for rows, cols, pitch, dtype, end in [(100, 64, 64, torch.bfloat16, 37), (100, 64, 64, torch.bfloat16, 0),
                                          (100, 64, 64, torch.bfloat16, 500), (33, 7, 9, torch.float16, 31),
                                          (1000, 24, 40, torch.float32, -5), (64, 8, 8, torch.bfloat16, 64),
                                          (1, 8, 8, torch.bfloat16, 0), (97, 16, 16, torch.float16, 96)]:
        base = torch.randn(rows, pitch, device="cuda").to(dtype)
        t, keep = base[:, :cols], base.clone()
        offs = torch.tensor([3, end], dtype=torch.int32, device="cuda")
        zero_rows_past_end(t.data_ptr(), pitch * t.element_size(), rows, cols * t.element_size(), offs.data_ptr(), 1)
        e = max(0, min(end, rows))
        assert torch.equal(base[:e], keep[:e]) and not t[e:].any() and torch.equal(base[e:, cols:], keep[e:, cols:])


@pytest.mark.gpu
def test_offsets_are_clamped_on_the_device_and_checked_on_request():
    a = torch.randn(100, 64, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(3, 64, 32, device="cuda", dtype=torch.bfloat16)
    bad = torch.tensor([50, 20, 400], dtype=torch.int32, device="cuda")  # decreasing, past M
    out = torch.zeros(100, 32, device="cuda", dtype=torch.bfloat16)
    tk.ops.grouped_mm(a, b, bad, out=out)  # memory-safe: groups [0, 50), [50, 50), [50, 100)
    ref = torch.cat([a[:50].float() @ b[0].float(), a[50:].float() @ b[2].float()])
    assert float((out.float() - ref).norm() / ref.norm()) < 1e-2
    with pytest.raises(ValueError, match="non-decreasing"):
        tk.ops.grouped_mm(a, b, bad, check_offs=True)
    with pytest.raises(ValueError, match="past the end"):
        tk.ops.grouped_mm(a, b, torch.tensor([10, 20, 101], dtype=torch.int32, device="cuda"), check_offs=True)
    with pytest.raises(ValueError, match="int32"):
        tk.ops.grouped_mm(a, b, bad.long())


@pytest.mark.gpu
def test_grouped_mm_in_a_cuda_graph_reads_new_offsets():
    a = torch.randn(512, 128, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4, 128, 64, device="cuda", dtype=torch.bfloat16)
    offs = torch.tensor([100, 200, 300, 512], dtype=torch.int32, device="cuda")
    out = torch.empty(512, 64, device="cuda", dtype=torch.bfloat16)
    tk.ops.grouped_mm(a, b, offs, out=out)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        tk.ops.grouped_mm(a, b, offs, out=out)
    offs.copy_(torch.tensor([0, 256, 256, 512], dtype=torch.int32))
    out.fill_(float("nan"))
    g.replay()
    torch.cuda.synchronize()
    ref = torch.cat([a[:256].float() @ b[1].float(), a[256:].float() @ b[3].float()])
    assert float((out.float() - ref).norm() / ref.norm()) < 1e-2


def test_torch_compile_keeps_grouped_mm_as_one_custom_op():
    """CPU tensors: the custom op runs the torch path inside the compiled graph, without a graph break."""
    a = torch.randn(12, 32, dtype=torch.bfloat16)
    b = torch.randn(3, 32, 16, dtype=torch.bfloat16)
    offs = torch.tensor([4, 4, 12], dtype=torch.int32)

    def f(a, b, offs):
        return tk.ops.grouped_mm(a, b, offs) * 2

    got = torch.compile(f, fullgraph=True, backend="eager")(a, b, offs)
    want = f(a, b, offs)
    assert torch.equal(got[:12], want[:12])
    with torch.no_grad():
        explain = torch._dynamo.explain(f)(a, b, offs)
    assert explain.graph_break_count == 0


@pytest.mark.parametrize("kind", ["grouped", "ptr_array"])
def test_grouped_kernels_compile_with_hgmma_tma_and_no_spills(kind):
    """Every single-CTA config of the grouped (MoE) and ptr-array kernels (the MoE kernel's also with the deferred
    epilogue where the plan takes it): wgmma (HGMMA) fed by TMA loads (UTMALDG; the MoE kernel's B is rank 3),
    accumulators in registers (no LDL/STL in the MMA loop); the ptr-array kernel stores C without TMA."""
    pytest.importorskip("cuda.bindings.nvrtc")
    from tmakit import cuda as tkc
    from tmakit.cuda import sass
    from tmakit.kernels import KERNELS_DIR
    from tmakit.kernels import gemm as gk
    from tmakit.kernels import gemm_ptr_array as kp

    cfgs = [c for c in gk.CONFIGS.values() if c.cluster_size == 1 and not c.defer]
    names = []
    for c in cfgs:
        for i in ("bfloat16", "float16"):
            for o in ("bfloat16", "float32"):
                for bmn in (0, 1):
                    if kind == "grouped":
                        names.append(kg.kernel_name(kg.GroupedPlan(1, 8, 8, 1, 8, 8, 8, 8, i, o, c, bmn)))
                        d = kg.deferred(c, o)  # 16-bit outputs of 128x192 / 128x256 tiles: deferred epilogue
                        if d.defer:
                            names.append(kg.kernel_name(kg.GroupedPlan(1, 8, 8, 1, 8, 8, 8, 8, i, o, d, bmn)))
                    else:
                        names.append(kp.kernel_name(kp.ListPlan(1, i, o, c, bmn, 0)))
    names = list(dict.fromkeys(names))
    c = tkc.compile_file(KERNELS_DIR / f"gemm_{kind}.cu", name_expressions=names)
    try:
        ops = sass.opcodes(c.cubin)
    except tkc.RuntimeUnavailable:
        pytest.skip("no nvdisasm/cuobjdump")
    assert ops["HGMMA"] > 0 and ops["UTMALDG"] > 0, ops
    text = sass.disassemble(c.cubin)
    if kind == "grouped":
        assert ops["LDL"] == 0 and ops["STL"] == 0, (ops["LDL"], ops["STL"])
        assert "UTMALDG.3D" in text and ops["UTMASTG"] > 0
        return
    assert ops["UTMASTG"] == 0
    # the producer's two map-slot counters (last_it[2], indexed by the slot) live in local memory: three accesses per
    # kernel, on map switches only, none between the consumers' first and last wgmma
    for fn in text.split("\t.section\t.text.")[1:]:
        lines = fn.splitlines()
        hg = [i for i, ln in enumerate(lines) if "HGMMA" in ln]
        local = [i for i, ln in enumerate(lines) if "LDL" in ln or "STL" in ln]
        assert len(local) <= 3 and not any(hg[0] < i < hg[-1] for i in local), fn.split(",")[0]


@pytest.mark.gpu
def test_repeated_calls_take_the_cached_path():
    """A grouped call made again (bf16 and fp8) runs from the cache (one dictionary lookup, the memoised launch): the
    same path and result, into ``out`` or a new result per call, with the offsets' contents read anew each call."""
    import importlib

    from tmakit.ops.quantize import quantize_rows

    grouped = importlib.import_module("tmakit.ops.grouped")
    scaled = importlib.import_module("tmakit.ops.scaled_grouped")
    rng = random.Random(5)
    a, b, offs, ends = _moe(rng, "cuda", 6, 500, 256, 512, torch.bfloat16, False, True)
    ref = torch.cat([a[lo:hi].float() @ b[g].float() for g, (lo, hi) in enumerate(zip([0] + ends[:-1], ends))])
    m = ends[-1]
    for _ in range(3):
        out = torch.full((a.shape[0], 256), float("nan"), device="cuda", dtype=torch.float32)
        got = tk.ops.grouped_mm(a, b, offs, out=out)
        new = tk.ops.grouped_mm(a, b, offs, out_dtype=torch.float32)
        assert got is out and new.data_ptr() != out.data_ptr() and tk.ops.last_path == "tma:grouped"
        for r in (got, new):
            assert float((r[:m] - ref).norm() / ref.norm()) < 1e-3
    assert any(k[3] == a.data_ptr() for k in grouped._fast)
    offs.copy_(torch.tensor([0] * 5 + [m], dtype=torch.int32))  # new contents, same tensor: one group of all rows
    got = tk.ops.grouped_mm(a, b, offs, out_dtype=torch.float32)
    assert float((got[:m] - a[:m].float() @ b[5].float()).norm() / got[:m].norm()) < 1e-3
    qa, sa = quantize_rows(a.float())
    qs = [quantize_rows(b[g].t().float()) for g in range(6)]
    qb = torch.stack([q for q, _ in qs]).transpose(-2, -1)
    sb = torch.stack([s[:, 0] for _, s in qs]).contiguous()
    sa = sa[:, 0].contiguous()
    want = scaled.scaled_grouped_mm_reference(qa, qb, sa, sb, offs, torch.float32)
    for _ in range(3):
        got = tk.ops.scaled_grouped_mm(qa, qb, sa, sb, offs, out_dtype=torch.float32)
        assert tk.ops.last_path == "tma:scaled_grouped:row"
        assert float((got[:m] - want[:m]).norm() / want[:m].norm()) < 1e-3
    assert any(k[3] == qa.data_ptr() for k in scaled._fast)


@pytest.mark.gpu
def test_calls_naming_a_config_are_cached_per_config():
    """A call that names its config takes the cached path too, keyed on the config: the same tensors under two
    configs (and none) hold three entries, each call's result right, also when the calls alternate."""
    import importlib

    from tmakit.ops.quantize import quantize_rows

    grouped = importlib.import_module("tmakit.ops.grouped")
    scaled = importlib.import_module("tmakit.ops.scaled_grouped")
    rng = random.Random(6)
    a, b, offs, ends = _moe(rng, "cuda", 5, 300, 200, 256, torch.bfloat16, False, True)
    m = ends[-1]
    ref = torch.cat([a[lo:hi].float() @ b[g].float() for g, (lo, hi) in enumerate(zip([0] + ends[:-1], ends))])
    configs = (None, "m64_n64_s12_c1_ov1", "n128_s6_c1")
    for _ in range(3):
        for c in configs:
            out = torch.full((a.shape[0], 200), float("nan"), device="cuda", dtype=torch.bfloat16)
            tk.ops.grouped_mm(a, b, offs, out=out, config=c)
            assert tk.ops.last_path == "tma:grouped" and float((out[:m].float() - ref).norm() / ref.norm()) < 1e-2
    assert {k[-1] for k in grouped._fast if k[3] == a.data_ptr()} >= set(configs)
    qa, sa = quantize_rows(a.float())
    qs = [quantize_rows(b[g].t().float()) for g in range(5)]
    qb = torch.stack([q for q, _ in qs]).transpose(-2, -1)
    sb, sa = torch.stack([s[:, 0] for _, s in qs]).contiguous(), sa[:, 0].contiguous()
    want = scaled.scaled_grouped_mm_reference(qa, qb, sa, sb, offs, torch.float32)
    fp8 = (None, "m64_n64_s12_c1", "n128_s6_c1")
    for _ in range(3):
        for c in fp8:
            got = tk.ops.scaled_grouped_mm(qa, qb, sa, sb, offs, out_dtype=torch.float32, config=c)
            assert float((got[:m] - want[:m]).norm() / want[:m].norm()) < 1e-3
    assert {k[-1] for k in scaled._fast if k[3] == qa.data_ptr()} >= set(fp8)
