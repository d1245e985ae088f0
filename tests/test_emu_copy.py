"""copy/prefetch on tmakit tensors: CuTe's atom recursion, swizzled smem layouts read back through the layout
algebra, stores/reduces through TiledCopies, and operand errors."""

import numpy as np
import pytest

import tmakit as tk
from tmakit import emu

M, K = 64, 128


def swizzled_layout(b):
    """The GMMA K-major swizzle atom for 16-bit elements (Swizzle<b,3,3> on element offsets), tiled to (64,128)."""
    atom = tk.composition(tk.Swizzle(b, 3, 3), tk.make_layout((tk.Int(8), tk.Int(8 << b)), tk.LayoutRight))
    return tk.tile_to_shape(atom, (tk.Int(M), tk.Int(K)))


@pytest.fixture
def a():
    x = emu.alloc((M, K), np.uint16, align=1024)
    x[:] = np.random.default_rng(3).integers(0, 2**16, size=(M, K), dtype=np.uint16)
    yield x
    emu.unregister(x)


@pytest.mark.parametrize("b", [1, 2, 3])
def test_swizzled_load_reads_back_through_the_layout(a, b):
    sl = swizzled_layout(b)
    tma = tk.make_tma_copy(tk.SM90_TMA_LOAD, tk.make_tensor(a), sl)
    got = np.zeros_like(a)

    def kernel(a):
        s, bar = emu.shared_tensor(sl, np.uint16), emu.shared_barrier()
        assert s.iterator.address % 1024 == 0
        emu.initialize_barrier(bar, 1)
        emu.set_barrier_transaction_bytes(bar, M * K * 2)
        thr = tma.get_slice(0)
        emu.copy(tma.with_(bar), thr.partition_S(tma.get_tma_tensor(a.shape)), thr.partition_D(s))
        emu.wait_barrier(bar, 0)
        for i in range(M):
            for j in range(K):
                got[i, j] = s[(i, j)]

    stats = emu.launch(kernel, (1,), a)
    assert stats == {"load": K * 2 // (16 << b)}  # one TMA atom per swizzle-span column block
    assert np.array_equal(got, a)


@pytest.mark.parametrize("b", [1, 3])
def test_swizzled_store_and_reduce_round_trip(a, b):
    sl = swizzled_layout(b)
    out = emu.alloc((M, K), np.uint32, align=1024)
    g_out = tk.make_tensor(out)
    load = tk.make_tma_copy(tk.SM90_TMA_LOAD, tk.make_tensor(a), sl)
    sl32 = tk.tile_to_shape(tk.composition(tk.Swizzle(b, 2, 3), tk.make_layout(
        (tk.Int(8), tk.Int(4 << b)), tk.LayoutRight)), (tk.Int(M), tk.Int(K)))
    store = tk.make_tma_copy(tk.SM90_TMA_STORE, g_out, sl32)
    add = tk.make_tma_copy(tk.SM90_TMA_REDUCE_ADD, g_out, sl32)

    def kernel(a, out):
        s16, s32, bar = emu.shared_tensor(sl, np.uint16), emu.shared_tensor(sl32, np.uint32), emu.shared_barrier()
        emu.initialize_barrier(bar, 1)
        emu.set_barrier_transaction_bytes(bar, M * K * 2)
        thr = load.get_slice(0)
        emu.copy(load.with_(bar), thr.partition_S(load.get_tma_tensor(a.shape)), thr.partition_D(s16))
        emu.wait_barrier(bar, 0)
        for i in range(M):
            for j in range(K):
                s32[(i, j)] = int(s16[(i, j)])
        emu.tma_store_fence()
        coords = store.get_tma_tensor(out.shape)
        emu.copy(store, store.get_slice(0).partition_S(s32), store.get_slice(0).partition_D(coords))
        emu.copy(add, add.get_slice(0).partition_S(s32), add.get_slice(0).partition_D(coords))
        emu.tma_store_arrive()
        emu.tma_store_wait(0)

    stats = emu.launch(kernel, (1,), a, out)
    assert stats["store"] == stats["reduce"] == K * 4 // (16 << b)
    assert np.array_equal(out, 2 * a.astype(np.uint32))
    emu.unregister(out)


def test_prefetch_counts_atoms(a):
    tma = tk.make_tma_copy(tk.SM90_TMA_LOAD, tk.make_tensor(a), swizzled_layout(3))

    def kernel(a):
        emu.prefetch(tma, tma.get_slice(0).partition_S(tma.get_tma_tensor(a.shape)))

    assert emu.launch(kernel, (1,), a) == {"prefetch": 2}


def test_operand_errors(a):
    sl = tk.make_layout((tk.Int(16), tk.Int(16)), tk.LayoutRight)
    tma = tk.make_tma_copy(tk.SM90_TMA_LOAD, tk.make_tensor(a), sl)

    def no_barrier(a):
        s = emu.shared_tensor(sl, np.uint16)
        thr = tma.get_slice(0)
        src = thr.partition_S(tk.local_tile(tma.get_tma_tensor(a.shape), (tk.Int(16), tk.Int(16)), (0, 0)))
        emu.copy(tma, src, thr.partition_D(s))

    with pytest.raises(emu.EmuError, match="needs an mbarrier"):
        emu.launch(no_barrier, (1,), a)

    def mask_on_plain_load(a):
        s, bar = emu.shared_tensor(sl, np.uint16), emu.shared_barrier()
        emu.initialize_barrier(bar, 1)
        thr = tma.get_slice(0)
        src = thr.partition_S(tk.local_tile(tma.get_tma_tensor(a.shape), (tk.Int(16), tk.Int(16)), (0, 0)))
        emu.copy(emu.with_(tma, bar, 0b1), src, thr.partition_D(s))

    with pytest.raises(emu.TmaUnitError, match="SM90_TMA_LOAD_MULTICAST"):
        emu.launch(mask_on_plain_load, (1,), a)

    def gmem_destination(a):
        bar = emu.shared_barrier()
        emu.initialize_barrier(bar, 1)
        thr = tma.get_slice(0)
        src = thr.partition_S(tk.local_tile(tma.get_tma_tensor(a.shape), (tk.Int(16), tk.Int(16)), (0, 0)))
        emu.copy(tma.with_(bar), src, thr.partition_D(tk.make_tensor(a[:16, :16].copy(), sl)))

    with pytest.raises(emu.EmuError, match="shared-memory pointer"):
        emu.launch(gmem_destination, (1,), a)


def test_with_wraps_atoms_without_their_own():
    class Bare:
        op, tensormap = tk.SM90_TMA_LOAD, None

    bound = emu.with_(Bare(), "bar", 3)
    assert isinstance(bound, emu.BoundCopy) and bound.barrier == "bar" and bound.mask == 3
    assert bound.op is tk.SM90_TMA_LOAD


def test_raw_im2col_load_then_store_copies_the_walk():
    """Device API: an im2col load into shared memory and an .im2col_no_offs store of it through a second map (corners
    inside the tensor) copy exactly the walked pixels; a store through the padded load map traps at issue."""
    from tmakit.tma import DataType, TensorMap

    n, w, c = 2, 8, 8
    x = emu.alloc((n, w, c), np.float32, align=128)
    x[:] = np.arange(x.size, dtype=np.float32).reshape(x.shape) + 1
    y = emu.alloc((n, w, c), np.float32, align=128)
    y[:] = 0

    def nwc(t, lower, upper):
        return TensorMap(DataType.FLOAT32, (c, w, n), (4 * c, 4 * c * w), (), mode="im2col",
                         pixel_box_lower_corner=lower, pixel_box_upper_corner=upper, channels_per_pixel=c,
                         pixels_per_column=6, global_address=t.ctypes.data)

    src, dst, padded = nwc(x, (1,), (-1,)), nwc(y, (1,), (-1,)), nwc(y, (-1,), (0,))

    def kernel(x, y, bad):
        s, bar = emu.shared_array((6, c), np.float32), emu.shared_barrier()
        emu.initialize_barrier(bar, 1)
        emu.set_barrier_transaction_bytes(bar, 6 * c * 4)
        emu.tma_load(src, (0, 4, 0), s, bar, im2col_offsets=(0,))
        emu.wait_barrier(bar, 0)
        emu.tma_store(padded if bad else dst, (0, 4, 0), s)
        emu.tma_store_arrive()
        emu.tma_store_wait(0)

    emu.launch(kernel, (1,), x, y, False)
    walked = [(0, 4), (0, 5), (0, 6), (1, 1), (1, 2), (1, 3)]  # W box 1..6, then image 1
    want = np.zeros_like(y)
    for i, j in walked:
        want[i, j] = x[i, j]
    assert np.array_equal(y, want)
    with pytest.raises(emu.IllegalInstruction, match="reach outside the tensor"):
        emu.launch(kernel, (1,), x, y, True)
    emu.unregister(x)
    emu.unregister(y)


def test_copy_if_issues_only_the_predicated_atom_calls():
    """copy_if(atom, pred, src, dst): the partition's modes after the first give the calls (here the two K tiles
    into two pipeline stages); call i issues its TMA instructions only where pred(i), the skipped stage keeps what
    it held, and the barrier expects the issued calls' bytes only. TrivialPredTensor issues them all, as copy."""
    atom = tk.composition(tk.Swizzle(1, 3, 3), tk.make_layout((tk.Int(8), tk.Int(16)), tk.LayoutRight))
    sl, sl2 = (tk.tile_to_shape(atom, s) for s in ((tk.Int(M), tk.Int(K)), (tk.Int(M), tk.Int(K), tk.Int(2))))
    a = emu.alloc((M, 2 * K), np.uint16, align=1024)
    a[:] = np.random.default_rng(4).integers(0, 2**15, size=a.shape, dtype=np.uint16)
    tma = tk.make_tma_copy(tk.SM90_TMA_LOAD, tk.make_tensor(a), sl)
    g = tk.local_tile(tma.get_tma_tensor(a.shape), (tk.Int(M), tk.Int(K)), (0, tk._))
    got = np.zeros((2, M, K), np.uint16)

    def kernel(a, pred, nbytes):
        s, bar = emu.shared_tensor(sl2, np.uint16), emu.shared_barrier()
        for k in range(2):
            for i in range(M):
                for j in range(K):
                    s[(i, j, k)] = 0x8EEF
        emu.fence_view_async_shared()  # the generic writes before the TMA's async-proxy ones
        emu.initialize_barrier(bar, 1)
        emu.set_barrier_transaction_bytes(bar, nbytes)
        thr = tma.get_slice(0)
        emu.copy_if(tma.with_(bar), pred, thr.partition_S(g), thr.partition_D(s))
        emu.wait_barrier(bar, 0)
        for k in range(2):
            for i in range(M):
                for j in range(K):
                    got[k, i, j] = s[(i, j, k)]

    per_tile = K * 2 // 32  # TMA atoms per K tile: one per 32-byte swizzle span of a row
    try:
        assert emu.launch(kernel, (1,), a, lambda i: i == 1, M * K * 2) == {"load": per_tile}
        assert np.all(got[0] == 0x8EEF) and np.array_equal(got[1], a[:, K:])
        assert emu.launch(kernel, (1,), a, emu.TrivialPredTensor(), 2 * M * K * 2) == {"load": 2 * per_tile}
        assert np.array_equal(got[0], a[:, :K]) and np.array_equal(got[1], a[:, K:])
    finally:
        emu.unregister(a)


def test_copy_if_elementwise_and_bad_predicates():
    src, dst = np.arange(12, dtype=np.int32), np.zeros(12, np.int32)
    keep = np.arange(12) % 3 == 0
    emu.copy_if(tk.make_tensor(keep), tk.make_tensor(src), tk.make_tensor(dst))
    assert np.array_equal(dst, np.where(keep, src, 0))
    with pytest.raises(emu.EmuError, match="no entry 4"):
        emu.copy_if(np.ones(4, bool), tk.make_tensor(src), tk.make_tensor(dst))
    with pytest.raises(emu.EmuError, match="12 elements .* destination 6"):
        emu.copy_if(emu.TrivialPredTensor(), tk.make_tensor(src), tk.make_tensor(dst[:6]))
    with pytest.raises(emu.EmuError, match="takes \\(pred, src, dst\\)"):
        emu.copy_if(tk.make_tensor(src), tk.make_tensor(dst))
