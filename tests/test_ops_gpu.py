"""tk.ops on the GPU: results equal torch's for many shapes, dtypes, remainders and strided inputs."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tmakit import ops  # noqa: E402
from tmakit.ops.memory_ops import torch_reduce  # noqa: E402


def _gpu_ok() -> bool:
    try:
        from tmakit import cuda as tkc

        return torch.cuda.is_available() and tkc.is_available()
    except Exception:
        return False


pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not _gpu_ok(), reason="needs a Hopper GPU and tmakit.cuda")]


def rand(shape, dtype):
    if dtype.is_floating_point:
        return torch.randn(shape, device="cuda").to(dtype)
    return torch.randint(-1000, 1000, shape, device="cuda").to(dtype)


def poisoned(shape, dtype):
    return torch.full(shape, 77, device="cuda").to(dtype)


def tma_copy(src, dst, **configs):
    """``dst[...] = src`` as ``ops.copy`` runs it, but planned with the kernel configs given (``config=``,
    ``transpose=`` of ``launcher_for``; the ops use the defaults); the torch fallback where TMA cannot describe the
    pair. Returns the path that ran."""
    from tmakit.kernels import bandwidth as bw

    run = bw.launcher_for(src, dst, **configs)
    if not isinstance(run, bw.Launcher):
        dst.copy_(src)
        return "torch:" + run.reason
    run(src.data_ptr(), dst.data_ptr())
    return run.path


def tma_combine(dst, src, op, config):
    """``ops.reduce_into(dst, src, op, method="combine", strict=True)`` planned with the reduce config given."""
    from tmakit.kernels import bandwidth as bw
    from tmakit.ops.memory_ops import reduce_dtype

    run = bw.launcher_for(src, dst, op=ops.REDUCE_OPS.index(op), dtype=reduce_dtype(op, dst), allow_transpose=False,
                          engine="bulk", config=config)
    assert isinstance(run, bw.Launcher) and run.kind == "combine", getattr(run, "reason", run.kind)
    run(src.data_ptr(), dst.data_ptr())
    return run.path


def tma_permute(x, dims, table):
    """``ops.permute(x, dims)`` planned with the transpose configs ``table`` (a TransposeConfig per element size)."""
    v = x.permute(dims)
    y = torch.empty(v.shape, dtype=x.dtype, device=x.device)
    tma_copy(v, y, transpose=table)
    return y


@pytest.mark.parametrize("n", [1, 7, 8, 255, 256, 257, 4095, 65537, 1 << 20, (1 << 22) + 13])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32, torch.uint8, torch.float64])
def test_copy_flat(n, dtype):
    x = rand((n,), dtype)
    y = poisoned((n,), dtype)
    ops.copy(x, y, strict=True)
    assert ops.last_path in ("tma:flat", "tma:bulk")
    assert torch.equal(x, y)


@pytest.mark.parametrize("engine", ["tensor", "bulk"])
@pytest.mark.parametrize("n", [1, 15, 16, 4097, 65536 + 48, (1 << 22) + 13, (3 << 20) + 130 * 1024 + 16])
def test_copy_flat_each_engine(n, engine):
    """Each engine on contiguous bytes; the tensor engine hands sizes that end inside a 16-byte unit to the bulk
    engine (a map would store the whole unit), and the bytes after dst keep their values."""
    from tmakit.kernels import bandwidth as bw

    x = torch.randint(0, 255, (n,), dtype=torch.uint8, device="cuda")
    buf = poisoned((n + 32,), torch.uint8)
    path = tma_copy(x, buf[:n], config=bw.CopyConfig(engine=engine, bulk_below=0))
    assert path == ("tma:flat" if engine == "tensor" and n % 16 == 0 else "tma:bulk")
    assert torch.equal(x, buf[:n]) and torch.all(buf[n:] == 77)


@pytest.mark.parametrize("shape,dims", [((32, 64, 128, 128), (0, 2, 1, 3)), ((5, 33, 17, 24), (1, 0, 2, 3)),
                                        ((3, 300, 40), (1, 0, 2)), ((2, 3, 4, 5, 16), (4, 3, 2, 1, 0))])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_permute(shape, dims, dtype):
    x = rand(shape, dtype)
    out = poisoned(tuple(shape[d] for d in dims), dtype)
    ops.permute(x, dims, out=out)
    if shape != (2, 3, 4, 5, 16):  # that one has a 12-byte dst stride: torch fallback
        assert ops.last_path.startswith("tma:"), ops.last_path
    assert torch.equal(out, x.permute(dims))


@pytest.mark.parametrize("shape", [(64, 64), (1000, 777), (16384, 96), (33, 4096), (1, 5000), (4096, 4096), (7, 4000),
                                   (3000, 8)])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32, torch.uint8, torch.int64])
def test_transpose_2d(shape, dtype):
    x = rand(shape, dtype)
    out = poisoned(shape[::-1], dtype)
    ops.transpose(x, 0, 1, out=out)
    assert torch.equal(out, x.t())


def test_permute_0312():
    x = rand((32, 64, 128, 128), torch.bfloat16)
    y = ops.permute(x, (0, 3, 1, 2))
    assert ops.last_path == "tma:transpose"
    assert torch.equal(y, x.permute(0, 3, 1, 2))


def test_strided_source_slice():
    base = rand((512, 1024), torch.float32)
    x = base[:, 128:640]  # row stride 4096 B, inner contiguous
    y = poisoned(x.shape, torch.float32)
    ops.copy(x, y, strict=True)
    assert ops.last_path == "tma:strided" and torch.equal(x, y)


def test_fallback_for_unaligned_stride():
    base = rand((64, 67), torch.bfloat16)
    x = base[:, :64]  # row stride 134 bytes: not a multiple of 16
    y = torch.empty_like(x)
    ops.copy(x, y)
    assert ops.last_path.startswith("torch:") and torch.equal(x, y)


@pytest.mark.parametrize("method", ["store-reduce", "combine"])
@pytest.mark.parametrize("n", [104, 256, 1000, 1 << 20, (1 << 21) + 3])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.int32])
def test_reduce_add(n, dtype, method):
    d, s = rand((n,), dtype), rand((n,), dtype)
    ref = (d.double() + s.double())
    if method == "store-reduce" and (n * d.element_size()) % 16:  # the map would write past d's last byte
        with pytest.raises(ValueError, match="16-byte units"):
            ops.reduce_into(d, s, "add", method=method, strict=True)
        return
    ops.reduce_into(d, s, "add", method=method, strict=True)
    assert ops.last_path == ("tma:flat" if method == "store-reduce" else "tma:combine")
    if dtype.is_floating_point:
        err = ((d.double() - ref).norm() / ref.norm()).item()
        assert err < (1e-6 if dtype == torch.float32 else 1e-2)
    else:
        assert torch.equal(d.double(), ref)


@pytest.mark.parametrize("op", ["min", "max"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.int32, torch.int64])
def test_reduce_minmax(op, dtype):
    d, s = rand((3, 1000, 96), dtype), rand((3, 1000, 96), dtype)
    want = torch.minimum(d, s) if op == "min" else torch.maximum(d, s)
    ops.reduce_into(d, s, op, strict=True)
    assert torch.equal(d, want)


@pytest.mark.parametrize("op", ["and", "or", "xor"])
def test_reduce_bitwise(op):
    d, s = rand((70000,), torch.int64), rand((70000,), torch.int64)
    want = {"and": d & s, "or": d | s, "xor": d ^ s}[op]
    ops.reduce_into(d, s, op, strict=True)
    assert torch.equal(d, want)


@pytest.mark.parametrize("method", ["auto", "store-reduce"])
@pytest.mark.parametrize("op,dtype,n", [("min", torch.float16, 1), ("min", torch.float16, 17),
                                        ("min", torch.bfloat16, 300), ("max", torch.float16, 4301841),
                                        ("dec", torch.int32, 1), ("inc", torch.int32, 5), ("and", torch.int32, 7)])
def test_reduce_leaves_the_bytes_after_dst_alone(op, dtype, n, method):
    """A store-reduce through a map updates dim 0 in whole 16-byte units (docs/HARDWARE.md section 3): on a dst of
    n * size bytes not a multiple of 16 the H200 turned the elements after it into min(x, 0). Such a dst takes the
    combine path or torch (store-reduce: strict raises the rule); the elements after the view keep their values."""
    dt = torch.uint32 if op in ("inc", "dec") and hasattr(torch, "uint32") else dtype
    buf = torch.full((n + 16,), 5, dtype=dt, device="cuda")
    src = torch.zeros(n, dtype=dt, device="cuda") if op != "and" else torch.full((n,), 4, dtype=dt, device="cuda")
    want = buf.clone()
    torch_reduce(want[:n], src, op)
    ops.reduce_into(buf[:n], src, op, method=method)
    torch.cuda.synchronize()
    assert torch.equal(buf.cpu(), want.cpu()), ops.last_path
    if method == "store-reduce":
        with pytest.raises(ValueError, match="16-byte units"):
            ops.reduce_into(buf[:n], src, op, method=method, strict=True)


def test_reduce_strided_and_fallback_dtype():
    d = rand((256, 512), torch.float32)[:, :256]
    s = rand((256, 256), torch.float32)
    want = d + s
    ops.reduce_into(d, s, "add", strict=True)
    assert ops.last_path == "tma:strided" and torch.allclose(d, want)
    d64, s64 = rand((100,), torch.float64), rand((100,), torch.float64)
    want = d64 + s64
    ops.reduce_into(d64, s64, "add")
    assert ops.last_path.startswith("torch:") and torch.equal(d64, want)


@pytest.mark.parametrize("op", ["add", "min", "max"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.int32, torch.int64])
@pytest.mark.parametrize("n", [1, 7, 4099, (1 << 20) + 5])
def test_reduce_combine_matches_torch(op, dtype, n):
    d, s = rand((n,), dtype), rand((n,), dtype)
    if dtype.is_floating_point and n > 8:
        s[3] = float("nan")  # min/max propagate NaN like torch.minimum / torch.maximum
    want = d.clone()
    torch_reduce(want, s, op)
    ops.reduce_into(d, s, op, method="combine", strict=True)
    assert ops.last_path == "tma:combine"
    assert torch.equal(d.isnan(), want.isnan()) and torch.equal(d.nan_to_num(), want.nan_to_num())


@pytest.mark.parametrize("op", ["and", "or", "xor"])
@pytest.mark.parametrize("dtype", [torch.uint8, torch.int16, torch.int32, torch.int64])
def test_reduce_combine_bitwise_any_integer(op, dtype):
    d, s = rand((70001,), dtype), rand((70001,), dtype)
    want = {"and": d & s, "or": d | s, "xor": d ^ s}[op]
    ops.reduce_into(d, s, op, method="combine", strict=True)
    assert ops.last_path == "tma:combine" and torch.equal(d, want)


def test_reduce_auto_default_path():
    d, s = rand((1 << 20,), torch.float32), rand((1 << 20,), torch.float32)
    want = d + s
    ops.reduce_into(d, s, "add")
    assert ops.last_path in ("tma:combine", "tma:flat") and torch.equal(d, want)
    d, s = rand((4096,), torch.int64), rand((4096,), torch.int64)
    want = torch.maximum(d, s)
    ops.reduce_into(d, s, "max", method="store-reduce", strict=True)
    assert ops.last_path == "tma:flat" and torch.equal(d, want)


def test_fast_path_reuses_only_matching_plans():
    """Repeated calls take the cached launcher; a change of dtype, strides or alignment must not reuse a plan."""
    shape, dims = (4, 6, 64, 128), (0, 3, 1, 2)
    for _ in range(2):
        for dtype in (torch.bfloat16, torch.float32, torch.bfloat16):
            x = rand(shape, dtype)
            out = poisoned(tuple(shape[d] for d in dims), dtype)
            ops.permute(x, dims, out=out)
            assert ops.last_path == "tma:transpose" and torch.equal(out, x.permute(dims))
            y = ops.permute(x, dims)
            assert torch.equal(y, x.permute(dims))
        base = rand((4 * 6 * 64 * 128 + 64,), torch.bfloat16)
        x = base[8:8 + 4 * 6 * 64 * 128].view(shape)  # 16 mod 128: TMA's transpose needs 128-byte alignment
        y = ops.permute(x, dims)
        assert ops.last_path == "plain:transpose" and torch.equal(y, x.permute(dims))
        x = rand((4, 6, 64, 256), torch.bfloat16)[..., :128]  # other strides, same shape
        y = ops.permute(x, dims)
        assert ops.last_path == "tma:transpose" and torch.equal(y, x.permute(dims))
        x = rand(shape, torch.bfloat16)
        for d in ((0, 2, 1, 3), (0, 3, 1, 2), (0, 2, 1, 3)):
            assert torch.equal(ops.permute(x, d), x.permute(d))
        a = rand((1 << 16,), torch.float32)
        b = poisoned((1 << 16,), torch.float32)
        ops.copy(a, b)
        ops.copy(a[4:], b[4:])  # 16-byte offset: another plan class, same result
        assert torch.equal(a, b)
        d, s = rand((1 << 16,), torch.float32), rand((1 << 16,), torch.float32)
        want = d + s
        ops.reduce_into(d, s, "add")
        assert torch.equal(d, want)
        want = torch.maximum(d, s)
        ops.reduce_into(d, s, "max")
        assert torch.equal(d, want)


@pytest.mark.parametrize("n", [1, 257, 65537, (1 << 22) + 13, (3 << 20) + 130 * 1024 + 16, 1 << 20])
def test_copy_runs_of_tiles(n):
    """The run-based tensor-map copy (tiles_per_cta, two resident CTAs) and the default lean one-tile bulk copy
    (4 KiB per CTA, PDL) on sizes with tails; sizes that end inside a 16-byte unit go to the bulk engine (a map
    would store the whole unit: docs/HARDWARE.md section 3), and the bytes after dst keep their values."""
    import dataclasses

    from tmakit.kernels import bandwidth as bw

    runs = dataclasses.replace(bw.COPY_CONFIG, flat_min=0, bulk_below=0,
                               flat=(("tiles_per_cta", 2), ("ctas_per_sm", 2), ("stages", 3)))
    x = torch.randint(0, 255, (n,), dtype=torch.uint8, device="cuda")
    for cfg, path in ((runs, "tma:flat" if n % 16 == 0 else "tma:bulk"), (bw.COPY_CONFIG, "tma:bulk")):
        for _ in range(2):
            buf = poisoned((n + 32,), torch.uint8)
            assert tma_copy(x, buf[:n], config=cfg) == path
            assert torch.equal(x, buf[:n]) and torch.all(buf[n:] == 77)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("n", [5, 4097, 65536 + 24, (1 << 22) + 13, (3 << 19) + 33333])
def test_reduce_combine_runs_of_tiles(n, dtype):
    import dataclasses

    from tmakit.kernels import bandwidth as bw

    cfg = dataclasses.replace(bw.REDUCE_CONFIG, flat_min=0)
    u, v = rand((n,), dtype), rand((n,), dtype)
    ref = v.clone()
    ref.add_(u)
    assert tma_combine(v, u, "add", cfg) == "tma:combine"
    assert torch.equal(v, ref)


def _check_combine_sizes(op, dtype, config):
    """reduce_into(method="combine") with ``config`` against torch on sizes with tails, twice each (the cached
    launcher too)."""
    for n in (1, 4097, (1 << 20) + 13, (3 << 19) + 33333):
        d, s = rand((n,), dtype), rand((n,), dtype)
        want = d.clone()
        torch_reduce(want, s, op)
        for _ in range(2):
            got = d.clone()
            assert tma_combine(got, s, op, config) == "tma:combine"
            assert torch.equal(got, want)


@pytest.mark.parametrize("mode", [2, 3])
@pytest.mark.parametrize("op, dtype", [("add", torch.float16), ("min", torch.float32), ("max", torch.int32),
                                       ("add", torch.int64), ("xor", torch.uint8), ("max", torch.bfloat16)])
def test_reduce_combine_one_tile_per_cta(op, dtype, mode):
    """The combine default's shape (one tile per CTA, one stage) forced on small sizes with tails, for every kind of
    combine; mode 3 (one-warp CTAs) with its smem padding (`resident`) too."""
    import dataclasses

    from tmakit.kernels import bandwidth as bw

    cfg = dataclasses.replace(bw.REDUCE_CONFIG, flat_min=0)
    if mode == 3:
        cfg = dataclasses.replace(cfg, flat=cfg.flat + (("bulk_mode", 3), ("resident", 20)))
    _check_combine_sizes(op, dtype, cfg)


@pytest.mark.parametrize("lean", [(1, 2, 4096, 0, 0), (2, 2, 2048, 0, 0), (2, 3, 2048, 0, 0),
                                  (1, 2, 4096, 2048, 1 << 16), (1, 2, 3072, 1024, 40000)])
@pytest.mark.parametrize("op, dtype", [("add", torch.float16), ("min", torch.float32), ("max", torch.int32),
                                       ("add", torch.int64), ("xor", torch.uint8), ("add", torch.bfloat16)])
def test_reduce_combine_lean_one_tile_cta(op, dtype, lean):
    """The lean one-tile CTA (CopyConfig.lean: (lean, mode, piece, end_piece, end_bytes)) forced on small sizes with
    tails, end tiles and more CTAs than tiles, for every kind of combine."""
    import dataclasses

    from tmakit.kernels import bandwidth as bw

    kind, mode, piece, end_piece, end_bytes = lean
    cfg = dataclasses.replace(bw.REDUCE_CONFIG, flat_min=0)
    cfg = dataclasses.replace(cfg, flat=cfg.flat + (("lean", kind), ("bulk_mode", mode), ("piece", piece),
                                                    ("row", piece), ("end_piece", end_piece),
                                                    ("end_bytes", end_bytes)))
    _check_combine_sizes(op, dtype, cfg)


@pytest.mark.parametrize("mode", [0, 2])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32, torch.uint8, torch.float64])
def test_transpose_dynamic_tiles(dtype, mode):
    """Tiles from the atomic counter (dyn), forced on small tensors: repeated launches (the kernel re-zeroes the
    counter), a second stream (its own counter), remainders, a batched permute."""
    import dataclasses

    from tmakit.kernels import bandwidth as bw

    e = torch.tensor([], dtype=dtype).element_size()
    base = bw.PERSISTENT_TRANSPOSE.get(e) or bw.PERSISTENT_TRANSPOSE[2]
    cfg = dataclasses.replace(base, mode=mode, dyn=1, dyn_bytes=0, wide=())
    table = {**bw.TRANSPOSE_CONFIG, e: cfg}
    for shape in ((1000, 777), (33, 4096), (3000, 8), (2048, 2048)):
        x = rand(shape, dtype)
        for _ in range(3):
            assert torch.equal(tma_permute(x, (1, 0), table), x.t())
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        x = rand((1500, 2100), dtype)
        y = tma_permute(x, (1, 0), table)
        ok = torch.equal(y, x.t())
    torch.cuda.synchronize()
    assert ok
    x = rand((4, 6, 300, 128), dtype)
    assert torch.equal(tma_permute(x, (0, 3, 1, 2), table), x.permute(0, 3, 1, 2))


def _lean_pdl_launcher(d, s):
    from tmakit.kernels import bandwidth as bw
    from tmakit.tma.dtypes import tma_dtype

    return bw.launcher_for(s, d, op=0, dtype=tma_dtype(d.dtype), allow_transpose=False)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_reduce_pdl_chain_reads_what_the_previous_kernel_wrote(dtype):
    """Back-to-back default reduces (lean CTAs launched with PDL) where each call reads what the kernel just before
    it wrote -- ours or torch's: a CTA that loaded before griddepcontrol.wait would show as a mismatch."""
    n = (40 << 20) // torch.tensor([], dtype=dtype).element_size() + 5  # lean range (>= 32 MiB), odd tail
    a, b, c = rand((n,), dtype), rand((n,), dtype), rand((n,), dtype)
    assert _lean_pdl_launcher(b, a).pdl
    ra, rb, rc = a.clone(), b.clone(), c.clone()
    for _ in range(4):
        ops.reduce_into(b, a, "add")
        ops.reduce_into(c, b, "add")
        ops.reduce_into(a, c, "add")
        a.mul_(0.5)
        rb.add_(ra)
        rc.add_(rb)
        ra.add_(rc)
        ra.mul_(0.5)
    assert ops.last_path == "tma:combine"
    assert torch.equal(a, ra) and torch.equal(b, rb) and torch.equal(c, rc)


def test_reduce_pdl_in_a_cuda_graph():
    """PDL launches captured into a CUDA graph replay correctly (programmatic edges between our kernels)."""
    n = (40 << 20) // 4 + 3
    a, b, c = rand((n,), torch.float32), rand((n,), torch.float32), rand((n,), torch.float32)
    ops.reduce_into(b, a, "add")  # compile and cache outside the capture
    ops.reduce_into(c, b, "add")
    assert _lean_pdl_launcher(c, b).pdl
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    g = torch.cuda.CUDAGraph()
    with torch.cuda.stream(s), torch.cuda.graph(g, stream=s):
        ops.reduce_into(b, a, "add")
        ops.reduce_into(c, b, "add")
    torch.cuda.current_stream().wait_stream(s)
    rb, rc = b.clone(), c.clone()
    for _ in range(3):
        g.replay()
        rb.add_(a)
        rc.add_(rb)
    torch.cuda.synchronize()
    assert torch.equal(b, rb) and torch.equal(c, rc)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32, torch.uint8, torch.float64])
def test_transpose_lean_default_shapes_and_the_persistent_shape(dtype):
    """The lean transpose default (one tile per CTA) on remainders, batched permutes and a reversal; the same cases
    through the session-4 persistent shape (PERSISTENT_TRANSPOSE) give the same bytes."""
    from tmakit.kernels import bandwidth as bw

    # 16-byte aligned strides for every dtype (uint8 included), sizes off the 64/128-element tile grid
    cases = [((1008, 784), (1, 0)), ((48, 4096), (1, 0)), ((3008, 16), (1, 0)), ((4, 6, 304, 128), (0, 3, 1, 2)),
             ((16, 32, 48, 16), (3, 2, 1, 0)), ((2, 3, 4, 80, 48), (0, 1, 2, 4, 3))]
    outs = []
    for table in (bw.TRANSPOSE_CONFIG, bw.PERSISTENT_TRANSPOSE):
        got = []
        for shape, dims in cases:
            x = rand(shape, dtype)
            y = poisoned(tuple(shape[d] for d in dims), dtype)
            got.append(tma_copy(x.permute(dims), y, transpose=table))
            assert torch.equal(y, x.permute(dims)), (shape, dims)
        outs.append(got)
    assert outs[0] == outs[1] and outs[0].count("tma:transpose") >= 4, outs[0]


def test_fresh_tensors_every_call_repoint_the_packed_block():
    """One launcher, many address pairs: each call re-points the one packed parameter block (pointers, tensor maps,
    the flat view's offset tail maps); every output is right and no call writes an earlier call's output."""
    cases = [
        ("copy", ((64 << 20) + 6,), torch.bfloat16, None),  # the tensor path: flat view + tail maps (offsets)
        ("copy", (3 << 20,), torch.float32, None),  # the bulk engine (pointers)
        ("permute", (4, 64, 48, 128), torch.bfloat16, (0, 2, 1, 3)),  # strided: the lean one-box CTA
        ("permute", (4, 6, 64, 128), torch.bfloat16, (0, 3, 1, 2)),  # transposing
        ("reduce", (1 << 20,), torch.float32, None),  # combine (bulk pointers)
    ]
    for op, shape, dtype, dims in cases:
        pairs, paths = [], set()
        for i in range(6):
            x = rand(shape, dtype)
            y = poisoned(tuple(shape[d] for d in dims) if dims else shape, dtype)
            if op == "copy":
                ops.copy(x, y)
                want = x.clone()
            elif op == "permute":
                ops.permute(x, dims, out=y)
                want = x.permute(dims).contiguous()
            else:
                y = rand(shape, dtype)
                want = y + x
                ops.reduce_into(y, x, "add")
            paths.add(ops.last_path)
            assert torch.equal(y, want), (op, shape, i)
            pairs.append((y, want))
        for y, want in pairs:  # later launches left the earlier outputs alone
            assert torch.equal(y, want), (op, shape)
        x, y = pairs[0][1], poisoned(pairs[0][0].shape, dtype)  # back to an address seen before
        if op == "copy":
            ops.copy(x, y)
            assert torch.equal(y, x)
        assert len(paths) == 1 and not next(iter(paths)).startswith("torch:"), paths


@pytest.mark.parametrize("shape,dims", [((3, 5, 7, 40), (0, 2, 1, 3)), ((2, 33, 17, 264), (1, 0, 2, 3)),
                                        ((5, 7, 9, 11, 24), (3, 0, 2, 1, 4)), ((2, 1, 300, 8), (2, 1, 0, 3))])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32, torch.int64])
def test_strided_lean_one_box_cta_remainders(shape, dims, dtype):
    """Permutes that keep the inner dim (the lean one-box tensor CTA): boxes over the edges of every dim."""
    x = rand(shape, dtype)
    y = poisoned(tuple(shape[d] for d in dims), dtype)
    ops.permute(x, dims, out=y, strict=True)
    assert ops.last_path == "tma:strided" and torch.equal(y, x.permute(dims))


@pytest.mark.parametrize("kq", [1, 2])
@pytest.mark.parametrize("consumers", [2, 4])
def test_transpose_in_place_knob(kq, consumers):
    """``TransposeConfig.inplace`` (off by default) gives the same bytes as the two-image CTA."""
    import dataclasses

    from tmakit.kernels import bandwidth as bw

    cfg = dataclasses.replace(bw.TRANSPOSE_CONFIG[2], kq=kq, consumers=consumers, inplace=1, wide=())
    table = {**bw.TRANSPOSE_CONFIG, 2: cfg}
    for shape, dims in (((1008, 784), (1, 0)), ((4, 6, 304, 128), (0, 3, 1, 2)), ((16, 32, 48, 16), (3, 2, 1, 0))):
        x = rand(shape, torch.bfloat16)
        y = poisoned(tuple(shape[d] for d in dims), torch.bfloat16)
        path = tma_copy(x.permute(dims), y, transpose=table)
        assert path == "tma:transpose" and torch.equal(y, x.permute(dims)), (shape, dims)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_disjoint_views_of_one_buffer_run_on_tma(dtype):
    """Interleaved views (intersecting byte extents, no shared element) pass the exact aliasing test and run on TMA,
    the first call and the cached ones alike."""
    for _ in range(2):
        x = rand((8, 2, 96, 160), dtype)
        want = x.clone()
        want[:, 1] = want[:, 0]
        ops.copy(x[:, 0], x[:, 1], strict=True)
        assert ops.last_path == "tma:strided" and torch.equal(x, want)
        m = rand((512, 2048), dtype)
        want = m.clone()
        want[:, 1024:1536] += want[:, :512]
        ops.reduce_into(m[:, 1024:1536], m[:, :512], "add", method="store-reduce", strict=True)
        assert ops.last_path == "tma:strided" and torch.equal(m, want)
        y = rand((2, 256, 128), dtype)
        want = y.clone()
        want[1] = want[0].t().reshape(256, 128)
        ops.transpose(y[0], 0, 1, out=y[1].view(128, 256), strict=True)
        assert ops.last_path == "tma:transpose" and torch.equal(y, want)


@pytest.mark.parametrize("method", ["store-reduce", "combine"])
def test_overlap_is_refused_and_the_very_same_view_is_safe(method):
    x = rand((1 << 20,), torch.float32)
    keep = x.clone()
    for dst, src in ((x[4096:], x[:-4096]), (x[:-4096], x[4096:])):
        with pytest.raises(ValueError, match="overlap in memory"):
            ops.reduce_into(dst, src, "add", method=method)
        with pytest.raises(ValueError, match="overlap in memory"):
            ops.copy(src, dst)
    assert torch.equal(x, keep)
    ops.reduce_into(x, x, "add", method=method, strict=True)
    assert ops.last_path == ("tma:flat" if method == "store-reduce" else "tma:combine") and torch.equal(x, 2 * keep)
    ops.copy(x, x, strict=True)
    assert ops.last_path == "none:src is dst" and torch.equal(x, 2 * keep)
    m = rand((256, 256), torch.bfloat16)
    with pytest.raises(ValueError, match="overlap in memory"):
        ops.transpose(m, 0, 1, out=m)


def _random_view(rng, base, aligned):
    """A random slice and permutation of ``base``: ``aligned`` keeps every offset on a 16-byte multiple and the inner
    step 1 (views TMA can take), else offsets and steps 1-2 anywhere (mostly the documented fallbacks)."""
    unit = max(1, 16 // base.element_size())
    idx = []
    for n in base.shape:
        lo = int(rng.integers(0, max(1, n // 4)))
        if aligned:
            idx.append(slice(lo - lo % unit, n, 1))
        else:
            idx.append(slice(lo, n, 1 if rng.random() < 0.7 else 2))
    v = base[tuple(idx)]
    return v.permute(*rng.permutation(v.dim()).tolist()) if rng.random() < 0.6 else v


def _bits(t):
    return torch.empty(t.shape, dtype=t.dtype, device=t.device).copy_(t).view(-1).view(torch.uint8)


@pytest.mark.parametrize("seed", range(4))
def test_random_views_match_torch_and_touch_nothing_else(seed):
    """Differential fuzz against torch: random dtypes, ranks 1-5, slices, steps and permutations for copy, permute and
    reduce_into (TMA or the documented fallback); whole buffers compared bit for bit, so a stray write outside the
    destination view fails too."""
    import collections

    import numpy as np

    rng = np.random.default_rng(seed)
    dtypes = [torch.uint8, torch.bfloat16, torch.float16, torch.float32, torch.int32, torch.int64, torch.float64]
    paths = []
    for case in range(60):
        dtype = dtypes[int(rng.integers(len(dtypes)))]
        rank = int(rng.integers(1, 6))
        aligned = case % 2 == 0
        sizes = [1, 16, 32, 64, 96, 130] if aligned else [1, 3, 8, 17, 64, 130]
        shape = [int(rng.choice(sizes)) for _ in range(rank)]
        if int(np.prod(shape)) > (1 << 22):
            shape = shape[:2]
        src_base = rand(shape, dtype)
        src = _random_view(rng, src_base, aligned)
        kind = ["copy", "permute", "reduce"][int(rng.integers(3))]
        if kind == "permute":
            dims = rng.permutation(src.dim()).tolist()
            got = ops.permute(src, dims)
            paths.append(ops.last_path)
            assert torch.equal(_bits(got), _bits(src.permute(dims))), (case, shape, dims, ops.last_path)
            continue
        pad = [16 * int(rng.integers(0, 2)) if aligned else int(rng.integers(0, 3)) for _ in src.shape]
        dst_base = rand([n + p for n, p in zip(src.shape, pad)], dtype)
        dst = dst_base[tuple(slice(0, n) for n in src.shape)]
        want = dst_base.clone()
        wdst = want[tuple(slice(0, n) for n in src.shape)]
        if kind == "copy":
            wdst.copy_(src)
            ops.copy(src, dst)
        else:
            op = "add" if dtype.is_floating_point else ["add", "max", "xor"][int(rng.integers(3))]
            if dtype == torch.uint8 and op == "add":
                op = "max"
            torch_reduce(wdst, src, op)
            ops.reduce_into(dst, src, op)
        paths.append(ops.last_path)
        assert torch.equal(_bits(dst_base), _bits(want)), (case, kind, shape, dtype, ops.last_path)
    assert sum(p.startswith("tma:") for p in paths) >= len(paths) // 3, collections.Counter(paths)


def test_permute_backward_runs_on_tma():
    x = rand((64, 96, 40), torch.bfloat16).requires_grad_()
    y = ops.permute(x, (2, 0, 1))
    assert ops.last_path == "tma:transpose" and y.grad_fn is not None and torch.equal(y, x.detach().permute(2, 0, 1))
    w = rand((40, 64, 96), torch.bfloat16)
    (y * w).sum().backward()
    assert ops.last_path == "tma:transpose" and torch.equal(x.grad, w.permute(1, 2, 0))
    z = ops.transpose(x, 0, 1)
    z.backward(torch.ones_like(z))
    assert torch.equal(x.grad, w.permute(1, 2, 0) + 1)


def test_threads_sharing_a_launcher_launch_their_own_addresses():
    """Four threads, each on its own stream, copy and reduce their own tensors of one layout -- one cached launcher
    and one packed parameter block for all -- 150 times each; every destination holds its own source's result."""
    import threading

    n, iters = 1 << 14, 150
    results, errors = {}, []

    def work(t):
        try:
            s = torch.cuda.Stream()
            with torch.cuda.stream(s):
                srcs = [torch.full((n,), float(t * 1000 + i), device="cuda") for i in range(iters)]
                dsts = [torch.full((n,), -1.0, device="cuda") for _ in range(iters)]
                accs = [torch.full((n,), 0.5, device="cuda") for _ in range(iters)]
                for i in range(iters):
                    ops.copy(srcs[i], dsts[i])
                    ops.reduce_into(accs[i], srcs[i], "add")
                s.synchronize()
            results[t] = [(float(d.min()), float(d.max()), float(a.min()), float(a.max())) for d, a in zip(dsts, accs)]
        except Exception as e:  # reported below: a thread's exception would otherwise vanish
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    for t in range(4):
        for i, (dlo, dhi, alo, ahi) in enumerate(results[t]):
            v = float(t * 1000 + i)
            assert (dlo, dhi, alo, ahi) == (v, v, v + 0.5, v + 0.5), (t, i, results[t][i])


def test_a_thread_that_never_touched_cuda_launches_cached_kernels():
    """A new thread whose first CUDA work is a cached launch (tensors made, launchers planned and run in this
    thread): the launch makes the device's context current itself (the driver refuses a launch without one:
    CUDA_ERROR_INVALID_CONTEXT). Also a permute's backward, which autograd runs on its device thread."""
    import threading

    src, dst = rand((1 << 14,), torch.float32), torch.empty(1 << 14, device="cuda")
    x = rand((8, 16, 24, 32), torch.bfloat16)
    ops.copy(src, dst)
    ops.copy(src, dst)
    ops.permute(x, (0, 2, 1, 3))
    dst.fill_(-1.0)
    torch.cuda.synchronize()
    errors = []

    def work():
        try:
            ops.copy(src, dst)
        except Exception as e:  # reported below: a thread's exception would otherwise vanish
            errors.append(e)

    th = threading.Thread(target=work)
    th.start()
    th.join()
    assert not errors, errors
    torch.cuda.synchronize()
    assert torch.equal(dst, src)
    xg = x.clone().requires_grad_(True)
    y = ops.permute(xg, (0, 2, 1, 3))
    g = rand(tuple(y.shape), torch.bfloat16)
    y.backward(g)
    assert torch.equal(xg.grad, g.permute(0, 2, 1, 3).contiguous())


@pytest.mark.parametrize("mode", [None, "reduce-overhead"])
def test_torch_compile_keeps_the_tma_ops_in_the_graph(mode):
    """torch.compile (inductor; with CUDA graphs for "reduce-overhead"), fullgraph: the custom ops run the TMA
    kernels at run time and give the eager results; gemm's backward runs through the compiled graph too."""
    import torch._dynamo

    from tmakit.ops import gemm

    torch._dynamo.reset()
    x = rand((64, 96, 40), torch.bfloat16)
    acc = rand((40, 96), torch.float32)
    a = rand((256, 136), torch.bfloat16).requires_grad_()
    b = rand((136, 512), torch.bfloat16).requires_grad_()

    def f(x, acc, a, b):
        y = ops.permute(x, (2, 1, 0))
        ops.reduce_into(acc, y.float().sum(2), "add")
        return y, acc, gemm(a, b)

    g = torch.compile(f, fullgraph=True, mode=mode)
    paths = []
    for _ in range(3):  # "reduce-overhead" records a CUDA graph on a later call and replays it
        acc1, acc2 = acc.clone(), acc.clone()
        ops.last_path = ""
        y, got_acc, c = g(x, acc1, a, b)
        paths.append(ops.last_path)  # set by an eager op inside a custom op (inductor may order them its own way)
        assert torch.equal(y, x.permute(2, 1, 0))
        assert torch.allclose(got_acc, acc2 + x.permute(2, 1, 0).float().sum(2), rtol=1e-5, atol=1e-4)
        ref = a.detach().float() @ b.detach().float()
        assert float((c.float() - ref).norm() / ref.norm()) < 1e-2
    c.float().sum().backward()
    gref = torch.ones(256, 512, device="cuda") @ b.detach().float().t()
    assert float((a.grad.float() - gref).norm() / gref.norm()) < 1e-2
    assert paths[0].startswith("tma:"), paths  # the last tk op the compiled forward ran went through TMA


@pytest.mark.parametrize("dtype", [torch.uint8, torch.bfloat16, torch.float32, torch.int64])
@pytest.mark.parametrize("shape", [(91, 58), (1, 7), (130, 3), (1798, 634), (67, 2049), (36, 67), (64, 1023)])
def test_transposes_tma_cannot_describe_run_the_plain_kernel(shape, dtype):
    """Rows that are not 16-byte multiples (and bases off 16 bytes): plain_transpose.cu, equal to torch, nothing
    written outside the destination."""
    x = rand(shape, dtype)
    got = ops.transpose(x)
    assert torch.equal(got, x.t()) and got.is_contiguous()
    one = 1 in shape  # a vector: a flat copy (or, off 16 bytes, torch's)
    assert ops.last_path in ("plain:transpose", "tma:transpose") or one
    base = rand((shape[0], shape[1] + 1), dtype)
    v = base[:, 1:]  # base address off by one element, odd row stride
    out = poisoned((shape[1] + 3, shape[0]), dtype)
    want = out.clone()
    want[:shape[1]] = v.t()
    ops.transpose(v, out=out[:shape[1]])
    assert torch.equal(out, want) and (ops.last_path == "plain:transpose" or one)


def test_batched_odd_permute_runs_the_plain_kernel():
    x = rand((6, 33, 17), torch.float16)
    for _ in range(3):  # checked, keyed, per-object
        got = ops.permute(x, (0, 2, 1))
    assert torch.equal(got, x.permute(0, 2, 1)) and ops.last_path == "plain:transpose"


@pytest.mark.parametrize("dtype", [torch.uint8, torch.bfloat16])
def test_plain_transpose_packed_rows_with_a_partial_last_word(dtype):
    """Destination rows 4-byte aligned (row stride 68) but 67 elements long: words, then the last 3 or 1 element
    one by one; nothing written past the row."""
    x = rand((67, 45), dtype)  # rows of 45 elements: TMA cannot describe them
    buf = poisoned((45, 68), dtype)
    want = buf.clone()
    want[:, :67] = x.t()
    ops.transpose(x, out=buf[:, :67])
    assert ops.last_path == "plain:transpose" and torch.equal(buf, want)
