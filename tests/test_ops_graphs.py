"""Every op captured in a CUDA graph replays correctly: warmed up once, captured, then replayed on new data written
into the same buffers (the graph must read them, not the values seen at capture), against torch's result."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import tmakit as tk  # noqa: E402

pytestmark = pytest.mark.gpu


def _replays_like_torch(fn, ref, inputs, out):
    """Warm up ``fn``, capture it, refill ``inputs`` with new random data, replay, compare ``out`` with ``ref()``."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()  # compile, plan and cache the launch outside the capture
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    for _ in range(2):
        for x in inputs:
            x.copy_(torch.randn(x.shape, device="cuda").to(x.dtype))
        out.fill_(float("nan")) if out.is_floating_point() else out.zero_()
        g.replay()
        torch.cuda.synchronize()
        want = ref()
        if out.dtype in (torch.bfloat16, torch.float16):
            assert float((out.float() - want.float()).norm() / want.float().norm()) < 1e-2
        else:
            assert torch.equal(out, want) or torch.allclose(out, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("numel", [1 << 12, 1 << 20, 1 << 26])  # the bulk, the tensor-map and the flat-run copies
def test_copy_in_a_graph(numel):
    x = torch.randn(numel, device="cuda")
    y = torch.empty_like(x)
    _replays_like_torch(lambda: tk.ops.copy(x, y), lambda: x, [x], y)
    assert tk.ops.last_path.startswith("tma:")


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_transpose_in_a_graph(dtype):
    x = torch.randn(1024, 768, device="cuda").to(dtype)
    y = torch.empty(768, 1024, device="cuda", dtype=dtype)
    _replays_like_torch(lambda: tk.ops.transpose(x, 0, 1, out=y), lambda: x.t().contiguous(), [x], y)
    assert tk.ops.last_path == "tma:transpose"


def test_permute_in_a_graph():
    x = torch.randn(8, 64, 32, 16, device="cuda")
    y = torch.empty(8, 32, 64, 16, device="cuda")
    _replays_like_torch(lambda: tk.ops.permute(x, (0, 2, 1, 3), out=y), lambda: x.permute(0, 2, 1, 3).contiguous(),
                        [x], y)
    assert tk.ops.last_path.startswith("tma:")


@pytest.mark.parametrize("method", ["store-reduce", "combine"])
def test_reduce_into_in_a_graph(method):
    d0 = torch.randn(1 << 20, device="cuda")
    d = torch.empty_like(d0)
    src = torch.randn_like(d0)

    def fn():
        d.copy_(d0)  # the destination's starting value, inside the graph too
        tk.ops.reduce_into(d, src, "add", method=method)

    _replays_like_torch(fn, lambda: d0 + src, [d0, src], d)


@pytest.mark.parametrize("shape, strict", [((2048, 2048, 2048), False), ((256, 512, 256), True),
                                           ((2048, 2048, 2047), False), ((300, 200, 100), False)])
def test_gemm_in_a_graph(shape, strict):
    """The kernel (default and strict), the padded-copy path (K = 2047) and the torch path (small, unaligned)."""
    m, n, k = shape
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    _replays_like_torch(lambda: tk.ops.gemm(a, b, out=c, strict=strict), lambda: a.float() @ b.float(), [a, b], c)
