"""Conformance of tmakit against an H100/H200, in one device call:

  (a) validator vs driver: random TensorMap specs (valid and invalid, every field, edge values); ``validate()`` must
      accept exactly what ``cuTensorMapEncodeTiled/Im2col`` accepts, except the documented DOC≠HW rules;
  (b) emulator vs hardware: random (map, coordinates, op) cases through the seed kernels, compared byte for byte
      (shared-memory images for loads and multicast, global memory for stores and reductions);
  (c) compute-sanitizer memcheck / racecheck / synccheck on the seed kernels;
  plus the runtime numbers: JIT cold/warm times and host overhead of a launch with two tensor maps.

    python3 -m tools.conformance --out $OUT --commit <sha>     (from the repository root)

Each part runs in its own subprocess (a fault that kills the CUDA context costs only that part). Writes
``conformance.json`` and ``*.log`` under ``--out`` and prints a summary table last.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import tempfile
import time
import traceback
from pathlib import Path

from . import emulator, probes, runtime, validator
from .common import child_cmd, child_env

PART_FUNCS = {
    "env": runtime.part_env, "jit": runtime.part_jit, "launch": runtime.part_launch,
    "validator": validator.part_validator, "driver_sweeps": validator.part_driver_sweeps,
    "probes": probes.part_probes, "sanitizer": probes.part_sanitizer, "tf32": emulator.part_tf32,
    **{name[5:]: getattr(emulator, name) for name in dir(emulator) if name.startswith("part_emu_")},
}
PARTS = ["env", "jit", "launch", "validator", "driver_sweeps", "probes", "tf32", "emu_load", "emu_multicast",
         "emu_store", "emu_reduce", "emu_im2col", "emu_interleave", "emu_im2col_store",
         "emu_interleave_store", "emu_interleave_im2col", "emu_interleave_im2col_store", "sanitizer"]


def run_child(args):
    fn = PART_FUNCS[args.child]
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
    cmd = child_cmd("", "--child", part, "--result", str(rfile), "--out", args.out, "--seed", args.seed) + extra
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
    ap.add_argument("--chunk", type=int, default=0)
    ap.add_argument("--chunk-cases", type=int, default=100)
    ap.add_argument("--case-file")
    args = ap.parse_args()
    if args.child:
        return run_child(args)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    results = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "commit": args.commit, "seed": args.seed, "parts": {}}
    env = child_env()
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
