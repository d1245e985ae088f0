// tmakit/fastdiv.cuh -- unsigned division by a runtime-constant divisor as a multiply-high and a shift.
//
// For a divisor d >= 2 the host passes mul = ceil(2^(31+p) / d) and shr = p - 1 with p = ceil(log2 d); then
// n / d == umulhi(n, mul) >> shr for every n < 2^31 (mul * d - 2^(31+p) < d <= 2^p, so the error term n * (mul * d -
// 2^(31+p)) / 2^(31+p) stays under 1/d). d = 1 is mul = 0. tmakit.kernels.fastdiv.fast_divisor computes the pair.
#pragma once
#include "types.cuh"

namespace tmakit {

struct FastDiv {
  u32 mul;  // 0: divide by 1
  u32 shr;
};

// n / d for n < 2^31. PTX: mul.hi.u32 + shr.b32.
__device__ __forceinline__ u32 fast_div(u32 n, FastDiv d) { return d.mul ? (__umulhi(n, d.mul) >> d.shr) : n; }

}  // namespace tmakit
