"""The eight TMA store-reduce operations on raw element bits, with PTX semantics.

Integers wrap around; ``inc``: ``old >= b ? 0 : old + 1``; ``dec``: ``(old == 0 || old > b) ? b : old - 1``
(u32 only). Float ``add`` rounds the exact sum to nearest even (computed in float64, which is exact enough for
one rounding: 53 >= 2p + 2). Matched bit for bit on an H200 (NaN payloads, ±inf, ±0, subnormals, overflow, ties):
NaN results are the canonical NaN (f32 ``0x7FFFFFFF``, f16/bf16 ``0x7FFF``); subnormals are kept (no flush to
zero); float ``min``/``max`` return the non-NaN operand when exactly one is NaN and order ``-0 < +0``.
"""

from __future__ import annotations

import numpy as np

from ..tma.tensormap import DataType as D

REDUCE_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")
INT_VIEW = {D.UINT32: np.uint32, D.INT32: np.int32, D.UINT64: np.uint64, D.INT64: np.int64}
CANONICAL_NAN = {D.FLOAT32: 0x7FFFFFFF, D.FLOAT16: 0x7FFF, D.BFLOAT16: 0x7FFF}


def check_reduce(op: str, dtype) -> str:
    """Normalized op name; raises TmaDescriptorError when PTX does not define ``op`` for ``dtype``."""
    from ..tma.reduce_rules import check_reduce as _check
    from ..tma.reduce_rules import reduce_op_name

    key = reduce_op_name(op)
    _check(key, dtype)
    return key


def reduce_bits(op: str, dtype, old: np.ndarray, src: np.ndarray) -> np.ndarray:
    """New global bits for ``old (op) src``; both arrays hold raw element bits (unsigned storage dtype)."""
    op = check_reduce(op, dtype)
    dtype = D(dtype)
    if op in ("and", "or", "xor"):
        return {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op](old, src)
    if dtype in INT_VIEW:
        t = INT_VIEW[dtype]
        return _int_op(op, old.view(t), src.view(t)).astype(t, copy=False).view(old.dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        if op == "add":
            return _float_add(dtype, old, src)
        return _float_minmax(op, dtype, old, src)


def _int_op(op, a, b):
    if op == "add":
        return a + b
    if op == "min":
        return np.minimum(a, b)
    if op == "max":
        return np.maximum(a, b)
    one, zero = a.dtype.type(1), a.dtype.type(0)
    if op == "inc":
        return np.where(a >= b, zero, a + one)
    return np.where((a == zero) | (a > b), b, a - one)  # dec


def _to_f64(dtype, bits):
    if dtype == D.FLOAT32:
        return bits.view(np.float32).astype(np.float64)
    if dtype == D.FLOAT16:
        return bits.view(np.float16).astype(np.float64)
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def _from_f64(dtype, x):
    if dtype == D.FLOAT32:
        return x.astype(np.float32).view(np.uint32)
    if dtype == D.FLOAT16:
        return x.astype(np.float16).view(np.uint16)
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)  # exact sum -> f32 -> bf16: both roundings innocuous
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def _float_add(dtype, old, src):
    s = _to_f64(dtype, old) + _to_f64(dtype, src)
    out = _from_f64(dtype, s)
    return np.where(np.isnan(s), out.dtype.type(CANONICAL_NAN[dtype]), out)


def _float_minmax(op, dtype, old, src):
    a, b = _to_f64(dtype, old), _to_f64(dtype, src)
    na, nb = np.isnan(a), np.isnan(b)
    pick_b = (b < a) if op == "min" else (b > a)
    tie = (a == b) & (np.signbit(b) if op == "min" else np.signbit(a))  # -0 < +0
    pick_b = (pick_b | tie | na) & ~nb
    out = np.where(pick_b, src, old)
    return np.where(na & nb, out.dtype.type(CANONICAL_NAN[dtype]), out)
