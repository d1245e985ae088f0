"""CuTe's SM90 GMMA calls on the emulator (``emu.gemm`` on tmakit.mma's GMMA fragments, ``warpgroup_*``, thread
fragments): SS and RS atoms, several N, K- and MN-major B, 1x1 and 2x1 atom layouts, f32 and f16 accumulators,
``accumulate_`` as CuTe uses it, races on the fragments, bad input, and CuTe's Hopper tutorial end to end."""

from __future__ import annotations

import copy
import pathlib
import runpy

import numpy as np
import pytest

import tmakit as tk
from tmakit import emu
from tmakit.cli import main as cli_main
from tmakit.demo import sm90_cute_wgmma_tma as tutorial
from tmakit.mma.mma_sm90 import GMMA_OPS

I = tk.Int  # noqa: E741
_ = tk._
G = tk.GMMA
K, MN = G.Major.K, G.Major.MN
EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"
TYPES = {"f16": (tk.half_t, np.float16), "bf16": (tk.bfloat16_t, np.uint16), "tf32": (tk.tfloat32_t, np.float32)}


def encode(x: np.ndarray, ptx: str) -> np.ndarray:
    """Small integers as the storage of ``ptx`` elements (exact in every type)."""
    if ptx == "bf16":
        return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return x.astype(TYPES[ptx][1])


def smem_layout(major, t, mn: int, k: int):
    atom = G.Layout_K_SW128_Atom(t) if major == K else G.Layout_MN_SW128_Atom(t)
    return tk.tile_to_shape(atom, (I(mn), I(k), I(1)))  # (MN, K, PIPE=1)


def gmem(x: np.ndarray, major):
    """An (MN, K) operand in emulated global memory, K-major (row-major storage) or MN-major (stored transposed)."""
    mn, k = x.shape
    if major == K:
        arr = emu.alloc((mn, k), x.dtype, align=128)
        arr[:] = x
        return arr, tk.make_tensor(arr, tk.make_layout((mn, k), (k, I(1))))
    arr = emu.alloc((k, mn), x.dtype, align=128)
    arr[:] = x.T
    return arr, tk.make_tensor(arr, tk.make_layout((mn, k), (I(1), mn)))


def load(tma, s_layout, t, tensor, bar):
    """One TMA load of the whole tile ``tensor`` into a fresh swizzled smem tensor; returns its (MN, K) view."""
    ptr = emu.shared_alloc(int(tk.cosize(s_layout)) * tk.sizeof_bits(t) // 8, 1024)
    s = tk.make_tensor(tk.make_smem_ptr(t, ptr.address), s_layout)
    g = tma.get_tma_tensor(tensor.shape)  # the TMA coordinate tensor, with a rest mode of 1 tile
    tg, ts = tk.tma_partition(tma, 0, tk.make_layout(I(1)), tk.group_modes(s, 0, 2),
                              tk.group_modes(tk.make_tensor(g.iterator, tk.append(g.layout, I(1))), 0, 2))
    emu.copy(tma.with_(bar), tg[(_, 0)], ts[(_, 0)])
    return s[(_, _, 0)]


def gemm_kernel(mma, sa_l, sb_l, tma_a, tma_b, m_a, m_b, a_host, out, t, mode, hazard):
    mma = copy.copy(mma)  # a by-value kernel parameter: accumulate_ is this CTA's
    bar = emu.shared_barrier()
    emu.initialize_barrier(bar, 1)
    emu.fence_barrier_init()
    tx = (0 if mma.op.rs else int(tk.size(sa_l))) + int(tk.size(sb_l))
    emu.set_barrier_transaction_bytes(bar, tx * tk.sizeof_bits(t) // 8)
    sA = None if mma.op.rs else load(tma_a, sa_l, t, m_a, bar)  # noqa: N806
    sB = load(tma_b, sb_l, t, m_b, bar)  # noqa: N806
    emu.wait_barrier(bar, 0)
    m, n = out.shape
    gC = tk.make_tensor(out, tk.make_layout((I(m), I(n)), (I(n), I(1))))  # noqa: N806 - (M,N), row-major
    threads = int(mma.get_thr_layout_vmnk().size())
    thr = [mma.get_thread_slice(i) for i in range(threads)]
    tCrC = emu.thread_fragments_C(mma, thr[0].partition_fragment_C(gC))  # noqa: N806
    if mma.op.rs:
        gA = tk.make_tensor(a_host, tk.make_layout((I(m), I(a_host.shape[1])), (I(a_host.shape[1]), I(1))))  # noqa: N806
        tCrA_all = emu.thread_fragments_A(mma, thr[0].partition_fragment_A(gA))  # noqa: N806
        for i in range(threads):  # copy(tCgA, tCrA) thread by thread
            src, dst = thr[i].partition_A(gA), tCrA_all[i]
            for j in range(int(tk.size(src))):
                dst[j] = src(j)
        emu.warpgroup_fence_operand(tCrA_all)
    if mode == "clear":
        for i in range(threads):
            tk.clear(tCrC[i])
    for w in range(threads // 128):
        me = thr[128 * w]  # the warpgroup's threads share its operands; thread 128w stands for it
        tCrA = tCrA_all[128 * w] if mma.op.rs else me.partition_fragment_A(sA)  # noqa: N806
        tCrB = me.partition_fragment_B(sB)  # noqa: N806
        emu.warpgroup_fence_operand(tCrC)
        emu.warpgroup_arrive(w)
        if hazard == "write_after_fence":
            tCrC[128 * w][0] = 0.0
        if mode in ("clear", "uninit"):
            emu.gemm(mma, tCrA, tCrB, tCrC[128 * w])
        elif mode == "zero_all":
            mma.accumulate_ = G.ScaleOut.Zero
            emu.gemm(mma, tCrA, tCrB, tCrC[128 * w])
        else:  # CuTe's collective mainloop: Zero for the first k_block, One after
            mma.accumulate_ = G.ScaleOut.Zero
            for k_block in range(int(tk.size(tCrB.layout[2]))):
                emu.gemm(mma, tCrA[(_, _, k_block)], tCrB[(_, _, k_block)], tCrC[128 * w])
                mma.accumulate_ = G.ScaleOut.One
        emu.warpgroup_commit_batch(w)
        if hazard == "read_before_wait":
            tCrC[128 * w](0)
        emu.warpgroup_wait(0, w)
    for i in range(threads):
        tk.axpby(1.0, tCrC[i], 0.0, thr[i].partition_C(gC))


def run_gemm(op, a_major=K, b_major=K, atoms=(1, 1), m=None, n=None, ptx="bf16", mode="clear", hazard=None,
             seed=0, strict=True):
    """C (m x n) = A.B^T for a tile of ``op`` atoms laid out ``atoms`` (M, N); returns (C, A, B, stats)."""
    mma = tk.make_tiled_mma(op, tk.make_layout((I(atoms[0]), I(atoms[1]), I(1))))
    t = TYPES[ptx][0]
    m, n = m or 64 * atoms[0], n or op.N * atoms[1]
    k = 1024 // tk.sizeof_bits(t)  # one 128-byte swizzle row of K: 4 MMAs
    rng = np.random.default_rng(seed)
    a, b = rng.integers(-3, 4, (m, k)), rng.integers(-3, 4, (n, k))
    a_arr, m_a = gmem(encode(a, ptx), a_major)
    _b_arr, m_b = gmem(encode(b, ptx), b_major)
    sa_l, sb_l = smem_layout(a_major, t, m, k), smem_layout(b_major, t, n, k)
    tma_a = tk.make_tma_atom(tk.SM90_TMA_LOAD, m_a, sa_l(_, _, 0), (I(m), I(k)))
    tma_b = tk.make_tma_atom(tk.SM90_TMA_LOAD, m_b, sb_l(_, _, 0), (I(n), I(k)))
    out = emu.alloc((m, n), np.float16 if op.c_type is tk.half_t else np.float32)
    out[:] = -7
    stats = emu.launch(gemm_kernel, (1, 1), (1, 1, 1), mma, sa_l, sb_l, tma_a, tma_b, m_a, m_b, a_arr, out, t, mode,
                       hazard, strict=strict)
    return out.astype(np.float64), a, b, stats


@pytest.mark.parametrize("n", [64, 128, 256])
def test_ss_k_major_bf16_matches_numpy(n):
    c, a, b, stats = run_gemm(getattr(tk, f"SM90_64x{n}x16_F32BF16BF16_SS")(K, K))
    np.testing.assert_array_equal(c, a @ b.T)
    assert stats["wgmma"] == 4  # one per K-block of the 128-byte row


@pytest.mark.parametrize("n", [64, 128])
def test_ss_mn_major_b(n):
    c, a, b, _s = run_gemm(getattr(tk, f"SM90_64x{n}x16_F32F16F16_SS")(K, MN), b_major=MN, ptx="f16")
    np.testing.assert_array_equal(c, a @ b.T)


def test_ss_mn_major_a_and_b_with_an_f16_accumulator():
    c, a, b, _s = run_gemm(tk.SM90_64x64x16_F16F16F16_SS(MN, MN), a_major=MN, b_major=MN, m=128, ptx="f16")
    np.testing.assert_array_equal(c, a @ b.T)  # one warpgroup, MMA_M = 2


def test_ss_tf32():
    c, a, b, stats = run_gemm(tk.SM90_64x64x8_F32TF32TF32_SS_TN(), ptx="tf32")
    np.testing.assert_array_equal(c, a @ b.T)
    assert stats["wgmma"] == 4


@pytest.mark.parametrize("atoms, n", [((2, 1), 64), ((1, 2), 64), ((2, 1), 128)])
def test_two_warpgroups(atoms, n):
    c, a, b, stats = run_gemm(getattr(tk, f"SM90_64x{n}x16_F32BF16BF16_SS")(K, K), atoms=atoms)
    np.testing.assert_array_equal(c, a @ b.T)
    assert stats["wgmma"] == 8  # 4 K-blocks per warpgroup


@pytest.mark.parametrize("n, atoms", [(64, (1, 1)), (128, (1, 1)), (256, (1, 1)), (64, (2, 1))])
def test_rs_a_from_registers(n, atoms):
    c, a, b, _s = run_gemm(getattr(tk, f"SM90_64x{n}x16_F32BF16BF16_RS")(K, K), atoms=atoms)
    np.testing.assert_array_equal(c, a @ b.T)


def test_rs_half_with_mn_major_b():
    c, a, b, _s = run_gemm(tk.SM90_64x64x16_F32F16F16_RS(K, MN), b_major=MN, ptx="f16")
    np.testing.assert_array_equal(c, a @ b.T)


def test_accumulate_zero_then_one_needs_no_clear():
    """CuTe's mainloop: accumulate_ = Zero for the first k_block's gemm, One after: the NaN registers are
    overwritten."""
    c, a, b, _s = run_gemm(tk.SM90_64x64x16_F32BF16BF16_SS(K, K), mode="zero_first")
    np.testing.assert_array_equal(c, a @ b.T)


def test_accumulate_zero_applies_to_every_k_block_of_one_gemm():
    """As in CuTe, accumulate_ is read by every MMA of the call: a (V,M,K) gemm with Zero keeps the last K-block."""
    c, a, b, _s = run_gemm(tk.SM90_64x64x16_F32BF16BF16_SS(K, K), mode="zero_all")
    np.testing.assert_array_equal(c, a[:, 48:] @ b[:, 48:].T)


def test_accumulate_one_without_clear_reads_uninitialized_registers():
    c, _a, _b, _s = run_gemm(tk.SM90_64x64x16_F32BF16BF16_SS(K, K), mode="uninit")
    assert np.isnan(c).all()


@pytest.mark.parametrize("hazard, match", [
    ("read_before_wait", "reads the accumulator of wgmma.mma_async.* before that MMA is known to be complete"),
    ("write_after_fence", "accessed after the last wgmma.fence"),
])
def test_fragment_races_are_reported(hazard, match):
    with pytest.raises(emu.RaceError, match=match):
        run_gemm(tk.SM90_64x64x16_F32BF16BF16_SS(K, K), hazard=hazard)


def _in_cta(body):
    """Run ``body()`` as a one-CTA program and return what it raised (or None)."""
    box = {}

    def kernel():
        try:
            body()
        except emu.EmuError as e:
            box["err"] = e

    emu.launch(kernel, (1, 1))
    return box.get("err")


def _frag(mma, n=64):
    gC = tk.make_tensor(np.zeros((64, n), np.float32), tk.make_layout((I(64), I(n))))  # noqa: N806
    return mma.get_thread_slice(0).partition_fragment_C(gC)


SS = tk.make_tiled_mma(tk.SM90_64x64x16_F32BF16BF16_SS(K, K))
SS128 = tk.make_tiled_mma(tk.SM90_64x128x16_F32BF16BF16_SS(K, K))


@pytest.mark.parametrize("body, words", [
    (lambda: emu.gemm(SS, _desc_frag(), _desc_frag(), _frag(SS)), ["C must be a thread's fragment", "numpy"]),
    (lambda: emu.gemm(SS, _desc_frag(), _desc_frag(), emu.thread_fragments_C(SS, _frag(SS))[0][(_, 0, 0)]),
     ["operand ranks A 4, B 4, C 1", "tCrA(_,_,_,read_pipe)"]),
    (lambda: emu.thread_fragments_C(tk.make_tiled_mma(GMMA_OPS["SM90_64x64x32_S32S8S8_SS_TN"]()), _frag(SS)),
     ["element type int32", "integer (s8/u8 -> s32) GMMA is not modelled"]),
    (lambda: emu.thread_fragments_A(SS, _frag(SS)), ["_SS op", "A registers exist for _RS ops only"]),
    (lambda: emu.thread_fragments_C(SS, _frag(SS128, 128)), ["holds 64 values", "each thread 32"]),
    (lambda: emu.thread_fragments_C(SS, np.zeros(4)), ["one thread's register fragment"]),
    (lambda: emu.thread_fragments_C(SS.op, _frag(SS)), ["expected a TiledMMA of an SM90 GMMA op"]),
    (lambda: emu.thread_fragments_C(SS, _frag(SS))[128], ["thread 128 must be 0..127"]),
    (lambda: emu.warpgroup_fence_operand(_desc_frag()), ["not a register fragment", "tCrC"]),
])
def test_bad_input_raises_with_the_rule(body, words):
    err = _in_cta(body)
    assert err is not None
    for w in words:
        assert w in str(err)


def _desc_frag():
    s = tk.make_tensor(tk.make_smem_ptr(tk.bfloat16_t, 0), tk.tile_to_shape(G.Layout_K_SW128_Atom(tk.bfloat16_t),
                                                                          (I(64), I(64), I(1))))
    return SS.get_thread_slice(0).partition_fragment_A(s)  # (MMA, MMA_M, MMA_K, PIPE)


def test_gemm_of_an_ss_op_wants_descriptors_for_a():
    def body():
        regs = emu.thread_fragments_C(SS, _frag(SS))
        emu.warpgroup_arrive()
        emu.gemm(SS, regs[0][(_, 0, 0)], _desc_frag()[(_, 0, 0, 0)], regs[0][(_, 0, 0)])

    err = _in_cta(body)
    assert "A of an _SS op must be one GMMA descriptor per atom" in str(err)


def test_thread_fragments_map_values_onto_the_ptx_fragment():
    """Value v of thread t's tCrC(_, m, n) is element v of the PTX accumulator fragment of atom (m, n)."""
    mma = tk.make_tiled_mma(tk.SM90_64x64x16_F32BF16BF16_SS(K, K))
    gC = tk.make_tensor(np.zeros((64, 128), np.float32), tk.make_layout((I(64), I(128))))  # noqa: N806

    def body():
        regs = emu.thread_fragments_C(mma, mma.get_thread_slice(0).partition_fragment_C(gC))
        regs.unit(0, 1).write(np.arange(64 * 64, dtype=np.float32).reshape(64, 64))
        rows, cols = emu.accumulator_coords(64, 37)
        got = regs[37][(_, 0, 1)]
        assert [float(got(v)) for v in range(32)] == [float(r * 64 + c) for r, c in zip(rows, cols)]
        assert str(regs[37]) == "rmem[float32](thread 37)+0 o ((_2,_2,_8),_1,_2):((_1,_2,_4),_0,_32)"

    assert _in_cta(body) is None


@pytest.mark.parametrize("trans", [("T", "N"), ("N", "T")])
def test_tutorial_end_to_end(trans):
    c, ref, stats = tutorial.run(*trans)
    np.testing.assert_array_equal(c, ref)
    assert stats["wgmma"] == 2 * 4 * 16  # 2 CTAs x 4 K-tiles x (2 x 2 atoms x 4 K-blocks)


def test_tutorial_rejects_shapes_it_cannot_run_unpredicated():
    with pytest.raises(ValueError, match="multiple of 256"):
        tutorial.run(m=128)
    with pytest.raises(ValueError, match="not implemented"):
        tutorial.run("N", "N")


def test_demo_and_example(capsys):
    assert cli_main(["demo", "hopper-cute"]) == 0
    out = capsys.readouterr().out
    assert out.count("Execution is successful.") == 2
    assert "tCrC:\trmem[float16](thread 0)+0 o ((_2,_2,_8),_2,_2):((_1,_2,_4),_32,_64)" in out
    assert "tCrA:\tGMMA::DescriptorIterator o (_1,_2,_4,(_1,_3)):(_0,_512,_2,(_0,_1024))" in out
    assert (EXAMPLES / "hopper_cute_wgmma_tma.py").exists()
    runpy.run_path(str(EXAMPLES / "hopper_cute_wgmma_tma.py"), run_name="not_main")  # imports cleanly
