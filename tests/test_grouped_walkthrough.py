"""CUTLASS 57_hopper_grouped_gemm on the emulator: per-group descriptors rewritten on the device, results against numpy,
the two descriptor hazards, and the walkthrough (example file and ``tmakit demo grouped``)."""

from __future__ import annotations

import importlib.util
import pathlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tmakit import emu
from tmakit.demo import grouped_gemm as gg

EXAMPLE = pathlib.Path(__file__).resolve().parent.parent / "examples" / "grouped_gemm_descriptors.py"


def test_default_groups_match_numpy_including_empty_group_and_k_tails():
    groups, log, stats, errors = gg.run_grouped()
    assert errors == [0.0] * len(gg.SHAPES)
    assert any(m == 0 for m, _n, _k in gg.SHAPES) and any(k % gg.BLK_K for _m, _n, k in gg.SHAPES)
    assert stats["bulk_load"] == 2  # the problem table, one cp.async.bulk per CTA
    changes = sum(": group " in line for line in log)  # one per (CTA, group it meets)
    assert stats["tensormap_cp_fenceproxy"] == stats["tensormap_acquire"] == 3 * changes
    assert sum(int(line.split(": ")[1].split()[0]) for line in log if line.endswith("tiles")) == \
        sum(gg.ceil_div(m, gg.BLK_M) * gg.ceil_div(n, gg.BLK_N) for m, n, _k in gg.SHAPES)


dims = st.sampled_from([0, 1, 4, 12, 16, 20, 36])
mult4 = st.sampled_from([4, 8, 12, 16, 20, 36])


@settings(max_examples=8, deadline=None)
@given(shapes=st.lists(st.tuples(dims, mult4, mult4), min_size=1, max_size=4), ctas=st.integers(1, 3))
def test_random_group_lists_match_numpy(shapes, ctas):
    """Property: any group list (empty groups, M_g = 1, K_g and N_g not multiples of the tile) matches numpy."""
    if all(m == 0 for m, _n, _k in shapes):
        shapes = shapes + [(4, 4, 4)]  # the templates need one non-empty group
    _groups, _log, _stats, errors = gg.run_grouped(tuple(shapes), num_ctas=ctas)
    assert errors == [0.0] * len(shapes)


def test_missing_acquire_is_reported_and_corrupts_results():
    with pytest.raises(emu.RaceError) as e:
        gg.run_grouped(bug="no_acquire")
    msg = str(e.value)
    assert "CTA rank 0 block (0,0,0)" in msg and "(A of group 0)" in msg and "the acquire fence in the user" in msg
    with pytest.warns(emu.EmuWarning):
        _g, _l, _s, errors = gg.run_grouped(bug="no_acquire", strict=False)
    assert any(errors)  # the stale descriptors load and store the wrong group's data


def test_rewrite_while_store_in_flight_is_reported():
    with pytest.raises(emu.RaceError) as e:
        gg.run_grouped(bug="no_store_wait")
    msg = str(e.value)
    assert "rewrites the tensor map" in msg and "(C of group 0)" in msg
    assert "TMA store" in msg and "its bulk group was not waited for" in msg


def test_example_and_demo_print_the_walkthrough(capsys):
    spec = importlib.util.spec_from_file_location("grouped_gemm_descriptors", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.main()
    out = capsys.readouterr().out
    assert out.count(" OK") == len(gg.SHAPES) and "MISMATCH" not in out
    assert "1 x SM90_BULK_COPY_G2S of 256 bytes" in out
    assert "acquire fence in the user" in out and "may still be in flight" in out
    from tmakit.cli import main as cli_main

    assert cli_main(["demo", "grouped"]) == 0
    assert "grouped: ptr-array grouped GEMM" in capsys.readouterr().out
