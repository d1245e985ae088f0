"""Every validator rule of docs/HARDWARE.md §1: a failing and a passing case, both sides of each limit."""

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tmakit.tma import (
    DOC_NE_HW_RULES,
    REDUCE_DTYPES,
    DataType,
    Interleave,
    OobFill,
    SwizzleMode,
    TensorMap,
    TmaDescriptorError,
    TmaError,
    check_reduce,
)
from tmakit.tma.tensormap_rules import HW_DERIVED_RULES, RULES, UNVERIFIED_RULES, parse_arch

D, IL, SW = DataType, Interleave, SwizzleMode

# A valid tiled map: bf16 (M=256, K=128) row-major, 64x64 box.
TILED = TensorMap(D.BFLOAT16, (128, 256), (256,), (64, 64))
# A valid 3-D interleaved map (INTERLEAVE_32B needs SWIZZLE_32B and 32-byte strides/address).
INTERLEAVED = TensorMap(D.FLOAT16, (16, 64, 8), (64, 4096), (16, 32, 4), interleave=IL.B32, swizzle=SW.B32)
# A valid packed map (16U4_ALIGN16B: dim0 % 128, box0 == 128, 32-byte strides).
PACKED = TensorMap(D.U4_ALIGN16B, (256, 64), (128,), (128, 16))
# A valid im2col map: fp16 NHWC, C=64, W=9, H=14, N=4.
IM2COL = TensorMap(D.FLOAT16, (64, 9, 14, 4), (128, 1152, 16128), (), mode="im2col",
                   pixel_box_lower_corner=(-1, -1), pixel_box_upper_corner=(-1, -1),
                   channels_per_pixel=64, pixels_per_column=128)
# A valid rank-3 f32 map with a 224 KiB box (the driver's limit is 228 KiB).
BIG = TensorMap(D.FLOAT32, (1024, 256, 256), (4096, 4096 * 256), (32, 256, 7))


def fails(tm, rule, shown, arch="sm_90"):
    with pytest.raises(TmaDescriptorError) as ei:
        tm.validate(arch)
    e = ei.value
    assert e.rule == rule, str(e)
    assert rule in str(e) and shown in str(e), str(e)
    assert e.fix and e.fix in str(e)
    return e


def ok(tm, arch="sm_90"):
    assert tm.validate(arch) is tm


# (rule, base, failing changes, text naming the value, passing changes, arch)
CASES = [
    ("tensorRank.range", TILED, dict(global_dim=(2,) * 6, global_strides=(16,) * 5, box_dim=(2,) * 6,
                                     element_strides=None), "tensorRank = 6",
     dict(global_dim=(8,) * 5, global_strides=(16, 128, 1024, 8192), box_dim=(8,) * 5, element_strides=None), None),
    ("tensorRank.range", TILED, dict(global_dim=(), global_strides=(), box_dim=(), element_strides=None),
     "tensorRank = 0", dict(global_dim=(8,), global_strides=(), box_dim=(8,), element_strides=None), None),
    ("tensorRank.interleave", TILED, dict(interleave=IL.B16), "tensorRank = 2",
     dict(global_dim=(8, 4, 4), global_strides=(16, 64), box_dim=(8, 4, 4), element_strides=None,
          interleave=IL.B16), None),
    ("globalStrides.count", TILED, dict(global_strides=(256, 512)), "2 strides",
     dict(global_strides=(256,)), None),
    ("boxDim.count", TILED, dict(box_dim=(64,)), "1 box dims", dict(box_dim=(64, 1)), None),
    ("elementStrides.count", TILED, dict(element_strides=(1,)), "1 element strides",
     dict(element_strides=(1, 1)), None),
    ("globalAddress.range", TILED, dict(global_address=-16), "globalAddress = -16",
     dict(global_address=2**57 - 16), None),
    ("globalAddress.align16", TILED, dict(global_address=0x1008), "0x1008", dict(global_address=0x1010), None),
    ("globalAddress.align32", INTERLEAVED, dict(global_address=0x1010), "0x1010 with INTERLEAVE_32B",
     dict(global_address=0x1080), None),  # INTERLEAVE_32B implies SWIZZLE_32B, hence 128 B (DOC≠HW)
    ("globalAddress.align32", PACKED, dict(global_address=0x1010), "U4_ALIGN16B", dict(global_address=0x1020), None),
    ("globalAddress.swizzle128", TILED, dict(swizzle=SW.B128, global_address=0x1040), "0x1040 with SWIZZLE_128B",
     dict(swizzle=SW.B128, global_address=0x1080), None),
    ("globalAddress.swizzle128", TILED, dict(swizzle=SW.B32, box_dim=(16, 64), global_address=0x1010), "0x1010",
     dict(swizzle=SW.NONE, global_address=0x1010), None),
    ("globalDim.range", TILED, dict(global_dim=(2**32 + 1, 256)), "globalDim[0] = 4294967297",
     dict(global_dim=(2**32, 256)), None),
    ("globalDim.range", TILED, dict(global_dim=(128, 0)), "globalDim[1] = 0", dict(global_dim=(128, 1)), None),
    ("globalDim.packed", PACKED, dict(global_dim=(192, 64)), "globalDim[0] = 192", dict(global_dim=(384, 64)), None),
    ("globalDim.packed", PACKED, dict(dtype=D.U4_ALIGN8B, global_dim=(255, 64), box_dim=(32, 16)),
     "globalDim[0] = 255", dict(dtype=D.U4_ALIGN8B, global_dim=(254, 64), box_dim=(32, 16)), None),
    ("globalStrides.multiple16", TILED, dict(global_strides=(200,)), "globalStrides[0] = 200 bytes",
     dict(global_strides=(208,)), None),
    ("globalStrides.multiple32", INTERLEAVED, dict(global_strides=(48, 4096)), "globalStrides[0] = 48",
     dict(global_strides=(64, 4096)), None),
    ("globalStrides.multiple32", PACKED, dict(global_strides=(144,)), "globalStrides[0] = 144",
     dict(global_strides=(160,)), None),
    ("globalStrides.range", TILED, dict(global_strides=(2**40,)), "globalStrides[0] = 1099511627776",
     dict(global_strides=(2**40 - 16,)), None),
    ("globalStrides.range", TILED, dict(global_strides=(-16,)), "globalStrides[0] = -16",
     dict(global_strides=(0,)), None),
    ("boxDim.range", TILED, dict(box_dim=(64, 257)), "boxDim[1] = 257", dict(box_dim=(64, 256)), None),
    ("boxDim.range", TILED, dict(box_dim=(64, 0)), "boxDim[1] = 0", dict(box_dim=(64, 1)), None),
    ("boxDim.range", TILED, dict(dtype=D.UINT8, box_dim=(272, 1)), "boxDim[0] = 272",
     dict(dtype=D.UINT8, box_dim=(256, 1)), None),
    ("boxDim.inner16", TILED, dict(box_dim=(12, 64)), "boxDim[0] = 12 elements = 24 bytes",
     dict(box_dim=(8, 64)), None),
    ("boxDim.inner16", INTERLEAVED, dict(interleave=IL.NONE, swizzle=SW.NONE, box_dim=(4, 32, 4)),
     "boxDim[0] = 4", dict(interleave=IL.NONE, swizzle=SW.NONE, box_dim=(8, 32, 4)), None),
    ("boxDim.packed", PACKED, dict(box_dim=(64, 16)), "boxDim[0] = 64", dict(box_dim=(128, 16)), None),
    ("swizzle.innerBox", TILED, dict(swizzle=SW.B128, box_dim=(72, 64)), "144 bytes > SWIZZLE_128B",
     dict(swizzle=SW.B128, box_dim=(64, 64)), None),
    ("swizzle.innerBox", TILED, dict(swizzle=SW.B64, box_dim=(40, 64)), "80 bytes > SWIZZLE_64B span of 64",
     dict(swizzle=SW.B64, box_dim=(32, 64)), None),
    ("swizzle.innerBox", TILED, dict(swizzle=SW.B32, box_dim=(24, 64)), "48 bytes",
     dict(swizzle=SW.B32, box_dim=(16, 64)), None),
    ("swizzle.atomArch", TILED, dict(swizzle=SW.B128_ATOM_32B), "SWIZZLE_128B_ATOM_32B on sm_90",
     dict(swizzle=SW.B128_ATOM_32B), "sm_100a"),
    ("swizzle.atomArch", TILED, dict(swizzle=SW.B128_ATOM_64B), "128B_ATOM_64B", dict(swizzle=SW.B128_ATOM_64B),
     "sm_100"),
    ("swizzle.atomArch", TILED, dict(swizzle=SW.B128_ATOM_32B_FLIP_8B), "128B_ATOM_32B_FLIP_8B",
     dict(swizzle=SW.B128), None),
    ("elementStrides.range", TILED, dict(element_strides=(1, 9)), "elementStrides[1] = 9",
     dict(element_strides=(1, 8)), None),
    ("elementStrides.range", TILED, dict(element_strides=(0, 1)), "elementStrides[0] = 0",
     dict(element_strides=(1, 1)), None),
    ("interleave.swizzle32", INTERLEAVED, dict(swizzle=SW.B128), "INTERLEAVE_32B with SWIZZLE_128B",
     dict(swizzle=SW.B32), None),
    ("interleave.swizzle32", INTERLEAVED, dict(swizzle=SW.NONE), "SWIZZLE_NONE",
     dict(interleave=IL.B16, swizzle=SW.NONE), None),
    ("oobFill.nanFloat", TILED, dict(dtype=D.UINT8, box_dim=(64, 64), oob_fill=OobFill.NAN_REQUEST_ZERO_FMA),
     "NAN_REQUEST_ZERO_FMA with UINT8", dict(dtype=D.FLOAT16, oob_fill=OobFill.NAN_REQUEST_ZERO_FMA), None),
    ("oobFill.nanFloat", TILED, dict(dtype=D.UINT32, box_dim=(32, 64), oob_fill=1), "UINT32",
     dict(dtype=D.FLOAT32, box_dim=(32, 64), oob_fill=1), None),
    ("oobFill.nanFloat", PACKED, dict(oob_fill=1), "U4_ALIGN16B", dict(oob_fill=0), None),
    ("oobFill.nanFloat", TILED, dict(dtype=D.INT64, box_dim=(16, 64), oob_fill=1), "INT64",
     dict(dtype=D.TFLOAT32_FTZ, box_dim=(16, 64), oob_fill=1), None),
    ("mode.known", TILED, dict(mode="tile"), "mode = 'tile'", dict(mode="tiled"), None),
    # im2col
    ("tensorRank.im2col", IM2COL, dict(global_dim=(64, 9), global_strides=(128,), pixel_box_lower_corner=(),
                                       pixel_box_upper_corner=()), "tensorRank = 2 in im2col",
     dict(global_dim=(64, 9, 4), global_strides=(128, 1152), pixel_box_lower_corner=(-1,),
          pixel_box_upper_corner=(-1,), element_strides=None), None),
    ("im2col.cornerCount", IM2COL, dict(pixel_box_lower_corner=(-1,)), "pixelBoxLowerCorner = (-1,)",
     dict(pixel_box_lower_corner=(0, 0)), None),
    ("im2col.cornerCount", IM2COL, dict(pixel_box_upper_corner=(0, 0, 0)), "pixelBoxUpperCorner = (0, 0, 0)",
     dict(pixel_box_upper_corner=(0, 0)), None),
    ("im2col.cornerRange", IM2COL, dict(pixel_box_lower_corner=(-129, 0)), "pixelBoxLowerCorner[0] = -129",
     dict(pixel_box_lower_corner=(-128, 0)), None),
    ("im2col.cornerRange", IM2COL, dict(pixel_box_upper_corner=(0, 128)), "pixelBoxUpperCorner[1] = 128",
     dict(pixel_box_upper_corner=(0, 127)), None),
    ("im2col.boxArea", IM2COL, dict(pixel_box_lower_corner=(0, 0), pixel_box_upper_corner=(-9, 0)),
     "globalDim 9 + upper -9 - lower 0 = 0", dict(pixel_box_lower_corner=(0, 0), pixel_box_upper_corner=(-8, 0)),
     None),
    ("im2col.boxArea", IM2COL, dict(pixel_box_lower_corner=(0, 14), pixel_box_upper_corner=(0, 0)), "= 0",
     dict(pixel_box_lower_corner=(0, 13), pixel_box_upper_corner=(0, 0)), None),
    ("im2col.channelsPerPixel", IM2COL, dict(channels_per_pixel=257), "channelsPerPixel = 257",
     dict(channels_per_pixel=256), None),
    ("im2col.channelsPerPixel", IM2COL, dict(channels_per_pixel=0), "channelsPerPixel = 0",
     dict(channels_per_pixel=8), None),
    ("im2col.pixelsPerColumn", IM2COL, dict(pixels_per_column=1025), "pixelsPerColumn = 1025",
     dict(pixels_per_column=1024), None),
    ("im2col.pixelsPerColumn", IM2COL, dict(pixels_per_column=0), "pixelsPerColumn = 0",
     dict(pixels_per_column=1), None),
    ("im2col.channels16", IM2COL, dict(channels_per_pixel=12), "channelsPerPixel = 12 = 24 bytes",
     dict(channels_per_pixel=16), None),
    ("im2col.channelsPacked", IM2COL, dict(dtype=D.U6_ALIGN16B, global_dim=(128, 9, 14, 4),
                                           global_strides=(96, 864, 12096), channels_per_pixel=64),
     "channelsPerPixel = 64 with U6_ALIGN16B",
     dict(dtype=D.U6_ALIGN16B, global_dim=(128, 9, 14, 4), global_strides=(96, 864, 12096),
          channels_per_pixel=128), None),
    ("swizzle.innerBox", IM2COL, dict(swizzle=SW.B128, channels_per_pixel=72), "channelsPerPixel = 72",
     dict(swizzle=SW.B128, channels_per_pixel=64), None),
    ("globalStrides.multiple16", IM2COL, dict(global_strides=(120, 1152, 16128)), "globalStrides[0] = 120",
     dict(global_strides=(128, 1152, 16128)), None),
    ("interleave.swizzle32", IM2COL, dict(interleave=IL.B32, global_strides=(128, 1152, 16128)), "INTERLEAVE_32B",
     dict(interleave=IL.B32, swizzle=SW.B32), None),
    ("oobFill.nanFloat", IM2COL, dict(dtype=D.UINT16, oob_fill=1), "UINT16", dict(oob_fill=1), None),
    ("elementStrides.range", IM2COL, dict(element_strides=(1, 1, 9, 1)), "elementStrides[2] = 9",
     dict(element_strides=(1, 1, 8, 1)), None),
    # hardware-derived (H200 driver 580.159.04 sweeps, docs/CONFORMANCE.md)
    ("globalAddress.va57", TILED, dict(global_address=2**57), "globalAddress = 0x200000000000000",
     dict(global_address=2**57 - 256), None),
    ("tensorDataType.packedArch", TILED, dict(dtype=D.U4_ALIGN16B, box_dim=(128, 64)), "U4_ALIGN16B on sm_90",
     dict(dtype=D.U4_ALIGN16B, box_dim=(128, 64)), "sm_100"),
    ("tensorDataType.packedArch", TILED, dict(dtype=D.U4_ALIGN8B, box_dim=(128, 64)), "U4_ALIGN8B on sm_90",
     dict(dtype=D.UINT8, box_dim=(128, 64)), None),
    ("boxDim.interleave16", INTERLEAVED, dict(box_dim=(4, 32, 4)), "boxDim[0] = 4 elements = 8 bytes",
     dict(box_dim=(8, 32, 4)), None),
    ("boxDim.maxBytes", BIG, dict(box_dim=(32, 256, 8)), "holds 262144 bytes", dict(box_dim=(32, 256, 7)), None),
    # floor(boxDim / elementStride), not ceil: 15 / 2 counts 7 rows
    ("boxDim.maxBytes", BIG, dict(box_dim=(32, 256, 16), element_strides=(1, 1, 2)), "262144",
     dict(box_dim=(32, 256, 15), element_strides=(1, 1, 2)), None),
    # elementStrides[0] counts although TMA ignores it for the data with INTERLEAVE_NONE
    ("boxDim.maxBytes", BIG, dict(box_dim=(32, 256, 14)), "458752", dict(box_dim=(32, 256, 14),
                                                                            element_strides=(2, 1, 1)), None),
    ("im2col.maxBytes", IM2COL, dict(channels_per_pixel=256, pixels_per_column=457), "= 233984 bytes",
     dict(channels_per_pixel=256, pixels_per_column=456), None),
    ("im2col.boxArea32", IM2COL, dict(global_dim=(64, 2**31, 14, 4)), "-2147483648 as a 32-bit int",
     dict(global_dim=(64, 2**31 - 2**16, 14, 4)), None),
    ("im2col.boxArea32", IM2COL, dict(global_dim=(2**31, 9, 14, 4), interleave=IL.B16),
     "globalDim[0] 2147483648", dict(global_dim=(2**31, 9, 14, 4)), None),
    ("im2col.channelsInterleave16", IM2COL, dict(interleave=IL.B16, channels_per_pixel=4),
     "channelsPerPixel = 4 = 8 bytes", dict(interleave=IL.B16, channels_per_pixel=8), None),
]


@pytest.mark.parametrize("rule,base,bad,shown,good,arch", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_rule_fails_and_passes(rule, base, bad, shown, good, arch):
    assert rule in RULES
    # packed types exist only on sm_100+ (tensorDataType.packedArch): their documented rules are tested there
    a = "sm_100" if base.is_packed or base.replace(**bad).is_packed and rule != "tensorDataType.packedArch" \
        else "sm_90"
    ok(base, a)
    e = fails(base.replace(**bad), rule, shown, a)
    assert RULES[rule] in str(e)
    ok(base.replace(**good), arch or a)
    if rule in HW_DERIVED_RULES:
        assert "hardware-derived" in RULES[rule]


@pytest.mark.parametrize("rank,lo,hi", [(3, -32768, 32767), (4, -128, 127), (5, -16, 15)])
def test_im2col_corner_range_per_rank(rank, lo, hi):
    dims = (16,) * rank
    strides = tuple(32 * 16**i for i in range(rank - 1))
    base = TensorMap(D.FLOAT16, dims, strides, (), mode="im2col", channels_per_pixel=16, pixels_per_column=64,
                     pixel_box_lower_corner=(0,) * (rank - 2), pixel_box_upper_corner=(0,) * (rank - 2))
    ok(base)
    n = rank - 2
    ok(base.replace(pixel_box_lower_corner=(lo,) * n, pixel_box_upper_corner=(hi,) * n))
    fails(base.replace(pixel_box_lower_corner=(lo - 1,) + (0,) * (n - 1)), "im2col.cornerRange", str(lo - 1))
    fails(base.replace(pixel_box_upper_corner=(0,) * (n - 1) + (hi + 1,)), "im2col.cornerRange", str(hi + 1))


def test_im2col_rank_3_4_5_only():
    base = IM2COL
    fails(base.replace(global_dim=(64, 9, 14, 4, 2, 2), global_strides=(128, 1152, 16128, 64512, 129024),
                       element_strides=None, pixel_box_lower_corner=(0,) * 4, pixel_box_upper_corner=(0,) * 4),
          "tensorRank.range", "tensorRank = 6")
    ok(base.replace(global_dim=(64, 9, 14, 3, 4), global_strides=(128, 1152, 16128, 48384), element_strides=None,
                    pixel_box_lower_corner=(0,) * 3, pixel_box_upper_corner=(0,) * 3))


def test_arch_rule():
    fails(TILED, "arch.sm90", "sm_89", arch="sm_89")
    fails(TILED, "arch.sm90", "sm_80", arch=(8, 0))
    for arch in ("sm_90", "sm_90a", "90", 90, 9, (9, 0), "9.0", "compute_90", "sm_100f", "sm_120a"):
        ok(TILED, arch)
    assert parse_arch("sm_100a") == 100 and parse_arch("9.0") == 90 and parse_arch((10, 0)) == 100
    with pytest.raises(ValueError):
        parse_arch("hopper")


@pytest.mark.parametrize("field,value,rule", [
    ("dtype", 16, "tensorDataType.enum"), ("interleave", 3, "interleave.enum"), ("swizzle", 7, "swizzle.enum"),
    ("l2_promotion", 4, "l2Promotion.enum"), ("oob_fill", 2, "oobFill.enum"),
])
def test_enum_rules(field, value, rule):
    with pytest.raises(TmaDescriptorError) as ei:
        TILED.replace(**{field: value})
    assert ei.value.rule == rule and str(value) in str(ei.value)
    assert rule in RULES
    last = {"dtype": 15, "interleave": 2, "swizzle": 6, "l2_promotion": 3, "oob_fill": 1}[field]
    assert int(getattr(TILED.replace(**{field: last}), field)) == last


def test_unknown_dtype_name():
    with pytest.raises(TmaDescriptorError) as ei:
        TILED.replace(dtype="complex64")
    assert ei.value.rule == "tensorDataType.known" and "complex64" in str(ei.value)


def test_acceptance_bf16_row_major_and_unaligned_k():
    M, K = 512, 256
    tm = TensorMap.from_shape((M, K), "bf16", (64, 64), swizzle=SW.B128)
    assert tm.global_dim == (K, M) and tm.global_strides == (2 * K,) and tm.box_dim == (64, 64)
    assert tm.swizzle == SW.B128 and tm.dtype == D.BFLOAT16
    with pytest.raises(TmaDescriptorError) as ei:
        TensorMap.from_shape((M, 100), "bf16", (64, 64), swizzle=SW.B128)
    e = ei.value
    assert e.rule == "globalStrides.multiple16" and e.value == 200
    assert "multiple of 16 bytes" in str(e) and "200" in str(e) and "208" in e.fix


def test_error_shape():
    e = fails(TILED.replace(box_dim=(64, 300)), "boxDim.range", "boxDim[1] = 300")
    assert isinstance(e, TmaError) and isinstance(e, ValueError)
    assert e.value == 300 and e.what == RULES["boxDim.range"]
    e2 = pickle.loads(pickle.dumps(e))
    assert e2.rule == e.rule and str(e2) == str(e)


def test_rule_lists():
    assert set(DOC_NE_HW_RULES) == {"interleave.swizzle32", "globalAddress.swizzle128", "im2col.boxArea"}
    assert set(DOC_NE_HW_RULES) <= set(RULES) and set(UNVERIFIED_RULES) <= set(RULES)
    assert set(HW_DERIVED_RULES) <= set(RULES) and not set(HW_DERIVED_RULES) & set(DOC_NE_HW_RULES)
    tested = {c[0] for c in CASES} | {"arch.sm90", "tensorDataType.enum", "interleave.enum", "swizzle.enum",
                                     "l2Promotion.enum", "oobFill.enum", "tensorDataType.known"}
    tested |= {"arch.known", "argument.integer", "argument.range", "copy.op"}  # tests/test_bad_input_host.py
    descriptor_rules = {r for r in RULES if not r.startswith(("fromTensor.", "reduce."))}
    assert descriptor_rules <= tested, descriptor_rules - tested


def test_element_stride_zero_ignored_only_in_tx():
    # entry 0 is ignored by TMA with INTERLEAVE_NONE, but must still be in range (documented rule)
    ok(TILED.replace(element_strides=(8, 1)))
    assert TILED.replace(element_strides=(8, 1)).tx_bytes == TILED.tx_bytes


# ---- an independent oracle for plain (non-packed, non-interleaved) tiled maps --------------------------------

SIZES = {D.UINT8: 1, D.UINT16: 2, D.FLOAT16: 2, D.BFLOAT16: 2, D.FLOAT32: 4, D.INT32: 4, D.FLOAT64: 8,
         D.INT64: 8}
SPANS = {SW.NONE: None, SW.B32: 32, SW.B64: 64, SW.B128: 128}


def oracle(dt, dims, strides, box, es, swz, addr):
    e = SIZES[dt]
    ok = (all(1 <= d <= 2**32 for d in dims) and all(s % 16 == 0 and 0 <= s < 2**40 for s in strides)
          and all(1 <= b <= 256 for b in box) and (box[0] * e) % 16 == 0 and all(1 <= x <= 8 for x in es)
          and addr % 16 == 0 and (swz == SW.NONE or (box[0] * e <= SPANS[swz] and addr % 128 == 0)))
    if ok:  # the driver's 228 KiB box limit: elemsize * prod(floor(box / es)) over every dim
        n = e
        for b, x in zip(box, es):
            n *= b // x
        ok = n <= 228 * 1024
    return ok


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_validator_matches_oracle(data):
    rank = data.draw(st.integers(1, 5))
    dt = data.draw(st.sampled_from(sorted(SIZES)))
    dims = data.draw(st.lists(st.sampled_from([0, 1, 7, 64, 2**32, 2**32 + 1]), min_size=rank, max_size=rank))
    strides = data.draw(st.lists(st.sampled_from([0, 8, 16, 200, 208, 2**40 - 16, 2**40]), min_size=rank - 1,
                                 max_size=rank - 1))
    box = data.draw(st.lists(st.sampled_from([0, 1, 4, 8, 16, 32, 64, 256, 257]), min_size=rank, max_size=rank))
    es = data.draw(st.lists(st.integers(0, 9), min_size=rank, max_size=rank))
    swz = data.draw(st.sampled_from(sorted(SPANS)))
    addr = data.draw(st.sampled_from([0, 8, 16, 128, 0x7F0000000080]))
    tm = TensorMap(dt, dims, strides, box, es, swizzle=swz, global_address=addr)
    try:
        tm.validate()
        accepted = True
    except TmaDescriptorError as err:
        accepted = False
        assert err.rule in RULES
    assert accepted == oracle(dt, dims, strides, box, es, swz, addr)


# ---- reduce op x dtype table (docs/HARDWARE.md §4) -------------------------------------------------------------

REDUCE_TABLE = {
    "add": {"u32", "s32", "u64", "f32", "f16", "bf16"},
    "min": {"u32", "s32", "u64", "s64", "f16", "bf16"},
    "max": {"u32", "s32", "u64", "s64", "f16", "bf16"},
    "inc": {"u32"}, "dec": {"u32"},
    # s64 bitwise reductions crashed on the H200 (illegal instruction): refused, use u64 maps.
    "and": {"u32", "s32", "u64"}, "or": {"u32", "s32", "u64"}, "xor": {"u32", "s32", "u64"},
}


@pytest.mark.parametrize("op", sorted(REDUCE_TABLE))
@pytest.mark.parametrize("dt", list(DataType))
def test_reduce_table(op, dt):
    from tmakit.tma import tma_dtype

    allowed = {tma_dtype(n) for n in REDUCE_TABLE[op]}
    assert REDUCE_DTYPES[op] == allowed
    if dt in allowed:
        check_reduce(op, dt)
        check_reduce("." + op.upper(), dt)
    else:
        with pytest.raises(TmaDescriptorError) as ei:
            check_reduce(op, dt)
        assert ei.value.rule == "reduce.dtype" and dt.name in str(ei.value)


def test_reduce_op_names():
    check_reduce("SM90_TMA_REDUCE_ADD", "bf16")
    with pytest.raises(TmaDescriptorError) as ei:
        check_reduce("mul", "f32")
    assert ei.value.rule == "reduce.op" and "mul" in str(ei.value)
    with pytest.raises(TmaDescriptorError, match="FLOAT64"):
        check_reduce("add", "f64")
    with pytest.raises(TmaDescriptorError, match="INT64"):
        check_reduce("add", "s64")
    with pytest.raises(TmaDescriptorError, match="FLOAT32"):
        check_reduce("max", "f32")
