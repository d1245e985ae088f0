// tmakit/smem.cuh -- plain shared-memory loads and stores by 32-bit shared address (the kernels' staging traffic).
#pragma once
#include "types.cuh"

namespace tmakit {

// PTX: ld.shared.v4.u32 {w0, w1, w2, w3}, [a];
TMAKIT_DEVICE void lds16(u32 a, u32 (&w)[4]) {
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "r"(a));
}
// PTX: st.shared.v4.u32 [a], {w0, w1, w2, w3};
TMAKIT_DEVICE void sts16(u32 a, const u32 (&w)[4]) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(a), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3])
               : "memory");
}
// PTX: ld.shared.b32 v, [a];
TMAKIT_DEVICE u32 lds4(u32 a) {
  u32 v;
  asm volatile("ld.shared.b32 %0, [%1];" : "=r"(v) : "r"(a) : "memory");
  return v;
}
// PTX: st.shared.b32 [a], v;
TMAKIT_DEVICE void sts4(u32 a, u32 v) { asm volatile("st.shared.b32 [%0], %1;" ::"r"(a), "r"(v) : "memory"); }

}  // namespace tmakit
