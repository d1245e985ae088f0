"""tmakit's TMA host API against CuTe itself: every block of tests/data/cute_tma_oracle.txt must print exactly what
CuTe 4.2 printed: the arguments make_tma_copy passes to cuTensorMapEncodeTiled (recorded by a stand-in for the
driver), the TiledCopy / Copy_Atom, ``get_tma_tensor``, each CTA's ``partition_S/D``, ``tma_partition`` and
``create_tma_multicast_mask``. A case CuTe refuses (an assert while encoding, or a static_assert) must raise TmaError.

The golden file comes from tests/oracle/regen_tma.sh (CuTe C++ compiled on the host with g++; no GPU, no driver);
this test only reads it and rebuilds each case of tests/oracle/tma_cases.py with tmakit.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tmakit as tk
from tmakit.layout.algebra import group_modes
from tmakit.layout.composed import ComposedLayout

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE / "oracle"))
from golden import parse_blocks  # noqa: E402
from tma_cases import (  # noqa: E402
    CASES,
    GADDR,
    IM2COL_CASES,
    IM2COL_REJECT_CASES,
    MASK_CASES,
    REJECT_CASES,
    SADDR,
    TYPES,
    Im2colCase,
    TmaCase,
    part_tiler,
)

from tmakit.tma.make_im2col_tma_copy import im2col_coord  # noqa: E402

GOLDEN = HERE / "data" / "cute_tma_oracle.txt"
I = tk.Int  # noqa: E741
ELEM = {"half_t": tk.half_t, "bfloat16_t": tk.bfloat16_t, "tfloat32_t": tk.tfloat32_t,
        "float_e4m3_t": tk.float_e4m3_t, "float_e5m2_t": tk.float_e5m2_t, "float": np.float32, "double": np.float64,
        "int8_t": np.int8, "uint8_t": np.uint8, "int32_t": np.int32, "uint16_t": np.uint16, "uint32_t": np.uint32,
        "uint64_t": np.uint64}


BLOCKS = dict(parse_blocks(GOLDEN.read_text())) if GOLDEN.exists() else {}


def _dyn(x):
    if isinstance(x, tuple):
        return tuple(_dyn(v) for v in x)
    return I(int(x[1:])) if isinstance(x, str) else x


def _sta(x):
    return tuple(_sta(v) for v in x) if isinstance(x, tuple) else I(x)


def gmem_tensor(c: TmaCase):
    if c.gstride in ("right", "left"):
        lay = tk.make_layout(_dyn(c.gshape), tk.LayoutRight if c.gstride == "right" else tk.LayoutLeft)
    else:
        lay = tk.make_layout(_dyn(c.gshape), _dyn(c.gstride))
    return tk.make_tensor(tk.make_gmem_ptr(ELEM[c.dtype], GADDR), lay)


def smem_layout(c: TmaCase):
    kind = c.smem[0]
    if kind == "gmma":
        return tk.tile_to_shape(getattr(tk.GMMA, f"Layout_{c.smem[1]}_Atom")(ELEM[c.dtype]), _sta(c.smem[2]))
    if kind == "lay":
        lay = tk.make_layout(_sta(c.smem[1]), _sta(c.smem[2]))
    else:
        lay = tk.make_layout(_sta(c.smem[1]), tk.LayoutRight if kind == "row" else tk.LayoutLeft)
    return tk.composition(tk.Swizzle(*c.sw), lay) if c.sw else lay


def make_copy(c: TmaCase, g, s):
    op = getattr(tk, c.op)
    t = (ELEM[c.internal],) if c.internal else ()  # CuTe's TmaInternalType: the leading template argument
    if c.api == "atom":
        return tk.make_tma_atom(*t, op, g, s, _sta(c.tiler), I(c.cluster))
    if c.api in ("A", "B"):
        f = tk.make_tma_copy_A_sm90 if c.api == "A" else tk.make_tma_copy_B_sm90
        return f(*t, op, g, s, _sta(c.tiler), _sta(c.cluster_shape))
    if c.api == "C":
        return tk.make_tma_copy_C_sm90(*t, op, g, s, _sta(c.tiler))
    if c.tiler is not None:
        return tk.make_tma_copy(*t, op, g, s, _sta(c.tiler), I(c.cluster), arch=c.arch)
    return tk.make_tma_copy(*t, op, g, s, arch=c.arch) if c.cluster == 1 else \
        tk.make_tma_copy(*t, op, g, s, I(c.cluster), arch=c.arch)


def encode_line(tm) -> str:
    """The stand-in driver's line for a TensorMap."""
    def tup(v):
        return "(" + ",".join(str(int(x)) for x in v) + ")"

    return (f"encodeTiled dataType={int(tm.dtype)} rank={len(tm.global_dim)} address={tm.global_address:#x}"
            f" globalDim={tup(tm.global_dim)} globalStrides={tup(tm.global_strides)} boxDim={tup(tm.box_dim)}"
            f" elementStrides={tup(tm.element_strides)} interleave={int(tm.interleave)} swizzle={int(tm.swizzle)}"
            f" l2Promotion={int(tm.l2_promotion)} oobFill={int(tm.oob_fill)}")


def _group(t, r: int):
    lay = t.layout
    if isinstance(lay, ComposedLayout):
        return tk.Tensor(t.iterator, ComposedLayout(lay.layout_a, lay.offset, group_modes(lay.layout_b, 0, r)))
    return tk.Tensor(t.iterator, group_modes(lay, 0, r))


def tmakit_blocks(c: TmaCase) -> dict[str, str]:
    """What tmakit prints for a case, block by block (labels as the C++ program's)."""
    n, out = c.name, {}
    g, s = gmem_tensor(c), smem_layout(c)
    tma = make_copy(c, g, s)
    out[f"{n} | encode"] = encode_line(tma.tensormap)
    out[f"{n} | copy"] = str(tma).rstrip("\n")
    m_t = tma.get_tma_tensor(g.layout.shape)
    out[f"{n} | tma_tensor"] = str(m_t)
    tiler = _sta(part_tiler(c))
    coord = c.coord or (1,) * len(tiler)
    g_t = tk.local_tile(m_t, tiler, coord)
    s_t = tk.make_tensor(tk.make_smem_ptr(ELEM[c.dtype], SADDR), s)
    if c.api == "atom":
        rank = len(c.gshape)
        g_r = tk.local_tile(m_t, tiler, (coord[0], tk._))
        g_g, s_g = _group(g_r, rank), _group(s_t, rank)
        for cta in range(c.cluster):
            tg, ts = tk.tma_partition(tma, I(cta), tk.make_layout(I(c.cluster)), s_g, g_g)
            out[f"{n} | tma_partition {cta}"] = f"{tg}\n{ts}"
        if c.cluster == 1:
            tg, ts = tk.tma_partition(tma, s_g, g_g)
            out[f"{n} | tma_partition default"] = f"{tg}\n{ts}"
    else:
        store = c.op not in ("SM90_TMA_LOAD", "SM90_TMA_LOAD_MULTICAST")
        src, dst = (s_t, g_t) if store else (g_t, s_t)
        ctas = {"A": c.cluster_shape[1], "B": c.cluster_shape[0], "C": 1}.get(c.api, c.cluster)
        for cta in range(ctas):
            thr = tma.get_slice(cta)
            out[f"{n} | slice {cta}"] = f"{thr.partition_S(src)}\n{thr.partition_D(dst)}"
    return out


# Where tmakit deliberately differs from CuTe (docs/CONFORMANCE.md, "TMA host API against CuTe"):
#: CuTe folds a 6th TMA mode into the 5th with a gcd stride: a box that does not match the smem tile (a silently
#: wrong copy); tmakit refuses the copy.
#: A TmaInternalType of another width: CuTe recasts the gmem tensor (a box and TMA tensor in the new units, with a
#: rational stride such as ``_1/_2@0``); tmakit requires the gmem element's width (rule ``internal_type.width``).
REFUSED_BY_TMAKIT = {"fold 6 modes into 5", "internal half as uint32_t", "internal half as uint8_t"}
#: CuTe refuses Swizzle<B,M,3> with M != 4 at compile time; tmakit also reads M = 4 - log2(element bytes) as the same
#: swizzle on element offsets (docs/HARDWARE.md §2).
ACCEPTED_BY_TMAKIT = {"static swizzle <3,2,3> on float"}


def golden_blocks(name: str) -> dict[str, str]:
    return {k: v for k, v in BLOCKS.items() if k.startswith(f"{name} | ")}


def _refused(blocks: dict[str, str]) -> bool:
    return any("ASSERT" in v or "ABORTED" in v for v in blocks.values())


@pytest.mark.skipif(not BLOCKS, reason="golden file missing: run tests/oracle/regen_tma.sh")
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_matches_cute(case):
    want = golden_blocks(case.name)
    assert want, f"no golden blocks for {case.name!r}: regenerate with tests/oracle/regen_tma.sh"
    if case.name in REFUSED_BY_TMAKIT:
        assert not _refused(want)
        with pytest.raises(tk.TmaError):
            tmakit_blocks(case)
        return
    if _refused(want):
        with pytest.raises(tk.TmaError):
            tmakit_blocks(case)
        return
    got = tmakit_blocks(case)
    assert set(got) == set(want)
    for label in want:
        assert got[label] == want[label], label


@pytest.mark.skipif(not BLOCKS, reason="golden file missing: run tests/oracle/regen_tma.sh")
@pytest.mark.parametrize("case", REJECT_CASES, ids=[c.name for c in REJECT_CASES])
def test_compile_time_rejects_raise(case):
    msg = BLOCKS[f"reject {case.name}"]
    assert msg != "COMPILED", msg  # CuTe refuses it at compile time
    if case.name in ACCEPTED_BY_TMAKIT:
        byte_form = TmaCase(case.name, case.dtype, case.gshape, case.gstride, case.smem, sw=(3, 4, 3))
        got = make_copy(case, gmem_tensor(case), smem_layout(case)).tensormap
        assert got == make_copy(byte_form, gmem_tensor(byte_form), smem_layout(byte_form)).tensormap
        return
    # CuTe's Swizzle refuses overlapping bit ranges itself: tmakit's Swizzle raises LayoutError likewise
    with pytest.raises(tk.LayoutError if "SShift" in msg else tk.TmaError):
        make_copy(case, gmem_tensor(case), smem_layout(case))


@pytest.mark.skipif(not BLOCKS, reason="golden file missing: run tests/oracle/regen_tma.sh")
@pytest.mark.parametrize("m", MASK_CASES, ids=[m.name for m in MASK_CASES])
def test_multicast_mask_matches_cute(m):
    lay = tk.make_layout(_sta(m.shape), _sta(m.stride))
    crd = m.coord if len(m.coord) > 1 else m.coord[0]
    assert f"{tk.create_tma_multicast_mask(lay, crd, m.modes):#x}" == BLOCKS[f"mask {m.name}"]


def _tup(v) -> str:
    return "(" + ",".join(str(int(x)) for x in v) + ")"


def encode_im2col_line(tm) -> str:
    """The stand-in driver's cuTensorMapEncodeIm2col line for an im2col TensorMap."""
    return (f"encodeIm2col dataType={int(tm.dtype)} rank={len(tm.global_dim)} address={tm.global_address:#x}"
            f" globalDim={_tup(tm.global_dim)} globalStrides={_tup(tm.global_strides)}"
            f" pixelBoxLowerCorner={_tup(tm.pixel_box_lower_corner)}"
            f" pixelBoxUpperCorner={_tup(tm.pixel_box_upper_corner)} channelsPerPixel={tm.channels_per_pixel}"
            f" pixelsPerColumn={tm.pixels_per_column} elementStrides={_tup(tm.element_strides)}"
            f" interleave={int(tm.interleave)} swizzle={int(tm.swizzle)} l2Promotion={int(tm.l2_promotion)}"
            f" oobFill={int(tm.oob_fill)}")


def _im2col_smem(c: Im2colCase):
    return smem_layout(TmaCase(c.name, c.dtype, (), "right", c.smem, sw=c.sw))


def make_im2col_copy(c: Im2colCase):
    g = tk.make_tensor(tk.make_gmem_ptr(ELEM[c.dtype], GADDR), tk.make_layout((c.whdn, c.c), (c.gstride(), I(1))))
    args = []
    if c.tiler is not None:
        args.append(_sta(c.tiler))
        if c.multicast is not None:
            args.append(I(c.multicast))
    if c.conv is not None:
        args += list(c.conv)
    return g, tk.make_im2col_tma_copy(getattr(tk, c.op), g, _im2col_smem(c), *args)


def tmakit_im2col_blocks(c: Im2colCase) -> dict[str, str]:
    n, out = c.name, {}
    g, tma = make_im2col_copy(c)
    out[f"{n} | encode"] = encode_im2col_line(tma.tensormap)
    out[f"{n} | copy"] = str(tma).rstrip("\n")
    m_t = tma.get_tma_tensor(g.layout.shape)
    out[f"{n} | tma_tensor"] = str(m_t)
    tiler = _sta(c.tiler or part_tiler(TmaCase(n, c.dtype, (), "right", c.smem)))
    g_t = tk.local_tile(m_t, tiler, c.coord)
    out[f"{n} | tile"] = str(g_t)
    s_t = tk.make_tensor(tk.make_smem_ptr(ELEM[c.dtype], SADDR), _im2col_smem(c))
    store = c.op == "SM90_TMA_STORE_IM2COL"
    src, dst = (s_t, g_t) if store else (g_t, s_t)
    for cta in range(c.multicast or 1):
        thr = tma.get_slice(cta)
        p_s, p_d = thr.partition_S(src), thr.partition_D(dst)
        out[f"{n} | slice {cta}"] = f"{p_s}\n{p_d}\n{im2col_coord(p_d if store else p_s)}"
    return out


@pytest.mark.skipif(not BLOCKS, reason="golden file missing: run tests/oracle/regen_tma.sh")
@pytest.mark.parametrize("case", IM2COL_CASES, ids=[c.name for c in IM2COL_CASES])
def test_im2col_case_matches_cute(case):
    want = golden_blocks(case.name)
    assert want, f"no golden blocks for {case.name!r}: regenerate with tests/oracle/regen_tma.sh"
    assert not _refused(want)
    got = tmakit_im2col_blocks(case)
    assert set(got) == set(want)
    for label in want:
        assert got[label] == want[label], label


@pytest.mark.skipif(not BLOCKS, reason="golden file missing: run tests/oracle/regen_tma.sh")
@pytest.mark.parametrize("case", IM2COL_REJECT_CASES, ids=[c.name for c in IM2COL_REJECT_CASES])
def test_im2col_compile_time_rejects_raise(case):
    msg = BLOCKS[f"reject {case.name}"]
    assert msg != "COMPILED", msg
    with pytest.raises(tk.TmaError):
        make_im2col_copy(case)


def test_golden_has_every_case():
    if not BLOCKS:
        pytest.skip("golden file missing")
    names = {k.split(" | ")[0] for k in BLOCKS if " | " in k}
    assert names == {c.name for c in CASES} | {c.name for c in IM2COL_CASES}
    assert len([c for c in CASES if not _refused(golden_blocks(c.name))]) >= 100
    assert TYPES  # the type table the generator used
