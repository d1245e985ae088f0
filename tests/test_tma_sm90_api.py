"""CuTe's TMA host entry points beyond make_tma_copy's main form: its overloads, make_tma_atom's Copy_Atom,
make_tma_copy_A/B/C_sm90, tma_partition's short form and CuTe's element types (the oracle in test_tma_oracle.py
checks their prints against CuTe; these check the argument handling)."""

import pytest

import tmakit as tk

I = tk.Int  # noqa: E741


def _g(dtype=tk.half_t, shape=(512, 256)):
    return tk.make_tensor(tk.make_gmem_ptr(dtype, 0x10000), tk.make_layout(shape, tk.LayoutRight))


def test_fourth_argument_integer_is_the_cluster_size():
    s = tk.make_layout((I(64), I(64)), tk.LayoutRight)
    a = tk.make_tma_copy(tk.SM90_TMA_LOAD_MULTICAST, _g(), s, I(2))
    b = tk.make_tma_copy(tk.SM90_TMA_LOAD_MULTICAST, _g(), s, (I(64), I(64)), 2)
    assert a.tensormap == b.tensormap and a.tensormap.box_dim == (64, 32)
    assert str(a) == str(b)
    c = tk.make_tma_copy(tk.SM90_TMA_LOAD, _g(), s, (I(64), I(64)))  # a tuple stays the CTA tiler
    assert c.tensormap.box_dim == (64, 64)


def test_make_tma_atom_prints_a_copy_atom_and_takes_a_cluster_shape():
    s = tk.make_layout((I(64), I(64)), tk.LayoutRight)
    atom = tk.make_tma_atom(tk.SM90_TMA_LOAD_MULTICAST, _g(), s, (I(64), I(64)), (I(2), I(2), I(1)))
    assert isinstance(atom, tk.TmaAtom) and str(atom).startswith("Copy_Atom\n")
    assert atom.tensormap.box_dim == (64, 16)  # 4 CTAs share the tile


def test_tma_partition_short_form_is_cta_0_of_one():
    s = tk.make_layout((I(64), I(64)), tk.LayoutRight)
    atom = tk.make_tma_atom(tk.SM90_TMA_LOAD, _g(), s, (I(64), I(64)))
    g = tk.local_tile(atom.get_tma_tensor((512, 256)), (I(64), I(64)), (1, 2))
    g = tk.Tensor(g.iterator, tk.group_modes(g.layout, 0, 2))
    st = tk.make_tensor(tk.make_smem_ptr(tk.half_t, 0x400), tk.group_modes(s, 0, 2))
    short = tk.tma_partition(atom, st, g)
    full = tk.tma_partition(atom, I(0), tk.make_layout(I(1), I(0)), st, g)
    assert [str(x) for x in short] == [str(x) for x in full]


def test_tma_partition_size_mismatch_is_a_tma_error():
    s = tk.make_layout((I(64), I(64)), tk.LayoutRight)
    atom = tk.make_tma_atom(tk.SM90_TMA_LOAD, _g(), s, (I(64), I(64)))
    g = tk.local_tile(atom.get_tma_tensor((512, 256)), (I(64), I(32)), (0, 0))
    g = tk.Tensor(g.iterator, tk.group_modes(g.layout, 0, 2))
    st = tk.make_tensor(tk.make_smem_ptr(tk.half_t, 0x400), tk.group_modes(s, 0, 2))
    with pytest.raises(tk.TmaError):
        tk.tma_partition(atom, st, g)


@pytest.mark.parametrize("api,cluster,ctas", [("A", (2, 4, 1), 4), ("B", (2, 4, 1), 2)])
def test_operand_copies_multicast_along_the_other_mode(api, cluster, ctas):
    s = tk.tile_to_shape(tk.GMMA.Layout_K_SW128_Atom(tk.half_t), (I(128), I(64)))
    f = tk.make_tma_copy_A_sm90 if api == "A" else tk.make_tma_copy_B_sm90
    tc = f(tk.SM90_TMA_LOAD_MULTICAST, _g(), s, (I(128), I(128), I(64)), tuple(I(c) for c in cluster))
    assert tc.tensormap.box_dim == (64, 128 // ctas)
    assert str(tc.layout_tv).startswith(f"(_{ctas},")


def test_c_copy_drops_k_and_never_multicasts():
    s = tk.make_layout((I(128), I(32)), tk.LayoutRight)
    tc = tk.make_tma_copy_C_sm90(tk.SM90_TMA_STORE, _g("fp32"), s,
                                 (I(128), I(32), I(64)))
    assert tc.tiler_mn == (I(128), I(32)) and tc.tensormap.box_dim == (32, 128)


@pytest.mark.parametrize("bad", [(I(128), I(64)), 128])
def test_operand_copies_need_an_mnk_tiler(bad):
    s = tk.make_layout((I(128), I(64)), tk.LayoutRight)
    with pytest.raises(tk.TmaError):
        tk.make_tma_copy_A_sm90(tk.SM90_TMA_LOAD, _g(), s, bad, (I(1), I(1), I(1)))


@pytest.mark.parametrize("t,dt", [(tk.half_t, "FLOAT16"), (tk.bfloat16_t, "BFLOAT16"), (tk.tfloat32_t, "TFLOAT32"),
                                  (tk.float_e4m3_t, "UINT8"), (tk.float_e5m2_t, "UINT8"), ("int8_t", "UINT8"),
                                  ("int32_t", "INT32"), ("uint16_t", "UINT16")])
def test_cute_element_types_map_as_cute(t, dt):
    assert tk.tma_dtype(t) == tk.DataType[dt]


def test_dynamic_box_is_refused_as_cute_static_asserts():
    g = tk.make_tensor(tk.make_gmem_ptr("fp32", 0x10000), tk.make_layout(((8, 16), 64), ((1, 8), 128)))
    with pytest.raises(tk.TmaDescriptorError, match="static"):
        tk.make_tma_copy(tk.SM90_TMA_LOAD, g, tk.make_layout((I(32), I(16))))
