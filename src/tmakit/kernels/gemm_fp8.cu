// gemm_fp8.cu -- the scaled FP8 GEMM: gemm.cu's kernel compiled as tmakit_gemm_scaled (fp8 wgmma, per-tensor,
// row-wise or block-wise scales, optional bias; see gemm.cu and gemm_scale.cuh). Host side: gemm_fp8.py.
#define TMAKIT_GEMM_SCALED 1
#include "gemm.cu"
