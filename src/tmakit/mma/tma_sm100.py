"""SM100's 2-SM TMA loads (CuTe's ``SM100_TMA_2SM_LOAD[_MULTICAST]``) and ``make_tma_atom_A/B_sm100``.

A 2-SM load is issued by one CTA of a pair for both (``ThrID`` = ``_2``); the descriptor and the box come from the
SM90 machinery (``tk.make_tma_copy``) given the MMA-partitioned tile of one CTA, and ``tk.tma_partition`` splits the
box among the multicast CTAs exactly as on SM90.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..layout import Int, Layout, composition, make_identity_layout, size
from ..layout.int_tuple import rank
from ..layout.integer import _
from ..tma import CopyOp, TiledCopy, make_tma_copy
from .errors import MmaError
from .tiled_mma import TiledMMA


@dataclass(frozen=True)
class Sm100TmaOp(CopyOp):
    """A TMA load issued for a CTA pair (``cta_group::2``). Calling it returns itself, so ``OP`` and CuTe's ``OP{}``
    spelling (``OP()``) both work."""

    cta_group: int = 2

    def __call__(self):
        return self

    @property
    def ptx(self) -> str:
        mc = ".multicast::cluster" if self.multicast else ""
        return f"cp.async.bulk.tensor.Nd.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes{mc}"


SM100_TMA_2SM_LOAD = Sm100TmaOp("SM100_TMA_2SM_LOAD", "load")
SM100_TMA_2SM_LOAD_MULTICAST = Sm100TmaOp("SM100_TMA_2SM_LOAD_MULTICAST", "load", multicast=True)


@dataclass(frozen=True, eq=False)
class Sm100TmaAtom(TiledCopy):
    """CuTe's ``Copy_Atom<Copy_Traits<SM100_TMA_2SM_LOAD..., NumBitsPerTMA>, T>``: the SM90 TMA copy of one CTA's
    share, with the 2-SM thread layout (``ThrID`` = ``_2``: the pair) and Copy_Atom's print."""

    @property
    def thr_id(self) -> Layout:
        return Layout(Int(2), Int(1)) if isinstance(self.op, Sm100TmaOp) else Layout(Int(1), Int(0))

    @property
    def val_layout_src(self) -> Layout:
        n = int(self.thr_id.size())
        return Layout((Int(n), Int(self.num_val)), (Int(self.num_val) if n > 1 else Int(0), Int(1)))

    @property
    def val_layout_dst(self) -> Layout:
        return self.val_layout_src

    @property
    def val_layout_ref(self) -> Layout:
        return self.val_layout_src

    def __str__(self):
        return ("Copy_Atom\n"
                f"  ThrID:        {self.thr_id}\n"
                f"  ValLayoutSrc: {self.val_layout_src}\n"
                f"  ValLayoutDst: {self.val_layout_dst}\n"
                f"  ValLayoutRef: {self.val_layout_ref}\n"
                f"  ValueType:    {self.value_bits}b\n")

    __repr__ = __str__


def _num_multicast(op, cluster_layout_vmnk, mode: int) -> int:
    if not isinstance(op, CopyOp) or op.kind != "load":
        raise MmaError(f"make_tma_atom_*_sm100 takes a TMA load op (SM100_TMA_2SM_LOAD[_MULTICAST] or "
                       f"SM90_TMA_LOAD[_MULTICAST]); got {op!r}")
    return int(size(cluster_layout_vmnk, mode)) if op.multicast else 1


def _make_atom(op, gtensor, slayout, tiler_2d, thrfrg, num_multicast: int, **kw) -> Sm100TmaAtom:
    from ..tma.make_tma_copy import as_gmem_tensor

    g = as_gmem_tensor(gtensor)
    g_tile = composition(make_identity_layout(g.layout.shape), tiler_2d)
    frg = thrfrg(g_tile)
    v_mode = Layout(frg.shape[1], frg.stride[1])
    r = rank(g_tile.shape)
    cta_v_tile = v_mode(_, (_,) * r if r > 1 else _)
    kw.setdefault("arch", "sm_100a")
    copy = make_tma_copy(op, g, slayout, None, num_multicast, cta_v_map=cta_v_tile, **kw)
    return Sm100TmaAtom(**{f: getattr(copy, f) for f in copy.__dataclass_fields__ if f != "_tidfrg_cache"})


def make_tma_atom_A_sm100(op, gtensor, slayout, mma_tiler, mma: TiledMMA, cluster_layout_vmnk,  # noqa: N802
                          **kw) -> Sm100TmaAtom:
    """CuTe's ``make_tma_atom_A_sm100``: A's TMA for one CTA's MMA-partitioned smem tile ``slayout``
    (``((MMA_M,MMA_K),M_MMAs,K_MMAs)``); a multicast op spreads it over the cluster's N CTAs."""
    tiler_mk = (mma_tiler[0], mma_tiler[2])
    return _make_atom(op, gtensor, slayout, tiler_mk, mma.thrfrg_A, _num_multicast(op, cluster_layout_vmnk, 2), **kw)


def make_tma_atom_B_sm100(op, gtensor, slayout, mma_tiler, mma: TiledMMA, cluster_layout_vmnk,  # noqa: N802
                          **kw) -> Sm100TmaAtom:
    """CuTe's ``make_tma_atom_B_sm100``: B's TMA; a multicast op spreads it over the cluster's M CTAs."""
    tiler_nk = (mma_tiler[1], mma_tiler[2])
    return _make_atom(op, gtensor, slayout, tiler_nk, mma.thrfrg_B, _num_multicast(op, cluster_layout_vmnk, 1), **kw)


__all__ = ["SM100_TMA_2SM_LOAD", "SM100_TMA_2SM_LOAD_MULTICAST", "Sm100TmaOp", "Sm100TmaAtom",
           "make_tma_atom_A_sm100", "make_tma_atom_B_sm100"]
