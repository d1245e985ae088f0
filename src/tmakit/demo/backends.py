"""Where the walkthroughs run: the CPU emulator or a Hopper GPU, behind one small interface.

A backend moves *boxes* described by tensor maps, one job per CTA (the format of ``tmakit.kernels.seeds``):

* ``gmem(array)`` -> a handle with ``.address`` (what goes into ``make_gmem_ptr``) holding a copy of ``array``;
* ``read(handle)`` -> the global contents as a numpy array of the original shape and dtype;
* ``load_boxes(tm, handle, jobs, image_bytes, cluster)`` -> ``[ncta, image_bytes]`` uint8 shared-memory images;
* ``store_boxes(tm, handle, jobs, images)`` -> stores / reductions of those images into global memory.

Both backends see identical tensor maps, coordinates and multicast masks, so they print identical results.
"""

from __future__ import annotations

import numpy as np


def load_job(coords, *, mask: int = 0, issue: bool = True, expect: int | None = None, dst_offset: int = 0,
             prefetch: bool = False) -> dict:
    """One CTA's load: start ``coords`` (innermost first), multicast ``mask`` (0: plain load into itself),
    bytes its barrier expects (default: one box when it issues), byte offset of the box in its shared image."""
    return dict(coords=tuple(int(c) for c in coords), mask=int(mask), issue=bool(issue), expect=expect,
                dst_offset=int(dst_offset), prefetch=bool(prefetch), prefetch_desc=False, offsets=(), mode="tile",
                rank=len(coords))


def store_job(coords, *, op: str | None = None, src_offset: int = 0) -> dict:
    """One CTA's store (``op`` None) or store-reduce (``op`` = "add", "min", ...) of its image."""
    return dict(coords=tuple(int(c) for c in coords), op=op, src_offset=int(src_offset), mode="tile",
                rank=len(coords))


class BackendUnavailable(RuntimeError):
    """The requested backend cannot run here (the message says why)."""


class _EmuBuffer:
    def __init__(self, array: np.ndarray):
        a = np.ascontiguousarray(array)
        raw = np.zeros(a.nbytes + 256, np.uint8)
        off = (-raw.ctypes.data) % 256
        self.bytes = raw[off:off + a.nbytes]
        self.bytes[:] = a.reshape(-1).view(np.uint8)
        self.shape, self.dtype = a.shape, a.dtype
        self.address = int(self.bytes.ctypes.data)


class EmuBackend:
    """The CPU emulator: each CTA runs an emulated kernel under ``tk.emu.launch`` (shared memory, mbarrier init,
    ``cluster_sync``, ``fence_barrier_init``, expect-tx, the (multicast) TMA instruction, ``wait_barrier``; for
    stores ``tma_store_fence`` / arrive / wait), the twin of ``kernels/seeds.cu``. Hangs, races and illegal
    instructions are reported by the emulator. Falls back to the TMA unit's pure functions without ``launch``."""

    name = "emu"

    def __init__(self, reason: str = "requested"):
        self.reason = reason

    def describe(self) -> str:
        return "CPU emulator (tmakit.emu)"

    def gmem(self, array: np.ndarray) -> _EmuBuffer:
        return _EmuBuffer(array)

    def read(self, buf: _EmuBuffer) -> np.ndarray:
        return buf.bytes.view(buf.dtype).reshape(buf.shape).copy()

    def load_boxes(self, tm, buf: _EmuBuffer, jobs, image_bytes: int, cluster: int = 1, init: int = 0):
        from .. import emu

        if not hasattr(emu, "launch"):
            return self._load_boxes_unit(tm, buf, jobs, image_bytes, cluster, init)
        n = len(jobs)
        images = np.zeros((n, int(image_bytes)), np.uint8)
        box = emu.tma_unit.tx_bytes(tm)
        emu.launch(_emu_load_kernel, (n, 1, 1), (cluster, 1, 1), tm, buf.bytes, jobs, images, int(image_bytes),
                   int(init), box)
        return images

    def store_boxes(self, tm, buf: _EmuBuffer, jobs, images) -> None:
        from .. import emu

        if not hasattr(emu, "launch"):
            return self._store_boxes_unit(tm, buf, jobs, images)
        images = np.ascontiguousarray(images, dtype=np.uint8)
        emu.launch(_emu_store_kernel, (len(jobs), 1, 1), (1, 1, 1), tm, buf.bytes, jobs, images)

    # --- without tk.emu.launch: the TMA unit's pure functions, multicast and tx counting done here
    def _load_boxes_unit(self, tm, buf, jobs, image_bytes, cluster, init):
        from ..emu import tma_unit

        n = len(jobs)
        images = np.full((n, int(image_bytes)), init, np.uint8)
        arrived = [0] * n
        for c, job in enumerate(jobs):
            if job.get("prefetch"):
                tma_unit.prefetch(tm, job["coords"])
            if not job["issue"]:
                continue
            base = c - c % cluster
            targets = [base + r for r in range(cluster) if job["mask"] >> r & 1] if job["mask"] else [c]
            for t in targets:
                arrived[t] += tma_unit.load(tm, job["coords"], buf.bytes, images[t], job["dst_offset"])
        box = tma_unit.tx_bytes(tm)
        for c, job in enumerate(jobs):
            expect = job["expect"] if job["expect"] is not None else (box if job["issue"] else 0)
            if arrived[c] != expect:
                raise RuntimeError(f"CTA {c} would hang: its mbarrier expects {expect} transaction bytes but "
                                   f"{arrived[c]} arrived")
        return images

    def _store_boxes_unit(self, tm, buf, jobs, images) -> None:
        from ..emu import tma_unit

        for c, job in enumerate(jobs):
            if job["op"] is None:
                tma_unit.store(tm, job["coords"], buf.bytes, images[c], job["src_offset"])
            else:
                tma_unit.reduce(tm, job["coords"], buf.bytes, images[c], job["src_offset"], job["op"])


def _emu_load_kernel(tm, gmem, jobs, images, image_bytes, init, box):
    """The emulated twin of ``tmakit_seed_load``: one job per CTA, mbarrier + (multicast) TMA load, dump smem."""
    from .. import emu

    cta = emu.block_idx().x
    job = jobs[cta]
    smem = emu.shared_array(image_bytes, np.uint8, align=1024)
    if init:
        smem[:] = init
        emu.fence_proxy_async()
    bar = emu.shared_barrier()
    emu.initialize_barrier(bar, 1)
    emu.syncthreads()
    emu.cluster_sync()
    emu.fence_barrier_init()
    expect = job["expect"] if job["expect"] is not None else (box if job["issue"] else 0)
    if expect:
        emu.set_barrier_transaction_bytes(bar, expect)
    else:
        emu.arrive_barrier(bar)
    if job.get("prefetch"):
        emu.tma_prefetch(tm, job["coords"])
    if job["issue"]:
        dst = emu.make_smem_ptr(_addr(smem) + job["dst_offset"], np.uint8)
        emu.tma_load(tm, job["coords"], dst, bar, job["mask"] or None)
    emu.syncthreads()
    emu.wait_barrier(bar, 0)
    images[cta] = smem
    emu.cluster_sync()


def _emu_store_kernel(tm, gmem, jobs, images):
    """The emulated twin of ``tmakit_seed_store``: fill smem (generic proxy), fence, TMA store / reduce, wait."""
    from .. import emu

    cta = emu.block_idx().x
    job = jobs[cta]
    smem = emu.shared_array(images.shape[1], np.uint8, align=1024)
    smem[:] = images[cta]
    emu.tma_store_fence()
    emu.syncthreads()
    src = emu.make_smem_ptr(_addr(smem) + job["src_offset"], np.uint8)
    if job["op"] is None:
        emu.tma_store(tm, job["coords"], src)
    else:
        emu.tma_reduce(tm, job["coords"], src, job["op"])
    emu.tma_store_arrive()
    emu.tma_store_wait(0)


def _addr(smem_view) -> int:
    from ..emu.device_smem import smem_address
    from ..emu.scheduler import current_cta

    return smem_address(current_cta(), smem_view)


class _GpuBuffer:
    def __init__(self, array: np.ndarray):
        from ..cuda import DeviceBuffer

        a = np.ascontiguousarray(array)
        self.dev = DeviceBuffer.from_bytes(a.tobytes())
        self.shape, self.dtype = a.shape, a.dtype
        self.address = int(self.dev.ptr)


class GpuBackend:
    """A Hopper GPU through ``tmakit.cuda``: the kernels of ``tmakit/kernels/seeds.cu`` (``tmakit.kernels.seeds``)."""

    name = "gpu"

    def __init__(self, reason: str = "requested"):
        self.reason = reason
        from ..kernels import seeds

        self._seeds = seeds

    def describe(self) -> str:
        try:
            from ..cuda.driver import compute_capability, device_name

            major, minor = compute_capability(0)
            return f"GPU {device_name(0)} (sm_{major}{minor}, tmakit.cuda)"
        except Exception:  # pragma: no cover - only on a GPU
            return "GPU (tmakit.cuda)"

    def gmem(self, array: np.ndarray) -> _GpuBuffer:
        return _GpuBuffer(array)

    def read(self, buf: _GpuBuffer) -> np.ndarray:
        return np.frombuffer(bytes(buf.dev.download()), buf.dtype).reshape(buf.shape).copy()

    def load_boxes(self, tm, buf: _GpuBuffer, jobs, image_bytes: int, cluster: int = 1, init: int = 0):
        jobs = [self._seeds.load_job(j["coords"], mask=j["mask"], issue=j["issue"], expect=j["expect"],
                                     dst_offset=j["dst_offset"], prefetch=j["prefetch"]) for j in jobs]
        images, status = self._seeds.load_boxes(tm, jobs, image_bytes, cluster=(cluster, 1, 1) if cluster > 1
                                                else None, init=bytes([init]) * int(image_bytes))
        if (status != 1).any():
            bad = [int(i) for i in np.nonzero(status != 1)[0]]
            raise RuntimeError(f"CTAs {bad} timed out waiting on their mbarrier")
        return images

    def store_boxes(self, tm, buf: _GpuBuffer, jobs, images) -> None:
        jobs = [self._seeds.store_job(j["coords"], op=j["op"], src_offset=j["src_offset"]) for j in jobs]
        status = self._seeds.store_boxes(tm, jobs, images)
        if (status != 1).any():
            raise RuntimeError(f"store kernel reported status {status.tolist()}")


def gpu_status() -> tuple[bool, str]:
    """(usable, why): a Hopper-class GPU plus the ``tmakit.cuda`` runtime and its seed kernels."""
    import importlib.util

    missing = "cuda-bindings is not installed ('tmakit[gpu]' installs it)"
    try:
        if importlib.util.find_spec("cuda.bindings") is None:
            return False, missing
    except (ImportError, ValueError):  # no "cuda" package at all
        return False, missing
    try:
        from .. import cuda as tkc
    except Exception as e:  # noqa: BLE001 - any import problem means "no GPU runtime"
        return False, f"tmakit.cuda does not import ({type(e).__name__}: {e})"
    try:
        from ..kernels import seeds  # noqa: F401
    except Exception as e:  # noqa: BLE001
        return False, f"tmakit.kernels.seeds is missing ({e})"
    if not hasattr(tkc, "is_available"):
        return False, "tmakit.cuda has no is_available()"
    try:
        n = tkc.device_count()
    except Exception as e:  # noqa: BLE001
        msg = str(e).splitlines()[0] if str(e) else ""
        if "DynamicLibNotFound" in type(e).__name__ or "driver library" in msg or "libcuda" in msg:
            return False, "no NVIDIA driver (libcuda) on this machine"
        return False, f"no usable CUDA driver ({type(e).__name__}: {msg[:100]})"
    if n == 0:
        return False, "no CUDA device found"
    if not tkc.is_available():
        return False, "no compute-capability 9.0 (Hopper) device found"
    return True, "a Hopper GPU and the tmakit.cuda runtime are available"


def choose(kind: str = "auto"):
    """The backend for ``--backend kind``: ``emu``, ``gpu`` (raises BackendUnavailable) or ``auto``."""
    if kind == "emu":
        return EmuBackend("requested with --backend emu")
    ok, why = gpu_status()
    if kind == "gpu":
        if not ok:
            raise BackendUnavailable(why)
        return GpuBackend("requested with --backend gpu")
    if kind != "auto":
        raise ValueError(f"unknown backend {kind!r} (auto, gpu or emu)")
    if ok:
        return GpuBackend(f"auto: {why}")
    return EmuBackend(f"auto: {why}, so the CPU emulator runs it")
