"""Memory safety and proxy tracking of the emulator: every shared access is checked against its allocation, shared
addresses never wrap, and generic writes are tracked as writes (not as changed values)."""

import numpy as np
import pytest

import tmakit as tk
from tmakit import emu
from tmakit.tma.tensormap import DataType, TensorMap


def half_map(arr):
    """Rows 8 at a time of a 16x16 fp32 tensor: 512-byte boxes."""
    return TensorMap(DataType.FLOAT32, (16, 16), (64,), (16, 8), global_address=arr.ctypes.data)


def run(kernel, *args, **kw):
    return emu.launch(kernel, (1,), *args, **kw)


def test_copy_into_a_partition_smaller_than_the_box_is_refused():
    a = np.arange(6 * 8, dtype=np.float32).reshape(6, 8)
    g = tk.make_tensor(a, tk.make_layout((6, 8), (8, 1)))
    tma = tk.make_tma_copy(tk.SM90_TMA_LOAD, g, tk.make_layout((tk.Int(2), tk.Int(4)), tk.LayoutRight))
    small = tk.make_layout((tk.Int(1), tk.Int(4)), tk.LayoutRight)
    seen = []

    def kernel(tma, g):
        smem = emu.shared_tensor(small, np.float32)
        nxt = emu.shared_array(32, np.float32)
        bar = emu.shared_barrier()
        emu.initialize_barrier(bar, 1)
        emu.set_barrier_transaction_bytes(bar, 32)
        tile = tk.local_tile(tma.get_tma_tensor(g.shape), (tk.Int(2), tk.Int(4)), (0, 0))
        thr = tma.get_slice(0)
        emu.copy(tma.with_(bar), thr.partition_S(tile), thr.partition_D(smem))
        emu.wait_barrier(bar, 0)
        seen.append(nxt[:4].copy())

    with pytest.raises(emu.IllegalAddress) as e:
        emu.launch(kernel, (1,), tma, g)
    msg = str(e.value)
    assert "CTA rank 0 block (0,0,0)" in msg and "TMA load box" in msg
    assert "ends 16 bytes past the end of shared allocation #0 [0x0, 0x10) (16 bytes)" in msg
    assert seen == []


def test_raw_load_past_its_allocation_names_the_allocation():
    a = np.arange(256, dtype=np.float32).reshape(16, 16)
    tm = half_map(a)

    def kernel(a):
        emu.shared_array(32)  # allocation #0
        s, b = emu.shared_array((4, 16)), emu.shared_barrier()
        emu.initialize_barrier(b, 1)
        emu.set_barrier_transaction_bytes(b, 512)
        emu.tma_load(tm, (0, 0), s, b)

    with pytest.raises(emu.IllegalAddress, match=r"ends 256 bytes past the end of shared allocation #1 "
                                                 r"\[0x80, 0x180\) \(256 bytes\)"):
        run(kernel, a)


def test_store_source_past_its_allocation_is_refused():
    a = np.zeros((16, 16), np.float32)
    tm = half_map(a)

    def kernel(a):
        s = emu.shared_array((2, 16))
        emu.shared_array((8, 16))
        emu.fence_proxy_async()
        emu.tma_store(tm, (0, 0), s)

    with pytest.raises(emu.IllegalAddress, match="TMA store source box .* past the end of shared allocation #0"):
        run(kernel, a)


@pytest.mark.parametrize("body, match", [
    (lambda: emu.make_smem_ptr(0, np.float32).__setitem__(-2, 1.0), "outside the .*shared memory.*do not wrap"),
    (lambda: emu.make_smem_ptr(0, np.float32)[-1], "outside the .*shared memory"),
    (lambda: emu.make_smem_ptr(-8, np.float32), "shared address -8 is outside 0.."),
    (lambda: emu.shared_alloc(-4096), "allocation size .* -4096 is outside 0.."),
    (lambda: emu.shared_array((-4, 4)), r"shared_array shape \(-4, 4\): -4|shape .* -4 is outside"),
    (lambda: emu.shared_alloc(64, align=3), "alignment 3 is not a power of two"),
    (lambda: emu.shared_alloc(64, align=0), "alignment 0 is outside 1.."),
    (lambda: emu.make_smem_ptr(227 * 1024 - 4, np.float32)[1], "outside the 232448-byte shared memory"),
    (lambda: emu.shared_barrier(-1), "count -1 is outside 0.."),
])
def test_shared_addresses_never_wrap(body, match):
    with pytest.raises(emu.IllegalAddress, match=match):
        run(body)


def test_pointer_access_past_its_allocation():
    def kernel():
        p = emu.shared_alloc(16, dtype=np.float32)
        emu.shared_alloc(16)
        p[3] = 1.0
        p[4] = 2.0

    with pytest.raises(emu.IllegalAddress, match=r"store of element 4 .* past the end of shared allocation #0"):
        run(kernel)


def test_a_fitting_access_is_untouched():
    def kernel(out):
        p = emu.shared_alloc(16, dtype=np.float32)
        p[3] = 5.0
        out.append(float(p[3]) + float(emu.make_smem_ptr(1024, np.float32)[0]))  # raw address, no allocation

    out = []
    run(kernel, out)
    assert out == [5.0]


def test_unchanged_generic_writes_before_a_store_are_a_race():
    """Zeros written over fresh (zero) shared memory leave every byte as it was; they are still generic writes."""
    a = np.ones((16, 16), np.float32)
    tm = half_map(a)

    def kernel(a, fence):
        s = emu.shared_array((8, 16))
        s[:] = 0
        if fence:
            emu.fence_proxy_async()
        emu.tma_store(tm, (0, 0), s)
        emu.tma_store_arrive()
        emu.tma_store_wait(0)

    with pytest.raises(emu.RaceError, match="wrote shared byte 0x0 with generic stores"):
        run(kernel, a, False)
    run(kernel, a, True)
    assert (a[:8] == 0).all()


@pytest.mark.parametrize("write", [
    lambda s, p: s.fill(0),
    lambda s, p: s.__iadd__(0),
    lambda s, p: np.copyto(s[2:], 0),
    lambda s, p: np.multiply(s, 1, out=s),
    lambda s, p: p.__setitem__(7, 0.0),
    lambda s, p: s[1:2].__setitem__(slice(None), 0),
])
def test_every_kind_of_generic_write_is_tracked(write):
    a = np.ones((16, 16), np.float32)
    tm = half_map(a)

    def kernel(a):
        s = emu.shared_array((8, 16))
        write(s, emu.make_smem_ptr(0, np.float32))
        emu.tma_store(tm, (0, 0), s)
        emu.tma_store_arrive()
        emu.tma_store_wait(0)

    with pytest.raises(emu.RaceError, match="without fence.proxy.async"):
        run(kernel, a)


def test_generic_writes_outside_the_box_are_not_a_race():
    a = np.ones((16, 16), np.float32)
    tm = half_map(a)

    def kernel(a):
        s = emu.shared_array((8, 16))
        other = emu.shared_array(16)
        other[:] = 0
        emu.tma_store(tm, (0, 0), s)
        emu.tma_store_arrive()
        emu.tma_store_wait(0)
        arith = s + 1
        assert type(arith) is np.ndarray and type(s[0]) is emu.SharedArray

    run(kernel, a)
    assert (a[:8] == 0).all()


# --- global allocations ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("call, match", [
    (lambda: emu.alloc((-1, 4)), r"extent -1 is outside 0.."),
    (lambda: emu.alloc((2.5, 4)), "must be an integer, got 2.5"),
    (lambda: emu.alloc((4, 4), align=0), "alignment .* 0 is outside 1.."),
    (lambda: emu.alloc((4, 4), align=96), "96 is not a power of two"),
    (lambda: emu.alloc((4, 4), None), "needs a dtype"),
    (lambda: emu.alloc((4, 4), "no-such-type"), "is not a numpy dtype"),
])
def test_alloc_arguments_are_checked(call, match):
    with pytest.raises(emu.LaunchError, match=match):
        call()


def test_dropped_allocations_are_freed():
    import gc
    import weakref

    mem = emu.GlobalMemory()
    refs = []
    for _ in range(200):
        a = mem.alloc((1024, 1024), np.float32)  # 4 MiB each
        refs.append(weakref.ref(a.base if a.base is not None else a))
    del a
    gc.collect()
    assert all(r() is None for r in refs) and len(mem) == 0


def test_a_live_allocation_stays_registered_and_resolves():
    mem = emu.GlobalMemory()
    a = mem.alloc((4, 8), np.float32, align=128)
    assert a.ctypes.data % 128 == 0 and len(mem) == 1
    a[1, 0] = 3.0
    assert mem.resolve(a.ctypes.data + 32)[:4].view(np.float32)[0] == 3.0
    mem.unregister(a)
    with pytest.raises(emu.IllegalAddress, match="not in any registered buffer"):
        mem.resolve(a.ctypes.data)


def test_a_misaligned_array_for_a_swizzled_copy_points_at_emu_alloc():
    I = tk.Int
    smem = tk.composition(tk.Swizzle(3, 2, 3), tk.make_layout((I(8), I(32)), tk.LayoutRight))
    buf = emu.alloc(64 * 64 + 4, np.float32, align=128)
    misaligned = buf[4:].reshape(64, 64)  # 16 bytes past a 128-byte boundary, like half of all numpy arrays
    with pytest.raises(tk.TmaDescriptorError, match=r"swizzle128.*tk\.emu\.alloc\(shape, dtype, align=128\)"):
        tk.make_tma_copy(tk.SM90_TMA_LOAD, tk.make_tensor(misaligned), smem)
    aligned = emu.alloc((64, 64), np.float32, align=128)
    tk.make_tma_copy(tk.SM90_TMA_LOAD, tk.make_tensor(aligned), smem)
