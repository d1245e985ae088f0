"""The GEMM choices that ``tmakit tune gemm`` measured, kept in the kernel cache directory.

One JSON file per device kind (``gemm-tuned-<device>.json`` under ``tmakit.cuda.cache.cache_dir()``), mapping a
problem class -- input and output dtypes, B's layout and the exact M, N, K -- to the fastest path measured there:
``{"path": "torch"}``, ``{"path": "small"}`` (the small-problem kernel) or ``{"path": "kernel", "config": <name in
CONFIGS>, "split": <K ranges>}``. ``tk.ops.gemm`` reads the file once per process and device (then again after a
tune writes it) when it plans a call without tuning knobs, so a tuned shape costs nothing per call. A missing,
unreadable or foreign file means "not tuned".
"""

from __future__ import annotations

import json
import os
import re
import tempfile

__all__ = ["problem_key", "device_tag", "table_path", "lookup", "store", "entries", "forget"]

_tables: dict = {}  # device tag -> {problem key: entry}
_devices: dict = {}  # torch device index -> device tag


def problem_key(m: int, n: int, k: int, in_dtype: str, out_dtype: str, b_mn: bool) -> str:
    """The problem class a tuned entry applies to: dtypes, B's layout (``kn`` row-major, ``nk`` = w.t()), M, N, K."""
    return f"{in_dtype}->{out_dtype} {'kn' if b_mn else 'nk'} {m}x{n}x{k}"


def device_tag(index: int) -> str:
    """A file-name-safe name of CUDA device ``index``'s kind and SM count (H100 and H200 are tuned apart)."""
    tag = _devices.get(index)
    if tag is None:
        import torch

        props = torch.cuda.get_device_properties(index)
        name = f"{props.name}-{props.multi_processor_count}sm"
        tag = _devices[index] = re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-")
    return tag


def table_path(tag: str):
    """The JSON file of device ``tag``, or None when there is no cache directory."""
    from ..cuda.cache import cache_dir

    d = cache_dir()
    return None if d is None else d / f"gemm-tuned-{tag}.json"


def entries(tag: str) -> dict:
    """The tuned entries of device ``tag`` (read once per process; {} when none or unreadable)."""
    t = _tables.get(tag)
    if t is None:
        t = {}
        path = table_path(tag)
        try:
            if path is not None and path.exists():
                got = json.loads(path.read_text())
                t = {k: v for k, v in got.get("entries", {}).items() if _valid(v)}
        except (OSError, ValueError, AttributeError):
            t = {}
        _tables[tag] = t
    return t


def _valid(e) -> bool:
    from ..kernels.gemm import CONFIGS

    return isinstance(e, dict) and (e.get("path") in ("torch", "small") or (
        e.get("path") == "kernel" and e.get("config") in CONFIGS and isinstance(e.get("split", 1), int)))


def lookup(index: int, m: int, n: int, k: int, in_dtype: str, out_dtype: str, b_mn: bool):
    """The tuned entry of this problem on device ``index``, or None."""
    return entries(device_tag(index)).get(problem_key(m, n, k, in_dtype, out_dtype, b_mn))


def store(tag: str, key: str, entry: dict) -> str | None:
    """Add or replace one entry of device ``tag`` (atomic rewrite of its file); returns the file's path, or None
    when there is no cache directory. Plans already made in this process keep their choice."""
    if not _valid(entry):
        raise ValueError(f"not a tuned GEMM entry: {entry!r}")
    path = table_path(tag)
    table = dict(entries(tag))
    table[key] = entry
    _tables[tag] = table
    if path is None:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".gemm-tuned-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump({"device": tag, "entries": table}, f, indent=1, sort_keys=True)
    os.replace(tmp, path)
    return str(path)


def forget() -> None:
    """Drop the tables read so far (the next plan reads the files again)."""
    _tables.clear()
