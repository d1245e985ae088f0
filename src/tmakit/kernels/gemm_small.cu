// gemm_small.cu -- C = A @ B for small problems, where a launch's fixed latency is most of the time.
//
// One CTA of 128 threads per BM x BN output tile (grid = tiles, no persistence), no TMA and no mbarriers: a TMA
// load first fetches its 128-byte descriptor and the persistent GEMM sets up barriers and a warp-specialized
// pipeline before its first byte moves, which costs more than the whole work of a problem of a few MFLOP
// (docs/GEMM.md, "Small problems"). Here every thread issues its first global load at once:
//
//   loop over K in 32-deep chunks. Where both operands allow 16-byte loads, cp.async puts STAGES chunks in flight
//   at once (a DRAM round trip per chunk would otherwise serialize the loop: up to 256 K deep for the small
//   tiles); else chunk c + 1 is gathered into registers while chunk c is multiplied (two shared buffers).
//   ldmatrix (.trans where the operand's contiguous dim is M or N) feeds mma.sync.m16n8k16 (SASS HMMA) with fp32
//   accumulation; the tile goes through shared memory to full-row stores (16 bytes per thread where C allows).
//
// Operands are read through (row, column) element strides, so any strided view works: a_kc / b_kc say whether
// the operand's contiguous dim is K (shared tile [MN][K]) or M / N (shared tile [K][MN]); VA / VB: 16-byte vector
// loads are legal (unit stride along the contiguous dim, 16-byte aligned base, pitch a multiple of 8 elements),
// else elements are gathered one by one. Elements past M, N or K are read as zero and never stored.
//
// Template arguments: IN 0 bf16 / 1 fp16; OUT 0 bf16 / 1 fp16 / 2 fp32; BM x BN the tile (BM 16: warps 1 x 4,
// else 2 x 2); A_KC, B_KC the shared layouts; VA, VB vector loads (both: cp.async); VC 16-byte stores into C.
#include <tmakit/types.cuh>

using namespace tmakit;

namespace {

constexpr int SBK = 32;        // K per chunk (two k16 steps)
constexpr int SPAD = 8;        // shared-row padding in elements: ldmatrix rows land in distinct banks
constexpr int STHREADS = 128;  // four warps

struct Operand {  // a 2-D operand read as (row, col) of its shared tile: rows x cols elements with these strides
  const u16* p;
  i64 s_row, s_col;
  int rows, cols;
};

// PTX: ld.global.nc.v4.u32   16 bytes through the non-coherent (read-only) path.
TMAKIT_DEVICE uint4 ld_nc_v4(const void* p) {
  uint4 v;
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

// PTX: ld.global.nc.u16
TMAKIT_DEVICE u16 ld_nc_u16(const u16* p) {
  u16 v;
  asm volatile("ld.global.nc.u16 %0, [%1];" : "=h"(v) : "l"(p));
  return v;
}

// PTX: ldmatrix.sync.aligned.m8n8.x4.shared.b16 (and .trans): four 8x8 b16 matrices, one row address per lane.
template <bool TRANS> TMAKIT_DEVICE void ldmatrix_x4(u32 (&r)[4], u32 addr) {
  if (TRANS)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

// PTX: mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}.{bf16,f16}.f32   d = a * b + d
template <int IN> TMAKIT_DEVICE void mma16816(float (&d)[4], const u32 (&a)[4], u32 b0, u32 b1) {
  if (IN == 0)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// One fp32 -> the output type's bits. PTX: cvt.rn.{bf16,f16}.f32
template <int OUT> TMAKIT_DEVICE u16 cvt1(float v) {
  u16 r;
  if (OUT == 0)
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(v));
  else
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(v));
  return r;
}

// Two fp32 -> one packed word (lo = first element). PTX: cvt.rn.{bf16x2,f16x2}.f32
template <int OUT> TMAKIT_DEVICE u32 cvt2(float lo, float hi) {
  u32 r;
  if (OUT == 0)
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// A ROWS x COLS chunk of an operand in registers: 8 consecutive columns per uint4, spread over the CTA's threads.
template <int ROWS, int COLS> struct Chunk {
  static constexpr int VECS = ROWS * COLS / 8;
  static constexpr int PER = (VECS + STHREADS - 1) / STHREADS;
  uint4 v[PER];
};

// Load the chunk at (r0, c0) of `op` (zero outside rows x cols).
template <int ROWS, int COLS, bool VEC>
TMAKIT_DEVICE void load_chunk(Chunk<ROWS, COLS>& ch, const Operand& op, int r0, int c0, int tid) {
#pragma unroll
  for (int i = 0; i < Chunk<ROWS, COLS>::PER; ++i) {
    const int v = tid + i * STHREADS;
    uint4 x = make_uint4(0, 0, 0, 0);
    if (Chunk<ROWS, COLS>::VECS % STHREADS == 0 || v < Chunk<ROWS, COLS>::VECS) {
      const int r = r0 + v / (COLS / 8), c = c0 + (v % (COLS / 8)) * 8;
      if (r < op.rows) {
        const u16* row = op.p + r * op.s_row;
        if (VEC && c + 8 <= op.cols) {
          x = ld_nc_v4(row + c);
        } else {
          u16 e[8];
#pragma unroll
          for (int j = 0; j < 8; ++j) e[j] = c + j < op.cols ? ld_nc_u16(row + (c + j) * op.s_col) : u16(0);
          x = make_uint4(e[0] | u32(e[1]) << 16, e[2] | u32(e[3]) << 16, e[4] | u32(e[5]) << 16,
                         e[6] | u32(e[7]) << 16);
        }
      }
    }
    ch.v[i] = x;
  }
}

// Store a chunk into its shared tile (row pitch COLS + SPAD elements). PTX: st.shared.v4.b32
template <int ROWS, int COLS> TMAKIT_DEVICE void store_chunk(const Chunk<ROWS, COLS>& ch, u32 base, int tid) {
#pragma unroll
  for (int i = 0; i < Chunk<ROWS, COLS>::PER; ++i) {
    const int v = tid + i * STHREADS;
    if (Chunk<ROWS, COLS>::VECS % STHREADS == 0 || v < Chunk<ROWS, COLS>::VECS) {
      const u32 addr = base + ((v / (COLS / 8)) * (COLS + SPAD) + (v % (COLS / 8)) * 8) * 2;
      asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};"
                   ::"r"(addr), "r"(ch.v[i].x), "r"(ch.v[i].y), "r"(ch.v[i].z), "r"(ch.v[i].w) : "memory");
    }
  }
}

// Copy the chunk at (r0, c0) of `op` straight into its shared tile, 16 bytes per cp.async; bytes past the
// operand's columns and whole rows past its rows are zero-filled (src-size < 16). PTX: cp.async.cg.shared.global
template <int ROWS, int COLS>
TMAKIT_DEVICE void copy_chunk(const Operand& op, int r0, int c0, u32 base, int tid) {
  constexpr int VECS = ROWS * COLS / 8;
#pragma unroll
  for (int i = 0; i < (VECS + STHREADS - 1) / STHREADS; ++i) {
    const int v = tid + i * STHREADS;
    if (VECS % STHREADS == 0 || v < VECS) {
      const int r = r0 + v / (COLS / 8), c = c0 + (v % (COLS / 8)) * 8;
      const int left = r < op.rows ? op.cols - c : 0;
      const u32 bytes = left >= 8 ? 16u : left > 0 ? u32(left) * 2 : 0u;
      const u16* src = bytes ? op.p + r * op.s_row + c : op.p;
      const u32 dst = base + ((v / (COLS / 8)) * (COLS + SPAD) + (v % (COLS / 8)) * 8) * 2;
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(bytes) : "memory");
    }
  }
}

// PTX: cp.async.commit_group / cp.async.wait_group N
TMAKIT_DEVICE void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> TMAKIT_DEVICE void cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }

// One 32-deep chunk from shared memory into the accumulators (ldmatrix + mma.sync).
template <int IN, int BM, int BN, int A_KC, int B_KC, int MT, int NT>
TMAKIT_DEVICE void mma_chunk(float (&acc)[MT][NT][4], u32 sa, u32 sb, int wm0, int wn0, int lane) {
  constexpr int A_COLS = A_KC ? SBK : BM, B_COLS = B_KC ? SBK : BN;
  const int j = lane >> 3, l8 = lane & 7;
#pragma unroll
  for (int kk = 0; kk < SBK; kk += 16) {
    u32 af[MT][4];
#pragma unroll
    for (int i = 0; i < MT; ++i) {
      // [m][k]: lanes 0-15 rows m0..m15 at k, lanes 16-31 the same rows at k + 8;
      // [k][m], transposed: matrix j covers m + (j & 1) * 8, k + (j >> 1) * 8
      const int row = A_KC ? wm0 + i * 16 + (lane & 15) : kk + (j >> 1) * 8 + l8;
      const int col = A_KC ? kk + (lane >> 4) * 8 : wm0 + i * 16 + (j & 1) * 8;
      ldmatrix_x4<!A_KC>(af[i], sa + (row * (A_COLS + SPAD) + col) * 2);
    }
#pragma unroll
    for (int p = 0; p < NT / 2; ++p) {
      // [n][k]: matrices (n, k), (n, k + 8), (n + 8, k), (n + 8, k + 8); [k][n] the same, transposed
      const int row = B_KC ? wn0 + p * 16 + (j >> 1) * 8 + l8 : kk + (j & 1) * 8 + l8;
      const int col = B_KC ? kk + (j & 1) * 8 : wn0 + p * 16 + (j >> 1) * 8;
      u32 bf[4];
      ldmatrix_x4<!B_KC>(bf, sb + (row * (B_COLS + SPAD) + col) * 2);
#pragma unroll
      for (int i = 0; i < MT; ++i) {
        mma16816<IN>(acc[i][2 * p], af[i], bf[0], bf[1]);
        mma16816<IN>(acc[i][2 * p + 1], af[i], bf[2], bf[3]);
      }
    }
  }
}

template <int BM, int BN, int A_KC, int B_KC> struct SmallTile {
  static constexpr int A_ROWS = A_KC ? BM : SBK, A_COLS = A_KC ? SBK : BM;
  static constexpr int B_ROWS = B_KC ? BN : SBK, B_COLS = B_KC ? SBK : BN;
  static constexpr int A_BYTES = A_ROWS * (A_COLS + SPAD) * 2, B_BYTES = B_ROWS * (B_COLS + SPAD) * 2;
  static constexpr int STAGE = A_BYTES + B_BYTES;
  static constexpr int STAGES = 45 * 1024 / STAGE < 8 ? 45 * 1024 / STAGE : 8;  // static shared memory <= 45 KiB
  static constexpr int C_BYTES = BM * (BN + 4) * 4;  // the fp32 output tile of the epilogue (rows padded 16 B)
  static constexpr int BYTES = STAGES * STAGE > C_BYTES ? STAGES * STAGE : C_BYTES;
  static_assert(STAGES >= 2, "two stages at least");
};

}  // namespace

template <int IN, int OUT, int BM, int BN, int A_KC, int B_KC, int VA, int VB, int VC>
__global__ void __launch_bounds__(STHREADS) tmakit_gemm_small(Operand a, Operand b, void* c, i64 ldc_m, i64 ldc_n,
                                                              int m, int n, int k) {
  constexpr int WARPS_M = BM == 16 ? 1 : 2, WARPS_N = 4 / WARPS_M;
  constexpr int WTM = BM / WARPS_M, WTN = BN / WARPS_N;  // warp tile
  constexpr int MT = WTM / 16, NT = WTN / 8;
  static_assert(MT >= 1 && NT % 2 == 0, "warp tile: 16 x 16 at least");
  using T = SmallTile<BM, BN, A_KC, B_KC>;
  __shared__ __align__(128) unsigned char smem[T::BYTES];

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int tiles_n = (n + BN - 1) / BN;
  const int tm = blockIdx.x / tiles_n, tn = blockIdx.x - tm * tiles_n;
  const int m0 = tm * BM, n0 = tn * BN;
  const int wm0 = (warp / WARPS_N) * WTM, wn0 = (warp % WARPS_N) * WTN;
  const u32 s0 = smem_u32(smem);
  const int chunks = (k + SBK - 1) / SBK;
  // (row, col) origin of chunk kc in each operand's shared-tile coordinates
  const int ar0 = A_KC ? m0 : 0, ac0 = A_KC ? 0 : m0, br0 = B_KC ? n0 : 0, bc0 = B_KC ? 0 : n0;
  const int ard = A_KC ? 0 : SBK, acd = A_KC ? SBK : 0, brd = B_KC ? 0 : SBK, bcd = B_KC ? SBK : 0;

  float acc[MT][NT][4];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j) acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.f;

  if (VA && VB) {  // STAGES chunks in flight through cp.async
#pragma unroll
    for (int st = 0; st < T::STAGES - 1; ++st) {
      if (st < chunks) {
        const u32 sa = s0 + st * T::STAGE;
        copy_chunk<T::A_ROWS, T::A_COLS>(a, ar0 + st * ard, ac0 + st * acd, sa, tid);
        copy_chunk<T::B_ROWS, T::B_COLS>(b, br0 + st * brd, bc0 + st * bcd, sa + T::A_BYTES, tid);
      }
      cp_async_commit();
    }
    for (int kc = 0; kc < chunks; ++kc) {
      cp_async_wait<T::STAGES - 2>();
      __syncthreads();  // chunk kc is in shared memory for every thread; chunk kc - 1's buffer is free
      const int nx = kc + T::STAGES - 1;
      if (nx < chunks) {
        const u32 sa = s0 + (nx % T::STAGES) * T::STAGE;
        copy_chunk<T::A_ROWS, T::A_COLS>(a, ar0 + nx * ard, ac0 + nx * acd, sa, tid);
        copy_chunk<T::B_ROWS, T::B_COLS>(b, br0 + nx * brd, bc0 + nx * bcd, sa + T::A_BYTES, tid);
      }
      cp_async_commit();
      const u32 sa = s0 + (kc % T::STAGES) * T::STAGE;
      mma_chunk<IN, BM, BN, A_KC, B_KC>(acc, sa, sa + T::A_BYTES, wm0, wn0, lane);
    }
    cp_async_wait<0>();
  } else {  // gathered through registers: chunk kc + 1 loads while chunk kc is multiplied
    Chunk<T::A_ROWS, T::A_COLS> ca;
    Chunk<T::B_ROWS, T::B_COLS> cb;
    load_chunk<T::A_ROWS, T::A_COLS, VA>(ca, a, ar0, ac0, tid);
    load_chunk<T::B_ROWS, T::B_COLS, VB>(cb, b, br0, bc0, tid);
    for (int kc = 0; kc < chunks; ++kc) {
      const u32 sa = s0 + (kc & 1) * T::STAGE;
      store_chunk(ca, sa, tid);
      store_chunk(cb, sa + T::A_BYTES, tid);
      __syncthreads();  // the chunk is in shared memory; the other buffer's readers (chunk kc - 1) are done
      if (kc + 1 < chunks) {
        load_chunk<T::A_ROWS, T::A_COLS, VA>(ca, a, ar0 + (kc + 1) * ard, ac0 + (kc + 1) * acd, tid);
        load_chunk<T::B_ROWS, T::B_COLS, VB>(cb, b, br0 + (kc + 1) * brd, bc0 + (kc + 1) * bcd, tid);
      }
      mma_chunk<IN, BM, BN, A_KC, B_KC>(acc, sa, sa + T::A_BYTES, wm0, wn0, lane);
    }
  }

  // epilogue: the fp32 tile through shared memory (c0, c1 at row g, cols 2q, 2q + 1; c2, c3 at row g + 8 of each
  // 16 x 8 accumulator tile), then whole rows out: 16 bytes per thread where C allows, else element by element
  __syncthreads();  // every warp is done reading the operand tiles
  constexpr int CP = BN + 4;
  float* ct = reinterpret_cast<float*>(smem);
  const int g = lane >> 2, q = lane & 3;
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float* d = ct + (wm0 + i * 16 + g + h * 8) * CP + wn0 + j * 8 + 2 * q;
        d[0] = acc[i][j][2 * h];
        d[1] = acc[i][j][2 * h + 1];
      }
  __syncthreads();
  constexpr int EV = OUT == 2 ? 4 : 8;  // elements per 16-byte store
  for (int v = tid; v < BM * BN / EV; v += STHREADS) {
    const int r = v / (BN / EV), cl = (v % (BN / EV)) * EV;
    const int row = m0 + r, col = n0 + cl;
    if (row >= m || col >= n) continue;
    const float* x = ct + r * CP + cl;
    if (OUT == 2) {
      float* p = static_cast<float*>(c) + row * ldc_m + col * ldc_n;
      if (VC && col + EV <= n) {
        asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(x[0]), "f"(x[1]), "f"(x[2]),
                     "f"(x[3]) : "memory");
      } else {
        for (int e = 0; e < EV && col + e < n; ++e) p[e * ldc_n] = x[e];
      }
    } else {
      u16* p = static_cast<u16*>(c) + row * ldc_m + col * ldc_n;
      if (VC && col + EV <= n) {
        asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(cvt2<OUT>(x[0], x[1])),
                     "r"(cvt2<OUT>(x[2], x[3])), "r"(cvt2<OUT>(x[4], x[5])), "r"(cvt2<OUT>(x[6], x[7])) : "memory");
      } else {
        for (int e = 0; e < EV && col + e < n; ++e) p[e * ldc_n] = cvt1<OUT>(x[e]);
      }
    }
  }
}
