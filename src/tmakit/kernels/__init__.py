"""CUDA kernels (.cu sources beside their host side: ``bandwidth``, ``gemm``, ``seeds`` ...).

The runtime (``tmakit.cuda``) compiles and launches any source; this package knows where its own sources are.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["KERNELS_DIR", "package_kernel"]

KERNELS_DIR = Path(__file__).resolve().parent


def package_kernel(filename: str, name: str, **compile_kw):
    """Kernel ``name`` from ``tmakit/kernels/<filename>`` (compiled once, cached on disk), loaded in the current
    context."""
    from ..cuda import compile_file, load_module

    return load_module(compile_file(KERNELS_DIR / filename, **compile_kw)).kernel(name)
