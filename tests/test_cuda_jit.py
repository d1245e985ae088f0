"""NVRTC JIT without a GPU: every package kernel compiles for sm_90a, its SASS has the TMA instructions, the device
header compiles (each file alone, everything together, debug mode), and compile errors point at the source."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from tmakit import cuda as tkc  # noqa: E402
from tmakit.cuda import sass  # noqa: E402
from tmakit.cuda.nvrtc import PACKAGE_INCLUDE  # noqa: E402
from tmakit.kernels import KERNELS_DIR  # noqa: E402

HEADERS = sorted((PACKAGE_INCLUDE / "tmakit").glob("*.cuh"))
KERNELS = sorted(KERNELS_DIR.glob("*.cu"))

# Instantiates every wrapper of the device header; its SASS must show every TMA instruction family.
EXHAUSTIVE = r"""
#include <tmakit/all.cuh>
using namespace tmakit;

template <int R>
__device__ void all_rank(const TmaDesc* d, u32 dst, u32 bar, const i32* c, u16 mask, u64 pol) {
  tma_load_tile<R>(dst, d, bar, c[0], c[1], c[2], c[3], c[4]);
  tma_load_tile_hint<R>(dst, d, bar, pol, c[0], c[1], c[2], c[3], c[4]);
  tma_load_tile_mc<R>(dst, d, bar, mask, c[0], c[1], c[2], c[3], c[4]);
  tma_load_tile_mc_hint<R>(dst, d, bar, mask, pol, c[0], c[1], c[2], c[3], c[4]);
  tma_store_tile<R>(d, dst, c[0], c[1], c[2], c[3], c[4]);
  tma_store_tile_hint<R>(d, dst, pol, c[0], c[1], c[2], c[3], c[4]);
  tma_prefetch_tile<R>(d, c[0], c[1], c[2], c[3], c[4]);
  tma_prefetch_tile_hint<R>(d, pol, c[0], c[1], c[2], c[3], c[4]);
  tma_reduce_tile<ReduceOp::Add, R>(d, dst, c[0], c[1], c[2], c[3], c[4]);
  tma_reduce_tile_hint<ReduceOp::Xor, R>(d, dst, pol, c[0], c[1], c[2], c[3], c[4]);
}
template <int R>
__device__ void all_im2col(const TmaDesc* d, u32 dst, u32 bar, const i32* c, u16 mask, u64 pol) {
  tma_load_im2col<R>(dst, d, bar, c[0], c[1], c[2], c[3], c[4], 1, 2, 3);
  tma_load_im2col_hint<R>(dst, d, bar, pol, c[0], c[1], c[2], c[3], c[4], 1, 2, 3);
  tma_load_im2col_mc<R>(dst, d, bar, mask, c[0], c[1], c[2], c[3], c[4], 1, 2, 3);
  tma_load_im2col_mc_hint<R>(dst, d, bar, mask, pol, c[0], c[1], c[2], c[3], c[4], 1, 2, 3);
  tma_store_im2col<R>(d, dst, c[0], c[1], c[2], c[3], c[4]);
  tma_prefetch_im2col<R>(d, c[0], c[1], c[2], c[3], c[4], 1, 2, 3);
  tma_reduce_im2col<ReduceOp::Min, R>(d, dst, c[0], c[1], c[2], c[3], c[4]);
}

extern "C" __global__ void exhaustive(const __grid_constant__ TmaDesc desc, const i32* c, TmaDesc* gmaps, int op,
                                      u16 mask, u64* out) {
  __shared__ __align__(1024) u8 buf[4096];
  __shared__ __align__(128) TmaDesc smap;
  __shared__ __align__(8) u64 bar;
  u32 dst = smem_u32(buf), b = smem_u32(&bar);
  u64 pol = policy_evict_first() ^ policy_evict_last() ^ CACHE_EVICT_NORMAL;
  if (elect_one()) {
    mbarrier_init(b, 1);
    fence_mbarrier_init();
    prefetch_tensormap(&desc);
    all_rank<1>(&desc, dst, b, c, mask, pol);
    all_rank<2>(&desc, dst, b, c, mask, pol);
    all_rank<3>(&desc, dst, b, c, mask, pol);
    all_rank<4>(&desc, dst, b, c, mask, pol);
    all_rank<5>(&desc, dst, b, c, mask, pol);
    all_im2col<3>(&desc, dst, b, c, mask, pol);
    all_im2col<4>(&desc, dst, b, c, mask, pol);
    all_im2col<5>(&desc, dst, b, c, mask, pol);
    tma_reduce_tile_n(op, 2, &desc, dst, c);
    mbarrier_arrive_expect_tx(b, 128);
    mbarrier_expect_tx(b, 16);
    mbarrier_arrive(b);
    mbarrier_arrive_remote(b, 1);
    mbarrier_arrive_expect_tx_remote(b, 1, 64);
    bulk_commit_group();
    bulk_wait_group_read<0>();
    bulk_wait_group<1>();
  }
  fence_proxy_async_smem();
  fence_proxy_async_global();
  fence_proxy_async();
  fence_cluster();
  mbarrier_wait(b, 0);
  mbarrier_wait_cluster(b, 1);
  cluster_sync();
  cluster_arrive_relaxed();
  cluster_wait();
  out[0] = cluster_ctarank() + cluster_nctarank() + cluster_ctaid_x() + cluster_ctaid_y() + cluster_ctaid_z() +
           cluster_nctaid_x() + cluster_nctaid_y() + cluster_nctaid_z() + cluster_id_x() + cluster_id_y() +
           cluster_id_z() + ncluster_id_x() + ncluster_id_y() + ncluster_id_z() + is_explicit_cluster() +
           cta_rank_of(b) + lane_id() + warp_id() + globaltimer_ns() + mbarrier_raw_state(b) +
           (u64)map_shared_rank(buf, 1);
  if (threadIdx.x < 32) {
    if (threadIdx.x == 0) {
      for (int i = 0; i < 16; ++i) smap.w[i] = desc.w[i];
      u32 sm = smem_u32(&smap);
      tensormap_replace_global_address(sm, (u64)out);
      tensormap_replace_rank(sm, 1);
      tensormap_replace_box_dim<0>(sm, 64);
      tensormap_replace_global_dim<1>(sm, 1024);
      tensormap_replace_global_stride<0>(sm, 4096);
      tensormap_replace_element_stride<1>(sm, 2);
      tensormap_replace_elemtype<9>(sm);
      tensormap_replace_interleave_layout<0>(sm);
      tensormap_replace_swizzle_mode<3>(sm);
      tensormap_replace_fill_mode<0>(sm);
    }
    __syncwarp();
    tensormap_cp_fenceproxy(gmaps + blockIdx.x, smem_u32(&smap));
  }
  fence_proxy_tensormap_release();
  tensormap_acquire(gmaps + blockIdx.x);
  fence_proxy_tensormap_acquire(gmaps + blockIdx.x);
  mbarrier_inval(b);
}
"""

TMA_SASS = ("UTMALDG", "UTMASTG", "UTMAREDG", "UTMAPF", "UTMACCTL")


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TMAKIT_CACHE_DIR", str(tmp_path / "cache"))


def test_there_are_headers_and_kernels():
    names = {h.name for h in HEADERS}
    assert {"tma.cuh", "mbarrier.cuh", "cluster.cuh", "fence.cuh", "tensormap.cuh", "debug.cuh"} <= names
    assert any(k.name == "seeds.cu" for k in KERNELS)


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda p: p.name)
def test_package_kernel_compiles_for_sm90a(kernel):
    c = tkc.compile_file(kernel, cache=False)
    assert c.cubin[:4] == b"\x7fELF"
    text = sass.disassemble(c.cubin)
    assert ".target\tsm_90a" in text or "sm_90a" in text


def test_seed_kernels_sass_has_tma_instructions():
    c = tkc.compile_file(KERNELS_DIR / "seeds.cu", cache=False)
    text = sass.disassemble(c.cubin)
    ops = sass.opcodes(text)
    for op in TMA_SASS:
        assert ops[op] > 0, f"{op} missing from seeds.cu SASS"
    assert ops["SYNCS"] > 0  # mbarrier init / arrive / try_wait
    assert ops["UCGABAR_ARV"] > 0 and ops["UCGABAR_WAIT"] > 0  # cluster barrier
    for name in ("tmakit_seed_load", "tmakit_seed_store", "tmakit_seed_copy"):
        assert f".text.{name}" in text
    # each of the 8 reductions (x 5 ranks) is its own UTMAREDG
    assert ops["UTMAREDG"] >= 40


@pytest.mark.parametrize("debug", [False, True])
def test_every_header_wrapper_compiles_and_maps_to_sass(debug):
    c = tkc.compile(EXHAUSTIVE, "exhaustive.cu", cache=False, debug=debug)
    ops = sass.opcodes(c.cubin)
    assert ops["UTMALDG"] == 5 * 4 + 3 * 4  # tile (4 variants x 5 ranks) + im2col (4 variants x 3 ranks)
    assert ops["UTMASTG"] >= 5 * 2 + 3
    assert ops["UTMAREDG"] >= 5 * 2 + 3 + 1
    assert ops["UTMAPF"] >= 5 * 2 + 3
    assert ops["UTMACCTL"] >= 1  # prefetch.tensormap
    assert ops["ELECT"] >= 1 and ops["SYNCS"] > 0


@pytest.mark.parametrize("header", HEADERS, ids=lambda p: p.name)
def test_each_header_compiles_alone(header):
    src = f"#include <tmakit/{header.name}>\nextern \"C\" __global__ void k() {{}}\n"
    tkc.compile(src, f"only_{header.stem}.cu", cache=False)


@pytest.mark.parametrize("header", HEADERS, ids=lambda p: p.name)
def test_every_asm_statement_names_its_ptx(header):
    """Each wrapper documents the PTX it emits: a ``PTX:`` comment in every header that has inline asm."""
    text = header.read_text()
    if "asm" in text:
        assert "PTX:" in text


def test_debug_mode_bounds_waits():
    src = r"""
#include <tmakit/mbarrier.cuh>
extern "C" __global__ void hang(unsigned* ok) {
  __shared__ __align__(8) unsigned long long bar;
  unsigned b = tmakit::smem_u32(&bar);
  if (threadIdx.x == 0) tmakit::mbarrier_init(b, 2);
  __syncthreads();
  ok[threadIdx.x] = tmakit::mbarrier_wait(b, 0);
}
"""
    plain = sass.disassemble(tkc.compile(src, "hang.cu", cache=False, debug=False).cubin)
    dbg = sass.disassemble(tkc.compile(src, "hang.cu", cache=False, debug=True).cubin)
    assert "vprintf" not in plain
    assert "vprintf" in dbg and "GLOBALTIMER" in dbg.upper()


def test_compile_error_shows_offending_lines():
    src = "#include <tmakit/tma.cuh>\n\nextern \"C\" __global__ void k(int* p) {\n  int x = 1;\n" \
          "  p[0] = not_declared + x;\n}\n"
    with pytest.raises(tkc.CompileError) as ei:
        tkc.compile(src, "broken.cu", cache=False)
    e = ei.value
    msg = str(e)
    assert "broken.cu(5)" in msg and "not_declared" in msg
    assert ">     5 |   p[0] = not_declared + x;" in msg
    assert "      4 |   int x = 1;" in msg  # context line
    assert e.diagnostics and e.diagnostics[0][:2] == ("broken.cu", 5)
    assert "--include-path" not in msg.splitlines()[0]


def test_compile_error_in_header_shows_header_lines(tmp_path):
    inc = tmp_path / "inc"
    (inc / "mine").mkdir(parents=True)
    (inc / "mine" / "bad.cuh").write_text("#pragma once\n__device__ int f() {\n  return oops;\n}\n")
    src = "#include <mine/bad.cuh>\nextern \"C\" __global__ void k(int* p) { p[0] = f(); }\n"
    with pytest.raises(tkc.CompileError) as ei:
        tkc.compile(src, "uses_bad.cu", include_dirs=[inc], cache=False)
    assert ">     3 |   return oops;" in str(ei.value)


def test_include_dirs_found_without_toolkit():
    from tmakit.cuda import nvrtc

    dirs = nvrtc.include_dirs()
    assert dirs[0] == str(PACKAGE_INCLUDE)
    assert Path(dirs[0], "tmakit", "tma.cuh").exists()
    assert nvrtc.compiler_id().startswith(("nvrtc-", "nvcc-"))


def test_name_expressions_for_templates():
    src = "template <int N> __global__ void fill(int* p) { p[threadIdx.x] = N; }\n"
    c = tkc.compile(src, "tmpl.cu", name_expressions=["fill<3>"], cache=False)
    assert c.symbol("fill<3>").startswith("_Z")


def test_nvcc_is_optional(monkeypatch, tmp_path):
    """TMAKIT_NVCC=1 compiles with nvcc when one is installed (never required); the cache key names the compiler."""
    import shutil

    from tmakit.cuda import cache, nvrtc

    if not shutil.which("nvcc") and not os.environ.get("CUDA_HOME"):
        pytest.skip("no nvcc here (it is optional)")
    monkeypatch.setenv("TMAKIT_NVCC", "1")
    nvrtc.compiler_id.cache_clear()
    cache.clear_memory_cache()
    try:
        c = tkc.compile_file(KERNELS_DIR / "seeds.cu")
        assert nvrtc.compiler_id().startswith("nvcc-")
        assert sass.opcodes(c.cubin)["UTMALDG"] > 0
    finally:
        monkeypatch.delenv("TMAKIT_NVCC")
        nvrtc.compiler_id.cache_clear()
        cache.clear_memory_cache()


def test_a_compile_leaves_python_bytes_intact():
    """A clean compile has a 1-byte log (its NUL). Reading it into ``b" " * 1`` -- CPython's shared ``b" "`` object --
    turned every ``b" "`` in the process into ``b"\\x00"`` and broke ``import torch`` afterwards (found on the H200).
    The log and the cubin must be read into fresh writable buffers."""
    space = b" "
    c = tkc.compile('extern "C" __global__ void intact() {}', "intact.cu", cache=False)
    assert space == b"\x20" and b" ".join([b"a", b"b"]) == b"a\x20b"
    assert c.cubin[:4] == b"\x7fELF" and c.log == ""


# ------------------------------------------------------------------------------------------------ bad inputs
@pytest.mark.parametrize("kwargs,words", [
    ({"source": 'extern "C" __global__ void k() {}\n\0 garbage that NVRTC never sees'}, "NUL byte (line 2)"),
    ({"source": None}, "source must be str, not NoneType"),
    ({"source": b'extern "C" __global__ void k() {}'}, ".decode()"),
    ({"options": "-DX=1"}, "options=['-DX=1']"),
    ({"options": ["-DX=1", None]}, "options[1] must be str"),
    ({"options": ["-DX=1\0"]}, "NUL byte"),
    ({"name_expressions": "k<int>"}, "wrap it in a list"),
    ({"include_dirs": "/usr/include"}, "wrap it in a list"),
    ({"include_dirs": [3]}, "include_dirs[0] must be a str or path"),
    ({"name": b"k.cu"}, "name must be str, not bytes"),
])
def test_bad_compile_inputs_are_named(kwargs, words):
    """What NVRTC would misread (a NUL truncates the source, a str of options is split into characters) is refused
    before the compiler sees it, with the fix."""
    from tmakit.cuda import CompileInputError

    args = {"source": 'extern "C" __global__ void k() {}', **kwargs}
    with pytest.raises(CompileInputError, match=None) as e:
        tkc.compile(args.pop("source"), **args, cache=False)
    assert words in str(e.value) and "Fix:" in str(e.value)
    assert isinstance(e.value, (TypeError, ValueError))


def test_nvrtc_compile_refuses_a_nul_byte_too():
    from tmakit.cuda import CompileInputError
    from tmakit.cuda.nvrtc import default_options, nvrtc_compile

    with pytest.raises(CompileInputError, match="NUL"):
        nvrtc_compile('extern "C" __global__ void k() {}\0', "k.cu", default_options())
