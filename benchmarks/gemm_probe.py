"""Device probe for GEMM design questions: variants of tmakit timed interleaved with cuBLAS on a few shapes, both
per call after an L2 flush (CUDA events) and back-to-back in CUDA-graph replays. JSON under $OUT, a table last.

    GEMM_PROBE=skinny|pdl|all python3 benchmarks/gemm_probe.py

skinny: M = 128, N = 8192, K = 2048 ... 16384 (time vs K: fixed cost and per-slab cost), a no-MMA build of the
        64-row kernel (the TMA pipeline alone), stage counts, programmatic dependent launch on/off.
pdl:    programmatic dependent launch on/off on the large suite shapes (graph replay is where it can show).
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
OUT = Path(os.environ.get("OUT", "/tmp/gemm_probe"))
OUT.mkdir(parents=True, exist_ok=True)


def nomma_launch(gk, a, b, out, cfg):
    """fn(i) launching the no-MMA build of ``cfg`` (the kernel is cached under debug key "nomma")."""
    from tmakit.cuda import KERNELS_DIR, compile_file, load_module

    p = gk.plan(a[0], b[0], out[0], config=cfg, split=1)
    name = gk.kernel_name(p)
    if (name, "nomma") not in gk._kernels:
        c = compile_file(KERNELS_DIR / "gemm.cu", name_expressions=(name,), options=("-DTMAKIT_GEMM_NO_MMA=1",))
        gk._kernels[(name, "nomma")] = load_module(c).kernel(name)
    k = gk._kernels[(name, "nomma")]
    sched = gk.schedule(p, gk.resident_ctas(k, p.config), "off")
    fns = [gk.launcher(p, a[i].data_ptr(), b[i].data_ptr(), out[i].data_ptr(), debug="nomma", sched=sched)
           for i in range(len(a))]
    return lambda i: fns[i]()


def check_and_time(fns: dict, c: list, ref, nsets: int, flush, reps: int, row: dict) -> dict:
    """Into ``row``: each fn's relative error (output pre-filled with NaN), then its median CUDA-event time per call
    (interleaved, L2 flushed) and its graph-replay time per call, as ``row[name] = {ms, graph_ms}``."""
    import torch

    from tmakit.bench import gemm as bg

    for name, f in fns.items():
        c[0].fill_(float("nan"))
        f(0)
        torch.cuda.synchronize()
        row[f"{name}_err"] = float((c[0].float() - ref).norm() / ref.norm())
    times = bg._time_events(list(fns.values()), nsets, flush, 10, reps)
    calls = max(3, min(100, math.ceil(20.0 / min(times))))
    graphs = [bg._capture(f, nsets, calls) for f in fns.values()]
    gtimes = bg._time_graphs(graphs, calls, flush, 7)
    del graphs
    for name, ms, gms in zip(fns, times, gtimes):
        row[name] = dict(ms=ms, graph_ms=gms)
    return row


def time_shape(m, n, k, variants, nomma=()):
    """variants: name -> gemm kwargs. Returns {name: (events ms, graph ms per call)} and errors."""
    import torch

    from tmakit.bench import gemm as bg
    from tmakit.kernels import gemm as gk
    from tmakit.ops_gemm import gemm

    flush = torch.empty(bg.FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    nsets = bg._nsets((m * k + k * n + m * n) * 2)
    a = [torch.randn(m, k, device="cuda", dtype=torch.bfloat16) for _ in range(nsets)]
    b = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t() for _ in range(nsets)]
    c = [torch.empty(m, n, device="cuda", dtype=torch.bfloat16) for _ in range(nsets)]
    ref = a[0].float() @ b[0].float()
    def run(kw, i):
        gemm(a[i], b[i], out=c[i], **kw)

    fns = {"cublas": lambda i: torch.matmul(a[i], b[i], out=c[i])}
    row = dict(m=m, n=n, k=k)
    for name, kw in variants.items():
        fns[name] = functools.partial(run, kw)
    for cfg in nomma:
        fns[f"nomma:{cfg if isinstance(cfg, str) else cfg.name}"] = nomma_launch(gk, a, b, c, cfg)
    check_and_time(fns, c, ref, nsets, flush, 30, row)
    cb = row["cublas"]
    cells = "  ".join(f"{nm} {cb['ms'] / row[nm]['ms']:.3f}/{cb['graph_ms'] / row[nm]['graph_ms']:.3f}"
                      for nm in fns if nm != "cublas")
    print(f"{m}x{n}x{k}: cublas {cb['ms'] * 1e3:.1f}/{cb['graph_ms'] * 1e3:.1f} us | ratio events/graph: {cells}",
          flush=True)
    fns.clear()
    a.clear(), b.clear(), c.clear()
    torch.cuda.empty_cache()
    return row


def probe_skinny() -> list:
    from tmakit.kernels.gemm import GemmConfig

    m64 = {"m64": dict(config="m64_n128_s8_c1_ov1"), "m64_nopdl": dict(config="m64_n128_s8_c1_ov1", pdl=False),
           "n64": dict(config="n64_s8_c1")}
    rows = [time_shape(128, 8192, k, m64) for k in (2048, 4096, 16384)]
    stages = {f"m64_s{s}": dict(config=GemmConfig(128, s, 1, 8, 1, bm=64)) for s in (4, 6)}
    rows.append(time_shape(128, 8192, 8192, {**m64, **stages,
                                             "n64_ov1": dict(config=GemmConfig(64, 8, 1, 8, 1)),
                                             "m64c2": dict(config="m64_n128_s8_c2_ov1")},
                           nomma=("m64_n128_s8_c1_ov1", "n64_s8_c1")))
    return rows


def probe_pdl() -> list:
    shapes = [(4096, 4096, 4096), (8192, 7168, 2048), (2048, 4096, 14336), (1024, 1024, 65536)]
    return [time_shape(m, n, k, {"auto": {}, "nopdl": dict(pdl=False)}) for m, n, k in shapes]


def main() -> None:
    import torch

    what = os.environ.get("GEMM_PROBE", "all")
    t0 = time.time()
    res = dict(date=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), device=torch.cuda.get_device_name(),
               torch=torch.__version__)
    if what in ("skinny", "all"):
        res["skinny"] = probe_skinny()
    if what in ("pdl", "all"):
        res["pdl"] = probe_pdl()
    (OUT / f"gemm_probe_{what}.json").write_text(json.dumps(res, indent=1))
    print(f"total {time.time() - t0:.0f}s")


if __name__ == "__main__":
    main()
