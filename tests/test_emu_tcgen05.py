"""The tcgen05 emulator (TMEM, tcgen05.mma / commit / ld / st): random UMMA problems against numpy, the TMEM
allocator's rules, the tcgen05.ld shapes, the 2-SM TMA load."""

from __future__ import annotations

import numpy as np
import pytest

from tmakit import emu
from tmakit.emu.device_tcgen05 import fragment
from umma_programs import ELEM, SPAN, Problem


def reference(a: np.ndarray, b: np.ndarray, kblk: int) -> np.ndarray:
    """The emulator's documented order, written independently: per K-block, exact products summed in float64 in
    increasing k and rounded to fp32; blocks added to the fp32 accumulator in order."""
    acc = None
    for k0 in range(0, a.shape[1], kblk):
        s = np.zeros((a.shape[0], b.shape[1]))
        for k in range(k0, k0 + kblk):
            s = s + np.outer(a[:, k].astype(np.float64), b[k, :].astype(np.float64))
        s = s.astype(np.float32)
        acc = s if acc is None else acc + s
    return acc


def _valid(fmt, major, sw, rows):
    return rows % (8 if major == "K" else SPAN[sw] // ELEM[fmt]) == 0


def random_problems(count: int, seed: int = 2026):
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        fmt = str(rng.choice(["bf16", "f16", "tf32"]))
        g = int(rng.choice([1, 2]))
        if g == 1:
            m = int(rng.choice([64, 128]))
            n = int(rng.choice([8, 16, 24, 32, 48, 64])) if m == 64 else int(rng.choice([16, 32, 48, 64, 96]))
        else:
            m = int(rng.choice([128, 256]))
            n = int(rng.choice([32, 64, 96, 128]))
        am, bm = (str(x) for x in rng.choice(["K", "MN"], 2))
        asw, bsw = (str(x) for x in rng.choice(["none", "32B", "64B", "128B"], 2))
        k_atom = max([32] + [SPAN[sw] for mj, sw in ((am, asw), (bm, bsw)) if mj == "K"]) // ELEM[fmt]
        k = k_atom * int(rng.integers(1, 3))  # whole K-major swizzle atoms, whole 32-byte K-blocks
        if not (_valid(fmt, am, asw, m // g) and _valid(fmt, bm, bsw, n // g)):
            continue
        cluster = (g, 1, 1) if g == 1 else [(2, 1, 1), (2, 2, 1), (4, 1, 1), (2, 1, 2)][int(rng.integers(0, 4))]
        pair = int(rng.integers(0, (cluster[0] * cluster[1] * cluster[2]) // 2)) if g == 2 else 0
        out.append((fmt, m, n, k, am, bm, asw, bsw, g, cluster, pair, int(rng.integers(1 << 30))))
    return out


@pytest.mark.parametrize("case", random_problems(120), ids=lambda c: "-".join(map(str, c[:9])) + f"-{c[9]}")
def test_random_umma_matches_numpy(case):
    fmt, m, n, k, am, bm, asw, bsw, g, cluster, pair, seed = case
    p = Problem(fmt, m, n, k, am, bm, asw, bsw, cta_group=g, cluster=cluster, seed=seed, pair=pair)
    d = p.run()
    ref = reference(p.a, p.b, 32 // ELEM[fmt])
    assert np.array_equal(d.view(np.uint32), ref.view(np.uint32))  # bit-exact in the defined order
    np.testing.assert_allclose(d, p.a.astype(np.float64) @ p.b, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("fmt", ["bf16", "f16", "tf32"])
def test_small_integers_equal_plain_matmul(fmt):
    p = Problem(fmt, 128, 64, 64, "K", "MN", "128B", "64B", integers=True, seed=3)
    assert np.array_equal(p.run(), (p.a @ p.b).astype(np.float32))


def test_tf32_ignores_low_mantissa_bits():
    from tmakit.emu.umma import to_float

    x = np.array([0x3F800FFF, 0xBF803FFF], np.uint32)  # 1 + tiny, -(1 + 2^-10 + tiny)
    assert to_float(x, "tf32").tolist() == [1.0, -(1 + 2**-10)]


# --- tcgen05.ld shapes (CuTe's SM100_TMEM_LOAD DstLayouts) ---

@pytest.mark.parametrize("shape,regs", [("32x32b", 1), ("16x64b", 1), ("16x128b", 2), ("16x256b", 4)])
def test_ld_shapes_cover_their_block_once(shape, regs):
    cells = set()
    for t in range(32):
        lanes, cols = fragment(shape, 2, t)
        assert lanes.size == 2 * regs
        cells |= set(zip(lanes.tolist(), cols.tolist()))
    nl = 32 if shape == "32x32b" else 16
    assert len(cells) == 2 * regs * 32 and {ln for ln, _ in cells} == set(range(nl))


def test_ld_16x256b_thread_map():
    lanes, cols = fragment("16x256b", 1, 6)  # thread 6: lanes 1 and 9, columns 4, 5
    assert lanes.tolist() == [1, 1, 9, 9] and cols.tolist() == [4, 5, 4, 5]


def _alloc_kernel(body):
    def kernel():
        slot = emu.shared_alloc(4, 4, np.uint32)
        body(slot)
    return kernel


def test_st_then_ld_round_trip_by_quarter():
    out = {}

    def body(slot):
        a = emu.Allocator1Sm()
        a.allocate(64, slot)
        base = int(slot[0])
        for t in range(128):
            emu.tmem_store(base + ((t // 32 * 32) << 16), np.arange(4, dtype=np.uint32) + 100 * t, "32x32b", 4, t)
        out["t77"] = emu.tmem_load(base + (64 << 16), "32x32b", 4, thread=77)
        a.free(base, 64)
        a.release_allocation_lock()

    emu.launch(_alloc_kernel(body), (1, 1, 1))
    assert out["t77"].tolist() == [7700, 7701, 7702, 7703]


def test_allocations_are_disjoint_and_aligned():
    got = []

    def body(slot):
        a = emu.Allocator1Sm()
        for n in (32, 128, 64):
            a.allocate(n, slot)
            got.append(int(slot[0]))
        for addr, n in zip(got, (32, 128, 64)):
            a.free(addr, n)

    emu.launch(_alloc_kernel(body), (1, 1, 1))
    assert got == [0, 128, 64]


@pytest.mark.parametrize("ncols", [0, 16, 48, 1024])
def test_alloc_column_count_rule(ncols):
    with pytest.raises(emu.IllegalInstruction, match="power of two"):
        emu.launch(_alloc_kernel(lambda s: emu.Allocator1Sm().allocate(ncols, s)), (1, 1, 1))


def test_over_allocation_would_hang():
    def body(slot):
        a = emu.Allocator1Sm()
        a.allocate(512, slot)
        a.allocate(32, slot)

    with pytest.raises(emu.Deadlock, match="blocks until columns are freed"):
        emu.launch(_alloc_kernel(body), (1, 1, 1))


def test_double_free():
    def body(slot):
        a = emu.Allocator1Sm()
        a.allocate(32, slot)
        a.free(int(slot[0]), 32)
        a.free(int(slot[0]), 32)

    with pytest.raises(emu.IllegalInstruction, match="double free"):
        emu.launch(_alloc_kernel(body), (1, 1, 1))


def test_alloc_after_relinquish():
    def body(slot):
        a = emu.Allocator1Sm()
        a.release_allocation_lock()
        a.allocate(32, slot)

    with pytest.raises(emu.IllegalInstruction, match="relinquish"):
        emu.launch(_alloc_kernel(body), (1, 1, 1))


def test_2sm_tma_load_signals_the_pair_leader():
    """Both CTAs of a pair load their half; the bytes of both complete on the leader's barrier."""
    import tmakit as tk

    data = np.arange(16 * 32, dtype=np.float32).reshape(32, 16)
    g = tk.make_tensor(data, tk.make_layout((32, 16), (16, 1)))
    tma = tk.make_tma_copy(tk.SM90_TMA_LOAD, g, tk.make_layout((tk.Int(16), tk.Int(16)), tk.LayoutRight))
    tiles = {}

    def kernel(tma, g):
        rank = emu.block_rank_in_cluster()
        smem = emu.shared_array((16, 16), np.float32, 1024)
        bar = emu.shared_barrier()
        emu.initialize_barrier(bar, 1)
        emu.fence_barrier_init()
        emu.cluster_sync()
        if rank == 0:
            emu.set_barrier_transaction_bytes(bar, 2 * 16 * 16 * 4)
        emu.tma_load_2sm(tma.tensormap, (0, 16 * rank), smem, bar)
        if rank == 0:
            emu.wait_barrier(bar, 0)
        emu.cluster_sync()
        tiles[rank] = smem.copy()

    emu.launch(kernel, (2, 1, 1), (2, 1, 1), tma, g)
    assert np.array_equal(tiles[0], data[:16]) and np.array_equal(tiles[1], data[16:])


@pytest.mark.parametrize("fmt,g", [("bf16", 1), ("f16", 2), ("tf32", 1), ("tf32", 2)])
def test_ts_a_from_tmem(fmt, g):
    """_TS: A (128 rows per CTA, K packed in 32-bit columns) stored to TMEM with tcgen05.st, B from shared memory."""
    from tmakit.emu.umma import to_float
    from tmakit.emu.umma_desc import encode_instr_desc
    from umma_programs import descriptors, offsets, operand_layout, place, to_bits

    rng = np.random.default_rng(11)
    eb, m, n = ELEM[fmt], 128 * g, 64 * g
    kblk = 32 // eb
    k = 2 * kblk
    a_bits = to_bits(rng.standard_normal((m, k)), fmt)
    b_bits = to_bits(rng.standard_normal((k, n)), fmt)
    d = np.full((m, n), np.nan, np.float32)

    def kernel():
        rank = emu.block_rank_in_cluster()
        slot, bar = emu.shared_alloc(4, 4, np.uint32), emu.shared_barrier()
        nr = n // g
        img = place(b_bits.T[rank * nr:(rank + 1) * nr], offsets("K", "64B", eb, nr, k))
        b_ptr = emu.shared_alloc(img.size * eb, 1024, img.dtype)
        b_ptr.view(img.size)[:] = img
        emu.initialize_barrier(bar, 1)
        alloc = emu.Allocator1Sm() if g == 1 else emu.Allocator2Sm()
        alloc.allocate(256, slot)
        emu.fence_barrier_init()
        if g == 2:
            emu.cluster_sync()
        t0 = int(slot[0])
        a_col = 128  # A in columns 128.., D in 0..n-1
        for kb in range(k // kblk):  # A's K-block kb: rows of this CTA, packed in 8 columns
            part = np.ascontiguousarray(a_bits[rank * 128:(rank + 1) * 128, kb * kblk:(kb + 1) * kblk])
            packed = part.view(np.uint32)
            for t in range(128):
                emu.tmem_store(t0 + ((t // 32 * 32) << 16) + a_col + 8 * kb, packed[t], "32x32b", 8, thread=t)
        if rank == 0:
            db = descriptors(operand_layout("K", "64B", eb, nr, k)[1], "K", "64B", eb, b_ptr.address, nr, k)
            idesc = encode_instr_desc("tf32" if fmt == "tf32" else "f16", fmt, fmt, m, n)
            for kb in range(k // kblk):
                emu.umma("tf32" if fmt == "tf32" else "f16", t0, ("tmem", t0 + a_col + 8 * kb), db[kb], idesc,
                         kb > 0, g)
            emu.umma_commit(bar, (1 << g) - 1 if g == 2 else None, g)
        emu.wait_barrier(bar, 0)
        for t in range(128):
            d[rank * 128 + t] = emu.tmem_load(t0 + ((t // 32 * 32) << 16), "32x32b", n, thread=t).view(np.float32)
        if g == 2:
            emu.cluster_sync()
        alloc.free(t0, 256)

    emu.launch(kernel, (g, 1, 1), (g, 1, 1))
    ref = reference(to_float(a_bits, fmt), to_float(b_bits, fmt), kblk)
    assert np.array_equal(d.view(np.uint32), ref.view(np.uint32))
