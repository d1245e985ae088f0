"""Regenerate src/tmakit/kernels/gemm_wgmma.cuh (bf16/fp16, A K-major), gemm_wgmma_mn.cuh (bf16/fp16, A MN-major)
and gemm_wgmma_fp8.cuh (e4m3/e5m2): one wgmma asm statement per N, input type and operand majorness.

    python3 tools/codegen/gemm_wgmma.py
"""

from __future__ import annotations

from pathlib import Path

KERNELS = Path(__file__).resolve().parents[2] / "src/tmakit/kernels"
DST = KERNELS / "gemm_wgmma.cuh"
DST_FP8 = KERNELS / "gemm_wgmma_fp8.cuh"
DST_MN = KERNELS / "gemm_wgmma_mn.cuh"

HEAD = """\
// gemm_wgmma.cuh -- wgmma.mma_async wrappers for the GEMM kernel (sm_90a), SS form: A and B from shared memory
// through 64-bit matrix descriptors, fp32 accumulators in registers (N/2 per thread of the warpgroup).
// Generated text (one asm statement per shape and input type); the operand order is d[0..N/2-1], descA, descB,
// scaleD. PTX: wgmma.mma_async.sync.aligned.m64nNk16.f32.{bf16,f16}.{bf16,f16} d, descA, descB, p, 1, 1, TA, TB;
// (imm-scale-a = imm-scale-b = 1; TRANS = TB + 2 TA: imm-trans-b = TB, 0 = B K-major, 1 = B MN-major; imm-trans-a =
// TA, 0 = A K-major, 1 = A MN-major). IN: 0 = bf16, 1 = fp16; the fp8 types (IN = 2..5) are in gemm_wgmma_fp8.cuh.
#pragma once
#include <tmakit/types.cuh>

namespace tmakit {
namespace gemm {

template <int N, int IN, int TRANS = 0> struct Wgmma;
"""

HEAD_MN = """\
// gemm_wgmma_mn.cuh -- the 16-bit wgmma.mma_async wrappers of the GEMM kernel with A MN-major (imm-trans-a = 1; see
// gemm_wgmma.cuh): TRANS = 2 + TB. Generated text by tools/codegen/gemm_wgmma.py. The grouped kernel along K reads
// A M-major (docs/GROUPED.md).
#pragma once
#include "gemm_wgmma.cuh"

namespace tmakit {
namespace gemm {
"""

HEAD_FP8 = """\
// gemm_wgmma_fp8.cuh -- the fp8 wgmma.mma_async wrappers of the GEMM kernel (sm_90a; see gemm_wgmma.cuh), SS form.
// Generated text by tools/codegen/gemm_wgmma.py. IN = 2..5: A x B = e4m3 x e4m3, e4m3 x e5m2, e5m2 x e4m3,
// e5m2 x e5m2; both operands K-major (8-bit types have no transpose operands). Operands d[0..N/2-1], descA, descB,
// scaleD. PTX: wgmma.mma_async.sync.aligned.m64nNk32.f32.{e4m3,e5m2}.{e4m3,e5m2} d, descA, descB, p, 1, 1;
#pragma once
#include "gemm_wgmma.cuh"

namespace tmakit {
namespace gemm {
"""


FP8 = ((2, "e4m3", "e4m3"), (3, "e4m3", "e5m2"), (4, "e5m2", "e4m3"), (5, "e5m2", "e5m2"))  # IN code, A, B


def one(n: int, f16: int, t: str, tb: int, tb_type: str | None = None, ta: int = 0) -> str:
    """The wrapper for m64nNk16 (16-bit types; ``tb``: imm-trans-b, ``ta``: imm-trans-a) or, with ``tb_type``,
    m64nNk32 fp8 ``t`` x ``tb_type`` (no transpose operands)."""
    nr = n // 2
    kind = f"k16.f32.{t}.{t}" if tb_type is None else f"k32.f32.{t}.{tb_type}"
    tail = f"p, 1, 1, {ta}, {tb}" if tb_type is None else "p, 1, 1"
    body = f"""template <> struct Wgmma<{n}, {f16}, {tb + 2 * ta}> {{
  static TMAKIT_DEVICE void mma(float* d, u64 desc_a, u64 desc_b, int scale_d) {{
    asm volatile(
        "{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{nr + 2}, 0;\\n"
        "wgmma.mma_async.sync.aligned.m64n{n}{kind} {{"
"""
    regl = [f"%{i}" for i in range(nr)]
    chunks = [", ".join(regl[i:i + 16]) for i in range(0, nr, 16)]
    for ci, c in enumerate(chunks):
        sep = ", " if ci < len(chunks) - 1 else ""
        body += f'        "{c}{sep}"\n'
    body += f'        "}}, %{nr}, %{nr + 1}, {tail};\\n}}\\n"\n'
    opl = [f'"+f"(d[{i}])' for i in range(nr)]
    ochunks = [", ".join(opl[i:i + 6]) for i in range(0, nr, 6)]
    body += "        : " + ",\n          ".join(ochunks) + "\n"
    body += '        : "l"(desc_a), "l"(desc_b), "r"(scale_d));\n  }\n};\n'
    return body


def main() -> None:
    for ta, dst, head in ((0, DST, HEAD), (1, DST_MN, HEAD_MN)):
        parts = [head]
        for n in (64, 128, 192, 256):
            for f16, t in ((0, "bf16"), (1, "f16")):
                for tb in (0, 1):
                    parts.append(one(n, f16, t, tb, ta=ta))
        parts.append("}  // namespace gemm\n}  // namespace tmakit\n")
        dst.write_text("\n".join(parts))
    parts = [HEAD_FP8]
    for n in (64, 128, 192, 256):
        for code, ta, tb_type in FP8:
            parts.append(one(n, code, ta, 0, tb_type))
    parts.append("}  // namespace gemm\n}  // namespace tmakit\n")
    DST_FP8.write_text("\n".join(parts))


if __name__ == "__main__":
    main()
