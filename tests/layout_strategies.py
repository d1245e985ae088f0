"""Hypothesis strategies and helpers shared by the layout property and pycute differential tests.

A generated layout is a ``Spec``: flat (shape, stride) modes, a nesting profile and a static mask. From one spec we
build the same layout for tmakit (leaves marked static become ``tk.Int``) and for pycute (plain ints). Shape-1
leaves are always static: CuTe cannot drop a dynamic ``1`` it does not know (see ``Spec.static_ones``).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np
from hypothesis import strategies as st

import tmakit as tk

POW2 = [1, 2, 4, 8]
GENERAL = [1, 2, 3, 4, 5, 6, 8]


@dataclass(frozen=True)
class Spec:
    shape: tuple  # flat
    stride: tuple  # flat
    profile: object  # nesting: nested tuples of leaf positions, or an int for a rank-1 leaf
    static_shape: tuple
    static_stride: tuple

    def nest(self, flat, static=None):
        def build(p):
            if isinstance(p, tuple):
                return tuple(build(q) for q in p)
            v = flat[p]
            return tk.Int(v) if static is not None and static[p] else v

        return build(self.profile)

    def tk(self):
        return tk.make_layout(self.nest(self.shape, self.static_shape), self.nest(self.stride, self.static_stride))

    def py(self):
        import pycute

        return pycute.Layout(self.nest(self.shape), self.nest(self.stride))

    def static_ones(self):
        """The same spec with every shape-1 leaf static: CuTe filters a static ``_1`` but must keep a dynamic ``1``
        (it cannot know its value), which pycute, knowing all values, does not model."""
        mask = tuple(m or v == 1 for m, v in zip(self.static_shape, self.shape))
        return Spec(self.shape, self.stride, self.profile, mask, self.static_stride)

    @property
    def size(self):
        return prod(self.shape)

    @property
    def cosize(self):
        return sum((s - 1) * abs(d) for s, d in zip(self.shape, self.stride)) + 1

    @property
    def extent(self):
        """``max(shape * stride)``: for an injective chain layout, the span its complement starts above."""
        return max(s * d for s, d in zip(self.shape, self.stride))

    @property
    def all_static(self):
        return all(self.static_shape) and all(self.static_stride)


@st.composite
def profiles(draw, n: int, max_depth: int = 3):
    """A random nesting of leaves ``0..n-1`` (an int when ``n == 1`` and no wrapping is drawn)."""

    def group(lo, hi, depth):
        if hi - lo == 1 and (depth >= max_depth or not draw(st.booleans())):
            return lo
        if depth >= max_depth:
            return tuple(range(lo, hi))
        cuts = sorted(draw(st.sets(st.integers(lo + 1, hi - 1), max_size=hi - lo - 1))) if hi - lo > 1 else []
        bounds = [lo, *cuts, hi]
        return tuple(group(a, b, depth + 1) for a, b in zip(bounds, bounds[1:]))

    if n == 1 and not draw(st.booleans()):
        return 0
    return group(0, n, 1)


@st.composite
def static_masks(draw, n: int, mode: str):
    """``mode``: 'static' (all static), 'dynamic' (none) or 'mixed' (each leaf drawn)."""
    if mode == "static":
        return (True,) * n
    if mode == "dynamic":
        return (False,) * n
    return tuple(draw(st.booleans()) for _ in range(n))


@st.composite
def shapes(draw, values=POW2, min_leaves=1, max_leaves=4, max_size=256):
    n = draw(st.integers(min_leaves, max_leaves))
    leaves = [draw(st.sampled_from(values)) for _ in range(n)]
    while prod(leaves) > max_size:
        leaves[leaves.index(max(leaves))] = 1
    return tuple(leaves)


@st.composite
def injective_specs(draw, values=POW2, max_leaves=4, max_size=256, gaps=True, shape_static="mixed",
                    stride_static="static", factor=1):
    """Injective layouts whose sorted modes satisfy CuTe's complement divisibility: each stride is a multiple of
    the previous mode's ``shape * stride`` (a random permutation of a compact layout, with optional gaps).
    With ``factor``, the size is a multiple of it (it is split into up to two extra leaves)."""
    shape = list(draw(shapes(values, 1, max_leaves, max(1, max_size // factor))))
    if factor > 1:
        d = draw(st.sampled_from([k for k in range(1, factor + 1) if factor % k == 0]))
        for leaf in (d, factor // d):
            if leaf > 1 or not shape:
                shape.insert(draw(st.integers(0, len(shape))), leaf)
    shape = tuple(shape)
    order = draw(st.permutations(range(len(shape))))
    stride, cur = [0] * len(shape), 1
    for i in order:
        cur *= draw(st.sampled_from([1, 1, 2, 4] if gaps and values is POW2 else [1, 1, 2, 3] if gaps else [1]))
        stride[i] = cur
        cur *= shape[i]
    n = len(shape)
    return Spec(shape, tuple(stride), draw(profiles(n)), draw(static_masks(n, shape_static)),
                draw(static_masks(n, stride_static))).static_ones()


@st.composite
def any_specs(draw, values=POW2, max_leaves=4, max_size=256, max_stride=32, shape_static="mixed",
              stride_static="mixed"):
    """Any layout: arbitrary non-negative strides (zeros and overlaps included)."""
    shape = draw(shapes(values, 1, max_leaves, max_size))
    stride = tuple(draw(st.integers(0, max_stride)) for _ in shape)
    n = len(shape)
    return Spec(shape, stride, draw(profiles(n)), draw(static_masks(n, shape_static)),
                draw(static_masks(n, stride_static))).static_ones()


def flat(t):
    if isinstance(t, tuple):
        return tuple(x for v in t for x in flat(v))
    return (t,)


def plain(t):
    """Static ints to plain ints, recursively (for comparing shapes with pycute)."""
    if isinstance(t, tuple):
        return tuple(plain(v) for v in t)
    return int(t)


def values(layout) -> np.ndarray:
    """The layout's function on its whole domain ``[0, size)`` as an array (independent of Layout.__call__)."""
    shp, strd = flat(layout.shape), flat(layout.stride)
    idx = np.arange(prod(int(s) for s in shp), dtype=np.int64)
    out, pre = np.zeros_like(idx), 1
    for s, d in zip(shp, strd):
        out += ((idx // pre) % int(s)) * int(d)
        pre *= int(s)
    return out


def size(layout) -> int:
    return prod(int(s) for s in flat(layout.shape))


def _flat_coalesced(layout):
    """Static flat (shape, stride) modes with size-1 modes dropped and contiguous neighbours merged."""
    modes = []
    for s, d in zip(flat(layout.shape), flat(layout.stride)):
        s, d = int(s), int(d)
        if s == 1:
            continue
        if modes and modes[-1][0] * modes[-1][1] == d:
            modes[-1] = (modes[-1][0] * s, modes[-1][1])
        else:
            modes.append((s, d))
    return modes or [(1, 0)]


def admissible(a, b) -> bool:
    """Whether ``composition(a, b)`` is exact: every mode of ``b`` must start at a stride that divides (or is a
    multiple of) the prefix sizes of ``a``'s coalesced modes and then cover whole pieces of them -- the strong form
    of CuTe's divisibility conditions (CuTe itself checks only a weaker, static form)."""
    shapes_a = [s for s, _d in _flat_coalesced(a)]
    for n, d in zip((int(s) for s in flat(b.shape)), (int(d) for d in flat(b.stride))):
        if n == 1 or d == 0:
            continue
        i, r = 0, d
        while i < len(shapes_a) - 1 and r % shapes_a[i] == 0:
            r //= shapes_a[i]
            i += 1
        if i == len(shapes_a) - 1:
            continue  # the last mode of a extends without bound
        if shapes_a[i] % r:
            return False
        avail = shapes_a[i] // r
        while n > 1 and i < len(shapes_a) - 1:
            if n % avail == 0:
                n //= avail
                i += 1
                avail = shapes_a[i]
            elif avail % n == 0:
                n = 1
            else:
                return False
    return True
