"""Seed 004's tutorials 03 and 04 run on the emulator (examples/blackwell_*.py) and equal numpy's fp32 product."""

from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np
import pytest

from tmakit.cli import main as cli_main
from tmakit.demo import sm100_mma_tma_2sm as ex04
from tmakit.demo import sm100_mma_tma_multicast as ex03
from tmakit.emu.umma import reference_mma

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize("example", [ex03, ex04], ids=["03_multicast", "04_2sm"])
def test_example_matches_numpy(example):
    A, B = ex03.make_problem(512, 1024, 128, seed=7)
    D, stats = example.run(A, B)
    a, b = A.astype(np.float32), B.astype(np.float32)
    assert np.array_equal(D.view(np.uint32), reference_mma(a, b.T, 16).view(np.uint32))
    np.testing.assert_allclose(D, a.astype(np.float64) @ b.T.astype(np.float64), rtol=1e-5, atol=1e-5)
    assert stats["mma"] == (16 if example is ex03 else 8) * 2 * 4  # issuing CTAs x K-tiles x K-blocks


def test_alpha_beta_epilogue():
    A, B = ex03.make_problem(512, 1024, 64, seed=1)
    C = np.random.default_rng(2).standard_normal((512, 1024)).astype(np.float32)
    D, _ = ex04.run(A, B, alpha=2.0, beta=-1.0, C=C)
    acc = reference_mma(A.astype(np.float32), B.astype(np.float32).T, 16)
    assert np.array_equal(D, (np.float32(2.0) * acc + np.float32(-1.0) * C).astype(np.float32))


def test_walkthrough_follows_cute_not_the_seed(capsys):
    ex03.walkthrough()
    ex04.walkthrough()
    out = capsys.readouterr().out
    assert "0b110011" in out and "0x44" in out and "tmakit follows CuTe" in out
    assert "((_2),_2,_4,_1):((_1),_2,_4,_0)" in out
    assert "tma_mcast_mask_a 0x4444" in out and "mma_mcast_mask_c 0xcfcc" in out


def test_demo_blackwell_and_the_example_files(capsys):
    assert cli_main(["demo", "blackwell"]) == 0
    out = capsys.readouterr().out
    assert out.count("Execution is successful.") == 2 and "done: blackwell" in out
    runpy.run_path(str(EXAMPLES / "blackwell_mma_tma_2sm.py"), run_name="__main__")
    assert "Execution is successful." in capsys.readouterr().out


def test_example03_prints_what_cutlass_prints(capsys):
    """The traced CTA's objects equal the comments of CUTLASS's 03_mma_tma_multicast_sm100.cu (addresses aside)."""
    A, B = ex03.make_problem(512, 1024, 256, seed=3)
    ex03.run(A, B, verbose=True, trace=(0, 1, 2, 0))
    out = capsys.readouterr().out
    for line in ("mma_shape_A:\t((_128,_16),_1,_4)", "mma_shape_B:\t((_256,_16),_1,_4)",
                 "sA_layout:\tSw<3,4,3> o smem_ptr[16b](unset) o ((_128,_16),_1,_4):((_64,_1),_0,_16)",
                 "tCgA:\tArithTuple(_0,128) o ((_128,_16),_1,_4,4):((_1@1,_1@0),_0,_16@0,_64@0)",
                 "tCrA:\tUMMA::DescriptorIterator o (_1,_1,_4):(_0,_0,_2)",
                 "tCtAcc:\ttmem_[32b](0x0000.0000) o ((_128,_256),_1,_1):((_65536,_1),_0,_0)",
                 "o (((_64,_128),_1),4):(((_1@0,_1@1),_0),_64@0)", "o ((_8192,_1)):((_1,_0))",
                 "o (((_64,_256),_1),4):(((_1@0,_1@1),_0),_64@0)", "o ((_16384,_1)):((_1,_0))",
                 "tma_transaction_bytes: 49152", "tma_mcast_mask_a: 2222", "mma_mcast_mask_c: 2f22"):
        assert line in out, line
    assert "tAsA:\tSw<3,4,3>_smem_ptr[16b](0x2000)" in out  # tma_partition's multicast offset 4096 elements


def test_example04_prints_what_cutlass_prints(capsys):
    """Tutorial 04's traced CTA (0,1,2,0): 2x1SM fragments, 2-SM TMA partitions, the leader's transaction bytes."""
    A, B = ex03.make_problem(512, 1024, 256, seed=4)
    ex04.run(A, B, trace=(0, 1, 2, 0))
    out = capsys.readouterr().out
    for line in ("tCrA:\tUMMA::DescriptorIterator o (_1,_1,_4):(_0,_0,_2)",
                 "tCtAcc:\ttmem_[32b](0x0000.0000) o ((_128,_256),_1,_1):((_65536,_1),_0,_0)",
                 "o (((_64,_128),_1),4):(((_1@0,_1@1),_0),_64@0)", "tma_transaction_bytes: 65536",
                 "tma_mcast_mask_a: 4444", "tma_mcast_mask_b: 500", "mma_mcast_mask_c: cfcc"):
        assert line in out, line
