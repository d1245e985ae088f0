"""tmakit.memory_overlap: exact aliasing answers, checked against listing every byte of small strided views."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tmakit.memory_overlap import Region, byte_extent, relation, self_overlap


def _bytes(r: Region) -> set:
    out = set()
    for idx in itertools.product(*(range(n) for n in r.shape)):
        off = r.ptr + sum(i * s for i, s in zip(idx, r.strides))
        out.update(range(off, off + r.elem))
    return out


def _shares_a_byte_twice(r: Region) -> bool:
    seen = set()
    for idx in itertools.product(*(range(n) for n in r.shape)):
        off = r.ptr + sum(i * s for i, s in zip(idx, r.strides))
        b = set(range(off, off + r.elem))
        if b & seen:
            return True
        seen |= b
    return False


@st.composite
def regions(draw, elem=None):
    e = elem or draw(st.sampled_from([1, 2, 4, 8]))
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(0, 5)) for _ in range(rank))
    strides = tuple(e * draw(st.integers(-12, 12)) + draw(st.sampled_from([0, 0, 0, 1])) for _ in range(rank))
    return Region(draw(st.integers(0, 96)), shape, strides, e)


@settings(max_examples=400, deadline=None)
@given(regions(), regions())
def test_relation_matches_listing_every_byte(a, b):
    got = relation(a, b)
    shared = bool(_bytes(a) & _bytes(b))
    if got == "same":
        assert a == b and shared
    else:
        assert got == ("overlap" if shared else "disjoint"), (a, b)


@settings(max_examples=400, deadline=None)
@given(regions())
def test_self_overlap_matches_listing_every_byte(r):
    assert self_overlap(r) == _shares_a_byte_twice(r), r


@settings(max_examples=200, deadline=None)
@given(regions())
def test_byte_extent_bounds_every_byte(r):
    lo, hi = byte_extent(r.shape, r.strides, r.elem)
    b = _bytes(r)
    assert (lo, hi) == ((min(b) - r.ptr, max(b) + 1 - r.ptr) if b else (0, 0))


def test_column_blocks_and_interleaved_columns_of_one_matrix_are_disjoint():
    n, e = 4096, 2  # a (n, 2n) bf16 matrix at address 1 << 30
    row = 2 * n * e
    left = Region(1 << 30, (n, 64), (row, e), e)
    right = Region((1 << 30) + 64 * e, (n, 64), (row, e), e)
    assert relation(left, right) == "disjoint"
    even = Region(1 << 30, (n, n), (row, 2 * e), e)
    odd = Region((1 << 30) + e, (n, n), (row, 2 * e), e)
    assert relation(even, odd) == "disjoint"
    shifted = Region((1 << 30) + 63 * e, (n, 64), (row, e), e)
    assert relation(left, shifted) == "overlap"


def test_a_transposed_view_of_the_same_square_overlaps():
    x = Region(4096, (512, 512), (1024, 2), 2)
    assert relation(x, Region(4096, (512, 512), (2, 1024), 2)) == "overlap"
    assert relation(x, x) == "same"


def test_huge_disjoint_allocations_answer_from_the_extents():
    a = Region(1 << 40, (1 << 20, 1 << 12), (1 << 14, 4), 4)  # 16 GiB
    assert relation(a, Region((1 << 40) + (1 << 34), (1 << 20, 1 << 12), (1 << 14, 4), 4)) == "disjoint"


def test_hard_layouts_answer_unknown_or_exactly():
    a = Region(0, (1000, 1000, 1000), (6, 10, 15), 1)
    b = Region(7, (1000, 1000, 1000), (6, 10, 15), 1)
    assert relation(a, b) in ("overlap", "unknown")  # 7 = 6*2 + 10*1 - 15*1: they share bytes, never "disjoint"
    big = Region(0, (2000, 2000), (3, 5), 1)  # not nested, 4e6 elements: too many to list
    assert self_overlap(big) is None
    assert self_overlap(Region(0, (3, 1000), (1, 3), 1)) is False  # nested
    assert self_overlap(Region(0, (4, 4), (1, 1), 1)) is True
    assert self_overlap(Region(0, (4, 1), (0, 7), 4)) is True  # a broadcast dim


def test_region_of_a_numpy_like_tensor():
    torch = pytest.importorskip("torch")
    x = torch.zeros(6, 8, dtype=torch.float32)[:, 2:5]
    r = Region.of(x)
    assert r == Region(x.data_ptr(), (6, 3), (32, 4), 4)
    assert byte_extent(r.shape, r.strides, r.elem) == (0, 5 * 32 + 3 * 4)
