"""Tensor maps in emulated memory: tensormap.replace / cp_fenceproxy / fence.proxy.tensormap acquire /
prefetch.tensormap, TMA through a descriptor pointer, and the two descriptor-update hazards."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tmakit as tk
from tmakit import emu
from tmakit.emu import device_tensormap as dt
from tmakit.emu.tensormap_memory import TensorMapPtr, read_tensormap, write_tensormap

ROWS, COLS = 8, 16  # each matrix; one box covers it
BOX_BYTES = ROWS * COLS * 4


def tmap_of(a: np.ndarray) -> tk.TensorMap:
    return tk.TensorMap(np.float32, (a.shape[1], a.shape[0]), (a.shape[1] * 4,), (COLS, ROWS),
                        global_address=a.ctypes.data)


@pytest.fixture
def mats():
    a0 = emu.alloc((ROWS, COLS), np.float32)
    a1 = emu.alloc((ROWS, COLS), np.float32)
    a0[:] = 1
    a1[:] = 2
    slots = emu.alloc((256,), np.uint8, align=128)
    ptr = write_tensormap(slots, tmap_of(a0), name="A of group 0")
    return a0, a1, slots, ptr


def setup_cta():
    bar = emu.shared_barrier()
    dst = emu.shared_alloc(BOX_BYTES, 128, np.float32)
    sdesc = emu.shared_alloc(128, 128)
    emu.initialize_barrier(bar, 1)
    emu.fence_barrier_init()
    return bar, dst, sdesc


def load(ptr, dst, bar, phase) -> np.ndarray:
    emu.set_barrier_transaction_bytes(bar, BOX_BYTES)
    emu.tma_load(ptr, (0, 0), dst, bar)
    emu.wait_barrier(bar, phase)
    return np.array(dst.view((ROWS, COLS)))


def publish(ptr, sdesc, tmap, address, name="A of group 1"):
    dt.tensormap_copy_to_shared(sdesc, tmap)
    dt.tensormap_replace_global_address(sdesc, address)
    dt.tensormap_cp_fenceproxy(ptr, sdesc, name=name)


def run(kernel, *args, strict=True):
    seen = {}
    emu.launch(kernel, (1, 1, 1), seen, *args, strict=strict)
    return seen


# ------------------------------------------------------------------ the correct flow
def clean_kernel(seen, a0, a1, ptr, tmap):
    bar, dst, sdesc = setup_cta()
    dt.prefetch_tensormap(ptr)
    seen["g0"] = load(ptr, dst, bar, 0)
    publish(ptr, sdesc, tmap, a1.ctypes.data)
    dt.tensormap_acquire(ptr)
    seen["g1"] = load(ptr, dst, bar, 1)


def test_replace_publish_acquire_then_tma_reads_the_new_group(mats):
    a0, a1, _slots, ptr = mats
    seen = run(clean_kernel, a0, a1, ptr, tmap_of(a0))
    assert (seen["g0"] == 1).all() and (seen["g1"] == 2).all()
    assert read_tensormap(ptr).global_address == a1.ctypes.data


# ------------------------------------------------------------------ hazard (a): missing acquire / release
def no_acquire_kernel(seen, a0, a1, ptr, tmap):
    bar, dst, sdesc = setup_cta()
    seen["g0"] = load(ptr, dst, bar, 0)  # caches the group-0 descriptor
    publish(ptr, sdesc, tmap, a1.ctypes.data)
    seen["g1"] = load(ptr, dst, bar, 1)  # no tensormap_acquire


def test_missing_acquire_is_reported_with_cta_descriptor_and_fence(mats):
    a0, a1, _slots, ptr = mats
    with pytest.raises(emu.RaceError) as e:
        run(no_acquire_kernel, a0, a1, ptr, tmap_of(a0))
    msg = str(e.value)
    assert "CTA rank 0 block (0,0,0)" in msg
    assert f"@{ptr.address:#x} (A of group 1)" in msg
    assert "the acquire fence in the user" in msg and "fence.proxy.tensormap::generic.acquire" in msg
    assert "stale version 0" in msg


def test_missing_acquire_uses_the_stale_cached_descriptor_when_not_strict(mats):
    a0, a1, _slots, ptr = mats
    with pytest.warns(emu.EmuWarning, match="acquire fence"):
        seen = run(no_acquire_kernel, a0, a1, ptr, tmap_of(a0), strict=False)
    assert (seen["g1"] == 1).all()  # group 0's data: the bug is visible in the result


def stale_prefetch_kernel(seen, a0, a1, ptr, tmap):
    bar, dst, sdesc = setup_cta()
    dt.prefetch_tensormap(ptr)  # group 0 in the descriptor cache
    publish(ptr, sdesc, tmap, a1.ctypes.data)
    seen["g1"] = load(ptr, dst, bar, 0)


def test_prefetched_descriptor_goes_stale_without_acquire(mats):
    a0, a1, _slots, ptr = mats
    with pytest.warns(emu.EmuWarning, match="stale version 0"):
        seen = run(stale_prefetch_kernel, a0, a1, ptr, tmap_of(a0), strict=False)
    assert (seen["g1"] == 1).all()


def in_place_kernel(seen, a1, ptr, release):
    bar, dst, _sdesc = setup_cta()
    dt.tma_descriptor_replace_addr_in_global_mem(ptr, a1.ctypes.data)  # .global: no release
    if release:
        dt.tma_descriptor_fence_release()
    dt.tma_descriptor_fence_acquire(ptr)
    seen["g1"] = load(ptr, dst, bar, 0)


def test_missing_release_names_the_writer(mats):
    _a0, a1, _slots, ptr = mats
    with pytest.raises(emu.RaceError, match="the release fence in the writer: CTA rank 0 block"):
        run(in_place_kernel, a1, ptr, False)
    write_tensormap(ptr, tmap_of(_a0))
    assert (run(in_place_kernel, a1, ptr, True)["g1"] == 2).all()


def cluster_kernel(seen, a1, ptr, tmap, acquire):
    bar, dst, sdesc = setup_cta()
    rank = emu.block_rank_in_cluster()
    if rank == 0:
        publish(ptr, sdesc, tmap, a1.ctypes.data)
    emu.cluster_sync()
    if rank == 1:
        if acquire:
            dt.tensormap_acquire(ptr)
        seen["g1"] = load(ptr, dst, bar, 0)
    emu.cluster_sync()


def test_consumer_cta_needs_its_own_acquire(mats):
    a0, a1, _slots, ptr = mats
    with pytest.raises(emu.RaceError, match=r"CTA rank 1 block \(1,0,0\) uses .* the acquire fence in the user"):
        emu.launch(cluster_kernel, (2, 1, 1), (2, 1, 1), {}, a1, ptr, tmap_of(a0), False)
    write_tensormap(ptr, tmap_of(a0))
    seen = {}
    emu.launch(cluster_kernel, (2, 1, 1), (2, 1, 1), seen, a1, ptr, tmap_of(a0), True)
    assert (seen["g1"] == 2).all()


# ------------------------------------------------------------------ hazard (b): rewrite while a TMA may read it
def in_flight_kernel(seen, a0, a1, ptr, tmap, wait_first):
    bar, dst, sdesc = setup_cta()
    emu.set_barrier_transaction_bytes(bar, BOX_BYTES)
    emu.tma_load(ptr, (0, 0), dst, bar)  # group 0's load
    if wait_first:
        emu.wait_barrier(bar, 0)
    publish(ptr, sdesc, tmap, a1.ctypes.data)  # group 1's descriptor into the same slot
    if not wait_first:
        emu.wait_barrier(bar, 0)
    seen["g0"] = np.array(dst.view((ROWS, COLS)))


def test_rewrite_while_load_in_flight_is_reported(mats):
    a0, a1, _slots, ptr = mats
    with pytest.raises(emu.RaceError) as e:
        run(in_flight_kernel, a0, a1, ptr, tmap_of(a0), False)
    msg = str(e.value)
    assert "CTA rank 0 block (0,0,0) rewrites the tensor map" in msg and f"@{ptr.address:#x}" in msg
    assert "held A of group 0" in msg and "may still be in flight" in msg
    assert "no CTA has waited for phase 0 of mbarrier" in msg


def test_rewrite_in_flight_lets_the_load_fetch_the_new_descriptor_when_not_strict(mats):
    a0, a1, _slots, ptr = mats
    with pytest.warns(emu.EmuWarning, match="may still be in flight"):
        seen = run(in_flight_kernel, a0, a1, ptr, tmap_of(a0), False, strict=False)
    assert (seen["g0"] == 2).all()  # group 0's tile holds group 1's data


def test_rewrite_after_the_wait_is_clean(mats):
    a0, a1, _slots, ptr = mats
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        seen = run(in_flight_kernel, a0, a1, ptr, tmap_of(a0), True)
    assert (seen["g0"] == 1).all()


def store_kernel(seen, c0, c1, ptr, tmap, wait_first):
    _bar, _dst, sdesc = setup_cta()
    src = emu.shared_array((ROWS, COLS), np.float32)
    src[:] = 7
    emu.tma_store_fence()
    emu.tma_store(ptr, (0, 0), src)
    emu.tma_store_arrive()
    if wait_first:
        emu.tma_store_wait(0)
    publish(ptr, sdesc, tmap, c1.ctypes.data, name="C of group 1")
    emu.tma_store_wait(0)


def test_rewrite_while_store_in_flight_is_reported(mats):
    c0, c1, _slots, ptr = mats
    with pytest.raises(emu.RaceError, match="its bulk group was not waited for"):
        run(store_kernel, c0, c1, ptr, tmap_of(c0), False)
    write_tensormap(ptr, tmap_of(c0))
    run(store_kernel, c0, c1, ptr, tmap_of(c0), True)
    assert (c0 == 7).all()


# ------------------------------------------------------------------ tensormap.replace fields
def fields_kernel(seen, tmap):
    sdesc = emu.shared_alloc(128, 128)
    dt.tensormap_copy_to_shared(sdesc, tmap)
    dt.tensormap_replace_global_dim(sdesc, 24, 0)
    dt.tensormap_replace_global_dim(sdesc, 5, 1)
    dt.tensormap_replace_global_stride(sdesc, 128, 0)
    dt.tensormap_replace_box_dim(sdesc, 8, 0)
    dt.tensormap_replace_element_stride(sdesc, 2, 1)
    dt.tensormap_replace_elemtype(sdesc, 10)  # PTX .bf16
    dt.tensormap_replace_swizzle_mode(sdesc, 3)
    dt.tensormap_replace_fill_mode(sdesc, 1)
    dt.tensormap_replace_interleave_layout(sdesc, 0)
    seen["edited"] = dt.shared_tensormap(sdesc)
    dt.tensormap_replace_rank(sdesc, 2)
    seen["rank3"] = dt.shared_tensormap(sdesc)
    dt.tma_descriptor_replace_dims_strides_in_shared_mem(sdesc, (16, 4, 3, 1, 1), (1, 64, 256, 0, 0))
    seen["cute"] = dt.shared_tensormap(sdesc)


def test_replace_every_field_of_the_header(mats):
    a0 = mats[0]
    seen = run(fields_kernel, tmap_of(a0))
    e = seen["edited"]
    assert e.global_dim == (24, 5) and e.global_strides == (128,) and e.box_dim == (8, ROWS)
    assert e.element_strides == (1, 2) and e.dtype == tk.DataType.BFLOAT16
    assert e.swizzle == tk.SwizzleMode.B128 and e.oob_fill == tk.OobFill.NAN_REQUEST_ZERO_FMA
    r3 = seen["rank3"]
    assert r3.rank == 3 and r3.global_dim == (24, 5, 1) and len(r3.global_strides) == 2
    assert seen["cute"].global_dim == (16, 4, 3) and seen["cute"].global_strides == (64, 256)


@pytest.mark.parametrize(("body", "err", "match"), [
    (lambda s, p: dt.tensormap_replace_global_dim(s, 4, 0), emu.IllegalInstruction, "no tensor map in shared"),
    (lambda s, p: dt.tensormap_copy_to_shared(s + 64, p), emu.IllegalInstruction, "not 128-byte aligned"),
    (lambda s, p: (dt.tensormap_copy_to_shared(s, p), dt.tensormap_replace_global_dim(s, 4, 2)),
     emu.TmaUnitError, "ord"),
    (lambda s, p: (dt.tensormap_copy_to_shared(s, p), dt.tensormap_cp_fenceproxy(p + 5, s)),
     emu.IllegalAddress, "registered"),
    (lambda s, p: emu.tma_load(TensorMapPtr(p.address + 128), (0, 0), s, s), emu.IllegalInstruction,
     "no tensor map at global"),
])
def test_bad_descriptor_operations(mats, body, err, match):
    ptr = mats[3]

    def kernel(seen):
        body(emu.shared_alloc(256, 128), ptr)

    with pytest.raises(err, match=match):
        emu.launch(kernel, (1, 1, 1), {})


def test_write_tensormap_checks_alignment(mats):
    slots = mats[2]
    with pytest.raises(emu.IllegalInstruction, match="128-byte aligned"):
        write_tensormap(slots.ctypes.data + 64, tmap_of(mats[0]))


def test_a_freed_buffer_takes_its_descriptors_along(mats):
    import gc

    buf = emu.alloc((128,), np.uint8, align=128)
    ptr = write_tensormap(buf, tmap_of(mats[0]))
    assert read_tensormap(ptr).global_address == mats[0].ctypes.data
    del buf
    gc.collect()
    with pytest.raises(emu.IllegalInstruction, match="no tensor map at global"):
        read_tensormap(ptr)  # the address may now belong to another array
