"""tmakit's SM90 GMMA host algebra beyond the CuTe oracle (tests/test_mma_sm90_oracle.py): bad inputs raise MmaError
naming the rule, the value and the fix; properties the oracle samples hold for every op, N and atom (accumulator
layouts cover the tile once, descriptors encode CuTe's canonical layouts, selectors pick the widest fit)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tmakit as tk
from tmakit.mma.gmma_layouts import layout_atom
from tmakit.mma.mma_sm90 import GMMA_OPS, N_BASE, N_DENSE, N_INT

G = tk.GMMA
I = tk.Int  # noqa: E741
K, MN = G.Major.K, G.Major.MN


def _smem(t, layout, addr=0):
    return tk.make_tensor(tk.make_smem_ptr(t, addr), layout)


def _tile(atom, *shape):
    return tk.tile_to_shape(atom, tuple(I(s) for s in shape))


# ------------------------------------------------------------------------------------------------- bad inputs
@pytest.mark.parametrize("call,words", [
    (lambda: tk.SM90_64x64x16_F16F16F16_SS(7, K), ["tnspA", "tk.GMMA.Major", "7"]),
    (lambda: tk.SM90_64x64x16_F16F16F16_SS(K, K, 0), ["scaleA", "ScaleIn", "0"]),
    (lambda: tk.SM90_64x64x16_F32BF16BF16_RS(MN, K), ["K major", "GMMA::Major::MN", "_SS"]),
    (lambda: G.CLayout_64xN(12), ["multiple of 8", "12"]),
    (lambda: G.ALayout_64xK(12), ["ALayout_64x8", "12"]),
    (lambda: layout_atom("MN_SW128_32B", tk.half_t), ["no GMMA layout atom", "MN_SW128_32B", "K_SW128"]),
    (lambda: G.make_gmma_desc(3, _smem(tk.half_t, _tile(G.Layout_K_SW32_Atom(tk.half_t), 8, 16))),
     ["MajorMode", "3", "tk.GMMA.Major.K"]),
    (lambda: G.make_gmma_desc(K, tk.make_tensor(np.zeros((8, 16), np.float16))),
     ["smem", "tk.make_smem_ptr"]),
    (lambda: G.make_gmma_desc(K, _smem(tk.half_t, _tile(G.Layout_K_SW32_Atom(tk.half_t), 8, 16, 2))),
     ["rank-2", "(MN,K)"]),
    (lambda: G.make_gmma_desc(K, tk.make_tensor(tk.make_smem_ptr(tk.half_t, 0, tk.Swizzle(2, 5, 2)),
                                                 tk.make_layout((I(8), I(16)), (I(16), I(1))))),
     ["swizzle", "Sw<2,5,2>", "Sw<0..3,4,3>", "Layout_"]),
    (lambda: G.make_gmma_desc(K, _smem(tk.half_t, tk.composition(tk.Swizzle(1, 4, 3), tk.make_layout((I(8), I(16)))))),
     ["swizzle from the smem pointer", "Sw<1,4,3>", "GMMA::Layout_"]),
    (lambda: G.make_gmma_desc(MN, _smem(tk.half_t, tk.make_layout((I(64), I(16)), (I(1), I(128))))),
     ["GMMA_MN", "stride", "(_64,_16):(_1,_128)", "tile_to_shape"]),
    (lambda: G.ss_op_selector(tk.half_t, tk.half_t, np.float32, (I(128), I(128))), ["rank 3", "(Tile_M, Tile_N"]),
    (lambda: G.ss_op_selector(tk.half_t, tk.half_t, np.float32, (I(128), I(100), I(64))), ["Tile_N", "100"]),
    (lambda: G.rs_smem_selector(MN, np.int8, I(64), I(64), True), ["BLK_MN0", "Layout_MN_SW128_Atom", "128", "64"]),
    (lambda: G.ss_smem_selector(K, tk.half_t, I(64), I(20)), ["BLK_K0", "multiple of 8", "20"]),
])
def test_bad_input_names_rule_value_fix(call, words):
    with pytest.raises(tk.MmaError) as e:
        call()
    assert isinstance(e.value, tk.LayoutError)
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_fragment_of_a_non_smem_or_unpartitioned_tensor():
    tm = tk.make_tiled_mma(tk.SM90_64x64x16_F32F16F16_SS(K, K))
    thr = tm.get_slice(0)
    g = tk.make_identity_tensor((I(64), I(16)))
    with pytest.raises(tk.MmaError, match="Expected SMEM Tensor"):
        thr.partition_fragment_A(g)
    s_a = _smem(tk.half_t, _tile(G.Layout_K_SW32_Atom(tk.half_t), 64, 16))
    with pytest.raises(tk.MmaError, match="make_fragment_A takes an MMA partition"):
        tm.make_fragment_A(s_a)  # not partitioned: rank 2


# ------------------------------------------------------------------------------------------------- op traits
def test_every_op_spells_its_shape_and_types():
    assert len(GMMA_OPS) == 2 * (3 * 32 + 9 * 32 + 8 * 18)  # SS+RS of 16-bit, tf32/fp8, int8 (x2 saturate) kinds
    for name, make in GMMA_OPS.items():
        op = make(K, K) if op_is_transposable(name) else make()
        m, n, k = (int(x) for x in op.shape_mnk)
        assert name.startswith(f"SM90_{m}x{n}x{k}_") and op.rs == ("_RS" in name)
        assert k * tk.sizeof_bits(op.a_type) == 256
        assert tk.size(op.layout_c_tv) == 64 * n and tk.size(op.layout_c_tv, 0) == 128
        assert (tk.size(op.layout_a_tv) if op.rs else tk.size(op.layout_a_tv, 1)) == 64 * k  # RS: 128 threads
        assert tk.size(op.layout_b_tv, 1) == n * k and tk.size(op.layout_b_tv, 0) == 128
        assert op.ptx.startswith(f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.")
        assert op.cpp().startswith(name)
    assert set(N_BASE) < set(N_INT) < set(N_DENSE)


def op_is_transposable(name):
    return any(f"_{k}_" in name for k in ("F16F16F16", "F32F16F16", "F32BF16BF16"))


@pytest.mark.parametrize("n", N_DENSE)
def test_accumulator_layout_is_a_bijection_onto_64xN(n):
    c = G.CLayout_64xN(n)
    assert sorted(c(t, v) for t in range(128) for v in range(n // 2)) == list(range(64 * n))


@pytest.mark.parametrize("k", (8, 16, 32))
def test_register_A_layout_is_a_bijection_onto_64xK(k):
    a = G.ALayout_64xK(k)
    assert sorted(a(t, v) for t in range(128) for v in range(int(tk.size(a, 1)))) == list(range(64 * k))


def test_two_warpgroups_partition_C_cover_the_tile_once():
    tm = tk.make_tiled_mma(tk.SM90_64x64x16_F32F16F16_SS(K, K), tk.make_layout((I(2), I(1), I(1))))
    c = tk.make_identity_tensor((I(128), I(64)))
    seen = [x for t in range(256) for x in _coords(tm.get_slice(t).partition_C(c))]
    assert len(seen) == 128 * 64 and set(seen) == set(itertools.product(range(128), range(64)))


def _coords(t):
    return [tuple(int(v) for v in t(i)) for i in range(int(tk.size(t)))]


# ------------------------------------------------------------------------------------------------- descriptors
def test_descriptor_fields_round_trip_and_iterator_moves_the_start_only():
    d = G.GmmaDescriptor.make(start_address=0x123, leading_byte_offset=5, stride_byte_offset=64, base_offset=3,
                              layout_type=G.LayoutType.B64)
    assert (d.start_address, d.leading_byte_offset, d.stride_byte_offset, d.base_offset, d.layout_type) == (
        0x123, 5, 64, 3, G.LayoutType.B64)
    assert G.GmmaDescriptor(int(d)) == d
    e = (G.DescriptorIterator(d) + 0x10).deref(2)
    assert e.start_address == 0x135 and int(e) >> 16 == int(d) >> 16
    assert str(d).splitlines()[-1] == "  layout_type:  0x2 (B64)"


_SW = {"INTER": (G.LayoutType.INTERLEAVE, 1), "SW32": (G.LayoutType.B32, 2), "SW64": (G.LayoutType.B64, 4),
       "SW128": (G.LayoutType.B128, 8)}


def _u128_offsets(layout, t):
    u = tk.recast_layout(layout, t, tk.uint128_t)
    return {(i, j): int(u(i, j)) for i in range(int(tk.size(u, 0))) for j in range(int(tk.size(u, 1)))}


@pytest.mark.parametrize("t", (tk.half_t, tk.tfloat32_t, tk.float_e4m3_t))
@pytest.mark.parametrize("sw", ["INTER", "SW32"])
@pytest.mark.parametrize("reps", (1, 3))
def test_K_major_descriptor_encodes_the_canonical_layout(t, sw, reps):
    """CuTe's K-major canonical form in 16-byte units: ((8,m),2):((W,SBO),LBO) (INTERLEAVE: W 1, else LBO 1)."""
    lt, w = _SW[sw]
    kk = 256 // tk.sizeof_bits(t)  # one GMMA's K: 2 x 16 bytes
    for order in ((I(1), I(2)), (I(2), I(1))):
        tens = _smem(t, tk.tile_to_shape(getattr(G, f"Layout_K_{sw}_Atom")(t), (I(8 * reps), I(kk)), order))
        d = G.make_gmma_desc(K, tens)
        assert d.layout_type == lt and d.start_address == 0
        lbo = d.leading_byte_offset if lt == G.LayoutType.INTERLEAVE else 1
        for (i, j), off in _u128_offsets(tens.layout, t).items():
            assert off == (i % 8) * w + (i // 8) * d.stride_byte_offset + j * lbo, (i, j, order)


@pytest.mark.parametrize("sw", list(_SW))
@pytest.mark.parametrize("reps", (1, 2))
def test_MN_major_descriptor_encodes_the_canonical_layout(sw, reps):
    """CuTe's MN-major canonical form in 16-byte units: ((W,n),(8,k)):((1,LBO),(W,SBO)); INTERLEAVE
    ((1,n),(8,k)):((X,SBO),(1,LBO))."""
    t = tk.half_t
    lt, w = _SW[sw]
    atom = getattr(G, f"Layout_MN_{sw}_Atom")(t)
    tens = _smem(t, tk.tile_to_shape(atom, (I(8 * w * reps), I(16))), 0x400)
    d = G.make_gmma_desc(MN, tens)
    assert d.layout_type == lt and d.start_address == 0x40
    lbo, sbo = d.leading_byte_offset, d.stride_byte_offset
    for (i, j), off in _u128_offsets(tens.layout, t).items():
        if lt == G.LayoutType.INTERLEAVE:
            want = i * sbo + (j % 8) + (j // 8) * lbo
        else:
            want = (i % w) + (i // w) * lbo + (j % 8) * w + (j // 8) * sbo
        assert off == want, (i, j)


def test_SS_fragment_descriptors_step_through_the_K_blocks():
    tm = tk.make_tiled_mma(tk.SM90_64x128x16_F32BF16BF16_SS(K, K))
    s_a = _tile(G.Layout_K_SW128_Atom(tk.bfloat16_t), 64, 64, 2)
    f = tm.get_slice(5).partition_fragment_A(_smem(tk.bfloat16_t, s_a, 0x800))
    assert str(f) == "GMMA::DescriptorIterator o (_1,_1,_4,(_1,_2)):(_0,_0,_2,(_0,_512))"
    starts = [f(0, 0, k, p).start_address for p in range(2) for k in range(4)]
    assert starts == [0x80 + 2 * k + 512 * p for p in range(2) for k in range(4)]


# ------------------------------------------------------------------------------------------------- selectors
@pytest.mark.parametrize("ext", (False, True))
def test_op_selector_takes_the_widest_N_that_divides_the_tile(ext):
    for tile_n in range(8, 513, 8):
        for a, c, ns in ((tk.half_t, np.float32, N_DENSE), (np.int8, np.int32, N_INT)):
            op = G.ss_op_selector(a, a, c, (I(128), I(tile_n), I(64)), extended_shapes=ext)
            allowed = ns if ext else N_BASE
            assert op.N == max(n for n in allowed if tile_n % n == 0)
            assert G.rs_op_selector(a, a, c, (I(64), I(tile_n), I(64)), extended_shapes=ext).N == op.N


def test_smem_selector_takes_the_widest_atom_that_divides_the_block():
    for t in (tk.half_t, tk.tfloat32_t, np.int8):
        for blk in range(8, 257, 8):
            for major, mode in ((MN, 0), (K, 1)):
                fits = [sw for sw in ("SW128", "SW64", "SW32", "INTER")
                        if blk % int(tk.size(layout_atom(f"{major.name}_{sw}", t), mode)) == 0]
                if not fits:
                    with pytest.raises(tk.MmaError, match="must be a multiple of size"):
                        G.ss_smem_selector(major, t, I(blk), I(blk))
                    continue
                atom = G.ss_smem_selector(major, t, I(blk), I(blk))
                assert str(atom) == str(layout_atom(f"{major.name}_{fits[0]}", t))


def test_namespace_and_enum_values_follow_cute():
    assert (int(G.ScaleIn.Neg), int(G.ScaleIn.One), int(G.ScaleOut.Zero), int(G.Major.MN)) == (-1, 1, 0, 1)
    assert [lt.name for lt in G.LayoutType] == ["INTERLEAVE", "B128", "B64", "B32"]
    assert str(G.Layout_SW64_Atom(tk.half_t, MN)) == str(G.Layout_MN_SW64_Atom(tk.half_t))
    assert str(G.CLayout_64x96) == "((_4,_8,_4),(_2,_2,_12)):((_128,_1,_16),(_64,_8,_512))"
