"""CuTe's Layout: a shape and a stride, a function from coordinates to offsets."""

from __future__ import annotations

import numbers

from .arith_tuple import ArithTuple, ScaledBasis
from .int_tuple import (
    LayoutError,
    crd2crd,
    crd2idx,
    depth,
    fill_underscore,
    flatten,
    has_underscore,
    idx2crd,
    is_tuple,
    product,
    rank,
    slice_,
    wrap,
)
from .integer import MAX_DEPTH, Int, _, is_constant, is_int, to_str


class LayoutLeft:
    """Column-major compact strides (the default): the leftmost mode has stride ``_1``."""


class LayoutRight:
    """Row-major compact strides: the rightmost mode has stride ``_1``."""


class Layout:
    """``shape:stride``. Calling it maps a coordinate (or a 1-D index) to an offset; a coordinate with ``_``
    slices it (returns the sub-layout, as CuTe's ``layout(_, 3)``)."""

    __slots__ = ("shape", "stride", "_str")

    def __init__(self, shape, stride=None):
        shape = normalize(shape)
        stride = compact_major(shape, LayoutLeft) if stride is None else normalize(stride, what="stride")
        if is_tuple(shape) != is_tuple(stride) or (is_tuple(shape) and not _congruent(shape, stride)):
            raise LayoutError(f"shape {to_str(shape)} and stride {to_str(stride)} are not congruent")
        self.shape = shape
        self.stride = stride
        self._str = None

    def __str__(self):
        if self._str is None:  # layouts are immutable: print once (hash and the algebra's memo keys use it)
            self._str = f"{to_str(self.shape)}:{to_str(self.stride)}"
        return self._str

    def __repr__(self):
        return f"Layout({self})"

    def __eq__(self, o):
        return isinstance(o, Layout) and _eq(self.shape, o.shape) and _eq(self.stride, o.stride)

    def __hash__(self):
        return hash(str(self))

    def __len__(self):
        return rank(self.shape)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __getitem__(self, i):
        """Mode ``i`` as a layout (CuTe's ``layout<i>``)."""
        if is_tuple(self.shape):
            return Layout(self.shape[i], self.stride[i])
        if i not in (0, -1):
            raise IndexError(f"mode {i} of rank-1 layout {self}")
        return self

    def __call__(self, *coord):
        crd = normalize(coord[0] if len(coord) == 1 else tuple(coord), what="coordinate")
        if has_underscore(crd):
            return Layout(slice_(crd, self.shape), slice_(crd, self.stride))
        return crd2idx(crd, self.shape, self.stride)

    def size(self):
        return product(self.shape)

    def cosize(self):
        return cosize(self)

    def get_hier_coord(self, idx):
        """The coordinate whose offset is ``idx`` (for compact layouts): CuTe's ``idx2crd(idx, shape, stride)``."""
        return idx2crd(idx, self.shape, self.stride)

    def get_flat_coord(self, idx):
        """``get_hier_coord`` with each top-level mode's coordinate folded into one integer."""
        return crd2crd(self.get_hier_coord(idx), self.shape, tuple(Int(1) for _m in wrap(self.shape))
                       if is_tuple(self.shape) else Int(1))

    def get_1d_coord(self, idx):
        return crd2idx(self.get_hier_coord(idx), self.shape)

    def slice_and_offset(self, crd):
        """(sub-layout, offset) for a coordinate containing ``_`` (CuTe's slice_and_offset); without a ``_`` the
        sub-layout is the empty ``():()``, as in CuTe."""
        crd = normalize(crd, what="coordinate")
        sub = self(crd) if has_underscore(crd) else Layout((), ())
        return sub, crd2idx(fill_underscore(crd), self.shape, self.stride)


def _eq(a, b):
    if is_tuple(a) or is_tuple(b):
        return is_tuple(a) and is_tuple(b) and len(a) == len(b) and all(_eq(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b if is_int(a) and is_int(b) else a == b


def _congruent(a, b):
    if is_tuple(a):
        return is_tuple(b) and len(a) == len(b) and all(_congruent(x, y) for x, y in zip(a, b))
    return not is_tuple(b)


def normalize(x, depth=0, what="shape"):
    """A shape/stride/coordinate as nested tuples of integers: lists become tuples, numpy integers plain ints;
    anything else (floats, NaN, strings, bytes, None, bools) is refused, as is nesting deeper than MAX_DEPTH."""
    if isinstance(x, list):
        x = tuple(x)
    if is_tuple(x):
        if all(type(v) is Int or type(v) is int for v in x):  # flat and clean already: keep the tuple
            return x
        if depth >= MAX_DEPTH:
            raise LayoutError(f"{what} nests deeper than {MAX_DEPTH} levels; flatten it")
        return tuple(normalize(v, depth + 1, what) for v in x)
    if type(x) is Int or type(x) is int:
        return x
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        if what == "stride" and isinstance(x, (ScaledBasis, ArithTuple)) or what == "coordinate" and x is _:
            return x
        raise LayoutError(f"{what} entry {x!r} ({type(x).__name__}) is not an integer: use ints or tk.Int "
                          "(floats, strings, bytes, None and bools are not converted)")
    return int(x)


def compact_major(shape, major=LayoutLeft, current=Int(1)):
    """Compact strides for ``shape`` (CuTe's compact_major): size-``_1`` modes get stride ``_0``."""
    if is_tuple(shape):
        order = range(len(shape)) if major is LayoutLeft else reversed(range(len(shape)))
        out = [None] * len(shape)
        for i in order:
            out[i] = compact_major(shape[i], major, current)
            current = current * product(shape[i])
        return tuple(out)
    if is_constant(1, shape):
        return Int(0)
    return current


def compact_order(shape, order):
    """CuTe's compact_order: compact strides visiting the modes in ``order`` (weakly congruent with ``shape``);
    dynamic order values count as larger than every static one, left to right."""
    if order is LayoutLeft or order is LayoutRight:
        return compact_major(shape, order)
    ref_shape = flatten(_product_like(shape, order))
    flat_order = flatten(order)
    top = max((int(o) for o in flat_order if type(o) is Int), default=0)
    ref_order = tuple(int(o) if type(o) is Int else top + 1 + i for i, o in enumerate(flat_order))
    return _compact_order(shape, _unflatten(ref_order, order), ref_shape, ref_order)


def _compact_order(shape, order, ref_shape, ref_order):
    if is_tuple(order):
        if not is_tuple(shape) or len(shape) != len(order):
            raise LayoutError(f"make_ordered_layout: order {to_str(order)} does not match shape {to_str(shape)}")
        return tuple(_compact_order(s, o, ref_shape, ref_order) for s, o in zip(shape, order))
    start = product(tuple(s if o < order else Int(1) for s, o in zip(ref_shape, ref_order)))
    return compact_major(shape, LayoutLeft, start)


def _product_like(shape, guide):
    if is_tuple(guide):
        return tuple(_product_like(s, g) for s, g in zip(shape, guide))
    return product(shape)


def _unflatten(flat, profile):
    it = iter(flat)

    def build(p):
        if is_tuple(p):
            return tuple(build(v) for v in p)
        return next(it)

    return build(profile)


def make_shape(*xs):
    return _non_negative(tuple(normalize(x) for x in xs))


def make_stride(*xs):
    return tuple(normalize(x, what="stride") for x in xs)


def make_coord(*xs):
    return tuple(normalize(x, what="coordinate") for x in xs)


def _non_negative(shape):
    """A shape's extents are sizes: negative ones are refused by the public constructors."""
    if any(int(n) < 0 for n in flatten(shape)):
        raise LayoutError(f"shape {to_str(shape)} has a negative extent; extents are sizes (>= 0)")
    return shape


def make_layout(*args, stride=None):
    """``make_layout(shape[, stride | LayoutLeft | LayoutRight])`` or ``make_layout(layout0, layout1, ...)``."""
    if args and all(isinstance(a, Layout) for a in args):
        return Layout(tuple(a.shape for a in args), tuple(a.stride for a in args))  # one layout -> rank-1 tuple
    if len(args) == 2:
        shape, stride = args
    elif len(args) == 1:
        shape = args[0]
    else:
        raise LayoutError("make_layout(shape[, stride]) or make_layout(layout, ...)")
    shape = _non_negative(normalize(shape))
    if stride is None or stride is LayoutLeft:
        return Layout(shape, compact_major(shape, LayoutLeft))
    if stride is LayoutRight:
        return Layout(shape, compact_major(shape, LayoutRight))
    return Layout(shape, stride)


def make_ordered_layout(shape, order):
    """A compact layout of ``shape`` whose modes take strides in the order ``order`` ranks them (CuTe's
    make_ordered_layout); ``order`` may also be ``LayoutLeft`` / ``LayoutRight``."""
    shape = _non_negative(normalize(shape))
    if order is LayoutLeft or order is LayoutRight:
        return Layout(shape, compact_major(shape, order))
    return Layout(shape, compact_order(shape, normalize(order, what="order")))


def size(x, *modes):
    """Number of coordinates of a layout, tensor or shape (optionally of one mode: a tensor's mode of its layout,
    as CuTe's ``size<I>(tensor)``)."""
    if hasattr(x, "layout") and not isinstance(x, Layout):
        x = x.layout
    if modes:
        x = get(x, *modes)
    if hasattr(x, "size") and callable(x.size):
        return x.size()
    return product(x)


def cosize(layout, *modes):
    """One past the largest offset the layout produces (CuTe's cosize = size(coshape))."""
    if hasattr(layout, "layout") and not isinstance(layout, Layout):
        layout = layout.layout
    if modes:
        layout = get(layout, *modes)
    if not isinstance(layout, Layout) and hasattr(layout, "cosize"):
        return layout.cosize()
    return product(coshape(layout))


def coshape(layout):
    """CuTe's coshape: ``inner_product(shape - 1, |stride|) + 1`` per codomain mode."""
    m1 = _map_leaves(layout.shape, lambda s: s - Int(1))
    co = _inner(m1, _map_leaves(layout.stride, abs))
    co = co.values if hasattr(co, "values") else co.expand() if hasattr(co, "expand") else co
    return _map_leaves(co, lambda c: c + Int(1))


def _inner(a, b):
    if is_tuple(a):
        out = Int(0)
        for x, y in zip(a, b):
            out = out + _inner(x, y)
        return out
    return a * b


def _map_leaves(t, fn):
    return tuple(_map_leaves(v, fn) for v in t) if is_tuple(t) else fn(t)


def shape(x, *modes):
    if modes:
        x = get(x, *modes)
    return x.shape if hasattr(x, "shape") else x


def stride(x, *modes):
    if modes:
        x = get(x, *modes)
    return x.stride


def get(x, *modes):
    """Mode ``i`` (then ``j`` ...) of a layout, tensor or tuple (CuTe's ``get<i,j>`` / ``layout<i,j>``; of a tensor
    the sub-tensor of that mode, CuTe's ``tensor<i,j>``, never an element)."""
    if modes and hasattr(x, "mode") and hasattr(x, "iterator"):
        return x.mode(*modes)
    for m in modes:
        x = x[m] if not is_int(x) else _int_mode(x, m)
    return x


def _int_mode(x, m):
    if m != 0:
        raise IndexError(f"mode {m} of integer {x}")
    return x


def layout_depth(x):
    return depth(x.shape if isinstance(x, Layout) else x)


def layout_rank(x):
    return rank(x.shape if hasattr(x, "shape") else x)
