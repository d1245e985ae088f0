"""Kernel argument packing for ``cuLaunchKernel(Ex)``: a ``void**`` array into a reused 64-byte-aligned buffer.

Accepted arguments (one per kernel parameter, in order):

- an encoded tensor map (``CUtensorMap`` from :func:`tmakit.cuda.encode_tensormap`) or a ``tk.TensorMap`` with a
  ``global_address`` (encoded once, validated, cached): copied by value as the 128-byte, 64-byte-aligned struct;
- device pointers: torch tensors (``data_ptr()``), cupy arrays, anything with ``__cuda_array_interface__`` or
  ``__dlpack__``, :class:`DeviceBuffer`, :class:`Ptr` (a raw address), ``None`` (null);
- scalars of explicit C types: ctypes values (``ctypes.c_int32(3)``), numpy scalars (``np.float32(1)``),
  ctypes structures. Plain Python ``int``/``float``/``bool`` are refused: their C type would be a guess.
"""

from __future__ import annotations

import ctypes
import struct
import threading

__all__ = ["ArgPacker", "Ptr", "device_pointer", "pack_args"]

_SLOT = 128  # bytes per parameter slot; larger structs take several
_U64 = struct.Struct("<Q")


class Ptr(int):
    """A raw device address passed as a pointer parameter: ``Ptr(0x7f...)``."""

    __slots__ = ()


def _dlpack_pointer(obj) -> int:
    """Data pointer of a ``__dlpack__`` capsule (DLManagedTensor: data, device, ndim, dtype, shape, strides, offset)."""
    cap = obj.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    name = b"dltensor"
    try:
        p = get(cap, name)
    except ValueError:
        name = b"dltensor_versioned"
        p = get(cap, name)
    if name == b"dltensor_versioned":
        p += 8 + 8 + 8  # DLPackVersion (2 x u32), manager_ctx, deleter
    data = ctypes.c_void_p.from_address(p).value or 0
    # DLTensor: void* data; DLDevice{i32,i32}; i32 ndim; DLDataType{u8,u8,u16}; i64* shape; i64* strides; u64 offset
    offset = ctypes.c_uint64.from_address(p + 8 + 8 + 4 + 4 + 8 + 8).value
    return data + offset


def device_pointer(obj) -> int:
    """The device address of a tensor-like object (torch, cupy, ``__cuda_array_interface__``, DLPack, buffers)."""
    if obj is None:
        return 0
    if isinstance(obj, Ptr):
        return int(obj)
    ptr = getattr(obj, "data_ptr", None)
    if callable(ptr):  # torch
        return int(ptr())
    p = getattr(obj, "ptr", None)
    if isinstance(p, int):  # DeviceBuffer, cupy MemoryPointer
        return p
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        return int(cai["data"][0])
    if hasattr(obj, "__dlpack__"):
        return _dlpack_pointer(obj)
    if isinstance(obj, ctypes.c_void_p):
        return obj.value or 0
    raise TypeError(f"cannot get a device pointer from {type(obj).__name__}")


def _tensormap_types():
    from .driver import cu

    return cu().CUtensorMap


class ArgPacker:
    """Packs arguments into a reused buffer; ``pack(args)`` returns the address of the ``void*[]`` array.

    One packer per thread (see :func:`pack_args`): the driver copies the values during the launch call.
    """

    def __init__(self, max_slots: int = 64):
        self._alloc(max_slots)
        self._kinds: dict[type, str] = {}
        self._cutm = None

    def _alloc(self, n: int):
        self.max_slots = n
        self._raw = ctypes.create_string_buffer(n * _SLOT + 64)
        base = ctypes.addressof(self._raw)
        self.base = (base + 63) & ~63
        self._mv = memoryview(self._raw).cast("B")[self.base - base:]
        self._ptrs = (ctypes.c_void_p * n)()
        self.ptrs_addr = ctypes.addressof(self._ptrs)
        self._ptr_vals = [None] * n

    def _kind(self, a) -> str:
        t = type(a)
        k = self._kinds.get(t)
        if k is not None:
            return k
        if self._cutm is None:
            self._cutm = _tensormap_types()
        if t is self._cutm:
            k = "cutm"
        elif t.__name__ == "TensorMap" and hasattr(a, "global_dim"):
            k = "tkmap"
        elif t is bool or t is int or t is float:
            raise TypeError(f"plain Python {t.__name__} argument: give its C type, e.g. ctypes.c_int32(x), "
                            "ctypes.c_uint64(x), ctypes.c_float(x), numpy.float32(x), or tmakit.cuda.Ptr(addr)")
        elif isinstance(a, Ptr):
            k = "ptr"
        elif isinstance(a, (ctypes._SimpleCData, ctypes.Structure, ctypes.Union, ctypes.Array)) \
                and not isinstance(a, ctypes.c_void_p):
            k = "ctypes"
        elif t.__module__ == "numpy" and hasattr(a, "dtype") and getattr(a, "ndim", 1) == 0:
            k = "numpy"
        else:
            k = "ptr"
        self._kinds[t] = k
        return k

    def pack(self, args) -> int:
        mv, slot = self._mv, 0
        for i, a in enumerate(args):
            if slot >= self.max_slots - 1:
                raise ValueError("too many kernel arguments")
            k = self._kind(a)
            off = slot * _SLOT
            if k == "ptr":
                _U64.pack_into(mv, off, device_pointer(a))
                n = 1
            elif k == "cutm":
                ctypes.memmove(self.base + off, a.getPtr(), 128)
                n = 1
            elif k == "tkmap":
                from .encode import encode_cached

                ctypes.memmove(self.base + off, encode_cached(a).getPtr(), 128)
                n = 1
            else:
                data = bytes(a) if k == "ctypes" else a.tobytes()
                size = len(data)
                n = max(1, -(-size // _SLOT))
                if slot + n >= self.max_slots:
                    raise ValueError("kernel arguments too large")
                mv[off:off + size] = data
            addr = self.base + off
            if self._ptr_vals[i] != addr:
                self._ptrs[i] = addr
                self._ptr_vals[i] = addr
            slot += n
        return self.ptrs_addr


_tls = threading.local()


def pack_args(args) -> int:
    """Pack ``args`` with this thread's :class:`ArgPacker`; returns the ``void**`` address for the launch."""
    p = getattr(_tls, "packer", None)
    if p is None:
        p = _tls.packer = ArgPacker()
    return p.pack(args)
