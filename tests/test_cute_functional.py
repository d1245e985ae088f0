"""CuTe's integer utilities (numeric/math.hpp, integral_constant.hpp, int_tuple.hpp) and function objects
(algorithm/functional.hpp) in tmakit. The values against CuTe itself are oracle cases (FUNCTIONAL in
tests/oracle/cases.py); these tests cover what the oracle cannot spell: the unsigned <bit> helpers (expected values
from the comments in math.hpp), staticness, the error types, and how the builtin-shadowing names are exported."""

from __future__ import annotations

import builtins

import pytest

import tmakit as tk
from tmakit.layout import functional as fn

I = tk.Int  # noqa: E741


def test_builtin_shadowing_names_are_attributes_not_star_exports():
    for name in fn.BUILTIN_NAMES:
        assert getattr(tk, name) is getattr(fn, name)
        assert name not in tk.__all__ and name not in tk.layout.__all__
    ns: dict = {}
    exec("from tmakit import *", ns)  # noqa: S102 - the star import must leave Python's max/min/abs/sum alone
    assert all(n not in ns for n in fn.BUILTIN_NAMES)
    assert builtins.max([1, 3]) == 3
    for name in fn.__all__:
        assert name in tk.__all__ and getattr(tk, name) is getattr(fn, name)


@pytest.mark.parametrize("f,args,expected", [
    (tk.max, (I(3), I(5)), I(5)), (tk.max, (I(3), 5), 5), (tk.max, ((I(3), (I(4), I(9))), I(2)), I(9)),
    (tk.min, ((6, (I(4), I(9))), 7), 4), (tk.gcd, ((I(12), (I(18), I(8))),), I(2)), (tk.gcd, (4, -6), -2),
    (tk.gcd, (I(0), I(0)), I(0)), (tk.lcm, (I(4), I(6)), I(12)), (tk.lcm, (-4, 6), -12),
    (tk.sum, ((I(1), (I(2), I(3))),), I(6)), (tk.sum, ((),), I(0)), (tk.sum, ((I(1), (2, I(3))),), 6),
    (tk.abs, (I(-3),), I(3)), (tk.signum, (-7,), -1), (tk.shiftl, (I(12), I(-2)), I(3)),
    (tk.shiftr, (I(-12), I(2)), I(-3)), (tk.safe_div, (13, I(4)), 3), (tk.safe_div, (I(-12), I(4)), I(-3)),
])
def test_values_and_staticness(f, args, expected):
    got = f(*args)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize("x,width,ceil,floor,pop", [
    (0b0000, 0, 0b0001, 0b0000, 0), (0b0001, 1, 0b0001, 0b0001, 1), (0b0010, 2, 0b0010, 0b0010, 1),
    (0b0011, 2, 0b0100, 0b0010, 2), (0b0101, 3, 0b1000, 0b0100, 2), (0b0111, 3, 0b1000, 0b0100, 3),
    (0b1000, 4, 0b1000, 0b1000, 1), (0b1001, 4, 0b10000, 0b1000, 2), (0b00011101, 5, 0b100000, 0b10000, 4),
])
def test_bit_helpers_match_the_math_hpp_tables(x, width, ceil, floor, pop):
    assert (tk.bit_width(x), tk.bit_ceil(x), tk.bit_floor(x), tk.popcount(x)) == (width, ceil, floor, pop)
    if x:
        assert tk.log_2(x) == width - 1


def test_has_single_bit_static_and_dynamic():
    assert tk.has_single_bit(I(8)) == I(1) and type(tk.has_single_bit(I(8))) is I
    assert tk.has_single_bit(I(6)) == I(0) and tk.has_single_bit(16) is True and tk.has_single_bit(0) is False


def test_function_objects_fold_like_cute():
    assert tk.fold((I(2), I(3), I(4)), I(1), tk.multiplies()) == I(24)
    assert type(tk.fold((I(1), 2, I(3)), I(0), tk.plus())) is int
    assert tk.divides()(-7, 2) == -3 and tk.modulus()(-7, 2) == -1 and tk.modulus()(7, I(1)) == I(0)
    assert tk.transform((I(-2), 3), tk.abs_fn()) == (I(2), 3)
    assert tk.identity()((I(3), 4)) == (I(3), 4) and tk.negate()(I(3)) == I(-3)
    assert repr(tk.plus()) == "plus{}" and tk.plus() == tk.plus()


@pytest.mark.parametrize("call", [
    lambda: tk.max(()), lambda: tk.gcd((), 1), lambda: tk.abs((I(1), I(2))), lambda: tk.lcm(I(0), I(0)),
    lambda: tk.safe_div(I(13), I(4)), lambda: tk.safe_div(4, 0), lambda: tk.max_fn()(I(1), (I(2),)),
    lambda: tk.bit_width(-1), lambda: tk.log_2(0), lambda: tk.min(I(1), tk.make_layout(I(2))),
    lambda: tk.divides()(1, 0), lambda: tk.sum((I(1), "a")), lambda: tk.max(True, 2),
])
def test_rejections_raise_layout_error(call):
    with pytest.raises(tk.LayoutError):
        call()


def test_product_like():
    assert tk.product_like(((I(2), I(3)), ((4, I(5)), I(2))), (I(1), (I(1), I(1)))) == (I(6), (20, I(2)))
