"""Element type tags CuTe's SM100 atoms are templated on (``cutlass::half_t`` ...), and ``sizeof_bits``.

Types numpy has (``np.float32``, ``np.int8`` ...) are used as numpy dtypes; the tags below stand for the types
numpy lacks. Each tag knows its width and CuTe's spelling, so host algebra (``K = 256 / bits``) and prints match.
"""

from __future__ import annotations

import numpy as np

from ..layout.element_type import same_type  # noqa: F401 - CuTe's is_same of element types, below mma/
from .errors import MmaError


class NumericType:
    """A CuTe element type numpy has no dtype for: ``name`` as CuTe spells it, ``bits`` its width."""

    __slots__ = ("name", "bits", "cpp")

    def __init__(self, name: str, bits: int, cpp: str):
        self.name, self.bits, self.cpp = name, int(bits), cpp

    def __str__(self):
        return self.name

    def __repr__(self):
        return f"tk.{self.name}"


half_t = NumericType("half_t", 16, "cutlass::half_t")
bfloat16_t = NumericType("bfloat16_t", 16, "cutlass::bfloat16_t")
tfloat32_t = NumericType("tfloat32_t", 32, "cutlass::tfloat32_t")
float_e4m3_t = NumericType("float_e4m3_t", 8, "cutlass::float_e4m3_t")
float_e5m2_t = NumericType("float_e5m2_t", 8, "cutlass::float_e5m2_t")
float_e2m3_t = NumericType("float_e2m3_t", 6, "cutlass::float_e2m3_t")
float_e3m2_t = NumericType("float_e3m2_t", 6, "cutlass::float_e3m2_t")
float_e2m1_t = NumericType("float_e2m1_t", 4, "cutlass::float_e2m1_t")
uint128_t = NumericType("uint128_t", 128, "cute::uint128_t")

NUMERIC_TYPES = (half_t, bfloat16_t, tfloat32_t, float_e4m3_t, float_e5m2_t, float_e2m3_t, float_e3m2_t,
                 float_e2m1_t)

_CPP_NUMPY = {"float32": "float", "float64": "double", "float16": "cutlass::half_t", "int8": "int8_t",
              "uint8": "uint8_t", "int16": "int16_t", "uint16": "uint16_t", "int32": "int32_t",
              "uint32": "uint32_t", "int64": "int64_t", "uint64": "uint64_t"}


def sizeof_bits(t) -> int:
    """CuTe's ``sizeof_bits<T>``: a NumericType tag's width, or a numpy dtype's."""
    if isinstance(t, NumericType):
        return t.bits
    try:
        return np.dtype(t).itemsize * 8
    except TypeError:
        raise MmaError(f"{t!r} is not an element type; use tk.half_t, tk.bfloat16_t, tk.tfloat32_t, "
                          "tk.float_e4m3_t, tk.float_e5m2_t or a numpy dtype such as np.float32") from None


def type_name(t) -> str:
    """The C++ spelling of an element type (``cutlass::half_t``, ``float``)."""
    if isinstance(t, NumericType):
        return t.cpp
    return _CPP_NUMPY[np.dtype(t).name]


