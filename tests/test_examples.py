"""The walkthroughs under examples/ run on the emulator and print what the tutorials they follow print."""

import importlib.util
import pathlib

import numpy as np
import pytest

import tmakit as tk

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def example(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_tma_load_basic_6x8_in_2x4_tiles():
    mod = example("tma_load_basic")
    log = mod.cute_host_load(np.arange(48, dtype=np.float32).reshape(6, 8), 6, 8)
    assert "block: (1, 1), value: 20.000000, 21.000000" in log  # CTA (1,1) gets the tile at (2,4)
    assert len(log) == 6
    for line in log:
        bx, by = (int(v) for v in line[len("block: ("):line.index(")")].split(", "))
        assert f"value: {16 * bx + 4 * by:f}, {16 * bx + 4 * by + 1:f}" in line


def test_tma_prefetch():
    log, stats = example("tma_prefetch").cute_host_prefetch(np.zeros((6, 8), np.float32), 6, 8)
    assert stats == {"prefetch": 6}
    assert "block: (1, 1), prefetched the box at TMA coordinates (4, 2)" in log


@pytest.mark.parametrize("n,k,cta_n,cta_k,cluster", [(6, 64, 2, 32, (1, 2)), (8, 64, 4, 32, (2, 2))])
def test_tma_multicast_rows(n, k, cta_n, cta_k, cluster):
    mod = example("tma_multicast_rows")
    data = np.arange(n * k, dtype=np.float32).reshape(n, k)
    log = mod.cute_host_multicast(data, n, k, cta_n, cta_k, *cluster)
    grid = (n // cta_n * cluster[0], k // cta_k * cluster[1])
    assert len(log) == grid[0] * grid[1]
    ranks = set()
    for line in log:
        bx, by = (int(v) for v in line[len("block: ("):line.index(")")].split(", "))
        cx, cy = bx // cluster[0], by // cluster[1]
        tile = data[cx * cta_n:(cx + 1) * cta_n, cy * cta_k:(cy + 1) * cta_k]
        assert f"smem rows start with {tile[:, 0].astype(int).tolist()}" in line  # every CTA gets the whole tile
        rank = int(line.split("cluster rank ")[1].split()[0])
        assert rank == (bx % cluster[0]) + (by % cluster[1]) * cluster[0]
        row = cx * cta_n + rank * cta_n // (cluster[0] * cluster[1])
        assert f"the box at ({cy * cta_k}, {row})" in line  # rank r multicasts row r of the tile (§5.4)
        ranks.add(rank)
    assert ranks == set(range(cluster[0] * cluster[1]))


def test_tma_multicast_rows_exact_toy_tiles_are_misaligned():
    """[2,4] fp32 tiles put CTA 1's row 16 bytes into the tile: the H200 fails with 716, the emulator refuses."""
    mod = example("tma_multicast_rows")
    with pytest.raises(tk.emu.IllegalInstruction, match="0x10 is not 128-byte aligned.*716"):
        mod.cute_host_multicast(np.arange(48, dtype=np.float32).reshape(6, 8), 6, 8, 2, 4, 1, 2)


def test_tma_load_tiles_prints_coordinates():
    mod = example("tma_load_tiles")
    data = np.random.default_rng(1).standard_normal((128, 128)).astype(np.float32)
    out, log = mod.host_fn(data)
    assert np.array_equal(out, data)
    assert log[0] == "ArithTuple(_0,_0) o (128,128):(_1@1,_1@0)"
    lines = log[1].splitlines()
    assert lines[0] == "ArithTuple(0,112) o (_16,_16):(_1@1,_1@0):"
    assert lines[1].split() == [f"({i},112)" for i in range(16)]
    assert lines[16].split() == [f"({i},127)" for i in range(16)]


def test_tma_store_and_reduce():
    mod = example("tma_store")
    rows = (np.arange(64) % 32)[:, None]
    g = np.full((64, 96), -1.0, np.float32)
    assert mod.host_fn(g) == {"store": 6}
    assert (g == rows).all()
    g = np.full((64, 96), 100.0, np.float32)
    mod.host_fn(g, tk.SM90_TMA_REDUCE_ADD)
    mod.host_fn(g, tk.SM90_TMA_REDUCE_ADD)
    assert (g == 100 + 2 * rows).all()


@pytest.mark.parametrize("slices", [(0, 0), (1, 1), (0, 1), (1, 0)])
def test_tma_multicast_slices(slices):
    tiles = example("tma_multicast_slices").run(slices)
    full = np.arange(256, dtype=np.int32).reshape(16, 16)
    expect = full.copy()
    if slices == (0, 0):
        expect[8:] = 0  # rows 0-7 filled, 8-15 zero, in both CTAs
    elif slices == (1, 1):
        expect[:8] = 0
    for t in tiles:
        assert np.array_equal(t, expect)


def test_tma_multicast_slices_prints_the_tiled_copy():
    mod = example("tma_multicast_slices")
    text = str(mod.make_copy(np.zeros((16, 16), np.int32))[0])
    assert "TiledLayout_TV: (_2,(((_16,_16),_1))):(_8,(((_16,_1),_0)))" in text
    assert mod.table(np.arange(256).reshape(16, 16)).splitlines()[8].startswith("128  129  130")
