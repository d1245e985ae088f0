"""CuTe's device calls on the SM100 host objects of ``tmakit.mma``: ``gemm(tiled_mma, tCrA, tCrB, tCtAcc)`` (one
``tcgen05.mma`` per MMA of the fragments) and ``tmem_copy(tiled_t2r, tDtAcc, tDrAcc, thread)`` (the ``tcgen05.ld``
/ ``st`` instructions of ``make_tmem_copy``, as the chosen thread executes them). Objects are read through the
attributes listed in docs/BLACKWELL.md (interface note)."""

from __future__ import annotations

import itertools

import numpy as np

from .device_tcgen05 import tmem_load, tmem_store, umma
from .errors import EmuError
from .umma_desc import encode_instr_desc

_FORMATS = {"half_t": "f16", "bfloat16_t": "bf16", "tfloat32_t": "tf32"}
_PTX_SHAPES = {"32dp32b": "32x32b", "16dp64b": "16x64b", "16dp128b": "16x128b", "16dp256b": "16x256b"}


def _fmt(t, what: str) -> str:
    name = str(getattr(t, "name", t)).split("::")[-1]
    if name not in _FORMATS:
        raise EmuError(f"gemm: {what} type {name} is not modelled (half_t, bfloat16_t, tfloat32_t are)")
    return _FORMATS[name]


def _shape(t) -> tuple:
    s = t.shape
    return s if isinstance(s, tuple) else (s,)


def _size(x) -> int:
    return int(np.prod([_size(v) for v in x])) if isinstance(x, tuple) else int(x)


def _index(t, i):
    """``t(_, i...)``: the sub-tensor of the first mode at index ``i`` of the remaining modes."""
    from ..layout import _

    rest = len(_shape(t)) - 1
    return t if rest == 0 else t[(_, *i)]


def instr_desc(op) -> int:
    """The 32-bit instruction descriptor of an SM100 MMA op (CuTe's ``make_instr_desc``)."""
    return encode_instr_desc(op.kind, _fmt(op.a_type, "A"), _fmt(op.b_type, "B"), int(op.M), int(op.N),
                             int(op.a_major), int(op.b_major), int(op.a_neg), int(op.b_neg))


def gemm(tiled_mma, A, B, C) -> None:  # noqa: N803 - CuTe's names
    """``cute::gemm(tiled_mma, A, B, C)`` on UMMA fragments: A ``(MmaA, NumMma_M)``, B ``(MmaB, NumMma_N)``, C
    ``(MmaC, NumMma_M, NumMma_N)``; each (m, n) issues one ``tcgen05.mma`` with ``tiled_mma.accumulate_``."""
    op = tiled_mma.op
    if len(_shape(A)) > 2 or len(_shape(B)) > 2:
        raise EmuError("gemm: slice the K-block first, gemm(tiled_mma, tCrA(_,_,k_block), tCrB(_,_,k_block), tCtAcc)"
                       ", and set tiled_mma.accumulate_ = UMMA.ScaleOut.One after the first")
    idesc = instr_desc(op)
    num_m = _size(_shape(A)[1]) if len(_shape(A)) > 1 else 1
    num_n = _size(_shape(B)[1]) if len(_shape(B)) > 1 else 1
    for m, n in itertools.product(range(num_m), range(num_n)):
        a_t, b_t = _index(A, (m,)), _index(B, (n,))
        c_t = _index(C, (m, n)) if len(_shape(C)) == 3 else C
        if op.a_from_tmem:
            a = ("tmem", int(a_t.iterator.address))
        else:
            a = int(a_t.iterator.desc.desc)
        umma(op.kind, int(c_t.iterator.address), a, int(b_t.iterator.desc.desc), idesc, int(tiled_mma.accumulate_),
             int(op.cta_group))


def tmem_copy(tiled_copy, src, dst, thread: int) -> None:
    """``copy(tiled_t2r, tDtAcc, tDrAcc)`` (or r2t) as thread ``thread`` runs it: one ``tcgen05.ld``/``st`` per
    atom of the partitions; registers are ``dst`` (load) / ``src`` (store), numpy arrays or tensors over them."""
    op = tiled_copy.op
    if op.shape not in _PTX_SHAPES or getattr(op, "pack16", False):
        raise EmuError(f"copy: {op.name} is not modelled (32dp32b, 16dp64b, 16dp128b, 16dp256b without _16b are)")
    tm, regs = (src, dst) if op.is_load else (dst, src)
    rest = [range(_size(s)) for s in _shape(tm)[1:]]
    flat = _registers(regs)
    per = flat.size // max(1, int(np.prod([len(r) for r in rest])))
    for j, idx in enumerate(itertools.product(*reversed(rest))):
        addr = int(_index(tm, tuple(reversed(idx))).iterator.address)
        if op.is_load:
            flat[j * per:(j + 1) * per] = tmem_load(addr, _PTX_SHAPES[op.shape], op.repeat, thread).view(flat.dtype)
        else:
            tmem_store(addr, flat[j * per:(j + 1) * per].view(np.uint32), _PTX_SHAPES[op.shape], op.repeat, thread)


def _registers(t) -> np.ndarray:
    """A flat 32-bit view of a register fragment (numpy array, or a tensor over one)."""
    arr = getattr(getattr(t, "iterator", None), "array", t)
    arr = np.asarray(arr)
    if arr.dtype.itemsize != 4 or not arr.flags.c_contiguous:
        raise EmuError("copy: TMEM registers must be a contiguous 32-bit numpy array (e.g. np.empty(n, np.float32))")
    return arr.reshape(-1)
