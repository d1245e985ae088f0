"""CuTe's tuple algorithms, tuple comparisons, mode rearrangements, partitions, tensor recast and print_latex:
their laws on random tuples (hypothesis), the behaviour the oracle cannot show (for_each's calls, numpy-backed
recasts, make_counting_tensor), and the bad inputs CuTe refuses (``LayoutError`` naming the values).

The printed results themselves are checked against CuTe in tests/test_layout_oracle.py (COMPARE, TUPLE_ALGO, MODES,
TENSOR_EXTRA, RANDOM_TUPLE in tests/oracle/cases.py).
"""

from __future__ import annotations

import itertools
from math import prod

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tmakit as tk
from tmakit.layout.integer import to_str

I = tk.Int  # noqa: E741 - CuTe's Int
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def L(*args):  # noqa: N802 - short for make_layout
    return tk.make_layout(*args)


def ints(static):
    """Small integers, static (tk.Int) or dynamic (int) as ``static`` draws."""
    return st.builds(lambda v, s: I(v) if s else v, st.integers(0, 4), static)


flat_tuples = st.lists(ints(st.booleans()), min_size=0, max_size=5).map(tuple)
nested = st.recursive(ints(st.booleans()), lambda kids: st.lists(kids, min_size=1, max_size=3).map(tuple),
                      max_leaves=8)


# ---------------------------------------------------------------- comparisons
@SETTINGS
@given(st.integers(1, 4).flatmap(lambda n: st.tuples(*(st.tuples(ints(st.booleans()), ints(st.booleans()))
                                                      for _ in range(n)))))
def test_lex_and_colex_order_row_and_column_major_indices(pairs):
    """lex_less orders coordinates as a row-major layout's offsets do, colex_less as a column-major layout's."""
    a, b = tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
    shape = tuple(5 for _ in a)
    row, col = L(shape, tk.LayoutRight), L(shape)
    assert bool(tk.lex_less(a, b)) == (int(row(a)) < int(row(b)))
    assert bool(tk.colex_less(a, b)) == (int(col(a)) < int(col(b)))
    assert bool(tk.elem_less(a, b)) == all(int(x) < int(y) for x, y in pairs)


@SETTINGS
@given(flat_tuples, flat_tuples)
def test_comparison_forms_and_staticness(a, b):
    """The leq / gtr / geq forms are CuTe's negations and swaps of ``less``; an all-static comparison is static."""
    for kind in ("lex", "colex", "elem"):
        less, leq, gtr, geq = (getattr(tk, f"{kind}_{s}") for s in ("less", "leq", "gtr", "geq"))
        assert bool(leq(a, b)) == (not less(b, a))
        assert bool(gtr(a, b)) == bool(less(b, a))
        assert bool(geq(a, b)) == (not less(a, b))
        if all(type(v) is I for v in a + b):
            assert type(less(a, b)) is I
    assert bool(tk.lex_less(a, b)) == (tuple(map(int, a)) < tuple(map(int, b)))


def test_static_and_run_time_results_follow_cpp():
    """A static ``_0`` makes ``&&`` static, a static true makes ``||`` static (integral_constant.hpp)."""
    assert str(tk.elem_less((I(1), 2), (I(1), 3))) == "_0"  # _1 < _1 is a static false
    assert tk.elem_less((I(1), 2), (I(2), 3)) is True  # _1 < _2 && 2 < 3: run-time
    assert str(tk.lex_less((I(1), 5), (I(2), 0))) == "_1"  # the first mode decides statically
    assert tk.lex_less((1, 2), (1, 3)) is True


# ---------------------------------------------------------------- tuple algorithms
@SETTINGS
@given(nested)
def test_leaf_algorithms_keep_the_profile(t):
    assert tk.transform_leaf(t, lambda a: a) == t
    assert tk.congruent(tk.repeat_like(t, I(0)), t) == I(1)
    assert tk.flatten_to_tuple(tk.transform_leaf(t, lambda a: a + 1)) == tuple(v + 1 for v in tk.flatten_to_tuple(t))
    seen = []
    tk.for_each_leaf(t, seen.append)
    assert tuple(seen) == tk.flatten_to_tuple(t)
    assert tk.front(t) == seen[0] and tk.back(t) == seen[-1]


@SETTINGS
@given(flat_tuples.filter(len), st.data())
def test_index_algorithms(t, data):
    n = len(t)
    b = data.draw(st.integers(0, n))
    e = data.draw(st.integers(b, n))
    assert tk.take(t, b, e) == t[b:e]
    g = tk.group(t, b, e)
    assert tk.flatten(g) == tk.flatten_to_tuple(t) or not t
    assert len(g) == n - (e - b) + (1 if b < e else 0)
    x = ("x",)
    k = data.draw(st.integers(0, n))
    assert tk.remove(tk.insert(t, x, k), k) == t
    assert tk.replace(tk.insert(t, x, k), t[k] if k < n else x, k)[k] == (t[k] if k < n else x)
    assert tk.reverse(tk.reverse(t)) == t


@SETTINGS
@given(flat_tuples.filter(len))
def test_scans_and_folds(t):
    plus = lambda a, b: a + b  # noqa: E731
    ex, inc = tk.escan(t, I(0), plus), tk.iscan(t, I(0), plus)
    assert [int(v) for v in ex] == [sum(map(int, t[:i])) for i in range(len(t))]
    assert [int(v) for v in inc] == [sum(map(int, t[:i + 1])) for i in range(len(t))]
    assert int(tk.fold(t, I(0), plus)) == int(inc[-1]) == int(tk.fold_first(t, plus))


@SETTINGS
@given(st.integers(1, 4), st.integers(1, 4), st.data())
def test_zip_transposes(r0, r1, data):
    t = tuple(tuple(data.draw(ints(st.booleans())) for _ in range(r1)) for _ in range(r0))
    z = tk.zip(t)
    assert len(z) == r1 and all(z[j][i] == t[i][j] for i in range(r0) for j in range(r1))
    assert tk.zip(z) == t


def test_for_each_calls_each_mode_once_in_order():
    seen = []
    tk.for_each((I(1), (2, I(3)), 4), seen.append)
    assert seen == [I(1), (2, I(3)), 4]
    seen.clear()
    tk.for_each(I(7), seen.append)
    assert seen == [I(7)]


def test_find_is_static_and_any_all_follow_cpp():
    assert str(tk.find((I(2), I(3)), I(3))) == "_1" and str(tk.find((I(2), I(3)), I(9))) == "_2"
    gt2 = lambda a: tk.elem_less(I(2), a)  # noqa: E731
    assert to_str(tk.any_of((I(1), 4), gt2)) == "1" and to_str(tk.any_of((I(3), 1), gt2)) == "_1"
    assert to_str(tk.all_of((I(1), 4), gt2)) == "_0" and to_str(tk.none_of((), gt2)) == "_1"


# ---------------------------------------------------------------- partitions, recast, counting tensors, latex
@SETTINGS
@given(st.integers(1, 3), st.integers(1, 3), st.sampled_from([1, 2, 4]), st.sampled_from([1, 2, 4]), st.booleans())
def test_inner_and_outer_partition_cover_the_tiles(cm, cn, tm, tn, static):
    """inner_partition at tile (i, j) and outer_partition at position (a, b) both read element (i*tm+a, j*tn+b)."""
    shape = tuple(I(v) if static else v for v in (cm * tm, cn * tn))
    ref = tk.make_identity_tensor(shape)
    tiler = (I(tm), I(tn))
    for i, j, a, b in itertools.product(range(cm), range(cn), range(tm), range(tn)):
        want = (i * tm + a, j * tn + b)
        assert tuple(map(int, tk.inner_partition(ref, tiler, (i, j))(a, b))) == want
        assert tuple(map(int, tk.outer_partition(ref, tiler, (a, b))(i, j))) == want


def test_recast_of_a_numpy_tensor_reads_the_same_bytes():
    data = np.arange(32, dtype=np.uint16)
    t = tk.make_tensor(data, L((I(8), I(4))))
    wide = tk.recast(t, np.uint32)
    assert str(wide.layout) == "(_4,_4):(_1,_4)"
    assert all(int(wide(i, j)) == int(data.view(np.uint32)[i + 4 * j]) for i in range(4) for j in range(4))
    back = tk.recast(wide, np.uint16)
    assert all(int(back(i, j)) == int(t(i, j)) for i in range(8) for j in range(4))
    assert tk.recast(t, np.uint16).layout == t.layout


def test_recast_with_a_negative_stride_moves_the_start():
    """CuTe's upcast offset for static negative strides: the start moves by sum(min((old - new extent) * stride,
    0)) old elements (here (8 - 4) * -1 = -4 halves) before the pointer is recast; the oracle checks the same shift
    on smem pointers."""
    data = np.arange(16, dtype=np.uint16)
    rev = tk.Tensor(tk.ArrayPtr(data, 12), L(I(8), I(-1)))
    wide = tk.recast(rev, np.uint32)
    assert str(wide.layout) == "_4:_-1"
    words = data.view(np.uint32)
    assert [int(wide(i)) for i in range(4)] == [int(words[4 - i]) for i in range(4)]


def test_sub_byte_pointers_step_in_bits_after_a_recast():
    """recast to a type narrower than a byte gives CuTe's subbyte_iterator (byte address, bit): p + n moves n * bits
    bits; make_smem_ptr(T, a) stays a plain T* (steps of sizeof(T), one byte), as in CuTe; a sub-byte start cannot
    be recast to a whole-byte type."""
    from tmakit.mma import numeric

    fp4, fp6 = numeric.float_e2m1_t, numeric.float_e2m3_t
    t = tk.recast(tk.make_tensor(tk.make_smem_ptr(np.uint8, 0x100), L((I(8), I(4)))), fp4)
    p = t.iterator
    assert str(p) == "smem_subptr[4b](0x100.0)" and str(t.layout) == "(_16,_4):(_1,_16)"
    assert str(p + 1) == "smem_subptr[4b](0x100.4)" and str(p + 3) == "smem_subptr[4b](0x101.4)"
    q = tk.recast(tk.make_tensor(tk.make_smem_ptr(np.uint8, 0x100), L(I(8))), fp6).iterator
    assert [str(q + i) for i in (1, 4, 5)] == ["smem_subptr[6b](0x100.6)", "smem_subptr[6b](0x103.0)",
                                               "smem_subptr[6b](0x103.6)"]
    raw = tk.make_smem_ptr(fp4, 0x100)
    assert str(raw) == "smem_ptr[4b](0x100)" and str(raw + 3) == "smem_ptr[4b](0x103)"
    odd = tk.make_tensor(p + 1, L(I(2)))
    with pytest.raises(tk.LayoutError, match="bits into a byte"):
        tk.recast(odd, np.uint8)


def test_make_counting_tensor_is_make_coord_tensor():
    lay = L((1024, 1024), (tk.E(1), tk.E(0)))
    assert str(tk.make_counting_tensor(lay)) == str(tk.make_coord_tensor(lay))


def test_print_latex_takes_a_colour_function(capsys):
    text = tk.format_latex(L((I(2), I(2))), tk.tikz_color_white)
    assert text.count("\\node[fill=white]") == 4 and text.startswith("% Layout: (_2,_2):(_1,_2)\n")
    tk.print_latex(L(I(3)))
    assert "% Layout: (_3,_1):(_1,_0)" in capsys.readouterr().out


def test_basis_get_follows_the_basis_path():
    t = (I(2), (3, I(4)))
    assert tk.basis_get(tk.E(1, 1), t) == I(4) and tk.basis_get(I(5), t) == t
    assert tk.basis_value(tk.E(0) * 3) == 3


# ---------------------------------------------------------------- bad inputs: what CuTe does not compile
ROW = L((I(4), I(8)), (I(8), I(1)))
BAD = [
    ("lex_less of a tuple and an integer", lambda: tk.lex_less((1, (2, 3)), (1, 5)), ["(2,3)", "5", "profile"]),
    ("find_if with a run-time predicate", lambda: tk.find((I(2), 3), I(3)), ["run-time", "static"]),
    ("insert past the end", lambda: tk.insert((I(1), 2), I(9), 3), ["index 3", "0..2", "(_1,2)"]),
    ("remove past the end", lambda: tk.remove((I(1), 2), 3), ["index 3", "0..2"]),
    ("take with B > E", lambda: tk.take((1, 2, 3), 2, 1), ["take<2,1>", "(1,2,3)"]),
    ("take of a layout with B == E", lambda: tk.take(ROW, 1, 1), ["take<1,1>", "B < E"]),
    ("group past the rank", lambda: tk.group((1, 2, 3), 1, 4), ["group<1,4>", "= 3"]),
    ("append<N> below the rank", lambda: tk.append((1, 2, 3), I(0), n=2), ["append<2>", "rank 3"]),
    ("append to a tuple without a mode", lambda: tk.append((1, 2)), ["(1,2)", "mode to append"]),
    ("tuple_cat of an integer", lambda: tk.tuple_cat((1, 2), 3), ["3", "not a tuple"]),
    ("zip of tuples of different ranks", lambda: tk.zip(((1, 2, 3), (4, 5))), ["(4,5)", "(1,2,3)"]),
    ("transform of tuples of different ranks", lambda: tk.transform((1, 2), (1, 2, 3), lambda a, b: a),
     ["(1,2,3)", "(1,2)"]),
    ("escan of an empty tuple", lambda: tk.escan((), I(0), lambda a, b: a), ["empty"]),
    ("fold_first of an empty tuple", lambda: tk.fold_first((), lambda a, b: a), ["empty"]),
    ("make_int_tuple with N = 0", lambda: tk.make_int_tuple((1, 2), 2, 0, 0), ["N", "0"]),
    ("make_int_tuple reading past the array", lambda: tk.make_int_tuple((1, 2), 3, 0, 4), ["3", "2"]),
    ("basis_get past the tuple", lambda: tk.basis_get(tk.E(2), (I(1), I(2))), ["_1@2", "mode 2"]),
    ("outer_partition coordinate with too many modes",
     lambda: tk.outer_partition(tk.make_identity_tensor((I(16), I(64))), (I(4), I(8)), (1, 2, 3)),
     ["(1,2,3)", "(_4,_8)"]),
    ("recast of a coordinate tensor", lambda: tk.recast(tk.make_identity_tensor((4, 4)), np.uint32),
     ["ArithTuple", "coordinates"]),
    ("recast of a layout", lambda: tk.recast(ROW, np.uint32), ["recast_layout"]),
    ("recast of a numpy tensor off the new element",
     lambda: tk.recast(tk.Tensor(tk.ArrayPtr(np.zeros(8, np.uint16), 1), L(I(4))), np.uint32),
     ["2 bytes", "uint32"]),
    ("recast of a numpy tensor to a type numpy lacks",
     lambda: tk.recast(tk.make_tensor(np.zeros(8, np.uint16), L(I(8))), tk.half_t), ["half_t", "numpy"]),
    ("downcast recast without a _1 stride",
     lambda: tk.recast(tk.make_tensor(tk.make_smem_ptr(np.uint32, 256), L(I(4), I(2))), np.uint16), ["_1"]),
    ("print_latex of rank 3", lambda: tk.format_latex(L((I(2), I(2), I(2)))), ["(_2,_2,_2)", "rank 3"]),
    ("print_latex of a negative offset", lambda: tk.format_latex(L(I(2), I(-1))), ["-1", "color="]),
    ("group of a tensor", lambda: tk.group(tk.make_identity_tensor((4, 4)), 0, 2), ["group_modes"]),
]


@pytest.mark.parametrize("what,fn,names", BAD, ids=[c[0] for c in BAD])
def test_bad_input_raises_layout_error_naming_values(what, fn, names):
    with pytest.raises(tk.LayoutError) as err:
        fn()
    for name in names:
        assert name in str(err.value), f"{what}: {name!r} not in {str(err.value)!r}"


def test_product_of_partition_sizes():
    """Sanity of the identity used above: every tile has prod(tiler) elements."""
    ref = tk.make_identity_tensor((I(8), I(12)))
    assert int(tk.size(tk.inner_partition(ref, (I(4), I(3)), (1, 2)))) == prod((4, 3))
