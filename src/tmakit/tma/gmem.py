"""Global-memory pointers for tensors that describe device (or not yet allocated) memory."""

from __future__ import annotations

from .arg_checks import as_int
from .dtypes import elem_bits, tma_dtype


class GmemPtr:
    """A typed global-memory address (CuTe's ``make_gmem_ptr``); ``+ n`` advances by n elements."""

    __slots__ = ("dtype", "address")

    def __init__(self, dtype, address: int = 0):
        self.dtype = tma_dtype(dtype)
        self.address = as_int(address, "address", 0)

    @property
    def bits(self) -> int:
        return elem_bits(self.dtype)

    def __add__(self, n):
        return GmemPtr(self.dtype, self.address + as_int(n, "pointer offset") * self.bits // 8)

    def __str__(self):
        return f"gmem_ptr[{self.bits}b]({self.address:#x})"

    __repr__ = __str__


def make_gmem_ptr(dtype, address: int = 0) -> GmemPtr:
    return GmemPtr(dtype, address)
