"""CuTe's ``TmaInternalType``: the leading template argument of ``make_tma_copy<T>`` / ``make_tma_atom<T>`` /
``make_tma_copy_{A,B,C}_sm90<T>`` that makes the TMA move the gmem elements as another type (the descriptor's
data type), e.g. fp8 as ``uint8_t`` or float as ``tfloat32_t``. In tmakit the template argument comes first, as
everywhere: ``tk.make_tma_copy(np.uint8, tk.SM90_TMA_LOAD, g, s, tiler, tk.Int(1))``."""

from __future__ import annotations

from .copy_ops import CopyOp, copy_op
from .dtypes import elem_bits, tma_dtype
from .errors import TmaDescriptorError


def _is_op(x) -> bool:
    if isinstance(x, CopyOp):
        return True
    if isinstance(x, str):
        try:
            copy_op(x)
        except TmaDescriptorError:
            return False
        return True
    return False


def split_internal_type(args: tuple, name: str, min_args: int):
    """``(TmaInternalType or None, the other arguments)``. CuTe takes the type only on the overloads with at least
    ``min_args`` arguments (make_tma_copy: the 5-argument one)."""
    if not args or _is_op(args[0]) or len(args) < 2 or not _is_op(args[1]):
        return None, args
    if len(args) - 1 < min_args:
        raise TmaDescriptorError(
            "internal_type.overload", f"CuTe's {name}<TmaInternalType> takes at least {min_args} arguments after "
            "the type (its shorter overloads have no TmaInternalType)", len(args) - 1,
            "pass the CTA tiler and cluster size too, e.g. "
            f"tk.{name}(np.uint8, op, g, s, tk.product_each(s.shape), tk.Int(1))", f"{len(args) - 1} arguments")
    return args[0], args[1:]


def internal_dtype(internal, gmem_dtype):
    """The descriptor's data type: ``internal`` (of the gmem element's width), or the gmem element's type."""
    if internal is None:
        return gmem_dtype
    dt = tma_dtype(internal)
    if elem_bits(dt) != elem_bits(gmem_dtype):
        raise TmaDescriptorError(
            "internal_type.width", "TmaInternalType must be as wide as the gmem element (tmakit moves the same "
            "elements under another type; CuTe would recast the gmem tensor to the new width)",
            (internal, elem_bits(dt), elem_bits(gmem_dtype)),
            f"use a {elem_bits(gmem_dtype)}-bit type, e.g. the unsigned integer of that width",
            f"{getattr(internal, 'name', internal)!s} ({elem_bits(dt)} bits) for {gmem_dtype.name} "
            f"({elem_bits(gmem_dtype)} bits)")
    return dt
