"""Same-process A/B of two versions of the GEMM kernel source: the working tree's ``gemm.cu`` ("new") against a
saved copy ("base", GEMM_BASE_SRC, default benchmarks/_base/gemm.cu), both launched through ``tk.ops.gemm`` with
the same plans and schedules (plus GEMM_SRCAB_VARIANTS='{name: gemm kwargs, "base": true for the saved
source}'), interleaved with cuBLAS (CUDA events after an L2 flush, then CUDA-graph replays).

    mkdir -p benchmarks/_base && git show REV:src/tmakit/kernels/gemm.cu > benchmarks/_base/gemm.cu  # untracked:
    GEMM_AB_SHAPES="m,n,k;..." python3 benchmarks/gemm_srcab.py      # it travels to the device; default: the suite

GEMM_OUT_DTYPE=float32 (or float16) times that output dtype. JSON under $OUT (gemm_srcab.json), a table last.
"""

from __future__ import annotations

import functools
import json
import math
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))
OUT = Path(os.environ.get("OUT", "/tmp/gemm_srcab"))
SUITE = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 7168, 2048), (4096, 18432, 7168), (4096, 7168, 16384),
         (2048, 4096, 14336), (128, 8192, 8192), (1024, 1024, 65536)]
STATE = {"base": False}


def patch_kernels() -> None:
    """Route launches to the base source while STATE['base'] is set (debug key "base")."""
    from tmakit.cuda import KERNELS_DIR, compile, load_module
    from tmakit.kernels import gemm as gk

    src = Path(os.environ.get("GEMM_BASE_SRC", ROOT / "benchmarks/_base/gemm.cu")).read_text()
    orig_launcher, orig_kernel_for = gk.launcher, gk.kernel_for

    def kernel_for(p, debug=None):
        if debug != "base":
            return orig_kernel_for(p, debug)
        name = gk.kernel_name(p)
        if (name, "base") not in gk._kernels:
            c = compile(src, "gemm_base.cu", name_expressions=(name,), base_dir=KERNELS_DIR)
            gk._kernels[(name, "base")] = load_module(c).kernel(name)
        return gk._kernels[(name, "base")]

    def launcher(p, *a, **kw):
        if STATE["base"]:
            kw["debug"] = "base"
        return orig_launcher(p, *a, **kw)

    gk.kernel_for, gk.launcher = kernel_for, launcher


def main() -> None:
    import torch
    from gemm_probe import check_and_time

    from tmakit.bench import gemm as bg
    from tmakit.kernels.gemm import GemmConfig
    from tmakit.ops_gemm import gemm

    OUT.mkdir(parents=True, exist_ok=True)
    patch_kernels()
    v = os.environ.get("GEMM_AB_SHAPES")
    shapes = [tuple(int(x) for x in s.split(",")) for s in v.split(";") if s] if v else SUITE
    flush = torch.empty(bg.FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    bg.spin_up()
    extra = json.loads(os.environ.get("GEMM_SRCAB_VARIANTS", "{}"))  # name -> gemm kwargs (+ "base": true)
    rows = []
    for m, n, k in shapes:
        nsets = bg._nsets((m * k + k * n + m * n) * 2)
        a = [torch.randn(m, k, device="cuda", dtype=torch.bfloat16) for _ in range(nsets)]
        b = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t() for _ in range(nsets)]
        c = [torch.empty(m, n, device="cuda", dtype=getattr(torch, os.environ.get("GEMM_OUT_DTYPE", "bfloat16")))
             for _ in range(nsets)]
        ref = a[0].float() @ b[0].float()

        def run(base, kw, i):
            STATE["base"] = base
            gemm(a[i], b[i], out=c[i], **kw)  # noqa: B023
            STATE["base"] = False

        peer = bg._peer(a[0], b[0], str(c[0].dtype).split(".")[-1], "bfloat16")[0]  # cuBLAS; fp32 out if torch can
        fns = {"cublas": lambda i: peer(a[i], b[i], c[i]),  # noqa: B023
               "base": functools.partial(run, True, {}), "new": functools.partial(run, False, {})}
        for name, kw in extra.items():  # new source, other gemm kwargs (a config may be a GemmConfig dict)
            kw = dict(kw)
            if isinstance(kw.get("config"), dict):
                kw["config"] = GemmConfig(**kw["config"])
            fns[name] = functools.partial(run, bool(kw.pop("base", False)), kw)
        row = check_and_time(fns, c, ref, nsets, flush, 40, dict(m=m, n=n, k=k))
        cb = row["cublas"]
        cells = " ".join(f"{nm} {cb['ms'] / row[nm]['ms']:.3f}/{cb['graph_ms'] / row[nm]['graph_ms']:.3f}"
                         for nm in fns if nm != "cublas")
        err = max(v for kk, v in row.items() if kk.endswith("_err"))
        print(f"{m}x{n}x{k}: cublas {2 * m * n * k / cb['ms'] / 1e9:.0f} TF | {cells} (events/graph) err {err:.1e}",
              flush=True)
        rows.append(row)
        a.clear(), b.clear(), c.clear()
        torch.cuda.empty_cache()
    res = dict(date=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), device=torch.cuda.get_device_name(),
               rows=rows)
    (OUT / "gemm_srcab.json").write_text(json.dumps(res, indent=1))
    for key in [x for x in rows[0] if isinstance(rows[0][x], dict) and x != "cublas"]:
        for mode in ("ms", "graph_ms"):
            r = [x["cublas"][mode] / x[key][mode] for x in rows]
            print(f"geomean {key} {mode}: {math.exp(sum(map(math.log, r)) / len(r)):.4f} min {min(r):.3f}")


if __name__ == "__main__":
    main()
