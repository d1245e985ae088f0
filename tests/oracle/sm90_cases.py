"""The SM90 (Hopper GMMA) oracle cases: host algebra CuTe prints (tests/data/cute_sm90_oracle.txt).

gen_sm90_cpp.py turns each case into CuTe C++; regen_sm90.sh compiles it on the host (no GPU) and stores the prints;
tests/test_mma_sm90_oracle.py rebuilds the same objects with tmakit and compares the text. Element types are spelled
as CuTe's (``half_t`` ...; ``float``, ``int8_t`` ... are numpy's).
"""

from __future__ import annotations

from typing import NamedTuple

TYPE_BITS = {"half_t": 16, "bfloat16_t": 16, "tfloat32_t": 32, "float": 32, "float_e4m3_t": 8, "float_e5m2_t": 8,
             "int8_t": 8, "uint8_t": 8, "int32_t": 32}
# kind -> (C, A, B, K) as CuTe's SM90_64xNxK_<kind>_* spell them
KIND_TYPES = {
    "F16F16F16": ("half_t", "half_t", "half_t", 16), "F32F16F16": ("float", "half_t", "half_t", 16),
    "F32BF16BF16": ("float", "bfloat16_t", "bfloat16_t", 16), "F32TF32TF32": ("float", "tfloat32_t", "tfloat32_t", 8),
    "F32E4M3E4M3": ("float", "float_e4m3_t", "float_e4m3_t", 32),
    "F16E4M3E5M2": ("half_t", "float_e4m3_t", "float_e5m2_t", 32),
    "F32E5M2E4M3": ("float", "float_e5m2_t", "float_e4m3_t", 32),
    "F16E5M2E5M2": ("half_t", "float_e5m2_t", "float_e5m2_t", 32),
    "S32S8S8": ("int32_t", "int8_t", "int8_t", 32), "S32U8S8": ("int32_t", "uint8_t", "int8_t", 32),
    "S32S8U8": ("int32_t", "int8_t", "uint8_t", 32), "S32U8U8": ("int32_t", "uint8_t", "uint8_t", 32),
}
TRANSPOSABLE = ("F16F16F16", "F32F16F16", "F32BF16BF16")
_ATOM_BITS = {"SW128": 1024, "SW64": 512, "SW32": 256, "INTER": 128}


class MmaCase(NamedTuple):
    kind: str
    N: int  # noqa: N815 - CuTe's name
    rs: bool
    a_major: str  # K or MN
    b_major: str
    sw_a: str  # smem atom of A (also staged for _RS), e.g. K_SW128
    sw_b: str
    thr: tuple  # AtomLayoutMNK of make_tiled_mma
    tile: tuple  # (MMAs along M per atom-layout tile, along N, K-blocks)
    pipe: int  # smem stages
    saturate: bool = False
    scales: tuple = ()  # (scaleA, scaleB) ScaleIn names, () for the defaults

    @property
    def op_name(self) -> str:
        k = KIND_TYPES[self.kind][3]
        tn = "" if self.kind in TRANSPOSABLE else "_TN"
        return f"SM90_64x{self.N}x{k}_{self.kind}_{'RS' if self.rs else 'SS'}{tn}{'_SATURATE' if self.saturate else ''}"

    @property
    def name(self) -> str:
        sc = f",{'/'.join(self.scales)}" if self.scales else ""
        return (f"{self.op_name}<{self.a_major},{self.b_major}{sc}> A:{self.sw_a} B:{self.sw_b} "
                f"thr{'x'.join(map(str, self.thr))} tile{'x'.join(map(str, self.tile))} pipe{self.pipe}")

    @property
    def types(self):
        return KIND_TYPES[self.kind][:3]

    @property
    def threads(self) -> tuple:
        n = 128 * self.thr[0] * self.thr[1] * self.thr[2]
        return tuple(t for t in (0, 37, 130, 201, n - 1) if t < n)


def _sw(major: str, i: int, bits: int, extent: int) -> str:
    """The i-th atom (cycling) that fits: MN-major atoms must divide ``extent`` (the operand's MN per MMA) along MN,
    K-major atoms must divide ``extent`` (the tile's K)."""
    names = ("SW128", "SW64", "SW32", "INTER")
    for j in range(4):
        n = names[(i + j) % 4]
        if extent % (_ATOM_BITS[n] // bits) == 0:
            return f"{major}_{n}"
    raise ValueError(f"no {major}-major atom fits {extent} {bits}-bit elements")


_NS = (8, 16, 24, 64, 96, 128, 136, 192, 256, 40, 48, 80, 112, 176)
_NS_INT = (8, 16, 24, 64, 96, 128, 144, 192, 256, 48, 80, 112, 176, 240)
_THRS = ((1, 1, 1), (2, 1, 1), (1, 2, 1), (2, 2, 1), (4, 1, 1), (1, 1, 1))


def _mma_cases() -> list[MmaCase]:
    out, i = [], 0
    for kind, (_c, a, b, k) in KIND_TYPES.items():
        ns = _NS_INT if kind.startswith("S32") else _NS
        forms = []
        for rs in (False, True):
            majors = [("K", "K")]
            if kind in TRANSPOSABLE:
                majors += [("K", "MN")] if rs else [("MN", "K"), ("K", "MN"), ("MN", "MN")]
            forms += [(rs, m) for m in majors]
        for rs, (am, bm) in forms:
            for r in range(2 if kind in ("F32F16F16", "F32BF16BF16", "S32S8S8") else 1):
                i += 1
                n = ns[(i * 5 + r * 3) % len(ns)]
                thr = _THRS[i % len(_THRS)]
                kb = (1, 2, 4)[i % 3]
                nm = 2 if i % 4 == 0 else 1
                nn = 2 if i % 5 == 0 and n <= 128 else 1
                bk = k * kb
                ext_a = 64 if am == "MN" else bk
                ext_b = n if bm == "MN" else bk
                sw_a = _sw(am, i, TYPE_BITS[a], ext_a)
                sw_b = _sw(bm, i + 1 + r, TYPE_BITS[b], ext_b)
                sat = kind.startswith("S32") and (i + r) % 2 == 1
                scales = ("Neg", "One") if kind in TRANSPOSABLE and i % 3 == 0 else (
                    ("One", "Neg") if kind.startswith("F32E") and rs else ())
                out.append(MmaCase(kind, n, rs, am, bm, sw_a, sw_b, thr, (nm, nn, kb), 1 + i % 3, sat, scales))
    return out


MMA_CASES = _mma_cases() + [
    # CUTLASS's usual Hopper configurations: 128x128x64 and 128x256x64 f16/bf16 with 2 warpgroups along M
    MmaCase("F32F16F16", 128, False, "K", "K", "K_SW128", "K_SW128", (2, 1, 1), (1, 1, 4), 4),
    MmaCase("F32BF16BF16", 256, False, "K", "K", "K_SW128", "K_SW128", (2, 1, 1), (1, 1, 4), 3),
    MmaCase("F32F16F16", 128, False, "MN", "MN", "MN_SW128", "MN_SW128", (2, 1, 1), (1, 1, 4), 2),
    MmaCase("F32E4M3E4M3", 128, False, "K", "K", "K_SW128", "K_SW128", (2, 1, 1), (1, 1, 4), 4),
    MmaCase("F32F16F16", 192, True, "K", "K", "K_SW128", "K_SW128", (2, 1, 1), (1, 1, 4), 4),
]


# --- layout atoms -------------------------------------------------------------------------------------------
ATOM_TYPES = ("half_t", "bfloat16_t", "tfloat32_t", "float", "float_e4m3_t", "int8_t", "uint8_t")
ATOM_NAMES = ("MN_INTER", "MN_SW32", "MN_SW64", "MN_SW128", "K_INTER", "K_SW32", "K_SW64", "K_SW128")


# --- make_gmma_desc on rank-2 tensors: (major, type, atom or None, shape, order or stride) ----------------------
class DescCase(NamedTuple):
    major: str
    t: str
    atom: str | None  # tile_to_shape(GMMA::Layout_<atom>_Atom<t>, shape, order); None: make_layout(shape, stride)
    shape: tuple
    arg: tuple  # the order (Step) for an atom, the stride otherwise

    @property
    def name(self) -> str:
        return f"desc {self.major} {self.t} {self.atom or 'layout'} {self.shape} {self.arg}"


def _desc_cases() -> list[DescCase]:
    out = []
    for t in ("half_t", "tfloat32_t", "float_e4m3_t", "int8_t"):
        bits = TYPE_BITS[t]
        kmma = 256 // bits
        for sw in ("INTER", "SW32", "SW64", "SW128"):
            amn = _ATOM_BITS[sw] // bits
            for m in (1, 2, 4):
                out.append(DescCase("MN", t, f"MN_{sw}", (amn * m, kmma), (1, 2)))
            out.append(DescCase("MN", t, f"MN_{sw}", (amn * 2, kmma), (2, 1)))
        for sw in ("INTER", "SW32", "SW64"):  # K-major atoms of at most 4 x 16 bytes along K
            ak = _ATOM_BITS[sw] // bits
            for mn in (8, 64, 120):
                for kk in (kmma, 2 * kmma):
                    if kk % ak == 0:
                        out.append(DescCase("K", t, f"K_{sw}", (mn, kk), (1, 2)))
                        out.append(DescCase("K", t, f"K_{sw}", (mn, kk), (2, 1)))
    # hand-made canonical INTERLEAVE layouts (16-bit): K-major ((8,m),(8,2)):((8,SBO),(1,LBO)), MN-major likewise
    for sbo, lbo in ((64, 512), (128, 64), (256, 1024)):
        out.append(DescCase("K", "half_t", None, ((8, 4), (8, 2)), ((8, sbo), (1, lbo))))
        out.append(DescCase("MN", "half_t", None, ((8, 4), (8, 2)), ((1, sbo), (8, lbo))))
    return out


DESC_CASES = _desc_cases()


# --- selectors ------------------------------------------------------------------------------------------------
class SelCase(NamedTuple):
    fn: str  # ss_op_selector / rs_op_selector
    a: str
    b: str
    c: str
    tile: tuple
    majors: tuple

    @property
    def name(self) -> str:
        return f"{self.fn}<{self.a},{self.b},{self.c},{self.tile},{'/'.join(self.majors)}>"


_SEL_TYPES = [("half_t", "half_t", "half_t"), ("half_t", "half_t", "float"), ("bfloat16_t", "bfloat16_t", "float"),
              ("tfloat32_t", "tfloat32_t", "float"), ("float_e4m3_t", "float_e4m3_t", "float"),
              ("float_e5m2_t", "float_e4m3_t", "half_t"), ("float_e4m3_t", "float_e5m2_t", "float"),
              ("int8_t", "int8_t", "int32_t"), ("uint8_t", "int8_t", "int32_t"), ("int8_t", "uint8_t", "int32_t"),
              ("uint8_t", "uint8_t", "int32_t")]
_SEL_N = (8, 16, 24, 40, 48, 80, 96, 112, 120, 136, 160, 200, 240, 256, 384, 512, 72, 176)


def _sel_cases() -> list[SelCase]:
    out = []
    for i, (a, b, c) in enumerate(_SEL_TYPES):
        k = 256 // TYPE_BITS[a]
        for j, n in enumerate(_SEL_N):
            for fn in ("ss_op_selector", "rs_op_selector"):
                majors = ("K", "K")
                if a in ("half_t", "bfloat16_t") and (i + j) % 3:
                    majors = (("MN", "K"), ("K", "MN"), ("MN", "MN"))[(i + j) % 3] if fn == "ss_op_selector" \
                        else ("K", "MN")
                out.append(SelCase(fn, a, b, c, (64 * (1 + j % 2), n, k * (1 + j % 4)), majors))
    return out


SEL_CASES = _sel_cases()


class SmemSelCase(NamedTuple):
    fn: str  # ss_smem_selector / rs_smem_selector
    major: str
    t: str
    blk_mn: tuple | int  # an int or a hierarchical (BLK_MN0, ...)
    blk_k: tuple | int
    ws_transposed_b: bool = False

    @property
    def name(self) -> str:
        tb = " ws_transposed_B" if self.ws_transposed_b else ""
        return f"{self.fn}<{self.major},{self.t},{self.blk_mn},{self.blk_k}>{tb}"


def smem_sel_candidates() -> list[SmemSelCase]:
    """Every candidate; the generator keeps those tmakit accepts (CuTe's rejections stop the compile)."""
    out = []
    for fn in ("ss_smem_selector", "rs_smem_selector"):
        for major in ("MN", "K"):
            for t in ("half_t", "tfloat32_t", "float", "float_e4m3_t", "int8_t"):
                for mn, k in ((64, 64), (128, 32), (8, 16), (16, 8), (32, 24), (24, 40), ((64, 2), (32, 2)), (96, 128)):
                    for tb in ((False, True) if fn == "rs_smem_selector" and major == "MN" else (False,)):
                        out.append(SmemSelCase(fn, major, t, mn, k, tb))
    return out


# --- what CuTe rejects at compile time: each snippet compiles alone; the static_assert message is the expectation
REJECT_CASES = {
    "desc K stride": "GMMA::make_gmma_desc<GMMA::Major::K>(make_tensor(make_smem_ptr((half_t*)0), "
                     "make_layout(make_shape(_64{}, _16{}), make_stride(_16{}, _1{}))))",
    "desc K size": "GMMA::make_gmma_desc<GMMA::Major::K>(make_tensor(make_smem_ptr((half_t*)0), "
                   "tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, make_shape(_64{}, _64{}))))",
    "desc K mn": "GMMA::make_gmma_desc<GMMA::Major::K>(make_tensor(make_smem_ptr((half_t*)0), "
                 "make_layout(make_shape(_4{}, _16{}), make_stride(_16{}, _1{}))))",
    "desc MN k": "GMMA::make_gmma_desc<GMMA::Major::MN>(make_tensor(make_smem_ptr((half_t*)0), "
                 "make_layout(make_shape(_64{}, _4{}), make_stride(_1{}, _64{}))))",
    "desc MN K-major": "GMMA::make_gmma_desc<GMMA::Major::MN>(make_tensor(make_smem_ptr((half_t*)0), "
                       "make_layout(make_shape(_64{}, _16{}), make_stride(_16{}, _1{}))))",
    "desc MN stride": "GMMA::make_gmma_desc<GMMA::Major::MN>(make_tensor(make_smem_ptr((half_t*)0), "
                      "make_layout(make_shape(_64{}, _16{}), make_stride(_1{}, _128{}))))",
    "rs tnspA": "SM90_64x64x16_F16F16F16_RS<GMMA::Major::MN, GMMA::Major::K>{}",
    "sel tile M": "GMMA::ss_op_selector<half_t, half_t, float, Shape<_96, _128, _64>>()",
    "sel fp8 MN": "GMMA::ss_op_selector<float_e4m3_t, float_e4m3_t, float, Shape<_128, _128, _64>, "
                  "GMMA::Major::MN, GMMA::Major::K>()",
    "sel no op": "GMMA::ss_op_selector<bfloat16_t, bfloat16_t, half_t, Shape<_128, _128, _64>>()",
    "sel tile K": "GMMA::ss_op_selector<half_t, half_t, float, Shape<_128, _128, _8>>()",
    "sel tile N": "GMMA::ss_op_selector<half_t, half_t, float, Shape<_128, _12, _64>>()",
    "sel acc": "GMMA::ss_op_selector<half_t, half_t, double, Shape<_128, _128, _64>>()",
    "sel rs MN": "GMMA::rs_op_selector<half_t, half_t, float, Shape<_128, _128, _64>, GMMA::Major::MN>()",
    "sel tf32 rs MN B": "GMMA::rs_op_selector<tfloat32_t, tfloat32_t, float, Shape<_128, _128, _64>, "
                        "GMMA::Major::K, GMMA::Major::MN>()",
    "smem blk k": "cutlass::gemm::collective::detail::ss_smem_selector<GMMA::Major::K, half_t, _64, _12>()",
    "smem blk mn": "cutlass::gemm::collective::detail::ss_smem_selector<GMMA::Major::MN, half_t, _4, _64>()",
    "smem int8 mn": "cutlass::gemm::collective::detail::ss_smem_selector<GMMA::Major::MN, int8_t, _8, _64>()",
    "frag type": "make_tiled_mma(SM90_64x64x16_F32F16F16_SS<GMMA::Major::K, GMMA::Major::K>{}).get_slice(0)"
                 ".partition_fragment_A(make_tensor(make_smem_ptr((float*)0), "
                 "tile_to_shape(GMMA::Layout_K_SW128_Atom<float>{}, make_shape(_64{}, _32{}))))",
}
