"""CuTe's TiledMMA / ThrMMA (mma_atom.hpp) for the SM100 atoms: partitioning A, B, C among the atom's CTAs.

On SM100 a "thread" of the MMA is a CTA of the pair (``ThrID`` = ``_2`` for the 2x1SM forms, ``_1`` otherwise):
``tiled_mma.get_slice(v)`` is CTA ``v``'s view, and its ``partition_A/B/C`` are that CTA's share of a tile.
"""

from __future__ import annotations

from ..layout import (
    Int,
    Layout,
    Tensor,
    complement,
    composition,
    logical_divide,
    make_layout,
    right_inverse,
    size,
    tiled_product,
    zipped_divide,
)
from ..layout import append as _append
from ..layout.int_tuple import is_tuple, rank
from ..layout.integer import _, to_str
from .atoms import MMA_Atom, MmaOp
from .errors import MmaError
from .umma_desc import ScaleOut


def _repeat(r: int):
    return (_,) * r if r > 1 else _


class TiledMMA(MMA_Atom):
    """``TiledMMA<MMA_Atom, AtomLayoutMNK, PermutationMNK>``. ``thr_layout_vmnk`` is
    ``tiled_product(ThrID, AtomLayoutMNK)``; ``accumulate_`` (``UMMA.ScaleOut``) is what the next MMA does with C."""

    def __init__(self, atom: MMA_Atom, thr_layout_mnk: Layout, permutation_mnk):
        super().__init__(atom.op)
        self.atom = atom
        self.thr_layout_mnk = thr_layout_mnk
        self.permutation = permutation_mnk
        self.thr_layout_vmnk = tiled_product(self.ThrID, thr_layout_mnk)
        self.accumulate_ = ScaleOut.One

    @property
    def AtomThrID(self) -> Layout:  # noqa: N802 - CuTe's name
        return self.ThrID

    def get_thr_layout_vmnk(self) -> Layout:
        return self.thr_layout_vmnk

    def permutation_mnk(self, i: int):
        p = self.permutation[i]
        if p is _:
            return size(self.Shape_MNK[i]) * size(self.thr_layout_vmnk, i + 1)
        return p

    def tile_size_mnk(self, i: int):
        return size(self.permutation_mnk(i))

    def _thrfrg(self, layout, i: int, j: int, atom_tv: Layout):
        t = logical_divide(layout, (self.permutation_mnk(i), self.permutation_mnk(j)))
        atom = zipped_divide(t, (make_layout(size(self.Shape_MNK[i])), make_layout(size(self.Shape_MNK[j]))))
        tv = composition(atom, (atom_tv, _))
        thr_tile = (_, (make_layout(size(self.thr_layout_vmnk, i + 1)), make_layout(size(self.thr_layout_vmnk, j + 1))))
        return zipped_divide(tv, thr_tile)

    def thrfrg_C(self, layout):  # noqa: N802 - CuTe's name
        """(M,N,...) -> ((ThrV,(ThrM,ThrN)),(FrgV,(RestM,RestN,...)))."""
        return self._thrfrg(layout, 0, 1, self.LayoutC_TV)

    def thrfrg_A(self, layout):  # noqa: N802
        """(M,K,...) -> ((ThrV,(ThrM,ThrK)),(FrgV,(RestM,RestK,...)))."""
        return self._thrfrg(layout, 0, 2, self.LayoutA_TV)

    def thrfrg_B(self, layout):  # noqa: N802
        """(N,K,...) -> ((ThrV,(ThrN,ThrK)),(FrgV,(RestN,RestK,...)))."""
        return self._thrfrg(layout, 1, 2, self.LayoutB_TV)

    def get_slice(self, thr_idx) -> ThrMMA:
        """CTA ``thr_idx``'s view (on SM100: the peer index in the CTA pair, ``mma_v``)."""
        return ThrMMA(self, self.thr_layout_vmnk.get_flat_coord(thr_idx))

    get_thread_slice = get_slice

    def _thridx_2_thrid(self):
        vmnk = self.thr_layout_vmnk
        return composition(Layout((size(vmnk), Int(1)), (Int(1), Int(0))),
                           right_inverse(make_layout(vmnk, complement(vmnk))))

    def get_layoutC_TV(self):  # noqa: N802
        ref = make_layout((self.tile_size_mnk(0), self.tile_size_mnk(1)))
        return composition(self.thrfrg_C(ref), (self._thridx_2_thrid(), _))

    def get_layoutA_TV(self):  # noqa: N802
        vmnk = self.thr_layout_vmnk
        ref = make_layout((self.tile_size_mnk(0), self.tile_size_mnk(2)))
        atile = (_, (Layout((size(vmnk, 1), size(vmnk, 2)), (Int(1), Int(0))), _))
        return composition(composition(self.thrfrg_A(ref), (atile, _)), (self._thridx_2_thrid(), _))

    def get_layoutB_TV(self):  # noqa: N802
        vmnk = self.thr_layout_vmnk
        ref = make_layout((self.tile_size_mnk(1), self.tile_size_mnk(2)))
        btile = (_, (Layout((size(vmnk, 1), size(vmnk, 2)), (Int(0), Int(1))), _))
        return composition(composition(self.thrfrg_B(ref), (btile, _)), (self._thridx_2_thrid(), _))

    def __str__(self):
        return ("TiledMMA\n"
                f"  ThrLayoutVMNK:  {self.thr_layout_vmnk}\n"
                f"  PermutationMNK: {to_str(self.permutation)}\n" + MMA_Atom.__str__(self))

    __repr__ = __str__


class ThrMMA:
    """CuTe's ``ThrMMA``: one CTA's (``thr_vmnk``) partitions of A, B, C tiles and fragments."""

    def __init__(self, tiled_mma: TiledMMA, thr_vmnk):
        self.tiled_mma, self.thr_vmnk = tiled_mma, thr_vmnk

    def __getattr__(self, name):  # ThrMMA derives from TiledMMA in CuTe
        return getattr(self.tiled_mma, name)

    def _partition(self, tensor: Tensor, thrfrg, i: int, j: int) -> Tensor:
        thr = Tensor(tensor.iterator, thrfrg(tensor.layout))
        v = self.thr_vmnk
        crd = (v[0], (v[i], v[j]))
        return thr(crd, (_, _repeat(rank(thr.layout.shape[1][1]))))

    def partition_C(self, ctensor: Tensor) -> Tensor:  # noqa: N802 - CuTe's name
        return self._partition(ctensor, self.tiled_mma.thrfrg_C, 1, 2)

    def partition_A(self, atensor: Tensor) -> Tensor:  # noqa: N802
        return self._partition(atensor, self.tiled_mma.thrfrg_A, 1, 3)

    def partition_B(self, btensor: Tensor) -> Tensor:  # noqa: N802
        return self._partition(btensor, self.tiled_mma.thrfrg_B, 2, 3)

    def partition_fragment_A(self, atensor: Tensor) -> Tensor:  # noqa: N802
        return self.tiled_mma.make_fragment_A(self.partition_A(atensor))

    def partition_fragment_B(self, btensor: Tensor) -> Tensor:  # noqa: N802
        return self.tiled_mma.make_fragment_B(self.partition_B(btensor))

    def partition_fragment_C(self, ctensor: Tensor) -> Tensor:  # noqa: N802
        return self.tiled_mma.make_fragment_C(self.partition_C(ctensor))

    def __str__(self):
        return f"ThrMMA\n  Thr VMNK: {to_str(self.thr_vmnk)}\n{self.tiled_mma}"

    __repr__ = __str__


def make_tiled_mma(atom, thr_layout=None, permutations=None) -> TiledMMA:
    """CuTe's ``make_tiled_mma(atom_or_op, thr_layout = Layout<Shape<_1,_1,_1>>, permutations = Tile<_,_,_>)``."""
    if isinstance(atom, MmaOp) or (not isinstance(atom, MMA_Atom) and hasattr(atom, "layout_c_tv")):
        atom = MMA_Atom(atom)
    if not isinstance(atom, MMA_Atom):
        raise MmaError(f"make_tiled_mma takes an MMA op or MMA_Atom; got {atom!r}")
    if thr_layout is None:
        thr_layout = Layout((Int(1), Int(1), Int(1)))
    thr_mnk = _append(thr_layout, Layout(Int(1), Int(0)), n=3)
    perm = tuple(permutations) if is_tuple(permutations) else (() if permutations is None else (permutations,))
    perm = perm + (_,) * (3 - len(perm))
    return TiledMMA(atom, thr_mnk, perm)


def tile_size(mma: TiledMMA, i: int):
    """``tile_size<I>(tiled_mma)``: the M (0), N (1) or K (2) extent one TiledMMA covers."""
    return mma.tile_size_mnk(i)


def tile_shape(mma: TiledMMA):
    return (tile_size(mma, 0), tile_size(mma, 1), tile_size(mma, 2))


def _partition_shape(thrfrg, shape):
    dummy = make_layout(shape)
    tv = thrfrg(dummy)
    return tv(Int(0), (_, _repeat(rank(dummy.shape)))).shape


def partition_shape_A(mma: TiledMMA, shape_mk):  # noqa: N802 - CuTe's name
    """The shape of one CTA's A partition of an (M,K,...) tile: ``((MMA_M,MMA_K),M_MMAs,K_MMAs,...)``."""
    return _partition_shape(mma.thrfrg_A, shape_mk)


def partition_shape_B(mma: TiledMMA, shape_nk):  # noqa: N802
    return _partition_shape(mma.thrfrg_B, shape_nk)


def partition_shape_C(mma: TiledMMA, shape_mn):  # noqa: N802
    return _partition_shape(mma.thrfrg_C, shape_mn)


def partition_fragment_C(mma: TiledMMA, shape_mn):  # noqa: N802
    return mma.make_fragment_C(partition_shape_C(mma, shape_mn))


def thr_size(mma: TiledMMA, *modes):
    return size(mma.thr_layout_vmnk, *modes)
