"""Human-readable views of a TensorMap: the one-line ``str()``, ``explain()`` and the equivalent driver call in C."""

from __future__ import annotations

import re
from enum import IntEnum

from .errors import TmaDescriptorError
from .tensormap_enums import SWIZZLE_SPAN, DataType, Interleave, L2Promotion, OobFill, SwizzleMode

_C_PREFIX = {
    DataType: "CU_TENSOR_MAP_DATA_TYPE_",
    Interleave: "CU_TENSOR_MAP_INTERLEAVE_",
    SwizzleMode: "CU_TENSOR_MAP_SWIZZLE_",
    L2Promotion: "CU_TENSOR_MAP_L2_PROMOTION_",
    OobFill: "CU_TENSOR_MAP_FLOAT_OOB_FILL_",
}

SHORT_DTYPE = {
    DataType.UINT8: "u8", DataType.UINT16: "u16", DataType.UINT32: "u32", DataType.INT32: "s32",
    DataType.UINT64: "u64", DataType.INT64: "s64", DataType.FLOAT16: "f16", DataType.FLOAT32: "f32",
    DataType.FLOAT64: "f64", DataType.BFLOAT16: "bf16", DataType.FLOAT32_FTZ: "f32.ftz", DataType.TFLOAT32: "tf32",
    DataType.TFLOAT32_FTZ: "tf32.ftz", DataType.U4_ALIGN8B: "16u4.align8b", DataType.U4_ALIGN16B: "16u4.align16b",
    DataType.U6_ALIGN16B: "16u6.align16b",
}


def c_name(value: IntEnum) -> str:
    """The driver's C enumerator, e.g. ``SwizzleMode.B128`` -> ``"CU_TENSOR_MAP_SWIZZLE_128B"``."""
    name = value.name
    m = re.fullmatch(r"B(\d+)(.*)", name)
    if m:  # B128_ATOM_32B -> 128B_ATOM_32B; L2 promotion is spelled L2_64B
        name = f"{m.group(1)}B{m.group(2)}"
        if isinstance(value, L2Promotion):
            name = "L2_" + name
    elif isinstance(value, DataType) and name.startswith(("U4_", "U6_")):
        name = "16" + name
    return _C_PREFIX[type(value)] + name


def _short(value: IntEnum) -> str:
    return c_name(value).removeprefix(_C_PREFIX[type(value)])


def _tup(t) -> str:
    return "(" + ", ".join(str(x) for x in t) + ("," if len(t) == 1 else "") + ")"


def summary(tm) -> str:
    """One line: dtype, mode, dims, strides, box and the non-default options."""
    parts = [f"dim={_tup(tm.global_dim)}", f"stride={_tup(tm.global_strides)}B"]
    if tm.mode == "im2col":
        parts += [f"channels={tm.channels_per_pixel}", f"pixels={tm.pixels_per_column}",
                  f"lower={_tup(tm.pixel_box_lower_corner)}", f"upper={_tup(tm.pixel_box_upper_corner)}"]
    else:
        parts.append(f"box={_tup(tm.box_dim)}")
    if any(e != 1 for e in tm.element_strides):
        parts.append(f"es={_tup(tm.element_strides)}")
    for name, v in (("interleave", tm.interleave), ("swizzle", tm.swizzle), ("l2", tm.l2_promotion),
                    ("oob", tm.oob_fill)):
        if v != 0:
            parts.append(f"{name}={_short(v)}")
    if tm.global_address:
        parts.append(f"addr={tm.global_address:#x}")
    try:
        parts.append(f"tx={tm.tx_bytes}B")
    except (IndexError, KeyError, ZeroDivisionError):
        pass
    return f"TensorMap({SHORT_DTYPE[tm.dtype]} {tm.mode}, " + ", ".join(parts) + ")"


def c_call(tm, var: str = "map") -> str:
    """The equivalent ``cuTensorMapEncodeTiled`` / ``cuTensorMapEncodeIm2col`` call as C source."""
    r = tm.rank
    lines = [f"CUtensorMap {var};",
             f"cuuint64_t globalDim[{r}] = {{{', '.join(map(str, tm.global_dim))}}};"]
    if tm.global_strides:
        lines.append(f"cuuint64_t globalStrides[{len(tm.global_strides)}] = "
                     f"{{{', '.join(map(str, tm.global_strides))}}};  // bytes, dims 1..{r - 1}")
    else:
        lines.append("const cuuint64_t* globalStrides = NULL;  // rank 1: no strides")
    es = f"cuuint32_t elementStrides[{len(tm.element_strides)}] = {{{', '.join(map(str, tm.element_strides))}}};"
    tail = (f"elementStrides,\n    {c_name(tm.interleave)}, {c_name(tm.swizzle)},\n"
            f"    {c_name(tm.l2_promotion)}, {c_name(tm.oob_fill)});")
    head = f"&{var}, {c_name(tm.dtype)}, {r}, (void*){tm.global_address:#x}, globalDim, globalStrides,\n    "
    if tm.mode == "im2col":
        n = len(tm.pixel_box_lower_corner)
        lines += [f"int pixelBoxLowerCorner[{n}] = {{{', '.join(map(str, tm.pixel_box_lower_corner))}}};",
                  f"int pixelBoxUpperCorner[{len(tm.pixel_box_upper_corner)}] = "
                  f"{{{', '.join(map(str, tm.pixel_box_upper_corner))}}};", es,
                  f"cuTensorMapEncodeIm2col({head}pixelBoxLowerCorner, pixelBoxUpperCorner, "
                  f"{tm.channels_per_pixel}, {tm.pixels_per_column}, {tail}"]
    else:
        lines += [f"cuuint32_t boxDim[{len(tm.box_dim)}] = {{{', '.join(map(str, tm.box_dim))}}};", es,
                  f"cuTensorMapEncodeTiled({head}boxDim, {tail}"]
    return "\n".join(lines)


def explain(tm, arch: str = "sm_90") -> str:
    """Every field, bytes per box, the shared-memory footprint, the validity verdict and the C call."""
    eb = tm.elem_bits
    esize = f"{eb // 8} bytes" if eb % 8 == 0 else f"{eb} bits"
    fn = "cuTensorMapEncodeIm2col" if tm.mode == "im2col" else "cuTensorMapEncodeTiled"
    rows = [
        ("dtype", f"{c_name(tm.dtype)} ({esize} per element)"),
        ("rank", str(tm.rank)),
        ("globalAddress", f"{tm.global_address:#x}"),
        ("globalDim", f"{_tup(tm.global_dim)} elements"),
        ("globalStrides", f"{_tup(tm.global_strides)} bytes, for dims 1..{tm.rank - 1} (dim 0 is one element)"),
    ]
    if tm.mode == "im2col":
        rows += [("pixelBoxLowerCorner", _tup(tm.pixel_box_lower_corner)),
                 ("pixelBoxUpperCorner", _tup(tm.pixel_box_upper_corner)),
                 ("channelsPerPixel", str(tm.channels_per_pixel)),
                 ("pixelsPerColumn", str(tm.pixels_per_column))]
    else:
        rows.append(("boxDim", _tup(tm.box_dim)))
    note = " (entry 0 ignored with INTERLEAVE_NONE)" if tm.interleave == Interleave.NONE else ""
    rows.append(("elementStrides", _tup(tm.element_strides) + note))
    il = _short(tm.interleave)
    if tm.interleaved_tile:
        il += (f" (on the H200 dim 0 counts {tm.interleave_bytes}-byte chunks, elementStrides[0] steps over them, "
               f"and dim {tm.rank - 2} loads one position; rows are dense and swizzled in place)")
    elif tm.interleaved_im2col:
        il += (f" (on the H200 each pixel is one {tm.interleave_bytes}-byte chunk whatever channelsPerPixel says; "
               f"the pixel walk steps dims 0..{tm.rank - 3} (corners and offsets in that order), dim {tm.rank - 2} "
               "stays at its coordinate)")
    rows.append(("interleave", il))
    sw = _short(tm.swizzle)
    if tm.swizzle != SwizzleMode.NONE and not tm.interleave_bytes:
        sw += f" (rows padded to the {SWIZZLE_SPAN[tm.swizzle]}-byte span)"
    rows.append(("swizzle", sw))
    rows.append(("l2Promotion", _short(tm.l2_promotion)))
    oob = "out-of-bounds elements read as zero" if tm.oob_fill == OobFill.NONE else "out-of-bounds elements read as NaN"
    rows.append(("oobFill", f"{_short(tm.oob_fill)} ({oob})"))
    try:
        rows.append(("bytes per box", f"{tm.tx_bytes} (the mbarrier transaction count)"))
        rows.append(("shared memory", f"{tm.box_rows} rows x {tm.row_pitch}-byte pitch = {tm.smem_bytes} bytes, "
                                      f"aligned to {tm.smem_alignment} bytes"))
    except (IndexError, KeyError, ZeroDivisionError):
        pass
    try:
        tm.validate(arch)
        verdict = f"valid for {arch}"
    except TmaDescriptorError as e:
        verdict = f"INVALID for {arch}: {e}"
    rows.append(("validity", verdict))
    width = max(len(k) for k, _ in rows)
    out = [f"TensorMap, {tm.mode} ({fn}), innermost dimension first"]
    out += [f"  {k:<{width}}  {v}" for k, v in rows]
    out.append("C:")
    out += ["  " + line for line in c_call(tm).splitlines()]
    return "\n".join(out)
