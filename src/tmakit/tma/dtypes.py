"""Element types: numpy dtypes, torch dtypes and names -> ``DataType``, and ``DataType`` -> numpy storage dtype.

TMA moves bytes; it cares only about the element size, except for OOB NaN fill, reductions and the tf32/ftz
conversions. Types TMA has no enum for travel as same-size unsigned integers: int8/uint8/bool/fp8 (e4m3, e5m2,
fnuz, e8m0) and packed fp4 pairs as ``UINT8``; int16 as ``UINT16``. torch is never imported here: torch dtypes are
recognised by their type (``torch.dtype``) and name.
"""

from __future__ import annotations

import numpy as np

from .errors import TmaDescriptorError
from .tensormap_enums import DTYPE_BITS, DataType

_NAMES: dict[str, DataType] = {}


def _alias(dt: DataType, *names: str):
    for n in names:
        _NAMES[n] = dt


_alias(DataType.UINT8, "u8", "uint8", "b8", "s8", "i8", "int8", "bool", "byte", "char",
       "fp8", "f8", "e4m3", "e5m2", "fp8_e4m3", "fp8_e5m2", "f8e4m3", "f8e5m2", "float8_e4m3fn", "float8_e5m2",
       "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3", "float8_e8m0fnu", "e8m0", "ue8m0",
       "float4_e2m1fn_x2", "fp4x2", "e2m1x2", "quint8", "qint8", "quint4x2")
_alias(DataType.UINT16, "u16", "uint16", "b16", "s16", "i16", "int16", "short", "ushort")
_alias(DataType.UINT32, "u32", "uint32", "b32", "uint")
_alias(DataType.INT32, "s32", "i32", "int32", "int", "qint32")
_alias(DataType.UINT64, "u64", "uint64", "b64")
_alias(DataType.INT64, "s64", "i64", "int64", "long")
_alias(DataType.FLOAT16, "f16", "fp16", "half", "float16")
_alias(DataType.FLOAT32, "f32", "fp32", "float", "float32", "single")
_alias(DataType.FLOAT64, "f64", "fp64", "double", "float64")
_alias(DataType.BFLOAT16, "bf16", "bfloat16")
_alias(DataType.FLOAT32_FTZ, "f32_ftz", "f32.ftz", "fp32_ftz", "float32_ftz")
_alias(DataType.TFLOAT32, "tf32", "tfloat32")
_alias(DataType.TFLOAT32_FTZ, "tf32_ftz", "tf32.ftz", "tfloat32_ftz")
_alias(DataType.U4_ALIGN8B, "16u4_align8b", "u4_align8b", "u4")
# CuTe's element types (to_CUtensorMapDataType): 1-byte types travel as UINT8, as in CuTe
_alias(DataType.UINT8, "int8_t", "uint8_t", "float_e4m3_t", "float_e5m2_t", "float_ue8m0_t")
_alias(DataType.UINT16, "uint16_t")
_alias(DataType.UINT32, "uint32_t")
_alias(DataType.INT32, "int32_t")
_alias(DataType.UINT64, "uint64_t")
_alias(DataType.INT64, "int64_t")
_alias(DataType.FLOAT16, "half_t")
_alias(DataType.BFLOAT16, "bfloat16_t")
_alias(DataType.TFLOAT32, "tfloat32_t")
_alias(DataType.U4_ALIGN16B, "16u4_align16b", "u4_align16b")
_alias(DataType.U6_ALIGN16B, "16u6_align16b", "u6_align16b", "u6")

# numpy storage used by the emulator. BFLOAT16 is stored as its raw bits (np.uint16; see tmakit.tma.bf16),
# FLOAT32_FTZ/TFLOAT32* as float32 (the conversions happen on the way in), packed types as raw bytes (np.uint8).
_NUMPY = {
    DataType.UINT8: np.uint8, DataType.UINT16: np.uint16, DataType.UINT32: np.uint32, DataType.INT32: np.int32,
    DataType.UINT64: np.uint64, DataType.INT64: np.int64, DataType.FLOAT16: np.float16, DataType.FLOAT32: np.float32,
    DataType.FLOAT64: np.float64, DataType.BFLOAT16: np.uint16, DataType.FLOAT32_FTZ: np.float32,
    DataType.TFLOAT32: np.float32, DataType.TFLOAT32_FTZ: np.float32, DataType.U4_ALIGN8B: np.uint8,
    DataType.U4_ALIGN16B: np.uint8, DataType.U6_ALIGN16B: np.uint8,
}


def _is_torch_dtype(x) -> bool:
    t = type(x)
    return t.__module__ == "torch" and t.__name__ == "dtype"


def _fail(x, why: str = "") -> TmaDescriptorError:
    return TmaDescriptorError(
        "tensorDataType.known", "the element type must map to a TMA data type", x,
        "use a 1/2/4/8-byte integer, float16/bfloat16/float32/float64, fp8 (as UINT8), or pass dtype=DataType.X"
        + (f" ({why})" if why else ""), f"dtype {x!r}")


def tma_dtype(x) -> DataType:
    """``DataType`` for a numpy dtype (or scalar type / array), a torch dtype (or tensor), a ``DataType`` or int,
    a CuTe numeric type (``tk.half_t``, ``tk.float_e4m3_t``: as CuTe's ``to_CUtensorMapDataType``) or a name such
    as ``"bf16"``, ``"fp32"``, ``"float16"``, ``"e4m3"``, ``"torch.bfloat16"``, ``"BFLOAT16"``."""
    if isinstance(x, DataType):
        return x
    if x is None or isinstance(x, (bool, bytes, bytearray, float)):  # np.dtype(None) would be float64
        raise _fail(x, "None, bools, bytes and floats name no element type")
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        try:
            return DataType(int(x))
        except ValueError:
            raise _fail(x) from None
    if _is_torch_dtype(x):
        return _from_name(str(x).removeprefix("torch."), x)
    if isinstance(x, str):
        return _from_name(x, x)
    if hasattr(x, "cpp") and isinstance(getattr(x, "name", None), str):  # tk.half_t & co (CuTe's numeric types)
        return _from_name(x.name, x)
    dt = getattr(x, "dtype", None)  # arrays and tensors
    if dt is not None and not isinstance(x, type):
        return tma_dtype(dt)
    if not isinstance(x, (np.dtype, type)):  # np.dtype would also read tuples, lists and dicts as record specs
        raise _fail(x)
    try:
        npdt = np.dtype(x)
    except TypeError:
        raise _fail(x) from None
    if npdt.kind in "biuf" and npdt.itemsize in (1, 2, 4, 8) and npdt.kind != "f":
        return _INT_BY_SIZE[(npdt.kind == "i" and npdt.itemsize >= 4, npdt.itemsize)]
    return _from_name(npdt.name, x)  # float16/32/64 and ml_dtypes' bfloat16 / float8_*


_INT_BY_SIZE = {
    (False, 1): DataType.UINT8, (False, 2): DataType.UINT16, (False, 4): DataType.UINT32,
    (False, 8): DataType.UINT64, (True, 4): DataType.INT32, (True, 8): DataType.INT64,
}


def _from_name(name: str, original) -> DataType:
    key = name.strip().lower()
    if key.startswith("torch."):
        key = key.removeprefix("torch.")
    if key in _NAMES:
        return _NAMES[key]
    if name.strip().upper() in DataType.__members__:
        return DataType[name.strip().upper()]
    if key.startswith("cu_tensor_map_data_type_"):
        rest = key.removeprefix("cu_tensor_map_data_type_")
        if rest in _NAMES:
            return _NAMES[rest]
        if rest.upper() in DataType.__members__:
            return DataType[rest.upper()]
    raise _fail(original, "complex and string types have no TMA equivalent" if "complex" in key else "")


def numpy_dtype(dt) -> np.dtype:
    """numpy storage dtype for a TMA data type (BFLOAT16 -> uint16 bits, packed -> uint8 bytes)."""
    return np.dtype(_NUMPY[tma_dtype(dt)])


def elem_bits(dt) -> int:
    """Bits per element of a TMA data type (4/6 for packed types)."""
    return DTYPE_BITS[tma_dtype(dt)]


def itemsize_of(x) -> int:
    """Bytes per element of a numpy / torch dtype, or of a ``DataType`` (packed types: 1)."""
    if _is_torch_dtype(x):
        return int(getattr(x, "itemsize", 0)) or max(1, elem_bits(x) // 8)
    if isinstance(x, (DataType, str, int)):
        return max(1, elem_bits(x) // 8)
    return np.dtype(x).itemsize
