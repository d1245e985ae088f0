"""The validity rules of ``cuTensorMapEncode{Tiled,Im2col}`` (docs/HARDWARE.md §1), one function each.

``validate(tm, arch)`` runs them in order and raises :class:`TmaDescriptorError` at the first broken rule.
``RULES`` maps every rule id to the rule in words. ``DOC_NE_HW_RULES`` names the documented rules we enforce that
the H200 driver (580.159.04) accepts anyway; ``UNVERIFIED_RULES`` the documented ones never checked on hardware.
``HW_DERIVED_RULES`` names the rules that no document states, found by sweeping the H200 driver (580.159.04,
CUDA 13.0) with ``tools/conformance/sweeps.py`` (docs/CONFORMANCE.md); they run after the documented ones.
Rules not enforced on purpose: the ``tensorMap`` object's 64-byte alignment (not a field here) and the
"stride includes the previous dimension" formula of the driver docs (illustrative; permuted and overlapping views
encode and work).
"""

from __future__ import annotations

import re

from .arg_checks import is_integer
from .errors import TmaDescriptorError
from .tensormap_enums import (
    FLOAT_DTYPES,
    PACKED_ALIGN16B,
    PACKED_DTYPES,
    SWIZZLE_SPAN,
    Interleave,
    OobFill,
    SwizzleMode,
)
from .tensormap_explain import c_name

MAX_RANK = 5
MAX_GLOBAL_DIM = 2**32
MAX_GLOBAL_STRIDE = 2**40  # exclusive
MAX_BOX_DIM = 256
MAX_ELEMENT_STRIDE = 8
MAX_CHANNELS_PER_PIXEL = 256
MAX_PIXELS_PER_COLUMN = 1024
# Largest box the H200 driver encodes, in data bytes (hardware-derived): 228 KiB, the shared memory of one SM.
MAX_BOX_BYTES = 228 * 1024
# Global addresses the H200 driver encodes: below 2^57 (hardware-derived; 2^57 - 256 accepted, 2^57 refused).
MAX_GLOBAL_ADDRESS = 2**57  # exclusive
# im2col corner ranges by tensor rank (inclusive), docs/HARDWARE.md §1.
IM2COL_CORNER_RANGE = {3: (-(2**15), 2**15 - 1), 4: (-(2**7), 2**7 - 1), 5: (-(2**4), 2**4 - 1)}
ATOM_SWIZZLES = frozenset({SwizzleMode.B128_ATOM_32B, SwizzleMode.B128_ATOM_32B_FLIP_8B, SwizzleMode.B128_ATOM_64B})

RULES: dict[str, str] = {
    "tensorDataType.enum": "tensorDataType must be one of the driver's enum values",
    "interleave.enum": "interleave must be one of the driver's enum values",
    "swizzle.enum": "swizzle must be one of the driver's enum values",
    "l2Promotion.enum": "l2Promotion must be one of the driver's enum values",
    "oobFill.enum": "oobFill must be one of the driver's enum values",
    "arch.sm90": "tensor maps need compute capability 9.0 or higher",
    "mode.known": "mode must be 'tiled' (cuTensorMapEncodeTiled) or 'im2col' (cuTensorMapEncodeIm2col)",
    "tensorRank.range": "tensorRank must be 1..5",
    "tensorRank.im2col": "im2col tensor maps need tensorRank 3, 4 or 5",
    "tensorRank.interleave": "tensorRank must be at least 3 when interleave is not NONE",
    "globalStrides.count": "globalStrides must have tensorRank - 1 entries (dims 1..rank-1; dim 0 is the element)",
    "boxDim.count": "boxDim must have tensorRank entries",
    "elementStrides.count": "elementStrides must have tensorRank entries",
    "globalAddress.range": "globalAddress must be a 64-bit unsigned address",
    "globalAddress.va57": "globalAddress must be below 2^57 (the driver refuses higher addresses; hardware-derived)",
    "globalAddress.align16": "globalAddress must be 16-byte aligned",
    "globalAddress.align32": "globalAddress must be 32-byte aligned with INTERLEAVE_32B or a packed ALIGN16B type",
    "globalAddress.swizzle128": "globalAddress must be 128-byte aligned when swizzling (CUDA Programming Guide)",
    "globalDim.range": "every globalDim must be in [1, 2^32]",
    "globalDim.packed": "packed types need globalDim[0] a multiple of 128 (ALIGN16B) or of 2 (U4_ALIGN8B)",
    "globalStrides.multiple16": "every global stride must be a multiple of 16 bytes",
    "globalStrides.multiple32": "global strides must be multiples of 32 bytes with INTERLEAVE_32B or a packed "
                                "ALIGN16B type",
    "globalStrides.range": "every global stride must be in [0, 2^40) bytes",
    "boxDim.range": "every boxDim must be in [1, 256]",
    "boxDim.inner16": "with INTERLEAVE_NONE the inner box row, boxDim[0] * elemsize, must be a multiple of 16 bytes",
    "boxDim.packed": "packed ALIGN16B types need boxDim[0] == 128",
    "swizzle.innerBox": "with INTERLEAVE_NONE and a swizzle, the inner box row (boxDim[0] * elemsize; im2col: "
                        "channelsPerPixel * elemsize) must fit in the swizzle span",
    "boxDim.interleave16": "with an interleave, boxDim[0] * elemsize must still be a multiple of 16 bytes "
                           "(hardware-derived)",
    "boxDim.maxBytes": "a box may hold at most 228 KiB (233472 bytes) of data, counted as elemsize * "
                       "prod(floor(boxDim[i] / elementStrides[i])) over every dim incl. dim 0 (hardware-derived)",
    "tensorDataType.packedArch": "the packed 16U4/16U6 types need compute capability 10.0 or higher (the sm_90 "
                                 "driver refuses them; hardware-derived)",
    "swizzle.atomArch": "the SWIZZLE_128B_ATOM_* modes need compute capability 10.0 or higher",
    "elementStrides.range": "every elementStride must be in [1, 8]",
    "interleave.swizzle32": "INTERLEAVE_32B requires SWIZZLE_32B (driver documentation)",
    "oobFill.nanFloat": "OOB fill NAN_REQUEST_ZERO_FMA needs a non-packed floating-point dtype",
    "im2col.cornerCount": "im2col pixel-box corners need tensorRank - 2 entries each (one per spatial dim)",
    "im2col.cornerRange": "im2col pixel-box corners must lie in [-32768, 32767] (rank 3), [-128, 127] (rank 4) or "
                          "[-16, 15] (rank 5)",
    "im2col.boxArea": "the im2col bounding box must have non-zero area "
                      "(globalDim[d] + upperCorner - lowerCorner >= 1 in every spatial dim)",
    "im2col.maxBytes": "an im2col box may hold at most 228 KiB (233472 bytes): channelsPerPixel * "
                       "pixelsPerColumn * elemsize (hardware-derived)",
    "im2col.boxArea32": "each bounding-box extent globalDim[j] + upper[i] - lower[i], taken as a 32-bit signed int, "
                        "must be >= 1, with j = i + 1 (INTERLEAVE_NONE) or j = i (interleaved): the driver's "
                        "arithmetic (hardware-derived)",
    "im2col.channelsInterleave16": "with an interleave, channelsPerPixel * elemsize must still be a multiple of 16 "
                                   "bytes (hardware-derived)",
    "im2col.channelsPerPixel": "channelsPerPixel must be in [1, 256]",
    "im2col.pixelsPerColumn": "pixelsPerColumn must be in [1, 1024]",
    "im2col.channels16": "with INTERLEAVE_NONE, channelsPerPixel * elemsize must be a multiple of 16 bytes",
    "im2col.channelsPacked": "packed ALIGN16B types need channelsPerPixel == 128",
    # raised outside validate(): by the dtype mapping, TensorMap.from_tensor/from_shape and check_reduce
    "tensorDataType.known": "the element type must map to a TMA data type",
    "fromTensor.boxRank": "box must have one entry per tensor dimension",
    "fromTensor.elementStridesRank": "elementStrides must have one entry per tensor dimension",
    "fromTensor.stridesRank": "strides must have one entry per tensor dimension",
    "fromTensor.innerStride": "the innermost (last) dimension must be contiguous",
    "fromTensor.dtypeSize": "dtype must have the tensor's element size",
    "fromTensor.strideBytes": "strides must be whole bytes",
    "reduce.op": "TMA reductions are add, min, max, inc, dec, and, or, xor",
    "reduce.dtype": "the reduce op must support the tensor map's element type (PTX cp.reduce.async.bulk.tensor)",
    "argument.integer": "integer fields and arguments take Python or numpy integers only (never a float, string, "
                        "bytes, None or bool)",
    "argument.range": "an integer argument must be in its range",
    "arch.known": "arch must name a compute capability",
    "copy.op": "op must be one of the TMA copy operations",
}

# Documented rules the H200 driver does not enforce (docs/HARDWARE.md §8); tmakit enforces them anyway.
# im2col.boxArea: with an interleave the driver checks the extent on dim i, not on the spatial dim i + 1
# (im2col.boxArea32), so interleaved maps with an empty spatial box encode (corner/area grid in docs/CONFORMANCE.md).
DOC_NE_HW_RULES: list[str] = ["interleave.swizzle32", "globalAddress.swizzle128", "im2col.boxArea"]
# Rules found on the hardware (H200, driver 580.159.04), stated in no document: the driver's, measured by sweeps.
HW_DERIVED_RULES: list[str] = ["globalAddress.va57", "boxDim.interleave16", "boxDim.maxBytes",
                               "tensorDataType.packedArch", "im2col.maxBytes", "im2col.boxArea32",
                               "im2col.channelsInterleave16"]
# Documented but never checked against hardware.
# (The packed-type rules cannot be checked on sm_90, whose driver refuses packed types altogether.)
UNVERIFIED_RULES: list[str] = ["globalDim.packed", "boxDim.packed", "im2col.channelsPacked"]


def _fail(rule: str, value, where: str, fix: str):
    raise TmaDescriptorError(rule, RULES[rule], value, fix, where)


def _round_up(x: int, m: int) -> int:
    return -(-x // m) * m


def parse_arch(arch) -> int:
    """``"sm_90"``, ``"sm_90a"``, ``"compute_100"``, ``"9.0"``, ``90``, ``(9, 0)`` -> ``90``."""
    if isinstance(arch, tuple) and len(arch) == 2 and all(is_integer(v) and v >= 0 for v in arch):
        return int(arch[0]) * 10 + int(arch[1])
    if is_integer(arch) and arch > 0:
        return int(arch) * 10 if arch < 20 else int(arch)
    m = re.fullmatch(r"(?:sm_|compute_)?(\d+)(?:\.(\d))?[af]?", arch.strip().lower()) if isinstance(arch, str) else None
    if not m:
        raise TmaDescriptorError("arch.known", "arch must name a compute capability", arch,
                                 "use e.g. 'sm_90a', 'sm_100', 90 or (9, 0)", f"arch = {arch!r}")
    major = int(m.group(1))
    return major * 10 + int(m.group(2)) if m.group(2) is not None else major


def _needs_32b(tm) -> bool:
    return tm.interleave == Interleave.B32 or tm.dtype in PACKED_ALIGN16B


def _why_32b(tm) -> str:
    return "INTERLEAVE_32B" if tm.interleave == Interleave.B32 else tm.dtype.name


# ---- common to both modes -------------------------------------------------------------------------------------

def check_arch(tm, cc: int):
    if cc < 90:
        _fail("arch.sm90", cc, f"arch sm_{cc}", "run on Hopper (sm_90/sm_90a) or newer")


def check_mode(tm, cc: int):
    if tm.mode not in ("tiled", "im2col"):
        _fail("mode.known", tm.mode, f"mode = {tm.mode!r}", "use mode='tiled' or mode='im2col'")


def check_rank(tm, cc: int):
    if not 1 <= tm.rank <= MAX_RANK:
        _fail("tensorRank.range", tm.rank, f"tensorRank = {tm.rank} (len(global_dim))",
              "merge contiguous dimensions (or split the copy) so that 1..5 remain")


def check_rank_interleave(tm, cc: int):
    if tm.interleave != Interleave.NONE and tm.rank < 3:
        _fail("tensorRank.interleave", tm.rank, f"tensorRank = {tm.rank} with {c_name(tm.interleave)}",
              "use interleave=NONE, or describe the interleaved tensor with at least 3 dims (e.g. C/8, H*W, N)")


def check_counts(tm, cc: int):
    if len(tm.global_strides) != tm.rank - 1:
        _fail("globalStrides.count", len(tm.global_strides),
              f"{len(tm.global_strides)} strides {tm.global_strides} for rank {tm.rank}",
              f"give {tm.rank - 1} byte strides, for dims 1..{tm.rank - 1} (innermost first), and none for dim 0")
    if tm.mode == "tiled" and len(tm.box_dim) != tm.rank:
        _fail("boxDim.count", len(tm.box_dim), f"{len(tm.box_dim)} box dims {tm.box_dim} for rank {tm.rank}",
              f"give one box extent per dimension ({tm.rank}), innermost first")
    if len(tm.element_strides) != tm.rank:
        _fail("elementStrides.count", len(tm.element_strides),
              f"{len(tm.element_strides)} element strides {tm.element_strides} for rank {tm.rank}",
              f"give {tm.rank} element strides (or None for all ones)")


def check_address(tm, cc: int):
    a = tm.global_address
    if not 0 <= a < 2**64:
        _fail("globalAddress.range", a, f"globalAddress = {a}", "pass the tensor's device pointer (or 0)")
    if a % 16:
        _fail("globalAddress.align16", a, f"globalAddress = {a:#x} ({a % 16} bytes past a 16-byte boundary)",
              "start the tensor at a 16-byte-aligned address (allocate aligned, or slice at a multiple of 16 bytes)")
    if _needs_32b(tm) and a % 32:
        _fail("globalAddress.align32", a, f"globalAddress = {a:#x} with {_why_32b(tm)}",
              "start the tensor at a 32-byte-aligned address")


def check_address_va57(tm, cc: int):
    """Hardware-derived (H200 driver 580.159.04): addresses from 2^57 up are refused (57-bit virtual addresses)."""
    a = tm.global_address
    if a >= MAX_GLOBAL_ADDRESS:
        _fail("globalAddress.va57", a, f"globalAddress = {a:#x} (>= 2^57 = {MAX_GLOBAL_ADDRESS:#x})",
              "pass a real device pointer (CUDA virtual addresses are below 2^57), or 0 for an unbound map")


def check_packed_arch(tm, cc: int):
    """Hardware-derived: the sm_90 driver refused every packed-type map (tiled and im2col, all swizzles)."""
    if tm.dtype in PACKED_DTYPES and cc < 100:
        _fail("tensorDataType.packedArch", tm.dtype, f"{tm.dtype.name} on sm_{cc}",
              "unpack to UINT8 (one value per byte) on Hopper, or pass arch='sm_100' for Blackwell")


def _box_bytes_driver(tm) -> int:
    """The driver's box size in bytes: elemsize * prod(floor(boxDim[i] / elementStrides[i])) over all dims (floor,
    not ceil, and elementStrides[0] counts even without interleave: both measured)."""
    n = tm.elem_bits
    for i, b in enumerate(tm.box_dim):
        n *= b // tm.element_strides[i]
    return n // 8


def check_box_bytes(tm, cc: int):
    """Hardware-derived: the H200 driver refuses boxes above 228 KiB of data. Swizzle padding is not counted; the
    count is elemsize * prod(floor(boxDim[i] / elementStrides[i])), i.e. floor division and elementStrides[0]
    included even with INTERLEAVE_NONE (sweeps with 16..256-byte rows, every swizzle, element strides 1..8)."""
    n = _box_bytes_driver(tm)
    if n > MAX_BOX_BYTES:
        _fail("boxDim.maxBytes", n, f"box {tm.box_dim} with elementStrides {tm.element_strides} holds {n} bytes "
              f"({tm.dtype.name}) > {MAX_BOX_BYTES}",
              "split the box: issue several smaller boxes (a box must fit in one SM's 228 KiB of shared memory)")


def check_box_interleave16(tm, cc: int):
    """Hardware-derived: the 16-byte inner-row rule holds for interleaved maps too (2..56-byte rows refused)."""
    if tm.interleave == Interleave.NONE or not tm.box_dim:
        return
    b0 = tm.box_dim[0]
    if (b0 * tm.elem_bits) % 128:
        per16 = 128 // _gcd(128, tm.elem_bits)
        _fail("boxDim.interleave16", b0, f"boxDim[0] = {b0} elements = {b0 * tm.elem_bits / 8:g} bytes "
              f"({tm.dtype.name}) with {c_name(tm.interleave)}",
              f"make boxDim[0] a multiple of {per16} elements ({_round_up(b0, per16)} is the next)")


def check_address_swizzle(tm, cc: int):
    a = tm.global_address
    if tm.swizzle != SwizzleMode.NONE and a % 128:
        _fail("globalAddress.swizzle128", a, f"globalAddress = {a:#x} with SWIZZLE_{_swz(tm.swizzle)}",
              "allocate the tensor 128-byte aligned: for the emulator tk.emu.alloc(shape, dtype, align=128) "
              "(a plain numpy array is only 16-byte aligned, so this fails at random); the driver may accept 16, "
              "but the CUDA guide asks 128")


def check_global_dim(tm, cc: int):
    for i, d in enumerate(tm.global_dim):
        if not 1 <= d <= MAX_GLOBAL_DIM:
            _fail("globalDim.range", d, f"globalDim[{i}] = {d}",
                  "empty dimensions cannot be described: skip the copy; split dimensions larger than 2^32")


def check_global_dim_packed(tm, cc: int):
    if tm.dtype not in PACKED_DTYPES or not tm.global_dim:
        return
    m = 128 if tm.dtype in PACKED_ALIGN16B else 2
    d0 = tm.global_dim[0]
    if d0 % m:
        _fail("globalDim.packed", d0, f"globalDim[0] = {d0} with {tm.dtype.name}",
              f"pad the inner dimension to {_round_up(d0, m)} elements (a multiple of {m})")


def check_global_strides(tm, cc: int):
    for i, s in enumerate(tm.global_strides):
        where = f"globalStrides[{i}] = {s} bytes (dim {i + 1})"
        if not 0 <= s < MAX_GLOBAL_STRIDE:
            _fail("globalStrides.range", s, where, "strides are byte counts below 2^40 (1 TiB); split the tensor")
        if s % 16:
            _fail("globalStrides.multiple16", s, where,
                  f"pad dim {i + 1} to a stride of {_round_up(s, 16)} bytes (allocate wider rows and view the "
                  "used part), or pick a size whose rows are a multiple of 16 bytes")
        if _needs_32b(tm) and s % 32:
            _fail("globalStrides.multiple32", s, f"{where} with {_why_32b(tm)}",
                  f"pad dim {i + 1} to a stride of {_round_up(s, 32)} bytes")


def check_element_strides(tm, cc: int):
    for i, e in enumerate(tm.element_strides):
        if not 1 <= e <= MAX_ELEMENT_STRIDE:
            _fail("elementStrides.range", e, f"elementStrides[{i}] = {e}",
                  "use element strides 1..8 (1 = every element); subsample further with a strided global view")


def check_interleave_swizzle(tm, cc: int):
    if tm.interleave == Interleave.B32 and tm.swizzle != SwizzleMode.B32:
        _fail("interleave.swizzle32", tm.swizzle, f"INTERLEAVE_32B with SWIZZLE_{_swz(tm.swizzle)}",
              "use swizzle=SwizzleMode.B32 with INTERLEAVE_32B (documented; the H200 driver does not check it)")


def check_swizzle_arch(tm, cc: int):
    if tm.swizzle in ATOM_SWIZZLES and cc < 100:
        _fail("swizzle.atomArch", tm.swizzle, f"SWIZZLE_{_swz(tm.swizzle)} on sm_{cc}",
              "use SWIZZLE_128B on Hopper, or pass arch='sm_100' for Blackwell")


def check_swizzle_inner(tm, cc: int):
    if tm.interleave != Interleave.NONE or tm.swizzle == SwizzleMode.NONE:
        return
    span = SWIZZLE_SPAN[tm.swizzle]
    inner = tm.inner_bytes
    if inner > span:
        name = "channelsPerPixel" if tm.mode == "im2col" else "boxDim[0]"
        fit = span * 8 // tm.smem_elem_bits
        _fail("swizzle.innerBox", inner, f"{name} = {tm.inner_box} elements = {inner} bytes > SWIZZLE_"
              f"{_swz(tm.swizzle)} span of {span} bytes",
              f"use {name} <= {fit} and issue several boxes along dim 0, or a wider swizzle")


def check_oob_fill(tm, cc: int):
    if tm.oob_fill == OobFill.NAN_REQUEST_ZERO_FMA and tm.dtype not in FLOAT_DTYPES:
        _fail("oobFill.nanFloat", tm.dtype, f"NAN_REQUEST_ZERO_FMA with {tm.dtype.name}",
              "use oob_fill=OobFill.NONE (zeros), or a floating-point dtype (fp8 is UINT8 to TMA: zeros only)")


# ---- tiled ----------------------------------------------------------------------------------------------------

def check_box_dim(tm, cc: int):
    for i, b in enumerate(tm.box_dim):
        if not 1 <= b <= MAX_BOX_DIM:
            _fail("boxDim.range", b, f"boxDim[{i}] = {b}",
                  "use box extents 1..256 and cover larger tiles with several TMA issues")


def check_box_inner16(tm, cc: int):
    if tm.interleave != Interleave.NONE or not tm.box_dim:
        return
    b0 = tm.box_dim[0]
    if (b0 * tm.elem_bits) % 128:
        per16 = 128 // _gcd(128, tm.elem_bits)
        _fail("boxDim.inner16", b0, f"boxDim[0] = {b0} elements = {b0 * tm.elem_bits / 8:g} bytes ({tm.dtype.name})",
              f"make boxDim[0] a multiple of {per16} elements ({_round_up(b0, per16)} is the next), i.e. 16 bytes")


def check_box_packed(tm, cc: int):
    if tm.dtype in PACKED_ALIGN16B and tm.box_dim and tm.box_dim[0] != 128:
        _fail("boxDim.packed", tm.box_dim[0], f"boxDim[0] = {tm.box_dim[0]} with {tm.dtype.name}",
              "use boxDim[0] = 128 for packed ALIGN16B types")


# ---- im2col ---------------------------------------------------------------------------------------------------

def check_im2col_rank(tm, cc: int):
    if tm.rank not in IM2COL_CORNER_RANGE:
        _fail("tensorRank.im2col", tm.rank, f"tensorRank = {tm.rank} in im2col mode",
              "describe the activation as NWC (3), NHWC (4) or NDHWC (5), channels innermost")


def check_im2col_corners(tm, cc: int):
    n = tm.rank - 2
    lo_c, up_c = tm.pixel_box_lower_corner, tm.pixel_box_upper_corner
    for name, c in (("pixelBoxLowerCorner", lo_c), ("pixelBoxUpperCorner", up_c)):
        if len(c) != n:
            _fail("im2col.cornerCount", len(c), f"{name} = {c} ({len(c)} entries) for rank {tm.rank}",
                  f"give {n} offsets, innermost spatial dimension first")
    lo, hi = IM2COL_CORNER_RANGE[tm.rank]
    for name, c in (("pixelBoxLowerCorner", lo_c), ("pixelBoxUpperCorner", up_c)):
        for i, v in enumerate(c):
            if not lo <= v <= hi:
                _fail("im2col.cornerRange", v, f"{name}[{i}] = {v} (rank {tm.rank} allows [{lo}, {hi}])",
                      "use smaller padding/filter offsets, or a lower-rank view with wider corner ranges")
    for i, (a, b) in enumerate(zip(lo_c, up_c)):
        d = tm.global_dim[i + 1]
        if d + b - a < 1:
            _fail("im2col.boxArea", d + b - a,
                  f"spatial dim {i + 1}: globalDim {d} + upper {b} - lower {a} = {d + b - a}",
                  "widen the bounding box: lower the lower corner or raise the upper corner")


def check_im2col_channels(tm, cc: int):
    c = tm.channels_per_pixel
    if not 1 <= c <= MAX_CHANNELS_PER_PIXEL:
        _fail("im2col.channelsPerPixel", c, f"channelsPerPixel = {c}",
              "load at most 256 channels per pixel; split the C dimension over several issues")
    if tm.interleave == Interleave.NONE and (c * tm.elem_bits) % 128:
        per16 = 128 // _gcd(128, tm.elem_bits)
        _fail("im2col.channels16", c, f"channelsPerPixel = {c} = {c * tm.elem_bits / 8:g} bytes ({tm.dtype.name})",
              f"use a multiple of {per16} channels (16 bytes)")
    if tm.dtype in PACKED_ALIGN16B and c != 128:
        _fail("im2col.channelsPacked", c, f"channelsPerPixel = {c} with {tm.dtype.name}",
              "use channelsPerPixel = 128 for packed ALIGN16B types")


def check_im2col_channels_interleave(tm, cc: int):
    """Hardware-derived: interleaved im2col maps also need 16-byte multiples of channels (2..8-byte rows refused)."""
    c = tm.channels_per_pixel
    if tm.interleave != Interleave.NONE and (c * tm.elem_bits) % 128:
        per16 = 128 // _gcd(128, tm.elem_bits)
        _fail("im2col.channelsInterleave16", c, f"channelsPerPixel = {c} = {c * tm.elem_bits / 8:g} bytes "
              f"({tm.dtype.name}) with {c_name(tm.interleave)}", f"use a multiple of {per16} channels (16 bytes)")


def check_im2col_bytes(tm, cc: int):
    """Hardware-derived: channelsPerPixel * pixelsPerColumn * elemsize <= 228 KiB (e.g. 256 B x 912 pixels is
    the most; 256 B x 913 refused)."""
    n = tm.channels_per_pixel * tm.pixels_per_column * tm.elem_bits // 8
    if n > MAX_BOX_BYTES:
        most = MAX_BOX_BYTES * 8 // max(1, tm.channels_per_pixel * tm.elem_bits)
        _fail("im2col.maxBytes", n, f"channelsPerPixel {tm.channels_per_pixel} x pixelsPerColumn "
              f"{tm.pixels_per_column} x {tm.elem_bits // 8} B = {n} bytes > {MAX_BOX_BYTES}",
              f"use pixelsPerColumn <= {most}, or fewer channels per load")


def _s32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - 2**32 if x >= 2**31 else x


def check_im2col_box_area32(tm, cc: int):
    """Hardware-derived: the driver computes each bounding-box extent ``globalDim[j] + upper[i] - lower[i]`` in
    32-bit signed arithmetic and refuses it unless it is >= 1, pairing corner i with dim j = i + 1 (W, H, D) for
    INTERLEAVE_NONE but with dim j = i for interleaved maps. So dims of 2^31 .. 2^32 - 1 (plus the corners) are
    refused although their true extent is positive, and extents that wrap back to >= 1 (2^32 + 1) are accepted: we
    mirror the driver (sweeps: 2^31, 2^32 - 1, 2^32 with corners -4..3, every interleave)."""
    j0 = 1 if tm.interleave == Interleave.NONE else 0
    for i, (a, b) in enumerate(zip(tm.pixel_box_lower_corner, tm.pixel_box_upper_corner)):
        d = tm.global_dim[i + j0]
        ext = _s32(d + b - a)
        if ext < 1:
            _fail("im2col.boxArea32", d + b - a,
                  f"globalDim[{i + j0}] {d} + upper[{i}] {b} - lower[{i}] {a} = {d + b - a}, {ext} as a 32-bit int"
                  f"{'' if j0 else ' (interleaved: the driver pairs corner i with dim i)'}",
                  "keep every dimension below 2^31 - 2^16 (split the activation tensor) and the corners so that "
                  "the box is not empty")


def check_im2col_pixels(tm, cc: int):
    p = tm.pixels_per_column
    if not 1 <= p <= MAX_PIXELS_PER_COLUMN:
        _fail("im2col.pixelsPerColumn", p, f"pixelsPerColumn = {p}",
              "load 1..1024 pixels per column; split larger GEMM-M tiles over several issues")


def _gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a


def _swz(s: SwizzleMode) -> str:
    return c_name(s).removeprefix("CU_TENSOR_MAP_SWIZZLE_")


COMMON_CHECKS = (check_arch, check_mode, check_rank)
TILED_CHECKS = (
    check_rank_interleave, check_counts, check_address, check_global_dim, check_global_dim_packed,
    check_global_strides, check_box_dim, check_box_inner16, check_box_packed, check_element_strides,
    check_interleave_swizzle, check_swizzle_arch, check_swizzle_inner, check_oob_fill, check_address_swizzle,
    # hardware-derived (after the documented rules, so a map breaking both names the documented one)
    check_packed_arch, check_address_va57, check_box_interleave16, check_box_bytes,
)
IM2COL_CHECKS = (
    check_im2col_rank, check_rank_interleave, check_counts, check_address, check_global_dim,
    check_global_dim_packed, check_global_strides, check_im2col_corners, check_im2col_channels,
    check_im2col_pixels, check_element_strides, check_interleave_swizzle, check_swizzle_arch, check_swizzle_inner,
    check_oob_fill, check_address_swizzle,
    check_packed_arch, check_address_va57, check_im2col_box_area32, check_im2col_channels_interleave,
    check_im2col_bytes,
)


def validate(tm, arch="sm_90"):
    """Run every rule for ``tm.mode`` on ``arch``; raise :class:`TmaDescriptorError` at the first broken one."""
    cc = parse_arch(arch)
    for check in COMMON_CHECKS:
        check(tm, cc)
    for check in (IM2COL_CHECKS if tm.mode == "im2col" else TILED_CHECKS):
        check(tm, cc)
    return tm

