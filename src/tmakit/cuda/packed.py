"""Fast repeated launches: one packed parameter block per launcher, re-pointed in place when the addresses change,
launched with ``cuLaunchKernel(Ex)`` through ctypes on torch's current stream, under the launcher's lock.

This is the launch path of the ops (``tmakit.kernels.bandwidth``): its first launch goes through :func:`launch`
(context, shared-memory attribute, argument checks), later ones skip the bindings (a few microseconds per call).
"""

from __future__ import annotations

import ctypes
import threading

from ..tma.tensormap import TensorMap

__all__ = ["Launcher", "FixedLaunch", "MapTemplate", "pack_args", "replace_map_address", "current_raw_stream"]


class MapTemplate:
    """A validated, encoded tensor map that is re-pointed per address (``cuTensorMapReplaceAddress``): the geometry
    is checked and encoded once. (A private helper: tmakit.cuda's ``encode_cached`` keys on the address, which
    changes with every new tensor; launchers re-point their packed copy of the map in place, see :class:`Launcher`.)"""

    def __init__(self, tm: TensorMap, offset: int = 0):
        from .driver import cu
        from .encode import encode_tensormap

        self.tm, self.offset = tm, offset
        self._d = cu()
        self._tmpl = encode_tensormap(tm)
        self._base = tm.global_address - offset

    def at(self, base: int):
        """The map over the tensor at ``base`` (a new ``CUtensorMap`` unless it is the template's own address)."""
        if base == self._base:
            return self._tmpl
        m = self._d.CUtensorMap()
        ctypes.memmove(m.getPtr(), self._tmpl.getPtr(), 128)
        replace_map_address(m.getPtr(), base + self.offset)
        return m



_cu_launch_kernel = None


def _raw_launch():
    """``cuLaunchKernel`` from libcuda through ctypes (a few microseconds less per call than the bindings)."""
    global _cu_launch_kernel
    if _cu_launch_kernel is None:
        f = ctypes.CDLL("libcuda.so.1").cuLaunchKernel
        u = ctypes.c_uint
        f.argtypes = [ctypes.c_void_p, u, u, u, u, u, u, u, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        f.restype = ctypes.c_int
        _cu_launch_kernel = f
    return _cu_launch_kernel


class _LaunchAttr(ctypes.Structure):
    """``CUlaunchAttribute``: an id, padding to 8 bytes, a 64-byte value union."""

    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", ctypes.c_uint32 * 16)]


class _LaunchConfig(ctypes.Structure):
    """``CUlaunchConfig`` (grid, block, dynamic smem, stream, attributes)."""

    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3), ("smem", ctypes.c_uint),
                ("stream", ctypes.c_void_p), ("attrs", ctypes.POINTER(_LaunchAttr)), ("nattrs", ctypes.c_uint)]


_PDL_ATTR = 6  # CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
_cu_launch_kernel_ex = None


def _raw_launch_ex():
    """``cuLaunchKernelEx`` from libcuda through ctypes (launches with attributes, e.g. programmatic dependent
    launch, at ``cuLaunchKernel``'s host cost)."""
    global _cu_launch_kernel_ex
    if _cu_launch_kernel_ex is None:
        f = ctypes.CDLL("libcuda.so.1").cuLaunchKernelEx
        f.argtypes = [ctypes.POINTER(_LaunchConfig), ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        f.restype = ctypes.c_int
        _cu_launch_kernel_ex = f
    return _cu_launch_kernel_ex


def _pdl_config(grid: int, block: int, smem: int) -> _LaunchConfig:
    """A 1-D launch config with programmatic stream serialization allowed (the attribute array lives on the
    config object)."""
    attr = _LaunchAttr()
    attr.id = _PDL_ATTR
    attr.value[0] = 1  # programmaticStreamSerializationAllowed
    cfg = _LaunchConfig()
    cfg.grid[:] = (grid, 1, 1)
    cfg.block[:] = (block, 1, 1)
    cfg.smem = smem
    cfg._attr = attr
    cfg.attrs = ctypes.pointer(attr)
    cfg.nattrs = 1
    return cfg



class Launcher:
    """Everything about one (layout, dtype, op) problem that does not depend on the addresses: maps as templates,
    params, grid, kernel. ``launcher(src_ptr, dst_ptr)`` launches on torch's current stream.

    The first call goes through :mod:`tmakit.cuda` (context, smem attribute, argument checks). Later calls launch
    with ``cuLaunchKernel`` through ctypes from one packed parameter block that is re-pointed in place when the
    addresses change (the driver copies the parameters at launch): two 64-bit stores, or one
    ``cuTensorMapReplaceAddress`` per tensor map, so a call on tensors never seen before costs about what a repeated
    call does. ``FAST = False`` turns that off."""

    FAST = True
    pdl = False  # launch with programmatic stream serialization (cuLaunchKernelEx; the kernel waits in-grid)

    def __init__(self, kernel, grid, block, smem, params, maps):
        self.kernel, self.grid, self.block, self.smem, self.params, self.maps = kernel, grid, block, smem, params, maps
        self._blk = None  # (raw buffer, void*[] over its slots, [(slot address, is_src, offset, is_map)])
        self._cur = None  # the (src, dst) addresses the block holds
        self._fn = self._launch = self._cfg = None
        self._lock = threading.Lock()  # ctypes releases the GIL in the driver calls: threads share this launcher
        self.kind, self.path = "", ""

    def _args(self, sp: int, dp: int) -> list:
        return [m.at(sp if is_src else dp) for m, is_src in self.maps] + [self.params]

    def _address_slots(self) -> list:
        """(argument index, is_src, byte offset, is_map) of every argument that carries an address."""
        return [(i, is_src, m.offset, True) for i, (m, is_src) in enumerate(self.maps)]

    def _pack(self, args):
        return pack_args(args)

    def _build(self, sp: int, dp: int) -> None:
        raw, ptrs = self._pack(self._args(sp, dp))
        slots = [(ptrs[i], is_src, off, is_map) for i, is_src, off, is_map in self._address_slots()]
        self._blk, self._cur = (raw, ptrs, slots), (sp, dp)

    def _repoint(self, sp: int, dp: int) -> None:
        """Patch the packed block's addresses to (sp, dp)."""
        self._cur = None  # until every slot is patched: a failure leaves it to be re-pointed completely next time
        for slot, is_src, off, is_map in self._blk[2]:
            a = (sp if is_src else dp) + off
            if is_map:
                replace_map_address(slot, a)
            else:
                ctypes.c_uint64.from_address(slot).value = a
        self._cur = (sp, dp)

    def __call__(self, sp: int, dp: int):
        with self._lock:  # the packed block (and the PDL config's stream) are shared: patch and launch as one step
            self._call(sp, dp)

    def _call(self, sp: int, dp: int):
        """The launch itself; the caller holds ``self._lock``."""
        if self._fn is not None and self.FAST:
            if self._blk is None:
                self._build(sp, dp)
            elif self._cur != (sp, dp):
                self._repoint(sp, dp)
            blk = self._blk
            if self.pdl:
                cfg = self._cfg
                cfg.stream = current_raw_stream()
                r = self._launch(ctypes.byref(cfg), self._fn, blk[1], None)
            else:
                r = self._launch(self._fn, self.grid, 1, 1, self.block, 1, 1, self.smem, current_raw_stream(), blk[1],
                                 None)
            if r != 0:
                from .driver import check, cu

                check((cu().CUresult(r),), "cuLaunchKernelEx" if self.pdl else "cuLaunchKernel",
                      kernel=str(self.kernel), grid=self.grid, smem=self.smem)
            return
        self.kernel(self.grid, self.block, *self._args(sp, dp), smem=self.smem, pdl=self.pdl)
        if self.FAST and self._fn is None:
            try:
                self._launch = _raw_launch_ex() if self.pdl else _raw_launch()
                if self.pdl:
                    self._cfg = _pdl_config(self.grid, self.block, self.smem)
                _replace_address()
                self._fn = int(self.kernel.handle)
            except Exception:  # pragma: no cover - no libcuda / odd bindings: stay on the slow path
                self.FAST = False



def pack_args(args):
    """A 128-byte slot per argument (64-byte aligned) and the ``void*[]`` over them; kept alive together. Arguments:
    Python ints (64-bit), ctypes scalars and structures, encoded ``CUtensorMap`` objects."""
    raw = ctypes.create_string_buffer(128 * len(args) + 64)
    base = (ctypes.addressof(raw) + 63) & ~63
    for i, a in enumerate(args):
        if isinstance(a, int):
            ctypes.c_uint64.from_address(base + 128 * i).value = a
        elif isinstance(a, (ctypes.Structure, ctypes._SimpleCData)):
            ctypes.memmove(base + 128 * i, ctypes.addressof(a), ctypes.sizeof(a))
        else:  # CUtensorMap
            ctypes.memmove(base + 128 * i, a.getPtr(), 128)
    ptrs = (ctypes.c_void_p * len(args))(*[base + 128 * i for i in range(len(args))])
    return raw, ptrs


_CLUSTER_ATTR = 4  # CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION


class FixedLaunch:
    """One kernel launch whose arguments never change (the GEMM's per-pointer launchers): packed once, launched with
    ``cuLaunchKernelEx`` through ctypes on a given stream, with the cluster and PDL attributes of the first launch,
    which went through :func:`tmakit.cuda.launch` (context, shared-memory attribute, checks). Thread-safe: the
    config's stream is set and launched under a lock."""

    def __init__(self, kernel, grid: int, block: int, smem: int, args, cluster: int = 1, pdl: bool = False):
        self._blk = pack_args(args)
        attrs = []
        if cluster > 1:
            a = _LaunchAttr()
            a.id = _CLUSTER_ATTR
            a.value[0], a.value[1], a.value[2] = cluster, 1, 1
            attrs.append(a)
        if pdl:
            a = _LaunchAttr()
            a.id = _PDL_ATTR
            a.value[0] = 1
            attrs.append(a)
        cfg = _LaunchConfig()
        cfg.grid[:] = (grid, 1, 1)
        cfg.block[:] = (block, 1, 1)
        cfg.smem = smem
        self._attrs = (_LaunchAttr * max(1, len(attrs)))(*attrs)
        cfg.attrs = ctypes.cast(self._attrs, ctypes.POINTER(_LaunchAttr))
        cfg.nattrs = len(attrs)
        self._cfg, self._fn, self._name = cfg, int(kernel.handle), str(kernel)
        self._launch = _raw_launch_ex()
        self._lock = threading.Lock()

    def __call__(self, stream: int) -> None:
        with self._lock:
            self._cfg.stream = stream
            r = self._launch(ctypes.byref(self._cfg), self._fn, self._blk[1], None)
        if r != 0:
            from .driver import check, cu

            check((cu().CUresult(r),), "cuLaunchKernelEx", kernel=self._name, grid=tuple(self._cfg.grid))


_cu_replace_address = None


def _replace_address():
    """``cuTensorMapReplaceAddress`` from libcuda through ctypes (re-points a packed map in place)."""
    global _cu_replace_address
    if _cu_replace_address is None:
        f = ctypes.CDLL("libcuda.so.1").cuTensorMapReplaceAddress
        f.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        f.restype = ctypes.c_int
        _cu_replace_address = f
    return _cu_replace_address


def replace_map_address(ptr: int, address: int) -> None:
    """Re-point the encoded ``CUtensorMap`` at host address ``ptr`` to the global ``address``."""
    r = _replace_address()(ptr, address)
    if r != 0:
        from .driver import check, cu

        check((cu().CUresult(r),), "cuTensorMapReplaceAddress", address=hex(address))


_stream_fn = None


def current_raw_stream() -> int:
    """torch's current stream on the current device, as a raw handle (``_cuda_getCurrentRawStream`` when torch has
    it: a few microseconds less than ``torch.cuda.current_stream().cuda_stream``)."""
    global _stream_fn
    f = _stream_fn
    if f is None:
        import torch

        raw, dev = getattr(torch._C, "_cuda_getCurrentRawStream", None), getattr(torch._C, "_cuda_getDevice", None)
        if raw is not None and dev is not None:
            f = _stream_fn = lambda: raw(dev())
        else:  # pragma: no cover - older torch
            f = _stream_fn = lambda: torch.cuda.current_stream().cuda_stream
    return f()
