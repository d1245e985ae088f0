// reduce.cu -- tmakit.ops.reduce_into: TMA load of src boxes, then cp.reduce.async.bulk.tensor into dst
// (add/min/max/inc/dec/and/or/xor, chosen by StreamParams::op; the element type comes from the dst map).
#include "stream.cuh"

using namespace tmakit_kernels;

extern "C" __global__ void __launch_bounds__(32, 1)
tmakit_reduce(const __grid_constant__ TmaDesc src, const __grid_constant__ TmaDesc dst,
              const __grid_constant__ TmaDesc tail_src, const __grid_constant__ TmaDesc tail_dst,
              const StreamParams p) {
  extern __shared__ __align__(1024) u8 dyn[];
  __shared__ __align__(8) u64 full[TMAKIT_STREAM_MAX_STAGES];
#if TMAKIT_STREAM_ONE
  stream_one(&src, &dst, &tail_src, &tail_dst, p, dyn, full);
#else
  stream_run(&src, &dst, &tail_src, &tail_dst, p, dyn, full);
#endif
}
