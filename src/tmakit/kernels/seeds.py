"""Python entry points of ``kernels/seeds.cu``: the seed walkthroughs (load / prefetch / multicast / store /
reduce / copy) on the GPU, driven by tensor maps. Also the hardware side of the conformance fuzzer.

Each CTA gets one *job* (a row of a numpy structured array): where its box starts, whether it issues, its multicast
mask, and so on. Shared-memory images begin at a 1024-byte-aligned shared address, so swizzled layouts match the
absolute-address formula. Buffers are plain driver allocations; torch is not needed.
"""

from __future__ import annotations

import ctypes
import math

import numpy as np

from ..cuda.driver import DeviceBuffer, synchronize
from ..tma.coord_rules import im2col_start_message, inner_misaligned, store_start_message

__all__ = ["LOAD_JOB", "STORE_JOB", "REDUCE_OPS", "box_bytes", "box_footprint", "copy_tiles", "load_boxes",
           "load_job", "seed_kernel", "store_boxes", "store_job"]

LOAD_JOB = np.dtype([("coords", "<i4", (5,)), ("offsets", "<u4", (3,)), ("mask", "<u4"), ("rank", "<u4"),
                     ("mode", "<u4"), ("issue", "<u4"), ("expect", "<u4"), ("dst_offset", "<u4"),
                     ("flags", "<u4"), ("pad", "<u4")])
STORE_JOB = np.dtype([("coords", "<i4", (5,)), ("rank", "<u4"), ("mode", "<u4"), ("op", "<i4"),
                      ("src_offset", "<u4"), ("pad", "<u4", (7,))])
assert LOAD_JOB.itemsize == 64 and STORE_JOB.itemsize == 64
REDUCE_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")
STATUS_OK, STATUS_TIMEOUT = 1, 2
_SPAN = {0: 0, 1: 32, 2: 64, 3: 128}


def box_bytes(tm) -> int:
    """Bytes one load of ``tm``'s box delivers (the mbarrier transaction count), OOB elements included."""
    if hasattr(tm, "tx_bytes"):
        return int(tm.tx_bytes)
    eb = tm.elem_bytes
    if tm.mode == "im2col":
        return eb * int(tm.channels_per_pixel) * int(tm.pixels_per_column)
    n = tm.box_dim[0] * eb
    for b, s in zip(tm.box_dim[1:], tm.element_strides[1:]):
        n *= math.ceil(b / s)
    return n


def box_footprint(tm) -> int:
    """Shared-memory bytes the box occupies (swizzled rows take the full span)."""
    if hasattr(tm, "smem_bytes"):
        return int(tm.smem_bytes)
    rows = box_bytes(tm) // (tm.box_dim[0] * tm.elem_bytes) if tm.mode == "tiled" else int(tm.pixels_per_column)
    inner = (tm.box_dim[0] if tm.mode == "tiled" else int(tm.channels_per_pixel)) * tm.elem_bytes
    span = _SPAN.get(int(tm.swizzle), 128)
    pitch = max(inner, span) if span else inner
    return rows * pitch


def load_job(coords, *, mask: int = 0, issue: bool = True, expect: int | None = None, dst_offset: int = 0,
             prefetch: bool = False, prefetch_desc: bool = False, offsets=(), mode: str = "tile", rank=None) -> dict:
    """One CTA's load: start ``coords`` (innermost first), multicast ``mask`` (0: plain), bytes to ``expect``
    (default: one box if this CTA issues a plain load; give it explicitly for multicast receivers)."""
    return dict(coords=tuple(coords), mask=mask, issue=issue, expect=expect, dst_offset=dst_offset,
                prefetch=prefetch, prefetch_desc=prefetch_desc, offsets=tuple(offsets), mode=mode,
                rank=rank if rank is not None else len(coords))


def store_job(coords, *, op: str | int | None = None, src_offset: int = 0, mode: str = "tile", rank=None) -> dict:
    """One CTA's store (``op=None``) or reduction (``op`` in REDUCE_OPS) of its image at ``src_offset``."""
    return dict(coords=tuple(coords), op=op, src_offset=src_offset, mode=mode,
                rank=rank if rank is not None else len(coords))


def _pack_load(tm, jobs) -> np.ndarray:
    if isinstance(jobs, np.ndarray):
        return jobs.astype(LOAD_JOB, copy=False)
    out = np.zeros(len(jobs), LOAD_JOB)
    nbytes = box_bytes(tm)
    for i, j in enumerate(jobs):
        c = list(j["coords"]) + [0] * (5 - len(j["coords"]))
        o = list(j["offsets"]) + [0] * (3 - len(j["offsets"]))
        out[i]["coords"], out[i]["offsets"] = c, o
        out[i]["mask"], out[i]["rank"] = j["mask"], j["rank"]
        out[i]["mode"] = 1 if j["mode"] == "im2col" else 0
        out[i]["issue"] = 1 if j["issue"] else 0
        exp = j["expect"]
        if exp is None:
            exp = nbytes if (j["issue"] and not j["mask"]) else 0
        out[i]["expect"], out[i]["dst_offset"] = exp, j["dst_offset"]
        out[i]["flags"] = (1 if j["prefetch"] else 0) | (2 if j["prefetch_desc"] else 0)
    return out


def _pack_store(jobs) -> np.ndarray:
    if isinstance(jobs, np.ndarray):
        return jobs.astype(STORE_JOB, copy=False)
    out = np.zeros(len(jobs), STORE_JOB)
    for i, j in enumerate(jobs):
        out[i]["coords"] = list(j["coords"]) + [0] * (5 - len(j["coords"]))
        out[i]["rank"], out[i]["src_offset"] = j["rank"], j["src_offset"]
        out[i]["mode"] = 1 if j["mode"] == "im2col" else 0
        op = j["op"]
        out[i]["op"] = -1 if op is None else (REDUCE_OPS.index(op) if isinstance(op, str) else int(op))
    return out


_kernels: dict = {}


def seed_kernel(name: str, debug: bool | None = None, timeout_ns: int | None = None):
    """``tmakit_seed_load`` / ``_store`` / ``_copy`` from ``kernels/seeds.cu`` (compiled once, cached).

    ``debug=True`` compiles with ``TMAKIT_DEBUG=1``: barrier waits give up after ``timeout_ns`` and report.
    """
    from ..cuda import context_id
    from . import package_kernel

    key = (name, debug, timeout_ns, context_id())
    k = _kernels.get(key)
    if k is None:
        opts = [f"-DTMAKIT_DEBUG_TIMEOUT_NS={int(timeout_ns)}ull"] if timeout_ns else []
        k = _kernels[key] = package_kernel("seeds.cu", name, debug=debug, options=opts)
    return k


def _encoded(tm):
    from ..cuda.encode import encode_cached

    return tm if type(tm).__name__ == "CUtensorMap" else encode_cached(tm)


def _check_load_jobs(tm, packed) -> None:
    """Host-side check of what kills the context on H200 (driver 580.159.04, docs/CONFORMANCE.md): a load or L2
    prefetch whose innermost start coordinate is not on a 16-byte boundary (``c0 * elemsize % 16 != 0``), and an
    im2col load whose spatial start lies outside the pixel bounding box, trap with an illegal instruction. Boxes that
    start or run out of bounds are fine otherwise (OOB elements are filled)."""
    for i, j in enumerate(packed):
        c = [int(x) for x in j["coords"][: j["rank"]]]
        if (j["issue"] or j["flags"] & 1) and inner_misaligned(tm, c[0]):
            raise ValueError(f"job {i}: innermost start coordinate {c[0]} x {tm.elem_bits // 8} B is "
                             "not a multiple of 16 bytes: the TMA traps on sm_90 (illegal instruction)")
        msg = im2col_start_message(tm, c, f"job {i}: im2col load") if j["issue"] and j["mode"] == 1 else ""
        if msg:
            raise ValueError(msg)


def _check_store_jobs(tm, packed) -> None:
    """Stores/reductions: the same 16-byte rule, negative start coordinates trap (docs/HARDWARE.md §3), and so does a
    reduction the dtype does not support (e.g. .min on FLOAT32: checked with ``tmakit.tma.check_reduce``); an
    ``.im2col_no_offs`` job also traps when the map's pixel box reaches outside the tensor or a spatial start lies
    outside the pixel box."""
    try:
        from ..tma import check_reduce
    except ImportError:  # pragma: no cover
        check_reduce = None
    for i, j in enumerate(packed):
        if check_reduce is not None and int(j["op"]) >= 0:
            check_reduce(REDUCE_OPS[int(j["op"])], tm.dtype)
        c = [int(x) for x in j["coords"][: j["rank"]]]
        if inner_misaligned(tm, c[0]):
            raise ValueError(f"job {i}: innermost start coordinate {c[0]} x {tm.elem_bits // 8} B is not a multiple "
                             "of 16 bytes: the TMA traps on sm_90 (illegal instruction)")
        msg = store_start_message(tm, c, f"job {i}: " + ("im2col store" if j["mode"] == 1 else "TMA store/reduce"))
        if msg:
            raise ValueError(msg)


def load_boxes(tm, jobs, image_bytes: int, *, cluster=None, init=None, block: int = 128, stream=None,
               debug: bool | None = None, timeout_ns: int | None = None, encoded=None, grid=None,
               check: bool = True):
    """Run ``tmakit_seed_load``: CTA i does ``jobs[i]`` through tensor map ``tm`` and dumps ``image_bytes`` of its
    shared memory. ``init`` (bytes, per CTA or one image for all) pre-fills the images (default 0xA5 everywhere).
    Returns ``(images [ncta, image_bytes] uint8, status [ncta])`` -- status 1 = ok, 2 = barrier wait timed out.
    """
    packed = _pack_load(tm, jobs)
    if check:
        _check_load_jobs(tm, packed)
    n = len(packed)
    image_bytes = int(image_bytes)
    dj = DeviceBuffer.from_bytes(packed.tobytes())
    dump = DeviceBuffer(n * image_bytes)
    status = DeviceBuffer(4 * n)
    status.fill(0)
    dinit = None
    if init is not None:
        buf = np.frombuffer(bytes(init), np.uint8)
        if buf.size == image_bytes:
            buf = np.tile(buf, n)
        dinit = DeviceBuffer.from_bytes(buf.tobytes())
    k = seed_kernel("tmakit_seed_load", debug, timeout_ns)
    desc = encoded if encoded is not None else _encoded(tm)
    k(grid or (n, 1, 1), block, desc, dj, dump, dinit, ctypes.c_uint32(image_bytes), status,
      smem=image_bytes + 1024, stream=stream, cluster=cluster, non_portable=bool(cluster) and _prod(cluster) > 8)
    synchronize(stream)
    images = np.frombuffer(dump.download(), np.uint8).reshape(n, image_bytes)
    st = np.frombuffer(status.download(), np.uint32).copy()
    return images, st


def store_boxes(tm, jobs, images, *, block: int = 128, stream=None, encoded=None, check: bool = True):
    """Run ``tmakit_seed_store``: CTA i stores/reduces ``images[i]`` (uint8 [ncta, image_bytes]) per ``jobs[i]``.
    Global memory is whatever ``tm.global_address`` points at. Returns the status array.
    ``check=False`` skips the host-side checks (for probing the hardware)."""
    packed = _pack_store(jobs)
    if check:
        _check_store_jobs(tm, packed)
    imgs = np.ascontiguousarray(images, dtype=np.uint8)
    n, image_bytes = imgs.shape
    dj = DeviceBuffer.from_bytes(packed.tobytes())
    dimg = DeviceBuffer.from_bytes(imgs.tobytes())
    status = DeviceBuffer(4 * n)
    status.fill(0)
    k = seed_kernel("tmakit_seed_store")
    desc = encoded if encoded is not None else _encoded(tm)
    k((n, 1, 1), block, desc, dj, dimg, ctypes.c_uint32(image_bytes), status, smem=image_bytes + 1024,
      stream=stream)
    synchronize(stream)
    return np.frombuffer(status.download(), np.uint32).copy()


def copy_tiles(src_tm, dst_tm, *, prefetch: bool = False, block: int = 128, stream=None) -> None:
    """Seed 001: copy a 2-D tensor tile by tile -- TMA load through ``src_tm``, TMA store through ``dst_tm``.
    Both maps must have the same 2-D box; the grid covers ``global_dim`` with boxes."""
    b0, b1 = src_tm.box_dim[:2]
    gx, gy = -(-src_tm.global_dim[0] // b0), -(-src_tm.global_dim[1] // b1)
    nbytes = box_bytes(src_tm)
    k = seed_kernel("tmakit_seed_copy")
    k((gx, gy, 1), block, _encoded(src_tm), _encoded(dst_tm), ctypes.c_int32(b0), ctypes.c_int32(b1),
      ctypes.c_uint32(nbytes), ctypes.c_uint32(1 if prefetch else 0), smem=box_footprint(src_tm) + 1024,
      stream=stream)


def _prod(t) -> int:
    t = (t,) if isinstance(t, int) else t
    p = 1
    for x in t:
        p *= int(x)
    return p
