"""make_tma_copy, partitioning, tma_partition and multicast masks: the seeds' values and CuTe's prints."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tmakit as tk
from tmakit.layout.algebra import group_modes

I = tk.Int

SEED001_TILED_COPY = """TiledCopy
  Tiler_MN:       (_16,_16)
  TiledLayout_TV: (_2,(((_16,_16),_1))):(_8,(((_16,_1),_0)))
Copy_Atom
  ThrID:        _1:_0
  ValLayoutSrc: (_1,_256):(_0,_1)
  ValLayoutDst: (_1,_256):(_0,_1)
  ValLayoutRef: (_1,_256):(_0,_1)
  ValueType:    32b
"""


def _fp32_1024():
    return tk.make_tensor(tk.make_gmem_ptr("fp32", 0x10000), tk.make_layout((1024, 1024), tk.LayoutRight))


def test_multicast_tiled_copy_prints_like_cute():
    tc = tk.make_tma_copy(tk.SM90_TMA_LOAD_MULTICAST, _fp32_1024(), tk.make_layout((I(16), I(16)), tk.LayoutRight),
                          cluster_size=2)
    assert str(tc) == SEED001_TILED_COPY
    assert tc.tensormap.box_dim == (16, 8)  # 16 columns x 8 rows per CTA
    assert tc.tensormap.global_dim == (1024, 1024)
    assert tc.tensormap.global_strides == (4096,)
    assert str(tc.get_tma_tensor((1024, 1024))) == "ArithTuple(_0,_0) o (1024,1024):(_1@1,_1@0)"


def test_multicast_slices_start_at_rows_0_and_8():
    tc = tk.make_tma_copy(tk.SM90_TMA_LOAD_MULTICAST, _fp32_1024(), tk.make_layout((I(16), I(16)), tk.LayoutRight),
                          cluster_size=2)
    tile = tk.local_tile(tc.get_tma_tensor((1024, 1024)), (I(16), I(16)), (7, 0))
    starts = [tuple(tc.get_slice(i).partition_S(tile).iterator) for i in range(2)]
    assert starts == [(0, 112), (0, 120)]  # (col, row) in TMA order: CTA 1 starts at logical (8, 0) of the tile
    smem = tk.make_tensor(np.zeros(256, np.float32), tk.make_layout((I(16), I(16)), tk.LayoutRight))
    assert tc.get_slice(1).partition_D(smem).iterator.offset == 128


def test_single_cta_load_copy_covers_whole_tile():
    tc = tk.make_tma_copy(tk.SM90_TMA_LOAD, _fp32_1024(), tk.make_layout((I(16), I(16)), tk.LayoutRight))
    assert tc.tensormap.box_dim == (16, 16)
    assert str(tc.layout_tv) == "(_1,(((_16,_16),_1))):(_0,(((_16,_1),_0)))"


def test_bf16_swizzle128_descriptor():
    M, K = 512, 256
    g = tk.make_tensor(tk.make_gmem_ptr("bf16", 0x10000), tk.make_layout((M, K), tk.LayoutRight))
    s = tk.composition(tk.Swizzle(3, 4, 3), tk.make_layout((I(64), I(64)), tk.LayoutRight))
    tm = tk.make_tma_copy(tk.SM90_TMA_LOAD, g, s).tensormap
    assert tm.global_dim == (K, M)
    assert tm.global_strides == (2 * K,)
    assert tm.box_dim == (64, 64)
    assert tm.swizzle == tk.SwizzleMode.B128


def test_bf16_unaligned_k_names_the_16_byte_rule():
    g = tk.make_tensor(tk.make_gmem_ptr("bf16", 0x10000), tk.make_layout((512, 100), tk.LayoutRight))
    s = tk.composition(tk.Swizzle(3, 4, 3), tk.make_layout((I(64), I(64)), tk.LayoutRight))
    with pytest.raises(tk.TmaDescriptorError) as e:
        tk.make_tma_copy(tk.SM90_TMA_LOAD, g, s)
    assert "16" in str(e.value) and "200" in str(e.value)


def test_column_major_gmem_maps_tma_dims():
    g = tk.make_tensor(tk.make_gmem_ptr("fp32", 0x10000), tk.make_layout((256, 128)))  # column-major
    tc = tk.make_tma_copy(tk.SM90_TMA_LOAD, g, tk.make_layout((I(32), I(8))))
    assert tc.tensormap.global_dim == (256, 128)
    assert tc.tensormap.box_dim == (32, 8)
    assert str(tc.get_tma_tensor((256, 128))) == "ArithTuple(_0,_0) o (256,128):(_1@0,_1@1)"


def test_smem_majorness_mismatch_is_rejected():
    g = tk.make_tensor(tk.make_gmem_ptr("fp32", 0x10000), tk.make_layout((256, 128), tk.LayoutRight))
    with pytest.raises(tk.TmaDescriptorError):
        tk.make_tma_copy(tk.SM90_TMA_LOAD, g, tk.make_layout((I(32), I(8))))  # smem column-major: no shared vector


def test_box_over_256_is_rejected():
    g = tk.make_tensor(tk.make_gmem_ptr("uint8", 0x10000), tk.make_layout((64, 1024), tk.LayoutRight))
    with pytest.raises(tk.TmaDescriptorError):
        tk.make_tma_copy(tk.SM90_TMA_LOAD, g, tk.make_layout((I(4), I(512)), tk.LayoutRight))


def test_reduce_dtype_table_enforced():
    g = tk.make_tensor(tk.make_gmem_ptr("fp32", 0x10000), tk.make_layout((64, 64), tk.LayoutRight))
    s = tk.make_layout((I(8), I(8)), tk.LayoutRight)
    tk.make_tma_copy(tk.SM90_TMA_REDUCE_ADD, g, s)
    with pytest.raises(tk.TmaDescriptorError):
        tk.make_tma_copy(tk.SM90_TMA_REDUCE_MIN, g, s)  # no f32 min


def test_three_d_gmem_with_dynamic_strides():
    g = tk.make_tensor(tk.make_gmem_ptr("fp32", 0x10000), tk.make_layout((1024, 32, 512), (64, I(1), 65536)))
    s = tk.make_layout((I(16), I(8), I(2)), (I(16), I(1), I(8)))
    tm = tk.make_tma_copy(tk.SM90_TMA_LOAD, g, s).tensormap
    assert tm.global_dim[0] == 32 and tm.box_dim[0] == 8


@pytest.mark.parametrize("modes,expected", [((2,), 0xF0), ((1,), 0x44), ((0, 1), 0x4444), ((0, 2), 0xF0F0)])
def test_multicast_masks_match_cute(modes, expected):
    cluster = tk.make_layout((I(2), I(2), I(4), I(1)), (I(8), I(4), I(1), I(0)))
    assert tk.create_tma_multicast_mask(cluster, (0, 1, 2, 0), modes) == expected


def test_seed004_mode1_claim_is_wrong():
    # Seed 004 claims 0b0000000000110011 for the mode-1 projection; CuTe computes 0x44 (CuTe is the reference).
    cluster = tk.make_layout((I(2), I(2), I(4), I(1)), (I(8), I(4), I(1), I(0)))
    assert tk.create_tma_multicast_mask(cluster, (0, 1, 2, 0), (1,)) != 0b0000000000110011


def test_multicast_mask_selects_ctas_sharing_the_projection():
    cluster = tk.make_layout((I(2), I(4)), (I(1), I(2)))
    for rank in range(8):
        crd = cluster.get_hier_coord(rank)
        mask = tk.create_tma_multicast_mask(cluster, crd, (1,))
        chosen = {r for r in range(8) if mask >> r & 1}
        assert chosen == {r for r in range(8) if cluster.get_hier_coord(r)[0] == crd[0]}


def test_tma_partition_offsets_by_cta_share():
    g = tk.make_tensor(tk.make_gmem_ptr("bf16", 0x10000), tk.make_layout((1024, 4096), tk.LayoutRight))
    s = tk.make_layout((I(64), I(128)), tk.LayoutRight)
    atom = tk.make_tma_atom(tk.SM90_TMA_LOAD_MULTICAST, g, s, cluster_size=4)
    gt = tk.local_tile(atom.get_tma_tensor((1024, 4096)), (I(64), I(128)), (0, 0))
    gt = tk.Tensor(gt.iterator, group_modes(gt.layout, 0, 2))
    st = tk.make_tensor(np.zeros(8192, np.uint16), group_modes(s, 0, 2))
    gp, sp = tk.tma_partition(atom, 2, tk.make_layout(I(4)), st, gt)
    assert sp.iterator.offset == 4096
    assert tuple(gp.iterator) == (0, 32)


def test_partitions_cover_the_tile_exactly_once():
    for cluster in (1, 2, 4, 8):
        op = tk.SM90_TMA_LOAD_MULTICAST if cluster > 1 else tk.SM90_TMA_LOAD
        tc = tk.make_tma_copy(op, _fp32_1024(), tk.make_layout((I(32), I(16)), tk.LayoutRight), cluster_size=cluster)
        box = tc.tensormap.box_dim
        tile = tk.local_tile(tc.get_tma_tensor((1024, 1024)), (I(32), I(16)), (3, 5))
        seen = set()
        for c in range(cluster):
            x0, y0 = tuple(tc.get_slice(c).partition_S(tile).iterator)
            seen |= {(x0 + i, y0 + j) for i in range(box[0]) for j in range(box[1])}
        assert seen == {(80 + i, 96 + j) for i in range(16) for j in range(32)}


@settings(max_examples=60, deadline=None)
@given(rows=st.sampled_from([8, 16, 32, 64]), cols=st.sampled_from([4, 8, 16, 32]),
       cluster=st.sampled_from([1, 2, 4, 8]), tm=st.integers(0, 7), tn=st.integers(0, 7))
def test_property_cluster_slices_partition_the_tile(rows, cols, cluster, tm, tn):
    if rows % cluster:
        return
    op = tk.SM90_TMA_LOAD_MULTICAST if cluster > 1 else tk.SM90_TMA_LOAD
    s = tk.make_layout((I(rows), I(cols)), tk.LayoutRight)
    tc = tk.make_tma_copy(op, _fp32_1024(), s, cluster_size=cluster)
    bx, by = tc.tensormap.box_dim
    assert bx * by * cluster == rows * cols
    tile = tk.local_tile(tc.get_tma_tensor((1024, 1024)), (I(rows), I(cols)), (tm, tn))
    cells = []
    for c in range(cluster):
        x0, y0 = tuple(tc.get_slice(c).partition_S(tile).iterator)
        cells += [(x0 + i, y0 + j) for i in range(bx) for j in range(by)]
    want = {(tn * cols + i, tm * rows + j) for i in range(cols) for j in range(rows)}
    assert len(cells) == len(want) and set(cells) == want  # every element exactly once


@settings(max_examples=80, deadline=None)
@given(shape=st.lists(st.sampled_from([1, 2, 4]), min_size=1, max_size=4), data=st.data())
def test_property_mask_selects_exactly_the_ctas_sharing_the_coordinate(shape, data):
    cluster = tk.make_layout(tuple(I(s) for s in shape), tk.LayoutLeft)
    n = int(tk.size(cluster))
    if n > 16:
        return
    rank = data.draw(st.integers(0, n - 1))
    modes = tuple(sorted(set(data.draw(st.lists(st.integers(0, len(shape) - 1), max_size=len(shape))))))
    crd = cluster.get_hier_coord(rank)
    crd = crd if isinstance(crd, tuple) else (crd,)
    mask = tk.create_tma_multicast_mask(cluster, crd if len(shape) > 1 else crd[0], modes)

    def coord(r):
        c = cluster.get_hier_coord(r)
        return c if isinstance(c, tuple) else (c,)

    expect = {r for r in range(n) if all(coord(r)[k] == crd[k] for k in range(len(shape)) if k not in modes)}
    assert {r for r in range(16) if mask >> r & 1} == expect
