// gemm_ptr_array.cu -- the ptr-array grouped GEMM: gemm.cu's kernel compiled as tmakit_gemm_ptr_array (problems
// with their own shapes and pointers; per-CTA tensor maps rewritten on the device, see gemm_group.cuh's switch_map).
// Host side: gemm_ptr_array.py.
#define TMAKIT_GEMM_PTRARRAY 1
#include "gemm.cu"
