"""Blackwell device code without Blackwell hardware: tcgen05.cuh and the tutorial kernels compile for sm_100a with
the NVRTC wheel, and their SASS holds the tensor-core (UTCHMMA), TMEM (LDTM / STTM / UTCATOMSWS), commit (UTCBAR) and
2-SM TMA (UTMALDG ... 2CTA) instructions. Nothing here runs a kernel."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from tmakit import cuda as tkc  # noqa: E402
from tmakit.cuda import sass  # noqa: E402
from tmakit.kernels import KERNELS_DIR  # noqa: E402

BLACKWELL = sorted((KERNELS_DIR / "blackwell").glob("*.cu"))

EVERY_WRAPPER = r"""
#include <tmakit/tcgen05.cuh>
using namespace tmakit;
extern "C" __global__ void every_tcgen05(const __grid_constant__ TmaDesc desc, u64 da, u64 db, u32 idesc, u32 acc,
                                         u16 mask, u32* out) {
  __shared__ __align__(1024) u8 buf[4096];
  __shared__ __align__(16) u32 slot;
  __shared__ __align__(8) u64 bar;
  u32 s = smem_u32(&slot), b = smem_u32(&bar);
  if (threadIdx.x < 32) { tmem_alloc(s, 256); tmem_relinquish_alloc_permit(); }
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  u32 t = slot;
  if (threadIdx.x == 0) {
    umma_f16_ss(t, da, db, idesc, acc);
    umma_tf32_ss(t, da, db, idesc, acc);
    umma_f16_ts(t, t + 128, db, idesc, acc);
    umma_tf32_ts(t, t + 128, db, idesc, acc);
    umma_commit(b);
    umma_commit_multicast(b, mask);
  }
  u32 r1[1], r2[2], r4[4];
  u32 q = t + ((threadIdx.x / 32 * 32) << 16);
  tmem_ld_32x32b_x1(q, r1); tmem_ld_32x32b_x4(q, r4); tmem_wait_ld();
  tmem_st_32x32b_x1(q, r1); tmem_st_32x32b_x4(q, r4);
  tmem_ld_16x64b_x1(q, r1); tmem_ld_16x128b_x1(q, r2); tmem_ld_16x256b_x1(q, r4); tmem_wait_ld();
  tmem_st_16x64b_x1(q, r1); tmem_st_16x128b_x1(q, r2); tmem_st_16x256b_x1(q, r4); tmem_wait_st();
  out[threadIdx.x] = r1[0] + r2[1] + r4[3] + u32(umma_smem_desc(smem_u32(buf), 16, 1024, 2));
  __syncthreads();
  if (threadIdx.x < 32) tmem_dealloc(t, 256);
}

extern "C" __global__ void every_tcgen05_2sm(const __grid_constant__ TmaDesc desc, u64 da, u64 db, u32 idesc, u32 acc,
                                             u16 mask, u32* out) {
  __shared__ __align__(1024) u8 buf[4096];
  __shared__ __align__(16) u32 slot;
  __shared__ __align__(8) u64 bar;
  u32 s = smem_u32(&slot), b = smem_u32(&bar);
  if (threadIdx.x < 32) { tmem_alloc_2sm(s, 256); tmem_relinquish_alloc_permit_2sm(); }
  __syncthreads();
  u32 t = slot;
  if (threadIdx.x == 0) {
    tma_load_2sm_2d(smem_u32(buf), &desc, b, 0, 0);
    tma_load_2sm_mc_2d(smem_u32(buf), &desc, b, mask, 0, 64);
    tma_load_2sm_mc_3d(smem_u32(buf), &desc, b, mask, 0, 64, 1);
    umma_f16_ss_2sm(t, da, db, idesc, acc);
    umma_tf32_ss_2sm(t, da, db, idesc, acc);
    umma_f16_ts_2sm(t, t + 128, db, idesc, acc);
    umma_tf32_ts_2sm(t, t + 128, db, idesc, acc);
    umma_commit_2sm(b);
    umma_commit_multicast_2sm(b, mask);
  }
  out[threadIdx.x] = t;
  __syncthreads();
  if (threadIdx.x < 32) tmem_dealloc_2sm(t, 256);
}
"""


def sass_ops(cubin) -> set[str]:
    """Tensor-core, TMEM and TMA SASS mnemonics with their modifiers (``UTCHMMA.2CTA``, ``LDTM.16dp256bit``...)."""
    return set(re.findall(r"\b((?:UTC\w+|LDTM|STTM|UTMALDG)(?:\.\w+)*)", sass.disassemble(cubin)))


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TMAKIT_CACHE_DIR", str(tmp_path / "cache"))


def test_the_tutorial_kernels_exist():
    assert {k.name for k in BLACKWELL} == {"mma_tma_multicast_sm100.cu", "mma_tma_2sm_sm100.cu"}


def test_tutorial_03_sass():
    c = tkc.compile_file(KERNELS_DIR / "blackwell" / "mma_tma_multicast_sm100.cu", arch="sm_100a", cache=False)
    ops = sass_ops(c.cubin)
    counts = sass.opcodes(c.cubin)
    assert "UTCHMMA" in ops and not any("2CTA" in o for o in ops)  # tcgen05.mma.cta_group::1.kind::f16
    assert counts["UTCHMMA"] == 4  # the unrolled K-blocks of one K-tile
    assert "UTCBAR.MULTICAST" in ops  # tcgen05.commit ... multicast::cluster
    assert "UTMALDG.2D.MULTICAST" in ops  # SM90_TMA_LOAD_MULTICAST
    assert any(o.startswith("LDTM") for o in ops)  # tcgen05.ld.32x32b
    assert any(o.startswith("UTCATOMSWS") and "FIND_AND_SET" in o for o in ops)  # tcgen05.alloc
    assert counts["UCGABAR_ARV"] and counts["UCGABAR_WAIT"]  # cluster_sync


def test_tutorial_04_sass():
    c = tkc.compile_file(KERNELS_DIR / "blackwell" / "mma_tma_2sm_sm100.cu", arch="sm_100a", cache=False)
    ops = sass_ops(c.cubin)
    assert "UTCHMMA.2CTA" in ops  # tcgen05.mma.cta_group::2
    assert "UTCBAR.2CTA.MULTICAST" in ops  # umma_arrive_multicast_2x1SM
    assert "UTMALDG.2D.MULTICAST.2CTA" in ops  # SM100_TMA_2SM_LOAD_MULTICAST
    assert any(o.startswith("UTCATOMSWS.2CTA") for o in ops)  # tcgen05.alloc.cta_group::2
    assert any(o.startswith("LDTM") for o in ops)


def sections(text: str) -> dict[str, list[str]]:
    """Tensor-core / TMEM / TMA mnemonics (with modifiers) of each kernel's ``.text.<name>`` section."""
    out = {}
    for sec in re.split(r"\n\s*\.section\s+", text):
        name = sec.split(",")[0].split()[0] if sec.strip() else ""
        if name.startswith(".text."):
            out[name[6:]] = re.findall(r"\b((?:UTC\w+|LDTM|STTM|UTMALDG)(?:\.\w+)*)", sec)
    return out


def test_every_tcgen05_wrapper_reaches_sass():
    got = sections(sass.disassemble(tkc.compile(EVERY_WRAPPER, "every.cu", arch="sm_100a", cache=False).cubin))
    one, two = got["every_tcgen05"], got["every_tcgen05_2sm"]
    assert one.count("UTCHMMA") == 4  # f16 / tf32 x SS / TS, cta_group::1 (the kind lives in the descriptor)
    assert two.count("UTCHMMA.2CTA") == 4
    assert {"LDTM", "LDTM.x4", "LDTM.16dp64bit", "LDTM.16dp128bit", "LDTM.16dp256bit"} <= set(one)
    assert {"STTM", "STTM.x4", "STTM.16dp64bit", "STTM.16dp128bit", "STTM.16dp256bit"} <= set(one)
    assert {"UTCBAR", "UTCBAR.MULTICAST"} <= set(one) and {"UTCBAR.2CTA", "UTCBAR.2CTA.MULTICAST"} <= set(two)
    assert "UTCATOMSWS.FIND_AND_SET.ALIGN" in one and "UTCATOMSWS.2CTA.FIND_AND_SET.ALIGN" in two  # alloc
    assert "UTCATOMSWS.AND" in one and "UTCATOMSWS.AND" in two  # dealloc / relinquish
    assert {"UTMALDG.2D.2CTA", "UTMALDG.2D.MULTICAST.2CTA", "UTMALDG.3D.MULTICAST.2CTA"} <= set(two)


def test_tcgen05_header_is_empty_below_sm100():
    """Hopper builds may include the header: it declares nothing there, so using a wrapper is a compile error."""
    tkc.compile("#include <tmakit/tcgen05.cuh>\nextern \"C\" __global__ void k() {}\n", "h.cu", cache=False)
    with pytest.raises(tkc.CompileError, match="tmem_alloc"):
        tkc.compile("#include <tmakit/tcgen05.cuh>\nextern \"C\" __global__ void k(unsigned s) "
                    "{ tmakit::tmem_alloc(s, 32); }\n", "h2.cu", cache=False)
