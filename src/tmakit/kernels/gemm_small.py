"""The small-problem GEMM (``gemm_small.cu``): plan, tile choice and launch.

Small problems are latency-bound: the persistent TMA GEMM's descriptor fetches, barrier set-up and warp-specialized
pipeline cost more than their arithmetic, and cuBLAS's small kernels still spend about 2 µs above an empty
kernel. This kernel gives each 128-thread CTA one output tile and starts loading at once (plain global loads,
``ldmatrix`` + ``mma.sync``). It reads operands through their strides, so it takes any strided view, aligned or
not; its K loop is sequential per CTA, so it is for short K (``tmakit.ops.gemm_route`` decides where it runs).
No GPU is needed to plan; ``launcher`` compiles (NVRTC) and launches.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field

from ..bounded import make_room
from .gemm import GemmError, compiled, launch_fn

__all__ = ["SmallPlan", "TILES", "choose_tile", "kernel_name", "launcher", "loads_async", "plan_small"]

THREADS = 128
BK = 32  # K per chunk (gemm_small.cu's SBK)
TILES = ((16, 64), (32, 64), (64, 64), (64, 128))  # (BM, BN) the kernel is built for
_IN = {"bfloat16": 0, "float16": 1}
_OUT = {"bfloat16": 0, "float16": 1, "float32": 2}
_ELEM = {"bfloat16": 2, "float16": 2, "float32": 4}


class Operand(ctypes.Structure):
    """gemm_small.cu's ``Operand``: an operand as (row, col) of its shared tile, element strides and extents."""

    _fields_ = [("p", ctypes.c_uint64), ("s_row", ctypes.c_int64), ("s_col", ctypes.c_int64),
                ("rows", ctypes.c_int32), ("cols", ctypes.c_int32)]


@dataclass(frozen=True)
class SmallPlan:
    """Everything about a call but its addresses: sizes, dtypes, tile, shared layouts and the operands' strides
    (elements). ``a_kc`` / ``b_kc``: the operand's contiguous dim is K. Whether 16-byte loads (``cp.async``) and
    stores are legal depends on the addresses too: the launcher decides."""

    m: int
    n: int
    k: int
    in_dtype: str
    out_dtype: str
    bm: int
    bn: int
    a_strides: tuple[int, int]  # (M, K)
    b_strides: tuple[int, int]  # (K, N)
    c_strides: tuple[int, int]  # (M, N)
    a_kc: int
    b_kc: int
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self):  # plans key the launch cache on every call: hash once
        object.__setattr__(self, "_hash", hash((self.m, self.n, self.k, self.in_dtype, self.out_dtype, self.bm,
                                                 self.bn, self.a_strides, self.b_strides, self.c_strides)))

    def __hash__(self) -> int:
        return self._hash

    @property
    def tiles(self) -> int:
        return -(-self.m // self.bm) * -(-self.n // self.bn)


def choose_tile(m: int, n: int, sms: int = 132) -> tuple[int, int]:
    """(BM, BN): the smallest tile that keeps the grid within a few CTAs per SM. More, smaller CTAs put more
    loads in flight, which is what a latency-bound problem needs, until the grid passes about three CTAs per SM
    (then 32, 64 and finally 128 columns x 64 rows; measured on random shapes, docs/GEMM.md "Small problems")."""
    for (bm, bn), per_sm in zip(TILES, (3.0, 4.0, 4.5)):
        if -(-m // bm) * -(-n // bn) <= per_sm * sms:
            return bm, bn
    return TILES[-1]


def _contiguous_is_k(s_k: int, s_mn: int, k: int) -> int:
    """1 when the shared tile should be [MN][K] (K the unit-stride dim, or neither is), 0 for [K][MN]."""
    if s_k == 1 and k > 1:
        return 1
    return 0 if s_mn == 1 else 1


def plan_small(m: int, n: int, k: int, in_dtype: str, out_dtype: str, a_strides, b_strides, c_strides,
               tile: tuple[int, int] | None = None) -> SmallPlan:
    """The plan of ``C (M, N) = A (M, K) @ B (K, N)`` with these element strides. Raises :class:`GemmError` for
    what the kernel cannot take (dtypes, sizes past its 32-bit indices, a tile it is not built for)."""
    if in_dtype not in _IN:
        raise GemmError(f"the small GEMM takes bfloat16 or float16 inputs, got {in_dtype}")
    if out_dtype not in _OUT:
        raise GemmError(f"output dtype must be bfloat16, float16 or float32, got {out_dtype}")
    for nm, v in (("M", m), ("N", n), ("K", k)):
        if not 1 <= v < 2**31:
            raise GemmError(f"{nm} = {v}: the small GEMM takes 1 <= {nm} < 2^31")
    tile = tuple(tile) if tile is not None else choose_tile(m, n)
    if tile not in TILES:
        raise GemmError(f"tile {tile} is not one of the small GEMM's {TILES}")
    if -(-m // tile[0]) * -(-n // tile[1]) >= 2**31:
        raise GemmError(f"{m}x{n} needs 2^31 or more {tile} tiles: past the grid's limit")
    sa, sb = tuple(int(s) for s in a_strides), tuple(int(s) for s in b_strides)
    return SmallPlan(m, n, k, in_dtype, out_dtype, tile[0], tile[1], sa, sb, tuple(int(s) for s in c_strides),
                     _contiguous_is_k(sa[1], sa[0], k), _contiguous_is_k(sb[0], sb[1], k))


def _operands(p: SmallPlan, a_ptr: int, b_ptr: int):
    """(Operand A, Operand B, VA, VB) for these addresses."""
    (sam, sak), (sbk, sbn) = p.a_strides, p.b_strides
    a = Operand(a_ptr, sam, sak, p.m, p.k) if p.a_kc else Operand(a_ptr, sak, sam, p.k, p.m)
    b = Operand(b_ptr, sbn, sbk, p.n, p.k) if p.b_kc else Operand(b_ptr, sbk, sbn, p.k, p.n)
    return a, b, _vector_ok(a, 2), _vector_ok(b, 2)


def loads_async(m: int, n: int, k: int, a_strides, b_strides, a_ptr: int, b_ptr: int) -> bool:
    """Whether both operands take the kernel's cp.async path (16-byte loads; else it gathers element by element,
    which measured slower than cuBLAS on most unaligned small problems). Integer tests only: the route asks this
    on every call it has not cached."""
    for (s_mn, s_k), mn, ptr in ((a_strides, m, a_ptr), ((b_strides[1], b_strides[0]), n, b_ptr)):
        kc = _contiguous_is_k(s_k, s_mn, k)
        s_row, s_col, rows, cols = (s_mn, s_k, mn, k) if kc else (s_k, s_mn, k, mn)
        if not _rows_vector_ok(s_row, s_col, rows, cols, ptr, 2):
            return False
    return True


def _vector_ok(op: Operand, eb: int) -> int:
    """16-byte loads along the tile's columns of ``op``: :func:`_rows_vector_ok` of its fields."""
    return int(_rows_vector_ok(op.s_row, op.s_col, op.rows, op.cols, op.p, eb))


def _rows_vector_ok(s_row: int, s_col: int, rows: int, cols: int, ptr: int, eb: int) -> bool:
    """Unit column stride, 16-byte base, 16-byte row pitch (a single row or column needs only the base)."""
    return (s_col == 1 or cols == 1) and ptr % 16 == 0 and (rows == 1 or (s_row * eb) % 16 == 0)


def kernel_name(p: SmallPlan, va: int, vb: int, vc: int) -> str:
    return (f"tmakit_gemm_small<{_IN[p.in_dtype]}, {_OUT[p.out_dtype]}, {p.bm}, {p.bn}, {p.a_kc}, {p.b_kc}, "
            f"{va}, {vb}, {vc}>")


_launchers: dict = {}


def launcher(p: SmallPlan, a_ptr: int, b_ptr: int, c_ptr: int):
    """A memoised ``fn(stream=None)`` launching plan ``p`` on these addresses (compiled by NVRTC on first use)."""
    key = (p, a_ptr, b_ptr, c_ptr)
    fn = _launchers.get(key)
    if fn is not None:
        return fn
    a, b, va, vb = _operands(p, a_ptr, b_ptr)
    eo = _ELEM[p.out_dtype]
    scm, scn = p.c_strides
    vc = int((scn == 1 or p.n == 1) and c_ptr % 16 == 0 and (p.m == 1 or (scm * eo) % 16 == 0))
    k = compiled("gemm_small.cu", kernel_name(p, va, vb, vc))
    args = (a, b, ctypes.c_uint64(c_ptr), ctypes.c_int64(scm), ctypes.c_int64(scn), ctypes.c_int32(p.m),
            ctypes.c_int32(p.n), ctypes.c_int32(p.k))
    fn = launch_fn(k, p.tiles, THREADS, args, 0, 1, False)
    make_room(_launchers, 512)
    _launchers[key] = fn
    return fn
