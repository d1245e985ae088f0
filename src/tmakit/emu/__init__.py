"""A bit-exact CPU model of TMA, mbarriers and clusters that runs CTA programs written in Python.

Host side: ``launch(kernel, grid, cluster, *args)``; global memory is numpy arrays (``register``, ``alloc``).
Device side (inside a kernel): the vocabulary of the seeds — ``copy(tma.with_(bar, mask), src, dst)``,
``prefetch``, ``initialize_barrier``, ``set_barrier_transaction_bytes``, ``wait_barrier``, ``cluster_sync``,
``fence_barrier_init``, ``tma_store_fence``, ``tma_store_arrive``, ``tma_store_wait``, ``block_rank_in_cluster``,
``cluster_id_in_grid``, ``cluster_shape``, ``block_idx`` — plus shared allocation and raw TMA instructions.
The TMA unit itself is ``tmakit.emu.tma_unit`` (pure functions on byte buffers). See docs/EMULATOR.md.
"""

from . import tma_unit
from .adaptor import BoundCopy, TrivialPredTensor, copy, copy_if, prefetch, tma_coords, with_
from .bulk import bulk_copy, bulk_load, bulk_prefetch, bulk_store  # cp.async.bulk (docs/EMULATOR.md)
from .cp_async import cp_async_fence, cp_async_wait, cp_async_wait_all  # SM80 cp.async (docs/CONFORMANCE.md)
from .cta import Dim3
from .cute_sm90_fragments import RegisterPtr, ThreadFragments, thread_fragments_A, thread_fragments_C
from .device_cute_sm90 import (  # CuTe's GMMA calls; gemm dispatches SM90 GMMA here, SM100 UMMA to tcgen05's
    gemm,
    warpgroup_arrive,
    warpgroup_commit_batch,
    warpgroup_fence_operand,
    warpgroup_wait,
)
from .device_info import (
    block_id_in_cluster,
    block_idx,
    block_rank_in_cluster,
    cluster_id_in_grid,
    cluster_shape,
    cluster_size,
    grid_dim,
)
from .device_smem import make_smem_ptr, shared_alloc, shared_array, shared_barrier, shared_tensor
from .device_sync import (
    arrive_barrier,
    barrier_phase,
    cluster_arrive,
    cluster_sync,
    cluster_wait,
    expect_transaction_bytes,
    fence_barrier_init,
    fence_proxy_async,
    fence_view_async_shared,
    initialize_barrier,
    invalidate_barrier,
    set_barrier_transaction_bytes,
    syncthreads,
    tma_store_fence,
    try_wait_barrier,
    wait_barrier,
)
from .device_tensormap import (  # tensor maps edited on the device (docs/EMULATOR.md)
    fence_proxy_tensormap_acquire,
    fence_proxy_tensormap_release,
    prefetch_tensormap,
    prefetch_tma_descriptor,
    shared_tensormap,
    tensormap_acquire,
    tensormap_copy_to_shared,
    tensormap_cp_fenceproxy,
    tensormap_replace,
    tensormap_replace_box_dim,
    tensormap_replace_element_stride,
    tensormap_replace_elemtype,
    tensormap_replace_fill_mode,
    tensormap_replace_global_address,
    tensormap_replace_global_dim,
    tensormap_replace_global_stride,
    tensormap_replace_interleave_layout,
    tensormap_replace_rank,
    tensormap_replace_swizzle_mode,
    tma_descriptor_cp_fence_release,
    tma_descriptor_fence_acquire,
    tma_descriptor_fence_release,
    tma_descriptor_replace_addr_in_global_mem,
    tma_descriptor_replace_addr_in_shared_mem,
    tma_descriptor_replace_dims_strides_in_shared_mem,
    with_tensormap,
)
from .device_tma import (
    commit_group,
    tma_load,
    tma_prefetch,
    tma_reduce,
    tma_store,
    tma_store_arrive,
    tma_store_wait,
    wait_group,
)
from .device_wgmma import (  # Hopper: wgmma.fence / mma_async / commit_group / wait_group (docs/EMULATOR.md)
    wgmma_accumulator,
    wgmma_commit_group,
    wgmma_fence,
    wgmma_fragment_a,
    wgmma_mma_async,
    wgmma_wait_group,
)
from .dtypes import OOB_NAN_BITS
from .errors import (
    BarrierError,
    Deadlock,
    EmuError,
    ExitError,
    IllegalAddress,
    IllegalInstruction,
    LaunchError,
    RaceError,
    TimeLimitExceeded,
    TmaUnitError,
)
from .geometry import BoxGeometry, box_geometry
from .global_memory import GlobalMemory, alloc, register, unregister
from .launch import EmuWarning, launch
from .mbarrier import MBarrier, StalePhaseWarning
from .pipeline_sm90 import (  # CUTLASS's cutlass/pipeline/sm90_pipeline.hpp (docs/EMULATOR.md, "CUTLASS pipelines")
    BarrierStatus,
    ClusterBarrier,
    ClusterTransactionBarrier,
    ConsumerToken,
    PipelineState,
    PipelineTmaAsync,
    ProducerToken,
    make_producer_start_state,
)
from .pipeline_sm90_async import PipelineAsync, PipelineTmaStore, PipelineTransactionAsync
from .pipeline_sm100 import (  # CUTLASS's cutlass/pipeline/sm100_pipeline.hpp (docs/EMULATOR.md, "CUTLASS pipelines")
    McastDirection,
    PipelineTmaUmmaAsync,
    PipelineUmmaAsync,
    PipelineUmmaConsumerAsync,
)
from .pipeline_sm100_sequence import OrderedSequenceBarrier
from .shared_memory import DEFAULT_SMEM_BYTES, SharedMemory
from .smem_array import SharedArray
from .smem_ptr import SmemPtr
from .swizzle import swizzle_address
from .tcgen05 import (  # Blackwell: TMEM, tcgen05.mma / commit / ld / st, 2-SM TMA (docs/BLACKWELL.md)
    Allocator1Sm,
    Allocator2Sm,
    copy_2sm,
    tma_load_2sm,
    tmem_alloc,
    tmem_copy,
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
from .tensormap_memory import TensorMapPtr, read_tensormap, write_tensormap
from .wgmma import reference_wgmma
from .wgmma_desc import WgmmaDescriptor, decode_wgmma_desc, encode_wgmma_desc
from .wgmma_fragments import a_fragment_coords, accumulator_coords
from .wgmma_regs import FragmentA, WarpgroupAccumulator

make_smem_tensor = shared_tensor

__all__ = [
    "BarrierError", "BoundCopy", "BoxGeometry", "DEFAULT_SMEM_BYTES", "Deadlock", "Dim3", "EmuError", "EmuWarning",
    "ExitError", "GlobalMemory", "IllegalAddress", "IllegalInstruction", "LaunchError", "MBarrier", "OOB_NAN_BITS",
    "RaceError", "SharedArray", "SharedMemory", "SmemPtr", "StalePhaseWarning", "TimeLimitExceeded", "TmaUnitError",
    "alloc", "arrive_barrier",
    "barrier_phase", "block_id_in_cluster", "block_idx", "block_rank_in_cluster", "box_geometry", "cluster_arrive",
    "cluster_id_in_grid", "cluster_shape", "cluster_size", "cluster_sync", "cluster_wait", "commit_group", "copy",
    "copy_if", "TrivialPredTensor",
    "expect_transaction_bytes", "fence_barrier_init", "fence_proxy_async", "fence_view_async_shared", "grid_dim",
    "initialize_barrier", "invalidate_barrier", "launch", "make_smem_ptr", "make_smem_tensor", "prefetch",
    "register", "set_barrier_transaction_bytes", "shared_alloc", "shared_array", "shared_barrier", "shared_tensor",
    "swizzle_address", "syncthreads", "tma_coords", "tma_load", "tma_prefetch", "tma_reduce", "tma_store",
    "tma_store_arrive", "tma_store_fence", "tma_store_wait", "tma_unit", "try_wait_barrier", "unregister",
    "wait_barrier", "wait_group", "with_",
]
__all__ += [  # bulk copies and tensor maps in memory
    "TensorMapPtr", "bulk_copy", "bulk_load", "bulk_prefetch", "bulk_store", "fence_proxy_tensormap_acquire",
    "fence_proxy_tensormap_release", "prefetch_tensormap", "prefetch_tma_descriptor", "read_tensormap",
    "shared_tensormap", "tensormap_acquire", "tensormap_copy_to_shared", "tensormap_cp_fenceproxy",
    "tensormap_replace", "tensormap_replace_box_dim", "tensormap_replace_element_stride",
    "tensormap_replace_elemtype", "tensormap_replace_fill_mode", "tensormap_replace_global_address",
    "tensormap_replace_global_dim", "tensormap_replace_global_stride", "tensormap_replace_interleave_layout",
    "tensormap_replace_rank", "tensormap_replace_swizzle_mode", "tma_descriptor_cp_fence_release",
    "tma_descriptor_fence_acquire", "tma_descriptor_fence_release", "tma_descriptor_replace_addr_in_global_mem",
    "tma_descriptor_replace_addr_in_shared_mem", "tma_descriptor_replace_dims_strides_in_shared_mem",
    "with_tensormap", "write_tensormap",
]
__all__ += [  # Blackwell
    "Allocator1Sm", "Allocator2Sm", "copy_2sm", "gemm", "tma_load_2sm", "tmem_alloc", "tmem_copy", "tmem_dealloc",
    "tmem_fence_after_thread_sync", "tmem_fence_before_thread_sync", "tmem_load", "tmem_peek",
    "tmem_relinquish_alloc_permit", "tmem_store", "tmem_wait_ld", "tmem_wait_st", "umma", "umma_arrive",
    "umma_arrive_2x1SM", "umma_arrive_multicast", "umma_arrive_multicast_2x1SM", "umma_commit",
]
__all__ += [  # Hopper warpgroup MMA
    "FragmentA", "WarpgroupAccumulator", "WgmmaDescriptor", "a_fragment_coords", "accumulator_coords",
    "decode_wgmma_desc", "encode_wgmma_desc", "reference_wgmma", "wgmma_accumulator", "wgmma_commit_group",
    "wgmma_fence", "wgmma_fragment_a", "wgmma_mma_async", "wgmma_wait_group",
]
__all__ += [  # CuTe's SM90 GMMA calls (gemm is in the Blackwell list: one name for both)
    "RegisterPtr", "ThreadFragments", "thread_fragments_A", "thread_fragments_C", "warpgroup_arrive",
    "warpgroup_commit_batch", "warpgroup_fence_operand", "warpgroup_wait",
]
__all__ += [  # CUTLASS's SM90 pipelines
    "BarrierStatus", "ClusterBarrier", "ClusterTransactionBarrier", "ConsumerToken", "PipelineAsync", "PipelineState",
    "PipelineTmaAsync", "PipelineTmaStore", "PipelineTransactionAsync", "ProducerToken", "make_producer_start_state",
]
__all__ += [  # CUTLASS's SM100 pipelines and OrderedSequenceBarrier
    "McastDirection", "OrderedSequenceBarrier", "PipelineTmaUmmaAsync", "PipelineUmmaAsync",
    "PipelineUmmaConsumerAsync",
]
__all__ += ["cp_async_fence", "cp_async_wait", "cp_async_wait_all"]  # CuTe's SM80 cp.async group calls
