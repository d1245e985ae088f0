"""Differential tests: tmakit's layout algebra against pycute (the Python reference shipped in nvidia-cutlass).

Each test draws >= 500 layouts (nested shapes, static/dynamic mixes) that satisfy the operation's preconditions and
compares the function the results compute on their whole domain and, for all-static inputs, their shapes.

Where pycute departs from CuTe 4.x we compare only what CuTe defines the same way (each case says why):
- pycute's ``composition`` (and so ``logical_divide``'s by-mode form) with a tuple tiler keeps the modes the tiler
  does not name; CuTe 4.x drops them. We compare the modes the tiler names.
- pycute's ``logical_product`` with an integer tiler calls ``logical_divide`` (a bug); we always pass layouts.
- pycute's ``right_inverse`` stops at a stride-0 mode, CuTe skips it; and pycute sorts equal strides stably by
  shape, CuTe with an exchange sort (checked by the C++ oracle): right_inverse inputs have distinct non-zero strides;
  CuTe coalesces first, so on overlapping layouts its right inverse may extend pycute's (which must be a prefix).
- pycute's ``logical_divide`` uses ``size(A)`` as the complement's cotarget, CuTe ``shape(coalesce(A))``; they agree
  when the tiler divides the layout, which is what we generate.
- blocked/raked products are not in pycute: we check them against CuTe's definition built from pycute's
  ``logical_product`` and ``make_layout`` (plus the C++ oracle and the property tests).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import tmakit as tk
from layout_strategies import GENERAL, POW2, any_specs, injective_specs, plain, values

pycute = pytest.importorskip("pycute")

SETTINGS = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                            HealthCheck.filter_too_much])


def same_function(a, b):
    va, vb = values(a), values(b)
    assert va.shape == vb.shape, f"sizes differ: {a} vs {b}"
    np.testing.assert_array_equal(va, vb, err_msg=f"tmakit {a} vs pycute {b}")


def same_shape(a, b):
    assert plain(a.shape) == plain(b.shape), f"shapes differ: tmakit {a} vs pycute {b}"


def pow2_or_general():
    """Power-of-two layouts with any static/dynamic mix (CuTe's divisibility always holds), or general values all
    static (CuTe checks divisibility statically, so a bad draw raises and is rejected)."""
    return st.sampled_from(["pow2", "general"])


def _checked(fn, *args):
    try:
        return fn(*args)
    except (tk.LayoutError, AssertionError, ZeroDivisionError):
        assume(False)


@SETTINGS
@given(spec=any_specs(values=GENERAL, max_stride=24))
def test_coalesce(spec):
    r, p = tk.coalesce(spec.tk()), pycute.coalesce(spec.py())
    same_function(r, p)
    if spec.all_static:
        same_shape(r, p)
        assert plain(r.stride) == plain(p.stride)


@SETTINGS
@given(data=st.data(), world=pow2_or_general())
def test_complement(data, world):
    vals = POW2 if world == "pow2" else GENERAL
    spec = data.draw(injective_specs(values=vals, shape_static="mixed" if world == "pow2" else "static"))
    cotarget = data.draw(st.integers(1, 4 * spec.cosize))
    static_cotarget = data.draw(st.booleans())
    r = tk.complement(spec.tk(), tk.Int(cotarget) if static_cotarget else cotarget)
    p = pycute.complement(spec.py(), cotarget)
    same_function(r, p)
    if spec.all_static and static_cotarget:
        same_shape(r, p)


@SETTINGS
@given(spec=injective_specs(values=GENERAL, shape_static="static", stride_static="static"))
def test_right_inverse(spec):
    r, p = tk.right_inverse(spec.tk()), pycute.right_inverse(spec.py())
    same_function(r, p)
    same_shape(r, p)


@SETTINGS
@given(data=st.data(), world=pow2_or_general())
def test_right_inverse_of_non_injective(data, world):
    """Overlapping and gapped layouts (no stride-0 modes, see the module docstring)."""
    vals = POW2 if world == "pow2" else GENERAL
    spec = data.draw(any_specs(values=vals, shape_static="static", stride_static="static"))
    moving = [d for s, d in zip(spec.shape, spec.stride) if s != 1]
    assume(all(moving) and len(set(moving)) == len(moving))
    r, p = values(tk.right_inverse(spec.tk())), values(pycute.right_inverse(spec.py()))
    # CuTe coalesces before sorting, pycute does not: where a gap or overlap stops pycute early, CuTe's inverse may
    # continue past it. Both are right inverses; pycute's is then a prefix of CuTe's.
    assert r.size >= p.size
    np.testing.assert_array_equal(r[: p.size], p)


@SETTINGS
@given(data=st.data(), world=pow2_or_general())
def test_left_inverse(data, world):
    """Compared on the image of the layout: there both must return the coordinate index, ``R(L(i)) == i``;
    outside the image the two algorithms are free to differ (pycute inverts ``(L, complement(L))``)."""
    vals = POW2 if world == "pow2" else GENERAL
    spec = data.draw(injective_specs(values=vals, shape_static="mixed" if world == "pow2" else "static"))
    lay = spec.tk()
    r, p = tk.left_inverse(lay), pycute.left_inverse(spec.py())
    image = values(lay)
    np.testing.assert_array_equal(_eval_at(r, image), np.arange(image.size))
    np.testing.assert_array_equal(_eval_at(p, image), np.arange(image.size))


def _eval_at(layout, points):
    return np.array([int(layout(int(i))) for i in points], dtype=np.int64)


@st.composite
def composable(draw, world):
    """(A, B) with B's image inside A's domain; general draws are kept when CuTe's static checks accept them."""
    vals = POW2 if world == "pow2" else GENERAL
    mode = "mixed" if world == "pow2" else "static"
    a = draw(injective_specs(values=vals, max_size=256, shape_static=mode, stride_static=mode))
    b = draw(any_specs(values=vals, max_size=64, max_stride=16, shape_static=mode, stride_static=mode))
    if world == "pow2":
        b = type(b)(b.shape, tuple(_pow2_floor(d) for d in b.stride), b.profile, b.static_shape, b.static_stride)
    assume(b.cosize <= a.size)
    return a, b


def _pow2_floor(d):
    return 0 if d == 0 else 1 << (d.bit_length() - 1)


@SETTINGS
@given(data=st.data(), world=pow2_or_general())
def test_composition(data, world):
    a, b = data.draw(composable(world))
    r = _checked(tk.composition, a.tk(), b.tk())
    p = _checked(pycute.composition, a.py(), b.py())
    same_function(r, p)
    if a.all_static and b.all_static:
        assert tk.size(r) == tk.size(b.tk())


@SETTINGS
@given(data=st.data(), world=pow2_or_general())
def test_composition_by_mode(data, world):
    """A tuple tiler composes mode by mode; pycute keeps the unnamed modes, CuTe drops them: compare named ones."""
    a, b0 = data.draw(composable(world))
    lay = tk.make_layout(a.tk(), tk.make_layout(tk.Int(2), tk.Int(a.cosize)))
    tiler = (b0.tk(),)
    r = _checked(tk.composition, lay, tiler)
    p = _checked(pycute.composition, _to_py(lay), (b0.py(),))
    assert tk.rank(r) == 1
    same_function(r[0], p[0])


def _to_py(lay):
    return pycute.Layout(plain(lay.shape), plain(lay.stride))


@st.composite
def dividable(draw, world):
    """(A, tiler): an injective tiler whose extent (max shape*stride) divides size(A), so the tiler and its
    complement tile A's domain exactly."""
    vals = POW2 if world == "pow2" else GENERAL
    mode = "mixed" if world == "pow2" else "static"
    t = draw(injective_specs(values=vals, max_size=16, shape_static="static", stride_static="static"))
    a = draw(injective_specs(values=vals, max_size=256, shape_static=mode, stride_static=mode, factor=t.extent))
    return a, t


@SETTINGS
@given(data=st.data(), world=pow2_or_general())
def test_logical_divide(data, world):
    a, t = data.draw(dividable(world))
    r = _checked(tk.logical_divide, a.tk(), t.tk())
    p = _checked(pycute.logical_divide, a.py(), t.py())
    same_function(r, p)
    if a.all_static:
        same_shape(r, p)


@st.composite
def dividable_by_mode(draw, world, underscore=True):
    """A rank-2 layout and a tuple tiler (a layout, an integer or -- for logical_divide -- ``_`` per mode) that
    divides each mode. CuTe cannot zip a ``_`` mode (zipped/tiled_divide reject it), pycute pads it with 1:0."""
    vals = POW2 if world == "pow2" else GENERAL
    modes, tiler_tk, tiler_py = [], [], []
    for _i in range(2):
        a, t = draw(dividable(world))
        modes.append(a)
        kind = draw(st.sampled_from(["layout", "int", "none"] if underscore else ["layout", "int"]))
        if kind == "layout":
            tiler_tk.append(t.tk())
            tiler_py.append(t.py())
        elif kind == "int":
            n = draw(st.sampled_from([d for d in vals if a.size % d == 0]))
            tiler_tk.append(tk.Int(n) if n == 1 or draw(st.booleans()) else n)  # a dynamic 1 is not filtered
            tiler_py.append(pycute.Layout(n))
        else:
            tiler_tk.append(tk._)
            tiler_py.append(None)
    return modes, tuple(tiler_tk), tuple(tiler_py)


def _rank2(modes):
    lay_tk = tk.make_layout(*(m.tk() for m in modes))
    return lay_tk, pycute.make_layout(*(m.py() for m in modes))


@SETTINGS
@given(data=st.data(), world=pow2_or_general())
def test_logical_divide_by_mode(data, world):
    modes, t_tk, t_py = data.draw(dividable_by_mode(world))
    lay_tk, lay_py = _rank2(modes)
    r = _checked(tk.logical_divide, lay_tk, t_tk)
    p = _checked(pycute.logical_divide, lay_py, t_py)
    same_function(r, p)
    for i in range(2):
        same_function(r[i], p[i])


@SETTINGS
@given(data=st.data(), world=pow2_or_general())
def test_zipped_divide(data, world):
    modes, t_tk, t_py = data.draw(dividable_by_mode(world, underscore=False))
    lay_tk, lay_py = _rank2(modes)
    r = _checked(tk.zipped_divide, lay_tk, t_tk)
    p = _checked(pycute.zipped_divide, lay_py, t_py)
    same_function(r, p)
    same_function(r[0], p[0])  # the tile
    same_function(r[1], p[1])  # the rest
    if all(m.all_static for m in modes) and tk.is_static(tuple(t for t in t_tk if not isinstance(t, tk.Layout))):
        same_shape(r, p)


@SETTINGS
@given(data=st.data(), world=pow2_or_general())
def test_tiled_divide(data, world):
    modes, t_tk, t_py = data.draw(dividable_by_mode(world, underscore=False))
    lay_tk, lay_py = _rank2(modes)
    r = _checked(tk.tiled_divide, lay_tk, t_tk)
    p = _checked(pycute.tiled_divide, lay_py, t_py)
    same_function(r, p)
    same_function(r[0], p[0])
    assert tk.rank(r) == len(p)


@st.composite
def product_args(draw, world):
    """(block, tiler): a compact block (any static/dynamic mix for powers of two) and any tiler layout."""
    vals = POW2 if world == "pow2" else GENERAL
    mode = "mixed" if world == "pow2" else "static"
    block = draw(injective_specs(values=vals, max_size=32, gaps=False, shape_static=mode, stride_static="static"))
    tiler = draw(injective_specs(values=vals, max_size=16, shape_static="static", stride_static="static"))
    return block, tiler


@SETTINGS
@given(data=st.data(), world=pow2_or_general())
def test_logical_product(data, world):
    b, t = data.draw(product_args(world))
    r = _checked(tk.logical_product, b.tk(), t.tk())
    p = _checked(pycute.logical_product, b.py(), t.py())
    same_function(r, p)
    if b.all_static:
        same_shape(r, p)


def _py_rank_product(block, tiler, raked):
    """CuTe's blocked/raked_product spelled with pycute's primitives: pad both to the same rank with ``1:0``,
    take the logical product, and zip (block_i, tiler_i) -- or (tiler_i, block_i) when raked."""
    rank = max(len(block), len(tiler))

    def pad(lay):
        modes = [lay[i] for i in range(len(lay))] if isinstance(lay.shape, tuple) else [lay]
        return pycute.make_layout(*(modes + [pycute.Layout(1, 0)] * (rank - len(modes)))) if rank > 1 else lay

    res = pycute.logical_product(pad(block), pad(tiler))
    first, second = (res[1], res[0]) if raked else (res[0], res[1])
    if rank == 1:
        return pycute.make_layout(pycute.make_layout(first, second))
    return pycute.make_layout(*(pycute.make_layout(first[i], second[i]) for i in range(rank)))


@SETTINGS
@given(data=st.data(), world=pow2_or_general(), raked=st.booleans())
def test_blocked_and_raked_product(data, world, raked):
    b, t = data.draw(product_args(world))
    fn = tk.raked_product if raked else tk.blocked_product
    r = _checked(fn, b.tk(), t.tk())
    p = _py_rank_product(b.py(), t.py(), raked)
    same_function(r, p)
    assert tk.rank(r) == max(tk.rank(b.tk()), tk.rank(t.tk()))
