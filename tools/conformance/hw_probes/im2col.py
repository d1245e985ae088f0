"""Single-load im2col probes on the GPU, one subprocess per case (a trap kills only its own context).

    python3 -m tools.conformance.hw_probes.im2col            # every case; JSON lines to $OUT/im2col_probe.json
    python3 -m tools.conformance.hw_probes.im2col one NAME   # one case, in this process

Each case builds one im2col map (validated on the host, encoded by the driver), issues one load from
``tmakit_seed_load`` and compares the shared-memory image with the emulator's. The cases start from the plainest
map (rank 3, fp32, no swizzle, zero corners, offsets 0) and change one thing at a time, so the first trapping case
names the feature the hardware (or our wrapper) does not take. docs/CONFORMANCE.md reports the outcome.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
OUT = Path(os.environ.get("OUT", ROOT / "bench_out"))

BASE = dict(dtype="FLOAT32", dims=[32, 16, 2], cpp=32, ppc=16, lo=[0], up=[0], es=None, swizzle=0, coords=[0, 0, 0],
            offs=[0], dst=0, pad=0, pdesc=False, ctas=1, store=None)


def _case(**kw):
    c = dict(BASE)
    c.update(kw)
    return c


CASES = {
    "base": _case(),
    "coords": _case(coords=[0, 3, 1]),
    "offset": _case(offs=[2]),
    "ppc8": _case(ppc=8),
    "cpp16": _case(cpp=16),
    "corners_neg": _case(lo=[-1], up=[-1]),
    "corners_pad": _case(lo=[-1], up=[1]),
    "coord_neg": _case(coords=[0, -1, 0], lo=[-1], up=[1]),
    "dst128": _case(dst=128),
    "es2": _case(es=[1, 2, 1]),
    "sw128": _case(swizzle=3),
    "sw64": _case(dims=[16, 16, 2], cpp=16, swizzle=2),
    "stride_pad": _case(pad=16),
    "bf16": _case(dtype="BFLOAT16", dims=[64, 16, 2], cpp=64),
    "u8": _case(dtype="UINT8", dims=[64, 16, 2], cpp=64),
    "rank4": _case(dims=[32, 8, 8, 2], lo=[0, 0], up=[0, 0], coords=[0, 0, 0, 0], offs=[0, 0]),
    "rank4_pad": _case(dims=[32, 8, 8, 2], lo=[-1, -1], up=[-1, -1], coords=[0, 0, 0, 0], offs=[1, 1]),
    "rank5": _case(dims=[32, 4, 4, 4, 2], lo=[0, 0, 0], up=[0, 0, 0], coords=[0, 0, 0, 0, 0], offs=[0, 0, 0]),
    # call 96: what the fuzz draws and the cases above do not
    "c0_inside": _case(dims=[64, 16, 2], coords=[32, 0, 0]),
    "c0_partial": _case(dims=[48, 16, 2], coords=[32, 0, 0]),
    "c0_at_end": _case(coords=[32, 0, 0]),
    "c0_past": _case(coords=[64, 0, 0]),
    "w_at_end": _case(coords=[0, 16, 0]),
    "w_past": _case(coords=[0, 19, 0]),
    "n_at_end": _case(coords=[0, 0, 2]),
    "n_past": _case(coords=[0, 0, 4]),
    "es2_odd": _case(es=[1, 2, 1], coords=[0, 1, 0]),
    "es2_n": _case(es=[1, 1, 2]),
    "pdesc": _case(pdesc=True),
    "ppc64": _case(ppc=64),
    "box_small": _case(lo=[-2], up=[-3]),
    "box_big": _case(lo=[-3], up=[3]),
    "fp64": _case(dtype="FLOAT64", dims=[2, 16, 2], cpp=2),
    "fp64_c4": _case(dtype="FLOAT64", dims=[11, 16, 2], cpp=4, coords=[8, 0, 0]),
    "offs_end": _case(offs=[4], coords=[0, 14, 1]),
    "ctas4": _case(ctas=4),
    "ctas4_dst": _case(ctas=4, dst=384),
    "ftz": _case(dtype="FLOAT32_FTZ"),
    # call 97: the start-coordinate range (bounding box [lo, dim - 1 + up] per spatial dim?) and traversal strides
    "w_box_lo": _case(lo=[-1], up=[1], coords=[0, -1, 0]),
    "w_box_lo_m1": _case(lo=[-1], up=[1], coords=[0, -2, 0]),
    "w_box_hi": _case(lo=[-1], up=[1], coords=[0, 16, 0]),
    "w_box_hi_p1": _case(lo=[-1], up=[1], coords=[0, 17, 0]),
    "w_shrunk_hi": _case(lo=[0], up=[-4], coords=[0, 11, 0]),
    "w_shrunk_hi_p1": _case(lo=[0], up=[-4], coords=[0, 12, 0]),
    "w_shrunk_lo": _case(lo=[2], up=[0], coords=[0, 2, 0]),
    "w_shrunk_lo_m1": _case(lo=[2], up=[0], coords=[0, 1, 0]),
    "w_last": _case(coords=[0, 15, 0]),
    "h_box_hi": _case(dims=[32, 8, 8, 2], lo=[0, -1], up=[0, 1], coords=[0, 0, 8, 0], offs=[0, 0]),
    "h_box_hi_p1": _case(dims=[32, 8, 8, 2], lo=[0, -1], up=[0, 1], coords=[0, 0, 9, 0], offs=[0, 0]),
    "h_box_lo_m1": _case(dims=[32, 8, 8, 2], lo=[0, -1], up=[0, 1], coords=[0, 0, -2, 0], offs=[0, 0]),
    "n_neg": _case(coords=[0, 0, -1]),
    "es2_w0": _case(es=[1, 2, 1], coords=[0, 0, 0], ppc=8),
    "es2_w1": _case(es=[1, 2, 1], coords=[0, 1, 0], ppc=8),
    "es2_w3": _case(es=[1, 2, 1], coords=[0, 3, 0], ppc=8),
    "es2_w1_lo": _case(es=[1, 2, 1], lo=[-1], up=[0], coords=[0, -1, 0], ppc=8),
    "es3_w0": _case(es=[1, 3, 1], coords=[0, 0, 0], ppc=8),
    "es3_w2": _case(es=[1, 3, 1], coords=[0, 2, 0], ppc=8),
    "es2_n1": _case(es=[1, 1, 2], coords=[0, 0, 1], ppc=32),
    "es2_c": _case(es=[2, 1, 1]),
    # call 99: N steps by its own traversal stride when a column wraps into the next image?
    "es2_n_wrap": _case(dims=[32, 16, 4], es=[1, 1, 2], ppc=48),
    "es3_n_wrap": _case(dims=[32, 16, 7], es=[1, 1, 3], ppc=48, coords=[0, 4, 1]),
    "sw64_12ch": _case(dims=[28, 6, 4, 2], cpp=12, swizzle=2, lo=[0, -2], up=[-4, -3], coords=[8, 1, 1, 0],
                       offs=[3, 2], ppc=33),
}
# call 110: .im2col_no_offs stores and reductions (store = "store" or a reduce op) -- is a store the load's walk
# (offsets zero) run backwards, OOB pixels skipped, channels written in 16-byte chunks like tile stores?
STORE_CASES = {
    "st_base": _case(store="store"),
    "st_coords": _case(store="store", coords=[0, 3, 1]),
    "st_pad_box": _case(store="store", lo=[-1], up=[1]),
    "st_neg_in_box": _case(store="store", lo=[-1], up=[1], coords=[0, -1, 0]),
    "st_outside_box": _case(store="store", coords=[0, 17, 0]),
    "st_w_at_end": _case(store="store", coords=[0, 16, 0]),
    "st_es2": _case(store="store", es=[1, 2, 1], coords=[0, 1, 0], ppc=8),
    "st_n_wrap": _case(store="store", dims=[32, 16, 4], es=[1, 1, 2], ppc=48),
    "st_sw128": _case(store="store", swizzle=3),
    "st_sw64": _case(store="store", dims=[16, 16, 2], cpp=16, swizzle=2),
    "st_bf16": _case(store="store", dtype="BFLOAT16", dims=[64, 16, 2], cpp=64),
    "st_u8_tail": _case(store="store", dtype="UINT8", dims=[40, 16, 2], cpp=64, pad=16),
    "st_f32_tail": _case(store="store", dims=[18, 16, 2], pad=16),
    "st_f32_tail_dense": _case(store="store", dims=[18, 16, 2]),
    "st_c0_inside": _case(store="store", dims=[64, 16, 2], coords=[32, 0, 0]),
    "st_c0_past": _case(store="store", coords=[64, 0, 0]),
    "st_n_past": _case(store="store", coords=[0, 0, 4]),
    "st_shrunk": _case(store="store", lo=[2], up=[-4], coords=[0, 5, 0]),
    "st_rank4": _case(store="store", dims=[32, 8, 8, 2], lo=[-1, -1], up=[-1, 0], coords=[0, 0, 2, 0],
                      offs=[0, 0]),
    "st_rank5": _case(store="store", dims=[32, 4, 4, 4, 2], lo=[0, 0, 0], up=[0, 0, 0], coords=[0, 1, 0, 0, 0],
                      offs=[0, 0, 0]),
    "st_fp64": _case(store="store", dtype="FLOAT64", dims=[11, 16, 2], cpp=4, coords=[8, 0, 0]),
    "red_add_f32": _case(store="add"),
    "red_add_bf16": _case(store="add", dtype="BFLOAT16", dims=[64, 16, 2], cpp=64, coords=[0, 2, 0]),
    "red_max_u32": _case(store="max", dtype="UINT32", lo=[-1], up=[1]),
    "red_xor_u64": _case(store="xor", dtype="UINT64", dims=[8, 16, 2], cpp=8),
    "red_inc_u32_es2": _case(store="inc", dtype="UINT32", es=[1, 2, 1], ppc=12),
    # call 111: st_pad_box, red_max_u32 and st_rank4 trapped (corners outside the tensor?): one corner at a time
    "st_lo_neg": _case(store="store", lo=[-1], up=[0]),
    "st_lo_neg_far": _case(store="store", lo=[-3], up=[-2], coords=[0, 1, 0]),
    "st_up_pos": _case(store="store", lo=[0], up=[1]),
    "st_up_pos_far": _case(store="store", lo=[0], up=[3], coords=[0, 4, 0]),
    "st_lo_pos_up_pos": _case(store="store", lo=[2], up=[1], coords=[0, 2, 0]),
    "st_lo_neg_up_neg": _case(store="store", lo=[-1], up=[-2], coords=[0, 0, 0]),
    "st_rank4_lo_h": _case(store="store", dims=[32, 8, 8, 2], lo=[0, -1], up=[0, 0], coords=[0, 0, 0, 0],
                           offs=[0, 0]),
    "st_rank4_up_h": _case(store="store", dims=[32, 8, 8, 2], lo=[0, 0], up=[0, 1], coords=[0, 0, 0, 0],
                           offs=[0, 0]),
    "st_rank4_in": _case(store="store", dims=[32, 8, 8, 2], lo=[1, 0], up=[-1, -2], coords=[0, 1, 0, 0],
                         offs=[0, 0]),
    "st_n_neg": _case(store="store", coords=[0, 0, -1]),
    "st_c_neg": _case(store="store", coords=[-4, 0, 0]),
    "red_add_lo_neg": _case(store="add", lo=[-1], up=[0]),
    "red_add_up_pos": _case(store="add", lo=[0], up=[1]),
    "ld_lo_neg_control": _case(lo=[-1], up=[0]),
}
CASES.update(STORE_CASES)


def _build(case):
    from tmakit.tma import tensormap as tmm

    dt = tmm.DataType[case["dtype"]]
    eb = tmm.DTYPE_BITS[dt] // 8
    dims = case["dims"]
    strides, s = [], dims[0] * eb
    for d in dims[1:]:
        s = -(-s // 16) * 16 + case["pad"]
        strides.append(s)
        s *= d
    rank = len(dims)
    spec = dict(dtype=dt, global_dim=dims, global_strides=strides, box_dim=[case["cpp"]] + [1] * (rank - 1),
                element_strides=case["es"] or [1] * rank, swizzle=case["swizzle"], oob_fill=0, mode="im2col",
                pixel_box_lower_corner=case["lo"], pixel_box_upper_corner=case["up"],
                channels_per_pixel=case["cpp"], pixels_per_column=case["ppc"])
    return tmm, spec, s


def one_store(name, case):
    """A store/reduce through the im2col map; the whole global buffer is compared with the emulator's."""
    from tmakit import cuda as tkc
    from tmakit.emu import tma_unit as tu
    from tmakit.kernels import seeds

    tmm, spec, total = _build(case)
    rng = np.random.default_rng(2)
    tkc.ensure_context()
    buf = tkc.DeviceBuffer(total + 256)
    host = rng.integers(0, 256, total + 256, dtype=np.uint8)
    if spec["dtype"].name.startswith(("FLOAT", "BFLOAT")):  # finite values: random bytes make NaNs
        host = _finite(host, spec["dtype"].name)
    buf.upload(host.tobytes())
    tm = tmm.TensorMap(global_address=buf.ptr, **spec)
    tm.validate("sm_90")
    image = rng.integers(0, 256, -(-tm.smem_bytes // 16) * 16, dtype=np.uint8)
    if spec["dtype"].name.startswith(("FLOAT", "BFLOAT")):
        image = _finite(image, spec["dtype"].name)
    want = host.copy()
    op = None if case["store"] == "store" else case["store"]
    try:
        if op is None:
            tu.store(tm, case["coords"], want, image.copy(), 0)
        else:
            tu.reduce(tm, case["coords"], want, image.copy(), 0, op)
        emu_error = None
    except Exception as e:  # noqa: BLE001 - the emulator's verdict is part of the row
        emu_error = f"{type(e).__name__}: {str(e)[:160]}"
    status = seeds.store_boxes(tm, [seeds.store_job(case["coords"], op=op, mode="im2col")], image[None],
                               check=False)
    hw = np.frombuffer(buf.download(), np.uint8)
    diff = np.nonzero(hw != want)[0]
    if diff.size and emu_error is None:
        OUT.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(OUT / f"im2col_{name}.npz", host=host, image=image, hw=hw, emu=want)
    print(json.dumps(dict(case=name, op=case["store"], status=int(status[0]), emu_error=emu_error,
                          changed=int((hw != host).sum()), mismatching_bytes=int(diff.size),
                          first=[int(x) for x in diff[:6]])))


def _finite(raw, dtype_name):
    """Random bytes with the exponent's top bit cleared per element (no inf/NaN)."""
    raw = raw.copy()
    e = {"FLOAT64": 8, "FLOAT32": 4, "FLOAT32_FTZ": 4, "TFLOAT32": 4, "TFLOAT32_FTZ": 4}.get(dtype_name, 2)
    raw[e - 1::e] &= 0xBF
    return raw


def one(name):
    from tmakit import cuda as tkc
    from tmakit.emu import tma_unit as tu
    from tmakit.kernels import seeds

    case = CASES[name]
    if case["store"]:
        return one_store(name, case)
    tmm, spec, total = _build(case)
    rng = np.random.default_rng(1)
    tkc.ensure_context()
    buf = tkc.DeviceBuffer(total + 256)
    host = rng.integers(0, 256, total + 256, dtype=np.uint8)
    buf.upload(host.tobytes())
    tm = tmm.TensorMap(global_address=buf.ptr, **spec)
    tm.validate("sm_90")
    enc = tkc.encode_tensormap(tm)
    image = -(-(case["dst"] + tm.smem_bytes + 128) // 16) * 16
    init = rng.integers(0, 256, image, dtype=np.uint8)
    emu = init.copy()
    tu.load(tm, case["coords"], host.copy(), emu, case["dst"], case["offs"])
    job = seeds.load_job(case["coords"], dst_offset=case["dst"], expect=tu.tx_bytes(tm), offsets=case["offs"],
                         mode="im2col", prefetch_desc=case["pdesc"])
    hw, status = seeds.load_boxes(tm, [job] * case["ctas"], image, init=init.tobytes(), debug=True,
                                  timeout_ns=200_000_000, encoded=enc)
    diff = np.nonzero(hw[0] != emu)[0]
    if diff.size:  # keep what a model needs: the global bytes, the initial image, the hardware's and ours
        OUT.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(OUT / f"im2col_{name}.npz", host=host, init=init, hw=hw[0], emu=emu)
    print(json.dumps(dict(case=name, status=int(status[0]), tx=int(tu.tx_bytes(tm)), smem=int(tm.smem_bytes),
                          mismatching_bytes=int(diff.size), first=[int(x) for x in diff[:6]],
                          hw=[int(hw[0][x]) for x in diff[:6]], emu=[int(emu[x]) for x in diff[:6]])))


def main(argv):
    if argv and argv[0] == "one":
        return one(argv[1])
    from . import run_cases

    run_cases("tools.conformance.hw_probes.im2col", argv or CASES, "im2col_probe")


if __name__ == "__main__":
    main(sys.argv[1:])
