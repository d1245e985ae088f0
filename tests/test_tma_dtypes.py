"""numpy / torch / name -> DataType, DataType -> numpy storage, and the bf16 helpers."""

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tmakit.tma import DataType, TmaDescriptorError, bf16, numpy_dtype, tma_dtype
from tmakit.tma.dtypes import elem_bits, itemsize_of

D = DataType

NUMPY = [
    (np.uint8, D.UINT8), (np.int8, D.UINT8), (np.bool_, D.UINT8), (np.uint16, D.UINT16), (np.int16, D.UINT16),
    (np.float16, D.FLOAT16), (np.float32, D.FLOAT32), (np.float64, D.FLOAT64), (np.int32, D.INT32),
    (np.uint32, D.UINT32), (np.int64, D.INT64), (np.uint64, D.UINT64),
]


@pytest.mark.parametrize("npdt,expected", NUMPY)
def test_numpy_dtypes(npdt, expected):
    assert tma_dtype(npdt) is expected
    assert tma_dtype(np.dtype(npdt)) is expected
    assert tma_dtype(np.zeros(2, npdt)) is expected
    assert elem_bits(expected) == np.dtype(npdt).itemsize * 8
    assert itemsize_of(np.dtype(npdt)) == np.dtype(npdt).itemsize


@pytest.mark.parametrize("name,expected", [
    ("bf16", D.BFLOAT16), ("bfloat16", D.BFLOAT16), ("fp32", D.FLOAT32), ("float16", D.FLOAT16), ("half", D.FLOAT16),
    ("e4m3", D.UINT8), ("e5m2", D.UINT8), ("float8_e4m3fnuz", D.UINT8), ("fp8", D.UINT8), ("tf32", D.TFLOAT32),
    ("torch.bfloat16", D.BFLOAT16), ("BFLOAT16", D.BFLOAT16), ("u4", D.U4_ALIGN8B), ("16U6_ALIGN16B", D.U6_ALIGN16B),
    ("CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ", D.FLOAT32_FTZ), ("s64", D.INT64), ("b32", D.UINT32), (" F64 ", D.FLOAT64),
])
def test_names(name, expected):
    assert tma_dtype(name) is expected


def test_enums_and_ints():
    for d in DataType:
        assert tma_dtype(d) is d and tma_dtype(int(d)) is d
    for bad in (16, -1, "complex64", np.complex64, "bogus", object()):
        with pytest.raises(TmaDescriptorError) as ei:
            tma_dtype(bad)
        assert ei.value.rule == "tensorDataType.known"


def test_numpy_storage():
    assert numpy_dtype(D.BFLOAT16) == np.uint16 and numpy_dtype("bf16") == np.uint16
    assert numpy_dtype(D.TFLOAT32) == np.float32 and numpy_dtype(D.U6_ALIGN16B) == np.uint8
    for d in DataType:
        if d.name.startswith("U") and "ALIGN" in d.name:
            continue
        assert numpy_dtype(d).itemsize * 8 == elem_bits(d)


class _FakeTorchDtype:
    """Stands in for torch.dtype (same type name and module) so the lazy path is tested without torch."""

    def __init__(self, name, itemsize):
        self.name, self.itemsize = name, itemsize

    def __str__(self):
        return f"torch.{self.name}"


_FakeTorchDtype.__module__ = "torch"
_FakeTorchDtype.__name__ = "dtype"


@pytest.mark.parametrize("name,itemsize,expected", [
    ("bfloat16", 2, D.BFLOAT16), ("float8_e4m3fn", 1, D.UINT8), ("float8_e5m2", 1, D.UINT8),
    ("float8_e4m3fnuz", 1, D.UINT8), ("float8_e5m2fnuz", 1, D.UINT8), ("float16", 2, D.FLOAT16),
    ("float32", 4, D.FLOAT32), ("int8", 1, D.UINT8), ("int16", 2, D.UINT16), ("int32", 4, D.INT32),
    ("int64", 8, D.INT64), ("uint8", 1, D.UINT8), ("bool", 1, D.UINT8), ("float64", 8, D.FLOAT64),
])
def test_torch_like_dtypes_without_torch(name, itemsize, expected):
    fake = _FakeTorchDtype(name, itemsize)
    assert tma_dtype(fake) is expected
    assert itemsize_of(fake) == itemsize


def test_real_torch_dtypes():
    torch = pytest.importorskip("torch")
    table = {torch.bfloat16: D.BFLOAT16, torch.float16: D.FLOAT16, torch.float32: D.FLOAT32,
             torch.float64: D.FLOAT64, torch.int8: D.UINT8, torch.uint8: D.UINT8, torch.bool: D.UINT8,
             torch.int16: D.UINT16, torch.int32: D.INT32, torch.int64: D.INT64,
             torch.float8_e4m3fn: D.UINT8, torch.float8_e5m2: D.UINT8}
    for tdt, expected in table.items():
        assert tma_dtype(tdt) is expected
        assert tma_dtype(torch.empty(1, dtype=tdt)) is expected
    with pytest.raises(TmaDescriptorError):
        tma_dtype(torch.complex64)


def test_no_torch_import():
    code = "import sys, tmakit, tmakit.tma.dtypes, tmakit.tma.tensormap_from; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# ---- bf16 helpers ---------------------------------------------------------------------------------------------

def test_bf16_known_values():
    assert bf16.to_bits(np.float32(1.0)) == 0x3F80
    assert bf16.to_bits(np.float32(-2.0)) == 0xC000
    assert bf16.to_bits(np.float32(np.inf)) == 0x7F80
    assert bf16.from_bits(np.uint16(0x3F80)) == 1.0
    # ties to even: 1 + 2^-8 is halfway between 1.0 and 1 + 2^-7 -> 1.0; 1 + 3*2^-8 -> 1 + 2^-6
    assert bf16.to_bits(np.float32(1 + 2**-8)) == 0x3F80
    assert bf16.to_bits(np.float32(1 + 3 * 2**-8)) == 0x3F82
    nan = bf16.to_bits(np.float32(np.nan))
    assert np.isnan(bf16.from_bits(nan))
    assert bf16.to_bits(np.float32(3.4e38)) == 0x7F80  # rounds up to inf


@given(st.integers(0, 0xFFFF))
def test_bf16_round_trip(bits):
    x = bf16.from_bits(np.uint16(bits))
    back = bf16.to_bits(x)
    if np.isnan(x):
        assert np.isnan(bf16.from_bits(back))
    else:
        assert int(back) == bits
