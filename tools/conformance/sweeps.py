"""Targeted hardware sweeps behind the rules added after the first conformance run (one device call):

  encode  -- driver verdicts only (no kernel): box-size threshold families (dtype x swizzle x inner bytes, element
             strides, boxes larger than the tensor, interleave, im2col channels x pixels), addresses 2^k, packed
             types, im2col corner/box-area grid, and every spec of the random validator fuzz (seeds 2026 and 7);
  tf32    -- TFLOAT32 / TFLOAT32_FTZ loads of crafted float32 bit patterns (ties, carries, NaN/Inf, denormals), NaN
             OOB fill, and a TFLOAT32 store (no rounding expected);
  interleave -- a few interleaved (16B/32B) loads into a large pre-filled image, dumped for offline study.

    python3 -m tools.conformance.sweeps --out $OUT     (from the repository root; the driver_sweeps and tf32 parts of
                                                        python3 -m tools.conformance call it too)

Writes ``explore_<part>.json.gz`` under ``--out``. Each part runs in its own process.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import json
import os
import subprocess
import time
from pathlib import Path

import numpy as np

from .common import _jsonable, _tk, child_cmd, child_env
from .specs import _mutate, _rand_spec


def _enc(tkc, tm) -> int:
    try:
        tkc.encode_tensormap(tm, raw=True)
        return 0
    except tkc.CudaError as e:
        return int(e.code)
    except Exception:
        return -1


def part_encode(args):
    tkc, tmm = _tk()
    tkc.ensure_context()
    DT = tmm.DataType
    TM = tmm.TensorMap
    out = {"families": [], "points": [], "random": []}
    A = 1 << 30

    def tiled(dt, dims, box, es=None, swz=0, il=0, addr=A, strides=None):
        eb = max(1, tmm.DTYPE_BITS[DT(dt)] // 8)
        if strides is None:
            strides, s = [], dims[0] * eb
            for d in dims[1:]:
                s = -(-s // 32) * 32
                strides.append(s)
                s *= d
        return TM(dtype=dt, global_dim=dims, global_strides=strides, box_dim=box, element_strides=es,
                  interleave=il, swizzle=swz, global_address=addr)

    def point(tag, tm):
        r = _enc(tkc, tm)
        out["points"].append({"tag": tag, "spec": _jsonable(_spec(tm)), "r": r})
        return r

    def max_last(tag, make, lo=1, hi=256):
        """largest v in [lo, hi] with make(v) accepted (monotone assumption; also records the two neighbours)."""
        if _enc(tkc, make(lo)) != 0:
            out["families"].append({"tag": tag, "max": lo - 1})
            return
        a, b = lo, hi
        if _enc(tkc, make(hi)) == 0:
            out["families"].append({"tag": tag, "max": hi, "spec_max": _jsonable(_spec(make(hi)))})
            return
        while b - a > 1:
            m = (a + b) // 2
            if _enc(tkc, make(m)) == 0:
                a = m
            else:
                b = m
        out["families"].append({"tag": tag, "max": a, "spec_max": _jsonable(_spec(make(a))),
                                "spec_min_rej": _jsonable(_spec(make(b)))})

    big = (4096, 4096, 4096)
    for dt in (DT.UINT8, DT.FLOAT16, DT.FLOAT32, DT.FLOAT64):
        eb = tmm.DTYPE_BITS[dt] // 8
        for swz in (0, 1, 2, 3):
            span = {0: 256, 1: 32, 2: 64, 3: 128}[swz]
            for inner in (16, 32, 64, 128, 256):
                if inner > span or inner // eb > 256:
                    continue
                b0 = inner // eb
                for b1 in (1, 3, 7, 16, 61, 100, 128, 200, 255, 256):
                    max_last(f"tiled {dt.name} swz{swz} inner{inner}B b1={b1}",
                             lambda v, dt=dt, b0=b0, b1=b1, swz=swz: tiled(dt, big, (b0, b1, v), swz=swz))
    # element strides
    for es in ((1, 2, 1), (1, 1, 2), (1, 3, 3), (1, 8, 1), (1, 1, 8), (2, 1, 1), (8, 1, 1)):
        for b1 in (16, 100, 256):
            max_last(f"es{es} f32 inner128 b1={b1}", lambda v, es=es, b1=b1: tiled(DT.FLOAT32, big, (32, b1, v), es=es))
            max_last(f"es{es} f32 inner128 swz3 b1={b1}",
                     lambda v, es=es, b1=b1: tiled(DT.FLOAT32, big, (32, b1, v), es=es, swz=3))
    # boxes larger than the tensor
    for dims in ((64, 16, 16), (64, 256, 3), (8, 4096, 4096), (1024, 100, 4096), (1024, 4096, 7)):
        for b1 in (16, 100, 256):
            max_last(f"clamp dims{dims} f32 inner128 b1={b1}",
                     lambda v, dims=dims, b1=b1: tiled(DT.FLOAT32, dims, (32, b1, v)))
    # rank 4 / 5 products
    for b in ((32, 16, 16), (32, 8, 8, 8), (32, 4, 4, 4)):
        max_last(f"rank{len(b) + 1} f32 box{b}+v",
                 lambda v, b=b: tiled(DT.FLOAT32, (4096,) * (len(b) + 1), b + (v,)))
    # interleave
    for dt, il, swz in ((DT.FLOAT16, 1, 0), (DT.FLOAT16, 2, 1), (DT.FLOAT32, 1, 0), (DT.FLOAT32, 2, 1),
                        (DT.UINT8, 1, 0), (DT.UINT8, 1, 3), (DT.FLOAT16, 1, 3), (DT.FLOAT16, 2, 3)):
        eb = tmm.DTYPE_BITS[dt] // 8
        for b0 in (1, 16 // eb, 32 // eb, 64 // eb, 256 // eb):
            if not 1 <= b0 <= 256:
                continue
            for b1 in (16, 100, 256):
                max_last(f"interleave{il} swz{swz} {dt.name} b0={b0} b1={b1}",
                         lambda v, dt=dt, il=il, swz=swz, b0=b0, b1=b1: tiled(dt, big, (b0, b1, v), il=il, swz=swz))
    # im2col: channels x pixels
    for dt in (DT.UINT8, DT.FLOAT16, DT.FLOAT32, DT.FLOAT64):
        eb = tmm.DTYPE_BITS[dt] // 8
        for swz in (0, 1, 2, 3):
            span = {0: 256, 1: 32, 2: 64, 3: 128}[swz]
            for inner in (16, 32, 64, 128, 256, 512, 1024, 2048):
                c = inner // eb
                if c > 256 or (swz and inner > span):
                    continue

                def mk(v, dt=dt, c=c, swz=swz, eb=eb):
                    dims = (c * 2, 64, 64, 4)
                    st = [c * 2 * eb, c * 2 * eb * 64, c * 2 * eb * 64 * 64]
                    return TM(dtype=dt, global_dim=dims, global_strides=st, box_dim=(), swizzle=swz, mode="im2col",
                              pixel_box_lower_corner=(0, 0), pixel_box_upper_corner=(0, 0), channels_per_pixel=c,
                              pixels_per_column=v, global_address=A)
                max_last(f"im2col {dt.name} swz{swz} C={c} ({inner}B)", mk, 1, 1024)
    # addresses
    base = tiled(DT.FLOAT32, (1024, 1024), (32, 8))
    addrs = sorted({(1 << k) + d for k in range(40, 64) for d in (-256, 0, 256)} | {2**64 - 256, 2**64 - 16, 16})
    for a in addrs:
        if 0 <= a < 2**64:
            point(f"address {a:#x}", base.replace(global_address=a))
            point(f"address {a:#x} swz128", base.replace(global_address=a, swizzle=3))
    # packed types, documented-valid
    for dt in (DT.U4_ALIGN8B, DT.U4_ALIGN16B, DT.U6_ALIGN16B):
        for swz in (0, 1, 2, 3):
            for dims, box in (((256, 64), (128, 16)), ((1024, 64, 8), (128, 8, 2)), ((128,), (128,))):
                strides = [dims[0] * 2] + ([dims[0] * 2 * dims[1]] if len(dims) > 2 else [])
                strides = strides[: len(dims) - 1]
                point(f"packed {dt.name} swz{swz} dims{dims}",
                      TM(dtype=dt, global_dim=dims, global_strides=strides, box_dim=box, swizzle=swz,
                         global_address=A))
        point(f"packed {dt.name} im2col", TM(dtype=dt, global_dim=(128, 8, 8, 2), global_strides=(128, 1024, 8192),
                                             box_dim=(), mode="im2col", pixel_box_lower_corner=(0, 0),
                                             pixel_box_upper_corner=(0, 0), channels_per_pixel=128,
                                             pixels_per_column=32, global_address=A))
    # im2col corners / box area
    for rank in (3, 4, 5):
        nsp = rank - 2
        for il in (0, 1, 2):
            for d in (1, 2, 3):
                for lo in range(-3, 2):
                    for up in range(-3, 2):
                        dims = (16,) + (d,) + (4,) * (nsp - 1) + (2,)
                        st, s = [], 16 * 2
                        for x in dims[1:]:
                            s = -(-s // 32) * 32
                            st.append(s)
                            s *= x
                        tm = TM(dtype=DT.FLOAT16, global_dim=dims, global_strides=st, box_dim=(),
                                interleave=il, swizzle=1 if il == 2 else 0, mode="im2col",
                                pixel_box_lower_corner=(lo,) + (0,) * (nsp - 1),
                                pixel_box_upper_corner=(up,) + (0,) * (nsp - 1),
                                channels_per_pixel=16 if il == 0 else 8, pixels_per_column=16, global_address=A)
                        point(f"im2col area rank{rank} il{il} d{d} lo{lo} up{up}", tm)
    # the random validator fuzz, every spec
    from tmakit.tma import TmaDescriptorError

    if not getattr(args, "explore_random", True):
        return out
    for seed, n in ((2026, 3000), (7, 20000), (11, 20000)):
        rng = np.random.default_rng(seed)
        k = 0
        while k < n:
            spec = _rand_spec(rng, tmm)
            for _ in range(int(rng.choice([0, 0, 1, 1, 1, 2, 3]))):
                spec = _mutate(rng, spec)
            try:
                tm = TM(**spec)
            except TmaDescriptorError:
                continue
            r = _enc(tkc, tm)
            if r == -1:
                continue
            k += 1
            out["random"].append({"spec": _jsonable(spec), "r": r})
    return out


def _spec(tm):
    import dataclasses

    return {f.name: getattr(tm, f.name) for f in dataclasses.fields(tm)}


def part_tf32(args):
    tkc, tmm = _tk()
    from tmakit.kernels import seeds

    tkc.ensure_context()
    DT = tmm.DataType
    vals = []
    for exp in (0, 1, 2, 100, 127, 253, 254, 255):
        for sign in (0, 1):
            for hi in (0, 1, 2, 0x155, 0x3FE, 0x3FF):
                for lo in (0, 1, 0x7FF, 0x800, 0xFFF, 0x1000, 0x1001, 0x17FF, 0x1800, 0x1FFF):
                    vals.append((sign << 31) | (exp << 23) | (hi << 13) | lo)
    rng = np.random.default_rng(3)
    vals += [int(x) for x in rng.integers(0, 2**32, 4096 - len(vals), dtype=np.uint64)]
    vals = np.array(vals[:4096], np.uint32)
    cols, rows = 32, len(vals) // 32
    buf = tkc.DeviceBuffer.from_bytes(vals.tobytes())
    res = {"input": base64.b64encode(vals.tobytes()).decode()}
    for dt in (DT.TFLOAT32, DT.TFLOAT32_FTZ, DT.FLOAT32_FTZ, DT.FLOAT32):
        tm = tmm.TensorMap(dtype=dt, global_dim=(cols, rows), global_strides=(cols * 4,), box_dim=(32, 64),
                           global_address=buf.ptr)
        jobs = [seeds.load_job((0, 0), dst_offset=0), seeds.load_job((0, 64), dst_offset=0)]
        imgs, st = seeds.load_boxes(tm, jobs, 8192, check=False)
        res[dt.name] = {"status": st.tolist(), "out": base64.b64encode(imgs.tobytes()).decode()}
        # NaN fill, partially out of bounds
        tmn = tm.replace(oob_fill=1)
        imgs, st = seeds.load_boxes(tmn, [seeds.load_job((-16, 100))], 8192, check=False)
        res[dt.name + "_nanfill"] = {"status": st.tolist(), "out": base64.b64encode(imgs.tobytes()).decode()}
        # store of the crafted values through this map
        gout = tkc.DeviceBuffer(len(vals) * 4)
        gout.fill(0)
        tms = tm.replace(global_address=gout.ptr)
        img = np.frombuffer(vals.tobytes(), np.uint8)[:8192].reshape(1, -1)
        st = seeds.store_boxes(tms, [seeds.store_job((0, 0))], img, check=False)
        tkc.synchronize()
        res[dt.name + "_store"] = {"status": st.tolist(),
                                    "out": base64.b64encode(gout.download()[:8192]).decode()}
    return res


def part_interleave(args):
    tkc, tmm = _tk()
    from tmakit.kernels import seeds

    tkc.ensure_context()
    DT = tmm.DataType
    rng = np.random.default_rng(9)
    gbytes = 1 << 20
    g = rng.integers(0, 256, gbytes, dtype=np.uint8)
    buf = tkc.DeviceBuffer.from_bytes(g.tobytes())
    res = {"gmem": base64.b64encode(g[:65536].tobytes()).decode(), "cases": []}
    IMG = 32768
    cases = []
    for dt, il, swz, dims, box, es, coords in (
        (DT.FLOAT16, 1, 0, (8, 16, 8), (8, 4, 2), (1, 1, 1), (0, 0, 0)),
        (DT.FLOAT16, 1, 0, (8, 16, 8), (4, 4, 2), (1, 1, 1), (0, 0, 0)),
        (DT.FLOAT16, 1, 0, (8, 16, 8), (16, 4, 2), (1, 1, 1), (0, 0, 0)),
        (DT.FLOAT16, 1, 0, (5, 16, 8), (8, 4, 2), (1, 1, 1), (0, 0, 0)),
        (DT.FLOAT16, 1, 0, (8, 16, 8), (8, 4, 2), (1, 2, 1), (0, 1, 0)),
        (DT.FLOAT16, 1, 0, (8, 16, 8), (8, 4, 2), (1, 1, 1), (-4, 0, 0)),
        (DT.FLOAT16, 1, 0, (8, 16, 8), (8, 4, 2), (1, 1, 1), (3, 0, 0)),
        (DT.FLOAT16, 2, 1, (16, 16, 8), (16, 4, 2), (1, 1, 1), (0, 0, 0)),
        (DT.FLOAT16, 2, 1, (16, 16, 8), (8, 4, 2), (1, 1, 1), (0, 0, 0)),
        (DT.FLOAT16, 2, 1, (16, 16, 8), (32, 4, 2), (1, 1, 1), (0, 0, 0)),
        (DT.FLOAT32, 2, 1, (8, 16, 8), (8, 4, 2), (1, 1, 1), (0, 0, 0)),
        (DT.FLOAT32, 1, 0, (4, 16, 8), (4, 4, 2), (1, 1, 1), (0, 0, 0)),
        (DT.UINT8, 1, 0, (147, 27, 21), (96, 14, 19), (1, 2, 1), (0, 0, 0)),
        (DT.FLOAT16, 2, 1, (5, 49, 20, 16), (8, 13, 2, 12), (1, 1, 3, 1), (0, 0, 0, 0)),
    ):
        eb = tmm.DTYPE_BITS[dt] // 8
        st, s = [], dims[0] * eb
        for d in dims[1:]:
            s = -(-s // 32) * 32
            st.append(s)
            s *= d
        tm = tmm.TensorMap(dtype=dt, global_dim=dims, global_strides=st, box_dim=box, element_strides=es,
                           interleave=il, swizzle=swz, global_address=buf.ptr)
        cases.append((tm, coords))
    for tm, coords in cases:
        rec = {"spec": _jsonable(_spec(tm)), "coords": list(coords)}
        rec["spec"]["global_address"] = 0
        r = _enc(tkc, tm)
        rec["encode"] = r
        if r == 0:
            try:
                imgs, stt = seeds.load_boxes(tm, [seeds.load_job(coords, expect=tm.tx_bytes)], IMG, check=False,
                                             init=bytes([0xA5]) * IMG, debug=True, timeout_ns=50_000_000)
                img = imgs[0]
                nz = np.nonzero(img != 0xA5)[0]
                last = int(nz[-1]) + 1 if nz.size else 0
                rec.update(status=stt.tolist(), written_upto=last,
                           out=base64.b64encode(img[: max(last, 64)].tobytes()).decode())
            except Exception as e:
                rec["error"] = f"{type(e).__name__}: {e}"[:300]
                res["cases"].append(rec)
                break
        res["cases"].append(rec)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", "explore-out"))
    ap.add_argument("--parts", default="encode,tf32,interleave")
    ap.add_argument("--child")
    args = ap.parse_args()
    Path(args.out).mkdir(parents=True, exist_ok=True)
    if args.child:
        t0 = time.time()
        try:
            res = globals()[f"part_{args.child}"](args)
        except Exception as e:
            import traceback

            res = {"error": f"{type(e).__name__}: {e}", "tb": traceback.format_exc()[-3000:]}
        res["seconds"] = round(time.time() - t0, 1)
        with gzip.open(Path(args.out) / f"explore_{args.child}.json.gz", "wt") as f:
            json.dump(res, f, default=str)
        print(args.child, "done", res.get("error", ""), res["seconds"], "s", flush=True)
        return
    env = child_env()
    for p in args.parts.split(","):
        try:
            r = subprocess.run(child_cmd("sweeps", "--child", p, "--out", args.out), env=env,
                               capture_output=True, text=True, timeout=240)
            print(r.stdout[-2000:], r.stderr[-2000:], flush=True)
        except subprocess.TimeoutExpired:
            print(p, "timed out", flush=True)


if __name__ == "__main__":
    main()
