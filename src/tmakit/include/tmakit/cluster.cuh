// tmakit/cluster.cuh -- thread-block-cluster special registers and barriers.
#pragma once
#include "types.cuh"

namespace tmakit {

#define TMAKIT_SREG_U32(fn, reg)                                  \
  TMAKIT_DEVICE u32 fn() {                                        \
    u32 r;                                                        \
    asm volatile("mov.u32 %0, %%" reg ";" : "=r"(r));             \
    return r;                                                     \
  }

TMAKIT_SREG_U32(cluster_ctarank, "cluster_ctarank")   // PTX: mov.u32 %cluster_ctarank  (block rank in cluster)
TMAKIT_SREG_U32(cluster_nctarank, "cluster_nctarank") // PTX: mov.u32 %cluster_nctarank (CTAs per cluster)
TMAKIT_SREG_U32(cluster_ctaid_x, "cluster_ctaid.x")   // PTX: mov.u32 %cluster_ctaid.x  (CTA coord in cluster)
TMAKIT_SREG_U32(cluster_ctaid_y, "cluster_ctaid.y")   // PTX: mov.u32 %cluster_ctaid.y
TMAKIT_SREG_U32(cluster_ctaid_z, "cluster_ctaid.z")   // PTX: mov.u32 %cluster_ctaid.z
TMAKIT_SREG_U32(cluster_nctaid_x, "cluster_nctaid.x") // PTX: mov.u32 %cluster_nctaid.x (cluster shape)
TMAKIT_SREG_U32(cluster_nctaid_y, "cluster_nctaid.y") // PTX: mov.u32 %cluster_nctaid.y
TMAKIT_SREG_U32(cluster_nctaid_z, "cluster_nctaid.z") // PTX: mov.u32 %cluster_nctaid.z
TMAKIT_SREG_U32(cluster_id_x, "clusterid.x")          // PTX: mov.u32 %clusterid.x (cluster coord in grid)
TMAKIT_SREG_U32(cluster_id_y, "clusterid.y")          // PTX: mov.u32 %clusterid.y
TMAKIT_SREG_U32(cluster_id_z, "clusterid.z")          // PTX: mov.u32 %clusterid.z
TMAKIT_SREG_U32(ncluster_id_x, "nclusterid.x")        // PTX: mov.u32 %nclusterid.x (clusters in grid)
TMAKIT_SREG_U32(ncluster_id_y, "nclusterid.y")        // PTX: mov.u32 %nclusterid.y
TMAKIT_SREG_U32(ncluster_id_z, "nclusterid.z")        // PTX: mov.u32 %nclusterid.z
#undef TMAKIT_SREG_U32

// PTX: mov.pred %is_explicit_cluster   (true when launched with cluster dimensions)
TMAKIT_DEVICE bool is_explicit_cluster() {
  u32 r;
  asm volatile("{\n\t.reg .pred p;\n\tmov.pred p, %%is_explicit_cluster;\n\tselp.u32 %0, 1, 0, p;\n\t}" : "=r"(r));
  return r != 0;
}

// PTX: barrier.cluster.arrive.release.aligned;
TMAKIT_DEVICE void cluster_arrive() { asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory"); }

// PTX: barrier.cluster.arrive.relaxed.aligned;
TMAKIT_DEVICE void cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
}

// PTX: barrier.cluster.wait.acquire.aligned;
TMAKIT_DEVICE void cluster_wait() { asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory"); }

// All threads of all CTAs of the cluster: arrive (release) + wait (acquire).
TMAKIT_DEVICE void cluster_sync() {
  cluster_arrive();
  cluster_wait();
}

// PTX: mapa.u64 remote, ptr, rank;   generic address of the same shared variable in CTA `rank`.
template <typename T>
TMAKIT_DEVICE T* map_shared_rank(T* p, u32 rank) {
  u64 r;
  asm volatile("mapa.u64 %0, %1, %2;" : "=l"(r) : "l"(p), "r"(rank));
  return reinterpret_cast<T*>(r);
}

// PTX: getctarank.shared::cluster.u32 rank, addr;   which CTA of the cluster owns a shared::cluster address.
TMAKIT_DEVICE u32 cta_rank_of(u32 cluster_smem_addr) {
  u32 r;
  asm volatile("getctarank.shared::cluster.u32 %0, %1;" : "=r"(r) : "r"(cluster_smem_addr));
  return r;
}

}  // namespace tmakit
