"""Behaviour of the SM100 host algebra beyond its prints (tests/test_mma_sm100_oracle.py checks those): the rules the
atoms enforce, descriptor fields, TMEM addresses, which lanes each thread's TMEM copy reaches, the 2-SM TMA ops."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import tmakit as tk

I = tk.Int  # noqa: E741
K, MN = tk.UMMA.Major.K, tk.UMMA.Major.MN


def _acc(op):
    tm = tk.make_tiled_mma(op)
    return tm.make_fragment_C(tk.partition_shape_C(tm, (tk.tile_size(tm, 0), tk.tile_size(tm, 1))))


# ------------------------------------------------------------------------------------------------ atoms
@pytest.mark.parametrize("make,args,rule", [
    (tk.SM100_MMA_F16BF16_SS, (tk.half_t, tk.half_t, np.float32, 96, 128, K, K), "M must be 64 or 128"),
    (tk.SM100_MMA_F16BF16_SS, (tk.half_t, tk.half_t, np.float32, 128, 12, K, K), "N must be a multiple of 8"),
    (tk.SM100_MMA_F16BF16_2x1SM_SS, (tk.half_t, tk.half_t, np.float32, 64, 128, K, K), "M must be 128 or 256"),
    (tk.SM100_MMA_F16BF16_2x1SM_SS, (tk.half_t, tk.half_t, np.float32, 256, 24, K, K), "multiple of 16"),
    (tk.SM100_MMA_F16BF16_2x1SM_TS, (tk.half_t, tk.half_t, np.float32, 256, 48, K, K), "multiple of 32"),
    (tk.SM100_MMA_F16BF16_SS, (tk.tfloat32_t, tk.tfloat32_t, np.float32, 128, 128, K, K), "16-bit types"),
    (tk.SM100_MMA_TF32_SS, (tk.half_t, tk.half_t, np.float32, 128, 128, K, K), "32-bit types"),
    (tk.SM100_MMA_F8F6F4_SS, (tk.half_t, tk.half_t, np.float32, 128, 128, K, K), "at most 8 bits"),
    (tk.SM100_MMA_F8F6F4_SS, (tk.float_e4m3_t, tk.float_e4m3_t, np.float32, 128, 24, K, MN), "multiple of 16"),
    (tk.SM100_MMA_F16BF16_TS, (tk.half_t, tk.half_t, np.float32, 128, 128, MN, K), "can't be transposed"),
    (tk.SM100_MMA_F16BF16_SS, (tk.half_t, tk.half_t, np.float32, 128, 128, 7, K), "tk.UMMA.Major.K"),
])
def test_atoms_refuse_what_cute_refuses(make, args, rule):
    with pytest.raises(tk.MmaError, match=rule):
        make(*args)


@pytest.mark.parametrize("make,t,k", [(tk.SM100_MMA_F16BF16_SS, tk.bfloat16_t, 16),
                                      (tk.SM100_MMA_TF32_SS, tk.tfloat32_t, 8),
                                      (tk.SM100_MMA_F8F6F4_SS, tk.float_e5m2_t, 32)])
def test_k_is_256_bits_of_the_input_type(make, t, k):
    op = make(t, t, np.float32, 128, 64, K, K)
    assert op.K == k and op.shape_mnk == (I(128), I(64), I(k))


def test_op_attributes_for_the_emulator():
    op = tk.SM100_MMA_F16BF16_2x1SM_TS(tk.half_t, tk.half_t, np.float32, 256, 128, K, MN)
    assert (op.kind, op.cta_group, op.a_from_tmem, op.M, op.N, op.K) == ("f16", 2, True, 256, 128, 16)
    assert op.ptx == "tcgen05.mma.cta_group::2.kind::f16"
    assert tk.SM100_MMA_TF32_SS(tk.tfloat32_t, tk.tfloat32_t, np.float32, 64, 8, K, K).ptx.endswith("kind::tf32")


def test_tiled_mma_accumulate_flag_and_slices():
    tm = tk.make_tiled_mma(tk.SM100_MMA_F16BF16_2x1SM_SS(tk.half_t, tk.half_t, np.float32, 256, 128, K, K))
    assert tm.accumulate_ == tk.UMMA.ScaleOut.One
    tm.accumulate_ = tk.UMMA.ScaleOut.Zero
    assert tm.accumulate_ == tk.UMMA.ScaleOut.Zero
    assert str(tm.AtomThrID) == "_2:_1"
    assert [tm.get_slice(v).thr_vmnk[0] for v in (0, 1)] == [0, 1]
    assert tk.tile_shape(tm) == (I(256), I(128), I(16))


def test_make_fragment_needs_an_mma_partition():
    tm = tk.make_tiled_mma(tk.SM100_MMA_F16BF16_SS(tk.half_t, tk.half_t, np.float32, 128, 128, K, K))
    with pytest.raises(tk.MmaError, match="partition_C"):
        tm.make_fragment_C((I(128), I(128)))
    with pytest.raises(tk.MmaError, match="shared memory"):
        tm.make_fragment_A(tk.make_identity_tensor(((I(128), I(16)), I(1), I(4))))


# ------------------------------------------------------------------------------------------------ descriptors
def _sw128_frag(address):
    tm = tk.make_tiled_mma(tk.SM100_MMA_F16BF16_SS(tk.half_t, tk.half_t, np.float32, 128, 128, K, K))
    s_a = tk.UMMA.tile_to_mma_shape(tk.UMMA.Layout_K_SW128_Atom(tk.half_t),
                                    tk.partition_shape_A(tm, (I(128), I(64))))
    return tm.make_fragment_A(tk.make_tensor(tk.make_smem_ptr(tk.half_t, address), s_a))


def test_k_major_sw128_descriptor_fields():
    frag = _sw128_frag(0x1400)
    d = frag(0)
    assert (d.start_address, d.stride_byte_offset, d.leading_byte_offset, d.version) == (0x140, 64, 1, 1)
    assert d.layout_type == tk.UMMA.LayoutType.SWIZZLE_128B
    assert tk.SmemDescriptor.from_int(d.desc) == d
    assert d.desc >> 61 == 2 and d.desc >> 46 & 3 == 1


def test_descriptor_iterator_steps_16_byte_units_per_k_block():
    frag = _sw128_frag(0x1400)
    # K-block k of a 128x64 half tile starts 16 halfs = 32 bytes further: 2 units of 16 bytes.
    assert [frag(0, 0, k).start_address for k in range(4)] == [0x140, 0x142, 0x144, 0x146]
    assert (frag.iterator + 3).desc.start_address == 0x143


def test_umma_desc_rejects_non_canonical_layouts():
    # MN-contiguous data behind a 128B-swizzled pointer is no K-major SW128 layout (CuTe's static_assert)
    bad = tk.make_tensor(tk.make_smem_ptr(tk.half_t, 0, tk.Swizzle(3, 4, 3)),
                         tk.make_layout((I(128), I(16)), (I(1), I(128))))
    with pytest.raises(tk.MmaError, match="canonical"):
        tk.UMMA.make_umma_desc(K, bad)
    with pytest.raises(tk.MmaError, match="shared memory"):
        tk.UMMA.make_umma_desc(K, tk.make_identity_tensor((I(128), I(16))))


def test_layout_atom_pointer_type_must_match():
    atom = tk.UMMA.Layout_K_SW128_Atom(tk.half_t)
    assert str(tk.make_tensor(tk.make_smem_ptr(tk.half_t, 0x80), atom)) == \
        "Sw<3,4,3>_smem_ptr[16b](0x80) o (_8,_64):(_64,_1)"
    with pytest.raises(tk.MmaError, match="16-bit"):
        tk.make_tensor(tk.make_smem_ptr(np.float32, 0x80), atom)


# ------------------------------------------------------------------------------------------------ TMEM
def test_tmem_ptr_prints_and_moves_like_cute():
    p = tk.make_tmem_ptr(np.float32, 0x00200010)
    assert (p.lane, p.column, str(p)) == (32, 16, "tmem_[32b](0x0020.0010)")
    assert (p + 5).address == 0x00200015
    h = tk.make_tmem_ptr(tk.half_t)
    assert (h + 6).address == 3 and (h + 1).address == 0x80000000  # rotr(i, 1): the sub-word index parks up top
    assert p.with_address(0x40).address == 0x40


@settings(max_examples=25, deadline=None)
@given(m=st.sampled_from([64, 128]), n=st.sampled_from([16, 32, 64, 128, 256]), data=st.data())
def test_1sm_accumulator_addresses(m, n, data):
    acc = _acc(tk.SM100_MMA_F16BF16_SS(tk.half_t, tk.half_t, np.float32, m, n, K, K))
    r, c = data.draw(st.integers(0, m - 1)), data.draw(st.integers(0, n - 1))
    addr = (acc.iterator + acc.layout(((r, c), 0, 0))).address
    lane = r if m == 128 else r % 16 + 32 * (r // 16)  # M=64 uses the top half of each lane quarter
    assert addr == lane << 16 | c


@settings(max_examples=25, deadline=None)
@given(n=st.sampled_from([64, 128, 256]), data=st.data())
def test_2sm_m128_accumulator_is_two_by_two(n, data):
    acc = _acc(tk.SM100_MMA_F16BF16_2x1SM_SS(tk.half_t, tk.half_t, np.float32, 128, n, K, K))
    r, c = data.draw(st.integers(0, 63)), data.draw(st.integers(0, n - 1))
    addr = (acc.iterator + acc.layout(((r, c), 0, 0))).address
    half = n // 2
    assert addr == (r + 64 * (c // half)) << 16 | c % half


@pytest.mark.parametrize("op", ["SM100_TMEM_LOAD_32dp32b1x", "SM100_TMEM_LOAD_32dp32b8x", "SM100_TMEM_STORE_32dp32b4x"])
def test_each_warp_reaches_only_its_lane_quarter(op):
    """tcgen05.ld/st are warp-collective: a thread's TMEM partition is its warp's access (lanes 32w..32w+31, all
    columns of the tile), and its register partition holds its own row."""
    acc = _acc(tk.SM100_MMA_F16BF16_SS(tk.half_t, tk.half_t, np.float32, 128, 256, K, K))
    g_c = tk.make_tensor(tk.make_gmem_ptr(np.float32, 0), tk.make_layout(((I(128), I(256)), I(1), I(1)),
                                                                         ((256, I(1)), I(0), I(0))))
    tiled = tk.make_tmem_copy(getattr(tk, op)(), acc)
    for t in range(0, 128, 7):
        thr = tiled.get_slice(t)
        tmem, regs = (thr.partition_S(acc), thr.partition_D(g_c)) if "LOAD" in op else \
            (thr.partition_D(acc), thr.partition_S(g_c))
        lanes = {(tmem.iterator + tmem.layout(i)).lane for i in range(int(tk.size(tmem)))}
        assert lanes == set(range(32 * (t // 32), 32 * (t // 32) + 32))
        rows = {((regs.iterator + regs.layout(i)).address // 4) // 256 for i in range(int(tk.size(regs)))}
        assert rows == {t} and int(tk.size(regs)) == 256


def test_tmem_op_ptx_and_validity():
    assert tk.SM100_TMEM_LOAD_16dp256b2x().ptx == "tcgen05.ld.sync.aligned.16x256b.x2.b32"
    assert tk.SM100_TMEM_STORE_32dp32b1x_16b().ptx == "tcgen05.st.sync.aligned.32x32b.x1.unpack::16b.b32"
    acc = _acc(tk.SM100_MMA_F16BF16_SS(tk.half_t, tk.half_t, np.float32, 64, 128, K, K))
    with pytest.raises(tk.MmaError, match="not all in the tensor"):
        tk.make_tmem_copy(tk.SM100_TMEM_LOAD_32dp32b1x(), acc)  # a 64-row accumulator has no 32-lane warps
    with pytest.raises(tk.MmaError, match="TMEM tensor"):
        tk.make_tmem_copy(tk.SM100_TMEM_LOAD_32dp32b1x(), tk.make_identity_tensor((I(128), I(128))))


# ------------------------------------------------------------------------------------------------ 2-SM TMA
def test_2sm_tma_ops():
    op = tk.SM100_TMA_2SM_LOAD_MULTICAST
    assert op() is op and op.multicast and op.cta_group == 2
    assert ".cta_group::2." in op.ptx and op.ptx.endswith(".multicast::cluster")
    assert not tk.SM100_TMA_2SM_LOAD.multicast


def test_2sm_tma_atom_box_is_one_ctas_share():
    tm = tk.make_tiled_mma(tk.SM100_MMA_F16BF16_2x1SM_SS(tk.half_t, tk.half_t, np.float32, 256, 256, K, K))
    tiler = (I(256), I(256), I(64))
    s_a = tk.UMMA.tile_to_mma_shape(tk.UMMA.Layout_K_SW128_Atom(tk.half_t), tk.partition_shape_A(tm, (I(256), I(64))))
    m_a = tk.make_tensor(tk.make_gmem_ptr(np.float16, 0x100000), tk.make_layout((512, 256), (256, I(1))))
    vmnk = tk.tiled_divide(tk.make_layout((I(4), I(4), I(1))), (tm.AtomThrID,))
    atom = tk.make_tma_atom_A_sm100(tk.SM100_TMA_2SM_LOAD_MULTICAST, m_a, s_a, tiler, tm, vmnk)
    assert atom.num_val_src == 128 * 64  # one CTA's 128 rows x 64 K, before the 4-way multicast split
    assert atom.tensormap.box_dim == (64, 32)  # the box each of the 4 N-CTAs loads
    with pytest.raises(tk.MmaError, match="TMA load"):
        tk.make_tma_atom_A_sm100(tk.SM90_TMA_STORE, m_a, s_a, tiler, tm, vmnk)


# ---------------------------------------------------------------------------------------- descriptors vs emulator
@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(["f16", "tf32"]), major=st.sampled_from(["K", "MN"]),
       sw=st.sampled_from(["SW128", "SW64", "SW32", "INTER"]), rows=st.sampled_from([64, 128]),
       kb=st.sampled_from([2, 4]), base=st.sampled_from([0, 0x400, 0x2000]))
def test_descriptors_read_back_the_smem_tile(kind, major, sw, rows, kb, base):
    """Differential: fill shared memory through the smem layout (element (r,k) holds its id), then let the emulator
    read each K-block through the descriptors make_fragment_A builds: it must see exactly that block."""
    from tmakit.emu.umma_desc import decode_smem_desc, operand_bits

    t, np_t = (tk.half_t, np.uint16) if kind == "f16" else (tk.tfloat32_t, np.uint32)
    nbytes = tk.sizeof_bits(t) // 8
    make = tk.SM100_MMA_F16BF16_SS if kind == "f16" else tk.SM100_MMA_TF32_SS
    tm = tk.make_tiled_mma(make(t, t, np.float32, rows, 64, getattr(tk.UMMA.Major, major), K))
    k_tile = int(tk.tile_size(tm, 2)) * kb
    atom = getattr(tk.UMMA, f"Layout_{major}_{sw}_Atom")(t)
    # an atom wider than the operand cannot tile it (CuTe refuses at compile time)
    assume(rows % int(tk.size(atom.layout_b, 0)) == 0 and k_tile % int(tk.size(atom.layout_b, 1)) == 0)
    s_a = tk.UMMA.tile_to_mma_shape(atom, tk.partition_shape_A(tm, (I(rows), I(k_tile))))
    t_cs_a = tk.make_tensor(tk.make_smem_ptr(t, base), s_a)
    ptr, lay = t_cs_a.iterator, t_cs_a.layout
    smem = np.zeros(base + int(tk.cosize(lay)) * nbytes + 4096, dtype=np.uint8)
    ids = np.arange(rows * k_tile, dtype=np_t).reshape(rows, k_tile)
    view = smem[:len(smem) // nbytes * nbytes].view(np_t)
    for r in range(rows):
        for k in range(k_tile):
            kk, blk = k % int(tk.tile_size(tm, 2)), k // int(tk.tile_size(tm, 2))
            byte = base + int(lay(((r, kk), 0, blk))) * nbytes
            view[ptr.swizzle(byte) // nbytes] = ids[r, k]
    frag = tm.make_fragment_A(t_cs_a)
    kel = int(tk.tile_size(tm, 2))
    for blk in range(kb):
        d = decode_smem_desc(frag(0, 0, blk).desc)
        got = operand_bits(smem, d, 0 if major == "K" else 1, rows, nbytes, "A")
        np.testing.assert_array_equal(got, ids[:, blk * kel:(blk + 1) * kel])


@pytest.mark.parametrize("t,name", [(tk.half_t, "f16"), (tk.bfloat16_t, "bf16"), (tk.tfloat32_t, "tf32")])
@pytest.mark.parametrize("m,n,a_major,b_major", [(128, 256, 0, 0), (64, 8, 1, 0), (256, 96, 0, 1)])
def test_instruction_descriptor_matches_the_emulators_decoder(t, name, m, n, a_major, b_major):
    from tmakit.emu.umma_desc import decode_instr_desc, encode_instr_desc

    make = {("f16", 1): tk.SM100_MMA_F16BF16_SS, ("f16", 2): tk.SM100_MMA_F16BF16_2x1SM_SS,
            ("tf32", 1): tk.SM100_MMA_TF32_SS, ("tf32", 2): tk.SM100_MMA_TF32_2x1SM_SS}
    kind = "tf32" if name == "tf32" else "f16"
    op = make[kind, 2 if m == 256 else 1](t, t, np.float32, m, n, a_major, b_major)
    assert op.idesc == encode_instr_desc(kind, name, name, m, n, a_major, b_major)
    d = decode_instr_desc(op.idesc)
    assert (d.m, d.n, d.a_major, d.b_major) == (m, n, a_major, b_major)
