"""CuTe's ``TmaInternalType`` (the leading template argument of make_tma_copy / make_tma_atom /
make_tma_copy_{A,B,C}_sm90) and ``Op::PREFETCH``: argument handling and refusals. The prints are compared with
CuTe in tests/test_tma_oracle.py ("internal ..." cases)."""

from __future__ import annotations

import numpy as np
import pytest

import tmakit as tk

I = tk.Int  # noqa: E741


def _g(dtype, shape=(256, 256)):
    return tk.make_tensor(tk.make_gmem_ptr(dtype, 0x10000), tk.make_layout(shape, tk.LayoutRight))


S = tk.make_layout((I(64), I(64)), tk.LayoutRight)
T = (I(64), I(64))


@pytest.mark.parametrize("elem, internal, want", [
    (tk.float_e4m3_t, np.uint8, tk.DataType.UINT8), (tk.half_t, np.uint16, tk.DataType.UINT16),
    (tk.bfloat16_t, np.uint16, tk.DataType.UINT16), (np.float32, np.uint32, tk.DataType.UINT32),
    (np.float32, tk.tfloat32_t, tk.DataType.TFLOAT32), (tk.half_t, tk.bfloat16_t, tk.DataType.BFLOAT16),
    (tk.half_t, "uint16_t", tk.DataType.UINT16)])
def test_descriptor_takes_internal_type(elem, internal, want):
    plain = tk.make_tma_copy(tk.SM90_TMA_LOAD, _g(elem), S, T, I(1))
    tc = tk.make_tma_copy(internal, tk.SM90_TMA_LOAD, _g(elem), S, T, I(1))
    assert tc.tensormap.dtype == want
    assert tc.tensormap.box_dim == plain.tensormap.box_dim
    assert tc.tensormap.global_strides == plain.tensormap.global_strides
    assert str(tc) == str(plain)


def test_every_entry_point_takes_it():
    g = _g(tk.half_t, (512, 512))
    atom = tk.make_tma_atom(np.uint16, tk.SM90_TMA_LOAD_MULTICAST, g, S, T, I(2))
    assert atom.tensormap.dtype == tk.DataType.UINT16
    assert tk.make_tma_atom(np.uint16, tk.SM90_TMA_LOAD, g, S, T).tensormap.dtype == tk.DataType.UINT16
    mnk = (I(64), I(64), I(64))
    for f, args in ((tk.make_tma_copy_A_sm90, (mnk, (I(1), I(2), I(1)))), (tk.make_tma_copy_B_sm90, (mnk, (2, 1, 1))),
                    (tk.make_tma_copy_C_sm90, (mnk,))):
        op = tk.SM90_TMA_LOAD_MULTICAST if f is not tk.make_tma_copy_C_sm90 else tk.SM90_TMA_LOAD
        assert f(np.uint16, op, g, S, *args).tensormap.dtype == tk.DataType.UINT16
        assert f(op, g, S, *args).tensormap.dtype == tk.DataType.FLOAT16


def test_width_must_match():
    with pytest.raises(tk.TmaDescriptorError) as e:
        tk.make_tma_copy(np.uint32, tk.SM90_TMA_LOAD, _g(tk.half_t), S, T, I(1))
    assert e.value.rule == "internal_type.width"
    assert "32 bits" in str(e.value) and "16 bits" in str(e.value) and "Fix:" in str(e.value)
    with pytest.raises(tk.TmaDescriptorError, match="internal_type.width"):
        tk.make_tma_copy_A_sm90(np.uint8, tk.SM90_TMA_LOAD, _g(np.float32), S, (I(64), I(64), I(64)), (1, 1, 1))


def test_short_overloads_take_no_internal_type():
    # CuTe: make_tma_copy<T>(op, g, s) and (op, g, s, cluster) do not compile (only the 5-argument form has T)
    for args in ((tk.SM90_TMA_LOAD, _g(tk.half_t), S), (tk.SM90_TMA_LOAD_MULTICAST, _g(tk.half_t), S, I(2))):
        with pytest.raises(tk.TmaDescriptorError, match="internal_type.overload"):
            tk.make_tma_copy(np.uint16, *args)
    with pytest.raises(tk.TmaDescriptorError, match="internal_type.overload"):
        tk.make_tma_atom(np.uint16, tk.SM90_TMA_LOAD, _g(tk.half_t), S)


def test_op_names_still_work():
    assert tk.make_tma_copy("SM90_TMA_LOAD", _g(tk.half_t), S).tensormap.dtype == tk.DataType.FLOAT16
    assert tk.make_tma_copy(np.uint16, "SM90_TMA_LOAD", _g(tk.half_t), S, T, 1).tensormap.dtype == tk.DataType.UINT16


def test_prefetch_ops():
    p = tk.SM90_TMA_LOAD.PREFETCH
    assert p.name == "SM90_TMA_LOAD::PREFETCH" and p.kind == "prefetch" and not p.is_load and not p.is_store
    assert tk.SM90_TMA_LOAD_MULTICAST.PREFETCH == p  # CuTe: using PREFETCH = SM90_TMA_LOAD::PREFETCH
    assert p.ptx == "cp.async.bulk.prefetch.tensor.Nd.L2.global.tile"
    q = tk.SM90_TMA_LOAD_IM2COL_MULTICAST.PREFETCH
    assert q == tk.SM90_TMA_LOAD_IM2COL.PREFETCH and q.name == "SM90_TMA_LOAD_IM2COL::PREFETCH" and q.im2col
    with pytest.raises(tk.TmaDescriptorError, match="copy.prefetch"):
        tk.SM90_TMA_STORE.PREFETCH  # noqa: B018
    with pytest.raises(tk.TmaDescriptorError, match="copy.op"):
        tk.make_tma_copy(p, _g(tk.half_t), S)
