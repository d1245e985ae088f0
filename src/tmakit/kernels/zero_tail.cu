// zero_tail.cu -- zero the rows [end, rows) of a matrix of `rows` rows of `row_bytes` bytes, `pitch` bytes apart,
// where end = offs[last] is read on the device (clamped to [0, rows]): the gradient rows past the last group offset
// of tmakit.ops.grouped_mm, without a host synchronisation. The grid cuts the rows into equal runs (the host picks
// the run length: zero_tail.py); a CTA returns at once where its run lies before end, so the usual case (end = rows)
// costs one launch of CTAs that exit.
// PTX: st.global.v4.b32 (16-byte aligned rows) or st.global.b8.
#include <tmakit/types.cuh>

using namespace tmakit;

extern "C" __global__ void __launch_bounds__(256)
tmakit_zero_tail(u8* __restrict__ base, long long pitch, int rows, int row_bytes, const int* __restrict__ offs,
                 int last) {
  const int end = max(0, min(__ldg(offs + last), rows));
  const int run = (rows + gridDim.x - 1) / gridDim.x;
  const int r0 = blockIdx.x * run;
  const int r1 = min(r0 + run, rows);
  if (r1 <= end) return;
  const bool vec = ((reinterpret_cast<unsigned long long>(base) | (unsigned long long)pitch | row_bytes) & 15) == 0;
  for (int r = max(r0, end); r < r1; ++r) {
    u8* p = base + r * pitch;
    if (vec) {
      for (int i = threadIdx.x; i < row_bytes / 16; i += blockDim.x)
        asm volatile("st.global.v4.b32 [%0], {%1, %1, %1, %1};" ::"l"(p + 16 * i), "r"(0) : "memory");
    } else {
      for (int i = threadIdx.x; i < row_bytes; i += blockDim.x) p[i] = 0;
    }
  }
}
