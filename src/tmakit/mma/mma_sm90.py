"""SM90 warpgroup MMA operations and their MMA_Traits (CuTe's ``SM90_64xNxK_*`` from mma_traits_sm90_gmma.hpp and
its ``_ext`` file): one ``wgmma.mma_async`` by the 128 threads of a warpgroup. Host algebra only.

``tk.SM90_64x128x16_F32BF16BF16_SS(tk.GMMA.Major.K, tk.GMMA.Major.MN)`` is CuTe's
``SM90_64x128x16_F32BF16BF16_SS<GMMA::Major::K, GMMA::Major::MN>``. Template arguments are positional, in CuTe's
order: ``(tnspA, tnspB, scaleA=One, scaleB=One)`` for the 16-bit kinds, ``(scaleA=One, scaleB=One)`` for the
K-major-only ``_TN`` kinds (tf32, fp8), none for the integer kinds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..layout import Int, Layout, make_layout, make_tensor
from ..layout.utility import make_fragment_like
from .errors import MmaError
from .gmma_desc import DescriptorIterator, Major, ScaleIn, ScaleOut, make_gmma_desc
from .gmma_layouts import ABLayout, ALayout_64xK, CLayout_64xN
from .numeric import bfloat16_t, float_e4m3_t, float_e5m2_t, half_t, same_type, sizeof_bits, tfloat32_t, uint128_t
from .pointers import SmemPtr
from .recast import recast_layout

# kind -> (D/C type, A type, B type, K, transposable); the name's type part is the key
KINDS = {
    "F16F16F16": (half_t, half_t, half_t, 16, True),
    "F32F16F16": (np.float32, half_t, half_t, 16, True),
    "F32BF16BF16": (np.float32, bfloat16_t, bfloat16_t, 16, True),
    "F32TF32TF32": (np.float32, tfloat32_t, tfloat32_t, 8, False),
    **{f"F{c}{na}{nb}": (half_t if c == 16 else np.float32, ta, tb, 32, False)
       for c in (16, 32) for na, ta in (("E4M3", float_e4m3_t), ("E5M2", float_e5m2_t))
       for nb, tb in (("E4M3", float_e4m3_t), ("E5M2", float_e5m2_t))},
    **{f"S32{na}{nb}": (np.int32, ta, tb, 32, False) for na, ta in (("S8", np.int8), ("U8", np.uint8))
       for nb, tb in (("S8", np.int8), ("U8", np.uint8))},
}
N_DENSE = tuple(range(8, 257, 8))  # every kind but the integer ones
N_INT = (8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256)
N_BASE = (8, 16, 32, 64, 96, 128, 192, 256)  # outside mma_traits_sm90_gmma_ext.hpp (CUTE_SM90_EXTENDED_MMA_SHAPES)

# register storage of a type numpy lacks (make_fragment_like of A for _RS; only the layout is CuTe's)
_STORAGE = {"half_t": np.float16, "bfloat16_t": np.uint16, "tfloat32_t": np.float32, "float_e4m3_t": np.uint8,
            "float_e5m2_t": np.uint8}


def _storage(t):
    return _STORAGE.get(getattr(t, "name", None), t)


@dataclass(frozen=True)
class Sm90MmaOp:
    """One ``wgmma.mma_async.sync.aligned.m64nNkK`` form and its MMA_Traits: ``rs`` (A from registers),
    ``kind`` (the name's type part, e.g. ``F32BF16BF16``), the majors and input scales, ``saturate``."""

    name: str
    kind: str
    N: int  # noqa: N815 - CuTe's name
    rs: bool
    a_major: Major = Major.K
    b_major: Major = Major.K
    scale_a: ScaleIn = ScaleIn.One
    scale_b: ScaleIn = ScaleIn.One
    saturate: bool = False

    M = 64

    @property
    def c_type(self):
        return KINDS[self.kind][0]

    d_type = c_type

    @property
    def a_type(self):
        return KINDS[self.kind][1]

    @property
    def b_type(self):
        return KINDS[self.kind][2]

    @property
    def K(self) -> int:  # noqa: N802 - CuTe's name
        return KINDS[self.kind][3]

    @property
    def ptx(self) -> str:
        names = {"half_t": "f16", "bfloat16_t": "bf16", "tfloat32_t": "tf32", "float_e4m3_t": "e4m3",
                 "float_e5m2_t": "e5m2", "float32": "f32", "int32": "s32", "int8": "s8", "uint8": "u8"}

        def n(t):
            return names[getattr(t, "name", None) or np.dtype(t).name]

        sat = ".satfinite" if self.saturate else ""
        return (f"wgmma.mma_async.sync.aligned.m64n{self.N}k{self.K}.{n(self.c_type)}.{n(self.a_type)}."
                f"{n(self.b_type)}{sat}")

    def __str__(self):
        return self.name

    def cpp(self) -> str:
        """The C++ type CuTe spells for this op (what the oracle generator emits)."""
        scales = [] if (self.scale_a, self.scale_b) == (ScaleIn.One, ScaleIn.One) else [
            f"GMMA::ScaleIn::{self.scale_a.name}", f"GMMA::ScaleIn::{self.scale_b.name}"]
        if KINDS[self.kind][4]:
            args = [f"GMMA::Major::{self.a_major.name}", f"GMMA::Major::{self.b_major.name}", *scales]
        elif self.kind.startswith("S32"):
            return self.name
        else:
            args = scales
        return f"{self.name}<{', '.join(args)}>"

    # --- MMA_Traits ---
    @property
    def thr_id(self) -> Layout:
        return Layout(Int(128))

    @property
    def shape_mnk(self):
        return (Int(64), Int(self.N), Int(self.K))

    @property
    def layout_a_tv(self) -> Layout:
        return ALayout_64xK(self.K) if self.rs else ABLayout(64, self.K)

    @property
    def layout_b_tv(self) -> Layout:
        return ABLayout(self.N, self.K)

    @property
    def layout_c_tv(self) -> Layout:
        return CLayout_64xN(self.N)

    def make_fragment_A(self, atensor):  # noqa: N802 - CuTe's name
        """``_SS``: GMMA descriptors over an smem partition (``MakeTensor<GMMA::smem_desc<tnspA>>``); ``_RS``: a
        register fragment ``make_fragment_like<ValTypeA>(partition)``."""
        if self.rs:
            return make_fragment_like(atensor, _storage(self.a_type))
        return smem_desc_tensor(self.a_major, atensor, self.a_type, "A")

    def make_fragment_B(self, btensor):  # noqa: N802
        return smem_desc_tensor(self.b_major, btensor, self.b_type, "B")

    def make_fragment_C(self, shape):  # noqa: N802
        """Registers of C: ``make_tensor<ValTypeC>(shape)`` (compact, column-major)."""
        return make_fragment_like(make_layout(shape), _storage(self.c_type))

    @property
    def scale_out(self) -> ScaleOut:
        return ScaleOut.One


def smem_desc_tensor(major: Major, tensor, value_type, operand: str):
    """CuTe's ``MakeTensor<GMMA::smem_desc<Major>>``: one descriptor per MMA over ``(MMA, MMA_MN, MMA_K, ...)``:
    ``make_gmma_desc<Major>(tensor<0>(t))`` with mode 0 replaced by ``_1:_0`` in 16-byte units."""
    it = getattr(tensor, "iterator", None)
    if not isinstance(it, SmemPtr):
        raise MmaError(f"make_fragment_{operand}: Expected SMEM Tensor to construct a GMMA Desc Tensor; got a tensor "
                       f"over {it}. Pass the smem partition (tk.make_tensor(tk.make_smem_ptr(T, addr), layout))")
    vt = it.value_type
    if not (same_type(vt, value_type) or (sizeof_bits(vt) == 8 and sizeof_bits(value_type) in (8, 6, 4))):
        raise MmaError(f"make_fragment_{operand}: Expecting ValType{operand} type {value_type}; the smem tensor holds "
                       f"{vt}. Make the smem tensor of the MMA's {operand} type")
    lay = tensor.layout
    if not isinstance(lay, Layout):
        raise MmaError(f"make_fragment_{operand}: expected a swizzle-folded smem tensor (its layout a plain Layout); "
                       f"got {lay}")
    desc = make_gmma_desc(major, make_tensor(it, lay[0]))
    u128 = recast_layout(lay, vt, uint128_t)
    return make_tensor(DescriptorIterator(desc), Layout((Int(1),) + tuple(u128.shape[1:]),
                                                        (Int(0),) + tuple(u128.stride[1:])))


def _enum(cls, x, what):
    try:
        return cls(x)
    except ValueError:
        raise MmaError(f"{what} must be a tk.GMMA.{cls.__name__} ({', '.join(m.name for m in cls)}); got {x!r}") \
            from None


def _factory(name: str, kind: str, n: int, rs: bool, saturate: bool):
    transposable = KINDS[kind][4]
    integer = kind.startswith("S32")

    def check_rs(a_major):
        if rs and a_major != Major.K:
            raise MmaError(f"{name}: Register source operand A must have K major layout; got tnspA = "
                           f"GMMA::Major::{a_major.name}. Use tnspA = tk.GMMA.Major.K, or the _SS form for MN-major A")

    if transposable:
        def make(tnspA, tnspB, scaleA=ScaleIn.One, scaleB=ScaleIn.One):  # noqa: N803 - CuTe's names
            a, b = _enum(Major, tnspA, "tnspA"), _enum(Major, tnspB, "tnspB")
            check_rs(a)
            return Sm90MmaOp(name, kind, n, rs, a, b, _enum(ScaleIn, scaleA, "scaleA"),
                             _enum(ScaleIn, scaleB, "scaleB"))
        sig = "tnspA, tnspB, scaleA = One, scaleB = One"
    elif not integer:
        def make(scaleA=ScaleIn.One, scaleB=ScaleIn.One):  # noqa: N803
            return Sm90MmaOp(name, kind, n, rs, scale_a=_enum(ScaleIn, scaleA, "scaleA"),
                             scale_b=_enum(ScaleIn, scaleB, "scaleB"))
        sig = "scaleA = One, scaleB = One"
    else:
        def make():
            return Sm90MmaOp(name, kind, n, rs, saturate=saturate)
        sig = ""

    make.__name__ = make.__qualname__ = name
    c, a, b, k, _t = KINDS[kind]
    make.__doc__ = (f"CuTe's ``{name}{f'<{sig}>' if sig else ''}``: a 64x{n}x{k} warpgroup MMA, "
                    f"{'A from registers' if rs else 'A and B from shared memory'}.")
    return make


def _names():
    out = {}
    for kind, (_c, _a, _b, k, transposable) in KINDS.items():
        integer = kind.startswith("S32")
        for n in N_INT if integer else N_DENSE:
            for form in ("SS", "RS"):
                for sat in ((False, True) if integer else (False,)):
                    suffix = form + ("" if transposable else "_TN") + ("_SATURATE" if sat else "")
                    name = f"SM90_64x{n}x{k}_{kind}_{suffix}"
                    out[name] = _factory(name, kind, n, form == "RS", sat)
    return out


GMMA_OPS = _names()
globals().update(GMMA_OPS)
__all__ = ["Sm90MmaOp", "GMMA_OPS", "smem_desc_tensor", *GMMA_OPS]


def gmma_op(kind: str, n: int, rs: bool, *args, saturate: bool = False):
    """The op factory of one kind (``F32F16F16``), N and form, called with CuTe's template arguments ``args``."""
    k = KINDS[kind][3]
    suffix = ("RS" if rs else "SS") + ("" if KINDS[kind][4] else "_TN") + ("_SATURATE" if saturate else "")
    return GMMA_OPS[f"SM90_64x{n}x{k}_{kind}_{suffix}"](*args)
