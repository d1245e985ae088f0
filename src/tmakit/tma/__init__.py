"""The host half of TMA: descriptors, validation, copy ops, make_tma_copy, partitioning."""

from .tensormap import DataType, Interleave, L2Promotion, OobFill, SwizzleMode, TensorMap

__all__ = ["DataType", "Interleave", "L2Promotion", "OobFill", "SwizzleMode", "TensorMap"]
