"""The fp8 GEMM kernels' SASS for the tests: compile a kernel of ``src/tmakit/kernels`` with NVRTC, disassemble it
(skipping the test without NVRTC or a disassembler) and check that its MMAs are fp8 wgmma (QGMMA) only."""

from __future__ import annotations

import re

import pytest

# the kernel's IN code (2 + 2 * (A is e5m2) + (B is e5m2)) -> the QGMMA operand types in SASS
SASS_TYPES = {2: "E4M3.E4M3", 3: "E4M3.E5M2", 4: "E5M2.E4M3", 5: "E5M2.E5M2"}


def fp8_sass(cu_file: str, name: str):
    """(SASS text, opcode counts, {(BN, types)} of its QGMMAs) of kernel ``name`` in ``cu_file``; asserts QGMMAs and
    no 16-bit MMA. ptxas may insert a never-executed HGMMA.64x8x16 placeholder with a false predicate (!UPT) as a
    warpgroup arrive (note C7519, where the overlapped two-level promotion reads the other partial set): that one
    is not a 16-bit MMA."""
    pytest.importorskip("cuda.bindings.nvrtc")
    from tmakit import cuda as tkc
    from tmakit.cuda import sass
    from tmakit.kernels import KERNELS_DIR

    c = tkc.compile_file(KERNELS_DIR / cu_file, name_expressions=[name])
    try:
        text = sass.disassemble(c.cubin)
    except tkc.RuntimeUnavailable:
        pytest.skip("no nvdisasm/cuobjdump")
    ops = sass.opcodes(text)
    hgmma = [ln for ln in text.splitlines() if "HGMMA" in ln and "!UPT" not in ln]
    assert ops["QGMMA"] > 0 and not hgmma, hgmma
    return text, ops, set(re.findall(r"QGMMA\.64x(\d+)x32\.F32\.(\w+\.\w+)", text))
