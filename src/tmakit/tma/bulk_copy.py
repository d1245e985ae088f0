"""CuTe's non-tensor bulk copy: ``SM90_BULK_COPY_AUTO`` and the ``SM90_BULK_COPY_G2S`` / ``SM90_BULK_COPY_S2G``
atoms it dispatches to (``cp.async.bulk``: contiguous bytes, no tensor map).

``copy(Copy_Traits<SM90_BULK_COPY_AUTO>, src, dst)`` in CuTe (algorithm/copy.hpp) picks G2S or S2G from the memory
spaces of the two tensors, takes ``max_common_layout(src, dst)`` as the vector one instruction moves (it must hold
at least 128 bits, and ``Copy_Traits<SM90_BULK_COPY_*, Int<bits>>`` asserts a multiple of 16 bytes), then issues
one instruction per vector of ``logical_divide(src, tiler)``. :func:`bulk_copy_plan` does the same on the host and
lists the instructions; ``cp.async.bulk`` also needs both addresses 16-byte aligned, which is checked here too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..layout import Int, Layout, logical_divide, max_common_layout, size
from ..layout.tensor import ArrayPtr
from .errors import TmaDescriptorError
from .gmem import GmemPtr

BULK_ALIGN = 16  # bytes: cp.async.bulk addresses and sizes


@dataclass(frozen=True)
class BulkCopyOp:
    """One bulk-copy instruction (CuTe's ``SM90_BULK_COPY_G2S`` / ``SM90_BULK_COPY_S2G``) and the PTX it issues."""

    name: str
    src_space: str
    dst_space: str
    ptx: str

    def __str__(self):
        return self.name


SM90_BULK_COPY_G2S = BulkCopyOp("SM90_BULK_COPY_G2S", "gmem", "smem",
                                "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes")
SM90_BULK_COPY_S2G = BulkCopyOp("SM90_BULK_COPY_S2G", "smem", "gmem", "cp.async.bulk.global.shared::cta.bulk_group")


@dataclass(frozen=True)
class BulkCopyAuto:
    """``Copy_Traits<SM90_BULK_COPY_AUTO, OpArgs...>``: the auto-vectorizing placeholder; ``with_(bar)`` records the
    mbarrier a G2S copy completes on (its only op argument)."""

    barrier: object = None

    name = "SM90_BULK_COPY_AUTO"

    def with_(self, barrier) -> BulkCopyAuto:
        return BulkCopyAuto(barrier)

    def __str__(self):
        return self.name if self.barrier is None else f"{self.name}.with(mbarrier)"


SM90_BULK_COPY_AUTO = BulkCopyAuto()


@dataclass(frozen=True)
class BulkAtom:
    """``Copy_Atom<Copy_Traits<op, Int<vec_bits>, OpArgs...>, T>``: one instruction moves ``vec_bits`` bits."""

    op: BulkCopyOp
    vec_bits: int
    value_bits: int
    barrier: object = None

    @property
    def nbytes(self) -> int:
        return self.vec_bits // 8

    @property
    def num_val(self) -> int:
        return self.vec_bits // self.value_bits

    @property
    def thr_id(self) -> Layout:
        return Layout(Int(1), Int(0))

    @property
    def val_layout_src(self) -> Layout:
        return Layout((Int(1), Int(self.num_val)), (Int(0), Int(1)))

    def __str__(self):
        return (f"Copy_Atom<Copy_Traits<{self.op.name}, _{self.vec_bits}>, {self.value_bits}b>\n"
                f"  ThrID:        {self.thr_id}\n"
                f"  ValLayoutSrc: {self.val_layout_src}\n"
                f"  ValLayoutDst: {self.val_layout_src}\n"
                f"  ValLayoutRef: {self.val_layout_src}\n"
                f"  ValueType:    {self.value_bits}b\n")


@dataclass(frozen=True)
class BulkInstruction:
    """One ``cp.async.bulk``: ``nbytes`` from ``src_address`` to ``dst_address`` (shared addresses are CTA-relative)."""

    src_address: int
    dst_address: int
    nbytes: int


@dataclass(frozen=True)
class BulkCopyPlan:
    """What ``copy(SM90_BULK_COPY_AUTO, src, dst)`` issues: the atom, the common vector (``tiler``), the divided
    tensors' layouts ``(vector, rest)`` and one instruction per vector."""

    atom: BulkAtom
    tiler: Layout
    src_layout: Layout
    dst_layout: Layout
    instructions: tuple[BulkInstruction, ...]

    def __str__(self):
        return (f"copy blkcp -- found a max_common_layout of {self.tiler}\n"
                f"   src {self.src_layout}\n   dst {self.dst_layout}\n"
                f"   {len(self.instructions)} x {self.atom.op.name} of {self.atom.nbytes} bytes")


def _fail(rule: str, what: str, value, fix: str, where: str | None = None):
    raise TmaDescriptorError(rule, what, value, fix, where)


def memory_space(iterator) -> tuple[str, int, int, np.dtype | None]:
    """(``"gmem"`` or ``"smem"``, byte address, element bits, numpy dtype or None) of a tensor's iterator.

    Global: ``GmemPtr`` or a numpy-array tensor (host arrays are the emulator's global memory). Shared: a pointer
    with ``smem`` and ``address`` (``tk.emu``'s shared pointers)."""
    if isinstance(iterator, GmemPtr):
        return "gmem", iterator.address, iterator.bits, None
    if isinstance(iterator, ArrayPtr):
        a = iterator.array
        return "gmem", int(a.ctypes.data) + iterator.offset * a.itemsize, a.itemsize * 8, a.dtype
    if hasattr(iterator, "smem") and hasattr(iterator, "address") and hasattr(iterator, "dtype"):
        dt = np.dtype(iterator.dtype)
        return "smem", int(iterator.address), dt.itemsize * 8, dt
    return _fail("bulk.memory_space", "bulk copy tensors must point into global or shared memory", iterator,
                 "make the global tensor from a numpy array or make_gmem_ptr, the shared one from a shared pointer",
                 f"iterator {iterator!r} ({type(iterator).__name__})")


def _check_types(s, d) -> int:
    if s[2] != d[2] or (s[3] is not None and d[3] is not None and s[3] != d[3]):
        _fail("bulk.value_type", "source and destination of a bulk copy must have the same value type "
              "(the copy does not convert)", (s[3] or f"{s[2]}b", d[3] or f"{d[2]}b"),
              "copy between tensors of one element type")
    return s[2]


def _op_for(src_space: str, dst_space: str) -> BulkCopyOp:
    if (src_space, dst_space) == ("gmem", "smem"):
        return SM90_BULK_COPY_G2S
    if (src_space, dst_space) == ("smem", "gmem"):
        return SM90_BULK_COPY_S2G
    return _fail("bulk.direction", "Bulk Copy only supports gmem -> smem or smem -> gmem movement",
                 (src_space, dst_space), "copy global -> shared (with an mbarrier) or shared -> global",
                 f"{src_space} -> {dst_space}")


def _vector(src, dst, bits: int) -> tuple[Layout, int]:
    tiler = max_common_layout(src.layout, dst.layout)
    vec_bits = int(size(tiler)) * bits
    if vec_bits < 128:
        _fail("bulk.vector128", "Expected at least 128-bits for BLKCP: the largest vector both layouts keep "
              "contiguous (max_common_layout) is too short", vec_bits,
              "make the source and destination agree on at least 16 contiguous bytes with static (tk.Int) extents "
              "and unit stride", f"max_common_layout {tiler} = {int(size(tiler))} x {bits}b = {vec_bits} bits")
    if vec_bits % (8 * BULK_ALIGN):
        _fail("bulk.size16", "Bulk Copy requires copy vector size align to 16B", vec_bits // 8,
              "pick tile extents whose contiguous run is a multiple of 16 bytes",
              f"max_common_layout {tiler} = {vec_bits // 8} bytes")
    return tiler, vec_bits


def _addresses(base: int, layout: Layout, nvec: int, bits: int, what: str) -> list[int]:
    out = []
    for j in range(nvec):
        addr = base + int(layout((0, j))) * bits // 8
        if addr % BULK_ALIGN:
            _fail("bulk.align16", f"cp.async.bulk needs 16-byte aligned addresses; vector {j} of the {what} is not",
                  addr, "align the tensor's start and the strides between vectors to 16 bytes",
                  f"{what} address {addr:#x} ({addr % BULK_ALIGN} bytes past a 16-byte boundary)")
        out.append(addr)
    return out


def bulk_copy_plan(atom, src, dst) -> BulkCopyPlan:
    """CuTe's ``copy(SM90_BULK_COPY_AUTO[.with(bar)], src, dst)`` dispatch: the concrete atom and its instructions.

    Raises ``TmaDescriptorError`` (rules ``bulk.*``) where CuTe would fail to compile or the instruction would
    fault: wrong memory spaces, different value types, a common vector under 128 bits or not a multiple of
    16 bytes, misaligned addresses, or a G2S copy without an mbarrier."""
    if not isinstance(atom, BulkCopyAuto):
        _fail("bulk.atom", "bulk_copy_plan takes the SM90_BULK_COPY_AUTO copy traits", atom,
              "pass tk.SM90_BULK_COPY_AUTO (or .with_(mbarrier) for global -> shared)")
    s, d = memory_space(src.iterator), memory_space(dst.iterator)
    bits = _check_types(s, d)
    op = _op_for(s[0], d[0])
    if op is SM90_BULK_COPY_G2S and atom.barrier is None:
        _fail("bulk.mbarrier", "a global -> shared bulk copy completes on an mbarrier: Extra arguments not set",
              atom, "bind it first: copy(SM90_BULK_COPY_AUTO.with_(mbarrier), src, dst)")
    if int(size(src.layout)) != int(size(dst.layout)):
        _fail("bulk.size", "source and destination of a copy must have the same size",
              (int(size(src.layout)), int(size(dst.layout))), "copy tensors of equal size")
    tiler, vec_bits = _vector(src, dst, bits)
    slay, dlay = logical_divide(src.layout, tiler), logical_divide(dst.layout, tiler)
    nvec = int(size(src.layout)) // int(size(tiler))
    srcs = _addresses(s[1], slay, nvec, bits, "source")
    dsts = _addresses(d[1], dlay, nvec, bits, "destination")
    bulk = BulkAtom(op, vec_bits, bits, atom.barrier)
    return BulkCopyPlan(bulk, tiler, slay, dlay,
                        tuple(BulkInstruction(a, b, vec_bits // 8) for a, b in zip(srcs, dsts)))
