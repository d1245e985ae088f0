"""CuTe's ``SM90::GMMA`` namespace as ``tk.GMMA``: enums, smem layout atoms, thread-value layouts, descriptors and
selectors (gmma_desc.py, gmma_layouts.py, gmma_selector.py).

``tk.GMMA.Layout_K_SW128_Atom(tk.half_t)`` is CuTe's ``GMMA::Layout_K_SW128_Atom<half_t>``:
``Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)``.
"""

from __future__ import annotations

from . import gmma_desc, gmma_selector
from .gmma_layouts import _A_LAYOUTS, ABLayout, ALayout_64xK, CLayout_64xN, layout_atom


def _atom(name):
    def get(t):
        return layout_atom(name, t)

    get.__name__ = get.__qualname__ = f"Layout_{name}_Atom"
    get.__doc__ = f"``GMMA::Layout_{name}_Atom<T>``."
    return staticmethod(get)


def _by_major(sw):
    def get(t, tnsp):
        return layout_atom(f"{gmma_desc.Major(tnsp).name}_{sw}", t)

    get.__name__ = get.__qualname__ = f"Layout_{sw}_Atom"
    get.__doc__ = f"``GMMA::Layout_{sw}_Atom<T, tnsp>``: the MN- or K-major {sw} atom."
    return staticmethod(get)


class GMMA:
    """CuTe's ``SM90::GMMA`` namespace: ``tk.GMMA.Major.K``, ``tk.GMMA.Layout_K_SW128_Atom(T)``,
    ``tk.GMMA.make_gmma_desc(major, tensor)``, ``tk.GMMA.ss_op_selector(...)``, ``tk.GMMA.CLayout_64xN(N)`` ..."""

    Major = gmma_desc.Major
    ScaleIn = gmma_desc.ScaleIn
    ScaleOut = gmma_desc.ScaleOut
    LayoutType = gmma_desc.LayoutType
    GmmaDescriptor = gmma_desc.GmmaDescriptor
    DescriptorIterator = gmma_desc.DescriptorIterator
    make_gmma_desc = staticmethod(gmma_desc.make_gmma_desc)
    layout_type = staticmethod(gmma_desc.layout_type)
    CLayout_64xN = staticmethod(CLayout_64xN)
    ALayout_64xK = staticmethod(ALayout_64xK)
    ABLayout = staticmethod(ABLayout)
    ss_op_selector = staticmethod(gmma_selector.ss_op_selector)
    rs_op_selector = staticmethod(gmma_selector.rs_op_selector)
    ss_smem_selector = staticmethod(gmma_selector.ss_smem_selector)
    rs_smem_selector = staticmethod(gmma_selector.rs_smem_selector)

    Layout_MN_INTER_Atom = _atom("MN_INTER")
    Layout_MN_SW32_Atom = _atom("MN_SW32")
    Layout_MN_SW64_Atom = _atom("MN_SW64")
    Layout_MN_SW128_Atom = _atom("MN_SW128")
    Layout_K_INTER_Atom = _atom("K_INTER")
    Layout_K_SW32_Atom = _atom("K_SW32")
    Layout_K_SW64_Atom = _atom("K_SW64")
    Layout_K_SW128_Atom = _atom("K_SW128")
    Layout_INTER_Atom = _by_major("INTER")
    Layout_SW32_Atom = _by_major("SW32")
    Layout_SW64_Atom = _by_major("SW64")
    Layout_SW128_Atom = _by_major("SW128")


for _n in (8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 136, 144, 152, 160, 168, 176, 184, 192,
           200, 208, 216, 224, 232, 240, 248, 256):
    setattr(GMMA, f"CLayout_64x{_n}", CLayout_64xN(_n))
for _k in _A_LAYOUTS:
    setattr(GMMA, f"ALayout_64x{_k}", _A_LAYOUTS[_k])
