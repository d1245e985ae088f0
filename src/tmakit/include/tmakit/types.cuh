// tmakit/types.cuh -- basic types and address helpers shared by the tmakit device headers.
// Needs no CUDA header: compiles under NVRTC with nothing but the package's include/ dir.
#pragma once

#ifndef TMAKIT_DEVICE
#define TMAKIT_DEVICE __device__ __forceinline__
#endif

namespace tmakit {

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef int i32;
typedef long long i64;

// The 128-byte CUtensorMap, as a kernel parameter: pass it as `const __grid_constant__ TmaDesc`.
struct alignas(64) TmaDesc {
  unsigned long long w[16];
};
static_assert(sizeof(TmaDesc) == 128, "CUtensorMap is 128 bytes");

// 32-bit shared-window address of a generic pointer to shared memory.
// PTX: cvta.to.shared.u64 (the __cvta_generic_to_shared builtin), truncated to 32 bits.
TMAKIT_DEVICE u32 smem_u32(const void* p) { return static_cast<u32>(__cvta_generic_to_shared(p)); }

// 64-bit generic address of a tensor map (param, const or global space all work as generic addresses).
TMAKIT_DEVICE u64 desc_u64(const TmaDesc* d) { return reinterpret_cast<u64>(d); }

// Thread index helpers (linear within the CTA).
TMAKIT_DEVICE u32 thread_linear() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
TMAKIT_DEVICE u32 warp_id() { return thread_linear() / 32; }
TMAKIT_DEVICE u32 lane_id() {
  u32 r;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));  // PTX: mov.u32 %laneid
  return r;
}

// PTX: elect.sync -- true in exactly one active lane of the warp (sm_90).
TMAKIT_DEVICE bool elect_one(u32 membermask = 0xffffffffu) {
  u32 pred;
  asm volatile(
      "{\n\t.reg .pred p;\n\t.reg .b32 r;\n\t"
      "elect.sync r|p, %1;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(pred) : "r"(membermask));
  return pred != 0;
}

}  // namespace tmakit
