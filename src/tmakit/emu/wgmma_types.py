"""Element types and shapes of Hopper's ``wgmma.mma_async`` (PTX ISA, "Asynchronous Warpgroup Level Matrix
Multiply-Accumulate": ``.atype``/``.btype``/``.dtype`` and the ``m64nNkK`` shapes of the dense forms).

Every dense form reads 32 bytes of K per operand row: k16 for f16/bf16, k8 for tf32, k32 for e4m3/e5m2. N is a
multiple of 8 from 8 to 256. Conversions to fp32 are exact (tf32 keeps its top 19 bits: see ``wgmma``'s numerics).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .errors import IllegalInstruction

K_BYTES = 32  # bytes of K one dense wgmma reads per row of A and of B


@dataclass(frozen=True)
class WgmmaType:
    name: str
    bits: int

    @property
    def elem_bytes(self) -> int:
        return self.bits // 8

    @property
    def k(self) -> int:
        """K of one instruction (``m64nNk{k}``)."""
        return K_BYTES // self.elem_bytes

    @property
    def storage(self) -> np.dtype:
        return np.dtype({1: np.uint8, 2: np.uint16, 4: np.uint32}[self.elem_bytes])


TYPES = {n: WgmmaType(n, b) for n, b in (("f16", 16), ("bf16", 16), ("tf32", 32), ("e4m3", 8), ("e5m2", 8))}
FP8 = ("e4m3", "e5m2")


@lru_cache(maxsize=2)
def fp8_table(name: str) -> np.ndarray:
    """fp32 value of each of the 256 bit patterns: e4m3 (bias 7, no infinity, S.1111.111 is NaN) or e5m2 (bias 15,
    IEEE-style infinities and NaNs)."""
    ebits, bias = (4, 7) if name == "e4m3" else (5, 15)
    mbits = 7 - ebits
    out = np.empty(256, np.float32)
    for v in range(256):
        s, e, m = v >> 7, (v >> mbits) & ((1 << ebits) - 1), v & ((1 << mbits) - 1)
        if name == "e4m3" and e == 15 and m == 7:
            x = np.nan
        elif name == "e5m2" and e == 31:
            x = np.inf if m == 0 else np.nan
        elif e == 0:
            x = m * 2.0 ** (1 - bias - mbits)
        else:
            x = (1 + m / (1 << mbits)) * 2.0 ** (e - bias)
        out[v] = -x if s else x
    return out


def to_float(bits: np.ndarray, name: str) -> np.ndarray:
    """Operand bits as fp32: f16, bf16, e4m3, e5m2 exactly; tf32 with the low 13 mantissa bits dropped."""
    if name == "f16":
        return bits.astype(np.uint16).view(np.float16).astype(np.float32)
    if name == "bf16":
        return (bits.astype(np.uint32) << 16).view(np.float32)
    if name == "tf32":
        return (bits.astype(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    return fp8_table(name)[bits.astype(np.uint8)]


def check_types(dtype: str, atype: str, btype: str, what: str) -> tuple[WgmmaType, WgmmaType]:
    """The type combinations of dense ``wgmma.mma_async``: f16 x f16 -> f32/f16, bf16 x bf16 -> f32,
    tf32 x tf32 -> f32, any of e4m3/e5m2 x e4m3/e5m2 -> f32/f16."""
    for t in (atype, btype):
        if t not in TYPES:
            raise IllegalInstruction(f"{what}: type .{t} is not a dense floating wgmma type ({', '.join(TYPES)})")
    fp8 = atype in FP8 and btype in FP8
    if atype != btype and not fp8:
        raise IllegalInstruction(f"{what}: .atype .{atype} and .btype .{btype} must be equal (only e4m3/e5m2 mix)")
    allowed = ("f32", "f16") if atype == "f16" or fp8 else ("f32",)
    if dtype not in allowed:
        raise IllegalInstruction(f"{what}: accumulator .{dtype} with .{atype} inputs; PTX allows "
                                 f"{' or '.join('.' + d for d in allowed)}")
    return TYPES[atype], TYPES[btype]


def check_n(n: int, what: str) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n % 8 or not 8 <= n <= 256:
        raise IllegalInstruction(f"{what}: N={n!r}; dense wgmma shapes have N a multiple of 8 in 8..256")
    return int(n)


def shape_name(n: int, atype: str) -> str:
    return f"m64n{n}k{TYPES[atype].k}"
