"""SM80 warp-level MMA operations (CuTe's ``SM80_16x8x{8,16}_*_TN`` + MMA_Traits, mma_traits_sm80.hpp): one
``mma.sync.aligned.m16n8k{8,16}.row.col`` by the 32 threads of a warp. Host algebra only (the emulator does not run
them): they give ``make_tiled_mma`` / ``make_tiled_copy_A/B/C`` and register fragments their CuTe layouts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..layout import Layout
from ..layout.utility import make_fragment_like
from .numeric import half_t
from .tmem_ops import _L

SM80_16x8_Row = _L(((4, 8), (2, 2)), ((32, 1), (16, 8)))  # (T32,V4) -> (M16,N8)
SM80_8x8_Row = _L(((4, 8), 2), ((16, 1), 8))  # (T32,V2) -> (M8,N8)
_A_16x8x16 = _L(((4, 8), (2, 2, 2)), ((32, 1), (16, 8, 128)))  # (T32,V8) -> (M16,K16)
_B_16x8x16 = _L(((4, 8), (2, 2)), ((16, 1), (8, 64)))  # (T32,V4) -> (N8,K16)


@dataclass(frozen=True)
class Sm80MmaOp:
    """One ``mma.sync`` shape: the traits CuTe's MMA_Atom reads (ThrID, Shape_MNK, A/B/C TV layouts) and the value
    types (A/B ``half_t``; C/D ``half_t`` or ``float``)."""

    name: str
    K: int
    c_type: object
    a_type: object = half_t
    b_type: object = half_t

    def __str__(self):
        return self.name

    def cpp(self) -> str:
        return self.name

    @property
    def thr_id(self) -> Layout:
        return _L(32, 1)

    @property
    def shape_mnk(self):
        return _L((16, 8, self.K), (1, 1, 1)).shape

    @property
    def layout_a_tv(self) -> Layout:
        return _A_16x8x16 if self.K == 16 else SM80_16x8_Row

    @property
    def layout_b_tv(self) -> Layout:
        return _B_16x8x16 if self.K == 16 else SM80_8x8_Row

    @property
    def layout_c_tv(self) -> Layout:
        return SM80_16x8_Row

    def make_fragment_A(self, atensor):  # noqa: N802 - CuTe's name
        """Registers of A: ``make_fragment_like<ValTypeA>(partition)`` (numpy float16 storage for half_t)."""
        return make_fragment_like(atensor, _storage(self.a_type))

    def make_fragment_B(self, btensor):  # noqa: N802
        return make_fragment_like(btensor, _storage(self.b_type))

    def make_fragment_C(self, shape):  # noqa: N802
        """Registers of C: ``make_tensor<ValTypeC>(shape)`` (compact, column-major)."""
        return make_fragment_like(shape, _storage(self.c_type))


def _storage(t):
    return np.float16 if t is half_t else t


def _factory(name, k, c_type):
    def make():
        return Sm80MmaOp(name, k, c_type)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"CuTe's ``{name}``: ``mma.sync.aligned.m16n8k{k}.row.col`` (A, B half_t)."
    return make


SM80_16x8x8_F16F16F16F16_TN = _factory("SM80_16x8x8_F16F16F16F16_TN", 8, half_t)
SM80_16x8x8_F32F16F16F32_TN = _factory("SM80_16x8x8_F32F16F16F32_TN", 8, np.float32)
SM80_16x8x16_F16F16F16F16_TN = _factory("SM80_16x8x16_F16F16F16F16_TN", 16, half_t)
SM80_16x8x16_F32F16F16F32_TN = _factory("SM80_16x8x16_F32F16F16F32_TN", 16, np.float32)

SM80_MMA_OPS = ("SM80_16x8x8_F16F16F16F16_TN", "SM80_16x8x8_F32F16F16F32_TN", "SM80_16x8x16_F16F16F16F16_TN",
                "SM80_16x8x16_F32F16F16F32_TN")
