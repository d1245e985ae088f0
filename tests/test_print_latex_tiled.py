"""``print_latex`` of MMA_Atom / TiledMMA / TiledCopy (cute/util/print_latex.hpp). CuTe's own text for SM80 atoms
and tiled copies is in the oracle (print_latex cases of LATEX in tests/oracle/cases.py); these tests cover the
structure, the colour callback and the dispatch from ``tk.print_latex`` / ``tk.format_latex``."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tmakit as tk

I = tk.Int  # noqa: E741


def _mma(layout=None):
    return tk.make_tiled_mma(tk.SM80_16x8x8_F16F16F16F16_TN(), layout)


def _copy():
    return tk.make_tiled_copy(tk.Copy_Atom(tk.UniversalCopy(np.uint32), tk.half_t), tk.make_layout((I(4), I(2))),
                              tk.make_layout((I(1), I(2))))


def _cells(text):
    return re.findall(r"\\node\[fill=([^\]]*)\] at \((-?\d+),(-?\d+)\) \{\\shortstack\{T(\d+) \\\\ V(\d+)\}\};", text)


def test_mma_picture_has_one_cell_per_coordinate_of_c_a_b():
    text = tk.format_latex(_mma())
    assert text.startswith("% LayoutC: ArithTuple(_0,_0) o ") and text.endswith("\\end{tikzpicture}\n\\end{document}\n")
    cells = _cells(text)
    assert len(cells) == 16 * 8 + 16 * 8 + 8 * 8  # C (M,N), A (M,K), B (N,K)
    assert len({(x, y) for _, x, y, _, _ in cells}) == len(cells)
    assert "\\draw[color=black,thick,shift={(-0.5,-0.5)}] (0,-9) grid (16,-1);" in text  # A: columns k - K - 1
    assert "\\draw[color=black,thick,shift={(-0.5,-0.5)}] (-9,0) grid (-1,8);" in text  # B: rows k - K - 1


def test_thread_colours_follow_tikz_color_tv():
    for fill, _, _, tid, vid in _cells(tk.format_latex(_mma())):
        assert fill == tk.tikz_color_tv(int(tid), int(vid))
    assert tk.tikz_color_tv(9, 0) == tk.tikz_color_tv(1, 3) != tk.tikz_color_tv(0, 0)


def test_custom_colour_for_tiled_copy_and_mma_but_not_for_an_atom():
    def color(t, v):
        return f"c{t}v{v}"

    copy = tk.format_latex(_copy(), color)
    assert {f for f, *_ in _cells(copy)} == {f"c{t}v{v}" for _, _, _, t, v in _cells(copy)}
    assert "fill=c0v0" in tk.format_latex(_mma(), color)
    atom = tk.MMA_Atom(tk.SM80_16x8x8_F16F16F16F16_TN())
    assert tk.format_latex(atom, color) == tk.format_latex(_mma())  # CuTe's MMA_Atom overload drops the colour


def test_copy_picture_source_then_destination_shifted_by_n_plus_3():
    text = tk.format_latex(_copy())
    assert text.splitlines()[:2] == ["% Layout S TV: ArithTuple(_0,_0) o ((_4,_2),(_2,_1)):((_1@0,_2@1),(_1@1,_0))",
                                     "% Layout D TV: ArithTuple(_0,_0) o ((_4,_2),(_2,_1)):((_1@0,_2@1),(_1@1,_0))"]
    cells = _cells(text)
    src = [(int(x), int(y)) for _, x, y, _, _ in cells[:16]]
    dst = [(int(x), int(y) - 7) for _, x, y, _, _ in cells[16:]]
    assert len(cells) == 32 and src == dst


def test_print_latex_prints_the_same_text(capsys):
    tk.print_latex(_copy())
    assert capsys.readouterr().out == tk.format_latex(_copy())


@pytest.mark.parametrize("x", [tk.SM80_16x8x8_F16F16F16F16_TN(), (I(2), I(3)), "layout"])
def test_other_objects_are_refused(x):
    with pytest.raises(tk.LayoutError, match="print_latex takes"):
        tk.format_latex(x)
