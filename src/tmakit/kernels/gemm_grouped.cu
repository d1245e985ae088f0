// gemm_grouped.cu -- the grouped (MoE) GEMM: gemm.cu's kernel compiled as tmakit_gemm_grouped (rows of A and C
// grouped by an offsets array, one B matrix per group; see gemm.cu's GroupList). Host side: gemm_grouped.py.
#define TMAKIT_GEMM_GROUPED 1
#include "gemm.cu"
