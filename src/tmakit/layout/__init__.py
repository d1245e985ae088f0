"""CuTe's layout algebra in Python (pure Python + numpy): integers, layouts, swizzles, coordinate tensors."""

from .algebra import (
    blocked_product,
    coalesce,
    complement,
    composition,
    filter,
    filter_zeros,
    flat_divide,
    flat_product,
    left_inverse,
    logical_divide,
    logical_product,
    make_identity_layout,
    max_common_layout,
    max_common_vector,
    raked_product,
    right_inverse,
    tile_to_shape,
    tile_unzip,
    tiled_divide,
    tiled_product,
    zipped_divide,
    zipped_product,
)
from .arith_tuple import ArithTuple, ArithTupleIterator, E, ScaledBasis, basis_get, basis_value, make_basis_like
from .compare import *  # noqa: F401,F403 - lex_less ... elem_geq
from .compare import __all__ as _compare_all
from .composed import ComposedLayout, make_composed_layout
from .functional import *  # noqa: F401,F403 - gcd, lcm, signum ... plus, multiplies ... (numeric/math.hpp ...)
from .functional import __all__ as _functional_all
from .functional import abs, max, min, sum  # noqa: F401,A004 - CuTe's names; attributes only, not in __all__
from .int_tuple import (
    LayoutError,
    compatible,
    congruent,
    crd2crd,
    crd2idx,
    elem_scale,
    idx2crd,
    inner_product,
    make_int_tuple,
    prefix_product,
    product,
    product_each,
    round_up,
    shape_div,
    weakly_congruent,
)
from .int_tuple import ceil_div_tuple as ceil_div  # CuTe's ceil_div: integers, and shapes mode by mode
from .int_tuple import depth as _tuple_depth
from .int_tuple import flatten as _tuple_flatten
from .int_tuple import rank as _tuple_rank
from .integer import Int, Underscore, _, is_static, static
from .layout import (
    Layout,
    LayoutLeft,
    LayoutRight,
    coshape,
    cosize,
    get,
    make_coord,
    make_layout,
    make_ordered_layout,
    make_shape,
    make_stride,
    shape,
    size,
    stride,
)
from .mode_ops import append, group, group_modes, prepend, replace, take, zip  # group_modes: algebra's
from .printing import (
    format_latex,
    format_layout,
    format_tensor,
    print_latex,
    print_layout,
    print_tensor,
    tikz_color_bwx8,
    tikz_color_tv,
    tikz_color_white,
)
from .swizzle import Swizzle
from .tensor import (
    ArrayPtr,
    Tensor,
    inner_partition,
    local_partition,
    local_tile,
    make_coord_tensor,
    make_counting_tensor,
    make_identity_tensor,
    make_tensor,
    outer_partition,
)
from .tensor_algorithms import axpby, clear, fill, for_each_tensor, is_tensor, transform_tensor
from .tuple_algorithms import (
    all_of,
    any_of,
    apply,
    back,
    escan,
    filter_tuple,
    find,
    find_if,
    flatten_to_tuple,
    fold,
    fold_first,
    for_each_leaf,
    front,
    insert,
    iscan,
    none_of,
    remove,
    repeat,
    repeat_like,
    replace_back,
    replace_front,
    reverse,
    transform_apply,
    transform_leaf,
    tuple_cat,
    tuple_repeat,
    unwrap,
    wrap,
    zip2_by,
)
from .tuple_algorithms import for_each as _tuple_for_each
from .tuple_algorithms import transform as _tuple_transform
from .utility import (
    dice,
    domain_distribute,
    domain_offset,
    evenly_divides,
    get_nonswizzle_portion,
    get_swizzle,
    get_swizzle_portion,
    make_fragment_like,
    make_layout_like,
    make_tensor_like,
    max_alignment,
    nullspace,
    select,
    slice,
    transform_layout,
    unflatten,
    with_shape,
)


def _shape_of(x):
    return x.shape if hasattr(x, "shape") and not isinstance(x, tuple) else x


def rank(x, *modes):
    """Number of top-level modes of a layout, tensor or tuple (static, as in CuTe)."""
    return Int(_tuple_rank(_shape_of(get(x, *modes) if modes else x)))


def depth(x, *modes):
    """Nesting depth of a layout, tensor or tuple (static, as in CuTe): an integer has depth ``_0``."""
    return Int(_tuple_depth(_shape_of(get(x, *modes) if modes else x)))


def transform(*args):
    """CuTe's ``transform``: of tuples (``tuple_algorithms.transform``: the mapped tuple) or, when the first argument
    is a tensor, the tensor algorithm that writes ``op`` of each element in place or into an output tensor."""
    return transform_tensor(*args) if args and is_tensor(args[0]) else _tuple_transform(*args)


def for_each(t, f):
    """CuTe's ``for_each``: ``f`` on each top-level mode of a tuple, or on each element of a tensor."""
    return for_each_tensor(t, f) if is_tensor(t) else _tuple_for_each(t, f)


def flatten(x):
    """A layout, composed layout or tensor with a flat shape and stride, or the leaves of a tuple; an integer is
    returned as it is, as CuTe's ``flatten`` does (``flatten_to_tuple`` gives a 1-tuple)."""
    if isinstance(x, Layout):
        return Layout(_flat_unwrap(x.shape), _flat_unwrap(x.stride))
    if isinstance(x, ComposedLayout):
        return ComposedLayout(x.layout_a, x.offset, flatten(x.layout_b))
    if isinstance(x, Tensor):
        return Tensor(x.iterator, flatten(x.layout))
    return _tuple_flatten(x) if isinstance(x, tuple) else x


def _flat_unwrap(t):
    return _tuple_flatten(t) if isinstance(t, tuple) else t


__all__ = [
    "Int", "Underscore", "_", "ceil_div", "is_static", "static", "LayoutError", "congruent", "compatible",
    "crd2idx", "idx2crd", "depth", "flatten", "prefix_product", "product", "shape_div", "rank",
    "Layout", "LayoutLeft", "LayoutRight", "coshape", "cosize", "get", "make_coord", "make_layout",
    "make_ordered_layout", "make_shape", "make_stride", "shape", "size", "stride", "take",
    "append", "blocked_product", "coalesce", "complement", "composition", "filter", "filter_zeros", "flat_divide",
    "group_modes", "left_inverse", "logical_divide", "logical_product", "make_identity_layout", "max_common_layout",
    "max_common_vector", "prepend", "raked_product", "right_inverse", "tile_to_shape", "tiled_divide",
    "tiled_product", "zipped_divide", "zipped_product",
    "ArithTuple", "ArithTupleIterator", "E", "ScaledBasis", "make_basis_like",
    "ComposedLayout", "Swizzle", "make_composed_layout",
    "ArrayPtr", "Tensor", "local_partition", "local_tile", "make_coord_tensor", "make_identity_tensor", "make_tensor",
    "format_layout", "format_tensor", "print_layout", "print_tensor",
    "crd2crd", "elem_scale", "evenly_divides", "inner_product", "product_each", "round_up", "weakly_congruent",
    "flat_product", "tile_unzip", "domain_distribute", "get_nonswizzle_portion", "get_swizzle_portion",
    "make_fragment_like", "make_layout_like", "max_alignment", "nullspace", "select", "transform_layout", "unflatten",
    "with_shape", "make_tensor_like", "slice", "dice", "domain_offset",
    *_compare_all,
    "clear", "fill", "axpby",
    "apply", "transform_apply", "transform", "transform_leaf", "for_each", "for_each_leaf", "find_if", "find",
    "any_of", "all_of", "none_of", "filter_tuple", "fold", "fold_first", "front", "back", "wrap", "unwrap",
    "flatten_to_tuple", "tuple_cat", "insert", "remove", "replace", "replace_front", "replace_back", "tuple_repeat",
    "repeat", "repeat_like", "iscan", "escan", "zip", "zip2_by", "reverse", "group", "make_int_tuple",
    "inner_partition", "outer_partition", "make_counting_tensor", "basis_value", "basis_get", "get_swizzle",
    "format_latex", "print_latex", "tikz_color_bwx8", "tikz_color_white", "tikz_color_tv",
    *_functional_all,
]
