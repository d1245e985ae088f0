"""``copy`` with CuTe's ldmatrix / stmatrix atoms (``SM75_U32x{1,2,4}_LDSM_N``, ``SM75_U16x{2,4,8}_LDSM_T``,
``SM90_U32x{1,2,4}_STSM_N``, ``SM90_U16x{2,4,8}_STSM_T``), moving the data as ``ldmatrix`` / ``stmatrix
.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16`` do.

A warp instruction needs all 32 lanes at once, and a CTA here is one Python program, so the call takes every
thread's tensors: ``copy(tiled_copy | thr_copy | atom, srcs, dsts)`` with ``srcs[t]`` / ``dsts[t]`` thread ``t``'s
partition (``partition_S`` / ``partition_D`` of shared memory, ``retile_S`` / ``retile_D`` of its registers), for
every thread of the tiled copy (``len == size(tiled_copy)``; a plain Copy_Atom has 32). Any sequence indexable by
thread works: a list, or ``thread_fragments_C(...)`` of the wgmma accumulators. Thread ``t`` is lane ``t % 32`` of
warp ``t // 32``; atom call ``k`` of every thread of a warp (CuTe's loop over the modes after the first) is one
instruction.

The instruction, for ``x{n}`` (``n`` 8x8 matrices of 16-bit elements, 16-byte rows):

- lane ``8*m + r`` (``m < n``) gives the shared address of row ``r`` of matrix ``m``: the address of value 0 of its
  shared slice, whose values must be the row's 16 contiguous bytes (CuTe's ``recast<uint128_t>``) at a 16-byte
  aligned address (else ``IllegalInstruction``); the other lanes' addresses are not read;
- register ``m`` of lane ``l`` is the 32-bit word ``l % 4`` of row ``l // 4`` of matrix ``m`` (two elements, the
  lower column in the low half); ``.trans`` (the ``_T`` atoms) transposes each matrix first;
- a lane's register slice is its registers' bytes in value order (register 0 first, little-endian).

Element width: the tensors' element type must be as wide as the atom's value type. Counted in the launch statistics
as ``ldsm`` / ``stsm`` (one per warp instruction).
"""

from __future__ import annotations

import numpy as np

from ..layout import size
from .errors import EmuError, IllegalInstruction
from .scheduler import current_cta
from .smem_ptr import SmemPtr

WARP = 32
ROW_BYTES = 16


def is_matrix_copy(kind) -> bool:
    """Whether a general copy op's ``kind`` is ldmatrix / stmatrix."""
    return kind in ("ldsm", "stsm")


def _threads(holder) -> int:
    tv = getattr(holder, "TiledLayout_TV", None)
    return int(size(tv, 0)) if tv is not None else int(size(holder.ThrID))


def _per_thread(x, n: int, what: str, name: str) -> list:
    if hasattr(x, "layout") and hasattr(x, "iterator"):
        raise EmuError(f"copy({name}): ldmatrix / stmatrix are warp instructions; pass every thread's {what} tensor, "
                       f"a sequence of {n} (thread t's partition_S / partition_D / retile at index t), not one tensor")
    try:
        k = len(x)
    except TypeError:
        raise EmuError(f"copy({name}): the {what} must be a sequence of {n} per-thread tensors; got {x!r}") from None
    if k != n:
        raise EmuError(f"copy({name}): {k} {what} tensors for a tiled copy of {n} threads; give one per thread "
                       f"(index t = thread t, size(tiled_copy) = {n})")
    return [x[t] for t in range(n)]


class _Form:
    """What one instruction does: direction, matrix count, transpose, value width."""

    def __init__(self, holder):
        op = holder.op
        self.name, self.load = op.name, op.kind == "ldsm"
        self.trans = op.name.endswith("_T")
        regs = op.dst_layout if self.load else op.src_layout  # (thread, bit) of the registers: 32 bits per matrix
        self.mats = int(size(regs, 1)) // 32
        self.nsrc, self.ndst = int(holder.NumValSrc), int(holder.NumValDst)
        self.bits = int(size(op.src_layout, 1)) // self.nsrc
        self.nreg = self.ndst if self.load else self.nsrc

    @property
    def ptx(self) -> str:
        return (f"{'ldmatrix' if self.load else 'stmatrix'}.sync.aligned.m8n8.x{self.mats}"
                f"{'.trans' if self.trans else ''}.shared.b16")


def _values(t) -> int:
    return int(size(t.layout))


def _smem_row(f: _Form, t, lane: int) -> tuple[SmemPtr, int]:
    """(pointer, row address) of one lane's shared slice, checked against the instruction's rules."""
    it, side = t.iterator, "source" if f.load else "destination"
    if not isinstance(it, SmemPtr):
        raise EmuError(f"{f.name}: the {side} of lane {lane} must be a shared-memory tensor (partition_"
                       f"{'S' if f.load else 'D'} of a tensor over emu.shared_tensor / make_smem_ptr); got {it!r}")
    if it.smem is not current_cta().smem:
        raise EmuError(f"{f.name}: lane {lane}'s {side} points into another CTA's shared memory ({f.ptx} reads and "
                       "writes the executing CTA's own)")
    e = it.dtype.itemsize
    if 8 * e != f.bits:
        raise EmuError(f"{f.name}: lane {lane}'s shared {side} holds {8 * e}-bit elements ({it.dtype}) but the atom "
                       f"moves {f.bits}-bit values; make the tensor of the Copy_Atom's value type (or the atom of "
                       "the tensor's)")
    n = ROW_BYTES // e
    if _values(t) != n:
        raise EmuError(f"{f.name}: lane {lane}'s shared slice has {_values(t)} values, one row is {n}; partition "
                       "with this tiled copy")
    addrs = [it.address + int(t.layout(i)) * e for i in range(n)]
    if addrs != [addrs[0] + i * e for i in range(n)]:
        raise EmuError(f"{f.name}: lane {lane}'s row is not 16 contiguous bytes (byte addresses {addrs}); the "
                       "shared layout must keep 8 16-bit values of a row together (CuTe's recast<uint128_t> fails)")
    if addrs[0] % ROW_BYTES:
        raise IllegalInstruction(f"{f.ptx}: lane {lane}'s row address {addrs[0]:#x} is not 16-byte aligned (it is "
                                 f"{addrs[0] % ROW_BYTES} bytes past); every row must start on a 16-byte boundary: "
                                 "align the buffer (shared_tensor align=) and the tile's row pitch to 16 bytes")
    return it, addrs[0]


def _reg_dtype(f: _Form, t, lane: int) -> np.dtype:
    it, side = t.iterator, "destination" if f.load else "source"
    vt = getattr(it, "value_type", None)
    if isinstance(it, SmemPtr) or vt is None:
        raise EmuError(f"{f.name}: the {side} of lane {lane} must be its register fragment (a numpy-backed tensor "
                       f"or thread_fragments_C(...)[t], retiled with retile_{'D' if f.load else 'S'}); got {it!r}")
    dt = np.dtype(vt)
    if dt.itemsize * 8 != f.bits:
        raise EmuError(f"{f.name}: lane {lane}'s register {side} holds {dt.itemsize * 8}-bit values ({dt}) but the "
                       f"atom moves {f.bits}-bit values; retile a fragment of the Copy_Atom's value type")
    if _values(t) != f.nreg:
        raise EmuError(f"{f.name}: lane {lane}'s register slice has {_values(t)} values, the atom gives a thread "
                       f"{f.nreg}; retile the fragment with this tiled copy (retile_S / retile_D)")
    return dt


def _ldmatrix(f: _Form, lanes) -> None:
    rows = np.zeros((f.mats * 8, ROW_BYTES), np.uint8)
    for a in range(f.mats * 8):  # lane 8m + r addresses row r of matrix m
        ptr, addr = _smem_row(f, lanes[a][0], a)
        ptr.smem.check(addr, ROW_BYTES, f"{f.ptx} row of lane {a}", ptr.alloc)
        ptr.smem.touch(addr + ROW_BYTES)
        rows[a] = ptr.smem.data[addr:addr + ROW_BYTES]
    mats = rows.view(np.uint16).reshape(f.mats, 8, 8)
    if f.trans:
        mats = mats.transpose(0, 2, 1)
    words = np.ascontiguousarray(mats).reshape(f.mats, WARP, 2)  # word l of a matrix: row l // 4, column pair l % 4
    for lane, (_src, dst) in enumerate(lanes):
        dt = _reg_dtype(f, dst, lane)
        vals = np.ascontiguousarray(words[:, lane, :]).view(dt).reshape(-1)
        for i in range(f.nreg):
            dst[i] = vals[i]


def _stmatrix(f: _Form, lanes) -> None:
    words = np.zeros((f.mats, WARP, 2), np.uint16)
    for lane, (src, _dst) in enumerate(lanes):
        dt = _reg_dtype(f, src, lane)
        vals = np.array([src(i) for i in range(f.nreg)], dtype=dt)
        words[:, lane, :] = vals.view(np.uint16).reshape(f.mats, 2)
    mats = words.reshape(f.mats, 8, 8)
    if f.trans:
        mats = mats.transpose(0, 2, 1)
    rows = np.ascontiguousarray(mats).reshape(f.mats * 8, 8).view(np.uint8)
    targets = [_smem_row(f, lanes[a][1], a) for a in range(f.mats * 8)]  # check every row before writing any
    for a, (ptr, addr) in enumerate(targets):
        ptr.smem.check(addr, ROW_BYTES, f"{f.ptx} row of lane {a}", ptr.alloc)
        ptr.smem.data[addr:addr + ROW_BYTES] = rows[a]
        ptr.smem.generic_write(addr, ROW_BYTES)


def matrix_copy(atom, srcs, dsts, split, warps=None) -> None:
    """``copy(atom, srcs, dsts)`` for an ldmatrix / stmatrix atom (see the module docstring); ``split(src, dst,
    n)`` yields one thread's (src, dst) sub-tensors per atom call (CuTe's copy loop and ``Copy_Atom::call``);
    ``warps``: per warp, whether it issues (``copy_if`` with a warp-uniform predicate), None for all."""
    holder = getattr(atom, "tiled_copy", atom)
    f, nthr = _Form(holder), _threads(holder)
    if nthr % WARP:
        raise EmuError(f"copy({f.name}): the tiled copy has {nthr} threads; {f.ptx} runs on whole warps (a "
                       "multiple of 32)")
    srcs = _per_thread(srcs, nthr, "source", f.name)
    dsts = _per_thread(dsts, nthr, "destination", f.name)
    for t, (s, d) in enumerate(zip(srcs, dsts)):
        shared, regs = (s, d) if f.load else (d, s)
        if not isinstance(getattr(shared, "iterator", None), SmemPtr) or isinstance(regs.iterator, SmemPtr):
            raise EmuError(f"copy({f.name}): thread {t}'s {'source' if f.load else 'destination'} must be its shared "
                           f"partition and its {'destination' if f.load else 'source'} its register fragment ("
                           f"{f.ptx} moves {'shared -> registers' if f.load else 'registers -> shared'}); got {s!r} -> "
                           f"{d!r}")
    calls = [list(split(s, d, f.nsrc)) for s, d in zip(srcs, dsts)]
    if len({len(c) for c in calls}) != 1:
        raise EmuError(f"copy({f.name}): the threads' partitions make {sorted({len(c) for c in calls})} atom calls; "
                       "every lane of a warp must issue the same instructions (partition all with one tiled copy)")
    stats = current_cta().cluster.launch.stats
    kind = "ldsm" if f.load else "stsm"
    for w in range(nthr // WARP):
        if warps is not None and not warps[w]:
            continue
        for k in range(len(calls[0])):
            lanes = [calls[w * WARP + lane][k] for lane in range(WARP)]
            (_ldmatrix if f.load else _stmatrix)(f, lanes)
            stats[kind] = stats.get(kind, 0) + 1
