"""Start-coordinate rules that trap on the H200 (tmakit.tma.coord_rules) and the host checks built on them."""

from __future__ import annotations

import pytest

from tmakit.tma import DataType, TensorMap
from tmakit.tma.coord_rules import (
    im2col_pixel_box,
    im2col_spatial_dims,
    im2col_start_message,
    im2col_start_outside,
    im2col_store_corner_message,
    inner_misaligned,
)


def _im2col(lower, upper, dims=(32, 16, 8, 2)):
    return TensorMap(DataType.FLOAT32, dims, (128, 128 * dims[1], 128 * dims[1] * dims[2]), (), mode="im2col",
                     pixel_box_lower_corner=lower, pixel_box_upper_corner=upper, channels_per_pixel=32,
                     pixels_per_column=16)


def test_pixel_box_is_lower_to_dim_minus_one_plus_upper():
    tm = _im2col((-1, 2), (1, -3))
    assert im2col_pixel_box(tm, 0) == (-1, 16) and im2col_pixel_box(tm, 1) == (2, 4)


def test_im2col_start_outside_names_each_dim():
    tm = _im2col((-1, 2), (1, -3))
    assert im2col_start_outside(tm, (0, -1, 2, 0)) == [] and im2col_start_outside(tm, (96, 16, 4, -5)) == []
    assert im2col_start_outside(tm, (0, 17, 1, 0)) == [(1, 17, -1, 16), (2, 1, 2, 4)]
    msg = im2col_start_message(tm, (0, -2, 2, 0))
    assert "dim 1: -2 not in [-1, 16]" in msg and "illegal" in msg.lower()


def test_tiled_maps_have_no_pixel_box_rule():
    tm = TensorMap(DataType.FLOAT32, (64, 64), (256,), (16, 8))
    assert im2col_start_outside(tm, (0, 1000)) == [] and im2col_start_message(tm, (0, -9)) == ""


@pytest.mark.parametrize("dtype, c0, bad", [(DataType.FLOAT32, 4, False), (DataType.FLOAT32, 6, True),
                                            (DataType.BFLOAT16, 8, False), (DataType.BFLOAT16, -4, True),
                                            (DataType.UINT8, 16, False), (DataType.FLOAT64, 1, True)])
def test_inner_misaligned(dtype, c0, bad):
    tm = TensorMap(dtype, (64, 64), (512,), (16, 8))
    assert inner_misaligned(tm, c0) is bad


def test_seed_host_check_refuses_an_im2col_start_outside_the_box():
    pytest.importorskip("cuda.bindings")
    from tmakit.kernels import seeds

    tm = _im2col((0, 0), (0, 0))
    ok = seeds._pack_load(tm, [seeds.load_job((0, 15, 7, 3), mode="im2col", offsets=(0, 0))])
    seeds._check_load_jobs(tm, ok)
    bad = seeds._pack_load(tm, [seeds.load_job((0, 16, 0, 0), mode="im2col", offsets=(0, 0))])
    with pytest.raises(ValueError, match=r"job 0: im2col load .*dim 1: 16 not in \[0, 15\]"):
        seeds._check_load_jobs(tm, bad)


@pytest.mark.parametrize("lower, upper, bad", [((0, 0), (0, 0), False), ((1, 2), (-1, -3), False),
                                               ((-1, 0), (0, 0), True), ((0, 0), (0, 1), True),
                                               ((2, 0), (1, 0), True)])
def test_im2col_store_corner_rule(lower, upper, bad):
    """H200: im2col stores/reductions trap unless every lower corner >= 0 and every upper corner <= 0."""
    msg = im2col_store_corner_message(_im2col(lower, upper))
    assert bool(msg) is bad
    if bad:
        assert f"lower {list(lower)} / upper {list(upper)}" in msg and "illegal" in msg.lower()


def test_tiled_maps_have_no_store_corner_rule():
    assert im2col_store_corner_message(TensorMap(DataType.FLOAT32, (64, 64), (256,), (16, 8))) == ""


def test_seed_host_check_refuses_traps_of_im2col_stores():
    pytest.importorskip("cuda.bindings")
    from tmakit.kernels import seeds

    tm = _im2col((0, 1), (0, -1))
    seeds._check_store_jobs(tm, seeds._pack_store([seeds.store_job((0, 15, 6, 1), mode="im2col", op="add")]))
    with pytest.raises(ValueError, match=r"job 0: im2col store .*dim 2: 0 not in \[1, 6\]"):
        seeds._check_store_jobs(tm, seeds._pack_store([seeds.store_job((0, 0, 0, 0), mode="im2col")]))
    with pytest.raises(ValueError, match="reach outside the tensor"):
        seeds._check_store_jobs(_im2col((-1, 0), (0, 0)),
                                seeds._pack_store([seeds.store_job((0, 0, 0, 0), mode="im2col")]))


def test_interleaved_im2col_spatial_dims_are_the_chunk_dim_and_the_next_ones():
    """H200 probes i2c_start_c_out (traps) and i2c_start_h_free (runs): the corners belong to the
    chunk dim (0) and W (1); dim rank-2 (H) is not spatial."""
    tm = TensorMap(DataType.UINT16, (2, 6, 5, 2), (32, 192, 960), (8, 1, 1, 1), interleave=1, mode="im2col",
                   pixel_box_lower_corner=(1, 0), pixel_box_upper_corner=(0, -1), channels_per_pixel=8,
                   pixels_per_column=16)
    assert im2col_spatial_dims(tm) == (0, 1) and im2col_spatial_dims(_im2col((0, 0), (0, 0))) == (1, 2)
    assert im2col_pixel_box(tm, 0) == (1, 1) and im2col_pixel_box(tm, 1) == (0, 4)
    assert im2col_start_outside(tm, (0, 1, 0, 0)) == [(0, 0, 1, 1)]
    assert im2col_start_outside(tm, (1, 4, 9, 0)) == []  # dim 2 may lie anywhere
    assert "dim 1: 5 not in [0, 4]" in im2col_start_message(tm, (1, 5, 0, 0))
