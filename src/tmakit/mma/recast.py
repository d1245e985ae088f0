"""CuTe's upcast / downcast / recast_layout (layout.hpp, pointer_flagged.hpp): re-expressing a layout in wider or
narrower elements. Atoms are written in bits and upcast to the element type; fragments recast smem to uint128_t."""

from __future__ import annotations

from ..layout import ComposedLayout, Int, Swizzle, ceil_div, make_layout
from ..layout.int_tuple import is_tuple
from ..layout.integer import is_constant, signum
from .numeric import sizeof_bits
from .pointers import SmemPtrFlag


def _map(shape, stride, fn):
    if is_tuple(shape):
        pairs = [_map(s, d, fn) for s, d in zip(shape, stride)]
        return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
    return fn(shape, stride)


def _up(n):
    def one(s, d):
        if is_constant(0, d):
            return s, d
        if type(d) is Int:
            if int(d) % n and n % int(d):
                raise ValueError(f"upcast<{n}>: stride {d} neither divides nor is divided by {n}")
            a = Int(abs(int(d)))
            return ceil_div(s, ceil_div(Int(n), a)), signum(d) * ceil_div(a, Int(n))
        return s, d // n  # dynamic strides are assumed to be multiples of n (as CuTe assumes)
    return one


def _down(n):
    def one(s, d):
        if is_constant(1, d) or is_constant(-1, d):
            return s * Int(n), d
        return s, d * Int(n)
    return one


def upcast(layout, n: int):
    """``upcast<N>(layout)``: N old elements become one new element (strides / N, stride-1 sizes / N)."""
    if isinstance(layout, ComposedLayout):
        return _composed(layout, upcast(layout.layout_b, n), lambda b: b * n)
    return make_layout(*_map(layout.shape, layout.stride, _up(int(n))))


def downcast(layout, n: int):
    """``downcast<N>(layout)``: one old element becomes N new ones (stride-1 sizes * N, other strides * N)."""
    if isinstance(layout, ComposedLayout):
        return _composed(layout, downcast(layout.layout_b, n), lambda b: b // n)
    return make_layout(*_map(layout.shape, layout.stride, _down(int(n))))


def _composed(layout: ComposedLayout, inner, scale_bits):
    off = layout.offset
    if not isinstance(off, SmemPtrFlag):
        raise ValueError(f"recasting {layout} needs an smem_ptr_flag offset (a UMMA/GMMA layout atom)")
    return ComposedLayout(layout.layout_a, SmemPtrFlag(scale_bits(off.bits)), inner)


def recast_layout(layout, old_type, new_type):
    """``recast_layout<OldType,NewType>(layout)``: the same bytes seen as NewType elements."""
    old, new = sizeof_bits(old_type), sizeof_bits(new_type)
    if old == new:
        return layout
    if new % old == 0:
        return upcast(layout, new // old)
    if old % new == 0:
        return downcast(layout, old // new)
    from math import gcd

    g = gcd(old, new)
    return downcast(upcast(layout, new // g), old // g)


def recast_swizzle(sw: Swizzle, old_bits: int, new_bits: int) -> Swizzle:
    """A swizzle on old_bits-wide units re-expressed on new_bits-wide units (base shifts by log2 of the ratio)."""
    if new_bits >= old_bits:
        return Swizzle(sw.bits, sw.base - ((new_bits // old_bits).bit_length() - 1), sw.shift)
    return Swizzle(sw.bits, sw.base + ((old_bits // new_bits).bit_length() - 1), sw.shift)


__all__ = ["upcast", "downcast", "recast_layout"]
