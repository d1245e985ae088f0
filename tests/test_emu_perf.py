"""Speed of the model: a 1024x1024 fp32 tensor loaded as all 4096 of its 16x16 tiles (generous margin, not a
benchmark)."""

import time

import numpy as np

import tmakit as tk
from tmakit import emu
from tmakit.tma.tensormap import DataType, TensorMap


def test_4096_tile_loads_one_cta_per_tile_under_2s():
    a = np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32)
    out = np.zeros_like(a)
    tm = TensorMap(DataType.FLOAT32, (1024, 1024), (4096,), (16, 16), global_address=a.ctypes.data)

    def kernel(a, out):
        s, bar = emu.shared_array((16, 16)), emu.shared_barrier()
        emu.initialize_barrier(bar, 1)
        emu.set_barrier_transaction_bytes(bar, 1024)
        b = emu.block_idx()
        emu.tma_load(tm, (16 * b.y, 16 * b.x), s, bar)
        emu.wait_barrier(bar, 0)
        out[16 * b.x:16 * b.x + 16, 16 * b.y:16 * b.y + 16] = s

    t = time.perf_counter()
    assert emu.launch(kernel, (64, 64), a, out) == {"load": 4096}
    elapsed = time.perf_counter() - t
    assert np.array_equal(out, a)
    assert elapsed < 2.0, f"{elapsed:.2f} s"


def test_4096_tile_loads_through_the_tiled_copy_under_2s():
    """One CTA walks all tiles with copy(tma.with_(bar), ...); partitions are built once, as CuTe's tma_partition."""
    a = np.random.default_rng(1).standard_normal((1024, 1024)).astype(np.float32)
    g = tk.make_tensor(a)
    sl = tk.make_layout((tk.Int(16), tk.Int(16)), tk.LayoutRight)
    tma = tk.make_tma_copy(tk.SM90_TMA_LOAD, g, sl)
    thr = tma.get_slice(0)
    src = thr.partition_S(tma.get_tma_tensor(g.shape))  # (TMA, 64, 64): one coordinate tile per TMA atom
    out = np.zeros_like(a)

    def kernel(g, out):
        smem = emu.shared_tensor(sl, np.float32)
        dst = thr.partition_D(smem)
        bar = emu.shared_barrier()
        emu.initialize_barrier(bar, 1)
        view = smem.iterator.view((16, 16))
        for i in range(64):
            for j in range(64):
                emu.set_barrier_transaction_bytes(bar, 1024)
                emu.copy(tma.with_(bar), src[(tk._, i, j)], dst)
                emu.wait_barrier(bar, (64 * i + j) & 1)
                out[16 * i:16 * i + 16, 16 * j:16 * j + 16] = view

    t = time.perf_counter()
    assert emu.launch(kernel, (1,), g, out) == {"load": 4096}
    elapsed = time.perf_counter() - t
    assert np.array_equal(out, a)
    assert elapsed < 2.0, f"{elapsed:.2f} s"
