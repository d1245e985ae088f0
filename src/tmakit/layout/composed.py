"""CuTe's ComposedLayout (layout_composed.hpp): ``layout_a o offset o layout_b``, and the slicing of swizzled
composed layouts (swizzle_layout.hpp)."""

from __future__ import annotations

from .composition import _as_layout, layout_composition
from .int_tuple import LayoutError, dice, flatten, has_underscore, idx2crd, is_tuple, product, slice_
from .integer import Int, is_constant, is_underscore, to_str
from .layout import Layout, cosize, make_layout
from .memo import key_by_print
from .swizzle import (
    MixedBits,
    Swizzle,
    UInt,
    compose_swizzles,
    make_mixed_bits,
    make_swizzle,
    mixed_and,
    mixed_xor,
    signed,
)


class ComposedLayout:
    """``layout_a o offset o layout_b``: ``c -> layout_a(offset + layout_b(c))``."""

    __slots__ = ("layout_a", "offset", "layout_b")

    def __init__(self, layout_a, offset, layout_b):
        self.layout_a, self.offset, self.layout_b = layout_a, offset, layout_b

    @property
    def swizzle(self):
        return self.layout_a

    @property
    def layout(self):
        return self._inner()

    def __str__(self):
        return f"{self.layout_a} o {to_str(self.offset)} o {self.layout_b}"

    __repr__ = __str__

    def __eq__(self, o):
        return isinstance(o, ComposedLayout) and str(self) == str(o)

    def __hash__(self):
        return hash(str(self))

    def _inner(self):
        """``layout_b`` where it is a layout: a swizzle on the right (an inverse's ``L o -off o Sw``) has no shape."""
        if isinstance(self.layout_b, Swizzle):
            raise LayoutError(f"{self} ends in a swizzle, which has no shape, size or modes (CuTe's neither); only "
                              "evaluate it at an offset, or invert the layout before offsetting it")
        return self.layout_b

    @property
    def shape(self):
        return self._inner().shape

    @property
    def stride(self):
        return self._inner().stride

    def __len__(self):
        return len(self._inner())

    def __getitem__(self, i):
        return composition3(self.layout_a, self.offset, self._inner()[i])

    def __call__(self, *coord):
        crd = coord[0] if len(coord) == 1 else tuple(coord)
        if has_underscore(crd):
            return self.slice_and_offset(crd)[0]
        off = self.offset
        return self.layout_a((int(off) if isinstance(off, MixedBits) else off) + self.layout_b(crd))

    def slice_and_offset(self, crd):
        """(sliced layout, pointer offset). A general composed layout keeps the offset inside (``A o O+o o B'``);
        a swizzled one decays to a plain layout where the swizzle allows it (CuTe's swizzle_layout.hpp)."""
        if isinstance(self.layout_a, Swizzle) and _all_underscore(crd):  # CuTe reshapes, keeping the offset as is
            return composition3(self.layout_a, self.offset, self._inner().slice_and_offset(crd)[0]), Int(0)
        if isinstance(self.layout_a, Swizzle):
            if not has_underscore(crd):  # CuTe composes the swizzle's projections with the empty slice: no such layout
                raise LayoutError(f"slice_and_offset({to_str(crd)}, {self}): a swizzled layout is sliced only with a "
                                  "'_' in the coordinate (CuTe rejects it at compile time)")
            return _swizzle_slice(self, crd)
        sub, off = self._inner().slice_and_offset(crd)
        return ComposedLayout(self.layout_a, self.offset + off, sub), Int(0)

    def size(self):
        return product(self.shape)

    def cosize(self):
        return cosize(self._inner())

    def compose(self, *tilers):
        """CuTe's ``layout.compose``: ``composition(self, tiler)``, or by mode for several tilers."""
        return compose(self, tilers[0] if len(tilers) == 1 else tuple(tilers))


def composition3(layout_a, offset, layout_b):
    """CuTe's three-argument composition ``layout_a o offset o layout_b``; a swizzle without bits at a static zero
    offset over a plain layout is that layout (CuTe's identity case), so no no-op swizzle is ever printed."""
    zero = is_constant(0, signed(offset))
    if isinstance(layout_a, Swizzle) and layout_a.bits == 0 and zero and isinstance(layout_b, Layout):
        return layout_b
    return ComposedLayout(layout_a, offset, layout_b)


def compose(a, b):
    """CuTe's composition ``a o b`` where either side may be a swizzle or a composed layout (the plain case goes to
    layout_composition): ``Sw o L``, ``Sw o Sw``, ``(A o off o B) o t``, ``L o Sw`` and ``L o (Sw o 0 o B)``."""
    if isinstance(a, Swizzle):
        return compose_swizzles(a, b) if isinstance(b, Swizzle) else composition3(a, Int(0), _as_layout(b))
    if isinstance(a, ComposedLayout):
        return composition3(a.layout_a, a.offset, compose(a.layout_b, b))
    a = _as_layout(a)
    if isinstance(b, Swizzle):
        return _layout_o_swizzle(a, b)
    if isinstance(b, ComposedLayout):
        if not is_constant(0, signed(b.offset)):
            raise LayoutError(f"composition({a}, {b}): a layout composes with a composed layout only at a static zero "
                              f"offset, got {to_str(b.offset)} (CuTe's static_assert); compose before offsetting it")
        return compose(compose(a, b.layout_a), b.layout_b)
    return layout_composition(a, b)


def _layout_o_swizzle(a: Layout, sw: Swizzle):
    """CuTe's ``composition(Layout, Swizzle)``: the swizzle's Y and Z bits are carried through ``a`` and the swizzle
    they make is put on the left, ``Sw' o 0 o a``. That equals ``a o Sw`` where ``a`` maps those bits onto bits in
    order (CuTe checks only that they form a swizzle)."""
    y, z = a(Int(sw.yyy_mask)), a(Int(sw.zzz_mask))
    if type(y) is not Int or type(z) is not Int:
        raise LayoutError(f"composition({a}, {sw}): the swizzle's bits map to {to_str(y)} and {to_str(z)} through the "
                          "layout, which CuTe needs as static integers; make the layout's shape and strides static")
    try:
        return composition3(make_swizzle(int(y), int(z)), Int(0), a)
    except LayoutError as e:
        raise LayoutError(f"composition({a}, {sw}): {e}") from None


def make_composed_layout(layout_a, offset, layout_b):
    return ComposedLayout(layout_a, offset, layout_b)


def is_composed(x) -> bool:
    return isinstance(x, ComposedLayout)


def _memo_key(x) -> str:
    """The print, with CuTe's unsigned offsets marked: ``_512`` and ``C<512u>`` print alike but negate differently."""
    if not isinstance(x, ComposedLayout):
        return str(x)
    mark = "u" if type(x.offset) is UInt else ""
    return f"{_memo_key(x.layout_a)} o {to_str(x.offset)}{mark} o {_memo_key(x.layout_b)}"


key_by_print(ComposedLayout, _memo_key)


def _to_mixed_bits(shape, stride, coord):
    if is_tuple(shape):
        out = Int(0)
        for s, d, c in zip(shape, stride, coord):
            out = mixed_xor(out, _to_mixed_bits(s, d, c))
        return out
    f = (shape - Int(1)) * stride
    if type(f) is not Int:
        raise LayoutError(f"slicing a swizzled layout needs static shapes and strides, got {shape}:{stride}")
    return make_mixed_bits(0, coord * stride, int(f))


def _all_underscore(crd):
    return all(is_underscore(c) for c in flatten(crd)) if is_tuple(crd) else is_underscore(crd)


def _swizzle_slice(layout: ComposedLayout, crd):
    """CuTe's slice_and_offset for ``Swizzle o offset o layout``: keep the swizzle where the sliced modes touch both
    its Y and Z bits, otherwise fold it into a plain layout whose strides are (possibly dynamic) +-Z, Y+-Z."""
    sw, b_lay = layout.layout_a, layout.layout_b
    B, M, S = sw.bits, sw.base, abs(sw.shift)
    shp = (Int(1 << M), Int(1 << B), Int(1 << (S - B)), Int(1 << B), Int(1))
    full = make_layout(shp)
    anti_zy = Layout(shp, (full.stride[0], Int(0), full.stride[2], Int(0), product(shp)))
    only_zy = Layout(shp, (Int(0), full.stride[1], Int(0), full.stride[3], Int(0)))
    sliced = Layout(slice_(crd, b_lay.shape), slice_(crd, b_lay.stride))
    diced = Layout(dice(crd, b_lay.shape), dice(crd, b_lay.stride))
    dcrd = dice(crd, crd)
    diced_only = layout_composition(only_zy, diced)
    diced_bits = _to_mixed_bits(diced_only.shape, diced_only.stride, idx2crd(dcrd, diced_only.shape))
    offset_only_zy = mixed_xor(signed(layout.offset), diced_bits)
    offset_anti_zy = layout_composition(anti_zy, diced)(dcrd)
    sliced_only = layout_composition(only_zy, sliced)
    active = sliced_only(sliced_only.size() - Int(1))
    if type(active) is Int and int(active) & ~int(sw(active)):  # hits Y and Z: not reducible
        kept = UInt(offset_only_zy) if type(offset_only_zy) is Int else offset_only_zy  # CuTe's C<Nu>
        return ComposedLayout(sw, kept, sliced), offset_anti_zy
    z, y = sw.zzz_mask & -sw.zzz_mask, sw.yyy_mask & -sw.yyy_mask
    lo = _swizzle_strides(z < y, z, y, offset_only_zy, B)
    hi = _swizzle_strides(z > y, z, y, offset_only_zy, B)
    two = (Int(2),) * B if B > 1 else Int(2)
    swl = Layout((Int(1 << M), two, Int(1 << (S - B)), two, Int(1)),
                 (Int(1), lo, Int(1 << (M + B)), hi, Int(1 << (M + B + S))))
    return layout_composition(swl, sliced), sw(offset_only_zy) + offset_anti_zy


def _swizzle_strides(z_bits: bool, z: int, y: int, offset, B: int):
    """CuTe's detail::make_swizzle_strides: static where the offset's deciding bit is static."""
    out = []
    for i in range(B):
        bit = mixed_and(offset, (y if z_bits else z) << i)
        yes, no = ((z << i, -z << i) if z_bits else ((y + z) << i, (y - z) << i))
        pick = yes if int(bit) == 0 else no
        out.append(Int(pick) if type(bit) is Int else pick)
    return tuple(out) if B > 1 else out[0]
