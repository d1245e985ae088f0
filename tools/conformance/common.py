"""Shared helpers of the conformance parts: tmakit handles, spec (de)serialisation, encode diagnostics."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def child_env(**extra) -> dict:
    """Environment for a child process of this package: tmakit from src/, the package from the repository root."""
    path = os.pathsep.join([str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")])
    return dict(os.environ, PYTHONPATH=path, PYTHONUNBUFFERED="1", **extra)


def child_cmd(module: str, *args) -> list:
    """``python -m tools.conformance.<module> args...`` (``module`` "" for the package itself)."""
    return [sys.executable, "-m", "tools.conformance" + (f".{module}" if module else ""), *map(str, args)]


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
