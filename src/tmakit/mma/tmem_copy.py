"""CuTe's Copy_Atom / TiledCopy / ThrCopy (copy_atom.hpp) for TMEM copies, and ``make_tmem_copy``.

``make_tmem_copy(SM100_TMEM_LOAD_32dp32b1x(), tCtAcc)`` tiles the op over a TMEM tensor for 128 threads (4 warps,
warp w reaching lanes 32w..32w+31); ``.get_slice(threadIdx.x).partition_S(tCtAcc)`` / ``.partition_D(tCgC)`` give
one thread's TMEM source and its matching destination.
"""

from __future__ import annotations

from ..layout import Int, Layout, Tensor, coalesce, make_layout
from .errors import MmaError
from .numeric import sizeof_bits
from .pointers import TmemPtr, tmem_dp
from .recast import upcast
from .tiled_copy import Copy_Atom, ThrCopy, TiledCopy, make_cotiled_copy
from .tmem_ops import TmemCopyOp

__all__ = ["Copy_Atom", "ThrCopy", "TiledCopy", "make_cotiled_copy", "make_tmem_copy"]


def make_tmem_copy(op, tmem: Tensor) -> TiledCopy:
    """CuTe's ``make_tmem_copy(CopyOp{}, tmem_tensor)``: the op tiled over 4 warps (one lane quarter each)."""
    if isinstance(op, Copy_Atom):
        atom = op
    else:
        if not isinstance(op, TmemCopyOp):
            raise MmaError("make_tmem_copy takes an SM100_TMEM_LOAD_*/STORE_* op (e.g. "
                           f"tk.SM100_TMEM_LOAD_32dp32b1x()); got {op!r}")
        if not isinstance(tmem.iterator, TmemPtr):
            raise MmaError(f"make_tmem_copy needs a TMEM tensor (iterator tmem_ptr); got one over {tmem.iterator}. "
                           "Use the accumulator from thr_mma.make_fragment_C(...)")
        atom = Copy_Atom(op, tmem.iterator.value_type)
    t = atom.value_type
    atom_t = Layout((Int(32), Int(4)), (Int(0), Int(32) * tmem_dp(t)))
    atom_v = coalesce(upcast(atom.op.val_id, sizeof_bits(t)))
    return make_cotiled_copy(atom, make_layout(atom_t, atom_v), tmem.layout)
