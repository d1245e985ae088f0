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
