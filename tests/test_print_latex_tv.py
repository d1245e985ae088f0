"""CuTe's ``print_latex_tv`` (cute/util/print_latex.hpp): the whole TikZ text is checked against CuTe by the oracle
(tests/oracle/cases.py LATEX_TV); here the rules read from that source: first (tid, vid) wins a cell, tid outer;
the cell set is the column-major ``M x N`` bool tensor CuTe fills; ``[m, n]`` must be a pair; rank 2."""

from __future__ import annotations

import pytest

import tmakit as tk
from tmakit import Int

TV = tk.make_layout((Int(8), Int(4)), (Int(4), Int(1)))


def _nodes(text):
    return [ln for ln in text.splitlines() if ln.startswith("\\node[fill=")]


def test_header_comment_grid_and_labels():
    t = tk.format_latex_tv(tk.composition(tk.make_identity_tensor((Int(4), Int(8))), TV), (Int(4), Int(8)))
    lines = t.splitlines()
    assert lines[0] == "% Layout TV: ArithTuple(_0,_0) o (_8,_4):(_1@1,_1@0)"
    assert lines[1] == "\\documentclass[convert]{standalone}"
    assert "\\draw[color=black,thick,shift={(-0.5,-0.5)}] (0,0) grid (4,8);" in lines
    assert lines[-2:] == ["\\end{tikzpicture}", "\\end{document}"]
    assert "\\node at (3,-1) {\\Large{\\texttt{3}}};" in lines and "\\node at (-1,7) {\\Large{\\texttt{7}}};" in lines
    nodes = _nodes(t)
    assert len(nodes) == 32  # every cell once
    # T1 V2 -> index 4*1 + 2 = 6 -> (m, n) = (2, 1); TikzColor_TV's second colour
    assert "\\node[fill={rgb,255:red,175;green,255;blue,175}] at (2,1) {\\shortstack{T1 \\\\ V2}};" in nodes


def test_first_thread_value_wins_a_cell():
    tv = tk.make_layout((Int(4), Int(2)), (Int(1), Int(0)))  # both values of a thread reach one cell
    nodes = _nodes(tk.format_latex_tv(tk.composition(tk.make_identity_tensor((Int(4), Int(4))), tv), (4, 4)))
    assert [n.split("{\\shortstack{")[1] for n in nodes] == [f"T{t} \\\\ V0}}}};" for t in range(4)]


def test_basis_stride_layout_and_tile_as_layout():
    tv = tk.make_layout((Int(2), Int(4)), (tk.E(1), tk.E(0)))
    t = tk.format_latex_tv(tv, tk.make_layout((Int(4), Int(2))))
    assert t.startswith("% Layout TV: (_2,_4):(_1@1,_1@0)\n")
    assert len(_nodes(t)) == 8


def test_custom_color_and_print(capsys):
    tv = tk.composition(tk.make_identity_tensor((Int(2), Int(2))), tk.make_layout((Int(2), Int(2))))
    tk.print_latex_tv(tv, (2, 2), lambda t, v: f"c{t}{v}")
    out = capsys.readouterr().out
    assert out == tk.format_latex_tv(tv, (2, 2), lambda t, v: f"c{t}{v}")
    assert "\\node[fill=c01] at (0,1) {\\shortstack{T0 \\\\ V1}};" in out


def test_rejections():
    ident = tk.make_identity_tensor((Int(4), Int(4)))
    with pytest.raises(tk.LayoutError, match="rank 2"):  # CuTe's static_assert
        tk.format_latex_tv(tk.composition(ident, tk.make_layout((Int(2), Int(2), Int(4)))), (4, 4))
    with pytest.raises(tk.LayoutError, match="not an \\(m, n\\) coordinate"):  # [m, n] of an int does not compile
        tk.format_latex_tv(TV, (8, 4))
    with pytest.raises(tk.LayoutError, match="outside the 2x2 tile"):  # CuTe would index its bool tensor out of range
        tk.format_latex_tv(tk.composition(ident, tk.make_layout((Int(4), Int(4)))), (2, 2))
    with pytest.raises(tk.LayoutError, match="two modes"):
        tk.format_latex_tv(tk.composition(ident, tk.make_layout((Int(4), Int(4)))), (16,))
