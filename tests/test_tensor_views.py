"""Tensors over numpy views alias the user's memory (no hidden copies) and are bounds-checked."""

from __future__ import annotations

import numpy as np
import pytest

import tmakit as tk
from tmakit import emu
from tmakit.layout import LayoutError

CTA_M, CTA_N = 8, 32


def test_transposed_view_aliases_its_array():
    x = np.zeros((3, 4), np.float32)
    t = tk.make_tensor(x.T)
    t[0, 1] = 5
    assert x[1, 0] == 5
    assert str(t.layout) == "(4,3):(1,4)"


def test_stepped_and_reversed_views_keep_their_strides():
    out = np.zeros((8, 4))
    t = tk.make_tensor(out[::2])
    t[1, 2] = 7
    assert out[2, 2] == 7 and str(t.layout) == "(4,4):(8,1)"
    x = np.arange(12.0).reshape(3, 4)
    r = tk.make_tensor(x[::-1, ::-1])
    assert r[0, 0] == 11 and r[2, 3] == 0 and str(r.layout) == "(3,4):(-4,-1)"


def test_views_that_no_layout_describes_are_refused():
    odd = np.ndarray((2,), dtype=np.float32, buffer=np.zeros(16, np.uint8), strides=(6,))
    with pytest.raises(LayoutError, match="not multiples of its 4-byte elements"):
        tk.make_tensor(odd)
    with pytest.raises(LayoutError, match="strided view"):
        tk.make_tensor(np.zeros((4, 4)).T, tk.make_layout((4, 4)))


def test_read_only_views_refuse_writes_by_name():
    t = tk.make_tensor(np.broadcast_to(np.arange(4.0), (3, 4)))
    assert t[2, 3] == 3
    with pytest.raises(LayoutError, match="read-only"):
        t[0, 0] = 1


@pytest.mark.parametrize("crd", [(-1, 0), (0, -1), (3, 0), (0, 4), 12, -1, (0.5, 0)])
def test_array_tensor_indexing_is_bounds_checked(crd):
    t = tk.make_tensor(np.arange(12.0).reshape(3, 4))
    with pytest.raises(LayoutError):
        t[crd]
    with pytest.raises(LayoutError):
        t[crd] = 1.0


def test_layout_over_flat_array_is_bounds_checked():
    t = tk.make_tensor(np.zeros(8, np.float32), tk.make_layout((4, 4)))
    with pytest.raises(LayoutError, match="outside its array of 8 elements"):
        t[3, 3]


def _store_kernel(tma, g):
    s = emu.shared_tensor(tk.make_layout((tk.Int(CTA_M), tk.Int(CTA_N)), tk.LayoutRight), np.float32)
    for i in range(CTA_M):
        for j in range(CTA_N):
            s[(i, j)] = 1 + i * CTA_N + j
    emu.tma_store_fence()
    b = emu.block_idx()
    coord = tk.local_tile(tma.get_tma_tensor(g.shape), (tk.Int(CTA_M), tk.Int(CTA_N)), (b.x, b.y))
    emu.copy(tma, tma.get_slice(0).partition_S(s), tma.get_slice(0).partition_D(coord))
    emu.tma_store_arrive()
    emu.tma_store_wait(0)


@pytest.mark.parametrize("pass_view", [False, True])
def test_tma_store_into_a_stepped_view_lands_in_the_users_array(pass_view):
    out = emu.alloc((2 * CTA_M, CTA_N), np.float32)
    view = out[::2]
    g = tk.make_tensor(view)
    tma = tk.make_tma_copy(tk.SM90_TMA_STORE, g, tk.make_layout((tk.Int(CTA_M), tk.Int(CTA_N)), tk.LayoutRight))
    assert tma.tensormap.global_strides == (2 * CTA_N * 4,)
    emu.unregister(out)  # only what the launch is given is global memory
    emu.launch(_store_kernel, (1, 1, 1), tma, view if pass_view else g)
    want = 1 + np.arange(CTA_M * CTA_N, dtype=np.float32).reshape(CTA_M, CTA_N)
    assert np.array_equal(out[::2], want)
    assert not out[1::2].any()


def test_mode_functions_of_a_tensor_read_its_layout():
    """CuTe's size<I>(tensor), cosize<I>, shape<I>, stride<I>, rank<I>, depth<I> are the layout's, tensor<I> the
    mode's sub-tensor: never an element of the tensor."""
    import numpy as np

    import tmakit as tk

    t = tk.make_tensor(np.arange(24.0).reshape(4, 6) + 100)
    assert (tk.size(t), tk.size(t, 0), tk.size(t, 1), tk.cosize(t, 1)) == (24, 4, 6, 6)
    c = tk.make_identity_tensor((4, (tk.Int(2), 3)))
    assert (tk.size(c, 1), tk.size(c, 1, 1)) == (6, 3)
    # shape / stride / rank / depth / get of a mode: CuTe's shape<I>(t), ..., tensor<I>(t)
    assert (tk.shape(t, 1), tk.stride(t, 1), tk.rank(t, 1), tk.depth(t, 1)) == (6, 1, 1, 0)
    assert (tk.shape(c, 1), tk.rank(c, 1), tk.depth(c, 1)) == ((2, 3), 2, 1)
    assert str(tk.get(c, 1)) == "ArithTuple(_0,(_0,_0)) o (_2,3):(_1@0@1,_1@1@1)"
    assert tk.get(t, 1)(2) == t(0, 2)
