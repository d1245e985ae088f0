"""CuTe's device calls for SM90 GMMA on the host objects of ``tmakit.mma`` (read by duck typing; docs/EMULATOR.md,
"CuTe's GMMA calls"): cute/arch/mma_sm90_gmma.hpp's ``warpgroup_fence_operand``, ``warpgroup_arrive``,
``warpgroup_commit_batch``, ``warpgroup_wait`` and cute/algorithm/gemm.hpp's ``gemm(tiled_mma, A, B, C)``, one
``wgmma.mma_async`` per atom call. A CTA is one program: the warpgroup calls take the warpgroup (0..7), and the
register fragments of all threads are ``ThreadFragments`` (``thread_fragments_C`` / ``_A``)."""

from __future__ import annotations

import numpy as np

from ..layout import _, size
from ..layout.tensor import ArrayPtr
from .cute_sm90_fragments import RegisterPtr, ThreadFragments, is_gmma, type_name
from .device_cute_sm100 import gemm as gemm_sm100
from .device_wgmma import wgmma_commit_group, wgmma_fence, wgmma_mma_async, wgmma_wait_group
from .errors import EmuError


def warpgroup_fence_operand(reg) -> None:
    """CuTe's ``warpgroup_fence_operand(frg)``: a compiler-only fence that keeps register accesses from moving across
    the MMAs; the emulator runs statements in order, so it checks that ``reg`` is a register fragment and returns."""
    if isinstance(reg, (ThreadFragments, np.ndarray)) or isinstance(getattr(reg, "iterator", None),
                                                                    (RegisterPtr, ArrayPtr)):
        return
    raise EmuError(f"warpgroup_fence_operand: {reg!r} is not a register fragment (CuTe fences registers: pass tCrC "
                   "or an RS tCrA, e.g. the ThreadFragments of thread_fragments_C)")


def warpgroup_arrive(warpgroup: int = 0) -> None:
    """CuTe's ``warpgroup_arrive()``: ``wgmma.fence.sync.aligned`` of ``warpgroup``."""
    wgmma_fence(warpgroup)


def warpgroup_commit_batch(warpgroup: int = 0) -> None:
    """CuTe's ``warpgroup_commit_batch()``: ``wgmma.commit_group.sync.aligned`` of ``warpgroup``."""
    wgmma_commit_group(warpgroup)


def warpgroup_wait(n: int = 0, warpgroup: int = 0) -> None:
    """CuTe's ``warpgroup_wait<N>()``: ``wgmma.wait_group.sync.aligned N`` of ``warpgroup``."""
    wgmma_wait_group(n, warpgroup)


def _shape(t) -> tuple:
    s = t.shape
    return s if isinstance(s, tuple) else (s,)


def _extent(t, i: int) -> int:
    return int(size(_shape(t)[i]))


def _desc(t, what: str) -> int:
    """The descriptor word of one atom's operand ``t`` (a ``GMMA::DescriptorIterator`` tensor of size 1)."""
    if not hasattr(getattr(t, "iterator", None), "desc") or int(t.layout.size()) != 1:
        raise EmuError(f"gemm: {what} of an _SS op must be one GMMA descriptor per atom (thr_mma.partition_fragment_"
                       f"{what}(sX) of a shared-memory tensor, sliced to (MMA, MMA_MN[, MMA_K])); got {t}")
    return int(t.iterator.deref(int(t.layout(0))))


def _atom(tiled_mma, a, b, c) -> None:
    """One ``MMA_Atom::call``: ``wgmma.mma_async`` of the atom's warpgroup, scale-d = ``tiled_mma.accumulate_``."""
    op = tiled_mma.op
    warpgroup, acc = _registers(c, "C")
    if op.rs:
        wg_a, a_src = _registers(a, "A")
        if wg_a != warpgroup:
            raise EmuError(f"gemm: A registers of warpgroup {wg_a} and C of warpgroup {warpgroup}; a wgmma reads the "
                           "A fragment of its own warpgroup (take tCrA and tCrC of the same thread)")
    else:
        a_src = _desc(a, "A")
    wgmma_mma_async(acc, a_src, _desc(b, "B"), int(tiled_mma.accumulate_), int(op.scale_a), int(op.scale_b),
                    0 if op.rs else int(op.a_major), int(op.b_major), atype=type_name(op.a_type),
                    btype=type_name(op.b_type))


def _check_registers(t, what: str) -> None:
    it = getattr(t, "iterator", None)
    if not isinstance(it, RegisterPtr) or it.regs.operand != what:
        helper = f"thread_fragments_{what}(tiled_mma, thr_mma.make_fragment_{what}(...))[thread]"
        raise EmuError(f"gemm: {what} must be a thread's fragment of the emulator's warpgroup registers ({helper}); "
                       f"got {t}. A numpy fragment cannot receive the warpgroup's MMA results")


def _registers(t, what: str):
    _check_registers(t, what)
    return t.iterator.regs.atom_unit(t)


def _gemm_vmn(tiled_mma, A, B, C) -> None:  # noqa: N803 - CuTe's names
    """Dispatch [4], (V,M) x (V,N) => (V,M,N), in CuTe's order: row-major serpentine when A and B are descriptors
    (8-byte values), column-major serpentine otherwise (an _RS op's A registers)."""
    num_m, num_n = _extent(A, 1), _extent(B, 1)
    if _extent(C, 1) != num_m or _extent(C, 2) != num_n:
        raise EmuError(f"gemm: A has {num_m} MMAs along M and B {num_n} along N, but C is {C.shape}; C must be "
                       "(MMA, MMA_M, MMA_N) of the same partition")
    if not tiled_mma.op.rs:
        calls = [(m, (num_n - 1 - n) if m & 1 else n) for m in range(num_m) for n in range(num_n)]
    else:
        calls = [((num_m - 1 - m) if n & 1 else m, n) for n in range(num_n) for m in range(num_m)]
    for m, n in calls:
        _atom(tiled_mma, A[(_, m)], B[(_, n)], C[(_, m, n)])


def gemm(tiled_mma, A, B, C) -> None:  # noqa: N803 - CuTe's names
    """``cute::gemm(tiled_mma, A, B, C)`` for SM90 GMMA (other ops: the SM100 ``gemm``). A ``(V,M,K)``, B
    ``(V,N,K)``, C ``(V,M,N)``: one ``(V,M) x (V,N)`` per k (each with ``tiled_mma.accumulate_``, as CuTe: set it to
    ``ScaleOut.One`` after a first ``gemm`` of ``Zero``); rank 2 / 2 / 3 and 1 / 1 / 1 as CuTe's dispatches.
    A and B are descriptor tensors (``_SS``) or A a thread's register fragment (``_RS``); C a thread's fragment
    (``thread_fragments_C(...)[t]``): the MMAs are its warpgroup's (``t // 128``)."""
    op = getattr(tiled_mma, "op", None)
    if not is_gmma(op):
        return gemm_sm100(tiled_mma, A, B, C)
    _check_registers(C, "C")
    ranks = tuple(len(_shape(x)) for x in (A, B, C))
    if ranks == (3, 3, 3):
        if _extent(A, 2) != _extent(B, 2):
            raise EmuError(f"gemm: A has {_extent(A, 2)} K-blocks and B {_extent(B, 2)}; slice both alike")
        for k in range(_extent(A, 2)):
            _gemm_vmn(tiled_mma, A[(_, _, k)], B[(_, _, k)], C)
    elif ranks == (2, 2, 3):
        _gemm_vmn(tiled_mma, A, B, C)
    elif ranks == (1, 1, 1):
        _atom(tiled_mma, A, B, C)
    else:
        raise EmuError(f"gemm: operand ranks A {ranks[0]}, B {ranks[1]}, C {ranks[2]}; CuTe's GMMA gemm takes "
                       "(V,M,K) x (V,N,K) => (V,M,N), (V,M) x (V,N) => (V,M,N) or (V) x (V) => (V): slice the pipe "
                       "stage first, e.g. tCrA(_,_,_,read_pipe)")
    return None
