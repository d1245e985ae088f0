"""Shared-memory allocation inside a kernel (the ``__shared__`` declarations) and shared addresses."""

from __future__ import annotations

import math

import numpy as np

from ..layout import cosize, make_tensor
from .checks import as_int
from .errors import EmuError, IllegalAddress, IllegalInstruction
from .scheduler import current_cta
from .smem_ptr import SmemPtr


def shared_alloc(nbytes: int, align: int = 128, dtype=np.uint8) -> SmemPtr:
    """Reserve ``nbytes`` of the current CTA's shared memory; a pointer of ``dtype`` to the start."""
    cta = current_cta()
    addr = cta.smem.alloc(nbytes, align)
    return SmemPtr(cta.smem, addr, dtype, len(cta.smem.starts) - 1)


def shared_array(shape, dtype=np.float32, align: int = 128) -> np.ndarray:
    """A zero-initialized numpy view of new shared memory (generic reads and writes, recorded for the proxy
    race check: ``smem_array.SharedArray``)."""
    dtype = np.dtype(dtype)
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    shape = tuple(as_int(n, f"shared_array shape {shape}", 0, None, IllegalAddress) for n in shape)
    ptr = shared_alloc(math.prod(shape) * dtype.itemsize, align, dtype)
    return ptr.view(shape)


def shared_barrier(count: int | None = None):
    """One 8-byte mbarrier slot (or a list of ``count``), like ``__shared__ uint64_t bar;``."""
    if count is None:
        return shared_alloc(8, 8, np.uint64)
    count = as_int(count, "shared_barrier count", 0, None, IllegalAddress)
    return [shared_alloc(8, 8, np.uint64) for _ in range(count)]


def shared_tensor(layout, dtype=np.float32, align: int | None = None):
    """``make_tensor(make_smem_ptr(new shared buffer), layout)`` sized by ``cosize(layout)``.

    ``align`` defaults to 1024 for swizzled (composed) layouts, so the swizzle pattern starts a period, else 128.
    """
    composed = type(layout).__name__ == "ComposedLayout"
    align = align or (1024 if composed else 128)
    dtype = np.dtype(dtype)
    ptr = shared_alloc(int(cosize(layout)) * dtype.itemsize, align, dtype)
    return make_tensor(ptr, layout)


def make_smem_ptr(address: int, dtype=np.float32) -> SmemPtr:
    """A typed pointer to shared ``address`` (0 .. smem_bytes) of the current CTA."""
    smem = current_cta().smem
    return SmemPtr(smem, as_int(address, "shared address", 0, smem.size, IllegalAddress), dtype)


def smem_address(cta, x) -> int:
    """Shared address of a pointer, a tensor over one, an int, or a numpy view of this CTA's shared memory."""
    it = getattr(x, "iterator", None)
    if it is not None:
        x = it
    if isinstance(x, SmemPtr):
        if x.smem is not cta.smem:
            raise EmuError(f"{x} points into another CTA's shared memory; TMA addresses are CTA-relative")
        return x.address
    if isinstance(x, np.ndarray):
        base = cta.smem.data.ctypes.data
        addr = x.ctypes.data - base
        if not 0 <= addr < cta.smem.size:
            raise EmuError("the numpy array is not a view of this CTA's shared memory (use tk.emu.shared_array)")
        return addr
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return int(x)
    if type(x).__module__ == "tmakit.mma.pointers" and isinstance(getattr(x, "address", None), int):
        return x.address  # tk.make_smem_ptr(T, byte_address) of the Blackwell host algebra
    raise EmuError(f"expected a shared-memory pointer, tensor or address, got {type(x).__name__}")


def smem_allocation(x) -> int | None:
    """The shared allocation a pointer (or a tensor over one) came from, if known."""
    return getattr(getattr(x, "iterator", x), "alloc", None)


def barrier_address(cta, bar) -> int:
    """Shared address of an mbarrier operand: 8-byte aligned, inside shared memory."""
    addr = smem_address(cta, bar)
    if addr % 8:
        raise IllegalInstruction(f"{cta.label}: mbarrier address {addr:#x} must be an 8-byte aligned shared address")
    cta.smem.check(addr, 8, "mbarrier", smem_allocation(bar))
    return addr
