"""The iterator of CuTe's descriptor tensors (``UMMA::DescriptorIterator``, ``GMMA::DescriptorIterator``): an SS
MMA's A/B fragment is a tensor over shared-memory descriptors, and ``it + n`` moves the descriptor's start address
by ``n`` 16-byte units."""

from __future__ import annotations


class DescriptorIteratorBase:
    """``it + n`` advances the start address by ``n`` 16-byte units; ``it.deref(n)`` / ``tensor(coord)`` is the
    descriptor there. Subclasses name CuTe's namespace (``NAMESPACE``), which their print shows."""

    __slots__ = ("desc",)
    NAMESPACE = ""

    def __init__(self, desc):
        self.desc = desc

    def __add__(self, n):
        return type(self)(self.desc + n)

    def deref(self, offset=0):
        return self.desc + offset

    def __eq__(self, o):
        return type(o) is type(self) and o.desc == self.desc

    def __hash__(self):
        return hash(self.desc)

    def __str__(self):
        return f"{self.NAMESPACE}::DescriptorIterator"

    __repr__ = __str__
