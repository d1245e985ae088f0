"""Blackwell (SM100) host algebra, faithful to CuTe: UMMA atoms, TiledMMA partitions, smem descriptors, TMEM
tensors and copies, 2-SM TMA atoms. Depends on tmakit.layout and tmakit.tma only (see docs/BLACKWELL.md)."""

from . import latex  # noqa: F401 - registers print_latex of atoms, tiled MMAs and tiled copies
from .atoms import (
    SM100_MMA_F8F6F4_SS,
    SM100_MMA_F8F6F4_TS,
    SM100_MMA_F16BF16_SS,
    SM100_MMA_F16BF16_TS,
    SM100_MMA_TF32_SS,
    SM100_MMA_TF32_TS,
    MMA_Atom,
    MmaOp,
    SM100_MMA_F8F6F4_2x1SM_SS,
    SM100_MMA_F8F6F4_2x1SM_TS,
    SM100_MMA_F16BF16_2x1SM_SS,
    SM100_MMA_F16BF16_2x1SM_TS,
    SM100_MMA_TF32_2x1SM_SS,
    SM100_MMA_TF32_2x1SM_TS,
)
from .copy_ops import *  # noqa: F401,F403 - UniversalCopy, SM80_CP_ASYNC_*, SM75_*_LDSM_*, SM90_*_STSM_* ...
from .copy_ops import COPY_OPS, CopyError, GeneralCopyOp
from .errors import MmaError
from .gmma import GMMA
from .gmma_desc import GmmaDescriptor
from .mma_sm80 import *  # noqa: F401,F403 - SM80_16x8x{8,16}_*_TN
from .mma_sm80 import SM80_MMA_OPS, Sm80MmaOp
from .mma_sm90 import *  # noqa: F401,F403 - SM90_64xNxK_* warpgroup MMAs (GMMA)
from .mma_sm90 import GMMA_OPS, Sm90MmaOp
from .numeric import (
    NumericType,
    bfloat16_t,
    float_e2m1_t,
    float_e2m3_t,
    float_e3m2_t,
    float_e4m3_t,
    float_e5m2_t,
    half_t,
    sizeof_bits,
    tfloat32_t,
    uint128_t,
)
from .pointers import SmemPtr, SmemPtrFlag, TmemPtr, make_smem_ptr, make_tmem_ptr
from .recast import downcast, recast_layout, upcast
from .tiled_copy import (
    Copy_Atom,
    TiledCopyError,
    make_cotiled_copy,
    make_layout_tv,
    make_tiled_copy,
    make_tiled_copy_A,
    make_tiled_copy_B,
    make_tiled_copy_C,
    make_tiled_copy_C_atom,
    make_tiled_copy_D,
    make_tiled_copy_impl,
    make_tiled_copy_S,
    tile_size,
)
from .tiled_mma import (
    ThrMMA,
    TiledMMA,
    make_tiled_mma,
    partition_fragment_C,
    partition_shape_A,
    partition_shape_B,
    partition_shape_C,
    thr_size,
    tile_shape,
)
from .tma_sm100 import (
    SM100_TMA_2SM_LOAD,
    SM100_TMA_2SM_LOAD_MULTICAST,
    Sm100TmaAtom,
    Sm100TmaOp,
    make_tma_atom_A_sm100,
    make_tma_atom_B_sm100,
)
from .tmem_copy import make_tmem_copy
from .tmem_ops import *  # noqa: F401,F403 - SM100_TMEM_LOAD_* / SM100_TMEM_STORE_*
from .tmem_ops import TMEM_OPS, TmemCopyOp
from .umma import UMMA
from .umma_desc import DescriptorIterator, SmemDescriptor

__all__ = [
    "MMA_Atom", "MmaOp", "MmaError", "ThrMMA", "TiledMMA", "UMMA", "DescriptorIterator", "SmemDescriptor",
    "SM100_MMA_F16BF16_SS", "SM100_MMA_F16BF16_TS", "SM100_MMA_F16BF16_2x1SM_SS", "SM100_MMA_F16BF16_2x1SM_TS",
    "SM100_MMA_TF32_SS", "SM100_MMA_TF32_TS", "SM100_MMA_TF32_2x1SM_SS", "SM100_MMA_TF32_2x1SM_TS",
    "SM100_MMA_F8F6F4_SS", "SM100_MMA_F8F6F4_TS", "SM100_MMA_F8F6F4_2x1SM_SS", "SM100_MMA_F8F6F4_2x1SM_TS",
    "NumericType", "half_t", "bfloat16_t", "tfloat32_t", "float_e4m3_t", "float_e5m2_t", "float_e2m3_t",
    "float_e3m2_t", "float_e2m1_t", "sizeof_bits", "uint128_t",
    "SmemPtr", "SmemPtrFlag", "TmemPtr", "make_smem_ptr", "make_tmem_ptr", "upcast", "downcast", "recast_layout",
    "make_tiled_mma", "tile_size", "tile_shape", "thr_size", "partition_shape_A", "partition_shape_B",
    "partition_shape_C", "partition_fragment_C",
    "Copy_Atom", "TmemCopyOp", "make_tmem_copy", "make_cotiled_copy", *TMEM_OPS,
    "GeneralCopyOp", "CopyError", "TiledCopyError", "Sm80MmaOp", *COPY_OPS, *SM80_MMA_OPS,
    "make_tiled_copy", "make_tiled_copy_impl", "make_layout_tv", "make_tiled_copy_A", "make_tiled_copy_B",
    "make_tiled_copy_C", "make_tiled_copy_C_atom", "make_tiled_copy_S", "make_tiled_copy_D",
    "SM100_TMA_2SM_LOAD", "SM100_TMA_2SM_LOAD_MULTICAST", "Sm100TmaOp", "Sm100TmaAtom", "make_tma_atom_A_sm100",
    "make_tma_atom_B_sm100",
    "GMMA", "GmmaDescriptor", "Sm90MmaOp", *GMMA_OPS,
]
