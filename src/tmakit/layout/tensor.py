"""CuTe's Tensor: an iterator (pointer, array or coordinate) composed with a layout."""

from __future__ import annotations

import numpy as np

from .algebra import zipped_divide
from .arith_tuple import ArithTuple, ArithTupleIterator
from .int_tuple import LayoutError, dice, has_underscore, is_tuple, product_each, rank
from .integer import _, to_str
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


def make_identity_tensor(shape):
    """``ArithTuple(_0,...) o shape:(_1@0,_1@1,...)``: each coordinate maps to itself."""
    from .algebra import make_identity_layout

    return make_coord_tensor(make_identity_layout(tuple(shape) if isinstance(shape, list) else shape))


def make_coord_tensor(layout):
    """A counting tensor over ``layout`` (strides are scaled bases such as ``(_1@1,_1@0)``), starting at the
    coprofile of the layout (``_0``s shaped like its codomain)."""
    from .algebra import _coprofile

    return Tensor(ArithTupleIterator(_coprofile(layout)), layout)


def local_tile(tensor: Tensor, tiler, coord, proj=None):
    """The tile of ``tensor`` at tile coordinate ``coord`` (CuTe's local_tile / inner_partition).

    With ``proj`` (per mode ``1`` to keep, ``None`` or ``_`` for CuTe's ``X``, as in ``Step<_1,X,_1>``), the
    ``X`` modes are removed from both the tiler and the coordinate first (CuTe's ``dice``).
    """
    tiler, coord = _tuple(tiler), _tuple(coord)
    if proj is not None:
        proj = _x_to_underscore(_tuple(proj))
        tiler, coord = dice(proj, tiler), dice(proj, coord)
    tiled = zipped_divide(tensor, tiler)
    first = _repeat(rank(tiled.layout.shape[0]))
    if is_tuple(coord):  # a tuple coordinate gets trailing _ for the remaining rest modes
        r1 = rank(tiled.layout.shape[1])
        if len(coord) > r1:
            raise LayoutError(f"local_tile: coordinate {to_str(coord)} has more modes than the tiles "
                              f"{to_str(tiled.layout.shape[1])}")
        return tiled(first, coord + (_,) * (r1 - len(coord)))
    return tiled(first, coord)


def local_partition(tensor: Tensor, thr_layout: Layout, thr_idx, proj=None):
    """The elements of ``tensor`` owned by thread ``thr_idx`` of ``thr_layout`` (CuTe's outer_partition)."""
    if proj is not None:
        proj = _x_to_underscore(_tuple(proj))
        thr_layout = Layout(dice(proj, thr_layout.shape), dice(proj, thr_layout.stride))
    tiled = zipped_divide(tensor, product_each(thr_layout.shape))
    coord = thr_layout.get_flat_coord(thr_idx)
    if is_tuple(coord):
        coord = coord + (_,) * (rank(tiled.layout.shape[0]) - len(coord))
    return tiled(coord, _repeat(rank(tiled.layout.shape[1])))


def _repeat(r):
    """CuTe's ``repeat<R>(_)``: ``_`` itself for R == 1."""
    return (_,) * r if r > 1 else _


def _tuple(x):
    return tuple(x) if isinstance(x, list) else x


def _x_to_underscore(proj):
    if is_tuple(proj):
        return tuple(_x_to_underscore(p) for p in proj)
    return _ if proj is None else proj
