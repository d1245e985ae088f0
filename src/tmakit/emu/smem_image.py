"""Moving one box between its packed element array and a shared-memory image (row pitch + swizzle, docs/HARDWARE.md §2).

``smem`` is a flat ``np.uint8`` array indexed by shared address; the box starts at ``addr``. Swizzling permutes
16-byte chunks inside 128-byte lines according to the absolute address, so the index arrays depend only on
``addr`` modulo the swizzle period (cached).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..tma.tensormap import SwizzleMode
from .errors import IllegalAddress, IllegalInstruction
from .geometry import BoxGeometry
from .swizzle import swizzle_address

SMEM_ALIGN = 128


def check_smem_range(smem: np.ndarray, addr: int, geom: BoxGeometry, what: str) -> None:
    """128-byte alignment and bounds of the box at ``addr`` (what the GPU faults on)."""
    if addr % SMEM_ALIGN:
        raise IllegalInstruction(f"{what}: shared address {addr:#x} is not 128-byte aligned; tensor copies need "
                                 "128-byte aligned shared memory (an H200 fails the launch with "
                                 "CUDA_ERROR_MISALIGNED_ADDRESS, 716)")
    if addr < 0 or addr + geom.footprint > smem.size:
        raise IllegalAddress(f"{what}: box [{addr:#x}, {addr + geom.footprint:#x}) lies outside the "
                             f"{smem.size}-byte shared memory")


@lru_cache(maxsize=1024)
def _chunk_index(pitch: int, rows: int, row_bytes: int, swizzle: SwizzleMode, offset: int) -> np.ndarray:
    a = offset + np.arange(rows, dtype=np.int64)[:, None] * pitch + np.arange(0, row_bytes, 16, dtype=np.int64)
    return (swizzle_address(a, swizzle) >> 4).ravel()


@lru_cache(maxsize=1024)
def _byte_index(pitch: int, rows: int, row_bytes: int, swizzle: SwizzleMode, offset: int) -> np.ndarray:
    a = offset + np.arange(rows, dtype=np.int64)[:, None] * pitch + np.arange(row_bytes, dtype=np.int64)
    return swizzle_address(a, swizzle).ravel()


def _index(geom: BoxGeometry, addr: int):
    """(index array, granule bytes) of the box's bytes in shared memory, in unswizzled image order."""
    off = addr % geom.period
    base = addr - off
    if geom.row_bytes % 16 == 0:
        return _chunk_index(geom.pitch, geom.rows, geom.row_bytes, geom.swizzle, off) + (base >> 4), 16
    return _byte_index(geom.pitch, geom.rows, geom.row_bytes, geom.swizzle, off) + base, 1


def _dense(geom: BoxGeometry) -> bool:
    return geom.swizzle == SwizzleMode.NONE and geom.pitch == geom.row_bytes


def write_box(smem: np.ndarray, addr: int, geom: BoxGeometry, data: np.ndarray) -> None:
    """Write the packed box bytes ``data`` (``tx_bytes`` of them, image order) at ``addr``."""
    data = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
    if _dense(geom):
        smem[addr:addr + data.size] = data
        return
    idx, g = _index(geom, addr)
    if g == 16:
        smem[: smem.size - smem.size % 16].reshape(-1, 16)[idx] = data.reshape(-1, 16)
    else:
        smem[idx] = data


def read_box(smem: np.ndarray, addr: int, geom: BoxGeometry) -> np.ndarray:
    """The packed box bytes (image order, ``tx_bytes`` long, a copy) stored at ``addr``."""
    if _dense(geom):
        return smem[addr:addr + geom.tx_bytes].copy()
    idx, g = _index(geom, addr)
    if g == 16:
        return smem[: smem.size - smem.size % 16].reshape(-1, 16)[idx].reshape(-1)
    return smem[idx]


def box_byte_addresses(addr: int, geom: BoxGeometry) -> np.ndarray:
    """Shared address of every data byte of the box, in image order (for pictures and tests)."""
    off = addr % geom.period
    return _byte_index(geom.pitch, geom.rows, geom.row_bytes, geom.swizzle, off) + (addr - off)
