"""CuTe's Copy_Atom / TiledCopy / ThrCopy (cute/atom/copy_atom.hpp) for any copy op with Copy_Traits, and the ways
to build a TiledCopy: ``make_tiled_copy`` (thread and value layouts), ``make_tiled_copy_impl`` (a TV layout and a
tiler), ``make_tiled_copy_A/B/C`` (matching a TiledMMA's operand partitions), ``make_tiled_copy_C_atom``,
``make_tiled_copy_S/D`` (another atom over a TiledCopy's source / destination partition) and
``make_cotiled_copy``.

``tiled = tk.make_tiled_copy(tk.Copy_Atom(tk.UniversalCopy(np.uint32), tk.half_t), tk.make_layout((32, 4)),
tk.make_layout((1, 2)))`` tiles a 2-value atom over 128 threads; ``tiled.get_slice(t).partition_S(tensor)`` is
thread ``t``'s ``(CPY, CPY_M, CPY_N, ...)`` share of ``tensor``.
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
    logical_product,
    make_layout,
    raked_product,
    right_inverse,
    size,
    zipped_divide,
)
from ..layout.int_tuple import product_each, rank
from ..layout.integer import _, to_str
from .errors import MmaError
from .numeric import sizeof_bits
from .recast import upcast
from .tiled_mma import tile_size as _mma_tile_size


class TiledCopyError(MmaError):
    """A TiledCopy rule was broken: the message names the rule, the value and the fix."""


def _mode(layout: Layout, i: int) -> Layout:
    return Layout(layout.shape[i], layout.stride[i])


def _shape_of(tiler):
    """CuTe's ``shape(Tiler_MN)``: a tiler of integers is its own shape; a tiler of layouts gives their shapes."""
    if isinstance(tiler, tuple):
        return tuple(_shape_of(t) for t in tiler)
    return tiler.shape if isinstance(tiler, Layout) else tiler


def _repeat(r: int):
    return (_,) * r if r > 1 else _


class Copy_Atom:  # noqa: N801 - CuTe's name
    """``Copy_Atom<Op, ValType>``: the op's Copy_Traits (bit layouts) recast to ``value_type`` elements
    (``ValLayoutSrc/Dst/Ref``); each must still give every thread of ``ThrID`` a row."""

    def __init__(self, op, value_type):
        if not all(hasattr(op, a) for a in ("thr_id", "src_layout", "dst_layout", "ref_layout")):
            raise TiledCopyError(f"Copy_Atom takes a copy op (tk.UniversalCopy(np.uint32), tk.SM75_U32x4_LDSM_N(), "
                                 f"tk.SM100_TMEM_LOAD_32dp32b1x() ...) and a value type; got {op!r}")
        self.op, self.value_type = op, value_type
        bits = sizeof_bits(value_type)
        self.ThrID = op.thr_id
        self.ValLayoutSrc = upcast(op.src_layout, bits)
        self.ValLayoutDst = upcast(op.dst_layout, bits)
        self.ValLayoutRef = upcast(op.ref_layout, bits)
        for what, lay in (("Src", self.ValLayoutSrc), ("Dst", self.ValLayoutDst), ("Ref", self.ValLayoutRef)):
            if int(lay.size()) and int(_mode(lay, 0).size()) != int(self.ThrID.size()):
                raise TiledCopyError(
                    f"CopyOperation {op} is not valid for {what} of ValType ({bits}-bit values): its {what} layout "
                    f"recast to {bits} bits is {lay}, whose thread mode does not have size(ThrID) = "
                    f"{self.ThrID.size()}; pick a value type whose width divides the op's per-thread bits")

    @property
    def NumValSrc(self) -> int:  # noqa: N802
        return int(_mode(self.ValLayoutSrc, 1).size())

    @property
    def NumValDst(self) -> int:  # noqa: N802
        return int(_mode(self.ValLayoutDst, 1).size())

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


class TiledCopy(Copy_Atom):
    """``TiledCopy<Copy_Atom, LayoutCopy_TV, Tiler_MN>``: ``TiledLayout_TV`` maps (thread, value) to a coordinate
    of the ``Tiler_MN`` tile; the atom's threads and values must divide the tiled ones."""

    def __init__(self, atom: Copy_Atom, layout_tv: Layout, tiler_mn):
        super().__init__(atom.op, atom.value_type)
        self.atom, self.TiledLayout_TV, self.Tiler_MN = atom, layout_tv, tiler_mn
        ref = self.ValLayoutRef
        for what, noun, tiled, one in (("thrs", "threads", self.TiledNumThr, _mode(ref, 0).size()),
                                       ("vals", "values per thread", self.TiledNumVal, _mode(ref, 1).size())):
            if int(tiled) % int(one):
                raise TiledCopyError(
                    f"TiledCopy uses too few {what} for selected CopyAtom: the TV layout {layout_tv} has "
                    f"{int(tiled)} {noun}, not a multiple of the atom's {int(one)}; give the thread layout a "
                    "multiple of size(ThrID) threads and the value layout a multiple of the atom's values per thread")

    @property
    def AtomNumThr(self):  # noqa: N802
        return _mode(self.ValLayoutRef, 0).size()

    @property
    def AtomNumVal(self):  # noqa: N802
        return _mode(self.ValLayoutRef, 1).size()

    @property
    def TiledNumThr(self):  # noqa: N802
        return _mode(self.TiledLayout_TV, 0).size()

    @property
    def TiledNumVal(self):  # noqa: N802
        return _mode(self.TiledLayout_TV, 1).size()

    def size(self):
        """CuTe's ``size(tiled_copy)``: the number of threads (``TiledNumThr``)."""
        return self.TiledNumThr

    def _tile2thrfrg(self, layout, ref2trg: Layout):
        atom_tv = zipped_divide(self.TiledLayout_TV, (self.AtomNumThr, self.AtomNumVal))
        trg_tv = composition(atom_tv, (ref2trg, _))
        thrval2mn = coalesce(_zip2(trg_tv), (Int(1), (Int(1), Int(1))))
        tv = composition(layout, (thrval2mn, _))
        return tv((_, _), _)

    def _ref2src(self):
        return composition(right_inverse(self.ValLayoutRef), self.ValLayoutSrc)

    def _ref2dst(self):
        return composition(right_inverse(self.ValLayoutRef), self.ValLayoutDst)

    def _check_rank(self, layout, what):
        r, t = rank(layout.shape), (len(self.Tiler_MN) if isinstance(self.Tiler_MN, tuple) else 1)
        if r < t:
            raise TiledCopyError(f"Rank of tensor to be partitioned too small: {what} has rank {r} ({layout}), the "
                                 f"tiler {to_str(self.Tiler_MN)} rank {t}; partition a tensor with one mode per "
                                 "tiler mode (append size-1 modes if needed)")

    def tidfrg_S(self, layout):  # noqa: N802
        """(M,N,...) -> (thr, val, (RestM,RestN,...)) over the source side."""
        self._check_rank(layout, "the source")
        return self._tile2thrfrg(zipped_divide(layout, self.Tiler_MN), self._ref2src())

    def tidfrg_D(self, layout):  # noqa: N802
        self._check_rank(layout, "the destination")
        return self._tile2thrfrg(zipped_divide(layout, self.Tiler_MN), self._ref2dst())

    def retile(self, layout):
        """CuTe's ``TiledCopy::retile``: a thread's fragment layout ``(V, rest...)`` regrouped as
        ``(CPY, CPY_M, CPY_N, ...)`` for this copy's atom."""
        r = rank(layout.shape)
        v = size(layout, 0)
        nthr = int(self.TiledNumThr) * int(v)
        frg_mn = upcast(right_inverse(self.TiledLayout_TV).with_shape(_shape_of(self.Tiler_MN)), nthr)
        frg_v = zipped_divide(logical_product(make_layout(v), right_inverse(frg_mn)), make_layout(self.AtomNumVal))
        rest = product_each(frg_mn.shape)
        tiler = (v,) + (rest if isinstance(rest, tuple) else (rest,))
        t = zipped_divide(layout, tiler)
        vt = composition(t, (frg_v, _))
        crd = (Int(0),) + (_,) * (r - 1) if r > 1 else (Int(0),)
        return vt(_, crd)

    def get_layoutS_TV(self):  # noqa: N802
        """(thr, val) -> the tile coordinate (as an index of ``Tiler_MN``) each source value comes from."""
        ref = make_layout((_shape_of(self.Tiler_MN), Int(1)))
        return self._tile2thrfrg(ref, self._ref2src())(_, _, Int(0))

    def get_layoutD_TV(self):  # noqa: N802
        ref = make_layout((_shape_of(self.Tiler_MN), Int(1)))
        return self._tile2thrfrg(ref, self._ref2dst())(_, _, Int(0))

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

    def retile_S(self, tensor: Tensor) -> Tensor:  # noqa: N802
        """A register fragment ``(V, ...)`` regrouped to match ``partition_S``'s ``(CPY, CPY_M, CPY_N, ...)``."""
        return Tensor(tensor.iterator, self.tiled_copy.retile(tensor.layout))

    def retile_D(self, tensor: Tensor) -> Tensor:  # noqa: N802
        return Tensor(tensor.iterator, self.tiled_copy.retile(tensor.layout))

    def __str__(self):
        return f"ThrCopy\n  ThrIdx: {self.thr_idx}\n{self.tiled_copy}"

    __repr__ = __str__


def _atom(x, what) -> Copy_Atom:
    if not isinstance(x, Copy_Atom) or isinstance(x, TiledCopy):
        raise TiledCopyError(f"{what} takes a Copy_Atom first (e.g. tk.Copy_Atom(tk.UniversalCopy(np.uint32), "
                             f"tk.half_t)); got {type(x).__name__}")
    return x


def make_tiled_copy_impl(atom: Copy_Atom, layout_tv: Layout, tiler) -> TiledCopy:
    """CuTe's ``make_tiled_copy_impl(atom, layout_tv, tiler)``: the TiledCopy with this TV layout and tiler."""
    return TiledCopy(_atom(atom, "make_tiled_copy_impl"), layout_tv, tiler)


def make_layout_tv(thr_layout: Layout, val_layout: Layout = None):
    """CuTe DSL's ``make_layout_tv`` (not in CuTe C++): ``(tiler_mn, layout_tv)`` as ``make_tiled_copy`` builds them
    from a thread layout ((m,n) -> thr_idx) and a value layout ((m,n) -> val_idx)."""
    if val_layout is None:
        val_layout = Layout(Int(1))
    for what, lay in (("thr_layout", thr_layout), ("val_layout", val_layout)):
        if not isinstance(lay, Layout):
            raise TiledCopyError(f"make_tiled_copy: {what} must be a Layout ((m,n) -> index), e.g. "
                                 f"tk.make_layout((32, 4)); got {lay!r}")
    layout_mn = raked_product(thr_layout, val_layout)
    layout_tv = right_inverse(layout_mn).with_shape((size(thr_layout), size(val_layout)))
    return product_each(layout_mn.shape), layout_tv


def make_tiled_copy(copy_atom: Copy_Atom, thr_layout: Layout, val_layout: Layout = None) -> TiledCopy:
    """CuTe's ``make_tiled_copy(copy_atom, thr_layout, val_layout = Layout<_1>{})``: the TV layout is the right
    inverse of ``raked_product(thr_layout, val_layout)`` reshaped to (threads, values); the tiler is its shape."""
    _atom(copy_atom, "make_tiled_copy")
    tiler, layout_tv = make_layout_tv(thr_layout, val_layout)
    if int(size(layout_tv)) != int(size(thr_layout)) * int(size(val_layout if val_layout is not None else 1)):
        raise TiledCopyError(f"make_tiled_copy: raked_product({thr_layout}, {val_layout}) is not a bijection onto "
                             "its tile; use compact (injective) thread and value layouts")
    return make_tiled_copy_impl(copy_atom, layout_tv, tiler)


def _tile_size_mma(mma, i):
    return mma.tile_size_mnk(i)


def make_tiled_copy_A(copy_atom: Copy_Atom, tiled_mma) -> TiledCopy:  # noqa: N802 - CuTe's name
    """The copy whose threads hold exactly ``tiled_mma``'s A values: TV layout ``get_layoutA_TV()``, tile (M, K)."""
    return make_tiled_copy_impl(copy_atom, tiled_mma.get_layoutA_TV(),
                                (_tile_size_mma(tiled_mma, 0), _tile_size_mma(tiled_mma, 2)))


def make_tiled_copy_B(copy_atom: Copy_Atom, tiled_mma) -> TiledCopy:  # noqa: N802
    """As ``make_tiled_copy_A`` for B: ``get_layoutB_TV()``, tile (N, K)."""
    return make_tiled_copy_impl(copy_atom, tiled_mma.get_layoutB_TV(),
                                (_tile_size_mma(tiled_mma, 1), _tile_size_mma(tiled_mma, 2)))


def make_tiled_copy_C(copy_atom: Copy_Atom, tiled_mma) -> TiledCopy:  # noqa: N802
    """As ``make_tiled_copy_A`` for C: ``get_layoutC_TV()``, tile (M, N)."""
    return make_tiled_copy_impl(copy_atom, tiled_mma.get_layoutC_TV(),
                                (_tile_size_mma(tiled_mma, 0), _tile_size_mma(tiled_mma, 1)))


def _cotile(layout_tv: Layout, mn_shape):
    """The tiler and TV layout of a copy covering the coordinates ``layout_tv`` reaches in an ``mn_shape`` tile."""
    tiler = tuple(filter(composition(make_layout(mn_shape, tuple(Int(int(i == j)) for j in range(len(mn_shape)))),
                                     layout_tv)) for i in range(len(mn_shape)))
    tile2mn = composition(make_layout(mn_shape), tiler)
    return tiler, composition(left_inverse(tile2mn), layout_tv)


def make_tiled_copy_C_atom(copy_atom: Copy_Atom, tiled_mma) -> TiledCopy:  # noqa: N802
    """CuTe's ``make_tiled_copy_C_atom``: the smallest tile of C whose threads each move ``NumValSrc`` of their
    accumulator values with one atom."""
    layout_c = tiled_mma.get_layoutC_TV()
    copy_v = copy_atom.NumValSrc
    if copy_v > int(size(layout_c, 1)):
        raise TiledCopyError(f"make_tiled_copy_C_atom: the atom moves {copy_v} values per thread, but a thread holds "
                             f"{size(layout_c, 1)} of C ({layout_c}); pick an atom with fewer values")
    layout_tv = composition(layout_c, make_layout((size(layout_c, 0), Int(copy_v))))
    tiler, tv = _cotile(layout_tv, (_tile_size_mma(tiled_mma, 0), _tile_size_mma(tiled_mma, 1)))
    return make_tiled_copy_impl(copy_atom, tv, tiler)


def make_tiled_copy_S(copy_atom: Copy_Atom, tiled_copy: TiledCopy) -> TiledCopy:  # noqa: N802
    """``copy_atom`` tiled like ``tiled_copy``'s source partition (``get_layoutS_TV()``, same tiler)."""
    return make_tiled_copy_impl(copy_atom, tiled_copy.get_layoutS_TV(), tiled_copy.Tiler_MN)


def make_tiled_copy_D(copy_atom: Copy_Atom, tiled_copy: TiledCopy) -> TiledCopy:  # noqa: N802
    """``copy_atom`` tiled like ``tiled_copy``'s destination partition (``get_layoutD_TV()``, same tiler)."""
    return make_tiled_copy_impl(copy_atom, tiled_copy.get_layoutD_TV(), tiled_copy.Tiler_MN)


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
    tiler, layout_tv = _cotile(tv_data, flat)
    return TiledCopy(atom, layout_tv, tiler)


def tile_size(tiled, *modes):
    """``tile_size<I...>(tiled_copy)``: the size of (a mode of) ``Tiler_MN``; of a TiledMMA, ``tile_size<I>``."""
    if isinstance(tiled, TiledCopy):
        return size(_shape_of(tiled.Tiler_MN), *modes)
    return _mma_tile_size(tiled, *modes)
