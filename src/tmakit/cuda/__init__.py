"""GPU runtime: NVRTC JIT, disk cache, module loading, launches, tensor-map encoding.

Needs ``cuda-bindings`` and ``nvidia-cuda-nvrtc`` (``pip install 'tmakit[gpu]'``), no CUDA toolkit; torch is optional.
Importing this package touches neither: the driver and NVRTC load on first use.

    from tmakit import cuda as tkc
    k = tkc.kernel(src, "my_kernel")                    # compile (cached) + load + look up
    k(grid, block, tkc.encode_tensormap(tm), out_tensor, ctypes.c_int32(n), smem=..., cluster=(2, 1, 1))
"""

from __future__ import annotations

from .args import Ptr, device_pointer
from .cache import cache_dir, compile, compile_file
from .driver import DeviceBuffer, context_id, current_stream, device_count, ensure_context, synchronize
from .encode import encode_cached, encode_tensormap, tensormap_bytes
from .errors import CacheWarning, CompileError, CompileInputError, CudaError, RuntimeUnavailable
from .launch import launch
from .module import Kernel, Module, load_module
from .nvrtc import DEFAULT_ARCH, Compiled

__all__ = ["CacheWarning", "CompileError", "CompileInputError", "Compiled", "CudaError", "DEFAULT_ARCH",
           "DeviceBuffer", "Kernel", "Module", "Ptr",
           "RuntimeUnavailable", "cache_dir", "compile", "compile_file", "context_id", "current_stream", "device_count",
           "device_pointer", "encode_cached", "encode_tensormap", "ensure_context", "is_available", "kernel",
           "launch", "load_module", "synchronize", "tensormap_bytes"]


def is_available() -> bool:
    """True when cuda-bindings loads and a compute-capability >= 9.0 GPU is present."""
    try:
        if device_count() == 0:
            return False
        from .driver import compute_capability

        return compute_capability(0) >= (9, 0)
    except Exception:
        return False


def kernel(source: str, name: str, *, filename: str = "kernel.cu", **compile_kw) -> Kernel:
    """Compile ``source`` (cached), load it into the current context and return kernel ``name``."""
    names = compile_kw.pop("name_expressions", ())
    if "<" in name and name not in names:
        names = (*names, name)
    return load_module(compile(source, filename, name_expressions=names, **compile_kw)).kernel(name)

