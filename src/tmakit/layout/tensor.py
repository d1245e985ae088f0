"""CuTe's Tensor: an iterator (pointer, array or coordinate) composed with a layout."""

from __future__ import annotations

import numpy as np

from .algebra import composition, make_identity_layout, tiled_divide, zipped_divide
from .arith_tuple import ArithTuple, ArithTupleIterator
from .composed import ComposedLayout
from .composition import _coprofile
from .int_tuple import LayoutError, dice, has_underscore, is_tuple, product, product_each, rank
from .integer import _, is_int, to_str
from .layout import Layout, make_layout, normalize


class ArrayPtr:
    """A pointer into a flat numpy array (an element offset): the iterator of array-backed tensors.

    Every access is bounds-checked against the array: a numpy index never wraps around."""

    __slots__ = ("array", "offset")

    def __init__(self, array, offset=0):
        self.array, self.offset = array, int(offset)

    def __add__(self, n):
        return ArrayPtr(self.array, self.offset + int(n))

    # The memory-iterator attributes the layout layer reads (tmakit.mma's smem pointers have the same): the element
    # type, its width in bits, and the pointer's static alignment in bits (0: unknown, so the layout's decides).
    @property
    def value_type(self):
        return self.array.dtype

    @property
    def bits(self) -> int:
        return self.array.dtype.itemsize * 8

    alignment_bits = 0

    def __str__(self):
        return f"array[{self.array.dtype}]+{self.offset}"

    __repr__ = __str__

    def _index(self, offset):
        i = self.offset + int(offset)
        if not 0 <= i < self.array.size:
            raise LayoutError(f"tensor access at element offset {i} is outside its array of {self.array.size} "
                              "elements; check the coordinate against the tensor's shape")
        return i

    def deref(self, offset=0):
        return self.array[self._index(offset)]

    def store(self, offset, value):
        i = self._index(offset)
        if not self.array.flags.writeable:
            raise LayoutError("the tensor's array is read-only (a broadcast or read-only view); write through a "
                              "writeable array")
        self.array[i] = value


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
        crd = normalize(coord[0] if len(coord) == 1 else tuple(coord), what="coordinate")
        if isinstance(self.iterator, ArrayPtr):
            check_coord(crd, self.layout.shape)
        if has_underscore(crd):
            sub, off = self.layout.slice_and_offset(crd)
            return Tensor(self.iterator + off, sub)
        off = self.layout(crd)
        return _deref(self.iterator, off)

    def __getitem__(self, crd):
        return self(crd)

    def __setitem__(self, crd, value):
        crd = normalize(crd, what="coordinate")
        it = self.iterator
        if isinstance(it, ArrayPtr):
            check_coord(crd, self.layout.shape)
        off = self.layout(crd)
        if not hasattr(it, "store"):
            raise LayoutError(f"tensor with iterator {it} is read-only")
        it.store(off, value)

    def compose(self, *tilers):
        """CuTe's ``tensor.compose(...)``: this iterator over ``layout.compose(...)`` (one tiler, or mode by mode)."""
        return composition(self, tilers[0] if len(tilers) == 1 else tuple(tilers))

    def tile(self, *tilers):
        """CuTe's ``tensor.tile(...)``: this iterator over ``layout.tile(...)`` (tiled_divide, or mode by mode)."""
        return tiled_divide(self, tilers[0] if len(tilers) == 1 else tuple(tilers))

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


def check_coord(crd, shape, full=None):
    """Raise unless every integer of ``crd`` is an in-range coordinate of its mode of ``shape`` (``_`` keeps a
    mode; an integer for a nested mode is a 1-D index into it). numpy indices would wrap; CuTe's would read
    out of bounds."""
    full = crd if full is None else full
    if is_tuple(crd):
        if not is_tuple(shape) or len(crd) != len(shape):
            raise LayoutError(f"coordinate {to_str(full)} does not match the tensor's shape")
        for c, s in zip(crd, shape):
            check_coord(c, s, full)
        return
    if crd is _:
        return
    if not is_int(crd):
        raise LayoutError(f"coordinate {full!r}: {crd!r} is not an integer (use ints, tk.Int or _)")
    n = int(product(shape))
    if not 0 <= int(crd) < n:
        raise LayoutError(f"coordinate {to_str(full)}: {int(crd)} is outside 0..{n - 1} of its mode "
                          f"{to_str(shape)}; negative indices do not wrap")


def array_span(arr: np.ndarray):
    """``(flat, offset)``: a 1-D view of the memory ``arr`` spans (aliasing it, never a copy) and the element offset
    of ``arr[0, ..., 0]`` in it. Raises for byte strides that are not whole elements."""
    if not isinstance(arr, np.ndarray):
        raise LayoutError(f"expected a numpy array, got {type(arr).__name__}")
    item = arr.itemsize
    if item == 0 or any(s % item for s in arr.strides):
        raise LayoutError(f"array strides {arr.strides} bytes are not multiples of its {item}-byte elements, so "
                          "no layout in elements describes them; copy it (np.ascontiguousarray) if a copy is meant")
    if arr.size == 0 or arr.ndim == 0 or arr.flags.c_contiguous:
        return arr.reshape(-1), 0
    low = tuple(slice(-1, None) if s < 0 else slice(0, 1) for s in arr.strides)
    lo = sum((n - 1) * s for n, s in zip(arr.shape, arr.strides) if s < 0)
    hi = sum((n - 1) * s for n, s in zip(arr.shape, arr.strides) if s > 0)
    flat = np.lib.stride_tricks.as_strided(arr[low], shape=((hi - lo) // item + 1,), strides=(item,),
                                           writeable=arr.flags.writeable)
    return flat, -lo // item


def make_tensor(engine, layout=None, *, stride=None):
    """A tensor over ``engine``: a numpy array, an iterator/pointer (anything with ``+``), or an ArithTuple.

    ``layout`` may be a Layout/ComposedLayout or a shape (with ``stride`` or compact column-major strides).
    For a numpy array without a layout, the array's own shape and element strides are the layout (any view:
    transposed, sliced with steps, negative steps); the tensor aliases the array, it never copies it. A layout given
    with an array indexes the array's flat C-order elements, so that array must be C-contiguous.
    """
    if hasattr(engine, "make_tensor_with"):  # a pointer that absorbs part of the layout (CuTe's smem_ptr_flag)
        absorbed = engine.make_tensor_with(layout)
        if absorbed is not None:
            return absorbed
    if isinstance(engine, np.ndarray):
        if layout is None:
            flat, origin = array_span(engine)
            layout = Layout(tuple(int(n) for n in engine.shape), tuple(s // engine.itemsize for s in engine.strides))
            engine = ArrayPtr(flat, origin)
        else:
            if not engine.flags.c_contiguous:
                raise LayoutError(f"make_tensor(array, layout): the layout indexes the array's flat elements, but "
                                  f"this array is a strided view (strides {engine.strides} bytes); pass the view "
                                  "alone (its strides become the layout) or a C-contiguous array")
            engine = ArrayPtr(engine.reshape(-1))
    elif isinstance(engine, ArithTuple):
        engine = ArithTupleIterator(engine)
    if not isinstance(layout, (Layout, ComposedLayout)):
        layout = make_layout(layout, stride) if stride is not None else make_layout(layout)
    return Tensor(engine, layout)


def make_identity_tensor(shape):
    """``ArithTuple(_0,...) o shape:(_1@0,_1@1,...)``: each coordinate maps to itself."""
    return make_coord_tensor(make_identity_layout(tuple(shape) if isinstance(shape, list) else shape))


def make_coord_tensor(layout):
    """A counting tensor over ``layout`` (strides are scaled bases such as ``(_1@1,_1@0)``), starting at the
    coprofile of the layout (``_0``s shaped like its codomain)."""
    return Tensor(ArithTupleIterator(_coprofile(layout)), layout)


def make_counting_tensor(layout):
    """CUTLASS 3's name for ``make_coord_tensor`` (CuTe 4 renamed it): a coordinate tensor over ``layout``."""
    return make_coord_tensor(layout)


def inner_partition(tensor: Tensor, tiler, coord):
    """Everything inside the tile at ``coord`` (CuTe's inner_partition): ``zipped_divide(tensor, tiler)`` sliced in
    its rest mode; a tuple ``coord`` is padded with ``_`` to the rest mode's rank, an integer indexes it flat."""
    tiled = zipped_divide(tensor, _tuple(tiler))
    return tiled(_repeat(rank(tiled.layout.shape[0])), _pad_coord(_tuple(coord), tiled.layout.shape[1], "inner"))


def outer_partition(tensor: Tensor, tiler, coord):
    """The elements at position ``coord`` of every tile (CuTe's outer_partition): ``zipped_divide(tensor, tiler)``
    sliced in its tile mode; a tuple ``coord`` is padded with ``_`` to the tile mode's rank."""
    tiled = zipped_divide(tensor, _tuple(tiler))
    return tiled(_pad_coord(_tuple(coord), tiled.layout.shape[0], "outer"), _repeat(rank(tiled.layout.shape[1])))


def _pad_coord(coord, mode_shape, which):
    """CuTe's ``append<R>(coord, _)`` for a tuple coordinate (R = the mode's rank); an integer stays as it is."""
    if not is_tuple(coord):
        return coord
    r = rank(mode_shape)
    if len(coord) > r:
        raise LayoutError(f"{which}_partition: coordinate {to_str(coord)} has more modes than the mode it indexes, "
                          f"{to_str(mode_shape)} (CuTe's append<{r}> does not compile); give at most {r}")
    return coord + (_,) * (r - len(coord))


def local_tile(tensor: Tensor, tiler, coord, proj=None):
    """The tile of ``tensor`` at tile coordinate ``coord`` (CuTe's local_tile = inner_partition).

    With ``proj`` (per mode ``1`` to keep, ``None`` or ``_`` for CuTe's ``X``, as in ``Step<_1,X,_1>``), the
    ``X`` modes are removed from both the tiler and the coordinate first (CuTe's ``dice``).
    """
    tiler, coord = _tuple(tiler), _tuple(coord)
    if proj is not None:
        proj = _x_to_underscore(_tuple(proj))
        tiler, coord = dice(proj, tiler), dice(proj, coord)
    return inner_partition(tensor, tiler, coord)


def local_partition(tensor: Tensor, thr_layout: Layout, thr_idx, proj=None):
    """The elements of ``tensor`` owned by thread ``thr_idx`` of ``thr_layout``: CuTe's ``outer_partition(tensor,
    product_each(shape(thr_layout)), thr_layout.get_flat_coord(thr_idx))``."""
    if proj is not None:
        proj = _x_to_underscore(_tuple(proj))
        thr_layout = Layout(dice(proj, thr_layout.shape), dice(proj, thr_layout.stride))
    return outer_partition(tensor, product_each(thr_layout.shape), thr_layout.get_flat_coord(thr_idx))


def _repeat(r):
    """CuTe's ``repeat<R>(_)``: ``_`` itself for R == 1."""
    return (_,) * r if r > 1 else _


def _tuple(x):
    return tuple(x) if isinstance(x, list) else x


def _x_to_underscore(proj):
    if is_tuple(proj):
        return tuple(_x_to_underscore(p) for p in proj)
    return _ if proj is None else proj
