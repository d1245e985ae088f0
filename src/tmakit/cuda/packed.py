"""Fast repeated launches: a packed parameter block per launcher and thread, re-pointed in place when the addresses
change, launched with ``cuLaunchKernelEx`` through ctypes on torch's current stream.

This is the launch path of the ops (``tmakit.kernels.bandwidth``): its first launch goes through :func:`launch`
(context, shared-memory attribute, argument checks), later ones skip the bindings (a few microseconds per call).
"""

from __future__ import annotations

import ctypes
import threading

from ..tma.tensormap import TensorMap

__all__ = ["Launcher", "FixedLaunch", "MapTemplate", "launch_config", "launch_slot", "pack_args", "replace_map_address",
           "current_raw_stream"]


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



class _LaunchAttr(ctypes.Structure):
    """``CUlaunchAttribute``: an id, padding to 8 bytes, a 64-byte value union."""

    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", ctypes.c_uint32 * 16)]


class _LaunchConfig(ctypes.Structure):
    """``CUlaunchConfig`` (grid, block, dynamic smem, stream, attributes)."""

    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3), ("smem", ctypes.c_uint),
                ("stream", ctypes.c_void_p), ("attrs", ctypes.POINTER(_LaunchAttr)), ("nattrs", ctypes.c_uint)]


_CLUSTER_ATTR = 4  # CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
_PDL_ATTR = 6  # CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION


def launch_config(grid: int, block: int, smem: int, *, pdl: bool = False, cluster: int = 1) -> _LaunchConfig:
    """A 1-D ``CUlaunchConfig`` with a cluster-dimension attribute (``cluster`` > 1) and programmatic stream
    serialization allowed (``pdl``); the attribute array lives on the config object."""
    attrs = []
    if cluster > 1:
        a = _LaunchAttr()
        a.id = _CLUSTER_ATTR
        a.value[0], a.value[1], a.value[2] = cluster, 1, 1
        attrs.append(a)
    if pdl:
        a = _LaunchAttr()
        a.id = _PDL_ATTR
        a.value[0] = 1  # programmaticStreamSerializationAllowed
        attrs.append(a)
    cfg = _LaunchConfig()
    cfg.grid[:] = (grid, 1, 1)
    cfg.block[:] = (block, 1, 1)
    cfg.smem = smem
    cfg._attrs = (_LaunchAttr * max(1, len(attrs)))(*attrs)
    cfg.attrs = ctypes.cast(cfg._attrs, ctypes.POINTER(_LaunchAttr))
    cfg.nattrs = len(attrs)
    return cfg


class Launcher:
    """Everything about one (layout, dtype, op) problem that does not depend on the addresses: maps as templates,
    params, grid, kernel. ``launcher(src_ptr, dst_ptr)`` launches on torch's current stream.

    The first call goes through :mod:`tmakit.cuda` (context, smem attribute, argument checks). Later calls launch
    with ``cuLaunchKernelEx`` through ctypes from the calling thread's :class:`_Slot`: a packed parameter block that
    is re-pointed in place when the addresses change (the driver copies the parameters at launch) -- two 64-bit
    stores, or one ``cuTensorMapReplaceAddress`` per tensor map -- and a launch config whose stream is set in place
    when torch's current stream changes. Only its thread writes a slot, so a repeated call takes no lock; a call on
    tensors never seen before costs about what a repeated call does. ``FAST = False`` turns that off."""

    FAST = True
    pdl = False  # launch with programmatic stream serialization (the kernel waits in-grid)

    def __init__(self, kernel, grid, block, smem, params, maps):
        self.kernel, self.grid, self.block, self.smem, self.params, self.maps = kernel, grid, block, smem, params, maps
        self._slots: dict = {}  # thread ident -> _Slot (DynLauncher: stream -> _Slot)
        self._fn = None  # the CUfunction handle once the first, checked launch ran
        self.dev = -1  # the device of that launch: its current stream is the one launched on
        self._lock = threading.Lock()  # the first launch and slot creation
        self.kind, self.path = "", ""

    def _args(self, sp: int, dp: int) -> list:
        return [m.at(sp if is_src else dp) for m, is_src in self.maps] + [self.params]

    def _address_slots(self) -> list:
        """(argument index, is_src, byte offset, is_map) of every argument that carries an address."""
        return [(i, is_src, m.offset, True) for i, (m, is_src) in enumerate(self.maps)]

    def _pack(self, args):
        return pack_args(args)

    def __call__(self, sp: int, dp: int):
        s = self._slots.get(_get_ident())
        if s is None:
            return self._first(sp, dp, _get_ident())
        if s.go is not None:
            return s.go(sp, dp)
        if sp != s.sp or dp != s.dp:
            s.point(self, sp, dp)
        st = _stream_of(self.dev)
        if st != s.stream:
            s.cfg.stream = s.stream = st
        r = _launch_ex(s.cfg_addr, self._fn, s.params_addr, None)
        if r:
            self._failed(r, s.cfg_addr, s.params_addr)

    def _first(self, sp: int, dp: int, slot_key) -> None:
        """A launch without a slot under ``slot_key``: the checked launch (the first call, or every call with
        ``FAST = False``), else a new slot for this thread (or stream) and the launch from it."""
        with self._lock:
            if self._fn is None or not self.FAST:
                self.kernel(self.grid, self.block, *self._args(sp, dp), smem=self.smem, pdl=self.pdl)
                if self.FAST and self._fn is None:
                    self._go_fast()
                return
            if len(self._slots) >= 64:  # threads come and go: forget their slots (a live one makes a new one)
                self._slots.clear()
            s = self._slots[slot_key] = _Slot(self, sp, dp)
        launch_slot(self, s)

    def _go_fast(self) -> None:
        try:
            _bind_fast_path()
            self.dev = _current_device()
            self._fn = int(self.kernel.handle)
        except Exception:  # pragma: no cover - no libcuda / odd bindings: stay on the checked path
            self.FAST = False

    def _failed(self, r: int, cfg_addr: int, params_addr: int):
        """A failed packed launch: retried once where the thread had no current context (:func:`_retry`), else the
        driver's error, raised with the kernel's name."""
        r = _retry(r, self.dev, cfg_addr, self._fn, params_addr)
        if r:
            from .driver import check, cu

            check((cu().CUresult(r),), "cuLaunchKernelEx", kernel=str(self.kernel), grid=self.grid, smem=self.smem)


class _Slot:
    """One thread's (or stream's) packed launch of a :class:`Launcher`: the parameter block and the ``void*[]``
    over it, ``patch(sp, dp)`` that re-points the block's addresses, and a ``CUlaunchConfig`` (PDL attribute when
    the launcher has it) whose stream is set in place. ``go(sp, dp)``: for a block whose only addresses are one
    source and one destination pointer, the whole launch as one closure (see :func:`_direct_launch`), else None."""

    __slots__ = ("raw", "ptrs", "patch", "own_addr", "params_addr", "cfg", "cfg_addr", "sp", "dp", "stream", "go",
                 "blocks")

    def __init__(self, launcher: Launcher, sp: int, dp: int):
        self.raw, self.ptrs = launcher._pack(launcher._args(sp, dp))
        self.own_addr = self.params_addr = ctypes.addressof(self.ptrs)
        self.patch, words = _patcher(self.ptrs, launcher._address_slots())
        self.cfg = launch_config(launcher.grid, launcher.block, launcher.smem, pdl=launcher.pdl)
        self.cfg_addr = ctypes.addressof(self.cfg)
        self.sp, self.dp, self.stream = sp, dp, None
        self.go = _direct_launch(launcher, self, *words) if words and launcher._fn is not None else None
        self.blocks = {} if launcher.maps else None  # (sp, dp) -> (address, block packed for them)

    def repoint(self, sp: int, dp: int) -> None:
        """Patch the slot's own block's addresses to (sp, dp) and launch from it."""
        self.sp = None  # until every address is patched: a failure leaves it to be re-pointed completely next time
        self.patch(sp, dp)
        self.params_addr = self.own_addr
        self.sp, self.dp = sp, dp

    def point(self, launcher: Launcher, sp: int, dp: int) -> None:
        """Launch from a block for (sp, dp). With tensor maps, re-pointing costs a ``cuTensorMapReplaceAddress``
        per map (about 0.3 µs each), and inputs that rotate among a few tensors (a caching allocator hands the same
        addresses out again) come back to the same pairs: the first :data:`MAX_BLOCKS` pairs each get a block of
        their own, packed once (the driver copies the parameters at launch, so a block can be launched again);
        further pairs re-point the slot's own block. Without maps (a few word stores), always the own block."""
        known = self.blocks.get((sp, dp)) if self.blocks is not None else None
        if known is None:
            if self.blocks is None or len(self.blocks) >= MAX_BLOCKS:
                return self.repoint(sp, dp)
            self.sp = None
            blk = launcher._pack(launcher._args(sp, dp))
            known = self.blocks[(sp, dp)] = (ctypes.addressof(blk[1]), blk)
        self.params_addr = known[0]
        self.sp, self.dp = sp, dp


def _direct_launch(launcher: Launcher, s: _Slot, words, i: int, j: int):
    """``go(sp, dp)``: store the two addresses (two words: cheaper than comparing them with the last call's, and
    rotating buffers change them on every call), set the stream in place when torch's current stream changed,
    ``cuLaunchKernelEx``. Everything it touches is bound in the closure: no attribute lookups per launch. The slot's
    ``sp``/``dp`` then no longer describe the block; only this closure launches it."""
    cfg, cfg_addr, params_addr, fn, dev = s.cfg, s.cfg_addr, s.params_addr, launcher._fn, launcher.dev
    stream_of, launch_ex = _stream_of, _launch_ex

    def go(sp: int, dp: int) -> None:
        words[i] = sp
        words[j] = dp
        st = stream_of(dev)
        if st != s.stream:
            cfg.stream = s.stream = st
        r = launch_ex(cfg_addr, fn, params_addr, None)
        if r:
            launcher._failed(r, cfg_addr, params_addr)

    return go


def _patcher(ptrs, address_slots):
    """``(patch, words)``: ``patch(sp, dp)`` writing the source/destination addresses into a packed block -- two
    word stores for a launcher whose only addresses are one source and one destination pointer (the bulk kernels;
    ``words`` is then ``(block words, source index, destination index)``, else ``()``), otherwise a store per
    pointer and a ``cuTensorMapReplaceAddress`` per tensor map."""
    base = ptrs[0] if len(ptrs) else 0
    words = (ctypes.c_uint64 * (16 * len(ptrs))).from_address(base) if base else None
    plain = [((ptrs[i] - base) // 8, is_src, off) for i, is_src, off, is_map in address_slots if not is_map]
    maps = [(ptrs[i], is_src, off) for i, is_src, off, is_map in address_slots if is_map]
    if not maps and len(plain) == 2 and plain[0][1:] == (True, 0) and plain[1][1:] == (False, 0):
        i, j = plain[0][0], plain[1][0]

        def patch(sp: int, dp: int) -> None:
            words[i] = sp
            words[j] = dp

        return patch, (words, i, j)

    def patch(sp: int, dp: int) -> None:
        for w, is_src, off in plain:
            words[w] = (sp if is_src else dp) + off
        for slot, is_src, off in maps:
            replace_map_address(slot, (sp if is_src else dp) + off)

    return patch, ()


def launch_slot(launcher: Launcher, s: _Slot) -> None:
    """Launch ``s`` (already pointed at its addresses) on the launcher's device's current stream. (``Launcher.__call__``
    inlines these lines: one Python call less on every cached launch.)"""
    st = _stream_of(launcher.dev)
    if st != s.stream:
        s.cfg.stream = s.stream = st
    r = _launch_ex(s.cfg_addr, launcher._fn, s.params_addr, None)
    if r:
        launcher._failed(r, s.cfg_addr, s.params_addr)


_INVALID_CONTEXT = 201  # CUDA_ERROR_INVALID_CONTEXT


def _thread_context(dev: int) -> None:
    """Make device ``dev``'s primary context current on this thread (``driver.ensure_context``)."""
    from .driver import ensure_context

    ensure_context(dev if dev >= 0 else None)


def _retry(r: int, dev: int, cfg_addr: int, fn: int, params_addr: int, launch=None) -> int:
    """The result of a packed launch that returned ``r``, launched again once (with ``launch``, default the bound
    ``cuLaunchKernelEx``) if ``r`` says the calling thread has no current context: a thread where nothing has touched
    CUDA yet (autograd's device thread running a backward, a new thread that got a finished one's identity and with
    it that thread's slot) has none. ``dev`` < 0: torch's current device. Costs nothing on a launch that succeeds."""
    if r != _INVALID_CONTEXT:
        return r
    _thread_context(dev)
    return (launch or _launch_ex)(cfg_addr, fn, params_addr, None)


_get_ident = threading.get_ident
#: address pairs per slot of a launcher with tensor maps that get a parameter block of their own (see _Slot.point)
MAX_BLOCKS = 64
_launch_ex = _stream_of = _current_device = None  # bound by _bind_fast_path (libcuda and torch, on first use)


def _bind_fast_path() -> None:
    """Bind the hot path's callables: ``cuLaunchKernelEx`` through ctypes with integer arguments (the cheapest
    ctypes call: no argument objects), torch's raw current stream of a device, torch's current device."""
    global _launch_ex, _stream_of, _current_device
    if _launch_ex is None:
        import torch

        f = ctypes.CDLL("libcuda.so.1").cuLaunchKernelEx
        f.argtypes = [ctypes.c_void_p] * 4
        f.restype = ctypes.c_int
        _stream_of = torch._C._cuda_getCurrentRawStream
        _current_device = torch._C._cuda_getDevice
        _launch_ex = f


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


class FixedLaunch:
    """One kernel launch whose arguments never change (the GEMM's per-pointer launchers): packed once, launched with
    ``cuLaunchKernelEx`` through ctypes on the current stream of the device of the first launch (which went through
    :func:`tmakit.cuda.launch`: context, shared-memory attribute, checks), with its cluster and PDL attributes. Each
    thread launches from its own copy of the config (its stream set in place): no lock."""

    def __init__(self, kernel, grid: int, block: int, smem: int, args, cluster: int = 1, pdl: bool = False):
        _bind_fast_path()
        self._blk = pack_args(args)
        self._params = ctypes.addressof(self._blk[1])
        self._shape = (grid, block, smem, pdl, cluster)
        self._cfgs: dict = {}  # thread ident -> [config, its address, its stream]
        self._fn, self._name, self.dev = int(kernel.handle), str(kernel), _current_device()

    def __call__(self) -> None:
        c = self._cfgs.get(_get_ident())
        if c is None:
            c = self._new_config()
        st = _stream_of(self.dev)
        if st != c[2]:
            c[0].stream = c[2] = st
        r = _launch_ex(c[1], self._fn, self._params, None)
        if r:
            r = _retry(r, self.dev, c[1], self._fn, self._params)
        if r:
            from .driver import check, cu

            check((cu().CUresult(r),), "cuLaunchKernelEx", kernel=self._name, grid=self._shape[0])

    def set_u64(self, i: int, value: int) -> None:
        """Store ``value`` as argument ``i`` (a 64-bit integer or pointer) for the launches that follow (callers
        give each thread its own FixedLaunch when the value differs per call)."""
        ctypes.c_uint64.from_address(self._blk[1][i]).value = value

    def _new_config(self) -> list:
        grid, block, smem, pdl, cluster = self._shape
        cfg = launch_config(grid, block, smem, pdl=pdl, cluster=cluster)
        if len(self._cfgs) >= 64:  # threads come and go
            self._cfgs.clear()
        c = self._cfgs[_get_ident()] = [cfg, ctypes.addressof(cfg), None]
        return c


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


def current_raw_stream() -> int:
    """torch's current stream on the current device, as a raw handle."""
    _bind_fast_path()
    return _stream_of(_current_device())
