"""The general (non-TMA, non-TMEM) copy operations and their Copy_Traits (cute/arch/copy*.hpp,
cute/atom/copy_traits*.hpp): ``UniversalCopy<S, D>``, ``AutoVectorizingCopyWithAssumedAlignment<B>`` (and its
aliases ``AutoVectorizingCopy`` = 128 bits, ``DefaultCopy`` = 8 bits), ``SM80_CP_ASYNC_CACHEALWAYS/CACHEGLOBAL<S, D>``
(cp.async), ``SM75_*_LDSM_N/T`` (ldmatrix) and ``SM90_*_STSM_N/T`` (stmatrix).

Each op carries CuTe's traits in bits: ``thr_id`` (ThrID), ``src_layout`` / ``dst_layout`` / ``ref_layout``
((thread, bit) -> bit offset). ``tk.Copy_Atom(op, value_type)`` recasts them to ``value_type`` elements.
``tk.UniversalCopy(np.uint32)`` is CuTe's ``UniversalCopy<uint32_t>`` (template arguments become call arguments).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..layout import Int, Layout, make_layout
from .errors import MmaError
from .numeric import sizeof_bits, type_name, uint128_t
from .tmem_ops import _L


class CopyError(MmaError):
    """A general copy rule was broken (a copy op's template arguments, a tiled copy's thread / value layouts)."""


@dataclass(frozen=True)
class GeneralCopyOp:
    """One copy instruction: ``name`` is CuTe's type (with its template arguments), the layouts are its Copy_Traits
    in bits. ``kind`` says what the emulator may do with it: ``universal`` (an elementwise register / memory copy),
    ``cp_async``, ``ldsm``, ``stsm``."""

    name: str
    kind: str
    thr_id: Layout
    src_layout: Layout
    dst_layout: Layout
    ref_layout: Layout
    src_type: object = None
    dst_type: object = None

    def __str__(self):
        return self.name

    def cpp(self) -> str:
        return self.name


def _cpp_type(t) -> str:
    if t is uint128_t:
        return "uint128_t"
    name = type_name(t)
    return name.replace("cutlass::", "")


def _bits(t, op: str) -> int:
    try:
        return sizeof_bits(t)
    except MmaError:
        raise CopyError(f"{op} takes element types (np.uint32, tk.half_t, tk.uint128_t ...); got {t!r}") from None


def _one_value(name, kind, s, d, sb, db):
    """One thread, one value: ``Layout<Shape<_1, Int<bits>>>`` for source (= reference) and destination."""
    src, dst = make_layout((Int(1), Int(sb))), make_layout((Int(1), Int(db)))
    return GeneralCopyOp(name, kind, make_layout(Int(1)), src, dst, src, s, d)


def UniversalCopy(S, D=None) -> GeneralCopyOp:  # noqa: N802, N803 - CuTe's name
    """``UniversalCopy<S, D = S>``: one thread copies one S value into one D value (``dst = src``); both types must
    be at least 8 bits wide."""
    D = S if D is None else D  # noqa: N806
    sb, db = _bits(S, "UniversalCopy"), _bits(D, "UniversalCopy")
    if sb < 8 or db < 8:
        raise CopyError(f"UniversalCopy<S, D> needs types of at least 8 bits (sizeof_bits_v >= 8); got {sb} and "
                        f"{db} bits. Copy sub-byte values packed into a uint8_t (or wider) register type")
    name = f"UniversalCopy<{_cpp_type(S)}" + (f", {_cpp_type(D)}>" if D is not S else ">")
    return _one_value(name, "universal", S, D, sb, db)


def AutoVectorizingCopyWithAssumedAlignment(MaxVecBits=128) -> GeneralCopyOp:  # noqa: N802, N803
    """``AutoVectorizingCopyWithAssumedAlignment<MaxVecBits>``: cute::copy may vectorize up to ``MaxVecBits`` (8,
    16, 32, 64 or 128); its traits are one thread and one (any-width) value: ``(_1,_1):(_0,_0)``."""
    b = int(MaxVecBits)
    if b not in (8, 16, 32, 64, 128):
        raise CopyError(f"AutoVectorizingCopyWithAssumedAlignment<MaxVecBits>: MaxVecBits must be 8, 16, 32, 64 or "
                        f"128 (an alignment CuTe can vectorize to); got {b}")
    one = _L((1, 1), (0, 0))
    return GeneralCopyOp(f"AutoVectorizingCopyWithAssumedAlignment<{b}>", "universal", make_layout(Int(1)), one,
                         one, one, np.dtype(f"uint{b}") if b <= 64 else uint128_t)


def AutoVectorizingCopy() -> GeneralCopyOp:  # noqa: N802
    """``AutoVectorizingCopy`` = ``AutoVectorizingCopyWithAssumedAlignment<128>``."""
    return AutoVectorizingCopyWithAssumedAlignment(128)


def DefaultCopy() -> GeneralCopyOp:  # noqa: N802
    """``DefaultCopy`` = ``AutoVectorizingCopyWithAssumedAlignment<8>`` (no alignment assumed)."""
    return AutoVectorizingCopyWithAssumedAlignment(8)


def _cp_async(name, sizes, S, D):  # noqa: N803
    D = S if D is None else D  # noqa: N806
    sb, db = _bits(S, name), _bits(D, name)
    if sb != db:
        raise CopyError(f"{name}<TS, TD>: cp.async needs sizeof(TS) == sizeof(TD); got {sb} and {db} bits")
    if sb // 8 not in sizes or sb % 8:
        raise CopyError(f"{name}<TS>: cp.async copies {' / '.join(map(str, sizes))} bytes per thread; got a "
                        f"{sb}-bit TS. Use e.g. {name}(tk.uint128_t) with a value layout of 128 bits per thread "
                        "(8 half_t values)")
    full = f"{name}<{_cpp_type(S)}" + (f", {_cpp_type(D)}>" if D is not S else ">")
    return _one_value(full, "cp_async", S, D, sb, db)


def SM80_CP_ASYNC_CACHEALWAYS(TS, TD=None) -> GeneralCopyOp:  # noqa: N802, N803
    """``SM80_CP_ASYNC_CACHEALWAYS<TS, TD = TS>``: ``cp.async.ca`` of 4, 8 or 16 bytes per thread."""
    return _cp_async("SM80_CP_ASYNC_CACHEALWAYS", (4, 8, 16), TS, TD)


def SM80_CP_ASYNC_CACHEGLOBAL(TS, TD=None) -> GeneralCopyOp:  # noqa: N802, N803
    """``SM80_CP_ASYNC_CACHEGLOBAL<TS, TD = TS>``: ``cp.async.cg`` of 16 bytes per thread."""
    return _cp_async("SM80_CP_ASYNC_CACHEGLOBAL", (16,), TS, TD)


# ldmatrix: the source is 8 / 16 / 32 rows of 128 bits, one row address per thread (threads past the rows repeat);
# the destination is 32 bits per thread per 8x8 matrix. _T transposes 16-bit elements.
_LDSM_SRC = {1: _L(((8, 4), 128), ((128, 0), 1)), 2: _L(((16, 2), 128), ((128, 0), 1)), 4: _L((32, 128), (128, 1))}
_LDSM_N_DST = {1: _L((32, 32), (32, 1)), 2: _L((32, (32, 2)), (32, (1, 1024))), 4: _L((32, (32, 4)), (32, (1, 1024)))}
_LDSM_T_DST = {1: _L(((4, 8), (16, 2)), ((256, 16), (1, 128))),
               2: _L(((4, 8), (16, 2, 2)), ((256, 16), (1, 128, 1024))),
               4: _L(((4, 8), (16, 2, 4)), ((256, 16), (1, 128, 1024)))}


def _warp(name, kind, src, dst, ref) -> GeneralCopyOp:
    return GeneralCopyOp(name, kind, _L(32, 1), src, dst, ref)


def _ldsm_n(n):
    return lambda: _warp(f"SM75_U32x{n}_LDSM_N", "ldsm", _LDSM_SRC[n], _LDSM_N_DST[n], _LDSM_N_DST[n])


def _ldsm_t(n):
    return lambda: _warp(f"SM75_U16x{2 * n}_LDSM_T", "ldsm", _LDSM_SRC[n], _LDSM_T_DST[n], _LDSM_T_DST[n])


def _stsm_n(n):
    return lambda: _warp(f"SM90_U32x{n}_STSM_N", "stsm", _LDSM_N_DST[n], _LDSM_SRC[n], _LDSM_N_DST[n])


def _stsm_t(n):
    return lambda: _warp(f"SM90_U16x{2 * n}_STSM_T", "stsm", _LDSM_T_DST[n], _LDSM_SRC[n], _LDSM_T_DST[n])


def _named(f, name, doc):
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


SM75_U32x1_LDSM_N = _named(_ldsm_n(1), "SM75_U32x1_LDSM_N", "``ldmatrix.sync.aligned.x1.m8n8.shared.b16``")
SM75_U32x2_LDSM_N = _named(_ldsm_n(2), "SM75_U32x2_LDSM_N", "``ldmatrix.sync.aligned.x2.m8n8.shared.b16``")
SM75_U32x4_LDSM_N = _named(_ldsm_n(4), "SM75_U32x4_LDSM_N", "``ldmatrix.sync.aligned.x4.m8n8.shared.b16``")
SM75_U16x2_LDSM_T = _named(_ldsm_t(1), "SM75_U16x2_LDSM_T", "``ldmatrix.sync.aligned.x1.trans.m8n8.shared.b16``")
SM75_U16x4_LDSM_T = _named(_ldsm_t(2), "SM75_U16x4_LDSM_T", "``ldmatrix.sync.aligned.x2.trans.m8n8.shared.b16``")
SM75_U16x8_LDSM_T = _named(_ldsm_t(4), "SM75_U16x8_LDSM_T", "``ldmatrix.sync.aligned.x4.trans.m8n8.shared.b16``")
SM90_U32x1_STSM_N = _named(_stsm_n(1), "SM90_U32x1_STSM_N", "``stmatrix.sync.aligned.x1.m8n8.shared.b16``")
SM90_U32x2_STSM_N = _named(_stsm_n(2), "SM90_U32x2_STSM_N", "``stmatrix.sync.aligned.x2.m8n8.shared.b16``")
SM90_U32x4_STSM_N = _named(_stsm_n(4), "SM90_U32x4_STSM_N", "``stmatrix.sync.aligned.x4.m8n8.shared.b16``")
SM90_U16x2_STSM_T = _named(_stsm_t(1), "SM90_U16x2_STSM_T", "``stmatrix.sync.aligned.x1.trans.m8n8.shared.b16``")
SM90_U16x4_STSM_T = _named(_stsm_t(2), "SM90_U16x4_STSM_T", "``stmatrix.sync.aligned.x2.trans.m8n8.shared.b16``")
SM90_U16x8_STSM_T = _named(_stsm_t(4), "SM90_U16x8_STSM_T", "``stmatrix.sync.aligned.x4.trans.m8n8.shared.b16``")

COPY_OPS = ("UniversalCopy", "AutoVectorizingCopyWithAssumedAlignment", "AutoVectorizingCopy", "DefaultCopy",
            "SM80_CP_ASYNC_CACHEALWAYS", "SM80_CP_ASYNC_CACHEGLOBAL",
            "SM75_U32x1_LDSM_N", "SM75_U32x2_LDSM_N", "SM75_U32x4_LDSM_N",
            "SM75_U16x2_LDSM_T", "SM75_U16x4_LDSM_T", "SM75_U16x8_LDSM_T",
            "SM90_U32x1_STSM_N", "SM90_U32x2_STSM_N", "SM90_U32x4_STSM_N",
            "SM90_U16x2_STSM_T", "SM90_U16x4_STSM_T", "SM90_U16x8_STSM_T")
