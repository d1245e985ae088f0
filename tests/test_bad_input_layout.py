"""Bad input to the layout algebra gets ``tk.LayoutError``: no silent coercion, no ZeroDivisionError or
RecursionError."""

from __future__ import annotations

import numpy as np
import pytest

import tmakit as tk
from tmakit.layout import LayoutError
from tmakit.layout.integer import MAX_DEPTH

I = tk.Int  # noqa: E741 - CuTe's Int
BAD = [None, "4", b"4", 1.5, 4.0, float("nan"), float("inf"), True]


@pytest.mark.parametrize("bad", BAD, ids=repr)
def test_make_layout_takes_integers_only(bad):
    for args in [(bad,), ((4, bad),), ((4, 4), (1, bad))]:
        with pytest.raises(LayoutError, match="not an integer"):
            tk.make_layout(*args)
    with pytest.raises(LayoutError):
        tk.Layout((4, bad))


def test_make_layout_refuses_negative_extents_and_keeps_numpy_ints():
    with pytest.raises(LayoutError, match="negative extent"):
        tk.make_layout((4, -4))
    assert str(tk.make_layout((np.int64(4), I(2)), (np.int32(2), I(1)))) == "(4,_2):(2,_1)"


ZERO_SIZE = [
    ("complement", lambda: tk.complement(tk.make_layout((I(2), I(0)), (I(1), I(2))), I(16))),
    ("complement cotarget", lambda: tk.complement(tk.make_layout(I(4), I(2)), (I(0),))),
    ("logical_divide by size 0", lambda: tk.logical_divide(tk.make_layout(I(8)), I(0))),
    ("zipped_divide by size 0", lambda: tk.zipped_divide(tk.make_layout((I(8), I(8))), (I(0), I(2)))),
    ("logical_product", lambda: tk.logical_product(tk.make_layout(I(0)), tk.make_layout(I(4)))),
    ("blocked_product", lambda: tk.blocked_product(tk.make_layout((I(0), I(2))), tk.make_layout((I(2), I(2))))),
    ("tile_to_shape", lambda: tk.tile_to_shape(tk.make_layout((I(0), I(2))), (I(8), I(8)))),
    ("composition", lambda: tk.composition(tk.make_layout((I(0), I(4), I(2)), (I(8), I(1), I(1))),
                                           tk.make_layout(I(4), I(4)))),
    ("shape_div", lambda: tk.shape_div(I(8), I(0))),
    ("ceil_div", lambda: tk.ceil_div(8, 0)),
    ("static division", lambda: I(8) // I(0)),
    ("idx2crd", lambda: tk.idx2crd(5, (I(0), I(4)), (I(1), I(0)))),
    ("local_tile", lambda: tk.local_tile(tk.make_identity_tensor((8, 8)), (I(0), I(4)), (0, 0))),
]


@pytest.mark.parametrize("what,fn", ZERO_SIZE, ids=[z[0] for z in ZERO_SIZE])
def test_zero_size_modes_are_a_named_error(what, fn):
    with pytest.raises(LayoutError, match="divides by zero"):
        fn()


def _deep(n, leaf=4):
    x = leaf
    for _i in range(n):
        x = (x,)
    return x


DEEP = [
    ("make_layout", lambda d: tk.make_layout(d)),
    ("composition tiler", lambda d: tk.composition(tk.make_layout(8), d)),
    ("logical_divide tiler", lambda d: tk.logical_divide(tk.make_layout(8), d)),
    ("complement cotarget", lambda d: tk.complement(tk.make_layout(8), d)),
    ("layout coordinate", lambda d: tk.make_layout(8)(d)),
    ("tensor coordinate", lambda d: tk.make_tensor(np.zeros(8))[d]),
    ("local_tile coordinate", lambda d: tk.local_tile(tk.make_identity_tensor((8, 8)), (2, 2), d)),
    ("identity tensor", lambda d: tk.make_identity_tensor(d)),
]


@pytest.mark.parametrize("what,fn", DEEP, ids=[d[0] for d in DEEP])
def test_deep_nesting_is_a_named_error(what, fn):
    with pytest.raises(LayoutError):
        fn(_deep(500))


def test_nesting_up_to_the_limit_works():
    lay = tk.make_layout(_deep(MAX_DEPTH - 1, I(4)))
    assert lay.size() == 4 and tk.coalesce(lay) == tk.make_layout(I(4))
