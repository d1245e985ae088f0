// plain_transpose.cu -- transposes TMA cannot describe: a row stride that is not a multiple of 16 bytes (TMA's
// global strides must be, docs/HARDWARE.md), a base address off 16 or 128 bytes. Plain loads and stores through a
// shared-memory tile, no TMA.
//
// Dims (elements): p = the source's unit-stride dim (size np, destination stride dp), q = the destination's
// unit-stride dim (size nq, source stride sq), b = an optional batch dim (size nb, strides sb / db). One CTA moves
// one PT_TILE x PT_TILE tile of one batch: it reads rows along p (coalesced in the source), writes rows along q
// (coalesced in the destination); the tile has one padding column so that the column reads of the write phase fall
// in different banks. A 1-D grid of tiles_p * tiles_q * nb CTAs and 1-D blocks of 256 threads.
// PT_PACK > 1 (1- and 2-byte elements, destination rows and base 4-byte aligned): each thread of the write phase
// stores PT_PACK neighbouring elements of a row as one 32-bit word (half or a quarter of the store instructions).
#include <tmakit/all.cuh>

using namespace tmakit;

#ifndef PT_ELEM
#define PT_ELEM 4
#endif
#ifndef PT_TILE
#define PT_TILE 32
#endif
#ifndef PT_PACK
#define PT_PACK 1
#endif
#define PT_THREADS 256
#define PT_ROWS (PT_THREADS / PT_TILE)  // tile rows per pass

#if PT_ELEM == 1
typedef unsigned char elem_t;
#elif PT_ELEM == 2
typedef unsigned short elem_t;
#elif PT_ELEM == 4
typedef unsigned int elem_t;
#else
typedef unsigned long long elem_t;
#endif

struct PlainTransposeParams {
  i64 np, nq, nb;  // sizes of the p, q and batch dims
  i64 sq, sb;      // source strides of q and batch (p: 1)
  i64 dp, db;      // destination strides of p and batch (q: 1)
  i64 tiles_p, tiles_q;
};

extern "C" __global__ void __launch_bounds__(PT_THREADS)
tmakit_plain_transpose(const elem_t* __restrict__ src, elem_t* __restrict__ dst, const PlainTransposeParams p) {
  __shared__ elem_t tile[PT_TILE][PT_TILE + 1];
  const i64 t = blockIdx.x;
  const i64 tp = t % p.tiles_p, rest = t / p.tiles_p;
  const i64 tq = rest % p.tiles_q, b = rest / p.tiles_q;
  const i64 p0 = tp * PT_TILE, q0 = tq * PT_TILE;
  const int x = threadIdx.x % PT_TILE, y = threadIdx.x / PT_TILE;
  // Pointers step along the tile: one 64-bit add per element instead of an index product (the loop is
  // instruction-bound with plain element loads and stores).
  const int q_rows = (int)min((i64)PT_TILE, p.nq - q0), p_rows = (int)min((i64)PT_TILE, p.np - p0);
  const elem_t* s = src + b * p.sb + p0 + x + (q0 + y) * p.sq;
  const i64 s_step = PT_ROWS * p.sq;
  if (x < p_rows) {
#pragma unroll
    for (int r = y; r < PT_TILE; r += PT_ROWS, s += s_step) {  // row q0 + r of the tile, along p
      if (r < q_rows) tile[r][x] = *s;
    }
  }
  __syncthreads();
  elem_t* d = dst + b * p.db + q0;
#if PT_PACK == 1
  if (x < q_rows) {
    elem_t* o = d + x + (p0 + y) * p.dp;
    const i64 o_step = PT_ROWS * p.dp;
#pragma unroll
    for (int r = y; r < PT_TILE; r += PT_ROWS, o += o_step) {  // row p0 + r of the output tile, along q
      if (r < p_rows) *o = tile[x][r];
    }
  }
#else
  static_assert(PT_PACK * PT_ELEM == 4, "PT_PACK packs 32-bit words");
  constexpr int kLanes = PT_TILE / PT_PACK;  // threads per output row
  const int xw = threadIdx.x % kLanes, yw = threadIdx.x / kLanes, c = xw * PT_PACK;
  if (c < q_rows) {
    elem_t* o = d + c + (p0 + yw) * p.dp;
    const i64 o_step = (PT_THREADS / kLanes) * p.dp;
#pragma unroll
    for (int r = yw; r < PT_TILE; r += PT_THREADS / kLanes, o += o_step) {
      if (r >= p_rows) break;
      if (c + PT_PACK <= q_rows) {
        u32 w = 0;
#pragma unroll
        for (int j = 0; j < PT_PACK; ++j) w |= (u32)tile[c + j][r] << (8 * PT_ELEM * j);
        *reinterpret_cast<u32*>(o) = w;  // PTX: st.global.u32
      } else {
#pragma unroll
        for (int j = 0; j < PT_PACK; ++j)
          if (c + j < q_rows) o[j] = tile[c + j][r];
      }
    }
  }
#endif
}
