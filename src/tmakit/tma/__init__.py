"""The host half of TMA: descriptors, validation, copy ops, make_tma_copy, partitioning."""

from .bulk_copy import (
    SM90_BULK_COPY_AUTO,
    SM90_BULK_COPY_G2S,
    SM90_BULK_COPY_S2G,
    BulkAtom,
    BulkCopyAuto,
    BulkCopyOp,
    BulkCopyPlan,
    bulk_copy_plan,
)
from .copy_ops import (
    SM90_TMA_LOAD,
    SM90_TMA_LOAD_MULTICAST,
    SM90_TMA_REDUCE_ADD,
    SM90_TMA_REDUCE_AND,
    SM90_TMA_REDUCE_DEC,
    SM90_TMA_REDUCE_INC,
    SM90_TMA_REDUCE_MAX,
    SM90_TMA_REDUCE_MIN,
    SM90_TMA_REDUCE_OR,
    SM90_TMA_REDUCE_XOR,
    SM90_TMA_STORE,
    CopyOp,
)
from .dtypes import numpy_dtype, tma_dtype
from .errors import TmaDescriptorError, TmaError
from .gmem import GmemPtr, make_gmem_ptr
from .make_im2col_tma_copy import (
    SM90_TMA_LOAD_IM2COL,
    SM90_TMA_LOAD_IM2COL_MULTICAST,
    SM90_TMA_STORE_IM2COL,
    Im2colTiledCopy,
    make_im2col_tma_copy,
)
from .make_tma_atom_im2col import Im2colTmaAtom, make_tma_atom_im2col
from .make_tma_copy import make_tma_atom, make_tma_copy
from .make_tma_copy_sm90 import make_tma_copy_A_sm90, make_tma_copy_B_sm90, make_tma_copy_C_sm90
from .multicast import create_tma_multicast_mask
from .reduce_rules import REDUCE_DTYPES, check_reduce
from .tensormap import DataType, Interleave, L2Promotion, OobFill, SwizzleMode, TensorMap
from .tensormap_rules import DOC_NE_HW_RULES
from .tiled_copy import ThrCopy, TiledCopy, TmaAtom, TmaCall
from .tma_partition import tma_partition

__all__ = ["DataType", "Interleave", "L2Promotion", "OobFill", "SwizzleMode", "TensorMap",
           "TmaError", "TmaDescriptorError", "tma_dtype", "numpy_dtype", "REDUCE_DTYPES", "check_reduce",
           "DOC_NE_HW_RULES", "CopyOp", "SM90_TMA_LOAD", "SM90_TMA_LOAD_MULTICAST", "SM90_TMA_STORE",
           "SM90_TMA_REDUCE_ADD", "SM90_TMA_REDUCE_MIN", "SM90_TMA_REDUCE_MAX", "SM90_TMA_REDUCE_INC",
           "SM90_TMA_REDUCE_DEC", "SM90_TMA_REDUCE_AND", "SM90_TMA_REDUCE_OR", "SM90_TMA_REDUCE_XOR",
           "GmemPtr", "make_gmem_ptr", "make_tma_copy", "make_tma_atom", "create_tma_multicast_mask",
           "TiledCopy", "ThrCopy", "TmaCall", "tma_partition"]
__all__ += ["SM90_BULK_COPY_AUTO", "SM90_BULK_COPY_G2S", "SM90_BULK_COPY_S2G", "BulkAtom", "BulkCopyAuto", "BulkCopyOp",
            "BulkCopyPlan", "bulk_copy_plan"]
__all__ += ["make_tma_copy_A_sm90", "make_tma_copy_B_sm90", "make_tma_copy_C_sm90", "TmaAtom"]
__all__ += ["make_im2col_tma_copy", "SM90_TMA_LOAD_IM2COL", "SM90_TMA_LOAD_IM2COL_MULTICAST", "SM90_TMA_STORE_IM2COL",
            "Im2colTiledCopy"]
__all__ += ["make_tma_atom_im2col", "Im2colTmaAtom"]
