"""GMMA selectors: CuTe's ``GMMA::ss_op_selector`` / ``rs_op_selector`` (cute/arch/mma_sm90.hpp) pick the widest
warpgroup MMA whose N divides the tile's N; CUTLASS's ``ss_smem_selector`` / ``rs_smem_selector``
(cutlass/gemm/collective/builders/sm90_common.inl, namespace ``cutlass::gemm::collective::detail``) pick the widest
smem layout atom that divides a tile's MN (MN-major) or K (K-major) extent.

``extended_shapes`` stands for CuTe's compile flag ``CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED`` (off by default): without
it the selectors choose among N in {8, 16, 32, 64, 96, 128, 192, 256}.
"""

from __future__ import annotations

import numpy as np

from ..layout import size
from ..layout.int_tuple import is_tuple
from .errors import MmaError
from .gmma_desc import Major
from .gmma_layouts import layout_atom
from .mma_sm90 import KINDS, N_BASE, N_DENSE, N_INT, gmma_op
from .numeric import sizeof_bits, type_name


def _key(t) -> str:
    return getattr(t, "name", None) or np.dtype(t).name


_TYPE_TAG = {"half_t": "F16", "bfloat16_t": "BF16", "tfloat32_t": "TF32", "float_e4m3_t": "E4M3",
             "float_e5m2_t": "E5M2", "int8": "S8", "uint8": "U8"}
_ACC_TAG = {"half_t": "F16", "float32": "F32", "int32": "S32"}


def _mode0(x) -> int:
    return int(size(x[0])) if is_tuple(x) else int(x)


def _tile(tile_shape_mnk):
    if not is_tuple(tile_shape_mnk) or len(tile_shape_mnk) != 3:
        raise MmaError(f"TileShape_MNK must be rank 3; got {tile_shape_mnk}. Pass (Tile_M, Tile_N, Tile_K)")
    m, n, k = (int(size(x)) for x in tile_shape_mnk)
    if m % 64:
        raise MmaError(f"Tile_M must be a multiple of 64; got TileShape_MNK {tile_shape_mnk} (Tile_M = {m})")
    return m, n, k


def _select(element_a, element_b, element_c, tile_shape_mnk, major_a, major_b, args, rs, extended):
    major_a, major_b = Major(major_a), Major(major_b)
    _m, n, k = _tile(tile_shape_mnk)
    if rs and major_a != Major.K:
        raise MmaError("Register source A operand GMMAs must have K-major A layout; got MajorA = GMMA::Major::MN. "
                       "Use tk.GMMA.Major.K, or ss_op_selector")
    acc = _ACC_TAG.get(_key(element_c))
    if acc is None:
        raise MmaError(f"Unknown ElementC accumulator type {type_name(element_c)}; GMMA accumulates in half_t, "
                       "float or int32_t")
    kind = acc + _TYPE_TAG.get(_key(element_a), "?") + _TYPE_TAG.get(_key(element_b), "?")
    if kind not in KINDS or (acc == "S32") != kind.startswith("S32"):
        raise MmaError(f"No eligible GMMA operator for request configuration: A {type_name(element_a)}, B "
                       f"{type_name(element_b)}, C {type_name(element_c)}. GMMA kinds: {', '.join(KINDS)}")
    _c, _a, _b, kk, transposable = KINDS[kind]
    if not transposable:
        for what, m in (("MajorA", major_a), ("MajorB", major_b)):
            if m != Major.K:
                raise MmaError(f"{what} must be GMMA::Major::K for this config ({kind}); got GMMA::Major::{m.name}")
    if k % kk:
        raise MmaError(f"Tile_K must be a multiple of {kk}; got TileShape_MNK {tile_shape_mnk} (Tile_K = {k})")
    integer = kind.startswith("S32")
    ns = (N_INT if integer else N_DENSE) if extended else N_BASE
    for cand in sorted(ns, reverse=True):
        if n % cand == 0:
            targs = (major_a, major_b, *args) if transposable else tuple(args)
            return gmma_op(kind, cand, rs, *targs)
    raise MmaError(f"Tile_N must be a multiple of 8; got TileShape_MNK {tile_shape_mnk} (Tile_N = {n})")


def ss_op_selector(element_a, element_b, element_c, tile_shape_mnk, major_a=Major.K, major_b=Major.K, *args,
                   extended_shapes=False):
    """``GMMA::ss_op_selector<ElementA, ElementB, ElementC, TileShape_MNK, MajorA, MajorB, Args...>()``: the
    smem-sourced GMMA op (``args``: the scaleA, scaleB template arguments) with the widest N dividing Tile_N."""
    return _select(element_a, element_b, element_c, tile_shape_mnk, major_a, major_b, args, False, extended_shapes)


def rs_op_selector(element_a, element_b, element_c, tile_shape_mnk, major_a=Major.K, major_b=Major.K, *args,
                   extended_shapes=False):
    """``GMMA::rs_op_selector<...>()``: as ss_op_selector, for the register-sourced (``_RS``) ops (MajorA K)."""
    return _select(element_a, element_b, element_c, tile_shape_mnk, major_a, major_b, args, True, extended_shapes)


_SW = ("SW128", "SW64", "SW32", "INTER")


def _blk(blk_mn, blk_k):
    mn0, k0 = _mode0(blk_mn), _mode0(blk_k)
    if mn0 % 8:
        raise MmaError(f"BLK_MN0 must be a multiple of 8; got {blk_mn}")
    if k0 % 8:
        raise MmaError(f"BLK_K0 must be a multiple of 8; got {blk_k}")
    return mn0, k0


def _first(major: Major, element_type, extent: int, names):
    mode = 0 if major == Major.MN else 1
    for sw in names:
        atom = layout_atom(f"{major.name}_{sw}", element_type)
        if extent % int(size(atom, mode)) == 0:
            return atom
    last = f"size<{mode}>(GMMA::Layout_{major.name}_{names[-1]}_Atom<ElementType>{{}})"
    raise MmaError(f"BLK_{'MN' if mode == 0 else 'K'}0 must be a multiple of {last} = "
                   f"{int(size(layout_atom(f'{major.name}_{names[-1]}', element_type), mode))}; got {extent}")


def ss_smem_selector(major, element_type, blk_mn, blk_k):
    """``ss_smem_selector<major, ElementType, BLK_MN, BLK_K>()``: the widest GMMA layout atom whose MN extent
    divides BLK_MN0 (MN-major) or whose K extent divides BLK_K0 (K-major)."""
    major = Major(major)
    mn0, k0 = _blk(blk_mn, blk_k)
    return _first(major, element_type, mn0 if major == Major.MN else k0, _SW)


def rs_smem_selector(major, element_type, blk_mn, blk_k, is_ws_transposed_B=False):  # noqa: N803 - CUTLASS's name
    """``rs_smem_selector<major, ElementType, BLK_MN, BLK_K, is_ws_transposed_B>()``: as ss_smem_selector, except that
    MN-major 32-bit types prefer SW32 (then INTER), and a warp-specialized transposed B takes SW32 (32-bit) or
    SW128 (8-bit) only."""
    major = Major(major)
    mn0, k0 = _blk(blk_mn, blk_k)
    if major == Major.K:
        return _first(major, element_type, k0, _SW)
    nbytes = (sizeof_bits(element_type) + 7) // 8  # sizeof: sub-byte types take a byte
    if nbytes % 4 == 0:
        return _first(major, element_type, mn0, ("SW32",) if is_ws_transposed_B else ("SW32", "INTER"))
    if nbytes in (1, 2):
        return _first(major, element_type, mn0, ("SW128",) if nbytes == 1 and is_ws_transposed_B else _SW)
    raise MmaError(f"Smem selector does not support this element type: {type_name(element_type)} "
                   f"({nbytes} bytes); use a 1-, 2- or 4-byte (or whole-word) type")
