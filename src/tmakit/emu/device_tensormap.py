"""Editing tensor maps inside a kernel: the vocabulary of ``tmakit/tensormap.cuh`` and CuTe's
``copy_sm90_desc.hpp`` on descriptors in emulated memory (``tensormap_memory``).

The flow of CUTLASS's ptr-array grouped GEMM: copy a descriptor into shared memory
(``tensormap_copy_to_shared``), edit it with ``tensormap_replace_*`` (``tensormap.replace.tile.<field>.shared::cta``),
publish it to a global slot with ``tensormap_cp_fenceproxy`` (copy + release), then ``tensormap_acquire`` that slot
(``fence.proxy.tensormap::generic.acquire``) before TMA instructions use it through
``with_tensormap(tma, ptr, bar)``. ``prefetch_tensormap`` warms the descriptor cache. Field orders (``ord``) follow
PTX and ``TensorMap``: 0 is the innermost dimension; ``global_stride`` ``ord`` i is the stride of dimension i + 1.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..tma.tensormap import DataType, TensorMap
from . import tensormap_memory as tm
from .checks import as_int
from .device_smem import smem_address
from .errors import IllegalInstruction, TmaUnitError
from .scheduler import current_cta
from .tensormap_memory import TensorMapPtr

# PTX's tensormap.replace .elemtype codes (they differ from CUtensorMapDataType from 8 on).
PTX_ELEMTYPE = {0: DataType.UINT8, 1: DataType.UINT16, 2: DataType.UINT32, 3: DataType.INT32, 4: DataType.UINT64,
                5: DataType.INT64, 6: DataType.FLOAT16, 7: DataType.FLOAT32, 8: DataType.FLOAT32_FTZ,
                9: DataType.FLOAT64, 10: DataType.BFLOAT16, 11: DataType.TFLOAT32, 12: DataType.TFLOAT32_FTZ,
                13: DataType.U4_ALIGN8B, 14: DataType.U4_ALIGN16B, 15: DataType.U6_ALIGN16B}


def _count(cta, kind: str) -> None:
    stats = cta.cluster.launch.stats
    stats[kind] = stats.get(kind, 0) + 1


def _shared_slot(cta, desc, what: str) -> int:
    addr = smem_address(cta, desc)
    if addr % tm.TENSORMAP_ALIGN:
        raise IllegalInstruction(f"{what}: shared tensor map address {addr:#x} is not 128-byte aligned")
    cta.smem.check(addr, tm.TENSORMAP_BYTES, f"{what}: 128-byte tensor map", getattr(desc, "alloc", None))
    return addr


def _global_ptr(desc, what: str) -> int:
    if isinstance(desc, TensorMapPtr):
        return desc.address
    raise TmaUnitError(f"{what}: expected a TensorMapPtr (a descriptor in global memory), got {type(desc).__name__}")


def tensormap_copy_to_shared(smem_desc, src) -> None:
    """Copy 128 descriptor bytes into shared memory with generic loads and stores (CUTLASS's ``tensormaps_init``):
    ``src`` is a ``TensorMap`` (a kernel parameter) or a ``TensorMapPtr`` (global memory, read as it is now)."""
    cta = current_cta()
    addr = _shared_slot(cta, smem_desc, "tensormap_copy_to_shared")
    if isinstance(src, TensorMapPtr):
        src = tm.TABLE.at(src.address, f"tensormap_copy_to_shared of {cta.label}").tmap
    if not isinstance(src, TensorMap):
        raise TmaUnitError(f"tensormap_copy_to_shared copies a TensorMap or TensorMapPtr, got {type(src).__name__}")
    tm.view(cta).shared[addr] = src


def shared_tensormap(smem_desc) -> TensorMap:
    """The descriptor now in this CTA's shared memory at ``smem_desc`` (a debugging aid)."""
    cta = current_cta()
    return _shared_map(cta, _shared_slot(cta, smem_desc, "shared_tensormap"), "shared_tensormap")


def _shared_map(cta, addr: int, what: str) -> TensorMap:
    tmap = tm.view(cta).shared.get(addr)
    if tmap is None:
        raise IllegalInstruction(f"{what} of {cta.label}: no tensor map in shared memory at {addr:#x} (copy one "
                                 "there first with tensormap_copy_to_shared)")
    return tmap


def _ord(ord_, n: int, field: str) -> int:
    return as_int(ord_, f"tensormap.replace.{field} ord", 0, n - 1, TmaUnitError)


def _with(tuple_, i: int, value) -> tuple:
    return tuple_[:i] + (value,) + tuple_[i + 1:]


def _replaced(tmap: TensorMap, field: str, value, ord_) -> TensorMap:
    r = tmap.rank
    if field == "global_address":
        return dataclasses.replace(tmap, global_address=as_int(value, "global_address", 0, None, TmaUnitError))
    if field == "rank":
        n = as_int(value, "rank - 1", 0, 4, TmaUnitError) + 1
        pad = n - r
        last = tmap.global_strides[-1] * tmap.global_dim[-1] if tmap.global_strides else tmap.global_dim[0]
        return dataclasses.replace(tmap, global_dim=(tmap.global_dim + (1,) * pad)[:n],
                                   global_strides=(tmap.global_strides + (last,) * pad)[:n - 1],
                                   box_dim=(tmap.box_dim + (1,) * pad)[:n],
                                   element_strides=(tmap.element_strides + (1,) * pad)[:n])
    if field in ("global_dim", "box_dim", "element_stride"):
        name = {"element_stride": "element_strides"}.get(field, field)
        i = _ord(ord_, r, field)
        return dataclasses.replace(tmap, **{name: _with(getattr(tmap, name), i, as_int(value, field, 0, None,
                                                                                        TmaUnitError))})
    if field == "global_stride":
        i = _ord(ord_, r - 1, field)
        return dataclasses.replace(tmap, global_strides=_with(tmap.global_strides, i,
                                                              as_int(value, field, 0, None, TmaUnitError)))
    if field == "elemtype":
        code = as_int(value, "elemtype", 0, 15, TmaUnitError)
        return dataclasses.replace(tmap, dtype=PTX_ELEMTYPE[code])
    simple = {"interleave_layout": "interleave", "swizzle_mode": "swizzle", "fill_mode": "oob_fill"}
    if field in simple:
        return dataclasses.replace(tmap, **{simple[field]: as_int(value, field, 0, 3, TmaUnitError)})
    raise TmaUnitError(f"tensormap.replace has no field {field!r}")


def tensormap_replace(desc, field: str, value, ord=None) -> None:  # noqa: A002 - PTX's operand name
    """``tensormap.replace.tile.<field>{.shared::cta,.global}.b1024 [desc], {ord,} value``: edit one field of the
    descriptor in this CTA's shared memory (a shared pointer) or in place in global memory (a ``TensorMapPtr``:
    needs ``fence_proxy_tensormap_release`` before other proxies may see it)."""
    cta = current_cta()
    _count(cta, "tensormap_replace")
    how = f"tensormap.replace.tile.{field}"
    if isinstance(desc, TensorMapPtr):
        rec = tm.TABLE.at(desc.address, f"{how}.global of {cta.label}")
        tm.rewrite(cta, rec.address, _replaced(rec.tmap, field, value, ord), f"{how}.global", released=False)
        return
    addr = _shared_slot(cta, desc, how)
    tm.view(cta).shared[addr] = _replaced(_shared_map(cta, addr, how), field, value, ord)


def tensormap_replace_global_address(desc, addr) -> None:
    tensormap_replace(desc, "global_address", int(addr))


def tensormap_replace_rank(desc, rank_minus_1: int) -> None:
    tensormap_replace(desc, "rank", rank_minus_1)


def tensormap_replace_box_dim(desc, value: int, ord: int) -> None:  # noqa: A002
    tensormap_replace(desc, "box_dim", value, ord)


def tensormap_replace_global_dim(desc, value: int, ord: int) -> None:  # noqa: A002
    tensormap_replace(desc, "global_dim", value, ord)


def tensormap_replace_global_stride(desc, nbytes: int, ord: int) -> None:  # noqa: A002
    tensormap_replace(desc, "global_stride", nbytes, ord)


def tensormap_replace_element_stride(desc, value: int, ord: int) -> None:  # noqa: A002
    tensormap_replace(desc, "element_stride", value, ord)


def tensormap_replace_elemtype(desc, ptx_code: int) -> None:
    tensormap_replace(desc, "elemtype", ptx_code)


def tensormap_replace_interleave_layout(desc, value: int) -> None:
    tensormap_replace(desc, "interleave_layout", value)


def tensormap_replace_swizzle_mode(desc, value: int) -> None:
    tensormap_replace(desc, "swizzle_mode", value)


def tensormap_replace_fill_mode(desc, value: int) -> None:
    tensormap_replace(desc, "fill_mode", value)


def tensormap_cp_fenceproxy(gmem_desc, smem_desc, name: str | None = None) -> None:
    """``tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [gmem], [smem], 128``:
    copy the edited shared descriptor to its global slot and release it. ``name`` labels the slot's new content
    in diagnostics (e.g. ``"A of group 2"``)."""
    cta = current_cta()
    what = "tensormap.cp_fenceproxy"
    src = _shared_map(cta, _shared_slot(cta, smem_desc, what), what)
    addr, owner = tm.check_address(_global_ptr(gmem_desc, what), cta.cluster.launch.memory, what)
    tm.rewrite(cta, addr, src, what, released=True, name=name, owner=owner)
    _count(cta, "tensormap_cp_fenceproxy")


def fence_proxy_tensormap_release() -> None:
    """``fence.proxy.tensormap::generic.release.gpu``: release this CTA's in-place (global) descriptor edits."""
    tm.release_all(current_cta())


def tensormap_acquire(gmem_desc) -> None:
    """``fence.proxy.tensormap::generic.acquire.gpu [gmem_desc], 128``: before TMA uses a descriptor edited on the
    device, so the tensormap proxy sees the released content (and not a cached stale copy)."""
    cta = current_cta()
    tm.acquire(cta, _global_ptr(gmem_desc, "fence.proxy.tensormap acquire"))
    _count(cta, "tensormap_acquire")


fence_proxy_tensormap_acquire = tensormap_acquire


def prefetch_tensormap(desc) -> None:
    """``prefetch.tensormap [desc]``: warm the descriptor cache (a kernel-parameter ``TensorMap`` is a no-op)."""
    cta = current_cta()
    if isinstance(desc, TensorMapPtr):
        tm.prefetch(cta, desc.address)
    elif not isinstance(desc, TensorMap):
        raise TmaUnitError(f"prefetch.tensormap takes a TensorMap or TensorMapPtr, got {type(desc).__name__}")
    _count(cta, "prefetch_tensormap")


# --- CuTe's names (copy_sm90_desc.hpp) ---
def tma_descriptor_replace_addr_in_shared_mem(smem_desc, new_tensor_ptr) -> None:
    tensormap_replace_global_address(smem_desc, new_tensor_ptr)


def tma_descriptor_replace_addr_in_global_mem(gmem_desc, new_tensor_ptr) -> None:
    tensormap_replace_global_address(gmem_desc, new_tensor_ptr)


def tma_descriptor_replace_dims_strides_in_shared_mem(smem_desc, prob_shape, prob_stride) -> None:
    """CuTe passes five dims and strides in bytes (``prob_stride[0]``, the unit stride, is not written); dims past
    the descriptor's rank must be 1."""
    cta = current_cta()
    rank = _shared_map(cta, _shared_slot(cta, smem_desc, "replace_dims_strides"), "replace_dims_strides").rank
    if any(int(d) != 1 for d in tuple(prob_shape)[rank:]):
        raise TmaUnitError(f"prob_shape {tuple(prob_shape)} has extents past the descriptor's rank {rank}")
    for i in range(rank):
        tensormap_replace_global_dim(smem_desc, prob_shape[i], i)
    for i in range(1, rank):
        tensormap_replace_global_stride(smem_desc, prob_stride[i], i - 1)


def tma_descriptor_cp_fence_release(gmem_desc, smem_desc) -> None:
    tensormap_cp_fenceproxy(gmem_desc, smem_desc)


tma_descriptor_fence_release = fence_proxy_tensormap_release
tma_descriptor_fence_acquire = tensormap_acquire
prefetch_tma_descriptor = prefetch_tensormap


@dataclass(frozen=True)
class DescriptorCopy:
    """CuTe's ``tma.with(TmaDescriptor const* desc, bar, mask)``: the atom, loading through a descriptor in memory."""

    tiled_copy: object
    tensormap: TensorMapPtr
    barrier: object = None
    mask: int | None = None

    @property
    def op(self):
        return self.tiled_copy.op


def with_tensormap(atom, desc: TensorMapPtr, barrier=None, mask=None) -> DescriptorCopy:
    """``atom.with(desc, barrier, mask)``: ``tk.emu.copy`` then issues the atom's TMA with the descriptor at
    ``desc`` (read through the CTA's tensormap proxy when issued)."""
    if not isinstance(desc, TensorMapPtr):
        raise TmaUnitError(f"with_tensormap takes a TensorMapPtr, got {type(desc).__name__}")
    return DescriptorCopy(getattr(atom, "tiled_copy", atom), desc, barrier, mask)
