"""Bad input to the TMA host API gets tmakit's named errors: no silent coercion, no bare Python exception."""

from __future__ import annotations

import numpy as np
import pytest

import tmakit as tk
from tmakit.tma import DataType, TensorMap, TmaDescriptorError, TmaError

TILED = dict(dtype="f32", global_dim=(64, 64), global_strides=(256,), box_dim=(64, 64))


def _rule(fn, rule):
    with pytest.raises(TmaDescriptorError) as ei:
        fn()
    assert ei.value.rule == rule, str(ei.value)
    return ei.value


@pytest.mark.parametrize("field", ["global_dim", "global_strides", "box_dim", "element_strides"])
@pytest.mark.parametrize("bad", [64.9, 64.0, "64", b"64", None, True])
def test_tensormap_fields_take_integers_only(field, bad):
    good = {**TILED, "element_strides": (1, 1)}[field]
    e = _rule(lambda: TensorMap(**{**TILED, field: (bad,) + tuple(good[1:])}), "argument.integer")
    assert repr(bad) in str(e)


@pytest.mark.parametrize("field", ["global_address", "channels_per_pixel", "pixels_per_column"])
def test_tensormap_scalars_take_integers_only(field):
    _rule(lambda: TensorMap(**TILED, **{field: 16.5}), "argument.integer")


def test_numpy_integers_are_integers():
    tm = TensorMap(np.int64(7), (np.int32(64), np.uint64(64)), (np.int64(256),), (64, np.int16(64)))
    assert tm.dtype == DataType.FLOAT32 and tm.global_dim == (64, 64) and type(tm.global_dim[0]) is int


@pytest.mark.parametrize("dtype", [None, True, False, b"f32", 1.0])
def test_dtype_none_bool_bytes_float_are_refused(dtype):
    _rule(lambda: TensorMap(**{**TILED, "dtype": dtype}), "tensorDataType.known")
    _rule(lambda: tk.tma.tma_dtype(dtype), "tensorDataType.known")


@pytest.mark.parametrize("field", ["swizzle", "interleave", "l2_promotion", "oob_fill"])
@pytest.mark.parametrize("bad", [True, 1.0, "1"])
def test_enum_fields_refuse_bools_floats_strings(field, bad):
    e = _rule(lambda: TensorMap(**TILED, **{field: bad}), f"{_camel(field)}.enum")
    assert repr(bad) in str(e)


def _camel(f):
    head, *rest = f.split("_")
    return {"l2_promotion": "l2Promotion", "oob_fill": "oobFill"}.get(f, head + "".join(r.title() for r in rest))


@pytest.mark.parametrize("box", [(32.5, 32), ("32", 32), (True, 32), 32.0])
def test_from_tensor_box_takes_integers_only(box):
    _rule(lambda: TensorMap.from_tensor(np.zeros((64, 64), np.float32), box), "argument.integer")


def test_from_shape_shape_takes_integers_only():
    _rule(lambda: TensorMap.from_shape((64.0, 64), "f32", (32, 32)), "argument.integer")


def test_from_tensor_on_an_empty_array_says_the_extent_is_zero():
    e = _rule(lambda: TensorMap.from_tensor(np.zeros((0, 64), np.float32), (1, 16)), "globalDim.range")
    assert "extent 0" in str(e) and "stride" not in str(e)


@pytest.mark.parametrize("arch", [(9,), (9, 0, 1), "hopper", None, 9.0, True, -90])
def test_bad_arch_is_named(arch):
    _rule(lambda: TensorMap(**TILED).validate(arch=arch), "arch.known")


# ---- make_tma_copy ----------------------------------------------------------------------------------------------

G = np.zeros((64, 64), np.float32)
SMEM = tk.make_layout((tk.Int(16), tk.Int(16)), tk.LayoutRight)


@pytest.mark.parametrize("cs, rule", [(32, "argument.range"), (17, "argument.range"), (0, "argument.range"),
                                      (-1, "argument.range"), (2.5, "argument.integer"), ("2", "argument.integer"),
                                      (True, "argument.integer"), (None, "argument.integer")])
def test_cluster_size_is_an_integer_in_1_to_16(cs, rule):
    _rule(lambda: tk.make_tma_copy(tk.SM90_TMA_LOAD_MULTICAST, tk.make_tensor(G), SMEM, cluster_size=cs), rule)


def test_cluster_size_16_and_numpy_ints_work():
    g = tk.make_tensor(np.zeros((256, 64), np.float32))
    copy = tk.make_tma_copy(tk.SM90_TMA_LOAD_MULTICAST, g, SMEM, cluster_size=np.int64(16))
    assert copy.tensormap.box_dim == (16, 1)


def test_op_by_cute_name_or_named_error():
    assert tk.make_tma_copy("SM90_TMA_LOAD", tk.make_tensor(G), SMEM).op is tk.SM90_TMA_LOAD
    for bad in [None, "sm90_tma_load", "LOAD", 3]:
        e = _rule(lambda bad=bad: tk.make_tma_copy(bad, tk.make_tensor(G), SMEM), "copy.op")
        assert "SM90_TMA_STORE" in e.fix


@pytest.mark.parametrize("smem", [None, "16x16", (16, 16)])
def test_smem_must_be_a_layout(smem):
    _rule(lambda: tk.make_tma_copy(tk.SM90_TMA_LOAD, tk.make_tensor(G), smem), "smem.layout")


def test_dynamic_smem_layout_says_it_is_not_static():
    e = _rule(lambda: tk.make_tma_copy(tk.SM90_TMA_LOAD, tk.make_tensor(G), tk.make_layout((16, 16), tk.LayoutRight)),
              "smem.static")
    assert "tk.Int" in str(e) and "majorness" not in str(e)


def test_make_tma_copy_bad_arch():
    _rule(lambda: tk.make_tma_copy(tk.SM90_TMA_LOAD, tk.make_tensor(G), SMEM, arch=(9,)), "arch.known")


# ---- multicast masks --------------------------------------------------------------------------------------------

CLUSTER = tk.make_layout((tk.Int(2), tk.Int(2)))


@pytest.mark.parametrize("crd", [(0, 5), (2, 0), (-1, 0), (0.0, 1), ("0", 1), (None, 0), (True, 0), (0,), 3])
def test_multicast_mask_coordinates_inside_the_cluster(crd):
    with pytest.raises(TmaError):
        tk.create_tma_multicast_mask(CLUSTER, crd)


@pytest.mark.parametrize("modes", [2, -1, 0.0, "0", (0, 5)])
def test_multicast_mask_modes_are_modes(modes):
    with pytest.raises(TmaError):
        tk.create_tma_multicast_mask(CLUSTER, (0, 1), modes)


def test_multicast_mask_values():
    assert tk.create_tma_multicast_mask(CLUSTER, (1, 1)) == 0b1000
    assert tk.create_tma_multicast_mask(CLUSTER, (1, 1), 0) == 0b1100
    assert tk.create_tma_multicast_mask(CLUSTER, (np.int64(0), 1), (0, 1)) == 0b1111


def test_smem_layout_with_a_size_0_mode_is_named():
    smem = tk.make_layout((tk.Int(16), tk.Int(0)), tk.LayoutRight)
    _rule(lambda: tk.make_tma_copy(tk.SM90_TMA_LOAD_MULTICAST, tk.make_tensor(G), smem, cluster_size=2), "smem.size")


def test_reversed_view_cannot_become_a_descriptor():
    _rule(lambda: tk.make_tma_copy(tk.SM90_TMA_LOAD, tk.make_tensor(G[::-1]), SMEM), "globalStrides.range")
