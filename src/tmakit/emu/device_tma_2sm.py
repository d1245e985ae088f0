"""Blackwell's 2-SM TMA load: ``cp.async.bulk.tensor.Nd.cta_group::2.shared::cluster.global.mbarrier::complete_tx
::bytes{.multicast::cluster}`` (CuTe ``SM100_TMA_2SM_LOAD`` / ``SM100_TMA_2SM_LOAD_MULTICAST``).

Both CTAs of a pair issue loads into their own shared memory (or, with a mask, into every CTA of the mask); the
transaction bytes complete on the mbarrier at the same offset in the *even* CTA of each destination's pair (CuTe
clears the peer bit of the barrier address, ``Sm100MmaPeerBitMask``), so only the leader CTA waits, expecting the
bytes of both CTAs.
"""

from __future__ import annotations

from . import tma_unit
from .async_ops import LoadOp, overwrites_barrier, proxy_race
from .device_smem import barrier_address, smem_address
from .device_tma import _count, _mask_ranks
from .errors import ExitError, IllegalInstruction
from .scheduler import current_cta
from .smem_image import check_smem_range
from .smem_ptr import SmemPtr


class Load2SmOp(LoadOp):
    """A TMA load whose complete_tx goes to the pair leader of each destination CTA."""

    def deliver(self, cluster) -> None:
        data = tma_unit.gather(self.tmap, self.coords, self.gmem, self.offsets)
        for r in self.ranks:
            cta = cluster.ctas[r]
            if cta.state in ("exited", "aborted"):
                raise ExitError(f"{self.what} from {self.issuer.label} writes the shared memory of {cta.label}, "
                                "which already exited: end the kernel with cluster_sync()")
            for race in (proxy_race(cta, self.addr, self.geom, self.what),
                         overwrites_barrier(cta, self.addr, self.geom)):
                if race is not None:
                    cluster.launch.report(race)
            cta.smem.tma_write(self.addr, self.geom, data)
            cluster.signal(self.issuer, cluster.ctas[r & ~1], self.bar, self.geom.tx_bytes, self.what)


def tma_load_2sm(tmap, coords, dst, bar, mask=None) -> None:
    """``cp.async.bulk.tensor ... .cta_group::2``: load into ``dst`` (with ``mask``: of every CTA of the mask);
    the bytes complete on ``bar`` of the even CTA of each destination's pair."""
    cta = current_cta()
    if cta.cluster.size % 2:
        raise IllegalInstruction(f"2-SM TMA load in {cta.label}: .cta_group::2 needs CTA pairs, the cluster has "
                                 f"{cta.cluster.size} CTA(s)")
    geom = tma_unit.checked_geometry(tmap)
    coords, offsets = tma_unit.check_coords(tmap, coords, (), what="2-SM TMA load")
    addr, baddr = smem_address(cta, dst), barrier_address(cta, bar)
    check_smem_range(cta.smem.data, addr, geom, "2-SM TMA load")
    gmem = cta.cluster.launch.memory.resolve(tmap.global_address)
    op = Load2SmOp(cta, tmap, coords, offsets, addr, baddr, _mask_ranks(cta, mask), gmem, geom)
    op.what = f"2-SM TMA {'multicast ' if mask is not None else ''}load at {coords}"
    cta.cluster.issue(op)
    _count(cta, "load")


def copy_2sm(atom, src, dst) -> None:
    """CuTe's ``copy(tma.with(bar, mask), src, dst)`` for an ``SM100_TMA_2SM_LOAD{_MULTICAST}`` atom: the
    instructions of a partitioned load, each issued as the 2-SM form (see ``tma_load_2sm``)."""
    from .adaptor import _atom_pairs, atom_values, tma_coords

    bar, mask = getattr(atom, "barrier", None), getattr(atom, "mask", None)
    if bar is None:
        raise IllegalInstruction("2-SM TMA load needs an mbarrier: copy_2sm(tma.with_(barrier[, mask]), src, dst)")
    for s, d in _atom_pairs(src, dst, atom_values(atom)):
        it = d.iterator
        tma_load_2sm(atom.tensormap, tma_coords(s), it if isinstance(it, SmemPtr) else int(it.address), bar, mask)
