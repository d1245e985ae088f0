"""tk.viz pictures: every kind renders to PNG and SVG of non-trivial size; demo --figures writes them."""

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import tmakit as tk  # noqa: E402
from tmakit import viz  # noqa: E402
from tmakit.cli import main  # noqa: E402

I = tk.Int


def _check(fig, tmp_path, name, min_png=8_000):
    png = viz.save(fig, tmp_path / f"{name}.png")
    assert png.stat().st_size > min_png
    return png


def test_tile_ownership(tmp_path):
    data = np.arange(48).reshape(6, 8)
    _check(viz.tile_ownership((6, 8), (2, 4), highlight=(1, 1), values=data), tmp_path, "tiles")


@pytest.mark.parametrize("tile,cs", [((2, 32), 2), ((4, 32), 4), ((16, 16), 2), ((2, 4), 2)])
def test_multicast_split(tmp_path, tile, cs):
    _check(viz.multicast_split(tile, cs), tmp_path, f"split_{cs}")


def test_multicast_mask(tmp_path):
    cluster = tk.make_layout((I(2), I(4)), (I(1), I(2)))
    fig = viz.multicast_mask(cluster, (1, 2), (1,))
    assert "0b10101010" in fig.axes[0].get_title()
    _check(fig, tmp_path, "mask")


@pytest.mark.parametrize("span", [32, 64, 128])
def test_swizzle_chunks(tmp_path, span):
    _check(viz.swizzle_chunks(span), tmp_path, f"sw{span}")


def test_swizzle_formula_matches_cute_swizzle():
    a = np.arange(4096)
    for span, b in ((32, 1), (64, 2), (128, 3)):
        sw = tk.Swizzle(b, 4, 3)
        assert all(int(viz.swizzle_phys(x, span)) == int(sw(int(x))) for x in a[::7])
    # 128B: chunk c of line r lands at c ^ (r % 8)
    assert int(viz.swizzle_phys(3 * 128 + 1 * 16, 128)) == 3 * 128 + (1 ^ 3) * 16


def test_layout_grid(tmp_path):
    _check(viz.layout_grid(tk.make_layout((I(2), I(4)), tk.LayoutRight)), tmp_path, "layout", min_png=4_000)
    sw = tk.composition(tk.Swizzle(3, 3, 3), tk.make_layout((I(8), I(64)), tk.LayoutRight))
    _check(viz.layout_grid(sw, period=8), tmp_path, "layout_sw")


def test_svg_output(tmp_path):
    p = viz.save(viz.swizzle_chunks(64), tmp_path / "sw.svg")
    assert p.stat().st_size > 20_000 and p.read_text().lstrip().startswith("<?xml")


def test_demo_figures(tmp_path, capsys):
    assert main(["demo", "all", "--backend", "emu", "--figures", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    names = {p.name for p in tmp_path.iterdir()}
    for stem in ("load_tile_ownership", "load_smem_layout", "multicast_1x2_split", "multicast_2x2_mask",
                 "multicast_16x16_split", "swizzle_32B", "swizzle_64B", "swizzle_128B", "layout_sw128_bf16"):
        assert f"{stem}.png" in names and f"{stem}.svg" in names, stem
        assert (tmp_path / f"{stem}.png").stat().st_size > 4_000
    assert "figure: " in out
