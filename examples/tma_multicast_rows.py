"""TMA multicast load on the emulator. A 1x2 cluster shares one tile of 2 rows (each CTA issues one row, both CTAs
receive both), and a 2x2 cluster shares a tile of 4 rows (each of the 4 CTAs issues one row).

The tutorial draws [2,4] and [4,4] fp32 tiles: CTA 1's row would land 16 bytes into the tile, and tensor copies need
128-byte aligned shared memory (an H200 fails that launch with CUDA_ERROR_MISALIGNED_ADDRESS, 716; the emulator
refuses it too). So the rows here are 32 floats (128 bytes) wide; everything else is the tutorial's program.
Run: ``python examples/tma_multicast_rows.py``.
"""

import numpy as np

import tmakit as tk
from tmakit import emu


def cute_tma_multicast_kernel(tma_load, gmem_tensor, smem_layout, cta_n, cta_k, log):
    tma_transaction_bytes = cta_n * cta_k * 4
    smem_tensor = emu.shared_tensor(smem_layout, np.float32)
    tma_load_mbar = emu.shared_barrier()
    emu.initialize_barrier(tma_load_mbar, 1)
    emu.set_barrier_transaction_bytes(tma_load_mbar, tma_transaction_bytes)
    # 5. make every barrier init of the cluster visible before anyone multicasts
    emu.syncthreads()
    emu.cluster_sync()
    emu.fence_barrier_init()
    # 6. the cluster's tile  7. cluster metadata  8. this CTA's slice  9. multicast
    cluster_idx = emu.cluster_id_in_grid()
    gmem_tensor_coord = tma_load.get_tma_tensor(gmem_tensor.shape)
    gmem_tensor_coord_cluster = tk.local_tile(gmem_tensor_coord, (tk.Int(cta_n), tk.Int(cta_k)),
                                              (cluster_idx.x, cluster_idx.y))
    rank = emu.block_rank_in_cluster()
    cdim = emu.cluster_shape()
    tma_mcast_mask = (1 << (cdim.x * cdim.y * cdim.z)) - 1
    tma_load_per_cta = tma_load.get_slice(rank)
    src = tma_load_per_cta.partition_S(gmem_tensor_coord_cluster)
    emu.copy(tma_load.with_(tma_load_mbar, tma_mcast_mask), src, tma_load_per_cta.partition_D(smem_tensor))
    # 10. wait for the whole tile (both halves signal this CTA's barrier)
    emu.syncthreads()
    emu.wait_barrier(tma_load_mbar, 0)
    b = emu.block_idx()
    tile = smem_tensor.iterator.view((cta_n, cta_k))
    log.append(f"block: ({b.x}, {b.y}), value: {float(smem_tensor[(0, 0)]):f}, {float(smem_tensor[(0, 1)]):f}"
               f"   [cluster rank {rank} multicast the box at {emu.tma_coords(src)}; "
               f"smem rows start with {tile[:, 0].astype(int).tolist()}]")
    emu.cluster_sync()  # no CTA exits while peers may still write its shared memory


def cute_host_multicast(data, N, K, cta_n, cta_k, cluster_n, cluster_k):  # noqa: N803 - the tutorial's names
    gmem_tensor = tk.make_tensor(data, tk.make_layout((N, K), (K, 1)))
    smem_layout = tk.make_layout((tk.Int(cta_n), tk.Int(cta_k)), (tk.Int(cta_k), tk.Int(1)))
    tma_load = tk.make_tma_copy(tk.SM90_TMA_LOAD_MULTICAST, gmem_tensor, smem_layout,
                                cluster_size=tk.Int(cluster_n * cluster_k))
    grid = (N // cta_n * cluster_n, K // cta_k * cluster_k, 1)
    log = []
    emu.launch(cute_tma_multicast_kernel, grid, (cluster_n, cluster_k, 1), tma_load, gmem_tensor, smem_layout,
               cta_n, cta_k, log)
    return log


def main():
    data = np.arange(6 * 64, dtype=np.float32).reshape(6, 64)
    print("1x2 cluster, [6,64] tensor, [2,32] tiles, grid (3,4):")
    print("\n".join(cute_host_multicast(data, 6, 64, 2, 32, 1, 2)))
    data = np.arange(8 * 64, dtype=np.float32).reshape(8, 64)
    print("\n2x2 cluster (the tutorial's last example), [8,64] tensor, [4,32] tiles, grid (4,4):")
    print("\n".join(cute_host_multicast(data, 8, 64, 4, 32, 2, 2)))
    try:
        cute_host_multicast(np.arange(48, dtype=np.float32).reshape(6, 8), 6, 8, 2, 4, 1, 2)
    except emu.IllegalInstruction as e:
        print(f"\nThe tutorial's exact [2,4] tiles: {e}")


if __name__ == "__main__":
    main()
