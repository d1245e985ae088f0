"""wgmma shared-memory descriptors: the bit fields, the shared address of each operand byte per swizzle mode
(hand-computed from the canonical layouts and the TMA swizzle), and the descriptors the emulator refuses."""

from __future__ import annotations

import numpy as np
import pytest

from test_emu_wgmma_programs import encode, ints, run_one
from tmakit import emu
from tmakit.emu.umma_desc import encode_smem_desc
from tmakit.emu.wgmma_desc import check_wgmma_desc, decode_wgmma_desc, operand_addresses, read_operand


def addr(desc: int, major: int, rows: int, r: int, k: int, elem_bytes: int = 2) -> int:
    """Shared address of the first byte of element (row r, K index k)."""
    return int(operand_addresses(decode_wgmma_desc(desc), major, rows, elem_bytes)[r, k, 0])


def test_round_trip_and_the_field_positions():
    d = emu.encode_wgmma_desc(0x1230, 0x40, 0x400, 128)
    assert d == 0x123 | 0x4 << 16 | 0x40 << 32 | 1 << 62  # gemm.cu's sw128_desc(0x1230, 0x40, 0x400)
    x = emu.decode_wgmma_desc(d)
    assert (x.start, x.lbo, x.sbo, x.base_offset, x.swizzle_name) == (0x1230, 0x40, 0x400, 0, "SWIZZLE_128B")
    for swz, code in ((0, 0), (128, 1), (64, 2), (32, 3)):
        for start, lbo, sbo, base in ((0, 16, 1024, 0), (0x3FFF0, 0x3FFF0, 0x3FFF0, 7), (0x400, 8192, 1024, 3)):
            w = emu.encode_wgmma_desc(start, lbo, sbo, swz, base)
            y = decode_wgmma_desc(w)
            assert (y.start, y.lbo, y.sbo, y.base_offset, y.swizzle, y.reserved) == (start, lbo, sbo, base, code, 0)
    assert "start 0x1230, LBO 64, SBO 1024" in str(x)


def test_k_major_swizzle_128b_addresses():
    d = emu.encode_wgmma_desc(0, 16, 1024, 128)
    assert addr(d, 0, 64, 0, 0) == 0
    assert addr(d, 0, 64, 0, 8) == 16  # K bytes 16..31 of row 0: chunk 1, row phase 0
    assert addr(d, 0, 64, 1, 0) == 128 ^ 16  # row 1: 128 B further, chunk 0 XOR phase 1
    assert addr(d, 0, 64, 9, 0) == (1024 + 128) ^ 16  # second 8-row group: + SBO
    step = emu.encode_wgmma_desc(32, 16, 1024, 128)  # K-block 1: 32 bytes into the row (gemm.cu's desc_plus)
    assert addr(step, 0, 64, 1, 0) == 160 ^ 16
    assert addr(step, 0, 64, 2, 0) == 256  # logical chunk 2 of row 2 sits in physical chunk 2 ^ 2 = 0


def test_k_major_64b_32b_and_interleave_addresses():
    d64 = emu.encode_wgmma_desc(0, 16, 512, 64)
    assert [addr(d64, 0, 64, r, 0) for r in range(4)] == [0, 64, 128 ^ 16, 192 ^ 16]
    assert addr(d64, 0, 64, 2, 8) == 144 ^ 16 and addr(d64, 0, 64, 8, 0) == 512
    d32 = emu.encode_wgmma_desc(0, 16, 256, 32)
    assert [addr(d32, 0, 64, r, 0) for r in (0, 1, 4, 5, 8)] == [0, 32, 128 ^ 16, 160 ^ 16, 256]
    assert addr(d32, 0, 64, 4, 8) == 128  # chunk 1 of a phase-1 row
    none = emu.encode_wgmma_desc(0, 128, 256, 0)  # core matrices 8 rows x 16 B; LBO along K, SBO along rows
    assert [addr(none, 0, 64, r, k) for r, k in ((1, 0), (0, 8), (8, 0), (9, 9))] == [16, 128, 256, 16 + 256 + 128 + 2]


def test_mn_major_addresses():
    d = emu.encode_wgmma_desc(0, 8192, 1024, 128)  # gemm.cu's B_MN: LBO = one 64-wide N block, SBO = 8 K rows
    assert addr(d, 1, 128, 0, 1) == 128 ^ 16  # K row 1 of the MN-contiguous tile
    assert addr(d, 1, 128, 8, 0) == 16 and addr(d, 1, 128, 64, 0) == 8192 and addr(d, 1, 128, 0, 8) == 1024
    none = emu.encode_wgmma_desc(0, 512, 128, 0)  # MN chunks of 8 elements at SBO, K rows at 16 B, 8 of them at LBO
    assert [addr(none, 1, 64, r, k) for r, k in ((1, 0), (8, 0), (0, 1), (0, 8))] == [2, 128, 16, 512]


def test_read_operand_undoes_the_tma_swizzle():
    from tmakit.emu.swizzle import swizzle_address
    from tmakit.tma.tensormap import SwizzleMode

    rows = np.arange(64 * 64, dtype=np.uint16).reshape(64, 64)  # 64 rows of 128 B, as a TMA box lands unswizzled
    image = np.zeros(1 << 14, np.uint8)
    lin = np.arange(rows.nbytes)
    image[swizzle_address(lin, SwizzleMode.B128)] = rows.view(np.uint8).reshape(-1)
    for kk in range(4):
        got = read_operand(image, emu.encode_wgmma_desc(32 * kk, 16, 1024, 128), 0, 64, 2)
        assert np.array_equal(got, rows[:, 16 * kk:16 * kk + 16])


@pytest.mark.parametrize("word, match", [
    (encode_smem_desc(0, 16, 1024, 2), "tcgen05's version field"),
    (emu.encode_wgmma_desc(0, 16, 1024, 128, base_offset=1), "base offset 1 is not modelled"),
    (emu.encode_wgmma_desc(0, 16, 1024, 0, base_offset=2), "swizzled layouts only"),
    (emu.encode_wgmma_desc(0x480, 16, 1024, 128), "lies 128 bytes into its 1024-byte SWIZZLE_128B pattern"),
    (emu.encode_wgmma_desc(0x280, 16, 512, 64), "512-byte SWIZZLE_64B"),
])
def test_bad_descriptors_are_refused(word, match):
    with pytest.raises(emu.IllegalInstruction, match=match):
        check_wgmma_desc(decode_wgmma_desc(word), "wgmma")


@pytest.mark.parametrize("args, match", [((8, 16, 1024, 128), "start address 8 must be a multiple of 16"),
                                         ((0, 16, 1 << 18, 128), "stride byte offset"),
                                         ((0, 16, 1024, 16), "swizzle 16"),
                                         ((0, 16, 1024, 128, 8), "base offset 8")])
def test_encode_refuses_unencodable_fields(args, match):
    with pytest.raises(emu.IllegalInstruction, match=match):
        emu.encode_wgmma_desc(*args)


def test_bad_descriptor_in_a_kernel_names_the_instruction():
    rng = np.random.default_rng(1)
    a, b = encode(ints(rng, (64, 16)), "bf16"), encode(ints(rng, (64, 16)), "bf16")
    with pytest.raises(emu.IllegalInstruction, match=r"wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 B "
                                                     r"descriptor: base offset"):
        run_one(a, b, n=64, atype="bf16", b_desc=emu.encode_wgmma_desc(0x8000, 16, 1024, 128, 1))


def test_operand_outside_shared_memory():
    def kernel():
        acc = emu.wgmma_accumulator(64)
        emu.wgmma_fence()
        far = emu.encode_wgmma_desc(0x11000, 16, 1024, 128)  # 64 rows reach 0x11000 + 8 KiB
        emu.wgmma_mma_async(acc, emu.encode_wgmma_desc(0, 16, 1024, 128), far, 0)

    with pytest.raises(emu.IllegalInstruction, match=r"B descriptor: the operand \(start 0x11000.*reaches shared "
                                                     r"bytes 0x11000..0x12fff, outside this CTA's 73728-byte"):
        emu.launch(kernel, (1,), smem_bytes=72 * 1024)
