"""The GEMM diagnostic tools measure what they say: tools/bench/fp32_issue.py's loop bodies are the instruction
forms its labels name (NVRTC + SASS, no GPU), and tools/bench/gemm_trace.py parses its arguments."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[1] / "tools" / "bench"


def _tool(name: str):
    spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# per mode: the operand pattern every FP op of the timed loop must have (R: per-thread register, UR: uniform)
LOOP_FORMS = {
    0: r"FADD R\d+, R\d+, R\d+",
    1: r"FFMA R\d+, R\d+, UR\d+, R\d+",
    2: r"FADD R\d+, R\d+, UR\d+",
    3: r"FFMA R\d+, R\d+, R\d+, R\d+",
    4: r"FFMA R\d+, R\d+, R\d+, R\d+",
}


@pytest.mark.parametrize("mode", sorted(LOOP_FORMS))
def test_fp32_issue_loop_is_the_named_form(mode, tmp_path):
    pytest.importorskip("cuda.bindings.nvrtc")
    from tmakit import cuda as tkc
    from tmakit.cuda import sass

    src = tmp_path / "rate.cu"
    src.write_text(_tool("fp32_issue").SRC)
    comp = tkc.compile_file(src, options=[f"-DMODE={mode}"], cache=False)
    try:
        text = sass.disassemble(comp.cubin)
    except tkc.RuntimeUnavailable:
        pytest.skip("no nvdisasm/cuobjdump")
    ops = [re.sub(r"\.reuse", "", ln.split("*/", 1)[1].split(";")[0]).strip() for ln in text.splitlines()
           if re.search(r"\*/\s+(FADD|FFMA)\s", ln)]
    # the timed loop is the longest run of consecutive FP operations reading the loop-carried sums
    loop = [op for op in ops if re.fullmatch(LOOP_FORMS[mode], op)]
    assert len(loop) >= 96, (mode, len(loop), ops[:8])


def test_gemm_trace_arguments():
    mod = _tool("gemm_trace")
    with pytest.raises(SystemExit):
        mod.main(["--scaling", "nonsense"])
    assert mod.SLABS == 512


def test_grouped_tiles_scores_the_chooser_against_the_best_tile():
    """tools/bench/grouped_tiles.py: 1.0 where the chooser's tile is the fastest, the ratio where it is not."""
    import sys

    sys.path.insert(0, str(TOOLS))
    tool = _tool("grouped_tiles")
    case = [8, 4096, 4096, 4096, "uniform"]  # 32768 tokens, wide N: 128x256 tiles
    assert tool.chosen("bf16", case, 32768) == "n256_s4_c1"
    ms = {"n256_s4_c1": 2.0, "n128_s6_c1": 1.0, "m64_n256_s5_c1_ov1": 3.0, "m64_n128_s8_c1_ov1": 3.0, "torch": 0.1}
    rec = dict(case=case, mode="bf16", tokens=32768, ms=ms)
    s, bad = tool.score([rec], "bf16")
    assert s == pytest.approx(0.5) and bad == [(case, "n256_s4_c1", "n128_s6_c1", 0.5)]
    s, _ = tool.score([dict(rec, ms=dict(ms, n256_s4_c1=0.5))], "bf16")
    assert s == 1.0


def test_random_moe_cases_are_reproducible_and_bounded():
    from tmakit.bench.moe import MAX_TOKENS, MAX_WEIGHT_BYTES, random_cases

    cases = random_cases(200, 7)
    assert cases == random_cases(200, 7) and cases != random_cases(200, 8)
    for g, rows, n, k, dist in cases:
        assert 8 <= g <= 256 and 1 <= rows and g * rows <= MAX_TOKENS and dist in ("uniform", "skewed")
        assert n % 16 == 0 and k % 16 == 0 and 256 <= n <= 8192 and 256 <= k <= 8192
        assert g * n * k * 2 <= MAX_WEIGHT_BYTES


def test_decode_cases_route_each_token_to_k_experts():
    import random

    from tmakit.bench.moe import MAX_WEIGHT_BYTES, decode_cases, routed_sizes, rows_per_expert

    cases = decode_cases(200, 7)
    assert cases == decode_cases(200, 7) and cases != decode_cases(200, 8)
    for g, tokens, n, k, dist in cases:
        top = int(dist.split("-")[0][3:])
        assert 8 <= g <= 256 and 1 <= tokens <= 512 and top <= g and dist.removeprefix(f"top{top}") in ("", "-skewed")
        assert n % 16 == 0 and k % 16 == 0 and 256 <= n <= 8192 and 256 <= k <= 8192
        assert g * n * k * 2 <= MAX_WEIGHT_BYTES
    assert {c[4].split("-")[0] for c in cases} == {"top1", "top2", "top4", "top6", "top8"}
    for dist in ("top4", "top4-skewed", "top8"):
        sizes = routed_sizes(6, 50, dist, random.Random(3))
        assert sum(sizes) == 50 * min(int(dist[3]), 6) and max(sizes) <= 50 and len(sizes) == 6
    skewed = routed_sizes(64, 200, "top1-skewed", random.Random(3))
    assert max(skewed) > 3 * 200 / 64  # Pareto weights: some experts draw far more than the mean
    assert rows_per_expert(10, "top4", 8) == 5.0 and rows_per_expert(10, "uniform", 8) == 10


@pytest.mark.parametrize("data, floor", [
    ("grouped-tiles-h200-heldout.jsonl", {"bf16": 0.985, "row": 0.99, "fast": 0.985, "block": 0.99}),
    ("grouped-tiles-h100-heldout.jsonl", {"bf16": 0.98, "row": 0.99, "fast": 0.98, "block": 0.98}),
    ("grouped-tiles-h200-bf16-n192.jsonl", {"bf16": 0.985}),
    ("grouped-tiles-h100-bf16-n192.jsonl", {"bf16": 0.98}),
    ("grouped-tiles-h100-bf16-n64.jsonl", {"bf16": 0.98}),  # 64x64 tiles timed too
    ("grouped-tiles-fp8-n64-h200.jsonl", {"row": 0.985, "fast": 0.985}),  # routed decode-like cases, fp8 64x64 too
    ("grouped-tiles-fp8-decode-h200.jsonl", {"row": 0.99, "fast": 0.99, "block": 0.99}),
    ("grouped-tiles-h200-n64-heldout.jsonl", {"bf16": 0.985, "row": 0.99, "fast": 0.975}),  # after the 64x64 tiles
    # rows crossing 128-byte lines (K not a multiple of 32): pairs along M timed beside the single CTAs
    ("grouped-tiles-odd-h200.jsonl", {"bf16": 0.975, "row": 0.99, "fast": 0.985, "block": 0.985}),
    ("grouped-tiles-odd-h200-heldout.jsonl", {"bf16": 0.975, "row": 0.99, "fast": 0.955, "block": 0.99}),
    ("grouped-tiles-odd-h100.jsonl", {"bf16": 0.96, "row": 0.985, "fast": 0.975, "block": 0.99}),
    ("grouped-tiles-odd-bf16-h200.jsonl", {"bf16": 0.94}),
])
def test_grouped_tile_chooser_holds_on_the_measured_sweeps(data, floor):
    """The chooser in the tree, scored on the committed sweeps (docs/GROUPED.md "Tile choice"): each mode within a
    few per cent of always picking the fastest tile. A change of the speeds or the estimate that loses ground on the
    measured problems fails here."""
    import json
    import sys

    sys.path.insert(0, str(TOOLS))
    tool = _tool("grouped_tiles")
    recs = [json.loads(line) for line in (TOOLS.parents[1] / "docs" / "bench" / data).read_text().splitlines()]
    for mode, lo in floor.items():
        s, _ = tool.score(recs, mode)
        assert s >= lo, (data, mode, s)


def test_grouped_tiles_scores_pairs_on_odd_pitches():
    """A record whose rows are an odd multiple of 16 bytes apart (fp8 K = 16 mod 32) offers the pairs along M: the
    chooser weighs them (single CTAs at ODD_PITCH_SPEED), and the score counts a pair it could have picked."""
    import sys

    sys.path.insert(0, str(TOOLS))
    tool = _tool("grouped_tiles")
    case = [8, 4096, 4096, 4112, "uniform"]  # 32768 tokens, wide N, K = 16 x 257
    assert "n192_s4_c2" in tool.candidates("row", case) and "n192_s4_c2" not in tool.candidates("row")
    assert tool.chosen("row", case, 32768) == "n192_s4_c2"
    ms = {"n192_s4_c1": 2.0, "n192_s4_c2": 1.0, "n128_s6_c1": 3.0, "n128_s6_c2": 3.0, "m64_n128_s8_c1": 4.0}
    s, bad = tool.score([dict(case=case, mode="row", tokens=32768, ms=ms)], "row")
    assert s == 1.0 and bad == []
    even = dict(case=[8, 4096, 4096, 4096, "uniform"], mode="row", tokens=32768, ms=ms)
    s, bad = tool.score([even], "row")  # an even pitch: only single CTAs count
    assert s == 1.0 and tool.chosen("row", even["case"], 32768) == "n192_s4_c1"


def test_fp8_odd_pitch_tool_arguments():
    mod = _tool("fp8_odd_pitch")
    with pytest.raises(SystemExit):
        mod.main(["--seed", "x"])
    assert mod.geomean([2.0, 8.0]) == pytest.approx(4.0)
    assert ("block", False) in mod.MODES


# tools/bench/tma_vs_cp_async.cu: per mode, how the producer fills a slab (SASS opcode -> count at least), and what
# it must not use
COPY_MODES = {
    0: ({"UTMALDG": 1}, "LDGSTS"),
    1: ({"UTMALDG": 2}, "LDGSTS"),  # boxes of 32 rows
    2: ({"UTMALDG": 2}, "LDGSTS"),
    3: ({"LDGSTS": 8, "ARRIVES": 1}, "UTMALDG"),  # cp.async.mbarrier.arrive.noinc: ARRIVES.LDGSTSBAR
    4: ({"LDGSTS": 8, "LDGDEPBAR": 1, "DEPBAR": 2, "FENCE": 3}, "ARRIVES"),  # group waits and proxy fences (+ init)
}


@pytest.mark.parametrize("mode", sorted(COPY_MODES))
def test_tma_vs_cp_async_modes_copy_as_named(mode):
    """Each mode of the TMA-vs-cp.async probe issues the copies its docstring names: TMA boxes (UTMALDG) for 0-2,
    eight 16-byte cp.async (LDGSTS) per thread per 128-row slab for 3-4, mode 4 with its group wait and proxy fence."""
    pytest.importorskip("cuda.bindings.nvrtc")
    from tmakit import cuda as tkc
    from tmakit.cuda import sass

    comp = tkc.compile_file(TOOLS / "tma_vs_cp_async.cu", name_expressions=(f"stream_slabs<{mode}, 8, 128>",),
                            cache=False)
    try:
        ops = sass.opcodes(comp.cubin)
    except tkc.RuntimeUnavailable:
        pytest.skip("no nvdisasm/cuobjdump")
    need, absent = COPY_MODES[mode]
    for op, least in need.items():
        assert ops[op] >= least, (mode, op, ops[op])
    assert ops[absent] == 0, (mode, absent)


def test_bench_grouped_refuses_random_and_decode_together(capsys):
    from tmakit.bench.grouped import main

    assert main(["--random", "2", "--decode", "2"]) == 2
    assert "not both" in capsys.readouterr().err
    assert main(["--decode", "-1"]) == 2
