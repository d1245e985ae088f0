"""Seed 004's walk through CuTe's Blackwell tutorials 03 and 04 (and variants), against CuTe C++.

Each walk builds what the examples' host code and each CTA's prologue build -- TiledMMA, MMA tiler, smem layouts,
the cluster's VMNK layout, TMA atoms (2-SM multicast for 04), per-CTA tiles and MMA partitions, fragments,
``tma_partition``, multicast masks, transaction bytes, the TMEM->register copy -- and must print exactly what CuTe
printed (tests/data/cute_sm100_oracle.txt, blocks ``seed 03 | ...``, ``walk ... | ...``, ``mask ...``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tmakit as tk
from tmakit.layout.integer import to_str

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE / "oracle"))
from sm100_cases import MASK_COORDS, MASK_LAYOUT, MASK_MODES, WALK_CASES, WalkCase  # noqa: E402

GOLDEN = HERE / "data" / "cute_sm100_oracle.txt"
TYPES = {"half_t": tk.half_t, "bfloat16_t": tk.bfloat16_t, "tfloat32_t": tk.tfloat32_t}
GMEM_TYPES = {"half_t": np.float16, "bfloat16_t": "bf16", "tfloat32_t": "tf32"}
I = tk.Int  # noqa: E741


def _golden() -> dict[str, str]:
    out, label, lines = {}, None, []
    for line in GOLDEN.read_text().splitlines() + [">>> end"]:
        if line.startswith(">>> "):
            if label is not None:
                out[label] = "\n".join(lines)
            label, lines = line[4:], []
        else:
            lines.append(line)
    return out


GOLDEN_BLOCKS = _golden()


def _s(x) -> str:
    return to_str(x) if isinstance(x, tuple) else str(x).rstrip("\n")


def _gmem(t: str, rows: int, cols: int, major: str, addr: int):
    stride = (cols, I(1)) if major == "K" else (I(1), rows)
    return tk.make_tensor(tk.make_gmem_ptr(GMEM_TYPES[t], addr), tk.make_layout((rows, cols), stride))


def walk(w: WalkCase) -> dict[str, str]:
    """The blocks of one walk, as tmakit prints them."""
    c = w.mma
    ta, tb = TYPES[c.a], TYPES[c.b]
    gm, gn, gk = w.gemm
    m_a, m_b = _gmem(c.a, gm, gk, c.a_major, 0x100000), _gmem(c.b, gn, gk, c.b_major, 0x200000)
    m_c = tk.make_tensor(tk.make_gmem_ptr(np.float32, 0x400000), tk.make_layout((gm, gn), (gn, I(1))))
    op = getattr(tk, c.op)(ta, tb, np.float32, c.M, c.N, getattr(tk.UMMA.Major, c.a_major),
                           getattr(tk.UMMA.Major, c.b_major))
    tm = tk.make_tiled_mma(op)
    tiler = (tk.tile_size(tm, 0), tk.tile_size(tm, 1), tk.tile_size(tm, 2) * I(c.kb))
    sh_a = tk.partition_shape_A(tm, (tiler[0], tiler[2]))
    sh_b = tk.partition_shape_B(tm, (tiler[1], tiler[2]))
    s_a = tk.UMMA.tile_to_mma_shape(getattr(tk.UMMA, f"Layout_{c.sw_a}_Atom")(ta), sh_a)
    s_b = tk.UMMA.tile_to_mma_shape(getattr(tk.UMMA, f"Layout_{c.sw_b}_Atom")(tb), sh_b)
    vmnk = tk.tiled_divide(tk.make_layout(tuple(I(x) for x in w.cluster)), (tm.AtomThrID,))
    two = c.cta_group == 2
    if two:
        op = tk.SM100_TMA_2SM_LOAD_MULTICAST if w.multicast else tk.SM100_TMA_2SM_LOAD
        tma_a = tk.make_tma_atom_A_sm100(op, m_a, s_a, tiler, tm, vmnk)
        tma_b = tk.make_tma_atom_B_sm100(op, m_b, s_b, tiler, tm, vmnk)
    else:
        op = tk.SM90_TMA_LOAD_MULTICAST if w.multicast else tk.SM90_TMA_LOAD
        n_a, n_b = (int(tk.size(vmnk, 2)), int(tk.size(vmnk, 1))) if w.multicast else (1, 1)
        tma_a = tk.make_tma_atom(op, m_a, s_a, (tiler[0], tiler[2]), n_a)
        tma_b = tk.make_tma_atom(op, m_b, s_b, (tiler[1], tiler[2]), n_b)
    m_a_tma, m_b_tma = tma_a.get_tma_tensor(m_a.shape), tma_b.get_tma_tensor(m_b.shape)
    host = [tm, tiler, sh_a, sh_b, s_a, s_b, vmnk] + ([tma_a, tma_b] if two else []) + [m_a_tma, m_b_tma]
    out = {f"{w.name} | host": "\n".join(_s(x) for x in host)}
    v_size = int(tk.size(vmnk, 0))
    for r in w.ranks:
        bx, by = r % w.cluster[0], r // w.cluster[0]
        mc_vmnk = (bx % v_size, bx // v_size, by, tk._)
        mc = mc_vmnk[1:]
        g_a = tk.local_tile(m_a_tma, tiler, mc, (1, None, 1))
        g_b = tk.local_tile(m_b_tma, tiler, mc, (None, 1, 1))
        g_c = tk.local_tile(m_c, tiler, mc, (1, 1, None))
        cta = tm.get_slice(mc_vmnk[0])
        t_cg_a, t_cg_b, t_cg_c = cta.partition_A(g_a), cta.partition_B(g_b), cta.partition_C(g_c)
        t_cs_a = tk.make_tensor(tk.make_smem_ptr(ta, 0x400), s_a)
        t_cs_b = tk.make_tensor(tk.make_smem_ptr(tb, 0x20400), s_b)
        t_cr_a, t_cr_b = cta.make_fragment_A(t_cs_a), cta.make_fragment_B(t_cs_b)
        acc = cta.make_fragment_C(t_cg_c)
        cc = vmnk.get_flat_coord(r)
        t_ag_a, t_as_a = tk.tma_partition(tma_a, tk.get(cc, 2), tk.make_layout(tk.size(vmnk, 2)),
                                          tk.group_modes(t_cs_a, 0, 3), tk.group_modes(t_cg_a, 0, 3))
        t_bg_b, t_bs_b = tk.tma_partition(tma_b, tk.get(cc, 1), tk.make_layout(tk.size(vmnk, 1)),
                                          tk.group_modes(t_cs_b, 0, 3), tk.group_modes(t_cg_b, 0, 3))
        scale = v_size if two else 1
        nbytes = scale * int(tk.size(t_as_a)) * tk.sizeof_bits(ta) // 8 + \
            scale * int(tk.size(t_bs_b)) * tk.sizeof_bits(tb) // 8
        mask_a = tk.create_tma_multicast_mask(vmnk, cc, (2,))
        mask_b = tk.create_tma_multicast_mask(vmnk, cc, (1,))
        mask_c = tk.create_tma_multicast_mask(vmnk, cc, (0, 1)) | tk.create_tma_multicast_mask(vmnk, cc, (0, 2))
        thr = tk.make_tmem_copy(getattr(tk, w.t2r_op)(), acc).get_slice(42)
        items = [g_a, g_b, g_c, t_cg_a, t_cg_b, t_cg_c, t_cs_a, t_cs_b, t_cr_a, t_cr_b, acc, cc, t_ag_a, t_as_a,
                 t_bg_b, t_bs_b, f"bytes {nbytes} masks {mask_a:x} {mask_b:x} {mask_c:x}",
                 thr.partition_S(acc), thr.partition_D(t_cg_c)]
        out[f"{w.name} | cta {r}"] = "\n".join(_s(x) for x in items)
    return out


WALK_LABELS = [(w, label) for w in WALK_CASES for label in GOLDEN_BLOCKS if label.startswith(w.name + " | ")]


def test_every_walk_is_in_the_golden_file():
    for w in WALK_CASES:
        assert f"{w.name} | host" in GOLDEN_BLOCKS
        for r in w.ranks:
            assert f"{w.name} | cta {r}" in GOLDEN_BLOCKS


_WALKS: dict = {}


@pytest.mark.parametrize("w,label", WALK_LABELS, ids=[label for _, label in WALK_LABELS])
def test_walk_matches_cute(w, label):
    if w.name not in _WALKS:
        _WALKS[w.name] = walk(w)
    assert _WALKS[w.name][label] == GOLDEN_BLOCKS[label]


MASKS = [(crd, modes) for crd in MASK_COORDS for modes in MASK_MODES]


@pytest.mark.parametrize("crd,modes", MASKS)
def test_multicast_mask_matches_cute(crd, modes):
    layout = tk.make_layout(tuple(I(s) for s in MASK_LAYOUT[0]), tuple(I(d) for d in MASK_LAYOUT[1]))
    got = tk.create_tma_multicast_mask(layout, crd, modes)
    assert f"{got:x}" == GOLDEN_BLOCKS[f"mask {crd} modes {modes}"]


def test_seed_mask_b_follows_cute_not_the_seed_text():
    """The seed's trace writes tma_mcast_mask_b = 0b110011 for CTA (0,1,2,0) of (2,2,4,1):(8,4,1,0); CuTe computes
    0x44 (CTAs 2 and 6: same V and N, both M) and tmakit follows CuTe."""
    layout = tk.make_layout((I(2), I(2), I(4), I(1)), (I(8), I(4), I(1), I(0)))
    assert tk.create_tma_multicast_mask(layout, (0, 1, 2, 0), (1,)) == 0x44
    assert tk.create_tma_multicast_mask(layout, (0, 1, 2, 0), (2,)) == 0xF0
    assert GOLDEN_BLOCKS["mask (0, 1, 2, 0) modes (1,)"] == "44"
