"""UMMA descriptors (``tcgen05.mma`` operands): the 64-bit shared-memory matrix descriptor and the 32-bit
instruction descriptor, decoded, plus where each operand element lives in shared memory.

Shared-memory descriptor bits (CuTe ``UMMA::SmemDescriptor``): start address >> 4 [0,14), leading byte offset >> 4
[16,30), stride byte offset >> 4 [32,46), version [46,48) (1 on Blackwell), base offset [49,52), LBO mode [52],
layout type [61,64) (0 none/interleave, 1 128B_BASE32B, 2 128B, 4 64B, 6 32B).

Canonical layouts, in bytes, of one instruction's operand (``mn`` rows of ``K`` elements, 32 bytes of K for kinds
f16 and tf32); ``W`` is the swizzle span (32/64/128) and the swizzle XORs address bits [4,7) with bits [7,10) of the
absolute shared address (the TMA formula), so a descriptor advanced inside a swizzle atom reads the right bytes:

* K-major, none:     ``start + (r%8)*16 + (r//8)*SBO + (kb//16)*LBO + kb%16``
* K-major, swizzled: ``start + (r%8)*W  + (r//8)*SBO + kb``                      (LBO unused)
* MN-major, none:    ``start + mb%16 + (mb//16)*SBO + (k%8)*16 + (k//8)*LBO``
* MN-major, swizzled:``start + mb%W + (mb//W)*LBO + (k%8)*W + (k//8)*SBO``

with ``r`` the row (M or N index), ``kb`` the K byte, ``mb = r * elem_bytes`` the MN byte and ``k`` the K index.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .errors import IllegalInstruction

LAYOUT_NAMES = {0: "SWIZZLE_NONE", 1: "SWIZZLE_128B_BASE32B", 2: "SWIZZLE_128B", 4: "SWIZZLE_64B", 6: "SWIZZLE_32B"}
SPAN = {0: 16, 2: 128, 4: 64, 6: 32}
XOR_MASK = {0: 0, 2: 7, 4: 3, 6: 1}
K_BYTES = 32  # bytes of K one dense kind::f16 / kind::tf32 instruction reads per row

A_FORMATS = {"f16": {0: "f16", 1: "bf16"}, "tf32": {2: "tf32"}}
ELEM_BYTES = {"f16": 2, "bf16": 2, "tf32": 4}


@dataclass(frozen=True)
class SmemDescriptor:
    start: int  # bytes
    lbo: int  # bytes
    sbo: int  # bytes
    version: int
    base_offset: int
    lbo_mode: int
    layout_type: int

    @property
    def layout_name(self) -> str:
        return LAYOUT_NAMES.get(self.layout_type, f"invalid({self.layout_type})")


def decode_smem_desc(desc: int) -> SmemDescriptor:
    d = int(desc) & (2**64 - 1)
    return SmemDescriptor(start=(d & 0x3FFF) << 4, lbo=((d >> 16) & 0x3FFF) << 4, sbo=((d >> 32) & 0x3FFF) << 4,
                          version=(d >> 46) & 3, base_offset=(d >> 49) & 7, lbo_mode=(d >> 52) & 1,
                          layout_type=(d >> 61) & 7)


def encode_smem_desc(start: int, lbo: int, sbo: int, layout_type: int) -> int:
    """A Blackwell (version 1) descriptor; byte values must be multiples of 16 (as CuTe's ``make_umma_desc``)."""
    for name, v in (("start", start), ("lbo", lbo), ("sbo", sbo)):
        if v % 16 or not 0 <= v >> 4 < 2**14:
            raise IllegalInstruction(f"UMMA descriptor {name} {v} must be a multiple of 16 below 256 KiB")
    return ((start >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | 1 << 46 | (int(layout_type) & 7) << 61)


def check_smem_desc(d: SmemDescriptor, what: str) -> None:
    if d.version != 1:
        raise IllegalInstruction(f"{what}: descriptor version {d.version}; tcgen05.mma needs version 1 (bits 46-47; "
                                 "a Hopper GMMA descriptor has 0): build it with make_umma_desc, not make_gmma_desc")
    if d.layout_type not in SPAN:
        raise IllegalInstruction(f"{what}: layout type {d.layout_name} is not modelled by the emulator (none, 32B, "
                                 "64B, 128B are)")
    if d.base_offset or d.lbo_mode:
        raise IllegalInstruction(f"{what}: base offset {d.base_offset} / LBO mode {d.lbo_mode} are not modelled: "
                                 "keep swizzled operands aligned to their pattern (1024 B for 128B) as CuTe does")


@dataclass(frozen=True)
class InstrDescriptor:
    c_format: int
    a_format: int
    b_format: int
    a_negate: int
    b_negate: int
    a_major: int  # 0 K, 1 MN
    b_major: int
    n: int
    m: int
    sparse: int
    max_shift: int


def decode_instr_desc(idesc: int) -> InstrDescriptor:
    """The 32-bit instruction descriptor (pass the upper half of CuTe's 64-bit ``idescE``)."""
    d = int(idesc) & 0xFFFFFFFF
    return InstrDescriptor(c_format=(d >> 4) & 3, a_format=(d >> 7) & 7, b_format=(d >> 10) & 7,
                           a_negate=(d >> 13) & 1, b_negate=(d >> 14) & 1, a_major=(d >> 15) & 1,
                           b_major=(d >> 16) & 1, n=((d >> 17) & 0x3F) << 3, m=((d >> 24) & 0x1F) << 4,
                           sparse=(d >> 2) & 1, max_shift=(d >> 30) & 3)


def encode_instr_desc(kind: str, a_type: str, b_type: str, m: int, n: int, a_major: int = 0, b_major: int = 0,
                      a_negate: int = 0, b_negate: int = 0) -> int:
    """CuTe's ``make_instr_desc`` for f32 accumulation (``a_type``/``b_type``: "f16", "bf16", "tf32")."""
    fmt = {v: k for k, v in A_FORMATS[kind].items()}
    return (1 << 4 | fmt[a_type] << 7 | fmt[b_type] << 10 | a_negate << 13 | b_negate << 14 | a_major << 15
            | b_major << 16 | (n >> 3) << 17 | (m >> 4) << 24)


def check_shape(m: int, n: int, cta_group: int, ts: bool, what: str) -> None:
    """The M x N shapes of dense kind::f16 / kind::tf32 (CuTe's static asserts on the SM100 MMA atoms)."""
    if cta_group == 1:
        ok = (m == 64 and n % 8 == 0 and 8 <= n <= 256) or (m == 128 and n % 16 == 0 and 16 <= n <= 256)
        rule = "M 64 with N a multiple of 8 in 8..256, or M 128 with N a multiple of 16 in 16..256"
    else:
        step = 32 if ts else 16
        ok = m in (128, 256) and n % step == 0 and step <= n <= 256
        rule = f"M 128 or 256 with N a multiple of {step} in {step}..256"
    if not ok:
        raise IllegalInstruction(f"{what}: M={m}, N={n} is not a cta_group::{cta_group} shape ({rule})")


@lru_cache(maxsize=512)
def operand_offsets(major: int, layout_type: int, lbo: int, sbo: int, rows: int, elem_bytes: int) -> np.ndarray:
    """Byte offsets from the start address (before the swizzle) of each byte of a ``rows`` x K operand,
    shape (rows, K, elem_bytes)."""
    kel = K_BYTES // elem_bytes
    r = np.arange(rows, dtype=np.int64)[:, None, None]
    k = np.arange(kel, dtype=np.int64)[None, :, None]
    b = np.arange(elem_bytes, dtype=np.int64)[None, None, :]
    w = SPAN[layout_type]
    if major == 0:
        kb = k * elem_bytes + b
        if layout_type == 0:
            return (r % 8) * 16 + (r // 8) * sbo + (kb // 16) * lbo + kb % 16
        return (r % 8) * w + (r // 8) * sbo + kb
    mb = r * elem_bytes + b
    if layout_type == 0:
        return mb % 16 + (mb // 16) * sbo + (k % 8) * 16 + (k // 8) * lbo
    return mb % w + (mb // w) * lbo + (k % 8) * w + (k // 8) * sbo


def operand_bits(smem: np.ndarray, desc: SmemDescriptor, major: int, rows: int, elem_bytes: int,
                 what: str) -> np.ndarray:
    """The ``rows`` x K operand an instruction reads through ``desc``, as unsigned integers of ``elem_bytes``."""
    addr = desc.start + operand_offsets(major, desc.layout_type, desc.lbo, desc.sbo, rows, elem_bytes)
    addr = addr ^ (((addr >> 7) & XOR_MASK[desc.layout_type]) << 4)
    if addr.min() < 0 or addr.max() >= smem.size:
        raise IllegalInstruction(f"{what}: the operand reaches shared bytes {int(addr.min()):#x}..{int(addr.max()):#x}"
                                 f", outside the {smem.size}-byte shared memory (check start, LBO and SBO)")
    raw = np.ascontiguousarray(smem[addr])
    return raw.view({2: np.uint16, 4: np.uint32}[elem_bytes]).reshape(rows, K_BYTES // elem_bytes)
