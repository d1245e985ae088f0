"""tmakit's SM100 host algebra against CuTe itself: every block of tests/data/cute_sm100_oracle.txt must print
exactly what CuTe printed (TiledMMA, partition shapes, smem layouts, per-CTA partitions, fragments, descriptors).

The golden file comes from tests/oracle/regen_sm100.sh (CuTe C++ compiled on the host; no GPU); this test only
reads it and rebuilds each case (tests/oracle/sm100_cases.py) with tmakit.
"""

from __future__ import annotations

import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

import tmakit as tk
from tmakit.layout.integer import to_str

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE / "oracle"))
from golden import parse_blocks  # noqa: E402
from sm100_cases import MMA_CASES, SEED_CASES, MmaCase, tmem_candidates  # noqa: E402

GOLDEN = HERE / "data" / "cute_sm100_oracle.txt"
TYPES = {"half_t": tk.half_t, "bfloat16_t": tk.bfloat16_t, "tfloat32_t": tk.tfloat32_t,
         "float_e4m3_t": tk.float_e4m3_t, "float_e5m2_t": tk.float_e5m2_t, "float": np.float32}
I = tk.Int  # noqa: E741


_parse = parse_blocks


CASES = {c.name: c for c in SEED_CASES + MMA_CASES}
TMEM_CASES = {t.name: t for t in tmem_candidates()}
# the walk and mask blocks of the same file are tests/test_mma_sm100_seed.py's
BLOCKS = [(label, text) for label, text in _parse(GOLDEN.read_text())
          if label in TMEM_CASES or label.split(" | ")[0] in CASES]


def _s(x) -> str:
    return to_str(x) if isinstance(x, tuple) else str(x)


def _desc(d) -> str:
    return f"desc {int(d):016x}"


@lru_cache(maxsize=None)
def _build(c: MmaCase) -> dict:
    tm = tk.make_tiled_mma(_op(c))
    tiler = (tk.tile_size(tm, 0) * I(c.nm), tk.tile_size(tm, 1) * I(c.nn), tk.tile_size(tm, 2) * I(c.kb))
    sh_a = tk.partition_shape_A(tm, (tiler[0], tiler[2]))
    sh_b = tk.partition_shape_B(tm, (tiler[1], tiler[2]))
    sh_c = tk.partition_shape_C(tm, (tiler[0], tiler[1]))
    s_b = tk.UMMA.tile_to_mma_shape(getattr(tk.UMMA, f"Layout_{c.sw_b}_Atom")(TYPES[c.b]), sh_b)
    out = {"tiled_mma": str(tm).rstrip("\n"), "shapes": "\n".join(_s(x) for x in (tiler, sh_a, sh_b, sh_c)),
           "idesc": f"idesc {tm.op.idesc:08x}"}
    if c.a_from_tmem:
        out["smem"] = str(s_b)
    else:
        s_a = tk.UMMA.tile_to_mma_shape(getattr(tk.UMMA, f"Layout_{c.sw_a}_Atom")(TYPES[c.a]), sh_a)
        out["smem"] = f"{s_a}\n{s_b}"
    bm, bn, bk = (int(t) for t in tiler)
    g_a = tk.local_tile(tk.make_identity_tensor((2 * bm, 3 * bk)), tiler, (1, 0, tk._), (1, None, 1))
    g_b = tk.local_tile(tk.make_identity_tensor((2 * bn, 3 * bk)), tiler, (0, 1, tk._), (None, 1, 1))
    m_c = tk.make_tensor(tk.make_gmem_ptr(np.float32, 0x10000), tk.make_layout((2 * bm, 2 * bn), (2 * bn, I(1))))
    g_c = tk.local_tile(m_c, tiler, (1, 1, tk._), (1, 1, None))
    for v in range(c.cta_group):
        cta = tm.get_slice(v)
        out[f"slice {v}"] = "\n".join(str(x) for x in (cta, cta.partition_A(g_a), cta.partition_B(g_b),
                                                         cta.partition_C(g_c)))
        frag = []
        if c.a_from_tmem:
            frag.append(str(tm.make_fragment_A(sh_a)))
        else:
            t_a = cta.make_fragment_A(tk.make_tensor(tk.make_smem_ptr(TYPES[c.a], 0), s_a))
            frag += [str(t_a), _desc(t_a(0)), _desc(t_a(int(tk.size(t_a)) - 1))]
        t_b = cta.make_fragment_B(tk.make_tensor(tk.make_smem_ptr(TYPES[c.b], 0), s_b))
        frag += [str(t_b), _desc(t_b(0)), _desc(t_b(int(tk.size(t_b)) - 1))]
        frag.append(str(cta.make_fragment_C(cta.partition_C(g_c))))
        out[f"frag {v}"] = "\n".join(frag)
    return out


def _op(c: MmaCase):
    return getattr(tk, c.op)(TYPES[c.a], TYPES[c.b], TYPES[c.c], c.M, c.N, getattr(tk.UMMA.Major, c.a_major),
                             getattr(tk.UMMA.Major, c.b_major))


@lru_cache(maxsize=None)
def accumulator(c: MmaCase):
    """(tCtAcc, tCgC) of CTA 0 for one MMA tile of ``c`` (as tests/oracle/gen_sm100_cpp.py builds them)."""
    tm = tk.make_tiled_mma(_op(c))
    bm, bn = tk.tile_size(tm, 0), tk.tile_size(tm, 1)
    g_c = tk.make_tensor(tk.make_gmem_ptr(np.float32, 0x10000), tk.make_layout((bm, bn), (int(bn), I(1))))
    t_cg_c = tm.get_slice(0).partition_C(g_c)
    return tm.get_slice(0).make_fragment_C(t_cg_c), t_cg_c


def _tmem_block(name: str) -> str:
    t = TMEM_CASES[name]
    acc, t_cg_c = accumulator(t.mma)
    tiled = tk.make_tmem_copy(getattr(tk, t.op)(), acc)
    out = [str(tiled).rstrip("\n")]
    for thr in t.threads:
        s = tiled.get_slice(thr)
        out += [str(s.partition_S(acc)), str(s.partition_D(t_cg_c))]
    return "\n".join(out)


def test_golden_file_is_large_enough():
    assert len(BLOCKS) >= 1400  # 224 MMA configurations x 4-8 blocks, 160+ TMEM copies
    assert len(CASES) >= 200 and sum(label in TMEM_CASES for label, _ in BLOCKS) >= 150


@pytest.mark.parametrize("label,expected", BLOCKS, ids=[b[0] for b in BLOCKS])
def test_matches_cute(label, expected):
    if label in TMEM_CASES:
        assert _tmem_block(label) == expected.rstrip("\n")
        return
    name, what = label.split(" | ")
    got = _build(CASES[name])[what]
    assert got == expected.rstrip("\n")
