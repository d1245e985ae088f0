"""``tmakit.cuda.sass_patch``: rewriting the yield / reuse control bits of FFMA and FADD runs in a cubin.

Specified on a small NVRTC-compiled kernel (no GPU; skips without NVRTC): the ELF text sections are found, the
runs are the FFMA instructions the disassembler shows, each mode sets exactly the flags it names, nothing but
those control bits changes (the disassembly differs only in ``.reuse`` marks), and bad inputs raise.
"""

from __future__ import annotations

import struct

import pytest

from tmakit.cuda import sass_patch as sp
from tmakit.cuda.errors import RuntimeUnavailable

SOURCE = r"""
extern "C" __global__ void ffma_run(float* acc, const float* part, const float* scale) {
  const int t = threadIdx.x;
  float a[48], p[48];
  const float s0 = scale[2 * t], s1 = scale[2 * t + 1];
#pragma unroll
  for (int i = 0; i < 48; ++i) { a[i] = acc[i * 128 + t]; p[i] = part[i * 128 + t]; }
#pragma unroll
  for (int i = 0; i < 48; ++i) asm volatile("" : "+f"(a[i]), "+f"(p[i]));  // all loaded before the first FFMA
#pragma unroll
  for (int i = 0; i < 48; ++i) a[i] = fmaf(p[i], i < 24 ? s0 : s1, a[i]);
#pragma unroll
  for (int i = 0; i < 48; ++i) asm volatile("" : "+f"(a[i]));
#pragma unroll
  for (int i = 0; i < 48; ++i) acc[i * 128 + t] = a[i];
}
"""
_CONTROL = (1 << 45) | (0xF << 58)  # the bits a patch may touch in an instruction's high word


@pytest.fixture(scope="module")
def cubin(tmp_path_factory):
    pytest.importorskip("cuda.bindings.nvrtc")
    from tmakit import cuda as tkc

    return tkc.compile(SOURCE, "ffma_run.cu", cache=False).cubin


def test_text_section_and_ffma_runs(cubin):
    secs = sp.text_sections(cubin)
    assert list(secs) == [".text.ffma_run"]
    off, size = secs[".text.ffma_run"]
    runs = sp.runs(cubin)
    assert runs and all(len(r) >= 16 for r in runs)
    for r in runs:
        assert all(i.opcode == sp.FFMA and off <= i.offset < off + size for i in r)
        assert all(0 < b.offset - a.offset <= 32 for a, b in zip(r, r[1:]))  # at most one other instruction between
    assert not sp.runs(cubin, sp.FADD)  # this kernel adds nothing alone


def _members(cubin):
    return [i for r in sp.runs(cubin) for i in r]


@pytest.mark.parametrize("mode", sp.MODES)
def test_each_mode_sets_the_flags_it_names(cubin, mode):
    new, changed = sp.patch_runs(cubin, mode)
    before, after = _members(cubin), _members(new)
    assert [i.offset for i in before] == [i.offset for i in after] and [i.lo for i in before] == [i.lo for i in after]
    assert changed == sum(a.hi != b.hi for a, b in zip(before, after))
    for run in sp.runs(new):
        ys = [i.yields for i in run]
        if mode == "yield-all":
            assert all(ys) and not any(i.reuse for i in run)
        elif mode == "yield-none":
            assert not any(ys)
        elif mode == "yield-head":
            head = len(run) * 9 // 16
            assert all(ys[:head]) and not any(i.reuse for i in run[:head])
        else:
            every = int(mode.rsplit("-", 1)[1])
            assert ys == [i % every == 0 for i in range(len(run))]
        assert all(i.reuse == 0 for i in run if i.yields)  # a yielding instruction keeps no operand


@pytest.mark.parametrize("mode", [m for m in sp.MODES if m.startswith("reuse-")])
def test_reuse_flags_are_added_only_where_the_next_instruction_reads_the_same_register(cubin, mode):
    base, _ = sp.patch_runs(cubin, "yield-all")  # no reuse flags left to start from
    new, _ = sp.patch_runs(base, mode)
    added = [(i, j, slot) for r in sp.runs(new) for i, j in zip(r, r[1:]) for slot in range(3) if i.reuse >> slot & 1]
    assert added and all(j.offset == i.offset + 16 and j.sources[s] == i.sources[s] for i, j, s in added)


@pytest.mark.parametrize("mode", sp.MODES)
def test_nothing_but_control_bits_changes(cubin, mode):
    new, _ = sp.patch_runs(cubin, mode)
    assert len(new) == len(cubin)
    touched = {i.offset + 8 for i in _members(cubin)}
    for pos in range(0, len(cubin), 8):
        old_w, new_w = (struct.unpack_from("<Q", b, pos)[0] for b in (cubin, new))
        if pos in touched:
            assert (old_w ^ new_w) & ~_CONTROL == 0
        else:
            assert old_w == new_w, hex(pos)


def test_disassembly_differs_only_in_reuse_marks(cubin):
    from tmakit.cuda import sass

    new, changed = sp.patch_runs(cubin, "yield-all")
    try:
        old_text, new_text = sass.disassemble(cubin), sass.disassemble(new)
    except RuntimeUnavailable:
        pytest.skip("no nvdisasm/cuobjdump")
    assert changed and old_text.replace(".reuse", "") == new_text.replace(".reuse", "")
    base = sp.text_sections(cubin)[".text.ffma_run"][0]
    at = {f"/*{i.offset - base:04x}*/" for i in _members(cubin)}
    lines = [ln for ln in new_text.splitlines() if ln.split() and ln.split()[0] in at]
    assert len(lines) == len(at) and all("FFMA" in ln and ".reuse" not in ln for ln in lines)


def test_bad_inputs_raise(cubin):
    with pytest.raises(ValueError, match="yield-all"):
        sp.patch_runs(cubin, "yield-sometimes")
    with pytest.raises(RuntimeUnavailable, match="ELF64"):
        sp.text_sections(b"not a cubin at all")


def test_fp8_kernel_patch_gets_its_own_cache_key():
    from tmakit.cuda import Compiled
    from tmakit.kernels import gemm_fp8 as gf

    c = Compiled(cubin=b"\x7fELF", key="k")
    assert gf.patched(c, None) is c
