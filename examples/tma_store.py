"""TMA store and TMA store-reduce on the emulator (the Colfax "Mastering the TMA" tutorial).

Each CTA fills its [CTA_M, CTA_N] shared tile so that row i holds i (the tutorial's thread i writes row i), makes the
writes visible to TMA (``tma_store_fence``) and stores — or reduce-adds — the tile into its gmem tile. The tutorial
leaves ``tma_store_arrive``/``tma_store_wait`` commented out; the emulator reports a CTA that exits with bulk stores
pending, so they are called here. Run: ``python examples/tma_store.py``.
"""

import numpy as np

import tmakit as tk
from tmakit import emu

CTA_M = CTA_N = 32


def tma_store_kernel(tma_store, gmem_tensor):
    smem_layout = tk.make_layout((tk.Int(CTA_M), tk.Int(CTA_N)), tk.LayoutRight)
    smem_tensor = emu.shared_tensor(smem_layout, np.float32)
    for i in range(CTA_M):  # thread i: smem_tensor(i, j) = i
        for j in range(CTA_N):
            smem_tensor[(i, j)] = i
    emu.syncthreads()
    emu.tma_store_fence()
    b = emu.block_idx()
    gmem_tensor_coord = tma_store.get_tma_tensor(gmem_tensor.shape)
    gmem_tensor_coord_cta = tk.local_tile(gmem_tensor_coord, (tk.Int(CTA_M), tk.Int(CTA_N)), (b.x, b.y))
    tma_store_per_cta = tma_store.get_slice(0)
    emu.copy(tma_store,
             tma_store_per_cta.partition_S(smem_tensor),
             tma_store_per_cta.partition_D(gmem_tensor_coord_cta))
    emu.tma_store_arrive()
    emu.tma_store_wait(0)


def host_fn(data, op=tk.SM90_TMA_STORE):
    M, N = data.shape  # noqa: N806 - the tutorial's names
    gmem_tensor = tk.make_tensor(data, tk.make_layout((M, N), tk.LayoutRight))
    smem_layout = tk.make_layout((tk.Int(CTA_M), tk.Int(CTA_N)), tk.LayoutRight)
    tma = tk.make_tma_copy(op, gmem_tensor, smem_layout)
    return emu.launch(tma_store_kernel, (M // CTA_M, N // CTA_N, 1), tma, gmem_tensor)


def corner(a, rows=4, cols=6) -> str:
    return "\n".join("  ".join(f"{v:5.1f}" for v in r[:cols]) for r in a[:rows])


def main():
    M, N = 64, 96  # noqa: N806
    g = np.full((M, N), -1.0, np.float32)
    print("TMA store:", host_fn(g))
    print(f"gmem[m][n] == m % {CTA_M} everywhere: {bool((g == (np.arange(M) % CTA_M)[:, None]).all())}")
    print(corner(g[CTA_M - 2:]))
    g = np.full((M, N), 100.0, np.float32)
    print("TMA store-reduce add, twice:", host_fn(g, tk.SM90_TMA_REDUCE_ADD), host_fn(g, tk.SM90_TMA_REDUCE_ADD))
    print(f"gmem[m][n] == 100 + 2 * (m % {CTA_M}) everywhere: "
          f"{bool((g == 100 + 2 * (np.arange(M) % CTA_M)[:, None]).all())}")
    print(corner(g[CTA_M - 2:]))


if __name__ == "__main__":
    main()
