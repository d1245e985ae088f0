"""The 64-bit shared-memory matrix descriptor of Hopper's ``wgmma.mma_async`` (PTX ISA, "Matrix Descriptor Format"
of the asynchronous warpgroup MMA), decoded and checked, and the bytes an operand reads through it.

Bits: start address >> 4 [0,14), leading byte offset (LBO) >> 4 [16,30), stride byte offset (SBO) >> 4 [32,46),
matrix base offset [49,52), swizzle mode [62,64) (0 none, 1 128B, 2 64B, 3 32B). The other bits are not fields on
sm_90; the emulator wants them 0 (bit 46 set is a tcgen05 descriptor's version field: a Blackwell descriptor).

One instruction reads ``rows`` (64 for A, N for B) rows of 32 bytes of K. The canonical layouts are the ones
``umma_desc`` documents for tcgen05 (the same core matrices: 8 rows of 16 bytes, or of the 32/64/128-byte swizzle
span), in bytes from the start address, then swizzled on the absolute shared address as the TMA writes it
(docs/HARDWARE.md §2; ``swizzle.py``):

* K-major, none:     ``(r%8)*16 + (r//8)*SBO + (kb//16)*LBO + kb%16``
* K-major, swizzled: ``(r%8)*W  + (r//8)*SBO + kb``                      (LBO unused)
* MN-major, none:    ``mb%16 + (mb//16)*SBO + (k%8)*16 + (k//8)*LBO``
* MN-major, swizzled:``mb%W + (mb//W)*LBO + (k%8)*W + (k//8)*SBO``

(``r`` row, ``kb`` K byte, ``mb`` MN byte, ``k`` K index, ``W`` the span). A descriptor stepped through K inside the
first 128-byte row of a swizzle pattern (``start + 32*j``, as CuTe and gemm.cu do) reads the right bytes.

The base offset is for swizzled tiles that do not start on a pattern boundary (PTX: it is then ``(start >> 7) & 7``
for 128B); the emulator does not model that case and asks for pattern-aligned tiles with base offset 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import IllegalInstruction
from .umma_desc import operand_offsets
from .wgmma_types import K_BYTES

SWIZZLE_NAMES = {0: "SWIZZLE_NONE", 1: "SWIZZLE_128B", 2: "SWIZZLE_64B", 3: "SWIZZLE_32B"}
SWIZZLE_CODE = {0: 0, 128: 1, 64: 2, 32: 3}  # swizzle span in bytes -> the 2-bit field
SPAN = {1: 128, 2: 64, 3: 32}
PATTERN = {1: 1024, 2: 512, 3: 256}  # bytes after which the swizzle repeats
XOR_MASK = {0: 0, 1: 7, 2: 3, 3: 1}
UMMA_CODE = {0: 0, 1: 2, 2: 4, 3: 6}  # the same canonical layouts under tcgen05's 3-bit code
RESERVED = (0x3 << 14) | (0x3 << 30) | (0x7 << 46) | (0x3FF << 52)


@dataclass(frozen=True)
class WgmmaDescriptor:
    """A decoded descriptor; ``start``, ``lbo``, ``sbo`` in bytes."""

    start: int
    lbo: int
    sbo: int
    base_offset: int
    swizzle: int  # the 2-bit field
    reserved: int  # bits outside every field

    @property
    def swizzle_name(self) -> str:
        return SWIZZLE_NAMES[self.swizzle]

    def __str__(self) -> str:
        return (f"start {self.start:#x}, LBO {self.lbo}, SBO {self.sbo}, base offset {self.base_offset}, "
                f"{self.swizzle_name}")


def decode_wgmma_desc(desc: int) -> WgmmaDescriptor:
    d = int(desc) & (2**64 - 1)
    return WgmmaDescriptor(start=(d & 0x3FFF) << 4, lbo=((d >> 16) & 0x3FFF) << 4, sbo=((d >> 32) & 0x3FFF) << 4,
                           base_offset=(d >> 49) & 7, swizzle=(d >> 62) & 3, reserved=d & RESERVED)


def encode_wgmma_desc(start: int, lbo: int, sbo: int, swizzle: int = 128, base_offset: int = 0) -> int:
    """The descriptor word; ``swizzle`` is the span in bytes (0, 32, 64, 128); byte values must be multiples of 16
    below 256 KiB (the fields hold them >> 4 in 14 bits)."""
    if swizzle not in SWIZZLE_CODE:
        raise IllegalInstruction(f"wgmma descriptor: swizzle {swizzle!r}; the field encodes 0 (none), 32, 64 or 128 "
                                 "bytes")
    for name, v in (("start address", start), ("leading byte offset", lbo), ("stride byte offset", sbo)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v % 16 or not 0 <= v < 2**18:
            raise IllegalInstruction(f"wgmma descriptor: {name} {v!r} must be a multiple of 16 in 0..256 KiB (the "
                                     "field holds it >> 4 in 14 bits): align the tile / offset to 16 bytes")
    if not 0 <= int(base_offset) < 8:
        raise IllegalInstruction(f"wgmma descriptor: base offset {base_offset} must be 0..7 (3 bits)")
    return (int(start) >> 4 | (int(lbo) >> 4) << 16 | (int(sbo) >> 4) << 32 | int(base_offset) << 49
            | SWIZZLE_CODE[swizzle] << 62)


def check_wgmma_desc(d: WgmmaDescriptor, what: str) -> None:
    """The descriptor rules the emulator enforces (IllegalInstruction: rule, value, fix)."""
    if d.reserved:
        hint = " (bit 46 is tcgen05's version field: a Blackwell UMMA descriptor?)" if d.reserved >> 46 & 1 else ""
        raise IllegalInstruction(f"{what}: descriptor bits {d.reserved:#018x} lie outside the sm_90 fields (start "
                                 f"[0,14), LBO [16,30), SBO [32,46), base offset [49,52), swizzle [62,64)){hint}; "
                                 "build it with encode_wgmma_desc / CuTe's make_gmma_desc")
    if d.base_offset and d.swizzle == 0:
        raise IllegalInstruction(f"{what}: base offset {d.base_offset} with SWIZZLE_NONE; the field applies to "
                                 "swizzled layouts only: set it to 0")
    if d.base_offset:
        raise IllegalInstruction(f"{what}: base offset {d.base_offset} is not modelled by the emulator: place the "
                                 f"swizzled tile on a {PATTERN[d.swizzle]}-byte boundary and use base offset 0")
    if d.swizzle and (d.start >> 7) & XOR_MASK[d.swizzle]:
        p = PATTERN[d.swizzle]
        raise IllegalInstruction(f"{what}: start address {d.start:#x} lies {d.start % p} bytes into its {p}-byte "
                                 f"{d.swizzle_name} pattern, past the first 128-byte row (PTX: such a start needs "
                                 f"base offset (start >> 7) & {XOR_MASK[d.swizzle]}, not modelled): start swizzled "
                                 f"tiles on {p}-byte boundaries and step K inside the first row (start + 32*j)")


def operand_addresses(d: WgmmaDescriptor, major: int, rows: int, elem_bytes: int) -> np.ndarray:
    """Absolute shared address of every byte of the ``rows`` x K operand, shape (rows, K, elem_bytes); ``major``
    0 = K-major, 1 = MN-major (transposed)."""
    off = operand_offsets(major, UMMA_CODE[d.swizzle], d.lbo, d.sbo, rows, elem_bytes)
    addr = d.start + off
    return addr ^ (((addr >> 7) & XOR_MASK[d.swizzle]) << 4)


def check_in_smem(addr: np.ndarray, size: int, d: WgmmaDescriptor, what: str) -> None:
    lo, hi = int(addr.min()), int(addr.max())
    if lo < 0 or hi >= size:
        raise IllegalInstruction(f"{what}: the operand ({d}) reaches shared bytes {lo:#x}..{hi:#x}, outside this "
                                 f"CTA's {size}-byte shared memory: check the start address, LBO and SBO (or "
                                 "launch with a larger smem_bytes)")


def read_operand(smem: np.ndarray, desc: int | WgmmaDescriptor, major: int, rows: int, elem_bytes: int,
                 what: str = "wgmma operand") -> np.ndarray:
    """The ``rows`` x K operand one instruction reads through ``desc``, as unsigned ints of ``elem_bytes``."""
    d = desc if isinstance(desc, WgmmaDescriptor) else decode_wgmma_desc(desc)
    check_wgmma_desc(d, what)
    addr = operand_addresses(d, major, rows, elem_bytes)
    check_in_smem(addr, smem.size, d, what)
    return bytes_as_elements(smem[addr], elem_bytes)


def bytes_as_elements(raw: np.ndarray, elem_bytes: int) -> np.ndarray:
    """(rows, K, elem_bytes) uint8 -> (rows, K) unsigned elements (little endian)."""
    dt = {1: np.uint8, 2: np.uint16, 4: np.uint32}[elem_bytes]
    return np.ascontiguousarray(raw).view(dt).reshape(raw.shape[0], K_BYTES // elem_bytes)


def place_operand(image: np.ndarray, desc: int, major: int, elements: np.ndarray) -> None:
    """The inverse of ``read_operand``: write a ``rows`` x K operand (unsigned element bits) into the shared image
    ``image`` (uint8, address 0 = shared address 0) where an instruction with ``desc`` reads it (a test and demo aid;
    a TMA load with the matching swizzle puts tiles there too)."""
    el = np.ascontiguousarray(elements)
    d = decode_wgmma_desc(desc)
    addr = operand_addresses(d, major, el.shape[0], el.dtype.itemsize)
    image[addr.reshape(-1)] = el.view(np.uint8).reshape(-1)
