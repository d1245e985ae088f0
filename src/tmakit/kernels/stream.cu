// stream.cu -- the streaming TMA kernel of tmakit.ops.copy and of reduce_into's store-reduce path (see stream.cuh):
// TMA loads of src boxes, then a TMA store (StreamParams::op < 0) or cp.reduce.async.bulk.tensor into dst
// (add/min/max/inc/dec/and/or/xor, chosen by StreamParams::op; the element type comes from the dst map).
// The source and destination maps describe the same logical box in the same dimension order; their global strides may
// differ (a permuted copy that keeps the innermost dimension is a pure copy with a re-ordered destination map).
#include "stream.cuh"

using namespace tmakit_kernels;

extern "C" __global__ void __launch_bounds__(32, 1)
tmakit_stream(const __grid_constant__ TmaDesc src, const __grid_constant__ TmaDesc dst,
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
