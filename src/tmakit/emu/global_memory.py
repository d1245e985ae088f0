"""Global memory: numpy buffers at their real host addresses (``array.ctypes.data``).

A tensor map's ``global_address`` resolves to the registered buffer that contains it. ``launch`` registers the
numpy arrays it is given for the duration of the launch; ``register`` makes a buffer visible until ``unregister``
or until its memory is freed: the registry holds weak references only, so a dropped array (``alloc`` included) is
freed as usual and its registration goes with it.
"""

from __future__ import annotations

import math
import weakref

import numpy as np

from .checks import as_int, as_pow2
from .errors import IllegalAddress, LaunchError


def _owner(array: np.ndarray) -> np.ndarray:
    """The last ndarray of ``array``'s base chain: it keeps the memory alive as long as any view of it lives."""
    owner, obj = array, array
    while (obj := getattr(obj, "base", None)) is not None:
        if isinstance(obj, np.ndarray):
            owner = obj
    return owner


class _Entry:
    """One registered byte range ``[start, start + nbytes)`` inside the memory of ``owner``."""

    __slots__ = ("start", "nbytes", "ref", "strong", "count")

    def __init__(self, start: int, nbytes: int, owner: np.ndarray):
        self.start, self.nbytes, self.count = start, nbytes, 1
        contiguous = owner.flags.c_contiguous or owner.flags.f_contiguous
        self.strong = None if contiguous else owner  # a strided owner cannot be re-viewed as bytes: kept alive
        self.ref = weakref.ref(owner)

    def owner(self):
        return self.strong if self.strong is not None else self.ref()

    def data(self) -> np.ndarray | None:
        """The registered bytes (a view that keeps the memory alive), or None once the memory was freed."""
        owner = self.owner()
        if owner is None:
            return None
        flat = owner.ravel(order="K").view(np.uint8)
        off = self.start - owner.ctypes.data
        return flat[off:off + self.nbytes]


class GlobalMemory:
    """Registry of contiguous numpy buffers by address range (weakly referenced)."""

    def __init__(self):
        self._entries: list[_Entry] = []

    def _live(self) -> list[_Entry]:
        self._entries = [e for e in self._entries if e.owner() is not None]
        return self._entries

    def __len__(self) -> int:
        """Registered buffers whose memory is still alive."""
        return len(self._live())

    def register(self, array: np.ndarray) -> int:
        """Make ``array`` (C-contiguous) addressable; returns its address. Registering twice is counted."""
        if not isinstance(array, np.ndarray) or not array.flags.c_contiguous:
            raise IllegalAddress("global memory must be a C-contiguous numpy array")
        start, nbytes = int(array.ctypes.data), array.nbytes
        owner = _owner(array)
        for e in self._live():
            if e.start == start and e.nbytes == nbytes and e.owner() is owner:
                e.count += 1
                return start
        self._entries.append(_Entry(start, nbytes, owner))
        return start

    def unregister(self, array: np.ndarray) -> None:
        """Undo one ``register(array)``."""
        start, nbytes = int(array.ctypes.data), array.nbytes
        for j, e in enumerate(self._live()):
            if e.start == start and e.nbytes == nbytes:
                e.count -= 1
                if e.count == 0:
                    del self._entries[j]
                return

    def resolve(self, address: int) -> np.ndarray:
        """Bytes from ``address`` to the end of the registered buffer that contains it."""
        best = None
        for e in self._live():
            if e.start <= address < e.start + e.nbytes and (best is None or e.start + e.nbytes > best.start +
                                                            best.nbytes):
                best = e
        data = best.data() if best is not None else None
        if data is None:
            raise IllegalAddress(f"global address {address:#x} is not in any registered buffer: pass the numpy "
                                 "array to tk.emu.launch or call tk.emu.register(array)")
        return data[address - best.start:]

    def alloc(self, shape, dtype=np.float32, align: int = 256) -> np.ndarray:
        """A zeroed, registered array whose address is ``align``-byte aligned (registered while it lives)."""
        shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        shape = tuple(as_int(n, f"tk.emu.alloc shape {shape}: extent", 0, None, LaunchError) for n in shape)
        align = as_pow2(align, "tk.emu.alloc alignment (bytes)", LaunchError)
        if dtype is None:
            raise LaunchError("tk.emu.alloc needs a dtype (None would silently mean float64)")
        try:
            dtype = np.dtype(dtype)
        except TypeError as e:
            raise LaunchError(f"tk.emu.alloc: {dtype!r} is not a numpy dtype ({e})") from None
        nbytes = math.prod(shape) * dtype.itemsize
        try:
            raw = np.zeros(nbytes + align, np.uint8)
        except (MemoryError, ValueError) as e:
            raise LaunchError(f"tk.emu.alloc{shape} of {dtype}: {nbytes} bytes cannot be allocated ({e})") from None
        off = (-raw.ctypes.data) % align
        out = raw[off:off + nbytes].view(dtype).reshape(shape)
        self.register(out)
        return out


GLOBAL = GlobalMemory()


def register(array: np.ndarray) -> int:
    """Make ``array`` visible to TMA operations of every launch (while its memory lives); returns its address."""
    return GLOBAL.register(array)


def unregister(array: np.ndarray) -> None:
    GLOBAL.unregister(array)


def alloc(shape, dtype=np.float32, align: int = 256) -> np.ndarray:
    """A zeroed array in global memory (registered while it lives, ``align``-byte aligned): swizzled tensor maps
    need 128-byte aligned global addresses, which a plain numpy array has only by chance."""
    return GLOBAL.alloc(shape, dtype, align)
