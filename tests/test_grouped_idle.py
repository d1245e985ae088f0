"""Idle consumers in the grouped kernels (``GroupedPlan.idle``, the kernel's IDLE): on a group's only 128-row tile,
a consumer warpgroup whose 64 rows all lie past the group's end skips the unit's wgmmas.

Specified here: the plan's rule (``idle_consumers``: 128-row tiles without overlap; 16-bit inputs not on
weight-streaming problems with groups of a tile or more), that NVRTC compiles the IDLE kernels without serializing
their wgmmas, and on the GPU that skipping changes no output bit (bf16 tiles, single CTAs and pairs, the deferred
epilogue, fp8 row-wise and block-wise) on group lists whose ends fall in either half of a group's only tile or of its
last of several.
"""

from __future__ import annotations

import dataclasses

import pytest

torch = pytest.importorskip("torch")

from fake_tensors import FakeTensor as _T  # noqa: E402
from tmakit.kernels import gemm_grouped as kg  # noqa: E402
from tmakit.kernels.gemm import CONFIGS  # noqa: E402

# group sizes whose only 128-row tile ends in its first half (30, 64, 1: the second consumer skips) or second
# half (65, 100), whose last tile of several ends in its first half (129, 300: no skip) or second (200), and empty
SIZES = [200, 30, 0, 64, 129, 300, 65, 1, 100]


def test_rule_takes_two_consumers_without_overlap_and_spares_16_bit_weight_streams():
    names = ("n256_s4_c1", "n256_s4_c1_d", "n192_s4_c2", "n128_s6_c1", "n256_s4_c1_ov1", "m64_n128_s8_c1_ov1")
    big = (8192, 4096, 7168, 64, 1, 2)  # fp8: always where the tile allows
    assert [kg.idle_consumers(CONFIGS[n], *big) for n in names] == [1, 1, 1, 1, 0, 0]  # overlap: serialized
    c = CONFIGS["n256_s4_c1"]
    # 16-bit, 64 experts x 128 rows x 4096x7168: 132 running tiles read 484 MB of B slabs, 122 flops per byte
    assert kg.idle_consumers(c, 8192, 4096, 7168, 64, 2, 2) == 0
    assert kg.idle_consumers(c, 8100, 4096, 7168, 64, 2, 2) == 0  # whatever the rows
    assert kg.idle_consumers(c, 8192, 2048, 2048, 32, 2, 2) == 1  # 32 x 256 x 2048x2048: 204 flops per byte
    moved = 2 * (32 * 2048 * 2048 + 8192 * 2048) + 2 * 8192 * 2048
    assert 2 * 8192 * 2048 * 2048 >= kg.IDLE_MIN_FLOP_PER_BYTE * moved
    # 113 x 117 x 5312x704: 98 flops per byte, but 132 tiles' B slabs (45 MiB) fit in the L2
    assert 132 * 256 * 704 * 2 <= kg.IDLE_L2_BYTES and kg.idle_consumers(c, 13221, 5312, 704, 113, 2, 2) == 1
    assert kg.idle_consumers(c, 13221, 5312, 704, 113, 2, 2, sms=200) == 0  # more running tiles: no longer


def test_plans_carry_the_rule_into_the_kernel_name():
    a = _T((8192, 2048), (2048, 1))
    b = _T((32, 2048, 2048), (2048 * 2048, 1, 2048))
    p = kg.plan_grouped(a, b, 32)
    assert p.config.bm == 128 and p.idle == 1 and kg.kernel_name(p).endswith(", 1, 0>")
    assert kg.kernel_name(dataclasses.replace(p, idle=0)).endswith(", 0, 0>")
    small = kg.plan_grouped(_T((400, 256), (256, 1)), _T((8, 256, 256), (256 * 256, 1, 256)), 8)
    assert small.config.bm == 64 and small.idle == 0


def test_idle_kernels_compile_without_serialized_wgmmas():
    pytest.importorskip("cuda.bindings.nvrtc")
    from tmakit import cuda as tkc
    from tmakit.kernels import KERNELS_DIR
    from tmakit.kernels.gemm_fp8 import CONFIGS as FP8

    names = []
    for name in kg.odd_pitch_tiles(kg.BF16_TILES, CONFIGS):
        c = CONFIGS[name]
        if c.bm == 128 and not c.overlap:
            for cfg in (c, kg.deferred(c, "bfloat16")):
                names.append(kg.kernel_name(kg.GroupedPlan(1, 8, 8, 1, 8, 8, 8, 8, "bfloat16", "bfloat16", cfg, 0,
                                                           idle=1)))
    for scaling, tiles in (("row", kg.FP8_TILES["two-level"]), ("block", kg.FP8_TILES["block"])):
        for name in tiles:
            c = FP8[name]
            if c.bm == 128:
                names.append(kg.kernel_name(kg.GroupedPlan(1, 8, 8, 1, 8, 8, 8, 8, "float8_e4m3fn", "bfloat16", c, 0,
                                                           "float8_e4m3fn", scaling, fast_accum=False, idle=1)))
    names = list(dict.fromkeys(names))
    assert len(names) >= 4
    comp = tkc.compile_file(KERNELS_DIR / "gemm_grouped.cu", name_expressions=names)
    assert "C75" not in comp.log and "serialized" not in comp.log, comp.log


@pytest.mark.parametrize("fp8", [False, True])
def test_skip_adds_no_wgmma_and_keeps_the_mainloop(fp8):
    """The skip loop issues no wgmma (the kernel's MMA count is IDLE = 0's), nothing spills, and the slab loop's
    wgmmas stay in one uninterrupted group (no more instructions between the first and last than without IDLE)."""
    pytest.importorskip("cuda.bindings.nvrtc")
    from tmakit import cuda as tkc
    from tmakit.cuda import sass
    from tmakit.kernels import KERNELS_DIR
    from tmakit.kernels.gemm_fp8 import CONFIGS as FP8

    if fp8:
        base = kg.GroupedPlan(1, 8, 8, 1, 8, 8, 8, 8, "float8_e4m3fn", "bfloat16", FP8["n192_s4_c1"], 0,
                              "float8_e4m3fn", "row", fast_accum=False)
    else:
        base = kg.GroupedPlan(1, 8, 8, 1, 8, 8, 8, 8, "bfloat16", "bfloat16", CONFIGS["n256_s4_c1"], 0)
    mma = "QGMMA" if fp8 else "HGMMA"
    spans, counts = [], []
    for idle in (0, 1):
        comp = tkc.compile_file(KERNELS_DIR / "gemm_grouped.cu",
                                name_expressions=[kg.kernel_name(dataclasses.replace(base, idle=idle))])
        try:
            lines = sass.disassemble(comp.cubin).splitlines()
        except tkc.RuntimeUnavailable:
            pytest.skip("no nvdisasm/cuobjdump")
        at = [i for i, ln in enumerate(lines) if mma in ln]
        counts.append(len(at))
        spans.append(at[3] - at[0])  # the slab's four k steps
        assert not any("LDL" in ln or "STL" in ln for ln in lines)
    assert counts[1] == counts[0] and spans[1] <= spans[0]


def _problem(n, k, dtype):
    ends, acc = [], 0
    for s in SIZES:
        acc += s
        ends.append(acc)
    g = torch.Generator(device="cuda").manual_seed(n + k)
    a = torch.randn(acc, k, device="cuda", generator=g).to(dtype)
    w = torch.randn(len(SIZES), n, k, device="cuda", generator=g).to(dtype)
    return a, w.transpose(-2, -1), torch.tensor(ends, dtype=torch.int32, device="cuda"), ends


def _both(plan, a, b, offs, extra=()):
    """Outputs of ``plan`` with IDLE 0 and 1 (poisoned first)."""
    outs = []
    for idle in (0, 1):
        out = torch.full((a.shape[0], plan.n), float("nan"), device="cuda", dtype=torch.bfloat16)
        p = dataclasses.replace(plan, idle=idle, ldc=out.stride(0))
        kg.launcher(p, a.data_ptr(), b.data_ptr(), out.data_ptr(), offs.data_ptr(), *extra)()
        outs.append(out)
    torch.cuda.synchronize()
    return outs


def _reference(a, b, ends):
    rows, lo = [], 0
    for g, hi in enumerate(ends):
        rows.append(a[lo:hi].float() @ b[g].float())
        lo = hi
    return torch.cat(rows)


@pytest.mark.gpu
@pytest.mark.parametrize("config", ["n256_s4_c1", "n256_s4_c1_d", "n192_s4_c1", "n128_s6_c1", "n256_s4_c2",
                                    "n192_s4_c2"])
def test_skip_changes_no_bit_bf16(config):
    a, b, offs, ends = _problem(384, 320, torch.bfloat16)
    p = kg.plan_grouped(a, b, len(SIZES), config=config)
    off, on = _both(p, a, b, offs)
    assert torch.equal(off.view(torch.int16), on.view(torch.int16))
    ref = _reference(a, b, ends)
    assert float((on.float() - ref).norm() / ref.norm()) < 1e-2


@pytest.mark.gpu
@pytest.mark.parametrize("scaling, config", [("row", "n192_s4_c1"), ("row", "n128_s6_c1"), ("block", "n192_s4_c1"),
                                            ("block", "n128_s5_c1")])
def test_skip_changes_no_bit_fp8(scaling, config):
    n, k = 384, 512
    a, b, offs, ends = _problem(n, k, torch.float8_e4m3fn)
    m, g = a.shape[0], len(SIZES)
    if scaling == "row":
        sa, sb = torch.rand(m, device="cuda") + 0.5, torch.rand(g, n, device="cuda") + 0.5
    else:
        sa, sb = torch.rand(m, k // 128, device="cuda") + 0.5, torch.rand(g, n // 128, k // 128, device="cuda") + 0.5
    p = kg.plan_grouped_fp8(a, b, sa, sb, g, config=config)
    assert p.idle == 1
    off, on = _both(p, a, b, offs, (sa.data_ptr(), sb.data_ptr()))
    assert torch.equal(off.view(torch.int16), on.view(torch.int16))
    assert not on.isnan().any()
