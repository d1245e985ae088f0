"""Conformance of tmakit against an H100/H200, in one device call:

  (a) validator vs driver: random TensorMap specs (valid and invalid, every field, edge values); ``validate()`` must
      accept exactly what ``cuTensorMapEncodeTiled/Im2col`` accepts, except the documented DOC≠HW rules;
  (b) emulator vs hardware: random (map, coordinates, op) cases through the seed kernels, compared byte for byte
      (shared-memory images for loads and multicast, global memory for stores and reductions);
  (c) compute-sanitizer memcheck / racecheck / synccheck on the seed kernels;
  plus the runtime numbers: JIT cold/warm times and host overhead of a launch with two tensor maps.

    PYTHONPATH=src python3 benchmarks/conformance.py --out $OUT --commit <sha>

Each part runs in its own subprocess (a fault that kills the CUDA context costs only that part). Writes
``conformance.json`` and ``*.log`` under ``--out`` and prints a summary table last.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "src"))

PARTS = ["env", "jit", "launch", "validator", "driver_sweeps", "probes", "tf32", "emu_load", "emu_multicast",
         "emu_store", "emu_reduce", "emu_im2col", "emu_interleave", "emu_im2col_store",
         "emu_interleave_store", "emu_interleave_im2col", "emu_interleave_im2col_store", "sanitizer"]


# ----------------------------------------------------------------------------------------------------------------
# helpers

def _tk():
    from tmakit import cuda as tkc
    from tmakit.tma import tensormap as tmm

    return tkc, tmm


def _median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def _cc_arch() -> str:
    from tmakit.cuda.driver import compute_capability

    major, minor = compute_capability(0)
    return f"sm_{major}{minor}"


# ----------------------------------------------------------------------------------------------------------------
# env / jit / launch

def part_env(args):
    tkc, _ = _tk()
    from tmakit.cuda import driver, nvrtc

    tkc.ensure_context()
    out = {"device": driver.device_name(0), "compute_capability": list(driver.compute_capability(0)),
           "driver_version": driver.driver_version(), "nvrtc": nvrtc.compiler_id(), "python": platform.python_version()}
    for dist in ("cuda-bindings", "cuda-pathfinder", "nvidia-cuda-nvrtc", "nvidia-cuda-runtime", "torch", "numpy"):
        try:
            from importlib.metadata import version

            out[dist] = version(dist)
        except Exception:
            out[dist] = None
    try:
        out["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.mem",
                                            "--format=csv,noheader"], capture_output=True, text=True,
                                           timeout=20).stdout.strip()
    except Exception as e:
        out["nvidia_smi"] = repr(e)
    return out


WARM_PROBE = r"""
import json, sys, time
t0 = time.perf_counter()
from tmakit.cuda import cache
from tmakit import cuda
t_import = time.perf_counter() - t0
p = cuda.KERNELS_DIR / "seeds.cu"
t0 = time.perf_counter(); c = cache.compile_file(p); first = time.perf_counter() - t0
disk, mem = [], []
for _ in range(100):
    cache.clear_memory_cache(); t0 = time.perf_counter(); cache.compile_file(p); disk.append(time.perf_counter() - t0)
for _ in range(100):
    t0 = time.perf_counter(); cache.compile_file(p); mem.append(time.perf_counter() - t0)
disk.sort(); mem.sort()
print(json.dumps({"import_s": t_import, "first_lookup_s": first, "first_was_cached": c.cached,
                  "disk_hit_median_s": disk[50], "disk_hit_p90_s": disk[90], "memory_hit_median_s": mem[50]}))
"""


def part_jit(args):
    tkc, _ = _tk()
    from tmakit.cuda import cache, nvrtc

    tmp = tempfile.mkdtemp(prefix="tmakit-jit-")
    os.environ["TMAKIT_CACHE_DIR"] = tmp
    t0 = time.perf_counter()
    nvrtc.compiler_id()  # loads libnvrtc
    load_s = time.perf_counter() - t0
    res = {"nvrtc_load_s": load_s}
    for f in sorted(tkc.KERNELS_DIR.glob("*.cu")):
        cache.clear_memory_cache()
        t0 = time.perf_counter()
        try:
            c = cache.compile_file(f)
            res[f"cold_compile_s[{f.name}]"] = time.perf_counter() - t0
            res[f"cubin_bytes[{f.name}]"] = len(c.cubin)
        except Exception as e:
            res[f"cold_compile_error[{f.name}]"] = str(e)[:2000]
    env = dict(os.environ, TMAKIT_CACHE_DIR=tmp, PYTHONPATH=str(ROOT / "src"))
    r = subprocess.run([sys.executable, "-c", WARM_PROBE], capture_output=True, text=True, env=env, timeout=300)
    try:
        res["warm"] = json.loads(r.stdout.strip().splitlines()[-1])
    except Exception:
        res["warm_error"] = r.stderr[-2000:]
    shutil.rmtree(tmp, ignore_errors=True)
    return res


TWO_MAPS = r"""
#include <tmakit/types.cuh>
using tmakit::TmaDesc;
extern "C" __global__ void two_maps(const __grid_constant__ TmaDesc a, const __grid_constant__ TmaDesc b,
                                    unsigned* out) {
  if (out && a.w[0] == b.w[1] + 12345u) out[0] = 1;
}
"""


def part_launch(args):
    tkc, tmm = _tk()
    from tmakit.cuda import driver
    from tmakit.cuda.args import pack_args

    tkc.ensure_context()
    buf = tkc.DeviceBuffer(1 << 20)
    ma = tmm.TensorMap(dtype=tmm.DataType.FLOAT32, global_dim=(256, 256), global_strides=(1024,), box_dim=(32, 32),
                       global_address=buf.ptr)
    mb = ma.replace(box_dim=(16, 16))
    ea, eb = tkc.encode_tensormap(ma), tkc.encode_tensormap(mb)
    k = tkc.kernel(TWO_MAPS, "two_maps")
    cu = driver.cu()

    def timed(fn, batches=40, per=400):
        for _ in range(200):
            fn()
        tkc.synchronize()
        ts = []
        for _ in range(batches):
            t0 = time.perf_counter()
            for _ in range(per):
                fn()
            ts.append((time.perf_counter() - t0) / per)
            tkc.synchronize()
        return {"median_us": _median(ts) * 1e6, "min_us": min(ts) * 1e6}

    res = {}
    res["kernel(grid, block, map, map, ptr)"] = timed(lambda: k(1, 32, ea, eb, None))
    res["... cluster=(2,1,1)"] = timed(lambda: k(2, 32, ea, eb, None, cluster=(2, 1, 1)))
    res["... tk.TensorMap args (encode memoised)"] = timed(lambda: k(1, 32, ma, mb, None))
    from tmakit.cuda.launch import make_config

    cfg = make_config(k, (1, 1, 1), (32, 1, 1), 0, 0, None)
    params = pack_args((ea, eb, None))
    res["floor: cuLaunchKernelEx, pre-packed"] = timed(lambda: cu.cuLaunchKernelEx(cfg, k.handle, params, 0))
    res["floor: cuLaunchKernel, pre-packed"] = timed(
        lambda: cu.cuLaunchKernel(k.handle, 1, 1, 1, 32, 1, 1, 0, 0, params, 0))
    res["pack_args only"] = timed(lambda: pack_args((ea, eb, None)))
    try:
        import torch

        x = torch.zeros(16, device="cuda")
        res["reference: torch x.add_(1) on 16 floats"] = timed(lambda: x.add_(1))
    except Exception as e:
        res["torch"] = repr(e)
    return res


# ----------------------------------------------------------------------------------------------------------------
# (a) validator vs driver

def _rand_spec(rng, tmm):
    """A random, often valid TensorMap spec as a dict of fields."""
    DT = tmm.DataType
    dtype = DT(int(rng.integers(0, 16))) if rng.random() < 0.25 else DT(int(rng.choice(
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])))
    bits = tmm.DTYPE_BITS[dtype]
    eb = max(1, bits // 8)
    mode = "im2col" if rng.random() < 0.2 else "tiled"
    rank = int(rng.integers(3, 6)) if mode == "im2col" else int(rng.integers(1, 6))
    interleave = 0
    if rank >= 3 and rng.random() < 0.15:
        interleave = int(rng.integers(1, 3))
    swz = int(rng.choice([0, 0, 1, 2, 3, 3])) if rng.random() < 0.93 else int(rng.integers(4, 7))
    if interleave == 2 and rng.random() < 0.8:
        swz = 1
    span = {0: 256, 1: 32, 2: 64, 3: 128}.get(swz, 128)
    packed = dtype in (DT.U4_ALIGN8B, DT.U4_ALIGN16B, DT.U6_ALIGN16B)
    # inner box: a multiple of 16 bytes that fits the span
    inner_units = max(1, int(rng.integers(1, max(2, min(span, 256 * eb) // 16 + 1))))
    box0 = min(256, max(1, inner_units * 16 // eb))
    if packed:
        box0 = 128
    dims = [int(rng.integers(1, 600)) for _ in range(rank)]
    if packed:
        dims[0] = 128 * int(rng.integers(1, 4))
    align = 32 if (interleave == 2 or dtype in (DT.U4_ALIGN16B, DT.U6_ALIGN16B)) else 16
    strides, s = [], max(1, dims[0] * bits // 8)
    for i in range(1, rank):
        s = -(-s // align) * align + align * int(rng.integers(0, 3))
        strides.append(s)
        s *= dims[i]
        if s >= 2**39:
            s = 2**20
    box = [box0] + [int(rng.integers(1, 257)) if rng.random() < 0.3 else int(rng.integers(1, 33))
                    for _ in range(rank - 1)]
    es = [1] + [int(rng.integers(1, 9)) if rng.random() < 0.3 else 1 for _ in range(rank - 1)]
    floaty = dtype in (DT.FLOAT16, DT.FLOAT32, DT.FLOAT64, DT.BFLOAT16, DT.FLOAT32_FTZ, DT.TFLOAT32,
                       DT.TFLOAT32_FTZ)
    oob = 1 if floaty and rng.random() < 0.3 else 0
    addr = 256 * int(rng.integers(0, 2**30))
    spec = dict(dtype=dtype, global_dim=dims, global_strides=strides, box_dim=box, element_strides=es,
                interleave=interleave, swizzle=swz, l2_promotion=int(rng.integers(0, 4)), oob_fill=oob,
                global_address=addr, mode=mode)
    if mode == "im2col":
        lo_hi = {3: 32768, 4: 128, 5: 16}[rank]
        nsp = rank - 2
        lo = [int(rng.integers(-min(lo_hi, 4), 1)) for _ in range(nsp)]
        up = [int(rng.integers(0, min(lo_hi, 4))) for _ in range(nsp)]
        spec.update(pixel_box_lower_corner=lo, pixel_box_upper_corner=up,
                    channels_per_pixel=box0, pixels_per_column=int(rng.integers(1, 257)))
    return spec


def _mutate(rng, spec):
    """Set 1 field to an edge value (or change the rank)."""
    rank = len(spec["global_dim"])
    what = rng.integers(0, 16)
    i = int(rng.integers(0, rank))
    pick = lambda xs: int(rng.choice(xs))  # noqa: E731
    if what == 0:
        spec["global_dim"][i] = pick([0, 1, 2, 2**31, 2**32 - 1, 2**32, 2**32 + 1])
    elif what == 1 and rank > 1:
        j = int(rng.integers(0, rank - 1))
        spec["global_strides"][j] = pick([0, 8, 16, 24, 32, 48, 100, 112, 2**39, 2**40 - 32, 2**40 - 16, 2**40,
                                          2**40 + 16, 2**41])
    elif what == 2:
        spec["box_dim"][i] = pick([0, 1, 2, 3, 8, 128, 255, 256, 257, 512])
    elif what == 3:
        spec["box_dim"][0] = pick([1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 160, 256])
    elif what == 4:
        spec["element_strides"][i] = pick([0, 1, 2, 3, 7, 8, 9, 16])
    elif what == 5:
        spec["interleave"] = pick([0, 1, 2])
    elif what == 6:
        spec["swizzle"] = pick([0, 1, 2, 3, 4, 5, 6])
    elif what == 7:
        spec["oob_fill"] = pick([0, 1])
    elif what == 8:
        spec["global_address"] = pick([0, 8, 16, 24, 32, 48, 64, 96, 128, 256, 2**47 + 16, 2**47 + 128,
                                       2**63 + 256, 2**64 - 256])
    elif what == 9:
        spec["dtype"] = int(rng.integers(0, 16))
    elif what == 10:  # rank change, lists kept consistent
        new = pick([1, 2, 3, 4, 5, 6]) if spec["mode"] == "tiled" else pick([1, 2, 3, 4, 5, 6])
        while len(spec["global_dim"]) < new:
            spec["global_dim"].append(int(rng.integers(1, 16)))
            spec["global_strides"].append(16 * int(rng.integers(1, 2**16)))
            spec["box_dim"].append(int(rng.integers(1, 8)))
            spec["element_strides"].append(1)
        while len(spec["global_dim"]) > new:
            for key in ("global_dim", "box_dim", "element_strides"):
                spec[key].pop()
            if spec["global_strides"]:
                spec["global_strides"].pop()
        if spec["mode"] == "im2col":
            n = max(0, new - 2)
            spec["pixel_box_lower_corner"] = (spec["pixel_box_lower_corner"] + [0] * 3)[:n]
            spec["pixel_box_upper_corner"] = (spec["pixel_box_upper_corner"] + [0] * 3)[:n]
    elif what == 11:
        spec["l2_promotion"] = pick([0, 1, 2, 3])
    elif what == 12 and spec["mode"] == "im2col":
        n = len(spec["pixel_box_lower_corner"])
        if n:
            j = int(rng.integers(0, n))
            edge = {3: 32768, 4: 128, 5: 16}.get(rank, 16)
            key = "pixel_box_lower_corner" if rng.random() < 0.5 else "pixel_box_upper_corner"
            spec[key][j] = pick([-edge - 1, -edge, -1, 0, 1, edge - 1, edge, -(2**15), 2**15 - 1])
    elif what == 13 and spec["mode"] == "im2col":
        spec["channels_per_pixel"] = pick([0, 1, 2, 4, 8, 16, 32, 64, 128, 255, 256, 257])
    elif what == 14 and spec["mode"] == "im2col":
        spec["pixels_per_column"] = pick([0, 1, 2, 255, 256, 1023, 1024, 1025, 2048])
    elif what == 15 and spec["mode"] == "im2col":  # zero-area box
        n = len(spec["pixel_box_lower_corner"])
        if n:
            j = int(rng.integers(0, n))
            spec["global_dim"][j + 1] = 1
            spec["pixel_box_lower_corner"][j] = 0
            spec["pixel_box_upper_corner"][j] = -1
    return spec


def part_validator(args):
    tkc, tmm = _tk()
    from tmakit.tma import TmaDescriptorError

    try:
        from tmakit.tma.tensormap_rules import DOC_NE_HW_RULES, HW_DERIVED_RULES
    except ImportError:
        DOC_NE_HW_RULES, HW_DERIVED_RULES = [], []
    tkc.ensure_context()
    arch = _cc_arch()
    rng = np.random.default_rng(args.seed)
    footprints = {"accepted_by_driver": [], "rejected_by_driver": []}
    stats = {"cases": 0, "both_accept": 0, "both_reject": 0, "doc_ne_hw": 0, "disagree": 0, "unrepresentable": 0,
             "valid_fraction": 0.0}
    by_rule: dict[str, dict[str, int]] = {}
    disagreements, doc_cases = [], []
    t0 = time.time()
    while stats["cases"] < args.n_validator:
        spec = _rand_spec(rng, tmm)
        for _ in range(int(rng.choice([0, 0, 1, 1, 1, 2, 3]))):
            spec = _mutate(rng, spec)
        try:
            tm = tmm.TensorMap(**spec)
        except TmaDescriptorError:
            stats["unrepresentable"] += 1  # e.g. an enum outside the driver's; nothing to send to the driver
            continue
        rule = None
        try:
            tm.validate(arch)
        except TmaDescriptorError as e:
            rule = e.rule
        except Exception as e:  # a validator crash is a disagreement in itself
            rule = f"CRASH:{type(e).__name__}:{e}"
        try:
            tkc.encode_tensormap(tm, raw=True)
            drv, code = True, 0
        except tkc.CudaError as e:
            drv, code = False, e.code
        except (ValueError, OverflowError, TypeError):
            stats["unrepresentable"] += 1
            continue
        stats["cases"] += 1
        if rule is None and tm.mode == "tiled":
            fp_key = "accepted_by_driver" if drv else "rejected_by_driver"
            footprints[fp_key].append((tm.smem_bytes, tm.rank, tm.box_dim, _jsonable(tm.dtype)))
        r = by_rule.setdefault(rule or "(accepted)", {"driver_accepts": 0, "driver_rejects": 0})
        r["driver_accepts" if drv else "driver_rejects"] += 1
        val = rule is None
        if val and drv:
            stats["both_accept"] += 1
        elif not val and not drv:
            stats["both_reject"] += 1
        elif not val and drv and rule in DOC_NE_HW_RULES:
            stats["doc_ne_hw"] += 1
            if len(doc_cases) < 10:
                doc_cases.append({"rule": rule, "spec": _jsonable(spec)})
        else:
            stats["disagree"] += 1
            if len(disagreements) < 60:
                disagreements.append({"validator": rule or "accept", "driver": "accept" if drv else f"reject({code})",
                                      "smem_bytes": tm.smem_bytes if tm.mode == "tiled" else None,
                                      "fixed_by": _diagnose(tkc, tmm, tm) if not drv else [],
                                      "spec": _jsonable(spec)})
    stats["valid_fraction"] = stats["both_accept"] / max(1, stats["cases"])
    stats["agreement_outside_doc_ne_hw"] = 1 - stats["disagree"] / max(1, stats["cases"] - stats["doc_ne_hw"])
    stats["seconds"] = time.time() - t0
    acc = footprints["accepted_by_driver"]
    rej = footprints["rejected_by_driver"]
    fp = {"max_accepted_smem_bytes": max((a[0] for a in acc), default=None),
          "min_rejected_smem_bytes": min((a[0] for a in rej), default=None),
          "rejected_sample": sorted(rej)[:15], "accepted_largest": sorted(acc)[-10:]}
    return {"arch": arch, "doc_ne_hw_rules": list(DOC_NE_HW_RULES), "hw_derived_rules": list(HW_DERIVED_RULES),
            "stats": stats, "by_rule": by_rule,
            "footprints": fp, "sweeps": _encode_sweeps(tkc, tmm),
            "disagreements": disagreements, "doc_ne_hw_examples": doc_cases}


def _try_encode(tkc, tm) -> str:
    try:
        tkc.encode_tensormap(tm, raw=True)
        return "ok"
    except tkc.CudaError as e:
        return f"rej{e.code}"
    except Exception as e:
        return f"{type(e).__name__}"


def _diagnose(tkc, tmm, tm) -> list[str]:
    """Which single change makes the driver accept a map the validator accepted."""
    r = tm.rank
    variants = {
        "address=0": dict(global_address=0),
        "l2=NONE": dict(l2_promotion=0),
        "oob=NONE": dict(oob_fill=0),
        "swizzle=NONE": dict(swizzle=0),
        "elementStrides=1": dict(element_strides=(1,) * r),
        "outer box<=4": dict(box_dim=(tm.box_dim[0],) + tuple(min(b, 4) for b in tm.box_dim[1:])),
        "box<=dims": dict(box_dim=tuple(min(b, d) for b, d in zip(tm.box_dim, tm.global_dim))),
        "inner box 16B": dict(box_dim=(max(1, 16 // tm.elem_bytes),) + tuple(tm.box_dim[1:])),
        "dims>=256": dict(global_dim=tuple(max(d, 256) for d in tm.global_dim)),
        "interleave=NONE": dict(interleave=0),
    }
    out = []
    for name, ch in variants.items():
        try:
            v = tm.replace(**ch)
        except Exception:
            continue
        if _try_encode(tkc, v) == "ok":
            out.append(name)
    return out


def _encode_sweeps(tkc, tmm):
    """Targeted encodes that isolate driver rules the random fuzz hints at."""
    DT = tmm.DataType
    base = tmm.TensorMap(dtype=DT.FLOAT32, global_dim=(1024, 1024), global_strides=(4096,), box_dim=(32, 8),
                         global_address=1 << 30)
    out = {}
    # rank 1
    r1 = tmm.TensorMap(dtype=DT.FLOAT32, global_dim=(1024,), global_strides=(), box_dim=(32,), global_address=1 << 30)
    out["rank1 f32 dim1024 box32"] = _try_encode(tkc, r1)
    out["rank1 f32 dim1024 box32 sw128"] = _try_encode(tkc, r1.replace(swizzle=3))
    big = (1024, 256, 256)
    for dims, box in (((32, 256, 8), (32, 256, 8)), (big, (32, 64, 32)), (big, (32, 8, 256)), (big, (32, 128, 8)),
                      (big, (32, 255, 5)), ((1024, 16, 16), (32, 16, 16)), ((64, 64, 64), (32, 64, 64))):
        t = tmm.TensorMap(dtype=DT.FLOAT32, global_dim=dims, global_strides=(dims[0] * 4, dims[0] * dims[1] * 4),
                          box_dim=box, global_address=1 << 30)
        out[f"3d f32 dims {dims} box {box}"] = _try_encode(tkc, t)
    out["rank2 f32 (1024,1) box (32,1)"] = _try_encode(tkc, base.replace(global_dim=(1024, 1), box_dim=(32, 1)))
    # outer box extent vs footprint
    for b1 in (8, 32, 64, 128, 256):
        out[f"2d f32 box (32,{b1}) = {128 * b1} B"] = _try_encode(tkc, base.replace(box_dim=(32, b1)))
    for b2 in (2, 4, 8, 16, 64):
        t = tmm.TensorMap(dtype=DT.FLOAT32, global_dim=(1024, 256, 256), global_strides=(4096, 4096 * 256),
                          box_dim=(32, 256, b2), global_address=1 << 30)
        out[f"3d f32 box (32,256,{b2}) = {128 * 256 * b2} B"] = _try_encode(tkc, t)
    # box larger than the tensor
    out["2d box (32,8) on dims (16,4)"] = _try_encode(tkc, base.replace(global_dim=(16, 4)))
    # address forms
    for a in (0, 256, 1 << 20, 1 << 40, (1 << 47) + 256, (1 << 48) + 256, (1 << 56) + 256):
        out[f"address {a:#x}"] = _try_encode(tkc, base.replace(global_address=a))
    return out


def _jsonable(x):
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if hasattr(x, "name") and hasattr(x, "value"):
        return x.name
    if isinstance(x, (np.integer,)):
        return int(x)
    return x


# ----------------------------------------------------------------------------------------------------------------
# (b) emulator vs hardware

LOAD_DTYPES = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
FLOATY = {6, 7, 8, 9, 10, 11, 12}


class Gmem:
    """A device buffer with random contents and its host copy (index 0 = the tensor map's global_address)."""

    def __init__(self, tkc, rng, nbytes, offset):
        self.nbytes = nbytes + offset
        self.dev = tkc.DeviceBuffer(self.nbytes + 256)
        self.host = rng.integers(0, 256, self.nbytes + 256, dtype=np.uint8)
        self.dev.upload(self.host.tobytes())
        self.offset = offset

    @property
    def address(self):
        return self.dev.ptr + self.offset

    def view(self):
        return self.host[self.offset:].copy()

    def device_view(self):
        return np.frombuffer(self.dev.download(), np.uint8)[self.offset:]


def _fits(tmm, spec, max_box_bytes) -> bool:
    """Whether ``spec`` is a valid sm_90 map whose box fits ``max_box_bytes`` of shared memory."""
    tm = tmm.TensorMap(global_address=1 << 20, **spec)
    try:
        tm.validate("sm_90")
    except Exception:
        return False
    return tm.smem_bytes <= max_box_bytes


def _rand_tiled_for_hw(rng, tmm, max_box_bytes=16384, allow_interleave=False):
    # Interleaved layouts are off by default: the emulator refuses them (the H200 fills a different, larger shared
    # area than the dense-row model; first run: crashed chunks with CUDA_ERROR_ILLEGAL_ADDRESS).
    """A random valid tiled map small enough for the fuzz, as (spec without address, total bytes)."""
    DT = tmm.DataType
    for _ in range(1000):
        dtype = DT(int(rng.choice(LOAD_DTYPES)))
        eb = tmm.DTYPE_BITS[dtype] // 8
        rank = int(rng.integers(1, 6))
        interleave = 0
        if allow_interleave and rank >= 3 and rng.random() < 0.1:
            interleave = int(rng.integers(1, 3))
        swz = int(rng.integers(0, 4))
        if interleave == 2:
            swz = 1
        span = {0: 256, 1: 32, 2: 64, 3: 128}[swz]
        max_inner = min(span, 256 * eb) if swz else min(256 * eb, 512)
        inner = 16 * int(rng.integers(1, max_inner // 16 + 1))
        box0 = inner // eb
        if box0 > 256:
            continue
        if interleave:
            box0 = int(rng.integers(1, 9)) * (16 // eb if eb <= 16 else 1)
        dims = [int(rng.integers(1, 80)) for _ in range(rank)]
        dims[0] = int(rng.integers(max(1, box0 // 2), box0 * 3 + 2))
        align = 32 if interleave == 2 else 16
        strides, s = [], dims[0] * eb
        for i in range(1, rank):
            s = -(-s // align) * align + align * int(rng.integers(0, 2))
            strides.append(s)
            s *= dims[i]
        total = s if rank > 1 else dims[0] * eb
        if total > (8 << 20):
            continue
        box = [box0] + [int(rng.integers(1, min(dims[i] + 4, 33))) for i in range(1, rank)]
        es = [1] + [int(rng.choice([1, 1, 1, 2, 3, 4, 8])) for _ in range(rank - 1)]
        if rng.random() < 0.1:
            es[0] = int(rng.integers(1, 4))
        oob = 1 if int(dtype) in FLOATY and rng.random() < 0.3 else 0
        spec = dict(dtype=dtype, global_dim=dims, global_strides=strides, box_dim=box, element_strides=es,
                    interleave=interleave, swizzle=swz, l2_promotion=int(rng.integers(0, 4)), oob_fill=oob)
        if _fits(tmm, spec, max_box_bytes):
            return spec, total
    raise RuntimeError("could not generate a map")


def _rand_im2col_for_hw(rng, tmm, max_box_bytes=16384, inside=False):
    """A random valid im2col map as (spec, bytes); ``inside``: pixel-box corners inside the tensor (lower >= 0,
    upper <= 0, box not empty), the only maps im2col stores take without trapping."""
    DT = tmm.DataType
    for _ in range(2000):
        dtype = DT(int(rng.choice(LOAD_DTYPES)))
        eb = tmm.DTYPE_BITS[dtype] // 8
        rank = int(rng.integers(3, 6))
        nsp = rank - 2
        swz = int(rng.integers(0, 4))
        span = {0: 256, 1: 32, 2: 64, 3: 128}[swz]
        cmax = min(256, (span if swz else 256 * eb) // eb)
        cpp = (16 // eb if eb < 16 else 1) * int(rng.integers(1, max(2, cmax * eb // 16 + 1)))
        if cpp > cmax or cpp < 1:
            continue
        C = int(rng.integers(cpp, cpp * 3 + 1))
        spatial = [int(rng.integers(1, {3: 40, 4: 12, 5: 6}[rank])) for _ in range(nsp)]
        N = int(rng.integers(1, 4))
        dims = [C] + spatial + [N]
        strides, s = [], C * eb
        for i in range(1, rank):
            s = -(-s // 16) * 16 + 16 * int(rng.integers(0, 2))
            strides.append(s)
            s *= dims[i]
        if s > (8 << 20):
            continue
        rng_c = {3: 8, 4: 4, 5: 3}[rank]
        lo = [int(rng.integers(-rng_c, 1)) for _ in range(nsp)]
        up = [int(rng.integers(-rng_c, rng_c)) for _ in range(nsp)]
        if inside:
            lo = [int(rng.integers(0, min(3, d))) for d in spatial]
            up = [-int(rng.integers(0, d - x)) for d, x in zip(spatial, lo)]
        es = [1] + [int(rng.choice([1, 1, 2])) for _ in range(rank - 1)]
        oob = 1 if int(dtype) in FLOATY and rng.random() < 0.3 else 0
        spec = dict(dtype=dtype, global_dim=dims, global_strides=strides, box_dim=[cpp] + [1] * (rank - 1),
                    element_strides=es, swizzle=swz, oob_fill=oob, mode="im2col", pixel_box_lower_corner=lo,
                    pixel_box_upper_corner=up, channels_per_pixel=cpp, pixels_per_column=int(rng.integers(1, 65)))
        if _fits(tmm, spec, max_box_bytes):
            return spec, s
    raise RuntimeError("could not generate an im2col map")


def _rand_interleave_basics(rng, tmm):
    """(dtype, element bytes, rank, interleave, chunk bytes, swizzle) of a random interleaved map (32B needs SW32)."""
    dtype = tmm.DataType(int(rng.choice(LOAD_DTYPES)))
    rank = int(rng.integers(3, 6))  # the draw order of sessions 9-11, so their seeds replay the same maps
    il = int(rng.integers(1, 3))
    swz = 1 if il == 2 else int(rng.integers(0, 4))
    return dtype, tmm.DTYPE_BITS[dtype] // 8, rank, il, 16 * il, swz


def _chunked_strides(rng, dims, chunk, first_max):
    """Byte strides of dims 1.. of an interleaved map (the first 1..first_max-1 chunks, each next one the previous
    extent plus 0-2 chunks) and the bytes its boxes can reach (dim 0 counts chunks)."""
    strides, s = [], chunk * int(rng.integers(1, first_max))
    for i in range(1, len(dims)):
        strides.append(s)
        s = s * dims[i] + chunk * int(rng.integers(0, 3))
    return strides, sum((d - 1) * st for d, st in zip(dims[1:], strides)) + dims[0] * chunk


def _rand_interleaved_for_hw(rng, tmm, max_box_bytes=16384):
    """A random valid INTERLEAVE_16B/32B tile map (half of them with element strides 1..3 on dims 1.. and 1..4 on
    dim 0, which steps over chunks), as (spec, bytes the loads can reach): dim 0 counts 16/32-byte chunks on the
    H200, so a row reaches globalDim[0] chunks."""
    for _ in range(2000):
        dtype, eb, rank, il, chunk, swz = _rand_interleave_basics(rng, tmm)
        box0 = max(1, 16 // eb) * int(rng.integers(1, 5))
        dims = [int(rng.integers(1, 12))] + [int(rng.integers(1, {3: 24, 4: 10, 5: 6}[rank])) for _ in range(rank - 1)]
        strides, reach = _chunked_strides(rng, dims, chunk, 5)
        if reach > (8 << 20):
            continue
        box = [box0] + [int(rng.integers(1, min(dims[i] + 3, 9))) for i in range(1, rank)]
        oob = 1 if int(dtype) in FLOATY and rng.random() < 0.3 else 0
        es = [1] * rank if rng.random() < 0.5 else [int(rng.integers(1, 5))] + [int(rng.integers(1, 4))
                                                                                for _ in range(rank - 1)]
        spec = dict(dtype=dtype, global_dim=dims, global_strides=strides, box_dim=box, element_strides=es,
                    interleave=il, swizzle=swz, l2_promotion=int(rng.integers(0, 4)), oob_fill=oob)
        if _fits(tmm, spec, max_box_bytes):
            return spec, reach
    raise RuntimeError("could not generate an interleaved map")


def _rand_interleaved_im2col_for_hw(rng, tmm, max_box_bytes=16384, inside=False):
    """A random valid INTERLEAVE_16B/32B im2col map (element strides 1: the emulator refuses others), as (spec,
    bytes the loads can reach). ``inside``: pixel-box corners inside the tensor (what stores take)."""
    for _ in range(2000):
        dtype, eb, rank, il, chunk, swz = _rand_interleave_basics(rng, tmm)
        dims = [int(rng.integers(1, 6))] + [int(rng.integers(1, {3: 12, 4: 8, 5: 5}[rank])) for _ in range(rank - 1)]
        strides, reach = _chunked_strides(rng, dims, chunk, 4)
        if reach > (8 << 20):
            continue
        spatial = dims[:rank - 2]  # the chunk dim and dims 1..rank-3 (coord_rules.im2col_spatial_dims)
        lo = [int(rng.integers(-3, 1)) for _ in spatial]
        up = [int(rng.integers(-3, 3)) for _ in spatial]
        if inside:
            lo = [int(rng.integers(0, min(3, d))) for d in spatial]
            up = [-int(rng.integers(0, d - x)) for d, x in zip(spatial, lo)]
        cpp = max(1, chunk // eb) * int(rng.integers(1, 3))
        oob = 1 if int(dtype) in FLOATY and rng.random() < 0.3 else 0
        spec = dict(dtype=dtype, global_dim=dims, global_strides=strides, box_dim=[cpp] + [1] * (rank - 1),
                    element_strides=[1] * rank, interleave=il, swizzle=swz, oob_fill=oob, mode="im2col",
                    pixel_box_lower_corner=lo, pixel_box_upper_corner=up, channels_per_pixel=cpp,
                    pixels_per_column=int(rng.integers(1, 65)))
        if _fits(tmm, spec, max_box_bytes):
            return spec, reach
    raise RuntimeError("could not generate an interleaved im2col map")


def _rand_coords(rng, tm, nonneg=False):
    """Start coordinates around the tensor (negative and past the end); the innermost one on a 16-byte boundary and
    im2col spatial starts inside the pixel box (others trap, see the probes). ``nonneg``: no negative starts
    (stores)."""
    from tmakit.tma.coord_rules import im2col_pixel_box, im2col_spatial_dims

    spatial = im2col_spatial_dims(tm) if tm.mode == "im2col" else ()
    out = []
    for i, d in enumerate(tm.global_dim):
        b = tm.box_dim[i] if tm.mode == "tiled" else 4
        lo = 0 if nonneg else -b - 2
        c = int(rng.integers(lo, d + 3))
        if rng.random() < 0.5:  # in-bounds start more often
            c = int(rng.integers(0, max(1, d)))
        if i in spatial:  # a spatial start outside the pixel box traps
            first, last = im2col_pixel_box(tm, spatial.index(i))
            c = int(rng.integers(first, last + 1))
        if i == 0 and int(tm.interleave) == 0:
            q = max(1, 16 // (tm.elem_bits // 8))
            c = (c // q) * q
        out.append(c)
    return out


def _start_inside(tm, coords) -> bool:
    return all(0 <= c < d for c, d in zip(coords, tm.global_dim))


def _note_case(args, what):
    """Written before each launch, so a crashed chunk names the case that killed its context."""
    if getattr(args, "case_file", None):
        Path(args.case_file).write_text(json.dumps(_jsonable(what), default=str))


def _encode_or_none(tkc, tm, res):
    """Encode a validator-approved map; count (and skip) the ones the driver refuses (reported under (a))."""
    try:
        return tkc.encode_tensormap(tm)
    except tkc.CudaError:
        res["driver_rejected_maps"] = res.get("driver_rejected_maps", 0) + 1
        return None


def _diff_summary(a: np.ndarray, b: np.ndarray) -> dict:
    bad = np.nonzero(a != b)[0]
    return {"bytes": int(bad.size), "first": [int(x) for x in bad[:8]],
            "hw": [int(a[x]) for x in bad[:8]], "emu": [int(b[x]) for x in bad[:8]]}


def _emu():
    from tmakit.emu import tma_unit

    return tma_unit


def _fuzz_loads(args, im2col: bool, interleave: bool = False):
    tkc, tmm = _tk()
    from tmakit.cuda import seeds

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
    from tmakit.cuda import seeds

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
    from tmakit.cuda import seeds

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


# ----------------------------------------------------------------------------------------------------------------
# probes: single behaviours, each in its own process (an illegal instruction kills only that process's context)

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
    from tmakit.cuda import seeds

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
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    names = subprocess.run([sys.executable, str(HERE), "--probe", "list"], env=env, capture_output=True, text=True,
                           timeout=120)
    out = {}
    for name in json.loads(names.stdout.strip().splitlines()[-1]):
        try:
            r = subprocess.run([sys.executable, str(HERE), "--probe", name], env=env, capture_output=True, text=True,
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
# (c) compute-sanitizer on the seed kernels

def sanitize_workload():
    """Small runs of every seed kernel: loads (all swizzles, OOB), multicast in a cluster of 4, store, reduce, copy."""
    tkc, tmm = _tk()
    from tmakit.cuda import seeds

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


def part_driver_sweeps(args):
    """The targeted encode sweeps of ``conformance_explore.py`` (box-size thresholds per dtype/swizzle/row bytes,
    element strides, boxes larger than the tensor, interleave, im2col channels x pixels, addresses 2^k, packed types,
    the im2col corner/area grid), each judged by the validator too: agreement must be 100 % outside DOC≠HW."""
    sys.path.insert(0, str(HERE.parent))
    import conformance_explore as ce

    from tmakit.tma import TmaDescriptorError
    from tmakit.tma.tensormap_rules import DOC_NE_HW_RULES

    _, tmm = _tk()
    args.explore_random = False
    raw = ce.part_encode(args)
    specs = [(p["tag"], p["spec"], p["r"]) for p in raw["points"]]
    for f in raw["families"]:
        for key, r in (("spec_max", 0), ("spec_min_rej", 1)):
            if key in f:
                specs.append((f"{f['tag']} ({'largest accepted' if r == 0 else 'smallest refused'})", f[key], r))
    stats = {"specs": len(specs), "agree": 0, "doc_ne_hw": 0, "disagree": 0}
    bad = []
    for tag, spec, r in specs:
        sp = dict(spec)
        for k, enum in (("dtype", tmm.DataType), ("interleave", tmm.Interleave), ("swizzle", tmm.SwizzleMode),
                        ("l2_promotion", tmm.L2Promotion), ("oob_fill", tmm.OobFill)):
            if isinstance(sp[k], str):
                sp[k] = enum[sp[k]]
        rule = None
        try:
            tmm.TensorMap(**sp).validate("sm_90")
        except TmaDescriptorError as e:
            rule = e.rule
        if (rule is None) == (r == 0):
            stats["agree"] += 1
        elif rule in DOC_NE_HW_RULES and r == 0:
            stats["doc_ne_hw"] += 1
        else:
            stats["disagree"] += 1
            if len(bad) < 20:
                bad.append({"tag": tag, "validator": rule or "accept", "driver": r})
    return {"stats": stats, "disagreements": bad,
            "families_max_last_box_dim": {f["tag"]: f["max"] for f in raw["families"]},
            "points": {p["tag"]: ("ok" if p["r"] == 0 else f"rej{p['r']}") for p in raw["points"]}}


def part_tf32(args):
    """TFLOAT32 / TFLOAT32_FTZ / FLOAT32(_FTZ) loads of 4096 crafted and random fp32 patterns (ties, carries into the
    exponent, NaN/Inf, denormals), a partly-OOB load with NaN fill and a store, compared with the emulator."""
    import base64

    sys.path.insert(0, str(HERE.parent))
    import conformance_explore as ce

    _, tmm = _tk()
    tu = _emu()
    raw = ce.part_tf32(args)
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


def part_sanitizer(args):
    san = _find_sanitizer()
    if not san:
        return {"error": "compute-sanitizer not found"}
    out = {"sanitizer": san}
    cache = tempfile.mkdtemp(prefix="tmakit-san-")
    env = dict(os.environ, TMAKIT_CACHE_DIR=cache, PYTHONPATH=str(ROOT / "src"))
    # compile once outside the sanitizer so each tool run only loads cubins
    subprocess.run([sys.executable, str(HERE), "--sanitize-workload"], env=env, capture_output=True, timeout=300)
    for tool in ("memcheck", "racecheck", "synccheck"):
        t0 = time.time()
        cmd = [san, "--tool", tool, "--error-exitcode", "99", "--target-processes", "all"]
        if tool == "racecheck":
            cmd += ["--racecheck-report", "all"]
        r = subprocess.run(cmd + [sys.executable, str(HERE), "--sanitize-workload"], env=env, capture_output=True,
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


# ----------------------------------------------------------------------------------------------------------------
# driver

def run_child(args):
    fn = globals()[f"part_{args.child}"]
    try:
        res = fn(args)
    except Exception as e:
        res = {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()[-4000:]}
    Path(args.result).write_text(json.dumps(res, indent=1, default=str))


def _fmt_row(name, res):
    if "error" in res:
        return f"{name:16s} ERROR {res['error'][:90]}"
    if name == "validator":
        s = res["stats"]
        return (f"{name:16s} {s['cases']} specs: accept/accept {s['both_accept']}, reject/reject {s['both_reject']}, "
                f"DOC≠HW {s['doc_ne_hw']}, disagree {s['disagree']}")
    if name.startswith("emu_"):
        extra = f", timeouts {res.get('timeouts', 0)}" if "timeouts" in res else ""
        return (f"{name:16s} {res['cases']} cases: {res['mismatching_cases']} mismatching "
                f"({res['mismatching_bytes']} bytes){extra}, emu errors {res.get('emu_errors', 0)}, "
                f"crashed chunks {res.get('crashes', 0)}/{res.get('chunks', 0)}")
    if name == "driver_sweeps":
        st = res["stats"]
        return (f"{name:16s} {st['specs']} targeted encodes: agree {st['agree']}, DOC≠HW {st['doc_ne_hw']}, "
                f"disagree {st['disagree']}")
    if name == "tf32":
        return name.ljust(16) + " " + ", ".join(
            f"{k}: {v.get('mismatching_elements', v.get('mismatching_bytes'))} bad" for k, v in res.items()
            if isinstance(v, dict))
    if name == "probes":
        return name.ljust(16) + " " + ", ".join(f"{k}: {'ok' if v['ok'] else v['error']}" for k, v in res.items()
                                                 if isinstance(v, dict))
    if name == "sanitizer":
        return name.ljust(16) + " " + ", ".join(
            f"{t}: rc {res[t]['rc']} errors {res[t]['errors']}" for t in ("memcheck", "racecheck", "synccheck")
            if t in res)
    if name == "launch":
        return name.ljust(16) + " " + ", ".join(f"{k}: {v['median_us']:.2f} us" for k, v in res.items()
                                                 if isinstance(v, dict))[:400]
    if name == "jit":
        w = res.get("warm", {})
        cold = {k: round(v, 2) for k, v in res.items() if k.startswith("cold_compile_s")}
        return (f"{name:16s} cold {cold}; warm disk hit {w.get('disk_hit_median_s', 0) * 1e3:.2f} ms, "
                f"memory hit {w.get('memory_hit_median_s', 0) * 1e6:.0f} us, first lookup in a new process "
                f"{w.get('first_lookup_s', 0) * 1e3:.0f} ms")
    if name == "env":
        return f"{name:16s} {res.get('device')} cc {res.get('compute_capability')} driver {res.get('driver_version')}" \
               f" {res.get('nvrtc')} cuda-bindings {res.get('cuda-bindings')}"
    return f"{name:16s} {str(res)[:100]}"


EMU_TARGET = {"emu_load": "n_emu_load", "emu_multicast": "n_emu_multicast", "emu_store": "n_emu_store",
              "emu_reduce": "n_emu_reduce", "emu_im2col": "n_emu_im2col", "emu_interleave": "n_emu_interleave",
              "emu_im2col_store": "n_emu_im2col_store", "emu_interleave_store": "n_emu_interleave_store",
              "emu_interleave_im2col": "n_emu_interleave_im2col",
              "emu_interleave_im2col_store": "n_emu_interleave_im2col_store"}


def _run_part(part, args, env, extra, timeout):
    rfile = Path(tempfile.mkdtemp()) / "r.json"
    cmd = [sys.executable, str(HERE), "--child", part, "--result", str(rfile), "--out", args.out,
           "--seed", str(args.seed)] + extra
    for k in ("n_validator",):
        cmd += ["--" + k.replace("_", "-"), str(getattr(args, k))]
    try:
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        res = json.loads(rfile.read_text()) if rfile.exists() else {
            "error": f"child exited {r.returncode}", "stderr": r.stderr[-3000:]}
        if r.returncode and "error" not in res:
            res["child_rc"] = r.returncode
    except subprocess.TimeoutExpired as e:
        res = {"error": f"timed out after {timeout} s", "stderr": str(e.stderr)[-2000:]}
    return res


def _merge(total, res):
    for k, v in res.items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            total[k] = total.get(k, 0) + v
        elif isinstance(v, dict):
            d = total.setdefault(k, {})
            for kk, vv in v.items():
                if isinstance(vv, list) and len(vv) == 2:
                    cur = d.setdefault(kk, [0, 0])
                    cur[0] += vv[0]
                    cur[1] += vv[1]
        elif isinstance(v, list):
            total.setdefault(k, []).extend(v[: max(0, 12 - len(total.get(k, [])))])


def _run_chunked(part, args, env):
    """Run an emulator-vs-hardware part in chunks of ``--chunk-cases``, one process each, until the target count;
    a chunk whose context dies is recorded (with the case that was running) and the next chunk goes on."""
    target = getattr(args, EMU_TARGET[part])
    total = {"cases": 0, "mismatching_cases": 0, "mismatching_bytes": 0, "crashed_chunks": [], "chunks": 0}
    deadline = time.time() + args.timeout
    chunk = 0
    while total["cases"] < target and time.time() < deadline and chunk < 4 * (target // args.chunk_cases + 1):
        case_file = Path(tempfile.mkdtemp()) / "case.json"
        res = _run_part(part, args, env, ["--chunk", str(chunk), "--chunk-cases", str(args.chunk_cases),
                                          "--case-file", str(case_file)], max(10, int(deadline - time.time())))
        total["chunks"] += 1
        if "error" in res:
            crash = {"chunk": chunk, "error": res["error"][:300]}
            if case_file.exists():
                crash["case"] = json.loads(case_file.read_text())
            if len(total["crashed_chunks"]) < 6:
                total["crashed_chunks"].append(crash)
            total["crashes"] = total.get("crashes", 0) + 1
        else:
            _merge(total, res)
        chunk += 1
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.environ.get("OUT", "conformance-out"))
    ap.add_argument("--commit", default=os.environ.get("TMAKIT_COMMIT", "unknown"))
    ap.add_argument("--parts", default=",".join(PARTS))
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--n-validator", type=int, default=5000)
    ap.add_argument("--n-emu-load", type=int, default=1200)
    ap.add_argument("--n-emu-multicast", type=int, default=400)
    ap.add_argument("--n-emu-store", type=int, default=400)
    ap.add_argument("--n-emu-reduce", type=int, default=600)
    ap.add_argument("--n-emu-im2col", type=int, default=400)
    ap.add_argument("--n-emu-interleave", type=int, default=400)
    ap.add_argument("--n-emu-im2col-store", type=int, default=400)
    ap.add_argument("--n-emu-interleave-store", type=int, default=400)
    ap.add_argument("--n-emu-interleave-im2col", type=int, default=400)
    ap.add_argument("--n-emu-interleave-im2col-store", type=int, default=400)
    ap.add_argument("--timeout", type=int, default=240, help="seconds per part")
    ap.add_argument("--child")
    ap.add_argument("--result")
    ap.add_argument("--sanitize-workload", action="store_true")
    ap.add_argument("--probe")
    ap.add_argument("--chunk", type=int, default=0)
    ap.add_argument("--chunk-cases", type=int, default=100)
    ap.add_argument("--case-file")
    args = ap.parse_args()
    if args.sanitize_workload:
        return sanitize_workload()
    if args.probe:
        r = _probe(args.probe)
        if args.probe == "list":
            print(json.dumps(r))
        return None
    if args.child:
        return run_child(args)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    results = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "commit": args.commit, "seed": args.seed, "parts": {}}
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), PYTHONUNBUFFERED="1")
    env.setdefault("TMAKIT_CACHE_DIR", tempfile.mkdtemp(prefix="tmakit-conf-"))
    for part in args.parts.split(","):
        t0 = time.time()
        if part.startswith("emu_"):
            res = _run_chunked(part, args, env)
        else:
            res = _run_part(part, args, env, [], args.timeout)
        res["part_seconds"] = round(time.time() - t0, 1)
        results["parts"][part] = res
        Path(args.out, "conformance.json").write_text(json.dumps(results, indent=1, default=str))
        print(_fmt_row(part, res), flush=True)
    print("\n==== summary ====")
    for part, res in results["parts"].items():
        print(_fmt_row(part, res))


if __name__ == "__main__":
    main()
