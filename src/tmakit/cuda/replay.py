"""Record a library call's kernel launches and launch them again, re-pointed at other addresses.

A library such as cuBLAS spends most of a small call's host time deciding what to launch; the launches themselves
are one ``cuLaunchKernelEx`` each. :func:`record` captures the call into a CUDA graph on a side stream (nothing
runs) once as given and once per address argument with that address moved, reads each kernel node (function, grid,
block, shared memory, cluster shape, parameter bytes), and explains every byte that differs between a recording and
the base as the moved address (plus a constant) in a 64-bit word or in a tensor map (``cuTensorMapReplaceAddress``).
Each explanation is checked by rebuilding that recording from the base. A call that records anything else (a node
that is not a kernel, kernels not in one chain, a parameter that depends on an address in another way) is not
replayed: :func:`record` returns None. A replay launches the same kernels with the parameters the library would
have passed for those addresses, on the caller's stream.
"""

from __future__ import annotations

import ctypes

from .packed import _CLUSTER_ATTR, _PDL_ATTR, _LaunchAttr, _LaunchConfig, _retry, replace_map_address

__all__ = ["RecordedLaunch", "device_address", "other_addresses", "record"]

_KERNEL_NODE = 0  # CU_GRAPH_NODE_TYPE_KERNEL
_CAPTURE_THREAD_LOCAL = 1  # CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
_MAX_PARAMS = 4096
_MAX_NODES = 8
_EDGE_PROGRAMMATIC = 1  # CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC
_PORT_PROGRAMMATIC = 1  # CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC


class _NodeParams(ctypes.Structure):
    """``CUDA_KERNEL_NODE_PARAMS_v2``."""

    _fields_ = [("func", ctypes.c_void_p), ("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                ("smem", ctypes.c_uint), ("params", ctypes.c_void_p), ("extra", ctypes.c_void_p),
                ("kern", ctypes.c_void_p), ("ctx", ctypes.c_void_p)]


_cu = None


def _driver():
    """libcuda's entry points used here, declared once."""
    global _cu
    if _cu is None:
        lib = ctypes.CDLL("libcuda.so.1")
        vp, sz = ctypes.c_void_p, ctypes.c_size_t
        for name, args in (("cuStreamBeginCapture_v2", [vp, ctypes.c_int]), ("cuStreamEndCapture", [vp, vp]),
                           ("cuGraphGetNodes", [vp, vp, vp]), ("cuGraphGetEdges_v2", [vp, vp, vp, vp, vp]),
                           ("cuGraphNodeGetType", [vp, vp]),
                           ("cuGraphKernelNodeGetParams_v2", [vp, vp]),
                           ("cuGraphKernelNodeGetAttribute", [vp, ctypes.c_int, vp]),
                           ("cuFuncGetParamInfo", [vp, sz, vp, vp]), ("cuKernelGetParamInfo", [vp, sz, vp, vp]),
                           ("cuGraphDestroy", [vp]), ("cuLaunchKernelEx", [vp] * 4),
                           ("cuPointerGetAttribute", [vp, ctypes.c_int, vp])):
            f = getattr(lib, name)
            f.argtypes, f.restype = args, ctypes.c_int
        _cu = lib
    return _cu


_PARAM_END, _PARAM_BUFFER, _PARAM_SIZE = 0, 1, 2  # CU_LAUNCH_PARAM_END / _BUFFER_POINTER / _BUFFER_SIZE


def _extra_buffer(extra):
    """(address, size) of the parameter buffer an ``extra`` array passes, or None."""
    if not extra:
        return None
    words = ctypes.cast(extra, ctypes.POINTER(ctypes.c_void_p))
    got = {}
    for i in range(0, 16, 2):
        key = words[i] or _PARAM_END
        if key == _PARAM_END:
            break
        got[key] = words[i + 1]
    if _PARAM_BUFFER not in got or _PARAM_SIZE not in got:
        return None
    return got[_PARAM_BUFFER], ctypes.c_size_t.from_address(got[_PARAM_SIZE]).value


class _Recording:
    """What one capture launched: function, grid, block, smem, cluster, each parameter's (offset, bytes), and
    whether it was a programmatic dependent launch."""

    def __init__(self, func, grid, block, smem, cluster, params, early: bool = False):
        self.func, self.grid, self.block, self.smem, self.cluster, self.params = \
            func, grid, block, smem, cluster, params
        self.early = early

    def shape(self):
        return (self.func, self.grid, self.block, self.smem, self.cluster, self.early,
                [(o, len(b)) for o, b in self.params])


def _capture(issue, stream: int, ptrs):
    """Capture ``issue(stream, *ptrs)`` on ``stream``: the :class:`_Recording` of each kernel node in dependency
    order, or None (a node that is not a kernel, dependencies that are not one chain, a driver error)."""
    cu = _driver()
    if cu.cuStreamBeginCapture_v2(stream, _CAPTURE_THREAD_LOCAL):
        return None
    graph = ctypes.c_void_p()
    try:
        issue(stream, *ptrs)
        failed = False
    except Exception:  # noqa: BLE001 - the library refused the call under capture: it is not recorded
        failed = True
    r = cu.cuStreamEndCapture(stream, ctypes.byref(graph))
    if failed or r or not graph.value:
        if graph.value:
            cu.cuGraphDestroy(graph)
        return None
    try:
        chain = _chain(cu, graph)
        recs = [_read_node(cu, node, early) for node, early in chain or ()]
        return recs if recs and all(recs) else None
    finally:
        cu.cuGraphDestroy(graph)


def _chain(cu, graph):
    """[(node, early)] in order when the graph's nodes form one chain (each depends on the one before), else None.
    ``early``: the edge into the node is programmatic from the previous kernel's trigger port, i.e. the library
    launched it with programmatic dependent launch (the kernel waits in-grid for its predecessor); a replay launches
    such a kernel with that attribute, every other one fully serialized after its predecessor (stricter than any
    edge, so never less correct)."""
    n = ctypes.c_size_t(0)
    if cu.cuGraphGetNodes(graph, None, ctypes.byref(n)) or not 1 <= n.value <= _MAX_NODES:
        return None
    nodes = (ctypes.c_void_p * n.value)()
    if cu.cuGraphGetNodes(graph, nodes, ctypes.byref(n)):
        return None
    e = ctypes.c_size_t(0)
    if cu.cuGraphGetEdges_v2(graph, None, None, None, ctypes.byref(e)) or e.value != n.value - 1:
        return None
    src, dst = (ctypes.c_void_p * max(1, e.value))(), (ctypes.c_void_p * max(1, e.value))()
    data = (ctypes.c_uint8 * (8 * max(1, e.value)))()  # CUgraphEdgeData: a programmatic (PDL) edge is still an edge
    if e.value and cu.cuGraphGetEdges_v2(graph, src, dst, data, ctypes.byref(e)):
        return None
    after = dict(zip(src[:e.value], dst[:e.value]))
    early = {dst[i] for i in range(e.value)
             if data[8 * i + 2] == _EDGE_PROGRAMMATIC and data[8 * i] == _PORT_PROGRAMMATIC}
    heads = set(nodes) - set(dst[:e.value])
    if len(after) != e.value or len(heads) != 1:
        return None
    order = [heads.pop()]
    while order[-1] in after:
        order.append(after[order[-1]])
    return [(x, x in early) for x in order] if len(order) == n.value else None


def _read_node(cu, node, early: bool = False):
    """The :class:`_Recording` of one kernel node (``early``: launched with programmatic dependent launch), or
    None."""
    kind = ctypes.c_int(-1)
    if cu.cuGraphNodeGetType(node, ctypes.byref(kind)) or kind.value != _KERNEL_NODE:
        return None
    p = _NodeParams()
    if cu.cuGraphKernelNodeGetParams_v2(node, ctypes.byref(p)):
        return None
    attr = (ctypes.c_uint32 * 16)()  # CUlaunchAttributeValue
    cluster = (1, 1, 1)
    if cu.cuGraphKernelNodeGetAttribute(node, _CLUSTER_ATTR, ctypes.byref(attr)) == 0:
        cluster = tuple(max(1, int(w)) for w in attr[:3])
    func = p.func or p.kern
    info = cu.cuFuncGetParamInfo if p.func else cu.cuKernelGetParamInfo
    layout = []
    off, size = ctypes.c_size_t(), ctypes.c_size_t()
    for i in range(_MAX_PARAMS):
        if info(func, i, ctypes.byref(off), ctypes.byref(size)):
            break
        layout.append((off.value, size.value))
    else:
        return None
    if p.params:  # kernelParams: one host pointer per parameter
        ptrs = ctypes.cast(p.params, ctypes.POINTER(ctypes.c_void_p))
        params = [(o, ctypes.string_at(ptrs[i], n)) for i, (o, n) in enumerate(layout)]
    else:  # extra: one buffer in the device-side layout
        buf = _extra_buffer(p.extra)
        if buf is None or (layout and layout[-1][0] + layout[-1][1] > buf[1]):
            return None
        params = [(o, ctypes.string_at(buf[0] + o, n)) for o, n in layout]
    return _Recording(func, tuple(p.grid), tuple(p.block), p.smem, cluster, params, early)


def _explain(r1: _Recording, r2: _Recording, p1: int, p2: int):
    """The patches [(param, byte offset, constant, is_map)] that turn kernel recording 1 (an address at ``p1``) into
    recording 2 (at ``p2``), or None when a difference is not that address."""
    patches = []
    for i, ((_, b1), (_, b2)) in enumerate(zip(r1.params, r2.params)):
        done = set()
        for o in range(0, len(b1) - 7, 8):
            w1, w2 = int.from_bytes(b1[o:o + 8], "little"), int.from_bytes(b2[o:o + 8], "little")
            if w1 != w2 and w1 - p1 == w2 - p2 and 0 <= w1 - p1 < 1 << 40:
                patches.append((i, o, w1 - p1, False))
                done.update(range(o, o + 8))
        rest = [j for j in range(len(b1)) if b1[j] != b2[j] and j not in done]
        while rest:  # a difference no word explains: a tensor map over the address (64-byte aligned, 128 bytes)
            o = rest[0] // 64 * 64
            if o + 128 > len(b1):
                return None
            patches.append((i, o, 0, True))
            rest = [j for j in rest if j >= o + 128]
    return patches


class _Kernel:
    """One recorded kernel, packed for ``cuLaunchKernelEx``: the parameter block in the device-side layout, the
    ``void*[]`` over it, the launch config (with the cluster attribute when the kernel had one), and per address
    slot the places that hold it."""

    def __init__(self, rec: _Recording):
        size = max((o + len(b) for o, b in rec.params), default=0)
        self.blob = ctypes.create_string_buffer(size + 128)
        self.base = base = (ctypes.addressof(self.blob) + 127) & ~127
        self.offsets = [o for o, _ in rec.params]
        for o, b in rec.params:
            ctypes.memmove(base + o, b, len(b))
        self.ptrs = (ctypes.c_void_p * max(1, len(rec.params)))(*[base + o for o in self.offsets])
        self.patches: list = []  # per address slot: [(param, offset, constant, is_map)]
        self.func, self.grid, self.rec = rec.func, rec.grid, rec
        self.attrs = attrs = (_LaunchAttr * 2)()
        cfg = self.cfg = _LaunchConfig()
        cfg.grid[:], cfg.block[:], cfg.smem = rec.grid, rec.block, rec.smem
        n = 0
        if rec.cluster != (1, 1, 1):
            attrs[n].id = _CLUSTER_ATTR
            attrs[n].value[:3] = rec.cluster
            n += 1
        if rec.early:
            attrs[n].id = _PDL_ATTR
            attrs[n].value[0] = 1  # programmaticStreamSerializationAllowed
            n += 1
        cfg.attrs, cfg.nattrs = ctypes.cast(attrs, ctypes.POINTER(_LaunchAttr)), n
        self.cfg_addr, self.params_addr = ctypes.addressof(cfg), ctypes.addressof(self.ptrs)

    def copy(self) -> _Kernel:
        k = _Kernel(self.rec)
        k.patches = self.patches
        ctypes.memmove(k.base, self.base, len(self.blob) - 128)
        return k

    def point(self, slot: int, ptr: int) -> None:
        """Patch address ``slot``'s value ``ptr`` into the parameter block."""
        for i, o, c, is_map in self.patches[slot]:
            at = self.base + self.offsets[i] + o
            if is_map:
                replace_map_address(at, ptr + c)
            else:
                ctypes.c_uint64.from_address(at).value = ptr + c

    def matches(self, rec: _Recording) -> bool:
        return all(ctypes.string_at(self.base + o, len(b)) == b for o, b in rec.params)


class RecordedLaunch:
    """A recorded library call: ``__call__(stream, *ptrs)`` launches its kernels in order with the address slots
    re-pointed to ``ptrs`` (the parameter blocks are patched only where an address changed). The blocks are patched
    in place: use one per thread (:meth:`copy`)."""

    def __init__(self, kernels, ptrs):
        self.kernels, self.ptrs = kernels, tuple(ptrs)
        self._launch = _driver().cuLaunchKernelEx

    def copy(self) -> RecordedLaunch:
        return RecordedLaunch([k.copy() for k in self.kernels], self.ptrs)

    def __call__(self, stream: int, *ptrs) -> None:
        if ptrs != self.ptrs:
            old, self.ptrs = self.ptrs, ()  # a failed patch leaves the blocks to be patched again
            for j, (was, now) in enumerate(zip(old, ptrs)):
                if was != now:
                    for k in self.kernels:
                        k.point(j, now)
            self.ptrs = ptrs
        for k in self.kernels:
            k.cfg.stream = stream
            r = self._launch(k.cfg_addr, k.func, k.params_addr, None)
            if r:
                r = _retry(r, -1, k.cfg_addr, k.func, k.params_addr, self._launch)
            if r:
                from .driver import check, cu

                check((cu().CUresult(r),), "cuLaunchKernelEx", kernel="recorded library kernel", grid=k.grid)


def other_addresses(rec: RecordedLaunch, is_address) -> list[int]:
    """The 64-bit parameter words of ``rec``'s kernels, outside the patched address slots and tensor maps, for which
    ``is_address(word)`` holds: addresses the recording would keep whatever the call's own addresses are (a
    library's workspace, say), which make it unsafe to replay on other streams or after the library freed them."""
    found = []
    for k in rec.kernels:
        skip = {}
        for slot in k.patches:
            for i, o, _, is_map in slot:
                skip.setdefault(i, set()).update(range(o, o + (128 if is_map else 8)))
        for i, (_, b) in enumerate(k.rec.params):
            for o in range(0, len(b) - 7, 8):
                if o in skip.get(i, ()):
                    continue
                w = int.from_bytes(b[o:o + 8], "little")
                if w >> 16 and is_address(w):
                    found.append(w)
    return found


def device_address(value: int) -> bool:
    """Whether ``value`` lies in memory the driver knows (``cuPointerGetAttribute`` of its memory type succeeds)."""
    cu = _driver()
    kind = ctypes.c_uint(0)
    return cu.cuPointerGetAttribute(ctypes.byref(kind), _POINTER_MEMORY_TYPE, ctypes.c_void_p(value)) == 0


_POINTER_MEMORY_TYPE = 2  # CU_POINTER_ATTRIBUTE_MEMORY_TYPE


def record(issue, stream: int, ptrs, alternates) -> RecordedLaunch | None:
    """Record ``issue(stream, *ptrs)`` -- a call that enqueues a chain of kernels over the addresses ``ptrs`` -- on
    ``stream`` (an idle side stream, not being captured; nothing runs), once as given and once per address with
    that address replaced by its entry of ``alternates`` (equally aligned; never dereferenced). Returns the
    :class:`RecordedLaunch` pointed at ``ptrs``, or None when the call is not a chain of kernel launches whose
    parameters differ only by those addresses."""
    base = _capture(issue, stream, tuple(ptrs))
    if base is None:
        return None
    kernels = [_Kernel(r) for r in base]
    for j, alt in enumerate(alternates):
        moved = tuple(alt if i == j else p for i, p in enumerate(ptrs))
        recs = _capture(issue, stream, moved)
        if recs is None or len(recs) != len(base):
            return None
        for k, r0, r1 in zip(kernels, base, recs):
            if r0.shape() != r1.shape():
                return None
            patches = _explain(r0, r1, ptrs[j], alt)
            if patches is None:
                return None
            k.patches.append(patches)
            k.point(j, alt)  # the explanation must rebuild this recording exactly
            ok = k.matches(r1)
            k.point(j, ptrs[j])
            if not ok:
                return None
    if not all(k.matches(r) for k, r in zip(kernels, base)):
        return None
    return RecordedLaunch(kernels, ptrs)
