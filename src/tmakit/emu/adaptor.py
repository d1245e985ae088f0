"""CuTe's device-side ``copy(tma.with_(bar, mask), src, dst)`` and ``prefetch(tma, src)`` on tmakit tensors.

Loads take TMA coordinates from the source coordinate tensor (``partition_S`` of ``get_tma_tensor``) and the shared
address from the destination tensor's pointer; stores and reduces the reverse. The partitioned tensors are
``(TMA, Rest...)``: one TMA instruction per element of the rest modes.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from .device_tma import tma_load, tma_prefetch, tma_reduce, tma_store
from .errors import EmuError, TmaUnitError


@dataclass(frozen=True)
class BoundCopy:
    """An atom bound to an mbarrier and multicast mask (for atoms without their own ``with_``)."""

    tiled_copy: object
    barrier: object = None
    mask: int | None = None

    @property
    def op(self):
        return self.tiled_copy.op

    @property
    def tensormap(self):
        return self.tiled_copy.tensormap


def with_(atom, barrier=None, mask=None):
    """``atom.with(barrier, mask)``: uses the atom's own ``with_`` when it has one."""
    bind = getattr(atom, "with_", None)
    return bind(barrier, mask) if bind is not None else BoundCopy(atom, barrier, mask)


def _flat_ints(x) -> tuple[int, ...]:
    if isinstance(x, (tuple, list)) or type(x).__name__ == "ArithTuple":
        return tuple(v for e in x for v in _flat_ints(e))
    return (int(x),)


def tma_coords(t) -> tuple[int, ...]:
    """TMA coordinates (TMA-dimension order) of a coordinate tensor's first element."""
    it = getattr(t, "iterator", t)
    return tuple(v for c in it for v in _flat_ints(c))


def _size(shape) -> int:
    if isinstance(shape, tuple):
        n = 1
        for s in shape:
            n *= _size(s)
        return n
    return int(shape)


def _rest(t):
    """The rest modes' index tuples of a ``(TMA, Rest...)`` tensor."""
    shape = getattr(t, "shape", None)
    if not isinstance(shape, tuple) or len(shape) <= 1:
        return [()]
    sizes = [_size(s) for s in shape[1:]]
    if all(s == 1 for s in sizes):
        return [(0,) * len(sizes)]
    return list(itertools.product(*(range(s) for s in sizes)))


def _atoms(t, idx):
    if not any(idx):
        return t  # the first atom starts at the tensor's own iterator
    import tmakit as tk

    return t[(tk._, *idx)]


def _pairs(src, dst):
    rs, rd = _rest(src), _rest(dst)
    if len(rs) != len(rd):
        raise EmuError(f"copy: source has {len(rs)} TMA atoms but destination {len(rd)}")
    for i, j in zip(rs, rd):
        yield _atoms(src, i), _atoms(dst, j)


def copy(atom, src, dst) -> None:
    """Issue the TMA instructions of one partitioned copy (loads need ``atom.with_(barrier[, mask])``)."""
    op, tmap = atom.op, atom.tensormap
    bar, mask = getattr(atom, "barrier", None), getattr(atom, "mask", None)
    if op.kind == "load":
        if bar is None:
            raise EmuError(f"{op.name} needs an mbarrier: copy(tma.with_(barrier), src, dst)")
        if (mask is not None) != bool(op.multicast):
            raise TmaUnitError(f"{op.name}: a multicast mask goes with SM90_TMA_LOAD_MULTICAST (and only with it)")
        for s, d in _pairs(src, dst):
            tma_load(tmap, tma_coords(s), d.iterator, bar, mask)
    elif op.kind == "store":
        for s, d in _pairs(src, dst):
            tma_store(tmap, tma_coords(d), s.iterator)
    else:
        for s, d in _pairs(src, dst):
            tma_reduce(tmap, tma_coords(d), s.iterator, op.reduce_op)


def prefetch(atom, src) -> None:
    """``cute::prefetch(tma, src)``: one L2 prefetch per TMA atom of the coordinate tensor."""
    tmap = atom.tensormap
    for idx in _rest(src):
        tma_prefetch(tmap, tma_coords(_atoms(src, idx)))
