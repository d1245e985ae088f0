"""Multiply-shift division (tmakit/fastdiv.cuh): the host constants give exact quotients for every dividend below
2^31, and the transpose kernel's tile coordinates through them equal plain division's."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tmakit.kernels import bandwidth as bw
from tmakit.kernels.fastdiv import divide, fast_divisor

N_MAX = (1 << 31) - 1

def _patch(monkeypatch, name, value):
    """Replace ``name`` in every module of the bandwidth package that uses it (the launcher builders)."""
    import sys

    for mod in [m for k, m in sys.modules.items() if k.startswith("tmakit.kernels.bandwidth")]:
        if hasattr(mod, name):
            monkeypatch.setattr(mod, name, value)


@given(st.integers(1, N_MAX), st.integers(0, N_MAX))
@settings(max_examples=3000, deadline=None)
def test_quotient_exact_below_2_31(d, n):
    mul, shr = fast_divisor(d)
    assert mul < 1 << 32 and 0 <= shr < 32
    assert divide(n, mul, shr) == n // d


@pytest.mark.parametrize("d", [1, 2, 3, 5, 7, 63, 64, 65, 127, 128, 129, 1000, 4095, 65535, 65536, 65537,
                               (1 << 30) - 1, 1 << 30, (1 << 30) + 1, N_MAX])
def test_quotient_exact_at_the_edges(d):
    mul, shr = fast_divisor(d)
    for n in {0, 1, d - 1, d, d + 1, 2 * d - 1, 2 * d, N_MAX, N_MAX - 1, N_MAX - d, (N_MAX // d) * d,
              (N_MAX // d) * d - 1}:
        if 0 <= n <= N_MAX:
            assert divide(n, mul, shr) == n // d, (d, n)


@pytest.mark.parametrize("d", [0, -3, 1 << 31])
def test_divisor_out_of_range_is_refused(d):
    with pytest.raises(ValueError, match="divisor"):
        fast_divisor(d)


def _coords_plain(tiles, rank, group, t):
    """tile_coords_t<u32> of transpose.cu, with Python division."""
    c, d0 = [0] * 5, 0
    if group > 0:
        n0, n1 = tiles[0], tiles[1]
        u, t = t % (n0 * n1), t // (n0 * n1)
        g = u // (group * n1)
        local = u - g * group * n1
        w = min(group, n0 - g * group)
        c[0], c[1], d0 = g * group + local % w, local // w, 2
    for d in range(d0, 5):
        if d < rank:
            c[d], t = t % tiles[d], t // tiles[d]
    return c


def _coords_fast(p, t):
    """tile_coords_fast of transpose.cu, with the host's FastDiv constants."""
    tiles, fd = [p.tiles[i] for i in range(5)], [(p.fd[i].mul, p.fd[i].shr) for i in range(9)]
    c, d0 = [0] * 5, 0
    if p.group > 0:
        n0, n1, G = tiles[0], tiles[1], p.group
        q = divide(t, *fd[5])
        u, t = t - q * n0 * n1, q
        g = divide(u, *fd[6])
        local = u - g * G * n1
        w = G if G < n0 - g * G else n0 - g * G
        lq = divide(local, *(fd[7] if w == G else fd[8]))
        c[0], c[1], d0 = g * G + (local - lq * w), lq, 2
    for d in range(d0, 5):
        if d < p.rank:
            q = divide(t, *fd[d])
            c[d], t = t - q * tiles[d], q
    return c


@given(st.integers(1, 3000), st.integers(1, 3000), st.lists(st.integers(1, 300), max_size=3),
       st.sampled_from([0, 1, 3, 4, 16, 32]), st.integers(1, 4), st.integers(-63, 0), st.data())
@settings(max_examples=300, deadline=None)
def test_transpose_tile_coords_fast_equal_plain(p_tiles, q_tiles, rest, group, kq, ragged, data):
    t_ = 64
    sizes = [p_tiles * t_ + ragged, q_tiles * t_ * kq + ragged] + rest  # p, q (slab columns) and rest dims
    if min(sizes[:2]) < 1:
        return
    p = bw._transpose_params(sizes, t_, kq, 1, group)
    if p.ntiles >= 0x7FFFFFFF:
        return
    tiles = [p.tiles[i] for i in range(5)]
    assert math.prod(tiles) == p.ntiles
    for t in {0, p.ntiles - 1, data.draw(st.integers(0, p.ntiles - 1)), data.draw(st.integers(0, p.ntiles - 1))}:
        assert _coords_fast(p, t) == _coords_plain(tiles, p.rank, p.group, t), (sizes, group, t)


def test_stream_params_carry_the_tile_divisors(monkeypatch):
    _patch(monkeypatch, "_kernel", lambda f, n, opts=(): object())
    launch = bw._stream_launcher("stream.cu", "tmakit_stream", [], [1000, 37, 5], [256, 8, 1], 2, 0, 0, -1,
                                 bw.COPY_CONFIG, 132)
    p = launch.params
    for i in range(5):
        assert (p.fd[i].mul, p.fd[i].shr) == fast_divisor(p.tiles[i])
    assert [p.tiles[i] for i in range(5)] == [4, 5, 5, 1, 1]
