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
