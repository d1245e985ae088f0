"""Typed pointers into one CTA's shared memory, the engine of shared tensors (CuTe's ``make_smem_ptr``)."""

from __future__ import annotations

import numpy as np


class SmemPtr:
    """``T*`` into shared memory: ``address`` in bytes, ``dtype`` numpy; ``p + n`` advances ``n`` elements.

    ``p[i]`` reads / ``p[i] = v`` writes element ``i`` (generic proxy: fence before TMA reads it).
    """

    __slots__ = ("smem", "address", "dtype")

    def __init__(self, smem, address: int, dtype=np.uint8):
        self.smem = smem
        self.address = int(address)
        self.dtype = np.dtype(dtype)

    def __add__(self, n):
        return SmemPtr(self.smem, self.address + int(n) * self.dtype.itemsize, self.dtype)

    __radd__ = __add__

    def __sub__(self, n):
        if isinstance(n, SmemPtr):
            return (self.address - n.address) // self.dtype.itemsize
        return self + (-int(n))

    def __int__(self):
        return self.address

    __index__ = __int__

    def __eq__(self, other):
        return isinstance(other, SmemPtr) and (self.smem, self.address) == (other.smem, other.address)

    def __hash__(self):
        return hash((id(self.smem), self.address))

    def _cell(self, i):
        a = self.address + int(i) * self.dtype.itemsize
        self.smem.touch(a + self.dtype.itemsize)
        return self.smem.data[a:a + self.dtype.itemsize].view(self.dtype)

    def __getitem__(self, i):
        return self._cell(i)[0]

    def __setitem__(self, i, value):
        self._cell(i)[0] = value

    def deref(self, offset=0):
        """Element at ``offset`` (what a shared tensor reads through this pointer)."""
        return self[offset]

    def store(self, offset, value):
        """Write element ``offset`` (what ``tensor[coord] = v`` does on a shared tensor)."""
        self[offset] = value

    def cast(self, dtype) -> SmemPtr:
        return SmemPtr(self.smem, self.address, dtype)

    def view(self, shape) -> np.ndarray:
        """A numpy view of ``shape`` elements starting here (generic reads and writes)."""
        n = int(np.prod(shape, dtype=np.int64)) * self.dtype.itemsize
        self.smem.touch(self.address + n)
        return self.smem.data[self.address:self.address + n].view(self.dtype).reshape(shape)

    def __repr__(self):
        return f"smem_ptr[{self.dtype.itemsize * 8}b]({self.address:#x})"
