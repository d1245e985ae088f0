"""The layout algebra's memo: cached results equal fresh ones, static and dynamic twins never share an entry, and
failures are never cached."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tmakit as tk
from layout_strategies import injective_specs
from tmakit.layout import algebra
from tmakit.layout.int_tuple import LayoutError
from tmakit.layout.memo import static_key

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _fresh(fn, *args):
    """``fn`` without its memo (the lifted wrapper's ``__wrapped__`` is the memo, whose ``__wrapped__`` is the op)."""
    inner = fn.__wrapped__
    return (inner.__wrapped__ if hasattr(inner, "cache_clear") else inner)(*args)


@SETTINGS
@given(injective_specs(), injective_specs(), st.sampled_from(["composition", "logical_divide", "zipped_divide",
                                                               "logical_product", "blocked_product"]))
def test_cached_results_print_like_fresh_ones(a, b, op):
    fn = getattr(algebra, op)
    la, lb = a.tk(), b.tk()
    try:
        want = str(_fresh(fn, la, lb))
    except LayoutError:
        with pytest.raises(LayoutError):
            fn(la, lb)
        return
    assert str(fn(la, lb)) == want and str(fn(la, lb)) == want


def test_static_and_dynamic_twins_keep_their_staticness():
    for first in ("static", "dynamic"):
        algebra.zipped_divide.__wrapped__.cache_clear()
        calls = {"static": (tk.make_layout((tk.Int(16), tk.Int(16))), (tk.Int(4), tk.Int(4))),
                 "dynamic": (tk.make_layout((16, 16)), (4, 4))}
        order = [first, "dynamic" if first == "static" else "static"]
        got = {k: str(tk.zipped_divide(*calls[k])) for k in order}
        assert got["static"] == "((_4,_4),(_4,_4)):((_1,_16),(_4,_64))"
        assert got["dynamic"] == "((4,4),(4,4)):((_1,16),(4,64))"
    assert static_key((tk.Int(4), 4)) != static_key((4, 4)) != static_key((tk.Int(4), tk.Int(4)))


def test_unsigned_and_signed_offsets_keep_their_inverses():
    """A sliced swizzled layout's static offset is CuTe's unsigned ``C<512u>``: it prints as a given ``_512`` does,
    but its negation wraps, so the two never share a memo entry."""
    I = tk.Int  # noqa: E741 - CuTe's Int
    full = tk.composition(tk.Swizzle(3, 4, 3), tk.make_layout((I(2), (I(8), I(64))), (I(512), (I(64), I(1)))))
    sliced = full(I(1), tk._)
    given_ = tk.make_composed_layout(tk.Swizzle(3, 4, 3), I(512), sliced.layout_b)
    assert str(sliced) == str(given_)
    for _ in range(2):
        assert str(tk.right_inverse(given_)) == "(_64,_8):(_8,_1) o _-512 o Sw<3,4,3>"
        assert str(tk.right_inverse(sliced)) == "(_64,_8):(_8,_1) o _4294966784 o Sw<3,4,3>"


def test_failures_are_not_cached():
    bad = tk.make_layout((tk.Int(4), tk.Int(6)))
    for _ in range(2):
        with pytest.raises(LayoutError):
            tk.zipped_divide(bad, (tk.Int(4), tk.Int(4), tk.Int(2)))


def test_unkeyable_arguments_run_uncached_and_fail_as_before():
    import numpy as np

    for _ in range(2):  # no key for a numpy integer: the op runs and names the bad argument both times
        with pytest.raises(LayoutError, match="expected a layout or an integer"):
            tk.zipped_divide(tk.make_layout(64), (np.int64(8),))
    t = tk.make_tensor(np.arange(64.0), tk.make_layout(64))  # a tensor: the memo sees only its layout
    assert str(tk.zipped_divide(t, (tk.Int(8),)).layout) == "((_8),(8)):((_1),(_8))"
