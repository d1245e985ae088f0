"""Blackwell's device vocabulary in one place: TMEM allocation, tcgen05.mma / commit / ld / st, the 2-SM TMA load,
and CuTe's ``gemm`` / TMEM ``copy`` on the host algebra's objects (see docs/BLACKWELL.md, "Emulator")."""

from __future__ import annotations

from .device_cute_sm100 import gemm, tmem_copy
from .device_tcgen05 import (
    Allocator1Sm,
    Allocator2Sm,
    tmem_alloc,
    tmem_dealloc,
    tmem_fence_after_thread_sync,
    tmem_fence_before_thread_sync,
    tmem_load,
    tmem_peek,
    tmem_relinquish_alloc_permit,
    tmem_store,
    tmem_wait_ld,
    tmem_wait_st,
    umma,
    umma_arrive,
    umma_arrive_2x1SM,
    umma_arrive_multicast,
    umma_arrive_multicast_2x1SM,
    umma_commit,
)
from .device_tma_2sm import copy_2sm, tma_load_2sm

__all__ = [
    "Allocator1Sm", "Allocator2Sm", "copy_2sm", "gemm", "tma_load_2sm", "tmem_alloc", "tmem_copy", "tmem_dealloc",
    "tmem_fence_after_thread_sync", "tmem_fence_before_thread_sync", "tmem_load", "tmem_peek",
    "tmem_relinquish_alloc_permit", "tmem_store", "tmem_wait_ld", "tmem_wait_st", "umma", "umma_arrive",
    "umma_arrive_2x1SM", "umma_arrive_multicast", "umma_arrive_multicast_2x1SM", "umma_commit",
]
