"""Where am I: block and cluster coordinates of the running CTA (CUDA's blockIdx, %cluster_ctarank ...).

The linear rank in a cluster is ``x + y*cx + z*cx*cy`` (x fastest) — the order CUTLASS assumes, verified on an H200
for 2-D and 3-D clusters (GPU test ``test_cluster_rank_order_matches_the_emulator``).
"""

from __future__ import annotations

from .cta import Dim3
from .scheduler import current_cta


def block_idx() -> Dim3:
    """``blockIdx``."""
    return current_cta().block_idx


def grid_dim() -> Dim3:
    """``gridDim`` in CTAs."""
    return current_cta().cluster.launch.grid


def block_rank_in_cluster() -> int:
    """``%cluster_ctarank``."""
    return current_cta().rank


def block_id_in_cluster() -> Dim3:
    """``%cluster_ctaid``: the CTA's coordinates inside its cluster."""
    return current_cta().local


def cluster_shape() -> Dim3:
    """``%cluster_nctaid``: CTAs per cluster in x, y, z."""
    return current_cta().cluster.shape


def cluster_id_in_grid() -> Dim3:
    """``%clusterid``: the cluster's coordinates in the grid of clusters."""
    return current_cta().cluster.cid


def cluster_size() -> int:
    """``%cluster_nctarank``."""
    return current_cta().cluster.size
