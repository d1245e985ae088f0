"""The fields of tiled TensorMaps built from arrays and shapes: the row-major -> innermost-first reversal done for
the user (``TensorMap.from_tensor`` / ``from_shape`` construct and validate the map from these fields).

``box`` and ``element_strides`` are given in the tensor's own (row-major) dimension order, like its shape; the
resulting map lists everything innermost first, with strides in bytes (Triton's and DeepGEMM's convention).
"""

from __future__ import annotations

from .arg_checks import as_int, as_ints, is_integer
from .dtypes import tma_dtype
from .errors import TmaDescriptorError
from .tensormap_enums import DTYPE_BITS, PACKED_DTYPES, Interleave, L2Promotion, OobFill, SwizzleMode


def _is_torch_tensor(t) -> bool:
    return type(t).__module__.startswith("torch") and hasattr(t, "data_ptr") and hasattr(t, "stride")


def tensor_layout(t):
    """``(shape, byte_strides, dtype, itemsize, address)`` of a numpy array, torch tensor or an object with
    ``__cuda_array_interface__`` / ``__array_interface__`` (row-major order, as the object reports them)."""
    if _is_torch_tensor(t):
        es = t.element_size()
        return tuple(t.shape), tuple(s * es for s in t.stride()), t.dtype, es, int(t.data_ptr())
    import numpy as np

    if isinstance(t, np.ndarray):
        return t.shape, t.strides, t.dtype, t.itemsize, int(t.__array_interface__["data"][0])
    iface = getattr(t, "__cuda_array_interface__", None) or getattr(t, "__array_interface__", None)
    if iface is None:
        raise TypeError(f"from_tensor needs a numpy array, a torch tensor or an array-interface object, "
                        f"not {type(t).__name__}")
    dt = np.dtype(iface["typestr"])
    shape = tuple(iface["shape"])
    strides = iface.get("strides")
    if strides is None:  # C-contiguous
        strides, acc = [], dt.itemsize
        for d in reversed(shape):
            strides.insert(0, acc)
            acc *= d
    return shape, tuple(strides), dt, dt.itemsize, int(iface["data"][0])


def _as_tuple(x, n: int, what: str):
    x = (as_int(x, what),) if is_integer(x) else as_ints(x, what)
    if len(x) != n:
        raise TmaDescriptorError(f"fromTensor.{what}Rank", f"{what} must have one entry per tensor dimension", x,
                                 f"give {n} entries, in the tensor's own (row-major) dimension order",
                                 f"{what} {x} for a rank-{n} tensor")
    return x


def _check_extents(shape):
    """An empty dimension is reported as what it is (before any stride rule, whose values mean nothing then)."""
    for i, n in enumerate(shape):
        if n < 1:
            raise TmaDescriptorError("globalDim.range", "every globalDim must be in [1, 2^32]", n,
                                     "TMA cannot describe an empty tensor: skip the copy when a dimension is 0",
                                     f"dimension {i} of shape {tuple(shape)} has extent {n}")


def build(shape, byte_strides, dt, box, *, swizzle=SwizzleMode.NONE, element_strides=None,
          interleave=Interleave.NONE, l2_promotion=L2Promotion.NONE, oob_fill=OobFill.NONE, global_address=0) -> dict:
    """Row-major ``shape`` with ``byte_strides`` (innermost has stride one element) -> innermost-first fields."""
    n = len(shape)
    box = _as_tuple(box, n, "box")
    es = None if element_strides is None else _as_tuple(element_strides, n, "elementStrides")
    return dict(
        dtype=dt,
        global_dim=tuple(reversed(shape)),
        global_strides=tuple(reversed(byte_strides[:-1])),
        box_dim=tuple(reversed(box)),
        element_strides=None if es is None else tuple(reversed(es)),
        interleave=interleave, swizzle=swizzle, l2_promotion=l2_promotion, oob_fill=oob_fill,
        global_address=global_address,
    )


def tensor_fields(t, box, *, swizzle=SwizzleMode.NONE, element_strides=None, interleave=Interleave.NONE,
                  l2_promotion=L2Promotion.NONE, oob_fill=OobFill.NONE, dtype=None, global_address=None) -> dict:
    """The fields of a tiled TensorMap over ``t`` (numpy array or torch tensor, rank 1..5, row-major or strided).

    ``box`` / ``element_strides`` are in ``t``'s dimension order. ``dtype`` overrides the element type (e.g.
    ``"bf16"`` for a uint16 array holding bf16 bits; a packed type reinterprets the bytes). ``global_address``
    defaults to ``t``'s data pointer. The innermost dimension must have stride 1.
    """
    shape, strides, tdt, itemsize, addr = tensor_layout(t)
    dt = tma_dtype(tdt if dtype is None else dtype)
    shape = list(shape)
    if dtype is not None:
        bits = itemsize * 8
        if dt in PACKED_DTYPES and shape and (shape[-1] * bits) % DTYPE_BITS[dt] == 0:
            shape[-1] = shape[-1] * bits // DTYPE_BITS[dt]
        elif DTYPE_BITS[dt] != bits:
            raise TmaDescriptorError("fromTensor.dtypeSize", "dtype must have the tensor's element size", dtype,
                                     f"pick a {itemsize}-byte type or view the tensor as the right type first",
                                     f"{dt.name} ({DTYPE_BITS[dt] // 8 or 1} bytes) for a tensor of "
                                     f"{itemsize}-byte elements")
    _check_extents(shape)
    if shape and shape[-1] != 1 and strides[-1] != itemsize:
        raise TmaDescriptorError("fromTensor.innerStride", "the innermost (last) dimension must be contiguous",
                                 strides[-1] // itemsize,
                                 "make it contiguous (.contiguous() / np.ascontiguousarray) or permute so the "
                                 "stride-1 dimension is last",
                                 f"last-dimension stride {strides[-1] // itemsize} elements ({strides[-1]} bytes)")
    return build(shape, strides, dt, box, swizzle=swizzle, element_strides=element_strides, interleave=interleave,
                 l2_promotion=l2_promotion, oob_fill=oob_fill,
                 global_address=addr if global_address is None else global_address)


def shape_fields(shape, dtype, box, strides=None, *, swizzle=SwizzleMode.NONE, element_strides=None,
                 interleave=Interleave.NONE, l2_promotion=L2Promotion.NONE, oob_fill=OobFill.NONE,
                 global_address=0) -> dict:
    """The fields of a tiled TensorMap for a row-major ``shape`` of ``dtype`` without an array.

    ``strides`` are in **elements** and row-major order (torch's convention); default: contiguous. The last stride
    must be 1.
    """
    dt = tma_dtype(dtype)
    bits = DTYPE_BITS[dt]
    shape = (as_int(shape, "shape"),) if is_integer(shape) else as_ints(shape, "shape")
    if strides is None:
        strides, acc = [], 1
        for d in reversed(shape):
            strides.insert(0, acc)
            acc *= d
    _check_extents(shape)
    strides = _as_tuple(strides, len(shape), "strides")
    if shape and shape[-1] != 1 and strides[-1] != 1:
        raise TmaDescriptorError("fromTensor.innerStride", "the innermost (last) dimension must be contiguous",
                                 strides[-1], "permute so the stride-1 dimension is last",
                                 f"last-dimension stride {strides[-1]} elements")
    byte_strides = []
    for s in strides[:-1]:
        if (s * bits) % 8:
            raise TmaDescriptorError("fromTensor.strideBytes", "strides must be whole bytes", s,
                                     "use strides that are a multiple of 8 bits", f"stride {s} x {bits} bits")
        byte_strides.append(s * bits // 8)
    byte_strides.append(-(-bits // 8))  # innermost: one element (unused by build)
    return build(shape, tuple(byte_strides), dt, box, swizzle=swizzle, element_strides=element_strides,
                 interleave=interleave, l2_promotion=l2_promotion, oob_fill=oob_fill, global_address=global_address)


__all__ = ["shape_fields", "tensor_fields", "tensor_layout"]
