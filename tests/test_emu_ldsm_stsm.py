"""copy with ldmatrix / stmatrix atoms in the emulator: every thread's partitions at once, checked against a numpy
model of the PTX fragment layout, round trips through CuTe's tiled copies (plain and swizzled shared memory),
epilogue copies of wgmma accumulators, and bad input."""

import numpy as np
import pytest

import tmakit as tk
from tmakit import emu

I, G = tk.Int, tk.GMMA
K = G.Major.K
# (op, matrices, .trans, ldmatrix)
ATOMS = {
    "SM75_U32x1_LDSM_N": (1, False, True), "SM75_U32x2_LDSM_N": (2, False, True),
    "SM75_U32x4_LDSM_N": (4, False, True), "SM75_U16x2_LDSM_T": (1, True, True),
    "SM75_U16x4_LDSM_T": (2, True, True), "SM75_U16x8_LDSM_T": (4, True, True),
    "SM90_U32x1_STSM_N": (1, False, False), "SM90_U32x2_STSM_N": (2, False, False),
    "SM90_U32x4_STSM_N": (4, False, False), "SM90_U16x2_STSM_T": (1, True, False),
    "SM90_U16x4_STSM_T": (2, True, False), "SM90_U16x8_STSM_T": (4, True, False),
}
PAIRS = [("SM90_U32x1_STSM_N", "SM75_U32x1_LDSM_N"), ("SM90_U32x2_STSM_N", "SM75_U32x2_LDSM_N"),
         ("SM90_U32x4_STSM_N", "SM75_U32x4_LDSM_N"), ("SM90_U16x2_STSM_T", "SM75_U16x2_LDSM_T"),
         ("SM90_U16x4_STSM_T", "SM75_U16x4_LDSM_T"), ("SM90_U16x8_STSM_T", "SM75_U16x8_LDSM_T")]


def ptx_registers(rows, mats, trans):
    """PTX's ldmatrix: rows[8m + r] is row r of matrix m (8 b16 values); lane l's register m holds (row l/4, columns
    2(l%4), 2(l%4)+1) of matrix m, of its transpose for .trans; the lower column in the low half. (32, mats) uint32."""
    regs = np.zeros((32, mats), np.uint32)
    for lane in range(32):
        for m in range(mats):
            if trans:
                lo, hi = rows[8 * m + 2 * (lane % 4)][lane // 4], rows[8 * m + 2 * (lane % 4) + 1][lane // 4]
            else:
                lo, hi = rows[8 * m + lane // 4][2 * (lane % 4)], rows[8 * m + lane // 4][2 * (lane % 4) + 1]
            regs[lane, m] = int(lo) | int(hi) << 16
    return regs


def ptx_rows(regs, mats, trans):
    """PTX's stmatrix, the inverse of ``ptx_registers``: the (8 * mats, 8) b16 rows the lanes' registers store."""
    rows = np.zeros((8 * mats, 8), np.uint16)
    for lane in range(32):
        for m in range(mats):
            lo, hi = int(regs[lane, m]) & 0xFFFF, int(regs[lane, m]) >> 16
            if trans:
                rows[8 * m + 2 * (lane % 4)][lane // 4], rows[8 * m + 2 * (lane % 4) + 1][lane // 4] = lo, hi
            else:
                rows[8 * m + lane // 4][2 * (lane % 4)], rows[8 * m + lane // 4][2 * (lane % 4) + 1] = lo, hi
    return rows


def _launch(body):
    return emu.launch(lambda: body(), (1,))


@pytest.mark.parametrize("name", list(ATOMS))
def test_one_atom_against_the_ptx_model(name):
    """A plain Copy_Atom over hand-made lane tensors: lane 8m + r addresses a random row of a 64-row buffer; lanes
    past 8 * matrices give misaligned addresses the instruction does not read."""
    mats, trans, load = ATOMS[name]
    atom = tk.Copy_Atom(getattr(tk, name)(), np.uint16)
    rng = np.random.default_rng(len(name) + mats)
    init = rng.integers(0, 2**16, size=(64, 8), dtype=np.uint16)
    perm = rng.permutation(64)[:8 * mats]
    regs = rng.integers(0, 2**16, size=(32, 2 * mats), dtype=np.uint16)
    got = {}

    def body():
        s = emu.shared_tensor(tk.make_layout((I(64), I(8)), tk.LayoutRight), np.uint16)
        for r in range(64):
            for c in range(8):
                s[(r, c)] = init[r, c]
        rows = [s[(int(perm[lane]), tk._)] if lane < 8 * mats else
                tk.make_tensor(s.iterator + 3, tk.make_layout(I(8))) for lane in range(32)]
        frags = [tk.make_tensor(regs[lane].copy() if not load else np.zeros(2 * mats, np.uint16)) for lane in range(32)]
        emu.copy(atom, rows, frags) if load else emu.copy(atom, frags, rows)
        got["regs"] = np.array([f.iterator.array for f in frags])
        got["smem"] = np.array([[s[(r, c)] for c in range(8)] for r in range(64)], np.uint16)

    stats = _launch(body)
    assert stats == {"ldsm" if load else "stsm": 1}
    if load:
        want = ptx_registers(init[perm], mats, trans)
        assert np.array_equal(got["regs"].view(np.uint32), want)
        assert np.array_equal(got["smem"], init)
    else:
        want = init.copy()
        want[perm] = ptx_rows(regs.view(np.uint32), mats, trans)
        assert np.array_equal(got["smem"], want)


def _gmma(acc=tk.SM90_64x64x16_F16F16F16_SS):
    return tk.make_tiled_mma(acc(K, K))


def _gC(dtype):  # noqa: N802
    return tk.make_tensor(np.zeros((64, 64), dtype), tk.make_layout((I(64), I(64))))


def _smem_layout(trans, swizzled):
    """(64, 64) half tile: N-contiguous for the _N atoms (a C row's 8 columns are one matrix row), M-contiguous for
    the _T ones; swizzled with the 128-byte GMMA atom."""
    if swizzled:
        atom = G.Layout_MN_SW128_Atom(tk.half_t) if trans else G.Layout_K_SW128_Atom(tk.half_t)
        return tk.tile_to_shape(atom, (I(64), I(64)))
    return tk.make_layout((I(64), I(64)), tk.LayoutLeft if trans else tk.LayoutRight)


def _fill_by_coord(mma, frags, want):
    """Thread t's C values = ``want`` at the coordinates CuTe's partition_C gives them."""
    ident = tk.make_identity_tensor((I(64), I(64)))
    for t in range(len(frags)):
        c = mma.get_thread_slice(t).partition_C(ident)
        for i in range(int(tk.size(c))):
            m, n = c(i)
            frags[t][i] = want[int(m), int(n)]


def _read(s):
    return np.array([[s[(m, n)] for n in range(64)] for m in range(64)])


@pytest.mark.parametrize("swizzled", [False, True])
@pytest.mark.parametrize("store, load", PAIRS)
def test_tiled_round_trip(store, load, swizzled):
    """make_tiled_copy_C of each atom over a 64x64 GMMA tile: stmatrix puts every accumulator value at its (m, n)
    in shared memory, ldmatrix gives every thread its registers back."""
    trans = ATOMS[store][1]
    mma = _gmma()
    r2s = tk.make_tiled_copy_C(tk.Copy_Atom(getattr(tk, store)(), tk.half_t), mma)
    s2r = tk.make_tiled_copy_C(tk.Copy_Atom(getattr(tk, load)(), tk.half_t), mma)
    frag = mma.get_thread_slice(0).partition_fragment_C(_gC(np.float16))
    want = np.random.default_rng(7).standard_normal((64, 64)).astype(np.float16)
    got = {}

    def body():
        s = emu.shared_tensor(_smem_layout(trans, swizzled), np.float16)
        regs = [tk.make_tensor(np.zeros(32, np.float16), frag.layout) for _ in range(128)]
        _fill_by_coord(mma, regs, want)
        emu.copy(r2s, [r2s.get_slice(t).retile_S(regs[t]) for t in range(128)],
                 [r2s.get_slice(t).partition_D(s) for t in range(128)])
        got["smem"] = _read(s)
        back = [tk.make_tensor(np.zeros(32, np.float16), frag.layout) for _ in range(128)]
        thr = [s2r.get_slice(t) for t in range(128)]
        emu.copy(s2r, [x.partition_S(s) for x in thr], [x.retile_D(b) for x, b in zip(thr, back)])
        got["same"] = [t for t in range(128) if not np.array_equal(back[t].iterator.array, regs[t].iterator.array)]

    stats = _launch(body)
    assert np.array_equal(got["smem"], want)
    assert got["same"] == []
    mats = ATOMS[store][0]
    assert stats == {"stsm": 64 // mats, "ldsm": 64 // mats}  # 4 warps x (16x64 per warp / 8x8 per matrix)


@pytest.mark.parametrize("f32", [False, True])
def test_epilogue_of_wgmma_accumulators(f32):
    """CUTLASS's sm90 epilogue: the accumulators (wgmma registers, thread_fragments_C) of a 64x64 tile, converted
    to half_t where they are float, stored with make_tiled_copy_C(Copy_Atom(SM90_U32x4_STSM_N, half_t)) into a
    128B-swizzled tile."""
    mma = _gmma(tk.SM90_64x64x16_F32F16F16_SS if f32 else tk.SM90_64x64x16_F16F16F16_SS)
    r2s = tk.make_tiled_copy_C(tk.Copy_Atom(tk.SM90_U32x4_STSM_N(), tk.half_t), mma)
    gC = _gC(np.float32 if f32 else np.float16)  # noqa: N806
    want = (np.arange(64 * 64).reshape(64, 64) % 1999 - 999).astype(np.float16)
    got = {}

    def body():
        sD = emu.shared_tensor(_smem_layout(False, True), np.float16)  # noqa: N806
        acc = emu.thread_fragments_C(mma, mma.get_thread_slice(0).partition_fragment_C(gC))
        _fill_by_coord(mma, acc, want)
        srcs = []
        for t in range(128):
            if f32:  # tRS_rD: the converted fragment
                d = tk.make_tensor(np.zeros(32, np.float16), acc[t].layout)
                for i in range(32):
                    d[i] = np.float16(acc[t](i))
            else:
                d = acc[t]
            srcs.append(r2s.get_slice(t).retile_S(d))
        emu.copy(r2s, srcs, [r2s.get_slice(t).partition_D(sD) for t in range(128)])
        got["d"] = _read(sD)

    assert _launch(body) == {"stsm": 16}
    assert np.array_equal(got["d"], want)


def _warp_ldsm(smem_layout, dtype=np.float16, reg_dtype=np.float16, lists=True, threads=32, thr_copy=False):
    """One warp's SM75_U32x4_LDSM_N of a 16x16 A tile (make_tiled_copy_A of an SM80 MMA); returns the error."""
    atom = tk.Copy_Atom(tk.SM75_U32x4_LDSM_N(), tk.half_t)
    tiled = tk.make_tiled_copy_A(atom, tk.make_tiled_mma(tk.SM80_16x8x16_F16F16F16F16_TN()))

    def body():
        s = emu.shared_tensor(smem_layout, dtype)
        srcs = [tiled.get_slice(t).partition_S(s) for t in range(threads)]
        dsts = [tk.make_tensor(np.zeros(8, reg_dtype)) for _ in range(threads)]
        emu.copy(tiled.get_slice(0) if thr_copy else tiled, srcs if lists else srcs[0], dsts)

    try:
        _launch(body)
    except emu.EmuError as e:
        return e
    return None


ROW = tk.make_layout((I(16), I(16)), tk.LayoutRight)


def test_warp_copy_runs_and_bad_input_raises_with_the_rule():
    assert _warp_ldsm(ROW) is None and _warp_ldsm(ROW, thr_copy=True) is None
    err = _warp_ldsm(tk.make_layout((I(16), I(16)), (I(20), I(1))))  # 40-byte rows: row 1 at byte 40
    assert isinstance(err, emu.IllegalInstruction) and "not 16-byte aligned" in str(err) and "0x28" in str(err)
    err = _warp_ldsm(tk.make_layout((I(16), I(16)), tk.LayoutLeft))  # a row's values 32 bytes apart
    assert "not 16 contiguous bytes" in str(err)
    err = _warp_ldsm(ROW, dtype=np.float32)
    assert "32-bit elements" in str(err) and "16-bit values" in str(err)
    err = _warp_ldsm(ROW, reg_dtype=np.float32)
    assert "register destination holds 32-bit values" in str(err)
    assert "pass every thread's source tensor" in str(_warp_ldsm(ROW, lists=False))
    assert "16 source tensors for a tiled copy of 32 threads" in str(_warp_ldsm(ROW, threads=16))


def test_wrong_direction_and_misaligned_stsm_row():
    atom = tk.Copy_Atom(tk.SM90_U32x1_STSM_N(), tk.half_t)

    def smem_source():
        s = emu.shared_tensor(ROW, np.float16)
        emu.copy(atom, [s[(0, tk._)]] * 32, [tk.make_tensor(np.zeros(2, np.float16))] * 32)

    with pytest.raises(emu.EmuError, match="register fragment"):
        _launch(smem_source)

    def misaligned():
        s = emu.shared_tensor(ROW, np.float16)
        rows = [tk.make_tensor(s.iterator + 16 * (lane % 8) + (4 if lane == 5 else 0), tk.make_layout(I(8)))
                for lane in range(32)]
        emu.copy(atom, [tk.make_tensor(np.zeros(2, np.float16))] * 32, rows)

    with pytest.raises(emu.IllegalInstruction, match="lane 5's row address 0xa8 is not 16-byte aligned"):
        _launch(misaligned)


def _copy_if_stsm(preds):
    """copy_if of SM90_U32x4_STSM_N (make_tiled_copy_C, 128 threads = 4 warps) of a 64x128 tile (two 64x64 copy
    tiles: two calls); returns (shared tile, stats, the number of calls) and the wanted tile."""
    mma = _gmma()
    r2s = tk.make_tiled_copy_C(tk.Copy_Atom(tk.SM90_U32x4_STSM_N(), tk.half_t), mma)
    shape = (I(64), I(128))
    frag = mma.get_thread_slice(0).partition_fragment_C(tk.make_tensor(np.zeros((64, 128), np.float16),
                                                                       tk.make_layout(shape)))
    want = np.random.default_rng(3).standard_normal((64, 128)).astype(np.float16) + 9
    ident = tk.make_identity_tensor(shape)
    got = {}

    def body():
        s = emu.shared_tensor(tk.make_layout(shape, tk.LayoutRight), np.float16)
        regs = []
        for t in range(128):
            r, c = tk.make_tensor(np.zeros(64, np.float16), frag.layout), mma.get_thread_slice(t).partition_C(ident)
            for i in range(64):
                m, n = c(i)
                r[i] = want[int(m), int(n)]
            regs.append(r)
        srcs = [r2s.get_slice(t).retile_S(regs[t]) for t in range(128)]
        dsts = [r2s.get_slice(t).partition_D(s) for t in range(128)]
        got["calls"] = int(tk.size(dsts[0])) // int(tk.size(dsts[0].layout.shape[0]))
        emu.copy_if(r2s, preds(got["calls"]), srcs, dsts)
        got["smem"] = np.array([[s[(m, n)] for n in range(128)] for m in range(64)])

    got["stats"] = _launch(body)
    return got, want


def test_copy_if_with_a_warp_uniform_predicate_issues_only_those_calls():
    """One predicate shared by all threads: only the first atom call's stmatrix instructions run, in each warp."""
    got, want = _copy_if_stsm(lambda n: np.arange(n) == 0)
    assert got["calls"] > 1
    assert got["stats"] == {"stsm": 4 * 4}  # 4 instructions of 8 values in a call of 32 values per thread
    written = got["smem"] != 0
    assert written.sum() == 64 * 128 // got["calls"]
    np.testing.assert_array_equal(got["smem"][written], want[written])
    full, _ = _copy_if_stsm(lambda n: emu.TrivialPredTensor())
    np.testing.assert_array_equal(full["smem"], want)
    assert full["stats"] == {"stsm": 4 * 4 * full["calls"]}


def test_copy_if_per_thread_predicates_uniform_per_warp_and_divergent():
    """Per-thread predicates: warps 0 and 2 on, 1 and 3 off, issue half the instructions; one lane off in an
    otherwise-on warp raises (a .sync.aligned warp instruction cannot be predicated per thread)."""
    got, _ = _copy_if_stsm(lambda n: [np.full(n, (t // 32) % 2 == 0) for t in range(128)])
    assert got["stats"] == {"stsm": 2 * 4 * got["calls"]}
    assert (got["smem"] != 0).sum() == 64 * 128 // 2
    with pytest.raises(emu.EmuError, match="cannot be predicated per thread"):
        _copy_if_stsm(lambda n: [np.full(n, t != 37) for t in range(128)])
