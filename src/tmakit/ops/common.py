"""What every op shares: lazy torch, the per-thread ``last_path``, device switching, the compile/autograd checks."""

from __future__ import annotations

import contextlib
import sys
import threading

__all__ = ["torch_module", "check_tensor", "state", "set_path", "current_device", "on_device", "compiling",
           "recording"]


class _State(threading.local):
    """Per-thread report of how the calling thread's last op ran (``tk.ops.last_path``)."""

    path: str = ""


state = _State()


def set_path(p: str) -> None:
    state.path = p


def torch_module():
    try:
        import torch
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("tmakit.ops needs torch (pip install torch)") from e
    return torch


def check_tensor(name, t):
    global _is_compiling
    torch = torch_module()
    _is_compiling = torch.compiler.is_compiling
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")


def current_device() -> int:
    global _get_device
    if _get_device is None:
        _get_device = torch_module()._C._cuda_getDevice
    return _get_device()


_get_device = None  # torch._C._cuda_getDevice once torch is in use


def on_device(dev: int):
    """``torch.cuda.device(dev)`` when ``dev`` is another GPU than the current one, else a no-op: kernels load and
    launch in the context of the tensors' device, on that device's current stream (as torch's own ops do)."""
    if dev < 0 or dev == current_device():
        return contextlib.nullcontext()
    return torch_module().cuda.device(dev)


def compiling() -> bool:
    """Whether torch.compile is tracing this call (then the ops go through ``tmakit.ops.library``'s custom ops).
    ``torch.compiler.is_compiling`` is kept once an op has run eagerly (it sits on every call's path)."""
    f = _is_compiling
    if f is None:
        t = sys.modules.get("torch")
        return t is not None and t.compiler.is_compiling()
    return f()


_is_compiling = None  # torch.compiler.is_compiling, set by the first checked call (check_tensor)


def recording(*ts) -> str:
    """A fallback reason when autograd records this call (grad mode on, a tensor requires grad), else ''. In-place
    TMA writes would be invisible to autograd; torch's op keeps the graph (and raises where torch would)."""
    if any(t.requires_grad for t in ts) and torch_module().is_grad_enabled():
        return "autograd is recording (a tensor requires grad): torch's op keeps the graph"
    return ""
