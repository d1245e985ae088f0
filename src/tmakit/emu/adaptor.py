"""CuTe's device-side ``copy(tma.with_(bar, mask), src, dst)`` and ``prefetch(tma, src)`` on tmakit tensors.

Loads take TMA coordinates from the source coordinate tensor (``partition_S`` of ``get_tma_tensor``) and the shared
address from the destination tensor's pointer; stores and reduces the reverse. The partitioned tensors are
``(TMA, Rest...)``: one TMA instruction per element of the rest modes.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ..layout import _
from ..tma.bulk_copy import BulkCopyAuto
from ..tma.make_im2col_tma_copy import im2col_coord
from . import tma_unit
from .bulk import bulk_copy
from .cp_async import cp_async_copy, is_cp_async
from .device_tma import tma_load, tma_prefetch, tma_reduce, tma_store
from .errors import EmuError, TmaUnitError
from .ldsm_stsm import WARP, is_matrix_copy, matrix_copy


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


def _op_coords(op, t) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(TMA coordinates, im2col offsets) of a partition's first element; im2col tensors give
    ``(c, (w,h,d), n, (s,r,t))``: the first ``rank`` values are coordinates, the rest offsets (stores drop them)."""
    if not getattr(op, "im2col", False):
        return tma_coords(t), ()
    flat = _flat_ints(im2col_coord(t))
    nsp = (len(flat) - 2) // 2
    return flat[:nsp + 2], flat[nsp + 2:]


def _size(shape) -> int:
    if isinstance(shape, tuple):
        n = 1
        for s in shape:
            n *= _size(s)
        return n
    return int(shape)


def _modes(t) -> tuple:
    shape = getattr(t, "shape", ())
    return shape if isinstance(shape, tuple) else (shape,)


def _slices(t):
    """The mode-0 sub-tensor ``t(_, i)`` for every index ``i`` of the later modes (CuTe's copy loop)."""
    rest = [range(_size(m)) for m in _modes(t)[1:]]
    for idx in itertools.product(*rest):
        yield t.mode(0) if not any(idx) else t[(_, *idx)]


def _atom_pairs(src, dst, nval: int):
    """(src, dst) sub-tensors of ``nval`` values each: CuTe's ``copy`` + ``Copy_Atom::call`` recursion."""
    if _size(_modes(src)) == nval:
        yield src, dst
        return
    if len(_modes(src)) > 1:
        if len(_modes(dst)) != len(_modes(src)):
            raise EmuError(f"copy: source shape {src.shape} and destination shape {dst.shape} do not match")
        for s, d in zip(_slices(src), _slices(dst)):
            yield from _atom_pairs(s, d, nval)
        return
    if not isinstance(src.shape, tuple) or not isinstance(src.shape[0], tuple):
        raise TmaUnitError(f"copy: a partition of {_size(_modes(src))} values cannot be cut into TMA atoms of "
                           f"{nval} values")
    yield from _atom_pairs(src.mode(0), dst.mode(0), nval)  # tensor<0>: split the single mode


def atom_values(atom) -> int:
    """Values one TMA instruction covers (CuTe's ``NumValSrc``); checked against the descriptor's box."""
    tc = getattr(atom, "tiled_copy", atom)
    box = tma_unit.tx_bytes(tc.tensormap) // tc.tensormap.elem_bytes
    nval = getattr(tc, "num_val", None)
    if nval is None:
        return box
    layout_tv = getattr(tc, "layout_tv", None)
    nctas = _size(_modes(layout_tv)[0]) if layout_tv is not None else 1
    if nval != box * nctas:
        raise TmaUnitError(f"{tc.op.name}: the TiledCopy covers {nval} values per TMA atom but its tensor map box "
                           f"holds {box} elements x {nctas} CTA(s): one instruction would not move the atom "
                           f"(descriptor {tc.tensormap})")
    return nval


def _general_kind(atom):
    """The ``kind`` of a general (non-TMA) copy op behind a Copy_Atom / TiledCopy / ThrCopy, else None."""
    holder = getattr(atom, "tiled_copy", atom)
    if not hasattr(holder, "ValLayoutSrc"):  # TMA atoms and bound TMA copies have no Copy_Atom value layouts
        return None
    return getattr(getattr(holder, "op", None), "kind", None)


def universal_copy(src, dst) -> None:
    """``copy(UniversalCopy / AutoVectorizingCopy atom, src, dst)``: ``dst(i) = src(i)`` for every index of the
    (partitioned) tensors, as CuTe's element-by-element copy does; both must have the same number of elements."""
    n, m = _size(_modes(src)), _size(_modes(dst))
    if n != m:
        raise EmuError(f"copy: the source has {n} elements ({src.shape}) and the destination {m} ({dst.shape}); "
                       "partition both with the same TiledCopy (partition_S / partition_D) or retile the fragment")
    for i in range(n):
        dst[i] = src(i)


def copy(atom, src, dst) -> None:
    """Issue the TMA instructions of one partitioned copy (loads need ``atom.with_(barrier[, mask])``); the bulk
    atom ``SM90_BULK_COPY_AUTO`` issues ``cp.async.bulk`` instead (``tk.emu.bulk.bulk_copy``); ldmatrix / stmatrix
    atoms take every thread's tensors (``tk.emu.ldsm_stsm``); cp.async atoms issue asynchronous global -> shared
    copies (``tk.emu.cp_async``)."""
    if isinstance(atom, BulkCopyAuto):
        return bulk_copy(atom, src, dst)
    kind = _general_kind(atom)
    if kind == "universal":
        return universal_copy(src, dst)
    if is_matrix_copy(kind):
        return matrix_copy(atom, src, dst, _atom_pairs)
    if is_cp_async(kind):
        return cp_async_copy(atom, src, dst, _atom_pairs)
    op, tmap = atom.op, atom.tensormap
    bar, mask = getattr(atom, "barrier", None), getattr(atom, "mask", None)
    pairs = _atom_pairs(src, dst, atom_values(atom))
    if op.kind == "load":
        if bar is None:
            raise EmuError(f"{op.name} needs an mbarrier: copy(tma.with_(barrier), src, dst)")
        if (mask is not None) != bool(op.multicast):
            raise TmaUnitError(f"{op.name}: a multicast mask goes with SM90_TMA_LOAD_MULTICAST (and only with it)")
        for s, d in pairs:
            coords, offsets = _op_coords(op, s)
            tma_load(tmap, coords, d.iterator, bar, mask, offsets)
    elif op.kind == "store":
        for s, d in pairs:
            tma_store(tmap, _op_coords(op, d)[0], s.iterator)
    else:
        for s, d in pairs:
            tma_reduce(tmap, tma_coords(d), s.iterator, op.reduce_op)


class TrivialPredTensor:
    """CuTe's ``TrivialPredTensor``: a predicate that is true everywhere (``copy`` is ``copy_if`` with it)."""

    def __call__(self, *_i) -> bool:
        return True

    __getitem__ = __call__


def _pred_at(pred, i: int) -> bool:
    try:
        v = pred(i) if callable(pred) else pred[i]
    except (IndexError, TypeError) as e:
        raise EmuError(f"copy_if: the predicate has no entry {i} ({e}); give one per atom call (or per element in "
                       "the three-argument form)") from e
    return bool(v)


def copy_if(*args) -> None:
    """CuTe's ``copy_if``. ``copy_if(pred, src, dst)``: ``dst(i) = src(i)`` where ``pred(i)``, for every index of
    the tensors. ``copy_if(atom, pred, src, dst)``: the partition's modes after the first, flattened
    colexicographically as CuTe's ``group_modes<1, R>``, give the atom calls: call ``i`` (a TMA instruction, a
    universal copy of mode 0's values) is issued where ``pred(i)``. ``pred``: a tensor, array or callable of ``i``;
    ``TrivialPredTensor()`` is true everywhere. Predicated-off TMA loads move no bytes: count only the issued ones
    in the barrier's transaction bytes. cp.async atoms: a predicated-off call issues nothing (lists of every
    thread's tensors may take a list of per-thread predicates); ldmatrix / stmatrix: see ``_matrix_copy_if``."""
    if len(args) == 3:
        pred, src, dst = args
        n, m = _size(_modes(src)), _size(_modes(dst))
        if n != m:
            raise EmuError(f"copy_if: the source has {n} elements ({src.shape}) and the destination {m} "
                           f"({dst.shape}); give both the same number")
        for i in range(n):
            if _pred_at(pred, i):
                dst[i] = src(i)
        return
    if len(args) != 4:
        raise EmuError(f"copy_if takes (pred, src, dst) or (atom, pred, src, dst), got {len(args)} arguments")
    atom, pred, src, dst = args
    kind = _general_kind(atom)
    if is_matrix_copy(kind):
        return _matrix_copy_if(atom, pred, src, dst)
    if is_cp_async(kind) and not hasattr(src, "layout"):  # every thread's tensors: each thread's own copy_if
        srcs, dsts = _seq_of(src), _seq_of(dst)
        preds = _thread_preds(pred, len(srcs))
        for t, (s, d) in enumerate(zip(srcs, dsts)):
            copy_if(atom, pred if preds is None else preds[t], s, d)
        return None
    for i, s, d in _call_slices(src, dst):
        if _pred_at(pred, i):
            copy(atom, s, d)
    return None


def _call_slices(src, dst):
    """``(i, src_v(_, i), dst_v(_, i))`` of CuTe's ``group_modes<1, R>``: the later modes, colexicographic."""
    rest_s, rest_d = _modes(src)[1:], _modes(dst)[1:]
    sizes = [_size(m) for m in rest_s]
    if sizes != [_size(m) for m in rest_d]:
        raise EmuError(f"copy_if: source shape {src.shape} and destination shape {dst.shape} do not match")
    for i in range(_size(tuple(sizes))):
        idx, r = [], i
        for n in sizes:  # colexicographic: the first of the later modes fastest
            idx.append(r % n)
            r //= n
        if sizes:
            yield i, src[(_, *idx)], dst[(_, *idx)]
        else:
            yield i, src.mode(0), dst.mode(0)


def _seq_of(x) -> list:
    return [x[t] for t in range(len(x))]


def _thread_preds(pred, nthr: int):
    """Per-thread predicates (a list / tuple of ``nthr`` tensors, arrays or callables: thread ``t``'s at ``t``),
    else None (one predicate for every thread)."""
    if not isinstance(pred, (list, tuple)) or not pred or isinstance(pred[0], (bool, int, np.bool_, np.integer)):
        return None
    if len(pred) != nthr:
        raise EmuError(f"copy_if: {len(pred)} per-thread predicates for {nthr} threads' tensors; give one per thread")
    return list(pred)


def _matrix_copy_if(atom, pred, srcs, dsts) -> None:
    """copy_if with an ldmatrix / stmatrix atom (every thread's tensors). CuTe's ``copy_if`` branches per thread
    (``if (pred(i)) copy_atom.call(...)``: these atoms have no predicated form), and ``ldmatrix`` / ``stmatrix``
    are ``.sync.aligned`` warp instructions: call ``i`` is issued by the warps whose 32 lanes all have ``pred(i)``,
    skipped by those where none has, and a warp whose lanes disagree is an ``EmuError`` (undefined in PTX)."""
    if hasattr(srcs, "layout") or hasattr(dsts, "layout"):
        return matrix_copy(atom, srcs, dsts, _atom_pairs)  # raises: one tensor for a warp instruction
    srcs, dsts = _seq_of(srcs), _seq_of(dsts)
    if len(srcs) != len(dsts):
        return matrix_copy(atom, srcs, dsts, _atom_pairs)  # raises: the per-thread counts differ
    preds = _thread_preds(pred, len(srcs))
    calls = [list(_call_slices(s, d)) for s, d in zip(srcs, dsts)]
    counts = {len(c) for c in calls}
    if len(counts) > 1:
        raise EmuError(f"copy_if({atom.op.name}): the threads' partitions make {sorted(counts)} calls; partition every "
                       "thread with one tiled copy")
    for i in range(counts.pop() if counts else 0):
        on = [_pred_at(pred if preds is None else preds[t], i) for t in range(len(srcs))]
        warps = []
        for w in range(0, len(on), WARP):
            lanes = on[w:w + WARP]
            if len(set(lanes)) > 1:
                off = [w + k for k, v in enumerate(lanes) if not v]
                raise EmuError(f"copy_if({atom.op.name}): call {i} is predicated on for some lanes of warp {w // WARP} "
                               f"and off for others (threads {off[:8]}{'...' if len(off) > 8 else ''} off); "
                               "ldmatrix / stmatrix are .sync.aligned warp instructions that cannot be predicated per "
                               "thread: make the predicate uniform across each warp")
            warps.append(lanes[0])
        if any(warps):
            matrix_copy(atom, [c[i][1] for c in calls], [c[i][2] for c in calls], _atom_pairs, warps)
    return None


def prefetch(atom, src) -> None:
    """``cute::prefetch(tma, src)``: one L2 prefetch per TMA atom of the coordinate tensor."""
    for s, _dst in _atom_pairs(src, src, atom_values(atom)):
        tma_prefetch(atom.tensormap, *_op_coords(atom.op, s))
