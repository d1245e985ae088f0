"""``SharedArray``: a numpy view of one CTA's shared memory whose writes are recorded as generic-proxy writes.

``s[...] = v``, ``s += v`` (any ufunc with ``out=s``), ``s.fill(v)`` and ``np.copyto`` / ``np.put`` /
``np.place`` / ``np.putmask`` into ``s`` mark exactly the bytes they write, even when the value does not change,
so a TMA operation that reads or overwrites them without ``fence.proxy.async`` is reported. Results of arithmetic
and copies are plain numpy arrays.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

_WRITERS = frozenset({np.copyto, np.put, np.place, np.putmask})


class SharedArray(np.ndarray):
    """A view of shared memory (``tk.emu.shared_array``, ``SmemPtr.view``)."""

    _smem = None

    def __array_finalize__(self, obj):
        self._smem = getattr(obj, "_smem", None)

    def _mark(self, key=()) -> None:
        smem = self._smem
        if smem is None:
            return
        off = self.ctypes.data - smem.data.ctypes.data
        if not 0 <= off < smem.size:
            return  # a copy, not a view of the image
        shadow = as_strided(smem.written[off:], shape=self.shape + (self.itemsize,),
                            strides=self.strides + (1,))
        key = key if isinstance(key, tuple) else (key,)
        shadow[(*key, slice(None))] = True
        smem.touch(off + 1)

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        self._mark(key)

    def fill(self, value):
        super().fill(value)
        self._mark()

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        plain = [x.view(np.ndarray) if isinstance(x, SharedArray) else x for x in inputs]
        if out is not None:
            kwargs["out"] = tuple(o.view(np.ndarray) if isinstance(o, SharedArray) else o for o in out)
        result = getattr(ufunc, method)(*plain, **kwargs)
        written = out or ((inputs[0],) if method == "at" else ())
        for o in written:
            if isinstance(o, SharedArray):
                o._mark()
        if out is None or method == "at":
            return result
        return out[0] if len(out) == 1 else out

    def __array_function__(self, func, types, args, kwargs):
        result = super().__array_function__(func, types, args, kwargs)
        if func in _WRITERS and args and isinstance(args[0], SharedArray):
            args[0]._mark()
        return result

    def __repr__(self):
        return repr(self.view(np.ndarray)).replace("array(", "shared_array(", 1)


def shared_view(smem, address: int, shape, dtype) -> SharedArray:
    """A ``SharedArray`` of ``shape`` elements of ``dtype`` at ``address`` (range already checked)."""
    n = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    out = smem.data[address:address + n].view(dtype).reshape(shape).view(SharedArray)
    out._smem = smem
    return out
