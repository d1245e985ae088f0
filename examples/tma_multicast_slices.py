"""TMA multicast through a TiledCopy on the emulator (the Colfax "Mastering the TMA" tutorial): a 16x16 tile of the
integers 0-255 multicast to both CTAs of a cluster of 2, each CTA issuing one half.

If both CTAs use ``get_slice(0)``, rows 0-7 land in both (rows 8-15 stay zero); both using ``get_slice(1)`` gives the
reverse; slices {0, 1} in either order load the whole tile. Prints the tutorial's TiledCopy and tables.
Run: ``python examples/tma_multicast_slices.py``.
"""

import numpy as np

import tmakit as tk
from tmakit import emu

CTA_M = CTA_N = 16


def tma_load_kernel(tma_load, gmem_tensor, slices, tiles):
    rank = emu.block_rank_in_cluster()
    cluster_size = emu.cluster_size()
    tma_mcast_mask = (1 << cluster_size) - 1
    tma_transaction_bytes = CTA_M * CTA_N * 4
    smem_tensor = emu.shared_tensor(tk.make_layout((tk.Int(CTA_M), tk.Int(CTA_N)), tk.LayoutRight), np.int32)
    tma_load_mbar = emu.shared_barrier()
    b = emu.block_idx()
    gmem_tensor_coord = tma_load.get_tma_tensor(gmem_tensor.shape)
    gmem_tensor_coord_cta = tk.local_tile(gmem_tensor_coord, (tk.Int(CTA_M), tk.Int(CTA_N)), (b.x, b.y))
    emu.initialize_barrier(tma_load_mbar, 1)
    emu.syncthreads()
    emu.cluster_sync()
    emu.fence_barrier_init()
    emu.set_barrier_transaction_bytes(tma_load_mbar, tma_transaction_bytes)
    tma_load_per_cta = tma_load.get_slice(slices[rank])
    emu.copy(tma_load.with_(tma_load_mbar, tma_mcast_mask),
             tma_load_per_cta.partition_S(gmem_tensor_coord_cta),
             tma_load_per_cta.partition_D(smem_tensor))
    emu.syncthreads()
    emu.wait_barrier(tma_load_mbar, 0)
    tiles[rank] = smem_tensor.iterator.view((CTA_M, CTA_N)).copy()
    emu.cluster_sync()


def make_copy(data):
    gmem_tensor = tk.make_tensor(data, tk.make_layout(data.shape, tk.LayoutRight))
    smem_layout = tk.make_layout((tk.Int(CTA_M), tk.Int(CTA_N)), tk.LayoutRight)
    return tk.make_tma_copy(tk.SM90_TMA_LOAD_MULTICAST, gmem_tensor, smem_layout, cluster_size=tk.Int(2)), gmem_tensor


def run(slices):
    """The two CTAs' shared tiles after each used ``get_slice(slices[rank])``."""
    data = np.arange(CTA_M * CTA_N, dtype=np.int32).reshape(CTA_M, CTA_N)
    tma_load, gmem_tensor = make_copy(data)
    tiles = [None, None]
    emu.launch(tma_load_kernel, (1, 1, 2), (1, 1, 2), tma_load, gmem_tensor, slices, tiles)
    return tiles


def table(tile) -> str:
    return "\n".join("  ".join(f"{v:3d}" for v in row) for row in tile)


def main():
    print(make_copy(np.zeros((CTA_M, CTA_N), np.int32))[0])
    for slices in [(0, 0), (1, 1), (0, 1), (1, 0)]:
        tiles = run(slices)
        same = np.array_equal(tiles[0], tiles[1])
        print(f"ctaid 0 uses get_slice({slices[0]}), ctaid 1 uses get_slice({slices[1]}) "
              f"-> both CTAs' smem{' (identical)' if same else ''}:")
        print(table(tiles[0]))
        print()


if __name__ == "__main__":
    main()
