"""Shared-memory operands laid out by tmakit's CuTe layout algebra (the canonical UMMA atoms, tile_to_shape),
descriptors derived from those layouts as CuTe's make_umma_desc does, and emulated kernels that run a chain of
tcgen05.mma on them (1-SM and 2-SM). Used by the tcgen05 emulator tests."""

from __future__ import annotations

import functools

import numpy as np

import tmakit as tk
from tmakit import emu
from tmakit.emu.umma_desc import encode_instr_desc, encode_smem_desc

SPAN = {"none": 16, "32B": 32, "64B": 64, "128B": 128}
LAYOUT_TYPE = {"none": 0, "32B": 6, "64B": 4, "128B": 2}
SW_BITS = {"none": 0, "32B": 1, "64B": 2, "128B": 3}
ELEM = {"f16": 2, "bf16": 2, "tf32": 4}
KIND = {"f16": "f16", "bf16": "f16", "tf32": "tf32"}


def atom(major: str, swizzle: str, eb: int):
    """CuTe's Layout_{K,MN}_{INTER,SW32,SW64,SW128}_Atom in elements of ``eb`` bytes, as (MN, K) layouts."""
    w = SPAN[swizzle] // eb  # elements per swizzle row
    i = tk.Int
    base = (tk.make_layout((i(8), i(w)), (i(w), i(1))) if major == "K"
            else tk.make_layout((i(w), i(8)), (i(1), i(w))))
    b = SW_BITS[swizzle]
    if b == 0:
        return base, base
    lg = {2: 3, 4: 2}[eb]
    return tk.make_composed_layout(tk.Swizzle(b, lg, 3), 0, base), base


def operand_layout(major, swizzle, eb, mn, k):
    """(swizzled layout, plain layout) of an ``mn`` x ``k`` operand tiled from the canonical atom."""
    sw, plain = atom(major, swizzle, eb)
    shape = (tk.Int(mn), tk.Int(k))
    return tk.tile_to_shape(sw, shape), tk.tile_to_shape(plain, shape)


@functools.lru_cache(maxsize=None)
def offsets(major, swizzle, eb, mn, k) -> np.ndarray:
    """``layout(r, c)`` for every element of the swizzled operand layout, shape (mn, k)."""
    sw, _ = operand_layout(major, swizzle, eb, mn, k)
    return np.array([[int(sw((r, c))) for c in range(k)] for r in range(mn)], np.int64)


def place(values_bits: np.ndarray, off: np.ndarray) -> np.ndarray:
    """A flat element image holding ``values_bits[mn, k]`` at ``off[mn, k]``."""
    img = np.zeros(int(off.max()) + 1, values_bits.dtype)
    img[off] = values_bits
    return img


def descriptors(plain, major, swizzle, eb, base_addr, mn, k_total):
    """One shared-memory descriptor per K-block (32 bytes of K), from the layout's strides (make_umma_desc)."""
    t = 16 // eb
    kblk = 32 // eb

    def off(r, c):
        return int(plain((r, c))) * eb

    if major == "K":
        sbo, lbo = off(8, 0) if mn > 8 else 16, (off(0, t) if swizzle == "none" else 16)
    elif swizzle == "none":
        sbo, lbo = off(t, 0), off(0, 8) if kblk > 8 else 16
    else:
        w = SPAN[swizzle] // eb
        lbo, sbo = off(w, 0) if w < mn else 16, off(0, 8) if kblk > 8 else 16
    return [encode_smem_desc(base_addr + off(0, kb * kblk), lbo, sbo, LAYOUT_TYPE[swizzle])
            for kb in range(k_total // kblk)]


def to_bits(x: np.ndarray, fmt: str) -> np.ndarray:
    if fmt == "f16":
        return x.astype(np.float16).view(np.uint16)
    if fmt == "bf16":
        return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return (x.astype(np.float32).view(np.uint32) & np.uint32(0xFFFFE000))


class Problem:
    """D (M x N, fp32) = A (M x K) . B (K x N) by UMMAs on an emulated CTA (pair), operands in shared memory."""

    def __init__(self, fmt, m, n, k, a_major, b_major, a_swizzle, b_swizzle, cta_group=1, cluster=None,
                 seed=0, integers=False, pair=0, commit_mask=None):
        rng = np.random.default_rng(seed)
        self.fmt, self.m, self.n, self.k, self.g = fmt, m, n, k, cta_group
        self.a_major, self.b_major, self.a_sw, self.b_sw = a_major, b_major, a_swizzle, b_swizzle
        self.cluster = cluster or (cta_group, 1, 1)
        self.pair = pair  # which CTA pair of the cluster runs the MMA (2-SM)
        self.commit_mask = commit_mask  # 2-SM: the CTAs the commit signals (default: the pair)
        if integers:
            a, b = rng.integers(-4, 5, (m, k)), rng.integers(-4, 5, (k, n))
        else:
            a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
        self.a_bits, self.b_bits = to_bits(a, fmt), to_bits(b, fmt)
        from tmakit.emu.umma import to_float

        self.a, self.b = to_float(self.a_bits, fmt), to_float(self.b_bits, fmt)
        self.d = np.full((m, n), np.nan, np.float32)

    def kernel(self):
        g, eb = self.g, ELEM[self.fmt]
        rank = emu.block_rank_in_cluster()
        lead = 2 * self.pair if g == 2 else 0
        if rank not in (lead, lead + 1)[:g]:
            return
        part = rank - lead
        mr, nr = self.m // g, self.n // g
        a_pl = operand_layout(self.a_major, self.a_sw, eb, mr, self.k)[1]
        b_pl = operand_layout(self.b_major, self.b_sw, eb, nr, self.k)[1]
        dt = self.a_bits.dtype
        a_img = place(self.a_bits[part * mr:(part + 1) * mr], offsets(self.a_major, self.a_sw, eb, mr, self.k))
        b_img = place(self.b_bits.T[part * nr:(part + 1) * nr], offsets(self.b_major, self.b_sw, eb, nr, self.k))
        a_ptr = emu.shared_alloc(a_img.size * eb, 1024, dt)
        b_ptr = emu.shared_alloc(b_img.size * eb, 1024, dt)
        a_ptr.view(a_img.size)[:] = a_img
        b_ptr.view(b_img.size)[:] = b_img
        bar = emu.shared_barrier()
        slot = emu.shared_alloc(4, 4, np.uint32)
        emu.initialize_barrier(bar, 1)
        alloc = emu.Allocator1Sm() if g == 1 else emu.Allocator2Sm()
        ncols = max(32, 1 << (self.n - 1).bit_length())
        alloc.allocate(ncols, slot)
        emu.fence_barrier_init()
        if g == 2:
            emu.cluster_sync()
        taddr = int(slot[0])
        if part == 0:
            da = descriptors(a_pl, self.a_major, self.a_sw, eb, a_ptr.address, mr, self.k)
            db = descriptors(b_pl, self.b_major, self.b_sw, eb, b_ptr.address, nr, self.k)
            idesc = encode_instr_desc(KIND[self.fmt], self.fmt, self.fmt, self.m, self.n,
                                      int(self.a_major == "MN"), int(self.b_major == "MN"))
            for kb, (x, y) in enumerate(zip(da, db)):
                emu.umma(KIND[self.fmt], taddr, x, y, idesc, kb > 0, g)
            if g == 1:
                emu.umma_arrive(bar)
            else:
                emu.umma_arrive_multicast_2x1SM(bar, self.commit_mask or 0b11 << lead)
        emu.wait_barrier(bar, 0)
        self.read_back(taddr, part)
        if g == 2:
            emu.cluster_sync()
        alloc.free(taddr, ncols)

    def read_back(self, taddr, part):
        """Every thread of 4 warps loads its lane (tcgen05.ld.32x32b) and the rows land in ``self.d``."""
        from tmakit.emu.umma import d_placement

        rows, lanes, cols = d_placement(self.m, self.n, self.g)[part]
        num = _pow2(int(cols.max()) + 1)
        regs = np.stack([emu.tmem_load(taddr + ((t // 32 * 32) << 16), "32x32b", num, thread=t)
                         for t in range(128)])
        self.d[rows] = regs[lanes, cols].view(np.float32)

    def run(self):
        emu.launch(self.kernel, self.cluster, self.cluster)
        return self.d


def _pow2(n):
    return 1 << (n - 1).bit_length()
