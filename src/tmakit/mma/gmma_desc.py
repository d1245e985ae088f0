"""Hopper GMMA shared-memory descriptors: CuTe's ``GmmaDescriptor``, ``GMMA::make_gmma_desc``, ``GMMA::LayoutType``
and ``GMMA::DescriptorIterator`` (cute/arch/mma_sm90_desc.hpp, cute/atom/mma_traits_sm90_gmma.hpp).

A descriptor tells ``wgmma.mma_async`` where one operand's 64-bit-addressed K-block sits in shared memory: start
address, leading / stride byte offsets (16-byte units) and the swizzle (``layout_type``, bits 62-63).
"""

from __future__ import annotations

import enum

from ..layout import Int, Layout, logical_divide
from ..layout.int_tuple import is_tuple, product
from .descriptor_iterator import DescriptorIteratorBase
from .errors import MmaError
from .numeric import sizeof_bits, uint128_t
from .pointers import SmemPtr
from .recast import recast_layout


class Major(enum.IntEnum):
    """``GMMA::Major``: which mode of an operand is contiguous in shared memory (``tnspA`` / ``tnspB``)."""
    K = 0
    MN = 1


class ScaleOut(enum.IntEnum):
    """``GMMA::ScaleOut``: Zero overwrites the accumulator, One accumulates into it."""
    Zero = 0
    One = 1


class ScaleIn(enum.IntEnum):
    """``GMMA::ScaleIn``: negate (-1) an input operand or not (1)."""
    Neg = -1
    One = 1


class LayoutType(enum.IntEnum):
    """``GMMA::LayoutType``: the descriptor's 2-bit swizzle field."""
    INTERLEAVE = 0
    B128 = 1
    B64 = 2
    B32 = 3


_WIDTH = {LayoutType.INTERLEAVE: 1, LayoutType.B32: 2, LayoutType.B64: 4, LayoutType.B128: 8}


class GmmaDescriptor:
    """CuTe's ``GmmaDescriptor`` union: the 64-bit word ``desc_`` and its bit fields (offsets and the start address
    in 16-byte units, 4 LSBs dropped). ``GmmaDescriptor(word)`` or ``GmmaDescriptor.make(start_address=...)``."""

    __slots__ = ("desc_",)

    def __init__(self, desc: int = 0):
        self.desc_ = int(desc) & 0xFFFFFFFFFFFFFFFF

    @classmethod
    def make(cls, start_address=0, leading_byte_offset=0, stride_byte_offset=0, base_offset=0,
             layout_type=LayoutType.INTERLEAVE) -> GmmaDescriptor:
        return cls(start_address & 0x3FFF | (leading_byte_offset & 0x3FFF) << 16
                   | (stride_byte_offset & 0x3FFF) << 32 | (base_offset & 7) << 49 | (int(layout_type) & 3) << 62)

    start_address = property(lambda self: self.desc_ & 0x3FFF, doc="bits [0,14)")
    leading_byte_offset = property(lambda self: self.desc_ >> 16 & 0x3FFF, doc="bits [16,30)")
    stride_byte_offset = property(lambda self: self.desc_ >> 32 & 0x3FFF, doc="bits [32,46)")
    base_offset = property(lambda self: self.desc_ >> 49 & 7, doc="bits [49,52)")
    layout_type = property(lambda self: LayoutType(self.desc_ >> 62 & 3), doc="bits [62,64)")

    @property
    def desc(self) -> int:
        return self.desc_

    def __int__(self):
        return self.desc_

    def __eq__(self, o):
        return isinstance(o, GmmaDescriptor) and o.desc_ == self.desc_

    def __hash__(self):
        return hash(self.desc_)

    def __add__(self, n) -> GmmaDescriptor:
        """CuTe's iterator adds to the low 32-bit word only: the start address moves by ``n`` 16-byte units."""
        lo = ((self.desc_ & 0xFFFFFFFF) + int(n)) & 0xFFFFFFFF
        return GmmaDescriptor((self.desc_ & ~0xFFFFFFFF) | lo)

    def __str__(self):
        lt = self.layout_type
        return (f"GmmaDescriptor: 0x{self.desc_:016x}\n"
                f"  start_addr :  0x{self.start_address:04x}\n"
                f"  leading_off:  0x{self.leading_byte_offset:04x} ({self.leading_byte_offset})\n"
                f"  stride_off :  0x{self.stride_byte_offset:04x} ({self.stride_byte_offset})\n"
                f"  base_offset:  0x{self.base_offset:01x}\n"
                f"  layout_type:  0x{int(lt):01x} ({lt.name})\n")

    def __repr__(self):
        return f"GmmaDescriptor(0x{self.desc_:016x})"


class DescriptorIterator(DescriptorIteratorBase):
    """CuTe's ``GMMA::DescriptorIterator`` over GmmaDescriptors (``descriptor_iterator``)."""

    __slots__ = ()
    NAMESPACE = "GMMA"


def layout_type(swizzle) -> LayoutType:
    """``GMMA::layout_type``: the descriptor swizzle of a byte-address ``Sw<B,4,3>`` (B in 0..3)."""
    if swizzle is None:
        return LayoutType.INTERLEAVE
    if swizzle.base != 4 or swizzle.shift != 3 or not 0 <= swizzle.bits <= 3:
        raise MmaError(f"Unsupported layout swizzle: GMMA descriptors take Sw<0..3,4,3> (byte addresses); got "
                       f"{swizzle}. Build the smem layout from a GMMA::Layout_*_Atom")
    return (LayoutType.INTERLEAVE, LayoutType.B32, LayoutType.B64, LayoutType.B128)[swizzle.bits]


def _size(x) -> int:
    return int(product(x)) if is_tuple(x) else int(x)


def _canonical(u128: Layout, w: int, k: int, lay, major: Major) -> Layout:
    canon = logical_divide(u128, (Layout(Int(w), Int(1)), Layout(Int(k), Int(1))))
    ok = is_tuple(canon.shape) and len(canon.shape) == 2 and all(
        is_tuple(m) and len(m) == 2 and not any(is_tuple(x) for x in m) for m in canon.shape)
    if not ok:
        raise MmaError(f"Not a canonical GMMA_{major.name} Layout: Expected profile failure: {lay} divides to "
                       f"{canon} (16-byte units), not ((atom,rest),(atom,rest)); build it with "
                       f"tile_to_shape(GMMA::Layout_{major.name}_*_Atom(T), ...)")
    return canon


def make_gmma_desc(major, tensor) -> GmmaDescriptor:
    """CuTe's ``GMMA::make_gmma_desc<Major>(tensor)`` for a rank-2 (MN,K) smem tensor of one GMMA's operand.
    The start address is the tensor's smem address (CuTe's host build reads it as 0; see the oracle tests)."""
    try:
        major = Major(major)
    except ValueError:
        raise MmaError(f"make_gmma_desc: Unrecognized MajorMode {major!r}; use tk.GMMA.Major.K or "
                       "tk.GMMA.Major.MN") from None
    ptr = getattr(tensor, "iterator", None)
    if not isinstance(ptr, SmemPtr):
        raise MmaError(f"GMMA Descriptors can only be constructed on smem; got a tensor over {ptr}. Make it with "
                       "tk.make_tensor(tk.make_smem_ptr(T, addr), smem_layout)")
    lay = tensor.layout
    if not isinstance(lay, Layout) and hasattr(lay, "layout_b"):
        raise MmaError(f"GMMA Descriptors read the swizzle from the smem pointer; got the composed layout {lay}. "
                       "Build the layout from a GMMA::Layout_*_Atom (its smem_ptr_flag folds the swizzle into the "
                       "pointer) or pass tk.make_smem_ptr(T, addr, swizzle)")
    if not isinstance(lay, Layout) or not is_tuple(lay.shape) or len(lay.shape) != 2:
        raise MmaError(f"GMMA Descriptors can only be constructed on rank-2 tensors; got {lay}. Pass one MMA's "
                       "(MN,K) operand, e.g. tensor<0> of an MMA partition")
    bits = sizeof_bits(ptr.value_type)
    lt = layout_type(ptr.swizzle)
    w = _WIDTH[lt]
    u128 = recast_layout(lay, ptr.value_type, uint128_t)
    if major == Major.MN:
        k = _size(u128.shape[1])  # CuTe reads size<1> of the uint128_t recast
        if k not in {256 // bits, 128 // bits, 512 // bits}:
            raise MmaError(f"Not a canonical GMMA_MN Layout: Expected K-size 256/sizeof_bits<T> for dense or "
                           f"(128|512)/sizeof_bits<T> for sparse ({256 // bits} for {bits}-bit T); got {lay}, whose "
                           f"16-byte recast {u128} has K-size {k}. An MN-major operand is contiguous along mode 0")
        canon = _canonical(u128, w, 8, lay, major)
        s00, s10 = int(canon.stride[0][0]), int(canon.stride[1][0])
        if (lt != LayoutType.INTERLEAVE and s00 != 1) or s10 != w:
            want = f"stride<1,0> {w}" if lt == LayoutType.INTERLEAVE else f"stride<0,0> 1 and stride<1,0> {w}"
            raise MmaError(f"Not a canonical GMMA_MN Layout: Expected stride failure for {lt.name}: {lay} is {canon} "
                           f"in 16-byte units (expected {want}); build it with "
                           "tile_to_shape(GMMA::Layout_MN_*_Atom(T), ...)")
        s01, s11 = int(canon.stride[0][1]), int(canon.stride[1][1])
        sbo, lbo = (s01, s11) if lt == LayoutType.INTERLEAVE else (s11, s01)
    else:
        if _size(u128.shape[0]) % 8:
            raise MmaError(f"Not a canonical GMMA_K Layout: Expected MN-size multiple of 8; got {lay}")
        if _size(u128.shape[1]) not in (2, 4):
            raise MmaError(f"Not a canonical GMMA_K Layout: Expected K-size 2 for dense or 4 for sparse (in units "
                           f"of uint128_t); got {lay}, K = {_size(u128.shape[1])} x 16 bytes")
        canon = _canonical(u128, 8, 2, lay, major)
        s00, s10 = int(canon.stride[0][0]), int(canon.stride[1][0])
        if s00 != w or (lt != LayoutType.INTERLEAVE and s10 != 1):
            want = f"stride<0,0> {w}" if lt == LayoutType.INTERLEAVE else f"stride<0,0> {w} and stride<1,0> 1"
            raise MmaError(f"Not a canonical GMMA_K Layout: Expected stride failure for {lt.name}: {lay} is {canon} "
                           f"in 16-byte units (expected {want}); build it with "
                           "tile_to_shape(GMMA::Layout_K_*_Atom(T), ...)")
        sbo, lbo = int(canon.stride[0][1]), s10
    return GmmaDescriptor.make(start_address=(ptr.address >> 4) & 0x3FFF, leading_byte_offset=lbo & 0x3FFF,
                          stride_byte_offset=sbo & 0x3FFF, base_offset=0, layout_type=lt)
