"""The TMA unit on byte buffers: coordinates, OOB fill, element strides, stores, prefetch, im2col
(docs/HARDWARE.md §3)."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tmakit.emu import OOB_NAN_BITS, tma_unit
from tmakit.emu.errors import IllegalAddress, IllegalInstruction, TmaUnitError
from tmakit.tma.errors import TmaDescriptorError
from tmakit.tma.tensormap import DataType, OobFill, TensorMap

NAN = OobFill.NAN_REQUEST_ZERO_FMA


def reference_box(a, box, coords, es, fill):
    """Element-by-element model of docs/HARDWARE.md §3 on a numpy array (dims reversed: a[..., y, x])."""
    rank = a.ndim
    counts = [box[0]] + [-(-box[i] // es[i]) for i in range(1, rank)]
    out = np.full(counts[::-1], fill, dtype=a.dtype)
    for k in itertools.product(*(range(n) for n in counts[::-1])):
        g = [coords[rank - 1 - d] + (es[rank - 1 - d] if rank - 1 - d else 1) * k[d] for d in range(rank)]
        if all(0 <= g[d] < a.shape[d] for d in range(rank)):
            out[k] = a[tuple(g)]
    return out


def tmap_for(a, dtype, box, es=None, **kw):
    dims = a.shape[::-1]
    strides = tuple(a.strides[::-1][1:])
    return TensorMap(dtype, dims, strides, box, element_strides=es, **kw)


def test_seed_tile_and_tx_bytes():
    a = np.arange(48, dtype=np.float32).reshape(6, 8)
    tm = tmap_for(a, DataType.FLOAT32, (4, 2))
    smem = np.zeros(1024, np.uint8)
    assert tma_unit.load(tm, (4, 2), a, smem, 0) == 32 == tma_unit.tx_bytes(tm)
    assert smem[:32].view(np.float32).tolist() == [20, 21, 22, 23, 28, 29, 30, 31]


def test_oob_zero_and_negative_start():
    a = np.arange(1, 49, dtype=np.float32).reshape(6, 8)
    tm = tmap_for(a, DataType.FLOAT32, (8, 2))
    smem = np.full(1024, 0xFF, np.uint8)
    tma_unit.load(tm, (-4, -1), a, smem, 0)  # -16 bytes: a negative start on a 16-byte boundary is fine
    assert smem[:64].view(np.float32).tolist() == [0] * 12 + [1, 2, 3, 4]


def test_fully_out_of_bounds_box_still_signals_full_bytes():
    a = np.ones((6, 8), np.float32)
    tm = tmap_for(a, DataType.FLOAT32, (4, 2))
    smem = np.full(1024, 0xFF, np.uint8)
    assert tma_unit.load(tm, (100, -50), a, smem, 0) == 32
    assert (smem[:32] == 0).all() and (smem[32:] == 0xFF).all()


@pytest.mark.parametrize("dtype,np_dtype", [(DataType.FLOAT32, np.float32), (DataType.FLOAT16, np.float16),
                                            (DataType.BFLOAT16, np.uint16), (DataType.FLOAT64, np.float64),
                                            (DataType.TFLOAT32, np.float32)])
def test_oob_nan_fill_pattern(dtype, np_dtype):
    a = np.zeros((4, 16), np_dtype)
    tm = tmap_for(a, dtype, (16, 2), oob_fill=NAN)
    smem = np.zeros(1024, np.uint8)
    tma_unit.load(tm, (8, 3), a, smem, 0)
    e = np.dtype(np_dtype).itemsize
    bits = smem[:16 * 2 * e].view({2: np.uint16, 4: np.uint32, 8: np.uint64}[e]).reshape(2, 16)
    assert (bits[0, :8] == 0).all()
    assert (bits[0, 8:] == OOB_NAN_BITS[dtype]).all() and (bits[1] == OOB_NAN_BITS[dtype]).all()
    assert OOB_NAN_BITS[DataType.FLOAT32] == 0x7FF77FF7  # the verified pattern


def test_nan_fill_rejected_for_integers():
    with pytest.raises(TmaDescriptorError):
        tma_unit.load(TensorMap(DataType.UINT32, (16, 4), (64,), (16, 2), oob_fill=NAN), (0, 0),
                      np.zeros(64, np.uint32), np.zeros(1024, np.uint8), 0)


def test_element_strides_verified_case():
    """es={1,2}, box {32,16} fp32: 8 rows, 1024 bytes (docs/HARDWARE.md §3 [V])."""
    a = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
    tm = tmap_for(a, DataType.FLOAT32, (32, 16), es=(1, 2))
    smem = np.zeros(4096, np.uint8)
    assert tma_unit.load(tm, (0, 4), a, smem, 0) == 1024
    assert np.array_equal(smem[:1024].view(np.float32).reshape(8, 32), a[4:20:2])


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 5), st.integers(0, 2**32 - 1), st.booleans())
def test_load_matches_elementwise_reference(rank, seed, nan):
    rng = np.random.default_rng(seed)
    shape = tuple(int(rng.integers(1, 7)) for _ in range(rank - 1)) + (int(rng.integers(1, 5)) * 4,)
    a = rng.standard_normal(shape).astype(np.float32)
    box = (4 * int(rng.integers(1, 5)),) + tuple(int(rng.integers(1, 6)) for _ in range(rank - 1))
    es = (1,) + tuple(int(rng.integers(1, 4)) for _ in range(rank - 1))
    coords = tuple(int(rng.integers(-6, 8)) for _ in range(rank))
    coords = (coords[0] // 4 * 4,) + coords[1:]  # innermost start on a 16-byte boundary (else the GPU traps)
    tm = tmap_for(a, DataType.FLOAT32, box, es=es, oob_fill=NAN if nan else OobFill.NONE)
    smem = np.zeros(1 << 16, np.uint8)
    n = tma_unit.load(tm, coords, a, smem, 256)
    fill = np.uint32(0x7FF77FF7 if nan else 0).view(np.float32)
    ref = reference_box(a, box, coords, es, fill)
    assert n == ref.nbytes
    assert np.array_equal(smem[256:256 + n].view(np.uint32), ref.reshape(-1).view(np.uint32))


def test_store_clips_out_of_bounds_and_rejects_negative_start():
    g = np.zeros((6, 8), np.float32)
    tm = tmap_for(g, DataType.FLOAT32, (4, 4))
    smem = np.zeros(1024, np.uint8)
    smem[:64].view(np.float32)[:] = np.arange(1, 17)
    tma_unit.store(tm, (4, 4), g, smem, 0)
    assert g[4:6, 4:8].tolist() == [[1, 2, 3, 4], [5, 6, 7, 8]] and g.sum() == 36
    with pytest.raises(IllegalInstruction, match="kills the context with cudaErrorIllegalInstruction"):
        tma_unit.store(tm, (-4, -3), g, smem, 0)


# ---- hardware behaviours found by the H200 conformance runs (docs/CONFORMANCE.md) -----------------------------

def test_store_writes_dim0_up_to_the_next_16_byte_boundary():
    # f32 rows of 6 elements (24 bytes) at a 32-byte stride: the store also writes elements 6 and 7
    g = np.zeros((6, 8), np.float32)
    tm = TensorMap(DataType.FLOAT32, (6, 6), (32,), (4, 4))
    smem = np.zeros(1024, np.uint8)
    smem[:64].view(np.float32)[:] = np.arange(1, 17)
    tma_unit.store(tm, (4, 4), g, smem, 0)
    assert g[4:6, 4:8].tolist() == [[1, 2, 3, 4], [5, 6, 7, 8]] and g.sum() == 36
    # rank 1, bytes: globalDim 449 -> bytes 449..463 are written too, 464.. are not
    b = np.zeros(600, np.uint8)
    t1 = TensorMap(DataType.UINT8, (449,), (), (240,))
    src = np.arange(240, dtype=np.uint8)
    sm = np.zeros(256, np.uint8)
    sm[:240] = src
    tma_unit.store(t1, (416,), b, sm, 0)
    assert np.array_equal(b[416:464], src[:48]) and not b[464:].any() and not b[:416].any()
    # a load still treats the tail as out of bounds
    sm2 = np.full(256, 0xFF, np.uint8)
    tma_unit.load(t1, (416,), b, sm2, 0)
    assert np.array_equal(sm2[:33], src[:33]) and not sm2[33:240].any()


def test_store_tail_is_dropped_past_the_end_of_the_buffer():
    g = np.zeros(8 * 5 + 6, np.float32)  # the last row ends 8 bytes before its 16-byte boundary
    tm = TensorMap(DataType.FLOAT32, (6, 6), (32,), (4, 4))
    smem = np.zeros(1024, np.uint8)
    smem[:64].view(np.float32)[:] = np.arange(1, 17)
    tma_unit.store(tm, (4, 4), g, smem, 0)
    assert g[36:38].tolist() == [1, 2] and g[44:46].tolist() == [5, 6]


def test_reduce_combines_the_16_byte_tail():
    g = np.full((4, 8), 10, np.uint32)
    tm = TensorMap(DataType.UINT32, (5, 4), (32,), (4, 2))
    smem = np.zeros(1024, np.uint8)
    smem[:32].view(np.uint32)[:] = 1
    tma_unit.reduce(tm, (4, 1), g, smem, 0, "add")
    assert g[1:3, 4:8].tolist() == [[11, 11, 11, 11]] * 2 and (g[1:3, :4] == 10).all() and (g[0] == 10).all()


@pytest.mark.parametrize("dtype", [DataType.TFLOAT32, DataType.TFLOAT32_FTZ])
def test_tf32_load_rounds_to_nearest_even(dtype):
    cases = {  # input bits -> H200 result bits (crafted patterns of the conformance probe)
        0x3F801000: 0x3F800000,  # tie, even kept bit -> down
        0x3F803000: 0x3F804000,  # tie, odd kept bit -> up
        0x3F801001: 0x3F802000,  # above half -> up
        0x3F800FFF: 0x3F800000,  # below half -> down
        0x7F7FF000: 0x7F800000,  # largest floats round to infinity
        0x7F7FEFFF: 0x7F7FE000,
        0x7F800000: 0x7F800000, 0xFF800000: 0xFF800000,  # infinities unchanged
        0x7F800001: 0x7FFFE000, 0xFFC00000: 0x7FFFE000, 0x7FF77FF7: 0x7FFFE000,  # any NaN -> canonical
        0x007FF000: 0x00800000, 0x00001000: 0x00000000, 0x80001000: 0x80000000,  # denormals round, no flush
        0xBF8FFFFF: 0xBF900000,
    }
    src = np.array(list(cases) + [0] * (32 - len(cases)), np.uint32)
    want = np.array(list(cases.values()) + [0] * (32 - len(cases)), np.uint32)
    tm = TensorMap(dtype, (32,), (), (32,))
    smem = np.zeros(256, np.uint8)
    tma_unit.load(tm, (0,), src, smem, 0)
    assert [hex(x) for x in smem[:128].view(np.uint32)] == [hex(x) for x in want]
    # FLOAT32 moves the same bits unchanged; a TF32 store copies bits too
    tma_unit.load(tm.replace(dtype=DataType.FLOAT32), (0,), src, smem, 0)
    assert np.array_equal(smem[:128].view(np.uint32), src)
    out = np.zeros(32, np.uint32)
    tma_unit.store(tm, (0,), out, smem, 0)
    assert np.array_equal(out, src)


def test_tf32_nan_fill_is_not_rounded():
    src = np.full(32, 0x3F801001, np.uint32)
    tm = TensorMap(DataType.TFLOAT32, (32,), (), (32,), oob_fill=NAN)
    smem = np.zeros(256, np.uint8)
    tma_unit.load(tm, (16,), src, smem, 0)
    bits = smem[:128].view(np.uint32)
    assert (bits[:16] == 0x3F802000).all() and (bits[16:] == 0x7FF77FF7).all()


@pytest.mark.parametrize("c0,dt,ok", [(1, DataType.FLOAT32, False), (-1, DataType.FLOAT32, False),
                                      (69, DataType.FLOAT32, False), (-4, DataType.FLOAT32, True),
                                      (4, DataType.FLOAT32, True), (8, DataType.UINT8, False),
                                      (16, DataType.UINT8, True), (2, DataType.FLOAT64, True),
                                      (3, DataType.FLOAT64, False)])
def test_innermost_start_off_16_bytes_kills_the_context(c0, dt, ok):
    e = {DataType.FLOAT32: 4, DataType.UINT8: 1, DataType.FLOAT64: 8}[dt]
    g = np.zeros(64 * 48 * e, np.uint8)
    tm = TensorMap(dt, (64, 48), (64 * e,), (16, 8))
    smem = np.zeros(4096, np.uint8)
    calls = [lambda: tma_unit.load(tm, (c0, 0), g, smem, 0), lambda: tma_unit.prefetch(tm, (c0, 0)),
             lambda: tma_unit.gather(tm, (c0, 0), g)]
    if c0 >= 0:
        calls += [lambda: tma_unit.store(tm, (c0, 0), g, smem, 0)]
        if dt == DataType.FLOAT32:
            calls += [lambda: tma_unit.reduce(tm.replace(dtype=DataType.UINT32), (c0, 0), g, smem, 0, "add")]
    for call in calls:
        if ok:
            call()
        else:
            with pytest.raises(IllegalInstruction, match="16-byte boundary.*GPU would kill the context"):
                call()


def test_narrow_swizzled_box_footprint_is_its_smem_bytes():
    # a 32-byte row with SWIZZLE_64B takes 64 bytes, a 16-byte row with SWIZZLE_32B 32 (not a 128-byte line)
    for dt, box, swz, n in ((DataType.UINT64, (4,), 2, 64), (DataType.BFLOAT16, (8,), 1, 32),
                            (DataType.FLOAT32, (4, 3), 3, 384)):
        tm = TensorMap(dt, (64,) + (8,) * (len(box) - 1), tuple(512 for _ in box[1:]), box, swizzle=swz)
        assert tm.smem_bytes == n
        g = np.arange(4096, dtype=np.uint8)
        smem = np.full(384 + n, 0xEE, np.uint8)
        tma_unit.load(tm, (0,) * len(box), g, smem, 384)
        assert (smem[:384] == 0xEE).all()
        back = np.zeros_like(g)
        tma_unit.store(tm, (0,) * len(box), back, smem, 384)
        c = (0,) * len(box)
        assert np.array_equal(tma_unit.gather(tm, c, back), tma_unit.gather(tm, c, g))
        with pytest.raises(IllegalAddress):
            tma_unit.load(tm, (0,) * len(box), g, np.zeros(384 + n - 16, np.uint8), 384)


def _interleaved_load(dims, strides, box, coords, interleave=1, swizzle=0, n=4096, es=None):
    """Loads a UINT16 interleaved box from a tensor holding each element's index; the smem image as uint16, with
    untouched slots 0xA5A5 (as in the H200 interleave probes, docs/CONFORMANCE.md)."""
    tm = TensorMap(DataType.UINT16, dims, strides, box, interleave=interleave, swizzle=swizzle, element_strides=es)
    smem = np.full(8192, 0xA5, np.uint8)
    tx = tma_unit.load(tm, coords, np.arange(n, dtype=np.uint16), smem, 0)
    return tm, tx, smem.view(np.uint16)


def test_interleaved_dim0_counts_16_byte_chunks_and_dim_rank_minus_2_one_position():
    """H200: box (8, 4, 2) over dims (8, 16, 8) moves 2 blocks of 8 chunks x 16 B = 128 contiguous bytes, one at each
    dim-2 position (dim 1, the rank-2 dim, contributes one position), not the 4 x 2 rows of 16 B a tile load would."""
    tm, tx, el = _interleaved_load((8, 16, 8), (32, 512), (8, 4, 2), (0, 0, 0))
    assert tx == tm.tx_bytes == tm.smem_bytes == 256
    assert el[:64].tolist() == list(range(64)) and el[64:128].tolist() == list(range(256, 320))
    assert (el[128:] == 0xA5A5).all()


def test_interleaved_chunk_coordinates_and_oob():
    """H200 probes u16_i16_c3 / dim5: the dim-0 start counts chunks (3 -> element 24) and chunks at or past
    globalDim[0] read as the OOB fill; dim 1 shifts by its stride (probe row1)."""
    _, _, el = _interleaved_load((8, 16, 8), (32, 512), (8, 4, 2), (3, 0, 0))
    assert el[:40].tolist() == list(range(24, 64)) and (el[40:64] == 0).all()
    _, _, el = _interleaved_load((5, 16, 8), (32, 512), (8, 4, 2), (0, 0, 0))
    assert el[:40].tolist() == list(range(40)) and (el[40:64] == 0).all()
    _, _, el = _interleaved_load((8, 16, 8), (32, 512), (8, 4, 2), (0, 1, 0))
    assert el[:64].tolist() == list(range(16, 80))


def test_interleaved_5d_walks_every_dim_but_rank_minus_2():
    """H200 probe r5_b8x2x3x2x2: 12 blocks = box dims 1, 2 and 4 (2 x 3 x 2); dim 3 contributes one position."""
    tm, tx, el = _interleaved_load((8, 4, 4, 3, 2), (32, 128, 512, 1536), (8, 2, 3, 2, 2), (0, 0, 0, 0, 0))
    starts = el[: tx // 2 : 64].tolist()
    assert tx == 12 * 128
    assert starts == [0, 16, 64, 80, 128, 144, 768, 784, 832, 848, 896, 912]


def test_interleaved_32b_swizzles_dense_rows_by_address():
    """H200 probe u16_i32_sw32_box8x4x2: 8 chunks of 32 B per block; SWIZZLE_32B swaps the 16-byte halves of every
    32 bytes in odd 128-byte lines."""
    _, tx, el = _interleaved_load((16, 16, 8), (32, 512), (8, 4, 2), (0, 0, 0), interleave=2, swizzle=1)
    assert tx == 512
    assert el[:64].tolist() == list(range(64))
    assert el[64:72].tolist() == list(range(72, 80)) and el[72:80].tolist() == list(range(64, 72))


@pytest.mark.parametrize("es0,starts", [(2, [0, 16, 32, 48]), (3, [0, 24, 48]), (4, [0, 32]), (8, [0])])
def test_interleaved_element_stride_0_steps_over_chunks(es0, starts):
    """H200 probes es0_2 .. es0_8: elementStrides[0] steps dim 0 in chunks; ceil(boxDim[0] / es0)
    chunks per row, packed densely; tx counts only those."""
    tm, tx, el = _interleaved_load((16, 4, 4), (32, 128), (8, 2, 2), (0, 0, 0), es=(es0, 1, 1))
    n = len(starts)
    assert tx == tm.tx_bytes == 2 * n * 16
    assert el[: tx // 2: 8].tolist() == starts + [64 + x for x in starts]
    assert (el[tx // 2:] == 0xA5A5).all()


def test_interleaved_element_stride_0_start_oob_and_other_dims():
    """H200 probes es0_2_c1, es0_2_oob, es0_2_es2_2 and es0_3_r4."""
    _, _, el = _interleaved_load((16, 4, 4), (32, 128), (8, 2, 2), (1, 0, 0), es=(2, 1, 1))
    assert el[:64:8].tolist() == [8, 24, 40, 56, 72, 88, 104, 120]
    _, _, el = _interleaved_load((5, 4, 4), (32, 128), (8, 2, 2), (0, 0, 0), es=(2, 1, 1))  # chunk 6 is past dim 0
    assert el[:64:8].tolist() == [0, 16, 32, 0, 64, 80, 96, 0] and not el[24:32].any()
    _, _, el = _interleaved_load((16, 4, 6), (32, 128), (8, 2, 4), (0, 0, 0), es=(2, 1, 2))
    assert el[:64:8].tolist() == [0, 16, 32, 48, 128, 144, 160, 176]
    tm = TensorMap(DataType.UINT16, (16, 3, 4, 3), (32, 96, 384), (8, 2, 2, 2), element_strides=(3, 1, 1, 1),
                   interleave=1)
    smem = np.full(1024, 0xA5, np.uint8)
    assert tma_unit.load(tm, (0, 0, 1, 0), np.arange(2048, dtype=np.uint16), smem, 0) == 192
    assert smem.view(np.uint16)[:96:8].tolist() == [48, 72, 96, 64, 88, 112, 240, 264, 288, 256, 280, 304]


def _interleaved_im2col(dims, cpp, ppc, lo, up, coords, offsets, interleave=1, swizzle=0):
    tm = TensorMap(DataType.UINT16, dims, (32, 192, 960)[: len(dims) - 1], [cpp] + [1] * (len(dims) - 1),
                   interleave=interleave, swizzle=swizzle, mode="im2col", pixel_box_lower_corner=lo,
                   pixel_box_upper_corner=up, channels_per_pixel=cpp, pixels_per_column=ppc)
    smem = np.full(2048, 0xA5, np.uint8)
    tx = tma_unit.load(tm, coords, np.arange(2048, dtype=np.uint16), smem, 0, offsets)
    return tm, tx, smem.view(np.uint16)


def test_interleaved_im2col_walks_the_chunk_dim_as_a_spatial_dim():
    """H200 probes i2c_base / i2c_cpp16 / i2c_c1 / i2c_w2h1: one 16-byte chunk per pixel whatever
    channelsPerPixel says; the pixel walk steps the chunk dim, then W; H stays at its coordinate; then N."""
    for cpp in (8, 16):
        tm, tx, el = _interleaved_im2col([2, 6, 5, 2], cpp, 16, [0, 0], [0, 0], (0, 0, 0, 0), (0, 0))
        assert tx == tm.tx_bytes == 256
        assert el[:128:8].tolist() == [8 * i for i in range(12)] + [480, 488, 496, 504]
    _, _, el = _interleaved_im2col([2, 6, 5, 2], 8, 16, [0, 0], [0, 0], (1, 0, 0, 0), (0, 0))
    assert el[:128:8].tolist() == [8 * i for i in range(1, 12)] + [480, 488, 496, 504, 512]
    _, _, el = _interleaved_im2col([2, 6, 5, 2], 8, 16, [0, 0], [0, 0], (0, 2, 1, 0), (0, 0))
    assert el[:128:8].tolist() == [128 + 8 * i for i in range(8)] + [576 + 8 * i for i in range(8)]


def test_interleaved_im2col_corners_and_offsets_apply_to_chunk_then_w():
    """H200 probes i2c_corner and i2c_offs: corners [-1, -1] make the chunk box [-1, 0] and the W box
    [-1, 4]; offsets (1, 1) shift the chunk and W."""
    _, _, el = _interleaved_im2col([2, 6, 5, 2], 8, 16, [-1, -1], [-1, -1], (0, 0, 0, 0), (0, 0))
    want = [0, 0, 16, 0, 32, 0, 48, 0, 64, 0, 0, 0, 480, 0, 496, 0]
    assert el[:128:8].tolist() == want
    _, _, el = _interleaved_im2col([2, 6, 5, 2], 8, 16, [-1, -1], [-1, -1], (0, 0, 0, 0), (1, 1))
    assert el[:128:8].tolist() == [24, 32, 40, 48, 56, 64, 72, 80, 88, 480, 488, 496, 504, 512, 520, 528]
    with pytest.raises(IllegalInstruction, match="dim 0: 2 not in"):  # the chunk start outside its pixel box
        _interleaved_im2col([2, 6, 5, 2], 8, 16, [-1, -1], [-1, -1], (2, 0, 0, 0), (0, 0))


def test_interleaved_im2col_element_strides_are_refused():
    tm = TensorMap(DataType.UINT16, [2, 6, 5, 2], (32, 192, 960), [8, 1, 1, 1], interleave=1, mode="im2col",
                   element_strides=(1, 2, 1, 1), pixel_box_lower_corner=[0, 0], pixel_box_upper_corner=[0, 0],
                   channels_per_pixel=8, pixels_per_column=16)
    with pytest.raises(TmaUnitError, match="not modeled"):
        tma_unit.load(tm, (0, 0, 0, 0), np.zeros(4096, np.uint8), np.zeros(4096, np.uint8), 0, (0, 0))


def test_interleaved_store_writes_back_what_the_load_read():
    """An interleaved store puts each chunk where the load took it from (the H200 agrees: docs/CONFORMANCE.md):
    dim 0 counts 16-byte chunks and dim rank-2 one position; chunks past the tensor are skipped."""
    tm = TensorMap(DataType.UINT16, (3, 16, 8), (64, 1024), (8, 4, 2), interleave=1)  # boxDim[0]: 8 of 3 chunks
    g = np.arange(4096, dtype=np.uint16)
    smem = np.zeros(8192, np.uint8)
    tma_unit.load(tm, (0, 2, 5), g, smem, 0)
    out = np.zeros_like(g)
    tma_unit.store(tm, (0, 2, 5), out, smem, 0)
    want = np.zeros_like(g)
    for plane in (5, 6):  # dim 1 (rank-2): one position, 2; dim 2: box 2 from 5; 3 chunks of 8 elements each
        base = plane * 512 + 2 * 32
        want[base:base + 3 * 8] = g[base:base + 3 * 8]
    assert np.array_equal(out, want)


def test_store_beyond_buffer_is_illegal_address():
    g = np.zeros(16, np.float32)
    tm = TensorMap(DataType.FLOAT32, (8, 6), (32,), (4, 2))
    with pytest.raises(IllegalAddress):
        tma_unit.store(tm, (4, 4), g, np.zeros(1024, np.uint8), 0)


def test_prefetch_validates_only():
    a = np.ones((6, 8), np.float32)
    tm = tmap_for(a, DataType.FLOAT32, (4, 2))
    assert tma_unit.prefetch(tm, (4, 2)) is None
    with pytest.raises(TmaUnitError, match="2 coordinates"):
        tma_unit.prefetch(tm, (1,))
    with pytest.raises(TmaDescriptorError):
        tma_unit.prefetch(tm.replace(box_dim=(3, 2)), (0, 0))  # 12-byte inner box


def test_coordinates_must_fit_s32():
    tm = tmap_for(np.ones((6, 8), np.float32), DataType.FLOAT32, (4, 2))
    with pytest.raises(TmaUnitError, match="s32"):
        tma_unit.prefetch(tm, (2**31, 0))


def im2col_map(x, lower, upper, channels, pixels, es=None):
    n, h, w, c = x.shape
    e = x.itemsize
    return TensorMap(DataType.FLOAT32, (c, w, h, n), (c * e, w * c * e, h * w * c * e), (), mode="im2col",
                     element_strides=es, pixel_box_lower_corner=lower, pixel_box_upper_corner=upper,
                     channels_per_pixel=channels, pixels_per_column=pixels)


def test_im2col_padding_walk():
    """3x3 conv, padding 1, NHWC 1x4x4x8: the column for filter tap (r, s) is the input shifted by (r-1, s-1)."""
    x = np.arange(1 * 4 * 4 * 8, dtype=np.float32).reshape(1, 4, 4, 8)
    tm = im2col_map(x, (-1, -1), (-1, -1), 8, 16)
    for r, s in [(0, 0), (1, 1), (2, 0)]:
        smem = np.zeros(4096, np.uint8)
        assert tma_unit.load(tm, (0, -1, -1, 0), x, smem, 0, im2col_offsets=(s, r)) == 16 * 8 * 4
        got = smem[:512].view(np.float32).reshape(4, 4, 8)
        pad = np.pad(x[0], ((1, 1), (1, 1), (0, 0)))
        assert np.array_equal(got, pad[r:r + 4, s:s + 4]), (r, s)


def test_im2col_continues_into_next_image():
    x = np.arange(2 * 2 * 2 * 4, dtype=np.float32).reshape(2, 2, 2, 4)
    tm = im2col_map(x, (0, 0), (0, 0), 4, 6)
    smem = np.zeros(4096, np.uint8)
    tma_unit.load(tm, (0, 0, 1, 0), x, smem, 0, im2col_offsets=(0, 0))
    got = smem[:96].view(np.float32).reshape(6, 4)
    assert np.array_equal(got, x.reshape(8, 4)[2:8])


def test_im2col_offsets_checked():
    x = np.zeros((1, 4, 4, 8), np.float32)
    tm = im2col_map(x, (-1, -1), (-1, -1), 8, 16)
    with pytest.raises(TmaUnitError, match="im2col offsets"):
        tma_unit.load(tm, (0, 0, 0, 0), x, np.zeros(4096, np.uint8), 0, im2col_offsets=(0,))
    with pytest.raises(TmaUnitError, match=r"\[0, 255\]"):
        tma_unit.load(tm, (0, 0, 0, 0), x, np.zeros(4096, np.uint8), 0, im2col_offsets=(300, 0))


def test_tf32_im2col_load_rounds_in_bounds_pixels_only():
    # NWC, C = 4 floats (16 bytes), W = 4, N = 1; the pixel box starts one pixel left of the tensor (lower -1)
    g = np.full((1, 4, 4), 0x3F803000, np.uint32)
    tm = TensorMap(DataType.TFLOAT32, (4, 4, 1), (16, 64), (), mode="im2col", pixel_box_lower_corner=(-1,),
                   pixel_box_upper_corner=(0,), channels_per_pixel=4, pixels_per_column=4, oob_fill=NAN)
    smem = np.zeros(256, np.uint8)
    tma_unit.load(tm, (0, -1, 0), g, smem, 0, (0,))
    bits = smem[:64].view(np.uint32).reshape(4, 4)
    assert (bits[0] == 0x7FF77FF7).all() and (bits[1:] == 0x3F804000).all()


def nwc_map(c, w, n, lower, upper, pixels, es=None):
    """The H200 probes' maps (tools/conformance/hw_probes/im2col.py): fp32 NWC, 128-byte pixels, 32 channels a pixel."""
    return TensorMap(DataType.FLOAT32, (c, w, n), (4 * c, 4 * c * w), (), mode="im2col", element_strides=es,
                     pixel_box_lower_corner=lower, pixel_box_upper_corner=upper, channels_per_pixel=32,
                     pixels_per_column=pixels)


@pytest.mark.parametrize("lower, upper, w, traps", [
    ((-1,), (1,), -1, False), ((-1,), (1,), -2, True), ((-1,), (1,), 16, False), ((-1,), (1,), 17, True),
    ((0,), (-4,), 11, False), ((0,), (-4,), 12, True), ((2,), (0,), 2, False), ((2,), (0,), 1, True),
    ((0,), (0,), 15, False), ((0,), (0,), 16, True), ((0,), (0,), 19, True)])
def test_im2col_start_must_lie_in_the_pixel_box(lower, upper, w, traps):
    """H200 probes: a spatial start outside [lower, W - 1 + upper] kills the context; both edges hold."""
    tm = nwc_map(32, 16, 2, lower, upper, 16)
    g, smem = np.zeros(32 * 16 * 2, np.float32), np.zeros(2048, np.uint8)
    if traps:
        with pytest.raises(IllegalInstruction, match="pixel bounding box"):
            tma_unit.load(tm, (0, w, 0), g, smem, 0, (0,))
    else:
        assert tma_unit.load(tm, (0, w, 0), g, smem, 0, (0,)) == 2048


def test_im2col_start_rule_spares_channels_and_images():
    """Channel and batch starts anywhere (probes c0_past, n_past, n_neg: OOB fill); an H start outside its box traps."""
    tm = nwc_map(32, 16, 2, (0,), (0,), 16)
    g, smem = np.ones(32 * 16 * 2, np.float32), np.zeros(2048, np.uint8)
    for coords in [(64, 0, 0), (0, 0, 4), (0, 0, -1)]:
        tma_unit.load(tm, coords, g, smem, 0, (0,))
        assert (smem.view(np.float32) == 0).all()
    x = np.zeros((2, 8, 8, 32), np.float32)
    tm4 = im2col_map(x, (0, -1), (0, 1), 32, 16)
    tma_unit.load(tm4, (0, 0, 8, 0), x, np.zeros(2048, np.uint8), 0, (0, 0))
    for h in (9, -2):
        with pytest.raises(IllegalInstruction, match=r"dim 2: .* not in \[-1, 8\]"):
            tma_unit.load(tm4, (0, 0, h, 0), x, np.zeros(2048, np.uint8), 0, (0, 0))


@pytest.mark.parametrize("es, w, pixels", [
    (2, 1, [1, 3, 5, 7, 9, 11, 13, 15, 16, 18, 20, 22, 24, 26, 28, 30]),
    (2, 3, [3, 5, 7, 9, 11, 13, 15, 16]),
    (3, 2, [2, 5, 8, 11, 14, 16, 19, 22]),
    (2, 0, [0, 2, 4, 6, 8, 10, 12, 14])])
def test_im2col_strided_walk_keeps_the_start_until_it_wraps(es, w, pixels):
    """H200: W steps by its traversal stride from the start coordinate itself, off the stride grid too,
    and restarts at the box's lower corner in the next image. ``pixels`` = n * 16 + w of each loaded pixel."""
    g = np.repeat(np.arange(32, dtype=np.float32), 32)  # pixel p holds p in all 32 channels
    tm = nwc_map(32, 16, 2, (0,), (0,), len(pixels), es=(1, es, 1))
    smem = np.zeros(128 * len(pixels), np.uint8)
    tma_unit.load(tm, (0, w, 0), g, smem, 0, (0,))
    assert smem.view(np.float32).reshape(-1, 32)[:, 0].tolist() == pixels


def test_im2col_images_step_by_the_batch_traversal_stride():
    """H200 probe es2_n_wrap: with elementStrides[N] = 2 a column that wraps out of image 0 continues in
    image 2, then image 4 (past N = 4: OOB fill)."""
    g = np.repeat(np.arange(64, dtype=np.float32), 32)  # pixel n * 16 + w holds its index in all 32 channels
    tm = nwc_map(32, 16, 4, (0,), (0,), 48, es=(1, 1, 2))
    smem = np.zeros(128 * 48, np.uint8)
    tma_unit.load(tm, (0, 0, 0), g, smem, 0, (0,))
    got = smem.view(np.float32).reshape(-1, 32)[:, 0].tolist()
    assert got == list(range(16)) + list(range(32, 48)) + [0.0] * 16


def test_im2col_store_is_the_load_walk_backwards():
    """.im2col_no_offs store (H200 probes): image row p goes to pixel p of the load's walk with zero
    offsets; storing what a load read leaves the tensor unchanged, and the walk continues into the next image."""
    x = np.arange(2 * 3 * 4 * 8, dtype=np.float32).reshape(2, 3, 4, 8)
    tm = im2col_map(x, (1, 0), (0, -1), 8, 10)  # pixel box: W 1..3, H 0..1
    smem = np.zeros(4096, np.uint8)
    tma_unit.load(tm, (0, 2, 1, 0), x, smem, 0, im2col_offsets=(0, 0))
    y = np.zeros_like(x)
    assert tma_unit.store(tm, (0, 2, 1, 0), y, smem, 0) == 10 * 8 * 4
    walk = [(0, 1, 2), (0, 1, 3), (1, 0, 1), (1, 0, 2), (1, 0, 3), (1, 1, 1), (1, 1, 2), (1, 1, 3)]  # (n, h, w)
    want = np.zeros_like(x)
    for n, h, w in walk:
        want[n, h, w] = x[n, h, w]
    assert np.array_equal(y, want)  # 10 pixels asked, 8 inside the tensor (rows 8, 9 fall past N and are skipped)


def test_im2col_reduce_combines_along_the_walk():
    x = np.ones((1, 2, 4, 4), np.float32)
    tm = im2col_map(x, (0, 0), (0, 0), 4, 8)
    img = np.arange(32, dtype=np.float32)
    tma_unit.reduce(tm, (0, 0, 0, 0), x, img.view(np.uint8).copy(), 0, "add")
    assert np.array_equal(x.reshape(-1), 1 + img)


@pytest.mark.parametrize("lower, upper", [((-1, 0), (0, 0)), ((0, 0), (0, 1)), ((1, -1), (-1, -1)),
                                          ((2, 0), (1, 0))])
def test_im2col_store_traps_when_the_pixel_box_leaves_the_tensor(lower, upper):
    """H200 probes: any lower corner < 0 or upper corner > 0 traps an im2col store or reduction, whatever
    pixels it touches; the same map loads fine."""
    x = np.zeros((2, 8, 8, 8), np.float32)
    tm = im2col_map(x, lower, upper, 8, 4)
    smem = np.zeros(4096, np.uint8)
    start = (0, max(0, lower[0]), max(0, lower[1]), 0)
    tma_unit.load(tm, start, x, smem, 0, im2col_offsets=(0, 0))
    with pytest.raises(IllegalInstruction, match="corners .* reach outside the tensor"):
        tma_unit.store(tm, start, x, smem, 0)
    with pytest.raises(IllegalInstruction, match="corners .* reach outside the tensor"):
        tma_unit.reduce(tm, start, x, smem, 0, "add")


def test_im2col_store_start_rules():
    """Negative starts trap (channels and images too: probes st_c_neg, st_n_neg), so does a spatial start outside the
    pixel box (st_w_at_end); channels and images past the end store nothing (st_c0_past, st_n_past)."""
    x = np.ones((2, 4, 4, 8), np.float32)
    tm = im2col_map(x, (0, 0), (0, 0), 8, 4)
    smem = np.zeros(4096, np.uint8)
    for coords in [(-4, 0, 0, 0), (0, 0, 0, -1)]:
        with pytest.raises(IllegalInstruction, match="must not be negative"):
            tma_unit.store(tm, coords, x, smem, 0)
    with pytest.raises(IllegalInstruction, match="pixel bounding box"):
        tma_unit.store(tm, (0, 4, 0, 0), x, smem, 0)
    for coords in [(8, 0, 0, 0), (0, 0, 0, 2)]:
        tma_unit.store(tm, coords, x, smem, 0)
    assert (x == 1).all()


@given(st.data())
@settings(max_examples=60, deadline=None)
def test_im2col_store_then_load_round_trips(data):
    """Property: with corners inside the tensor, a load (offsets 0) after a store of the same box returns the image
    wherever the walk stayed inside the tensor."""
    n, h, w, c = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 5)), data.draw(st.integers(1, 6)), 8)
    lo = (data.draw(st.integers(0, w - 1)), data.draw(st.integers(0, h - 1)))
    up = (-data.draw(st.integers(0, w - 1 - lo[0])), -data.draw(st.integers(0, h - 1 - lo[1])))
    pixels = data.draw(st.integers(1, 24))
    es = (1, data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2)))
    x = np.zeros((n, h, w, c), np.float32)
    tm = im2col_map(x, lo, up, c, pixels, es=es)
    start = (0, data.draw(st.integers(lo[0], w - 1 + up[0])), data.draw(st.integers(lo[1], h - 1 + up[1])),
             data.draw(st.integers(0, n - 1)))
    img = np.arange(1, pixels * c + 1, dtype=np.float32)
    tma_unit.store(tm, start, x, img.view(np.uint8).copy(), 0)
    back = np.zeros(pixels * c * 4, np.uint8)
    tma_unit.load(tm, start, x, back, 0, im2col_offsets=(0, 0))
    got, want = back.view(np.float32).reshape(pixels, c), img.reshape(pixels, c)
    inside = got[:, 0] != 0  # OOB pixels load as zero fill, stored pixels are >= 1
    assert np.array_equal(got[inside], want[inside])
    assert np.count_nonzero(x) == inside.sum() * c


@pytest.mark.parametrize("op, want", [("add", [1, 3, 4, 2]), ("max", [1, 2, 2, 2]), ("xor", [1, 3, 0, 2])])
def test_reduce_through_overlapping_rows_combines_every_element(op, want):
    """Rows 16 bytes apart but 32 bytes long alias: the TMA unit combines each box element in turn (H200 fuzz,
    interleaved maps), so an aliased global element takes both contributions, in box order."""
    tm = TensorMap(DataType.UINT32, (8, 3), (16,), (8, 3))
    g = np.zeros(16, np.uint32)
    img = np.repeat(np.array([1, 2, 2], np.uint32), 8)  # rows hold 1, 2, 2
    tma_unit.reduce(tm, (0, 0), g, img.view(np.uint8).reshape(-1).copy(), 0, op)
    assert g[:16:4].tolist() == want  # the four 16-byte chunks: row 0 / rows 0+1 / rows 1+2 / row 2


@pytest.mark.parametrize("swap", [False, True])
def test_store_through_overlapping_rows_keeps_the_last_box_element(swap):
    """A store through aliasing rows writes every box element in box order, so the later row wins. numpy's
    overlapping-view assignment iterates in its own order and got one H200 fuzz case wrong (an
    interleaved map with elementStrides[0] = 2 whose dim-1 stride is one chunk)."""
    tm = TensorMap(DataType.UINT8, (4, 9, 6, 5), (32, 352, 2176), (32, 6, 1, 4), element_strides=(2, 1, 2, 1),
                   interleave=2, swizzle=1)
    ids = np.arange(tm.tx_bytes // 32)[::-1] if swap else np.arange(tm.tx_bytes // 32)
    smem = np.zeros(tm.smem_bytes + 256, np.uint8)
    from tmakit.emu.geometry import box_geometry
    from tmakit.emu.smem_image import write_box

    write_box(smem, 256, box_geometry(tm), np.repeat(ids.astype(np.uint16), 16).view(np.uint8))
    g = np.full(2176 * 5 + 256, 0xFF, np.uint8)
    tma_unit.store(tm, (1, 5, 4, 1), g, smem, 256)
    # global chunk 3840 is box chunk 1 (row 0: c0 = 3, W = 5) and box chunk 32 (row 2: c0 = 1, W = 7): row 2 wins
    assert g[3840:3842].view(np.uint16)[0] == ids[32]
