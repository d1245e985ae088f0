"""The TMA descriptor (``CUtensorMap``) as a Python value: every field of
``cuTensorMapEncodeTiled`` / ``cuTensorMapEncodeIm2col``, innermost dimension first.

All lists are in the driver's order: index 0 is the contiguous (innermost) dimension.
``global_strides`` has ``rank - 1`` entries, in bytes, for dimensions 1..rank-1.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field

from .arg_checks import as_int, as_ints, is_integer
from .dtypes import tma_dtype
from .errors import TmaDescriptorError
from .tensormap_enums import (  # noqa: F401 - re-exported: the enums are part of the tensor map's API
    DTYPE_BITS,
    FLOAT_DTYPES,
    PACKED_ALIGN16B,
    PACKED_DTYPES,
    SMEM_BITS,
    SWIZZLE_ALIGNMENT,
    SWIZZLE_SPAN,
    DataType,
    Interleave,
    L2Promotion,
    OobFill,
    SwizzleMode,
    enum_value,
)
from .tensormap_explain import explain, summary
from .tensormap_from import shape_fields, tensor_fields
from .tensormap_rules import validate


@dataclass(frozen=True)
class TensorMap:
    """One TMA descriptor, tiled (``mode="tiled"``) or im2col (``mode="im2col"``).

    Fields mirror the driver call, innermost dimension first. ``global_address`` is only checked
    for alignment (it may be 0 for a descriptor that is not bound to memory yet).
    """

    dtype: DataType
    global_dim: tuple[int, ...]
    global_strides: tuple[int, ...]  # bytes, rank-1 entries: dims 1..rank-1
    box_dim: tuple[int, ...]  # tiled: box per dim; im2col: ignored except channels/pixels below
    element_strides: tuple[int, ...] | None = None  # None -> all ones
    interleave: Interleave = Interleave.NONE
    swizzle: SwizzleMode = SwizzleMode.NONE
    l2_promotion: L2Promotion = L2Promotion.NONE
    oob_fill: OobFill = OobFill.NONE
    global_address: int = 0
    mode: str = "tiled"
    # im2col only (cuTensorMapEncodeIm2col). Corner i pairs with global_dim[i + 1] (innermost spatial first: W, H, D,
    # the order CUTLASS passes them in); ranges per rank are checked by validate().
    pixel_box_lower_corner: tuple[int, ...] = field(default=())
    pixel_box_upper_corner: tuple[int, ...] = field(default=())
    channels_per_pixel: int = 0
    pixels_per_column: int = 0

    def __post_init__(self):
        dt = self.dtype
        if is_integer(dt):
            dt = enum_value(DataType, dt, "tensorDataType")
        else:  # a numpy / torch dtype or a name such as "bf16" (None and bools are refused by tma_dtype)
            dt = tma_dtype(dt)
        put = functools.partial(object.__setattr__, self)
        put("dtype", dt)
        put("global_dim", as_ints(self.global_dim, "globalDim"))
        put("global_strides", as_ints(self.global_strides, "globalStrides"))
        put("box_dim", as_ints(self.box_dim, "boxDim"))
        es = self.element_strides
        put("element_strides", (1,) * len(self.global_dim) if es is None else as_ints(es, "elementStrides"))
        put("interleave", enum_value(Interleave, self.interleave, "interleave"))
        put("swizzle", enum_value(SwizzleMode, self.swizzle, "swizzle"))
        put("l2_promotion", enum_value(L2Promotion, self.l2_promotion, "l2Promotion"))
        put("oob_fill", enum_value(OobFill, self.oob_fill, "oobFill"))
        put("global_address", as_int(self.global_address, "globalAddress"))
        put("pixel_box_lower_corner", as_ints(self.pixel_box_lower_corner, "pixelBoxLowerCorner"))
        put("pixel_box_upper_corner", as_ints(self.pixel_box_upper_corner, "pixelBoxUpperCorner"))
        put("channels_per_pixel", as_int(self.channels_per_pixel, "channelsPerPixel"))
        put("pixels_per_column", as_int(self.pixels_per_column, "pixelsPerColumn"))
        if not isinstance(self.mode, str):
            raise TmaDescriptorError("mode.known", "mode must be 'tiled' or 'im2col'", self.mode,
                                     "pass mode='tiled' or mode='im2col'", f"mode = {self.mode!r}")

    @property
    def rank(self) -> int:
        return len(self.global_dim)

    @property
    def elem_bits(self) -> int:
        return DTYPE_BITS[self.dtype]

    @property
    def elem_bytes(self) -> int:
        """Bytes per element (packed 4/6-bit types report 1)."""
        return max(1, self.elem_bits // 8)

    @property
    def is_packed(self) -> bool:
        """True for the packed 4/6-bit types."""
        return self.dtype in PACKED_DTYPES

    @property
    def smem_elem_bits(self) -> int:
        """Bits per element in shared memory (8 for the ALIGN16B packed types, else ``elem_bits``)."""
        return SMEM_BITS[self.dtype]

    @property
    def inner_box(self) -> int:
        """Elements per shared-memory row: ``boxDim[0]`` (tiled) or ``channelsPerPixel`` (im2col)."""
        if self.mode == "im2col":
            return self.channels_per_pixel
        return self.box_dim[0] if self.box_dim else 0

    @property
    def box_rows(self) -> int:
        """Rows of the box in shared memory: ``prod(ceil(boxDim[i] / elementStrides[i]), i >= 1)`` (tiled) or
        ``pixelsPerColumn`` (im2col)."""
        if self.mode == "im2col":
            return self.pixels_per_column
        rows = 1
        for i, b in enumerate(self.box_dim[1:], start=1):
            if self.interleave_bytes and i == self.rank - 2:
                continue  # the H200 walks one position of this dim in interleaved mode (interleaved_box_dims)
            s = self.element_strides[i] if i < len(self.element_strides) else 1
            rows *= -(-b // max(s, 1))
        return rows

    @property
    def interleave_bytes(self) -> int:
        """Bytes of one interleaved chunk (16 or 32), 0 without interleave."""
        return {Interleave.B16: 16, Interleave.B32: 32}.get(self.interleave, 0)

    @property
    def interleaved_tile(self) -> bool:
        """An interleaved tiled map: the layout ``interleaved_box_dims`` describes."""
        return bool(self.interleave_bytes) and self.mode != "im2col"

    @property
    def interleaved_im2col(self) -> bool:
        """An interleaved im2col map: each pixel is one chunk, and the chunk dim is the first spatial dim
        (``tmakit.tma.coord_rules.im2col_spatial_dims``)."""
        return bool(self.interleave_bytes) and self.mode == "im2col"

    @property
    def interleaved_box_dims(self) -> tuple[int, ...]:
        """What an interleaved tile load moves, measured on an H200 (docs/CONFORMANCE.md): dim 0 (``globalDim[0]``,
        ``boxDim[0]``, its coordinate and ``elementStrides[0]``) counts interleave-sized chunks of 16 or 32 bytes,
        not elements, and dim rank-2 contributes one position whatever ``boxDim`` says; the other dims are walked as
        in tile mode. Returns the effective box per dim in elements (dim 0: ``ceil(boxDim[0] / elementStrides[0])``
        chunks of ``chunk / elemsize`` elements)."""
        k = self.interleave_bytes // self.elem_bytes
        es0 = self.element_strides[0] if self.element_strides else 1
        return tuple(-(-b // es0) * k if i == 0 else (1 if i == self.rank - 2 else b)
                     for i, b in enumerate(self.box_dim))

    @property
    def inner_bytes(self) -> int:
        """Data bytes of one shared-memory row (``boxDim[0] * elemsize``; im2col: ``channels * elemsize``;
        interleaved: the chunks of dim 0 the box takes, or one chunk per pixel for im2col)."""
        if self.interleaved_tile:
            return self.interleaved_box_dims[0] * self.elem_bytes
        if self.interleaved_im2col:
            return self.interleave_bytes
        return -(-self.inner_box * self.smem_elem_bits // 8)

    @property
    def tx_bytes(self) -> int:
        """Bytes one box delivers (the mbarrier transaction count), docs/HARDWARE.md §3:
        ``elemsize * boxDim[0] * prod(ceil(boxDim[i] / elementStrides[i]), i >= 1)``; im2col:
        ``channelsPerPixel * pixelsPerColumn * elemsize``; interleaved maps: :attr:`inner_bytes` per row. Padding of
        swizzled rows is not counted."""
        return self.inner_bytes * self.box_rows

    @property
    def row_pitch(self) -> int:
        """Bytes between consecutive box rows in shared memory: the swizzle span, or dense when unswizzled (and for
        interleaved maps, whose rows are dense and swizzled in place by address)."""
        if self.swizzle != SwizzleMode.NONE and not self.interleave_bytes:
            return SWIZZLE_SPAN[self.swizzle]
        return self.inner_bytes

    @property
    def smem_bytes(self) -> int:
        """Shared-memory footprint of one box: ``row_pitch * box_rows`` (includes the tail of narrow swizzled rows);
        interleaved maps' dense rows round up to the swizzle span, inside which the swizzle permutes chunks."""
        n = self.row_pitch * self.box_rows
        if self.interleave_bytes and self.swizzle != SwizzleMode.NONE:
            span = SWIZZLE_SPAN[self.swizzle]
            n = -(-n // span) * span
        return n

    @property
    def smem_alignment(self) -> int:
        """Required alignment of the shared-memory destination: 128 B, or the swizzle period (256/512/1024 B)."""
        return SWIZZLE_ALIGNMENT[self.swizzle]

    def validate(self, arch: str | int = "sm_90") -> TensorMap:
        """Check every documented rule of ``cuTensorMapEncodeTiled`` / ``cuTensorMapEncodeIm2col`` for ``arch``.

        Returns ``self``; raises :class:`TmaDescriptorError` naming the rule, the value and a fix.
        """
        validate(self, arch)
        return self

    @classmethod
    def from_tensor(cls, t, box, *, validate: bool = True, arch: str = "sm_90", **kwargs) -> TensorMap:
        """A tiled map over a numpy array / torch tensor (row-major or strided); see
        ``tensormap_from.tensor_fields``. Validated for ``arch`` unless ``validate=False``."""
        tm = cls(**tensor_fields(t, box, **kwargs))
        return tm.validate(arch) if validate else tm

    @classmethod
    def from_shape(cls, shape, dtype, box, strides=None, *, validate: bool = True, arch: str = "sm_90",
                   **kwargs) -> TensorMap:
        """A tiled map over a row-major ``shape`` (strides in elements); see ``tensormap_from.shape_fields``."""
        tm = cls(**shape_fields(shape, dtype, box, strides, **kwargs))
        return tm.validate(arch) if validate else tm

    def __str__(self) -> str:
        return summary(self)

    def explain(self, arch: str = "sm_90") -> str:
        """A multi-line description: every field, bytes per box, smem footprint, validity on ``arch`` and the
        equivalent ``cuTensorMapEncode*`` C call."""
        return explain(self, arch)

    def replace(self, **changes) -> TensorMap:
        return dataclasses.replace(self, **changes)
