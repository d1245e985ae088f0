"""Swizzle: every mode and shared base offset puts each byte where the formula of docs/HARDWARE.md §2 says;
stores invert it."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tmakit.emu import tma_unit
from tmakit.emu.errors import IllegalInstruction, TmaUnitError
from tmakit.tma import TmaDescriptorError
from tmakit.tma.tensormap import DataType, SwizzleMode, TensorMap

MASK = {SwizzleMode.NONE: 0, SwizzleMode.B32: 1, SwizzleMode.B64: 3, SwizzleMode.B128: 7}
SPAN = {SwizzleMode.NONE: None, SwizzleMode.B32: 32, SwizzleMode.B64: 64, SwizzleMode.B128: 128}
BASES = [0, 128, 384, 1024 + 256]


def phys(a, mode):
    return a ^ (((a >> 7) & MASK[mode]) << 4)


def numbered(rows, cols):
    """uint16 tensor whose element (r, c) is r*cols + c (unique, so positions can be read back)."""
    return np.arange(rows * cols, dtype=np.uint16).reshape(rows, cols)


@pytest.mark.parametrize("mode", list(MASK))
@pytest.mark.parametrize("base", BASES)
@pytest.mark.parametrize("inner_bytes", [16, 32, 64, 128])
def test_load_image_matches_formula(mode, base, inner_bytes):
    span = SPAN[mode]
    cols, rows = 128, 24
    a = numbered(rows, cols)
    box = (inner_bytes // 2, 16)
    if span is not None and inner_bytes > span:  # the driver refuses the map; so do the validator and the TMA unit
        wide = TensorMap(DataType.UINT16, (cols, rows), (cols * 2,), box, swizzle=mode)
        with pytest.raises(TmaDescriptorError, match="swizzle"):
            wide.validate()
        with pytest.raises((TmaDescriptorError, TmaUnitError)):
            tma_unit.load(wide, (8, 3), a, np.zeros(8192, np.uint8), base)
        return
    tm = TensorMap(DataType.UINT16, (cols, rows), (cols * 2,), box, swizzle=mode)
    smem = np.full(8192, 0xAB, np.uint8)
    assert tma_unit.load(tm, (8, 3), a, smem, base) == inner_bytes * 16
    pitch = span or inner_bytes
    img = smem.view(np.uint16)
    for r in range(16):
        for c in range(box[0]):
            addr = phys(base + r * pitch + 2 * c, mode)
            assert img[addr // 2] == a[3 + r, 8 + c], (r, c, addr)
    touched = {phys(base + r * pitch + b, mode) for r in range(16) for b in range(inner_bytes)}
    untouched = np.ones(smem.size, bool)
    untouched[list(touched)] = False
    assert (smem[untouched] == 0xAB).all(), "bytes outside the box (incl. swizzle padding) must not be written"


@pytest.mark.parametrize("mode", [SwizzleMode.B32, SwizzleMode.B64, SwizzleMode.B128])
def test_swizzle_is_an_involution_and_period(mode):
    a = np.arange(4096)
    assert (phys(phys(a, mode), mode) == a).all()
    from tmakit.emu import swizzle_address

    assert (swizzle_address(a, mode) == phys(a, mode)).all()
    period = {SwizzleMode.B32: 256, SwizzleMode.B64: 512, SwizzleMode.B128: 1024}[mode]
    assert (phys(a + period, mode) - period == phys(a, mode)).all()


def test_misaligned_shared_address_is_rejected():
    tm = TensorMap(DataType.FLOAT32, (64, 64), (256,), (32, 8), swizzle=SwizzleMode.B128)
    smem = np.zeros(8192, np.uint8)
    with pytest.raises(IllegalInstruction, match="128-byte aligned"):
        tma_unit.load(tm, (0, 0), np.zeros((64, 64), np.float32), smem, 64)
    tma_unit.load(tm, (0, 0), np.zeros((64, 64), np.float32), smem, 384)  # accepted: the address decides


def test_atom_swizzles_are_not_hopper():
    tm = TensorMap(DataType.FLOAT32, (64, 64), (256,), (32, 8), swizzle=SwizzleMode.B128_ATOM_32B)
    with pytest.raises(Exception) as e:
        tma_unit.load(tm, (0, 0), np.zeros((64, 64), np.float32), np.zeros(8192, np.uint8), 0)
    assert isinstance(e.value, (TmaUnitError, ValueError))


DTYPES = [(DataType.UINT8, np.uint8), (DataType.UINT16, np.uint16), (DataType.FLOAT32, np.float32),
          (DataType.FLOAT64, np.float64), (DataType.BFLOAT16, np.uint16)]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(list(MASK)), st.sampled_from(DTYPES), st.integers(1, 4), st.integers(1, 12),
       st.integers(-20, 60), st.integers(-10, 40), st.sampled_from(BASES), st.integers(0, 2**32 - 1))
def test_load_then_store_round_trips(mode, dt, chunks, box_rows, x, y, base, seed):
    """Load a box through a swizzled map, store it through the same map: the in-bounds region is copied exactly."""
    tdt, npdt = dt
    e = np.dtype(npdt).itemsize
    span = SPAN[mode] or 128
    inner = min(chunks * 16, span) // e
    rows, cols = 37, 48 * 16 // e // 3 * 3
    rng = np.random.default_rng(seed)
    x = x // (16 // e) * (16 // e)  # innermost start on a 16-byte boundary (else the GPU traps)
    src = rng.integers(0, 256, size=(rows, cols * e), dtype=np.uint8).view(npdt)
    dst = np.zeros_like(src)
    tm = TensorMap(tdt, (cols, rows), (cols * e,), (inner, box_rows), swizzle=mode)
    smem = np.zeros(16384, np.uint8)
    tma_unit.load(tm, (x, y), src, smem, base)
    if x < 0 or y < 0:
        with pytest.raises(IllegalInstruction, match="cudaErrorIllegalInstruction"):
            tma_unit.store(tm, (x, y), dst, smem, base)
        return
    tma_unit.store(tm, (x, y), dst, smem, base)
    expect = np.zeros_like(src)
    expect[y:y + box_rows, x:x + inner] = src[y:y + box_rows, x:x + inner]
    assert np.array_equal(dst.view(np.uint8), expect.view(np.uint8))


@pytest.mark.parametrize("atom_name", ["Layout_K_SW128_Atom", "Layout_K_SW64_Atom", "Layout_K_SW32_Atom",
                                       "Layout_MN_SW128_Atom", "Layout_MN_SW64_Atom"])
@pytest.mark.parametrize("tname,dt", [("half_t", np.float16), ("tfloat32_t", np.float32), ("float_e4m3_t", np.uint8)])
def test_shared_tensor_of_a_gmma_atom_swizzles_byte_addresses(atom_name, tname, dt):
    """``emu.shared_tensor(GMMA.Layout_*_Atom(T))`` (``Sw o smem_ptr_flag o L``): element i sits at byte
    ``Sw(L(i) * sizeof(T))``, as CuTe's swizzle pointer and the hardware put it -- not at ``Sw(L(i))`` elements
    (which read row 1 of a 128B half atom as 64.. instead of 72..)."""
    import tmakit as tk
    from tmakit import emu

    T = getattr(tk, tname, None) or getattr(tk.mma.numeric, tname)
    atom = getattr(tk.GMMA, atom_name)(T)
    n, e = int(tk.cosize(atom.layout_b)), np.dtype(dt).itemsize

    def kernel(out):
        t = emu.shared_tensor(atom, dt)
        for i in range(n):
            t[i] = i % 251
        out[:] = t.iterator.view((n,))

    out = np.zeros(n, dt)
    emu.launch(kernel, (1, 1, 1), out)
    want = np.zeros(n, dt)
    for i in range(n):
        want[atom.layout_a(int(atom.layout_b(i)) * e) // e] = i % 251
    assert np.array_equal(out, want)
