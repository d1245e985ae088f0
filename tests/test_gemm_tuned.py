"""The autotuner's table (``tmakit.ops.gemm_tuned``): keys, files in the cache directory, validation, and how
``tk.ops.gemm`` plans a tuned problem. No GPU: the device tag is given, not queried."""

import json

import pytest

from tmakit.ops import gemm_tuned as tuned


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TMAKIT_CACHE_DIR", str(tmp_path))
    tuned.forget()
    yield tmp_path
    tuned.forget()


def test_problem_key_names_dtypes_layout_and_size():
    assert tuned.problem_key(1, 2, 3, "bfloat16", "float32", True) == "bfloat16->float32 kn 1x2x3"
    assert tuned.problem_key(1, 2, 3, "float16", "float16", False) == "float16->float16 nk 1x2x3"


def test_store_then_entries_round_trip_through_the_file(cache):
    key = tuned.problem_key(131, 6288, 4688, "bfloat16", "bfloat16", False)
    path = tuned.store("NVIDIA-H200-132sm", key, {"path": "kernel", "config": "n256_s4_c1", "split": 2})
    assert path == str(cache / "gemm-tuned-NVIDIA-H200-132sm.json")
    tuned.forget()
    assert tuned.entries("NVIDIA-H200-132sm")[key] == {"path": "kernel", "config": "n256_s4_c1", "split": 2}
    assert tuned.entries("NVIDIA-H100-80GB-HBM3-132sm") == {}  # another device kind: its own file


def test_bad_entries_are_refused_and_bad_files_mean_not_tuned(cache):
    with pytest.raises(ValueError, match="not a tuned GEMM entry"):
        tuned.store("dev", "k", {"path": "kernel", "config": "no_such_config"})
    (cache / "gemm-tuned-dev2.json").write_text("{not json")
    assert tuned.entries("dev2") == {}
    (cache / "gemm-tuned-dev3.json").write_text(json.dumps({"entries": {
        "a": {"path": "torch"}, "b": {"path": "kernel", "config": "bogus"}, "c": {"path": "kernel",
                                                                              "config": "n128_s6_c1", "split": "2"}}}))
    assert tuned.entries("dev3") == {"a": {"path": "torch"}}


def test_the_small_kernel_is_a_tuned_choice_and_a_candidate(cache):
    from tmakit.bench.gemm_tune import candidates

    tuned.store("dev", "k", {"path": "small"})
    tuned.forget()
    assert tuned.entries("dev") == {"k": {"path": "small"}}
    names = dict(candidates(300, 200, 64))
    assert names["small"] == {"config": "small"} and "torch" in names and "heuristic" in names


def test_lookup_uses_the_device_tag(cache, monkeypatch):
    monkeypatch.setitem(tuned._devices, 5, "FakeGPU-132sm")
    key = tuned.problem_key(64, 128, 256, "float16", "float16", True)
    tuned.store("FakeGPU-132sm", key, {"path": "torch"})
    assert tuned.lookup(5, 64, 128, 256, "float16", "float16", True) == {"path": "torch"}
    assert tuned.lookup(5, 64, 128, 256, "float16", "float16", False) is None


def test_tune_cli_needs_gemm_and_a_gpu(capsys):
    from tmakit.cli import main

    assert main(["tune"]) == 2
    assert "usage: tmakit tune gemm" in capsys.readouterr().err
    try:
        import torch
    except ImportError:
        pytest.skip("torch not installed")
    if torch.cuda.is_available():
        pytest.skip("this checks the message without a GPU")
    assert main(["tune", "gemm", "64", "64", "64"]) == 2
    assert "needs a CUDA GPU" in capsys.readouterr().err
