"""What every op shares: lazy torch, the per-thread ``last_path``, device switching, the compile/autograd checks."""

from __future__ import annotations

import contextlib
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
    torch = torch_module()
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")


def _bind_torch():
    """``torch.compiler.is_compiling`` and ``torch._C._cuda_getDevice`` (CPU builds: -1), bound once: both sit on
    every op's cached path."""
    try:
        import torch
    except ImportError:  # pragma: no cover - depends on the environment: the ops raise when called
        return (lambda: False), (lambda: -1)
    return torch.compiler.is_compiling, getattr(torch._C, "_cuda_getDevice", None) or (lambda: -1)


#: compiling(): whether torch.compile is tracing this call (then the ops go through ``tmakit.ops.library``'s custom
#: ops); current_device(): torch's current CUDA device index
compiling, current_device = _bind_torch()


def on_device(dev: int):
    """``torch.cuda.device(dev)`` when ``dev`` is another GPU than the current one, else a no-op: kernels load and
    launch in the context of the tensors' device, on that device's current stream (as torch's own ops do)."""
    if dev < 0 or dev == current_device():
        return contextlib.nullcontext()
    return torch_module().cuda.device(dev)


def recording(*ts) -> str:
    """A fallback reason when autograd records this call (grad mode on, a tensor requires grad), else ''. In-place
    TMA writes would be invisible to autograd; torch's op keeps the graph (and raises where torch would)."""
    if any(t.requires_grad for t in ts) and torch_module().is_grad_enabled():
        return "autograd is recording (a tensor requires grad): torch's op keeps the graph"
    return ""
