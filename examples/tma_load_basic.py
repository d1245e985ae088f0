"""TMA load on the emulator: a row-major [6,8] tensor in [2,4] tiles, one tile per CTA (the first example of the
"Using TMA Load, Prefetch, and Multicast Load in CuTe" tutorial).

CTA (1,1) loads the tile at rows 2-3, columns 4-7. Run: ``python examples/tma_load_basic.py``.
"""

import numpy as np

import tmakit as tk
from tmakit import emu

CTA_N, CTA_K = 2, 4


def cute_tma_load_kernel(tma_load, gmem_tensor, smem_layout, log):
    tma_transaction_bytes = CTA_N * CTA_K * 4
    # 1. allocate smem for the tile and the memory barrier
    smem_tensor = emu.shared_tensor(smem_layout, np.float32)
    tma_load_mbar = emu.shared_barrier()
    # 3. (one elected thread drives TMA) 4. initialize the barrier
    emu.initialize_barrier(tma_load_mbar, 1)
    emu.set_barrier_transaction_bytes(tma_load_mbar, tma_transaction_bytes)
    # 5. the coordinates of this CTA's tile in the gmem tensor
    b = emu.block_idx()
    gmem_tensor_coord = tma_load.get_tma_tensor(gmem_tensor.shape)
    gmem_tensor_coord_cta = tk.local_tile(gmem_tensor_coord, (tk.Int(CTA_N), tk.Int(CTA_K)), (b.x, b.y))
    # 6. this CTA's slice of the TMA work  7. issue the TMA load
    tma_load_per_cta = tma_load.get_slice(0)
    emu.copy(tma_load.with_(tma_load_mbar),
             tma_load_per_cta.partition_S(gmem_tensor_coord_cta),
             tma_load_per_cta.partition_D(smem_tensor))
    # 8. wait for TMA to finish
    emu.syncthreads()
    emu.wait_barrier(tma_load_mbar, 0)
    # 9. the tile is in shared memory
    log.append(f"block: ({b.x}, {b.y}), value: {float(smem_tensor[(0, 0)]):f}, {float(smem_tensor[(0, 1)]):f}")


def cute_host_load(data, N, K):  # noqa: N803 - the tutorial's names
    gmem_tensor = tk.make_tensor(data, tk.make_layout((N, K), (K, 1)))
    smem_layout = tk.make_layout((tk.Int(CTA_N), tk.Int(CTA_K)), (tk.Int(CTA_K), tk.Int(1)))
    tma_load = tk.make_tma_copy(tk.SM90_TMA_LOAD, gmem_tensor, smem_layout)
    log = []
    emu.launch(cute_tma_load_kernel, (N // CTA_N, K // CTA_K, 1), tma_load, gmem_tensor, smem_layout, log)
    return log


def main():
    N, K = 6, 8  # noqa: N806
    data = np.arange(N * K, dtype=np.float32).reshape(N, K)
    print("\n".join(cute_host_load(data, N, K)))


if __name__ == "__main__":
    main()
