"""The host half of TMA: descriptors, validation, copy ops, make_tma_copy, partitioning."""

from .dtypes import numpy_dtype, tma_dtype
from .errors import TmaDescriptorError, TmaError
from .reduce_rules import REDUCE_DTYPES, check_reduce
from .tensormap import DataType, Interleave, L2Promotion, OobFill, SwizzleMode, TensorMap
from .tensormap_rules import DOC_NE_HW_RULES

__all__ = ["DataType", "Interleave", "L2Promotion", "OobFill", "SwizzleMode", "TensorMap",
           "TmaError", "TmaDescriptorError", "tma_dtype", "numpy_dtype", "REDUCE_DTYPES", "check_reduce",
           "DOC_NE_HW_RULES"]
