"""grouped_mm along K on the emulator (tmakit.demo.grouped_k): per-group token extents edited on the device, the
results against numpy for any token split, and what breaks without the edit or with one slot pair."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tmakit import emu
from tmakit.demo import grouped_k as gk


def test_default_split_matches_numpy_with_empty_and_one_token_groups():
    log, stats, errors = gk.run_grouped_k()
    sizes = [hi - lo for lo, hi in (gk.token_range(gk.ENDS, g) for g in range(len(gk.ENDS)))]
    assert errors == [0.0] * len(gk.ENDS) and 0 in sizes and 1 in sizes and all(s % gk.BLK_K for s in sizes if s)
    switches = [line for line in log if "token extent set to" in line]
    assert stats["tensormap_replace"] == stats["tensormap_cp_fenceproxy"] == 2 * len(switches)
    assert stats["tensormap_acquire"] == 2 * len(switches)
    for cta in range(2):  # the pairs alternate within a CTA
        pairs = [int(line.rsplit(" ", 1)[1]) for line in switches if line.startswith(f"CTA {cta}:")]
        assert pairs == [i % 2 for i in range(len(pairs))]


@settings(max_examples=10, deadline=None)
@given(sizes=st.lists(st.sampled_from([0, 0, 1, 5, 15, 16, 17, 33]), min_size=1, max_size=5), ctas=st.integers(1, 3))
def test_any_token_split_matches_numpy(sizes, ctas):
    """Property: empty groups, single tokens, slabs cut anywhere, any CTA count."""
    ends = tuple(itertools.accumulate(sizes))
    _log, _stats, errors = gk.run_grouped_k(ends, num_ctas=ctas)
    assert errors == [0.0] * len(ends)


def test_without_the_extent_edit_groups_read_the_next_groups_tokens():
    _log, _stats, errors = gk.run_grouped_k(bug="no_extent")
    wrong = [g for g, e in enumerate(errors) if e]
    assert wrong == [0, 2, 3]  # groups followed by tokens of another group; the last one and the empty one are fine


def test_one_slot_pair_rewrites_a_descriptor_a_load_still_reads():
    with pytest.raises(emu.RaceError) as e:
        gk.run_grouped_k(bug="one_slot")
    msg = str(e.value)
    assert "rewrites the tensor map" in msg and "(A of group 0)" in msg and "TMA load" in msg
    assert "no CTA has waited for phase" in msg
    with pytest.warns(emu.EmuWarning):
        gk.run_grouped_k(bug="one_slot", strict=False)


def test_the_walkthrough_prints_matches_and_both_broken_variants(capsys):
    from tmakit.cli import main as cli_main

    assert cli_main(["demo", "grouped-k"]) == 0
    out = capsys.readouterr().out
    assert out.count(" OK") == len(gk.ENDS) and "MISMATCH" not in out
    assert "groups whose dW[g] is wrong: [0, 2, 3]" in out and "may still be in flight" in out
