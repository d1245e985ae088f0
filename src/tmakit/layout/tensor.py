"""CuTe's Tensor: an iterator (pointer, array or coordinate) composed with a layout."""

from __future__ import annotations

import numpy as np

from .algebra import zipped_divide
from .arith_tuple import ArithTuple, ArithTupleIterator, make_basis_like
from .int_tuple import LayoutError, has_underscore, is_tuple, rank, wrap
from .integer import Int, _
from .layout import Layout, make_layout
from .swizzle import ComposedLayout


class ArrayPtr:
    """A pointer into a flat numpy array (an element offset): the iterator of array-backed tensors."""

    __slots__ = ("array", "offset")

    def __init__(self, array, offset=0):
        self.array, self.offset = array, int(offset)

    def __add__(self, n):
        return ArrayPtr(self.array, self.offset + int(n))

    def __str__(self):
        return f"array[{self.array.dtype}]+{self.offset}"

    __repr__ = __str__

    def deref(self, offset=0):
        return self.array[self.offset + int(offset)]

    def store(self, offset, value):
        self.array[self.offset + int(offset)] = value


class Tensor:
    """``iterator o layout``. ``t(coord)`` / ``t[coord]`` reads an element; a coordinate with ``_`` slices."""

    __slots__ = ("iterator", "layout")

    def __init__(self, iterator, layout):
        self.iterator, self.layout = iterator, layout

    @property
    def data(self):
        """CuTe's ``tensor.data()``: the iterator (with slicing offsets folded in)."""
        return self.iterator

    @property
    def shape(self):
        return self.layout.shape

    @property
    def stride(self):
        return self.layout.stride

    def size(self):
        return self.layout.size()

    def __len__(self):
        return rank(self.layout.shape)

    def __str__(self):
        return f"{self.iterator} o {self.layout}"

    __repr__ = __str__

    def __call__(self, *coord):
        crd = coord[0] if len(coord) == 1 else tuple(coord)
        if has_underscore(crd):
            sub, off = self.layout.slice_and_offset(crd)
            return Tensor(self.iterator + off, sub)
        off = self.layout(crd)
        return _deref(self.iterator, off)

    def __getitem__(self, crd):
        return self(crd)

    def __setitem__(self, crd, value):
        off = self.layout(crd)
        it = self.iterator
        if not hasattr(it, "store"):
            raise LayoutError(f"tensor with iterator {it} is read-only")
        it.store(off, value)

    def mode(self, *modes):
        """Sub-tensor of mode ``i`` (then ``j`` ...), CuTe's ``tensor<i>`` style access."""
        lay = self.layout
        for m in modes:
            lay = lay[m]
        return Tensor(self.iterator, lay)


def _deref(it, off):
    if isinstance(it, ArithTupleIterator):
        return it.deref(off)
    if hasattr(it, "deref"):
        return it.deref(off)
    return it + off


def make_tensor(engine, layout=None, *, stride=None):
    """A tensor over ``engine``: a numpy array, an iterator/pointer (anything with ``+``), or an ArithTuple.

    ``layout`` may be a Layout/ComposedLayout or a shape (with ``stride`` or compact column-major strides).
    For a numpy array without a layout, the array's own shape and element strides are used.
    """
    if isinstance(engine, np.ndarray):
        arr = engine if engine.flags.c_contiguous else np.ascontiguousarray(engine)
        if layout is None:
            layout = Layout(tuple(int(s) for s in arr.shape), tuple(int(s) // arr.itemsize for s in arr.strides))
        engine = ArrayPtr(arr.reshape(-1))
    elif isinstance(engine, ArithTuple):
        engine = ArithTupleIterator(engine)
    if not isinstance(layout, (Layout, ComposedLayout)):
        layout = make_layout(layout, stride) if stride is not None else make_layout(layout)
    return Tensor(engine, layout)


def _zeros_like(profile):
    if is_tuple(profile):
        return tuple(_zeros_like(p) for p in profile)
    return Int(0)


def make_identity_tensor(shape):
    """``ArithTuple(_0,...) o shape:(_1@0,_1@1,...)``: each coordinate maps to itself."""
    shape = tuple(shape) if isinstance(shape, list) else shape
    return Tensor(ArithTupleIterator(ArithTuple(_zeros_like(wrap(shape)))), Layout(shape, make_basis_like(wrap(shape))
                                                                                     if is_tuple(shape) else
                                                                                     make_basis_like((shape,))[0]))


def make_coord_tensor(layout):
    """A counting tensor over ``layout`` whose strides are scaled bases (e.g. ``(_1@1,_1@0)``)."""
    width = _codomain_rank(layout.stride)
    return Tensor(ArithTupleIterator(ArithTuple(tuple(Int(0) for _i in range(width)))), layout)


def _codomain_rank(stride):
    from .arith_tuple import ScaledBasis
    from .int_tuple import flatten

    modes = [d.mode[0] for d in flatten(stride) if isinstance(d, ScaledBasis) and d.mode]
    return max(modes) + 1 if modes else 1


def _divide_tensor(t: Tensor, fn, tiler):
    lay = fn(t.layout, tiler)
    return Tensor(t.iterator, lay)


def tensor_zipped_divide(t: Tensor, tiler):
    return _divide_tensor(t, zipped_divide, tiler)


def _tiler_tuple(tiler):
    if isinstance(tiler, list):
        return tuple(tiler)
    return tiler


def local_tile(tensor: Tensor, tiler, coord, proj=None):
    """The tile of ``tensor`` at tile coordinate ``coord`` (CuTe's local_tile / inner_partition).

    With ``proj`` (a tuple of 1 / ``None`` / ``_`` per mode, as CuTe's ``Step<_1,X,_1>``), modes whose entry is
    ``None`` (CuTe's ``X``) are removed from both the tiler and the coordinate first.
    """
    tiler, coord = _tiler_tuple(tiler), _tiler_tuple(coord)
    if proj is not None:
        proj = tuple(_ if p is None else 1 for p in proj)
        tiler = tuple(t for t, p in zip(wrap(tiler), proj) if p is not _)
        coord = tuple(c for c, p in zip(wrap(coord), proj) if p is not _)
        tiler, coord = _unwrap1(tiler), _unwrap1(coord)
    tiled = tensor_zipped_divide(tensor, tiler)
    r0 = rank(tiled.layout.shape[0])
    r1 = rank(tiled.layout.shape[1])
    first = (_,) * r0 if is_tuple(tiled.layout.shape[0]) else _
    if is_tuple(coord):
        second = tuple(coord) + (_,) * (r1 - len(coord)) if is_tuple(tiled.layout.shape[1]) else coord
        if is_tuple(second) and len(second) == 1 and not is_tuple(tiled.layout.shape[1]):
            second = second[0]
    else:
        second = coord if not is_tuple(tiled.layout.shape[1]) else (coord,) + (_,) * (r1 - 1)
    return tiled((first, second))


def _unwrap1(t):
    return t[0] if is_tuple(t) and len(t) == 1 else t


def local_partition(tensor: Tensor, thr_layout, thr_idx):
    """The elements of ``tensor`` owned by thread ``thr_idx`` of ``thr_layout`` (CuTe's outer_partition)."""
    tiled = tensor_zipped_divide(tensor, thr_layout.shape if isinstance(thr_layout, Layout) else thr_layout)
    coord = thr_layout.get_hier_coord(thr_idx) if isinstance(thr_layout, Layout) else thr_idx
    r1 = rank(tiled.layout.shape[1])
    second = (_,) * r1 if is_tuple(tiled.layout.shape[1]) else _
    return tiled((coord, second))
