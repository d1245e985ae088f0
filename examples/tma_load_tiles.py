"""TMA load of a matrix in tiles on the emulator: each CTA loads its [CTA_M, CTA_N] tile of a row-major [M, N]
matrix through ``make_tma_copy`` (the Colfax "Mastering the TMA" tutorial).

Prints what the tutorial prints: the coordinate tensor, and ``print_tensor`` of CTA 7's coordinate tile.
Run: ``python examples/tma_load_tiles.py [M]`` (the tutorial uses M = N = 1024; the emulator runs 4096 CTAs then).
"""

import contextlib
import io
import sys

import numpy as np

import tmakit as tk
from tmakit import emu

CTA_M = CTA_N = 16


def tma_load_kernel(tma_load, gmem_tensor, out, log):
    tma_transaction_bytes = CTA_M * CTA_N * 4
    smem_tensor = emu.shared_tensor(tk.make_layout((tk.Int(CTA_M), tk.Int(CTA_N)), tk.LayoutRight), np.float32)
    tma_load_mbar = emu.shared_barrier()
    b = emu.block_idx()
    gmem_tensor_coord = tma_load.get_tma_tensor(gmem_tensor.shape)
    gmem_tensor_coord_cta = tk.local_tile(gmem_tensor_coord, (tk.Int(CTA_M), tk.Int(CTA_N)), (b.x, b.y))
    if b.x == b.y == 0:
        log.append(str(gmem_tensor_coord))
    if (b.x, b.y) == (7, 0):  # cute::block(7)
        log.append(printed(gmem_tensor_coord_cta))
    emu.initialize_barrier(tma_load_mbar, 1)
    emu.set_barrier_transaction_bytes(tma_load_mbar, tma_transaction_bytes)
    tma_load_per_cta = tma_load.get_slice(0)
    emu.copy(tma_load.with_(tma_load_mbar),
             tma_load_per_cta.partition_S(gmem_tensor_coord_cta),
             tma_load_per_cta.partition_D(smem_tensor))
    emu.syncthreads()
    emu.wait_barrier(tma_load_mbar, 0)
    out[b.x * CTA_M:(b.x + 1) * CTA_M, b.y * CTA_N:(b.y + 1) * CTA_N] = smem_tensor.iterator.view((CTA_M, CTA_N))


def printed(t) -> str:
    """What ``tk.print_tensor(t)`` prints."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        tk.print_tensor(t)
    return buf.getvalue().rstrip("\n")


def host_fn(data):
    M, N = data.shape  # noqa: N806 - the tutorial's names
    gmem_tensor = tk.make_tensor(data, tk.make_layout((M, N), tk.LayoutRight))
    smem_layout = tk.make_layout((tk.Int(CTA_M), tk.Int(CTA_N)), tk.LayoutRight)
    tma_load = tk.make_tma_copy(tk.SM90_TMA_LOAD, gmem_tensor, smem_layout)
    out, log = np.zeros_like(data), []
    emu.launch(tma_load_kernel, (M // CTA_M, N // CTA_N, 1), tma_load, gmem_tensor, out, log)
    return out, log


def main():
    m = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    data = np.random.default_rng(0).standard_normal((m, m)).astype(np.float32)
    out, log = host_fn(data)
    print("\n".join(log))
    print(f"every CTA's shared tile equals its gmem tile: {np.array_equal(out, data)}")


if __name__ == "__main__":
    main()
