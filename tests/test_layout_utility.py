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
