"""CuTe's upcast / downcast / recast_layout (layout.hpp, swizzle_layout.hpp, layout_composed.hpp, swizzle.hpp,
pointer_flagged.hpp): re-expressing a layout in wider or narrower elements. Atoms are written in bits and upcast to
the element type; fragments recast smem to uint128_t.

This is layout algebra, so a broken precondition (one CuTe refuses with a static_assert) raises ``LayoutError``.
"""

from __future__ import annotations

from math import gcd

import numpy as np

from ..layout import ArrayPtr, ComposedLayout, Int, Layout, LayoutError, Swizzle, Tensor, ceil_div, make_layout
from ..layout.composed import composition3
from ..layout.int_tuple import flatten, is_tuple
from ..layout.integer import is_constant, is_int, signum, to_str, trunc_div
from ..layout.swizzle import MixedBits, UInt, make_mixed_bits
from .numeric import same_type, sizeof_bits
from .pointers import SmemPtr, SmemPtrFlag, TmemPtr

_U32 = 0xFFFFFFFF


def _factor(n, what):
    if isinstance(n, bool) or not isinstance(n, int) or int(n) < 1:
        raise LayoutError(f"{what}<N>: N must be a positive integer (a template argument in CuTe), got {n!r}; "
                          "pass e.g. 2 for two old elements per new one")
    return int(n)


def _pow2(n, what, sw):
    if n & (n - 1):
        raise LayoutError(f"{what}<{n}>({sw}): a swizzle is rescaled only by a power of two (CuTe's static_assert); "
                          "recast between element types whose widths differ by a power of two")


def _map(shape, stride, fn):
    if is_tuple(shape):
        pairs = [_map(s, d, fn) for s, d in zip(shape, stride)]
        return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
    return fn(shape, stride)


def _up_mode(n):
    def one(s, d):
        if is_constant(0, d):
            return s, d
        if type(d) is Int:
            if int(d) % n and n % int(d):
                raise LayoutError(f"upcast<{n}>: the static stride {d} neither divides nor is a multiple of {n} "
                                  "(CuTe's divisibility static_assert); upcast only layouts whose static strides "
                                  f"are multiples or divisors of {n}")
            a = abs(d)
            return ceil_div(s, ceil_div(Int(n), a)), signum(d) * ceil_div(a, Int(n))
        if not is_int(d):
            raise LayoutError(f"upcast<{n}>: stride {to_str(d)} is not an integer; upcast layouts of integer strides")
        return s, trunc_div(int(d), n)  # dynamic strides are assumed to be multiples of n, as CuTe assumes
    return one


def _down_mode(n):
    def one(s, d):
        if is_constant(1, d) or is_constant(-1, d):
            return s * Int(n), d
        return s, d * Int(n)
    return one


def _has_int1(t):
    return any(_has_int1(v) for v in t) if is_tuple(t) else is_constant(1, t)


def _offset(off, n, up):
    """A static offset rescaled as CuTe's ``upcast<N>`` / ``downcast<N>`` of an integral constant (N is unsigned
    there, so the result is the unsigned ``C<Nu>``: a negative offset wraps modulo 2**32)."""
    what = "upcast" if up else "downcast"
    if isinstance(off, MixedBits):
        _pow2(n, what, off)
        if up:
            if off.s % n or off.f % n:
                raise LayoutError(f"upcast<{n}>: offset {off} has static bits below {n} (CuTe's safe_div "
                                  "static_assert); offset the layout by a multiple of N elements")
            return make_mixed_bits(off.s // n, off.d // n, off.f // n)
        return make_mixed_bits(off.s * n, off.d * n, off.f * n)
    if type(off) in (Int, UInt):
        v = int(off) & _U32
        if up and v % n:
            raise LayoutError(f"upcast<{n}>: the static offset {off} is not a multiple of {n} (CuTe's safe_div "
                              "static_assert); offset the layout by a multiple of N elements")
        return UInt(v // n if up else (v * n) & _U32)
    raise LayoutError(f"{what}<{n}>: the offset {to_str(off)} of a composed layout must be static (CuTe has no "
                      f"{what} of a run-time offset); make it a tk.Int or rescale before offsetting the layout")


def _swizzle(sw: Swizzle, n, up):
    what = "upcast" if up else "downcast"
    _pow2(n, what, sw)
    k = n.bit_length() - 1
    if not up:
        return Swizzle(sw.bits, sw.base + k, sw.shift)
    m = sw.base - k
    return Swizzle(sw.bits, m, sw.shift) if m >= 0 else Swizzle(max(sw.bits + m, 0), 0, sw.shift)


def _rescale(x, n, up):
    what = "upcast" if up else "downcast"
    if isinstance(x, Swizzle):
        return _swizzle(x, n, up)
    if isinstance(x, ComposedLayout):
        b = _rescale(x.layout_b, n, up)
        if isinstance(x.offset, SmemPtrFlag):  # pointer_flagged.hpp: the swizzle stays, the flag's width scales
            return ComposedLayout(x.layout_a, SmemPtrFlag(x.offset.bits * n if up else x.offset.bits // n), b)
        a, off = _rescale(x.layout_a, n, up), _offset(x.offset, n, up)
        return composition3(a, off, b) if type(off) is Int else ComposedLayout(a, off, b)
    if isinstance(x, Layout):
        if not up and not _has_int1(x.stride):
            raise LayoutError(f"downcast<{n}>({x}): the layout has no static stride-1 mode (CuTe's static_assert "
                              "'Downcast requires adjacent elements'); downcast layouts with a _1 stride")
        return make_layout(*_map(x.shape, x.stride, _up_mode(n) if up else _down_mode(n)))
    if type(x) in (Int, UInt) or isinstance(x, MixedBits):
        return _offset(x, n, up)
    raise LayoutError(f"{what}<{n}>: expected a Layout, ComposedLayout, Swizzle or integer offset, got {x!r}")


def upcast(layout, n: int):
    """``upcast<N>(x)``: N old elements become one new element. A layout divides its strides by N (stride-1 modes
    divide their size instead); a swizzle lowers its base by log2(N); a composed layout rescales its three parts
    (an smem_ptr_flag offset keeps its swizzle and widens instead)."""
    return _rescale(layout, _factor(n, "upcast"), True)


def downcast(layout, n: int):
    """``downcast<N>(x)``: one old element becomes N new ones (stride-+-1 sizes * N, other strides * N; a swizzle's
    base rises by log2(N)). A plain layout needs a static stride-1 mode, as in CuTe."""
    return _rescale(layout, _factor(n, "downcast"), False)


def recast_layout(layout, old_type, new_type):
    """``recast_layout<OldType,NewType>(x)``: the same bytes seen as NewType elements (upcast by the reduced
    numerator of the width ratio, then downcast by its denominator)."""
    old, new = sizeof_bits(old_type), sizeof_bits(new_type)
    g = gcd(old, new)
    num, den = new // g, old // g
    if num == 1 and den == 1:
        return layout
    if num == 1:
        return downcast(layout, den)
    if den == 1:
        return upcast(layout, num)
    return downcast(upcast(layout, num), den)


def _element_type(it):
    """The element type of a tensor's iterator (CuTe's ``element_type``): a numpy array's dtype or a pointer's."""
    if isinstance(it, ArrayPtr):
        return it.array.dtype
    if isinstance(it, (SmemPtr, TmemPtr)):
        return it.value_type
    raise LayoutError(f"recast: the tensor's iterator {it} has no element type to reinterpret (a coordinate tensor "
                      "holds coordinates, not bytes); recast a tensor over an array or a smem/tmem pointer")


def _recast_ptr(it, new_type):
    """CuTe's ``recast_ptr<NewType>``: the same address, read as ``new_type`` elements."""
    if isinstance(it, SmemPtr):
        if sizeof_bits(new_type) < 8:  # CuTe's subbyte_iterator
            return SmemPtr(new_type, it.address, it.swizzle, it.bit or 0)
        if it.bit:
            raise LayoutError(f"recast: {it} starts {it.bit} bits into a byte, so no {sizeof_bits(new_type)}-bit "
                              f"element can start there; recast from a byte-aligned element")
        return SmemPtr(new_type, it.address, it.swizzle)
    if isinstance(it, TmemPtr):
        return TmemPtr(new_type, it.address)
    try:
        dtype = np.dtype(new_type)
    except TypeError:
        raise LayoutError(f"recast: {new_type!r} has no numpy dtype, so a numpy-backed tensor cannot be read as it; "
                          "recast to a numpy dtype (np.float16 for half_t)") from None
    old = it.array.dtype.itemsize
    start, n_bytes = it.offset * old, it.array.size * old
    if start % dtype.itemsize:
        raise LayoutError(f"recast: the tensor starts {start} bytes into its array, not a multiple of the "
                          f"{dtype.itemsize}-byte {dtype} (CuTe does not check alignment; numpy cannot view it); "
                          "start the tensor on a multiple of the new element")
    raw = it.array.view(np.uint8)[: n_bytes - n_bytes % dtype.itemsize]
    return ArrayPtr(raw.view(dtype), start // dtype.itemsize)


def _negative_stride_offset(old, new):
    """CuTe's recast offset for an upcast of a layout with negative strides: sum of min((old - new extent) * stride,
    0) over the leaves, so the wider elements still cover the same bytes."""
    out = 0
    for s0, s1, d in zip(flatten(old.shape), flatten(new.shape), flatten(old.stride)):
        if not is_int(d):
            raise LayoutError(f"recast: stride {to_str(d)} is not an integer; recast tensors of integer strides")
        out += min((int(s0) - int(s1)) * int(d), 0)
    return out


def recast(tensor, new_type):
    """CuTe's ``recast<NewType>(tensor)``: the same memory seen as ``new_type`` elements -- the layout through
    ``recast_layout`` and the iterator through ``recast_ptr`` (an upcast of a plain layout with negative strides
    moves the start, as CuTe does). Like CuTe it checks neither dynamic divisibility nor alignment; a numpy-backed
    tensor must start on a whole new element."""
    if not isinstance(tensor, Tensor):
        raise LayoutError(f"recast takes a tensor, got {tensor!r}; recast_layout(layout, old, new) recasts a layout")
    old_type, it = _element_type(tensor.iterator), tensor.iterator
    sizeof_bits(new_type)  # a readable error for a non-type
    if same_type(old_type, new_type):
        return Tensor(it, tensor.layout)
    old_layout = tensor.layout
    new_layout = recast_layout(old_layout, old_type, new_type)
    if _sizeof(old_type) < _sizeof(new_type) and not isinstance(old_layout, ComposedLayout):
        it = it + _negative_stride_offset(old_layout, new_layout)
    return Tensor(_recast_ptr(it, new_type), new_layout)


def _sizeof(t) -> int:
    """C++ ``sizeof(T)`` in bytes (a sub-byte type still occupies one)."""
    return max(1, sizeof_bits(t) // 8)


__all__ = ["upcast", "downcast", "recast_layout", "recast"]
