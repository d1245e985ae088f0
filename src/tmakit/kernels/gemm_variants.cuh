// gemm_variants.cuh -- the compile-time switches of gemm.cu: which kernel it compiles (the dense bf16/fp16 kernel
// tmakit_gemm by default) and the diagnostic builds the benchmarks time (never set by the ops).
#pragma once

#ifndef TMAKIT_GEMM_SCALED  // 1: compile the scaled (fp8) kernel tmakit_gemm_scaled instead (gemm_fp8.cu)
#define TMAKIT_GEMM_SCALED 0
#endif
#ifndef TMAKIT_GEMM_GROUPED  // 1: compile the grouped (MoE) kernel tmakit_gemm_grouped instead (gemm_grouped.cu)
#define TMAKIT_GEMM_GROUPED 0
#endif
#ifndef TMAKIT_GEMM_PTRARRAY  // 1: compile the ptr-array kernel tmakit_gemm_ptr_array instead (gemm_ptr_array.cu)
#define TMAKIT_GEMM_PTRARRAY 0
#endif
#ifndef TMAKIT_GEMM_TRACE  // diagnostic for tools/bench/gemm_trace.py only: CTA 0's consumer timeline (mainloop)
#define TMAKIT_GEMM_TRACE 0
#endif
#ifndef TMAKIT_GEMM_NO_MMA  // diagnostic for benchmarks only: consumers skip the wgmmas (times the TMA pipeline alone)
#define TMAKIT_GEMM_NO_MMA 0
#endif
#ifndef TMAKIT_GEMM_NO_EPI  // diagnostic for tools/bench/fp8_epilogue_share.py: whole-tile units skip the epilogue
#define TMAKIT_GEMM_NO_EPI 0
#endif
