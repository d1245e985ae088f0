"""CuTe's tensor algorithms (algorithm/tensor_algorithms.hpp, axpby.hpp) on tmakit tensors: ``clear``, ``fill``,
``axpby`` and the tensor forms of ``transform`` / ``for_each``, element by element in the tensor's index order
(``t(i)`` for ``i < size(t)``), as CuTe's loops run them in a thread's registers or memory."""

from __future__ import annotations

from .int_tuple import LayoutError
from .tensor import Tensor


def is_tensor(x) -> bool:
    return isinstance(x, Tensor)


def _count(t) -> int:
    return int(t.layout.size())


def _same_size(what, *ts) -> int:
    n = _count(ts[0])
    for t in ts[1:]:
        if _count(t) != n:
            raise LayoutError(f"{what}: tensors of {n} and {_count(t)} elements; give tensors of one size (CuTe "
                              f"loops over the first one's size and would read or write past the other)")
    return n


def clear(t) -> None:
    """Every element set to zero (``T{}``)."""
    fill(t, 0)


def fill(t, value) -> None:
    """Every element set to ``value``."""
    for i in range(_count(t)):
        t[i] = value


def transform_tensor(*args) -> None:
    """``transform(t, op)``: ``t(i) = op(t(i))``; ``transform(x, out, op)``: ``out(i) = op(x(i))``;
    ``transform(x, y, out, op)``: ``out(i) = op(x(i), y(i))``."""
    *ts, op = args
    if len(ts) == 1:
        ts = [ts[0], ts[0]]
    if len(ts) not in (2, 3):
        raise LayoutError("transform of tensors: transform(t, op), transform(x, out, op) or transform(x, y, out, op)")
    *ins, out = ts
    for i in range(_same_size("transform", *ts)):
        out[i] = op(*(x(i) for x in ins))


def for_each_tensor(t, op) -> None:
    """``op(t(i))`` for every element."""
    for i in range(_count(t)):
        op(t(i))


def axpby(alpha, x, beta, y, pred=None) -> None:
    """``y(i) = alpha * x(i) + beta * y(i)`` where ``pred(i)`` (everywhere by default); with ``beta == 0`` y is not
    read (``alpha * x(i)``), so a NaN or uninitialised y does not leak into the result, as in CuTe."""
    beta_zero = beta == 0
    for i in range(_same_size("axpby", x, y)):
        if pred is None or pred(i):
            y[i] = alpha * x(i) if beta_zero else alpha * x(i) + beta * y(i)
