"""Property: random bad values through the public host API and the layout algebra give only tmakit's named errors
(``tk.LayoutError`` / ``tk.TmaError``): no bare Python exception, no hang, no silent coercion of a non-integer."""

from __future__ import annotations

import numbers

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tmakit as tk
from tmakit.layout import LayoutError
from tmakit.tma import TensorMap, TmaError

NAMED = (LayoutError, TmaError)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

NOT_INTEGERS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=3), st.binary(max_size=3),
                         st.none(), st.booleans(), st.sampled_from([64.9, 64.0, "64", b"64", float("nan")]))
INTEGERS = st.one_of(st.integers(-3, 17), st.sampled_from([0, 1, 2, 4, 8, 16, 2**31, 2**40, 2**64, 10**30, -2**70]),
                     st.integers(0, 64).map(np.int64))
LEAVES = st.one_of(INTEGERS, INTEGERS.filter(lambda v: abs(int(v)) < 2**63).map(tk.Int), NOT_INTEGERS)


def nested(leaves, max_leaves=6):
    return st.recursive(leaves, lambda x: st.tuples(x) | st.tuples(x, x) | st.tuples(x, x, x), max_leaves=max_leaves)


def deep(n):
    x = 4
    for _i in range(n):
        x = (x,)
    return x


ARGS = st.one_of(nested(LEAVES), st.integers(65, 600).map(deep))
GOOD_LAYOUTS = st.sampled_from([tk.make_layout((tk.Int(4), tk.Int(8))), tk.make_layout((8, 4), tk.LayoutRight),
                                tk.make_layout((tk.Int(6),), (tk.Int(-1),)), tk.make_layout((2, (3, 4)), (12, (1, 3))),
                                tk.make_layout((tk.Int(0), tk.Int(4))), tk.make_layout(tk.Int(16), tk.Int(2))])


def not_an_integer(x, none_ok=False) -> bool:
    """A leaf that no integer argument may take; with ``none_ok``, None is CuTe's ``X`` (an alias of ``_``), which
    tilers and projections take."""
    if isinstance(x, (tuple, list)):
        return any(not_an_integer(v, none_ok) for v in x)
    if x is None and none_ok:
        return False
    return isinstance(x, bool) or not isinstance(x, numbers.Integral)


def run(fn):
    """``"ok"`` or ``"named"``; any other exception fails the property."""
    try:
        fn()
    except NAMED:
        return "named"
    return "ok"


def refused_if_bad(arg, fn, none_ok=False):
    got = run(fn)
    bad = not_an_integer(arg, none_ok)
    assert not (bad and got == "ok"), f"{arg!r} was accepted"


@SETTINGS
@given(shape=ARGS, stride=st.none() | ARGS)
def test_make_layout(shape, stride):
    args = (shape,) if stride is None else (shape, stride)
    refused_if_bad((shape, stride if stride is not None else 1), lambda: tk.make_layout(*args))


@SETTINGS
@given(layout=GOOD_LAYOUTS, arg=ARGS, op=st.sampled_from(["composition", "logical_divide", "zipped_divide",
                                                          "logical_product", "complement", "call", "tile_to_shape"]))
def test_algebra_with_bad_arguments(layout, arg, op):
    fns = {
        "composition": lambda: tk.composition(layout, arg),
        "logical_divide": lambda: tk.logical_divide(layout, arg),
        "zipped_divide": lambda: tk.zipped_divide(layout, arg),
        "logical_product": lambda: tk.logical_product(layout, arg),
        "complement": lambda: tk.complement(layout, arg),
        "call": lambda: layout(arg),
        "tile_to_shape": lambda: tk.tile_to_shape(layout, arg),
    }
    refused_if_bad(arg, fns[op], none_ok=True)


@SETTINGS
@given(tiler=ARGS, coord=ARGS)
def test_local_tile(tiler, coord):
    t = tk.make_identity_tensor((tk.Int(16), 12))
    refused_if_bad((tiler, coord), lambda: tk.local_tile(t, tiler, coord), none_ok=True)


@SETTINGS
@given(view=st.sampled_from(["c", "t", "step", "rev"]), crd=st.one_of(nested(LEAVES, 3), st.integers(-20, 20)))
def test_array_tensor_reads_alias_or_refuse(view, crd):
    base = np.arange(48.0).reshape(6, 8)
    arr = {"c": base, "t": base.T, "step": base[::2, 1::3], "rev": base[::-1, ::-2]}[view]
    t = tk.make_tensor(arr)
    try:
        got = t[crd]
    except NAMED:
        in_range = (isinstance(crd, tuple) and len(crd) == 2 and not not_an_integer(crd)
                    and not any(isinstance(c, tuple) for c in crd)
                    and all(0 <= int(c) < n for c, n in zip(crd, arr.shape)))
        assert not in_range, f"{crd!r} is inside {arr.shape}"
        return
    assert not not_an_integer(crd)
    want = arr[tuple(int(c) for c in crd)] if isinstance(crd, tuple) else arr.flatten(order="F")[int(crd)]
    assert got == want


FIELDS = ["global_dim", "global_strides", "box_dim", "element_strides", "global_address", "swizzle", "interleave",
          "l2_promotion", "oob_fill", "dtype", "channels_per_pixel", "pixel_box_lower_corner"]


@SETTINGS
@given(field=st.sampled_from(FIELDS), value=st.one_of(ARGS, st.lists(LEAVES, max_size=4)))
def test_tensormap_fields(field, value):
    fields = dict(dtype="f32", global_dim=(64, 64), global_strides=(256,), box_dim=(64, 64))
    got = run(lambda: TensorMap(**{**fields, field: value}).validate())
    bad = not_an_integer(value) and not (field == "element_strides" and value is None)
    assert not (bad and got == "ok"), f"{field}={value!r} was accepted"


@SETTINGS
@given(shape=ARGS, box=ARGS)
def test_from_shape(shape, box):
    refused_if_bad((shape, box), lambda: TensorMap.from_shape(shape, "f32", box))


@SETTINGS
@given(op=st.one_of(st.sampled_from(["SM90_TMA_LOAD", "SM90_TMA_LOAD_MULTICAST", "sm90", tk.SM90_TMA_LOAD_MULTICAST,
                                     tk.SM90_TMA_STORE]), NOT_INTEGERS),
       cluster=st.one_of(INTEGERS, NOT_INTEGERS), arch=st.one_of(st.sampled_from(["sm_90", (9, 0), 90, (9,), "x"]),
                                                                  NOT_INTEGERS, INTEGERS),
       smem=st.sampled_from(["static", "dynamic", None, "swizzled"]))
def test_make_tma_copy_arguments(op, cluster, arch, smem):
    g = tk.make_tensor(tk.make_gmem_ptr("f32", 0x10000), tk.make_layout((256, 64), tk.LayoutRight))
    layout = {"static": tk.make_layout((tk.Int(16), tk.Int(32)), tk.LayoutRight), None: None,
              "dynamic": tk.make_layout((16, 32), tk.LayoutRight),
              "swizzled": tk.composition(tk.Swizzle(3, 4, 3), tk.make_layout((tk.Int(8), tk.Int(32)), tk.LayoutRight))}
    got = run(lambda: tk.make_tma_copy(op, g, layout[smem], cluster_size=cluster, arch=arch))
    assert not (not_an_integer(cluster) and got == "ok"), f"cluster_size={cluster!r} was accepted"
    assert not (got == "ok" and not 1 <= int(cluster) <= 16)


@SETTINGS
@given(shape=st.sampled_from([(2, 2), (4,), (2, 4), (16,), (32,), (2, 2, 2)]), crd=ARGS,
       modes=st.one_of(st.just(()), INTEGERS, NOT_INTEGERS))
def test_multicast_mask(shape, crd, modes):
    layout = tk.make_layout(tuple(tk.Int(n) for n in shape))
    try:
        mask = tk.create_tma_multicast_mask(layout, crd, modes)
    except NAMED:
        return
    assert not not_an_integer(crd) and 0 <= mask < 1 << 16
    crds = crd if isinstance(crd, tuple) else (crd,)
    assert all(0 <= int(c) < n for c, n in zip(crds, shape))
