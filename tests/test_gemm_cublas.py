"""The GEMM's cached route to cuBLAS (``tmakit.ops.gemm_cublas``): cuBLASLt planned once per layout, its kernel
launches recorded (``tmakit.cuda.replay``) and replayed with the call's addresses. CPU tests pin the recording's
rules on synthetic recordings; GPU tests check every replayed result against an fp32 reference, with new
addresses, streams, threads and CUDA graphs."""

from __future__ import annotations

import ctypes
import random

import pytest

from tmakit.cuda import replay

torch = pytest.importorskip("torch")

from concurrent_calls import in_threads  # noqa: E402
from gemm_operands import KINDS, operand  # noqa: E402

gpu = pytest.mark.gpu
needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def _rec(*params, func=1, grid=(1, 1, 1)):
    return replay._Recording(func, grid, (128, 1, 1), 0, (1, 1, 1), [(o, bytes(b)) for o, b in params])


def _words(*ws):
    return b"".join(w.to_bytes(8, "little") for w in ws)


def test_a_word_that_moves_with_the_address_is_patched_with_its_constant():
    p1, p2 = 0x7F0000000000, 0x7F0100000000
    r1 = _rec((0, _words(5, p1 + 64, 7)))
    r2 = _rec((0, _words(5, p2 + 64, 7)))
    assert replay._explain(r1, r2, p1, p2) == [(0, 8, 64, False)]


def test_a_difference_that_is_not_the_address_is_refused():
    p1, p2 = 0x7F0000000000, 0x7F0100000000
    r1 = _rec((0, _words(5, p1 >> 4)))
    r2 = _rec((0, _words(5, p2 >> 4)))
    assert replay._explain(r1, r2, p1, p2) is None  # a 16-byte tail that no 128-byte map fits


def test_an_unexplained_block_inside_a_large_parameter_is_taken_as_a_tensor_map():
    p1, p2 = 0x7F0000000000, 0x7F0100000000
    b1, b2 = bytearray(256), bytearray(256)
    b2[64 + 3] = 1  # an encoded field of a map at offset 64
    assert replay._explain(_rec((0, b1)), _rec((0, b2)), p1, p2) == [(0, 64, 0, True)]


def test_a_recorded_kernel_launches_with_its_cluster_shape_and_programmatic_launch():
    p = [(0, _words(1, 2)), (16, bytes(range(8)))]
    rec = replay._Recording(7, (3, 2, 1), (128, 1, 1), 4096, (2, 1, 1), p, early=True)
    k = replay._Kernel(rec)
    assert k.matches(rec) and list(k.cfg.grid) == [3, 2, 1] and k.cfg.smem == 4096
    attrs = [(k.cfg.attrs[i].id, list(k.cfg.attrs[i].value[:3])) for i in range(k.cfg.nattrs)]
    assert attrs == [(4, [2, 1, 1]), (6, [1, 0, 0])]  # cluster dimension, programmatic stream serialization
    plain = replay._Kernel(replay._Recording(7, (1, 1, 1), (32, 1, 1), 0, (1, 1, 1), p))
    assert plain.cfg.nattrs == 0
    assert [plain.ptrs[i] - plain.base for i in range(2)] == [0, 16]


def test_the_extra_parameter_buffer_is_read_from_its_key_value_list():
    buf = ctypes.create_string_buffer(b"x" * 40)
    size = ctypes.c_size_t(40)
    extra = (ctypes.c_void_p * 5)(replay._PARAM_SIZE, ctypes.addressof(size), replay._PARAM_BUFFER,
                                  ctypes.addressof(buf), replay._PARAM_END)
    assert replay._extra_buffer(ctypes.addressof(extra)) == (ctypes.addressof(buf), 40)
    no_size = (ctypes.c_void_p * 3)(replay._PARAM_BUFFER, ctypes.addressof(buf), replay._PARAM_END)
    assert replay._extra_buffer(ctypes.addressof(no_size)) is None
    assert replay._extra_buffer(None) is None


def test_alignment_is_the_largest_power_of_two_up_to_256():
    from tmakit.cuda import cublaslt

    assert [cublaslt.alignment(p) for p in (0, 2, 48, 4096, 0x7F0000000100 + 64)] == [256, 2, 16, 256, 64]


def test_without_cublaslt_there_is_no_plan(monkeypatch):
    from tmakit.cuda import cublaslt

    monkeypatch.setattr(cublaslt, "_lib", False)
    assert not cublaslt.available()
    assert cublaslt.plan(0, "bfloat16", "bfloat16", 8, 8, 8, (8, 1), (8, 1), 8, 256, 256) is None


def test_a_recording_of_other_shape_is_not_comparable():
    assert _rec((0, _words(1))).shape() != _rec((0, _words(1)), grid=(2, 1, 1)).shape()


# ---------------------------------------------------------------------------------------------------------- GPU


def _routed(m, n, k):
    """Whether the default route sends (m, n, k) bf16 with 16-byte rows to cuBLAS."""
    import tmakit as tk

    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    tk.ops.gemm(a, torch.randn(k, n, device="cuda", dtype=torch.bfloat16))
    return tk.ops.last_path.startswith("torch:")


def _check(c, a, b, tol=2e-2):
    ref = a.float() @ b.float()
    err = ((c.float() - ref).norm() / ref.norm().clamp_min(1e-30)).item()
    assert err < tol, err


def _fast_runner(a, b, out=None, out_dtype=None):
    import importlib

    g = importlib.import_module("tmakit.ops.gemm")  # the module (tmakit.ops.gemm is also the function's name)
    key = (a.shape, a.stride(), a.dtype, a.data_ptr(), b.shape, b.stride(), b.dtype, b.data_ptr(),
           None if out is None else (out.shape, out.stride(), out.dtype, out.data_ptr()), out_dtype)
    return g._fast.get(key)


def _tensors(m, n, k, ka, kb, dt, od, g):
    """Operands of the given kinds and, unless ``od`` is False, an ``out=`` view (a column slice) of dtype ``od``."""
    a, b = operand(m, k, ka, dt, "cuda", g), operand(k, n, kb, dt, "cuda", g)
    out = None if od is False else torch.full((m, n + 2), float("nan"), dtype=od or dt, device="cuda")[:, 1:n + 1]
    return a, b, out


@gpu
@needs_gpu
def test_random_routed_layouts_replay_correctly_with_new_addresses(tmp_path, monkeypatch):
    """300 random calls that the route sends to cuBLAS (short problems, rows not 16-byte multiples, strided and
    offset views, fp32 out, out= views): the second call of a layout runs the recorded kernels, a call on new
    tensors of the same layout re-points them; every result within tolerance of fp32."""
    import tmakit as tk

    monkeypatch.setenv("TMAKIT_CACHE_DIR", str(tmp_path))
    rng, g = random.Random(3), torch.Generator(device="cuda").manual_seed(3)
    replayed = 0
    for _ in range(300):
        m, n, k = (max(1, int(2 ** rng.uniform(0, 11))) for _ in range(3))
        dt = rng.choice([torch.bfloat16, torch.float16])
        ka, kb = rng.choice(KINDS), rng.choice(KINDS)
        od = rng.choice([None, None, torch.float32])
        use_out = rng.random() < 0.4

        first = _tensors(m, n, k, ka, kb, dt, od if use_out else False, g)
        again = _tensors(m, n, k, ka, kb, dt, od if use_out else False, g)
        for a, b, out in (first, first, again):  # first call, the cached call, new tensors of this layout
            if out is not None:
                out.fill_(float("nan"))
            c = tk.ops.gemm(a, b, out=out, out_dtype=None if use_out else od)
            assert c.dtype == (od or dt)
            _check(c, a, b)
            if tk.ops.last_path.startswith("torch:"):
                run = _fast_runner(a, b, out, None if use_out else od)
                replayed += run is not None and run.__module__ == "tmakit.ops.gemm_cublas"
    assert replayed >= 60, replayed


def _record_probe(m, n, k, dt=torch.bfloat16):
    import tmakit as tk

    a = torch.randn(m, k, device="cuda", dtype=dt)
    b = torch.randn(n, k, device="cuda", dtype=dt).t()
    tk.ops.gemm(a, b)
    tk.ops.gemm(a, b)
    run = _fast_runner(a, b)
    assert run is not None and run.__module__ == "tmakit.ops.gemm_cublas", tk.ops.last_path
    return a, b


@gpu
@needs_gpu
@pytest.mark.parametrize("shape", [(256, 256, 256), (128, 128, 8192), (64, 4096, 4096), (1, 269, 8169)])
def test_replay_on_other_streams_and_threads(shape, tmp_path, monkeypatch):
    """A layout replayed on a second stream (its own cuBLASLt workspace) and from four threads at once, each with
    new outputs, gives the reference every time."""
    import tmakit as tk

    monkeypatch.setenv("TMAKIT_CACHE_DIR", str(tmp_path))
    m, n, k = shape
    a, b = _record_probe(m, n, k)
    ref = (a.float() @ b.float())
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        outs = [tk.ops.gemm(a, b) for _ in range(4)]
    s.synchronize()
    for c in outs:
        _check(c, a, b)
    def call():
        c = tk.ops.gemm(a, b)
        torch.cuda.current_stream().synchronize()
        assert ((c.float() - ref).norm() / ref.norm()).item() < 2e-2

    in_threads(call)


@gpu
@needs_gpu
def test_replayed_call_in_a_cuda_graph(tmp_path, monkeypatch):
    import tmakit as tk

    monkeypatch.setenv("TMAKIT_CACHE_DIR", str(tmp_path))
    a, b = _record_probe(256, 256, 256)
    out = torch.empty(256, 256, dtype=torch.bfloat16, device="cuda")
    tk.ops.gemm(a, b, out=out)
    tk.ops.gemm(a, b, out=out)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(s):
        tk.ops.gemm(a, b, out=out)
        torch.cuda.synchronize()
        with torch.cuda.graph(graph, stream=s):
            tk.ops.gemm(a, b, out=out)
    a.copy_(torch.randn_like(a))
    out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    _check(out, a, b)


@gpu
@needs_gpu
def test_cublaslt_plan_refuses_what_it_is_not_given():
    from tmakit.cuda import cublaslt

    assert cublaslt.available()
    assert cublaslt.plan(0, "float32", "float32", 8, 8, 8, (8, 1), (8, 1), 8, 256, 256) is None
    assert cublaslt.plan(0, "bfloat16", "bfloat16", 8, 8, 8, (16, 2), (8, 1), 8, 256, 256) is None  # no unit stride
    assert cublaslt.plan(0, "bfloat16", "bfloat16", 0, 8, 8, (8, 1), (8, 1), 8, 256, 256) is None
    assert cublaslt.plan(0, "bfloat16", "bfloat16", 8, 8, 8, (8, 1), (8, 1), 4, 256, 256) is None  # ldc < n


def test_other_addresses_are_words_outside_the_patched_slots():
    p = 0x7F0000000000
    rec = replay._Recording(1, (1, 1, 1), (128, 1, 1), 0, (1, 1, 1),
                            [(0, _words(5, p + 64, 0x7E0000001000)), (24, _words(0x7E0000002000))])
    k = replay._Kernel(rec)
    k.patches.append([(0, 8, 64, False)])
    launch = replay.RecordedLaunch.__new__(replay.RecordedLaunch)
    launch.kernels = [k]
    known = {0x7E0000001000, 0x7E0000002000, p + 64}
    assert replay.other_addresses(launch, known.__contains__) == [0x7E0000001000, 0x7E0000002000]
