"""The layout utilities the oracle cannot spell (a Python callable) and their errors; everything else about them is
compared with CuTe in tests/data/cute_oracle.txt."""

from __future__ import annotations

import pytest

import tmakit as tk

I, L = tk.Int, tk.make_layout


def test_transform_layout_one_and_two_operands():
    a = L((I(4), I(8), I(2)), (I(8), I(1), I(32)))
    assert str(tk.transform_layout(a, tk.coalesce)) == str(a)
    b = L((I(2), I(2)), (I(1), I(2)))
    got = tk.transform_layout(a, b, lambda x, y: tk.logical_product(x, y))
    assert str(got) == str(tk.make_layout(tk.logical_product(a[0], b[0]), tk.logical_product(a[1], b[1]), a[2]))


def test_coalesce_by_profile_is_transform_layout():
    a = L(((I(2), I(2)), (I(4), I(2))), ((I(1), I(2)), (I(4), I(16))))
    assert str(tk.coalesce(a, (I(1), I(1)))) == str(tk.transform_layout(a, tk.coalesce))


def test_predicates_are_static_where_cute_is():
    assert tk.congruent((I(4), 8), (1, 2)) == I(1) and type(tk.congruent(4, (1, 2))) is tk.Int
    assert tk.compatible(8, (I(2), I(4))) is True
    assert type(tk.evenly_divides((I(8), I(6)), (I(4), I(3)))) is tk.Int


@pytest.mark.parametrize("call,words", [
    (lambda: tk.select(L((I(4), I(8))), 2), ["select", "mode 2", "rank 2"]),
    (lambda: tk.unflatten(L((I(2), I(3))), (I(1), (I(1), I(1)))), ["unflatten", "2 leaves", "3"]),
    (lambda: tk.round_up((I(4),), I(2)), ["round_up", "both"]),
    (lambda: tk.elem_scale((I(2), I(3)), (I(4),)), ["elem_scale", "rank"]),
    (lambda: tk.crd2crd((1, 2), (I(4), I(8)), (I(32),)), ["crd2crd", "rank"]),
    (lambda: tk.get_swizzle_portion(tk.make_composed_layout(L(I(8)), I(0), L(I(8)))), ["get_swizzle_portion"]),
    (lambda: tk.domain_distribute((4, I(2)), I(2)), ["domain_distribute", "static"]),
    (lambda: tk.with_shape(L(I(8))), ["with_shape", "shape"]),
])
def test_errors_name_the_rule(call, words):
    with pytest.raises(tk.LayoutError) as e:
        call()
    for w in words:
        assert w in str(e.value)


def _arange_tensor(layout, dtype):
    import numpy as np

    return tk.make_tensor(np.arange(int(layout.cosize()), dtype=dtype), layout)


def test_make_tensor_like_and_fragment_like_own_new_storage():
    import numpy as np

    src = _arange_tensor(L((I(4), I(8)), (I(8), I(1))), np.float32)
    like = tk.make_tensor_like(src)
    assert str(like.layout) == str(tk.make_layout_like(src.layout)) == "(_4,_8):(_8,_1)"
    assert like.iterator.array.dtype == np.float32 and like.iterator.array is not src.iterator.array
    assert float(like.iterator.array.sum()) == 0.0
    frag = tk.make_fragment_like(src)
    assert isinstance(frag, tk.Tensor) and str(frag.layout) == str(tk.make_fragment_like(src.layout))
    frag[1, 2] = 5
    assert frag[1, 2] == 5 and src[1, 2] == 10  # new storage, not a view
    assert tk.make_tensor_like(src, np.int8).iterator.array.dtype == np.int8
    assert tk.make_fragment_like(src.layout, np.float16).iterator.array.dtype == np.float16
    assert isinstance(tk.make_fragment_like(src.layout), tk.Layout)  # a layout stays a layout without a type


def test_owning_tensors_are_static_and_typed():
    import numpy as np

    with pytest.raises(tk.LayoutError, match="dynamic owning"):
        tk.make_tensor_like(_arange_tensor(L((4, I(8))), np.float32))
    with pytest.raises(tk.LayoutError, match="value_type"):
        tk.make_fragment_like(tk.make_tensor(0, L((I(4), I(8)))))  # a bare offset has no element type
    with pytest.raises(tk.LayoutError, match="value_type"):
        tk.make_tensor_like(L((I(4), I(8))), "not a type")


def test_domain_offset_of_an_array_tensor_moves_its_pointer():
    import numpy as np

    src = _arange_tensor(L((I(4), I(8)), (I(8), I(1))), np.float32)
    moved = tk.domain_offset((1, 2), src)
    assert str(moved.layout) == str(src.layout) and moved[0, 0] == src[1, 2] == 10


def test_recast_errors_are_layout_errors_and_flags_scale():
    from tmakit.mma import SmemPtrFlag

    with pytest.raises(tk.LayoutError, match="divisib|multiple"):
        tk.upcast(L((I(4), I(8)), (I(3), I(1))), 2)
    with pytest.raises(tk.LayoutError, match="stride-1|_1 stride"):
        tk.downcast(L((4, 8), (1, 4)), 2)
    with pytest.raises(tk.LayoutError, match="power of two"):
        tk.upcast(tk.Swizzle(3, 4, 3), 3)
    with pytest.raises(tk.LayoutError, match="static"):
        tk.upcast(tk.make_composed_layout(tk.Swizzle(3, 4, 3), 16, L((I(8), I(64)), (I(64), I(1)))), 2)
    atom = tk.make_composed_layout(tk.Swizzle(3, 4, 3), SmemPtrFlag(8), L((I(8), I(128)), (I(128), I(1))))
    up = tk.upcast(atom, 2)  # pointer_flagged.hpp: the swizzle stays (it acts on bytes), the flag widens
    assert str(up) == "Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)"
    assert str(tk.downcast(up, 2)) == str(atom)
    assert str(tk.recast_layout(atom, tk.float_e4m3_t, tk.half_t)) == str(up)
