"""SM100 UMMA operations and their MMA_Atom traits (CuTe's ``SM100_MMA_*`` + ``MMA_Traits``).

``tk.SM100_MMA_F16BF16_SS(tk.half_t, tk.half_t, np.float32, 128, 256, tk.UMMA.Major.K, tk.UMMA.Major.K)`` is
CuTe's ``SM100_MMA_F16BF16_SS<half_t, half_t, float, 128, 256, UMMA::Major::K, UMMA::Major::K>``: one
``tcgen05.mma.cta_group::1.kind::f16`` of shape M x N x K (K = 256 bits of the A/B type).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..layout import Int, Layout, size
from ..layout.int_tuple import is_tuple
from ..layout.integer import to_str
from .errors import MmaError
from .numeric import sizeof_bits, type_name
from .umma import TmemAllocMode, make_tmem_frg
from .umma_desc import DescriptorIterator, Major, Saturate, ScaleIn, make_umma_desc


@dataclass(frozen=True)
class MmaOp:
    """One SM100 UMMA instruction. Attributes the emulator reads: ``kind`` (``f16``, ``tf32``, ``f8f6f4``),
    ``cta_group`` (1, or 2 for the ``_2x1SM`` forms run by a CTA pair), ``a_from_tmem`` (``_TS``), the element
    types, ``M``/``N``/``K`` (the whole instruction, both CTAs for ``cta_group`` 2), the majors and negations."""

    name: str
    kind: str
    cta_group: int
    a_from_tmem: bool
    a_type: object
    b_type: object
    c_type: object
    M: int
    N: int
    a_major: Major
    b_major: Major
    a_neg: ScaleIn = ScaleIn.One
    b_neg: ScaleIn = ScaleIn.One
    c_sat: Saturate = Saturate.False_

    @property
    def K(self) -> int:  # noqa: N802 - CuTe's name
        return 32 if self.kind == "f8f6f4" else 256 // sizeof_bits(self.a_type)

    @property
    def ptx(self) -> str:
        return f"tcgen05.mma.cta_group::{self.cta_group}.kind::{self.kind}"

    @property
    def idesc(self) -> int:
        """The 32-bit instruction descriptor (CuTe's ``UMMA::make_instr_desc``; the upper word of ``idescE``)."""
        a, b = _AB_FORMATS.get(_type_key(self.a_type)), _AB_FORMATS.get(_type_key(self.b_type))
        c = _C_FORMATS.get(_type_key(self.c_type))
        if a is None or b is None or c is None:
            raise MmaError(f"{self.name}: no instruction-descriptor format for {self.a_type}/{self.b_type}/"
                           f"{self.c_type}")
        return (int(self.c_sat) << 3 | c << 4 | a << 7 | b << 10 | int(self.a_neg) << 13
                | int(self.b_neg) << 14 | int(self.a_major) << 15 | int(self.b_major) << 16
                | (self.N >> 3) << 17 | (self.M >> 4) << 24)

    def __str__(self):
        return self.name

    def cpp(self) -> str:
        """The C++ type CuTe spells for this op (what the golden-file generator emits)."""
        base = [type_name(self.a_type), type_name(self.b_type), type_name(self.c_type), str(self.M), str(self.N),
                f"UMMA::Major::{self.a_major.name}", f"UMMA::Major::{self.b_major.name}"]
        if self.name.startswith("SM100_MMA_F8F6F4") and not self.a_from_tmem:
            ic = "cute::integral_constant"
            return (f"MMA_Traits<{self.name}, {', '.join(base[:3])}, cute::C<{self.M}>, cute::C<{self.N}>, "
                    f"{ic}<UMMA::Major, UMMA::Major::{self.a_major.name}>, "
                    f"{ic}<UMMA::Major, UMMA::Major::{self.b_major.name}>, "
                    f"{ic}<UMMA::ScaleIn, UMMA::ScaleIn::{self.a_neg.name}>, "
                    f"{ic}<UMMA::ScaleIn, UMMA::ScaleIn::{self.b_neg.name}>>")
        return f"{self.name}<{', '.join(base)}>"

    # --- the MMA_Traits ---
    @property
    def thr_id(self) -> Layout:
        return Layout(Int(self.cta_group))

    @property
    def shape_mnk(self):
        return (Int(self.M), Int(self.N), Int(self.K))

    def _tv(self, mn: int, k: int) -> Layout:
        if self.cta_group == 1:
            return Layout((Int(1), (Int(mn), Int(k))), (Int(0), (Int(1), Int(mn))))
        h = mn // 2
        return Layout((Int(2), (Int(h), Int(k))), (Int(h), (Int(1), Int(mn))))

    @property
    def layout_a_tv(self) -> Layout:
        return self._tv(self.M, self.K)

    @property
    def layout_b_tv(self) -> Layout:
        return self._tv(self.N, self.K)

    @property
    def layout_c_tv(self) -> Layout:
        if self.cta_group == 1:
            return Layout((Int(1), (Int(self.M), Int(self.N))), (Int(0), (Int(1), Int(self.M))))
        h = self.M // 2
        return Layout((Int(2), (Int(h), Int(self.N))), (Int(h), (Int(1), Int(self.M))))

    def make_fragment_A(self, atensor):  # noqa: N802 - CuTe's name
        if self.a_from_tmem:
            mode = TmemAllocMode.NonInterleaved if self.cta_group == 1 else TmemAllocMode.Duplicated
            shape = atensor.shape if hasattr(atensor, "layout") else atensor  # CuTe uses only the shape here
            return make_tmem_frg(self.a_type, self.a_type, self.cta_group, mode, shape)
        return _smem_desc_tensor(self.a_major, atensor, "A")

    def make_fragment_B(self, btensor):  # noqa: N802 - CuTe's name
        return _smem_desc_tensor(self.b_major, btensor, "B")

    def make_fragment_C(self, shape):  # noqa: N802 - CuTe's name
        """The accumulator in TMEM (address 0 until the allocator's base address is set) for a C partition shape."""
        ts = self.a_from_tmem and self.cta_group == 1
        storage, mode = (np.int32, TmemAllocMode.NonInterleaved) if ts else (np.uint32, TmemAllocMode.Interleaved)
        return make_tmem_frg(self.c_type, storage, self.cta_group, mode, shape)


# a/b formats: F16F32Format for kinds f16/tf32, MXF8F6F4Format for f8f6f4; c formats: CFormat
_AB_FORMATS = {"half_t": 0, "bfloat16_t": 1, "tfloat32_t": 2, "float_e4m3_t": 0, "float_e5m2_t": 1,
               "float_e2m3_t": 3, "float_e3m2_t": 4}
_C_FORMATS = {"half_t": 0, "float32": 1, "int32": 2}


def _type_key(t) -> str:
    if hasattr(t, "bits") and hasattr(t, "cpp"):
        return t.name
    return np.dtype(t).name


def _smem_desc_tensor(major: Major, tensor, operand: str):
    """CuTe's ``MakeTensor<UMMA::smem_desc<Major>>``: a descriptor per MMA over ``(MMA, MMA_MN, MMA_K, ...)``."""
    from ..layout import make_tensor
    from .numeric import uint128_t
    from .pointers import SmemPtr
    from .recast import recast_layout

    it = tensor.iterator
    if not isinstance(it, SmemPtr):
        raise MmaError(f"make_fragment_{operand}: UMMA reads {operand} from shared memory through descriptors; got "
                       f"a tensor over {it}. Pass the smem tensor (tk.make_tensor(tk.make_smem_ptr(T, addr), layout))")
    desc = make_umma_desc(major, make_tensor(it, tensor.layout[0]))
    lay = recast_layout(tensor.layout, it.value_type, uint128_t)
    shape = (Int(1),) + tuple(lay.shape[1:])
    stride = (Int(0),) + tuple(lay.stride[1:])
    return make_tensor(DescriptorIterator(desc), Layout(shape, stride))


def _check(cond: bool, op: str, rule: str, got: str):
    if not cond:
        raise MmaError(f"{op}: {rule}; got {got}")


def _major(x, what: str) -> Major:
    try:
        return Major(x)
    except ValueError:
        raise MmaError(f"{what} must be tk.UMMA.Major.K or tk.UMMA.Major.MN, got {x!r}") from None


def _op(name, kind, cta, ts, a, b, c, M, N, a_major, b_major, a_neg, b_neg, c_sat):  # noqa: N803
    a_major, b_major = _major(a_major, "a_major"), _major(b_major, "b_major")
    bits = {"f16": 16, "tf32": 32}.get(kind)
    if bits is not None:
        _check(sizeof_bits(a) == bits and sizeof_bits(b) == bits, name, f"A and B must be {bits}-bit types",
               f"{a} and {b}")
    else:
        _check(sizeof_bits(a) <= 8 and sizeof_bits(b) <= 8, name, "A and B must be types of at most 8 bits",
               f"{a} and {b}")
    M, N = int(M), int(N)  # noqa: N806
    if cta == 1:
        _check(M in (64, 128), name, "M must be 64 or 128 for a 1-CTA MMA", str(M))
    else:
        _check(M in (128, 256), name, "M must be 128 or 256 for a 2-CTA (2x1SM) MMA", str(M))
    step = _n_step(kind, cta, ts, M, b_major)
    _check(N % step == 0 and step <= N <= 256, name, f"N must be a multiple of {step} in [{step}, 256]", str(N))
    if ts:
        _check(a_major == Major.K, name, "A read from TMEM can't be transposed: a_major must be UMMA::Major::K",
               a_major.name)
    return MmaOp(name, kind, cta, ts, a, b, c, M, N, a_major, b_major, ScaleIn(a_neg), ScaleIn(b_neg),
                 Saturate(c_sat))


def _n_step(kind, cta, ts, M, b_major) -> int:  # noqa: N803
    if cta == 2:
        if ts:
            return 32
        return 32 if kind == "f8f6f4" and b_major == Major.MN else 16
    if ts:
        return 8 if M == 64 else 16
    return 16 if kind == "f8f6f4" and b_major == Major.MN else 8


def _factory(name: str, kind: str, cta: int, ts: bool):
    def make(a_type, b_type, c_type, M, N, a_major, b_major, a_neg=ScaleIn.One, b_neg=ScaleIn.One,  # noqa: N803
             c_sat=Saturate.False_):
        return _op(name, kind, cta, ts, a_type, b_type, c_type, M, N, a_major, b_major, a_neg, b_neg, c_sat)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = (f"CuTe's ``{name}<a_type, b_type, c_type, M, N, a_major, b_major, a_neg, b_neg"
                    f"{', c_sat' if ts else ''}>``: ``tcgen05.mma.cta_group::{cta}.kind::{kind}``"
                    f"{' with A in TMEM' if ts else ''}.")
    return make


SM100_MMA_F16BF16_SS = _factory("SM100_MMA_F16BF16_SS", "f16", 1, False)
SM100_MMA_F16BF16_TS = _factory("SM100_MMA_F16BF16_TS", "f16", 1, True)
SM100_MMA_F16BF16_2x1SM_SS = _factory("SM100_MMA_F16BF16_2x1SM_SS", "f16", 2, False)
SM100_MMA_F16BF16_2x1SM_TS = _factory("SM100_MMA_F16BF16_2x1SM_TS", "f16", 2, True)
SM100_MMA_TF32_SS = _factory("SM100_MMA_TF32_SS", "tf32", 1, False)
SM100_MMA_TF32_TS = _factory("SM100_MMA_TF32_TS", "tf32", 1, True)
SM100_MMA_TF32_2x1SM_SS = _factory("SM100_MMA_TF32_2x1SM_SS", "tf32", 2, False)
SM100_MMA_TF32_2x1SM_TS = _factory("SM100_MMA_TF32_2x1SM_TS", "tf32", 2, True)
SM100_MMA_F8F6F4_SS = _factory("SM100_MMA_F8F6F4_SS", "f8f6f4", 1, False)
SM100_MMA_F8F6F4_TS = _factory("SM100_MMA_F8F6F4_TS", "f8f6f4", 1, True)
SM100_MMA_F8F6F4_2x1SM_SS = _factory("SM100_MMA_F8F6F4_2x1SM_SS", "f8f6f4", 2, False)
SM100_MMA_F8F6F4_2x1SM_TS = _factory("SM100_MMA_F8F6F4_2x1SM_TS", "f8f6f4", 2, True)

MMA_OPS = (SM100_MMA_F16BF16_SS, SM100_MMA_F16BF16_TS, SM100_MMA_F16BF16_2x1SM_SS, SM100_MMA_F16BF16_2x1SM_TS,
           SM100_MMA_TF32_SS, SM100_MMA_TF32_TS, SM100_MMA_TF32_2x1SM_SS, SM100_MMA_TF32_2x1SM_TS,
           SM100_MMA_F8F6F4_SS, SM100_MMA_F8F6F4_TS, SM100_MMA_F8F6F4_2x1SM_SS, SM100_MMA_F8F6F4_2x1SM_TS)


class MMA_Atom:  # noqa: N801 - CuTe's name
    """CuTe's ``MMA_Atom<Op>``: the op plus its traits (ThrID, Shape_MNK, Layout{A,B,C}_TV) and ``accumulate_``."""

    def __init__(self, op: MmaOp):
        if not isinstance(op, MmaOp) and not all(hasattr(op, a) for a in ("thr_id", "shape_mnk", "layout_c_tv")):
            raise MmaError(f"MMA_Atom takes an MMA op such as tk.SM100_MMA_F16BF16_SS(...) or "
                           f"tk.SM80_16x8x16_F32F16F16F32_TN(); got {op!r}")
        self.op = op

    @property
    def ThrID(self) -> Layout:  # noqa: N802
        return self.op.thr_id

    @property
    def Shape_MNK(self):  # noqa: N802
        return self.op.shape_mnk

    @property
    def LayoutA_TV(self) -> Layout:  # noqa: N802
        return self.op.layout_a_tv

    @property
    def LayoutB_TV(self) -> Layout:  # noqa: N802
        return self.op.layout_b_tv

    @property
    def LayoutC_TV(self) -> Layout:  # noqa: N802
        return self.op.layout_c_tv

    def make_fragment_A(self, atensor):  # noqa: N802 - CuTe's name
        """A's fragment: smem descriptors over an smem partition (``_SS``), or a TMEM tensor (``_TS``: a shape or a
        partition, only its shape counts)."""
        _check_frag(atensor, self.LayoutA_TV, "A", "VMK")
        return self.op.make_fragment_A(atensor)

    def make_fragment_B(self, btensor):  # noqa: N802
        """B's fragment: smem descriptors over an smem partition ``(MMA, MMA_N, MMA_K, ...)``."""
        _check_frag(btensor, self.LayoutB_TV, "B", "VNK")
        return self.op.make_fragment_B(btensor)

    def make_fragment_C(self, ctensor):  # noqa: N802
        """The accumulator in TMEM for a C partition (or its shape)."""
        _check_frag(ctensor, self.LayoutC_TV, "C", "VMN")
        return self.op.make_fragment_C(_shape(ctensor))

    def __str__(self):
        return ("MMA_Atom\n"
                f"  ThrID:      {self.ThrID}\n"
                f"  Shape_MNK:  {to_str(self.Shape_MNK)}\n"
                f"  LayoutA_TV: {self.LayoutA_TV}\n"
                f"  LayoutB_TV: {self.LayoutB_TV}\n"
                f"  LayoutC_TV: {self.LayoutC_TV}\n")

    __repr__ = __str__


def _shape(t):
    return t.shape if hasattr(t, "layout") else t


def _check_frag(t, tv: Layout, name: str, modes: str):
    shape = _shape(t)
    if not is_tuple(shape) or len(shape) < 3 or int(size(shape[0])) != int(size(tv, 1)):
        raise MmaError(f"make_fragment_{name} takes an MMA partition ({modes}: mode 0 of size {size(tv, 1)}, rank >= 3)"
                       f"; got shape {to_str(shape)}. Pass thr_mma.partition_{name}(tensor)")
