"""CuTe's ``print_layout`` and ``print_tensor`` text forms (returned as strings, printed by the ``print_`` forms)."""

from __future__ import annotations

import numpy as np

from .arith_tuple import ArithTuple
from .int_tuple import LayoutError, rank
from .integer import _
from .layout import Layout, cosize, size


def format_layout(layout) -> str:
    """The 2-D table CuTe's print_layout draws (rank-2 layouts)."""
    if rank(layout.shape) == 1:
        layout = Layout((layout.shape, 1), (layout.stride, 0))
    if rank(layout.shape) != 2:
        raise LayoutError(f"print_layout needs a rank-2 layout, got {layout}")
    width = len(str(int(cosize(layout)))) + 2
    delim = "+-----------------------"[: width + 1]
    m, n = int(size(layout, 0)), int(size(layout, 1))
    lines = [str(layout), "    " + "".join(f"  {j:>{width - 2}} " for j in range(n))]
    sep = "    " + delim * n + "+"
    for i in range(m):
        lines.append(sep)
        lines.append(f"{i:2d}  " + "".join(f"| {int(layout(i, j)):>{width - 2}} " for j in range(n)) + "|")
    lines.append(sep)
    return "\n".join(lines) + "\n"


def print_layout(layout) -> None:
    print(format_layout(layout), end="")


def _pretty(v) -> str:
    if isinstance(v, ArithTuple):
        return "  " + str(v)
    if isinstance(v, (bool, np.bool_)):
        return f"{int(v):3d}"
    if isinstance(v, (float, np.floating)):
        if isinstance(v, np.float64):
            return f"{float(v):11.3e}"
        return f"{float(v):10.2e}"
    if isinstance(v, (int, np.integer)):
        return f"{int(v):5d}"
    return "  " + str(v)


def format_tensor(tensor, header: bool = True) -> str:
    """The element listing CuTe's print_tensor produces (ranks 1-4)."""
    out = [f"{tensor}:\n"] if header else []
    r = rank(tensor.layout.shape)
    if r == 1:
        out += [_pretty(tensor(i)) + "\n" for i in range(int(size(tensor.layout)))]
    elif r == 2:
        for i in range(int(size(tensor.layout, 0))):
            out.append("".join(_pretty(tensor(i, j)) for j in range(int(size(tensor.layout, 1)))) + "\n")
    elif r in (3, 4):
        k_mode = r - 1
        bar = ("-" if r == 3 else "=") * (5 * int(size(tensor.layout, 1)))
        for k in range(int(size(tensor.layout, k_mode))):
            if k:
                out.append(bar + "\n")
            crd = (_,) * k_mode + (k,)
            out.append(format_tensor(tensor(crd), header=False))
    else:
        raise LayoutError(f"print_tensor supports ranks 1-4, got rank {r}")
    return "".join(out)


def print_tensor(tensor) -> None:
    print(format_tensor(tensor), end="")
