"""Two GPUs in one process: ops, GEMMs and raw kernels run on the tensors' device whichever device is current
(marked ``gpu``; skipped with fewer than two Hopper GPUs)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tmakit import ops  # noqa: E402


def _two_gpus() -> bool:
    try:
        from tmakit import cuda as tkc

        return torch.cuda.device_count() >= 2 and tkc.is_available()
    except Exception:
        return False


pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not _two_gpus(), reason="needs two Hopper GPUs")]


@pytest.fixture(autouse=True)
def _device0():
    torch.cuda.set_device(0)
    yield
    torch.cuda.set_device(0)


@pytest.mark.parametrize("order", [(1, 0, 1), (0, 1, 0)])
def test_ops_run_on_the_tensors_device_with_another_current(order):
    """Device 0 stays current; each op's first (planned) and second (cached) call on device 1 tensors runs there."""
    for dev in order:
        d = f"cuda:{dev}"
        for _ in range(2):
            x = torch.randn(1 << 20, device=d)
            y = torch.full_like(x, 77.0)
            ops.copy(x, y, strict=True)
            assert ops.last_path.startswith("tma:") and torch.equal(x, y)
            m = torch.randn(1024, 768, device=d, dtype=torch.bfloat16)
            t = ops.transpose(m, 0, 1, strict=True)
            assert ops.last_path == "tma:transpose" and t.device == m.device and torch.equal(t, m.t())
            for method in ("combine", "store-reduce"):
                acc, s = torch.randn(1 << 20, device=d), torch.randn(1 << 20, device=d)
                want = acc + s
                ops.reduce_into(acc, s, "add", method=method, strict=True)
                assert torch.equal(acc, want), (dev, method)
            assert torch.cuda.current_device() == 0
    torch.cuda.synchronize(0)
    torch.cuda.synchronize(1)


def test_ops_use_the_devices_current_stream():
    """A copy on device 1 inside ``torch.cuda.stream(s1)`` is ordered after the work queued on s1 before it."""
    s1 = torch.cuda.Stream(device=1)
    x = torch.randn(1 << 22, device="cuda:1")
    y = torch.empty_like(x)
    with torch.cuda.stream(s1):
        torch.cuda._sleep(20_000_000)  # ~10 ms of spin on s1 before the producer's write
        x.mul_(2.0)
        ops.copy(x, y, strict=True)
    s1.synchronize()
    assert torch.equal(y, x)


def test_gemm_on_the_second_gpu():
    from tmakit.ops import gemm

    for dev in (1, 0, 1):
        a = torch.randn(384, 520, device=f"cuda:{dev}", dtype=torch.bfloat16)
        b = torch.randn(776, 520, device=f"cuda:{dev}", dtype=torch.bfloat16).t()
        c = gemm(a, b)
        ref = a.float() @ b.float()
        assert c.device == a.device and float((c.float() - ref).norm() / ref.norm()) < 1e-2
    assert torch.cuda.current_device() == 0


def test_raw_kernels_load_per_device():
    """``tmakit.cuda`` loads a module per context: the same kernel runs on each device under ``torch.cuda.device``."""
    import ctypes

    from tmakit import cuda as tkc

    src = 'extern "C" __global__ void fill(float* p, float v) { p[threadIdx.x] = v; }'
    for dev in (0, 1, 0):
        buf = torch.zeros(32, device=f"cuda:{dev}")
        with torch.cuda.device(dev):
            k = tkc.kernel(src, "fill")
            k(1, 32, ctypes.c_uint64(buf.data_ptr()), ctypes.c_float(dev + 1.5))
            torch.cuda.synchronize(dev)
        assert torch.equal(buf, torch.full_like(buf, dev + 1.5))
