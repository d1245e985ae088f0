"""CuTe's ``print_layout`` and ``print_tensor`` text forms (returned as strings, printed by the ``print_`` forms)."""

from __future__ import annotations

import numpy as np

from .arith_tuple import ArithTuple
from .composed import ComposedLayout
from .int_tuple import LayoutError, rank
from .integer import Int, _
from .layout import Layout, cosize, size
from .mode_ops import append


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


_BWX8 = ("black!00", "black!40", "black!20", "black!60", "black!10", "black!50", "black!30", "black!70")


def tikz_color_bwx8(idx: int) -> str:
    """CuTe's ``TikzColor_BWx8``, print_latex's default: eight grays by ``idx % 8``."""
    if idx < 0:
        raise LayoutError(f"print_latex: offset {idx} is negative, and CuTe's TikzColor_BWx8 indexes its colour table "
                          "with idx % 8 (undefined for negative offsets); pass color= a function of the offset")
    return _BWX8[idx % 8]


def tikz_color_white(idx: int) -> str:
    """CuTe's ``TikzColor_White``: every cell white."""
    return "white"


_TV = ("{rgb,255:red,175;green,175;blue,255}", "{rgb,255:red,175;green,255;blue,175}",
       "{rgb,255:red,255;green,255;blue,175}", "{rgb,255:red,255;green,175;blue,175}",
       "{rgb,255:red,210;green,210;blue,255}", "{rgb,255:red,210;green,255;blue,210}",
       "{rgb,255:red,255;green,255;blue,210}", "{rgb,255:red,255;green,210;blue,210}")


def tikz_color_tv(tid: int, vid: int) -> str:
    """CuTe's ``TikzColor_TV``, the default of the thread-value pictures: eight pastels by ``tid % 8``."""
    return _TV[tid % 8]


_TIKZ_HEADER = ("\\documentclass[convert]{standalone}\n\\usepackage{tikz}\n\n\\begin{document}\n"
                "\\begin{tikzpicture}[x={(0cm,-1cm)},y={(1cm,0cm)},every node/.style={minimum size=1cm, "
                "outer sep=0pt}]\n\n")


_LATEX_DRAWERS: dict = {}  # type -> draw(obj, color): pictures of types a higher layer defines (tmakit.mma.latex)


def register_latex(cls, draw) -> None:
    """Let ``format_latex`` / ``print_latex`` draw instances of ``cls`` (and its subclasses) with ``draw(obj,
    color)``: the mma layer's atoms and tiled copies, which this layer does not import."""
    _LATEX_DRAWERS[cls] = draw


def format_latex(layout, color=None) -> str:
    """The LaTeX/TikZ picture CuTe's ``print_latex`` draws for a layout of rank <= 2 (a swizzled layout too): one
    cell per coordinate holding its offset, filled with ``color(offset)`` (default ``tikz_color_bwx8``), then the
    grid and the row/column labels. An MMA_Atom, TiledMMA or TiledCopy draws its thread-value maps instead
    (tmakit.mma.latex; ``color(tid, vid)``, default ``tikz_color_tv``)."""
    draw = next((_LATEX_DRAWERS[c] for c in type(layout).__mro__ if c in _LATEX_DRAWERS), None)
    if draw is not None:
        return draw(layout, color)
    if color is None:
        color = tikz_color_bwx8
    if not isinstance(layout, (Layout, ComposedLayout)):
        raise LayoutError(f"print_latex takes a Layout, ComposedLayout, MMA_Atom, TiledMMA or TiledCopy, got "
                          f"{layout!r}; pass one of those")
    if rank(layout.shape) > 2:
        raise LayoutError(f"print_latex: {layout} has rank {rank(layout.shape)}; CuTe draws rank <= 2 layouts (a "
                          "static_assert), so group or slice it to two modes")
    lay = append(layout, Layout(Int(1), Int(0)), n=2)
    m, n = int(size(lay, 0)), int(size(lay, 1))
    out = [f"% Layout: {lay}\n", _TIKZ_HEADER]
    for i in range(m):
        for j in range(n):
            idx = int(lay(i, j))
            out.append(f"\\node[fill={color(idx)}] at ({i},{j}) {{{idx}}};\n")
    out.append(f"\\draw[color=black,thick,shift={{(-0.5,-0.5)}}] (0,0) grid ({m},{n});\n\n")
    out += [f"\\node at ({i},-1) {{\\Large{{\\texttt{{{i}}}}}}};\n" for i in range(m)]
    out += [f"\\node at (-1,{j}) {{\\Large{{\\texttt{{{j}}}}}}};\n" for j in range(n)]
    out.append("\\end{tikzpicture}\n\\end{document}\n")
    return "".join(out)


def print_latex(layout, color=None) -> None:
    print(format_latex(layout, color), end="")
