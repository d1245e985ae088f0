"""CuTe's ``make_tma_copy_A_sm90`` / ``_B_sm90`` / ``_C_sm90``: make_tma_copy for a GEMM operand given the CTA's
(M, N, K) tiler and cluster shape. A keeps (M, K) and multicasts along the cluster's N mode, B keeps (N, K) and
multicasts along M, C keeps (M, N) and never multicasts. A leading element type is CuTe's ``TmaInternalType``
(``make_tma_copy_A_sm90(np.uint8, op, g, s, cta_tiler, cluster_shape)``, as ``make_tma_copy_A_sm90<uint8_t>``)."""

from __future__ import annotations

from ..layout.int_tuple import product
from .copy_ops import CopyOp
from .errors import TmaError
from .internal_type import split_internal_type
from .make_tma_copy import make_tma_copy_impl
from .tiled_copy import TiledCopy


def _mnk(x, what: str) -> tuple:
    if not isinstance(x, (tuple, list)) or len(x) != 3:
        raise TmaError(f"make_tma_copy_*_sm90: {what} must be an (M, N, K) shape, got {x!r}")
    return tuple(x)


def _remove(t: tuple, i: int) -> tuple:
    return t[:i] + t[i + 1:]


def make_tma_copy_A_sm90(*args, **kw) -> TiledCopy:  # noqa: N802
    """A's TMA copy ``(op, gtensor, slayout, cta_tiler, cluster_size)``: tile ``remove<1>(cta_tiler)`` (M, K),
    multicast over ``size<1>(cluster_size)`` CTAs."""
    internal, args = split_internal_type(args, "make_tma_copy_A_sm90", 5)
    return _a(*args, tma_internal_type=internal, **kw)


def _a(op: CopyOp, gtensor, slayout, cta_tiler, cluster_size, **kw) -> TiledCopy:
    tiler = _remove(_mnk(cta_tiler, "cta_tiler"), 1)
    return make_tma_copy_impl(op, gtensor, slayout, tiler, int(product(_mnk(cluster_size, "cluster_size")[1])), **kw)


def make_tma_copy_B_sm90(*args, **kw) -> TiledCopy:  # noqa: N802
    """B's TMA copy ``(op, gtensor, slayout, cta_tiler, cluster_size)``: tile ``remove<0>(cta_tiler)`` (N, K),
    multicast over ``size<0>(cluster_size)`` CTAs."""
    internal, args = split_internal_type(args, "make_tma_copy_B_sm90", 5)
    return _b(*args, tma_internal_type=internal, **kw)


def _b(op: CopyOp, gtensor, slayout, cta_tiler, cluster_size, **kw) -> TiledCopy:
    tiler = _remove(_mnk(cta_tiler, "cta_tiler"), 0)
    return make_tma_copy_impl(op, gtensor, slayout, tiler, int(product(_mnk(cluster_size, "cluster_size")[0])), **kw)


def make_tma_copy_C_sm90(*args, **kw) -> TiledCopy:  # noqa: N802
    """C's (or D's) TMA copy ``(op, gtensor, slayout, cta_tiler)``: tile ``remove<2>(cta_tiler)`` (M, N), one CTA."""
    internal, args = split_internal_type(args, "make_tma_copy_C_sm90", 4)
    return _c(*args, tma_internal_type=internal, **kw)


def _c(op: CopyOp, gtensor, slayout, cta_tiler, **kw) -> TiledCopy:
    return make_tma_copy_impl(op, gtensor, slayout, _remove(_mnk(cta_tiler, "cta_tiler"), 2), 1, **kw)
