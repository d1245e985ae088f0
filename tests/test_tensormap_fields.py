"""TensorMap derived properties, from_tensor / from_shape, str() and explain()."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tmakit.tma import DataType, Interleave, L2Promotion, OobFill, SwizzleMode, TensorMap, TmaDescriptorError
from tmakit.tma.tensormap_explain import c_call, c_name

D, SW = DataType, SwizzleMode


def aligned_empty(shape, dtype, align=1024):
    """A C-contiguous numpy array whose data starts ``align``-byte aligned."""
    n = int(np.prod(shape)) * np.dtype(dtype).itemsize
    raw = np.zeros(n + align, np.uint8)
    off = (-raw.ctypes.data) % align
    return raw[off:off + n].view(dtype).reshape(shape)


# ---- derived properties (docs/HARDWARE.md §2-3) ----------------------------------------------------------------

def test_tx_bytes_with_element_strides():
    # docs/HARDWARE.md §3 [V]: es={1,2}, box {32,16} fp32 -> 8 rows, 1024 bytes
    tm = TensorMap(D.FLOAT32, (64, 64), (256,), (32, 16), (1, 2))
    assert tm.box_rows == 8 and tm.tx_bytes == 1024 and tm.smem_bytes == 1024 and tm.row_pitch == 128


def test_tx_bytes_ceil_of_partial_stride():
    tm = TensorMap(D.FLOAT16, (64, 64, 64), (128, 8192), (8, 5, 7), (1, 2, 3))
    assert tm.box_rows == 3 * 3 and tm.tx_bytes == 16 * 9


def test_swizzled_row_pitch_pads_narrow_rows():
    # [V] 64-byte rows with SW128 -> 128-byte pitch; 16-byte rows with SW32 -> 32-byte pitch; tx counts data only
    tm = TensorMap(D.BFLOAT16, (128, 128), (256,), (32, 8), swizzle=SW.B128)
    assert tm.row_pitch == 128 and tm.tx_bytes == 64 * 8 and tm.smem_bytes == 128 * 8
    tm = TensorMap(D.UINT8, (128, 128), (128,), (16, 4), swizzle=SW.B32)
    assert tm.row_pitch == 32 and tm.tx_bytes == 64 and tm.smem_bytes == 128
    tm = TensorMap(D.UINT8, (128, 128), (128,), (16, 4))
    assert tm.row_pitch == 16 and tm.smem_bytes == 64


@pytest.mark.parametrize("swz,align", [(SW.NONE, 128), (SW.B32, 256), (SW.B64, 512), (SW.B128, 1024),
                                       (SW.B128_ATOM_32B, 1024), (SW.B128_ATOM_64B, 1024)])
def test_smem_alignment(swz, align):
    assert TensorMap(D.UINT8, (64,), (), (16,), swizzle=swz).smem_alignment == align


def test_im2col_sizes():
    tm = TensorMap(D.FLOAT16, (64, 9, 14, 4), (128, 1152, 16128), (), mode="im2col", channels_per_pixel=32,
                   pixels_per_column=100, pixel_box_lower_corner=(0, 0), pixel_box_upper_corner=(0, 0),
                   swizzle=SW.B128)
    assert tm.inner_box == 32 and tm.box_rows == 100
    assert tm.tx_bytes == 32 * 100 * 2 and tm.row_pitch == 128 and tm.smem_bytes == 12800


def test_packed_sizes():
    tm = TensorMap(D.U4_ALIGN16B, (256, 64), (128,), (128, 16))
    assert tm.is_packed and tm.elem_bits == 4 and tm.smem_elem_bits == 8 and tm.inner_bytes == 128
    tm = TensorMap(D.U4_ALIGN8B, (256, 64), (128,), (64, 16))
    assert tm.inner_bytes == 32 and tm.tx_bytes == 512


def test_defaults_and_coercion():
    tm = TensorMap(7, [64, 64], [256], [32, 32], swizzle=3, l2_promotion=2, oob_fill=1)
    assert tm.dtype is D.FLOAT32 and tm.element_strides == (1, 1) and tm.swizzle is SW.B128
    assert tm.l2_promotion is L2Promotion.B128 and tm.oob_fill is OobFill.NAN_REQUEST_ZERO_FMA
    assert TensorMap("bf16", (64,), (), (64,)).dtype is D.BFLOAT16
    assert TensorMap(np.float16, (64,), (), (64,)).dtype is D.FLOAT16
    assert tm.replace(box_dim=(16, 16)).box_dim == (16, 16) and tm.box_dim == (32, 32)


# ---- from_tensor / from_shape ---------------------------------------------------------------------------------

def test_from_tensor_row_major_2d():
    a = aligned_empty((256, 128), np.float32)
    tm = TensorMap.from_tensor(a, (16, 32), swizzle=SW.B128)
    assert tm.global_dim == (128, 256) and tm.global_strides == (512,) and tm.box_dim == (32, 16)
    assert tm.dtype is D.FLOAT32 and tm.global_address == a.ctypes.data and tm.swizzle is SW.B128


def test_from_tensor_bf16_bits_acceptance():
    M, K = 128, 192
    a = aligned_empty((M, K), np.uint16)
    tm = TensorMap.from_tensor(a, (64, 64), swizzle=SW.B128, dtype="bf16")
    assert (tm.dtype, tm.global_dim, tm.global_strides, tm.box_dim) == (D.BFLOAT16, (K, M), (2 * K,), (64, 64))
    b = aligned_empty((M, 100), np.uint16)
    with pytest.raises(TmaDescriptorError) as ei:
        TensorMap.from_tensor(b, (64, 64), swizzle=SW.B128, dtype="bf16")
    assert ei.value.rule == "globalStrides.multiple16" and "200 bytes" in str(ei.value)
    assert "16 bytes" in str(ei.value)


def test_from_tensor_strided_view_and_5d():
    a = aligned_empty((4, 8, 16, 32, 64), np.float16)
    tm = TensorMap.from_tensor(a, (1, 2, 4, 8, 64), element_strides=(1, 1, 2, 1, 1))
    assert tm.global_dim == (64, 32, 16, 8, 4)
    assert tm.global_strides == (128, 128 * 32, 128 * 32 * 16, 128 * 32 * 16 * 8)
    assert tm.box_dim == (64, 8, 4, 2, 1) and tm.element_strides == (1, 1, 2, 1, 1)
    big = aligned_empty((64, 96), np.float32)
    view = big[8:40, 16:48]  # row stride stays 384 bytes; address moves by 8*384 + 64
    tm = TensorMap.from_tensor(view, (8, 16))
    assert tm.global_dim == (32, 32) and tm.global_strides == (384,)
    assert tm.global_address == big.ctypes.data + 8 * 384 + 64
    every_other_row = big[::2]
    assert TensorMap.from_tensor(every_other_row, (8, 16)).global_strides == (768,)


def test_from_tensor_rank1_and_int_box():
    a = aligned_empty((1000,), np.uint8)
    tm = TensorMap.from_tensor(a, 256)
    assert tm.global_dim == (1000,) and tm.global_strides == () and tm.box_dim == (256,)


def test_from_tensor_errors():
    a = aligned_empty((64, 64), np.float32)
    with pytest.raises(TmaDescriptorError) as ei:
        TensorMap.from_tensor(a.T, (8, 8))
    assert ei.value.rule == "fromTensor.innerStride" and "64 elements" in str(ei.value)
    with pytest.raises(TmaDescriptorError) as ei:
        TensorMap.from_tensor(a, (8, 8, 8))
    assert ei.value.rule == "fromTensor.boxRank" and "(8, 8, 8)" in str(ei.value)
    with pytest.raises(TmaDescriptorError) as ei:
        TensorMap.from_tensor(a, (8, 8), element_strides=(1,))
    assert ei.value.rule == "fromTensor.elementStridesRank"
    with pytest.raises(TmaDescriptorError) as ei:
        TensorMap.from_tensor(a, (8, 8), dtype="bf16")
    assert ei.value.rule == "fromTensor.dtypeSize"
    with pytest.raises(TmaDescriptorError) as ei:
        TensorMap.from_tensor(a[:, 1:], (8, 8))  # address 4 bytes past alignment
    assert ei.value.rule == "globalAddress.align16"
    assert TensorMap.from_tensor(a[:, 1:], (8, 8), global_address=0).global_address == 0
    with pytest.raises(TmaDescriptorError) as ei:
        TensorMap.from_tensor(aligned_empty((2,) * 6, np.float32), (1,) * 6)
    assert ei.value.rule == "tensorRank.range"
    with pytest.raises(TypeError):
        TensorMap.from_tensor([[1, 2]], (1, 2))
    assert TensorMap.from_tensor(a, (8, 300), validate=False).box_dim == (300, 8)


def test_from_tensor_packed_reinterprets_bytes():
    a = aligned_empty((64, 128), np.uint8)  # 64 rows of 256 u4 values
    tm = TensorMap.from_tensor(a, (16, 128), dtype=D.U4_ALIGN16B, arch="sm_100")  # packed: sm_100+
    assert tm.global_dim == (256, 64) and tm.global_strides == (128,) and tm.dtype is D.U4_ALIGN16B


def test_from_tensor_array_interface_object():
    a = aligned_empty((32, 64), np.float32)

    class Wrapped:
        __array_interface__ = {"shape": (32, 64), "typestr": "<f4", "data": (a.ctypes.data, False),
                               "strides": None, "version": 3}

    tm = TensorMap.from_tensor(Wrapped(), (8, 8))
    assert tm.global_dim == (64, 32) and tm.global_strides == (256,) and tm.global_address == a.ctypes.data


def test_from_shape_strides_in_elements():
    tm = TensorMap.from_shape((3, 64, 64), "fp16", (1, 64, 64), strides=(8192, 128, 1), swizzle=SW.B128)
    assert tm.global_dim == (64, 64, 3) and tm.global_strides == (256, 16384)
    with pytest.raises(TmaDescriptorError) as ei:
        TensorMap.from_shape((64, 64), "fp16", (8, 8), strides=(1, 64))
    assert ei.value.rule == "fromTensor.innerStride"
    tm = TensorMap.from_shape((16, 256), D.U4_ALIGN8B, (16, 64), arch="sm_100")
    assert tm.global_strides == (128,)
    with pytest.raises(TmaDescriptorError) as ei:
        TensorMap.from_shape((16, 256), D.U4_ALIGN8B, (16, 64), strides=(33, 1), arch="sm_100")
    assert ei.value.rule == "fromTensor.strideBytes"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=1, max_size=5), st.sampled_from([np.uint8, np.float16, np.float32,
                                                                              np.float64]))
def test_from_tensor_reverses_numpy_layout(shape, dtype):
    shape = list(shape)
    shape[-1] = 16  # keep rows a multiple of 16 bytes
    a = aligned_empty(tuple(shape), dtype)
    box = tuple(min(s, 4) for s in shape[:-1]) + (16,)
    tm = TensorMap.from_tensor(a, box, validate=False)
    assert tm.global_dim == tuple(reversed(shape))
    assert tm.global_strides == tuple(reversed(a.strides[:-1]))
    assert tm.box_dim == tuple(reversed(box))
    # the element at row-major index i sits at address sum(coord[d] * stride[d]) in both descriptions
    idx = tuple(s - 1 for s in shape)
    off_np = sum(i * s for i, s in zip(idx, a.strides))
    inner_first = tuple(reversed(idx))
    off_tm = inner_first[0] * a.itemsize + sum(c * s for c, s in zip(inner_first[1:], tm.global_strides))
    assert off_np == off_tm


def test_from_tensor_torch():
    torch = pytest.importorskip("torch")
    t = torch.empty((128, 192), dtype=torch.bfloat16)
    tm = TensorMap.from_tensor(t, (64, 64), swizzle=SW.B128, global_address=0)
    assert (tm.dtype, tm.global_dim, tm.global_strides, tm.box_dim) == (D.BFLOAT16, (192, 128), (384,), (64, 64))
    t8 = torch.empty((64, 256), dtype=torch.float8_e4m3fn)
    tm = TensorMap.from_tensor(t8, (64, 128), swizzle=SW.B128, global_address=0)
    assert tm.dtype is D.UINT8 and tm.elem_bytes == 1 and tm.global_strides == (256,)
    with pytest.raises(TmaDescriptorError) as ei:
        TensorMap.from_tensor(torch.empty((64, 64)).t(), (8, 8), global_address=0)
    assert ei.value.rule == "fromTensor.innerStride"
    v = torch.empty((64, 100), dtype=torch.bfloat16)
    with pytest.raises(TmaDescriptorError, match="multiple of 16 bytes"):
        TensorMap.from_tensor(v, (64, 64), global_address=0)


# ---- str / explain / C call -----------------------------------------------------------------------------------

def test_str_is_one_line():
    tm = TensorMap.from_shape((256, 128), "bf16", (64, 64), swizzle=SW.B128)
    s = str(tm)
    assert "\n" not in s
    assert s == "TensorMap(bf16 tiled, dim=(128, 256), stride=(256,)B, box=(64, 64), swizzle=128B, tx=8192B)"
    tm2 = tm.replace(element_strides=(1, 2), l2_promotion=L2Promotion.B256, oob_fill=1, global_address=0x1000)
    s2 = str(tm2)
    assert "es=(1, 2)" in s2 and "l2=L2_256B" in s2 and "oob=NAN_REQUEST_ZERO_FMA" in s2 and "addr=0x1000" in s2


def test_explain_tiled():
    tm = TensorMap.from_shape((256, 128), "bf16", (32, 64), swizzle=SW.B128, l2_promotion=L2Promotion.B256)
    text = tm.explain()
    for needle in ("cuTensorMapEncodeTiled", "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16", "globalDim", "(128, 256)",
                   "bytes per box   4096", "32 rows x 128-byte pitch = 4096 bytes, aligned to 1024 bytes",
                   "valid for sm_90", "cuuint64_t globalDim[2] = {128, 256};", "cuuint64_t globalStrides[1] = {256};",
                   "cuuint32_t boxDim[2] = {64, 32};", "CU_TENSOR_MAP_SWIZZLE_128B",
                   "CU_TENSOR_MAP_L2_PROMOTION_L2_256B", "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE",
                   "CU_TENSOR_MAP_INTERLEAVE_NONE"):
        assert needle in text, needle


def test_explain_reports_invalid_and_im2col():
    bad = TensorMap(D.FLOAT32, (64, 64), (200,), (32, 32))
    assert "INVALID for sm_90" in bad.explain() and "globalStrides.multiple16" in bad.explain()
    tm = TensorMap(D.FLOAT16, (64, 9, 14, 4), (128, 1152, 16128), (), mode="im2col", channels_per_pixel=64,
                   pixels_per_column=128, pixel_box_lower_corner=(-1, -1), pixel_box_upper_corner=(-1, -1))
    text = tm.explain()
    assert "cuTensorMapEncodeIm2col(&map" in text and "int pixelBoxLowerCorner[2] = {-1, -1};" in text
    assert "64, 128, elementStrides" in text and "channelsPerPixel" in text and "valid for sm_90" in text
    assert "im2col" in str(tm) and "channels=64" in str(tm)


def test_c_call_rank1_and_names():
    assert "globalStrides = NULL" in c_call(TensorMap(D.UINT8, (64,), (), (64,)))
    assert c_name(D.U4_ALIGN8B) == "CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B"
    assert c_name(D.TFLOAT32_FTZ) == "CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ"
    assert c_name(SW.B128_ATOM_32B_FLIP_8B) == "CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B"
    assert c_name(Interleave.B16) == "CU_TENSOR_MAP_INTERLEAVE_16B"
    assert c_name(L2Promotion.NONE) == "CU_TENSOR_MAP_L2_PROMOTION_NONE"
    assert c_name(OobFill.NAN_REQUEST_ZERO_FMA) == "CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA"
