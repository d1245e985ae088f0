"""Typed pointers into one CTA's shared memory, the engine of shared tensors (CuTe's ``make_smem_ptr``)."""

from __future__ import annotations

import math

import numpy as np

from .checks import as_int
from .errors import IllegalAddress
from .smem_array import SharedArray, shared_view


class SmemPtr:
    """``T*`` into shared memory: ``address`` in bytes, ``dtype`` numpy; ``p + n`` advances ``n`` elements.

    ``p[i]`` reads / ``p[i] = v`` writes element ``i`` (generic proxy: fence before TMA reads it). Every access is
    checked against the shared image and the allocation it falls in (``IllegalAddress``); indices never wrap.
    """

    __slots__ = ("smem", "address", "dtype", "alloc")

    def __init__(self, smem, address: int, dtype=np.uint8, alloc: int | None = None):
        self.smem = smem
        self.address = as_int(address, "shared address", None, None, IllegalAddress)
        self.dtype = np.dtype(dtype)
        self.alloc = alloc  # index of the shared allocation it points into (None: a raw address)

    def __add__(self, n):
        n = as_int(n, "pointer offset (elements)", None, None, IllegalAddress)
        return SmemPtr(self.smem, self.address + n * self.dtype.itemsize, self.dtype, self.alloc)

    __radd__ = __add__

    def __sub__(self, n):
        if isinstance(n, SmemPtr):
            return (self.address - n.address) // self.dtype.itemsize
        return self + (-as_int(n, "pointer offset (elements)", None, None, IllegalAddress))

    def __int__(self):
        return self.address

    __index__ = __int__

    def __eq__(self, other):
        return isinstance(other, SmemPtr) and (self.smem, self.address) == (other.smem, other.address)

    def __hash__(self):
        return hash((id(self.smem), self.address))

    def _cell(self, i, what: str):
        i = as_int(i, f"{what} index", None, None, IllegalAddress)
        n = self.dtype.itemsize
        a = self.address + i * n
        self.smem.check(a, n, f"{what} of element {i} of {self!r}", self.alloc)
        return a, self.smem.data[a:a + n].view(self.dtype)

    def __getitem__(self, i):
        a, cell = self._cell(i, "load")
        self.smem.touch(a + self.dtype.itemsize)
        return cell[0]

    def __setitem__(self, i, value):
        a, cell = self._cell(i, "store")
        cell[0] = value
        self.smem.generic_write(a, self.dtype.itemsize)

    def make_tensor_with(self, layout):
        """``make_tensor(ptr, Sw o smem_ptr_flag o L)`` (CuTe's GMMA / UMMA layout atoms): the swizzle acts on byte
        addresses, as CuTe's swizzle pointer applies it; on a buffer aligned to the swizzle's period that is the same
        swizzle on element offsets, shifted down by log2(element bytes) bits. Other layouts: None (the usual path)."""
        from ..layout import ComposedLayout, Swizzle, Tensor

        bits = getattr(getattr(layout, "offset", None), "bits", None)
        sw = getattr(layout, "layout_a", None)
        if not isinstance(layout, ComposedLayout) or bits is None or not isinstance(sw, Swizzle):
            return None
        e = self.dtype.itemsize
        if bits != 8 * e:
            raise IllegalAddress(f"make_tensor: the layout atom is for {bits}-bit elements but this shared pointer "
                                 f"holds {self.dtype} ({8 * e}-bit); build the atom for the pointer's element type")
        k = e.bit_length() - 1
        period = 1 << (sw.base + sw.shift + sw.bits)
        if sw.base < k or self.address % period:
            raise IllegalAddress(f"make_tensor: {sw} swizzles byte addresses in periods of {period} bytes, but the "
                                 f"pointer is at {self.address:#x} ({self.address % period} bytes into a period) or "
                                 f"its {e}-byte elements split the swizzled chunks; allocate with align={period}")
        return Tensor(self, ComposedLayout(Swizzle(sw.bits, sw.base - k, sw.shift), 0, layout.layout_b))

    def deref(self, offset=0):
        """Element at ``offset`` (what a shared tensor reads through this pointer)."""
        return self[offset]

    def store(self, offset, value):
        """Write element ``offset`` (what ``tensor[coord] = v`` does on a shared tensor)."""
        self[offset] = value

    def cast(self, dtype) -> SmemPtr:
        return SmemPtr(self.smem, self.address, dtype, self.alloc)

    def view(self, shape) -> SharedArray:
        """A numpy view of ``shape`` elements starting here (generic reads and writes, writes recorded)."""
        shape = (shape,) if not isinstance(shape, (tuple, list)) else tuple(shape)
        shape = tuple(as_int(s, f"shared view shape {shape}", 0, None, IllegalAddress) for s in shape)
        n = math.prod(shape) * self.dtype.itemsize
        self.smem.check(self.address, n, f"a {shape} view of {self!r}", self.alloc)
        self.smem.touch(self.address + n)
        return shared_view(self.smem, self.address, shape, self.dtype)

    def __repr__(self):
        return f"smem_ptr[{self.dtype.itemsize * 8}b]({self.address:#x})"
