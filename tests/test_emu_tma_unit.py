"""The TMA unit on byte buffers: coordinates, OOB fill, element strides, stores, prefetch, im2col (TMA.md §3)."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tmakit.emu import OOB_NAN_BITS, tma_unit
from tmakit.emu.errors import IllegalAddress, IllegalInstruction, TmaUnitError
from tmakit.tma.errors import TmaDescriptorError
from tmakit.tma.tensormap import DataType, OobFill, TensorMap

NAN = OobFill.NAN_REQUEST_ZERO_FMA


def reference_box(a, box, coords, es, fill):
    """Element-by-element model of TMA.md §3 on a numpy array (dims reversed: a[..., y, x])."""
    rank = a.ndim
    counts = [box[0]] + [-(-box[i] // es[i]) for i in range(1, rank)]
    out = np.full(counts[::-1], fill, dtype=a.dtype)
    for k in itertools.product(*(range(n) for n in counts[::-1])):
        g = [coords[rank - 1 - d] + (es[rank - 1 - d] if rank - 1 - d else 1) * k[d] for d in range(rank)]
        if all(0 <= g[d] < a.shape[d] for d in range(rank)):
            out[k] = a[tuple(g)]
    return out


def tmap_for(a, dtype, box, es=None, **kw):
    dims = a.shape[::-1]
    strides = tuple(a.strides[::-1][1:])
    return TensorMap(dtype, dims, strides, box, element_strides=es, **kw)


def test_seed_tile_and_tx_bytes():
    a = np.arange(48, dtype=np.float32).reshape(6, 8)
    tm = tmap_for(a, DataType.FLOAT32, (4, 2))
    smem = np.zeros(1024, np.uint8)
    assert tma_unit.load(tm, (4, 2), a, smem, 0) == 32 == tma_unit.tx_bytes(tm)
    assert smem[:32].view(np.float32).tolist() == [20, 21, 22, 23, 28, 29, 30, 31]


def test_oob_zero_and_negative_start():
    a = np.arange(1, 49, dtype=np.float32).reshape(6, 8)
    tm = tmap_for(a, DataType.FLOAT32, (4, 2))
    smem = np.full(1024, 0xFF, np.uint8)
    tma_unit.load(tm, (-2, -1), a, smem, 0)
    assert smem[:32].view(np.float32).tolist() == [0, 0, 0, 0, 0, 0, 1, 2]


def test_fully_out_of_bounds_box_still_signals_full_bytes():
    a = np.ones((6, 8), np.float32)
    tm = tmap_for(a, DataType.FLOAT32, (4, 2))
    smem = np.full(1024, 0xFF, np.uint8)
    assert tma_unit.load(tm, (100, -50), a, smem, 0) == 32
    assert (smem[:32] == 0).all() and (smem[32:] == 0xFF).all()


@pytest.mark.parametrize("dtype,np_dtype", [(DataType.FLOAT32, np.float32), (DataType.FLOAT16, np.float16),
                                            (DataType.BFLOAT16, np.uint16), (DataType.FLOAT64, np.float64),
                                            (DataType.TFLOAT32, np.float32)])
def test_oob_nan_fill_pattern(dtype, np_dtype):
    a = np.zeros((4, 16), np_dtype)
    tm = tmap_for(a, dtype, (16, 2), oob_fill=NAN)
    smem = np.zeros(1024, np.uint8)
    tma_unit.load(tm, (8, 3), a, smem, 0)
    e = np.dtype(np_dtype).itemsize
    bits = smem[:16 * 2 * e].view({2: np.uint16, 4: np.uint32, 8: np.uint64}[e]).reshape(2, 16)
    assert (bits[0, :8] == 0).all()
    assert (bits[0, 8:] == OOB_NAN_BITS[dtype]).all() and (bits[1] == OOB_NAN_BITS[dtype]).all()
    assert OOB_NAN_BITS[DataType.FLOAT32] == 0x7FF77FF7  # the verified pattern


def test_nan_fill_rejected_for_integers():
    with pytest.raises(TmaDescriptorError):
        tma_unit.load(TensorMap(DataType.UINT32, (16, 4), (64,), (16, 2), oob_fill=NAN), (0, 0),
                      np.zeros(64, np.uint32), np.zeros(1024, np.uint8), 0)


def test_element_strides_verified_case():
    """es={1,2}, box {32,16} fp32: 8 rows, 1024 bytes (TMA.md §3 [V])."""
    a = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
    tm = tmap_for(a, DataType.FLOAT32, (32, 16), es=(1, 2))
    smem = np.zeros(4096, np.uint8)
    assert tma_unit.load(tm, (0, 4), a, smem, 0) == 1024
    assert np.array_equal(smem[:1024].view(np.float32).reshape(8, 32), a[4:20:2])


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 5), st.integers(0, 2**32 - 1), st.booleans())
def test_load_matches_elementwise_reference(rank, seed, nan):
    rng = np.random.default_rng(seed)
    shape = tuple(int(rng.integers(1, 7)) for _ in range(rank - 1)) + (int(rng.integers(1, 5)) * 4,)
    a = rng.standard_normal(shape).astype(np.float32)
    box = (4 * int(rng.integers(1, 5)),) + tuple(int(rng.integers(1, 6)) for _ in range(rank - 1))
    es = (1,) + tuple(int(rng.integers(1, 4)) for _ in range(rank - 1))
    coords = tuple(int(rng.integers(-6, 8)) for _ in range(rank))
    tm = tmap_for(a, DataType.FLOAT32, box, es=es, oob_fill=NAN if nan else OobFill.NONE)
    smem = np.zeros(1 << 16, np.uint8)
    n = tma_unit.load(tm, coords, a, smem, 256)
    fill = np.uint32(0x7FF77FF7 if nan else 0).view(np.float32)
    ref = reference_box(a, box, coords, es, fill)
    assert n == ref.nbytes
    assert np.array_equal(smem[256:256 + n].view(np.uint32), ref.reshape(-1).view(np.uint32))


def test_store_clips_out_of_bounds_and_rejects_negative_start():
    g = np.zeros((6, 8), np.float32)
    tm = tmap_for(g, DataType.FLOAT32, (4, 4))
    smem = np.zeros(1024, np.uint8)
    smem[:64].view(np.float32)[:] = np.arange(1, 17)
    tma_unit.store(tm, (6, 4), g, smem, 0)
    assert g[4:6, 6:8].tolist() == [[1, 2], [5, 6]] and g.sum() == 14
    with pytest.raises(IllegalInstruction, match="kills the context with cudaErrorIllegalInstruction"):
        tma_unit.store(tm, (-4, -3), g, smem, 0)


def test_store_beyond_buffer_is_illegal_address():
    g = np.zeros(16, np.float32)
    tm = TensorMap(DataType.FLOAT32, (8, 6), (32,), (4, 2))
    with pytest.raises(IllegalAddress):
        tma_unit.store(tm, (4, 4), g, np.zeros(1024, np.uint8), 0)


def test_prefetch_validates_only():
    a = np.ones((6, 8), np.float32)
    tm = tmap_for(a, DataType.FLOAT32, (4, 2))
    assert tma_unit.prefetch(tm, (4, 2)) is None
    with pytest.raises(TmaUnitError, match="2 coordinates"):
        tma_unit.prefetch(tm, (1,))
    with pytest.raises(TmaDescriptorError):
        tma_unit.prefetch(tm.replace(box_dim=(3, 2)), (0, 0))  # 12-byte inner box


def test_coordinates_must_fit_s32():
    tm = tmap_for(np.ones((6, 8), np.float32), DataType.FLOAT32, (4, 2))
    with pytest.raises(TmaUnitError, match="s32"):
        tma_unit.prefetch(tm, (2**31, 0))


def im2col_map(x, lower, upper, channels, pixels, es=None):
    n, h, w, c = x.shape
    e = x.itemsize
    return TensorMap(DataType.FLOAT32, (c, w, h, n), (c * e, w * c * e, h * w * c * e), (), mode="im2col",
                     element_strides=es, pixel_box_lower_corner=lower, pixel_box_upper_corner=upper,
                     channels_per_pixel=channels, pixels_per_column=pixels)


def test_im2col_padding_walk():
    """3x3 conv, padding 1, NHWC 1x4x4x8: the column for filter tap (r, s) is the input shifted by (r-1, s-1)."""
    x = np.arange(1 * 4 * 4 * 8, dtype=np.float32).reshape(1, 4, 4, 8)
    tm = im2col_map(x, (-1, -1), (-1, -1), 8, 16)
    for r, s in [(0, 0), (1, 1), (2, 0)]:
        smem = np.zeros(4096, np.uint8)
        assert tma_unit.load(tm, (0, -1, -1, 0), x, smem, 0, im2col_offsets=(s, r)) == 16 * 8 * 4
        got = smem[:512].view(np.float32).reshape(4, 4, 8)
        pad = np.pad(x[0], ((1, 1), (1, 1), (0, 0)))
        assert np.array_equal(got, pad[r:r + 4, s:s + 4]), (r, s)


def test_im2col_continues_into_next_image():
    x = np.arange(2 * 2 * 2 * 4, dtype=np.float32).reshape(2, 2, 2, 4)
    tm = im2col_map(x, (0, 0), (0, 0), 4, 6)
    smem = np.zeros(4096, np.uint8)
    tma_unit.load(tm, (0, 0, 1, 0), x, smem, 0, im2col_offsets=(0, 0))
    got = smem[:96].view(np.float32).reshape(6, 4)
    assert np.array_equal(got, x.reshape(8, 4)[2:8])


def test_im2col_offsets_checked():
    x = np.zeros((1, 4, 4, 8), np.float32)
    tm = im2col_map(x, (-1, -1), (-1, -1), 8, 16)
    with pytest.raises(TmaUnitError, match="im2col offsets"):
        tma_unit.load(tm, (0, 0, 0, 0), x, np.zeros(4096, np.uint8), 0, im2col_offsets=(0,))
    with pytest.raises(TmaUnitError, match=r"\[0, 255\]"):
        tma_unit.load(tm, (0, 0, 0, 0), x, np.zeros(4096, np.uint8), 0, im2col_offsets=(300, 0))
