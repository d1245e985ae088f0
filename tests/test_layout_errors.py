"""Invalid inputs raise ``tk.LayoutError`` with a message that names the offending values.

These are the inputs CuTe rejects at compile time (static_assert) or that would be undefined there.
"""

from __future__ import annotations

import pytest

import tmakit as tk

I = tk.Int  # noqa: E741 - CuTe's Int


def L(*args):  # noqa: N802 - short for make_layout
    return tk.make_layout(*args)


ROW_MAJOR_4x8 = L((I(4), I(8)), (I(8), I(1)))

CASES = [
    ("incongruent shape and stride", lambda: L((4, 8), (1,)), ["(4,8)", "(1)", "congruent"]),
    ("bool is not an integer", lambda: L(True), ["True"]),
    ("composition stride divisibility", lambda: tk.composition(ROW_MAJOR_4x8, L(I(2), I(6))),
     ["(_4,_8):(_8,_1)", "_2:_6", "stride _6", "_4"]),
    ("composition shape divisibility", lambda: tk.composition(ROW_MAJOR_4x8, L(I(6), I(1))),
     ["(_4,_8):(_8,_1)", "_6:_1", "_6"]),
    ("composition dynamic zero stride", lambda: tk.composition(ROW_MAJOR_4x8, L(4, 0)), ["4:0", "tk.Int(0)"]),
    ("composition tiler has too many modes", lambda: tk.composition(L(I(8)), (I(2), I(2))), ["(_2,_2)", "_8:_1"]),
    ("product that does not compose", lambda: tk.logical_product(L((I(2), I(2)), (I(4), I(1))),
                                                                 L((I(3), I(2)), (I(1), I(3)))), ["(_3,_2):(_1,_3)"]),
    ("complement with dynamic strides", lambda: tk.complement(L((I(2), I(4)), (1, 2)), 64), ["(_2,_4):(1,2)"]),
    ("complement of a non-injective layout", lambda: tk.complement(L((I(2), I(2)), (I(1), I(1)))),
     ["non-injective", "_1"]),
    ("complement of a non-layout", lambda: tk.complement("x"), ["'x'"]),
    ("left_inverse with dynamic strides", lambda: tk.left_inverse(L((I(2), I(4)), (1, 2))), ["(_2,_4):(1,2)"]),
    ("left_inverse divisibility", lambda: tk.left_inverse(L((I(2), I(3)), (I(3), I(2)))),
     ["(_2,_3):(_3,_2)", "_3"]),
    ("shape_div of coprime statics", lambda: tk.shape_div(I(6), I(4)), ["_6", "_4"]),
    ("blocked_product of mismatched ranks", lambda: tk.blocked_product(L((I(4),)), L(I(3))), ["(_4)", "_3"]),
    ("tile_to_shape does not divide", lambda: tk.tile_to_shape(L((I(3), I(2))), (I(8), I(8))),
     ["(_3,_2)", "(_8,_8)"]),
    ("tile_to_shape rank", lambda: tk.tile_to_shape(L((I(2), I(2), I(2))), (I(8), I(8))), ["(_2,_2,_2)", "(_8,_8)"]),
    ("tile_to_shape of a dynamic block to a static target",  # CuTe: evenly_divides is not a compile-time value
     lambda: tk.tile_to_shape(L((2,), (I(1),)), (I(6),), (I(0),)), ["(_6)", "(2)", "static"]),
    ("divide tiler has too many modes", lambda: tk.logical_divide(L((I(8), I(8))), (I(2), I(2), I(2))),
     ["(_2,_2,_2)", "(_8,_8)"]),
    ("zipped_divide with '_'", lambda: tk.zipped_divide(L((I(8), I(8))), (tk._, I(4))), ["_8", "'_'"]),
    ("coordinate of the wrong rank", lambda: L((I(4), I(8)))((1, 2, 3)), ["(1,2,3)", "(_4,_8)"]),
    ("slice of the wrong rank", lambda: L((I(4), I(8)))((tk._, 1, 2)), ["(_,1,2)", "(_4,_8)"]),
    ("idx2crd of the wrong rank", lambda: tk.idx2crd((1, 2), (I(4),)), ["(1,2)", "(_4)"]),
    ("overlapping swizzle bits", lambda: tk.Swizzle(3, 4, 2), ["Swizzle<3,4,2>"]),
    ("slicing a dynamic swizzled layout", lambda: tk.composition(tk.Swizzle(3, 4, 3), L((8, 64), (64, 1)))(tk._, 3),
     ["static"]),
    ("slicing a swizzled layout without '_'",
     lambda: tk.composition(tk.Swizzle(3, 2, 3), L((I(2), I(4)), (I(1), I(2)))).slice_and_offset((0, 1)),
     ["(0,1)", "Sw<3,2,3>", "'_'"]),
    ("inverse of a swizzled layout at a dynamic offset",
     lambda: tk.right_inverse(tk.make_composed_layout(tk.Swizzle(3, 4, 3), 7, L((I(8), I(64)), (I(64), I(1))))),
     ["right_inverse", "offset 7", "static"]),
    ("inverse whose swizzle bits do not stay a swizzle",
     lambda: tk.left_inverse(tk.composition(tk.Swizzle(3, 4, 3), L((I(8), I(64)), (I(64), I(1))))),
     ["left_inverse", "(_64,_8):(_8,_1)", "Sw<3,4,3>", "Y=", "Z="]),
    ("layout composed with a swizzle through dynamic strides",
     lambda: tk.composition(L((8, I(64)), (I(64), I(1))), tk.Swizzle(2, 0, 3)), ["(8,_64):(_64,_1)", "static"]),
    ("layout composed with a swizzle through a negative stride",
     lambda: tk.composition(L((I(8), I(64)), (I(-64), I(1))), tk.Swizzle(2, 0, 3)), ["Z=-192", "non-negative"]),
    ("layout composed with a swizzled layout at an offset",
     lambda: tk.composition(L(I(512)), tk.make_composed_layout(tk.Swizzle(3, 3, 3), I(4), L(I(512)))),
     ["_4", "static zero offset"]),
    ("swizzles of different shifts", lambda: tk.composition(tk.Swizzle(2, 4, 3), tk.Swizzle(2, 4, 2)),
     ["Sw<2,4,3>", "Sw<2,4,2>", "same shift"]),
    ("size of a layout that ends in a swizzle",
     lambda: tk.size(tk.right_inverse(tk.make_composed_layout(tk.Swizzle(3, 4, 3), I(16), L(I(1024))))),
     ["o _-16 o Sw<3,4,3>", "no shape"]),
    ("print_layout of rank 3", lambda: tk.format_layout(L((I(2), I(2), I(2)))), ["(_2,_2,_2)"]),
    ("local_tile coordinate with too many modes",
     lambda: tk.local_tile(tk.make_identity_tensor((64, 64)), (I(16), I(16)), (1, 2, 3)), ["(1,2,3)", "(4,4)"]),
]


@pytest.mark.parametrize("what,fn,names", CASES, ids=[c[0] for c in CASES])
def test_raises_layout_error_naming_values(what, fn, names):
    with pytest.raises(tk.LayoutError) as err:
        fn()
    for name in names:
        assert name in str(err.value), f"{what}: {name!r} not in {str(err.value)!r}"


def test_layout_error_is_a_value_error():
    assert issubclass(tk.LayoutError, ValueError)
