"""A check that tensors still have the metadata they had: ``make_check(a, b)(x, y)`` is True when ``x`` and ``y``
have ``a``'s and ``b``'s sizes, strides, dtypes, devices, ``requires_grad`` and dispatch keys (and are distinct
objects), in one C++ call.

It is torch's ``torch._C._dynamo.guards.TensorGuards`` (what ``torch.compile`` checks its inputs with before each
call of a compiled graph): about 0.2 µs for two tensors, where reading the same attributes from Python and hashing
them costs about 1 µs. That class is not public API, so :func:`check_maker` tries it on CPU tensors once -- the same
layout passes; another shape, stride, dtype or ``requires_grad`` fails -- and returns None where it is missing or
behaves otherwise; the ops then do without it (see ``fast_path.objects``).
"""

from __future__ import annotations

__all__ = ["check_maker"]

_maker = False  # not resolved yet


def _make(*ts):
    from torch._C._dynamo.guards import TensorGuards

    return TensorGuards(*ts, dynamic_dims_sizes=[list(t.shape) for t in ts],
                        dynamic_dims_strides=[list(t.stride()) for t in ts]).check


def _behaves(make) -> bool:
    import torch

    a, b = torch.zeros(4, 6), torch.zeros(4, 6, dtype=torch.float16)
    check = make(a, b)
    others = (torch.empty_strided((4, 6), (1, 4)), torch.zeros(6, 4), torch.zeros(4, 6, dtype=torch.float64),
              torch.zeros(4, 6, requires_grad=True), torch.zeros(24), torch.zeros(4, 6)[:, :5])
    return bool(check(a, b) and check(torch.ones(4, 6), b.clone())) and not any(check(o, b) for o in others)


def check_maker():
    """``make_check(*tensors)`` (see the module docstring), or None where torch lacks it or it does not behave."""
    global _maker
    if _maker is False:
        try:
            _maker = _make if _behaves(_make) else None
        except Exception:  # no torch, no dynamo guards, another signature
            _maker = None
    return _maker
