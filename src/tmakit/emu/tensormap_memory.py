"""Tensor maps that live in emulated memory: 128-byte descriptors at global addresses (and shared-memory copies
being edited), each CTA's tensormap-proxy view of them, and the two hazards of device-side descriptor updates.

A TMA instruction given a :class:`TensorMapPtr` reads the descriptor through the *tensormap proxy*, which is not
ordered with the generic writes that changed it (``tensormap.replace``, ``tensormap.cp_fenceproxy``). The model:

* every global descriptor has a *version* (0: written by the host before the launch) and the last *released*
  version (published with ``tensormap.cp_fenceproxy ... .release`` or ``fence.proxy.tensormap::generic.release``);
* every CTA has a descriptor cache (``prefetch.tensormap`` and each TMA use fill it) and the version its last
  ``fence.proxy.tensormap::generic.acquire`` of the address saw. Acquire drops the cached copy.

Hazard (a): a TMA uses a descriptor modified on the device whose current version was not released by the writer
(missing release) or not acquired by this CTA since (missing acquire). The TMA then runs with what the proxy sees:
the CTA's cached copy if it has one, else the last released content; strict launches raise ``RaceError``.
Hazard (b): a descriptor is rewritten while a TMA that read it may still be in flight: a load whose mbarrier
phase no CTA has waited for yet, or a store whose bulk group was not waited for. Non-strict launches let the
in-flight operation read the new descriptor, as a late descriptor fetch would.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np

from ..tma.tensormap import TensorMap
from .errors import IllegalAddress, IllegalInstruction, RaceError
from .tma_unit import checked_geometry

TENSORMAP_BYTES = 128
TENSORMAP_ALIGN = 128  # the .b1024 object tensormap.replace / cp_fenceproxy address; 64 would do for a plain TMA


@dataclass(frozen=True)
class TensorMapPtr:
    """``TmaDescriptor const*`` into global memory: where a TMA instruction finds its descriptor."""

    address: int

    def __int__(self):
        return self.address

    __index__ = __int__

    def __add__(self, n: int) -> TensorMapPtr:
        """The ``n``-th descriptor after this one (an array of 128-byte descriptors)."""
        return TensorMapPtr(self.address + int(n) * TENSORMAP_BYTES)

    def __str__(self):
        return f"tensormap_ptr({self.address:#x})"


@dataclass(frozen=True)
class Published:
    version: int
    tmap: TensorMap


@dataclass
class Use:
    """A TMA instruction that read a global descriptor: retired once its completion was observed."""

    cta: object
    what: str
    name: str
    address: int
    op: object = None
    barriers: list = field(default_factory=list)  # (MBarrier, phase the load completes in)

    def retired(self) -> bool:
        if self.op is None:
            return True
        if hasattr(self.op, "waited"):
            return self.op.waited
        return all(b.last_waited and max(b.last_waited.values()) >= phase for b, phase in self.barriers)

    def pending(self) -> str:
        if hasattr(self.op, "waited"):
            return "its bulk group was not waited for (commit_group + wait_group)"
        b, phase = next((b, p) for b, p in self.barriers if not (b.last_waited and max(b.last_waited.values()) >= p))
        return f"no CTA has waited for phase {phase} of {b.name}, the phase the load completes"


@dataclass
class GlobalTensorMap:
    """The descriptor at one global address."""

    address: int
    tmap: TensorMap
    name: str
    version: int = 0
    released: Published | None = None
    writer: str = "the host"
    uses: list = field(default_factory=list)
    owner: object = None  # weakref to the array holding the bytes: a freed buffer takes its descriptors along

    def __post_init__(self):
        if self.released is None:
            self.released = Published(self.version, self.tmap)

    @property
    def label(self) -> str:
        return f"tensor map @{self.address:#x} ({self.name})"

    def in_flight(self) -> list[Use]:
        self.uses = [u for u in self.uses if not u.retired()]
        return self.uses


class TensorMapTable:
    """Global descriptors by address. Like global memory they outlive a launch (``write_tensormap`` on the host)."""

    def __init__(self):
        self.maps: dict[int, GlobalTensorMap] = {}

    def at(self, address: int, who: str) -> GlobalTensorMap:
        rec = self.maps.get(int(address))
        if rec is not None and rec.owner is not None and rec.owner() is None:
            del self.maps[int(address)]  # the buffer was freed (its address may be reused by another array)
            rec = None
        if rec is None:
            raise IllegalInstruction(f"{who}: no tensor map at global {int(address):#x}; the TMA unit would read "
                                     "garbage (write one there with tk.emu.write_tensormap on the host or "
                                     "tensormap_cp_fenceproxy on the device)")
        return rec


TABLE = TensorMapTable()


def _owner(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def check_address(address, memory, what: str) -> tuple[int, weakref.ref]:
    """A descriptor address (128-byte aligned, with 128 bytes of registered global memory behind it) and a weak
    reference to the array that owns those bytes."""
    address = int(address)
    if address % TENSORMAP_ALIGN:
        raise IllegalInstruction(f"{what}: tensor map address {address:#x} is not 128-byte aligned "
                                 f"({address % TENSORMAP_ALIGN} bytes past a boundary)")
    mem = memory.resolve(address)
    if mem.size < TENSORMAP_BYTES:
        raise IllegalAddress(f"{what}: the 128-byte tensor map at global {address:#x} runs past the end of its buffer")
    return address, weakref.ref(_owner(mem))


def write_tensormap(dst, tmap: TensorMap, name: str | None = None, memory=None) -> TensorMapPtr:
    """Host: store ``tmap`` at ``dst`` (a global address, ``TensorMapPtr`` or registered numpy array), like a
    ``cudaMemcpy`` of a ``CUtensorMap`` before the launch. Devices see it without fences (version 0)."""
    from .global_memory import GLOBAL

    if not isinstance(tmap, TensorMap):
        raise IllegalInstruction(f"write_tensormap stores a TensorMap, got {type(tmap).__name__}")
    addr = int(dst.ctypes.data) if hasattr(dst, "ctypes") else int(dst)
    addr, owner = check_address(addr, memory or GLOBAL, "write_tensormap")
    TABLE.maps[addr] = GlobalTensorMap(addr, tmap, name or f"descriptor @{addr:#x}", owner=owner)
    return TensorMapPtr(addr)


def read_tensormap(ptr) -> TensorMap:
    """Host: the descriptor now stored at ``ptr`` (its latest content, released or not)."""
    return TABLE.at(int(ptr), "read_tensormap").tmap


@dataclass
class CtaView:
    """One CTA's tensormap proxy: cached descriptors, versions acquired, in-place edits not yet released, and the
    descriptors in its shared memory (by shared address)."""

    cache: dict = field(default_factory=dict)
    acquired: dict = field(default_factory=dict)
    unreleased: set = field(default_factory=set)
    shared: dict = field(default_factory=dict)


_VIEWS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def view(cta) -> CtaView:
    v = _VIEWS.get(cta)
    if v is None:
        v = _VIEWS[cta] = CtaView()
    return v


def missing_fence(rec: GlobalTensorMap, v: CtaView) -> str | None:
    """Hazard (a): what is missing for this CTA to see the current version through the tensormap proxy."""
    if rec.version == 0:
        return None
    if rec.released.version < rec.version:
        return (f"the release fence in the writer: {rec.writer} modified it (version {rec.version}) without "
                "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release or "
                "fence.proxy.tensormap::generic.release after the edit")
    if v.acquired.get(rec.address, -1) < rec.version:
        return (f"the acquire fence in the user: no fence.proxy.tensormap::generic.acquire [{rec.address:#x}] since "
                f"{rec.writer} released version {rec.version} (tensormap_acquire before the TMA)")
    return None


def resolve_tensormap(cta, tmap, what: str):
    """The hook of the TMA instructions: ``(descriptor the TMA unit uses, Use or None)``. A ``TensorMap`` value
    (kernel parameter) passes through; a ``TensorMapPtr`` is read through the CTA's tensormap proxy."""
    if not isinstance(tmap, TensorMapPtr):
        return tmap, None
    rec = TABLE.at(tmap.address, f"{what} of {cta.label}")
    v = view(cta)
    used = v.cache.get(rec.address) or rec.released
    missing = missing_fence(rec, v)
    if missing is not None:
        stale = "" if used.version == rec.version else (
            f"; the TMA would run with the stale version {used.version} ({used.tmap.global_address:#x})")
        cta.cluster.launch.report(RaceError(
            f"{what} of {cta.label} uses the {rec.label} and is missing {missing}{stale}"))
    v.cache[rec.address] = used
    return used.tmap, Use(cta, what, rec.name, rec.address)


def note_tensormap_use(use: Use | None, op) -> None:
    """Record the issued operation ``op`` that read the descriptor of ``use`` (hazard (b) bookkeeping)."""
    if use is None:
        return
    use.op = op
    use.what = getattr(op, "what", use.what)
    cluster = use.cta.cluster
    if not hasattr(op, "waited"):
        use.barriers = [(cluster.ctas[r].barrier(op.bar), cluster.ctas[r].barrier(op.bar).phase) for r in op.ranks]
    TABLE.maps[use.address].uses.append(use)


def rewrite(cta, address: int, tmap: TensorMap, how: str, released: bool, name: str | None = None,
            owner=None) -> None:
    """A device write of the descriptor at global ``address`` (``tensormap.cp_fenceproxy`` releases it, an in-place
    ``tensormap.replace`` does not). Reports hazard (b) for TMA operations that may still read the old one."""
    rec = TABLE.maps.get(address)
    if rec is not None and rec.owner is not None and rec.owner() is None:
        rec = None  # a descriptor of a freed buffer
    if rec is None:
        rec = TABLE.maps[address] = GlobalTensorMap(address, tmap, name or f"descriptor @{address:#x}", version=1,
                                                    released=Published(0, tmap), writer=f"{cta.label} ({how})",
                                                    owner=owner)
    else:
        for u in rec.in_flight():
            cta.cluster.launch.report(RaceError(
                f"{cta.label} rewrites the {rec.label} with {how} while the {u.what} of {u.cta.label}, which read "
                f"it when it held {u.name}, may still be in flight: {u.pending()}. Update the descriptor only after "
                "that TMA completed (the consumer's wait on its full barrier, then its arrival on the empty barrier "
                "the producer waits for; wait_group for stores), or give the next group its own descriptor"))
            _late_fetch(u.op, tmap, cta.cluster)
        rec.version, rec.tmap, rec.writer = rec.version + 1, tmap, f"{cta.label} ({how})"
        rec.name = name or rec.name
    if released:
        rec.released = Published(rec.version, tmap)
        view(cta).unreleased.discard(address)
    else:
        view(cta).unreleased.add(address)


def _late_fetch(op, tmap: TensorMap, cluster) -> None:
    """A non-strict launch goes on: an operation not yet delivered fetches the new descriptor, as hardware might."""
    if op in cluster.inflight and getattr(op, "tmap", None) is not None:
        if checked_geometry(op.tmap) == checked_geometry(tmap):
            op.tmap, op.gmem = tmap, cluster.launch.memory.resolve(tmap.global_address)


def release_all(cta) -> None:
    """``fence.proxy.tensormap::generic.release.gpu``: this CTA's in-place edits become visible to acquirers."""
    v = view(cta)
    for address in v.unreleased:
        rec = TABLE.maps[address]
        rec.released = Published(rec.version, rec.tmap)
    v.unreleased.clear()


def acquire(cta, address: int) -> None:
    """``fence.proxy.tensormap::generic.acquire.gpu [address], 128``: drop the cached copy, see the last release."""
    rec = TABLE.at(address, f"fence.proxy.tensormap acquire of {cta.label}")
    v = view(cta)
    v.cache.pop(address, None)
    v.acquired[address] = rec.released.version


def prefetch(cta, address: int) -> None:
    """``prefetch.tensormap [address]``: bring the descriptor into the CTA's cache (if not cached already)."""
    rec = TABLE.at(address, f"prefetch.tensormap of {cta.label}")
    view(cta).cache.setdefault(address, rec.released)
