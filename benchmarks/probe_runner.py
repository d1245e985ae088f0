"""Runs single-behaviour GPU probes one subprocess per case, so a trap (sticky for the CUDA context) costs one case.

Each probe script calls :func:`run_cases` from its ``main`` and implements ``<script> one NAME``, which prints one JSON
line for the case; the rows land in ``$OUT/<name>.json`` (rewritten after every case).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(os.environ.get("OUT", ROOT / "bench_out"))


def run_cases(script: str, names, out_name: str, shown=lambda row: row, timeout: int = 60) -> list:
    """Run ``script one NAME`` for each name; returns the rows (a failed case: its exit code and last lines)."""
    OUT.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    rows = []
    for name in names:
        try:
            r = subprocess.run([sys.executable, script, "one", name], env=env, capture_output=True, text=True,
                               timeout=timeout)
            out, rc = r.stdout + r.stderr, r.returncode
        except subprocess.TimeoutExpired:
            out, rc = "TIMEOUT", 124
        line = next((x for x in out.splitlines() if x.startswith("{")), None)
        row = json.loads(line) if line and rc == 0 else dict(case=name, rc=rc, error=out.strip().splitlines()[-3:])
        rows.append(row)
        print(json.dumps(shown(row)), flush=True)
        (OUT / f"{out_name}.json").write_text(json.dumps(rows))
    return rows
