"""Cases of the TMA host-API oracle (tests/oracle/regen_tma.sh, tests/test_tma_oracle.py).

A gmem extent is an ``int`` (dynamic in both CuTe and tmakit) or a string ``"_n"`` (static ``Int<n>`` / ``tk.Int(n)``);
shapes and strides nest as tuples. Smem layouts and tilers are static (every int is an ``Int<n>``).

Smem specs: ``("row", shape)`` / ``("col", shape)`` (LayoutRight / LayoutLeft), ``("lay", shape, stride)``,
``("gmma", atom, shape)`` (``tile_to_shape(GMMA::Layout_<atom>_Atom<T>{}, shape)``); ``sw=(B, M, S)`` composes a
Swizzle on the first three kinds.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

GADDR = 0x10000  # gmem base address of every case (16-byte aligned)
SADDR = 0x400  # smem base address (elements of the case's type are counted from it)

# CuTe's type -> (tmakit dtype name, bits)
TYPES = {"float": ("fp32", 32), "half_t": ("fp16", 16), "bfloat16_t": ("bf16", 16), "int8_t": ("int8", 8),
         "float_e4m3_t": ("e4m3", 8), "uint8_t": ("uint8", 8), "double": ("fp64", 64), "tfloat32_t": ("tf32", 32),
         "int32_t": ("int32", 32), "uint16_t": ("uint16", 16), "float_e5m2_t": ("e5m2", 8)}
CPP_TYPES = {"half_t": "cutlass::half_t", "bfloat16_t": "cutlass::bfloat16_t", "tfloat32_t": "cutlass::tfloat32_t",
             "float_e4m3_t": "cutlass::float_e4m3_t", "float_e5m2_t": "cutlass::float_e5m2_t"}


@dataclass(frozen=True)
class TmaCase:
    name: str
    dtype: str
    gshape: tuple
    gstride: object  # "right" | "left" | a stride tuple
    smem: tuple
    op: str = "SM90_TMA_LOAD"
    tiler: tuple | None = None  # CTA tiler (static); None: CuTe's default product_each(shape(slayout))
    cluster: int = 1
    api: str = "copy"  # copy | atom (make_tma_atom + tma_partition) | A | B | C (make_tma_copy_X_sm90)
    coord: tuple | None = None  # local_tile coordinate of the partitioned tile (None: the last tile's 0/1 rule)
    sw: tuple | None = None
    cluster_shape: tuple = (1, 1, 1)  # A/B: the cluster's (M, N, K) shape
    arch: str = "sm_90"  # tmakit's validation target (CuTe's host code does not check the architecture)
    internal: str | None = None  # CuTe's TmaInternalType (make_tma_copy<T> needs the tiler: its 5-argument form)


@dataclass(frozen=True)
class MaskCase:
    name: str
    shape: tuple
    stride: tuple
    coord: tuple
    modes: tuple


def _rows(dtype, m, n, sm, sn, **kw):
    return TmaCase(f"{dtype} {m}x{n} row / smem {sm}x{sn}", dtype, (m, n), "right", ("row", (sm, sn)), **kw)


CASES: list[TmaCase] = [
    # --- the seeds and tests/test_tma_copy.py ---
    TmaCase("seed000 load 6x8 tile 2x4", "float", (6, 8), "right", ("row", (2, 4)), coord=(1, 1)),
    TmaCase("seed001 multicast 2", "float", (1024, 1024), "right", ("row", (16, 16)), "SM90_TMA_LOAD_MULTICAST",
            cluster=2, coord=(7, 0)),
    TmaCase("seed001 load 32x32", "float", (1024, 1024), "right", ("row", (32, 32)), coord=(2, 3)),
    TmaCase("seed001 store 32x32", "float", (1024, 1024), "right", ("row", (32, 32)), "SM90_TMA_STORE", coord=(1, 2)),
    TmaCase("seed001 reduce_add 32x32", "float", (1024, 1024), "right", ("row", (32, 32)), "SM90_TMA_REDUCE_ADD"),
    TmaCase("test bf16 sw128", "bfloat16_t", (512, 256), "right", ("row", (64, 64)), sw=(3, 4, 3)),
    TmaCase("test col-major", "float", (256, 128), "left", ("col", (32, 8))),
    TmaCase("test 3d dyn strides", "float", (1024, 32, 512), (64, "_1", 65536), ("lay", (16, 8, 2), (16, 1, 8))),
    TmaCase("test reduce 64x64", "float", (64, 64), "right", ("row", (8, 8)), "SM90_TMA_REDUCE_ADD"),
    TmaCase("test atom bf16 mc4", "bfloat16_t", (1024, 4096), "right", ("row", (64, 128)), "SM90_TMA_LOAD_MULTICAST",
            tiler=(64, 128), cluster=4, api="atom", coord=(0, 0)),
    TmaCase("test partitions mc8", "float", (1024, 1024), "right", ("row", (32, 16)), "SM90_TMA_LOAD_MULTICAST",
            cluster=8, coord=(3, 5)),
    # --- CuTe's own make_tma_copy examples ---
    TmaCase("cute simple 2d", "float", (1024, 256), "right", ("row", (64, 32))),
    TmaCase("cute gmma 2d", "float", (1024, 256), "left", ("gmma", "MN_SW128", (128, 64))),
    TmaCase("cute 3d", "float", (1024, 32, 512), (64, "_1", 65536), ("lay", (16, 8, 2), (16, 1, 8))),
    TmaCase("cute cutensor 4d", "float", (("_32", 40), (("_8", "_8"), 656)), "left", ("col", (128, (32, 2))),
            tiler=(128, (32, 2)), coord=(1, 2)),
    # --- element types, swizzles ---
    *[_rows(t, 256, 512, 64, sn, sw=sw) for t, sn, sw in (
        ("half_t", 64, (3, 4, 3)), ("half_t", 32, (2, 4, 3)), ("half_t", 16, (1, 4, 3)), ("half_t", 8, None),
        ("bfloat16_t", 64, (3, 4, 3)), ("int8_t", 128, (3, 4, 3)), ("int8_t", 64, (2, 4, 3)),
        ("float_e4m3_t", 128, (3, 4, 3)), ("uint8_t", 32, (1, 4, 3)), ("double", 16, (3, 4, 3)),
        ("double", 8, (2, 4, 3)), ("tfloat32_t", 32, (3, 4, 3)), ("float", 32, (3, 4, 3)), ("float", 16, (2, 4, 3)),
        ("float", 8, (1, 4, 3)), ("int32_t", 16, None), ("uint16_t", 64, (3, 4, 3)))],
    # --- GMMA smem atoms tiled to CTA tiles ---
    *[TmaCase(f"gmma {t} {a} {shp}", t, g, "right" if a.startswith("K") else "left", ("gmma", a, shp))
      for t, a, shp, g in (
          ("half_t", "K_SW128", (128, 64), (512, 1024)), ("half_t", "K_SW64", (64, 32), (512, 1024)),
          ("half_t", "K_SW32", (64, 16), (512, 1024)), ("half_t", "K_INTER", (64, 8), (512, 1024)),
          ("half_t", "MN_SW128", (128, 64), (1024, 512)), ("half_t", "MN_SW64", (64, 64), (1024, 512)),
          ("half_t", "MN_SW32", (32, 32), (1024, 512)), ("half_t", "MN_INTER", (64, 64), (1024, 512)),
          ("bfloat16_t", "K_SW128", (64, 64), (256, 256)), ("float_e4m3_t", "K_SW128", (128, 128), (512, 512)),
          ("int8_t", "K_SW64", (64, 64), (512, 512)), ("tfloat32_t", "K_SW128", (64, 32), (256, 256)),
          ("tfloat32_t", "MN_SW128", (64, 32), (256, 256)), ("float", "K_SW32", (64, 8), (256, 256)))],
    # --- static / dynamic gmem, strides, padding, permuted modes, 1-5 D ---
    TmaCase("1d dynamic", "float", (4096,), "left", ("col", (256,)), coord=(3,)),
    TmaCase("1d static", "half_t", ("_8192",), "left", ("col", (128,)), coord=(5,)),
    TmaCase("2d static row", "half_t", ("_256", "_128"), "right", ("row", (32, 64)), coord=(1, 1)),
    TmaCase("2d mixed", "float", (256, "_128"), ("_128", "_1"), ("row", (16, 32))),
    TmaCase("2d padded rows", "half_t", (300, 200), (256, 1), ("row", (64, 64)), sw=(3, 4, 3)),
    TmaCase("2d padded cols", "float", (100, 60), (1, 128), ("col", (32, 8))),
    TmaCase("2d strided inner", "float", (64, 64), (1, 256), ("col", (16, 16))),
    TmaCase("3d permuted", "half_t", (64, 128, 32), (128, 1, 8192), ("lay", (32, 64, 2), (64, 1, 2048))),
    TmaCase("3d batched row", "bfloat16_t", (128, 256, 4), (256, 1, 32768), ("row", (64, 64)),
            tiler=(64, 64), coord=(1, 2)),
    TmaCase("3d tile all", "float", (32, 64, 8), "left", ("col", (16, 16, 2)), coord=(1, 2, 3)),
    TmaCase("4d", "half_t", (16, 8, 4, 6), "left", ("col", (16, 4, 2, 3)), coord=(0, 1, 1, 1)),
    TmaCase("4d row", "float", (6, 4, 8, 32), "right", ("row", (2, 2, 4, 32)), coord=(2, 1, 1, 0)),
    TmaCase("5d", "float", (32, 4, 3, 2, 5), "left", ("col", (32, 2, 3, 2, 1)), coord=(0, 1, 0, 0, 4)),
    TmaCase("5d row", "int8_t", (2, 3, 4, 5, 64), "right", ("row", (2, 1, 2, 5, 64)), coord=(0, 2, 1, 0, 0)),
    TmaCase("nested gmem mode", "float", (("_8", 16), 64), (("_1", 8), 128), ("col", (32, 16))),
    TmaCase("smem mode merge", "float", (64, 64), "left", ("lay", (8, 8), (1, 8))),
    TmaCase("smem transposed vector", "float", (256, 256), "right", ("lay", (16, 32), (32, 1))),
    TmaCase("smem non-vector tail", "half_t", (256, 256), "right", ("lay", (8, 64), (128, 1)), sw=(3, 4, 3)),
    TmaCase("tiler smaller", "float", (512, 512), "right", ("row", (32, 32)), tiler=(32, 32), coord=(3, 4)),
    TmaCase("store sw64", "half_t", (512, 512), "right", ("row", (64, 32)), "SM90_TMA_STORE", sw=(2, 4, 3)),
    TmaCase("reduce_add half", "half_t", (512, 512), "right", ("row", (32, 64)), "SM90_TMA_REDUCE_ADD"),
    TmaCase("reduce_add bf16 col", "bfloat16_t", (512, 512), "left", ("col", (64, 32)), "SM90_TMA_REDUCE_ADD"),
    # --- multicast ---
    *[TmaCase(f"multicast {c} {s}", "half_t", (1024, 1024), "right", ("row", s), "SM90_TMA_LOAD_MULTICAST",
              cluster=c, coord=(1, 1), sw=sw)
      for c, s, sw in ((2, (64, 64), (3, 4, 3)), (4, (64, 64), (3, 4, 3)), (4, (128, 64), None), (2, (8, 32), None),
                       (4, (2, 64), None), (8, (4, 64), None), (16, (16, 16), None), (1, (64, 64), None))],
    TmaCase("multicast col 4", "float", (512, 512), "left", ("col", (64, 16)), "SM90_TMA_LOAD_MULTICAST", cluster=4),
    TmaCase("multicast gmma 2", "half_t", (512, 1024), "right", ("gmma", "K_SW128", (128, 64)),
            "SM90_TMA_LOAD_MULTICAST", cluster=2),
    TmaCase("multicast 3d 4", "float", (64, 64, 8), "left", ("col", (16, 8, 4)), "SM90_TMA_LOAD_MULTICAST",
            cluster=4, coord=(1, 2, 1)),
    # --- make_tma_atom + tma_partition ---
    *[TmaCase(f"atom {t} {s} mc{c}", t, (512, 512), "right", ("row", s),
              "SM90_TMA_LOAD_MULTICAST" if c > 1 else "SM90_TMA_LOAD", tiler=s, cluster=c, api="atom", coord=(1, 0),
              sw=sw)
      for t, s, c, sw in (("half_t", (64, 64), 1, (3, 4, 3)), ("half_t", (64, 64), 2, (3, 4, 3)),
                          ("float", (32, 32), 4, None), ("bfloat16_t", (128, 64), 4, (3, 4, 3)),
                          ("int8_t", (64, 128), 2, (3, 4, 3)), ("float", (16, 8), 1, None))],
    TmaCase("atom gmma mc2", "half_t", (512, 512), "left", ("gmma", "MN_SW128", (64, 64)), "SM90_TMA_LOAD_MULTICAST",
            tiler=(64, 64), cluster=2, api="atom", coord=(1, 0)),
    TmaCase("atom store", "float", (256, 256), "right", ("row", (32, 32)), "SM90_TMA_STORE", tiler=(32, 32),
            api="atom", coord=(1, 0)),
    # --- make_tma_copy_A/B/C_sm90 (tiler is the CTA's (M, N, K)) ---
    TmaCase("A sm90 K-major", "half_t", (512, 256), "right", ("gmma", "K_SW128", (128, 64)), "SM90_TMA_LOAD",
            tiler=(128, 128, 64), api="A", coord=(1, 2)),
    TmaCase("A sm90 mcast N2", "half_t", (512, 256), "right", ("gmma", "K_SW128", (128, 64)),
            "SM90_TMA_LOAD_MULTICAST", tiler=(128, 128, 64), api="A", cluster_shape=(1, 2, 1), coord=(1, 2)),
    TmaCase("A sm90 MN-major mcast N4", "bfloat16_t", (512, 256), "left", ("gmma", "MN_SW128", (128, 64)),
            "SM90_TMA_LOAD_MULTICAST", tiler=(128, 64, 64), api="A", cluster_shape=(2, 4, 1), coord=(1, 2)),
    TmaCase("B sm90 K-major", "half_t", (256, 256), "right", ("gmma", "K_SW128", (128, 64)), "SM90_TMA_LOAD",
            tiler=(64, 128, 64), api="B", coord=(1, 3)),
    TmaCase("B sm90 mcast M2", "float_e4m3_t", (256, 512), "right", ("gmma", "K_SW128", (64, 128)),
            "SM90_TMA_LOAD_MULTICAST", tiler=(128, 64, 128), api="B", cluster_shape=(2, 1, 1), coord=(1, 3)),
    TmaCase("B sm90 MN-major mcast M4", "float", (256, 512), "left", ("gmma", "MN_SW128", (64, 32)),
            "SM90_TMA_LOAD_MULTICAST", tiler=(128, 64, 32), api="B", cluster_shape=(4, 2, 1), coord=(2, 3)),
    TmaCase("C sm90 store", "float", (512, 256), "right", ("row", (128, 32)), "SM90_TMA_STORE", tiler=(128, 32, 64),
            api="C", coord=(1, 2)),
    TmaCase("C sm90 load sw", "half_t", (512, 256), "right", ("gmma", "K_SW128", (64, 64)), "SM90_TMA_LOAD",
            tiler=(64, 64, 32), api="C", coord=(3, 2)),
    TmaCase("C sm90 reduce", "float", (256, 256), "left", ("col", (32, 32)), "SM90_TMA_REDUCE_ADD",
            tiler=(32, 32, 16), api="C"),
    # --- 128-byte swizzles of 32 / 64-byte atoms (CuTe's Swizzle<2,5,2> / <2,6,S>) ---
    TmaCase("atom32 swizzle half", "half_t", (256, 256), "right", ("row", (32, 64)), sw=(2, 5, 2), arch="sm_100"),
    TmaCase("atom64 swizzle half", "half_t", (256, 256), "right", ("row", (32, 64)), sw=(2, 6, 3), arch="sm_100"),
    TmaCase("atom32 swizzle int8", "int8_t", (256, 256), "right", ("row", (16, 128)), sw=(2, 5, 2), arch="sm_100"),
    # --- refused when run (CuTe's asserts in make_tma_copy_desc) ---
    TmaCase("reject broadcast mode", "float", (256, 256), (1, "_0"), ("row", (8, 8))),
    TmaCase("fold 6 modes into 5", "float", (2, 2, 2, 2, 2, 4), (1, 8, 32, 128, 512, 2048),
            ("col", (2, 2, 2, 2, 2, 4))),
    TmaCase("reject box over 256", "uint8_t", (64, 1024), "right", ("row", (4, 512))),
    TmaCase("reject stride not 16B", "bfloat16_t", (512, 100), "right", ("row", (64, 64)), sw=(3, 4, 3)),
    TmaCase("reject majorness", "float", (256, 128), "right", ("col", (32, 8))),
]

# Expressions CuTe refuses at compile time (a static_assert): (name, case)
REJECT_CASES: list[TmaCase] = [
    TmaCase("static multicast split", "float", (1024, 1024), "right", ("row", (3, 16)), "SM90_TMA_LOAD_MULTICAST",
            cluster=2),
    TmaCase("static cutensor 4d dynamic", "float", ((32, 40), ((8, 8), 656)), "left", ("col", (128, (32, 2))),
            tiler=(128, (32, 2))),
    TmaCase("static nested dynamic gmem", "float", ((8, 16), 64), ((1, 8), 128), ("col", (32, 16))),
    TmaCase("static smem size != tile", "float", (256, 256), "right", ("row", (32, 32)), tiler=(16, 32)),
    TmaCase("static swizzle <3,3,3> on float", "float", (256, 256), "right", ("row", (8, 32)), sw=(3, 3, 3)),
    TmaCase("static swizzle <3,4,2>", "half_t", (256, 256), "right", ("row", (8, 64)), sw=(3, 4, 2)),
    TmaCase("static swizzle <3,5,2>", "half_t", (256, 256), "right", ("row", (8, 64)), sw=(3, 5, 2)),
    TmaCase("static swizzle <2,5,3>", "half_t", (256, 256), "right", ("row", (8, 64)), sw=(2, 5, 3)),
    # tmakit's extension (docs/CONFORMANCE.md): Swizzle<B, 4 - log2(element bytes), 3> on element offsets
    TmaCase("static swizzle <3,2,3> on float", "float", (256, 256), "right", ("row", (8, 32)), sw=(3, 2, 3)),
    # make_tma_copy<TmaInternalType>: only the 5-argument overload takes it
    TmaCase("internal uint16_t without tiler", "half_t", (256, 256), "right", ("row", (64, 64)),
            internal="uint16_t"),
]

MASK_CASES: list[MaskCase] = [
    MaskCase(f"vmnk {m}", (2, 2, 4, 1), (8, 4, 1, 0), (0, 1, 2, 0), m)
    for m in ((), (0,), (1,), (2,), (0, 1), (0, 2), (1, 2), (0, 1, 2))
] + [
    MaskCase(f"mn 2x4 {c} {m}", (2, 4), (1, 2), c, m) for c in ((0, 0), (1, 3), (1, 2)) for m in ((0,), (1,), (0, 1))
] + [
    MaskCase(f"vmnk 1x4x2x1 {c} {m}", (1, 4, 2, 1), (0, 1, 4, 0), c, m)
    for c in ((0, 0, 0, 0), (0, 3, 1, 0)) for m in ((1,), (2,), (1, 2))
] + [MaskCase("1d 8", (8,), (1,), (5,), (0,)), MaskCase("1d 8 none", (8,), (1,), (5,), ())]


def _random_cases(seed: int, n: int) -> list[TmaCase]:
    """Seeded random 2-3 D copies: type, major mode, padding, smem tile, swizzle, op and cluster size."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        t = rng.choice(["float", "half_t", "bfloat16_t", "int8_t", "double", "uint8_t", "tfloat32_t"])
        bits = TYPES[t][1]
        per16 = 128 // bits  # elements in 16 bytes
        rank = rng.choice([2, 2, 3])
        inner = rng.choice([2, 4, 8, 16]) * per16
        tile = [rng.choice([1, 2, 4]) * per16 if rng.random() < 0.5 else min(inner, 8 * per16)]
        tile[0] = min(tile[0], inner, 256)
        shp = [inner * rng.choice([1, 2, 3])]
        for _ in range(rank - 1):
            tile.append(rng.choice([1, 2, 4, 8, 16, 32]))
            shp.append(tile[-1] * rng.choice([1, 2, 5]) + rng.choice([0, 0, 3]))
        pad = rng.choice([0, 0, per16, 2 * per16])
        strides = [1]
        for k in range(1, rank):
            strides.append(strides[-1] * (shp[k - 1] + (pad if k == 1 else 0)))
        order = list(range(rank))
        if rng.random() < 0.5:  # swap the order of the outer modes (strides stay attached)
            order = [0] + rng.sample(range(1, rank), rank - 1)
        left = rng.random() < 0.5  # gmem mode 0 contiguous (else the last mode is)
        if not left:
            order = order[::-1]
        gs = tuple(shp[k] for k in order)
        gd = tuple(strides[k] for k in order)
        ts = tuple(tile[k] for k in order)
        row_bytes = tile[0] * bits // 8
        sw = None
        if row_bytes in (32, 64, 128) and rng.random() < 0.6:
            sw = ({32: 1, 64: 2, 128: 3}[row_bytes], 4, 3)
        smem = ("col", ts) if left else ("row", ts)
        op = rng.choice(["SM90_TMA_LOAD", "SM90_TMA_LOAD_MULTICAST", "SM90_TMA_STORE"])
        size = 1
        for x in ts:
            size *= x
        cl = 1
        if op == "SM90_TMA_LOAD_MULTICAST":
            cl = rng.choice([c for c in (1, 2, 4) if size % (c * per16) == 0] or [1])
        gstride = tuple("_1" if d == 1 else d for d in gd)
        out.append(TmaCase(f"random {seed}.{i}", t, gs, gstride, smem, op, cluster=cl, sw=sw))
    return out


CASES += _random_cases(2024, 40) + _random_cases(7, 30)

# make_tma_copy<TmaInternalType> & co: the descriptor's data type is TmaInternalType (fp8 / half / bf16 / float moved
# as the unsigned integer of their width, float as tf32 and back); a wider or narrower type recasts the gmem tensor
# in CuTe (tmakit refuses it: REFUSED_BY_TMAKIT in tests/test_tma_oracle.py)
CASES += [
    TmaCase("internal e4m3 as uint8_t", "float_e4m3_t", (512, 512), "right", ("gmma", "K_SW128", (128, 128)),
            tiler=(128, 128), coord=(1, 2), internal="uint8_t"),
    TmaCase("internal int8 as uint8_t", "int8_t", (256, 512), "right", ("row", (32, 128)), tiler=(32, 128),
            sw=(3, 4, 3), internal="uint8_t"),
    TmaCase("internal half as uint16_t", "half_t", (512, 256), "right", ("row", (64, 64)), tiler=(64, 64),
            sw=(3, 4, 3), internal="uint16_t"),
    TmaCase("internal half as uint16_t mc2", "half_t", (512, 512), "right", ("row", (64, 64)),
            "SM90_TMA_LOAD_MULTICAST", tiler=(64, 64), cluster=2, coord=(1, 1), sw=(3, 4, 3), internal="uint16_t"),
    TmaCase("internal half as bfloat16_t", "half_t", (256, 256), "left", ("gmma", "MN_SW64", (64, 64)),
            tiler=(64, 64), internal="bfloat16_t"),
    TmaCase("internal bf16 as uint16_t store", "bfloat16_t", (512, 256), "right", ("row", (64, 64)),
            "SM90_TMA_STORE", tiler=(64, 64), coord=(2, 1), sw=(3, 4, 3), internal="uint16_t"),
    TmaCase("internal float as uint32_t", "float", (256, 256), "right", ("row", (32, 32)), tiler=(32, 32),
            sw=(3, 4, 3), internal="uint32_t"),
    TmaCase("internal float as tfloat32_t", "float", (256, 256), "right", ("gmma", "K_SW128", (64, 32)),
            tiler=(64, 32), coord=(2, 3), internal="tfloat32_t"),
    TmaCase("internal tfloat32 as float", "tfloat32_t", (256, 256), "left", ("col", (64, 16)), tiler=(64, 16),
            internal="float"),
    TmaCase("internal double as uint64_t", "double", (128, 128), "right", ("row", (16, 16)), tiler=(16, 16),
            internal="uint64_t"),
    TmaCase("internal atom bf16 as uint16_t mc2", "bfloat16_t", (512, 512), "right", ("row", (64, 64)),
            "SM90_TMA_LOAD_MULTICAST", tiler=(64, 64), cluster=2, api="atom", coord=(1, 0), sw=(3, 4, 3),
            internal="uint16_t"),
    TmaCase("internal atom float as tfloat32_t", "float", (256, 256), "right", ("row", (32, 32)), tiler=(32, 32),
            api="atom", coord=(1, 0), internal="tfloat32_t"),
    TmaCase("internal A e4m3 as uint8_t mc2", "float_e4m3_t", (512, 256), "right", ("gmma", "K_SW128", (128, 128)),
            "SM90_TMA_LOAD_MULTICAST", tiler=(128, 128, 128), api="A", cluster_shape=(1, 2, 1), coord=(1, 1),
            internal="uint8_t"),
    TmaCase("internal B float as tfloat32_t", "float", (256, 512), "right", ("gmma", "K_SW128", (64, 32)),
            "SM90_TMA_LOAD", tiler=(128, 64, 32), api="B", coord=(1, 3), internal="tfloat32_t"),
    TmaCase("internal C half as uint16_t store", "half_t", (512, 256), "right", ("row", (128, 32)), "SM90_TMA_STORE",
            tiler=(128, 32, 64), api="C", coord=(1, 2), internal="uint16_t"),
    TmaCase("internal half as uint32_t", "half_t", (256, 512), "right", ("row", (64, 64)), tiler=(64, 64),
            coord=(1, 1), internal="uint32_t"),
    TmaCase("internal half as uint8_t", "half_t", (256, 512), "right", ("row", (64, 64)), tiler=(64, 64),
            coord=(1, 1), internal="uint8_t"),
]


def _product_each(shape):
    out = []
    for m in shape:
        p = 1
        for x in (_flatten(m) if isinstance(m, tuple) else (m,)):
            p *= x
        out.append(p)
    return tuple(out)


def _flatten(t):
    return sum((_flatten(x) if isinstance(x, tuple) else (x,) for x in t), ())


def part_tiler(c: TmaCase) -> tuple:
    """The tile each CTA partitions: the case's tiler (A/B/C: without N / M / K) or the smem shape's product_each."""
    if c.api in ("A", "B", "C"):
        drop = {"A": 1, "B": 0, "C": 2}[c.api]
        return tuple(x for i, x in enumerate(c.tiler) if i != drop)
    if c.tiler is not None:
        return c.tiler
    shape = c.smem[2] if c.smem[0] == "gmma" else c.smem[1]
    return _product_each(shape)


# --- im2col: make_im2col_tma_copy (copy_traits_sm90_im2col.hpp) ---

@dataclass(frozen=True)
class Im2colCase:
    """A conv activation ``((w[,h[,d]],n), c)`` (packed NHWC / NDHWC / NWC, channel stride ``_1``; ``cpad`` extra
    elements per pixel) copied with ``make_im2col_tma_copy``. ``conv``: the 7 corner/stride tuples in W,H,D order
    (None: CuTe's no-offset overload); ``multicast`` None: the overload without it; ``tiler`` None: without both."""

    name: str
    dtype: str
    whdn: tuple
    c: int
    smem: tuple
    op: str = "SM90_TMA_LOAD_IM2COL"
    conv: tuple | None = None
    tiler: tuple | None = None
    multicast: int | None = None
    coord: tuple = (0, 0)
    sw: tuple | None = None
    cpad: int = 0

    def gstride(self) -> tuple:
        out, s = [], self.c + self.cpad
        for x in self.whdn:
            out.append(s)
            s *= x
        return tuple(out)


def fprop(filt, pad_lo=None, pad_hi=None, stride=None, dil=None) -> tuple:
    """CUTLASS's fprop corners (compute_lower/upper_corner_whd, compute_lower_srt) for a filter, all W,H,D order."""
    n = len(filt)
    pad_lo = pad_lo or (0,) * n
    pad_hi = pad_hi or pad_lo
    stride = stride or (1,) * n
    dil = dil or (1,) * n
    upper = tuple(p - (f - 1) * d for p, f, d in zip(pad_hi, filt, dil))
    return (tuple(-p for p in pad_lo), upper, tuple(pad_lo), tuple(pad_hi), tuple(stride), (0,) * n, tuple(dil))


def _k(atom, m, k):
    return ("gmma", atom, (m, k))


IM2COL_CASES: list[Im2colCase] = [
    # --- 2-D (NHWC) ---
    Im2colCase("nhwc 1x1 half", "half_t", (8, 8, 2), 64, _k("K_SW128", 64, 64), conv=fprop((1, 1)), coord=(1, 0)),
    Im2colCase("nhwc 3x3 pad1 half", "half_t", (16, 16, 2), 64, _k("K_SW128", 128, 64),
               conv=fprop((3, 3), (1, 1)), coord=(2, 4)),
    Im2colCase("nhwc 3x3 stride2 half", "half_t", (17, 15, 3), 64, _k("K_SW128", 64, 64),
               conv=fprop((3, 3), (1, 1), (1, 1), (2, 2)), coord=(1, 3)),
    Im2colCase("nhwc 3x3 dil2 bf16", "bfloat16_t", (20, 12, 2), 128, _k("K_SW128", 64, 64),
               conv=fprop((3, 3), (2, 2), (2, 2), (1, 1), (2, 2)), coord=(3, 5)),
    Im2colCase("nhwc 5x3 asym pad", "half_t", (12, 10, 1), 32, _k("K_SW64", 64, 32),
               conv=fprop((5, 3), (2, 0), (1, 2)), coord=(1, 7)),
    Im2colCase("nhwc 3x3 float c32", "float", (9, 9, 4), 32, _k("K_SW128", 64, 32),
               conv=fprop((3, 3), (1, 1)), coord=(2, 3)),
    Im2colCase("nhwc 3x3 float c16 sw64", "float", (9, 7, 2), 16, _k("K_SW64", 64, 16),
               conv=fprop((3, 3), (1, 1)), coord=(1, 2)),
    Im2colCase("nhwc 3x3 e4m3 c128", "float_e4m3_t", (14, 14, 2), 128, _k("K_SW128", 128, 128),
               conv=fprop((3, 3), (1, 1)), coord=(1, 8)),
    Im2colCase("nhwc 1x1 e4m3 c256", "float_e4m3_t", (8, 8, 4), 256, _k("K_SW128", 64, 128),
               conv=fprop((1, 1)), coord=(2, 1)),
    Im2colCase("nhwc 3x3 half c8 inter", "half_t", (10, 10, 1), 8, _k("K_INTER", 64, 8),
               conv=fprop((3, 3), (1, 1)), coord=(1, 4)),
    Im2colCase("nhwc 3x3 half k128", "half_t", (8, 8, 2), 128, _k("K_SW128", 64, 128),
               conv=fprop((3, 3), (1, 1)), coord=(1, 3)),
    Im2colCase("nhwc 3x3 padded pixels", "half_t", (8, 6, 2), 64, _k("K_SW128", 64, 64),
               conv=fprop((3, 3), (1, 1)), cpad=8, coord=(1, 1)),
    Im2colCase("nhwc row smem", "half_t", (8, 8, 1), 64, ("row", (32, 64)), conv=fprop((3, 3), (1, 1)),
               coord=(1, 2)),
    Im2colCase("nhwc row smem sw128", "half_t", (8, 8, 1), 64, ("row", (32, 64)), sw=(3, 4, 3),
               conv=fprop((3, 3), (1, 1)), coord=(0, 5)),
    Im2colCase("nhwc 7x7 stride2 pad3", "bfloat16_t", (32, 32, 1), 64, _k("K_SW128", 128, 64),
               conv=fprop((7, 7), (3, 3), (3, 3), (2, 2)), coord=(1, 20)),
    Im2colCase("nhwc tiler given", "half_t", (16, 16, 2), 64, _k("K_SW128", 64, 64), conv=fprop((3, 3), (1, 1)),
               tiler=(64, 64), coord=(3, 2)),
    # --- 3-D (NDHWC) and 1-D (NWC) ---
    Im2colCase("ndhwc 3x3x3 pad1 half", "half_t", (8, 6, 4, 2), 64, _k("K_SW128", 64, 64),
               conv=fprop((3, 3, 3), (1, 1, 1)), coord=(2, 13)),
    Im2colCase("ndhwc 1x1x1 bf16", "bfloat16_t", (4, 4, 4, 2), 64, _k("K_SW128", 128, 64), conv=fprop((1, 1, 1))),
    Im2colCase("ndhwc 3x1x2 stride dil", "float", (10, 9, 8, 1), 32, _k("K_SW128", 64, 32),
               conv=fprop((3, 1, 2), (1, 0, 1), (1, 0, 0), (2, 1, 2), (1, 1, 2)), coord=(1, 4)),
    Im2colCase("nwc 3 pad1 half", "half_t", (64, 4), 64, _k("K_SW128", 128, 64), conv=fprop((3,), (1,)),
               coord=(1, 2)),
    Im2colCase("nwc 5 stride2 dil3 e4m3", "float_e4m3_t", (100, 2), 128, _k("K_SW128", 64, 128),
               conv=fprop((5,), (6,), (6,), (2,), (3,)), coord=(1, 3)),
    Im2colCase("nwc 1 float", "float", (256, 1), 32, _k("K_SW128", 128, 32), conv=fprop((1,)), coord=(1, 0)),
    # --- no-offset overloads (lower/upper corners, padding, srt all _0, strides _1) ---
    Im2colCase("no offsets nhwc", "half_t", (8, 8, 2), 64, _k("K_SW128", 64, 64), coord=(1, 0)),
    Im2colCase("no offsets tiler", "half_t", (8, 8, 2), 64, _k("K_SW128", 64, 64), tiler=(64, 64), coord=(2, 0)),
    Im2colCase("no offsets mc2", "half_t", (8, 8, 2), 64, _k("K_SW128", 128, 64), "SM90_TMA_LOAD_IM2COL_MULTICAST",
               tiler=(128, 64), multicast=2),
    Im2colCase("no offsets ndhwc float", "float", (4, 4, 4, 2), 32, _k("K_SW128", 64, 32), coord=(1, 0)),
    # --- stores (.im2col_no_offs) ---
    Im2colCase("store nhwc half", "half_t", (8, 8, 2), 64, _k("K_SW128", 64, 64), "SM90_TMA_STORE_IM2COL",
               coord=(1, 0)),
    Im2colCase("store nwc bf16", "bfloat16_t", (128, 2), 64, _k("K_SW128", 64, 64), "SM90_TMA_STORE_IM2COL",
               conv=fprop((1,)), coord=(3, 0)),
    # --- multicast ---
    *[Im2colCase(f"multicast {mc} {t} {m}x{k}", t, (16, 16, 2), k, _k("K_SW128", m, k),
                 "SM90_TMA_LOAD_IM2COL_MULTICAST", conv=fprop((3, 3), (1, 1)), tiler=(m, k), multicast=mc,
                 coord=(1, 2))
      for mc, t, m, k in ((2, "half_t", 128, 64), (4, "half_t", 128, 64), (2, "bfloat16_t", 64, 64),
                          (4, "float_e4m3_t", 128, 128), (8, "half_t", 128, 64), (1, "half_t", 64, 64),
                          (2, "float", 64, 32))],
    Im2colCase("multicast 2 ndhwc", "half_t", (8, 8, 4, 1), 64, _k("K_SW128", 128, 64),
               "SM90_TMA_LOAD_IM2COL_MULTICAST", conv=fprop((3, 3, 3), (1, 1, 1)), tiler=(128, 64), multicast=2,
               coord=(1, 5)),
    Im2colCase("load multicast op mc1", "half_t", (8, 8, 1), 64, _k("K_SW128", 64, 64),
               "SM90_TMA_LOAD_IM2COL_MULTICAST", conv=fprop((1, 1)), coord=(0, 0)),
]

# make_im2col_tma_copy expressions CuTe refuses at compile time
IM2COL_REJECT_CASES: list[Im2colCase] = [
    Im2colCase("im2col static smem no unit mode", "half_t", (8, 8, 2), 32, ("lay", (64, (2, 16)), (32, (16, 1))),
               conv=fprop((1, 1))),
    Im2colCase("im2col static tiler != smem", "half_t", (8, 8, 2), 64, _k("K_SW128", 64, 64), conv=fprop((1, 1)),
               tiler=(128, 64)),
    Im2colCase("im2col static multicast split", "half_t", (8, 8, 2), 64, _k("K_SW128", 64, 64),
               "SM90_TMA_LOAD_IM2COL_MULTICAST", conv=fprop((1, 1)), tiler=(64, 64), multicast=3),
]
