"""Disassemble cubins (nvdisasm from the ``nvidia-cuda-nvdisasm`` wheel, or cuobjdump) to check their SASS."""

from __future__ import annotations

import collections
import functools
import importlib.util
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from .errors import RuntimeUnavailable

__all__ = ["find_tool", "disassemble", "opcodes"]


@functools.lru_cache(maxsize=None)
def find_tool(name: str) -> str:
    """Path of ``nvdisasm`` / ``cuobjdump``: cuda.pathfinder, the nvidia wheels, then PATH."""
    try:
        import cuda.pathfinder as pf

        p = pf.find_nvidia_binary_utility(name)
        if p:
            return str(p)
    except Exception:
        pass
    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or []) if spec else []:
        for sub in ("cu13/bin", "cu12/bin", "cuda_nvdisasm/bin", "cuda_cuobjdump/bin"):
            p = Path(root) / sub / name
            if p.exists():
                return str(p)
    p = shutil.which(name)
    if p:
        return p
    raise RuntimeUnavailable(f"{name} not found (pip install nvidia-cuda-nvdisasm / nvidia-cuda-cuobjdump)")


def disassemble(cubin: bytes) -> str:
    """SASS text of a cubin (nvdisasm, falling back to cuobjdump)."""
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        try:
            cmd = [find_tool("nvdisasm"), "-c", f.name]
        except RuntimeUnavailable:
            cmd = [find_tool("cuobjdump"), "--dump-sass", f.name]
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


_OP = re.compile(r"^\s*(?:/\*[0-9a-f]+\*/)?\s*(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)(?:\.[\w.]+)?\b", re.M)


def opcodes(cubin_or_sass) -> collections.Counter:
    """Counter of SASS opcode mnemonics (``UTMALDG``, ``UTMASTG`` ...) in a cubin or SASS text."""
    text = disassemble(cubin_or_sass) if isinstance(cubin_or_sass, (bytes, bytearray)) else cubin_or_sass
    return collections.Counter(_OP.findall(text))
