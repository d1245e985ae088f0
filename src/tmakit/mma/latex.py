"""CuTe's ``print_latex`` for MMA_Atom, TiledMMA and TiledCopy (cute/util/print_latex.hpp): the TikZ pictures of
which thread holds which value. ``tk.print_latex(x)`` / ``tk.format_latex(x)`` dispatch here for these objects.

TiledMMA: C at (0,0), A to its left (columns ``k - K - 1``), B above it (rows ``k - K - 1``), each cell
``T<tid> V<vid>`` of the first (thread, value) that maps to it. TiledCopy: the source partition at (0,0), the
destination partition ``N + 3`` columns to the right. ``color(tid, vid)`` fills the cells (CuTe's TikzColor_TV).
``print_latex_tv(layout_tv, tile_mn)``: one (thread, value) -> (m, n) map over an ``M x N`` tile.
"""

from __future__ import annotations

from ..layout import (
    Int,
    Layout,
    Tensor,
    composition,
    logical_divide,
    make_identity_tensor,
    make_layout,
    rank,
    shape,
    size,
)
from ..layout.int_tuple import product_each
from ..layout.integer import _
from ..layout.printing import _TIKZ_HEADER, register_latex, tikz_color_tv
from .atoms import MMA_Atom
from .errors import MmaError
from .tiled_copy import TiledCopy
from .tiled_mma import TiledMMA, make_tiled_mma, tile_shape

_FOOTER = "\\end{tikzpicture}\n\\end{document}\n"


def _grid(x0, y0, x1, y1) -> str:
    return f"\\draw[color=black,thick,shift={{(-0.5,-0.5)}}] ({x0},{y0}) grid ({x1},{y1});\n\n"


def _label(x, y, text) -> str:
    return f"\\node at ({x},{y}) {{\\Large{{\\texttt{{{text}}}}}}};\n"


def _cells(tv: Tensor, color, place) -> list[str]:
    """One node per coordinate, for the first (tid, vid) in CuTe's loop order (tid outer) that reaches it."""
    out, filled = [], set()
    for tid in range(int(size(tv.layout, 0))):
        for vid in range(int(size(tv.layout, 1))):
            a, b = (int(c) for c in tv(tid, vid))
            if (a, b) not in filled:
                filled.add((a, b))
                x, y = place(a, b)
                out.append(f"\\node[fill={color(tid, vid)}] at ({x},{y}) {{\\shortstack{{T{tid} \\\\ V{vid}}}}};\n")
    return out


def _tv_tensor(ref: Tensor, layout_tv: Layout) -> Tensor:
    """CuTe's ``composition(ref, layout_tv)`` of a coordinate tensor: (tid, vid) -> coordinate."""
    return Tensor(ref.iterator, composition(ref.layout, layout_tv))


def format_latex_mma(mma, color=tikz_color_tv) -> str:
    """CuTe's ``print_latex(TiledMMA)``: the C, A and B (thread, value) maps over one ``tile_shape(mma)``."""
    mt, nt, kt = tile_shape(mma)
    c = _tv_tensor(make_identity_tensor((mt, nt)), mma.get_layoutC_TV())
    a = _tv_tensor(make_identity_tensor((mt, kt)), mma.get_layoutA_TV())
    b = _tv_tensor(make_identity_tensor((nt, kt)), mma.get_layoutB_TV())
    M, N, K = (int(v) for v in product_each((mt, nt, kt)))  # noqa: N806 - CuTe's names
    out = [f"% LayoutC: {c}\n", f"% LayoutA: {a}\n", f"% LayoutB: {b}\n", _TIKZ_HEADER]
    out += _cells(c, color, lambda m, n: (m, n))
    out.append(_grid(0, 0, M, N))
    out += _cells(a, color, lambda m, k: (m, k - K - 1))
    out.append(_grid(0, -K - 1, M, -1))
    out += [_label(m, -1 - K - 1, m) for m in range(M)]
    out += [_label(-1, k - K - 1, k) for k in range(K)]
    out += _cells(b, color, lambda n, k: (k - K - 1, n))
    out.append(_grid(-K - 1, 0, -1, N))
    out += [_label(-1 - K - 1, n, n) for n in range(N)]
    out += [_label(k - K - 1, -1, k) for k in range(K)]
    out.append(_FOOTER)
    return "".join(out)


def format_latex_copy(copy, color=tikz_color_tv) -> str:
    """CuTe's ``print_latex(TiledCopy)``: the source and destination (thread, value) maps over one tile."""
    tile_mn = product_each(shape(logical_divide(make_layout((Int(1), Int(1))), copy.Tiler_MN)))
    ref = make_identity_tensor(tile_mn)
    s = Tensor(ref.iterator, copy.tidfrg_S(ref.layout))(_, _, Int(0))
    d = Tensor(ref.iterator, copy.tidfrg_D(ref.layout))(_, _, Int(0))
    M, N = (int(v) for v in tile_mn)  # noqa: N806 - CuTe's names
    out = [f"% Layout S TV: {s}\n", f"% Layout D TV: {d}\n", _TIKZ_HEADER]
    out += _cells(s, color, lambda m, n: (m, n))
    out.append(_grid(0, 0, M, N))
    out += [_label(m, -1, m) for m in range(M)]
    out += [_label(-1, n, n) for n in range(N)]
    out += _cells(d, color, lambda m, n: (m, n + N + 3))
    out.append(_grid(0, N + 3, M, N + N + 3))
    out += [_label(m, N + N + 3, m) for m in range(M)]
    out += [_label(-1, n + N + 3, n) for n in range(N)]
    out.append(_FOOTER)
    return "".join(out)


def format_latex_tv(layout_tv, tile_mn, color=tikz_color_tv) -> str:
    """CuTe's ``print_latex_tv(layout_tv, tile_mn, color)`` as text: each cell ``(m, n)`` of the ``M x N`` tile
    (``product_each(shape(tile_mn))``) reached by ``layout_tv(tid, vid)`` shows the first (tid, vid), tid outer.

    ``layout_tv`` maps (thread, value) to an (m, n) coordinate: a coordinate tensor (``composition`` of an identity
    tensor with a TV layout) or a layout with basis strides. CuTe marks cells in a column-major ``M x N`` bool tensor,
    so a coordinate is checked as that tensor's index ``m + n * M`` (outside the tile, CuTe reads out of bounds)."""
    if int(rank(layout_tv)) != 2:
        raise MmaError(f"print_latex_tv: layout_tv must have rank 2, (thread, value), got {layout_tv} (CuTe's "
                       "static_assert); group its modes into (thread, value)")
    M, N = (int(v) for v in _tile_extent(tile_mn))  # noqa: N806 - CuTe's names
    out, filled = [f"% Layout TV: {layout_tv}\n", _TIKZ_HEADER], set()
    for tid in range(int(size(layout_tv, 0))):
        for vid in range(int(size(layout_tv, 1))):
            m, n = _mn(layout_tv, tid, vid)
            idx = m + n * M
            if not 0 <= idx < M * N:
                raise MmaError(f"print_latex_tv: (T{tid}, V{vid}) maps to ({m},{n}), outside the {M}x{N} tile "
                               f"{tile_mn} (CuTe would read out of bounds); pass the tile layout_tv covers")
            if idx not in filled:
                filled.add(idx)
                out.append(f"\\node[fill={color(tid, vid)}] at ({m},{n}) {{\\shortstack{{T{tid} \\\\ V{vid}}}}};\n")
    out.append(_grid(0, 0, M, N))
    out += [_label(m, -1, m) for m in range(M)]
    out += [_label(-1, n, n) for n in range(N)]
    out.append(_FOOTER)
    return "".join(out)


def print_latex_tv(layout_tv, tile_mn, color=tikz_color_tv) -> None:
    """CuTe's ``print_latex_tv``: prints ``format_latex_tv(layout_tv, tile_mn, color)``."""
    print(format_latex_tv(layout_tv, tile_mn, color), end="")


def _tile_extent(tile_mn):
    """``product_each(shape(tile_mn))`` of a shape, a layout or a tile of layouts; two extents (CuTe's ``[M, N]``)."""
    ext = product_each(shape(tuple(tile_mn) if isinstance(tile_mn, list) else tile_mn))
    if not isinstance(ext, tuple) or len(ext) != 2:
        raise MmaError(f"print_latex_tv: tile_mn must have two modes (M, N), got {tile_mn}; pass e.g. (_16, _8)")
    return ext


def _mn(layout_tv, tid, vid):
    """``auto [m, n] = layout_tv(tid, vid)``: the value must be a pair of integers."""
    v = layout_tv(tid, vid)
    vals = getattr(v, "values", v)
    if not isinstance(vals, tuple) or len(vals) != 2:
        raise MmaError(f"print_latex_tv: layout_tv({tid},{vid}) = {v} is not an (m, n) coordinate (CuTe's "
                       "structured binding does not compile); compose an identity tensor with the TV layout, e.g. "
                       "composition(make_identity_tensor(tile_mn), layout_tv)")
    return int(vals[0]), int(vals[1])


# tk.print_latex / tk.format_latex of these objects (the layout layer's drawer registry). An MMA_Atom draws
# make_tiled_mma(atom) with the default colours: CuTe's MMA_Atom overload drops ``color``.
register_latex(MMA_Atom, lambda atom, color: format_latex_mma(make_tiled_mma(atom)))
register_latex(TiledMMA, lambda mma, color: format_latex_mma(mma, color or tikz_color_tv))
register_latex(TiledCopy, lambda copy, color: format_latex_copy(copy, color or tikz_color_tv))
