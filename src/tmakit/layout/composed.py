"""CuTe's ComposedLayout (layout_composed.hpp): ``layout_a o offset o layout_b``, and the slicing of swizzled
composed layouts (swizzle_layout.hpp)."""

from __future__ import annotations

from .composition import layout_composition
from .int_tuple import LayoutError, dice, flatten, has_underscore, idx2crd, is_tuple, product, slice_
from .integer import Int, is_underscore, to_str
from .layout import Layout, cosize, make_layout
from .memo import key_by_print
from .swizzle import MixedBits, Swizzle, make_mixed_bits, mixed_and, mixed_xor


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
        return self.layout_b

    def __str__(self):
        return f"{self.layout_a} o {to_str(self.offset)} o {self.layout_b}"

    __repr__ = __str__

    def __eq__(self, o):
        return isinstance(o, ComposedLayout) and str(self) == str(o)

    def __hash__(self):
        return hash(str(self))

    @property
    def shape(self):
        return self.layout_b.shape

    @property
    def stride(self):
        return self.layout_b.stride

    def __len__(self):
        return len(self.layout_b)

    def __getitem__(self, i):
        return ComposedLayout(self.layout_a, self.offset, self.layout_b[i])

    def __call__(self, *coord):
        crd = coord[0] if len(coord) == 1 else tuple(coord)
        if has_underscore(crd):
            return self.slice_and_offset(crd)[0]
        off = self.offset
        return self.layout_a((int(off) if isinstance(off, MixedBits) else off) + self.layout_b(crd))

    def slice_and_offset(self, crd):
        """(sliced layout, pointer offset). A general composed layout keeps the offset inside (``A o O+o o B'``);
        a swizzled one decays to a plain layout where the swizzle allows it (CuTe's swizzle_layout.hpp)."""
        if isinstance(self.layout_a, Swizzle) and not _all_underscore(crd):
            if not has_underscore(crd):  # CuTe composes the swizzle's projections with the empty slice: no such layout
                raise LayoutError(f"slice_and_offset({to_str(crd)}, {self}): a swizzled layout is sliced only with a "
                                  "'_' in the coordinate (CuTe rejects it at compile time)")
            return _swizzle_slice(self, crd)
        sub, off = self.layout_b.slice_and_offset(crd)
        return ComposedLayout(self.layout_a, self.offset + off, sub), Int(0)

    def size(self):
        return product(self.layout_b.shape)

    def cosize(self):
        return cosize(self.layout_b)

    def compose(self, tiler):
        return ComposedLayout(self.layout_a, self.offset, layout_composition(self.layout_b, tiler))


def make_composed_layout(layout_a, offset, layout_b):
    return ComposedLayout(layout_a, offset, layout_b)


def is_composed(x) -> bool:
    return isinstance(x, ComposedLayout)


key_by_print(ComposedLayout)


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
    offset_only_zy = mixed_xor(layout.offset, _to_mixed_bits(diced_only.shape, diced_only.stride,
                                                        idx2crd(dcrd, diced_only.shape)))
    offset_anti_zy = layout_composition(anti_zy, diced)(dcrd)
    sliced_only = layout_composition(only_zy, sliced)
    active = sliced_only(sliced_only.size() - Int(1))
    if type(active) is Int and int(active) & ~int(sw(active)):  # hits Y and Z: not reducible
        return ComposedLayout(sw, offset_only_zy, sliced), offset_anti_zy
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
