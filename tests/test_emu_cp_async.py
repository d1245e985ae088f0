"""copy with SM80 cp.async atoms in the emulator: a tiled 2-D tile against numpy, commit/wait group ordering,
alignment rules, the access-before-wait race, swizzled shared destinations."""

import numpy as np
import pytest

import tmakit as tk
from tmakit import emu
from tmakit.emu.cp_async import cp_async_fence, cp_async_wait, cp_async_wait_all
from tmakit.emu.errors import EmuError, ExitError, IllegalInstruction, RaceError

I = tk.Int
M, N = 32, 64


def tiled(op=tk.SM80_CP_ASYNC_CACHEALWAYS, vt=tk.uint128_t, vals=8, dtype=np.float16):
    """128 threads, 16 x 8 row-major, each moving ``vals`` contiguous values per cp.async."""
    return tk.make_tiled_copy(tk.Copy_Atom(op(vt), dtype), tk.make_layout((I(16), I(8)), tk.LayoutRight),
                              tk.make_layout((I(1), I(vals))))


def row_major(m=M, n=N):
    return tk.make_layout((I(m), I(n)), tk.LayoutRight)


@pytest.fixture
def a():
    x = emu.alloc((2 * M, N), np.float16, align=256)
    x[:] = np.random.default_rng(5).standard_normal((2 * M, N)).astype(np.float16)
    yield x
    emu.unregister(x)


def issue(tc, g, s):
    """CuTe's per-thread copy, for every thread of the tiled copy."""
    for t in range(int(tk.size(tc))):
        thr = tc.get_slice(t)
        emu.copy(tc, thr.partition_S(g), thr.partition_D(s))


def read(s, m=M, n=N):
    return np.array([[s[(i, j)] for j in range(n)] for i in range(m)])


@pytest.mark.parametrize("op", [tk.SM80_CP_ASYNC_CACHEALWAYS, tk.SM80_CP_ASYNC_CACHEGLOBAL])
def test_tiled_tile_lands_after_the_wait(a, op):
    tc, out = tiled(op), {}

    def kernel(a):
        s = emu.shared_tensor(row_major(), np.float16)
        issue(tc, tk.make_tensor(a[:M]), s)
        out["before"] = np.array(s.iterator.smem.data[s.iterator.address:s.iterator.address + 8])  # raw bytes
        cp_async_fence()
        cp_async_wait(0)
        out["after"] = read(s)

    stats = emu.launch(kernel, (1,), a)
    assert stats == {"cp_async": M * N // 8}
    assert not out["before"].any()  # asynchronous: nothing landed at issue
    np.testing.assert_array_equal(out["after"], a[:M])


@pytest.mark.parametrize("vt,vals", [(np.uint32, 2), (np.uint64, 4)])
def test_4_and_8_byte_units(a, vt, vals):
    tc, out = tiled(vt=vt, vals=vals), {}

    def kernel(a):
        s = emu.shared_tensor(row_major(M, 8 * vals), np.float16)
        issue(tc, tk.make_tensor(np.ascontiguousarray(a[:M, :8 * vals])), s)
        cp_async_wait_all()
        out["s"] = read(s, M, 8 * vals)

    assert emu.launch(kernel, (1,), a)["cp_async"] == M * 8
    np.testing.assert_array_equal(out["s"], a[:M, :8 * vals])


def test_wait_1_leaves_the_newest_group_in_flight(a):
    """Two stages: wait<1> covers stage 0 only; reading stage 1 then is a race, after wait<0> it holds the data."""
    tc, out = tiled(), {}

    def kernel(a):
        s0, s1 = emu.shared_tensor(row_major(), np.float16), emu.shared_tensor(row_major(), np.float16)
        issue(tc, tk.make_tensor(a[:M]), s0)
        cp_async_fence()
        issue(tc, tk.make_tensor(a[M:]), s1)
        cp_async_fence()
        cp_async_wait(1)
        out["s0"] = read(s0)
        with pytest.raises(RaceError, match=r"group #1 has not been waited for: call cp_async_wait\(n\) with n <= 0"):
            s1[(0, 0)]
        cp_async_wait(0)
        out["s1"] = read(s1)

    emu.launch(kernel, (1,), a)
    np.testing.assert_array_equal(out["s0"], a[:M])
    np.testing.assert_array_equal(out["s1"], a[M:])


def test_wait_0_commits_open_copies_but_wait_n_does_not(a):
    """cp_async_wait<0> is cp.async.wait_all (commits first); wait<1> ignores copies no fence committed."""
    tc = tiled()

    def kernel(a):
        s = emu.shared_tensor(row_major(), np.float16)
        issue(tc, tk.make_tensor(a[:M]), s)
        cp_async_wait(1)
        with pytest.raises(RaceError, match="no cp_async_fence"):
            s[(M - 1, N - 1)]
        cp_async_wait(0)
        assert s[(M - 1, N - 1)] == a[M - 1, N - 1]

    emu.launch(kernel, (1,), a)


def test_read_before_wait_is_a_race(a):
    tc = tiled()

    def kernel(a):
        s = emu.shared_tensor(row_major(), np.float16)
        issue(tc, tk.make_tensor(a[:M]), s)
        cp_async_fence()
        _ = s[(3, 5)]

    with pytest.raises(RaceError, match=r"accessed before the cp.async.wait_group .* group #0"):
        emu.launch(kernel, (1,), a)


def test_race_is_a_warning_when_not_strict_and_reported_once(a):
    tc = tiled()

    def kernel(a):
        s = emu.shared_tensor(row_major(), np.float16)
        issue(tc, tk.make_tensor(a[:M]), s)
        cp_async_fence()
        for j in range(4):
            s[(0, j)]
        cp_async_wait(0)
        s[(0, 0)]  # covered: no report

    with pytest.warns(emu.EmuWarning) as rec:
        emu.launch(kernel, (1,), a, strict=False)
    assert len([w for w in rec if "cp.async" in str(w.message)]) == 1


def test_exit_with_copies_in_flight(a):
    tc = tiled()

    def kernel(a):
        issue(tc, tk.make_tensor(a[:M]), emu.shared_tensor(row_major(), np.float16))

    with pytest.raises(ExitError, match="exited with cp.async"):
        emu.launch(kernel, (1,), a)


def test_misaligned_global_source(a):
    tc = tiled()

    def kernel(a):
        s = emu.shared_tensor(row_major(), np.float16)
        g = tk.make_tensor(a.reshape(-1)[4:4 + M * N].reshape(M, N))  # 8 bytes past a 16-byte boundary
        issue(tc, g, s)

    with pytest.raises(IllegalInstruction, match=r"global source address 0x[0-9a-f]+ is not 16-byte aligned \(8 "
                                                 r"bytes past\)"):
        emu.launch(kernel, (1,), a)


def test_misaligned_shared_destination(a):
    tc = tiled()

    def kernel(a):
        buf = emu.shared_tensor(tk.make_layout(I(M * N + 8)), np.float16)
        s = tk.make_tensor(buf.iterator + 4, row_major())  # 8 bytes in
        issue(tc, tk.make_tensor(a[:M]), s)

    with pytest.raises(IllegalInstruction, match="shared destination address .* not 16-byte aligned"):
        emu.launch(kernel, (1,), a)


def test_non_contiguous_unit_is_rejected(a):
    tc = tiled()

    def kernel(a):
        s = emu.shared_tensor(tk.make_layout((I(M), I(N)), tk.LayoutLeft), np.float16)  # column-major
        issue(tc, tk.make_tensor(a[:M]), s)

    with pytest.raises(EmuError, match="destination values of one atom call are not 16 contiguous bytes"):
        emu.launch(kernel, (1,), a)


def test_wrong_direction_is_rejected(a):
    tc = tiled()

    def kernel(a):
        s = emu.shared_tensor(row_major(), np.float16)
        thr = tc.get_slice(0)
        emu.copy(tc, thr.partition_S(s), thr.partition_D(tk.make_tensor(a[:M])))

    with pytest.raises(EmuError, match="source must be a global tensor"):
        emu.launch(kernel, (1,), a)


@pytest.mark.parametrize("b", [1, 2, 3])
def test_swizzled_shared_destination(a, b):
    """GMMA-style Swizzle<b,3,3> smem: read back through the swizzled layout equals the tile; the raw image is
    permuted (so the swizzle really moved the 16-byte chunks)."""
    sl = tk.tile_to_shape(tk.composition(tk.Swizzle(b, 3, 3), tk.make_layout((I(8), I(8 << b)), tk.LayoutRight)),
                          (I(M), I(N)))
    tc, out = tiled(), {}

    def kernel(a):
        s = emu.shared_tensor(sl, np.float16)
        issue(tc, tk.make_tensor(a[:M]), s)
        cp_async_fence()
        cp_async_wait(0)
        out["s"] = read(s)
        p = s.iterator
        out["raw"] = p.smem.data[p.address:p.address + M * N * 2].view(np.float16).copy()

    emu.launch(kernel, (1,), a)
    np.testing.assert_array_equal(out["s"], a[:M])
    assert not np.array_equal(out["raw"].reshape(-1), np.ascontiguousarray(a[:M]).reshape(-1))


def test_every_threads_tensors_in_one_call(a):
    """The ldmatrix-style form: lists of every thread's partitions."""
    tc, out = tiled(), {}

    def kernel(a):
        s, g = emu.shared_tensor(row_major(), np.float16), tk.make_tensor(a[:M])
        thrs = [tc.get_slice(t) for t in range(128)]
        emu.copy(tc, [t.partition_S(g) for t in thrs], [t.partition_D(s) for t in thrs])
        cp_async_wait_all()
        out["s"] = read(s)

    emu.launch(kernel, (1,), a)
    np.testing.assert_array_equal(out["s"], a[:M])


def test_copy_if_issues_no_cp_async_where_predicated_off(a):
    """CuTe's copy_if with a cp.async TiledCopy, one thread's partitions at a time: the tile's two 16-row calls per
    thread, the second predicated off, issue only the first (no bytes, no instruction for the other); a
    list of every thread's tensors with per-thread predicates does the same per thread."""
    tc, out = tiled(), {}

    def kernel(a):
        s = emu.shared_tensor(row_major(), np.float16)
        g = tk.make_tensor(a[:M])
        for t in range(int(tk.size(tc))):
            thr = tc.get_slice(t)
            src, dst = thr.partition_S(g), thr.partition_D(s)
            out["calls"] = int(tk.size(src)) // 8
            emu.copy_if(tc, np.array([True, False]), src, dst)
        cp_async_wait_all()
        out["s"] = read(s)
        s2 = emu.shared_tensor(row_major(), np.float16)
        thr = [tc.get_slice(t) for t in range(int(tk.size(tc)))]
        preds = [np.array([t % 2 == 0, True]) for t in range(len(thr))]
        emu.copy_if(tc, preds, [x.partition_S(g) for x in thr], [x.partition_D(s2) for x in thr])
        cp_async_wait_all()
        out["s2"] = read(s2)

    stats = emu.launch(kernel, (1,), a)
    assert out["calls"] == 2
    assert stats == {"cp_async": 128 + 128 + 64}
    np.testing.assert_array_equal(out["s"][:16], a[:16])
    assert not out["s"][16:].any()
    np.testing.assert_array_equal(out["s2"][16:], a[16:M])
    even = np.zeros((16, N), bool)
    for t in range(0, 128, 2):  # thread t: row t // 8, columns 8 (t % 8) ... + 8
        even[t // 8, 8 * (t % 8):8 * (t % 8) + 8] = True
    np.testing.assert_array_equal(out["s2"][:16][even], a[:16][even])
    assert not out["s2"][:16][~even].any()
