"""Interleaved (INTERLEAVE_16B / 32B) tile loads on the GPU: where each global element lands in shared memory.

    python3 -m tools.conformance.hw_probes.interleave # every case, one subprocess each
    python3 -m tools.conformance.hw_probes.interleave one NAME   # one case, in this process

Global memory holds each element's own index (UINT16 / UINT32 maps), shared memory starts as 0xA5 bytes, so the dump
says, for every shared-memory element slot, which global element (or fill) the TMA wrote there. Five CTAs load the
same box expecting 1/2, 1, 2, 4 and 8 times the dense-row model's bytes; the ones whose barrier completes tell the
transaction count. Results: JSON lines in $OUT/interleave_probe.json (the maps of each CTA image).
"""

from __future__ import annotations

import json
import sys

import numpy as np

FACTORS = (0.5, 1, 2, 4, 8)

CASES = {
    # name: (dtype, interleave, swizzle, global dims, box, element strides, coords)
    "u16_i16_box8x4x2": ("UINT16", 1, 0, [8, 16, 8], [8, 4, 2], None, [0, 0, 0]),
    "u16_i16_box8x4x1": ("UINT16", 1, 0, [8, 16, 8], [8, 4, 1], None, [0, 0, 0]),
    "u16_i16_box8x1x1": ("UINT16", 1, 0, [8, 16, 8], [8, 1, 1], None, [0, 0, 0]),
    "u16_i16_box16x4x2": ("UINT16", 1, 0, [16, 16, 8], [16, 4, 2], None, [0, 0, 0]),
    "u16_i16_dim5": ("UINT16", 1, 0, [5, 16, 8], [8, 4, 2], None, [0, 0, 0]),
    "u16_i16_c3": ("UINT16", 1, 0, [8, 16, 8], [8, 4, 2], None, [3, 0, 0]),
    "u16_i16_row1": ("UINT16", 1, 0, [8, 16, 8], [8, 4, 2], None, [0, 1, 0]),
    "u16_i32_sw32_box16x4x2": ("UINT16", 2, 1, [16, 16, 8], [16, 4, 2], None, [0, 0, 0]),
    "u16_i32_sw32_box8x4x2": ("UINT16", 2, 1, [16, 16, 8], [8, 4, 2], None, [0, 0, 0]),
    "u16_i32_sw32_box32x4x2": ("UINT16", 2, 1, [32, 16, 8], [32, 4, 2], None, [0, 0, 0]),
    "u16_i32_none_box16x4x2": ("UINT16", 2, 0, [16, 16, 8], [16, 4, 2], None, [0, 0, 0]),
    "u32_i16_box4x4x2": ("UINT32", 1, 0, [4, 16, 8], [4, 4, 2], None, [0, 0, 0]),
    "u32_i32_sw32_box8x4x2": ("UINT32", 2, 1, [8, 16, 8], [8, 4, 2], None, [0, 0, 0]),
    "u16_i16_4d": ("UINT16", 1, 0, [8, 8, 4, 3], [8, 4, 2, 2], None, [0, 0, 0, 0]),
    # call 102: distinct box extents per dim, so the block count names the dims the hardware walks
    "r3_b8x2x3": ("UINT16", 1, 0, [8, 16, 8], [8, 2, 3], None, [0, 0, 0]),
    "r3_b8x3x1_c020": ("UINT16", 1, 0, [8, 16, 8], [8, 3, 1], None, [0, 2, 0]),
    "r3_b8x4x2_c003": ("UINT16", 1, 0, [8, 16, 8], [8, 4, 2], None, [0, 0, 3]),
    "r3_b8x4x2_c007": ("UINT16", 1, 0, [8, 16, 8], [8, 4, 2], None, [0, 0, 7]),
    "r4_b8x2x3x2_c0110": ("UINT16", 1, 0, [8, 8, 4, 3], [8, 2, 3, 2], None, [0, 1, 1, 0]),
    "r4_b8x3x2x2_c0700": ("UINT16", 1, 0, [8, 8, 4, 3], [8, 3, 2, 2], None, [0, 7, 0, 0]),
    "r5_b8x2x3x2x2": ("UINT16", 1, 0, [8, 4, 4, 3, 2], [8, 2, 3, 2, 2], None, [0, 0, 0, 0, 0]),
    "r3_b16x2x2_c200": ("UINT16", 1, 0, [16, 16, 8], [16, 2, 2], None, [2, 0, 0]),
    "r3_dim0_24": ("UINT16", 1, 0, [24, 8, 4], [8, 2, 2], None, [0, 0, 0]),
    # session 11: elementStrides[0] > 1 on interleaved maps (the emulator refuses them until measured)
    "es0_2": ("UINT16", 1, 0, [16, 4, 4], [8, 2, 2], [2, 1, 1], [0, 0, 0]),
    "es0_3": ("UINT16", 1, 0, [16, 4, 4], [8, 2, 2], [3, 1, 1], [0, 0, 0]),
    "es0_4": ("UINT16", 1, 0, [16, 4, 4], [8, 2, 2], [4, 1, 1], [0, 0, 0]),
    "es0_8": ("UINT16", 1, 0, [16, 4, 4], [8, 2, 2], [8, 1, 1], [0, 0, 0]),
    "es0_2_c1": ("UINT16", 1, 0, [16, 4, 4], [8, 2, 2], [2, 1, 1], [1, 0, 0]),
    "es0_2_i32_sw32": ("UINT16", 2, 1, [16, 4, 4], [8, 2, 2], [2, 1, 1], [0, 0, 0]),
    "es0_2_u32": ("UINT32", 1, 0, [16, 4, 4], [4, 2, 2], [2, 1, 1], [0, 0, 0]),
    "es0_2_es2_2": ("UINT16", 1, 0, [16, 4, 6], [8, 2, 4], [2, 1, 2], [0, 0, 0]),
    "es0_2_oob": ("UINT16", 1, 0, [5, 4, 4], [8, 2, 2], [2, 1, 1], [0, 0, 0]),
    "es0_3_r4": ("UINT16", 1, 0, [16, 3, 4, 3], [8, 2, 2, 2], [3, 1, 1, 1], [0, 0, 1, 0]),
}
#: interleaved im2col loads: (dtype, interleave, swizzle, global dims, channels per pixel, pixels per column,
#: lower corner, upper corner, coords, offsets)
IM2COL_CASES = {
    "i2c_base": ("UINT16", 1, 0, [2, 6, 5, 2], 8, 16, [0, 0], [0, 0], [0, 0, 0, 0], [0, 0]),
    "i2c_cpp16": ("UINT16", 1, 0, [2, 6, 5, 2], 16, 16, [0, 0], [0, 0], [0, 0, 0, 0], [0, 0]),
    "i2c_c1": ("UINT16", 1, 0, [2, 6, 5, 2], 8, 16, [0, 0], [0, 0], [1, 0, 0, 0], [0, 0]),
    "i2c_w2h1": ("UINT16", 1, 0, [2, 6, 5, 2], 8, 16, [0, 0], [0, 0], [0, 2, 1, 0], [0, 0]),
    "i2c_ppc8": ("UINT16", 1, 0, [2, 6, 5, 2], 8, 8, [0, 0], [0, 0], [0, 0, 0, 0], [0, 0]),
    "i2c_corner": ("UINT16", 1, 0, [2, 6, 5, 2], 8, 16, [-1, -1], [-1, -1], [0, 0, 0, 0], [0, 0]),
    "i2c_offs": ("UINT16", 1, 0, [2, 6, 5, 2], 8, 16, [-1, -1], [-1, -1], [0, 0, 0, 0], [1, 1]),
    "i2c_i32_sw32": ("UINT16", 2, 1, [2, 6, 5, 2], 16, 16, [0, 0], [0, 0], [0, 0, 0, 0], [0, 0]),
    "i2c_r3": ("UINT16", 1, 0, [2, 12, 2], 8, 16, [0], [0], [0, 0, 0], [0]),
    "i2c_u32": ("UINT32", 1, 0, [2, 6, 5, 2], 4, 16, [0, 0], [0, 0], [0, 0, 0, 0], [0, 0]),
    # which start coordinates trap: the chunk start outside its pixel box (predicted: traps), W inside its box
    # with H below lowerCorner[1] (predicted: no trap, H is not a spatial dim here), H past the tensor (fill)
    "i2c_start_c_out": ("UINT16", 1, 0, [2, 6, 5, 2], 8, 16, [1, 0], [0, 0], [0, 1, 0, 0], [0, 0]),
    "i2c_start_h_free": ("UINT16", 1, 0, [2, 6, 5, 2], 8, 16, [0, 1], [0, 0], [0, 1, 0, 0], [0, 0]),
    "i2c_h_oob": ("UINT16", 1, 0, [2, 6, 5, 2], 8, 16, [0, 0], [0, 0], [0, 0, 7, 0], [0, 0]),
    "i2c_i32_cpp8": ("UINT16", 2, 1, [2, 6, 5, 2], 8, 16, [0, 0], [0, 0], [0, 0, 0, 0], [0, 0]),
}


def _strides(dims, eb, il):
    strides, s = [], max(dims[0] * eb, 16 << (il - 1))
    for d in dims[1:]:
        strides.append(-(-s // 32) * 32)
        s = strides[-1] * d
    return strides, s


def _map(name, address):
    """(map, coords, global bytes, element bytes, im2col offsets or None)."""
    from tmakit.tma import tensormap as tmm

    if name in IM2COL_CASES:
        dt, il, sw, dims, cpp, ppc, lo, up, coords, offs = IM2COL_CASES[name]
        dtype = tmm.DataType[dt]
        eb = tmm.DTYPE_BITS[dtype] // 8
        strides, s = _strides(dims, eb, il)
        tm = tmm.TensorMap(dtype, dims, strides, [cpp] + [1] * (len(dims) - 1), interleave=il, swizzle=sw,
                           mode="im2col", pixel_box_lower_corner=lo, pixel_box_upper_corner=up,
                           channels_per_pixel=cpp, pixels_per_column=ppc, global_address=address)
        return tm, coords, s, eb, offs
    dt, il, sw, dims, box, es, coords = CASES[name]
    dtype = tmm.DataType[dt]
    eb = tmm.DTYPE_BITS[dtype] // 8
    strides, s = _strides(dims, eb, il)
    tm = tmm.TensorMap(dtype, dims, strides, box, element_strides=es, interleave=il, swizzle=sw,
                       global_address=address)
    return tm, coords, s, eb, None


def one(name):
    from tmakit import cuda as tkc
    from tmakit.kernels import seeds

    tm, coords, total, eb, offs = _map(name, 0)
    tkc.ensure_context()
    idx = np.arange(total // eb, dtype=np.uint16 if eb == 2 else np.uint32)
    buf = tkc.DeviceBuffer(total + 256)
    buf.upload(idx.tobytes() + bytes(256))
    tm, coords, total, eb, offs = _map(name, buf.ptr)
    tm.validate("sm_90")
    enc = tkc.encode_tensormap(tm)
    model = int(tm.smem_bytes)
    image = 8192
    extra = {} if offs is None else dict(mode="im2col", offsets=offs)
    jobs = [seeds.load_job(coords, expect=int(model * f), **extra) for f in FACTORS]
    hw, status = seeds.load_boxes(tm, jobs, image, debug=True, timeout_ns=50_000_000, encoded=enc, check=False)
    touched = [int(np.nonzero(img != 0xA5)[0].max()) + 1 if (img != 0xA5).any() else 0 for img in hw]
    slots = hw[int(np.argmax(status == 1))] if (status == 1).any() else hw[0]
    el = slots[: max(touched) + (-max(touched)) % eb].view(np.uint16 if eb == 2 else np.uint32)
    ff = 0xA5A5 if eb == 2 else 0xA5A5A5A5
    row = dict(case=name, strides=list(tm.global_strides), model_smem=model, status=[int(x) for x in status],
               factors=list(FACTORS), touched=touched, elements=[None if int(v) == ff else int(v) for v in el])
    print(json.dumps(row))


def main(argv):
    if argv and argv[0] == "one":
        return one(argv[1])
    from . import run_cases

    run_cases("tools.conformance.hw_probes.interleave", argv or list(CASES) + list(IM2COL_CASES), "interleave_probe",
              lambda r: {k: v for k, v in r.items() if k != "elements"})


if __name__ == "__main__":
    main(sys.argv[1:])
