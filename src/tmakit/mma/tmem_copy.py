"""CuTe's Copy_Atom / TiledCopy / ThrCopy (copy_atom.hpp) for TMEM copies, and ``make_tmem_copy``.

``make_tmem_copy(SM100_TMEM_LOAD_32dp32b1x(), tCtAcc)`` tiles the op over a TMEM tensor for 128 threads (4 warps,
warp w reaching lanes 32w..32w+31); ``.get_slice(threadIdx.x).partition_S(tCtAcc)`` / ``.partition_D(tCgC)`` give
one thread's TMEM source and its matching destination.
"""

from __future__ import annotations

from ..layout import (
    Int,
    Layout,
    Tensor,
    coalesce,
    composition,
    filter,
    left_inverse,
    make_layout,
    right_inverse,
    zipped_divide,
)
from ..layout.int_tuple import product_each, rank
from ..layout.integer import _, to_str
from .errors import MmaError
from .numeric import sizeof_bits
from .pointers import TmemPtr, tmem_dp
from .recast import upcast
from .tmem_ops import TmemCopyOp


class Copy_Atom:  # noqa: N801 - CuTe's name
    """``Copy_Atom<Op, ValType>``: the op's bit layouts recast to ``value_type`` elements."""

    def __init__(self, op: TmemCopyOp, value_type):
        self.op, self.value_type = op, value_type
        bits = sizeof_bits(value_type)
        self.ThrID = op.thr_id
        self.ValLayoutSrc = upcast(op.src_layout, bits)
        self.ValLayoutDst = upcast(op.dst_layout, bits)
        self.ValLayoutRef = upcast(op.ref_layout, bits)
        for what, lay in (("Src", self.ValLayoutSrc), ("Dst", self.ValLayoutDst)):
            if int(lay.size()) and int(Layout(lay.shape[0], lay.stride[0]).size()) != int(self.ThrID.size()):
                raise MmaError(f"{op.name} is not valid for {what} of {bits}-bit values")

    @property
    def NumValSrc(self) -> int:  # noqa: N802
        return int(Layout(self.ValLayoutSrc.shape[1], self.ValLayoutSrc.stride[1]).size())

    @property
    def NumValDst(self) -> int:  # noqa: N802
        return int(Layout(self.ValLayoutDst.shape[1], self.ValLayoutDst.stride[1]).size())

    def __str__(self):
        return ("Copy_Atom\n"
                f"  ThrID:        {self.ThrID}\n"
                f"  ValLayoutSrc: {self.ValLayoutSrc}\n"
                f"  ValLayoutDst: {self.ValLayoutDst}\n"
                f"  ValLayoutRef: {self.ValLayoutRef}\n"
                f"  ValueType:    {sizeof_bits(self.value_type)}b\n")

    __repr__ = __str__


def _zip2(layout: Layout) -> Layout:
    """((a,b),(c,d)) -> ((a,c),(b,d)): CuTe's zip of a rank-2 layout of rank-2 modes."""
    s, d = layout.shape, layout.stride
    return Layout(((s[0][0], s[1][0]), (s[0][1], s[1][1])), ((d[0][0], d[1][0]), (d[0][1], d[1][1])))


def _mode(layout: Layout, i: int) -> Layout:
    return Layout(layout.shape[i], layout.stride[i])


def _repeat(r: int):
    return (_,) * r if r > 1 else _


class TiledCopy(Copy_Atom):
    """``TiledCopy<Copy_Atom, LayoutCopy_TV, Tiler_MN>``: ``TiledLayout_TV`` maps (thread, value) to a tile coord."""

    def __init__(self, atom: Copy_Atom, layout_tv: Layout, tiler_mn):
        super().__init__(atom.op, atom.value_type)
        self.atom, self.TiledLayout_TV, self.Tiler_MN = atom, layout_tv, tiler_mn

    @property
    def TiledNumThr(self):  # noqa: N802
        return _mode(self.TiledLayout_TV, 0).size()

    def _tile2thrfrg(self, layout, ref2trg: Layout):
        ref = self.ValLayoutRef
        atom_tv = zipped_divide(self.TiledLayout_TV, (_mode(ref, 0).size(), _mode(ref, 1).size()))
        trg_tv = composition(atom_tv, (ref2trg, _))
        thrval2mn = coalesce(_zip2(trg_tv), (Int(1), (Int(1), Int(1))))
        tv = composition(layout, (thrval2mn, _))
        return tv((_, _), _)

    def tidfrg_S(self, layout):  # noqa: N802
        return self._tile2thrfrg(zipped_divide(layout, self.Tiler_MN),
                                 composition(right_inverse(self.ValLayoutRef), self.ValLayoutSrc))

    def tidfrg_D(self, layout):  # noqa: N802
        return self._tile2thrfrg(zipped_divide(layout, self.Tiler_MN),
                                 composition(right_inverse(self.ValLayoutRef), self.ValLayoutDst))

    def get_slice(self, thr_idx) -> ThrCopy:
        return ThrCopy(self, thr_idx)

    get_thread_slice = get_slice

    def __str__(self):
        return ("TiledCopy\n"
                f"  Tiler_MN:       {to_str(self.Tiler_MN)}\n"
                f"  TiledLayout_TV: {self.TiledLayout_TV}\n" + Copy_Atom.__str__(self))

    __repr__ = __str__


class ThrCopy:
    """One thread's view of a TiledCopy: ``partition_S`` / ``partition_D`` -> ``(CPY, CPY_M, CPY_N, ...)``."""

    def __init__(self, tiled_copy: TiledCopy, thr_idx):
        self.tiled_copy, self.thr_idx = tiled_copy, thr_idx

    def partition_S(self, tensor: Tensor) -> Tensor:  # noqa: N802 - CuTe's name
        thr = Tensor(tensor.iterator, self.tiled_copy.tidfrg_S(tensor.layout))
        return thr(self.thr_idx, _, _repeat(rank(tensor.layout.shape)))

    def partition_D(self, tensor: Tensor) -> Tensor:  # noqa: N802
        thr = Tensor(tensor.iterator, self.tiled_copy.tidfrg_D(tensor.layout))
        return thr(self.thr_idx, _, _repeat(rank(tensor.layout.shape)))

    def __str__(self):
        return f"ThrCopy\n  ThrIdx: {self.thr_idx}\n{self.tiled_copy}"

    __repr__ = __str__


def make_cotiled_copy(atom: Copy_Atom, atom_tv_layout: Layout, data_layout: Layout) -> TiledCopy:
    """CuTe's make_cotiled_copy: tile ``atom`` so its (thr,val) -> data-address map lands on ``data_layout``."""
    inv_data = make_layout(left_inverse(data_layout), Layout(Int(1), Int(0)))
    tv_data = composition(inv_data, atom_tv_layout)
    reached = coalesce(composition(make_layout(data_layout, Layout(Int(1), Int(0))), _mode(tv_data, 1)))
    if str(reached) != str(coalesce(_mode(atom_tv_layout, 1))):
        raise MmaError(f"the copy's values {_mode(atom_tv_layout, 1)} are not all in the tensor's layout "
                       f"{data_layout}; pick an op whose width fits (e.g. fewer repetitions, or a 16dp shape)")
    flat_shape = product_each(data_layout.shape)
    flat = flat_shape if isinstance(flat_shape, tuple) else (flat_shape,)
    tiler = tuple(filter(composition(make_layout(flat, tuple(Int(int(i == j)) for j in range(len(flat)))), tv_data))
                  for i in range(len(flat)))
    tile2data = composition(make_layout(flat), tiler)
    layout_tv = composition(left_inverse(tile2data), tv_data)
    return TiledCopy(atom, layout_tv, tiler)


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
