"""tmakit's SM90 GMMA host algebra against CuTe itself: every block of tests/data/cute_sm90_oracle.txt must print
exactly what CuTe printed (layout atoms, GmmaDescriptors, TiledMMA of SM90_64xNxK_* atoms, partitions, descriptor and
register fragments, op and smem selectors), and every expression CuTe refuses at compile time must raise MmaError
with CuTe's static_assert message.

The golden file comes from tests/oracle/regen_sm90.sh (CuTe C++ compiled on the host; no GPU); this test only reads
it and rebuilds each case (tests/oracle/sm90_cases.py) with tmakit. CuTe's host build reads every smem address as 0
(cast_smem_ptr_to_uint), so descriptors of a partition are compared with the partition's start address taken out.
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
from sm90_cases import (  # noqa: E402
    DESC_CASES,
    MMA_CASES,
    REJECT_CASES,
    SEL_CASES,
    TRANSPOSABLE,
    MmaCase,
    SmemSelCase,
    smem_sel_candidates,
)

GOLDEN = HERE / "data" / "cute_sm90_oracle.txt"
TYPES = {"half_t": tk.half_t, "bfloat16_t": tk.bfloat16_t, "tfloat32_t": tk.tfloat32_t,
         "float_e4m3_t": tk.float_e4m3_t, "float_e5m2_t": tk.float_e5m2_t, "float": np.float32, "int8_t": np.int8,
         "uint8_t": np.uint8, "int32_t": np.int32}
G = tk.GMMA
I = tk.Int  # noqa: E741


_parse = parse_blocks


BLOCKS = _parse(GOLDEN.read_text()) if GOLDEN.exists() else []  # the generator imports this module first
MMAS = {c.name: c for c in MMA_CASES}
DESCS = {d.name: d for d in DESC_CASES}
SELS = {s.name: s for s in SEL_CASES}
SMEM_SELS = {s.name: s for s in smem_sel_candidates()}


def _static(x):
    return tuple(_static(v) for v in x) if isinstance(x, tuple) else I(x)


def _s(x) -> str:
    return to_str(x) if isinstance(x, tuple) else str(x)


def make_op(c: MmaCase):
    """The tmakit op of a case, with CuTe's template arguments."""
    f = getattr(tk, c.op_name)
    scales = tuple(getattr(G.ScaleIn, s) for s in c.scales)
    if c.kind in TRANSPOSABLE:
        return f(getattr(G.Major, c.a_major), getattr(G.Major, c.b_major), *scales)
    return f() if c.kind.startswith("S32") else f(*scales)


def smem_select(s: SmemSelCase):
    def blk(x):
        return tuple(I(v) for v in x) if isinstance(x, tuple) else I(x)

    args = (getattr(G.Major, s.major), TYPES[s.t], blk(s.blk_mn), blk(s.blk_k))
    if s.fn == "rs_smem_selector":
        return G.rs_smem_selector(*args, s.ws_transposed_b)
    return G.ss_smem_selector(*args)


def _host(desc, part) -> str:
    """A descriptor as CuTe's host build prints it: the partition's smem address read as 0."""
    return str(desc + -(part.iterator.address >> 4)).rstrip("\n")


def _descs(frag, part) -> list[str]:
    return [str(frag), _host(frag(0), part), _host(frag(int(tk.size(frag)) - 1), part)]


@lru_cache(maxsize=None)
def _build(c: MmaCase) -> dict:
    _tc, ta, tb = (TYPES[t] for t in c.types)
    tm = tk.make_tiled_mma(make_op(c), tk.make_layout(tuple(I(x) for x in c.thr)))
    nm, nn, kb = c.tile
    bm, bn, bk = tk.tile_size(tm, 0) * I(nm), tk.tile_size(tm, 1) * I(nn), tk.tile_size(tm, 2) * I(kb)
    tiler = (bm, bn, bk)
    s_a = tk.tile_to_shape(getattr(G, f"Layout_{c.sw_a}_Atom")(ta), (bm, bk, I(c.pipe)))
    s_b = tk.tile_to_shape(getattr(G, f"Layout_{c.sw_b}_Atom")(tb), (bn, bk, I(c.pipe)))
    out = {
        "tiled_mma": str(tm).rstrip("\n"),
        "shapes": "\n".join(_s(x) for x in (tiler, tk.partition_shape_A(tm, (bm, bk)),
                                             tk.partition_shape_B(tm, (bn, bk)), tk.partition_shape_C(tm, (bm, bn)))),
        "tv": "\n".join(str(x) for x in (tm.get_layoutA_TV(), tm.get_layoutB_TV(), tm.get_layoutC_TV())),
        "smem": f"{s_a}\n{s_b}",
        "frag_c": str(tk.partition_fragment_C(tm, (bm, bn)).layout),
    }
    ts_a = tk.make_tensor(tk.make_smem_ptr(ta, 0), s_a)
    ts_b = tk.make_tensor(tk.make_smem_ptr(tb, 0), s_b)
    bm, bn, bk = int(bm), int(bn), int(bk)
    g_a = tk.local_tile(tk.make_identity_tensor((2 * bm, 3 * bk)), tiler, (1, 0, tk._), (1, None, 1))
    g_b = tk.local_tile(tk.make_identity_tensor((2 * bn, 3 * bk)), tiler, (0, 1, tk._), (None, 1, 1))
    m_c = tk.make_tensor(tk.make_gmem_ptr(np.float32, 0x10000), tk.make_layout((2 * bm, 2 * bn), (2 * bn, I(1))))
    g_c = tk.local_tile(m_c, tiler, (1, 1, tk._), (1, 1, None))
    for i, t in enumerate(c.threads):
        thr = tm.get_slice(t)
        p_a, p_b = thr.partition_A(ts_a), thr.partition_B(ts_b)
        head = [str(thr).rstrip("\n")] if i == 0 else []
        out[f"slice {t}"] = "\n".join(head + [_s(thr.thr_vmnk)] + [str(x) for x in (
            thr.partition_A(g_a), thr.partition_B(g_b), thr.partition_C(g_c), p_a, p_b)])
        frag = [str(thr.partition_fragment_A(ts_a).layout)] if c.rs else _descs(thr.partition_fragment_A(ts_a), p_a)
        frag += _descs(thr.partition_fragment_B(ts_b), p_b)
        frag.append(str(thr.partition_fragment_C(g_c).layout))
        out[f"frag {t}"] = "\n".join(frag)
    return out


def _desc_block(name: str) -> str:
    d = DESCS[name]
    t = TYPES[d.t]
    if d.atom is None:
        lay = tk.make_layout(_static(d.shape), _static(d.arg))
    else:
        lay = tk.tile_to_shape(getattr(G, f"Layout_{d.atom}_Atom")(t), _static(d.shape), _static(d.arg))
    desc = G.make_gmma_desc(getattr(G.Major, d.major), tk.make_tensor(tk.make_smem_ptr(t, 0), lay))
    return f"{lay}\n{desc}"


def _pretty(op) -> str:
    """``__PRETTY_FUNCTION__`` of ``tname<decltype(op)>()`` as g++ spells it (default template arguments left out)."""
    if op.kind in TRANSPOSABLE:
        args = f"<cute::SM90::GMMA::Major::{op.a_major.name}, cute::SM90::GMMA::Major::{op.b_major.name}>"
    else:
        args = "" if op.kind.startswith("S32") else "<>"
    return f"void tname() [with T = cute::SM90::GMMA::MMA_{op.name[len('SM90_'):]}{args}]"


def _drop_default_scales(pretty: str) -> str:
    """g++ spells a specialization first named through CuTe's SM90_* alias (all four arguments) with its defaulted
    ``ScaleIn::One`` arguments; the same type named by the selector alone leaves them out. Compare without them."""
    one = "cute::SM90::GMMA::ScaleIn::One"
    return pretty.replace(f", {one}, {one}>", ">").replace(f"<{one}, {one}>", "<>")


def _atom_block(label: str) -> str:
    parts = label.split()
    if parts[0] == "layout":
        what = parts[1]
        if what.startswith("CLayout_64x"):
            return str(getattr(G, what))
        if what.startswith("ALayout_64x"):
            return str(getattr(G, what))
        m, k = what[len("ABLayout<"):-1].split(",")
        return str(G.ABLayout(int(m), int(k)))
    t = TYPES[parts[1]]
    if len(parts) == 3:
        return str(getattr(G, f"Layout_{parts[2]}_Atom")(t))
    return str(getattr(G, f"Layout_{parts[2]}_Atom")(t, getattr(G.Major, parts[3])))


def _sel_op(label: str):
    name, tag = label.rsplit(" [", 1)
    s = SELS[name]
    fn = getattr(G, s.fn)
    return fn(TYPES[s.a], TYPES[s.b], TYPES[s.c], tuple(I(x) for x in s.tile), getattr(G.Major, s.majors[0]),
              getattr(G.Major, s.majors[1]), extended_shapes=tag == "ext]")


def _smem(t, layout):
    return tk.make_tensor(tk.make_smem_ptr(t, 0), layout)


def _half_tile(major):
    return _smem(tk.half_t, tk.tile_to_shape(getattr(G, f"Layout_{major}_SW128_Atom")(tk.half_t), (I(64), I(64))))


def _plain(shape, stride, t=tk.half_t):
    return tk.make_tensor(tk.make_smem_ptr(t, 0), tk.make_layout(tuple(I(s) for s in shape),
                                                                 tuple(I(d) for d in stride)))


SEL_SHAPE = (I(128), I(128), I(64))
F32 = np.float32
REJECTS = {  # tmakit's spelling of each REJECT_CASES expression
    "desc K stride": lambda: G.make_gmma_desc(G.Major.K, _plain((64, 16), (16, 1))),
    "desc K size": lambda: G.make_gmma_desc(G.Major.K, _half_tile("K")),
    "desc K mn": lambda: G.make_gmma_desc(G.Major.K, _plain((4, 16), (16, 1))),
    "desc MN k": lambda: G.make_gmma_desc(G.Major.MN, _plain((64, 4), (1, 64))),
    "desc MN K-major": lambda: G.make_gmma_desc(G.Major.MN, _plain((64, 16), (16, 1))),
    "desc MN stride": lambda: G.make_gmma_desc(G.Major.MN, _plain((64, 16), (1, 128))),
    "rs tnspA": lambda: tk.SM90_64x64x16_F16F16F16_RS(G.Major.MN, G.Major.K),
    "sel tile M": lambda: G.ss_op_selector(tk.half_t, tk.half_t, F32, (I(96), I(128), I(64))),
    "sel fp8 MN": lambda: G.ss_op_selector(tk.float_e4m3_t, tk.float_e4m3_t, F32, SEL_SHAPE, G.Major.MN, G.Major.K),
    "sel no op": lambda: G.ss_op_selector(tk.bfloat16_t, tk.bfloat16_t, tk.half_t, SEL_SHAPE),
    "sel tile K": lambda: G.ss_op_selector(tk.half_t, tk.half_t, F32, (I(128), I(128), I(8))),
    "sel tile N": lambda: G.ss_op_selector(tk.half_t, tk.half_t, F32, (I(128), I(12), I(64))),
    "sel acc": lambda: G.ss_op_selector(tk.half_t, tk.half_t, np.float64, SEL_SHAPE),
    "sel rs MN": lambda: G.rs_op_selector(tk.half_t, tk.half_t, F32, SEL_SHAPE, G.Major.MN),
    "sel tf32 rs MN B": lambda: G.rs_op_selector(tk.tfloat32_t, tk.tfloat32_t, F32, SEL_SHAPE, G.Major.K,
                                                 G.Major.MN),
    "smem blk k": lambda: G.ss_smem_selector(G.Major.K, tk.half_t, I(64), I(12)),
    "smem blk mn": lambda: G.ss_smem_selector(G.Major.MN, tk.half_t, I(4), I(64)),
    "smem int8 mn": lambda: G.ss_smem_selector(G.Major.MN, np.int8, I(8), I(64)),
    "frag type": lambda: tk.make_tiled_mma(tk.SM90_64x64x16_F32F16F16_SS(G.Major.K, G.Major.K)).get_slice(0)
    .partition_fragment_A(tk.make_tensor(tk.make_smem_ptr(F32, 0), tk.tile_to_shape(
        G.Layout_K_SW128_Atom(F32), (I(64), I(32))))),
}


def test_golden_file_is_large_enough():
    labels = [label for label, _ in BLOCKS]
    assert len(BLOCKS) >= 1500
    assert sum(label.split(" | ")[0] in MMAS for label in labels) >= 700
    assert sum(label in DESCS for label in labels) == len(DESC_CASES)
    assert sum(label.endswith(("[ext]", "[base]")) for label in labels) == 2 * len(SEL_CASES)
    assert set(REJECTS) == set(REJECT_CASES) and sum(label.startswith("reject ") for label in labels) == len(REJECTS)


@pytest.mark.parametrize("label,expected", BLOCKS, ids=[b[0] for b in BLOCKS])
def test_matches_cute(label, expected):
    expected = expected.rstrip("\n")
    if label.startswith("reject "):
        assert expected.startswith("static assertion failed: "), f"CuTe compiled {label!r}: {expected}"
        with pytest.raises(tk.MmaError) as e:
            REJECTS[label[len("reject "):]]()
        assert expected[len("static assertion failed: "):].rstrip(".") in str(e.value)
    elif label.startswith(("atom ", "layout ")):
        assert _atom_block(label) == expected
    elif label in DESCS:
        assert _desc_block(label).rstrip("\n") == expected
    elif label.endswith(("[ext]", "[base]")):
        assert _pretty(_sel_op(label)) == _drop_default_scales(expected)
    elif label in SMEM_SELS:
        assert str(smem_select(SMEM_SELS[label])) == expected
    else:
        name, what = label.split(" | ")
        assert _build(MMAS[name])[what] == expected
