"""The GEMM's default route on the GPU: the cached fast path gives the right answer when the data behind the same
pointers changes, follows the route the heuristics pick (kernel in its measured class, torch.mm elsewhere), and
``tmakit tune gemm`` results are used by later calls (temporary cache directory, see conftest)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import tmakit as tk  # noqa: E402
from tmakit.ops import gemm_tuned  # noqa: E402
from tmakit.ops.gemm import forget_plans  # noqa: E402

pytestmark = pytest.mark.gpu


def _err(c, a, b) -> float:
    ref = a.float() @ b.float()
    return float((c.float() - ref).norm() / ref.norm())


@pytest.mark.parametrize("m,n,k,path", [(4096, 4096, 4096, "tma"), (256, 256, 256, "torch"),
                                        (520, 4096, 4096, "torch")])
def test_cached_path_reads_new_data_and_keeps_the_route(m, n, k, path):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t()
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):  # planned, then twice from the cache with new values in the same buffers
        a.copy_(torch.randn_like(a))
        c.fill_(float("nan"))
        assert tk.ops.gemm(a, b, out=c) is c
        assert tk.ops.last_path.split(":")[0] == path, tk.ops.last_path
        assert _err(c, a, b) < 1e-2
        fresh = tk.ops.gemm(a, b)  # a new result each call
        assert fresh.shape == (m, n) and _err(fresh, a, b) < 1e-2


def test_tuned_entries_steer_later_calls():
    from tmakit.bench.gemm_tune import tune

    m, n, k = 384, 2048, 1024
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    r = tune(m, n, k, dtype="float16", b_layout="kn", reps=3, warmup=1)
    assert r["file"] and "torch" in r["times_ms"] and r["best"] in r["times_ms"]
    key = gemm_tuned.problem_key(m, n, k, "float16", "float16", True)
    assert gemm_tuned.entries(gemm_tuned.device_tag(a.get_device()))[key] == r["entry"]
    for entry, want in (({"path": "torch"}, "torch:tuned"), ({"path": "kernel", "config": "n128_s6_c1"}, "tma")):
        gemm_tuned.store(gemm_tuned.device_tag(a.get_device()), key, entry)
        forget_plans()
        c = tk.ops.gemm(a, b)
        assert tk.ops.last_path.startswith(want) and _err(c, a, b) < 1e-2
    forget_plans()


def test_tuned_entries_decide_the_small_kernel_too():
    """A stored {"path": "small"} sends a problem outside the measured class to the small kernel; a stored torch
    entry keeps a class problem on torch."""
    dev = torch.cuda.current_device()
    tag = gemm_tuned.device_tag(dev)
    cases = ((264, 248, 520, {"path": "small"}, "small"), (296, 216, 72, {"path": "torch"}, "torch"))  # own shapes
    try:
        for m, n, k, entry, want in cases:
            a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t()
            gemm_tuned.store(tag, gemm_tuned.problem_key(m, n, k, "bfloat16", "bfloat16", False), entry)
            forget_plans()
            c = tk.ops.gemm(a, b)
            assert tk.ops.last_path.split(":")[0] == want, tk.ops.last_path
            assert _err(c, a, b) < 1e-2
    finally:
        gemm_tuned.forget()
        forget_plans()
