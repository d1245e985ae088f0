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


_CTYPES = (ctypes._SimpleCData, ctypes.Structure, ctypes.Union, ctypes.Array)
_RAW, _DEV, _TORCH, _CUTM, _TKMAP, _BYTES = range(6)
# ctypes/numpy scalar codes that struct packs with the same native size
_STRUCT_CODES = set("bBhHiIlLqQfd?")


class ArgPacker:
    """Packs arguments into a reused buffer; ``pack(args)`` returns the address of the ``void*[]`` array.

    Parameter i lives in 128-byte slot i (64-byte aligned), so the ``void*`` array is fixed; a struct larger than
    128 bytes takes several slots and the array is rebuilt for that call. One packer per thread (:func:`pack_args`):
    the driver copies the values during the launch call.
    """

    def __init__(self, max_slots: int = 64):
        self.max_slots = max_slots
        self._raw = ctypes.create_string_buffer(max_slots * _SLOT + 64)
        base = ctypes.addressof(self._raw)
        self.base = (base + 63) & ~63
        self._mv = memoryview(self._raw).cast("B")[self.base - base:]
        self._ptrs = (ctypes.c_void_p * max_slots)(*[self.base + i * _SLOT for i in range(max_slots)])
        self.ptrs_addr = ctypes.addressof(self._ptrs)
        self._fixed = True
        self._kinds: dict[type, tuple] = {}
        self._views: dict[int, tuple] = {}

    def _classify(self, a) -> tuple:
        t = type(a)
        from .driver import cu

        if t is cu().CUtensorMap:
            k = (_CUTM, None)
        elif t.__name__ == "TensorMap" and hasattr(a, "global_dim"):
            k = (_TKMAP, None)
        elif t is bool or t is int or t is float:
            raise TypeError(f"plain Python {t.__name__} argument: give its C type, e.g. ctypes.c_int32(x), "
                            "ctypes.c_uint64(x), ctypes.c_float(x), numpy.float32(x), or tmakit.cuda.Ptr(addr)")
        elif isinstance(a, Ptr):
            k = (_RAW, None)
        elif isinstance(a, ctypes._SimpleCData) and not isinstance(a, ctypes.c_void_p) \
                and getattr(t, "_type_", None) in _STRUCT_CODES:
            k = (_BYTES, struct.Struct(t._type_), True)  # native sizes, as C
        elif isinstance(a, (ctypes.Structure, ctypes.Union, ctypes.Array, ctypes._SimpleCData)) \
                and not isinstance(a, ctypes.c_void_p):
            k = (_BYTES, None, False)
        elif t.__module__ == "numpy" and hasattr(a, "dtype") and getattr(a, "ndim", 1) == 0:
            code = a.dtype.char
            k = (_BYTES, struct.Struct(code), False) if code in _STRUCT_CODES else (_BYTES, None, False)
        elif callable(getattr(a, "data_ptr", None)):
            k = (_TORCH, None)
        else:
            device_pointer(a)  # raises TypeError for unusable objects
            k = (_DEV, None)
        self._kinds[t] = k
        return k

    def _view(self, cutm) -> memoryview:
        """A live 128-byte view of a CUtensorMap's storage (memoised per object; the object is kept alive)."""
        v = self._views.get(id(cutm))
        if v is None or v[0] is not cutm:
            if len(self._views) > 4096:
                self._views.clear()
            v = self._views[id(cutm)] = (cutm, memoryview((ctypes.c_char * 128).from_address(cutm.getPtr())).cast("B"))
        return v[1]

    def pack(self, args) -> int:
        if len(args) >= self.max_slots:
            raise ValueError(f"too many kernel arguments ({len(args)})")
        mv, kinds, views, pack_u64 = self._mv, self._kinds, self._views, _U64.pack_into
        if not self._fixed:
            self._reset_layout()
        off = 0
        for a in args:
            k = kinds.get(a.__class__) or self._classify(a)
            kind = k[0]
            if kind == _CUTM:
                v = views.get(id(a))
                mv[off:off + 128] = v[1] if v is not None and v[0] is a else self._view(a)
            elif kind == _RAW:
                pack_u64(mv, off, a)
            elif kind == _TORCH:
                pack_u64(mv, off, a.data_ptr())
            elif kind == _DEV:
                pack_u64(mv, off, device_pointer(a))
            elif kind == _TKMAP:
                from .encode import encode_cached

                mv[off:off + 128] = self._view(encode_cached(a))
            elif k[1] is not None:
                k[1].pack_into(mv, off, a.value if k[2] else a)
            else:
                data = bytes(a) if isinstance(a, _CTYPES) else a.tobytes()
                if len(data) > _SLOT:
                    return self._pack_large(args)
                mv[off:off + len(data)] = data
            off += _SLOT
        return self.ptrs_addr

    def _reset_layout(self):
        for i in range(self.max_slots):
            self._ptrs[i] = self.base + i * _SLOT
        self._fixed = True

    def _pack_large(self, args) -> int:
        """Slow path: some struct is larger than a slot; lay arguments out one after another."""
        blobs = []
        for a in args:  # first the bytes of each argument (small ones packed alone into slot 0)
            data = bytes(a) if isinstance(a, _CTYPES) else None
            if data is None or len(data) <= _SLOT:
                self._fixed = True
                self.pack([a])
                data = bytes(self._mv[0:_SLOT])
            blobs.append(data)
        slot = 0
        for i, data in enumerate(blobs):
            n = -(-len(data) // _SLOT)
            if slot + n > self.max_slots:
                raise ValueError("kernel arguments too large")
            self._mv[slot * _SLOT:slot * _SLOT + len(data)] = data
            self._ptrs[i] = self.base + slot * _SLOT
            slot += n
        self._fixed = False
        return self.ptrs_addr


_tls = threading.local()


def pack_args(args) -> int:
    """Pack ``args`` with this thread's :class:`ArgPacker`; returns the ``void**`` address for the launch."""
    p = getattr(_tls, "packer", None)
    if p is None:
        p = _tls.packer = ArgPacker()
    return p.pack(args)
