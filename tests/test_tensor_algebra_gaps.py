"""CuTe's tensor-level algebra (cute/tensor_impl.hpp) on tensors over numpy arrays: each op is
``make_tensor(tensor.data() [+ offset], op(tensor.layout(), ...))``. The smem-pointer and coordinate-tensor forms are
oracle cases (tests/oracle/cases.py TENSOR_ALGEBRA); an array's address is not printable alike in C++, so here the
expected values follow from that definition: the same array, the layout op's result, the offset CuTe adds."""

from __future__ import annotations

import numpy as np
import pytest

import tmakit as tk
from tmakit import Int, _

L46 = tk.make_layout((Int(4), Int(6)), (Int(1), Int(4)))


def _t(layout=L46, dtype=np.float32):
    return tk.make_tensor(np.arange(int(tk.cosize(layout)), dtype=dtype), layout)


def _same_memory(a, b):
    assert a.iterator.array is b.iterator.array


@pytest.mark.parametrize("op,args", [
    (tk.composition, (tk.make_layout(Int(8), Int(2)),)),
    (tk.composition, ((Int(2), Int(3)),)),
    (tk.logical_divide, ((Int(2), Int(3)),)),
    (tk.zipped_divide, ((Int(2), Int(3)),)),
    (tk.tiled_divide, ((Int(2), Int(3)),)),
    (tk.flat_divide, ((Int(2), Int(3)),)),
    (tk.coalesce, ()),
    (tk.coalesce, ((Int(1), Int(1)),)),
    (tk.filter, ()),
    (tk.filter_zeros, ()),
    (tk.flatten, ()),
])
def test_layout_op_on_tensor_keeps_the_array(op, args):
    t = _t()
    r = op(t, *args)
    assert isinstance(r, tk.Tensor)
    _same_memory(r, t)
    assert r.iterator.offset == 0
    assert str(r.layout) == str(op(t.layout, *args))


def test_composition_reads_the_composed_elements():
    t = _t()
    r = tk.composition(t, tk.make_layout(Int(8), Int(2)))  # (4,6):(1,4) o 8:2 = 8:2 (offsets 0, 2, ..., 14)
    assert str(r) == "array[float32]+0 o _8:_2"
    assert [float(r(i)) for i in range(8)] == [float(2 * i) for i in range(8)]
    r[3] = -1.0  # a view: writes go to the array
    assert t.iterator.array[6] == -1.0


def test_compose_and_tile_members():
    t = _t()
    assert str(t.compose(Int(2), Int(3))) == "array[float32]+0 o (_2,_3):(_1,_4)"
    assert str(t.tile(Int(2), Int(3))) == "array[float32]+0 o ((_2,_3),_2,_2):((_1,_4),_2,_12)"


def test_coalesce_of_a_tensor_coalesces_its_layout():
    # an earlier version returned the tensor unchanged (the layout-only coalesce took it for a shape)
    assert str(tk.coalesce(_t())) == "array[float32]+0 o _24:_1"
    assert str(tk.filter(_t(tk.make_layout((Int(4), Int(2)), (Int(1), Int(0)))))) == "array[float32]+0 o _4:_1"


def test_domain_offset_moves_the_pointer():
    r = tk.domain_offset((1, 2), _t())  # offset L46(1, 2) = 9, layout unchanged
    assert str(r) == "array[float32]+9 o (_4,_6):(_1,_4)"


def test_max_common_vector_and_layout_of_tensors():
    a, b = _t(), _t(tk.make_layout((Int(4), Int(6)), (Int(1), Int(8))))
    assert tk.max_common_vector(a, b) == 4 and str(tk.max_common_vector(a, b)) == "_4"
    assert str(tk.max_common_layout(a, b)) == "_4:_1"
    # another element type, or a coordinate tensor: no vectorization (_0 and _1:_0, as CuTe)
    c = _t(dtype=np.int32)
    assert str(tk.max_common_vector(a, c)) == "_0"
    assert str(tk.max_common_layout(a, c)) == "_1:_0"
    ident = tk.make_identity_tensor((Int(4), Int(6)))
    assert str(tk.max_common_vector(ident, ident)) == "_0"
    with pytest.raises(tk.LayoutError, match="two layouts or two tensors"):
        tk.max_common_vector(a, a.layout)


def test_max_alignment_of_a_tensor_is_in_bits():
    # gcd(max_alignment(T*) = _0, max_alignment(layout) * sizeof_bits<T>) = 24 elements * 32 bits
    assert str(tk.max_alignment(_t())) == "_768"
    assert str(tk.max_alignment(_t(dtype=np.float16))) == "_384"
    assert str(tk.max_alignment(L46)) == "_24"  # the layout's, in elements
    with pytest.raises(tk.LayoutError, match="not a pointer to memory"):
        tk.max_alignment(tk.make_identity_tensor((Int(4), Int(6))))


@pytest.mark.parametrize("op", [tk.logical_product, tk.blocked_product, tk.raked_product, tk.zipped_product])
def test_products_of_a_tensor_are_refused(op):
    with pytest.raises(tk.LayoutError, match="CuTe defines no .* of a tensor"):
        op(_t(), tk.make_layout(Int(2)))


def test_partitions_of_an_array_tensor():
    t = _t()
    # zipped_divide by (2,3): ((_2,_3),(_2,_2)):((_1,_4),(_2,_12)); tile (1,1) starts at 1*2 + 1*12 = 14
    assert str(tk.local_tile(t, (Int(2), Int(3)), (1, 1))) == "array[float32]+14 o (_2,_3):(_1,_4)"
    # thread 3 of (2,2):(1,2) is (1,1): offset 1*1 + 1*4 = 5 of ((_2,_2),(_2,_3)):((_1,_4),(_2,_8))
    assert str(tk.local_partition(t, tk.make_layout((Int(2), Int(2))), 3)) == "array[float32]+5 o (_2,_3):(_2,_8)"
    assert str(t(_, 2)) == "array[float32]+8 o (_4):(_1)"  # a slice keeps the 1-tuple, as CuTe prints it
