"""Strided numpy views of the in-bounds part of a TMA box in global memory (tile mode, docs/HARDWARE.md §3).

``gmem`` is the byte buffer whose index 0 is the tensor map's ``global_address``.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .dtypes import storage_dtype
from .errors import IllegalAddress, TmaUnitError


def as_bytes(buf, writeable: bool) -> np.ndarray:
    """A flat ``np.uint8`` view of a contiguous numpy array / bytes-like object (no copy)."""
    if not isinstance(buf, np.ndarray):
        buf = np.frombuffer(buf, dtype=np.uint8)
    if not buf.flags.c_contiguous:
        raise TmaUnitError("global memory must be a C-contiguous buffer")
    out = buf.reshape(-1).view(np.uint8)
    if writeable and not out.flags.writeable:
        raise TmaUnitError("global memory is read-only; a TMA store/reduce needs a writeable buffer")
    return out


def element_view(gmem: np.ndarray, elem_bytes: int) -> np.ndarray:
    """The buffer as unsigned elements of ``elem_bytes`` bytes (trailing partial element dropped)."""
    n = gmem.size - gmem.size % elem_bytes
    return gmem[:n].view(storage_dtype(elem_bytes))


def _in_range(c: int, step: int, count: int, dim: int) -> tuple[int, int]:
    """Box indices k with ``0 <= c + step*k < dim``, as a half-open range [lo, hi)."""
    lo = 0 if c >= 0 else (-c + step - 1) // step
    hi = min(count, (dim - c + step - 1) // step) if dim > c else 0
    return lo, max(lo, hi)


def store_dim0(tmap, elem_bytes: int) -> int:
    """Elements of dim 0 a store/reduce writes: ``globalDim[0]`` rounded up to the next 16-byte boundary of the row.
    The H200 writes whole 16-byte chunks along dim 0, so the elements past ``globalDim[0]`` up to that boundary
    receive the box's data (store) or are combined (reduce) -- 457 of 457 recorded store/reduce mismatches of the
    first conformance run were exactly these bytes (docs/CONFORMANCE.md). Loads still treat them as OOB."""
    d0 = tmap.global_dim[0]
    return -(-d0 * elem_bytes // 16) * 16 // elem_bytes


def global_box(gel: np.ndarray, tmap, geom, coords, writeable: bool, dims=None, clip: bool = False):
    """(box slices, view) for the in-bounds elements of the box at ``coords``; ``(None, None)`` if none are.

    The view has the box's numpy shape (outermost first) restricted to the slices, and aliases ``gel``. ``dims``
    overrides ``tmap.global_dim`` (stores pass the 16-byte-rounded dim 0); ``clip`` drops dim-0 elements past the
    end of the buffer instead of raising (only the 16-byte tail of the last row can reach there).
    """
    dims = tuple(tmap.global_dim) if dims is None else tuple(dims)
    e = geom.elem_bytes
    slices, shape, strides, first, last = [], [], [], 0, 0
    for i in reversed(range(tmap.rank)):
        c, step, count, dim = coords[i], geom.steps[i], geom.counts[i], dims[i]
        lo, hi = _in_range(c, step, count, dim)
        if hi == lo:
            return None, None
        bstride = e if i == 0 else tmap.global_strides[i - 1]
        first += (c + step * lo) * bstride
        last += (hi - lo - 1) * step * bstride
        slices.append(slice(lo, hi))
        shape.append(hi - lo)
        strides.append(step * bstride)
    if clip and first + last + e > gel.size * e and dims[0] > tmap.global_dim[0]:
        return global_box(gel, tmap, geom, coords, writeable, None, False)
    if first + last + e > gel.size * e:
        raise IllegalAddress(f"box at {tuple(coords)} reaches global byte {first + last + e:#x} past the "
                             f"{gel.size * e}-byte buffer at {tmap.global_address:#x}")
    view = as_strided(gel[first // e:], shape=shape, strides=strides, writeable=writeable)
    return tuple(slices), view


def element_index(gel: np.ndarray, view: np.ndarray) -> np.ndarray:
    """Flat index into ``gel`` of each element of ``view`` (a strided view aliasing it), in C order."""
    e = gel.itemsize
    idx = np.int64((view.__array_interface__["data"][0] - gel.__array_interface__["data"][0]) // e)
    for axis, (n, s) in enumerate(zip(view.shape, view.strides)):
        shape = [1] * view.ndim
        shape[axis] = n
        idx = idx + (np.arange(n, dtype=np.int64) * (s // e)).reshape(shape)
    return np.broadcast_to(idx, view.shape).reshape(-1)


def replace(old, new):
    """The combine of a plain store: the new value replaces the old one."""
    return new


def _self_overlapping(view: np.ndarray) -> bool:
    """Whether two elements of a strided view may share memory (conservative: axes sorted by stride must each step
    past everything the smaller ones span)."""
    span = view.itemsize
    for step, n in sorted((abs(s), n) for n, s in zip(view.shape, view.strides) if n > 1):
        if step < span:
            return True
        span = step * (n - 1) + span
    return False


def write_box_in_order(gel: np.ndarray, view: np.ndarray, vals: np.ndarray, combine) -> None:
    """``view = combine(view, vals)`` element by element in box (C) order, ``view`` a strided window of ``gel``:
    one vectorized pass when no two elements alias, else :func:`combine_in_order` (numpy's own order for an
    overlapping assignment is not the box's)."""
    if not _self_overlapping(view):
        view[...] = combine(view, vals)
        return
    combine_in_order(gel, element_index(gel, view), vals.reshape(-1), combine)


def combine_in_order(gel: np.ndarray, idx: np.ndarray, vals: np.ndarray, combine) -> None:
    """``gel[idx[k]] = combine(gel[idx[k]], vals[k])`` for k in order, as the TMA unit applies a reduction element
    by element: where global strides make box elements alias (rows that overlap), each one combines in turn."""
    order = np.argsort(idx, kind="stable")
    sidx = idx[order]
    starts = np.r_[True, sidx[1:] != sidx[:-1]]
    if starts.all():  # no aliasing: one vectorized pass
        gel[idx] = combine(gel[idx], vals)
        return
    first = np.flatnonzero(starts)
    occurrence = np.empty(idx.size, np.int64)
    occurrence[order] = np.arange(idx.size) - first[np.cumsum(starts) - 1]
    for k in range(int(occurrence.max()) + 1):
        sel = occurrence == k
        gel[idx[sel]] = combine(gel[idx[sel]], vals[sel])
