"""The runtime on a Hopper GPU (marked ``gpu``; skipped without one): encoding, launches, clusters, the seed
kernels against numpy references, errors that name the driver call."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from tmakit.tma import DataType, SwizzleMode, TensorMap

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def tkc():
    from tmakit import cuda

    cuda.ensure_context()
    return cuda


def _swz(addr: np.ndarray, mode: int) -> np.ndarray:
    m = {0: 0, 1: 1, 2: 3, 3: 7}[mode]
    return addr ^ (((addr >> 7) & m) << 4)


def _map2d(buf, rows, cols, box, swizzle=SwizzleMode.NONE, dtype=DataType.FLOAT32, es=None):
    return TensorMap(dtype=dtype, global_dim=(cols, rows), global_strides=(cols * 4,), box_dim=box,
                     element_strides=es, swizzle=swizzle, global_address=buf.ptr)


def _assert_store_like_the_emulator(buf, host, tm, coords, op, image, mode):
    """Store (``op`` None) or reduce ``image`` through ``tm`` at ``coords`` on the GPU (``buf`` holds ``host``) and
    with the emulator: the whole global buffer must agree byte for byte, and must have changed."""
    from tmakit.emu import tma_unit
    from tmakit.kernels import seeds

    want = host.copy()
    if op is None:
        tma_unit.store(tm, coords, want, image.copy(), 0)
    else:
        tma_unit.reduce(tm, coords, want, image.copy(), 0, op)
    assert seeds.store_boxes(tm, [seeds.store_job(coords, op=op, mode=mode)], image[None])[0] == 1
    got = np.frombuffer(buf.download(), np.uint8)
    assert np.array_equal(got, want) and not np.array_equal(got, host)


def _ref_load(g: np.ndarray, c0: int, c1: int, box, swizzle: int, dst_offset: int, image: np.ndarray):
    """Reference of a 2-D fp32 tile load (OOB -> 0) into ``image`` (uint8) at ``dst_offset``."""
    b0, b1 = box
    tile = np.zeros((b1, b0), np.float32)
    rows, cols = g.shape
    for r in range(b1):
        for c in range(b0):
            y, x = c1 + r, c0 + c
            if 0 <= y < rows and 0 <= x < cols:
                tile[r, c] = g[y, x]
    raw = tile.view(np.uint8).reshape(b1, b0 * 4)
    pitch = b0 * 4 if swizzle == 0 else {1: 32, 2: 64, 3: 128}[swizzle]
    out = image.copy()
    for r in range(b1):
        addr = dst_offset + r * pitch + np.arange(b0 * 4)
        out[_swz(addr, swizzle)] = raw[r]
    return out


@pytest.mark.parametrize("swizzle", [0, 1, 2, 3])
def test_seed_load_tile_matches_reference(tkc, swizzle):
    from tmakit.kernels import seeds

    rows, cols = 40, 72
    g = np.random.default_rng(swizzle).standard_normal((rows, cols)).astype(np.float32)
    buf = tkc.DeviceBuffer.from_bytes(g.tobytes())
    b0 = {0: 16, 1: 8, 2: 16, 3: 32}[swizzle]
    tm = _map2d(buf, rows, cols, (b0, 8), SwizzleMode(swizzle))
    # innermost starts on 16-byte boundaries (else the TMA traps); negative and past-the-end boxes are fine
    coords = [(0, 0), (b0, 8), (cols - 4, rows - 2), (-8, -5), (cols + 4, 3), (8, rows + 2)]
    jobs = [seeds.load_job(c, dst_offset=128 * (i % 3), prefetch=i % 2 == 0, prefetch_desc=True)
            for i, c in enumerate(coords)]
    image_bytes = 128 * 2 + seeds.box_footprint(tm)
    init = np.random.default_rng(7).integers(0, 256, image_bytes, dtype=np.uint8)
    images, status = seeds.load_boxes(tm, jobs, image_bytes, init=init.tobytes())
    assert (status == 1).all()
    for i, (c0, c1) in enumerate(coords):
        ref = _ref_load(g, c0, c1, (b0, 8), swizzle, 128 * (i % 3), init)
        assert np.array_equal(images[i], ref), f"CTA {i} coords {(c0, c1)}"


@pytest.mark.parametrize("cluster", [2, 4, 8, 16])
def test_seed_multicast_fills_every_cta(tkc, cluster):
    from tmakit.kernels import seeds

    rows, cols = 32, 32
    g = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    buf = tkc.DeviceBuffer.from_bytes(g.tobytes())
    tm = _map2d(buf, rows, cols, (32, 2))
    nbytes = seeds.box_bytes(tm)  # 256 B slice per issuing CTA, each to its own offset, multicast to all
    full = (1 << cluster) - 1
    jobs = [seeds.load_job((0, 2 * r), mask=full, dst_offset=r * nbytes, expect=cluster * nbytes)
            for r in range(cluster)] * 2  # two clusters
    images, status = seeds.load_boxes(tm, jobs, cluster * nbytes, cluster=(cluster, 1, 1))
    assert (status == 1).all()
    want = g[: 2 * cluster].tobytes()
    for img in images:
        assert img.tobytes() == want


def test_seed_store_and_reduce(tkc):
    from tmakit.kernels import seeds

    rows, cols = 16, 32
    g = np.zeros((rows, cols), np.int32)
    buf = tkc.DeviceBuffer.from_bytes(g.tobytes())
    tm = TensorMap(dtype=DataType.INT32, global_dim=(cols, rows), global_strides=(cols * 4,), box_dim=(8, 4),
                   global_address=buf.ptr)
    tile = np.arange(32, dtype=np.int32).reshape(4, 8)
    img = tile.view(np.uint8).reshape(1, -1)
    st = seeds.store_boxes(tm, [seeds.store_job((4, 2))], img)
    assert (st == 1).all()
    out = np.frombuffer(buf.download(), np.int32).reshape(rows, cols)
    assert np.array_equal(out[2:6, 4:12], tile) and out.sum() == tile.sum()
    seeds.store_boxes(tm, [seeds.store_job((4, 2), op="add")], img)
    seeds.store_boxes(tm, [seeds.store_job((28, 14), op="add")], img)  # clipped at the edge: OOB not written
    out = np.frombuffer(buf.download(), np.int32).reshape(rows, cols)
    assert np.array_equal(out[2:6, 4:12], 2 * tile)
    assert np.array_equal(out[14:16, 28:32], tile[:2, :4])
    seeds.store_boxes(tm, [seeds.store_job((4, 2), op="xor")], img)
    out = np.frombuffer(buf.download(), np.int32).reshape(rows, cols)
    assert np.array_equal(out[2:6, 4:12], (2 * tile) ^ tile)


def test_host_checks_refuse_what_traps(tkc):
    from tmakit.kernels import seeds

    buf = tkc.DeviceBuffer(64 * 64 * 4)
    tm = _map2d(buf, 64, 64, (16, 8))
    with pytest.raises(ValueError, match="16 bytes"):
        seeds.load_boxes(tm, [seeds.load_job((-1, 0))], tm.smem_bytes)
    with pytest.raises(ValueError, match="16 bytes"):
        seeds.load_boxes(tm, [seeds.load_job((6, 0), prefetch=True)], tm.smem_bytes)
    with pytest.raises(ValueError, match="negative"):
        seeds.store_boxes(tm, [seeds.store_job((0, -1))], np.zeros((1, tm.smem_bytes), np.uint8))
    tmi = _nwc_map(buf, (0,), (0,))
    with pytest.raises(ValueError, match="pixel bounding box"):  # W start 16 past the box [0, 15]
        seeds.load_boxes(tmi, [seeds.load_job((0, 16, 0), mode="im2col", offsets=(0,))], tmi.smem_bytes)
    from tmakit.tma import TmaDescriptorError

    with pytest.raises(TmaDescriptorError):  # .min is not defined for FLOAT32 (traps on the GPU)
        seeds.store_boxes(tm, [seeds.store_job((0, 0), op="min")], np.zeros((1, tm.smem_bytes), np.uint8))


def _nwc_map(buf, lower, upper, es=None, dims=(32, 16, 2), dtype=DataType.FLOAT32, swizzle=SwizzleMode.NONE,
             pixels=16):
    """An im2col map over a dense C x W x N (or C x W x H x N) tensor, one whole pixel row of channels a pixel."""
    e = 2 if dtype == DataType.BFLOAT16 else 4
    strides, s = [], dims[0] * e
    for d in dims[1:]:
        strides.append(s)
        s *= d
    return TensorMap(dtype, dims, strides, (), mode="im2col", element_strides=es, swizzle=swizzle,
                     pixel_box_lower_corner=lower, pixel_box_upper_corner=upper, channels_per_pixel=dims[0],
                     pixels_per_column=pixels, global_address=buf.ptr)


@pytest.mark.parametrize("case", [
    dict(lower=(0,), upper=(0,), coords=(0, 3, 1), offs=(2,)),
    dict(lower=(-1,), upper=(1,), coords=(0, -1, 0), offs=(0,)),
    dict(lower=(0,), upper=(0,), coords=(0, 1, 0), offs=(0,), es=(1, 2, 1)),  # off the stride grid
    dict(lower=(0,), upper=(0,), coords=(0, 2, 0), offs=(1,), es=(1, 3, 1), pixels=8),
    dict(lower=(-1, -1), upper=(-1, -1), coords=(0, 0, 0, 0), offs=(1, 1), dims=(32, 8, 8, 2)),
    dict(lower=(0, -2), upper=(-4, -3), coords=(0, 1, 0, 0), offs=(3, 2), dims=(32, 6, 4, 2), pixels=33),
    dict(lower=(0,), upper=(0,), coords=(0, 0, 0), offs=(0,), swizzle=SwizzleMode.B128),
    dict(lower=(0,), upper=(0,), coords=(0, 5, 3), offs=(0,), dims=(64, 16, 2), dtype=DataType.BFLOAT16),
], ids=lambda c: f"{len(c.get('dims', (0,) * 3))}d-{c['coords']}-es{c.get('es')}-sw{c.get('swizzle', 0)}")
def test_seed_im2col_loads_match_the_emulator(tkc, case):
    """im2col loads on the GPU equal the emulator's images byte for byte (OOB, corners, offsets, traversal strides
    off the grid, swizzle, wrap into the next image)."""
    from tmakit.emu import tma_unit
    from tmakit.kernels import seeds

    case = dict(case)
    coords, offs = case.pop("coords"), case.pop("offs")
    rng = np.random.default_rng(3)
    nbytes = 4 * int(np.prod(case.get("dims", (32, 16, 2))))
    host = rng.integers(0, 256, nbytes, dtype=np.uint8)
    buf = tkc.DeviceBuffer(nbytes)
    buf.upload(host.tobytes())
    tm = _nwc_map(buf, **case)
    image = tm.smem_bytes + 256
    init = rng.integers(0, 256, image, dtype=np.uint8)
    want = init.copy()
    tma_unit.load(tm, coords, host, want, 128, offs)
    job = seeds.load_job(coords, dst_offset=128, offsets=offs, mode="im2col", expect=tma_unit.tx_bytes(tm))
    got, status = seeds.load_boxes(tm, [job], image, init=init.tobytes(), debug=True, timeout_ns=200_000_000)
    assert status[0] == 1
    assert np.array_equal(got[0], want)


@pytest.mark.parametrize("case", [
    dict(lower=(0,), upper=(0,), coords=(0, 3, 1), op=None),
    dict(lower=(2,), upper=(-4,), coords=(0, 5, 0), op=None, es=(1, 2, 1)),
    dict(lower=(0,), upper=(0,), coords=(0, 0, 0), op=None, dims=(32, 16, 4), es=(1, 1, 2), pixels=48),
    dict(lower=(1, 0), upper=(-1, -2), coords=(0, 1, 0, 0), op=None, dims=(32, 8, 8, 2), swizzle=SwizzleMode.B128),
    dict(lower=(0,), upper=(0,), coords=(0, 2, 0), op="add"),
    dict(lower=(0,), upper=(0,), coords=(0, 5, 1), op="add", dims=(64, 16, 2), dtype=DataType.BFLOAT16),
], ids=lambda c: f"{c['op'] or 'store'}-{len(c.get('dims', (0,) * 3))}d-{c['coords']}-es{c.get('es')}")
def test_seed_im2col_stores_match_the_emulator(tkc, case):
    """.im2col_no_offs stores and reductions on the GPU equal the emulator's global buffer byte for byte (the load's
    walk with zero offsets, OOB pixels skipped, wrap into the next image, swizzle)."""
    case = dict(case)
    coords, op = case.pop("coords"), case.pop("op")
    rng = np.random.default_rng(5)
    n = int(np.prod(case.get("dims", (32, 16, 2))))
    host = (rng.standard_normal(n) * 4).astype(np.float32).view(np.uint8)
    if case.get("dtype") == DataType.BFLOAT16:
        host = host[: 2 * n]
    buf = tkc.DeviceBuffer.from_bytes(host.tobytes())
    tm = _nwc_map(buf, **case)
    image = (rng.standard_normal(tm.smem_bytes // 4) * 4).astype(np.float32).view(np.uint8)
    _assert_store_like_the_emulator(buf, host, tm, coords, op, image, "im2col")


def test_seed_host_check_refuses_an_im2col_store_with_padding_corners(tkc):
    from tmakit.kernels import seeds

    buf = tkc.DeviceBuffer(4 * 32 * 16 * 2)
    tm = _nwc_map(buf, (-1,), (0,))
    with pytest.raises(ValueError, match="reach outside the tensor"):
        seeds.store_boxes(tm, [seeds.store_job((0, 0, 0), mode="im2col")], np.zeros((1, tm.smem_bytes), np.uint8))


_INTERLEAVED_CASES = [
    dict(dtype=DataType.UINT16, il=1, swz=SwizzleMode.NONE, dims=(3, 16, 8), strides=(64, 1024), box=(8, 4, 2),
         es=(1, 1, 1), coords=(0, 2, 5)),
    dict(dtype=DataType.FLOAT32, il=2, swz=SwizzleMode.B32, dims=(4, 6, 5, 3), strides=(128, 768, 3840),
         box=(8, 5, 3, 2), es=(1, 2, 1, 2), coords=(1, 1, 2, 0)),
    dict(dtype=DataType.UINT32, il=1, swz=SwizzleMode.B64, dims=(7, 6, 6, 5), strides=(32, 208, 1280),
         box=(8, 6, 3, 5), es=(1, 1, 1, 1), coords=(2, 0, 3, 1)),  # rows overlap: reductions combine in turn
    dict(dtype=DataType.UINT32, il=1, swz=SwizzleMode.NONE, dims=(9, 4, 6), strides=(160, 640), box=(8, 3, 4),
         es=(3, 1, 2), coords=(1, 0, 1)),  # elementStrides[0] steps over chunks
]


def _hw_has(op, dtype) -> bool:
    """Loads and stores always; a reduction only where the hardware has it (``check_reduce``)."""
    from tmakit.tma import TmaDescriptorError, check_reduce

    if op in (None, "load"):
        return True
    try:
        check_reduce(op, dtype)
    except TmaDescriptorError:
        return False
    return True


@pytest.mark.parametrize("case,op", [(c, op) for c in _INTERLEAVED_CASES for op in (None, "load", "add", "xor")
                                     if _hw_has(op, c["dtype"])],
                         ids=lambda v: f"{v['dtype'].name}-i{16 * v['il']}-es{v['es']}" if isinstance(v, dict) else
                         str(v))
def test_interleaved_maps_match_the_emulator(tkc, case, op):
    """INTERLEAVE_16B/32B loads, stores and reductions on the GPU equal the emulator byte for byte (dim 0 in chunks,
    dim rank-2 one position, element strides on dims 1.., overlapping rows)."""
    from tmakit.emu import tma_unit
    from tmakit.kernels import seeds

    rng = np.random.default_rng(9)
    nbytes = case["strides"][-1] * case["dims"][-1] + 256
    host = rng.integers(0, 256, nbytes, dtype=np.uint8)
    if case["dtype"] == DataType.FLOAT32:
        host = (rng.standard_normal(nbytes // 4) * 4).astype(np.float32).view(np.uint8)
    buf = tkc.DeviceBuffer.from_bytes(host.tobytes())
    tm = TensorMap(case["dtype"], case["dims"], case["strides"], case["box"], element_strides=case["es"],
                   interleave=case["il"], swizzle=case["swz"], global_address=buf.ptr)
    if op == "load":
        want = np.full(tm.smem_bytes, 0xA5, np.uint8)
        tma_unit.load(tm, case["coords"], host, want, 0)
        got, status = seeds.load_boxes(tm, [seeds.load_job(case["coords"])], tm.smem_bytes, debug=True,
                                       timeout_ns=200_000_000)
        assert status[0] == 1 and np.array_equal(got[0], want)
        return
    image = rng.integers(0, 256, tm.smem_bytes, dtype=np.uint8)
    if case["dtype"] == DataType.FLOAT32:
        image = (rng.standard_normal(tm.smem_bytes // 4) * 4).astype(np.float32).view(np.uint8)
    _assert_store_like_the_emulator(buf, host, tm, case["coords"], op, image, "tile")


_INTERLEAVED_IM2COL_CASES = [  # (dtype, interleave, swizzle, dims, strides, cpp, ppc, lower, upper, coords, offsets)
    (DataType.UINT16, 1, SwizzleMode.NONE, (2, 6, 5, 2), (32, 192, 960), 8, 16, [-1, -1], [-1, -1], (0, 0, 0, 0),
     (1, 1)),
    (DataType.FLOAT32, 2, SwizzleMode.B32, (3, 5, 4, 2, 2), (96, 480, 1920, 3840), 8, 24, [0, 0, 0], [0, -1, 0],
     (1, 2, 1, 1, 0), (0, 0, 0)),
    (DataType.UINT32, 1, SwizzleMode.B64, (4, 9, 3), (64, 576), 4, 20, [0], [0], (1, 2, 1), (0,)),
]


def _storable(case) -> bool:
    """``.im2col_no_offs`` stores need a pixel box inside the tensor (and take no offsets)."""
    *_, lo, up, _, offs = case
    return all(x >= 0 for x in lo) and all(x <= 0 for x in up) and not any(offs)


@pytest.mark.parametrize("case,op", [(c, "load") for c in _INTERLEAVED_IM2COL_CASES] +
                         [(c, op) for c in _INTERLEAVED_IM2COL_CASES if _storable(c) for op in (None, "add")],
                         ids=lambda v: f"{v[0].name}-r{len(v[3])}" if isinstance(v, tuple) else str(v))
def test_interleaved_im2col_maps_match_the_emulator(tkc, case, op):
    """Interleaved im2col loads (one chunk per pixel, the chunk dim walked as the first spatial dim, corners and
    offsets), stores and reductions (``.im2col_no_offs``) on the GPU equal the emulator byte for byte."""
    from tmakit.emu import tma_unit
    from tmakit.kernels import seeds

    dtype, il, swz, dims, strides, cpp, ppc, lo, up, coords, offs = case
    rng = np.random.default_rng(11)
    nbytes = strides[-1] * dims[-1] + 256
    host = (rng.standard_normal(nbytes // 4) * 4).astype(np.float32).view(np.uint8)
    buf = tkc.DeviceBuffer.from_bytes(host.tobytes())
    tm = TensorMap(dtype, dims, strides, [cpp] + [1] * (len(dims) - 1), interleave=il, swizzle=swz, mode="im2col",
                   pixel_box_lower_corner=lo, pixel_box_upper_corner=up, channels_per_pixel=cpp,
                   pixels_per_column=ppc, global_address=buf.ptr)
    if op == "load":
        want = np.full(tm.smem_bytes, 0xA5, np.uint8)
        assert tma_unit.load(tm, coords, host, want, 0, offs) == tm.tx_bytes
        job = seeds.load_job(coords, mode="im2col", offsets=offs, expect=tm.tx_bytes)
        got, status = seeds.load_boxes(tm, [job], tm.smem_bytes, debug=True, timeout_ns=200_000_000)
        assert status[0] == 1 and np.array_equal(got[0], want)
        return
    image = (rng.standard_normal(tm.smem_bytes // 4) * 4).astype(np.float32).view(np.uint8)
    _assert_store_like_the_emulator(buf, host, tm, coords, op, image, "im2col")


def test_seed_host_check_refuses_an_interleaved_im2col_chunk_start_outside_the_pixel_box(tkc):
    """On the H200 (probe i2c_start_c_out) the chunk start below lowerCorner[0] traps; the host refuses it."""
    from tmakit.kernels import seeds

    buf = tkc.DeviceBuffer(4096)
    tm = TensorMap(DataType.UINT16, (2, 6, 5, 2), (32, 192, 960), [8, 1, 1, 1], interleave=1, mode="im2col",
                   pixel_box_lower_corner=[1, 0], pixel_box_upper_corner=[0, 0], channels_per_pixel=8,
                   pixels_per_column=16, global_address=buf.ptr)
    with pytest.raises(ValueError, match="dim 0: 0 not in"):
        seeds.load_boxes(tm, [seeds.load_job((0, 1, 0, 0), mode="im2col", offsets=(0, 0))], tm.smem_bytes)


def test_seed_copy_tiles(tkc):
    from tmakit.kernels import seeds

    rows, cols = 64, 96
    g = np.random.default_rng(1).standard_normal((rows, cols)).astype(np.float32)
    src = tkc.DeviceBuffer.from_bytes(g.tobytes())
    dst = tkc.DeviceBuffer(g.nbytes)
    dst.fill(0)
    seeds.copy_tiles(_map2d(src, rows, cols, (32, 16)), _map2d(dst, rows, cols, (32, 16)), prefetch=True)
    tkc.synchronize()
    assert np.frombuffer(dst.download(), np.float32).reshape(rows, cols).tobytes() == g.tobytes()


def test_encode_validates_first(tkc):
    from tmakit.tma import TmaDescriptorError

    bad = TensorMap(dtype=DataType.FLOAT32, global_dim=(100, 10), global_strides=(100,), box_dim=(8, 8),
                    global_address=256)
    with pytest.raises(TmaDescriptorError):
        tkc.encode_tensormap(bad)
    with pytest.raises(tkc.CudaError) as ei:
        tkc.encode_tensormap(bad, raw=True)
    msg = str(ei.value)
    assert "cuTensorMapEncodeTiled(" in msg and "global_strides=(100,)" in msg and "CUDA_ERROR_INVALID_VALUE" in msg
    good = bad.replace(global_strides=(400,))
    assert len(tkc.tensormap_bytes(tkc.encode_tensormap(good))) == 128


def test_launch_errors_name_the_call(tkc):
    k = tkc.kernel('extern "C" __global__ void nop(int* p) { if (p) p[0] = 1; }', "nop")
    with pytest.raises(ValueError, match="divisible"):
        k(3, 32, None, cluster=2)
    with pytest.raises(ValueError, match="non_portable"):
        k(16, 32, None, cluster=16)
    k(16, 32, None, cluster=16, non_portable=True)
    with pytest.raises(tkc.CudaError, match="cuLaunchKernelEx"):
        k(1, 4096, None)  # too many threads per block
    tkc.synchronize()


def test_dynamic_smem_above_48k(tkc):
    src = r"""
extern "C" __global__ void big(unsigned* out, unsigned n) {
  extern __shared__ unsigned s[];
  for (unsigned i = threadIdx.x; i < n; i += blockDim.x) s[i] = i;
  __syncthreads();
  if (threadIdx.x == 0) out[0] = s[n - 1];
}"""
    k = tkc.kernel(src, "big")
    out = tkc.DeviceBuffer(4)
    n = 200 * 1024 // 4
    k(1, 256, out, ctypes.c_uint32(n), smem=200 * 1024)
    tkc.synchronize()
    assert np.frombuffer(out.download(), np.uint32)[0] == n - 1


def test_debug_mode_reports_instead_of_hanging(tkc):
    src = r"""
#include <tmakit/mbarrier.cuh>
extern "C" __global__ void hang(unsigned* ok) {
  __shared__ __align__(8) unsigned long long bar;
  unsigned b = tmakit::smem_u32(&bar);
  if (threadIdx.x == 0) tmakit::mbarrier_init(b, 2);  // never completes: one arrival short
  __syncthreads();
  if (threadIdx.x == 0) tmakit::mbarrier_arrive(b);
  ok[threadIdx.x] = tmakit::mbarrier_wait(b, 0) ? 1u : 2u;
}"""
    k = tkc.kernel(src, "hang", debug=True, options=["-DTMAKIT_DEBUG_TIMEOUT_NS=20000000ull"])
    out = tkc.DeviceBuffer(4 * 32)
    k(1, 32, out)
    tkc.synchronize()
    assert (np.frombuffer(out.download(), np.uint32) == 2).all()


def test_torch_interop_and_stream(tkc):
    try:
        import torch
    except Exception as e:  # not installed, or broken in this environment
        pytest.skip(f"torch unavailable: {e}")
    x = torch.zeros(256, device="cuda", dtype=torch.float32)
    k = tkc.kernel('extern "C" __global__ void fill(float* p, float v) { p[threadIdx.x] = v; }', "fill")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        k(1, 256, x, ctypes.c_float(3.5))  # torch's current stream by default
    s.synchronize()
    assert float(x.sum()) == 3.5 * 256
    k(1, 128, x[128:], np.float32(1.0), stream=torch.cuda.current_stream())
    torch.cuda.synchronize()
    assert float(x.sum()) == 3.5 * 128 + 128


def _special_pairs(dtype):
    """(old, src) raw-bit pairs of the float corner cases: NaNs (payloads, signs), infinities, signed zeros,
    subnormals, overflow and exact round-to-even ties, each against each."""
    if dtype == DataType.FLOAT32:
        vals = [0x7FC00000, 0xFFC00001, 0x7F800001, 0x7F800000, 0xFF800000, 0x00000000, 0x80000000, 0x00000001,
                0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0x3F800000, 0x33800000, 0xBF800001, 0x4B800001]
        t = np.uint32
    else:  # f16 / bf16 bit patterns: NaNs, inf, zeros, subnormals, max finite, 1, a half-ulp of 1, -1 - ulp
        vals = ([0x7E00, 0xFE01, 0x7C01, 0x7C00, 0xFC00, 0x0000, 0x8000, 0x0001, 0x83FF, 0x0400, 0x7BFF, 0x3C00,
                 0x1000, 0xBC01, 0x6401] if dtype == DataType.FLOAT16 else
                [0x7FC0, 0xFFC1, 0x7F81, 0x7F80, 0xFF80, 0x0000, 0x8000, 0x0001, 0x807F, 0x0080, 0x7F7F, 0x3F80,
                 0x3380, 0xBF81, 0x4B01])
        t = np.uint16
    a, b = np.meshgrid(np.array(vals, t), np.array(vals, t))
    return a.ravel(), b.ravel()


@pytest.mark.parametrize("dtype, op", [(DataType.FLOAT32, "add"), (DataType.FLOAT16, "add"),
                                       (DataType.BFLOAT16, "add"), (DataType.FLOAT16, "min"),
                                       (DataType.FLOAT16, "max"), (DataType.BFLOAT16, "min"),
                                       (DataType.BFLOAT16, "max")], ids=lambda v: getattr(v, "name", v))
def test_float_store_reduce_corner_cases_match_the_emulator(tkc, dtype, op):
    """NaN results, signed zeros, subnormals, overflow and ties of the float TMA reductions: the hardware's bits equal
    the emulator's (its NaN / min-max / subnormal choices, docs/EMULATOR.md)."""
    from tmakit.emu import tma_unit
    from tmakit.kernels import seeds

    old, src = _special_pairs(dtype)
    eb = old.itemsize
    cols = 64 // eb * 4  # 256-byte rows
    rows = -(-old.size // cols)
    g = np.zeros(rows * cols, old.dtype)
    g[: old.size] = old
    s = np.zeros_like(g)
    s[: src.size] = src
    buf = tkc.DeviceBuffer.from_bytes(g.tobytes())
    tm = TensorMap(dtype=dtype, global_dim=(cols, rows), global_strides=(cols * eb,), box_dim=(cols, rows),
                   global_address=buf.ptr)
    img = s.view(np.uint8).reshape(1, -1)
    assert (seeds.store_boxes(tm, [seeds.store_job((0, 0), op=op)], img) == 1).all()
    hw = np.frombuffer(buf.download(), old.dtype)
    want = g.view(np.uint8).copy()
    smem = np.zeros(img.size, np.uint8)
    smem[:] = img[0]
    tma_unit.reduce(tm, (0, 0), want, smem, 0, op)
    want = want.view(old.dtype)
    bad = np.nonzero(hw != want)[0]
    assert bad.size == 0, [(hex(g[i]), hex(s[i]), "hw", hex(hw[i]), "emu", hex(want[i])) for i in bad[:8]]


@pytest.mark.parametrize("dtype", [DataType.FLOAT16, DataType.BFLOAT16, DataType.FLOAT64, DataType.FLOAT32],
                         ids=lambda d: d.name)
def test_nan_oob_fill_matches_the_emulator(tkc, dtype):
    """OOB elements of a NaN-filled load carry the emulator's NaN bits (f16/bf16 0x7FF7 halves, f64 0x7FF77FF7...)."""
    from tmakit.emu import tma_unit
    from tmakit.kernels import seeds
    from tmakit.tma import OobFill

    eb = {DataType.FLOAT64: 8, DataType.FLOAT32: 4}.get(dtype, 2)
    cols, rows = 64 // eb, 6
    host = np.random.default_rng(4).integers(0, 256, cols * rows * eb, dtype=np.uint8)
    buf = tkc.DeviceBuffer.from_bytes(host.tobytes())
    tm = TensorMap(dtype=dtype, global_dim=(cols, rows), global_strides=(cols * eb,), box_dim=(cols, 4),
                   oob_fill=OobFill.NAN_REQUEST_ZERO_FMA, global_address=buf.ptr)
    want = np.zeros(tm.smem_bytes, np.uint8)
    tma_unit.load(tm, (0, 4), host, want, 0)  # rows 4, 5 in bounds, rows 6, 7 filled
    got, status = seeds.load_boxes(tm, [seeds.load_job((0, 4))], tm.smem_bytes)
    assert status[0] == 1 and np.array_equal(got[0], want)
    assert not np.array_equal(want[: 2 * cols * eb], want[2 * cols * eb:])  # the fill differs from the data


RANKS = r"""
#include <tmakit/all.cuh>
using namespace tmakit;
extern "C" __global__ void ranks(u32* out) {
  if (threadIdx.x != 0) return;
  const u32 b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  out[4 * b] = cluster_ctarank();
  out[4 * b + 1] = cluster_ctaid_x();
  out[4 * b + 2] = cluster_ctaid_y();
  out[4 * b + 3] = cluster_ctaid_z();
}
"""


@pytest.mark.parametrize("cluster", [(2, 2, 1), (2, 1, 2), (1, 2, 2), (2, 2, 2), (4, 2, 1)], ids=str)
def test_cluster_rank_order_matches_the_emulator(tkc, cluster):
    """%cluster_ctarank of 2-D / 3-D clusters on the GPU equals the emulator's x + y*cx + z*cx*cy."""
    from tmakit.emu import device_info, launch

    grid = (4, 4, 2)
    n = grid[0] * grid[1] * grid[2]
    k = tkc.kernel(RANKS, "ranks")
    buf = tkc.DeviceBuffer(16 * n)
    buf.fill(0xFF)
    k(grid, 32, buf, cluster=cluster)
    tkc.synchronize()
    hw = np.frombuffer(buf.download(), np.uint32).reshape(n, 4)

    want = np.zeros((n, 4), np.uint32)

    def ranks(out):
        b, g = device_info.block_idx(), device_info.grid_dim()
        local = device_info.block_id_in_cluster()
        out[b.x + g.x * (b.y + g.y * b.z)] = (device_info.block_rank_in_cluster(), local.x, local.y, local.z)

    launch(ranks, grid, cluster, want)
    assert np.array_equal(hw, want)
    assert sorted(hw[:, 0].tolist()) == sorted(list(range(int(np.prod(cluster)))) * (n // int(np.prod(cluster))))


EXITS = r"""
#include <tmakit/all.cuh>
using namespace tmakit;
// PTX: barrier.cluster.arrive; barrier.cluster.wait  (non-.aligned: some CTAs leave early)
__device__ __forceinline__ void cluster_barrier() {
  asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
}
extern "C" __global__ void exits(int mode, u32* passed) {
  const u32 rank = cluster_ctarank();
  if (mode == 0 && rank == 0) return;          // exits before anyone arrives
  cluster_barrier();
  if (mode == 1 && rank == 1) return;          // takes part once, then exits
  if (mode == 2 && rank % 2) return;           // every odd rank takes part once
  cluster_barrier();
  if (threadIdx.x == 0) passed[blockIdx.x] = 1;
}
"""


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_cluster_barrier_skips_exited_ctas_like_the_emulator(tkc, mode):
    """barrier.cluster.wait waits only for CTAs that have not exited, on the GPU and in the emulator (whose launch
    would raise Deadlock otherwise)."""
    from tmakit import emu

    grid, cluster = 8, 4
    buf = tkc.DeviceBuffer(4 * grid)
    buf.fill(0)
    tkc.kernel(EXITS, "exits")(grid, 64, ctypes.c_int32(mode), buf, cluster=cluster)
    tkc.synchronize()
    hw = np.frombuffer(buf.download(), np.uint32)

    want = np.zeros(grid, np.uint32)

    def exits(out):
        rank = emu.block_rank_in_cluster()
        if mode == 0 and rank == 0:
            return
        emu.cluster_sync()
        if (mode == 1 and rank == 1) or (mode == 2 and rank % 2):
            return
        emu.cluster_sync()
        out[emu.block_idx().x] = 1

    emu.launch(exits, (grid,), (cluster,), want)
    assert np.array_equal(hw, want)
    assert 0 < want.sum() < grid
