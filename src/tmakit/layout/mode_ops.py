"""CuTe's mode rearrangements on tuples, layouts, composed layouts and tensors: ``take``, ``group``, ``zip``,
``replace``, ``append``, ``prepend`` (tuple_algorithms.hpp, layout.hpp, layout_composed.hpp, tensor_impl.hpp).

A layout is rearranged by rearranging its shape and its stride alike; a composed layout rearranges its inner layout
(``composition(A, offset, f(B))``); a tensor keeps its iterator. The mode indices are CuTe's template arguments, so
an index CuTe would not compile raises ``LayoutError``.
"""

from __future__ import annotations

from . import tuple_algorithms as ta
from .algebra import append as _append_layout
from .algebra import group_modes
from .composed import ComposedLayout, composition3
from .composition import _as_layout
from .int_tuple import LayoutError, is_tuple, rank, wrap
from .integer import Int, to_str
from .layout import Layout

__all__ = ["take", "group", "group_modes", "zip", "replace", "append", "prepend"]  # group_modes: algebra's


def _is_tensor(x):
    return hasattr(x, "iterator") and hasattr(x, "layout") and not isinstance(x, (Layout, ComposedLayout))


def _lift(x, fn, what, tensors=False):
    """``fn`` on a layout's shape and stride, inside a composed layout, or (``tensors``) inside a tensor."""
    if isinstance(x, Layout):
        return Layout(fn(x.shape), fn(x.stride))
    if isinstance(x, ComposedLayout):
        return composition3(x.layout_a, x.offset, _lift(x.layout_b, fn, what))
    if _is_tensor(x):
        if not tensors:
            raise LayoutError(f"{what}: CuTe has no {what} of a tensor; apply it to tensor.layout (group_modes groups "
                              "a tensor's modes)")
        return type(x)(x.iterator, _lift(x.layout, fn, what))
    return fn(x)


def _layout_range(b, e, n, what, t):
    """The layout form of ``take<B,E>``: CuTe's static_assert wants ``0 <= B < E <= rank`` (no E = -1)."""
    ok = all(isinstance(v, int) and not isinstance(v, bool) for v in (b, e)) and 0 <= b < e <= n
    if not ok:
        raise LayoutError(f"{what}<{b},{e}>({t}): CuTe needs 0 <= B < E <= rank = {n} for a layout (a "
                          "static_assert); take a non-empty range of modes")


def take(x, begin, end):
    """``take<B,E>(x)``: modes ``[B, E)``, always as a tuple. On tuples ``E = -1`` means the rank and ``B == E``
    gives ``()``; a layout (composed layout, tensor) needs ``B < E``, as CuTe's static_assert."""
    if isinstance(x, (Layout, ComposedLayout)) or _is_tensor(x):
        lay = x.layout if _is_tensor(x) else x
        _layout_range(begin, end, rank(lay.shape), "take", lay)
    b, e = ta.group_range(begin, end, rank(_shape(x)), "take", x)
    return _lift(x, lambda t: wrap(t)[b:e], "take", tensors=True)


def _shape(x):
    return x.shape if isinstance(x, (Layout, ComposedLayout)) or _is_tensor(x) else x


def group(x, begin, end=-1):
    """``group<B,E>(x)`` of a tuple, layout or composed layout: modes ``[B, E)`` become one mode (``E = -1``: to the
    end); ``B == E`` leaves ``x`` as it is (CuTe inserts no empty mode). A tensor's modes: ``group_modes``."""
    if _is_tensor(x):
        raise LayoutError("group: CuTe has no group of a tensor; group_modes(tensor, B, E) groups its modes")
    if isinstance(x, (Layout, ComposedLayout)):
        return group_modes(x, begin, end)
    return ta.group(x, begin, end)


def zip(*xs):  # noqa: A001 - CuTe's name
    """``zip(t)`` transposes a tuple of tuples; ``zip(layout)`` zips its shape and stride; ``zip(a, b)`` of two
    layouts zips their shapes and their strides (tuple_algorithms.hpp, layout.hpp)."""
    if len(xs) == 2 and all(isinstance(v, Layout) for v in xs):
        a, b = xs
        return Layout(ta.zip(a.shape, b.shape), ta.zip(a.stride, b.stride))
    if len(xs) == 1:
        return _lift(xs[0], ta.zip, "zip")
    if any(isinstance(v, (Layout, ComposedLayout)) for v in xs):
        raise LayoutError("zip: CuTe zips one layout, one composed layout, or two layouts; got "
                          f"{', '.join(str(v) for v in xs)}")
    return ta.zip(*xs)


def replace(x, y, n):
    """``replace<N>(x, y)``: mode ``N`` of a tuple becomes ``y``; of a layout, the layout ``y``'s shape and stride."""
    if isinstance(x, Layout):
        y = _as_layout(y)
        return Layout(ta.replace(x.shape, y.shape, n), ta.replace(x.stride, y.stride, n))
    return ta.replace(x, y, n)


def _pad(t, x, n, what, front):
    """CuTe's ``append<N>`` / ``prepend<N>`` of a tuple or integer: pad with ``x`` to rank ``N``."""
    r = rank(t)
    if isinstance(n, bool) or not isinstance(n, int) or n < r or (not is_tuple(t) and n < 1):
        raise LayoutError(f"{what}<{n}>({to_str(t)}): N must be at least the rank {r} (CuTe's static_assert); pass "
                          "a larger N")
    if n == r:
        return t
    pad = (x,) * (n - r)
    return pad + wrap(t) if front else wrap(t) + pad


def append(x, y=None, n=None):
    """``append(x, y)`` adds mode ``y`` at the end; ``append<N>(x, y)`` (``n=N``) pads to rank ``N`` with ``y``.
    A layout's ``y`` defaults to ``_1:_0``; a tuple needs ``y``. A composed layout is padded inside (``append<N>``);
    without ``n`` it is a non-tuple to CuTe, so ``append(x, y)`` is the pair ``(x, y)``."""
    if isinstance(x, ComposedLayout) and n is None:
        return (x, y)
    if isinstance(x, ComposedLayout):
        return composition3(x.layout_a, x.offset, append(x.layout_b, y, n))
    if isinstance(x, Layout):
        if n is not None:
            _pad(x.shape, None, n, "append", False)
        return _append_layout(x, y, n)
    if y is None:
        raise LayoutError(f"append({to_str(x)}): appending to a tuple needs the mode to append; pass it")
    return wrap(x) + (y,) if n is None else _pad(x, y, n, "append", False)


def prepend(x, y=None, n=None):
    """``prepend(x, y)`` adds mode ``y`` at the front; ``prepend<N>(x, y)`` (``n=N``) pads to rank ``N``. A layout's
    ``y`` defaults to ``_1:_0``; a tuple needs ``y``."""
    if isinstance(x, Layout):
        y = Layout(Int(1), Int(0)) if y is None else _as_layout(y)
        if n is None:
            return Layout((y.shape,) + wrap(x.shape), (y.stride,) + wrap(x.stride))
        return Layout(_pad(x.shape, y.shape, n, "prepend", True), _pad(x.stride, y.stride, n, "prepend", True))
    if y is None:
        raise LayoutError(f"prepend({to_str(x)}): prepending to a tuple needs the mode to prepend; pass it")
    return (y,) + wrap(x) if n is None else _pad(x, y, n, "prepend", True)
