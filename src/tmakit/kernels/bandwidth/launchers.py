"""What every bandwidth launcher builder shares: the kernels' parameter structs, kernel loading, device facts,
tensor-map helpers, grid sizing, and the launcher with a per-stream tile counter."""

from __future__ import annotations

import ctypes
import threading

from ...cuda.packed import Launcher, current_raw_stream, launch_slot
from ...tma.tensormap import DataType, L2Promotion, SwizzleMode, TensorMap
from ..fastdiv import FastDiv
from .config import SMEM_PER_SM, CopyConfig, TileOrder

__all__ = ["StreamParams", "TransposeParams", "BulkParams", "DynLauncher", "sm_count"]

_WORD = {8: DataType.UINT64, 4: DataType.UINT32, 2: DataType.UINT16, 1: DataType.UINT8}


class StreamParams(ctypes.Structure):
    _fields_ = [("tiles", ctypes.c_int32 * 5), ("box", ctypes.c_int32 * 5), ("rank", ctypes.c_int32),
                ("main_bytes", ctypes.c_uint32), ("tail_bytes", ctypes.c_uint32), ("stages", ctypes.c_uint32),
                ("stage_stride", ctypes.c_uint32), ("op", ctypes.c_int32), ("tail_coord", ctypes.c_int32),
                ("main_tiles", ctypes.c_int64), ("fd", FastDiv * 5)]


class TransposeParams(ctypes.Structure):
    _fields_ = [("tiles", ctypes.c_int32 * 5), ("qdim", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("stages", ctypes.c_uint32), ("kq", ctypes.c_uint32), ("group", ctypes.c_int32),
                ("ntiles", ctypes.c_int64), ("counter", ctypes.c_uint64), ("fd", FastDiv * 9)]


class BulkParams(ctypes.Structure):
    _fields_ = [("n16", ctypes.c_int64), ("main_tiles", ctypes.c_int64), ("rest0", ctypes.c_int64),
                ("tiles", ctypes.c_int64), ("row", ctypes.c_int64), ("piece", ctypes.c_uint32),
                ("pieces", ctypes.c_uint32), ("cols", ctypes.c_uint32), ("stages", ctypes.c_uint32),
                ("stage_stride", ctypes.c_uint32), ("tail", ctypes.c_uint32), ("counter", ctypes.c_uint64)]


assert ctypes.sizeof(StreamParams) == 120 and ctypes.sizeof(TransposeParams) == 128
assert ctypes.sizeof(BulkParams) == 72


_kernels: dict = {}
_sm_count: dict = {}


def _kernel(filename: str, name: str, options=()):
    """The kernel loaded in the current context (one module per device)."""
    from ... import cuda as tkc
    from .. import package_kernel

    key = (filename, name, tuple(options), tkc.context_id())
    k = _kernels.get(key)
    if k is None:
        k = _kernels[key] = package_kernel(filename, name, options=list(options))
    return k


def sm_count(t) -> int:
    dev = t.device.index if t.device.index is not None else 0
    n = _sm_count.get(dev)
    if n is None:
        import torch

        n = _sm_count[dev] = torch.cuda.get_device_properties(dev).multi_processor_count
    return n


def _map(dtype, ptr, dims, strides_b, box, swizzle=SwizzleMode.NONE, l2=3) -> TensorMap:
    return TensorMap(dtype=dtype, global_dim=tuple(dims), global_strides=tuple(strides_b), box_dim=tuple(box),
                     swizzle=swizzle, l2_promotion=L2Promotion(l2), global_address=int(ptr))



class DynLauncher(Launcher):
    """A transpose launcher with ``TransposeConfig.dyn``: its params carry a per-stream tile counter (two zeroed
    words from torch's allocator on the current stream; launches on one stream are ordered, and the kernel's last CTA
    zeroes the counter again), so it keeps one packed launch per stream (threads on one stream share it, under a
    lock)."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self._counters: dict = {}
        self._dyn_lock = threading.Lock()

    def __call__(self, sp: int, dp: int):
        with self._dyn_lock:
            st = current_raw_stream()
            c = self._counters.get(st)
            if c is None:
                import torch

                c = self._counters[st] = torch.zeros(2, dtype=torch.int64, device="cuda")
            self.params.counter = c.data_ptr()
            s = self._slots.get(st)
            if s is None:
                return self._first(sp, dp, st)
            if sp != s.sp or dp != s.dp:
                s.point(self, sp, dp)
            launch_slot(self, s)


def _order(cfg: CopyConfig) -> int:
    return TileOrder.CONTIGUOUS_RUNS if cfg.tiles_per_cta > 0 else cfg.order


def _grid(cfg: CopyConfig, total: int, nsm: int) -> int:
    """CTAs for ``total`` tiles: persistent (SMs x ctas_per_sm x grid_mult, capped by the tiles) or, with
    ``tiles_per_cta``, one CTA per run of that many tiles (at least the persistent grid's count)."""
    persistent = max(1, min(total, nsm * cfg.ctas_per_sm * max(1, cfg.grid_mult)))
    if cfg.tiles_per_cta > 0:
        return max(persistent, -(-total // cfg.tiles_per_cta))
    return persistent



def _pad_smem(smem: int, resident: int) -> int:
    """Dynamic shared memory padded so that at most ``resident`` CTAs fit per SM (each CTA also holds ~1.6 KiB of
    static and reserved shared memory); ``resident`` 0 leaves it as is."""
    if resident <= 0:
        return smem
    return max(smem, ((SMEM_PER_SM + 1024) // resident - 1664) // 128 * 128)

