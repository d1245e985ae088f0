"""Property tests: each layout operation's defining law, on random layouts with static/dynamic mixes."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import tmakit as tk
from layout_strategies import (
    GENERAL,
    POW2,
    admissible,
    any_specs,
    flat,
    injective_specs,
    plain,
    profiles,
    shapes,
    size,
    values,
)
from tmakit.layout.integer import to_str

I = tk.Int  # noqa: E741 - CuTe's Int
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                            HealthCheck.filter_too_much])


def worlds():
    return st.sampled_from(["pow2", "general"])


def _vals(world):
    return POW2 if world == "pow2" else GENERAL


def _mode(world):
    """Power-of-two layouts may mix static and dynamic values freely; general ones are static so that CuTe's
    static divisibility checks apply (a dynamic inadmissible composition is undefined in CuTe too)."""
    return "mixed" if world == "pow2" else "static"


def _attempt(fn, *args):
    try:
        return fn(*args)
    except tk.LayoutError:
        assume(False)


def image(layout):
    return values(layout)


# ---------------------------------------------------------------- composition: R(i) == A(B(i))
# B is injective (plus broadcast modes): composition distributes over B's modes, which needs their offsets not to
# carry into each other inside A; overlapping B's are outside CuTe's definition.


@SETTINGS
@given(data=st.data(), world=worlds())
def test_composition_law(data, world):
    a = data.draw(injective_specs(values=_vals(world), shape_static=_mode(world), stride_static=_mode(world)))
    b = data.draw(injective_specs(values=_vals(world), max_size=64, shape_static=_mode(world),
                                  stride_static=_mode(world)))
    if data.draw(st.booleans()):  # a broadcast (static stride-0) mode
        b = type(b)(b.shape + (2,), b.stride + (0,), (b.profile, len(b.shape)), b.static_shape + (True,),
                    b.static_stride + (True,))
    assume(b.cosize <= a.size)
    A, B = a.tk(), b.tk()
    assume(admissible(A, B))
    R = _attempt(tk.composition, A, B)
    assert int(tk.size(R)) == size(B)
    np.testing.assert_array_equal(image(R), image(A)[image(B)])
    assert tk.is_static(R.shape) or not (a.all_static and b.all_static)


@SETTINGS
@given(data=st.data())
def test_composition_with_an_integer_is_a_prefix(data):
    a = data.draw(injective_specs(values=POW2, shape_static="mixed"))
    n = data.draw(st.sampled_from([d for d in (1, 2, 4, 8, 16, 32) if a.size % d == 0]))
    R = tk.composition(a.tk(), I(n) if data.draw(st.booleans()) else n)
    np.testing.assert_array_equal(image(R), image(a.tk())[:n])


# ---------------------------------------------------------------- complement


@SETTINGS
@given(data=st.data(), world=worlds())
def test_complement_law(data, world):
    spec = data.draw(injective_specs(values=_vals(world), shape_static=_mode(world)))
    L = spec.tk()
    m = data.draw(st.integers(1, 3 * spec.cosize))
    C = tk.complement(L, I(m) if data.draw(st.booleans()) else m)
    c = image(C)
    assert c[0] == 0 and np.all(np.diff(c) > 0), f"complement {C} of {L} is not strictly increasing"
    assert not set(c[1:].tolist()) & set(image(L).tolist()), f"complement {C} hits {L}"
    both = tk.make_layout(L, C)
    assert int(tk.size(both)) >= m
    assert len(set(image(both).tolist())) == size(both), f"{both} is not injective"
    assert int(tk.cosize(both)) >= m


@SETTINGS
@given(spec=injective_specs(values=POW2, shape_static="mixed"))
def test_complement_default_cotarget_fills_the_gaps(spec):
    """Without a cotarget the complement fills the gaps of the layout's own codomain: (L, complement(L)) is a
    bijection onto [0, n) with n >= cosize(L)."""
    L = spec.tk()
    both = tk.make_layout(L, tk.complement(L))
    assert int(tk.size(both)) >= spec.cosize
    assert sorted(image(both).tolist()) == list(range(size(both)))


# ---------------------------------------------------------------- inverses


@SETTINGS
@given(data=st.data(), world=worlds())
def test_right_inverse_law(data, world):
    spec = data.draw(any_specs(values=_vals(world), max_stride=24, shape_static="mixed",
                               stride_static=data.draw(st.sampled_from(["static", "mixed"]))))
    L = spec.tk()
    R = tk.right_inverse(L)
    r = image(R)
    assert int(tk.size(R)) >= 1
    np.testing.assert_array_equal(image(L)[r], np.arange(r.size))
    assert tk.is_static(R.shape) or not spec.all_static


@SETTINGS
@given(data=st.data(), world=worlds())
def test_right_inverse_of_a_compact_layout_is_its_inverse(data, world):
    spec = data.draw(injective_specs(values=_vals(world), gaps=False, shape_static="static"))
    L = spec.tk()
    R = tk.right_inverse(L)
    assert size(R) == size(L)
    np.testing.assert_array_equal(image(R)[image(L)], np.arange(size(L)))


@SETTINGS
@given(data=st.data(), world=worlds())
def test_left_inverse_law(data, world):
    spec = data.draw(injective_specs(values=_vals(world), shape_static=_mode(world)))
    L = spec.tk()
    R = tk.left_inverse(L)
    img = image(L)
    got = np.array([int(R(int(i))) for i in img])
    np.testing.assert_array_equal(got, np.arange(img.size))


# ---------------------------------------------------------------- divides and products


@st.composite
def divisible(draw, world):
    t = draw(injective_specs(values=_vals(world), max_size=16, shape_static="static"))
    a = draw(injective_specs(values=_vals(world), shape_static=_mode(world), stride_static=_mode(world),
                             factor=t.extent))
    return a, t


def _divides(A, T):
    """The tiler and its complement must compose exactly with A (CuTe accepts some inexact ones statically)."""
    return admissible(A, tk.make_layout(T, tk.complement(T, tk.size(A))))


@SETTINGS
@given(data=st.data(), world=worlds())
def test_logical_divide_shapes(data, world):
    a, t = data.draw(divisible(world))
    A, T = a.tk(), t.tk()
    assume(_divides(A, T))
    D = _attempt(tk.logical_divide, A, T)
    assert int(tk.size(D)) == size(A)
    assert tk.rank(D) == 2
    np.testing.assert_array_equal(image(D[0]), image(tk.composition(A, T)))
    assert sorted(image(D).tolist()) == sorted(image(A).tolist())  # a permutation of A's offsets
    Z = tk.zipped_divide(A, T)
    np.testing.assert_array_equal(image(Z), image(D))
    assert int(tk.size(Z[0])) == size(T)


@SETTINGS
@given(data=st.data(), world=worlds())
def test_divide_by_mode_shapes(data, world):
    (a0, t0), (a1, t1) = data.draw(divisible(world)), data.draw(divisible(world))
    A = tk.make_layout(a0.tk(), a1.tk())
    tiler = (t0.tk(), t1.tk())
    assume(_divides(a0.tk(), t0.tk()) and _divides(a1.tk(), t1.tk()))
    L = _attempt(tk.logical_divide, A, tiler)
    Z, T, F = tk.zipped_divide(A, tiler), tk.tiled_divide(A, tiler), tk.flat_divide(A, tiler)
    for X in (L, Z, T, F):
        assert int(tk.size(X)) == size(A)
        np.testing.assert_array_equal(np.sort(image(X)), np.sort(image(A)))
    assert int(tk.size(Z[0])) == size(t0.tk()) * size(t1.tk())
    assert tk.rank(Z) == 2 and tk.rank(Z[0]) == 2
    assert tk.rank(T) == 1 + tk.rank(Z[1])
    assert tk.rank(F) == tk.rank(Z[0]) + tk.rank(Z[1])
    np.testing.assert_array_equal(image(T[0]), image(Z[0]))
    np.testing.assert_array_equal(image(L[0][0]), image(tk.composition(a0.tk(), t0.tk())))


@st.composite
def product_pair(draw, world):
    block = draw(injective_specs(values=_vals(world), max_size=32, gaps=False, shape_static=_mode(world)))
    tiler = draw(injective_specs(values=_vals(world), max_size=16, shape_static="static"))
    return block, tiler


@SETTINGS
@given(data=st.data(), world=worlds())
def test_logical_product_shapes(data, world):
    b, t = data.draw(product_pair(world))
    B, T = b.tk(), t.tk()
    P = _attempt(tk.logical_product, B, T)
    assert int(tk.size(P)) == size(B) * size(T)
    np.testing.assert_array_equal(image(P[0]), image(B))
    assert len(set(image(P).tolist())) == size(P)  # a compact block repeated without overlap
    Z = tk.zipped_product(B, T)
    np.testing.assert_array_equal(image(Z), image(P))


@SETTINGS
@given(data=st.data(), world=worlds())
def test_blocked_and_raked_products(data, world):
    b, t = data.draw(product_pair(world))
    B, T = b.tk(), t.tk()
    bp, rp = _attempt(tk.blocked_product, B, T), _attempt(tk.raked_product, B, T)
    r = max(int(tk.rank(B)), int(tk.rank(T)))
    for P in (bp, rp):
        assert int(tk.rank(P)) == r
        assert int(tk.size(P)) == size(B) * size(T)
    assert sorted(image(bp).tolist()) == sorted(image(rp).tolist())
    for i in range(r):  # mode i is (block_i, tiler_i) when blocked, (tiler_i, block_i) when raked
        np.testing.assert_array_equal(image(bp[i][0]), image(rp[i][1]))
        np.testing.assert_array_equal(image(bp[i][1]), image(rp[i][0]))


@SETTINGS
@given(data=st.data())
def test_tile_to_shape(data):
    block = data.draw(injective_specs(values=POW2, max_size=16, gaps=False, shape_static="static"))
    B = block.tk()
    n_modes = int(tk.rank(B)) + data.draw(st.integers(0, 1))
    reps = [data.draw(st.sampled_from([1, 2, 4])) for _ in range(n_modes)]
    bshape = [int(tk.size(B, i)) if i < int(tk.rank(B)) and isinstance(B.shape, tuple) else
              (int(tk.size(B)) if i == 0 else 1) for i in range(len(reps))]
    target = tuple(I(s * k) if data.draw(st.booleans()) else s * k for s, k in zip(bshape, reps))
    R = tk.tile_to_shape(B, target)
    assert [int(tk.size(R, i)) for i in range(len(target))] == [int(t) for t in target]
    assert len(set(image(R).tolist())) == size(R)


# ---------------------------------------------------------------- coalesce and filter


@SETTINGS
@given(data=st.data(), world=worlds())
def test_coalesce_preserves_function(data, world):
    spec = data.draw(any_specs(values=_vals(world), shape_static="mixed"))
    L = spec.tk()
    C = tk.coalesce(L)
    assert int(tk.size(C)) == size(L)
    assert int(tk.depth(C)) <= 1
    np.testing.assert_array_equal(image(C), image(L))
    if spec.all_static:
        assert int(tk.rank(C)) <= int(tk.rank(tk.flatten(L)))


@SETTINGS
@given(data=st.data())
def test_coalesce_by_mode_keeps_rank(data):
    spec = data.draw(any_specs(values=POW2, shape_static="mixed"))
    other = data.draw(any_specs(values=POW2, max_size=16, shape_static="mixed"))
    L = tk.make_layout(spec.tk(), other.tk())
    C = tk.coalesce(L, (I(1), I(1)))
    assert tk.rank(C) == 2
    np.testing.assert_array_equal(image(C), image(L))


@SETTINGS
@given(spec=any_specs(values=GENERAL, shape_static="static", stride_static="static"))
def test_filter_keeps_the_image(spec):
    L = spec.tk()
    F = tk.filter(L)
    assert set(image(F).tolist()) == set(image(L).tolist())
    assert all(int(d) != 0 for d in flat(F.stride)) or plain(F.shape) == 1


# ---------------------------------------------------------------- max_common_layout / vector


@SETTINGS
@given(data=st.data())
def test_max_common_layout(data):
    a = data.draw(injective_specs(values=POW2, gaps=False, shape_static="static"))
    b = data.draw(injective_specs(values=POW2, gaps=False, shape_static="static"))
    assume(a.size == b.size)
    A, B = a.tk(), b.tk()
    R = tk.max_common_layout(A, B)
    n = int(tk.max_common_vector(A, B))
    assert size(R) == n >= 1
    r = image(R)
    np.testing.assert_array_equal(image(A)[r], np.arange(n))
    np.testing.assert_array_equal(image(B)[r], np.arange(n))
    assert type(tk.max_common_vector(A, B)) is tk.Int


# ---------------------------------------------------------------- swizzles


@settings(max_examples=100, deadline=None)
@given(b=st.integers(0, 3), m=st.integers(0, 4), extra=st.integers(0, 2), neg=st.booleans())
def test_swizzle_is_an_involution(b, m, extra, neg):
    s = b + extra
    sw = tk.Swizzle(b, m, -s if neg and s else s)
    xs = range(1 << (b + m + s + 2))
    assert all(sw(sw(x)) == x for x in xs)
    assert sorted(sw(x) for x in xs) == list(xs)  # a permutation of each aligned block
    assert type(sw(I(5))) is tk.Int and type(sw(5)) is int


@SETTINGS
@given(data=st.data())
def test_swizzled_slices_compute_the_same_offsets(data):
    """Slicing a swizzled layout (which may decay to a plain layout) keeps ``offset + sub(c) == full(crd)``."""
    sw = tk.Swizzle(*data.draw(st.sampled_from([(1, 4, 3), (2, 4, 3), (3, 4, 3), (2, 3, 3), (3, 3, 3), (2, 0, 2)])))
    rows, cols = data.draw(st.sampled_from([(8, 64), (16, 32), (8, 8), (4, 128)]))
    major = data.draw(st.sampled_from([tk.LayoutLeft, tk.LayoutRight]))
    full = tk.composition(sw, tk.make_layout((I(rows), I(cols)), major))
    r = data.draw(st.integers(0, rows - 1))
    c = data.draw(st.integers(0, cols - 1))
    for crd, free in (((r, tk._), 1), ((tk._, c), 0)):
        crd = tuple(I(v) if isinstance(v, int) and data.draw(st.booleans()) else v for v in crd)
        sub, off = full.slice_and_offset(crd)
        n = cols if free == 1 else rows
        for k in range(n):
            whole = (r, k) if free == 1 else (k, c)
            assert int(off) + int(sub(k)) == int(full(whole)), f"{full} at {to_str(crd)}: {sub} + {off}"


def _swizzle_in(data, n_bits):
    """A swizzle whose Y and Z bits lie below ``2**n_bits`` (None when none fits)."""
    b = data.draw(st.integers(1, 3))
    s = data.draw(st.integers(b, b + 2)) * data.draw(st.sampled_from([1, -1]))
    if b + abs(s) > n_bits:
        return None
    return tk.Swizzle(b, data.draw(st.integers(0, n_bits - b - abs(s))), s)


def _tma_like(data):
    """A compact (rows, cols) layout of powers of two, row- or column-major, and a swizzle within it."""
    r, c = (data.draw(st.sampled_from([1, 2, 4, 8, 16, 32, 64, 128])) for _ in range(2))
    L = tk.make_layout((I(r), I(c)), data.draw(st.sampled_from([tk.LayoutLeft, tk.LayoutRight])))
    sw = _swizzle_in(data, (r * c).bit_length() - 1)
    assume(sw is not None)
    return L, sw


@SETTINGS
@given(data=st.data())
def test_swizzled_layout_inverses_invert(data):
    """``Sw o L`` of a compact 2-D layout: its right inverse R has ``SL(R(i)) == i`` on all of ``size(L)``, its left
    inverse ``R(SL(i)) == i``, wherever CuTe computes them (it refuses when L scatters the swizzle's bit runs)."""
    L, sw = _tma_like(data)
    SL = tk.composition(sw, L)
    n = size(L)
    try:
        R, Q = tk.right_inverse(SL), tk.left_inverse(SL)
    except tk.LayoutError:
        assume(False)
    assert size(R) == n
    assert [SL(R(i)) for i in range(n)] == list(range(n))
    assert [Q(SL(i)) for i in range(n)] == list(range(n))


@SETTINGS
@given(data=st.data())
def test_layout_composed_with_swizzle(data):
    """``composition(L, Sw)`` is ``Sw' o L`` (the swizzle carried through L to its left) and equals ``L o Sw``."""
    L, sw = _tma_like(data)
    try:
        C = tk.composition(L, sw)
    except tk.LayoutError:
        assume(False)
    assert (C.layout_b if isinstance(C, tk.ComposedLayout) else C) == L
    assert [C(i) for i in range(size(L))] == [L(sw(i)) for i in range(size(L))]


@settings(max_examples=200, deadline=None)
@given(b=st.integers(0, 3), m=st.integers(0, 4), b2=st.integers(0, 3), m2=st.integers(0, 4), s=st.integers(1, 5),
       neg=st.booleans())
def test_swizzles_of_one_shift_compose(b, m, b2, m2, s, neg):
    assume(s >= max(b, b2))
    a, c = tk.Swizzle(b, m, -s if neg else s), tk.Swizzle(b2, m2, -s if neg else s)
    try:
        ac = tk.composition(a, c)
    except tk.LayoutError:
        assume(False)
    assert all(ac(x) == a(c(x)) for x in range(1 << 11))


def test_swizzle_inverse_follows_cute_where_bits_reverse():
    """CuTe rebuilds the swizzle from the *sets* of bits the inverse maps its Y and Z bits to, not their order: a
    layout that reverses a run gets a swizzle that does not invert it. tmakit gives CuTe's result (the oracle holds the
    case)."""
    SL = tk.composition(tk.Swizzle(2, 3, -2), tk.make_layout((I(4), I(2), I(2), I(8)), (I(8), I(64), I(32), I(1))))
    R = tk.right_inverse(SL)
    assert str(R) == "Sw<2,0,-2> o _0 o (_8,_4,_2,_2):(_16,_1,_8,_4)"
    assert any(SL(R(i)) != i for i in range(size(R)))


# ---------------------------------------------------------------- coordinates


@SETTINGS
@given(data=st.data())
def test_crd2idx_idx2crd_round_trip(data):
    leaves = data.draw(shapes(GENERAL, 1, 4, 256))
    spec_profile = data.draw(profiles(len(leaves)))

    def nest(p):
        if isinstance(p, tuple):
            return tuple(nest(q) for q in p)
        return I(leaves[p]) if data.draw(st.booleans()) else leaves[p]

    shape = nest(spec_profile)
    L = tk.make_layout(shape)
    for i in range(size(L)):
        crd = tk.idx2crd(i, shape)
        assert tk.crd2idx(crd, shape) == i
        assert L(crd) == i == L(i)
        assert tk.idx2crd(i, shape, L.stride) == crd  # the compact layout inverts itself
        assert L.get_hier_coord(i) == crd


@SETTINGS
@given(spec=any_specs(values=GENERAL, shape_static="mixed"))
def test_layout_call_matches_flat_evaluation(spec):
    L = spec.tk()
    got = np.array([int(L(i)) for i in range(size(L))])
    np.testing.assert_array_equal(got, image(L))


# ---------------------------------------------------------------- Int staticness


@settings(max_examples=200, deadline=None)
@given(a=st.integers(-20, 20), b=st.integers(-20, 20).filter(bool))
def test_static_op_static_is_static(a, b):
    for r in (I(a) + I(b), I(a) - I(b), I(a) * I(b), I(a) // I(b), I(a) % I(b), I(a) & I(b), I(a) | I(b),
              I(a) ^ I(b), -I(a), abs(I(a))):
        assert type(r) is tk.Int
    assert str(I(a) * I(b)) == f"_{a * b}"


@settings(max_examples=200, deadline=None)
@given(a=st.integers(-20, 20).filter(bool), b=st.integers(-20, 20).filter(bool))
def test_static_op_dynamic_is_dynamic(a, b):
    assume(abs(b) != 1)
    for r in (I(a) + b, b + I(a), I(a) - b, b - I(a), I(a) * b, b * I(a), I(a) // b, b // I(a), I(a) % b,
              b % I(a) if abs(a) != 1 else b % I(b)):
        assert type(r) is int, r


@settings(max_examples=100, deadline=None)
@given(x=st.integers(-50, 50))
def test_cute_static_zero_rules(x):
    """CuTe's mixed special cases: ``_0 * x``, ``x * _0``, ``_0 / x``, ``_0 % x``, ``x % _1``, ``_0 & x`` are ``_0``."""
    assume(x != 0)
    for r in (I(0) * x, x * I(0), I(0) // x, I(0) % x, x % I(1), x % I(-1), I(0) & x, x & I(0)):
        assert type(r) is tk.Int and r == 0
    assert type(I(1) * x) is int  # only zero is special


def test_layout_staticness():
    assert tk.is_static(tk.make_layout((I(4), I(8))).stride)
    assert str(tk.size(tk.make_layout((I(4), 8)))) == "32"
    assert str(tk.size(tk.make_layout((I(4), I(8))))) == "_32"
    assert str(tk.cosize(tk.make_layout((I(4), I(8)), (I(8), I(1))))) == "_32"
    assert str(tk.rank(tk.make_layout((4, 8)))) == "_2"
    assert str(tk.depth(tk.make_layout(((4, 2), 8)))) == "_2"
