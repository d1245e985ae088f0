"""TiledCopy / ThrCopy for TMA (CuTe's copy_atom.hpp): partitioning tensors among the CTAs of a cluster."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..layout import Int, Layout, Tensor, coalesce, composition, make_coord_tensor, make_layout, zipped_divide
from ..layout.composed import ComposedLayout
from ..layout.int_tuple import rank
from ..layout.integer import _, to_str
from .copy_ops import CopyOp
from .tensormap import TensorMap


def _zip_layout(layout: Layout) -> Layout:
    """((a,b),(c,d)) -> ((a,c),(b,d)) (CuTe's zip on a layout of tuples)."""
    def z(t):
        return tuple(tuple(m[i] for m in t) for i in range(len(t[0])))

    return Layout(z(layout.shape), z(layout.stride))


def _compose_mode0(layout, tiler):
    """``layout.compose(tiler, _)``: compose mode 0, keep the other modes."""
    if isinstance(layout, ComposedLayout):
        return ComposedLayout(layout.layout_a, layout.offset, _compose_mode0(layout.layout_b, tiler))
    return composition(layout, (tiler,) + (_,) * (rank(layout.shape) - 1))


@dataclass(frozen=True)
class TmaCall:
    """A TiledCopy bound to an mbarrier (loads), a multicast mask and an L2 cache hint: ``tma.with_(bar, mask)``."""

    tiled_copy: TiledCopy
    barrier: object = None
    mask: int | None = None
    cache_hint: int | None = None

    @property
    def op(self) -> CopyOp:
        return self.tiled_copy.op

    @property
    def tensormap(self) -> TensorMap:
        return self.tiled_copy.tensormap


@dataclass(frozen=True, eq=False)
class TiledCopy:
    """A TMA copy for one CTA tile: the descriptor, the coordinate-tensor strides and the CTA x value layout."""

    op: CopyOp
    tensormap: TensorMap
    tiler_mn: tuple
    layout_tv: Layout
    num_val: int  # elements per TMA instruction (the whole tile of one CTA, before the multicast split)
    value_bits: int
    tma_gbasis: Layout
    g_stride: tuple
    slayout: object
    _tidfrg_cache: dict = field(default_factory=dict, repr=False, compare=False)

    # --- CuTe's Copy_Atom ---
    @property
    def thr_id(self) -> Layout:
        return Layout(Int(1), Int(0))

    @property
    def val_layout_src(self) -> Layout:
        return Layout((Int(1), Int(self.num_val)), (Int(0), Int(1)))

    val_layout_dst = val_layout_src
    val_layout_ref = val_layout_src

    @property
    def num_val_src(self) -> int:
        return self.num_val

    def __str__(self):
        return ("TiledCopy\n"
                f"  Tiler_MN:       {to_str(self.tiler_mn)}\n"
                f"  TiledLayout_TV: {self.layout_tv}\n" + self._atom_str())

    def _atom_str(self) -> str:
        return ("Copy_Atom\n"
                f"  ThrID:        {self.thr_id}\n"
                f"  ValLayoutSrc: {self.val_layout_src}\n"
                f"  ValLayoutDst: {self.val_layout_dst}\n"
                f"  ValLayoutRef: {self.val_layout_ref}\n"
                f"  ValueType:    {self.value_bits}b\n")

    __repr__ = __str__

    def with_(self, barrier=None, mask=None, cache_hint=None) -> TmaCall:
        """Bind the completion barrier (loads) and multicast mask, as CuTe's ``tma.with(bar, mask)``."""
        return TmaCall(self, barrier, mask, cache_hint)

    def get_tma_tensor(self, shape) -> Tensor:
        """The coordinate tensor over the global shape whose values are TMA coordinates."""
        return make_coord_tensor(make_layout(shape, self.g_stride))

    def get_slice(self, idx: int) -> ThrCopy:
        return ThrCopy(self, idx)

    def tidfrg(self, layout):
        """(M,N,...) -> (cta, val, (RestM,RestN,...)) (CuTe's tidfrg_S; TMA's src/dst/ref layouts coincide).

        Memoised per layout: every CTA partitions a tile of the same layout (only the iterator differs)."""
        key = str(layout)
        if key not in self._tidfrg_cache:
            self._tidfrg_cache[key] = self._tidfrg(layout)
        return self._tidfrg_cache[key]

    def _tidfrg(self, layout):
        tiled = zipped_divide(layout, self.tiler_mn)
        atom_tv = zipped_divide(self.layout_tv, (Int(1), Int(self.num_val)))
        ref2trg = self.val_layout_src
        trg_tv = composition(atom_tv, (ref2trg, _))
        thrval2mn = coalesce(_zip_layout(trg_tv), (Int(1), (Int(1), Int(1))))
        tv = _compose_mode0(tiled, thrval2mn)
        return tv(((_, _), _))


@dataclass(frozen=True, eq=False)
class TmaAtom(TiledCopy):
    """What ``make_tma_atom`` returns: CuTe's TMA ``Copy_Atom`` (prints as one). It keeps the TiledCopy's data, so
    ``get_tma_tensor`` and ``tma_partition`` take it as CuTe's atom."""

    def __str__(self):
        return self._atom_str()

    __repr__ = __str__


@dataclass(frozen=True)
class ThrCopy:
    """One CTA's view of a TiledCopy (``tma.get_slice(cta)``)."""

    tiled_copy: TiledCopy
    thr_idx: int

    def _partition(self, tensor: Tensor) -> Tensor:
        thr = Tensor(tensor.iterator, self.tiled_copy.tidfrg(tensor.layout))
        r = rank(tensor.layout.shape)
        rest = (_,) * r if r > 1 else _  # CuTe's repeat<R>(_): a rank-1 tensor keeps its (Rest) mode a tuple
        return thr((self.thr_idx, _, rest))

    def partition_S(self, tensor: Tensor) -> Tensor:  # noqa: N802 - CuTe's name
        """Source partition: ``(TMA, Rest...)``."""
        return self._partition(tensor)

    def partition_D(self, tensor: Tensor) -> Tensor:  # noqa: N802 - CuTe's name
        """Destination partition: ``(TMA, Rest...)``."""
        return self._partition(tensor)

    def __str__(self):
        return f"ThrCopy\n  ThrIdx: {self.thr_idx}\n{self.tiled_copy}"
