"""How a GEMM's units (output tiles) go to the persistent clusters: whole units, and stream-K slab ranges for the
last partial wave (or for every unit), as the kernel's ``WorkList`` (``gemm.cu``) deals them. Shared by the 16-bit
(``gemm.schedule``) and FP8 (``gemm_fp8.schedule``) host sides; plan-independent."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Schedule", "STREAM_K_MAX_FILL", "STREAM_K_MIN_SLABS", "STREAM_K_MODES", "stream_k_segments",
           "tail_schedule"]


@dataclass(frozen=True)
class Schedule:
    """How a plan's units go to the persistent clusters: ``clusters`` of ``cluster_size`` CTAs; the first
    ``dp_units`` units whole (unit i to cluster i mod clusters), the last ``sk_units`` as stream-K slab ranges, one
    per cluster. Stream-K needs an fp32 workspace of ``ws_bytes`` and ``flag_count`` zeroed 32-bit flags."""

    clusters: int
    cluster_size: int
    dp_units: int
    sk_units: int = 0
    maxseg: int = 0
    bn: int = 256
    consumers: int = 2
    scatter: int = 0  # split-K reduce-scatter: each of a tile's nseg segments finishes 1/nseg of its columns

    @property
    def grid(self) -> int:
        return self.clusters * self.cluster_size

    @property
    def flag_count(self) -> int:
        return self.sk_units * self.cluster_size * self.maxseg * self.consumers

    @property
    def ws_bytes(self) -> int:
        return self.flag_count * 64 * self.bn * 4  # one 64 x bn fp32 partial per flag (warpgroup)


STREAM_K_MODES = ("auto", "off", "all", "tail")
STREAM_K_MIN_SLABS = 8  # a cluster's stream-K range shorter than this costs more in fixups than it saves
# The 16-bit GEMM's "auto" uses stream-K only when the last wave is at most this full (docs/design/gemm.md; the FP8
# GEMM has its own threshold, gemm_fp8.STREAM_K_MAX_FILL): last waves 45-58 % full
# (8192^3, 4096x18432x7168, 8192x7168x2048) gained 0.3-2 % (events) / 3-4.5 % (graph); 79-94 % full (4096^3,
# 4096x7168x16384, 2048x4096x14336) lost 1-3 %: every cluster's fixup (128 KiB of fp32 partials out and back in,
# all clusters at once) costs a few microseconds, more than a nearly full last wave leaves idle.
STREAM_K_MAX_FILL = 0.6


def tail_schedule(units: int, kt: int, cfg, resident: int, stream_k: str = "auto",
                  max_fill: float = STREAM_K_MAX_FILL) -> Schedule:
    """Whole units on min(units, resident / cluster) persistent clusters, the last partial wave dealt out as
    stream-K slab ranges per ``stream_k`` (one of :data:`STREAM_K_MODES`, checked by the caller; see
    ``gemm.schedule``; ``"auto"``: when that wave is at most ``max_fill`` full; ``"all"``: every unit, over as many
    clusters as get ``STREAM_K_MIN_SLABS`` slabs each, at most all of them). ``kt``: K slabs per unit; ``cfg``:
    the kernel config (``cluster_size``, ``bn``, ``consumers``). Shared by the 16-bit and FP8 schedules (a slab is
    64 16-bit or 128 fp8 K)."""
    cs = cfg.cluster_size
    clusters = max(1, min(units, resident // cs))
    if stream_k == "off" or units == 0:
        return Schedule(clusters, cs, units, bn=cfg.bn, consumers=cfg.consumers)
    sk = units if stream_k == "all" else (units % clusters if units > clusters else 0)
    if stream_k == "auto" and sk > max_fill * clusters:
        sk = 0
    if stream_k == "all":  # every unit, over as many clusters as get STREAM_K_MIN_SLABS slabs each
        clusters = max(1, min(resident // cs, sk * kt // STREAM_K_MIN_SLABS))
    if sk == 0 or sk * kt // clusters < STREAM_K_MIN_SLABS:
        return Schedule(min(units, clusters), cs, units, bn=cfg.bn, consumers=cfg.consumers)
    min_range = sk * kt // clusters
    return Schedule(clusters, cs, units - sk, sk, kt // min_range + 2, cfg.bn, cfg.consumers)


def stream_k_segments(sched: Schedule, kt: int, cid: int) -> list[tuple[int, int, int, int, int, int]]:
    """The stream-K segments cluster ``cid`` runs, in order, as the kernel's ``WorkList`` computes them:
    (unit, first slab, end slab, role, slot, segments of the unit); role 0 whole, 1 contributor, 2 head."""
    total = sched.sk_units * kt
    ncl = sched.clusters

    def owner(x: int) -> int:
        return ((x + 1) * ncl + total - 1) // total - 1

    pos, end = total * cid // ncl, total * (cid + 1) // ncl
    segs = []
    while pos < end:
        su, ks = divmod(pos, kt)
        ke = min(kt, ks + end - pos)
        first = owner(su * kt)
        nseg = owner(su * kt + kt - 1) - first + 1
        slot = cid - first
        segs.append((sched.dp_units + su, ks, ke, 0 if nseg == 1 else (2 if slot == 0 else 1), slot, nseg))
        pos += ke - ks
    return segs
