// gemm_work.cuh -- the dense GEMM's work units and their hand-off: a unit (tile and K range), the shared-memory
// slot that carries it from the producer to the consumers, and the data-parallel + stream-K work list of one cluster.
// Included by gemm.cu inside namespace tmakit::gemm, after BK (the grouped work lists are in gemm_group.cuh).
#pragma once

// A work unit's tile and K range. Units: ks-major, then the (cluster-row, tile-column) grid in groups of
// group_m cluster rows that sweep the columns together (L2 reuse of A rows and B columns).
struct Unit {
  int m0, n0, k0, kt;  // first row / column / K element, number of 64-wide K slabs
  int role;            // 0: whole unit, 1: stream-K contributor (store a partial), 2: stream-K head (add partials)
  int su, slot, nseg;  // stream-K unit index, this segment's slot (0 = head), segments of the unit
};

TMAKIT_DEVICE Unit unit_at(int u, int rm, int rn, int cm, int cn, int bm, int bn, int M, int N, int K, int group_m,
                           int k_per_split) {
  const int units_m = (M + bm * cm - 1) / (bm * cm);
  const int tiles_n = (N + bn * cn - 1) / (bn * cn);
  const int units_mn = units_m * tiles_n;
  const int ks = u / units_mn;
  const int r = u - ks * units_mn;
  const int per_group = group_m * tiles_n;
  const int first_m = (r / per_group) * group_m;
  const int gsize = min(units_m - first_m, group_m);
  const int um = first_m + (r % per_group) % gsize;
  const int un = (r % per_group) / gsize;
  Unit t;
  t.m0 = (um * cm + rm) * bm;
  t.n0 = (un * cn + rn) * bn;
  t.k0 = ks * k_per_split;
  t.kt = (min(K, t.k0 + k_per_split) - t.k0 + BK - 1) / BK;  // OOB past K (last range only) reads zeros
  t.role = 0;
  return t;
}

// A unit handed from the producer to the consumers through a shared-memory slot of 32 bytes: {m0, n0, su, role |
// slot << 2 | nseg << 17}, kt | idle << 24 at byte 16 (kt = 0: no more units; idle: bit c set where consumer c skips
// the unit's wgmmas, grouped kernels) and k0 at byte 20 (read only where block scales arrive by TMA: get_unit_k0).
TMAKIT_DEVICE void put_unit(u32 slot, const Unit& t, u32 idle = 0) {
  const u32 w[4] = {(u32)t.m0, (u32)t.n0, (u32)t.su, (u32)(t.role | t.slot << 2 | t.nseg << 17)};
  sts16(slot, w);
  sts4(slot + 16, (u32)t.kt | idle << 24);
  sts4(slot + 20, (u32)t.k0);
}
TMAKIT_DEVICE void put_end(u32 slot) { sts4(slot + 16, 0u); }
// Read by lane 0 of each warp and broadcast: the lane that arrives on the stage barriers is the one whose reads those
// arrivals order before the producer's next write of the slot. PTX: ld.shared.v4.u32 + shfl.sync.idx
TMAKIT_DEVICE Unit get_unit(u32 slot) {
  u32 w[4] = {0, 0, 0, 0};
  if (threadIdx.x % 32 == 0) lds16(slot, w);
  Unit t;
  t.m0 = (int)__shfl_sync(0xffffffffu, w[0], 0);
  t.n0 = (int)__shfl_sync(0xffffffffu, w[1], 0);
  t.su = (int)__shfl_sync(0xffffffffu, w[2], 0);
  const int info = (int)__shfl_sync(0xffffffffu, w[3], 0);
  t.role = info & 3;
  t.slot = (info >> 2) & 0x7FFF;
  t.nseg = info >> 17;
  t.k0 = t.kt = 0;  // not needed after the mainloop
  return t;
}
// The slot's first K (2-byte units), read the same way. PTX: ld.shared.b32 + shfl.sync.idx
TMAKIT_DEVICE int get_unit_k0(u32 slot) {
  const u32 k0 = threadIdx.x % 32 == 0 ? lds4(slot + 20) : 0u;
  return (int)__shfl_sync(0xffffffffu, k0, 0);
}
// The slot's slab count (0: no more units) with the idle bits above it (kt | idle << 24), read the same way.
// PTX: ld.shared.b32 + shfl.sync.idx
TMAKIT_DEVICE int get_unit_kt(u32 slot) {
  const u32 kt = threadIdx.x % 32 == 0 ? lds4(slot + 16) : 0u;
  return (int)__shfl_sync(0xffffffffu, kt, 0);
}

// The work of one cluster: units cid, cid + ncl, ... < units, then its stream-K slab range (identical sequence in the
// producer and the consumers).
struct WorkList {
  int rm, rn, cm, cn, bm, bn, M, N, K, group_m, k_per_split, units, sk_units, cid, ncl, kt_all;
  int u;
  long long pos, end, total;

  // The cluster owning linear stream-K slab x: the largest c with floor(c * total / ncl) <= x.
  TMAKIT_DEVICE int owner(long long x) const { return (int)(((x + 1) * ncl + total - 1) / total) - 1; }

  TMAKIT_DEVICE void start() {
    u = cid;
    total = (long long)sk_units * kt_all;
    pos = total * cid / ncl;
    end = total * (cid + 1) / ncl;
  }

  TMAKIT_DEVICE bool next(Unit& t) {
    if (u < units) {
      t = unit_at(u, rm, rn, cm, cn, bm, bn, M, N, K, group_m, k_per_split);
      u += ncl;
      return true;
    }
    if (pos >= end) return false;
    const int su = (int)(pos / kt_all);
    const int ks = (int)(pos - (long long)su * kt_all);
    const int ke = (int)min((long long)kt_all, ks + (end - pos));
    t = unit_at(units + su, rm, rn, cm, cn, bm, bn, M, N, K, group_m, k_per_split);
    t.k0 = ks * BK;
    t.kt = ke - ks;
    const long long x0 = (long long)su * kt_all;
    const int first = owner(x0);
    t.su = su;
    t.nseg = owner(x0 + kt_all - 1) - first + 1;
    t.slot = cid - first;
    t.role = t.nseg == 1 ? 0 : (t.slot == 0 ? 2 : 1);
    pos += ke - ks;
    return true;
  }
};
