"""The non-tensor bulk copy: CuTe's SM90_BULK_COPY_AUTO dispatch on the host, cp.async.bulk in the emulator, and
the device header's wrappers compiled for sm_90a."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tmakit as tk
from tmakit import emu
from tmakit.emu.bulk import bulk_load, bulk_prefetch, bulk_store

I = tk.Int  # noqa: E741 - CuTe's Int<N>


class FakeSmem:
    """A shared pointer for host-side planning (what tk.emu's SmemPtr exposes)."""

    def __init__(self, address, dtype=np.float32):
        self.smem, self.address, self.dtype = None, address, np.dtype(dtype)


def gtile(a, tile, coord):
    g = tk.make_tensor(a, tk.make_layout(a.shape, tk.LayoutRight))
    return tk.local_tile(g, tuple(I(t) for t in tile), coord)


def stile(tile, address=0, dtype=np.float32, major=tk.LayoutRight):
    return tk.make_tensor(FakeSmem(address, dtype), tk.make_layout(tuple(I(t) for t in tile), major))


# ------------------------------------------------------------------ host: CuTe's dispatch
def test_g2s_row_major_tile_is_one_bulk_copy_per_row():
    a = tk.emu.alloc((16, 64), np.float32)
    plan = tk.bulk_copy_plan(tk.SM90_BULK_COPY_AUTO.with_("bar"), gtile(a, (4, 32), (1, 1)), stile((4, 32), 1024))
    assert plan.atom.op is tk.SM90_BULK_COPY_G2S and plan.atom.vec_bits == 32 * 32
    assert str(plan.tiler) == "_32:_4"  # the 32 contiguous elements of a row, in (4,32) coordinates
    base = a.ctypes.data + (4 * 64 + 32) * 4
    assert [i.src_address - base for i in plan.instructions] == [0, 256, 512, 768]
    assert [i.dst_address for i in plan.instructions] == [1024, 1152, 1280, 1408]
    assert {i.nbytes for i in plan.instructions} == {128}
    assert str(plan.atom).startswith("Copy_Atom<Copy_Traits<SM90_BULK_COPY_G2S, _1024>, 32b>")
    assert plan.atom.op.ptx == "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"


def test_s2g_selected_by_memory_spaces_and_needs_no_barrier():
    a = tk.emu.alloc((8, 32), np.float32)
    plan = tk.bulk_copy_plan(tk.SM90_BULK_COPY_AUTO, stile((8, 32)), gtile(a, (8, 32), (0, 0)))
    assert plan.atom.op is tk.SM90_BULK_COPY_S2G
    # the global row stride is dynamic, so (as in CuTe) only a row is a provably common vector
    assert [i.nbytes for i in plan.instructions] == [128] * 8
    static = tk.make_tensor(a, tk.make_layout((I(8), I(32)), tk.LayoutRight))
    plan = tk.bulk_copy_plan(tk.SM90_BULK_COPY_AUTO, stile((8, 32)), static)
    assert [i.nbytes for i in plan.instructions] == [8 * 32 * 4]  # static and contiguous: one instruction
    assert plan.atom.op.ptx == "cp.async.bulk.global.shared::cta.bulk_group"


@pytest.mark.parametrize(("make", "rule"), [
    (lambda a: (gtile(a, (4, 32), (0, 0)), stile((4, 32), major=tk.LayoutLeft)), "bulk.vector128"),
    (lambda a: (gtile(a, (4, 2), (0, 0)), stile((4, 2))), "bulk.vector128"),  # 8-byte rows
    (lambda a: (gtile(a, (4, 6), (0, 0)), stile((4, 6))), "bulk.size16"),  # 24-byte rows
    (lambda a: (gtile(a, (4, 8), (0, 1)), stile((4, 8), 8)), "bulk.align16"),  # smem start at 8 bytes
    (lambda a: (gtile(a, (4, 32), (0, 0)), stile((4, 32), dtype=np.int32)), "bulk.value_type"),
    (lambda a: (gtile(a, (4, 32), (0, 0)), gtile(a, (4, 32), (1, 0))), "bulk.direction"),
    (lambda a: (gtile(a, (4, 32), (0, 0)), stile((2, 32))), "bulk.size"),
])
def test_named_errors(make, rule):
    a = tk.emu.alloc((16, 64), np.float32)
    src, dst = make(a)
    with pytest.raises(tk.TmaDescriptorError) as e:
        tk.bulk_copy_plan(tk.SM90_BULK_COPY_AUTO.with_("bar"), src, dst)
    assert e.value.rule == rule and "Fix:" in str(e.value)


def test_g2s_without_barrier_is_refused():
    a = tk.emu.alloc((4, 32), np.float32)
    with pytest.raises(tk.TmaDescriptorError, match=r"bulk.mbarrier"):
        tk.bulk_copy_plan(tk.SM90_BULK_COPY_AUTO, gtile(a, (4, 32), (0, 0)), stile((4, 32)))


def test_misaligned_global_row_stride_is_refused():
    a = tk.emu.alloc((8, 36), np.float16)  # 72-byte rows: row 1 starts 8 bytes past a 16-byte boundary
    with pytest.raises(tk.TmaDescriptorError, match=r"bulk.align16"):
        tk.bulk_copy_plan(tk.SM90_BULK_COPY_AUTO.with_("bar"), gtile(a, (2, 8), (0, 0)),
                          stile((2, 8), dtype=np.float16))


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(1, 4), cols=st.sampled_from([4, 8, 12, 16, 32]), pad=st.sampled_from([0, 4, 8]),
       bits=st.sampled_from([16, 32]))
def test_plan_moves_every_element_exactly_once(rows, cols, pad, bits):
    """Property: the instructions cover the source bytes of the tile one to one with the destination bytes."""
    dt = np.float16 if bits == 16 else np.float32
    a = tk.emu.alloc((rows, cols + pad), dt)
    src, dst = gtile(a, (rows, cols), (0, 0)), stile((rows, cols), 0, dt)
    vec = cols * bits // 8  # the global row stride is dynamic: one row is the common vector
    pitch = (cols + pad) * bits // 8
    rule = ("bulk.vector128" if vec < 16 else "bulk.size16" if vec % 16 else
            "bulk.align16" if rows > 1 and pitch % 16 else None)
    if rule is not None:
        with pytest.raises(tk.TmaDescriptorError) as e:
            tk.bulk_copy_plan(tk.SM90_BULK_COPY_AUTO.with_("bar"), src, dst)
        assert e.value.rule == rule
        return
    plan = tk.bulk_copy_plan(tk.SM90_BULK_COPY_AUTO.with_("bar"), src, dst)
    assert len(plan.instructions) == rows
    esz = bits // 8
    got = sorted((i.src_address - a.ctypes.data + k, i.dst_address + k)
                 for i in plan.instructions for k in range(i.nbytes))
    want = sorted(((r * (cols + pad) + c) * esz + k, (r * cols + c) * esz + k)
                  for r in range(rows) for c in range(cols) for k in range(esz))
    assert got == want


# ------------------------------------------------------------------ emulator: cp.async.bulk
def round_trip_kernel(src, out, tile):
    bar = emu.shared_barrier()
    s = emu.shared_tensor(tk.make_layout((I(tile[0]), I(tile[1])), tk.LayoutRight), np.float32)
    emu.initialize_barrier(bar, 1)
    emu.fence_barrier_init()
    b = emu.block_idx()
    emu.set_barrier_transaction_bytes(bar, tile[0] * tile[1] * 4)
    emu.copy(tk.SM90_BULK_COPY_AUTO.with_(bar), gtile(src, tile, (b.x, b.y)), s)
    emu.wait_barrier(bar, 0)
    view = s.iterator.view(tile)
    view[:] = view * 2 + 1
    emu.fence_view_async_shared()
    emu.copy(tk.SM90_BULK_COPY_AUTO, s, gtile(out, tile, (b.x, b.y)))
    emu.tma_store_arrive()
    emu.tma_store_wait(0)


def test_emulator_round_trip_through_the_auto_atom():
    """(4, 32) tiles of an (8, 64) matrix: rows of a tile are not contiguous in global, so one bulk copy per row."""
    src = np.arange(8 * 64, dtype=np.float32).reshape(8, 64)
    out = np.zeros_like(src)
    stats = emu.launch(round_trip_kernel, (2, 2, 1), src, out, (4, 32))
    assert np.array_equal(out, src * 2 + 1)
    assert stats["bulk_load"] == 4 * 4 and stats["bulk_store"] == 4 * 4


def store_reuse_kernel(out, wait_before_reuse):
    s = emu.shared_array((32,), np.float32)
    s[:] = 1
    emu.fence_view_async_shared()
    bulk_store(s, out, 128)
    emu.commit_group()
    if wait_before_reuse:
        emu.wait_group(0, read=True)
    s[:] = 2  # reuse the source buffer
    emu.wait_group(0, read=True)


def test_store_source_reused_before_wait_group_read_is_a_race():
    out = np.zeros(32, np.float32)
    with pytest.raises(emu.RaceError, match="overwrote the source"):
        emu.launch(store_reuse_kernel, (1, 1, 1), out, False)
    out[:] = 0
    emu.launch(store_reuse_kernel, (1, 1, 1), out, True)
    assert (out == 1).all()


def unfenced_kernel(out):
    s = emu.shared_array((32,), np.float32)
    s[:] = 3
    bulk_store(s, out, 128)
    emu.tma_store_arrive()
    emu.tma_store_wait(0)


def test_store_of_unfenced_generic_writes_is_a_race():
    with pytest.raises(emu.RaceError, match="fence.proxy.async"):
        emu.launch(unfenced_kernel, (1, 1, 1), np.zeros(32, np.float32))


def raw_kernel(src, nbytes, shift, prefetch):
    bar = emu.shared_barrier()
    s = emu.shared_alloc(256)
    emu.initialize_barrier(bar, 1)
    if prefetch:
        bulk_prefetch(src, nbytes)
        return
    emu.set_barrier_transaction_bytes(bar, nbytes)
    bulk_load(src.ctypes.data + shift, bar, s, nbytes)
    emu.wait_barrier(bar, 0)


@pytest.mark.parametrize(("nbytes", "shift", "prefetch", "match"), [
    (24, 0, False, "not a multiple of 16"),
    (32, 8, False, "not 16-byte aligned"),
    (256, 128, False, "past the end of the registered buffer"),
    (24, 0, True, "not a multiple of 16"),
])
def test_raw_bulk_errors(nbytes, shift, prefetch, match):
    src = emu.alloc((64,), np.float32)
    with pytest.raises(emu.EmuError, match=match):
        emu.launch(raw_kernel, (1, 1, 1), src, nbytes, shift, prefetch)


def test_raw_bulk_load_completes_tx_on_its_barrier():
    src = emu.alloc((64,), np.float32)
    stats = emu.launch(raw_kernel, (1, 1, 1), src, 256, 0, False)
    assert stats["bulk_load"] == 1


# ------------------------------------------------------------------ device header
def test_bulk_header_compiles_for_sm90a_and_shows_ublkcp(tmp_path, monkeypatch):
    pytest.importorskip("cuda.bindings.nvrtc")
    from tmakit import cuda as tkc
    from tmakit.cuda import sass

    monkeypatch.setenv("TMAKIT_CACHE_DIR", str(tmp_path / "cache"))
    src = r"""
#include <tmakit/bulk.cuh>
using namespace tmakit;
extern "C" __global__ void bulk(const float* in, float* out, u16 mask) {
  __shared__ __align__(128) float buf[256];
  __shared__ __align__(8) u64 bar;
  if (threadIdx.x == 0) {
    bulk_prefetch_l2(in, 1024);
    bulk_copy_g2s(smem_u32(buf), in, 1024, smem_u32(&bar));
    bulk_copy_g2s_mc(smem_u32(buf), in, 512, smem_u32(&bar), mask);
    bulk_copy_s2g(out, smem_u32(buf), 1024);
    bulk_commit_group();
    bulk_wait_group_read<0>();
  }
}
"""
    ops = sass.opcodes(tkc.compile(src, "bulk.cu", cache=False).cubin)
    assert ops["UBLKCP"] == 3  # G2S, G2S multicast, S2G
    assert ops["UBLKPF"] == 1
