"""Nsight Compute counters of tmakit's GEMM and cuBLAS on the same shapes (one profiled call each, caches flushed by
ncu, clocks not locked). Run under ncu by itself:

    python3 benchmarks/gemm_ncu.py            # launches ncu on this file with --child, writes $OUT/gemm_ncu.csv

Prints one line per kernel: duration, SM clock, tensor-pipe activity, L2 hit rate, DRAM/L2 bytes.
"""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
OUT = Path(os.environ.get("OUT", "/tmp/gemm_ncu"))
SHAPES = [tuple(int(x) for x in s.split(",")) for s in
          os.environ.get("GEMM_NCU_SHAPES", "4096,4096,4096;8192,7168,2048;2048,4096,14336").split(";")]
METRICS = ["gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second", "sm__cycles_active.avg",
           "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
           "sm__warps_active.avg.per_cycle_active",
           "lts__t_sector_hit_rate.pct", "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum",
           "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", "smsp__inst_executed.sum"]


def child() -> None:
    import torch

    from tmakit.ops_gemm import gemm

    for m, n, k in SHAPES:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t()
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        for _ in range(3):  # compile, plan, warm
            gemm(a, b, out=c)
            torch.matmul(a, b, out=c)
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        gemm(a, b, out=c)
        torch.matmul(a, b, out=c)
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()


def main() -> None:
    if sys.argv[1:] == ["--child"]:
        return child()
    OUT.mkdir(parents=True, exist_ok=True)
    cmd = ["ncu", "--profile-from-start", "off", "--clock-control", "none", "--csv", "--metrics", ",".join(METRICS),
           sys.executable, __file__, "--child"]
    r = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ})
    (OUT / "gemm_ncu.log").write_text(r.stdout + "\n--- stderr\n" + r.stderr)
    if r.returncode:
        print(r.stderr[-3000:], r.stdout[-3000:])
        sys.exit(r.returncode)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith('"')]
    rows = list(csv.DictReader(io.StringIO("\n".join(lines))))
    (OUT / "gemm_ncu.csv").write_text("\n".join(lines))
    kern: dict = {}
    for row in rows:
        key = (row["ID"], row["Kernel Name"][:40])
        kern.setdefault(key, {})[row["Metric Name"]] = (row["Metric Value"], row["Metric Unit"])
    for (i, name), mm in kern.items():
        cells = "  ".join(f"{k.split('__')[1][:28]}={v[0]}{v[1]}" for k, v in mm.items())
        print(f"{i:>3} {name:40s} {cells}")


if __name__ == "__main__":
    main()
