"""Global memory: numpy buffers at their real host addresses (``array.ctypes.data``).

A tensor map's ``global_address`` resolves to the registered buffer that contains it. ``launch`` registers the
numpy arrays it is given for the duration of the launch; ``register`` makes a buffer visible until ``unregister``.
"""

from __future__ import annotations

import bisect

import numpy as np

from .errors import IllegalAddress


class GlobalMemory:
    """Registry of contiguous numpy buffers by address range."""

    def __init__(self):
        self._starts: list[int] = []
        self._entries: list[tuple[int, np.ndarray, int]] = []  # (start, bytes view, refcount)

    def register(self, array: np.ndarray) -> int:
        """Make ``array`` (C-contiguous) addressable; returns its address. Registering twice is counted."""
        if not isinstance(array, np.ndarray) or not array.flags.c_contiguous:
            raise IllegalAddress("global memory must be a C-contiguous numpy array")
        data = array.reshape(-1).view(np.uint8)
        start = int(array.ctypes.data)
        i = bisect.bisect_left(self._starts, start)
        for j in range(i, len(self._entries)):
            s, d, n = self._entries[j]
            if s != start:
                break
            if d.size == data.size:
                self._entries[j] = (s, d, n + 1)
                return start
        self._starts.insert(i, start)
        self._entries.insert(i, (start, data, 1))
        return start

    def unregister(self, array: np.ndarray) -> None:
        """Undo one ``register(array)``."""
        start, size = int(array.ctypes.data), array.nbytes
        for j, (s, d, n) in enumerate(self._entries):
            if s == start and d.size == size:
                if n > 1:
                    self._entries[j] = (s, d, n - 1)
                else:
                    del self._entries[j], self._starts[j]
                return

    def resolve(self, address: int) -> np.ndarray:
        """Bytes from ``address`` to the end of the registered buffer that contains it."""
        i = bisect.bisect_right(self._starts, address)
        best = None
        for s, d, _ in self._entries[:i]:
            if s <= address < s + d.size and (best is None or s + d.size > best[0] + best[1].size):
                best = (s, d)
        if best is None:
            raise IllegalAddress(f"global address {address:#x} is not in any registered buffer: pass the numpy "
                                 "array to tk.emu.launch or call tk.emu.register(array)")
        return best[1][address - best[0]:]

    def alloc(self, shape, dtype=np.float32, align: int = 256) -> np.ndarray:
        """A zeroed, registered array whose address is ``align``-byte aligned."""
        dtype = np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        raw = np.zeros(nbytes + align, np.uint8)
        off = (-raw.ctypes.data) % align
        out = raw[off:off + nbytes].view(dtype).reshape(shape)
        self.register(out)
        return out


GLOBAL = GlobalMemory()


def register(array: np.ndarray) -> int:
    """Make ``array`` visible to TMA operations of every launch; returns its address."""
    return GLOBAL.register(array)


def unregister(array: np.ndarray) -> None:
    GLOBAL.unregister(array)


def alloc(shape, dtype=np.float32, align: int = 256) -> np.ndarray:
    """A zeroed array in global memory (registered, ``align``-byte aligned)."""
    return GLOBAL.alloc(shape, dtype, align)
