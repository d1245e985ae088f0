"""The CuTe oracle cases: expressions in the shared spelling of gen_cpp.py (``_8`` static, ``8`` dynamic).

tests/oracle/regen.sh turns these into C++, runs them against CuTe and stores what CuTe prints in
tests/data/cute_oracle.txt; tests/test_layout_oracle.py evaluates the same expressions with tmakit.
"""

from __future__ import annotations

import math
import random
import re

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

SW_ROW = "composition(Sw(3, 3, 3), L((_8, _64), (_64, _1)))"  # a 128-byte TMA atom of 16-bit elements (element form)
SWIZZLE_ALGEBRA = [  # inverses of swizzled layouts, layouts composed with swizzles (swizzle_layout.hpp)
    f"right_inverse({SW_ROW})",
    f"left_inverse({SW_ROW})",
    f"call(right_inverse({SW_ROW}), 100)",
    f"call(left_inverse({SW_ROW}), 300)",
    f"composition({SW_ROW}, right_inverse({SW_ROW}))",
    "right_inverse(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))))",  # Y bits leave the layout: CuTe rejects
    "left_inverse(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))))",
    "right_inverse(composition(Sw(3, 4, 3), L((_8, _128), (_128, _1))))",  # 128-byte atom of bytes
    "left_inverse(composition(Sw(3, 4, 3), L((_8, _128), (_128, _1))))",
    "right_inverse(composition(Sw(2, 3, 3), L((_8, _32), (_32, _1))))",  # 64-byte atom of 16-bit elements
    "right_inverse(composition(Sw(1, 3, 3), L((_8, _16), (_16, _1))))",  # 32-byte atom of 16-bit elements
    "right_inverse(composition(Sw(3, 2, 3), L((_8, _32), (_32, _1))))",  # 128-byte atom of 32-bit elements
    "right_inverse(composition(Sw(3, 3, 3), L((_64, _8), (_1, _64))))",  # MN-major atom
    "left_inverse(composition(Sw(3, 3, 3), L((_64, _8), (_1, _64))))",
    "right_inverse(composition(Sw(3, 4, 3), L(_1024)))",
    "left_inverse(composition(Sw(3, 4, 3), L(_1024)))",
    "right_inverse(composition(Sw(2, 0, 2), L((_4, _4), (_4, _1))))",
    "right_inverse(composition(Sw(2, 0, 2), L((_4, _4))))",
    "right_inverse(composition(Sw(3, 4, -3), L((_16, _64), (_64, _1))))",
    "right_inverse(composition(Sw(2, 1, 4), L((_2, _4, _16), (_1, _32, _2))))",
    "right_inverse(composition(Sw(3, 3, 3), L((_8, (_8, _8)), (_8, (_1, _64)))))",
    "right_inverse(composition(Sw(3, 3, 3), L((_8, 64), (_64, _1))))",  # the static part keeps Y and Z static
    "right_inverse(composition(Sw(3, 3, 3), L((8, _64), (_64, _1))))",  # CuTe rejects: Y goes through 8
    "right_inverse(composition(Sw(3, 3, 3), L((_8, _64), (_1, _8))))",
    "right_inverse(composition(Sw(2, 2, 3), L((_4, _8, _4), (_8, _1, _32))))",
    "right_inverse(tile_to_shape(composition(Sw(3, 3, 3), L((_8, _64), (_64, _1))), (_64, _128)))",
    "left_inverse(tile_to_shape(composition(Sw(3, 3, 3), L((_8, _64), (_64, _1))), (_64, _128)))",
    "right_inverse(tile_to_shape(composition(Sw(2, 3, 3), L((_8, _32), (_32, _1))), (_32, _64), LayoutRight))",
    "right_inverse(composition(Sw(3, 3, 3), L((_8, _64), (_64, _2))))",  # not surjective: a shorter inverse
    "left_inverse(composition(Sw(3, 3, 3), L((_8, _64), (_64, _2))))",
    "right_inverse(make_composed_layout(Sw(3, 4, 3), _16, L((_8, _64), (_64, _1))))",  # static offset: kept
    "left_inverse(make_composed_layout(Sw(3, 4, 3), _16, L((_8, _64), (_64, _1))))",
    "call(right_inverse(make_composed_layout(Sw(3, 4, 3), _16, L((_8, _64), (_64, _1)))), 5)",
    "right_inverse(make_composed_layout(Sw(3, 4, 3), 7, L((_8, _64), (_64, _1))))",  # dynamic offset: rejected
    "left_inverse(make_composed_layout(Sw(3, 4, 3), 7, L((_8, _64), (_64, _1))))",
    "right_inverse(call(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), _, _3))",  # decays to a plain layout
    "right_inverse(call(composition(Sw(3, 4, 3), L((_2, (_8, _64)), (_512, (_64, _1)))), _1, _))",
    "call(right_inverse(call(composition(Sw(3, 4, 3), L((_2, (_8, _64)), (_512, (_64, _1)))), _1, _)), 5)",
    "right_inverse(call(composition(Sw(3, 4, 3), L((_2, (_8, _64)), (_512, (_64, _1)))), 1, _))",  # MixedBits
    "call(call(composition(Sw(3, 4, 3), L((_2, (_8, _64)), (_512, (_64, _1)))), 1, _), _)",
    "call(make_composed_layout(Sw(3, 4, 3), 7, L((_8, _64), (_64, _1))), _, _)",
    "right_inverse(make_composed_layout(Sw(0, 4, 3), _0, L((_8, _64), (_64, _1))))",
    "right_inverse(make_composed_layout(L((_8, _4), (_4, _1)), _3, L((_4, _8), (_8, _1))))",
    "left_inverse(make_composed_layout(L((_8, _4), (_4, _1)), _0, L((_4, _8), (_8, _1))))",
    "right_inverse(composition(composition(Sw(3, 3, 3), L((_8, _64), (_64, _1))), Sw(2, 0, 3)))",
    "right_inverse(composition(Sw(2, 3, -2), L((_4, _2, _2, _8), (_8, _64, _32, _1))))",  # Z bits reversed: no inverse
    "right_inverse(Sw(3, 4, 3))",
    "left_inverse(Sw(2, 4, -3))",
    "composition(L((_8, _64), (_64, _1)), Sw(3, 4, 3))",
    "composition(L((_8, _64), (_64, _1)), Sw(2, 0, 3))",
    "composition(L((_64, _8), (_8, _1)), Sw(3, 4, 3))",  # Z bits straddle the modes: CuTe rejects
    "composition(L((_64, _8), (_8, _1)), Sw(3, 0, 3))",
    "composition(L(_1024, _1), Sw(3, 4, 3))",
    "composition(L(_1024, _2), Sw(3, 4, 3))",
    "composition(L((_16, _16), (_1, _16)), Sw(2, 2, -2))",
    "composition(L((_8, 64), (_64, _1)), Sw(2, 0, 3))",  # dynamic, but the swizzle's bits map statically
    "composition(L((8, _64), (_64, _1)), Sw(2, 0, 3))",
    "composition(L((_8, _64), (_m64, _1)), Sw(2, 0, 3))",  # negative bits: CuTe rejects
    "composition(L((_8, _64), (_64, _1)), Sw(0, 4, 3))",
    "composition(L((_8, _8), (_1, _8)), Sw(1, 1, 2))",
    "call(composition(L((_8, _64), (_64, _1)), Sw(3, 4, 3)), 100)",
    "print_layout(composition(L((_4, _4), (_4, _1)), Sw(2, 0, 2)))",
    "composition(L((_8, _64), (_64, _1)), composition(Sw(2, 0, 3), L((_8, _64), (_64, _1))))",
    "composition(L((_8, _64), (_64, _1)), composition(Sw(3, 4, 3), L((_64, _8), (_8, _1))))",
    "composition(L((_8, _64), (_64, _1)), make_composed_layout(Sw(3, 3, 3), 4, L((_8, _64), (_64, _1))))",
    "composition(L((_8, _64), (_64, _1)), make_composed_layout(Sw(3, 3, 3), _4, L((_8, _64), (_64, _1))))",
    "composition(L((_8, _64), (_64, _1)), make_composed_layout(L(_512, _1), _0, L((_8, _64), (_64, _1))))",
    f"composition({SW_ROW}, Sw(2, 0, 3))",
    f"composition({SW_ROW}, L((_8, _64), (_64, _1)))",
    "composition(Sw(3, 4, 3), Sw(3, 4, 3))",
    "composition(Sw(3, 4, 3), Sw(2, 4, 3))",
    "composition(Sw(1, 4, 3), Sw(1, 5, 3))",
    "composition(Sw(2, 4, 3), Sw(2, 4, 2))",  # different shifts: CuTe rejects
    "composition(Sw(2, 4, 3), Sw(1, 4, 3))",
    "composition(Sw(2, 4, -3), L((_8, _64), (_64, _1)))",
    "composition(Sw(0, 4, 3), L((_8, _64), (_64, _1)))",
    "composition(Sw(3, 4, 3), L((_8, _64), (_m64, _1)))",
    "mode(make_composed_layout(Sw(0, 4, 3), _0, L((_8, _64), (_64, _1))), 1)",
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


UTILITY = [  # the smaller layout utilities and integer-tuple predicates (layout.hpp, int_tuple.hpp, swizzle_layout.hpp)
    "make_layout_like(L((_2, _2, _2, _2), (_0, _2, _4, _1)))",
    "make_layout_like(L((2, 3, 4, 5), (_0, 42, _1, _0)))",
    "make_layout_like(L((_4, (_2, _3)), (_6, (_1, _24))))",
    "make_layout_like(L((_4, _8), (_m1, _4)))",
    "make_fragment_like(L((_4, _8, _2), (_8, _1, _32)))",
    "make_fragment_like(L(((_2, _2), _4, _3), ((_0, _1), _2, _8)))",
    "make_fragment_like(L((_4, 8), (_8, _1)))",
    "make_fragment_like(L(_8, _4))",
    "make_fragment_like((_4, 8))",
    "select(L((_4, _8, _2), (_8, _1, _32)), 2, 0)",
    "select(L((_4, (_2, 8))), 1)",
    "select((_4, 8, _3), 1, 1, 0)",
    "with_shape(L((_4, _8)), (_8, _4))",
    "with_shape(L((_4, _8), (_8, _1)), _8, _4)",
    "with_shape(L((_4, _8), (_8, _1)), (_2, (_4, _4)))",
    "with_shape(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), (_64, _8))",
    "compose(L((_4, _8), (_8, _1)), L(_2, _2))",
    "compose(L((_4, _8), (_8, _1)), _2, _4)",
    "tile(L((_16, _32)), _4, _8)",
    "unflatten(L((_2, _3, _4, 5)), ((_1, _1), (_1, _1)))",
    "unflatten(L((_2, _3, _4), (_1, _8, _2)), (_1, (_1, _1)))",
    "unflatten((_2, 3, _4), ((_1, _1), _1))",
    "nullspace(L((_4, _8), (_0, _1)))",
    "nullspace(L((_4, (_2, _3), 5), (_0, (_1, _0), _8)))",
    "nullspace(L((_4, 8), (_1, _4)))",
    "nullspace(L((4, 8), (0, _1)))",
    "nullspace(L((_1, _4), (_0, _0)))",
    "nullspace(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))))",
    "max_alignment(L((_4, _8), (_8, _1)))",
    "max_alignment(L((_4, _8), (_1, _4)))",
    "max_alignment(L((_4, _8), (_1, _8)))",
    "max_alignment(L((_6, _8), (_1, _6)))",
    "max_alignment(L((_4, 8), (_1, 4)))",
    "max_alignment(L((8, 8), (_1, 8)))",
    "max_alignment(L((_2, _4), (_4, _1)))",
    "max_alignment(L(_8, _2))",
    "max_alignment(L((_4, _8), (_0, _1)))",
    "max_alignment(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))))",
    "get_swizzle_portion(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))))",
    "get_swizzle_portion(L((_8, _64), (_64, _1)))",
    "get_nonswizzle_portion(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))))",
    "get_nonswizzle_portion(L((_8, 64), (64, _1)))",
    "domain_distribute((_15, _14), _6)",
    "domain_distribute((_4, (_2, _8)), _16)",
    "domain_distribute((_3, _5), _2)",
    "flat_product(L((_2, _5), (_5, _1)), (L(_3, _5), L(_4, _6)))",
    "flat_product(L((_2, _2)), L((_3, _2)))",
    "flat_product(L((4, 2)), (_2, _3))",
    "flat_product(composition(Sw(2, 0, 2), L((_4, _4), (_4, _1))), (_2, _2))",
    "tiled_product(L((_2, _2)), L((_3, _2)))",
    "zipped_product(L((_2, _2)), L((_3, _2)))",
    "zipped_product(L((_4, 8)), (_2, _))",  # a '_' tiler mode cannot be zipped: CuTe rejects
    "tile_unzip(logical_divide(L((_16, _32)), (_4, _8)), (_4, _8))",
    "tile_unzip(logical_product(L((_2, _2)), (_3, _4)), (_3, _4))",
    "filter_zeros(L((_4, (_2, _3)), (_1, (_4, _8))), (_0, (_1, _0)))",
    "filter_zeros(L((4, (2, 3))), (_1, _0))",
    "make_ordered_layout((_4, 8, _2), LayoutRight)",
    "make_ordered_layout((_4, (8, _2)), (_1, (_0, _2)))",
    "make_ordered_layout((_4, (8, _2)), (_1, _0))",
    "idx2crd(13, (_4, _8), (_1, _4))",
    "idx2crd(13, (4, 8), (8, _1))",
    "idx2crd(_13, (_4, (_2, _4)), (_8, (_1, _2)))",
    "idx2crd((5, 3), (_4, (_2, _4)), (_2, (_1, _2)))",
    "crd2crd((1, 5), (_4, _8), (_4, (_2, _4)))",
    "crd2crd(13, (_4, _8), (_2, _16))",
    "crd2crd((1, (1, 2)), (_4, (_2, _4)), (_4, _8))",
    "evenly_divides((_8, _6), (_4, _3))",
    "evenly_divides((_8, _6), (_4, _4))",
    "evenly_divides((8, 6), (_4, _3))",
    "evenly_divides((8, 6), (_4, _4))",
    "evenly_divides((_8, _6), (_4, _3, _2))",
    "evenly_divides((_8, _6), _16)",
    "evenly_divides((_8, _6), _5)",
    "evenly_divides((_8, _6), (L(_4, _2),))",
    "evenly_divides((_8, _6), (L((_2, _2), (_1, _4)), _6))",
    "evenly_divides(_24, L(_4, _3))",
    "congruent((_4, (_2, 8)), (1, (2, 3)))",
    "congruent((_4, (_2, 8)), (1, 2))",
    "congruent(_4, 8)",
    "weakly_congruent(_1, (_2, 8))",
    "weakly_congruent((_1, _1), (_2, (_3, _4)))",
    "weakly_congruent((_1, (_1, _1)), (_2, _3))",
    "weakly_congruent((_1, _1), (_2, _3, _4))",
    "compatible(_8, (_2, _4))",
    "compatible(8, (_2, _4))",
    "compatible((_8, _4), (_8, (_2, _2)))",
    "compatible((_8, _4), (_4, (_2, _2)))",
    "compatible((_8, 4), (_8, (_2, _2)))",
    "compatible((_8, (_2, _2)), (_8, _4))",
    "compatible((_8, _4), (_8, _4, _1))",
    "elem_scale((_2, 3), (_4, (_2, 5)))",
    "elem_scale(_2, (_4, 3))",
    "inner_product((_2, 3), (_4, _5))",
    "inner_product((_2, (_3, _1)), (_4, (_5, _6)))",
    "inner_product((), ())",
    "round_up(_7, _4)",
    "round_up(7, _4)",
    "round_up((_7, 9, _3), (_4, _8))",
    "product_each((_2, (_3, 4), _5))",
    "product_each(_6)",
    "shape_div((_4, _5, _6), _40)",
    "shape_div((_12, 6), (_4, _3))",
    "shape_div(_6, (_2, _3))",
    "ceil_div((_4, _5, _6), _7)",
]


RECAST = [  # upcast / downcast / recast_layout of layouts, swizzles and composed layouts (layout.hpp,
    # swizzle_layout.hpp, layout_composed.hpp); the element types are gen_cpp.py's TYPES
    "upcast(L((_4, _8), (_8, _1)), 2)",
    "upcast(L((_4, _8), (_8, _1)), 8)",
    "upcast(L((_4, _8), (_1, _4)), 4)",
    "upcast(L((_4, 8), (_1, 4)), 2)",
    "upcast(L((4, 8), (_1, 4)), 2)",
    "upcast(L((_4, _8), (_0, _1)), 2)",
    "upcast(L((_4, _8), (_m1, _4)), 2)",
    "upcast(L((_4, _8), (_m8, _1)), 4)",
    "upcast(L((_2, _4), (_1, _2)), 8)",
    "upcast(L((_4, _8), (_3, _1)), 2)",  # static stride 3 vs N=2: CuTe rejects
    "upcast(L((_4, _8), (-8, _1)), 4)",
    "upcast(L(((_2, _4), _8), ((_1, _2), _16)), 2)",
    "upcast(L(_8), 3)",
    "upcast(L((_8,)), 2)",
    "downcast(L((_4, _8), (_8, _1)), 2)",
    "downcast(L((_4, _8), (_1, _4)), 4)",
    "downcast(L((_4, 8), (_1, 4)), 2)",
    "downcast(L((_4, _8), (_m1, _4)), 2)",  # no _1 stride: CuTe rejects
    "downcast(L((_4, _8), (_0, _1)), 2)",
    "downcast(L((_4, _8), (_8, _2)), 2)",
    "downcast(L((4, 8), (1, 4)), 2)",  # a dynamic 1 is no _1: CuTe rejects
    "downcast(L(((_2, _4), _8), ((_1, _2), _16)), 3)",
    "upcast(Sw(3, 4, 3), 2)",
    "upcast(Sw(3, 4, 3), 16)",
    "upcast(Sw(3, 4, 3), 64)",
    "upcast(Sw(3, 4, 3), 256)",
    "upcast(Sw(2, 1, 3), 4)",
    "upcast(Sw(3, 4, 3), 3)",  # a swizzle scales by powers of two only
    "downcast(Sw(3, 4, 3), 2)",
    "downcast(Sw(2, 0, 3), 8)",
    "downcast(Sw(2, 0, 3), 6)",
    "upcast(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), 2)",
    "upcast(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), 8)",
    "upcast(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), 16)",
    "upcast(composition(Sw(1, 0, 3), L((_8, _64), (_64, _1))), 2)",
    "upcast(composition(Sw(1, 1, 3), L((_8, _64), (_64, _1))), 2)",
    "downcast(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), 2)",
    "downcast(composition(Sw(3, 3, 3), L((_8, _64), (_1, _8))), 4)",
    "upcast(make_composed_layout(Sw(3, 4, 3), _16, L((_8, _64), (_64, _1))), 2)",
    "upcast(make_composed_layout(Sw(3, 4, 3), 16, L((_8, _64), (_64, _1))), 2)",  # a run-time offset: CuTe rejects
    "upcast(make_composed_layout(Sw(3, 4, 3), _6, L((_8, _64), (_64, _1))), 4)",  # offset 6 / 4: CuTe rejects
    "downcast(make_composed_layout(Sw(3, 4, 3), _16, L((_8, _64), (_64, _1))), 2)",
    "downcast(make_composed_layout(Sw(3, 4, 3), 7, L((_8, _64), (_64, _1))), 2)",
    "upcast(make_composed_layout(L((_4, _8), (_8, _1)), _8, L((_2, _4), (_8, _16))), 2)",
    "upcast(call(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), _, 8), 2)",
    "upcast(call(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), 2, _), 2)",
    "upcast(call(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), _2, _), 2)",
    "downcast(call(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), 2, _), 2)",
    "upcast(make_composed_layout(Sw(3, 4, 3), _m16, L((_8, _64), (_64, _1))), 2)",
    "recast_layout(L((_4, _8), (_8, _1)), uint8_t, half_t)",
    "recast_layout(L((_4, _8), (_8, _1)), half_t, uint8_t)",
    "recast_layout(L((_4, _8), (_8, _1)), half_t, half_t)",
    "recast_layout(L((_4, _24), (_24, _1)), half_t, float_e2m3_t)",
    "recast_layout(L((_4, _24), (_24, _1)), float_e2m3_t, uint8_t)",
    "recast_layout(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), uint8_t, uint128_t)",
    "recast_layout(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), half_t, uint32_t)",
    "recast_layout(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), uint16_t, float_e2m1_t)",
    "recast_layout(Sw(3, 4, 3), uint8_t, uint64_t)",
    "recast_layout(Sw(3, 4, 3), uint16_t, float_e2m3_t)",  # a 3/8 ratio of a bare swizzle: CuTe rejects
    "upcast(call(composition(Sw(3, 4, 3), L(((_8, _8), _64), ((_64, _512), _1))), (_, 3), _), 2)",
    "downcast(call(composition(Sw(3, 4, 3), L(((_8, _8), _64), ((_64, _512), _1))), _, 7), 2)",
    "upcast(call(composition(Sw(3, 4, 3), L(((_8, _8), _64), ((_64, _512), _1))), _, 7), 2)",
]

SLICE_DICE = [  # free slice / dice / domain_offset of layouts, integer tuples, composed layouts and tensors
    # (layout.hpp, underscore.hpp, layout_composed.hpp, tensor_impl.hpp); make_fragment_like of swizzled layouts
    "slice((_, 3), L((_4, _8), (_8, _1)))",
    "slice((2, _), L((4, 8)))",
    "slice((_, (_, 1)), L((_4, (_2, 8)), (_16, (_8, _1))))",
    "slice((_, (1, _), 2), L((_4, (_2, _3), 5)))",
    "slice(_, L((_4, _8)))",
    "slice(3, L((_4, _8)))",
    "slice((_, 3), (_4, _8))",
    "slice((_, (2, _)), (4, (_2, 8)))",
    "slice((_, 3), composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))))",
    "slice((1, _), composition(Sw(3, 4, 3), L((_2, (_8, _64)), (_512, (_64, _1)))))",
    "slice((_, 3, 1), (_4, _8))",  # ranks differ: CuTe rejects
    "dice((_, 3), L((_4, _8), (_8, _1)))",
    "dice((2, _), L((4, 8)))",
    "dice((_, (_, 1)), L((_4, (_2, 8)), (_16, (_8, _1))))",
    "dice((_, (1, _), 2), L((_4, (_2, _3), 5)))",
    "dice(3, L((_4, _8)))",
    "dice(_, L((_4, _8)))",
    "dice((_, 3), (_4, _8))",
    "dice((1, (2, _)), (4, (_2, 8)))",
    "domain_offset((1, 2), L((_4, _8), (_8, _1)))",
    "domain_offset((_1, _2), L((_4, _8), (_8, _1)))",
    "domain_offset(13, L((4, _8)))",
    "domain_offset((1, (0, 2)), L((_4, (_2, _3)), (_1, (_4, _8))))",
    "domain_offset((_1, _2), composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))))",
    "domain_offset((1, 2), composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))))",
    "domain_offset((_2, _0), make_composed_layout(Sw(3, 4, 3), _16, L((_8, _64), (_64, _1))))",
    "domain_offset((3, 4), make_identity_tensor((_8, _8)))",
    "make_fragment_like(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))))",
    "make_fragment_like(composition(Sw(2, 4, 3), L((_8, _32, _2), (_32, _1, _256))))",
]


COMPARE = [  # lex / colex / elem comparisons (int_tuple.hpp): static _1/_0 vs run-time 1/0, ranks that differ
    "lex_less((1, 2), (1, 3))",
    "lex_less((_1, _2), (_1, _3))",
    "lex_less((_1, _2), (_1, 3))",
    "lex_less((_2, 2), (_1, 3))",
    "lex_less((_1, _2), (_1, _2, _0))",
    "lex_less((_1, _2, _0), (_1, _2))",
    "lex_less((), (_1,))",
    "lex_less((1, (2, _3)), (1, (2, _4)))",
    "lex_less((_1, (_2, _3)), (_1, (_2, _4)))",
    "lex_less((1, (2, 3)), (1, 5))",
    "lex_less(_3, _4)",
    "lex_less(3, _4)",
    "lex_leq((_1, _2), (_1, _2))",
    "lex_leq((1, 2), (1, 2))",
    "lex_gtr((_1, _3), (_1, _2))",
    "lex_geq((1, 3), (_1, _4))",
    "colex_less((1, 2), (2, 1))",
    "colex_less((_1, _2), (_2, _1))",
    "colex_less((_3, _2), (_1, _2, _0))",
    "colex_less((_1, _2, _0), (_3, _2))",
    "colex_less(((_1, _2), 3), ((_2, _2), 3))",
    "colex_leq((_2, _1), (_1, _2))",
    "colex_gtr((2, _1), (1, _1))",
    "colex_geq((_0, _0), (_0, _0))",
    "elem_less((1, 2), (2, 3))",
    "elem_less((_1, _2), (_2, _3))",
    "elem_less((_1, _2), (_2, _2))",
    "elem_less((_1, 2), (_2, _2))",
    "elem_less((_1, 2), (_1, 3))",
    "elem_less((_1, _2, _3), (_2, _3))",
    "elem_less((_1, _2), (_2, _3, _0))",
    "elem_less((), (_1,))",
    "elem_less(((_1, _2), _3), ((_2, _3), _4))",
    "elem_less(((1, _2), _3), (_4, _4))",
    "elem_leq((1, 2), (1, 2))",
    "elem_leq((_1, _3), (_2, _2))",
    "elem_gtr((_3, _3), (_2, _2))",
    "elem_geq((_3, 1), (_2, 2))",
    "elem_less(4, 5)",
    "elem_less(_4, _5)",
]

TUPLE_ALGO = [  # tuple algorithms (tuple_algorithms.hpp, container/tuple.hpp); a lambda is a generic C++ lambda
    "transform((_2, 4, _8), lambda a: a * _2)",
    "transform(_3, lambda a: a + _1)",
    "transform((_2, (4, _8)), lambda a: size(a))",
    "transform((_2, 3), (_4, 5), lambda a, b: a * b)",
    "transform((_2, 3), (_4, 5, _6), lambda a, b: a * b)",
    "transform((_2, 3), (_4, 5), (_1, 1), lambda a, b, c: a * b + c)",
    "transform_leaf((_2, (4, _8)), lambda a: a * _2)",
    "transform_leaf((_2, (4, _8)), (_1, (_2, 3)), lambda a, b: a - b)",
    "transform((_2, (4, _8)), lambda a: elem_less(a, _4))",
    "fold((_2, 3, _4), _1, lambda a, b: a * b)",
    "fold((_2, _3, _4), _1, lambda a, b: a * b)",
    "fold(_5, _1, lambda a, b: a + b)",
    "fold((), _7, lambda a, b: a + b)",
    "fold((_2, (3, _4)), (), lambda a, b: append(a, b))",
    "fold_first((_2, 3, _4), lambda a, b: a + b)",
    "fold_first(_5, lambda a, b: a + b)",
    "fold_first((_2, _3, _4), lambda a, b: a * b)",
    "find((_2, _3, _4), _3)",
    "find((_2, _3, _4), _5)",
    "find(_3, _3)",
    "find(_3, _4)",
    "find((_2, 3, _4), _4)",
    "find_if((_2, _3, _4), lambda a: elem_less(_2, a))",
    "find_if((_1, (_2, _3), _4), lambda a: lex_less(_3, size(a)))",
    "any_of((_1, _2, _3), lambda a: elem_less(_2, a))",
    "any_of((_1, _2, _3), lambda a: elem_less(_5, a))",
    "any_of((_1, 2, _3), lambda a: elem_less(_2, a))",
    "any_of((_1, 2, _1), lambda a: elem_less(_2, a))",
    "any_of((), lambda a: elem_less(_2, a))",
    "any_of(_4, lambda a: elem_less(_2, a))",
    "all_of((_3, _4), lambda a: elem_less(_2, a))",
    "all_of((_3, 1), lambda a: elem_less(_2, a))",
    "all_of((_3, 4), lambda a: elem_less(_2, a))",
    "all_of((_1, 4), lambda a: elem_less(_2, a))",
    "all_of((), lambda a: elem_less(_2, a))",
    "none_of((_1, _2), lambda a: elem_less(_2, a))",
    "none_of((_1, 4), lambda a: elem_less(_2, a))",
    "tuple_cat((_1, 2), (_3,), ())",
    "tuple_cat((_1, (2, _4)), ((_3,),))",
    "tuple_cat()",
    "tuple_cat((_1, 2))",
    "tuple_cat((_1, 2), 3)",
    "insert((_1, 2, _3), _9, 0)",
    "insert((_1, 2, _3), (_9, 9), 2)",
    "insert((_1, 2, _3), _9, 3)",
    "insert((_1, 2, _3), _9, 4)",
    "remove((_1, 2, _3), 0)",
    "remove((_1, 2, _3), 2)",
    "remove((_1,), 0)",
    "remove((_1, 2, _3), 3)",
    "replace((_1, 2, _3), _9, 1)",
    "replace((_1, 2, _3), (_9, 8), 2)",
    "replace(_5, _9, 0)",
    "replace((_1, 2, _3), _9, 3)",
    "replace_front((_1, 2, _3), _9)",
    "replace_back((_1, 2, _3), _9)",
    "replace_front(_5, _9)",
    "replace_back(_5, _9)",
    "tuple_repeat(_3, 3)",
    "tuple_repeat(_3, 1)",
    "tuple_repeat((_3, 4), 2)",
    "repeat(_3, 3)",
    "repeat(_3, 1)",
    "repeat((4, _2), 2)",
    "repeat(_, 3)",
    "repeat_like((_2, (3, _4)), _0)",
    "repeat_like(_8, 7)",
    "repeat_like((), _1)",
    "escan((_2, 3, _4), _1, lambda a, b: a * b)",
    "escan((_2, _3, _4), _1, lambda a, b: a * b)",
    "escan((_2,), _1, lambda a, b: a * b)",
    "escan((_2, (3, _4), _5), _1, lambda a, b: a * size(b))",
    "iscan((_2, 3, _4), _1, lambda a, b: a * b)",
    "iscan((_2, _3, _4), _0, lambda a, b: a + b)",
    "zip2_by(((_2, _3), ((_4, _5), (_6, _7)), _8), (_, (_, _)))",
    "zip2_by(((_2, _3), (_4, _5)), (_,))",
    "zip2_by(((_2, _3), (_4, _5)), _)",
    "zip2_by((_2, (_4, _5)), (_, _))",
    "reverse((_1, 2, (_3, 4)))",
    "reverse(_5)",
    "reverse(())",
    "wrap(_5)",
    "wrap((_5, 6))",
    "unwrap(((_5,),))",
    "unwrap((((_5, 6),),))",
    "unwrap(_5)",
    "front(((_5, 6), 7))",
    "back(((_5, 6), (7, (_8,))))",
    "front(_3)",
    "flatten_to_tuple(_5)",
    "flatten_to_tuple(((_2, 3), (_4, (5,))))",
    "apply((_2, 3, _4), lambda a, b, c: a * b + c)",
    "transform_apply((_2, 3, _4), lambda a: a * _2, lambda a, b, c: a + b + c)",
    "filter_tuple((_2, _0, 3, _0), lambda a: repeat(a, 1))",
    "remove((_1, 2, _3), 4)",
    "replace((_1, 2, _3), _9, 4)",
    "filter_tuple((_2, _0, 3, _0), lambda a: tuple_repeat(a, 1))",
    "filter_tuple((_2, _0, 3, _0), lambda a: tuple_repeat(a, 0))",
]

MODES = [  # take / group / zip / replace / append / prepend of tuples, layouts and composed layouts; flatten;
    # make_int_tuple
    "group((_1, _2, _3, _4, _5), 1, 3)",
    "group((_1, _2, _3, _4, _5), 2, -1)",
    "group((_1, _2, _3, _4, _5), 0, 5)",
    "group((_1, _2, _3), 1, 1)",
    "group((_1, _2, _3), 2, 1)",
    "group((_1, _2, _3), 1, 4)",
    "group(_7, 0, 1)",
    "group(_7, 0, -1)",
    "group(_7, 0, 0)",
    "group(L((_2, _4, _8, 3)), 1, 3)",
    "group(L((_2, _4, _8, 3)), 1, -1)",
    "group(L((_2, _4, _8, 3)), 2, 2)",
    "group(composition(Sw(3, 4, 3), L((_8, _64, _2), (_64, _1, _512))), 1, 3)",
    "group_modes(L((_2, _4, _8, 3)), 1, 1)",
    "take((_1, 2, _3, 4), 1, 3)",
    "take((_1, 2, _3, 4), 1, -1)",
    "take((_1, 2, _3, 4), 2, 2)",
    "take((_1, 2, _3, 4), 3, 5)",
    "take(_5, 0, 1)",
    "take(_5, 0, -1)",
    "take(L((_2, 4, _8, 3)), 2, 2)",
    "take(L((_2, 4, _8, 3)), 0, 4)",
    "take(L((_2, 4, _8, 3)), 1, -1)",
    "take(composition(Sw(3, 4, 3), L((_8, _64, _2), (_64, _1, _512))), 0, 2)",
    "zip(((_1, _2, _3), (4, 5, 6)))",
    "zip((_1, _2, _3), (4, 5, 6))",
    "zip((_1, _2), (4, 5), (_7, 8))",
    "zip((_1, _2, _3))",
    "zip(_5)",
    "zip(((_1, _2, _3), (4, 5)))",
    "zip(L(((_2, _4), (_3, _5)), ((_1, _2), (_8, _24))))",
    "zip(L((_2, _4), (_1, _2)), L((_3, _5), (_8, _24)))",
    "zip(composition(Sw(2, 3, 3), L(((_2, _4), (_8, _8)), ((_8, _16), (_1, _64)))))",
    "flatten(_5)",
    "flatten(5)",
    "append((_1, 2), _3)",
    "append(_1, _3)",
    "append_n((_1, 2), _0, 4)",
    "append_n((_1, 2), _0, 2)",
    "append_n(_1, _0, 3)",
    "append_n(_1, _0, 1)",
    "append_n((_1, 2, 3), _0, 2)",
    "prepend((_1, 2), _3)",
    "prepend(_1, _3)",
    "prepend_n((_1, 2), _0, 4)",
    "prepend_n(_1, _0, 3)",
    "prepend_n(L((_2, 4)), 3)",
    "prepend_n(L((_2, 4)), L(_8, _16), 4)",
    "append_n(L((_2, 4)), L(_8, _16), 4)",
    "append_n(L((_2, 4, _3)), 2)",
    "append(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), L(_2, _512))",
    "replace(L((_2, 4, _8), (_1, _2, _8)), L(_3, _64), 1)",
    "make_int_tuple(arr(6, 3, 4), 3, 0, 5)",
    "make_int_tuple(arr(6, 3, 4), 2, _0, 3)",
    "make_int_tuple(arr(6, 3, 4), 1, 0, 1)",
    "make_int_tuple(arr(6, 3, 4), 0, 9, 1)",
    "flatten(composition(Sw(3, 4, 3), L(((_8, _2), _64), ((_64, _512), _1))))",
    "flatten(make_identity_tensor(((_2, 3), _4)))",
    "append_n(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))), L(_2, _512), 3)",
]

TENSOR_EXTRA = [  # inner/outer_partition, recast<T>(tensor) over smem pointers, basis_value / basis_get,
    # get_swizzle_t, print_latex
    "inner_partition(make_identity_tensor((_16, _64)), (_4, _8), (1, 2))",
    "inner_partition(make_identity_tensor((_16, _64)), (_4, _8), 5)",
    "inner_partition(make_identity_tensor((_16, 64)), (_4, _8), (1,))",
    "inner_partition(make_identity_tensor((_16, 64, 4)), (_4, _8), (1, 2))",
    "outer_partition(make_identity_tensor((_16, _64)), (_4, _8), (1, 2))",
    "outer_partition(make_identity_tensor((_16, _64)), (_4, _8), 5)",
    "outer_partition(make_identity_tensor((_16, 64)), (_4, _8), (3,))",
    "outer_partition(make_identity_tensor((16, 64)), (_2, _4), (1, 3))",
    "outer_partition(make_identity_tensor((_16, _64)), (_4, _8), (1, 2, 3))",
    "inner_partition(make_identity_tensor((_16, _64)), (_4, _8), (1, 2, 3))",
    "outer_partition(make_coord_tensor(L((1024, 1024), (E(1), E(0)))), (_16, _16), (3, 5))",
    "make_tensor(make_smem_ptr(half_t, 256), L((_8, _4)))",
    "recast(make_tensor(make_smem_ptr(half_t, 256), L((_8, _4))), uint32_t)",
    "recast(make_tensor(make_smem_ptr(half_t, 256), L((_8, _4))), half_t)",
    "recast(make_tensor(make_smem_ptr(half_t, 256), L((_8, _4))), uint8_t)",
    "recast(make_tensor(make_smem_ptr(uint32_t, 256), L((_8, _4))), half_t)",
    "recast(make_tensor(make_smem_ptr(half_t, 256), L((_8, _4), (_4, _1))), uint64_t)",
    "recast(make_tensor(make_smem_ptr(half_t, 256), L((_8, _4), (_m1, _8))), uint32_t)",
    "recast(make_tensor(make_smem_ptr(uint8_t, 256), L((_16, _4), (_m1, _16))), uint32_t)",
    "recast(make_tensor(make_smem_ptr(half_t, 256), L((_8, 4), (_1, 8))), uint32_t)",
    "recast(make_tensor(make_smem_ptr(half_t, 256), composition(Sw(3, 3, 3), L((_8, _64), (_64, _1)))), uint128_t)",
    # sub-byte elements: CuTe's subbyte_iterator (a byte address and a bit index) prints as smem_subptr
    "make_tensor(make_smem_ptr(float_e2m1_t, 256), L((_8, _4)))",
    "make_tensor(make_smem_ptr(float_e2m3_t, 256), L((_8, _4)))",
    "recast(make_tensor(make_smem_ptr(uint8_t, 256), L((_8, _4))), float_e2m1_t)",
    "recast(make_tensor(make_smem_ptr(half_t, 256), L((_8, _4), (_4, _1))), float_e2m1_t)",
    "recast(make_tensor(make_smem_ptr(float_e2m1_t, 256), L((_16, _4))), uint8_t)",
    "recast(make_tensor(make_smem_ptr(float_e2m1_t, 256), L((_16, _4))), half_t)",
    "recast(make_tensor(make_smem_ptr(uint8_t, 256), L((_8, _4), (_m1, _8))), float_e2m1_t)",
    "recast(make_tensor(make_smem_ptr(float_e2m1_t, 256), L((_16, _4), (_m1, _16))), uint8_t)",
    "recast(make_tensor(make_smem_ptr(uint16_t, 512), L((_4, _8), (_8, _1))), uint32_t)",
    "recast(make_tensor(make_smem_ptr(half_t, 256), L((_8, _4), (_8, _2))), uint32_t)",
    "basis_value(E(1) * _4)",
    "basis_value(E(1, 0))",
    "basis_value(_7)",
    "basis_get(E(1), (_2, (3, _4)))",
    "basis_get(E(1, 0), (_2, (3, _4)))",
    "basis_get(E(1, 1), (_2, (3, _4)))",
    "basis_get(_7, (_2, 3))",
    "basis_get(E(2), (_2, 3))",
    "get_swizzle(composition(Sw(3, 4, 3), L((_8, _64), (_64, _1))))",
    "get_swizzle(L((_8, _64), (_64, _1)))",
    "get_swizzle(make_tensor(make_smem_ptr(half_t, 256), composition(Sw(3, 3, 3), L((_8, _64), (_64, _1)))))",
    "get_swizzle(make_composed_layout(Sw(2, 4, 3), _16, L((_8, _32), (_32, _1))))",
    "print_latex(L((_2, _3)))",
    "print_latex(L((4, _3), (_3, _1)))",
    "print_latex(L(_5))",
    "print_latex(L(((_2, _2), _3), ((_1, _6), _2)))",
    "print_latex(composition(Sw(1, 1, 2), L((_4, _4), (_4, _1))))",
    "print_latex(L((_2, _2, _2)))",
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



# ---------------------------------------------------------------- generated: seeded random cases
# Random layouts (nested shapes, static/dynamic mixes, strides with 0 and negatives) under random algebra ops. A small
# model of CuTe's integers and algebra keeps only expressions CuTe accepts and gives a meaning: every composition the
# expression performs (divides and products compose too) must satisfy R(i) == a(b(i)) point by point, complements must
# be exact (injective, dividing strides), and no dynamic zero is ever divided by (UB in C++).
class _S(int):
    """A static integer (``_8``) of the model; a plain ``int`` is dynamic (``8``)."""

    __slots__ = ()


class _Skip(Exception):
    """The drawn expression breaks a precondition of CuTe's algebra: draw another."""


class _L:
    """A layout of the model: shape, stride (trees of ``_S``/``int``) and its spelling."""

    __slots__ = ("s", "d", "txt")

    def __init__(self, s, d, txt=None):
        self.s, self.d, self.txt = s, d, txt or f"L({_sp(s)}, {_sp(d)})"


def _k(v, *xs):
    """``v``, static iff every operand is."""
    return _S(v) if all(type(x) is _S for x in xs) else int(v)


def _is(v, x):
    return type(x) is _S and x == v


def _mul(a, b):
    return _S(0) if _is(0, a) or _is(0, b) else _k(a * b, a, b)


def _div(a, b):
    """C++ ``a / b`` (truncating); ``_0 / b`` stays static."""
    if b == 0:
        raise _Skip
    q = abs(a) // abs(b)
    return _S(0) if _is(0, a) else _k(q if (a < 0) == (b < 0) else -q, a, b)


def _cdiv(a, b):
    """CuTe's ceil_div ``(a + b - _1) / b``; a tuple ``a`` folds ``b`` through its modes."""
    if isinstance(a, tuple):
        out = []
        for x in a:
            out.append(_cdiv(x, b))
            b = _cdiv(b, x)
        return tuple(out)
    return _div(_k(a + b - 1, a, b), b)


def _sp(x):
    if isinstance(x, tuple):
        return "(" + ", ".join(_sp(v) for v in x) + ("," if len(x) == 1 else "") + ")"
    if x is None:
        return "_"
    if isinstance(x, _L):
        return x.txt
    return (f"_m{-x}" if x < 0 else f"_{x}") if type(x) is _S else str(x)


def _unflat(t, it):
    return tuple(_unflat(e, it) for e in t) if isinstance(t, tuple) else next(it)


def _wrap(t):
    return t if isinstance(t, tuple) else (t,)


def _unwrap(xs):
    return xs[0] if len(xs) == 1 else tuple(xs)


def _size(s):
    out = _S(1)
    for v in _flat(s):
        out = _mul(out, v)
    return out


def _cosize(a):
    v = 1 + sum((s - 1) * abs(d) for s, d in zip(_flat(a.s), _flat(a.d)))
    return _k(v, *_flat(a.s), *_flat(a.d))


def _at(a, i, ext=False):
    """``a(i)``; with ``ext`` beyond the domain too (the last mode goes on, as CuTe's coalesce_x keeps it)."""
    fs, fd, v = _flat(a.s), _flat(a.d), 0
    for j, (s, d) in enumerate(zip(fs, fd)):
        v += (i if ext and j == len(fs) - 1 else i % s) * d
        i //= s
    return v


def _compact(s, cur=_S(1), right=False):
    """CuTe's compact_major: col-major (or row-major) strides from ``cur``; a static 1-mode gets ``_0``."""
    cur = [cur]

    def walk(t):
        if isinstance(t, tuple):
            parts = [walk(e) for e in (t[::-1] if right else t)]
            return tuple(parts[::-1] if right else parts)
        if _is(1, t):
            return _S(0)
        d, cur[0] = cur[0], _mul(cur[0], t)
        return d

    return walk(s)


def _coal_shape(s):
    out = []
    for v in _flat(s):
        if out and (type(out[-1]) is _S) == (type(v) is _S):
            out[-1] = _mul(out[-1], v)
        else:
            out.append(v)
    return _unwrap(out)


def _coal(a, x=False):
    """CuTe's coalesce (``x``: detail::coalesce_x, which keeps the function beyond the domain)."""
    fs, fd = _flat(a.s), _flat(a.d)
    ns, nd = [_S(2) if x and _is(1, fs[-1]) else fs[-1]], [fd[-1]]
    for s, d in zip(fs[-2::-1], fd[-2::-1]):
        p = _mul(s, d)
        if _is(1, s):
            continue
        if len(ns) == 1 and _is(1, ns[0]):
            ns, nd = [s], [d]
        elif type(ns[0]) is _S and type(p) is _S and type(nd[0]) is _S and p == nd[0]:
            ns[0], nd[0] = _mul(s, ns[0]), d
        else:
            ns, nd = [s] + ns, [d] + nd
    if len(ns) == 1 and _is(1, ns[0]):
        return _L(_S(1), _S(0))
    return _L(_unwrap(ns), _unwrap(nd))


def _filter(a):
    z = [_S(1) if _is(0, d) else s for s, d in zip(_flat(a.s), _flat(a.d))]
    return _coal(_L(_unflat(a.s, iter(z)), a.d))


def _complement(a, cot):
    """CuTe's complement, only where it is exact (positive strides that divide in sorted order)."""
    f = _filter(a)
    if _is(0, f.d):
        s = _coal_shape(cot)
        return _L(s, _compact(s))
    s, d = list(_wrap(f.s)), list(_wrap(f.d))
    if min(d) <= 0 or (len(d) > 1 and not all(type(v) is _S for v in d)):
        raise _Skip
    rs, rd = [], [_S(1)]
    while True:
        i = d.index(min(d))
        if d[i] % rd[-1]:
            raise _Skip
        rs.append(_div(d[i], rd[-1]))
        if len(s) == 1:
            break
        rd.append(_mul(d[i], s[i]))
        del s[i], d[i]
    nd = _mul(d[0], s[0])
    rest = _coal_shape(_cdiv(cot, nd))
    return _coal(_L((tuple(rs), rest), (tuple(rd), _compact(rest, nd))))


def _compose_impl(ls, ld, rs, rd):
    if isinstance(rs, tuple):
        parts = [_compose_impl(ls, ld, s, d) for s, d in zip(rs, rd)]
        return tuple(p[0] for p in parts), tuple(p[1] for p in parts)
    if _is(0, rd):
        return rs, rd
    if not isinstance(ls, tuple):
        return rs, _mul(rd, ld)
    if rd == 0:
        raise _Skip
    res_s, res_d, rest_s, rest_d = [], [], rs, rd
    for cs, cd in zip(ls[:-1], ld[:-1]):
        if rest_d % cs and rest_d >= cs:
            raise _Skip
        ad = _k(abs(rest_d), rest_d)
        next_s, next_d = _cdiv(cs, ad), _mul(_cdiv(ad, cs), _k((rest_d > 0) - (rest_d < 0), rest_d))
        if not (_is(1, next_s) or _is(1, rest_s)):
            new_s = _k(min(next_s, rest_s), next_s, rest_s)
            if rest_s % new_s:
                raise _Skip
            res_s.append(new_s)
            res_d.append(_mul(rest_d, cd))
            rest_s = _div(rest_s, new_s)
        rest_d = next_d
    if not res_s:
        return rest_s, _mul(rest_d, ld[-1])
    if _is(1, rest_s):
        return _unwrap(res_s), _unwrap(res_d)
    return tuple(res_s) + (rest_s,), tuple(res_d) + (_mul(rest_d, ld[-1]),)


def _compose(a, b):
    """CuTe's composition of model layouts, kept only where ``R(i) == a(b(i))`` for every ``i``."""
    c = _coal(a, x=True)
    r = _L(*_compose_impl(c.s, c.d, b.s, b.d))
    n = _size(b.s)
    if _size(r.s) != n or any(_at(b, i) < 0 or _at(r, i) != _at(a, _at(b, i), ext=True) for i in range(n)):
        raise _Skip
    return r


def _tiler_layout(t):
    return _L(t, _compact(t)) if isinstance(t, int) else t


def _by_mode(a, tiler, fn, keep_rest):
    s, d = _wrap(a.s), _wrap(a.d)
    if len(tiler) > len(s):
        raise _Skip
    modes = [fn(_L(s[i], d[i]), t) for i, t in enumerate(tiler)]
    modes += [_L(s[i], d[i]) for i in range(len(tiler), len(s))] if keep_rest else []
    return _L(tuple(m.s for m in modes), tuple(m.d for m in modes))


def _m_compose(a, t):
    if t is None:
        return a
    if isinstance(t, tuple):
        return _by_mode(a, t, _m_compose, False)
    return _compose(a, _L(t, _S(1)) if isinstance(t, int) else t)


def _m_divide(a, t):
    if t is None:
        return a
    if isinstance(t, tuple):
        return _by_mode(a, t, _m_divide, True)
    t = _tiler_layout(t)
    c = _complement(t, _coal(a).s)
    return _compose(a, _L((t.s, c.s), (t.d, c.d)))


def _m_product(a, t):
    if t is None:
        return a
    if isinstance(t, tuple):
        return _by_mode(a, t, _m_product, True)
    t = _tiler_layout(t)
    r = _compose(_complement(a, _mul(_size(a.s), _cosize(t))), t)
    return _L((a.s, r.s), (a.d, r.d))


def _pad(a, r):
    s, d = _wrap(a.s), _wrap(a.d)
    return _L(s + (_S(1),) * (r - len(s)), d + (_S(0),) * (r - len(d)))


def _blocked(a, t):
    """blocked_product / raked_product: the logical_product of both padded to one rank, zipped mode by mode."""
    r = max(len(_wrap(a.s)), len(_wrap(t.s)))
    if r == 1 and isinstance(a.s, tuple) != isinstance(t.s, tuple):
        raise _Skip  # zip of a rank-1 tuple with an integer: CuTe rejects it
    return _m_product(_pad(a, r), _pad(t, r))


def _injective(a):
    n = _size(a.s)
    if len({_at(a, i) for i in range(n)}) != n:
        raise _Skip
    return a


def _left_invertible(a):
    """left_inverse's preconditions: static, non-negative strides, each a multiple of the one below."""
    n = 1
    for v in sorted(_wrap(_coal(a).d)):
        if type(v) is not _S or v < 0 or (v and v % n):
            raise _Skip
        n = v or n


def _right_inverse(a):
    c = _coal(a)
    s, d = _wrap(c.s), _wrap(c.d)
    pre = [_S(1)]
    for v in s:
        pre.append(_mul(pre[-1], v))
    rs, rd, cur, order = [_S(1)], [_S(0)], _S(1), [i for i in range(len(d)) if type(d[i]) is _S]
    for i in range(len(order)):  # CuTe's exchange_sort: equal strides may swap
        for j in range(i + 1, len(order)):
            if d[order[j]] < d[order[i]]:
                order[i], order[j] = order[j], order[i]
    for i in order:
        if type(cur) is _S and d[i] == cur:
            rs.append(s[i])
            rd.append(pre[i])
            cur = _mul(s[i], d[i])
    return _coal(_L(tuple(rs), tuple(rd)))


def _left_inverse(a):
    """CuTe's left_inverse of a model layout that passed _left_invertible."""
    c = _coal(a)
    s, d = _wrap(c.s), _wrap(c.d)
    pre = [_S(1)]
    for v in s:
        pre.append(_mul(pre[-1], v))
    order = list(range(len(d)))
    for i in range(len(order)):  # CuTe's exchange_sort
        for j in range(i + 1, len(order)):
            if d[order[j]] < d[order[i]]:
                order[i], order[j] = order[j], order[i]
    rs, rd = [], [_S(0)]
    for i in order:
        if not _is(0, d[i]):
            rs.append(_div(d[i], _size(tuple(rs))))
            rd.append(pre[i])
    return _coal(_L(tuple(rs) + (s[order[-1]],), tuple(rd)))


def _idx(c, s, d):
    """CuTe's ``layout(c)`` for an integer ``c`` (the last mode takes what is left), static where CuTe's is."""
    if not isinstance(s, tuple):
        return _mul(c, d)
    out = None
    for i, (si, di) in enumerate(zip(s, d)):
        n = _size(si)
        last = i == len(s) - 1
        v = _idx(c if last else (_S(0) if _is(0, c) or _is(1, n) else _k(c % n, c, n)), si, di)
        out = v if out is None else _k(out + v, out, v)
        c = c if last else _div(c, n)
    return out


def _sw_masks(b, m, s):
    bits = (1 << b) - 1
    return _S(bits << (m + max(0, s))), _S(bits << (m - min(0, s)))


def _make_swizzle(y, z):
    """CuTe's make_swizzle<Y,Z> preconditions: static, non-negative, two equal runs of bits that do not overlap."""
    if type(y) is not _S or type(z) is not _S or not (0 <= y < 1 << 30 and 0 <= z < 1 << 30):
        raise _Skip
    b, tz_y, tz_z = bin(y).count("1"), (y & -y).bit_length() - 1 if y else 32, (z & -z).bit_length() - 1 if z else 32
    m, s = min(tz_y, tz_z) % 32, tz_y - tz_z
    if b != bin(z).count("1") or abs(s) < b or y | z != _sw_masks(b, m, s)[0] | _sw_masks(b, m, s)[1]:
        raise _Skip


# ---- random draws
_EXTENTS = (1, 2, 2, 2, 3, 4, 4, 5, 6, 7, 8)
_INJECTIVE = ("left", "right", "perm", "perm", "gap")
_ANY = _INJECTIVE + ("rand", "bcast", "neg")


def _statics(rng, t, p):
    """Make each leaf of ``t`` static with probability ``p`` (a zero is always static: a dynamic one is UB bait)."""
    if isinstance(t, tuple):
        return tuple(_statics(rng, e, p) for e in t)
    return _S(t) if t == 0 or rng.random() < p else int(t)


def _rshape(rng, depth=3, top=True):
    """A shape nested up to ``depth`` levels, ranks 1-4, extents 1-8."""
    if depth == 0 or rng.random() < (0.08 if top else 0.6):
        return rng.choice(_EXTENTS)
    return tuple(_rshape(rng, depth - 1, False) for _ in range(rng.choice((1, 2, 2, 3, 3, 4) if top else (1, 2, 2, 3))))


def _rlayout(rng, kinds=_ANY, depth=3, max_size=1024):
    while True:
        shape = _rshape(rng, depth)
        if _size(shape) <= max_size:
            return _strided(rng, _statics(rng, shape, rng.choice((1, 1, 0.5, 0))), rng.choice(kinds))


def _strided(rng, s, kind):
    """A layout of shape ``s`` with strides of ``kind``: compact (left, right, permuted), gapped, random, with
    zeros (bcast) or with negatives."""
    if kind in ("left", "right"):
        txt = f"L({_sp(s)})" if kind == "left" else f"L({_sp(s)}, LayoutRight)"
        return _L(s, _compact(s, right=kind == "right"), txt)
    leaves = [int(v) for v in _flat(s)]
    if kind == "rand":
        d = [rng.choice((0, 1, 1, 2, 3, 4, 6, 8, 12, 16, 32)) for _ in leaves]
    else:
        d, cur, order = [0] * len(leaves), 1, list(range(len(leaves)))
        rng.shuffle(order)
        for i in order:
            d[i], cur = cur, cur * leaves[i] * (rng.choice((1, 1, 2, 3)) if kind == "gap" else 1)
        if kind == "bcast":
            d = [0 if rng.random() < 0.3 else v for v in d]
        if kind == "neg":
            d = [-v if rng.random() < 0.5 else v for v in d]
    return _L(s, _statics(rng, _unflat(s, iter(d)), rng.choice((1, 1, 0.5, 0))))


def _rint(rng, lo, hi, p=0.5):
    v = rng.randint(lo, hi)
    return _S(v) if rng.random() < p else v


def _rcoord(rng, s, slicing=False):
    """A coordinate of shape ``s``: natural, or 1-D within some modes, with ``_`` in some modes when slicing."""
    if slicing and rng.random() < 0.3:
        return None
    if isinstance(s, tuple) and rng.random() < 0.75:
        return tuple(_rcoord(rng, e, slicing) for e in s)
    return _rint(rng, 0, _size(s) - 1)


def _kept(c, s):
    """The size of what a slice by ``c`` keeps (0 where ``c`` has no ``_``)."""
    if c is None:
        return _size(s)
    if isinstance(c, tuple):
        kept = [_kept(e, t) for e, t in zip(c, s)]
        return 0 if not any(kept) else _size(tuple(k for k in kept if k))
    return 0


def _rprofile(rng, s):
    if not isinstance(s, tuple):
        return _S(1)
    return tuple(_rprofile(rng, e) if rng.random() < 0.3 else _S(1) for e in s[:rng.randint(1, len(s))])


def _rtiler(rng, a, by_mode=True, underscore=True):
    """A tiler for ``a``: an integer, a layout (injective, small), or a tuple of those by mode."""
    if by_mode and isinstance(a.s, tuple) and rng.random() < 0.4:
        s, d = a.s, _wrap(a.d)
        out = []
        for i in range(rng.randint(1, len(s))):
            if underscore and rng.random() < 0.15:
                out.append(None)
            else:
                out.append(_rtiler(rng, _L(s[i], d[i]), rng.random() < 0.3, underscore))
        return tuple(out)
    if rng.random() < 0.35:
        return _rint(rng, 1, max(2, min(16, _size(a.s))), 0.7)
    return _rlayout(rng, _INJECTIVE, 2, 16)


def _r_basic(rng):
    a = _rlayout(rng)
    p = _sp(_rprofile(rng, a.s))
    return rng.choice((a.txt, f"coalesce({a.txt})", f"filter({a.txt})", f"filter_zeros({a.txt})",
                       f"coalesce({a.txt}, {p})", f"filter({a.txt}, {p})", f"cosize({a.txt})", f"coalesce({a.txt})",
                       f"flatten({a.txt})", f"filter({a.txt})"))


def _r_call(rng):
    a = _rlayout(rng)
    r = rng.random()
    if r < 0.1:
        return f"idx2crd({_sp(_rint(rng, 0, _size(a.s) - 1))}, {_sp(a.s)})"
    c = _rcoord(rng, a.s, slicing=r > 0.6)
    if r < 0.2:
        return f"crd2idx({_sp(c)}, {_sp(a.s)}, {_sp(a.d)})"
    if r > 0.85:
        return f"slice_and_offset({_sp(c)}, {a.txt})"
    if isinstance(c, tuple) and len(c) > 1 and rng.random() < 0.5:
        return f"call({a.txt}, {', '.join(_sp(e) for e in c)})"
    return f"call({a.txt}, {_sp(c)})"


def _r_composition(rng):
    a = _rlayout(rng)
    t = _rtiler(rng, a) if rng.random() < 0.5 else _rlayout(rng, ("left", "perm", "gap", "rand", "bcast"), 2, 32)
    _m_compose(a, t)
    return f"composition({a.txt}, {_sp(t)})"


def _r_complement(rng):
    a = _rlayout(rng, _INJECTIVE + ("bcast",), 3, 64)
    r = rng.random()
    if r < 0.3:
        _complement(a, _cosize(_filter(a)))
        return f"complement({a.txt})"
    cot = _rint(rng, 1, 4 * _cosize(a)) if r < 0.75 else tuple(_rint(rng, 1, 12) for _ in range(rng.randint(2, 3)))
    _complement(a, cot)
    return f"complement({a.txt}, {_sp(cot)})"


def _r_inverse(rng):
    if rng.random() < 0.5:
        a = _rlayout(rng, _INJECTIVE + ("neg",))
        return f"right_inverse({a.txt})"
    a = _rlayout(rng, _INJECTIVE)
    _left_invertible(a)
    return f"left_inverse({a.txt})"


def _r_divide(rng):
    op = rng.choice(("logical_divide", "zipped_divide", "tiled_divide", "flat_divide"))
    a = _rlayout(rng)
    t = _rtiler(rng, a, underscore=op == "logical_divide")
    _m_divide(a, t)
    return f"{op}({a.txt}, {_sp(t)})"


def _r_product(rng):
    op = rng.choice(("logical_product", "zipped_product", "tiled_product", "blocked_product", "raked_product",
                     "tile_to_shape"))
    a = _rlayout(rng, _INJECTIVE, 2, 64)
    if op in ("blocked_product", "raked_product"):
        t = _rlayout(rng, _INJECTIVE, 2, 16)
        _blocked(a, t)
        return f"{op}({a.txt}, {t.txt})"
    if op == "tile_to_shape":
        bs = [_size(m) for m in _wrap(a.s)]
        bs += [_S(1)] * rng.randint(0, 4 - len(bs))
        ts = tuple(_S(b * rng.choice((1, 2, 2, 3, 4))) if rng.random() < 0.7 else b * rng.randint(1, 3) for b in bs)
        if all(type(t) is _S for t in ts) and not all(type(b) is _S for b in bs):
            raise _Skip  # CuTe checks a static target's division at compile time: the block must be static too
        ps = tuple(_k(t // b, t, b) for t, b in zip(ts, bs))
        order, ds = rng.choice(("", ", LayoutRight", "perm")), [0] * len(ps)
        if order == "perm":
            perm = list(range(len(ts)))
            rng.shuffle(perm)
            order, cur = f", {_sp(tuple(_S(v) for v in perm))}", 1
            for i in sorted(range(len(ps)), key=lambda i: perm[i]):
                ds[i], cur = cur, cur * ps[i]
        else:
            ds = _compact(ps, right=bool(order))
        _m_product(_pad(a, len(ts)), _L(ps, tuple(ds)))
        return f"tile_to_shape({a.txt}, {_sp(ts)}{order})"
    t = _rtiler(rng, a, underscore=op == "logical_product")
    _m_product(a, t)
    return f"{op}({a.txt}, {_sp(t)})"


def _r_swizzle(rng):
    b, m = rng.choice((0, 1, 2, 2, 3, 3)), rng.randint(0, 4)
    s = rng.choice((b, b, b + 1, b + 2)) * (-1 if rng.random() < 0.15 else 1) or 1
    a = _rlayout(rng, _INJECTIVE, 3, 256)
    sw = f"composition(Sw({b}, {m}, {s}), {a.txt})"
    op = rng.choice(("call", "call", "slice", "coalesce", "divide", "divide", "composition", "product", "blocked",
                     "size", "cosize", "complement", "common", "common", "print"))
    if op in ("call", "slice"):
        if op == "slice" and not all(type(v) is _S for v in _flat(a.s) + _flat(a.d)):
            raise _Skip  # CuTe slices a swizzled layout only when it is static
        c = _rcoord(rng, a.s, slicing=op == "slice")
        if op == "call":
            return f"call({sw}, {_sp(c)})"
        n = _kept(c, a.s)
        if n == 0:
            raise _Skip  # CuTe slices a swizzled layout only with a '_' in the coordinate
        r = rng.random()
        if r < 0.3:
            return f"slice_and_offset({_sp(c)}, {sw})"
        if r < 0.5:  # the slice (a swizzle with an offset, or a plain layout) evaluated
            return f"call(call({sw}, {_sp(c)}), {_sp(_rint(rng, 0, n - 1))})"
        if r < 0.6:
            return f"coalesce(call({sw}, {_sp(c)}))"
        return f"call({sw}, {_sp(c)})"
    if op == "coalesce":
        return f"coalesce({sw})" if rng.random() < 0.5 else f"coalesce({sw}, {_sp(_rprofile(rng, a.s))})"
    if op == "divide":
        div = rng.choice(("logical_divide", "zipped_divide", "tiled_divide", "flat_divide"))
        t = _rtiler(rng, a, underscore=div == "logical_divide")
        _m_divide(a, t)
        return f"{div}({sw}, {_sp(t)})"
    if op == "composition":
        t = _rtiler(rng, a)
        _m_compose(a, t)
        return f"composition({sw}, {_sp(t)})"
    if op == "product":
        t = _rtiler(rng, a)
        _m_product(a, t)
        return f"logical_product({sw}, {_sp(t)})"
    if op == "blocked":
        t = _rlayout(rng, _INJECTIVE, 2, 16)
        _blocked(a, t)
        return f"{rng.choice(('blocked_product', 'raked_product'))}({sw}, {t.txt})"
    if op == "complement":
        _complement(a, _cosize(a))
        return f"complement({sw})"
    if op == "common" and rng.random() < 0.3:  # both swizzled
        b2, m2 = rng.choice(((b, m), (b, m), (2, 2), (3, 4), (1, 3)))
        c = _strided(rng, _statics(rng, a.s, 1), rng.choice(("left", "right", "perm")))
        _coal(_compose(a, _right_inverse(c)))
        return f"max_common_vector({sw}, composition(Sw({b2}, {m2}, {max(b2, 1) + 1}), {c.txt}))"
    if op == "common":
        return _r_common(rng, a, sw)
    if op == "print":
        if not (isinstance(a.s, tuple) and len(a.s) == 2 and _size(a.s) <= 64):
            raise _Skip
        return f"print_layout({sw})"
    return f"{op}({sw})"


def _r_common(rng, a=None, sw=None):
    """max_common_vector / max_common_layout of two layouts of one shape (``sw``: ``a`` swizzled, spelled so)."""
    a = a or _rlayout(rng, _INJECTIVE)
    b = _strided(rng, _statics(rng, a.s, rng.choice((1, 1, 0.5))), rng.choice(("left", "right", "perm")))
    fn = "max_common_vector" if sw else rng.choice(("max_common_vector", "max_common_layout"))
    x, y, args = (a, b, f"{sw or a.txt}, {b.txt}") if rng.random() < 0.5 else (b, a, f"{b.txt}, {sw or a.txt}")
    if sw:
        x, y = a, b  # CuTe puts the swizzled layout first either way
    inv = _right_inverse(y)
    common = _coal(_compose(x, inv))
    s0, d0 = _wrap(common.s)[0], _wrap(common.d)[0]
    if fn == "max_common_layout" and type(s0) is _S and _is(1, d0):
        _compose(inv, _L(s0, d0))
    return f"{fn}({args})"


def _r_print(rng):
    a = _rlayout(rng, _ANY, 2, 64)
    if not (isinstance(a.s, tuple) and len(a.s) == 2):
        raise _Skip
    return f"print_layout({a.txt})"


def _r_misc(rng):
    a = _rlayout(rng)
    s = _wrap(a.s)
    r = rng.random()
    if r < 0.2:
        return f"make_identity_layout({_sp(a.s)})"
    if r < 0.35:
        perm = list(range(len(s)))
        rng.shuffle(perm)
        return f"make_ordered_layout({_sp(s)}, {_sp(tuple(_S(v) for v in perm))})"
    if r < 0.5:
        return f"coalesce({_sp(a.s)})"
    if r < 0.6:  # integer-tuple algebra on the (flattened) shape
        fs, n, fn = tuple(_flat(a.s)), _rint(rng, 1, 12), rng.choice(("shape_div", "ceil_div"))
        rest = n
        for v in fs:
            if fn == "shape_div" and v % rest and rest % v:
                raise _Skip  # shape_div's divisibility condition
            rest = _cdiv(rest, v)
        return f"{fn}({_sp(fs)}, {_sp(n)})"
    if r < 0.75 and len(s) >= 2:
        i = rng.randint(0, len(s) - 1)
        j = rng.randint(i + 1, len(s))
        return f"{rng.choice(('group_modes', 'take'))}({a.txt}, {i}, {j})"
    b = _rlayout(rng, _ANY, 1, 16)
    return f"{rng.choice(('append', 'prepend'))}({a.txt}, {b.txt})"


def _r_identity(rng):
    """Identity layouts and tensors (``_1@i`` strides), or flat layouts of permuted, scaled bases (``E(1) * _2``),
    under composition, divides and calls. The model gives each basis a distinct power of 10^6 as its stride: like
    bases, they never coalesce."""
    op = rng.choice(("composition", "logical_divide", "zipped_divide", "tiled_divide", "flat_divide", "call",
                     "local_tile"))
    if op != "local_tile" and rng.random() < 0.35:
        s = _statics(rng, tuple(rng.choice(_EXTENTS) for _ in range(rng.randint(2, 3))), rng.choice((1, 1, 0.5, 0)))
        perm, k = list(range(len(s))), [rng.choice((1, 1, 2, 4)) for _ in s]
        rng.shuffle(perm)
        a = _L(s, tuple(_S(k[i] * 10 ** (6 * perm[i])) for i in range(len(s))))
        d = ", ".join(f"E({perm[i]})" + (f" * _{k[i]}" if k[i] > 1 else "") for i in range(len(s)))
        lay = f"L({_sp(s)}, ({d}))"
        lay = lay if op == "composition" or rng.random() < 0.6 else f"make_coord_tensor({lay})"
    else:
        s = _statics(rng, _rshape(rng, 2), rng.choice((1, 1, 0.5, 0)))
        a = _L(s, _unflat(s, iter(_S(10 ** (6 * i)) for i in range(len(_flat(s))))))
        lay = f"make_identity_{'tensor' if op != 'composition' and rng.random() < 0.4 else 'layout'}({_sp(s)})"
    if op == "call":
        return f"call({lay}, {_sp(_rcoord(rng, s))})"
    if op == "local_tile":  # a tile of a flat identity tensor, picked by its coordinate among the tiles
        if not isinstance(s, tuple) or len(s) < 2 or any(isinstance(e, tuple) for e in s):
            raise _Skip
        t = tuple(_S(rng.choice((1, 2, 2, 3, 4, 8))) for _ in s)
        r = _m_divide(a, t)
        c = tuple(_rint(rng, 0, _size(m[1]) - 1) for m in r.s)
        return f"local_tile(make_identity_tensor({_sp(s)}), {_sp(t)}, {_sp(c)})"
    t = _rtiler(rng, a, underscore=op in ("composition", "logical_divide"))
    (_m_compose if op == "composition" else _m_divide)(a, t)
    return f"{op}({lay}, {_sp(t)})"


def _r_nested(rng):
    """An algebra op on the result of another."""
    a = _rlayout(rng, _INJECTIVE + ("bcast", "neg"), 2, 128)
    r, t = rng.random(), _rtiler(rng, a)
    if r < 0.15:
        x, txt = _coal(a), f"coalesce({a.txt})"
    elif r < 0.25:
        x, txt = _filter(a), f"filter({a.txt})"
    elif r < 0.4:
        x, txt = _right_inverse(a), f"right_inverse({a.txt})"
    elif r < 0.55:
        n = _rint(rng, 1, 2 * _cosize(a))
        x, txt = _complement(a, n), f"complement({a.txt}, {_sp(n)})"
    elif r < 0.75:
        x, txt = _m_compose(a, t), f"composition({a.txt}, {_sp(t)})"
    elif r < 0.9:
        x, txt = _m_divide(a, t), f"logical_divide({a.txt}, {_sp(t)})"
    else:
        x, txt = _m_product(a, t), f"logical_product({a.txt}, {_sp(t)})"
    x = _L(x.s, x.d, txt)
    op = rng.choice(("coalesce", "composition", "divide", "divide", "right_inverse", "left_inverse", "complement",
                     "blocked_product", "composed"))
    if op == "coalesce":
        return f"coalesce({x.txt})"
    if op == "composition":
        t = _rtiler(rng, x)
        _m_compose(x, t)
        return f"composition({x.txt}, {_sp(t)})"
    if op == "composed":  # a layout composed with the result
        y = _rlayout(rng, _INJECTIVE, 2, 256)
        _compose(y, x)
        return f"composition({y.txt}, {x.txt})"
    if op == "divide":
        div = rng.choice(("logical_divide", "zipped_divide", "tiled_divide", "flat_divide"))
        t = _rtiler(rng, x, underscore=div == "logical_divide")
        _m_divide(x, t)
        return f"{div}({x.txt}, {_sp(t)})"
    _injective(x)
    if op == "right_inverse":
        return f"right_inverse({x.txt})"
    if op == "left_inverse":
        _left_invertible(x)
        return f"left_inverse({x.txt})"
    if op == "complement":
        _complement(x, _cosize(_filter(x)))
        return f"complement({x.txt})"
    t = _rlayout(rng, _INJECTIVE, 2, 16)
    _blocked(x, t)
    return f"blocked_product({x.txt}, {t.txt})"


def _rswizzle(rng, a=None):
    """A swizzle (rarely one without bits); given a layout ``a``, mostly one whose bits lie within its codomain."""
    b = rng.choice((0, 1, 1, 2, 2, 2, 3, 3, 3, 3)) if rng.random() < 0.1 else rng.choice((1, 2, 2, 3, 3, 3))
    s = b + rng.choice((0, 0, 0, 1, 2, 3)) or 1
    span = max(1, abs(_cosize(a)) - 1).bit_length() if a is not None else 10
    top = span - b - s if a is not None and rng.random() < 0.8 else 4
    return b, rng.randint(0, max(0, min(4, top))), s * (-1 if rng.random() < 0.2 else 1)


def _rpow2(rng, kinds=_INJECTIVE, depth=2, max_size=4096):
    """A layout with power-of-two extents (the ones swizzles act on), nested up to ``depth``."""
    def pow2(t):
        return tuple(pow2(e) for e in t) if isinstance(t, tuple) else rng.choice((1, 2, 2, 4, 4, 8, 8, 16, 32))

    while True:
        shape = pow2(_rshape(rng, depth))
        if _size(shape) <= max_size:
            return _strided(rng, _statics(rng, shape, rng.choice((1, 1, 1, 0.5))), rng.choice(kinds))


def _r_swizzle_inverse(rng):
    """right_inverse / left_inverse of a swizzled layout (the swizzle is carried through the inverse and must stay a
    swizzle), of one at a static offset (kept and negated), or of a swizzle alone; sometimes evaluated."""
    a = _rpow2(rng)
    (b, m, s), inv = _rswizzle(rng, a), rng.choice(("right", "right", "left"))
    if inv == "left":
        _left_invertible(a)
    ri = _right_inverse(a) if inv == "right" else _left_inverse(a)
    r = rng.random()
    if r < 0.05:
        return f"{inv}_inverse(Sw({b}, {m}, {s}))"
    if r < 0.15:
        return f"{inv}_inverse(make_composed_layout(Sw({b}, {m}, {s}), {_sp(_S(rng.randint(1, 64)))}, {a.txt}))"
    if b:
        _make_swizzle(*(_idx(v, ri.s, ri.d) for v in _sw_masks(b, m, s)))
    expr = f"{inv}_inverse(composition(Sw({b}, {m}, {s}), {a.txt}))"
    return f"call({expr}, {_sp(_rint(rng, 0, _size(ri.s) - 1))})" if rng.random() < 0.3 else expr


def _r_swizzle_compose(rng):
    """A layout composed with a swizzle (the swizzle moves to the left through the layout), with a swizzled layout,
    a swizzled layout composed with a swizzle, or two swizzles of one shift."""
    a, c, r = _rpow2(rng, _INJECTIVE + ("bcast",)), _rpow2(rng, _INJECTIVE, 2, 256), rng.random()
    b, m, s = _rswizzle(rng, c if r > 0.85 else a)
    sw = f"Sw({b}, {m}, {s})"
    if r < 0.1:
        b2, m2 = rng.choice((0, 1, 2, 3)), rng.randint(0, 4)
        if abs(s) < b2:
            raise _Skip
        (y1, z1), (y2, z2) = _sw_masks(b, m, s), _sw_masks(b2, m2, s)
        _make_swizzle(_S(y1 ^ y2), _S(z1 ^ z2))
        return f"composition({sw}, Sw({b2}, {m2}, {s}))"
    if r > 0.85:  # the swizzle goes through c, under c's own swizzle
        b2, m2, s2 = _rswizzle(rng)
        _make_swizzle(*(_idx(v, c.s, c.d) for v in _sw_masks(b, m, s)))
        return f"composition(composition(Sw({b2}, {m2}, {s2}), {c.txt}), {sw})"
    _make_swizzle(*(_idx(v, a.s, a.d) for v in _sw_masks(b, m, s)))
    if r < 0.6:
        expr = f"composition({a.txt}, {sw})"
        return f"call({expr}, {_sp(_rint(rng, 0, _size(a.s) - 1))})" if rng.random() < 0.3 else expr
    _compose(a, c)
    return f"composition({a.txt}, composition({sw}, {c.txt}))"


def _r_utility(rng):
    """The layout utilities and integer-tuple predicates on random layouts and shapes (the model keeps with_shape,
    flat_product and the rest to expressions CuTe accepts)."""
    op = rng.choice(("make_layout_like", "make_fragment_like", "nullspace", "max_alignment", "select", "with_shape",
                     "unflatten", "filter_zeros", "flat_product", "idx2crd", "crd2crd", "evenly_divides",
                     "compatible", "congruent", "weakly_congruent", "elem_scale", "round_up", "domain_distribute"))
    a = _rlayout(rng, _ANY, 3, 256)
    s = _wrap(a.s)
    if op in ("make_layout_like", "make_fragment_like", "nullspace"):
        return f"{op}({a.txt})"
    if op == "max_alignment":
        a = _rlayout(rng, _INJECTIVE + ("bcast",), 3, 256)
        return f"max_alignment({a.txt})"
    if op == "select":
        modes = [rng.randint(0, len(s) - 1) for _ in range(rng.randint(1, len(s)))]
        return f"select({a.txt}, {', '.join(map(str, modes))})"
    if op == "with_shape":
        shape = _rshape(rng, 2)
        if _size(shape) != _size(a.s):
            shape = _statics(rng, tuple(_flat(a.s))[::-1], 1) if rng.random() < 0.5 else _size(a.s)
        shape = _statics(rng, shape, rng.choice((1, 1, 0.5)))
        _compose(a, _L(shape, _compact(shape)))
        return f"with_shape({a.txt}, {_sp(shape)})"
    if op == "unflatten":
        fs, fd = tuple(_flat(a.s)), tuple(_flat(a.d))
        return f"unflatten(L({_sp(fs)}, {_sp(fd)}), {_sp(_like(a.s, _S(1)))})"
    if op == "filter_zeros":
        prof = _unflat(a.s, iter(rng.choice((_S(0), _S(1), _S(1))) for _ in _flat(a.s)))
        return f"filter_zeros({a.txt}, {_sp(prof)})"
    if op == "flat_product":
        a = _rlayout(rng, _INJECTIVE, 2, 64)
        t = _rtiler(rng, a, underscore=False)
        _m_product(a, t)
        return f"flat_product({a.txt}, {_sp(t)})"
    if op == "idx2crd":
        st = _compact(a.s, right=rng.random() < 0.5)
        return f"idx2crd({_sp(_rint(rng, 0, _size(a.s) - 1))}, {_sp(a.s)}, {_sp(st)})"
    if op == "crd2crd":
        if not isinstance(a.s, tuple):
            raise _Skip
        dst = tuple(_statics(rng, _size(m), rng.random()) if rng.random() < 0.5 else m for m in a.s)
        return f"crd2crd({_sp(_rcoord(rng, a.s))}, {_sp(a.s)}, {_sp(dst)})"
    if op == "evenly_divides":
        t = _rtiler(rng, a, underscore=False)
        if isinstance(t, _L) or (isinstance(t, tuple) and any(isinstance(e, _L) for e in _flat(t))):
            _m_divide(a, t)
        return f"evenly_divides({_sp(a.s)}, {_sp(t)})"
    if op in ("compatible", "congruent", "weakly_congruent"):
        b = _rlayout(rng, _ANY, 3, 256).s if rng.random() < 0.5 else _statics(rng, _coarse(rng, a.s), 0.7)
        x, y = (a.s, b) if rng.random() < 0.5 else (b, a.s)
        return f"{op}({_sp(x)}, {_sp(y)})"
    if op == "elem_scale":
        return f"elem_scale({_sp(s)}, {_sp(_statics(rng, _refine(rng, s), 0.6))})"
    if op == "round_up":
        fs = tuple(_flat(a.s))
        b = tuple(_rint(rng, 1, 8) for _ in range(rng.randint(1, len(fs))))
        return f"round_up({_sp(fs)}, {_sp(b)})"
    fs = _statics(rng, tuple(_flat(a.s)), 1)
    return f"domain_distribute({_sp(fs)}, {_sp(_S(rng.randint(1, 32)))})"


def _refine(rng, s):
    """A shape whose profile refines ``s`` (a leaf may become a subtree): what elem_scale needs of its scales."""
    if isinstance(s, tuple):
        return tuple(_refine(rng, e) for e in s)
    return _rshape(rng, 1)


def _coarse(rng, s):
    """A shape whose profile coarsens ``s`` (some subtrees folded into their size)."""
    if isinstance(s, tuple) and rng.random() < 0.7:
        return tuple(_coarse(rng, e) for e in s)
    return _size(s)


_BITS = {"uint8_t": 8, "uint16_t": 16, "uint32_t": 32, "uint64_t": 64, "uint128_t": 128, "half_t": 16,
         "float_e2m1_t": 4, "float_e2m3_t": 6}


def _up_ok(a, n):
    """upcast<n> keeps static strides that divide or are multiples of n (layout.hpp's static_assert)."""
    return all(d == 0 or type(d) is not _S or d % n == 0 or n % d == 0 for d in _flat(a.d))


def _up_strides(a, n):
    """The strides upcast<n> gives (static ones stay static; the sign is kept)."""
    def one(d):
        if type(d) is not _S or d == 0:
            return d if type(d) is _S else int(d)
        return _S((1 if d > 0 else -1) * -(-abs(d) // n))
    return tuple(one(d) for d in _flat(a.d))


def _has_one(strides):
    return any(type(d) is _S and d == 1 for d in strides)


def _r_recast(rng):
    """upcast / downcast / recast_layout of a plain layout, a swizzled layout (at a static offset, sometimes) or a
    bare swizzle, kept to what CuTe accepts: static strides divisible either way by an upcast, a static _1 stride
    for a downcast, power-of-two factors for swizzles, static offsets that divide."""
    kind = rng.choice(("layout", "layout", "composed", "composed", "swizzle"))
    fn = rng.choice(("upcast", "upcast", "downcast", "recast_layout"))
    if fn == "recast_layout":
        old, new = rng.sample(sorted(_BITS), 2) if rng.random() < 0.9 else [rng.choice(sorted(_BITS))] * 2
        g = math.gcd(_BITS[old], _BITS[new])
        up, down = _BITS[new] // g, _BITS[old] // g
    else:
        n = rng.choice((2, 2, 4, 8, 16) if kind != "layout" else (2, 2, 3, 4, 8, 16))
        up, down = (n, 1) if fn == "upcast" else (1, n)
    pow2 = all(v & (v - 1) == 0 for v in (up, down))
    if kind == "swizzle":
        b, m, sh = _rswizzle(rng)
        if not pow2 or (up > 1 and down > 1):
            raise _Skip  # CuTe rescales a swizzle by powers of two, and recasts a bare one by one factor only
        x = f"Sw({b}, {m}, {sh})"
    else:
        a = _rlayout(rng, _INJECTIVE + ("bcast", "neg"), 3, 256) if kind == "layout" else _rpow2(rng, _INJECTIVE,
                                                                                                   2, 1024)
        strides = tuple(_flat(a.d))
        if up > 1:
            if not _up_ok(a, up):
                raise _Skip
            strides = _up_strides(a, up)
        if down > 1 and not _has_one(strides):
            raise _Skip  # downcast needs a static _1 stride
        x = a.txt
        if kind == "composed":
            if not pow2:
                raise _Skip
            b, m, sh = _rswizzle(rng, a)
            if rng.random() < 0.3:
                off = rng.choice((8, 16, 32, 64, 128, 256, 24, 48)) * rng.choice((1, 1, 1, -1))
                if off % up:
                    raise _Skip  # a static offset that upcast cannot divide
                x = f"make_composed_layout(Sw({b}, {m}, {sh}), {_sp(_S(off))}, {x})"
            else:
                x = f"composition(Sw({b}, {m}, {sh}), {x})"
    if fn == "recast_layout":
        return f"recast_layout({x}, {old}, {new})"
    return f"{fn}({x}, {up if fn == 'upcast' else down})"


# ---------------------------------------------------------------- tuple algorithms, comparisons, partitions, recast
def _rvals(rng, s, hi=3):
    """Small values (0..hi, ties likely) on the profile of shape ``s``, each static or dynamic."""
    if isinstance(s, tuple):
        return tuple(_rvals(rng, e, hi) for e in s)
    return _rint(rng, 0, hi)


def _nudge(rng, t):
    """``t`` with one leaf changed by one (so comparisons meet ties and near-ties)."""
    leaves = list(_flat(t))
    i = rng.randrange(len(leaves))
    v = leaves[i] + rng.choice((-1, 1)) if leaves[i] > 0 else leaves[i] + 1
    leaves[i] = _S(v) if type(leaves[i]) is _S else v
    return _unflat(t, iter(leaves)) if isinstance(t, tuple) else leaves[0]


def _r_compare(rng):
    """A lex / colex / elem comparison of two coordinates of one profile (sometimes equal or one apart, sometimes
    of different top-level ranks)."""
    s = _rshape(rng, 2)
    a = _rvals(rng, s)
    b = rng.choice((a, _nudge(rng, a), _rvals(rng, s)))
    if isinstance(a, tuple) and rng.random() < 0.2:
        b = b[:rng.randint(0, len(b))] if rng.random() < 0.5 else b + (_rint(rng, 0, 3),)
    fn = rng.choice(("lex", "colex", "elem")) + "_" + rng.choice(("less", "less", "leq", "gtr", "geq"))
    return f"{fn}({_sp(a)}, {_sp(b)})"


def _rflat(rng, static=0.5, lo=0, hi=4):
    return tuple(_rint(rng, lo, hi, static) for _ in range(rng.randint(1, 4)))


def _r_tuple_ops(rng):
    """A tuple algorithm on a random tuple: group / take / insert / remove / replace at valid indices, scans and
    folds, transform_leaf, zip, reverse, repeat_like, any/all/none_of, find."""
    t = _rvals(rng, _rshape(rng, 2), 6)
    t = t if isinstance(t, tuple) else (t,)
    n, op = len(t), rng.choice(("group", "take", "insert", "remove", "replace", "escan", "iscan", "fold",
                                "transform_leaf", "zip", "reverse", "repeat_like", "pred", "find", "layout"))
    x = _sp(_rvals(rng, _rshape(rng, 1)))
    if op in ("group", "take"):
        b = rng.randint(0, n)
        e = rng.choice((-1, rng.randint(b, n)))
        return f"{op}({_sp(t)}, {b}, {e})"
    if op == "layout":
        a = _rlayout(rng, _ANY, 2, 256)
        r = len(_wrap(a.s))
        b = rng.randint(0, r - 1)
        return rng.choice((f"group({a.txt}, {b}, {rng.randint(b, r)})", f"take({a.txt}, {b}, {rng.randint(b + 1, r)})",
                           f"zip({a.txt})" if all(isinstance(m, tuple) and len(m) == len(_wrap(a.s)[0])
                                                  for m in _wrap(a.s)) else f"group({a.txt}, {b}, -1)"))
    if op in ("insert", "replace"):
        return f"{op}({_sp(t)}, {x}, {rng.randint(0, n)})"
    if op == "remove":
        return f"remove({_sp(t)}, {rng.randint(0, n)})"
    if op in ("escan", "iscan", "fold"):
        f = rng.choice(("lambda a, b: a * size(b)", "lambda a, b: a + size(b)"))
        return f"{op}({_sp(t)}, {_sp(_rint(rng, 0, 2))}, {f})"
    if op == "transform_leaf":
        return f"transform_leaf({_sp(t)}, lambda a: a * {_sp(_rint(rng, 1, 3))} + {_sp(_rint(rng, 0, 2))})"
    if op == "zip":
        k = rng.randint(1, 3)
        return f"zip({_sp(tuple(tuple(_rint(rng, 0, 5) for _ in range(k)) for _ in t))})"
    if op == "reverse":
        return f"reverse({_sp(t)})"
    if op == "repeat_like":
        return f"repeat_like({_sp(t)}, {x})"
    flat = _rflat(rng, 1 if op == "find" else 0.5)
    if op == "find":
        return f"find({_sp(flat)}, {_sp(_S(rng.randint(0, 4)))})"
    fn = rng.choice(("any_of", "all_of", "none_of"))
    return f"{fn}({_sp(flat)}, lambda a: elem_less({_sp(_S(rng.randint(0, 4)))}, a))"


def _r_partition(rng):
    """inner_partition / outer_partition of an identity tensor by a static tiler, at a tuple or an integer
    coordinate (a shorter tuple is padded with ``_``)."""
    r = rng.choice((1, 2, 2, 3))
    tile = tuple(_S(rng.choice((1, 2, 4, 8))) for _ in range(rng.randint(1, r)))
    counts = [rng.randint(1, 4) for _ in range(r)]
    extent = [(int(tile[i]) if i < len(tile) else 1) * counts[i] for i in range(r)]
    shape = tuple(_S(v) if rng.random() < 0.5 else v for v in extent)
    which = rng.choice(("inner", "outer"))
    extents = [counts[i] for i in range(r)] if which == "inner" else [int(v) for v in tile]
    if rng.random() < 0.3:
        crd = _rint(rng, 0, math.prod(extents) - 1)
    else:
        k = rng.randint(1, len(extents))
        crd = tuple(_rint(rng, 0, e - 1) for e in extents[:k])
    return f"{which}_partition(make_identity_tensor({_sp(shape)}), {_sp(tile)}, {_sp(crd)})"


_WHOLE_BYTES = ("uint8_t", "uint16_t", "uint32_t", "uint64_t", "uint128_t", "half_t")


def _r_recast_tensor(rng):
    """recast<New>(tensor) of a smem tensor whose layout _r_recast drew (whole-byte types: CuTe's sub-byte pointers
    print as smem_subptr, which tmakit does not mirror)."""
    for _ in range(50):  # most of _r_recast's draws are upcast / downcast or bare swizzles: look for a recast_layout
        try:
            m = re.fullmatch(r"recast_layout\((.*), (\w+), (\w+)\)", _r_recast(rng))
        except _Skip:
            continue
        if m and not m.group(1).startswith("Sw(") and {m.group(2), m.group(3)} <= set(_WHOLE_BYTES):
            return f"recast(make_tensor(make_smem_ptr({m.group(2)}, 1024), {m.group(1)}), {m.group(3)})"
    raise _Skip


_RANDOM_OPS = ((_r_basic, 3), (_r_call, 3), (_r_composition, 6), (_r_complement, 3), (_r_inverse, 3),
               (_r_divide, 6), (_r_product, 6), (_r_swizzle, 5), (_r_common, 2), (_r_print, 1), (_r_misc, 2),
               (_r_identity, 3), (_r_nested, 5))


def _random_cases(seed, count, avoid=(), weighted_ops=_RANDOM_OPS):
    """``count`` distinct expressions drawn with ``random.Random(seed)``; each draw that breaks a precondition of
    CuTe's algebra (see the model above) is dropped and drawn again."""
    rng = random.Random(seed)
    ops = [f for f, w in weighted_ops for _ in range(w)]
    out, seen = [], set(avoid)
    while len(out) < count:
        try:
            e = rng.choice(ops)(rng)
        except _Skip:
            continue
        if e not in seen:
            seen.add(e)
            out.append(e)
    return out



# ---------------------------------------------------------------- general tiled copies (cute/atom/copy_atom.hpp)
_U32 = "Copy_Atom(UniversalCopy(uint32_t), half_t)"
_U128 = "Copy_Atom(UniversalCopy(uint128_t), half_t)"
_LDSM4 = "Copy_Atom(SM75_U32x4_LDSM_N(), half_t)"
_LDSMT = "Copy_Atom(SM75_U16x8_LDSM_T(), half_t)"
_TC1 = f"make_tiled_copy({_U32}, L((_32, _4)), L((_1, _2)))"
_TC2 = f"make_tiled_copy({_U128}, L((_16, _8), (_8, _1)), L((_1, _8)))"
_TC3 = f"make_tiled_copy({_LDSM4}, L((_32, _1)), L((_1, _8)))"
_TC4 = f"make_tiled_copy({_LDSMT}, L((_4, _8), (_8, _1)), L((_8, _1)))"
_MMA = "make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN(), L((_2, _2, _1)))"
_MMAP = "make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN(), L((_2, _2, _1)), (_32, _32, _16))"
_SA = "make_tensor(make_smem_ptr(half_t, 0), L((_64, _32), (_32, _1)))"
_SB = "make_tensor(make_smem_ptr(half_t, 0), L((_32, _32), (_1, _32)))"
TILED_COPY = [
    # Copy_Atom: the op's bit layouts recast to the value type
    *(f"Copy_Atom({op}, {t})" for op, t in (
        ("UniversalCopy(uint32_t)", "half_t"), ("UniversalCopy(uint128_t)", "half_t"), ("UniversalCopy(uint64_t)",
                                                                                         "uint8_t"),
        ("UniversalCopy(uint16_t, uint16_t)", "half_t"), ("UniversalCopy(uint16_t)", "uint32_t"),
        ("AutoVectorizingCopy()", "half_t"), ("DefaultCopy()", "uint8_t"),
        ("AutoVectorizingCopyWithAssumedAlignment(64)", "uint16_t"),
        ("SM80_CP_ASYNC_CACHEALWAYS(uint128_t)", "half_t"), ("SM80_CP_ASYNC_CACHEALWAYS(uint32_t)", "uint8_t"),
        ("SM80_CP_ASYNC_CACHEGLOBAL(uint128_t)", "uint32_t"), ("SM80_CP_ASYNC_CACHEALWAYS(uint64_t, uint64_t)",
                                                                "half_t"),
        ("SM75_U32x1_LDSM_N()", "half_t"), ("SM75_U32x2_LDSM_N()", "half_t"), ("SM75_U32x4_LDSM_N()", "half_t"),
        ("SM75_U32x4_LDSM_N()", "uint32_t"), ("SM75_U32x2_LDSM_N()", "uint8_t"),
        ("SM75_U16x2_LDSM_T()", "half_t"), ("SM75_U16x4_LDSM_T()", "half_t"), ("SM75_U16x8_LDSM_T()", "half_t"),
        ("SM75_U16x2_LDSM_T()", "uint32_t"), ("SM75_U16x8_LDSM_T()", "uint8_t"),
        ("SM90_U32x1_STSM_N()", "half_t"), ("SM90_U32x2_STSM_N()", "half_t"), ("SM90_U32x4_STSM_N()", "half_t"),
        ("SM90_U16x2_STSM_T()", "half_t"), ("SM90_U16x4_STSM_T()", "half_t"), ("SM90_U16x8_STSM_T()", "half_t"),
        ("SM90_U32x4_STSM_N()", "uint32_t"), ("SM90_U16x4_STSM_T()", "uint32_t"))),
    # make_tiled_copy: thread and value layouts -> TV layout and tiler
    _TC1, _TC2, _TC3, _TC4,
    f"make_tiled_copy({_U32}, L((_4, _8, _2)), L((_2, _1, _1)))",
    f"make_tiled_copy({_U32}, L((_8, _16), LayoutRight), L((_2, _2), (_2, _1)))",
    "make_tiled_copy(Copy_Atom(SM80_CP_ASYNC_CACHEALWAYS(uint128_t), half_t), L((_16, _8), (_8, _1)), L((_1, _8)))",
    "make_tiled_copy(Copy_Atom(AutoVectorizingCopy(), half_t), L((_32, _8)), L((_4, _1)))",
    "make_tiled_copy(Copy_Atom(DefaultCopy(), uint8_t), L((_16, _16)))",
    "make_tiled_copy(Copy_Atom(UniversalCopy(uint64_t), uint16_t), L(((_4, _2), _8)), L((_4, _1)))",
    "make_tiled_copy(Copy_Atom(SM90_U32x4_STSM_N(), half_t), L((_8, _4), (_4, _1)), L((_2, _4)))",
    "make_tiled_copy(Copy_Atom(SM75_U32x2_LDSM_N(), half_t), L((_32, _2)), L((_2, _2)))",
    # rejected: too few threads / values for the atom
    f"make_tiled_copy({_LDSM4}, L((_16, _1)), L((_1, _8)))",
    f"make_tiled_copy({_LDSM4}, L((_32, _1)), L((_1, _4)))",
    f"make_tiled_copy({_U32}, L((_32, _4)), L((_1, _3)))",
    f"make_tiled_copy({_U128}, L((_32, _4)), L((_1, _4)))",
    # TV layouts, tile sizes, thread counts
    *(f"get_layoutS_TV({tc})" for tc in (_TC1, _TC2, _TC3, _TC4)),
    *(f"get_layoutD_TV({tc})" for tc in (_TC1, _TC2, _TC3, _TC4)),
    *(f"{f}({tc})" for tc in (_TC1, _TC3, _TC4) for f in ("tile_size", "size")),
    f"tile_size({_TC2}, 0)", f"tile_size({_TC2}, 1)",
    f"get_slice({_TC1}, 5)", f"get_slice({_TC3}, 31)",
    # partitions of identity and smem tensors
    f"partition_S(get_slice({_TC1}, 5), make_identity_tensor((_64, _16)))",
    f"partition_D(get_slice({_TC1}, 77), make_identity_tensor((64, 16)))",
    f"partition_S(get_slice({_TC2}, 9), make_identity_tensor((_32, _64)))",
    f"partition_S(get_slice({_TC2}, 9), make_identity_tensor((_32, _64, _2)))",
    f"partition_S(get_slice({_TC3}, 13), {_SA})",
    f"partition_D(get_slice({_TC3}, 13), make_identity_tensor((_32, _16)))",
    f"partition_S(get_slice({_TC4}, 6), {_SB})",
    f"partition_D(get_slice({_TC4}, 6), make_identity_tensor((_32, _64)))",
    f"partition_S(get_slice({_TC1}, 0), make_identity_tensor(_64))",
    # retile a thread's fragment to the copy's (CPY, CPY_M, CPY_N)
    f"retile_S(get_slice({_TC1}, 0), make_tensor(make_smem_ptr(half_t, 0), L((_2, _2, _2))))",
    f"retile_D(get_slice({_TC2}, 3), make_tensor(make_smem_ptr(half_t, 0), L((_8, _2, _4))))",
    f"retile_D(get_slice({_TC3}, 3), make_tensor(make_smem_ptr(half_t, 0), L(((_2, _2), _2, _4))))",
    f"retile_S(get_slice({_TC4}, 1), make_tensor(make_smem_ptr(half_t, 0), L(_16)))",
    # make_tiled_copy_A/B/C against an SM80 TiledMMA; fragments and retiles as a mainloop uses them
    _MMA, _MMAP,
    f"make_tiled_copy_A({_LDSM4}, {_MMA})",
    f"make_tiled_copy_B(Copy_Atom(SM75_U32x2_LDSM_N(), half_t), {_MMA})",
    f"make_tiled_copy_B(Copy_Atom(SM75_U32x4_LDSM_N(), half_t), {_MMAP})",
    f"make_tiled_copy_B(Copy_Atom(SM75_U16x4_LDSM_T(), half_t), {_MMA})",
    f"make_tiled_copy_A({_U32}, {_MMAP})",
    f"make_tiled_copy_C({_U32}, {_MMA})",
    f"make_tiled_copy_C(Copy_Atom(SM90_U32x2_STSM_N(), half_t), {_MMA})",
    f"make_tiled_copy_C(Copy_Atom(SM90_U32x4_STSM_N(), half_t), {_MMA})",
    f"make_tiled_copy_C_atom(Copy_Atom(SM90_U32x2_STSM_N(), half_t), {_MMA})",
    f"make_tiled_copy_C_atom(Copy_Atom(SM90_U32x4_STSM_N(), half_t), {_MMA})",
    f"make_tiled_copy_C_atom({_U32}, {_MMAP})",
    f"get_layoutS_TV(make_tiled_copy_A({_LDSM4}, {_MMA}))",
    f"get_layoutD_TV(make_tiled_copy_A({_LDSM4}, {_MMA}))",
    f"partition_S(get_slice(make_tiled_copy_A({_LDSM4}, {_MMA}), 37), {_SA})",
    f"layout(partition_fragment_A(get_slice({_MMA}, 37), {_SA}))",
    f"layout(partition_fragment_B(get_slice({_MMAP}, 37), {_SB}))",
    f"layout(partition_fragment_C(get_slice({_MMA}, 37), make_identity_tensor((_64, _32))))",
    f"layout(retile_D(get_slice(make_tiled_copy_A({_LDSM4}, {_MMA}), 37), "
    f"partition_fragment_A(get_slice({_MMA}, 37), {_SA})))",
    f"layout(retile_D(get_slice(make_tiled_copy_B(Copy_Atom(SM75_U32x4_LDSM_N(), half_t), {_MMAP}), 5), "
    f"partition_fragment_B(get_slice({_MMAP}, 5), {_SB})))",
    f"layout(retile_S(get_slice(make_tiled_copy_C({_U32}, {_MMA}), 100), "
    f"partition_fragment_C(get_slice({_MMA}, 100), make_identity_tensor((_64, _32)))))",
    # make_tiled_copy_S / _D: another atom over a TiledCopy's source / destination partition
    f"make_tiled_copy_S(Copy_Atom(UniversalCopy(uint16_t), half_t), {_TC3})",
    f"make_tiled_copy_D({_U32}, {_TC3})",
    f"make_tiled_copy_D(Copy_Atom(UniversalCopy(uint64_t), half_t), make_tiled_copy_A({_LDSM4}, {_MMA}))",
]



# ---------------------------------------------------------------- random tiled copies
_COPY_ATOMS = (("Copy_Atom(UniversalCopy(uint16_t), half_t)", 1), ("Copy_Atom(UniversalCopy(uint32_t), half_t)", 2),
               ("Copy_Atom(UniversalCopy(uint64_t), half_t)", 4), ("Copy_Atom(UniversalCopy(uint128_t), half_t)", 8),
               ("Copy_Atom(UniversalCopy(uint32_t), uint8_t)", 4), ("Copy_Atom(AutoVectorizingCopy(), half_t)", 1),
               ("Copy_Atom(SM80_CP_ASYNC_CACHEALWAYS(uint64_t), half_t)", 4),
               ("Copy_Atom(SM80_CP_ASYNC_CACHEGLOBAL(uint128_t), uint32_t)", 4))


def _rtv_layout(rng, total):
    """A compact static 2-D layout (column- or row-major, sometimes a nested first mode) of ``total`` elements."""
    a = rng.choice([d for d in (1, 2, 4, 8, 16, 32) if total % d == 0])
    b = total // a
    if rng.random() < 0.2 and a >= 4:
        return f"L(((_2, _{a // 2}), _{b}))"
    return f"L((_{a}, _{b}){', LayoutRight' if rng.random() < 0.4 else ''})"


def _r_tiled_copy(rng):
    """make_tiled_copy of a random atom, thread layout (32 to 128 threads) and value layout (usually a multiple of
    the atom's values, so a few are rejected), then one of: its print, its TV layouts, its tile size, a thread's
    partition of an identity / smem tensor a whole number of tiles large, or the retile of that partition."""
    atom, nv = rng.choice(_COPY_ATOMS)
    thr = _rtv_layout(rng, rng.choice((32, 64, 128)))
    vals = nv * rng.choice((1, 1, 2, 4)) if rng.random() < 0.9 else nv * 3 if nv < 8 else 6
    val = _rtv_layout(rng, vals) if vals > 1 else "L((_1, _1))"
    tc = f"make_tiled_copy({atom}, {thr}, {val})"
    op = rng.choice(("print", "tv_s", "tv_d", "tile", "part", "part", "part", "retile"))
    if op == "print":
        return tc
    if op in ("tv_s", "tv_d"):
        return f"get_layout{op[-1].upper()}_TV({tc})"
    if op == "tile":
        return f"tile_size({tc}{rng.choice(('', ', 0', ', 1'))})"
    tm, tn = _tiler_of(thr, val)
    shape = (_S(tm * rng.randint(1, 2)), tn * rng.randint(1, 2) if rng.random() < 0.3 else _S(tn * rng.randint(1, 3)))
    if rng.random() < 0.3:
        shape = (shape[0], _S(tn * rng.randint(1, 3)))
    thread = rng.randrange(32)
    fn = rng.choice(("partition_S", "partition_D"))
    if op == "retile":
        t = f"make_tensor(make_smem_ptr(half_t, 0), L({_sp(shape)}{', LayoutRight' if rng.random() < 0.5 else ''}))"
        return f"layout(retile_D(get_slice({tc}, {thread}), {fn}(get_slice({tc}, {thread}), {t})))"
    return f"{fn}(get_slice({tc}, {thread}), make_identity_tensor({_sp(shape)}))"


def _tiler_of(thr, val):
    """The tile make_tiled_copy gives (raked product of the two layouts' shapes, mode by mode)."""
    def dims(lay):
        m = re.match(r"L\(\(\(_(\d+), _(\d+)\), _(\d+)\)\)", lay)
        if m:
            return int(m.group(1)) * int(m.group(2)), int(m.group(3))
        a, b = re.match(r"L\(\(_(\d+), _(\d+)\)", lay).groups()
        return int(a), int(b)
    (a, b), (c, d) = dims(thr), dims(val)
    return a * c, b * d


_FIXED = BASICS + COALESCE + COMPOSITION + COMPLEMENT + INVERSE + DIVIDE + PRODUCT + SWIZZLE + SWIZZLE_ALGEBRA \
    + TENSOR + BASIS + EXTRA + NEGATIVE + SEEDS + PRINT_LAYOUT + _generated() + _negative_generated()
RANDOM = _random_cases(seed=20240607, count=360, avoid=_FIXED)
# Swizzles through inverses and on the right of a composition (drawn apart, so the cases above stay as they were).
RANDOM_SWIZZLE = _random_cases(seed=20261128, count=120, avoid=_FIXED + RANDOM,
                               weighted_ops=((_r_swizzle_inverse, 3), (_r_swizzle_compose, 2)))
# The layout utilities (hand-written, then drawn apart so the cases above stay as they were).
RANDOM_UTILITY = _random_cases(seed=20270314, count=150, avoid=_FIXED + RANDOM + RANDOM_SWIZZLE + UTILITY,
                               weighted_ops=((_r_utility, 1),))
# upcast / downcast / recast_layout (hand-written, then drawn apart so the cases above stay as they were).
RANDOM_RECAST = _random_cases(seed=20270521, count=120,
                              avoid=_FIXED + RANDOM + RANDOM_SWIZZLE + UTILITY + RANDOM_UTILITY + RECAST,
                              weighted_ops=((_r_recast, 1),))
_NEW_FIXED = COMPARE + TUPLE_ALGO + MODES + TENSOR_EXTRA
# Comparisons, tuple algorithms, partitions and tensor recasts (drawn apart, so the cases above stay as they were).
RANDOM_TUPLE = _random_cases(seed=20270606, count=160,
                             avoid=_FIXED + RANDOM + RANDOM_SWIZZLE + UTILITY + RANDOM_UTILITY + RECAST + RANDOM_RECAST
                             + SLICE_DICE + _NEW_FIXED,
                             weighted_ops=((_r_compare, 3), (_r_tuple_ops, 4), (_r_partition, 2),
                                           (_r_recast_tensor, 2)))
# make_tiled_copy and its partitions (drawn apart, so the cases above stay as they were).
RANDOM_TILED_COPY = _random_cases(seed=20261127, count=70, avoid=TILED_COPY, weighted_ops=((_r_tiled_copy, 1),))
FUNCTIONAL = [  # max/min/gcd/lcm/sum/abs ... (numeric/math.hpp, integral_constant.hpp, int_tuple.hpp) and the
    # function objects of algorithm/functional.hpp; the last ones CuTe rejects at compile time
    "max(_3, _5)",
    "max(_3, 5)",
    "max(3, _5)",
    "max(3, 5)",
    "max(_7)",
    "max(7)",
    "max((_3, (_4, _9)), _2)",
    "max((_3, (4, _9)), _2)",
    "max((_3, (_4, _9)), 2, (_1, _11))",
    "max(_m3, _m5)",
    "max(((_2,),), _1)",
    "min(_3, _5)",
    "min(_3, 5)",
    "min((_3, (_4, _9)), _2)",
    "min((6, (_4, _9)), 7)",
    "min(_m3, 2)",
    "gcd(_12, _18)",
    "gcd(_12, 18)",
    "gcd(12, 18)",
    "gcd(0, 7)",
    "gcd(_0, _0)",
    "gcd((_12, (_18, _8)))",
    "gcd((_12, (18, _8)), _6)",
    "gcd((-4), 6)",
    "gcd(4, (-6))",
    "gcd(_m4, _6)",
    "gcd(_4, _m6)",
    "gcd((-12), (-18))",
    "lcm(_4, _6)",
    "lcm(4, _6)",
    "lcm(4, 6)",
    "lcm(_0, _5)",
    "lcm((-4), 6)",
    "lcm(_m4, _6)",
    "sum((_1, (_2, _3)))",
    "sum((_1, (2, _3)))",
    "sum(_5)",
    "sum(5)",
    "sum((_2,))",
    "sum(())",
    "sum((_1, (), _4))",
    "product((_1, (2, _3)))",
    "product(())",
    "abs(_m3)",
    "abs((-3))",
    "abs(_3)",
    "abs(4)",
    "signum(_m3)",
    "signum(_0)",
    "signum((-7))",
    "signum(9)",
    "has_single_bit(_8)",
    "has_single_bit(_6)",
    "has_single_bit(_0)",
    "has_single_bit(16)",
    "has_single_bit(12)",
    "shiftl(_3, _2)",
    "shiftl(_12, _m2)",
    "shiftl(3, _2)",
    "shiftl(12, (-2))",
    "shiftr(_12, _2)",
    "shiftr(_3, _m2)",
    "shiftr(12, 2)",
    "shiftr(_m12, _2)",
    "safe_div(_12, _4)",
    "safe_div(12, _4)",
    "safe_div(_12, 4)",
    "safe_div(12, 4)",
    "safe_div(_m12, _4)",
    "safe_div(13, _4)",
    "safe_div(_m13, 4)",
    "product_like(((_2, _3), (4, _5)), (_1, _1))",
    "product_like(((_2, _3), ((4, _5), _2)), (_1, (_1, _1)))",
    "product_like((_2, _3), (_1, _1))",
    "call(plus(), _3, _4)",
    "call(plus(), _3, 4)",
    "call(minus(), _3, _4)",
    "call(multiplies(), _3, 4)",
    "call(multiplies(), _0, 4)",
    "call(divides(), _7, _2)",
    "call(divides(), _m7, _2)",
    "call(divides(), (-7), 2)",
    "call(divides(), _0, 5)",
    "call(modulus(), _m7, _2)",
    "call(modulus(), (-7), _2)",
    "call(modulus(), 7, _1)",
    "call(modulus(), _0, 5)",
    "call(max_fn(), _3, _8)",
    "call(max_fn(), _3, 8)",
    "call(min_fn(), _3, _8)",
    "call(abs_fn(), _m8)",
    "call(negate(), _3)",
    "call(negate(), 3)",
    "call(identity(), (_3, 4))",
    "fold((_1, 2, _3), _0, plus())",
    "fold((_1, _2, _3), _0, plus())",
    "fold((_2, _3, _4), _1, multiplies())",
    "transform((_m2, 3, _m4), abs_fn())",
    "transform((_2, 3), (_5, _1), max_fn())",
    "transform((_2, 3), (_5, _1), min_fn())",
    "max(())",
    "min(())",
    "gcd(())",
    "safe_div(_13, _4)",
    "lcm(_0, _0)",
    "abs((_1, _2))",
    "call(max_fn(), _1, (_2, _3))",
    "fold((_2, (_3, _4)), _1, max_fn())",
    "lcm((_2, _3), _4)",
    "max(_1, L(_2))",
]
LATEX = [  # print_latex of MMA_Atom / TiledMMA / TiledCopy (util/print_latex.hpp): CuTe's thread-value TikZ pictures
    "print_latex(MMA_Atom(SM80_16x8x8_F32F16F16F32_TN()))",
    "print_latex(make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN()))",
    "print_latex(make_tiled_mma(SM80_16x8x8_F32F16F16F32_TN(), L((_2, _1, _1))))",
    "print_latex(make_tiled_mma(SM80_16x8x8_F16F16F16F16_TN(), L((_1, _2, _1)), (_16, L((_8, _2), (_2, _1)), _8)))",
    f"print_latex(make_tiled_copy({_U32}, L((_4, _2)), L((_1, _2))))",
    "print_latex(make_tiled_copy(Copy_Atom(SM90_U32x2_STSM_N(), half_t), L((_32, _1)), L((_1, _4))))",
    f"print_latex(make_tiled_copy_B(Copy_Atom(SM75_U16x4_LDSM_T(), half_t), {_MMA}))",
    "print_latex(SM80_16x8x8_F16F16F16F16_TN())",  # a bare op: no overload (rejected by both)
]
_ST = "make_tensor(make_smem_ptr(half_t, 256), L((_8, _4)))"
TENSOR_ALGEBRA = [  # tensor_impl.hpp: composition / compose / tile / coalesce / filter of a tensor, and
    # max_common_vector / max_common_layout / max_alignment (bits) of tensors; CuTe has no logical_product of one
    "composition(make_identity_tensor((_4, _8)), L((_8, _4), (_4, _1)))",
    "composition(make_identity_tensor((_8, 16)), (_4, _8))",
    f"composition({_ST}, L(_8, _2))",
    "composition(make_tensor(make_smem_ptr(half_t, 256), composition(Sw(3, 3, 3), L((_8, _64), (_64, _1)))), "
    "(_4, _16))",
    f"compose({_ST}, _4, _2)",
    "tile(make_identity_tensor((_8, _8)), _2, _4)",
    "logical_divide(make_identity_tensor((_8, 8)), (_2, _4))",
    f"logical_divide({_ST}, L(_4, _2))",
    f"coalesce({_ST})",
    "coalesce(make_tensor(make_smem_ptr(half_t, 256), L((_8, (_2, _2)), (_1, (_8, _16)))), (_1, _1))",
    "filter(make_tensor(make_smem_ptr(half_t, 256), L((_8, _1, _4), (_1, _0, _8))))",
    "filter_zeros(make_tensor(make_smem_ptr(half_t, 256), L((_8, _4), (_0, _1))))",
    f"max_common_vector({_ST}, make_tensor(make_smem_ptr(half_t, 512), L((_8, _4))))",
    f"max_common_vector({_ST}, make_tensor(make_smem_ptr(uint16_t, 512), L((_8, _4))))",
    "max_common_vector(make_identity_tensor((_8, _4)), make_identity_tensor((_8, _4)))",
    f"max_common_layout({_ST}, make_tensor(make_smem_ptr(half_t, 0), L((_8, _4), (_1, _16))))",
    "max_common_layout(make_identity_tensor((_8, _4)), make_identity_tensor((_8, _4)))",
    f"max_alignment({_ST})",
    "max_alignment(make_tensor(make_smem_ptr(half_t, 256), composition(Sw(3, 3, 3), L((_8, _64), (_64, _1)))))",
    "print_tensor(composition(make_identity_tensor((_4, _4)), L((_2, _2), (_2, _1))))",
    "logical_product(make_identity_tensor((_4, _4)), L(_2))",
]
LATEX_TV = [  # print_latex_tv (util/print_latex.hpp): a (thread, value) -> (m, n) map over an M x N tile
    "print_latex_tv(composition(make_identity_tensor((_4, _8)), L((_8, _4), (_4, _1))), (_4, _8))",
    "print_latex_tv(composition(make_identity_tensor((_4, _4)), L((_4, _2), (_1, _0))), (_4, _4))",
    "print_latex_tv(L((_2, _4), (E(1), E(0))), L((_4, _2)))",
    "print_latex_tv(composition(make_identity_tensor((_4, _4)), L((_2, _2, _4))), (_4, _4))",  # rank 3: rejected
]
CASES = _FIXED + RANDOM + RANDOM_SWIZZLE + UTILITY + RANDOM_UTILITY + RECAST + RANDOM_RECAST + SLICE_DICE \
    + _NEW_FIXED + RANDOM_TUPLE + TILED_COPY + RANDOM_TILED_COPY + FUNCTIONAL + LATEX \
    + TENSOR_ALGEBRA + LATEX_TV
