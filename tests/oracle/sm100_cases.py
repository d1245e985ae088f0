"""The SM100 oracle cases: MMA configurations whose host algebra CuTe prints (tests/data/cute_sm100_oracle.txt).

gen_sm100_cpp.py turns each case into CuTe C++; regen_sm100.sh compiles it on the host (no GPU) and stores the
prints; tests/test_mma_sm100_oracle.py rebuilds the same objects with tmakit and compares the text.
Element types are spelled as CuTe's (``half_t`` ...; ``float`` is numpy's float32).
"""

from __future__ import annotations

from typing import NamedTuple


class MmaCase(NamedTuple):
    op: str
    a: str
    b: str
    c: str
    M: int  # noqa: N815 - CuTe's names
    N: int  # noqa: N815
    a_major: str
    b_major: str
    sw_a: str  # smem atom for A (unused for _TS), e.g. K_SW128
    sw_b: str
    nm: int  # MMAs per tile along M, N, K
    nn: int
    kb: int

    @property
    def name(self) -> str:
        return (f"{self.op}<{self.a},{self.b},{self.c},{self.M},{self.N},{self.a_major},{self.b_major}> "
                f"A:{self.sw_a} B:{self.sw_b} {self.nm}x{self.nn}x{self.kb}")

    @property
    def cta_group(self) -> int:
        return 2 if "2x1SM" in self.op else 1

    @property
    def a_from_tmem(self) -> bool:
        return self.op.endswith("_TS")


_ATOM_BITS = {"SW128": 1024, "SW64": 512, "SW32": 256, "INTER": 128}


def _sw(major: str, i: int, bits: int, mn: int) -> str:
    """The i-th swizzle atom (cycling) that tiles an operand with ``mn`` rows per CTA: an MN-major atom spans
    (atom bits / element bits) rows, a K-major one 8 rows (and fits the K tiles used here)."""
    names = ("SW128", "SW64", "SW32", "INTER")
    for j in range(4):
        n = names[(i + j) % 4]
        if major == "K" or mn % (_ATOM_BITS[n] // bits) == 0:
            return f"{major}_{n}"
    raise ValueError(f"no {major}-major atom fits {mn} rows of {bits}-bit elements")


def _mma_cases() -> list[MmaCase]:
    out = []
    kinds = [
        ("F16BF16", [("half_t", "half_t", "float"), ("bfloat16_t", "bfloat16_t", "float"),
                     ("half_t", "half_t", "half_t")], 16),
        ("TF32", [("tfloat32_t", "tfloat32_t", "float")], 32),
        ("F8F6F4", [("float_e4m3_t", "float_e4m3_t", "float"), ("float_e5m2_t", "float_e4m3_t", "float")], 8),
    ]
    i = 0
    for kind, types, bits in kinds:
        for form in ("SS", "TS", "2x1SM_SS", "2x1SM_TS"):
            two = form.startswith("2x1SM")
            ts = form.endswith("TS")
            ms = (128, 256) if two else (64, 128)
            ns = (64, 256) if two else (32, 128, 256)
            for ti, (a, b, c) in enumerate(types):
                for M in ms:  # noqa: N806
                    for N in ns:  # noqa: N806
                        for majors in (("K", "K"), ("MN", "K"), ("K", "MN"), ("MN", "MN")):
                            if ts and majors[0] == "MN":
                                continue
                            if kind == "F8F6F4" and majors[1] == "MN" and N % (32 if two else 16):
                                continue
                            if (i + ti + M // 64 + N // 32) % 3 and majors not in (("K", "K"), ("MN", "MN")):
                                continue  # keep the mixed majors to a sample
                            i += 1
                            # K tiles wide enough for the widest atoms: SW128 covers 1024 bits of K
                            kb = max(2, 1024 // (256)) if majors[0] == "K" or majors[1] == "K" else 2
                            nm = 2 if i % 5 == 0 else 1
                            nn = 2 if i % 7 == 0 and N <= 128 else 1
                            out.append(MmaCase(f"SM100_MMA_{kind}_{form}", a, b, c, M, N, majors[0], majors[1],
                                               _sw(majors[0], i, bits, M // (1 + two)),
                                               _sw(majors[1], i + 1, bits, N // (1 + two)), nm, nn, kb))
    return out


MMA_CASES = _mma_cases()

# The seed's objects (examples 03 and 04): 1SM 128x256 and 2SM 256x256 f16 MMAs, K-major, SW128, 4 K-blocks.
SEED_CASES = [
    MmaCase("SM100_MMA_F16BF16_SS", "half_t", "half_t", "float", 128, 256, "K", "K", "K_SW128", "K_SW128", 1, 1, 4),
    MmaCase("SM100_MMA_F16BF16_2x1SM_SS", "half_t", "half_t", "float", 256, 256, "K", "K", "K_SW128", "K_SW128",
            1, 1, 4),
]


class TmemCase(NamedTuple):
    """``make_tmem_copy(op, tCtAcc)`` over the accumulator of ``mma`` (CTA 0's C fragment of one MMA tile), and
    ``partition_S(tCtAcc)`` / ``partition_D(tCgC)`` for a few threads."""

    mma: MmaCase
    op: str
    threads: tuple

    @property
    def name(self) -> str:
        m = self.mma
        return f"{self.op} on {m.op}<{m.c},{m.M},{m.N}>"


_ACCUMULATORS = [
    MmaCase("SM100_MMA_F16BF16_SS", "half_t", "half_t", "float", 128, 256, "K", "K", "K_SW128", "K_SW128", 1, 1, 4),
    MmaCase("SM100_MMA_F16BF16_SS", "half_t", "half_t", "float", 64, 128, "K", "K", "K_SW128", "K_SW128", 1, 1, 4),
    MmaCase("SM100_MMA_F16BF16_2x1SM_SS", "half_t", "half_t", "float", 128, 64, "K", "K", "K_SW128", "K_SW128",
            1, 1, 4),
    MmaCase("SM100_MMA_F16BF16_SS", "half_t", "half_t", "half_t", 128, 128, "K", "K", "K_SW128", "K_SW128", 1, 1, 4),
]
_TMEM_SHAPES = {"32dp32b": 128, "16dp32b": 128, "16dp64b": 128, "16dp128b": 64, "16dp256b": 32}


def tmem_candidates():
    """Every (accumulator, op) pair to try; the generator keeps those CuTe accepts (as tmakit checks them)."""
    out = []
    for acc in _ACCUMULATORS:
        pack = acc.c == "half_t"
        for shape, top in _TMEM_SHAPES.items():
            n = 1
            while n <= top:
                suffix = "_16b" if pack else ""
                out.append(TmemCase(acc, f"SM100_TMEM_LOAD_{shape}{n}x{suffix}", (0, 37, 127)))
                if n in (1, 4, 32):
                    out.append(TmemCase(acc, f"SM100_TMEM_STORE_{shape}{n}x{suffix}", (5, 96)))
                n *= 2
    return out


class WalkCase(NamedTuple):
    """The host + per-CTA walk of CuTe's Blackwell tutorials 03 (1-SM MMA, SM90 multicast TMA) and 04 (2x1SM MMA,
    SM100 2-SM multicast TMA): TMA atoms, tiles, MMA partitions, tma_partition, multicast masks, TMEM copy."""

    name: str
    mma: MmaCase
    cluster: tuple  # (ClusterM, ClusterN, ClusterK) in CTAs
    gemm: tuple  # (Gemm_M, Gemm_N, Gemm_K)
    ranks: tuple  # CTA ranks in the first cluster to print
    multicast: bool = True  # the TMA ops: *_MULTICAST, or SM100_TMA_2SM_LOAD / SM90_TMA_LOAD

    @property
    def t2r_op(self) -> str:
        """The TMEM load the epilogue uses: 32 lanes per warp, or the 16-lane form for a 64-row 1-SM accumulator."""
        return "SM100_TMEM_LOAD_16dp32b1x" if self.mma.M == 64 else "SM100_TMEM_LOAD_32dp32b1x"


def _walk(name, op, M, N, a_major, b_major, cluster, gemm, ranks, kb=4, a="half_t", multicast=True):  # noqa: N803
    sw_a = "K_SW128" if a_major == "K" else "MN_SW128"
    sw_b = "K_SW128" if b_major == "K" else "MN_SW128"
    return WalkCase(name, MmaCase(op, a, a, "float", M, N, a_major, b_major, sw_a, sw_b, 1, 1, kb), cluster,
                    gemm, ranks, multicast)


WALK_CASES = [
    _walk("seed 03", "SM100_MMA_F16BF16_SS", 128, 256, "K", "K", (4, 4, 1), (512, 1024, 256), (0, 1, 6, 13)),
    _walk("seed 04", "SM100_MMA_F16BF16_2x1SM_SS", 256, 256, "K", "K", (4, 4, 1), (512, 1024, 256), (0, 1, 6, 13)),
    _walk("walk 2sm 2x1", "SM100_MMA_F16BF16_2x1SM_SS", 256, 128, "K", "K", (2, 1, 1), (512, 256, 128), (0, 1)),
    _walk("walk 2sm 2x2", "SM100_MMA_F16BF16_2x1SM_SS", 128, 128, "K", "K", (2, 2, 1), (256, 512, 128), (0, 1, 3)),
    _walk("walk 2sm 4x2", "SM100_MMA_F16BF16_2x1SM_SS", 256, 64, "K", "K", (4, 2, 1), (1024, 512, 64), (2, 5, 7)),
    _walk("walk 2sm MN", "SM100_MMA_F16BF16_2x1SM_SS", 256, 256, "MN", "MN", (2, 2, 1), (512, 512, 128), (0, 3),
          kb=2),
    _walk("walk 2sm 8x2", "SM100_MMA_F16BF16_2x1SM_SS", 256, 128, "K", "K", (8, 2, 1), (2048, 256, 64), (0, 9, 15)),
    _walk("walk 2sm tf32", "SM100_MMA_TF32_2x1SM_SS", 256, 128, "K", "K", (2, 2, 1), (512, 256, 64), (1, 2),
          a="tfloat32_t"),
    _walk("walk 1sm 2x2", "SM100_MMA_F16BF16_SS", 128, 128, "K", "K", (2, 2, 1), (256, 256, 128), (0, 3)),
    _walk("walk 1sm 1x4", "SM100_MMA_F16BF16_SS", 64, 256, "K", "K", (1, 4, 1), (64, 1024, 128), (0, 2)),
    _walk("walk 1sm MN", "SM100_MMA_F16BF16_SS", 128, 128, "MN", "MN", (2, 2, 1), (256, 256, 128), (1, 2), kb=2),
    _walk("walk 2sm no multicast", "SM100_MMA_F16BF16_2x1SM_SS", 256, 256, "K", "K", (2, 1, 1), (512, 512, 128),
          (0, 1), multicast=False),
    _walk("walk 2sm bf16 K/MN", "SM100_MMA_F16BF16_2x1SM_SS", 256, 128, "K", "MN", (4, 4, 1), (1024, 1024, 128),
          (0, 5, 14), a="bfloat16_t"),
    _walk("walk 1sm no multicast", "SM100_MMA_F16BF16_SS", 128, 64, "K", "K", (1, 1, 1), (256, 128, 128), (0,),
          multicast=False),
]

# The seed's own example layout: CuTe gives 0x44 for tma_mcast_mask_b of CTA (0,1,2,0), not the seed's 0b110011.
MASK_LAYOUT = ((2, 2, 4, 1), (8, 4, 1, 0))
MASK_COORDS = [(0, 1, 2, 0), (1, 0, 3, 0), (0, 0, 0, 0), (1, 1, 1, 0)]
MASK_MODES = [(2,), (1,), (0, 1), (0, 2), (0,), (1, 2)]
