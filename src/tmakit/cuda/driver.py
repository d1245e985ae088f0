"""CUDA driver access: checked calls, the (primary) context, streams, device buffers.

Contexts: if a context is current on the thread (torch makes its primary context current after any CUDA call),
it is used; otherwise the device's primary context -- the one torch and the runtime API share -- is retained and
made current. Torch is never imported here; it is used only when the caller already imported it.
"""

from __future__ import annotations

import functools
import sys
import threading

from .errors import CudaError, RuntimeUnavailable

__all__ = ["DeviceBuffer", "check", "compute_capability", "current_stream", "cu", "device_count",
           "driver_version", "ensure_context", "context_id", "synchronize"]


@functools.lru_cache(maxsize=None)
def cu():
    """The ``cuda.bindings.driver`` module (imported lazily)."""
    try:
        from cuda.bindings import driver
    except ImportError as e:  # pragma: no cover - environment
        raise RuntimeUnavailable("tmakit.cuda needs cuda-bindings (pip install 'tmakit[gpu]')") from e
    return driver


def _error_text(code) -> tuple[str, str]:
    d = cu()
    try:
        e1, name = d.cuGetErrorName(code)
        e2, desc = d.cuGetErrorString(code)
        name = name.decode() if isinstance(name, bytes) else str(name)
        desc = desc.decode() if isinstance(desc, bytes) else str(desc)
        return name, desc
    except Exception:  # pragma: no cover
        return str(code), ""


def check(result, call: str, **args):
    """Unwrap a cuda-bindings result tuple; raise :class:`CudaError` naming ``call`` and ``args`` on failure."""
    code = result[0]
    if int(code) != 0:
        name, desc = _error_text(code)
        raise CudaError(call, int(code), name, desc, args)
    if len(result) == 1:
        return None
    return result[1] if len(result) == 2 else result[1:]


_init_lock = threading.Lock()
_initialized = False
_primary: dict[int, object] = {}


def _init():
    global _initialized
    if _initialized:
        return
    with _init_lock:
        if not _initialized:
            try:
                check(cu().cuInit(0), "cuInit", flags=0)
            except CudaError as e:
                raise RuntimeUnavailable(f"no usable CUDA driver/GPU: {e}") from e
            _initialized = True


def device_count() -> int:
    """Number of CUDA devices (0 when there is no driver or GPU)."""
    try:
        _init()
        return int(check(cu().cuDeviceGetCount(), "cuDeviceGetCount"))
    except (RuntimeUnavailable, CudaError, OSError):
        return 0


def _torch_device() -> int | None:
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        return torch.cuda.current_device()
    return None


def ensure_context(device: int | None = None):
    """Make sure a CUDA context is current on this thread and return it (a ``CUcontext``).

    Uses the context current now when there is one (torch's primary context of its current device: asked every
    call, so switching devices with ``torch.cuda.device`` switches where modules load and kernels launch); otherwise
    retains the primary context of ``device`` (default: torch's current device, else 0) with
    ``cuDevicePrimaryCtxRetain`` and makes it current.
    """
    _init()
    d = cu()
    cur = check(d.cuCtxGetCurrent(), "cuCtxGetCurrent")
    if device is None and cur is not None and int(cur) != 0:
        return cur
    if device is None:
        device = _torch_device() or 0
    if device not in _primary:
        dev = check(d.cuDeviceGet(device), "cuDeviceGet", ordinal=device)
        _primary[device] = check(d.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain", device=device)
    ctx = _primary[device]
    if cur is None or int(cur) != int(ctx):
        check(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent", ctx=int(ctx))
    return ctx


def context_id() -> int:
    """The current context as an int (a cache key for per-context objects: modules, kernels)."""
    return int(ensure_context())


def current_stream() -> int:
    """Handle of torch's current stream when torch is in use, else 0 (the default stream)."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        if raw is not None:
            return int(raw(torch.cuda.current_device()))
        return int(torch.cuda.current_stream().cuda_stream)
    return 0


def synchronize(stream: int | None = None) -> None:
    """Wait for ``stream`` (or the whole context when None)."""
    ensure_context()
    d = cu()
    if stream is None:
        check(d.cuCtxSynchronize(), "cuCtxSynchronize")
    else:
        check(d.cuStreamSynchronize(d.CUstream(stream)), "cuStreamSynchronize", stream=stream)


def compute_capability(device: int = 0) -> tuple[int, int]:
    """(major, minor) of ``device``."""
    _init()
    d = cu()
    dev = check(d.cuDeviceGet(device), "cuDeviceGet", ordinal=device)
    a = d.CUdevice_attribute
    major = check(d.cuDeviceGetAttribute(a.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "cuDeviceGetAttribute")
    minor = check(d.cuDeviceGetAttribute(a.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "cuDeviceGetAttribute")
    return int(major), int(minor)


def driver_version() -> int:
    """``cuDriverGetVersion`` (e.g. 13000)."""
    _init()
    return int(check(cu().cuDriverGetVersion(), "cuDriverGetVersion"))


def device_name(device: int = 0) -> str:
    _init()
    d = cu()
    dev = check(d.cuDeviceGet(device), "cuDeviceGet", ordinal=device)
    name = check(d.cuDeviceGetName(256, dev), "cuDeviceGetName")
    return name.split(b"\x00", 1)[0].decode()


class DeviceBuffer:
    """Plain ``cuMemAlloc`` memory (no torch needed). ``ptr`` is the device address; usable as a kernel argument."""

    def __init__(self, nbytes: int):
        ensure_context()
        self.nbytes = int(nbytes)
        self.ptr = int(check(cu().cuMemAlloc(max(1, self.nbytes)), "cuMemAlloc", bytesize=self.nbytes))

    @classmethod
    def from_bytes(cls, data, stream: int = 0) -> DeviceBuffer:
        mv = memoryview(data).cast("B")
        buf = cls(mv.nbytes)
        buf.upload(mv)
        return buf

    def upload(self, data, offset: int = 0) -> None:
        """Copy host bytes (anything with the buffer protocol) to ``ptr + offset`` (synchronous)."""
        mv = memoryview(data).cast("B")
        if offset + mv.nbytes > self.nbytes:
            raise ValueError(f"upload of {mv.nbytes} bytes at {offset} overflows a {self.nbytes}-byte buffer")
        if mv.nbytes:
            check(cu().cuMemcpyHtoD(self.ptr + offset, mv, mv.nbytes), "cuMemcpyHtoD", dst=self.ptr + offset,
                  nbytes=mv.nbytes)

    def download(self, nbytes: int | None = None, offset: int = 0) -> bytearray:
        """Copy ``nbytes`` from ``ptr + offset`` back to the host (synchronous)."""
        n = self.nbytes - offset if nbytes is None else int(nbytes)
        out = bytearray(n)
        if n:
            check(cu().cuMemcpyDtoH(out, self.ptr + offset, n), "cuMemcpyDtoH", src=self.ptr + offset, nbytes=n)
        return out

    def fill(self, byte: int) -> None:
        """``cuMemsetD8`` the whole buffer."""
        check(cu().cuMemsetD8(self.ptr, byte & 0xFF, self.nbytes), "cuMemsetD8", dst=self.ptr, value=byte)

    def free(self) -> None:
        if self.ptr:
            try:
                check(cu().cuMemFree(self.ptr), "cuMemFree", ptr=self.ptr)
            finally:
                self.ptr = 0

    def __del__(self):
        try:
            self.free()
        except Exception:
            pass

    def __int__(self) -> int:
        return self.ptr

    def __repr__(self) -> str:
        return f"DeviceBuffer(ptr=0x{self.ptr:x}, nbytes={self.nbytes})"
