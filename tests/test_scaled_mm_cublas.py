"""``scaled_mm``'s per-tensor calls routed to cuBLAS, replayed (``tmakit.ops.gemm_cublas.scaled_runner``): cuBLASLt
planned with what ``torch._scaled_mm`` gives it, its kernels recorded once per layout and launched with the call's
addresses (operands, output and both scale pointers). CPU tests pin which FP8 problems cuBLASLt is given; GPU tests
check every replayed result against ``torch._scaled_mm`` and an fp32 reference, with new addresses, streams,
threads and CUDA graphs."""

from __future__ import annotations

import math
import random

import pytest

from tmakit.cuda import cublaslt

torch = pytest.importorskip("torch")

from concurrent_calls import in_threads  # noqa: E402

gpu = pytest.mark.gpu
needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

E4, E5 = "float8_e4m3fn", "float8_e5m2"
TN = cublaslt._operands((64, 1), (1, 64), 32, 48, 64)  # a (32, 64) row-major, b (64, 48) column-major


def test_fp8_operands_must_both_be_k_major():
    assert [op[0] for op in TN] == [cublaslt._OP_T, cublaslt._OP_N]
    assert cublaslt._types(E4, E4, "bfloat16", "tensor", TN) == (28, 28, 14)
    nn = cublaslt._operands((64, 1), (48, 1), 32, 48, 64)  # b row-major: not K-major
    assert cublaslt._types(E4, E4, "bfloat16", "tensor", nn) is None
    assert cublaslt._types("bfloat16", None, "bfloat16", None, nn) == (14, 14, 14)


def test_fp8_types_are_given_per_operand_and_need_a_scaling_mode():
    assert cublaslt._types(E4, E5, "float32", "tensor", TN) == (29, 28, 0)  # cuBLAS's A is our B
    assert cublaslt._types(E5, E4, "float16", "row", TN) == (28, 29, 2)
    assert cublaslt._types(E5, E5, "bfloat16", "tensor", TN) is None  # no e5m2 x e5m2 kernel
    assert cublaslt._types(E4, E4, "bfloat16", None, TN) is None
    assert cublaslt._types(E4, E4, "bfloat16", "tile", TN) is None
    assert cublaslt._types("bfloat16", None, "bfloat16", "tensor", TN) is None  # 16-bit operands take no scales
    assert cublaslt._types(E4, E4, "float8_e4m3fn", "tensor", TN) is None  # fp8 output is not offered


def test_scale_modes_name_cublaslt_matrix_scales():
    assert cublaslt.SCALE_MODES["tensor"] == (0, 0)  # SCALAR_32F
    assert cublaslt.SCALE_MODES["row"] == (3, 3)  # OUTER_VEC_32F
    assert cublaslt.SCALE_MODES["block"] == (4, 5)  # VEC128_32F for A, BLK128x128_32F for B


def _problem(m, n, k, ta, tb, g):
    a = (torch.randn(m, k, device="cuda", generator=g) * 2).to(ta)
    b = (torch.randn(n, k, device="cuda", generator=g) * 2).to(tb).t()
    sa = torch.rand((), device="cuda", generator=g) + 0.5
    sb = torch.rand((1,), device="cuda", generator=g) + 0.5
    return a, b, sa, sb


def _replaying():
    from tmakit.ops.scaled_mm import _fast

    return sum("_replaying" in r.__qualname__ for r in _fast.values())


def _check(c, a, b, sa, sb, od, fast):
    want = torch._scaled_mm(a, b, sa, sb, out_dtype=od, use_fast_accum=fast)
    ref = (a.float() @ b.float()) * (sa * sb)
    err = ((c.float() - ref).norm() / ref.norm()).item()
    assert err < 2e-2, err
    assert ((c.float() - want.float()).norm() / ref.norm()).item() < 5e-3


@gpu
@needs_gpu
def test_random_per_tensor_calls_replay_cublas(tmp_path, monkeypatch):
    """120 random default calls with per-tensor scales (e4m3/e5m2 pairs, bf16/fp16/fp32 out, given or new outputs,
    either accumulation): the second call of a layout replays cuBLAS's kernels, a call on new tensors of the same
    layout re-points them; every result is torch._scaled_mm's within rounding."""
    import tmakit as tk
    from tmakit.ops.scaled_mm import _fast

    monkeypatch.setenv("TMAKIT_CACHE_DIR", str(tmp_path))
    rng, g = random.Random(5), torch.Generator(device="cuda").manual_seed(5)
    replayed = 0
    for _ in range(120):
        m = max(1, int(2 ** rng.uniform(0, 12)))
        n, k = (16 * max(1, int(2 ** rng.uniform(0, 8))) for _ in range(2))
        ta, tb = rng.choice([(torch.float8_e4m3fn,) * 2, (torch.float8_e4m3fn, torch.float8_e5m2),
                             (torch.float8_e5m2, torch.float8_e4m3fn)])
        od = rng.choice([torch.bfloat16, torch.float16, torch.float32])
        fast = rng.random() < 0.3
        use_out = rng.random() < 0.5
        _fast.clear()
        first, again = _problem(m, n, k, ta, tb, g), _problem(m, n, k, ta, tb, g)
        outs = {id(t): torch.empty(m, n, dtype=od, device="cuda") for t in (first, again)} if use_out else {}
        for tensors in (first, first, again):  # first call, the cached call, new tensors of this layout
            a, b, sa, sb = tensors
            out = outs.get(id(tensors))
            if out is not None:
                out.fill_(float("nan"))
            c = tk.ops.scaled_mm(a, b, sa, sb, out_dtype=od, out=out, use_fast_accum=fast)
            assert c.dtype == od and (out is None or c is out)
            _check(c, a, b, sa, sb, od, fast)
        replayed += _replaying()
    assert replayed >= 30, replayed


def _recorded(m, n, k):
    import tmakit as tk
    from tmakit.ops.scaled_mm import _fast

    g = torch.Generator(device="cuda").manual_seed(1)
    a, b, sa, sb = _problem(m, n, k, torch.float8_e4m3fn, torch.float8_e4m3fn, g)
    _fast.clear()
    tk.ops.scaled_mm(a, b, sa, sb)
    tk.ops.scaled_mm(a, b, sa, sb)
    assert _replaying() == 1, tk.ops.last_path
    return a, b, sa, sb


@gpu
@needs_gpu
@pytest.mark.parametrize("shape", [(256, 256, 256), (128, 4096, 4096), (1, 272, 8192)])
def test_replay_on_other_streams_and_threads(shape, tmp_path, monkeypatch):
    import tmakit as tk

    monkeypatch.setenv("TMAKIT_CACHE_DIR", str(tmp_path))
    a, b, sa, sb = _recorded(*shape)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        outs = [tk.ops.scaled_mm(a, b, sa, sb) for _ in range(4)]
    s.synchronize()
    for c in outs:
        _check(c, a, b, sa, sb, torch.bfloat16, False)
    def call():
        c = tk.ops.scaled_mm(a, b, sa, sb)
        torch.cuda.current_stream().synchronize()
        _check(c, a, b, sa, sb, torch.bfloat16, False)

    in_threads(call, calls=10)


@gpu
@needs_gpu
def test_replayed_scaled_mm_in_a_cuda_graph(tmp_path, monkeypatch):
    """A replayed call captured in a user's graph reads the scales' and operands' memory at replay time."""
    import tmakit as tk

    monkeypatch.setenv("TMAKIT_CACHE_DIR", str(tmp_path))
    a, b, sa, sb = _recorded(256, 512, 1024)
    out = torch.empty(256, 512, dtype=torch.bfloat16, device="cuda")
    tk.ops.scaled_mm(a, b, sa, sb, out=out)
    tk.ops.scaled_mm(a, b, sa, sb, out=out)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(s):
        tk.ops.scaled_mm(a, b, sa, sb, out=out)
        torch.cuda.synchronize()
        with torch.cuda.graph(graph, stream=s):
            tk.ops.scaled_mm(a, b, sa, sb, out=out)
    a.copy_((torch.randn(a.shape, device="cuda") * 2).to(a.dtype))
    sa.fill_(0.75)
    out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    _check(out, a, b, sa, sb, torch.bfloat16, False)


@gpu
@needs_gpu
def test_cublaslt_fp8_plan_refuses_what_it_is_not_given():
    assert cublaslt.plan(0, E4, "bfloat16", 64, 64, 64, (64, 1), (64, 1), 64, 256, 256, scaling="tensor") is None
    assert cublaslt.plan(0, E5, "bfloat16", 64, 64, 64, (64, 1), (1, 64), 64, 256, 256, scaling="tensor") is None
    assert cublaslt.plan(0, E4, "bfloat16", 64, 64, 64, (64, 1), (1, 64), 64, 256, 256, scaling="tensor") \
        is not None


def test_alternate_tensor_keeps_layout_and_alignment_class():
    from tmakit.ops.gemm_cublas import _alternate

    base = torch.empty(4096, dtype=torch.uint8)
    for off, shape, stride, dt in ((0, (8, 16), (16, 1), torch.float32), (48, (5, 3), (1, 7), torch.float16),
                                   (17, (4, 1), (1, 1), torch.uint8)):
        t = torch.empty(0, dtype=dt).set_(base.untyped_storage(), off // dt.itemsize if dt.itemsize > 1 else off,
                                          shape, stride)
        alt, buf = _alternate(torch, t)
        assert (alt.shape, alt.stride(), alt.dtype) == (t.shape, t.stride(), t.dtype)
        assert alt.data_ptr() % 256 == t.data_ptr() % 256 and alt.data_ptr() != t.data_ptr()
        last = alt.data_ptr() + (sum((n - 1) * s for n, s in zip(shape, stride)) + 1) * alt.element_size()
        assert buf.data_ptr() <= alt.data_ptr() and last <= buf.data_ptr() + buf.numel()


def _row_problem(m, n, k, g):
    from tmakit.ops import quantize as q

    (qa, sa), (qw, sw) = (q.quantize_rows(torch.randn(r, k, device="cuda", generator=g)) for r in (m, n))
    return qa, qw.t(), sa, sw.t()


@gpu
@needs_gpu
def test_row_wise_calls_routed_to_torch_replay_its_kernel(tmp_path, monkeypatch):
    """Row-wise default calls outside the kernel's class run torch._scaled_mm's own kernel; from a layout's second
    call it is replayed (recorded on the call's tensors): the same result as torch._scaled_mm, bit for bit, on new
    outputs, new operands and another stream."""
    import tmakit as tk
    from tmakit.ops.scaled_mm import ROW_KERNEL_MIN_K, _fast

    monkeypatch.setenv("TMAKIT_CACHE_DIR", str(tmp_path))
    rng, g = random.Random(7), torch.Generator(device="cuda").manual_seed(7)
    replayed = 0
    for _ in range(24):
        m = rng.choice([rng.randint(129, 2048), rng.randint(1, 128)])
        n, k = 16 * rng.randint(1, 256), 16 * rng.randint(1, ROW_KERNEL_MIN_K // 16 - 1)  # torch's class at any M
        od = torch.bfloat16  # torch's row-wise kernel writes bf16 only
        use_out = rng.random() < 0.5
        _fast.clear()
        first, again = _row_problem(m, n, k, g), _row_problem(m, n, k, g)
        outs = {id(t): torch.empty(m, n, dtype=od, device="cuda") for t in (first, again)} if use_out else {}
        for tensors in (first, first, again):
            a, b, sa, sb = tensors
            out = outs.get(id(tensors))
            if out is not None:
                out.fill_(float("nan"))
            c = tk.ops.scaled_mm(a, b, sa, sb, out_dtype=od, out=out)
            assert tk.ops.last_path.startswith("torch:")
            assert torch.equal(c, torch._scaled_mm(a, b, sa, sb, out_dtype=od))
        replayed += _replaying()
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            c = tk.ops.scaled_mm(*again, out_dtype=od)
        s.synchronize()
        assert torch.equal(c, torch._scaled_mm(*again, out_dtype=od))
    assert replayed >= 20, replayed


@gpu
@needs_gpu
def test_a_torch_call_that_allocates_is_not_recorded():
    from tmakit.ops.gemm_cublas import record_torch_call

    x = torch.randn(1000, device="cuda")
    out = torch.empty_like(x)
    assert record_torch_call(torch, 0, lambda x, out: out.copy_(x + 1), [x, out]) is None  # x + 1: a temporary
    rec = record_torch_call(torch, 0, lambda x, out: torch.add(x, 1, out=out), [x, out])
    assert rec is not None
    y, o2 = torch.randn(1000, device="cuda"), torch.full((1000,), float("nan"), device="cuda")
    rec.copy()(torch.cuda.current_stream().cuda_stream, y.data_ptr(), o2.data_ptr())
    torch.cuda.synchronize()
    assert torch.equal(o2, y + 1)


@gpu
@needs_gpu
@pytest.mark.parametrize("od", [torch.float32, torch.float16])
def test_row_wise_outputs_torch_refuses_keep_the_reference_on_repeated_calls(od, tmp_path, monkeypatch):
    """Where torch._scaled_mm refuses a kind of call (its row-wise kernel writes bf16 only), the first call computes
    the dequantized reference and later calls must not take a cached torch route: every call succeeds."""
    import tmakit as tk

    monkeypatch.setenv("TMAKIT_CACHE_DIR", str(tmp_path))
    a, b, sa, sb = _row_problem(300, 256, 512, torch.Generator(device="cuda").manual_seed(2))
    ref = (a.float() * sa) @ (b.float() * sb)
    for _ in range(3):
        c = tk.ops.scaled_mm(a, b, sa, sb, out_dtype=od)
        assert c.dtype == od and ((c.float() - ref).norm() / ref.norm()).item() < 1e-2


class _Layout:
    """Shape, strides and element size of a tensor, without memory."""

    def __init__(self, shape, stride, itemsize):
        self.shape, self._stride, self._itemsize = shape, stride, itemsize

    def stride(self):
        return self._stride

    def numel(self):
        return math.prod(self.shape)

    def element_size(self):
        return self._itemsize


def test_a_torch_call_over_large_tensors_is_not_recorded():
    """Recording a torch op copies its tensors' layouts into new memory: above RECORD_COPY_LIMIT it is not tried
    (nothing is allocated and the op never runs)."""
    from tmakit.ops import gemm_cublas as gc

    def call(*_):
        raise AssertionError("must not run")

    a = _Layout((4096, 4096), (1, 4096), 1)  # w.t() of a 4096 x 4096 fp8 weight: 16 MiB
    out = _Layout((4096, 4096), (4096, 1), 2)  # 32 MiB
    assert gc._extent_bytes(a) == 16 << 20 and gc._extent_bytes(out) == 32 << 20
    assert gc._extent_bytes(_Layout((3, 5), (40, 2), 4)) == (2 * 40 + 4 * 2 + 1) * 4
    assert gc.record_torch_call(torch, 0, call, [a, a, out, _Layout((8,), (1,), 4)]) is None  # 64 MiB + 32 B
