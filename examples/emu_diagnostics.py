"""What the emulator says about broken TMA programs: a wrong expect_tx count, a missing cluster_sync before
multicast, a wrong parity, a missing proxy fence, an early exit. Run: ``python examples/emu_diagnostics.py``."""

import numpy as np

from tmakit import emu
from tmakit.tma.tensormap import DataType, TensorMap

A = emu.alloc((16, 16), np.float32)
HALF = TensorMap(DataType.FLOAT32, (16, 16), (64,), (16, 8), global_address=A.ctypes.data)  # 512-byte boxes


def wrong_expect_tx():
    s, bar = emu.shared_array((8, 16)), emu.shared_barrier()
    emu.initialize_barrier(bar, 1)
    emu.set_barrier_transaction_bytes(bar, 1024)  # one box is 512 bytes
    emu.tma_load(HALF, (0, 0), s, bar)
    emu.wait_barrier(bar, 0)


def multicast_without_cluster_sync():
    s, bar = emu.shared_array((16, 16)), emu.shared_barrier()
    emu.initialize_barrier(bar, 1)
    emu.set_barrier_transaction_bytes(bar, 1024)
    r = emu.block_rank_in_cluster()  # missing: fence_barrier_init(); cluster_sync()
    emu.tma_load(HALF, (0, 8 * r), s[8 * r:], bar, mask=0b11)
    emu.wait_barrier(bar, 0)


def wrong_parity():
    s, bar = emu.shared_array((8, 16)), emu.shared_barrier()
    emu.initialize_barrier(bar, 1)
    emu.set_barrier_transaction_bytes(bar, 512)
    emu.tma_load(HALF, (0, 0), s, bar)
    emu.wait_barrier(bar, 0)
    emu.wait_barrier(bar, 1)  # waits for phase 1, which nothing will complete


def parity_of_the_previous_phase():
    s, bar = emu.shared_array((8, 16)), emu.shared_barrier()
    emu.initialize_barrier(bar, 1)
    emu.set_barrier_transaction_bytes(bar, 512)
    emu.tma_load(HALF, (0, 0), s, bar)
    emu.wait_barrier(bar, 1)  # a fresh barrier's "previous" phase has parity 1: returns at once


def store_without_fence():
    s = emu.shared_array((8, 16))
    s[:] = 1.0  # generic-proxy writes ...
    emu.tma_store(HALF, (0, 0), s)  # ... read by the async proxy without tma_store_fence()
    emu.tma_store_arrive()
    emu.tma_store_wait(0)


def exit_with_store_pending():
    s = emu.shared_array((8, 16))
    emu.tma_store_fence()
    emu.tma_store(HALF, (0, 8), s)  # no tma_store_arrive() / tma_store_wait(0)


def main():
    for kernel, grid, cluster in [(wrong_expect_tx, 1, 1), (multicast_without_cluster_sync, 2, 2),
                                  (wrong_parity, 1, 1), (parity_of_the_previous_phase, 1, 1),
                                  (store_without_fence, 1, 1), (exit_with_store_pending, 1, 1)]:
        print(f"--- {kernel.__name__}")
        try:
            emu.launch(kernel, (grid,), (cluster,))
            print("ran cleanly")
        except emu.EmuError as e:
            print(f"{type(e).__name__}: {e}\n")


if __name__ == "__main__":
    main()
