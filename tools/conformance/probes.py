"""Single-behaviour probes (each in its own process: an illegal instruction kills only that context) and
(c) compute-sanitizer on the seed kernels."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from .common import _tk, child_cmd, child_env


def _probe_map(tkc, tmm, dtype=None, rows=48, cols=64, box=(16, 8), swizzle=0):
    dtype = tmm.DataType.FLOAT32 if dtype is None else dtype
    eb = tmm.DTYPE_BITS[dtype] // 8
    rng = np.random.default_rng(5)
    buf = tkc.DeviceBuffer.from_bytes(rng.integers(0, 256, rows * cols * eb, dtype=np.uint8).tobytes())
    tm = tmm.TensorMap(dtype=dtype, global_dim=(cols, rows), global_strides=(cols * eb,), box_dim=box,
                       swizzle=swizzle, global_address=buf.ptr)
    return buf, tm


def _probe(name):
    tkc, tmm = _tk()
    from tmakit.kernels import seeds

    tkc.ensure_context()
    DT = tmm.DataType
    buf, tm = _probe_map(tkc, tmm)
    cols, rows = tm.global_dim
    nb = tm.tx_bytes

    def load(coords, **kw):
        imgs, st = seeds.load_boxes(tm, [seeds.load_job(coords, **kw)], 512 + tm.smem_bytes, check=False)
        return st

    def store(coords, op=None, t=tm):
        img = np.zeros((1, t.smem_bytes), np.uint8)
        return seeds.store_boxes(t, [seeds.store_job(coords, op=op)], img, check=False)

    P = {
        "load_start_negative": lambda: load((-3, -5)),
        "load_start_past_end": lambda: load((cols + 5, 0)),
        "load_partial_oob": lambda: load((cols - 4, rows - 2)),
        "load_neg_dim0_only (-1,0)": lambda: load((-1, 0)),
        "load_neg_aligned (-4,-3)": lambda: load((-4, -3)),
        "load_unaligned_inside (1,0)": lambda: load((1, 0)),
        "store_unaligned_inside (1,0)": lambda: store((1, 0)),
        "store_neg_aligned (-4,0)": lambda: store((-4, 0)),
        "load_neg_dim1_only (0,-1)": lambda: load((0, -1)),
        "load_start_eq_dim0 (64,0)": lambda: load((cols, 0)),
        "load_start_eq_dim1 (0,48)": lambda: load((0, rows)),
        "load_neg_l2_256B (-3,-5)": lambda: seeds.load_boxes(tm.replace(l2_promotion=3),
                                                               [seeds.load_job((-3, -5))], tm.smem_bytes,
                                                               check=False)[1],
        "load_box_larger_than_tensor": lambda: seeds.load_boxes(
            _probe_map(tkc, tmm, rows=4, cols=8)[1], [seeds.load_job((0, 0))], tm.smem_bytes, check=False)[1],
        "load_elem_stride_2": lambda: seeds.load_boxes(tm.replace(element_strides=(1, 2)),
                                                       [seeds.load_job((0, 0))], tm.smem_bytes, check=False)[1],
        "store_elem_stride_2": lambda: store((0, 0), None, tm.replace(element_strides=(1, 2))),
        "load_sw128_dst_384": lambda: seeds.load_boxes(tm.replace(box_dim=(32, 8), swizzle=3),
                                                         [seeds.load_job((0, 0), dst_offset=384)], 2048)[1],
        "prefetch_desc_only": lambda: load((0, 0), prefetch_desc=True),
        "prefetch_inside": lambda: load((0, 0), prefetch=True),
        "prefetch_partial_oob": lambda: load((cols - 4, rows - 2), prefetch=True),
        "prefetch_start_negative": lambda: load((-3, 0), prefetch=True),
        "prefetch_start_past_end": lambda: load((0, rows), prefetch=True),
        "multicast2_inside": lambda: seeds.load_boxes(
            tm, [seeds.load_job((0, 8 * r), mask=3, dst_offset=r * nb, expect=2 * nb) for r in range(2)], 2 * nb,
            cluster=(2, 1, 1))[1],
        "multicast2_oob": lambda: seeds.load_boxes(
            tm, [seeds.load_job((-5, -3 + 50 * r), mask=3, dst_offset=r * nb, expect=2 * nb) for r in range(2)],
            2 * nb, cluster=(2, 1, 1))[1],
        "multicast2_mask_excludes_issuer": lambda: seeds.load_boxes(
            tm, [seeds.load_job((0, 0), mask=2, expect=0), seeds.load_job((0, 0), issue=False, expect=nb)], nb,
            cluster=(2, 1, 1))[1],
        "multicast16_inside": lambda: seeds.load_boxes(
            tm, [seeds.load_job((0, 0), mask=0xFFFF if r == 0 else 0, issue=r == 0, expect=nb) for r in range(16)],
            nb, cluster=(16, 1, 1))[1],
        "store_inside": lambda: store((0, 0)),
        "store_partial_oob": lambda: store((cols - 4, rows - 2)),
        "store_start_past_end": lambda: store((cols + 4, 0)),
        "reduce_add_f32": lambda: store((0, 0), "add"),
        "reduce_min_f32 (not in the PTX table)": lambda: store((0, 0), "min"),
        "reduce_add_u64": lambda: store((0, 0), "add", _probe_map(tkc, tmm, DT.UINT64, box=(8, 8))[1]),
        "reduce_inc_u32": lambda: store((0, 0), "inc", _probe_map(tkc, tmm, DT.UINT32)[1]),
        "reduce_and_f32 (not in the PTX table)": lambda: store((0, 0), "and"),
    }
    if name == "list":
        return list(P)
    st = P[name]()
    tkc.synchronize()
    print("PROBE_OK status", list(np.asarray(st).tolist()))


def part_probes(args):
    env = child_env()
    names = subprocess.run(child_cmd("probes", "--probe", "list"), env=env, capture_output=True, text=True,
                           timeout=120)
    out = {}
    for name in json.loads(names.stdout.strip().splitlines()[-1]):
        try:
            r = subprocess.run(child_cmd("probes", "--probe", name), env=env, capture_output=True, text=True,
                               timeout=60)
            text = r.stdout + r.stderr
            ok = "PROBE_OK" in r.stdout
            err = re.findall(r"(CUDA_ERROR_\w+ \(\d+\))", text)
            line = [x for x in r.stdout.splitlines() if "PROBE_OK" in x]
            out[name] = {"ok": ok, "status": line[-1][len("PROBE_OK "):] if line else None,
                         "error": err[-1] if err else (None if ok else text[-300:])}
        except subprocess.TimeoutExpired:
            out[name] = {"ok": False, "error": "timeout (hang)"}
    return out


# ----------------------------------------------------------------------------------------------------------------


def sanitize_workload():
    """Small runs of every seed kernel: loads (all swizzles, OOB), multicast in a cluster of 4, store, reduce, copy."""
    tkc, tmm = _tk()
    from tmakit.kernels import seeds

    tkc.ensure_context()
    rng = np.random.default_rng(0)
    rows, cols = 48, 64
    g = rng.standard_normal((rows, cols)).astype(np.float32)
    src = tkc.DeviceBuffer.from_bytes(g.tobytes())
    for swz, b0 in ((0, 16), (1, 8), (2, 16), (3, 32)):
        tm = tmm.TensorMap(dtype=tmm.DataType.FLOAT32, global_dim=(cols, rows), global_strides=(cols * 4,),
                           box_dim=(b0, 8), swizzle=swz, global_address=src.ptr)
        jobs = [seeds.load_job(c, prefetch=True, prefetch_desc=True) for c in ((0, 0), (cols - 4, rows - 3), (8, 1))]
        seeds.load_boxes(tm, jobs, tm.smem_bytes)
    tm = tmm.TensorMap(dtype=tmm.DataType.FLOAT32, global_dim=(cols, rows), global_strides=(cols * 4,),
                       box_dim=(32, 2), global_address=src.ptr)
    nb = tm.tx_bytes
    jobs = [seeds.load_job((0, 2 * r), mask=0xF, dst_offset=r * nb, expect=4 * nb) for r in range(4)]
    seeds.load_boxes(tm, jobs, 4 * nb, cluster=(4, 1, 1))
    dst = tkc.DeviceBuffer(g.nbytes)
    dst.fill(0)
    tmd = tm.replace(global_address=dst.ptr, box_dim=(32, 8))
    img = rng.integers(0, 256, (2, tmd.smem_bytes), dtype=np.uint8)
    seeds.store_boxes(tmd, [seeds.store_job((0, 0)), seeds.store_job((40, 44))], img)
    seeds.store_boxes(tmd, [seeds.store_job((0, 8), op="add"), seeds.store_job((32, 0), op="add")], img)
    ti = tmd.replace(dtype=tmm.DataType.INT32)
    seeds.store_boxes(ti, [seeds.store_job((0, 8), op="max"), seeds.store_job((32, 0), op="xor")], img)
    seeds.copy_tiles(tm.replace(box_dim=(32, 8)), tmd, prefetch=True)
    tkc.synchronize()
    print("sanitize workload done")


def _find_sanitizer():
    p = shutil.which("compute-sanitizer")
    if p:
        return p
    for c in ("/usr/local/cuda/bin/compute-sanitizer", "/usr/local/cuda/compute-sanitizer/compute-sanitizer"):
        if Path(c).exists():
            return c
    try:
        from tmakit.cuda.sass import find_tool

        return find_tool("compute-sanitizer")
    except Exception:
        return None


def part_sanitizer(args):
    san = _find_sanitizer()
    if not san:
        return {"error": "compute-sanitizer not found"}
    out = {"sanitizer": san}
    cache = tempfile.mkdtemp(prefix="tmakit-san-")
    env = child_env(TMAKIT_CACHE_DIR=cache)
    # compile once outside the sanitizer so each tool run only loads cubins
    subprocess.run(child_cmd("probes", "--sanitize-workload"), env=env, capture_output=True, timeout=300)
    for tool in ("memcheck", "racecheck", "synccheck"):
        t0 = time.time()
        cmd = [san, "--tool", tool, "--error-exitcode", "99", "--target-processes", "all"]
        if tool == "racecheck":
            cmd += ["--racecheck-report", "all"]
        r = subprocess.run(cmd + child_cmd("probes", "--sanitize-workload"), env=env, capture_output=True,
                           text=True, timeout=400)
        text = r.stdout + r.stderr
        if args.out:
            Path(args.out, f"sanitizer_{tool}.log").write_text(text[-200000:])
        m = re.findall(r"ERROR SUMMARY: (\d+) error", text)
        hz = re.findall(r"RACECHECK SUMMARY: (\d+) hazard", text)
        out[tool] = {"rc": r.returncode, "errors": int(m[-1]) if m else None,
                     "hazards": int(hz[-1]) if hz else None, "workload_ran": "sanitize workload done" in text,
                     "seconds": round(time.time() - t0, 1), "tail": text[-1500:]}
    shutil.rmtree(cache, ignore_errors=True)
    return out


if __name__ == "__main__":
    if sys.argv[1:2] == ["--sanitize-workload"]:
        sanitize_workload()
    elif sys.argv[1:2] == ["--probe"]:
        r = _probe(sys.argv[2])
        if sys.argv[2] == "list":
            print(json.dumps(r))
