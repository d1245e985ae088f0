"""The persistent schedule (``tmakit.kernels.gemm_schedule``): whatever the units, slabs, resident CTAs, cluster
size, stream-K mode and fill threshold, the stream-K ranges the kernel's work list derives cover every slab of the
dealt-out units exactly once, each split unit has one head, and no segment's workspace slot reaches past the
``maxseg`` the host sized the workspace for (the kernel indexes slot (unit, CTA, segment, warpgroup))."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from tmakit.kernels import gemm_schedule as gs


@dataclass(frozen=True)
class Cfg:
    cluster_size: int
    bn: int = 192
    consumers: int = 2


@settings(max_examples=400, deadline=None)
@given(units=st.integers(0, 3000), kt=st.integers(1, 600), resident=st.sampled_from([132, 128, 120, 114, 64, 8]),
       cs=st.sampled_from([1, 2]), mode=st.sampled_from(gs.STREAM_K_MODES), fill=st.floats(0.0, 1.0))
def test_stream_k_ranges_cover_every_slab_once(units, kt, resident, cs, mode, fill):
    s = gs.tail_schedule(units, kt, Cfg(cs), resident, mode, fill)
    assert s.dp_units + s.sk_units == units and s.cluster_size == cs
    assert 1 <= s.clusters <= max(1, resident // cs)
    if mode == "off" or s.sk_units == 0:
        assert s.sk_units == 0 and s.maxseg == 0
        return
    if mode == "auto":
        assert s.sk_units <= fill * s.clusters
    assert s.sk_units * kt // s.clusters >= gs.STREAM_K_MIN_SLABS
    seen = {}
    heads = {}
    for cid in range(s.clusters):
        for unit, k0, k1, role, slot, nseg in gs.stream_k_segments(s, kt, cid):
            assert s.dp_units <= unit < units and 0 <= k0 < k1 <= kt
            assert 0 <= slot < nseg <= s.maxseg  # inside the workspace the host sized
            assert role == (0 if nseg == 1 else 2 if slot == 0 else 1)
            for k in range(k0, k1):
                assert (unit, k) not in seen
                seen[unit, k] = cid
            if role == 2:
                assert k0 == 0 and unit not in heads  # the head holds the unit's first slab
                heads[unit] = cid
    assert len(seen) == s.sk_units * kt  # every slab of every dealt-out unit, once
    assert s.flag_count == s.sk_units * cs * s.maxseg * s.consumers and s.ws_bytes == s.flag_count * 64 * s.bn * 4


def test_tail_thresholds():
    cfg = Cfg(1)
    assert gs.tail_schedule(704, 32, cfg, 132, "auto", 0.75).sk_units == 44  # 33 % full
    assert gs.tail_schedule(384, 64, cfg, 132, "auto", 0.75).sk_units == 0  # 91 % full
    assert gs.tail_schedule(384, 64, cfg, 132, "tail", 0.75).sk_units == 120
    assert gs.tail_schedule(2432, 16, cfg, 132, "auto", 0.75).sk_units == 0  # 56 x 16 slabs / 132: short ranges
    assert gs.tail_schedule(100, 64, cfg, 132, "all").sk_units == 100  # every unit, all resident clusters
    assert gs.tail_schedule(100, 64, cfg, 132, "auto").sk_units == 0  # fewer units than clusters: whole units
