"""make_im2col_tma_copy (CuTe's copy_traits_sm90_im2col.hpp): argument handling, refusals, and an emulator round
trip of conv activations against a numpy im2col (the prints themselves: tests/test_tma_oracle.py)."""

import numpy as np
import pytest

import tmakit as tk
from tmakit import emu
from tmakit.tma.make_im2col_tma_copy import im2col_coord

I = tk.Int  # noqa: E741


def k_sw128(dtype, m, k):
    return tk.tile_to_shape(tk.GMMA.Layout_K_SW128_Atom(dtype), (I(m), I(k)))


def activation(shape_nhwc, dtype=tk.half_t, address=0x10000):
    """((w,h,n), c) over a packed NHWC tensor (channel stride _1), as CUTLASS's fprop builds it."""
    *nhw, c = shape_nhwc
    whn = tuple(reversed(nhw[1:])) + (nhw[0],)
    strides, s = [], c
    for x in whn:
        strides.append(s)
        s *= x
    return tk.make_tensor(tk.make_gmem_ptr(dtype, address), tk.make_layout((whn, c), (tuple(strides), I(1))))


def fprop(filt, pad, stride=None, dil=None):
    n = len(filt)
    stride, dil = stride or (1,) * n, dil or (1,) * n
    return (tuple(-p for p in pad), tuple(p - (f - 1) * d for p, f, d in zip(pad, filt, dil)),
            tuple(pad), tuple(pad), tuple(stride), (0,) * n, tuple(dil))


def test_overloads_fill_cute_defaults():
    g, s = activation((2, 8, 8, 64)), k_sw128(tk.half_t, 64, 64)
    a = tk.make_im2col_tma_copy(tk.SM90_TMA_LOAD_IM2COL, g, s)
    b = tk.make_im2col_tma_copy(tk.SM90_TMA_LOAD_IM2COL, g, s, (I(64), I(64)), I(1))
    c = tk.make_im2col_tma_copy("SM90_TMA_LOAD_IM2COL", g, s, (0, 0), (0, 0), (0, 0), (0, 0), (1, 1), (0, 0), (1, 1))
    assert a.tensormap == b.tensormap == c.tensormap
    assert a.tensormap.mode == "im2col" and a.tensormap.channels_per_pixel == 64
    assert a.tensormap.pixels_per_column == 64 and a.tensormap.global_dim == (64, 8, 8, 2)
    assert "_1@0@1" in str(a.get_tma_tensor(None)) and "1@0@1" in str(c.get_tma_tensor(None))  # static vs dynamic
    assert tk.SM90_TMA_LOAD_IM2COL.ptx.count(".im2col.") == 1
    assert "im2col_no_offs" in tk.SM90_TMA_STORE_IM2COL.ptx


def test_multicast_splits_the_pixels():
    g, s = activation((2, 16, 16, 64)), k_sw128(tk.half_t, 128, 64)
    tma = tk.make_im2col_tma_copy(tk.SM90_TMA_LOAD_IM2COL_MULTICAST, g, s, (I(128), I(64)), I(4),
                                  *fprop((3, 3), (1, 1)))
    assert (tma.tensormap.channels_per_pixel, tma.tensormap.pixels_per_column) == (64, 32)
    assert tma.tensormap.pixel_box_lower_corner == (-1, -1) and tma.tensormap.pixel_box_upper_corner == (-1, -1)


@pytest.mark.parametrize("args, rule", [
    ((tk.SM90_TMA_LOAD, None), "copy.op"),
    ((tk.SM90_TMA_LOAD_IM2COL, (I(64), I(64)), I(2)), "multicast.op"),
    ((tk.SM90_TMA_LOAD_IM2COL_MULTICAST, (I(64), I(64)), I(3)), "multicast.split"),
    ((tk.SM90_TMA_LOAD_IM2COL_MULTICAST, (I(64), I(64)), 2), "multicast.size"),
    ((tk.SM90_TMA_LOAD_IM2COL, (I(128), I(64))), "smem.tile"),
    ((tk.SM90_TMA_LOAD_IM2COL, (0, 0), (0, 0), (0, 0), (0, 0)), "im2col.arguments"),
    ((tk.SM90_TMA_LOAD_IM2COL, (0,), (0, 0), (0, 0), (0, 0), (1, 1), (0, 0), (1, 1)), "im2col.spatial"),
])
def test_refusals_name_the_rule(args, rule):
    g, s = activation((2, 8, 8, 64)), k_sw128(tk.half_t, 64, 64)
    op, *rest = args
    rest = [] if rest == [None] else rest
    with pytest.raises(tk.TmaError) as e:
        tk.make_im2col_tma_copy(op, g, s, *rest)
    assert rule in str(e.value)


def test_smem_without_two_unit_modes_is_refused():
    g = activation((2, 8, 8, 32))
    s = tk.make_layout((I(64), (I(2), I(16))), (I(32), (I(16), I(1))))
    with pytest.raises(tk.TmaError, match="at least 2 modes"):
        tk.make_im2col_tma_copy(tk.SM90_TMA_LOAD_IM2COL, g, s)


def test_driver_rules_still_apply():
    """CuTe's host code encodes whatever it gets; tmakit validates the descriptor as the driver would."""
    g = activation((1, 8, 8, 512))
    s = tk.make_layout((I(32), I(512)), tk.LayoutRight)  # channelsPerPixel 512 > 256
    with pytest.raises(tk.TmaError):
        tk.make_im2col_tma_copy(tk.SM90_TMA_LOAD_IM2COL, g, s, (0, 0), (0, 0), (0, 0), (0, 0), (1, 1), (0, 0), (1, 1))


def numpy_im2col(x, filt, pad, stride, dil):
    """A[(q,p,n), (c,s,r)] of an NHWC activation (zero padding), q (W) fastest, c fastest."""
    n, h, w, c = x.shape
    fs, fr = filt
    q_n = (w + 2 * pad[0] - (fs - 1) * dil[0] - 1) // stride[0] + 1
    p_n = (h + 2 * pad[1] - (fr - 1) * dil[1] - 1) // stride[1] + 1
    out = np.zeros((q_n * p_n * n, c * fs * fr), x.dtype)
    for b in range(n):
        for p in range(p_n):
            for q in range(q_n):
                row = q + q_n * (p + p_n * b)
                for r in range(fr):
                    for s_ in range(fs):
                        hh = p * stride[1] - pad[1] + r * dil[1]
                        ww = q * stride[0] - pad[0] + s_ * dil[0]
                        if 0 <= hh < h and 0 <= ww < w:
                            out[row, (s_ + fs * r) * c:(s_ + fs * r + 1) * c] = x[b, hh, ww]
    return out


@pytest.mark.parametrize("shape, filt, pad, stride, dil", [
    ((2, 6, 6, 64), (3, 3), (1, 1), (1, 1), (1, 1)),
    ((1, 9, 7, 64), (3, 3), (1, 1), (2, 2), (1, 1)),
    ((1, 8, 8, 64), (3, 3), (2, 2), (1, 1), (2, 2)),
    ((2, 4, 5, 64), (1, 1), (0, 0), (1, 1), (1, 1)),
    ((1, 5, 6, 128), (3, 3), (1, 1), (1, 1), (1, 1)),  # a 128-wide K tile: two im2col loads (c = 0, 64) per tile
])
def test_emulated_loads_match_numpy_im2col(shape, filt, pad, stride, dil):
    n, h, w, c = shape
    bm, bk = 64, min(c, 128)
    x = emu.alloc(shape, np.float16, align=1024)
    x[:] = (np.random.default_rng(5).standard_normal(shape) * 8).astype(np.float16)
    g = tk.Tensor(tk.make_tensor(x).iterator, tk.make_layout(((w, h, n), c), ((c, w * c, h * w * c), I(1))))
    # the 128-byte swizzle on element offsets (Swizzle<3,3,3> for 16-bit), as the emulator's shared tensors read it
    s_layout = tk.tile_to_shape(tk.composition(tk.Swizzle(3, 3, 3), tk.make_layout((I(8), I(64)), tk.LayoutRight)),
                                (I(bm), I(bk)))
    conv = fprop(filt, pad, stride, dil)
    tma = tk.make_im2col_tma_copy(tk.SM90_TMA_LOAD_IM2COL, g, s_layout, (I(bm), I(bk)), *conv)
    want = numpy_im2col(np.asarray(x), filt, pad, stride, dil)
    m_tiles, k_tiles = -(-want.shape[0] // bm), want.shape[1] // bk
    got = np.zeros((m_tiles * bm, want.shape[1]), np.float16)
    m_t = tma.get_tma_tensor(g.layout.shape)

    def kernel(x):
        sm, bar = emu.shared_tensor(s_layout, np.float16), emu.shared_barrier()
        emu.initialize_barrier(bar, 1)
        phase = 0
        for mi in range(m_tiles):
            for ki in range(k_tiles):
                emu.set_barrier_transaction_bytes(bar, bm * bk * 2)
                thr = tma.get_slice(0)
                g_t = tk.local_tile(m_t, (I(bm), I(bk)), (mi, ki))
                emu.copy(tma.with_(bar), thr.partition_S(g_t), thr.partition_D(sm))
                emu.wait_barrier(bar, phase)
                phase ^= 1
                for i in range(bm):
                    for j in range(bk):
                        got[mi * bm + i, ki * bk + j] = sm[(i, j)]

    emu.launch(kernel, (1,), x)
    emu.unregister(x)
    assert np.array_equal(got[:want.shape[0]], want)
    assert not got[want.shape[0]:].any()  # pixels past the last image read as the OOB fill (zero)


def test_partition_coordinate_is_the_instruction_coordinate():
    g, s = activation((2, 16, 16, 64)), k_sw128(tk.half_t, 128, 64)
    tma = tk.make_im2col_tma_copy(tk.SM90_TMA_LOAD_IM2COL, g, s, *fprop((3, 3), (1, 1)))
    g_t = tk.local_tile(tma.get_tma_tensor(None), (I(128), I(64)), (2, 4))
    coord = im2col_coord(tma.get_slice(0).partition_S(g_t))
    assert str(coord) == "(0,(-1,-1),1,(1,1))"  # c 0, pixel 256 = (w 0, h 0) of image 1, filter tap (s 1, r 1)


def test_emulated_multicast_load_fills_both_ctas():
    """SM90_TMA_LOAD_IM2COL_MULTICAST over a 2-CTA cluster: each CTA loads half the pixels for both; both smem tiles
    hold the whole im2col tile."""
    n, h, w, c = 1, 8, 8, 64
    x = emu.alloc((n, h, w, c), np.float16, align=1024)
    x[:] = (np.random.default_rng(9).standard_normal(x.shape) * 8).astype(np.float16)
    g = tk.Tensor(tk.make_tensor(x).iterator, tk.make_layout(((w, h, n), c), ((c, w * c, h * w * c), I(1))))
    s_layout = tk.tile_to_shape(tk.composition(tk.Swizzle(3, 3, 3), tk.make_layout((I(8), I(64)), tk.LayoutRight)),
                                (I(64), I(64)))
    tma = tk.make_im2col_tma_copy(tk.SM90_TMA_LOAD_IM2COL_MULTICAST, g, s_layout, (I(64), I(64)), I(2),
                                  *fprop((3, 3), (1, 1)))
    assert tma.tensormap.pixels_per_column == 32
    want = numpy_im2col(np.asarray(x), (3, 3), (1, 1), (1, 1), (1, 1))[:, 4 * c:5 * c]  # K tile 4: tap (s 1, r 1)
    got = np.zeros((2, 64, 64), np.float16)
    m_t = tma.get_tma_tensor(None)

    def kernel(x):
        rank = emu.block_rank_in_cluster()
        sm, bar = emu.shared_tensor(s_layout, np.float16), emu.shared_barrier()
        emu.initialize_barrier(bar, 1)
        emu.fence_barrier_init()
        emu.set_barrier_transaction_bytes(bar, 64 * 64 * 2)
        emu.cluster_sync()
        g_t = tk.local_tile(m_t, (I(64), I(64)), (0, 4))
        thr = tma.get_slice(rank)
        emu.copy(tma.with_(bar, 0b11), thr.partition_S(g_t), thr.partition_D(sm))
        emu.wait_barrier(bar, 0)
        for i in range(64):
            for j in range(64):
                got[rank, i, j] = sm[(i, j)]
        emu.cluster_sync()

    emu.launch(kernel, (2,), (2, 1, 1), x)
    emu.unregister(x)
    assert np.array_equal(got[0], want) and np.array_equal(got[1], want)


def _v_map(g, tiler):
    return tk.composition(tk.make_identity_layout(tk.product_each(g.layout.shape)), tiler)


@pytest.mark.parametrize("mc, conv", [(1, ((0, 0), (0, 0), (0, 0), (0, 0), (1, 1), (0, 0), (1, 1))),
                                      (4, fprop((3, 3), (1, 1))), (2, fprop((3, 3), (1, 1), (2, 2), (1, 2)))])
def test_make_tma_atom_im2col_is_the_tiled_copys_atom(mc, conv):
    """CuTe's make_tma_copy_im2col calls make_tma_atom_im2col(op, g, s, cosize(cta_t_map), cta_v_map, conv...):
    the atom's descriptor, TMA tensor and box are the TiledCopy's; it prints as a Copy_Atom."""
    g, s = activation((2, 16, 16, 64)), k_sw128(tk.half_t, 128, 64)
    op = tk.SM90_TMA_LOAD_IM2COL_MULTICAST if mc > 1 else tk.SM90_TMA_LOAD_IM2COL
    tiler = (I(128), I(64))
    tc = tk.make_im2col_tma_copy(op, g, s, tiler, I(mc), *conv)
    atom = tk.make_tma_atom_im2col(op, g, s, mc, _v_map(g, tiler), *conv)
    assert isinstance(atom, tk.Im2colTmaAtom)
    assert atom.tensormap == tc.tensormap
    assert atom.tensormap.pixels_per_column == 128 // mc
    assert str(atom.get_tma_tensor()) == str(tc.get_tma_tensor())
    assert atom.num_val == tc.num_val and str(atom.layout_tv) == str(tc.layout_tv)
    assert str(atom).startswith("Copy_Atom") and not str(tc).startswith("Copy_Atom")


def test_make_tma_atom_im2col_refusals():
    g, s = activation((2, 8, 8, 64)), k_sw128(tk.half_t, 64, 64)
    vm, conv = _v_map(g, (I(64), I(64))), ((0, 0), (0, 0), (0, 0), (0, 0), (1, 1), (0, 0), (1, 1))
    for op, mc, v, args, rule in [(tk.SM90_TMA_LOAD_IM2COL, 2, vm, conv, "multicast.op"),
                                  (tk.SM90_TMA_LOAD_IM2COL_MULTICAST, 17, vm, conv, "multicast.size"),
                                  (tk.SM90_TMA_LOAD, 1, vm, conv, "copy.op"),
                                  (tk.SM90_TMA_LOAD_IM2COL, 1, (I(64), I(64)), conv, "im2col.cta_v_map"),
                                  (tk.SM90_TMA_LOAD_IM2COL, 1, _v_map(g, (I(128), I(64))), conv, "smem.tile"),
                                  (tk.SM90_TMA_LOAD_IM2COL, 1, vm, ((0,),) + conv[1:], "im2col.spatial")]:
        with pytest.raises(tk.TmaError) as e:
            tk.make_tma_atom_im2col(op, g, s, mc, v, *args)
        assert rule in str(e.value), (rule, str(e.value))
