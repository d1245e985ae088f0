"""The bandwidth benchmark harness's pure parts (no GPU): size parsing and the markdown report."""

from __future__ import annotations

import pytest

from tmakit.bench import harness as h


@pytest.mark.parametrize("text, want", [("1MiB", 1 << 20), ("4GiB", 4 << 30), ("256MiB", 256 << 20),
                                        ("64KiB", 64 << 10)])
def test_parse_size(text, want):
    assert h.parse_size(text) == want


def _result(b2b=True):
    row = dict(op="reduce", case="add bfloat16 256 MiB", bytes=3 * (256 << 20), tmakit_ms=0.187, peer_ms=0.1866,
               tmakit_tbs=4.30, peer_tbs=4.31, ratio=0.998, frac_ceiling=1.007, path="tma:combine")
    if b2b:
        row.update(tmakit_b2b_ms=0.1853, peer_b2b_ms=0.1860, ratio_b2b=1.0038)
    env = dict(date="2026-11-22", commit="abc1234", device="NVIDIA H200", sms=132, torch="2.11")
    return dict(env=env, ceiling_tbs=4.27, rows=[row])


def test_markdown_reports_per_call_and_back_to_back_ratios():
    md = h.markdown(_result())
    head, rule, row = md.splitlines()[2:5]
    assert "back-to-back tmakit / peer" in head and head.count("|") == rule.count("|") == row.count("|")
    assert "| 0.998 |" in row and "| 1.004 |" in row and "768 MiB" in row and "tma:combine" in row


def test_markdown_without_back_to_back_timings():
    """Rows of older JSON files (no back-to-back timing) still print, with a dash."""
    row = h.markdown(_result(b2b=False)).splitlines()[4]
    assert "| - |" in row and "| 0.998 |" in row


def test_round_stats_median_of_per_round_ratios():
    """Each round's ratio compares its own two loops: a machine that slows down between rounds moves both sides."""
    st = h.round_stats([1.0, 2.0, 1.1], [1.02, 2.02, 1.089])
    assert st["rounds"] == 3 and st["tmakit_ms"] == 1.1 and st["peer_ms"] == 1.089
    assert st["ratio"] == pytest.approx(1.01) and st["ratio_min"] == pytest.approx(0.99)
    assert st["ratio_max"] == pytest.approx(1.02)
    assert st["ratio"] != pytest.approx(st["peer_ms"] / st["tmakit_ms"])  # not the ratio of the medians


def test_interleaved_rounds_alternate_which_side_goes_first(monkeypatch):
    """Every round times both sides per call and back to back; tmakit goes first in even rounds, the peer in odd
    ones, so neither side always follows the other."""
    order = []

    def fake_op(fn, nsets, reps=30):
        order.append(("op", fn))
        return {"tk": 1.0, "peer": 1.1}[fn]

    def fake_chain(fn, nsets, reps=30):
        order.append(("chain", fn))
        return {"tk": 0.5, "peer": 0.6}[fn]

    monkeypatch.setattr(h, "time_op", fake_op)
    monkeypatch.setattr(h, "time_chain", fake_chain)
    (tk_ms, peer_ms), (tk_bb, peer_bb) = h.interleaved_rounds("tk", "peer", 2, 30, 3)
    assert tk_ms == [1.0] * 3 and peer_ms == [1.1] * 3 and tk_bb == [0.5] * 3 and peer_bb == [0.6] * 3
    firsts = [order[4 * r][1] for r in range(3)]
    assert firsts == ["tk", "peer", "tk"]
    assert order[:4] == [("op", "tk"), ("chain", "tk"), ("op", "peer"), ("chain", "peer")]


def test_cli_takes_rounds_and_burn_in(monkeypatch, capsys):
    """``--rounds`` and ``--burn-in`` reach run_suite (GPU-free: the suite is replaced)."""
    import sys
    import types

    seen = {}

    def fake_suite(which, sizes, reps, progress=True, rounds=3, burn=3.0):
        seen.update(which=which, reps=reps, rounds=rounds, burn=burn)
        return _result()

    fake_torch = types.SimpleNamespace(cuda=types.SimpleNamespace(is_available=lambda: True,
                                                                get_device_capability=lambda *a: (9, 0)))
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    monkeypatch.setattr(h, "run_suite", fake_suite)
    assert h.main(["reduce", "--rounds", "5", "--reps", "7", "--burn-in", "0", "-q"]) == 0
    assert seen == dict(which=["reduce"], reps=7, rounds=5, burn=0.0)
    assert "| 0.998 |" in capsys.readouterr().out


def test_source_revision_names_the_commit_and_changes(tmp_path):
    """Reports name the commit that ran, with ``+changes`` when tracked files differ from it; '' outside git."""
    import shutil
    import subprocess

    assert h.source_revision(tmp_path) == ""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")

    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True,
                       capture_output=True)

    git("init", "-q")
    (tmp_path / "a.py").write_text("x = 1\n")
    git("add", "a.py")
    git("commit", "-q", "-m", "one")
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=tmp_path, capture_output=True,
                          text=True).stdout.strip()
    assert h.source_revision(tmp_path) == head
    (tmp_path / "new.py").write_text("untracked\n")
    assert h.source_revision(tmp_path) == head  # untracked files do not count
    (tmp_path / "a.py").write_text("x = 2\n")
    assert h.source_revision(tmp_path) == head + "+changes"
