"""The CuTe oracle cases: expressions in the shared spelling of gen_cpp.py (``_8`` static, ``8`` dynamic).

tests/oracle/regen.sh turns these into C++, runs them against CuTe and stores what CuTe prints in
tests/data/cute_oracle.txt; tests/test_layout_oracle.py evaluates the same expressions with tmakit.
"""

from __future__ import annotations

# ---------------------------------------------------------------- hand-written cases, grouped by topic
BASICS = [
    "L((_16, 16), (_16, _1))",
    "L((_4, 8))",
    "L((4, _8))",
    "L((4, 8), LayoutRight)",
    "L((_4, (_2, 3)), LayoutRight)",
    "L(((2, _3), _4))",
    "L(_8)",
    "L(8)",
    "L((_1, 4))",
    "L((4, _1, 2))",
    "L((4, _1, 2), LayoutRight)",
    "L((_2, _1, _3), LayoutRight)",
    "L(((_4, 2), (_1, 3)), ((_1, _8), (_0, 16)))",
    "make_identity_layout((4, _8))",
    "make_identity_layout((4, (2, _3)))",
    "make_ordered_layout((_2, _2, _2, _2), (_0, _2, _3, _1))",
    "make_ordered_layout((2, 3, 4, 5), (_2, 67, 42, _50))",
    "make_ordered_layout((_4, _8, _2), (_2, _0, _1))",
    "size(L((4, _8)))",
    "size(L((_4, _8)))",
    "size(L((_4, (_2, 8))), 1)",
    "cosize(L((_4, _8), (_8, _1)))",
    "cosize(L((4, _8), (_8, _1)))",
    "cosize(L((_4, _8), (_0, _1)))",
    "rank(L((_4, (_2, 8))))",
    "rank(L(_4))",
    "depth(L((_4, (_2, 8))))",
    "depth(L(_4))",
    "shape(L((_4, (_2, 8))), 1)",
    "stride(L((_4, (_2, 8))), 1, 0)",
    "get(L((_4, (_2, 8)), (_2, (_1, 8))), 1)",
    "mode(L((_4, (_2, 8)), (_2, (_1, 8))), 1, 1)",
    "get((_4, (_2, 8)), 1, 0)",
    "crd2idx((1, 2), (4, _8), (_1, 4))",
    "crd2idx(13, (4, _8), (_1, 4))",
    "crd2idx(_0, (4, _8), (_1, _4))",
    "crd2idx(5, ((_2, 2), _4), ((_1, 16), _2))",
    "crd2idx((1, (0, 1)), (_4, (_2, _3)), (_1, (_4, _8)))",
    "idx2crd(13, (4, _8))",
    "idx2crd(13, (_4, (_2, 8)))",
    "idx2crd(_0, (_4, 8))",
    "idx2crd((1, 5), (_4, (_2, 8)))",
    "call(L((_4, _8), (_8, _1)), 5)",
    "call(L((_4, _8), (_8, _1)), (1, 2))",
    "call(L((_4, _8), (_8, _1)), 1, 2)",
    "call(L((_4, _8), (_8, _1)), _1, _2)",
    "call(L((4, (2, _3))), (1, (0, 2)))",
    "call(L((4, (2, _3))), (1, 5))",
    "call(L((_4, _8), (_8, _1)), _, 3)",
    "call(L((4, 8)), 2, _)",
    "call(L((_4, (_2, _3)), (_1, (_4, _8))), _, (1, _))",
    "group_modes(L((_2, _4, _8)), 0, 2)",
    "group_modes(L((_2, 4, _8, 3)), 1, 3)",
    "take(L((_2, 4, _8, 3)), 1, 3)",
    "append(L((_2, 4)), L(_8, _16))",
    "append(L(_2), L(_8, 1))",
    "prepend(L((_2, 4)), L(_8, _16))",
    "append_n(L(_4), 3)",
    "append_n(L((_4, 8)), 3)",
    "flatten(L(((2, _3), (_4, (5, _6)))))",
    "flatten((((2, _3), _4), _5))",
]

COALESCE = [
    "coalesce(L((_2, (_1, _6)), (_1, (_6, _2))))",
    "coalesce(L((2, (1, 6)), (1, (6, 2))))",
    "coalesce(L((_2, 4), (_1, _2)))",
    "coalesce(L((2, _4), (_1, 2)))",
    "coalesce(L((_4, _1), (_1, _0)))",
    "coalesce(L((_1, _1), (_0, _0)))",
    "coalesce(L(((_2, _3), _4), ((_1, _2), _6)))",
    "coalesce(L((_4, 8), (_1, _4)))",
    "coalesce(L((4, _8), (_1, 4)))",
    "coalesce(L((_4, _8), (_8, _1)))",
    "coalesce(L((_2, _4, _8), (_1, _2, _8)))",
    "coalesce(L((_2, _4, 8), (_1, _2, _8)))",
    "coalesce(L((_4, _1, 8), (_1, 9, _4)))",
    "coalesce(L((_1, 8), (_5, _1)))",
    "coalesce(L((_4, _4), (_1, _4)), (_1, _1))",
    "coalesce(L(((_2, _2), (_4, _2)), ((_1, _2), (_4, _16))), (_1, _1))",
    "coalesce(L(((_2, _2), (_4, _2), _3), ((_1, _2), (_4, _16), _64)), (_1, _1))",
    "coalesce(L(((_2, 2), (_4, _2)), ((_1, _2), (_4, _16))), (_1,))",
    "coalesce((_2, 4, _3, 5))",
    "coalesce((_2, _4, 3, (5, _6)))",
    "coalesce((4,))",
    "filter(L((_4, _1, 8), (_0, _3, _1)))",
    "filter(L((_4, _1), (_0, _0)))",
    "filter(L((_4, (_2, _3)), (_2, (_0, _8))))",
    "filter(L((_4, (_2, _3), 5), (_2, (_0, _8), _0)), (_1, _1, _1))",
    "filter_zeros(L((_4, (_2, 3)), (_0, (_1, _0))))",
    "filter_zeros(L((4, 2), (0, _1)))",
]

COMPOSITION = [
    "composition(L(20, 2), L((5, 4), (4, 1)))",
    "composition(L(_20, _2), L((_5, _4), (_4, _1)))",
    "composition(L((10, 2), (16, 4)), L((5, 4), (1, 5)))",
    "composition(L((_10, _2), (_16, _4)), L((_5, _4), (_1, _5)))",
    "composition(L((_6, _2), (_8, _2)), L((_4, _3), (_3, _1)))",
    "composition(L((_4, _8)), _8)",
    "composition(L((4, 8)), 8)",
    "composition(L((_4, 8), (_1, _4)), _16)",
    "composition(L((_4, _8), (_8, _1)), _8)",
    "composition(L((_4, _8), (_8, _1)), L(_8, _4))",
    "composition(L((_4, _8)), L(8, 2))",
    "composition(L((_4, 8)), L(_8, _2))",
    "composition(L((4, 8)), L(_8, _2))",
    "composition(L((_4, _8)), L((_4, _2), (_1, _0)))",
    "composition(L((_12, (_4, _8)), (_59, (_13, _1))), (L(_3, _4), L(_8, _2)))",
    "composition(L((_12, (_4, _8)), (_59, (_13, _1))), (_3, _8))",
    "composition(L((_4, _8)), (_, L(_2, _2)))",
    "composition(L((_4, _8, _3)), (_2, _4))",
    "composition(L((_4, _8), (_8, _1)), L((_2, _2), (E(1), E(0))))",
    "composition(L((4, 8), (8, 1)), L((_2, _2), (E(1), E(0))))",
    "composition(L((_4, (_2, _4)), (_8, (_4, _1))), L((_4, _8)))",
    "composition(L((_2, _2, _2), (_4, _2, _1)), L(_4, _2))",
    "composition(L((8, 8), (_1, 8)), L((_4, _2), (_1, _8)))",
    "composition(L(((_2, 2), _4), ((_1, 16), _2)), L(_4, _2))",
    "composition(L((_128, _64), (_64, _1)), L((_16, _8), (_1, _16)))",
    "composition(L((128, 64), (64, _1)), L((_16, _8), (_1, _16)))",
    "composition(L((_1, _8), (_0, _1)), L(_4, _2))",
    "composition(L((_4, _1, _8), (_1, _0, _4)), L(_8, _4))",
    "composition(L(_32, _2), L((_4, _8), (_8, _1)))",
    "composition(L(32, 2), L((_4, _8), (_8, _1)))",
    "composition(L(_32, 2), L((4, 8), (8, 1)))",
    "composition(L((_4, _8)), _)",
]

COMPLEMENT = [
    "complement(L(_4, _2))",
    "complement(L(_4, _2), _24)",
    "complement(L(_4, _1), _24)",
    "complement(L(_4, _2), 24)",
    "complement(L(4, 2), 24)",
    "complement(L(4, _2), 24)",
    "complement(L(_4, 2), _32)",
    "complement(L((_2, _2), (_1, _6)), _24)",
    "complement(L((_2, _4), (_1, _6)), 64)",
    "complement(L((_2, _4), (_1, _6)), _64)",
    "complement(L((2, 4), (_1, _6)), _64)",
    "complement(L((_4, _6), (_1, _4)), _24)",
    "complement(L((_2, _2), (_2, _8)), _64)",
    "complement(L(_1, _0), 8)",
    "complement(L(_1, _0), _8)",
    "complement(L(_4, _0), _16)",
    "complement(L((_4, _2), (_0, _1)), _16)",
    "complement(L(_4, _1), (_4, 8))",
    "complement(L(_4, _1), (_8, _8))",
    "complement(L(_4, _2), (16, _8))",
    "complement(L((_2, _2), (_8, _1)))",
    "complement(L((_3, _5), (_5, _1)), _45)",
    "complement(L(_16, _1), _16)",
    "complement(L(16, _1), 16)",
    "complement(L((_4, _4), (_1, _16)), L((_8, _8)))",
]

INVERSE = [
    "right_inverse(L((_4, _8), (_8, _1)))",
    "right_inverse(L((_4, _8)))",
    "right_inverse(L((4, 8)))",
    "right_inverse(L((4, 8), (_1, _4)))",
    "right_inverse(L((_4, 8), (_1, _4)))",
    "right_inverse(L((_2, _4), (_1, _4)))",
    "right_inverse(L((_2, _4), (_4, _1)))",
    "right_inverse(L((_4, _2), (_1, _8)))",
    "right_inverse(L((_2, (_2, _3)), (_6, (_1, _2))))",
    "right_inverse(L((_8, _4), (_0, _1)))",
    "right_inverse(L((_4, _8), (_2, _8)))",
    "right_inverse(L(_1, _0))",
    "right_inverse(L((_4, 8), (8, _1)))",
    "right_inverse(L((_128, _16), (_64, _1)))",
    "left_inverse(L((_4, _8), (_8, _1)))",
    "left_inverse(L((4, 8), (_8, _1)))",
    "left_inverse(L((_4, 8), (_1, _4)))",
    "left_inverse(L((_2, _4), (_1, _4)))",
    "left_inverse(L((_2, _4), (_4, _1)))",
    "left_inverse(L((_2, (_2, _3)), (_6, (_1, _2))))",
    "left_inverse(L((_8, _4), (_0, _1)))",
    "left_inverse(L((_4, _2), (_1, _8)))",
    "left_inverse(L(_1, _0))",
    "left_inverse(L((_4, _8), (_16, _1)))",
    "max_common_layout(L((_4, _8), (_8, _1)), L((_4, _8), (_8, _1)))",
    "max_common_layout(L((_4, _8)), L((_4, _8), (_8, _1)))",
    "max_common_layout(L((_8, _8)), L((_8, 8)))",
    "max_common_layout(L((8, 8)), L((8, 8)))",
    "max_common_vector(L((_4, _8), (_8, _1)), L((_4, _8), (_8, _1)))",
    "max_common_vector(L((_4, _8)), L((_4, _8), (_8, _1)))",
    "max_common_vector(L((_8, _8)), L((_8, _8)))",
    "max_common_vector(L((_8, 8)), L((_8, 8)))",
    "max_common_vector(L((8, 8)), L((8, 8)))",
    "max_common_vector(L((_2, _4), (_1, _4)), L((_8,)))",
]

DIVIDE = [
    "logical_divide(L((_4, _2, _3), (_2, _1, _8)), L(_4, _2))",
    "logical_divide(L((4, 2, 3), (2, 1, 8)), L(_4, _2))",
    "logical_divide(L((_9, (_4, _8)), (_59, (_13, _1))), (L(_3, _3), L((_2, _4), (_1, _8))))",
    "logical_divide(L((_16, _32)), (_4, _8))",
    "logical_divide(L((128, 64)), (_16, _8))",
    "logical_divide(L((128, 64), LayoutRight), (_16, _8))",
    "logical_divide(L((_128, _64), LayoutRight), (_16, _8))",
    "logical_divide(L(_24), _4)",
    "logical_divide(L(24), _4)",
    "logical_divide(L(24), 4)",
    "logical_divide(L(_24), L(_4, _3))",
    "logical_divide(L((_8, _8)), (_2,))",
    "logical_divide(L((_8, _8)), (_, _4))",
    "logical_divide(L((_6, _8)), (_4, _))",
    "logical_divide(L((_6, _8)), (_4, _16))",
    "logical_divide(L(((_2, _4), _8)), (_4, _2))",
    "logical_divide(L((_12, _8), (_8, _1)), (L(_3, _4),))",
    "zipped_divide(L((_4, _2, _3), (_2, _1, _8)), L(_4, _2))",
    "zipped_divide(L((_16, _32)), (_4, _8))",
    "zipped_divide(L((128, 64)), (_16, _8))",
    "zipped_divide(L((128, 64, 3)), (_16, _8))",
    "zipped_divide(L((_9, (_4, _8)), (_59, (_13, _1))), (L(_3, _3), L((_2, _4), (_1, _8))))",
    "zipped_divide(L(_24), _4)",
    "tiled_divide(L((_16, _32)), (_4, _8))",
    "tiled_divide(L((128, 64, 3)), (_16, _8))",
    "tiled_divide(L((_9, (_4, _8)), (_59, (_13, _1))), (L(_3, _3), L((_2, _4), (_1, _8))))",
    "tiled_divide(L(_24), _4)",
    "tiled_divide(L(_24), L(_4, _3))",
    "flat_divide(L((_16, _32)), (_4, _8))",
    "flat_divide(L((128, 64, 3)), (_16, _8))",
    "flat_divide(L((_9, (_4, _8)), (_59, (_13, _1))), (L(_3, _3), L((_2, _4), (_1, _8))))",
    "flat_divide(L(_24), _4)",
    "flat_divide(L((_24, 8)), L(_4, _2))",
]

PRODUCT = [
    "logical_product(L((_2, _2), (_4, _1)), L(_6, _1))",
    "logical_product(L((_2, _2), (_4, _1)), L(6, 1))",
    "logical_product(L(_4, _1), _3)",
    "logical_product(L(4, 1), 3)",
    "logical_product(L((_2, _5), (_5, _1)), (L(_3, _5), L(_4, _6)))",
    "logical_product(L((_2, _5), (_5, _1)), (_3, _4))",
    "logical_product(L((_4, _8)), (_2, _))",
    "zipped_product(L((_2, _5), (_5, _1)), (L(_3, _5), L(_4, _6)))",
    "tiled_product(L((_2, _5), (_5, _1)), (L(_3, _5), L(_4, _6)))",
    "blocked_product(L((_2, _5), (_5, _1)), L((_3, _4), (_1, _3)))",
    "blocked_product(L((_2, _5), (_5, _1)), L((3, 4), (1, 3)))",
    "blocked_product(L((_2, _2)), L(_3))",
    "blocked_product(L(_2), L((_3, _4)))",
    "blocked_product(L(_4), L(_3))",
    "blocked_product(L((_4, _8), (_8, _1)), L((_2, _2)))",
    "blocked_product(L((_4, _8), (_8, _1)), L((2, 2)))",
    "blocked_product(L((_2, (_2, _2)), (_1, (_4, _2))), L((_2, _3)))",
    "raked_product(L((_2, _5), (_5, _1)), L((_3, _4), (_1, _3)))",
    "raked_product(L((_2, _2)), L(_3))",
    "raked_product(L(_4), L((_3, _2)))",
    "raked_product(L((_4, _8), (_8, _1)), L((_2, _2), (_2, _1)))",
    "tile_to_shape(L((_8, _8), (_8, _1)), (_64, _32))",
    "tile_to_shape(L((_8, _8)), (128, 64))",
    "tile_to_shape(L((_8, _8), (_8, _1)), (_64, _32), LayoutRight)",
    "tile_to_shape(L((_8, _8), (_8, _1)), (_64, _32), (_2, _1))",
    "tile_to_shape(L((_8, _8), (_8, _1)), (_64, _32, _3))",
    "tile_to_shape(L(_8), (_64, _4))",
    "tile_to_shape(L((_2, _4), (_4, _1)), (_8, (_4, _2)))",
    "tile_to_shape(L((_8, _1), (_1, _0)), (_64, _16))",
]

SWIZZLE = [
    "Sw(3, 4, 3)",
    "composition(Sw(3, 4, 3), L((_8, _64), (_64, _1)))",
    "composition(Sw(2, 3, 3), L((_8, _32), (_32, _1)))",
    "composition(Sw(3, 3, 3), L((_8, 64), (64, _1)))",
    "composition(Sw(1, 0, 1), L(_4))",
    "composition(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), L((_4, _8)))",
    "composition(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), (_4, _16))",
    "logical_divide(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), (_4, _16))",
    "zipped_divide(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), (_4, _16))",
    "tiled_divide(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), (_4, _16))",
    "flat_divide(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), (_4, _16))",
    "tile_to_shape(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), (_64, _128))",
    "blocked_product(composition(Sw(2, 0, 2), L((_4, _4), (_4, _1))), L((_2, _2)))",
    "coalesce(composition(Sw(3, 4, 3), L((_8, (_8, _8)), (_64, (_1, _8)))))",
    "call(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), 9)",
    "call(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), 3, 17)",
    "call(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), _, 3)",
    "call(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), 2, _)",
    "size(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))))",
    "cosize(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))))",
    "shape(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))))",
    "mode(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), 1)",
    "print_layout(composition(Sw(2, 0, 2), L((_4, _4), (_4, _1))))",
]

TENSOR = [
    "make_identity_tensor((1024, 1024))",
    "make_identity_tensor((_4, 8))",
    "make_identity_tensor((4, (2, _3)))",
    "make_coord_tensor(L((1024, 1024), (E(1), E(0))))",
    "local_tile(make_coord_tensor(L((1024, 1024), (E(1), E(0)))), (_16, _16), (7, 0))",
    "local_tile(make_coord_tensor(L((1024, 1024), (E(1), E(0)))), (_16, _16), (0, 7))",
    "local_tile(make_identity_tensor((1024, 1024)), (_16, _16), (7, 3))",
    "local_tile(make_identity_tensor((_64, _64)), (_16, _16), (1, 2))",
    "local_tile(make_identity_tensor((256, 128)), (_32, _64, _8), (2, 1, _), (_1, _1, None))",
    "local_tile(make_identity_tensor((256, 32)), (_32, _64, _8), (2, 1, _), (_1, None, _1))",
    "local_tile(make_identity_tensor((128, 64)), (_32, _16), (1, _))",
    "local_tile(make_identity_tensor((128, 64)), (_32, _16), 5)",
    "local_partition(make_identity_tensor((_16, _64)), L((_2, _16)), 17)",
    "local_partition(make_identity_tensor((_16, _64)), L((_2, _16), (_16, _1)), 17)",
    "local_partition(make_identity_tensor((16, 64)), L((_4, _8), (_8, _1)), 11)",
    "call(make_identity_tensor((_4, 8)), 3, 5)",
    "call(make_identity_tensor((_4, 8)), _, 5)",
    "call(make_identity_tensor((_4, 8)), 13)",
    "call(make_coord_tensor(L((1024, 1024), (E(1), E(0)))), 3, 5)",
    "zipped_divide(make_identity_tensor((_8, _8)), (_2, _4))",
    "tiled_divide(make_identity_tensor((8, 8)), (_2, _4))",
    "flat_divide(make_identity_tensor((8, 8)), (_2, _4))",
    "print_tensor(local_tile(make_coord_tensor(L((1024, 1024), (E(1), E(0)))), (_16, _16), (7, 0)))",
    "print_tensor(make_identity_tensor((_4, _3)))",
    "print_tensor(make_identity_tensor((_4,)))",
    "print_tensor(make_identity_tensor((_2, _3, _2)))",
    "print_tensor(local_tile(make_identity_tensor((256, 128)), (_4, _2, _8), (2, 1, _), (_1, _1, None)))",
]

BASIS = [
    "E(0)",
    "E(1, 0)",
    "E(0) * _16",
    "E(1) * 4",
    "_2 * E(0, 1)",
    "E(0) + E(1)",
    "E(1) * 3 + E(0) * _2",
    "L((4, (2, 3)), (E(0), (E(1, 0), E(1, 1))))",
    "L((_4, _8), (E(0) * _2, E(1) * _16))",
    "make_identity_layout((_2, (_2, _3)))",
]

EXTRA = [
    "L(L(_4, _2))",
    "L(L(_4, _2), L((_2, 3)))",
    "L(L(_4, _2), L(3, _1), L(_2, _0))",
    "composition(L(_8), (_4,))",
    "logical_divide(L(24), (_4,))",
    "coalesce(L(_8, _1), (_1,))",
    "make_identity_tensor(8)",
    "make_identity_tensor(_8)",
    "make_identity_layout(_8)",
    "tile_to_shape(L(composition(right_inverse(L((_16, _16), LayoutRight)), _128)), _256)",
    "tile_to_shape(L(right_inverse(L((_64, _8), (_1, _64)))), _512)",
    "tile_to_shape(L((_2, _4)), (8, 16))",
    "local_partition(make_identity_tensor((_16, _64, 8)), L((_2, _16, _1), (_16, _1, _0)), 17, (_1, None, _1))",
    "local_partition(make_identity_tensor((_16, 64)), L((_2, _16, _1), (_16, _1, _0)), 5, (None, _1, _1))",
    "local_tile(make_identity_tensor((256, 128, 64)), (_32, _64, _8), (1, 2, _), (_1, None, _1))",
    "zipped_divide(L(L(((_2, _1),), ((_1, _4),)), L(_1, _1)), (1, 1))",
    "logical_divide(L(L(((_2, _1),), ((_1, _4),)), L(_1, _1)), (1, 1))",
    "logical_divide(L(_8), 1)",
    "complement(L(1, _1), _2)",
    "complement(L((_2, 1), (_1, _2)), _8)",
    "zipped_divide(L((_8, (_2, _4))), (_4, _))",
    "blocked_product(L(_4), L((_3,)))",
    "blocked_product(L(((_2, _2),)), L((_3,)))",
    "right_inverse(L((_2, _2), (_2, _1)))",
    "right_inverse(L((_4, _2), (_1, _1)))",
    "right_inverse(L((_2, _4), (_1, _1)))",
    "right_inverse(L((_2, _3, _4), (_2, _2, _1)))",
    "right_inverse(L((_3, _2, _2), (_2, _2, _1)))",
    "left_inverse(L((_3, _2, _2), (_2, _2, _1)))",
    "left_inverse(L((_4, _2), (_1, _1)))",
    "left_inverse(L((_2, _2), (_2, _1)))",
    "complement(L((_2, _2), (_2, _1)), _8)",
    "call(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), _, _3)",
    "call(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), 5, _)",
    "call(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), _5, _)",
    "call(composition(Sw(2, 3, 3), L((_8, _32), (_32, _1))), _, 9)",
    "call(composition(Sw(2, 3, 3), L((_8, _32), (_32, _1))), 3, _)",
    "call(composition(Sw(3, 4, 3), L((_64, _8), (_1, _64))), _, 3)",
    "call(composition(Sw(3, 4, 3), L((_64, _8), (_1, _64))), 3, _)",
    "call(composition(Sw(3, 4, 3), L(((_8, _8), _64), ((_64, _512), _1))), (_, 3), _)",
    "call(composition(Sw(3, 4, 3), L(((_8, _8), _64), ((_64, _512), _1))), (2, _), _)",
    "call(composition(Sw(3, 4, 3), L(((_8, _8), _64), ((_64, _512), _1))), _, 7)",
    "call(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), _, _)",
    "slice_and_offset((_, 3), composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))))",
    "slice_and_offset((_, _3), composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))))",
    "slice_and_offset((2, _), composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))))",
    "slice_and_offset((_, _), composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))))",
    "slice_and_offset((1, _), composition(Sw(3, 4, 3), L((_2, (_8, _64)), (_512, (_64, _1)))))",
    "slice_and_offset((_1, _), composition(Sw(3, 4, 3), L((_2, (_8, _64)), (_512, (_64, _1)))))",
    "slice_and_offset((_, 5), make_composed_layout(Sw(3, 4, 3), 7, L((_8, _64), (_64, _1))))",
    "slice_and_offset((_, _5), make_composed_layout(Sw(3, 4, 3), _16, L((_8, _64), (_64, _1))))",
    "slice_and_offset((_, 3), composition(Sw(2, 4, 3), L((_8, _64), (_64, _1))))",
    "slice_and_offset((3, _), composition(Sw(3, 3, 3), L((_8, _64), (_64, _1))))",
    "slice_and_offset((_, 2), L((_8, _64), (_64, _1)))",
    "call(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), _3, _17)",
    "call(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), _3, 17)",
    "max_common_vector(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), L((_8, _64), (_64, _1)))",
    "max_common_vector(L((_8, _64), (_64, _1)), composition(Sw(2, 4, 3), L((_8, _64), (_64, _1))))",
    "max_common_vector(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))),"
    " composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))))",
    "max_common_vector(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))),"
    " composition(Sw(2, 3, 3), L((_8, _64), (_64, _1))))",
    "max_common_layout(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), L((_8, _64), (_64, _1)))",
    "max_common_layout(L((_8, _64), (_64, _1)), composition(Sw(1, 2, 3), L((_8, _64), (_64, _1))))",
    "max_common_layout(composition(Sw(3, 4, 3), L((_8, _8), (_8, _1))), L((_8, _8), (_8, _1)))",
    "group_modes(composition(Sw(3, 4, 3), L((_8, _64, _2), (_64, _1, _512))), 0, 2)",
    "slice_and_offset((_, (1, _)), L((_8, (_4, 16)), (_64, (_1, _4))))",
]

NEGATIVE = [  # negative strides (C++ truncating division vs Python floor division)
    "L((_4, _8), (_m1, _4))",
    "coalesce(L((_4, _8), (_m1, _m4)))",
    "coalesce(L((_4, _8), (_m8, _m1)))",
    "composition(L(_8, _m1), L((_2, _4), (_4, _1)))",
    "composition(L((_4, _8), (_1, _m4)), L(_8, _m4))",
    "composition(L((_4, _8), (_m1, _4)), L((_2, _2), (_m2, _4)))",
    "composition(L((4, 8), (-1, 4)), L((_2, _2), (_2, _4)))",
    "composition(L((_4, _8), (_1, _4)), L(_8, _m4))",
    "call(L((_4, _8), (_m1, _m4)), 13)",
    "call(L((_4, _8), (_m1, _m4)), (3, _7))",
    "cosize(L((_4, _8), (_m1, _4)))",
    "right_inverse(L((_4, _8), (_m1, _4)))",
    "logical_divide(L((_4, _8), (_1, _m4)), (_2, _4))",
    "idx2crd(-5, (4, 8))",
    "crd2idx(-5, (4, _8), (_1, 4))",
]

SEEDS = [  # values the seed documents print or describe (../shared/seeds/004_*)
    "group_modes(L(((_128, _16), _1, _4), ((_64, _1), _0, _16)), 0, 3)",
    "L(((_128, _16), _1, _4, 4), ((E(1), E(0)), _0, E(0) * _16, E(0) * _64))",
    "group_modes(L(((_128, _16), _1, _4, 4), ((E(1), E(0)), _0, E(0) * _16, E(0) * _64)), 0, 3)",
    "right_inverse(mode(group_modes(L(((_128, _16), _1, _4), ((_64, _1), _0, _16)), 0, 3), 0))",
    "tile_to_shape(L(right_inverse(mode(group_modes(L(((_128, _16), _1, _4), ((_64, _1), _0, _16)), 0, 3), 0))),"
    " _8192)",
    "logical_divide(tile_to_shape(L(right_inverse(mode(group_modes(L(((_128, _16), _1, _4), ((_64, _1), _0, _16)),"
    " 0, 3), 0))), _8192), L(_8192))",
    "slice_and_offset((0, 1, _, 0), L((2, 2, 4, 1), (8, 4, 1, 0)))",
    "slice_and_offset((0, 1, _, 0), L((_2, _2, _4, _1), (_8, _4, _1, _0)))",
    "slice_and_offset((_0, _1, _, _0), L((_2, _2, _4, _1), (_8, _4, _1, _0)))",
    "L(size(L((_2, _2, _4, _1), (_8, _4, _1, _0)), 2))",
]

PRINT_LAYOUT = [
    "print_layout(L((4, _3)))",
    "print_layout(L((_4, _8), (_8, _1)))",
    "print_layout(L((_2, (_2, _2)), (_4, (_1, _2))))",
    "print_layout(L((_16, _16), (_16, _1)))",
    "print_layout(blocked_product(L((_2, _2)), L((_2, _3))))",
    "print_layout(raked_product(L((_2, _2)), L((_2, _3))))",
    "print_layout(L((_3, _2), (_100, _1)))",
]


# ---------------------------------------------------------------- generated: one layout, static and dynamic spellings
def _spell(x, static):
    if isinstance(x, tuple):
        return "(" + ", ".join(_spell(v, s) for v, s in zip(x, static)) + ("," if len(x) == 1 else "") + ")"
    if static:
        return f"_m{-x}" if x < 0 else f"_{x}"
    return str(x)


def _like(x, v):
    return tuple(_like(e, v) for e in x) if isinstance(x, tuple) else v


def _alternate(x, start=True):
    """A static/dynamic pattern that alternates leaf by leaf."""
    flags = []

    def walk(t):
        if isinstance(t, tuple):
            return tuple(walk(e) for e in t)
        flags.append(None)
        return (len(flags) % 2 == 1) == start

    return walk(x)


BASES = [  # (shape, stride) of layouts with static strides (valid for complement / inverses)
    ((4, 8), (1, 4)),
    ((4, 8), (8, 1)),
    ((2, (3, 4)), (12, (1, 3))),
    (((2, 2), 8), ((1, 16), 2)),
    ((8, 4, 2), (1, 16, 8)),
    ((2, 4, 8), (32, 8, 1)),
    ((16, 8), (1, 16)),
    ((4, 1, 6), (1, 0, 4)),
]


def _generated():
    out = []
    for shape, stride in BASES:
        spellings = {
            "ss": (_like(shape, True), _like(stride, True)),
            "ds": (_like(shape, False), _like(stride, True)),
            "as": (_alternate(shape), _like(stride, True)),
            "bs": (_alternate(shape, False), _like(stride, True)),
        }
        for sshape, sstride in spellings.values():
            lay = f"L({_spell(shape, sshape)}, {_spell(stride, sstride)})"
            size = 1
            for v in _flat(shape):
                size *= v
            out += [
                f"coalesce({lay})",
                f"complement({lay}, _{4 * size})",
                f"complement({lay}, {4 * size})",
                f"right_inverse({lay})",
                f"left_inverse({lay})",
                f"logical_divide({lay}, _2)",
                f"zipped_divide({lay}, L((_2, _2), (_1, _4)))" if size % 8 == 0 else f"zipped_divide({lay}, _2)",
                f"logical_product({lay}, L((_2, _3), (_3, _1)))",
                f"blocked_product({lay}, L((_2, _3)))",
                f"raked_product({lay}, L((_2, _3)))",
                f"composition({lay}, L((_2, _4), (_4, _1)))" if size % 8 == 0 else f"composition({lay}, _2)",
            ]
        dyn = f"L({_spell(shape, _like(shape, False))}, {_spell(stride, _like(stride, False))})"
        out += [f"coalesce({dyn})", f"right_inverse({dyn})", f"logical_divide({dyn}, _2)",
                f"composition({dyn}, _4)"]
    return out


def _flat(t):
    return [x for e in t for x in _flat(e)] if isinstance(t, tuple) else [t]


NEGATIVE_BASES = [  # (shape, stride) with negative strides, static
    (6, -1),
    (4, -2),
    ((4, 8), (-1, 4)),
    ((4, 8), (1, -4)),
    ((4, 8), (-8, -1)),
    ((2, 4), (-1, -2)),
    ((2, (3, 4)), (-12, (1, -3))),
    ((8, 4, 2), (1, -16, 8)),
    ((4, 1, 6), (-1, 0, 4)),
    ((2, 2), (-1, 4)),
]


def _negative_generated():
    """The algebra on layouts with negative strides: CuTe defines these through C++'s truncating division."""
    out = []
    for shape, stride in NEGATIVE_BASES:
        lay = f"L({_spell(shape, _like(shape, True))}, {_spell(stride, _like(stride, True))})"
        dyn = f"L({_spell(shape, _like(shape, False))}, {_spell(stride, _like(stride, False))})"
        size = 1
        for v in _flat(shape):
            size *= v
        out += [
            f"coalesce({lay})",
            f"filter({lay})",
            f"cosize({lay})",
            f"complement({lay})",
            f"complement({lay}, _{4 * size})",
            f"right_inverse({lay})",
            f"left_inverse({lay})",
            f"logical_divide({lay}, _2)",
            f"zipped_divide({lay}, _2)",
            f"logical_product({lay}, L(_2, _1))",
            f"composition({lay}, _2)",
            f"composition({lay}, L(_2, _2))" if size % 4 == 0 else f"composition({lay}, L(_3, _2))",
            f"composition(L(_64, _1), {lay})",
            f"composition(L((_4, _16), (_16, _1)), {lay})",
            f"max_common_vector({lay}, {lay})",
            f"coalesce({dyn})",
            f"composition({dyn}, _2)",
        ]
    return out


CASES = BASICS + COALESCE + COMPOSITION + COMPLEMENT + INVERSE + DIVIDE + PRODUCT + SWIZZLE + TENSOR + BASIS \
    + EXTRA + NEGATIVE + SEEDS + PRINT_LAYOUT + _generated() + _negative_generated()
