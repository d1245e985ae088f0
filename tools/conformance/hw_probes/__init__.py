"""Targeted hardware probes behind the im2col, interleave and emulator-choice rules (docs/CONFORMANCE.md).

Runs single-behaviour GPU probes one subprocess per case, so a trap (sticky for the CUDA context) costs one case.

Each probe module calls :func:`run_cases` from its ``main`` and implements ``one NAME``, which prints one JSON
line for the case; the rows land in ``$OUT/<name>.json`` (rewritten after every case).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
OUT = Path(os.environ.get("OUT", ROOT / "bench_out"))


def run_cases(module: str, names, out_name: str, shown=lambda row: row, timeout: int = 60) -> list:
    """Run ``python -m module one NAME`` for each name; returns the rows (a failed case: its exit code and its last
    lines)."""
    OUT.mkdir(parents=True, exist_ok=True)
    path = os.pathsep.join([str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = dict(os.environ, PYTHONPATH=path)
    rows = []
    for name in names:
        try:
            r = subprocess.run([sys.executable, "-m", module, "one", name], env=env, cwd=ROOT, capture_output=True,
                               text=True, timeout=timeout)
            out, rc = r.stdout + r.stderr, r.returncode
        except subprocess.TimeoutExpired:
            out, rc = "TIMEOUT", 124
        line = next((x for x in out.splitlines() if x.startswith("{")), None)
        row = json.loads(line) if line and rc == 0 else dict(case=name, rc=rc, error=out.strip().splitlines()[-3:])
        rows.append(row)
        print(json.dumps(shown(row)), flush=True)
        (OUT / f"{out_name}.json").write_text(json.dumps(rows))
    return rows
