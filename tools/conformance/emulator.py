"""(b) Emulator vs hardware: random (map, coordinates, op) cases through the seed kernels, compared byte for byte."""

from __future__ import annotations

import numpy as np

from . import sweeps
from .common import _diff_summary, _emu, _encode_or_none, _jsonable, _note_case, _tk
from .specs import (
    FLOATY,
    Gmem,
    _rand_coords,
    _rand_im2col_for_hw,
    _rand_interleaved_for_hw,
    _rand_interleaved_im2col_for_hw,
    _rand_tiled_for_hw,
    _start_inside,
)


def _fuzz_loads(args, im2col: bool, interleave: bool = False):
    tkc, tmm = _tk()
    from tmakit.kernels import seeds

    tu = _emu()
    tkc.ensure_context()
    rng = np.random.default_rng([args.seed, (13 if interleave else 7) if im2col else (11 if interleave else 3),
                                 args.chunk])
    if im2col:
        gen = _rand_interleaved_im2col_for_hw if interleave else _rand_im2col_for_hw
    else:
        gen = _rand_interleaved_for_hw if interleave else _rand_tiled_for_hw
    target = args.chunk_cases
    res = {"cases": 0, "mismatching_cases": 0, "mismatching_bytes": 0, "timeouts": 0, "emu_errors": 0,
           "by_dtype": {}, "by_swizzle": {}, "examples": [], "emu_error_examples": []}
    while res["cases"] < target:
        spec, total = gen(rng, tmm)
        offset = 128 * int(rng.integers(0, 4)) if spec["swizzle"] else 16 * int(rng.integers(0, 16))
        g = Gmem(tkc, rng, total, offset)
        tm = tmm.TensorMap(global_address=g.address, **spec)
        enc = _encode_or_none(tkc, tm, res)
        if enc is None:
            continue
        gm = g.view()
        ncta = int(rng.integers(2, 9))
        jobs, emu_images = [], []
        fp = tm.smem_bytes
        image_bytes = -(-(3 * 128 + fp) // 16) * 16
        init = rng.integers(0, 256, (ncta, image_bytes), dtype=np.uint8)
        ok = True
        for c in range(ncta):
            coords = _rand_coords(rng, tm)
            offs = []
            if im2col:
                lim = {3: 2**16 - 1, 4: 2**8 - 1, 5: 2**5 - 1}[tm.rank]
                offs = [int(rng.integers(0, min(lim, 4) + 1)) for _ in range(tm.rank - 2)]
            d = 128 * int(rng.integers(0, 4))
            smem = init[c].copy()
            try:
                tu.load(tm, coords, gm, smem, d, offs)
            except Exception as e:
                res["emu_errors"] += 1
                if len(res["emu_error_examples"]) < 5:
                    res["emu_error_examples"].append({"error": f"{type(e).__name__}: {e}"[:300],
                                                      "map": _jsonable(spec), "coords": coords})
                ok = False
                break
            emu_images.append(smem)
            pf = bool(rng.random() < 0.3) and not im2col and _start_inside(tm, coords)
            jobs.append(seeds.load_job(coords, dst_offset=d, expect=tu.tx_bytes(tm), offsets=offs,
                                       mode="im2col" if im2col else "tile", prefetch=pf,
                                       prefetch_desc=bool(rng.random() < 0.3)))
        if not ok:
            continue
        _note_case(args, {"map": spec, "jobs": jobs})
        hw, status = seeds.load_boxes(tm, jobs, image_bytes, init=init.tobytes(), debug=True, timeout_ns=200_000_000,
                                      encoded=enc)
        for c in range(ncta):
            res["cases"] += 1
            key_d, key_s = tm.dtype.name, tm.swizzle.name
            bd = res["by_dtype"].setdefault(key_d, [0, 0])
            bs = res["by_swizzle"].setdefault(key_s, [0, 0])
            bd[0] += 1
            bs[0] += 1
            if status[c] != 1:
                res["timeouts"] += 1
            if status[c] != 1 or not np.array_equal(hw[c], emu_images[c]):
                diff = _diff_summary(hw[c], emu_images[c])
                res["mismatching_cases"] += 1
                res["mismatching_bytes"] += diff["bytes"]
                bd[1] += 1
                bs[1] += 1
                if len(res["examples"]) < 12:
                    res["examples"].append({"map": _jsonable(spec), "job": _jsonable(jobs[c]),
                                            "status": int(status[c]), "diff": diff})
        del g
    return res


def part_emu_load(args):
    return _fuzz_loads(args, im2col=False)


def part_emu_im2col(args):
    return _fuzz_loads(args, im2col=True)


def part_emu_interleave(args):
    return _fuzz_loads(args, im2col=False, interleave=True)


def part_emu_multicast(args):
    tkc, tmm = _tk()
    from tmakit.kernels import seeds

    tu = _emu()
    tkc.ensure_context()
    rng = np.random.default_rng([args.seed, 11, args.chunk])
    res = {"cases": 0, "launches": 0, "mismatching_cases": 0, "mismatching_bytes": 0, "timeouts": 0,
           "by_cluster": {}, "examples": []}
    while res["cases"] < args.chunk_cases:
        cs = int(rng.choice([2, 4, 8, 16] if rng.random() < 0.15 else [2, 4, 8]))
        nclusters = int(rng.integers(1, 3))
        spec, total = _rand_tiled_for_hw(rng, tmm, max_box_bytes=4096, allow_interleave=False)
        g = Gmem(tkc, rng, total, 128 * int(rng.integers(0, 2)))
        tm = tmm.TensorMap(global_address=g.address, **spec)
        enc = _encode_or_none(tkc, tm, res)
        if enc is None:
            continue
        gm = g.view()
        region = -(-tm.smem_bytes // 128) * 128
        image_bytes = cs * region
        n = cs * nclusters
        init = rng.integers(0, 256, (n, image_bytes), dtype=np.uint8)
        emu = init.copy()
        tx = tu.tx_bytes(tm)
        expect = np.zeros(n, np.int64)
        issues = []
        for cl in range(nclusters):
            for r in range(cs):
                issue = rng.random() < 0.75
                mask = int(rng.integers(1, 1 << cs)) if issue else 0
                coords = _rand_coords(rng, tm)
                issues.append((issue, mask, coords))
                if issue:
                    for dst in range(cs):
                        if mask >> dst & 1:
                            expect[cl * cs + dst] += tx
                            sm = emu[cl * cs + dst]
                            tu.load(tm, coords, gm, sm, r * region)
        jobs = [seeds.load_job(c, mask=m, issue=i, expect=int(expect[k]), dst_offset=(k % cs) * region)
                for k, (i, m, c) in enumerate(issues)]
        _note_case(args, {"map": spec, "cluster": cs, "jobs": jobs})
        hw, status = seeds.load_boxes(tm, jobs, image_bytes, init=init.tobytes(), cluster=(cs, 1, 1), debug=True,
                                      timeout_ns=200_000_000, encoded=enc)
        res["launches"] += 1
        bc = res["by_cluster"].setdefault(str(cs), [0, 0])
        for k in range(n):
            res["cases"] += 1
            bc[0] += 1
            if status[k] != 1:
                res["timeouts"] += 1
            if status[k] != 1 or not np.array_equal(hw[k], emu[k]):
                diff = _diff_summary(hw[k], emu[k])
                res["mismatching_cases"] += 1
                res["mismatching_bytes"] += diff["bytes"]
                bc[1] += 1
                if len(res["examples"]) < 8:
                    res["examples"].append({"cluster": cs, "cta": k, "map": _jsonable(spec),
                                            "job": _jsonable(jobs[k]), "status": int(status[k]), "diff": diff})
        del g
    return res


def _fuzz_store(args, reduce: bool, im2col: bool = False, interleave: bool = False):
    """Stores (or reductions) of random images through random tile maps -- or im2col maps (``.im2col_no_offs``) or
    interleaved tile maps, stores and reductions half and half -- compared with the emulator over the whole global
    buffer."""
    tkc, tmm = _tk()
    from tmakit.kernels import seeds

    tu = _emu()
    try:
        from tmakit.emu.reduce_ops import check_reduce
    except ImportError:
        check_reduce = None
    tkc.ensure_context()
    salt = (37 if interleave else 29) if im2col else (31 if interleave else (23 if reduce else 17))
    rng = np.random.default_rng([args.seed, salt, args.chunk])
    target = args.chunk_cases
    res = {"cases": 0, "mismatching_cases": 0, "mismatching_bytes": 0, "emu_errors": 0, "by_op_dtype": {},
           "examples": [], "emu_error_examples": []}
    while res["cases"] < target:
        if im2col or interleave:
            if im2col:
                gen = _rand_interleaved_im2col_for_hw if interleave else _rand_im2col_for_hw
                spec, total = gen(rng, tmm, inside=True)
            else:
                spec, total = _rand_interleaved_for_hw(rng, tmm)
            reduce = bool(rng.random() < 0.5)
        else:
            spec, total = _rand_tiled_for_hw(rng, tmm, allow_interleave=False)
        op = None
        if reduce:
            ops = [o for o in seeds.REDUCE_OPS if _reduce_ok(check_reduce, o, spec["dtype"])]
            if not ops:
                continue
            op = str(rng.choice(ops))
        g = Gmem(tkc, rng, total, 128 * int(rng.integers(0, 2)))
        tm = tmm.TensorMap(global_address=g.address, **spec)
        enc = _encode_or_none(tkc, tm, res)
        if enc is None:
            continue
        gm = g.view()
        src_off = 128 * int(rng.integers(0, 3))
        image_bytes = -(-(src_off + tm.smem_bytes) // 16) * 16
        img = rng.integers(0, 256, image_bytes, dtype=np.uint8)
        if reduce and rng.random() < 0.5 and int(spec["dtype"]) in FLOATY:  # also finite, well-behaved floats
            img = _finite_floats(rng, spec["dtype"], image_bytes)
        coords = _rand_coords(rng, tm, nonneg=True)
        emu = gm.copy()
        try:
            if reduce:
                tu.reduce(tm, coords, emu, img.copy(), src_off, op)
            else:
                tu.store(tm, coords, emu, img.copy(), src_off)
        except Exception as e:
            res["emu_errors"] += 1
            if len(res["emu_error_examples"]) < 5:
                res["emu_error_examples"].append({"error": f"{type(e).__name__}: {e}"[:300], "map": _jsonable(spec),
                                                  "coords": coords, "op": op})
            continue
        _note_case(args, {"map": spec, "coords": coords, "op": op, "src_offset": src_off})
        st = seeds.store_boxes(tm, [seeds.store_job(coords, op=op, src_offset=src_off,
                                                    mode="im2col" if im2col else "tile")], img.reshape(1, -1),
                               encoded=enc)
        hw = g.device_view()
        res["cases"] += 1
        key = f"{op or 'store'}/{tm.dtype.name}"
        b = res["by_op_dtype"].setdefault(key, [0, 0])
        b[0] += 1
        n = emu.size
        if st[0] != 1 or not np.array_equal(hw[:n], emu):
            diff = _diff_summary(hw[:n], emu)
            res["mismatching_cases"] += 1
            res["mismatching_bytes"] += diff["bytes"]
            b[1] += 1
            if len(res["examples"]) < 12:
                res["examples"].append({"map": _jsonable(spec), "coords": coords, "op": op, "src_offset": src_off,
                                        "diff": diff})
        del g
    return res


def _reduce_ok(check_reduce, op, dtype) -> bool:
    if check_reduce is None:
        return True
    try:
        check_reduce(op, dtype)
        return True
    except Exception:
        return False


def _finite_floats(rng, dtype, nbytes):
    d = int(dtype)
    if d in (6,):
        arr = rng.standard_normal(nbytes // 2).astype(np.float16)
    elif d == 9:
        arr = (rng.standard_normal(nbytes // 2).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    elif d == 8:
        arr = rng.standard_normal(nbytes // 8)
    else:
        arr = rng.standard_normal(nbytes // 4).astype(np.float32)
    out = np.zeros(nbytes, np.uint8)
    raw = arr.view(np.uint8)
    out[:raw.size] = raw
    return out


def part_emu_store(args):
    return _fuzz_store(args, reduce=False)


def part_emu_reduce(args):
    return _fuzz_store(args, reduce=True)


def part_emu_im2col_store(args):
    return _fuzz_store(args, reduce=False, im2col=True)


def part_emu_interleave_store(args):
    return _fuzz_store(args, reduce=False, interleave=True)


def part_emu_interleave_im2col(args):
    return _fuzz_loads(args, im2col=True, interleave=True)


def part_emu_interleave_im2col_store(args):
    return _fuzz_store(args, reduce=False, im2col=True, interleave=True)


def part_tf32(args):
    """TFLOAT32 / TFLOAT32_FTZ / FLOAT32(_FTZ) loads of 4096 crafted and random fp32 patterns (ties, carries into the
    exponent, NaN/Inf, denormals), a partly-OOB load with NaN fill and a store, compared with the emulator."""
    import base64

    _, tmm = _tk()
    tu = _emu()
    raw = sweeps.part_tf32(args)
    src = np.frombuffer(base64.b64decode(raw["input"]), np.uint8)
    out = {}
    for name in ("TFLOAT32", "TFLOAT32_FTZ", "FLOAT32_FTZ", "FLOAT32"):
        dt = tmm.DataType[name]
        tm = tmm.TensorMap(dtype=dt, global_dim=(32, 128), global_strides=(128,), box_dim=(32, 64))
        for key, coords_list, t in ((name, [(0, 0), (0, 64)], tm),
                                    (name + "_nanfill", [(-16, 100)], tm.replace(oob_fill=1))):
            hw = np.frombuffer(base64.b64decode(raw[key]["out"]), np.uint8).reshape(len(coords_list), -1)
            bad = 0
            for k, c in enumerate(coords_list):
                smem = np.zeros(hw.shape[1], np.uint8)
                tu.load(t, c, src, smem, 0)
                bad += int((smem.view(np.uint32) != hw[k].view(np.uint32)).sum())
            out[key] = {"elements": int(hw.size // 4), "mismatching_elements": bad, "status": raw[key]["status"]}
        hw = np.frombuffer(base64.b64decode(raw[name + "_store"]["out"]), np.uint8)
        emu = np.zeros(src.size, np.uint8)
        tu.store(tm, (0, 0), emu, src[:8192].copy(), 0)
        out[name + "_store"] = {"bytes": int(hw.size),
                                "mismatching_bytes": int((emu[:hw.size] != hw).sum())}
    return out
