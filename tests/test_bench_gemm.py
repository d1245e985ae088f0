"""``tmakit bench gemm`` without a GPU: argument parsing, shape selection, statistics, report writers, exit paths."""

import json
import math
import sys
import types

import pytest

from tmakit.bench import gemm as bg
from tmakit.bench import gemm_report


def test_parse_shape_accepts_separators():
    assert bg.parse_shape("8192x7168x2048") == (8192, 7168, 2048)
    assert bg.parse_shape(" 128X8192×8192 ") == (128, 8192, 8192)
    assert bg.parse_shape("1*2*3") == (1, 2, 3)


@pytest.mark.parametrize("bad", ["4096x4096", "4096x4096x4096x1", "axbxc", "0x8x8", "-8x8x8", "", "4096"])
def test_parse_shape_bad_strings_name_the_fix(bad):
    with pytest.raises(ValueError, match=r"expected MxNxK.*e\.g\. 4096x4096x4096"):
        bg.parse_shape(bad)


def test_parse_shapes_list_and_empty():
    assert bg.parse_shapes("1x2x3, 4x5x6,") == [(1, 2, 3), (4, 5, 6)]
    with pytest.raises(ValueError, match="names no shape"):
        bg.parse_shapes(" , ")
    with pytest.raises(ValueError, match="bad shape '4x5'"):
        bg.parse_shapes("1x2x3,4x5")


def test_parse_squares():
    assert bg.parse_squares("1024,2048") == [1024, 2048]
    with pytest.raises(ValueError, match=r"--squares.*e\.g\. --squares 1024,2048,4096"):
        bg.parse_squares("1024,2k")
    with pytest.raises(ValueError, match="names no size"):
        bg.parse_squares(",")


def test_parse_dtype():
    assert bg.parse_dtype("bf16") == "bfloat16"
    assert bg.parse_dtype("FP16") == "float16"
    assert bg.parse_dtype("fp32", bg.OUT_DTYPES) == "float32"
    with pytest.raises(ValueError, match="expected one of bf16, fp16"):
        bg.parse_dtype("fp32")
    with pytest.raises(ValueError, match="expected one of bf16, fp16, fp32"):
        bg.parse_dtype("fp8", bg.OUT_DTYPES)


def test_default_selection_is_suite_plus_squares_once():
    rows = bg.select_shapes()
    keys = [(r["m"], r["n"], r["k"]) for r in rows]
    assert keys[:8] == bg.SUITE
    assert len(keys) == len(set(keys)) == 8 + 4  # 4096^3 and 8192^3 are in both
    assert keys[8:] == [(s, s, s) for s in (1024, 2048, 12288, 16384)]
    assert rows[0]["sets"] == ["suite", "square"]
    assert rows[8]["sets"] == ["square"]


def test_selection_options_join():
    assert [r["m"] for r in bg.select_shapes(squares=[1024, 2048])] == [1024, 2048]
    rows = bg.select_shapes(shapes=[(128, 8192, 8192), (64, 64, 64)])
    assert rows[0]["sets"] == ["suite", "custom"]  # a suite shape counts for the suite summary
    assert rows[1]["sets"] == ["custom"]
    rows = bg.select_shapes(shapes=[(64, 64, 64)], suite=True)
    assert len(rows) == 9 and rows[-1]["sets"] == ["custom"]


def test_parse_args_defaults_and_errors(capsys):
    a = bg.parse_args([])
    assert len(a.shape_list) == 12 and a.dtype == "bfloat16" and a.out_dtype == "bfloat16" and a.b_layout == "nk"
    a = bg.parse_args(["--squares", "--dtype", "fp16", "--out-dtype", "fp32", "--b-layout", "kn"])
    assert [r["m"] for r in a.shape_list] == bg.SQUARES
    assert (a.dtype, a.out_dtype, a.b_layout) == ("float16", "float32", "kn")
    a = bg.parse_args(["--squares", "512", "--shapes", "1x2x3"])
    assert [(r["m"], r["n"], r["k"]) for r in a.shape_list] == [(512, 512, 512), (1, 2, 3)]
    for argv, msg in ((["--shapes", "4096x4096"], "expected MxNxK"), (["--dtype", "fp8"], "expected one of"),
                      (["--reps", "0"], "--reps must be >= 1"), (["--b-layout", "mn"], "invalid choice")):
        with pytest.raises(SystemExit) as e:
            bg.parse_args(argv)
        assert e.value.code == 2
        assert msg in capsys.readouterr().err


def test_geomean_and_summary():
    assert gemm_report.geomean([]) is None
    assert gemm_report.geomean([2.0, 8.0]) == pytest.approx(4.0)
    assert gemm_report.geomean([0.5, 2.0, 1.0]) == pytest.approx(1.0)
    s = bg.summarize(_rows())
    suite, every = s["suite"], s["all"]
    assert suite["shapes"] == 3 and suite["of"] == 8 and every["shapes"] == 5
    assert suite["events"]["geomean"] == pytest.approx((0.8 * 1.1) ** 0.5)
    assert suite["events"]["min"] == 0.8 and suite["events"]["min_shape"] == "4096x4096x4096"
    assert suite["events"]["missing"] == 1  # the unsupported row
    assert suite["graph"]["geomean"] == pytest.approx((0.9 * 1.2) ** 0.5)
    assert every["events"]["geomean"] == pytest.approx((0.8 * 1.1 * 0.5) ** (1 / 3))
    assert every["events"]["min_shape"] == "1024x1024x1024"
    assert every["graph"]["measured"] == 2  # the 1024^3 row has no graph timing
    assert every["flagged"] == 1 and suite["flagged"] == 0


def _rows():
    nan = float("nan")
    return [
        dict(m=4096, n=4096, k=4096, sets=["suite", "square"], tmakit_status="ok", cublas_status="ok",
             tmakit_tflops=600.0, cublas_tflops=750.0, ratio=0.8, tmakit_graph_tflops=630.0,
             cublas_graph_tflops=700.0, ratio_graph=0.9, tmakit_graph_ms=0.218, cublas_graph_ms=0.196,
             graph_calls=92, rel_err_tmakit=1.7e-3, rel_err_cublas=1.66e-3, err_flag=False, seconds=3.2),
        dict(m=128, n=8192, k=8192, sets=["suite"], tmakit_status="ok", cublas_status="ok", tmakit_tflops=330.0,
             cublas_tflops=300.0, ratio=1.1, tmakit_graph_tflops=420.0, cublas_graph_tflops=350.0, ratio_graph=1.2,
             tmakit_graph_ms=0.0409, cublas_graph_ms=0.0491, graph_calls=200, rel_err_tmakit=1.6e-3,
             rel_err_cublas=1.6e-3, err_flag=False, seconds=1.0),
        dict(m=1024, n=1024, k=65536, sets=["suite"], tmakit_status="unsupported", cublas_status="ok",
             tmakit_error="NotImplementedError: b row-major (K, N) is not supported yet", cublas_tflops=690.0,
             rel_err_cublas=1.7e-3, err_flag=False, seconds=0.5),
        dict(m=1024, n=1024, k=1024, sets=["square"], tmakit_status="ok", cublas_status="ok", tmakit_tflops=100.0,
             cublas_tflops=200.0, ratio=0.5, rel_err_tmakit=nan, rel_err_cublas=1.5e-3, err_flag=True,
             tmakit_graph_error="RuntimeError: operation not permitted when stream is capturing", seconds=0.4),
        dict(m=64, n=72, k=80, sets=["custom"], tmakit_status="error", cublas_status="error",
             error="OutOfMemoryError: CUDA out of memory", seconds=0.1),
    ]


def _result():
    env = dict(date="2026-11-23 10:00 UTC", commit="abc1234", device="NVIDIA H200", sms=132, capability="sm_90",
               driver="580.159.04", cuda_driver_api="13.0", torch="2.11.0+cu130", cuda_runtime="13.0",
               python="3.12.3", dirty=True)
    opts = dict(dtype="bfloat16", out_dtype="bfloat16", b_layout="nk", b_layout_means=bg.B_LAYOUTS["nk"], reps=50,
                warmup=10, graph=True, graph_calls="auto", graph_replays=10, seed=0, err_limit=1e-2, flush_mib=256,
                tmakit_call="tmakit.ops.gemm(a, b, out=c)")
    rows = _rows()
    return dict(env=env, options=opts, rows=rows, summary=bg.summarize(rows))


def test_markdown_report():
    md = bg.markdown(_result())
    lines = md.splitlines()
    assert lines[0].startswith("2026-11-23 10:00 UTC · commit `abc1234` (+ uncommitted changes) · NVIDIA H200")
    assert "driver 580.159.04" in lines[0] and "torch 2.11.0+cu130" in lines[0]
    table = [ln for ln in lines if ln.startswith("| ")]
    assert len(table) == 1 + 5  # header + one row per shape
    assert all(ln.count("|") == table[0].count("|") for ln in table)
    assert ("| 4096×4096×4096 | suite, square | 600 | 750 | **0.800** | 630 | 700 | **0.900** | 218 | 196 | 92 | "
            "1.7e-03 | 1.7e-03 |") in md
    assert "| 128×8192×8192 | suite | 330 | 300 | **1.100** | 420 | 350 | **1.200** | 40.9 | 49.1 | 200 |" in md
    assert "| 1024×1024×65536 | suite | unsupported | 690 | **—** | unsupported |" in md
    assert "**nan ⚠**" in md  # a NaN error is flagged
    assert "- issue suite (3 of 8 shapes): events: geomean **0.938×**, min 0.800× (4096x4096x4096), 1 of 3 not " \
           "measured; graph: geomean **1.039×**" in md
    assert "- all shapes (5 shapes):" in md and "1 flagged (rel err > 0.01)" in md
    assert "- 1024x1024x65536 tmakit unsupported: `NotImplementedError: b row-major" in md
    assert "- 64x72x80 error: `OutOfMemoryError" in md
    assert "1024x1024x1024 tmakit graph error" in md
    assert md.endswith("\n")


def test_json_is_strict_and_round_trips(tmp_path):
    text = bg.to_json(_result())
    back = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    assert back["rows"][3]["rel_err_tmakit"] == "nan"
    assert back["rows"][0]["ratio"] == 0.8
    assert back["summary"]["suite"]["events"]["min_shape"] == "4096x4096x4096"
    assert math.isclose(back["summary"]["all"]["events"]["geomean"], (0.8 * 1.1 * 0.5) ** (1 / 3))


def test_progress_lines():
    rows = _rows()
    assert "x0.800 (graph x0.900)" in bg.progress_line(rows[0])
    assert "tmakit unsupported" in bg.progress_line(rows[2]) and "[NotImplementedError" in bg.progress_line(rows[2])
    assert bg.progress_line(dict(m=1, n=2, k=3, tmakit_status="skipped")).endswith("skipped")


def test_plot_writes_png(tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "gemm.png"
    assert bg.plot(_result(), path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert bg.plot(_result(), tmp_path / "x.png") is False


def test_no_torch_exits_2(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    assert bg.main(["--suite"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "tmakit bench gemm needs torch (pip install torch)"


def _fake_torch(available: bool, cap=(9, 0)):
    cuda = types.SimpleNamespace(is_available=lambda: available, get_device_capability=lambda i=0: cap)
    return types.SimpleNamespace(cuda=cuda)


def test_no_gpu_exits_2(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torch", _fake_torch(False))
    assert bg.main([]) == 2
    assert capsys.readouterr().err.strip() == "tmakit bench gemm needs a CUDA GPU (sm_90); torch sees none"


def test_pre_hopper_gpu_exits_2(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torch", _fake_torch(True, (8, 0)))
    assert bg.main(["--squares", "1024"]) == 2
    assert "needs a Hopper GPU (sm_90); device 0 is sm_80" in capsys.readouterr().err


def test_bad_shape_fails_before_gpu_check(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(SystemExit) as e:
        bg.main(["--shapes", "128x8192"])
    assert e.value.code == 2
    assert "bad shape '128x8192'" in capsys.readouterr().err


def test_cli_dispatches_gemm_and_keeps_bandwidth_ops(monkeypatch, capsys):
    from tmakit.cli import main

    monkeypatch.setitem(sys.modules, "torch", None)
    assert main(["bench", "gemm", "--suite"]) == 2
    assert "tmakit bench gemm needs torch" in capsys.readouterr().err
    assert main(["bench", "copy"]) == 2  # the bandwidth harness, unchanged
    assert capsys.readouterr().err.strip() == "tmakit bench needs torch"
    with pytest.raises(SystemExit):
        main(["bench", "all", "gemm"])  # gemm is not a bandwidth workload ("all" does not include it)
    assert "invalid choice: 'gemm'" in capsys.readouterr().err


def test_fp8_line_names_a_shape_torch_refuses():
    """A shape torch._scaled_mm refuses (N not a multiple of 16) keeps tmakit's time and says why there is no ratio."""
    from tmakit.bench import gemm_fp8

    row = dict(m=64, n=3528, k=2560, scaling="tensor", tmakit_tflops=900.0, err=2e-3, config="n192_s4_c1",
               peer_refused="mat2 shape (2560x3528) must be divisible by 16")
    line = gemm_fp8._line(row)
    assert "tmakit   900.0 TF" in line and "torch refuses (mat2 shape (2560x3528)" in line and "ratio" not in line
    row.pop("peer_refused")
    row.update(torch_tflops=1000.0, ratio=0.9)
    assert "ratio 0.900" in gemm_fp8._line(row)
