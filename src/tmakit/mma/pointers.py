"""Shared-memory and tensor-memory pointers of the host algebra (CuTe's smem_ptr, smem_ptr_flag, tmem_ptr).

Only addresses live here (no data): the emulator gives them storage. TMEM addresses are CuTe's 32-bit
``lane << 16 | column`` words (lane = data path 0..127, column 0..511).
"""

from __future__ import annotations

from ..layout import Int, Swizzle
from .errors import MmaError
from .numeric import sizeof_bits


def _bits_str(t) -> str:
    return f"{sizeof_bits(t)}b"


class SmemPtrFlag(Int):
    """CuTe's ``smem_ptr_flag_bits<B>``: the ``_0`` offset of a layout atom that still waits for its smem pointer.

    It is the integer 0 (so the algebra treats it as an offset) and prints ``smem_ptr[16b](unset)``.
    """

    def __new__(cls, bits: int):
        self = super().__new__(cls, 0)
        self.bits = int(bits)
        return self

    def __str__(self):
        return f"smem_ptr[{self.bits}b](unset)"

    def __repr__(self):
        return f"SmemPtrFlag({self.bits})"


def _addr_str(address: int) -> str:
    return f"{address:#x}" if address else "(nil)"  # printf("%p") as glibc prints it


class SmemPtr:
    """``T*`` in shared memory (``address`` in bytes), optionally swizzled: CuTe's ``smem_ptr`` / ``swizzle_ptr``.

    The swizzle acts on byte addresses (``Sw<3,4,3>`` is the 128-byte swizzle for every element width). ``bit``
    not None makes it CuTe's ``subbyte_iterator`` (what ``recast`` to a type narrower than a byte gives): a byte
    address and the bit where the element starts within that byte, ``p + n`` moving ``n * bits`` bits, printed
    ``smem_subptr[4b](0x400.4)``; ``make_smem_ptr(T, address)`` is ``(T*)address``, a plain pointer whatever T.
    """

    __slots__ = ("value_type", "address", "swizzle", "bit")

    def __init__(self, value_type, address: int = 0, swizzle: Swizzle | None = None, bit: int | None = None):
        self.value_type, self.address, self.swizzle = value_type, int(address), swizzle
        self.bit = None if bit is None else int(bit)

    @property
    def bits(self) -> int:
        return sizeof_bits(self.value_type)

    @property
    def alignment_bits(self) -> int:
        """The pointer's static alignment in bits, as the layout layer reads it (ArrayPtr's too): a swizzled pointer's
        is ``8 * 2^M`` (pointer_swizzle.hpp), a plain one's unknown (0)."""
        return 8 << self.swizzle.base if self.swizzle is not None else 0

    def __add__(self, n):
        if self.bit is None:  # a T*: steps of sizeof(T), one byte for CUTLASS's sub-byte types
            return SmemPtr(self.value_type, self.address + int(n) * max(self.bits // 8, 1), self.swizzle)
        at = self.address * 8 + self.bit + int(n) * self.bits
        return SmemPtr(self.value_type, at // 8, self.swizzle, at % 8)

    def __str__(self):
        # make_swizzle_ptr decays a Swizzle<0,M,S> pointer to the plain one, so CuTe prints no swizzle for it
        sw = f"{self.swizzle}_" if self.swizzle is not None and getattr(self.swizzle, "bits", 1) else ""
        if self.bit is not None:
            return f"{sw}smem_subptr[{self.bits}b]({_addr_str(self.address)}.{self.bit})"
        return f"{sw}smem_ptr[{self.bits}b]({_addr_str(self.address)})"

    __repr__ = __str__

    def __eq__(self, o):
        return isinstance(o, SmemPtr) and (self.bits, self.address, self.bit, str(self.swizzle)) == (
            o.bits, o.address, o.bit, str(o.swizzle))

    def __hash__(self):
        return hash((self.bits, self.address, self.bit))

    def make_tensor_with(self, layout):
        """``make_tensor(ptr, Sw o smem_ptr_flag o L)`` moves the swizzle into the pointer (pointer_flagged.hpp)."""
        from ..layout import ComposedLayout, Tensor

        if isinstance(layout, ComposedLayout) and isinstance(layout.offset, SmemPtrFlag):
            if layout.offset.bits != self.bits:
                raise MmaError(f"the layout atom is for {layout.offset.bits}-bit elements but the pointer holds "
                               f"{self.bits}-bit ones; build the atom for the pointer's element type")
            return Tensor(SmemPtr(self.value_type, self.address, layout.layout_a, self.bit), layout.layout_b)
        return None


def make_smem_ptr(value_type, address: int = 0, swizzle: Swizzle | None = None) -> SmemPtr:
    """CuTe's ``make_smem_ptr((T*)address)``: the template argument first, as everywhere in tmakit."""
    return SmemPtr(value_type, address, swizzle)


def _rotr32(x: int, s: int) -> int:
    x &= 0xFFFFFFFF
    return ((x >> s) | (x << (32 - s))) & 0xFFFFFFFF if s else x


class TmemPtr:
    """CuTe's ``tmem_ptr<T>``: a 32-bit TMEM address ``lane << 16 | column`` (columns are 32-bit words).

    ``p + i`` advances ``i`` elements: for sub-word types the element offset is rotated right by
    ``offset_shift`` (the sub-word index parks in the top byte, as CuTe does), else it adds columns.
    """

    __slots__ = ("value_type", "address")

    def __init__(self, value_type, address: int = 0):
        self.value_type, self.address = value_type, int(address) & 0xFFFFFFFF

    @property
    def bits(self) -> int:
        return sizeof_bits(self.value_type)

    @property
    def offset_shift(self) -> int:
        """``log2(32 / bits)`` for types narrower than a column, else 0 (CuTe's ``OffsetShift``)."""
        return max(0, (32 // self.bits).bit_length() - 1) if self.bits < 32 else 0

    @property
    def lane(self) -> int:
        return (self.address >> 16) & 0xFF

    @property
    def column(self) -> int:
        return self.address & 0xFFFF

    def __add__(self, n):
        return TmemPtr(self.value_type, self.address + _rotr32(int(n), self.offset_shift))

    def __int__(self):
        return self.address

    __index__ = __int__

    def __str__(self):
        return f"tmem_[{self.bits}b](0x{self.address >> 16:04x}.{self.address & 0xFFFF:04x})"

    __repr__ = __str__

    def __eq__(self, o):
        return isinstance(o, TmemPtr) and self.bits == o.bits and self.address == o.address

    def __hash__(self):
        return hash(("tmem", self.address))

    def with_address(self, address: int) -> TmemPtr:
        """CuTe's ``tCtAcc.data() = tmem_base_ptr``: the same pointer type at an allocated address."""
        return TmemPtr(self.value_type, address)


def make_tmem_ptr(value_type, address: int = 0) -> TmemPtr:
    """CuTe's ``make_tmem_ptr<T>(addr)``."""
    return TmemPtr(value_type, address)


def tmem_dp(value_type) -> Int:
    """CuTe's ``TMEM::DP<T>``: the lane stride in T-addressing, ``(1 << 16) << OffsetShift``."""
    return Int((1 << 16) << TmemPtr(value_type).offset_shift)


__all__ = ["SmemPtrFlag", "SmemPtr", "TmemPtr", "make_smem_ptr", "make_tmem_ptr", "tmem_dp"]
