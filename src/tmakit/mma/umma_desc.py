"""UMMA shared-memory descriptors (CuTe's ``UMMA::SmemDescriptor``, ``make_umma_desc``, ``DescriptorIterator``).

A descriptor tells ``tcgen05.mma`` where one operand's K-block sits in shared memory and how it is laid out:
start address, leading/stride byte offsets (all in 16-byte units) and the swizzle (``layout_type``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ..layout import Int, Layout, Swizzle, logical_divide
from ..layout.int_tuple import is_tuple
from .descriptor_iterator import DescriptorIteratorBase
from .errors import MmaError
from .numeric import uint128_t
from .pointers import SmemPtr
from .recast import recast_layout


class Major(enum.IntEnum):
    """``UMMA::Major``: which mode of an operand is contiguous (K-major or M/N-major)."""
    K = 0
    MN = 1


class ScaleIn(enum.IntEnum):
    One = 0
    Neg = 1


class ScaleOut(enum.IntEnum):
    """``UMMA::ScaleOut``: Zero overwrites the accumulator, One accumulates into it."""
    Zero = 0
    One = 1


class Saturate(enum.IntEnum):
    False_ = 0
    True_ = 1


class LayoutType(enum.IntEnum):
    """The descriptor's ``layout_type`` field (bits 61-63)."""
    SWIZZLE_NONE = 0
    SWIZZLE_128B_BASE32B = 1
    SWIZZLE_128B = 2
    SWIZZLE_64B = 4
    SWIZZLE_32B = 6


_ATOM_MN = {LayoutType.SWIZZLE_NONE: 1, LayoutType.SWIZZLE_32B: 2, LayoutType.SWIZZLE_64B: 4,
            LayoutType.SWIZZLE_128B: 8, LayoutType.SWIZZLE_128B_BASE32B: 8}


@dataclass(frozen=True)
class SmemDescriptor:
    """The 64-bit UMMA smem descriptor. Offsets and the start address are in 16-byte units (4 LSBs dropped)."""

    start_address: int = 0          # bits [0,14)
    leading_byte_offset: int = 0    # bits [16,30)
    stride_byte_offset: int = 0     # bits [32,46)
    version: int = 1                # bits [46,48): 1 on Blackwell
    base_offset: int = 0            # bits [49,52)
    lbo_mode: int = 0               # bit 52
    layout_type: LayoutType = LayoutType.SWIZZLE_NONE  # bits [61,64)

    @property
    def desc(self) -> int:
        return (self.start_address & 0x3FFF | (self.leading_byte_offset & 0x3FFF) << 16
                | (self.stride_byte_offset & 0x3FFF) << 32 | (self.version & 3) << 46
                | (self.base_offset & 7) << 49 | (self.lbo_mode & 1) << 52 | (int(self.layout_type) & 7) << 61)

    def __int__(self):
        return self.desc

    @classmethod
    def from_int(cls, d: int) -> SmemDescriptor:
        return cls(d & 0x3FFF, d >> 16 & 0x3FFF, d >> 32 & 0x3FFF, d >> 46 & 3, d >> 49 & 7, d >> 52 & 1,
                   LayoutType(d >> 61 & 7))

    def __add__(self, n) -> SmemDescriptor:
        """CuTe adds to the low 32 bits: the start address moves by ``n`` 16-byte units."""
        lo = ((self.desc & 0xFFFFFFFF) + int(n)) & 0xFFFFFFFF
        return SmemDescriptor.from_int((self.desc & ~0xFFFFFFFF) | lo)

    def __str__(self):
        return (f"UMMA::SmemDescriptor(start={self.start_address << 4:#x}, lbo={self.leading_byte_offset << 4}, "
                f"sbo={self.stride_byte_offset << 4}, {self.layout_type.name})")


class DescriptorIterator(DescriptorIteratorBase):
    """CuTe's ``UMMA::DescriptorIterator`` over SmemDescriptors (``descriptor_iterator``)."""

    __slots__ = ()
    NAMESPACE = "UMMA"


def layout_type(swizzle: Swizzle | None) -> LayoutType:
    """The descriptor swizzle for a byte-address swizzle (``Sw<B,4,3>`` or ``Sw<2,5,2>``)."""
    if swizzle is None or swizzle.bits == 0:
        return LayoutType.SWIZZLE_NONE
    if swizzle.base == 4 and swizzle.shift == 3 and swizzle.bits in (1, 2, 3):
        return (LayoutType.SWIZZLE_32B, LayoutType.SWIZZLE_64B, LayoutType.SWIZZLE_128B)[swizzle.bits - 1]
    if (swizzle.bits, swizzle.base, swizzle.shift) == (2, 5, 2):
        return LayoutType.SWIZZLE_128B_BASE32B
    raise MmaError(f"UMMA descriptors take Sw<0..3,4,3> or Sw<2,5,2> (byte addresses); got {swizzle}. "
                   "Build the smem layout from a UMMA::Layout_*_Atom")


def _stride(layout: Layout, i: int, j: int):
    return layout.stride[i][j]


def make_umma_desc(major: Major, tensor) -> SmemDescriptor:
    """CuTe's ``make_umma_desc<Major>(tensor)`` for a rank-2 (MN, K) smem tensor of one MMA's operand."""
    ptr = tensor.iterator
    if not isinstance(ptr, SmemPtr):
        raise MmaError(f"UMMA descriptors describe shared memory; got a tensor over {ptr}. "
                       "Make it with tk.make_tensor(tk.make_smem_ptr(T, addr), smem_layout)")
    lay = tensor.layout
    if not isinstance(lay, Layout) or not is_tuple(lay.shape) or len(lay.shape) != 2:
        raise MmaError(f"UMMA descriptors need a rank-2 (MN,K) layout; got {lay}")
    u128 = recast_layout(lay, ptr.value_type, uint128_t)
    lt = layout_type(ptr.swizzle)
    atom_mn = _ATOM_MN[lt]
    try:
        if major == Major.MN:
            atom_k = 4 if lt == LayoutType.SWIZZLE_128B_BASE32B else 8
            canon = logical_divide(u128, (Layout(Int(atom_mn)), Layout(Int(atom_k))))
            _check_profile(canon, lay, major)
            s00, s10 = _stride(canon, 0, 0), _stride(canon, 1, 0)
            if (lt != LayoutType.SWIZZLE_NONE and s00 != 1) or s10 != atom_mn:
                raise MmaError(f"not a canonical UMMA MN-major layout for {lt.name}: {lay} (in 16-byte units "
                               f"{canon}); build it with UMMA::tile_to_mma_shape(UMMA::Layout_MN_*_Atom(T), ...)")
            s01, s11 = _stride(canon, 0, 1), _stride(canon, 1, 1)
            none = lt == LayoutType.SWIZZLE_NONE
            sbo, lbo = (s01, s11) if none else (s11, s01)
        else:
            if lt == LayoutType.SWIZZLE_128B_BASE32B:
                raise MmaError("SWIZZLE_128B_BASE32B is MN-major only; use a K-major SW32/SW64/SW128 atom")
            if int(u128.shape[0] if not is_tuple(u128.shape[0]) else _size(u128.shape[0])) % 8:
                raise MmaError(f"a K-major UMMA operand needs an MN size that is a multiple of 8; got {lay}")
            canon = logical_divide(u128, (Layout(Int(8), Int(1)), Layout(Int(2), Int(1))))
            _check_profile(canon, lay, major)
            s00, s10 = _stride(canon, 0, 0), _stride(canon, 1, 0)
            if s00 != atom_mn or (lt != LayoutType.SWIZZLE_NONE and s10 != 1):
                raise MmaError(f"not a canonical UMMA K-major layout for {lt.name}: {lay} (in 16-byte units "
                               f"{canon}); build it with UMMA::tile_to_mma_shape(UMMA::Layout_K_*_Atom(T), ...)")
            sbo, lbo = _stride(canon, 0, 1), s10
    except (IndexError, TypeError):
        raise MmaError(f"not a canonical UMMA {major.name}-major layout: {lay}") from None
    return SmemDescriptor(start_address=(ptr.address >> 4) & 0x3FFF, leading_byte_offset=int(lbo),
                          stride_byte_offset=int(sbo), version=1, base_offset=0, lbo_mode=0, layout_type=lt)


def _size(s):
    from ..layout.int_tuple import product

    return product(s)


def _check_profile(canon: Layout, lay, major):
    ok = is_tuple(canon.shape) and len(canon.shape) == 2 and all(
        is_tuple(m) and len(m) == 2 and not any(is_tuple(x) for x in m) for m in canon.shape)
    if not ok:
        raise MmaError(f"not a canonical UMMA {major.name}-major layout: {lay} divides to {canon}, expected "
                       "((atom,rest),(atom,rest)) modes")
