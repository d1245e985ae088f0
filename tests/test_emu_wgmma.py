"""wgmma.mma_async on the emulator: results against numpy per type, SS against RS, scale-d, negation, transposes,
the register fragment layouts, and the TMA + wgmma GEMM demo end to end."""

from __future__ import annotations

import pathlib
import runpy

import numpy as np
import pytest

from test_emu_wgmma_programs import A_AT, B_AT, encode, ints, k_desc, run_one, values
from tmakit import emu
from tmakit.emu.wgmma_types import TYPES, to_float

CASES = [("f16", "f16", "f32"), ("f16", "f16", "f16"), ("bf16", "bf16", "f32"), ("tf32", "tf32", "f32"),
         ("e4m3", "e4m3", "f32"), ("e4m3", "e5m2", "f32"), ("e5m2", "e4m3", "f16"), ("e5m2", "e5m2", "f32")]


@pytest.mark.parametrize("atype, btype, dtype", CASES)
@pytest.mark.parametrize("n", [8, 64, 256])
def test_small_integers_match_numpy_exactly(atype, btype, dtype, n):
    """Small integers: every summation order is exact, so D equals numpy's product for every type."""
    rng = np.random.default_rng(n)
    k = TYPES[atype].k
    a, b = ints(rng, (64, k)), ints(rng, (n, k))
    d = run_one(encode(a, atype), encode(b, btype), n=n, atype=atype, btype=btype, dtype=dtype, repeat=2)
    assert d.dtype == (np.float16 if dtype == "f16" else np.float32)
    np.testing.assert_array_equal(d.astype(np.float64), 2 * (a.astype(np.float64) @ b.T))


def random_bits(rng, shape, atype: str) -> np.ndarray:
    """Uniform values in [-1, 1) as ``atype`` bits: bf16 truncated, f16 rounded, tf32 raw fp32 (the MMA truncates)."""
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    return (x.view(np.uint32) >> 16).astype(np.uint16) if atype == "bf16" else encode(x, atype)


@pytest.mark.parametrize("atype", ["bf16", "f16", "tf32"])
def test_random_values_follow_the_defined_order_bit_for_bit(atype):
    rng = np.random.default_rng(7)
    k = TYPES[atype].k
    ab, bb = random_bits(rng, (64, k), atype), random_bits(rng, (128, k), atype)
    c = rng.uniform(-4, 4, (64, 128)).astype(np.float32)
    d = run_one(ab, bb, n=128, atype=atype, init=c, scale_d=1, repeat=3)
    av, bv = values(ab, atype), values(bb, atype)
    want = c
    for _ in range(3):
        want = emu.reference_wgmma(av, bv.T, k, want)
    assert np.array_equal(d.view(np.uint32), want.view(np.uint32))
    np.testing.assert_allclose(d, c + 3 * (av @ bv.T), rtol=1e-5, atol=1e-5)


def test_tf32_ignores_the_low_mantissa_bits():
    a = np.full((64, 8), 1 + 2.0**-12, np.float32)  # 1 + 2^-12 needs 12 mantissa bits; tf32 keeps 10
    b = np.ones((8, 8), np.float32)
    d = run_one(a.view(np.uint32), b.view(np.uint32), n=8, atype="tf32")
    assert np.all(d == 8.0)


def test_rs_form_equals_ss_form():
    rng = np.random.default_rng(3)
    for atype in ("bf16", "tf32", "e4m3"):
        k = TYPES[atype].k
        a, b = encode(ints(rng, (64, k)), atype), encode(ints(rng, (32, k)), atype)
        ss = run_one(a, b, n=32, atype=atype)
        rs = run_one(a, b, n=32, atype=atype, rs=True)
        assert np.array_equal(ss, rs) and np.array_equal(ss, values(a, atype) @ values(b, atype).T)


def test_scale_d_and_negation():
    rng = np.random.default_rng(4)
    a, b = ints(rng, (64, 16)), ints(rng, (16, 16))
    ab, bb = encode(a, "bf16"), encode(b, "bf16")
    p = a @ b.T
    c = ints(rng, (64, 16), -50, 50)
    assert np.array_equal(run_one(ab, bb, n=16, atype="bf16", init=c, scale_d=0), p)  # overwrite
    assert np.array_equal(run_one(ab, bb, n=16, atype="bf16", init=c, scale_d=1), c + p)  # accumulate
    assert np.array_equal(run_one(ab, bb, n=16, atype="bf16", scale_a=-1), -p)
    assert np.array_equal(run_one(ab, bb, n=16, atype="bf16", scale_a=-1, scale_b=-1), p)
    assert np.isnan(run_one(ab, bb, n=16, atype="bf16", scale_d=1)).all()  # registers never written: NaN here


@pytest.mark.parametrize("swizzle, a_lbo_sbo, b_lbo_sbo", [
    (128, (8192, 1024), (8192, 1024)),  # 64 M rows of bf16 = one 128 B span; B's 128 N rows = 2 spans (LBO)
    (64, (4096, 512), (4096, 512)),
    (32, (2048, 256), (2048, 256)),
    (0, (2048, 128), (2048, 128)),  # none: MN chunks of 8 elements SBO apart, 8 K rows of 16 B, LBO to the next 8
])
def test_transposed_operands_are_mn_major(swizzle, a_lbo_sbo, b_lbo_sbo):
    rng = np.random.default_rng(5)
    a, b = ints(rng, (64, 16)), ints(rng, (128, 16))
    da = emu.encode_wgmma_desc(A_AT, *a_lbo_sbo, swizzle)
    db = emu.encode_wgmma_desc(B_AT, *b_lbo_sbo, swizzle)
    for atype in ("f16", "bf16"):
        d = run_one(encode(a, atype), encode(b, atype), n=128, atype=atype, a_desc=da, b_desc=db, trans_a=1,
                    trans_b=1)
        assert np.array_equal(d, a @ b.T)


@pytest.mark.parametrize("swizzle", [0, 32, 64])
def test_k_major_other_swizzles(swizzle):
    rng = np.random.default_rng(6)
    a, b = ints(rng, (64, 32)), ints(rng, (64, 32))
    d = run_one(encode(a, "e4m3"), encode(b, "e5m2"), n=64, atype="e4m3", btype="e5m2",
                a_desc=k_desc(A_AT, swizzle), b_desc=k_desc(B_AT, swizzle))
    assert np.array_equal(d, a @ b.T)


def test_accumulator_fragment_layout():
    rows, cols = emu.accumulator_coords(64, 37)  # warp 1, lane 5: g = 1, c = 1
    assert list(zip(rows[:6].tolist(), cols[:6].tolist())) == [(17, 2), (17, 3), (25, 2), (25, 3), (17, 10),
                                                               (17, 11)]
    seen = np.zeros((64, 256), int)
    for t in range(128):
        r, c = emu.accumulator_coords(256, t)
        seen[r, c] += 1
    assert (seen == 1).all()


@pytest.mark.parametrize("atype, first", [("bf16", [(0, 0), (0, 1), (8, 0), (8, 1), (0, 8), (0, 9)]),
                                          ("tf32", [(0, 0), (8, 0), (0, 4), (8, 4)]),
                                          ("e4m3", [(0, 0), (0, 1), (0, 2), (0, 3), (8, 0)])])
def test_a_fragment_layout(atype, first):
    r, c = emu.a_fragment_coords(atype, 0)
    assert list(zip(r.tolist(), c.tolist()))[:len(first)] == first
    seen = np.zeros((64, TYPES[atype].k), int)
    for t in range(128):
        r, c = emu.a_fragment_coords(atype, t)
        seen[r, c] += 1
    assert (seen == 1).all()


def test_per_thread_fragments_round_trip_through_a_kernel():
    """A written thread by thread (4 registers each), D read thread by thread, f32 and f16 accumulators."""
    rng = np.random.default_rng(8)
    a, b = ints(rng, (64, 16)), ints(rng, (32, 16))
    ab, bb = encode(a, "f16"), encode(b, "f16")
    got = {}

    def kernel():
        img = emu.shared_array(0x10000, np.uint8, align=1024)
        from tmakit.emu.wgmma_desc import place_operand

        place_operand(img, k_desc(B_AT), 0, bb)
        emu.fence_proxy_async()
        frag = emu.wgmma_fragment_a("f16", warpgroup=1)
        for t in range(128):
            r, c = emu.a_fragment_coords("f16", t)
            frag.set_thread(t, np.ascontiguousarray(ab[r, c]).view(np.uint32))
        d32, d16 = emu.wgmma_accumulator(32, "f32", 1), emu.wgmma_accumulator(32, "f16", 1)
        emu.wgmma_fence(1)
        emu.wgmma_mma_async(d32, frag, k_desc(B_AT), 0, atype="f16")
        emu.wgmma_mma_async(d16, frag, k_desc(B_AT), 0, atype="f16")
        emu.wgmma_commit_group(1)
        emu.wgmma_wait_group(0, 1)
        for name, acc in (("f32", d32), ("f16", d16)):
            m = np.zeros((64, 32), np.float32)
            for t in range(128):
                r, c = emu.accumulator_coords(32, t)
                regs = acc.fragment(t)
                m[r, c] = regs if name == "f32" else regs.view(np.float16).astype(np.float32)
                assert np.array_equal(acc.thread_values(t), m[r, c])
            got[name] = m
        assert np.array_equal(frag.thread(5), np.ascontiguousarray(ab[emu.a_fragment_coords("f16", 5)]).view(
            np.uint32))

    emu.launch(kernel, (1,))
    assert np.array_equal(got["f32"], a @ b.T) and np.array_equal(got["f16"], a @ b.T)


@pytest.mark.parametrize("dtype, atype, btype, match", [
    ("f16", "bf16", "bf16", "accumulator .f16 with .bf16 inputs"),
    ("f32", "bf16", "f16", "must be equal"),
    ("f32", "s8", "s8", "not a dense floating wgmma type"),
])
def test_type_rules(dtype, atype, btype, match):
    def kernel():
        acc = emu.wgmma_accumulator(64, dtype)
        emu.wgmma_fence()
        emu.wgmma_mma_async(acc, k_desc(A_AT), k_desc(B_AT), 0, atype=atype, btype=btype)

    with pytest.raises(emu.IllegalInstruction, match=match):
        emu.launch(kernel, (1,))


@pytest.mark.parametrize("kw, match", [({"imm_trans_b": 1, "atype": "tf32"}, "exist for .f16/.bf16 only"),
                                       ({"imm_scale_a": 2}, "imm-scale-a 2"),
                                       ({"shape": "m64n64k8"}, "the accumulator and .bf16 make m64n64k16"),
                                       ({"scale_d": 2}, "scale-d 2")])
def test_operand_rules(kw, match):
    def kernel():
        acc = emu.wgmma_accumulator(64)
        emu.wgmma_fence()
        emu.wgmma_mma_async(acc, k_desc(A_AT), k_desc(B_AT), **{"scale_d": 0, **kw})

    with pytest.raises(emu.IllegalInstruction, match=match):
        emu.launch(kernel, (1,))


def test_shapes_outside_ptx_are_refused():
    for n in (0, 12, 264):
        with pytest.raises(emu.IllegalInstruction, match="multiple of 8 in 8..256"):
            emu.launch(lambda n=n: emu.wgmma_accumulator(n), (1,))


def test_fp8_tables():
    e4, e5 = to_float(np.arange(256, dtype=np.uint8), "e4m3"), to_float(np.arange(256, dtype=np.uint8), "e5m2")
    assert e4[0x7E] == 448 and np.isnan(e4[0x7F]) and e4[0x01] == 2.0**-9 and e4[0xB8] == -1
    assert e5[0x7B] == 57344 and e5[0x7C] == np.inf and np.isnan(e5[0x7D]) and e5[0x01] == 2.0**-16


def test_demo_gemm_end_to_end(capsys):
    from tmakit.demo import sm90_tma_wgmma_gemm as demo

    a, b = demo.make_problem(128, 256, 256, seed=1)
    d, stats = demo.run(a, b)
    assert stats == {"load": 16, "wgmma": 64, "store": 4}
    af, bf = demo.bf16_values(a), demo.bf16_values(b)
    assert np.array_equal(d.view(np.uint32), emu.reference_wgmma(af, bf.T, 16).view(np.uint32))
    np.testing.assert_allclose(d, af.astype(np.float64) @ bf.T.astype(np.float64), atol=1e-4)
    from tmakit.cli import main as cli_main

    assert cli_main(["demo", "hopper"]) == 0
    out = capsys.readouterr().out
    assert "Execution is successful." in out and "SWIZZLE_128B" in out and "d0->(1,2)" in out
    runpy.run_path(str(pathlib.Path(__file__).resolve().parent.parent / "examples" / "hopper_tma_wgmma_gemm.py"),
                   run_name="__main__")
    assert "Execution is successful." in capsys.readouterr().out
