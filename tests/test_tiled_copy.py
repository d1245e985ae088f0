"""The general (non-TMA) TiledCopy: bad inputs raise a named error that states the rule, the value and the fix;
partitions cover a tile exactly once; the emulator runs a UniversalCopy partition elementwise.
(What the copies print and how they partition is checked against CuTe itself in tests/test_layout_oracle.py,
group TILED_COPY / RANDOM_TILED_COPY of tests/oracle/cases.py.)"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import tmakit as tk
from tmakit.emu.errors import EmuError

I = tk.Int  # noqa: E741


def L(shape, stride=None):  # noqa: N802
    return tk.make_layout(shape) if stride is None else tk.make_layout(shape, stride)


def u32_half():
    return tk.Copy_Atom(tk.UniversalCopy(np.uint32), tk.half_t)


def ldsm4():
    return tk.Copy_Atom(tk.SM75_U32x4_LDSM_N(), tk.half_t)


SM80_MMA = tk.make_tiled_mma(tk.SM80_16x8x16_F32F16F16F32_TN(), L((I(2), I(2), I(1))))


# ------------------------------------------------------------------ bad inputs
@pytest.mark.parametrize("thr,val,words", [
    ((I(16), I(1)), (I(1), I(8)), ["too few thrs", "16 threads", "multiple of the atom's 32"]),
    ((I(32), I(1)), (I(1), I(4)), ["too few vals", "4 values per thread", "multiple of the atom's 8"]),
])
def test_too_few_threads_or_values(thr, val, words):
    with pytest.raises(tk.TiledCopyError) as e:
        tk.make_tiled_copy(ldsm4(), L(thr), L(val))
    for w in words:
        assert w in str(e.value)
    assert isinstance(e.value, tk.LayoutError)


def test_values_that_do_not_tile_the_atom():
    with pytest.raises(tk.TiledCopyError, match=r"3 values per thread, not a multiple of the atom's 2"):
        tk.make_tiled_copy(u32_half(), L((I(32), I(4))), L((I(1), I(3))))


@pytest.mark.parametrize("make,words", [
    (lambda: tk.SM80_CP_ASYNC_CACHEALWAYS(np.uint16), ["4 / 8 / 16 bytes", "16-bit TS", "uint128_t"]),
    (lambda: tk.SM80_CP_ASYNC_CACHEGLOBAL(np.uint64), ["16 bytes", "64-bit TS"]),
    (lambda: tk.SM80_CP_ASYNC_CACHEALWAYS(np.uint32, np.uint64), ["sizeof(TS) == sizeof(TD)", "32 and 64"]),
    (lambda: tk.UniversalCopy(tk.float_e2m1_t), ["at least 8 bits", "4 and 4 bits", "uint8_t"]),
    (lambda: tk.AutoVectorizingCopyWithAssumedAlignment(256), ["8, 16, 32, 64 or 128", "got 256"]),
    (lambda: tk.UniversalCopy(3.5), ["element types", "got 3.5"]),
])
def test_bad_copy_op_arguments(make, words):
    with pytest.raises(tk.CopyError) as e:
        make()
    for w in words:
        assert w in str(e.value)


def test_value_type_too_wide_for_the_op():
    # ldmatrix .trans moves 16-bit elements: a 32-bit value type leaves the thread mode without 32 rows
    with pytest.raises(tk.TiledCopyError, match=r"not valid for Dst of ValType \(32-bit values\).*size\(ThrID\) = _32"):
        tk.Copy_Atom(tk.SM75_U16x2_LDSM_T(), np.uint32)


def test_not_an_atom_or_op():
    with pytest.raises(tk.TiledCopyError, match="takes a copy op"):
        tk.Copy_Atom("ldmatrix", tk.half_t)
    with pytest.raises(tk.TiledCopyError, match="takes a Copy_Atom first"):
        tk.make_tiled_copy(tk.UniversalCopy(np.uint32), L((I(32), I(4))))
    with pytest.raises(tk.TiledCopyError, match="thr_layout must be a Layout"):
        tk.make_tiled_copy(u32_half(), (32, 4))


def test_partition_rank_too_small():
    tc = tk.make_tiled_copy(u32_half(), L((I(32), I(4))), L((I(1), I(2))))
    with pytest.raises(tk.TiledCopyError, match=r"rank 1 .* tiler \(_32,_8\) rank 2"):
        tc.get_slice(0).partition_S(tk.make_identity_tensor(I(64)))


def test_c_atom_wider_than_the_accumulator():
    with pytest.raises(tk.TiledCopyError, match="moves 8 values per thread, but a thread holds _4"):
        tk.make_tiled_copy_C_atom(tk.Copy_Atom(tk.SM90_U32x4_STSM_N(), tk.half_t), SM80_MMA)


# ------------------------------------------------------------------ properties
@pytest.mark.parametrize("tc", [
    tk.make_tiled_copy(u32_half(), L((I(32), I(4))), L((I(1), I(2)))),
    tk.make_tiled_copy(tk.Copy_Atom(tk.UniversalCopy(tk.uint128_t), tk.half_t), L((I(16), I(8)), (I(8), I(1))),
                       L((I(1), I(8)))),
    tk.make_tiled_copy_A(ldsm4(), SM80_MMA),
    tk.make_tiled_copy_C(u32_half(), SM80_MMA),
])
def test_partitions_cover_each_coordinate_equally_often(tc):
    """Every coordinate of a 2x2-tile tensor is reached, each equally often (once; twice for make_tiled_copy_A of a
    2x2 MMA, whose A values are shared by the two threads along N)."""
    shape = tuple(I(2 * int(tk.tile_size(tc, i))) for i in range(2))
    seen = {}
    for t in range(int(tk.size(tc))):
        for side in ("partition_S", "partition_D"):
            part = getattr(tc.get_slice(t), side)(tk.make_identity_tensor(shape))
            for i in range(int(tk.size(part))):
                seen.setdefault(side, []).append(tuple(int(c) for c in part(i)))
    full = {(m, n) for m in range(int(shape[0])) for n in range(int(shape[1]))}
    for side, crds in seen.items():
        counts = Counter(crds)
        assert set(counts) == full, side
        assert len(set(counts.values())) == 1, side


def test_tmem_copy_atom_still_prints_as_before():
    atom = tk.Copy_Atom(tk.SM100_TMEM_LOAD_32dp32b1x(), np.float32)
    assert str(atom).splitlines()[1] == "  ThrID:        _32:_1"


# ------------------------------------------------------------------ emulator
def test_emu_copy_runs_a_universal_partition():
    a = np.arange(64 * 16, dtype=np.float16).reshape(64, 16)
    b = np.zeros_like(a)
    tc = tk.make_tiled_copy(u32_half(), L((I(32), I(4))), L((I(1), I(2))))
    src, dst = tk.make_tensor(a), tk.make_tensor(b)
    for t in range(128):
        thr = tc.get_slice(t)
        tk.emu.copy(tc, thr.partition_S(src), thr.partition_D(dst))
        if t == 0:
            assert b[0, 0] == a[0, 0] and b[0, 1] == a[0, 1] and b[1, 0] == 0
    np.testing.assert_array_equal(a, b)


def test_emu_copy_autovectorizing_atom_and_thread_slice():
    a = np.arange(32, dtype=np.int32)
    b = np.zeros_like(a)
    tc = tk.make_tiled_copy(tk.Copy_Atom(tk.AutoVectorizingCopy(), np.int32), L(I(8)), L(I(4)))
    for t in range(8):
        thr = tc.get_slice(t)
        tk.emu.copy(thr, thr.partition_S(tk.make_tensor(a)), thr.partition_D(tk.make_tensor(b)))
    np.testing.assert_array_equal(a, b)


def test_emu_copy_size_mismatch():
    tc = tk.make_tiled_copy(u32_half(), L((I(32), I(4))), L((I(1), I(2))))
    src = tk.make_tensor(np.zeros(8, np.float16))
    dst = tk.make_tensor(np.zeros(4, np.float16))
    with pytest.raises(EmuError, match="source has 8 elements .* destination 4"):
        tk.emu.copy(tc, src, dst)
