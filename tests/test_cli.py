"""The tmakit command: demo on the emulator (the seeds' printed results), explain (rules named, exit codes), info."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tmakit.cli import main, parse_layout


@pytest.fixture(scope="module")
def demo_all(tmp_path_factory):
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["demo", "all", "--backend", "emu"])
    return rc, buf.getvalue()


def test_demo_all_on_emulator_exits_0(demo_all):
    rc, out = demo_all
    assert rc == 0
    assert out.startswith("backend: emu")
    assert "MISMATCH" not in out and "Traceback" not in out


def test_demo_tile_load_cta_1_1(demo_all):
    _, out = demo_all
    assert "ArithTuple(_0,_0) o (6,8):(_1@1,_1@0)" in out
    assert "ArithTuple(4,2) o (_2,_4):(_1@1,_1@0)" in out  # CTA (1,1)'s tile starts at row 2, col 4
    assert "block: (1, 1), value: 20.000000, 21.000000" in out
    assert "      20  21  22  23\n      28  29  30  31" in out
    assert "cp.async.bulk.prefetch.tensor" in out


def test_demo_tiled_load_coordinate_tensor_of_cta7(demo_all):
    _, out = demo_all
    assert "ArithTuple(_0,_0) o (1024,1024):(_1@1,_1@0)" in out
    assert "ArithTuple(0,112) o (_16,_16):(_1@1,_1@0):" in out
    assert "(0,112)  (1,112)  (2,112)" in out and "(15,127)" in out
    assert "check: all 4096 tiles equal their global tiles: OK" in out


def test_demo_multicast_clusters(demo_all):
    _, out = demo_all
    assert "tma_mcast_mask = (1 << 2) - 1 = 0b11" in out
    assert "tma_mcast_mask = (1 << 4) - 1 = 0b1111" in out
    assert out.count("check: every CTA of every cluster holds its cluster's whole tile: OK") == 2
    assert "not 128-byte aligned" in out  # the seed's [2,4] fp32 shares start 16 bytes apart


def test_demo_get_slice_bug_rows(demo_all):
    _, out = demo_all
    assert "Tiler_MN:       (_16,_16)" in out and "TiledLayout_TV: (_2," in out and "):(_8," in out
    i0 = out.index("WRONG: both CTAs call get_slice(0)")
    i1 = out.index("WRONG: both CTAs call get_slice(1)")
    i2 = out.index("RIGHT: CTA r calls get_slice(r)")
    first, second, right = out[i0:i1], out[i1:i2], out[i2:]
    assert "result: rows 0-7 loaded, rows 8-15 left zero" in first
    assert "112  113  114" in first and "128  129" not in first
    assert "result: rows 8-15 loaded, rows 0-7 left zero" in second
    assert "240  241  242" in second and "  1    2    3" not in second
    assert "result: the whole tile" in right
    assert "  0    1    2    3    4    5    6    7    8    9   10   11   12   13   14   15" in first


def test_demo_store_and_reduce(demo_all):
    _, out = demo_all
    assert out.count("check: all 1048576 elements as expected: OK") == 2
    assert "[reduce.dtype]" in out  # fp32 has no .min reduction


@pytest.mark.parametrize("which", ["load", "prefetch", "multicast", "store", "reduce"])
def test_demo_single(which, capsys):
    assert main(["demo", which, "--backend", "emu"]) == 0
    out = capsys.readouterr().out
    assert f"done: {which}" in out


def test_demo_auto_says_which_backend_and_why(capsys):
    from tmakit.demo import gpu_status

    assert main(["demo", "prefetch"]) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    ok, why = gpu_status()
    assert first.startswith("backend: gpu" if ok else "backend: emu") and "auto:" in first and why in first


def test_demo_gpu_unavailable_exits_2(capsys):
    from tmakit.demo import gpu_status

    ok, why = gpu_status()
    if ok:
        pytest.skip("a Hopper GPU is present")
    assert main(["demo", "load", "--backend", "gpu"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("GPU backend unavailable: ") and why in err


# ------------------------------------------------------------------------------------------------ explain
def _explain(capsys, *args):
    rc = main(["explain", *args])
    return rc, capsys.readouterr().out


def test_explain_valid_bf16_swizzle128(capsys):
    rc, out = _explain(capsys, "--shape", "4096,4096", "--dtype", "bf16", "--box", "64,64", "--swizzle", "128")
    assert rc == 0
    assert "cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2" in out
    assert "CU_TENSOR_MAP_SWIZZLE_128B" in out
    assert "bytes per box:  8192" in out
    assert "smem_layout = Sw<3,4,3> o _0 o (_64,_64):(_64,_1)" in out
    assert "VALID" in out


def test_explain_multicast_split_and_mask(capsys):
    rc, out = _explain(capsys, "--shape", "4096,4096", "--dtype", "bf16", "--box", "64,64", "--swizzle", "128",
                       "--cluster", "2", "--multicast")
    assert rc == 0
    assert "boxDim[2] = {64, 32}" in out
    assert "TMA coords (0, 32)" in out and "byte 4096" in out
    assert "mask 0b11" in out and "expects the whole tile: 8192 bytes" in out


def test_explain_smem_layout_notation(capsys):
    rc, out = _explain(capsys, "--shape", "1024,1024", "--smem", "(_16,_16):(_16,_1)", "--cluster", "2",
                       "--multicast")
    assert rc == 0
    assert "TiledLayout_TV: (_2," in out and "):(_8," in out  # 2 CTAs, CTA 1 starts 8 rows down


@pytest.mark.parametrize("args,rule,fix_word", [
    (["--shape", "4096,4100", "--dtype", "bf16", "--box", "64,64"], "globalStrides.multiple16", "pad"),
    (["--shape", "64,1024", "--dtype", "u8", "--box", "4,512"], "boxDim.range", "256"),
    (["--shape", "4096,4096", "--dtype", "bf16", "--box", "64,128", "--swizzle", "128"], "swizzle.innerBox", "64"),
    (["--shape", "8,8,8,8,8,8", "--box", "4,4,4,4,4,4", "--raw"], "tensorRank.range", "merge"),
    (["--shape", "64,64", "--box", "8,300", "--raw"], "boxDim.range", "256"),
    (["--shape", "64,63", "--raw", "--box", "8,8"], "globalStrides.multiple16", "16"),
])
def test_explain_invalid_names_the_rule(capsys, args, rule, fix_word):
    rc, out = _explain(capsys, *args)
    assert rc == 1
    assert f"INVALID [{rule}]" in out
    fix = [ln for ln in out.splitlines() if ln.strip().startswith("fix:")]
    assert fix and fix_word in fix[0]


def test_explain_bad_swizzle_value(capsys):
    rc = main(["explain", "--shape", "64,64", "--swizzle", "48"])
    assert rc == 1


def test_parse_layout_roundtrip():
    for text in ("(_64,_64):(_64,_1)", "(_2,_4):(_4,_1)", "(8,(_2,_4)):(_8,(_1,_2))", "_8:_1"):
        assert str(parse_layout(text)) == text
    assert str(parse_layout("Sw<3,4,3> o _0 o (_8,_64):(_64,_1)")) == "Sw<3,4,3> o _0 o (_8,_64):(_64,_1)"
    with pytest.raises(ValueError):
        parse_layout("(_8,_8)")


# ------------------------------------------------------------------------------------------------ info
def test_info_never_crashes(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("TMAKIT_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "x.bin").write_bytes(b"\0" * 2048)
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    for key in ("platform", "python", "numpy", "cuda-bindings", "nvrtc", "gpu", "driver", "cache", "backend (auto)"):
        assert any(line.startswith(key) for line in out.splitlines()), key
    assert str(tmp_path / "cache") in out and "TMAKIT_CACHE_DIR; 1 files, 2.0 KiB" in out


def test_help_and_version(capsys):
    assert main([]) == 0
    assert "demo" in capsys.readouterr().out
    assert main(["--version"]) == 0
    assert main(["demo", "nosuch"]) == 2


def test_console_script_subprocess():
    src = Path(__file__).resolve().parents[1] / "src"
    env = dict(os.environ, PYTHONPATH=str(src) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-m", "tmakit.cli", "explain", "--shape", "4096,4100", "--dtype", "bf16",
                        "--box", "64,64"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 1 and "globalStrides.multiple16" in r.stdout
    r = subprocess.run([sys.executable, "-m", "tmakit.cli", "demo", "load", "--backend", "emu"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "block: (1, 1), value: 20.000000, 21.000000" in r.stdout


def test_import_tmakit_does_not_import_matplotlib():
    code = "import sys, tmakit, tmakit.viz, tmakit.cli, tmakit.demo; print('matplotlib' in sys.modules)"
    src = Path(__file__).resolve().parents[1] / "src"
    env = dict(os.environ, PYTHONPATH=str(src))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "False", r.stderr


def _normalized(text: str) -> list[str]:
    import re

    out = []
    for line in text.splitlines()[1:-1]:  # the first and last lines name the backend
        if "the emulator refuses it" in line:
            continue
        line = re.sub(r"0x[0-9a-f]{6,}", "ADDR", line)
        line = line.replace("CPU emulator (tmakit.emu)", "BACKEND")
        out.append(re.sub(r"GPU .*\(sm_\d+, tmakit\.cuda\)", "BACKEND", line))
    return out


@pytest.mark.gpu
def test_demo_gpu_prints_what_the_emulator_prints():
    import contextlib
    import io

    from tmakit.demo import gpu_status

    ok, why = gpu_status()
    if not ok:
        pytest.skip(why)
    outs = {}
    for backend in ("emu", "gpu"):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert main(["demo", "all", "--backend", backend]) == 0
        outs[backend] = _normalized(buf.getvalue())
    assert outs["gpu"] == outs["emu"]


def test_emu_backend_launch_and_tma_unit_paths_agree():
    import numpy as np

    import tmakit as tk
    from tmakit.demo.backends import EmuBackend, load_job

    b = EmuBackend()
    data = np.arange(256, dtype=np.float32).reshape(16, 16)
    buf = b.gmem(data)
    g = tk.make_tensor(tk.make_gmem_ptr("fp32", buf.address), tk.make_layout((16, 16), tk.LayoutRight))
    tma = tk.make_tma_copy(tk.SM90_TMA_LOAD_MULTICAST, g, tk.make_layout((tk.Int(16), tk.Int(16)), tk.LayoutRight),
                           cluster_size=2)
    jobs = [load_job((0, 0), mask=3, expect=1024), load_job((0, 8), mask=3, expect=1024, dst_offset=512)]
    a = b.load_boxes(tma.tensormap, buf, jobs, 1024, cluster=2)
    u = b._load_boxes_unit(tma.tensormap, buf, jobs, 1024, 2, 0)
    assert np.array_equal(a, u) and np.array_equal(a[1].view(np.float32).reshape(16, 16), data)
    short = [load_job((0, 0), mask=3, expect=1024), load_job((0, 8), issue=False, expect=1024)]
    with pytest.raises(Exception, match="hang|Deadlock|expects"):
        b.load_boxes(tma.tensormap, buf, short, 1024, cluster=2)


# -------------------------------------------------------------------------------------- bad input, first contact
@pytest.mark.parametrize("args,rc,words", [
    (["--op", "frobnicate"], 2, "choose from 'load', 'store', 'reduce-add'"),
    (["--box", "64,64,2"], 1, "--box 64,64,2 has 3 dimensions but --shape 64,64 has 2"),
    (["--raw", "--box", "64,64,2"], 1, "has 3 dimensions"),
    (["--cluster", "32", "--multicast"], 1, "--cluster must be 1..16"),
    (["--cluster", "0"], 1, "--cluster must be 1..16"),
    (["--element-strides", "1", "--raw"], 1, "--element-strides 1 has 1 dimensions"),
    (["--op", "store", "--multicast", "--cluster", "2"], 1, "only loads multicast"),
    (["--arch", "sm_80"], 1, "INVALID [arch.sm90]"),
    (["--arch", "sm_80", "--raw"], 1, "INVALID [arch.sm90]"),
])
def test_explain_bad_input_is_named_without_traceback(capsys, args, rc, words):
    assert main(["explain", "--shape", "64,64", *args]) == rc
    out = capsys.readouterr()
    text = out.out + out.err
    assert words in text and "Traceback" not in text
    assert "VALID:" not in text.replace("INVALID", "")  # one verdict, never both


def test_explain_valid_for_the_arch_asked(capsys):
    assert main(["explain", "--shape", "64,64", "--arch", "sm_100a"]) == 0
    assert "VALID: make_tma_copy" in capsys.readouterr().out


def test_tmakit_errors_reach_the_user_as_one_line(capsys, monkeypatch):
    """A named error of any tmakit layer, raised by any command: its message and exit 2, no traceback."""
    import tmakit.cli as cli
    from tmakit.tma.errors import TmaError

    def boom(args):
        raise TmaError("cluster_size must be an int in 1..16 (got 0)")

    monkeypatch.setattr(cli, "cmd_info", boom)
    assert main(["info"]) == 2
    assert capsys.readouterr().err.strip() == "tmakit info: TmaError: cluster_size must be an int in 1..16 (got 0)"


def test_bench_bare_parses_and_says_it_needs_a_hopper_gpu(capsys, monkeypatch):
    """`tmakit bench` alone: argparse (nargs="*" with choices) refused it on Python < 3.12. Without a GPU it must
    say it needs one and exit 2 (on a Hopper GPU it runs the suite: not here)."""
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert main(["bench"]) == 2
    err = capsys.readouterr().err
    assert "needs a Hopper (sm_90) or newer GPU" in err and "usage" not in err
    assert main(["bench", "copy", "transpose"]) == 2 and "needs a Hopper" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:  # the harness's argparse exits, as for any usage error
        main(["bench", "nope"])
    assert e.value.code == 2 and "invalid choice: 'nope'" in capsys.readouterr().err


def test_info_gpu_line_is_not_cut(capsys, monkeypatch):
    pytest.importorskip("cuda.bindings")
    import tmakit.cuda.driver as driver

    msg = "the NVIDIA driver library was not found. Ensure the NVIDIA display driver is installed (libcuda.so.1)"

    def no_driver():
        raise RuntimeError(msg)

    monkeypatch.setattr(driver, "device_count", no_driver)
    assert main(["info"]) == 0
    gpu = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("gpu")]
    assert gpu == [f"gpu             unavailable (RuntimeError: {msg})"]


def test_bench_grouped_forms_refuse_fp8_and_report_per_peer(capsys):
    """`tmakit bench grouped --form k|batch|train` times bf16 only (a clear exit 2 before any GPU check); its table has
    one ratio column and geomean per peer."""
    from tmakit.bench.grouped_forms import markdown_forms

    assert main(["bench", "grouped", "--form", "k", "--dtype", "fp8"]) == 2
    assert "time bf16 (drop --dtype fp8)" in capsys.readouterr().err
    rows = [dict(label="G=8", tmakit_tflops=700.0, rel_err=1e-3, path="tma:grouped", torch_ratio=r, bmm_ratio=1.0)
            for r in (1.0, 1.21)]
    md = markdown_forms(dict(device="H", torch="2", form="batch", rounds=5, rows=rows))
    assert "| torch / tmakit | bmm / tmakit |" in md and "torch / tmakit geomean **1.100**, min 1.000" in md
