"""Encode a ``tk.TensorMap`` into a driver ``CUtensorMap`` (``cuTensorMapEncodeTiled`` / ``...Im2col``).

The map is validated first (``TensorMap.validate()``, raising ``tk.TmaDescriptorError`` with the rule and a fix) so
that nothing invalid reaches the driver; ``raw=True`` skips validation (for the conformance fuzzer).
"""

from __future__ import annotations

import ctypes

from ..bounded import make_room
from .driver import check, cu, ensure_context

__all__ = ["encode_tensormap", "encode_cached", "tensormap_bytes"]


def _validate(tm) -> None:
    """``tm.validate(arch)`` for the current device's compute capability (when the TensorMap has a validator)."""
    v = getattr(tm, "validate", None)
    if callable(v):
        v(_arch())


_arch_cc: list = []


def _arch() -> str:
    if not _arch_cc:
        from .driver import compute_capability

        major, minor = compute_capability(_device_ordinal())
        _arch_cc.append(f"sm_{major}{minor}")
    return _arch_cc[0]


def _device_ordinal() -> int:
    d = cu()
    try:
        return int(check(d.cuCtxGetDevice(), "cuCtxGetDevice"))
    except Exception:
        return 0


def encode_tensormap(tm, address: int | None = None, *, raw: bool = False):
    """Encode ``tm`` at device ``address`` (default ``tm.global_address``) and return the ``CUtensorMap``.

    Raises ``TmaDescriptorError`` (from ``validate()``) for invalid maps, or :class:`CudaError` naming the call and
    every argument when the driver refuses. Values that do not fit the driver's C types raise ``ValueError``.
    """
    if address is not None and int(address) != tm.global_address:
        tm = tm.replace(global_address=int(address))
    ensure_context()
    if not raw:
        _validate(tm)
    d = cu()
    U64, U32 = d.cuuint64_t, d.cuuint32_t
    rank = tm.rank
    try:
        gdim = [U64(int(x)) for x in tm.global_dim]
        gstr = [U64(int(x)) for x in tm.global_strides]
        if rank == 1 and not gstr:
            # cuda-bindings turns an empty list into a NULL pointer, which the driver refuses even for rank 1;
            # it reads no entry for rank 1, so any well-formed stride will do.
            gstr = [U64(max(16, -(-int(tm.global_dim[0]) * tm.elem_bits // 8 // 16) * 16))]
        estr = [U32(int(x)) for x in tm.element_strides]
        box = [U32(int(x)) for x in tm.box_dim]
    except (OverflowError, ValueError, TypeError) as e:
        raise ValueError(f"tensor map field does not fit the driver's unsigned C type: {e}") from e
    dt = d.CUtensorMapDataType(int(tm.dtype))
    il = d.CUtensorMapInterleave(int(tm.interleave))
    sw = d.CUtensorMapSwizzle(int(tm.swizzle))
    l2 = d.CUtensorMapL2promotion(int(tm.l2_promotion))
    oob = d.CUtensorMapFloatOOBfill(int(tm.oob_fill))
    args = dict(dtype=tm.dtype.name, rank=rank, address=hex(tm.global_address), global_dim=tm.global_dim,
                global_strides=tm.global_strides, element_strides=tm.element_strides, interleave=tm.interleave.name,
                swizzle=tm.swizzle.name, l2_promotion=tm.l2_promotion.name, oob_fill=tm.oob_fill.name)
    if tm.mode == "im2col":
        args.update(lower=tm.pixel_box_lower_corner, upper=tm.pixel_box_upper_corner,
                    channels_per_pixel=tm.channels_per_pixel, pixels_per_column=tm.pixels_per_column)
        return check(d.cuTensorMapEncodeIm2col(dt, rank, tm.global_address, gdim, gstr,
                                               list(tm.pixel_box_lower_corner), list(tm.pixel_box_upper_corner),
                                               int(tm.channels_per_pixel), int(tm.pixels_per_column), estr,
                                               il, sw, l2, oob), "cuTensorMapEncodeIm2col", **args)
    args["box_dim"] = tm.box_dim
    return check(d.cuTensorMapEncodeTiled(dt, rank, tm.global_address, gdim, gstr, box, estr, il, sw, l2, oob),
                 "cuTensorMapEncodeTiled", **args)


_cache: dict = {}


def encode_cached(tm, address: int | None = None):
    """:func:`encode_tensormap` memoised on the (frozen, hashable) ``TensorMap`` and address."""
    key = (tm, address)
    got = _cache.get(key)
    if got is None:
        make_room(_cache, 4096)
        got = _cache[key] = encode_tensormap(tm, address)
    return got


def tensormap_bytes(cutm) -> bytes:
    """The 128 bytes of an encoded ``CUtensorMap``."""
    return ctypes.string_at(cutm.getPtr(), 128)
