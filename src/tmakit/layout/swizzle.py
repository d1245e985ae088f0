"""``Swizzle<B,M,S>`` and ComposedLayout (``swizzle o offset o layout``), as in CuTe."""

from __future__ import annotations

from .int_tuple import LayoutError, has_underscore, product
from .integer import Int, to_str


class Swizzle:
    """``x ^ ((x & (((1<<B)-1) << (M+S))) >> S)``: XOR B bits taken S bits above bit M into bit M."""

    __slots__ = ("bits", "base", "shift")

    def __init__(self, B: int, M: int, S: int):
        if B < 0 or M < 0 or abs(S) < B:
            raise LayoutError(f"Swizzle<{B},{M},{S}>: need B >= 0, M >= 0 and |S| >= B (bit ranges must not overlap)")
        self.bits, self.base, self.shift = int(B), int(M), int(S)

    def __str__(self):
        return f"Sw<{self.bits},{self.base},{self.shift}>"

    __repr__ = __str__

    def __eq__(self, o):
        return isinstance(o, Swizzle) and (self.bits, self.base, self.shift) == (o.bits, o.base, o.shift)

    def __hash__(self):
        return hash((self.bits, self.base, self.shift))

    @property
    def yyy_mask(self) -> int:
        return ((1 << self.bits) - 1) << (self.base + max(0, self.shift))

    @property
    def zzz_mask(self) -> int:
        return ((1 << self.bits) - 1) << (self.base - min(0, self.shift))

    def __call__(self, x):
        x = int(x)
        y = x & self.yyy_mask
        return x ^ (y >> self.shift if self.shift >= 0 else y << -self.shift)

    def size(self):
        return Int(1 << (self.base + self.bits + abs(self.shift)))

    def cosize(self):
        return self.size()


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
            sub, off = self.layout_b.slice_and_offset(crd)
            return ComposedLayout(self.layout_a, self.offset + off, sub)
        return self.layout_a(self.offset + self.layout_b(crd))

    def slice_and_offset(self, crd):
        """Slices keep the offset inside the composed layout (a swizzle is not translation-invariant)."""
        return self(crd), Int(0)

    def size(self):
        return product(self.layout_b.shape)

    def cosize(self):
        from .layout import cosize

        return cosize(self.layout_b)

    def compose(self, tiler):
        from .algebra import composition

        return ComposedLayout(self.layout_a, self.offset, composition(self.layout_b, tiler))


def make_composed_layout(layout_a, offset, layout_b):
    return ComposedLayout(layout_a, offset, layout_b)


def is_composed(x) -> bool:
    return isinstance(x, ComposedLayout)
