"""CuTe's ``UMMA::`` host vocabulary: smem layout atoms, ``tile_to_mma_shape`` and the TMEM fragment makers.

``tk.UMMA.Layout_K_SW128_Atom(tk.half_t)`` is CuTe's ``UMMA::Layout_K_SW128_Atom<half_t>``: a swizzled atom
``Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)`` that ``tile_to_mma_shape`` repeats over an MMA tile.
"""

from __future__ import annotations

from ..layout import ComposedLayout, Int, Layout, Swizzle, composition, make_layout, tile_to_shape, tiled_divide
from ..layout.int_tuple import is_tuple, product, product_each
from ..layout.layout import LayoutLeft, compact_major
from . import umma_desc
from .errors import MmaError
from .numeric import sizeof_bits
from .pointers import SmemPtrFlag, make_tmem_ptr, tmem_dp
from .recast import upcast


def _atom_bits(sw: Swizzle, shape, stride):
    return ComposedLayout(sw, SmemPtrFlag(1), Layout(tuple(Int(s) for s in shape), tuple(Int(d) for d in stride)))


_ATOMS_BITS = {
    "MN_INTER": (Swizzle(0, 4, 3), (128, 8), (1, 128)),
    "MN_SW32": (Swizzle(1, 4, 3), (256, 8), (1, 256)),
    "MN_SW64": (Swizzle(2, 4, 3), (512, 8), (1, 512)),
    "MN_SW128": (Swizzle(3, 4, 3), (1024, 8), (1, 1024)),
    "MN_SW128_32B": (Swizzle(2, 5, 2), (1024, 4), (1, 1024)),
    "K_INTER": (Swizzle(0, 4, 3), (8, 128), (128, 1)),
    "K_SW32": (Swizzle(1, 4, 3), (8, 256), (256, 1)),
    "K_SW64": (Swizzle(2, 4, 3), (8, 512), (512, 1)),
    "K_SW128": (Swizzle(3, 4, 3), (8, 1024), (1024, 1)),
}


def layout_atom(name: str, value_type):
    """``UMMA::Layout_<name>_Atom<T>``: the bit atom upcast to T (name e.g. ``K_SW128``, ``MN_INTER``)."""
    if name not in _ATOMS_BITS:
        raise MmaError(f"no UMMA layout atom {name!r}; choose one of {', '.join(_ATOMS_BITS)}")
    return upcast(_atom_bits(*_ATOMS_BITS[name]), sizeof_bits(value_type))


def _zip(a, b):
    return tuple(zip(a, b))


def tile_to_mma_shape(atom, mma_tile_shape, order=LayoutLeft):
    """``UMMA::tile_to_mma_shape``: tile ``atom`` over ``((MMA_M,MMA_K),M_MMAs,K_MMAs,...)`` and regroup so mode 0 is
    one MMA's operand: ``((MMA_M,MMA_K),M_MMAs,K_MMAs,...)``."""
    s0 = mma_tile_shape[0]
    mn_shape = _zip(s0, mma_tile_shape[1:3]) + tuple(mma_tile_shape[3:])
    mn_tiled = tile_to_shape(atom, mn_shape, order)
    return tiled_divide(mn_tiled, product_each(s0))


# --------------------------------------------------------------------------------------------- TMEM fragments
class TmemAllocMode:
    """``UMMA::TmemAllocMode``: how an MMA's TMEM fragment is spread over the 4 lane quarters."""
    Interleaved = 0
    NonInterleaved = 1
    Duplicated = 2


def _take(shape, b, e):
    return tuple(shape[b:e])


def make_tmem_frg(value_type, storage_type, n_sm: int, alloc: int, tmem_shape):
    """CuTe's ``UMMA::tmem_frg<ValueType,StorageType,N_SM,TmemAlloc>::make(shape)``: the TMEM tensor (address 0) an
    MMA accumulates into (or, for ``_TS``, reads A from). ``tmem_shape`` is ``((M_MMA,N_MMA),MMA_M,MMA_N,...)``."""
    bits_v, bits_s = sizeof_bits(value_type), sizeof_bits(storage_type)
    if bits_v > bits_s:
        raise MmaError(f"TMEM storage type ({bits_s}b) must hold the value type ({bits_v}b)")
    if int(product(tmem_shape)) * bits_s > 128 * 512 * 32:
        raise MmaError(f"the fragment {tmem_shape} needs more TMEM than one SM has (128 lanes x 512 columns x 32b); "
                       "use fewer MMAs per tile or a narrower accumulator")
    if not (is_tuple(tmem_shape) and is_tuple(tmem_shape[0]) and len(tmem_shape[0]) == 2):
        raise MmaError(f"expected a post-partitioned shape ((M_MMA,N_MMA),...); got {tmem_shape}")
    m_mma, n_mma = int(product(tmem_shape[0][0])), int(product(tmem_shape[0][1]))
    rest = _take(tmem_shape, 1, len(tmem_shape))
    restride = Layout((Int(128), Int(16384)), (tmem_dp(value_type), Int(bits_s // bits_v)))
    full = Layout((Int(128), Int(n_mma)), (Int(1), Int(128)))
    if n_sm == 1:
        if alloc not in (TmemAllocMode.Interleaved, TmemAllocMode.NonInterleaved) or m_mma not in (64, 128):
            raise MmaError(f"UMMA_1SM TMEM fragments need M_MMA 64 or 128 (got {m_mma}) and an (Non)Interleaved mode")
        if m_mma == 64:
            atom = Layout(((Int(16), Int(4)), Int(n_mma)), ((Int(1), Int(32)), Int(128)))
            step = Int(1 if alloc == TmemAllocMode.Interleaved else 2)
            tiler = Layout(rest, compact_major(rest, LayoutLeft, step))
        else:
            atom, tiler = full, make_layout(rest)
    elif n_sm == 2:
        tiler = make_layout(rest)
        if m_mma == 32 and alloc == TmemAllocMode.Interleaved:
            atom = Layout((Int(32), (Int(n_mma // 4), Int(4))), (Int(1), (Int(128), Int(32))))
        elif m_mma == 64 and alloc == TmemAllocMode.Interleaved:
            atom = Layout((Int(64), (Int(n_mma // 2), Int(2))), (Int(1), (Int(128), Int(64))))
        elif (m_mma == 64 and alloc == TmemAllocMode.Duplicated) or m_mma == 128:
            atom = full
        else:
            raise MmaError(f"UMMA_2SM TMEM fragments need M_MMA 32, 64 or 128 per CTA; got {m_mma}")
    else:
        raise MmaError(f"UMMA runs on 1 or 2 SMs, not {n_sm}")
    from ..layout import make_tensor, tiled_product

    return make_tensor(make_tmem_ptr(value_type), composition(restride, tiled_product(atom, tiler)))


class UMMA:
    """CuTe's ``UMMA`` namespace: ``tk.UMMA.Major.K``, ``tk.UMMA.Layout_K_SW128_Atom(T)``,
    ``tk.UMMA.tile_to_mma_shape(atom, shape)``, ``tk.UMMA.ScaleOut.Zero`` ..."""

    Major = umma_desc.Major
    ScaleIn = umma_desc.ScaleIn
    ScaleOut = umma_desc.ScaleOut
    Saturate = umma_desc.Saturate
    LayoutType = umma_desc.LayoutType
    TmemAllocMode = TmemAllocMode
    SmemDescriptor = umma_desc.SmemDescriptor
    DescriptorIterator = umma_desc.DescriptorIterator
    make_umma_desc = staticmethod(umma_desc.make_umma_desc)
    tile_to_mma_shape = staticmethod(tile_to_mma_shape)

    @staticmethod
    def Layout_MN_INTER_Atom(t):  # noqa: N802 - CuTe's names
        return layout_atom("MN_INTER", t)

    @staticmethod
    def Layout_MN_SW32_Atom(t):  # noqa: N802
        return layout_atom("MN_SW32", t)

    @staticmethod
    def Layout_MN_SW64_Atom(t):  # noqa: N802
        return layout_atom("MN_SW64", t)

    @staticmethod
    def Layout_MN_SW128_Atom(t):  # noqa: N802
        return layout_atom("MN_SW128", t)

    @staticmethod
    def Layout_MN_SW128_32B_Atom(t):  # noqa: N802
        return layout_atom("MN_SW128_32B", t)

    @staticmethod
    def Layout_K_INTER_Atom(t):  # noqa: N802
        return layout_atom("K_INTER", t)

    @staticmethod
    def Layout_K_SW32_Atom(t):  # noqa: N802
        return layout_atom("K_SW32", t)

    @staticmethod
    def Layout_K_SW64_Atom(t):  # noqa: N802
        return layout_atom("K_SW64", t)

    @staticmethod
    def Layout_K_SW128_Atom(t):  # noqa: N802
        return layout_atom("K_SW128", t)
