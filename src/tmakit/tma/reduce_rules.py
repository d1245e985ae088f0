"""Which element types each TMA store-reduce op accepts (``cp.reduce.async.bulk.tensor``, docs/HARDWARE.md §4).

The element type comes from the tensor map. PTX's ``b32``/``b64`` for the bitwise ops: UINT32/INT32/UINT64 maps.
An INT64 map with .and/.or/.xor killed the kernel on the H200 (cudaErrorIllegalInstruction, 2026-11-22, seen by
the bandwidth kernels), so tmakit refuses it: encode 64-bit bitwise reductions as UINT64 (the bits are the same).
``f32`` means FLOAT32 only: FLOAT32_FTZ and TFLOAT32* are load-side conversions
that PTX does not list for reductions, so tmakit refuses them (encode the destination map as FLOAT32 instead).
"""

from __future__ import annotations

from .dtypes import tma_dtype
from .errors import TmaDescriptorError
from .tensormap_enums import DataType as D

REDUCE_DTYPES: dict[str, frozenset[D]] = {
    "add": frozenset({D.UINT32, D.INT32, D.UINT64, D.FLOAT32, D.FLOAT16, D.BFLOAT16}),
    "min": frozenset({D.UINT32, D.INT32, D.UINT64, D.INT64, D.FLOAT16, D.BFLOAT16}),
    "max": frozenset({D.UINT32, D.INT32, D.UINT64, D.INT64, D.FLOAT16, D.BFLOAT16}),
    "inc": frozenset({D.UINT32}),
    "dec": frozenset({D.UINT32}),
    "and": frozenset({D.UINT32, D.INT32, D.UINT64}),
    "or": frozenset({D.UINT32, D.INT32, D.UINT64}),
    "xor": frozenset({D.UINT32, D.INT32, D.UINT64}),
}


def reduce_op_name(op) -> str:
    """``"add"``, ``".add"``, ``"ADD"``, ``"SM90_TMA_REDUCE_ADD"`` or an object with ``.reduce_op`` -> ``"add"``."""
    name = getattr(op, "reduce_op", op)
    key = str(name).strip().lower().lstrip(".").removeprefix("sm90_tma_reduce_")
    if key not in REDUCE_DTYPES:
        raise TmaDescriptorError("reduce.op", "TMA reductions are add, min, max, inc, dec, and, or, xor", op,
                                 "pick one of " + ", ".join(REDUCE_DTYPES), f"op {op!r}")
    return key


def check_reduce(op, dtype) -> None:
    """Raise :class:`TmaDescriptorError` (rule ``"reduce.dtype"``) unless ``op`` is defined for ``dtype``."""
    key = reduce_op_name(op)
    dt = tma_dtype(dtype)
    ok = REDUCE_DTYPES[key]
    if dt not in ok:
        allowed = ", ".join(d.name for d in sorted(ok))
        raise TmaDescriptorError("reduce.dtype", f"TMA reduce .{key} supports only {allowed}", dt,
                                 f"use a {allowed} tensor map for .{key}", f"{dt.name} with .{key}")
