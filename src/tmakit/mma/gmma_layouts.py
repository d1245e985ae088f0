"""The layouts of CuTe's ``SM90::GMMA`` (cute/atom/mma_traits_sm90_gmma.hpp): the shared-memory layout atoms
``Layout_{MN,K}_{INTER,SW32,SW64,SW128}_Atom<T>`` and the thread-value layouts of a warpgroup MMA (``CLayout_64xN``,
``ALayout_64x{8,16,32,64}``, ``ABLayout<M,K>``)."""

from __future__ import annotations

from .errors import MmaError
from .numeric import sizeof_bits
from .recast import upcast
from .tmem_ops import _L
from .umma import _ATOMS_BITS, _atom_bits

_GMMA_ATOMS = ("MN_INTER", "MN_SW32", "MN_SW64", "MN_SW128", "K_INTER", "K_SW32", "K_SW64", "K_SW128")


def layout_atom(name: str, value_type):
    """``GMMA::Layout_<name>_Atom<T>``: the bit atom upcast to T (name e.g. ``K_SW128``, ``MN_INTER``)."""
    if name not in _GMMA_ATOMS:
        raise MmaError(f"no GMMA layout atom {name!r}; choose one of {', '.join(_GMMA_ATOMS)}")
    return upcast(_atom_bits(*_ATOMS_BITS[name]), sizeof_bits(value_type))


def CLayout_64xN(N):  # noqa: N802 N803 - CuTe's names
    """``GMMA::CLayout_64xN<N>``: (thread 128, value N/2) -> (m, n) of a 64xN accumulator."""
    n = int(N)
    if n % 8 or not 8 <= n <= 256:
        raise MmaError(f"CLayout_64xN: N must be a multiple of 8 in [8, 256]; got {N}")
    return _L(((4, 8, 4), (2, 2, n // 8)), ((128, 1, 16), (64, 8, 512)))


_A_LAYOUTS = {
    8: _L(((4, 8, 4), (2, 2)), ((64, 1, 16), (8, 256))),  # 32-bit values
    16: _L(((4, 8, 4), (2, 2, 2)), ((128, 1, 16), (64, 8, 512))),  # 16-bit values
    32: _L(((4, 8, 4), (4, 2, 2)), ((256, 1, 16), (64, 8, 1024))),  # 8-bit values
    64: _L(((4, 8, 4), (8, 2, 2)), ((512, 1, 16), (64, 8, 2048))),  # sparse 8-bit values
}


def ALayout_64xK(K):  # noqa: N802 N803 - CuTe's ALayout_64x8 / 64x16 / 64x32 / 64x64
    """``GMMA::ALayout_64x{8,16,32,64}``: (thread 128, value) -> (m, k) of A held in registers (``_RS``)."""
    if int(K) not in _A_LAYOUTS:
        raise MmaError(f"GMMA register A layouts are ALayout_64x8/16/32/64; got K = {K}")
    return _A_LAYOUTS[int(K)]


def ABLayout(M, K):  # noqa: N802 N803 - CuTe's name
    """``GMMA::ABLayout<M,K>``: every one of the 128 threads sees the whole MxK smem operand."""
    return _L((128, (int(M), int(K))), (0, (1, int(M))))
