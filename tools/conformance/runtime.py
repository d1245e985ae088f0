"""Runtime numbers: the environment, JIT cold/warm times, host cost of a launch with two tensor maps."""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

from .common import _median, _tk, child_env


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
from tmakit.kernels import KERNELS_DIR
t_import = time.perf_counter() - t0
p = KERNELS_DIR / "seeds.cu"
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
    from tmakit.kernels import KERNELS_DIR

    tmp = tempfile.mkdtemp(prefix="tmakit-jit-")
    os.environ["TMAKIT_CACHE_DIR"] = tmp
    t0 = time.perf_counter()
    nvrtc.compiler_id()  # loads libnvrtc
    load_s = time.perf_counter() - t0
    res = {"nvrtc_load_s": load_s}
    for f in sorted(KERNELS_DIR.glob("*.cu")):
        cache.clear_memory_cache()
        t0 = time.perf_counter()
        try:
            c = cache.compile_file(f)
            res[f"cold_compile_s[{f.name}]"] = time.perf_counter() - t0
            res[f"cubin_bytes[{f.name}]"] = len(c.cubin)
        except Exception as e:
            res[f"cold_compile_error[{f.name}]"] = str(e)[:2000]
    env = child_env(TMAKIT_CACHE_DIR=tmp)
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
