"""Helpers of the wgmma tests (no tests here): element encoders and a one-warpgroup program that puts A and B in
shared memory through their descriptors and runs MMAs on them."""

from __future__ import annotations

import numpy as np

from tmakit import emu
from tmakit.emu.wgmma_desc import place_operand
from tmakit.emu.wgmma_types import TYPES, fp8_table

A_AT, B_AT = 0x0, 0x8000  # shared addresses of the A and B tiles (1024-aligned)
SW_LBO_SBO = {0: (128, 256), 32: (16, 256), 64: (16, 512), 128: (16, 1024)}  # K-major strides per swizzle


def encode(values: np.ndarray, name: str) -> np.ndarray:
    """Exactly representable values -> element bits of ``name``."""
    v = np.asarray(values, np.float32)
    if name == "f16":
        return v.astype(np.float16).view(np.uint16)
    if name == "bf16":
        return (v.view(np.uint32) >> 16).astype(np.uint16)
    if name == "tf32":
        return v.view(np.uint32).copy()
    table = fp8_table(name)
    lookup = {}
    for i in range(255, -1, -1):  # the lowest pattern wins: +0 over -0
        if np.isfinite(table[i]):
            lookup[float(table[i])] = i
    return np.vectorize(lambda x: lookup[float(x)], otypes=[np.uint8])(v)


def ints(rng, shape, lo=-4, hi=5) -> np.ndarray:
    return rng.integers(lo, hi, shape).astype(np.float32)


def k_desc(addr: int, swizzle: int = 128) -> int:
    lbo, sbo = SW_LBO_SBO[swizzle]
    return emu.encode_wgmma_desc(addr, lbo, sbo, swizzle)


def run_one(a_bits, b_bits, *, n, atype, btype=None, dtype="f32", a_desc=None, b_desc=None, trans_a=0, trans_b=0,
            rs=False, scale_d=0, scale_a=1, scale_b=1, init=None, repeat=1, strict=True, smem_bytes=None):
    """One warpgroup: A (64 x K) and B (N x K) element bits placed through their descriptors (K-major SW128 unless
    given), ``repeat`` MMAs (the first with ``scale_d``, later ones accumulating), returns the 64 x N values."""
    btype = btype or atype
    a_desc = a_desc if a_desc is not None else k_desc(A_AT)
    b_desc = b_desc if b_desc is not None else k_desc(B_AT)
    out = {}

    def kernel():
        img = emu.shared_array(0x10000, np.uint8, align=1024)
        if not rs:
            place_operand(img, a_desc, trans_a, a_bits)
        place_operand(img, b_desc, trans_b, b_bits)
        emu.fence_proxy_async()
        acc = emu.wgmma_accumulator(n, dtype)
        a = a_desc
        if rs:
            a = emu.wgmma_fragment_a(atype)
            a.load(a_bits)
        if init is not None:
            acc.write(init)
        emu.wgmma_fence()
        for i in range(repeat):
            emu.wgmma_mma_async(acc, a, b_desc, scale_d if i == 0 else 1, scale_a, scale_b, trans_a, trans_b,
                                atype=atype, btype=btype)
        emu.wgmma_commit_group()
        emu.wgmma_wait_group(0)
        out["d"] = acc.read()

    kw = {} if smem_bytes is None else {"smem_bytes": smem_bytes}
    out["stats"] = emu.launch(kernel, (1,), strict=strict, **kw)
    return out["d"]


def values(bits: np.ndarray, name: str) -> np.ndarray:
    from tmakit.emu.wgmma_types import to_float

    return to_float(bits, name).astype(np.float64)


__all__ = ["A_AT", "B_AT", "TYPES", "encode", "ints", "k_desc", "run_one", "values"]
