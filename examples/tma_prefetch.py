"""TMA prefetch on the emulator: the tiles of tma_load_basic.py, prefetched to L2 (no shared memory, no mbarrier),
as in the "Using TMA Load, Prefetch, and Multicast Load in CuTe" tutorial.

The emulator validates each prefetch like a load and counts it; it has no effect on memory.
Run: ``python examples/tma_prefetch.py``.
"""

import numpy as np

import tmakit as tk
from tmakit import emu

CTA_N, CTA_K = 2, 4


def cute_tma_prefetch_kernel(tma_load, gmem_tensor, smem_layout, log):
    b = emu.block_idx()
    gmem_tensor_coord = tma_load.get_tma_tensor(gmem_tensor.shape)
    gmem_tensor_coord_cta = tk.local_tile(gmem_tensor_coord, (tk.Int(CTA_N), tk.Int(CTA_K)), (b.x, b.y))
    tma_load_per_cta = tma_load.get_slice(0)
    src = tma_load_per_cta.partition_S(gmem_tensor_coord_cta)
    emu.prefetch(tma_load, src)
    emu.syncthreads()
    log.append(f"block: ({b.x}, {b.y}), prefetched the box at TMA coordinates {emu.tma_coords(src)}")


def cute_host_prefetch(data, N, K):  # noqa: N803 - the tutorial's names
    gmem_tensor = tk.make_tensor(data, tk.make_layout((N, K), (K, 1)))
    smem_layout = tk.make_layout((tk.Int(CTA_N), tk.Int(CTA_K)), (tk.Int(CTA_K), tk.Int(1)))
    tma_load = tk.make_tma_copy(tk.SM90_TMA_LOAD, gmem_tensor, smem_layout)
    log = []
    stats = emu.launch(cute_tma_prefetch_kernel, (N // CTA_N, K // CTA_K, 1), tma_load, gmem_tensor, smem_layout,
                       log)
    return log, stats


def main():
    N, K = 6, 8  # noqa: N806
    log, stats = cute_host_prefetch(np.arange(N * K, dtype=np.float32).reshape(N, K), N, K)
    print("\n".join(log))
    print(f"TMA instructions: {stats}")


if __name__ == "__main__":
    main()
