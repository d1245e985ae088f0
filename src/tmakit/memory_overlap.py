"""Do two strided tensors share memory, and does one write an address twice? (The ops' aliasing checks.)

TMA moves tiles in no fixed order, so a copy or reduction whose source and destination overlap gives a result that
depends on scheduling. These checks run on addresses, shapes and byte strides only; nothing is read. The exact
question -- is there a pair of elements whose bytes intersect -- is a bounded linear Diophantine problem, which
``numpy.shares_memory`` solves (with a work limit); a cheap extent test answers the common disjoint case first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Region", "byte_extent", "relation", "self_overlap", "MAX_WORK"]

#: Work limit handed to ``numpy.shares_memory``; past it the answer is "unknown".
MAX_WORK = 1 << 16
#: Largest element count whose self-overlap is decided by listing every address.
MAX_LISTED = 1 << 20


@dataclass(frozen=True)
class Region:
    """The bytes a strided tensor covers: base address, shape, byte strides, element size."""

    ptr: int
    shape: tuple
    strides: tuple  # bytes
    elem: int

    @classmethod
    def of(cls, t) -> "Region":
        """The region of a torch tensor (or anything with ``data_ptr``, ``shape``, ``stride``, ``element_size``)."""
        e = t.element_size()
        return cls(int(t.data_ptr()), tuple(t.shape), tuple(s * e for s in t.stride()), e)


def byte_extent(shape, strides, elem) -> tuple[int, int]:
    """``(lo, hi)``: the half-open byte range a layout covers, relative to its base (``(0, 0)`` when empty)."""
    if any(n == 0 for n in shape):
        return 0, 0
    lo = sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
    hi = sum((n - 1) * s for n, s in zip(shape, strides) if s > 0)
    return lo, hi + elem


class _Fake:
    """An array interface over an address that numpy never dereferences (``shares_memory`` reads only geometry)."""

    def __init__(self, r: Region, base: int):
        self.__array_interface__ = dict(data=(r.ptr - base, True), shape=r.shape, strides=r.strides,
                                        typestr=f"|V{r.elem}", version=3)


def relation(a: Region, b: Region) -> str:
    """``"disjoint"``, ``"same"`` (identical views), ``"overlap"`` (some bytes shared) or ``"unknown"`` (the exact
    test hit its work limit)."""
    if a == b:
        return "disjoint" if any(n == 0 for n in a.shape) else "same"
    alo, ahi = byte_extent(a.shape, a.strides, a.elem)
    blo, bhi = byte_extent(b.shape, b.strides, b.elem)
    if alo == ahi or blo == bhi or a.ptr + ahi <= b.ptr + blo or b.ptr + bhi <= a.ptr + alo:
        return "disjoint"
    base = min(a.ptr + alo, b.ptr + blo) - 4096  # relative addresses keep numpy's pointers small and non-null
    try:
        shared = np.shares_memory(np.asarray(_Fake(a, base)), np.asarray(_Fake(b, base)), max_work=MAX_WORK)
    except np.exceptions.TooHardError:
        return "unknown"
    return "overlap" if shared else "disjoint"


def self_overlap(r: Region) -> bool | None:
    """Whether two elements of ``r`` share a byte: False / True, or None when the layout is too irregular to decide
    cheaply (not nested and over :data:`MAX_LISTED` elements)."""
    dims = sorted((abs(s), n) for n, s in zip(r.shape, r.strides) if n > 1)
    if any(n == 0 for n in r.shape) or not dims:
        return False
    if dims[0][0] == 0:
        return True
    reach = r.elem  # bytes spanned by the dims already placed, inner first
    for s, n in dims:
        if s < reach:
            break
        reach += (n - 1) * s
    else:
        return False  # nested: every stride clears the span of the smaller ones
    count = 1
    for _, n in dims:
        count *= n
    if count > MAX_LISTED:
        return None
    offs = np.zeros(1, dtype=np.int64)
    for s, n in dims:
        offs = (offs[:, None] + np.arange(n, dtype=np.int64)[None, :] * s).ravel()
    offs.sort()
    return bool(np.any(np.diff(offs) < r.elem))
