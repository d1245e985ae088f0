"""Kernel launches through ``cuLaunchKernelEx``: cluster dimensions, dynamic shared memory, streams."""

from __future__ import annotations

from .args import pack_args
from .driver import check, cu, current_stream, ensure_context

__all__ = ["dim3", "launch", "make_config"]

PORTABLE_CLUSTER = 8
MAX_CLUSTER = 16


def dim3(x) -> tuple[int, int, int]:
    """``int`` or 1-3 tuple -> ``(x, y, z)``."""
    if isinstance(x, int):
        return (x, 1, 1)
    t = tuple(int(v) for v in x)
    if not 1 <= len(t) <= 3:
        raise ValueError(f"expected 1 to 3 dimensions, got {x!r}")
    return t + (1,) * (3 - len(t))


def make_config(kernel, grid, block, smem, stream, cluster, pdl: bool = False):
    """A ``CUlaunchConfig`` (memoised per kernel on the launch shape, stream and attributes)."""
    key = (grid, block, smem, stream, cluster, pdl)
    cfg = kernel._configs.get(key)
    if cfg is not None:
        return cfg
    d = cu()
    cfg = d.CUlaunchConfig()
    cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = grid
    cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = block
    cfg.sharedMemBytes = smem
    cfg.hStream = d.CUstream(stream)
    attrs = []
    if cluster is not None:
        attr = d.CUlaunchAttribute()
        attr.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z = cluster
        attrs.append(attr)
    if pdl:
        attr = d.CUlaunchAttribute()
        attr.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
        attr.value.programmaticStreamSerializationAllowed = 1
        attrs.append(attr)
    if attrs:
        cfg.attrs, cfg.numAttrs = attrs, len(attrs)
    else:
        cfg.numAttrs = 0
    if len(kernel._configs) > 256:
        kernel._configs.clear()
    kernel._configs[key] = cfg
    return cfg


def launch(kernel, grid, block, args=(), *, smem: int = 0, stream=None, cluster=None, non_portable: bool = False,
           pdl: bool = False):
    """Launch ``kernel`` on ``grid`` x ``block`` (CTAs x threads; the grid counts CTAs, not clusters).

    ``smem``: dynamic shared memory bytes (the attribute is raised above 48 KiB automatically). ``stream``: a raw
    handle, a torch/cupy stream, or None for torch's current stream (0 without torch). ``cluster``: cluster
    dimensions in CTAs; more than 8 CTAs needs ``non_portable=True`` (up to 16 on sm_90). ``pdl``: programmatic
    dependent launch -- the kernel may start while the previous kernel in the stream drains, so it must execute
    ``griddepcontrol.wait`` before it touches memory that kernel writes or reads.
    """
    ensure_context()
    grid, block = dim3(grid), dim3(block)
    if cluster is not None:
        cluster = dim3(cluster)
        n = cluster[0] * cluster[1] * cluster[2]
        if any(g % c for g, c in zip(grid, cluster)):
            raise ValueError(f"grid {grid} is not divisible by cluster {cluster} (CUDA_ERROR_INVALID_CLUSTER_SIZE)")
        if n > PORTABLE_CLUSTER:
            if not non_portable:
                raise ValueError(f"cluster of {n} CTAs exceeds the portable {PORTABLE_CLUSTER}: "
                                 "pass non_portable=True to opt in (16 max on sm_90)")
            if n > MAX_CLUSTER:
                raise ValueError(f"cluster of {n} CTAs exceeds the hardware maximum {MAX_CLUSTER}")
            kernel.allow_non_portable_cluster()
    if smem > kernel._dyn_smem:
        kernel.set_max_dynamic_smem(smem)
    if stream is None:
        stream = current_stream()
    elif not isinstance(stream, int):
        stream = _stream_handle(stream)
    cfg = make_config(kernel, grid, block, smem, stream, cluster, pdl)
    params = pack_args(args)
    r = cu().cuLaunchKernelEx(cfg, kernel.handle, params, 0)
    if int(r[0]) != 0:
        check(r, "cuLaunchKernelEx", kernel=kernel.name, grid=grid, block=block, smem=smem, stream=stream,
              cluster=cluster, nargs=len(args))


def _stream_handle(s) -> int:
    h = getattr(s, "cuda_stream", None)  # torch.cuda.Stream
    if h is None:
        h = getattr(s, "ptr", None)  # cupy.cuda.Stream
    if h is None:
        h = getattr(s, "handle", None)  # cuda.core Stream
    if h is None:
        try:
            return int(s)  # CUstream
        except TypeError as e:
            raise TypeError(f"not a stream: {type(s).__name__}") from e
    return int(h)
