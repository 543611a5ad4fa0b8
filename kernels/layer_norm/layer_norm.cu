// Layer normalization, CUDA backend, on contiguous float / double device buffers.
//
// Forward: a group of WPR warps owns a row (one row per group, WARPS / WPR rows per block, the
// grid striding over the rows; one warp per row up to 512 columns, and float rows of up to
// 1024 columns folded onto one warp, below). Each thread loads its PT
// columns of the row once into registers (columns t, t + 32 WPR, ..., or their 16-byte runs
// below: every warp load is contiguous); the two statistics are binary64 sums of the widened values
// (per thread in column order, then a shuffle butterfly and, across the group's warps, shared
// memory in warp order), so the second pass over the centered values and the writes of y and xhat
// read the registers, not memory: one read of x, one write of y and xhat, one of invStd per row. mu
// and var are true binary64 divisions by cols, sd an IEEE binary64 sqrt, xhat = fl_T(c / sd) an
// IEEE binary64 division rounded to T, y = __fmul_rn then __fadd_rn (no contraction). Rows wider
// than the largest register layout (cols > 8192) take a path with one row per block that reads the
// row three times (the re-reads mostly hit L2).
//
// When cols is a multiple of 16 / sizeof(T) and the row buffers are 16-byte aligned, each access
// of the register layouts is one 16-byte load or store of that many consecutive columns (thread t
// of a group of GT threads holds columns 4t..4t+3, 4(t+GT)..4(t+GT)+3, ... for float); otherwise
// one element per access (gamma and beta, when also aligned, are read 16 bytes at a time too). A
// thread's values stay in increasing column order either way.
//
// Folded rows (float, 513..1024 columns): one warp per row does the work of the 4-warp row group
// of layout <8, 4>: lane l holds the values of the group's threads l, 32 + l, 64 + l and 96 + l
// (the same columns, 32 values), sums each of the four sets in that thread's order, runs the
// group's warp butterfly on all four (a butterfly leaves the same bits on every lane, so each lane
// carries the four warp sums at once) and adds the four warp sums in warp order. The statistics,
// and so every output, have the bits of the 4-warp group, with no shared memory and no barrier;
// 4 warps per block, one row per warp. xhat is written from fl(c * rs) for every element and
// written again, by the same thread, from the division for the few elements that need it.
//
// Backward: the same row groups. Each thread keeps its columns of dy and xhat in registers,
// q = fl(dy * gamma) and fl(q * xhat) are summed in binary64 (s1, s2: any order, rounded to T
// once), dx is written with the contract's five roundings, and each thread accumulates, in
// binary64, its columns' fl(dy * xhat) and dy over the rows it handles in increasing row order.
// Each block owns a fixed range of rows: min(cap, ceil(rows / 16)) blocks of ceil(rows / blocks)
// rows, where cap is 132 x the layout's resident blocks per SM (one whole wave on the H200; a
// constant of the layout table for the dtype, cols and the choice of 16-byte accesses, never of
// the device's SM count or the timing) and 1024 on the wide path.
//
// Row groups that share a block synchronise on their own named barrier, so one group's reduction
// does not hold back the other groups' loads. Data read or written once (x, dy, xhat in, y, xhat,
// dx out) goes through the streaming cache hints (__ldcs, __stcs). The row groups of a block then
// combine their column partials in group order in shared memory and the block stores them in the
// workspace; two small kernels fold each column's partials in a fixed order (groups of 32
// consecutive blocks in increasing block order, then the group sums in increasing group order) and
// round once to T. So d_gamma and d_beta are bit-reproducible run to run, and tolerance-equal (not
// bit-equal) to the reference. The wide path (cols > 8192) keeps the block's column partials in the
// workspace itself (read-modify-write by the one thread that owns the column, rows in increasing
// order).
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/float_ops.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/layer_norm/layer_norm.h"

namespace tlrt::kernels {
namespace {

constexpr uint32_t kFullMask = 0xffffffffu;
// Widest row held in registers; wider rows take the re-reading path.
constexpr uint64_t kMaxRegisterCols = 8192;
// Backward row partition: at least kMinBackwardRows rows per block and, on the register layouts,
// at most kWaveSms x (the layout's resident blocks per SM) blocks: one whole wave on a 132-SM
// device, each block a long contiguous range of rows, so no tail wave and half the column partials
// of 1024 blocks. The constant is part of the partition (never the device's SM count), so the
// column sums stay bit-reproducible on any device. The wide path keeps at most
// kMaxBackwardBlocks blocks.
constexpr uint64_t kWaveSms = 132;
constexpr uint64_t kMaxBackwardBlocks = 1024;
constexpr uint64_t kMinBackwardRows = 16;
constexpr int kWideThreads = 256;
// Folded forward rows: warps (rows) per block and the resident blocks per SM asked of
// __launch_bounds__ (at most 102 registers, which the one-element accesses need; the 16-byte
// accesses take fewer and get six blocks).
constexpr int kFoldWarps = 4;
constexpr int kFoldBlocks = 5;

template <class T>
TLRT_DEVICE_INLINE T narrow(double v);
template <>
TLRT_DEVICE_INLINE float narrow<float>(double v) {
  return __double2float_rn(v);
}
template <>
TLRT_DEVICE_INLINE double narrow<double>(double v) {
  return v;
}

// Whether fl_float(p) is xhat = fl_float(c / sd), the IEEE binary64 quotient rounded to float,
// for p = fl(c * rs) and rs = fl(1 / sd) of the row: p is within 3 binary64 ulps of the quotient
// q = fl(c / sd) (two roundings of relative size 2^-53 each, and the quotient's own). When |p| is
// a normal float magnitude below 2^127 (high word of |p| in [0x38100000, 0x47e00000), one unsigned
// compare) and its 29 bits below float precision are more than 64 ulps away from the pattern of a
// float midpoint (1 followed by 28 zeros; one unsigned compare), no float midpoint lies between p
// and q, so fl_float(p) = fl_float(q) bit for bit. Otherwise (near a midpoint, a float subnormal,
// zero, |p| >= 2^127, infinity or NaN) the division decides. The product decides all but about
// 2^-22 of the elements.
TLRT_DEVICE_INLINE bool product_rounds_to_xhat(double p) {
  const uint32_t hi = static_cast<uint32_t>(__double2hiint(p)) & 0x7fffffffu;
  const uint32_t lo = static_cast<uint32_t>(__double2loint(p));
  const bool normal = hi - 0x38100000u < 0x47e00000u - 0x38100000u;
  const bool clear = (lo & 0x1fffffffu) - 0x10000000u + 64u > 128u;
  return normal && clear;
}

// xhat = fl_T(c / sd): T = float, one binary64 multiply where the product decides and the
// division elsewhere; T = double, the division itself.
TLRT_DEVICE_INLINE float xhat_of(double c, double sd, double rs, float*) {
  const double p = __dmul_rn(c, rs);
  if (product_rounds_to_xhat(p)) return __double2float_rn(p);
  return __double2float_rn(c / sd);
}
TLRT_DEVICE_INLINE double xhat_of(double c, double sd, double, double*) {
  return c / sd;
}

// The division of xhat_of's float path, kept out of line for the folded rows: it runs for about
// 2^-22 of the elements of ordinary rows.
__device__ __noinline__ float xhat_by_division(double c, double sd) {
  return __double2float_rn(c / sd);
}

// 16-byte streaming loads and stores of 16 / sizeof(T) consecutive elements.
TLRT_DEVICE_INLINE void load16cs(const float* p, float* v) {
  const float4 a = __ldcs(reinterpret_cast<const float4*>(p));
  v[0] = a.x;
  v[1] = a.y;
  v[2] = a.z;
  v[3] = a.w;
}
TLRT_DEVICE_INLINE void load16cs(const double* p, double* v) {
  const double2 a = __ldcs(reinterpret_cast<const double2*>(p));
  v[0] = a.x;
  v[1] = a.y;
}
// V consecutive elements of a column vector (gamma, beta: read by every row, kept in cache).
template <int V>
TLRT_DEVICE_INLINE void load_columns(const float* p, float* v) {
  if constexpr (V == 4) {
    const float4 a = __ldg(reinterpret_cast<const float4*>(p));
    v[0] = a.x;
    v[1] = a.y;
    v[2] = a.z;
    v[3] = a.w;
  } else {
    static_assert(V == 1, "one element or 16 bytes");
    v[0] = p[0];
  }
}
template <int V>
TLRT_DEVICE_INLINE void load_columns(const double* p, double* v) {
  if constexpr (V == 2) {
    const double2 a = __ldg(reinterpret_cast<const double2*>(p));
    v[0] = a.x;
    v[1] = a.y;
  } else {
    static_assert(V == 1, "one element or 16 bytes");
    v[0] = p[0];
  }
}
TLRT_DEVICE_INLINE void store16cs(float* p, const float* v) {
  __stcs(reinterpret_cast<float4*>(p), make_float4(v[0], v[1], v[2], v[3]));
}
TLRT_DEVICE_INLINE void store16cs(double* p, const double* v) {
  __stcs(reinterpret_cast<double2*>(p), make_double2(v[0], v[1]));
}

// xhat and y of V consecutive columns at xh and yo: one 16-byte streaming store each (V > 1) or
// one element each.
template <int V, class T>
TLRT_DEVICE_INLINE void store_outputs(T* xh, T* yo, const T* h, const T* o) {
  if constexpr (V > 1) {
    store16cs(xh, h);
    store16cs(yo, o);
  } else {
    __stcs(xh, h[0]);
    __stcs(yo, o[0]);
  }
}

// Elements per access: 16 / sizeof(T) on the vector layouts (cols a multiple of it and the row
// buffers 16-byte aligned), 1 otherwise.
template <class T, bool VEC>
constexpr int kVec = VEC ? static_cast<int>(16 / sizeof(T)) : 1;

// The column of a thread's k-th value in a row group of GT threads taking V consecutive columns
// per access: accesses of a warp are contiguous (32 x V elements), and the thread's values are in
// increasing column order. V = 1: columns t, t + GT, t + 2 GT, ...
template <int V, int GT>
TLRT_DEVICE_INLINE uint32_t column_of(int t, int k) {
  return static_cast<uint32_t>((k / V) * (V * GT) + t * V + k % V);
}

// Butterfly sum over a warp: every lane ends with the same bits (each step adds the same two
// values, in either order, on both lanes of a pair).
TLRT_DEVICE_INLINE void warp_sum2(double& a, double& b) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    a = __dadd_rn(a, __shfl_xor_sync(kFullMask, a, o));
    b = __dadd_rn(b, __shfl_xor_sync(kFullMask, b, o));
  }
}

// Barrier of the calling thread's row group only (the WPR warps from warp `first`): a named
// barrier per group when the block holds several groups, so one group's reduction never waits for
// another group's loads; the whole block otherwise. Ids 1..15 (0 is __syncthreads').
template <int WPR, int WARPS>
TLRT_DEVICE_INLINE void group_barrier(int first) {
  static_assert(WARPS / WPR <= 15, "one named barrier per row group");
  if constexpr (WPR == WARPS) {
    __syncthreads();
  } else {
    asm volatile("bar.sync %0, %1;" ::"r"(1 + first / WPR), "r"(32 * WPR) : "memory");
  }
}

// Sums a and b over the WPR warps of the calling thread's row group; every thread of the group
// gets the same bits. Called by every thread of the group (it synchronises the group when
// WPR > 1). red: 2 * WARPS doubles of shared memory, each group using its own WPR slots.
template <int WPR, int WARPS>
TLRT_DEVICE_INLINE void group_sum2(double& a, double& b, double* red) {
  warp_sum2(a, b);
  if constexpr (WPR > 1) {
    const int warp = static_cast<int>(threadIdx.x >> 5);
    const int first = warp - warp % WPR;
    if ((threadIdx.x & 31u) == 0) {
      red[warp] = a;
      red[WARPS + warp] = b;
    }
    group_barrier<WPR, WARPS>(first);
    a = red[first];
    b = red[WARPS + first];
#pragma unroll
    for (int k = 1; k < WPR; ++k) {
      a = __dadd_rn(a, red[first + k]);
      b = __dadd_rn(b, red[WARPS + first + k]);
    }
    group_barrier<WPR, WARPS>(first);  // the group's slots are reused by its next call
  }
}

// Sum over one block of WARPS warps (the wide paths: one row per block).
template <int WARPS>
TLRT_DEVICE_INLINE void block_sum2(double& a, double& b, double* red) {
  group_sum2<WARPS, WARPS>(a, b, red);
}

// ---------------------------------------------------------------------------------------------
// Forward

// The statistics of one row from the values its group's threads hold: mu and sd in binary64.
template <int WPR, int WARPS, class Load>
TLRT_DEVICE_INLINE void row_statistics(Load&& values, uint32_t cols, double epsilon, double* red,
                                       double& mu, double& sd) {
  double sum = 0.0, unused = 0.0;
  values([&](double v) { sum = __dadd_rn(sum, v); });
  group_sum2<WPR, WARPS>(sum, unused, red);
  mu = sum / static_cast<double>(cols);
  double squares = 0.0;
  unused = 0.0;
  values([&](double v) {
    const double c = __dsub_rn(v, mu);
    squares = __dadd_rn(squares, __dmul_rn(c, c));
  });
  group_sum2<WPR, WARPS>(squares, unused, red);
  sd = sqrt(__dadd_rn(squares / static_cast<double>(cols), epsilon));
}

template <class T, int PT, int WPR, int WARPS, bool VEC>
__global__ void __launch_bounds__(WARPS * 32)
    layer_norm_fwd_rows(const T* __restrict__ x, const T* __restrict__ gamma,
                        const T* __restrict__ beta, uint64_t rows, uint32_t cols, double epsilon,
                        T* __restrict__ y, T* __restrict__ xhat, T* __restrict__ inv_std) {
  constexpr int kGroupThreads = 32 * WPR;
  constexpr int kRowsPerBlock = WARPS / WPR;
  constexpr int V = kVec<T, VEC>;
  static_assert(PT % V == 0, "whole vectors per thread");
  __shared__ double red[2 * WARPS];
  const int g = static_cast<int>(threadIdx.x) / kGroupThreads;
  const int t = static_cast<int>(threadIdx.x) % kGroupThreads;
  for (uint64_t base = static_cast<uint64_t>(blockIdx.x) * kRowsPerBlock; base < rows;
       base += static_cast<uint64_t>(gridDim.x) * kRowsPerBlock) {
    const uint64_t r = base + static_cast<uint64_t>(g);
    const bool active = r < rows;
    const uint64_t offset = active ? r * cols : 0;
    T v[PT];
#pragma unroll
    for (int k = 0; k < PT; k += V) {
      const uint32_t j = column_of<V, kGroupThreads>(t, k);
      if constexpr (V == 1) {
        v[k] = (active && j < cols) ? __ldcs(x + offset + j) : T(0);
      } else if (active && j < cols) {  // V divides cols: the whole access is in the row
        load16cs(x + offset + j, v + k);
      } else {
#pragma unroll
        for (int e = 0; e < V; ++e) v[k + e] = T(0);
      }
    }
    auto each = [&](auto&& f) {
#pragma unroll
      for (int k = 0; k < PT; ++k) {
        const uint32_t j = column_of<V, kGroupThreads>(t, k);
        if (j < cols) f(static_cast<double>(v[k]));
      }
    };
    double mu, sd;
    row_statistics<WPR, WARPS>(each, cols, epsilon, red, mu, sd);
    if (active) {
      const double rs = 1.0 / sd;
      if (t == 0) inv_std[r] = narrow<T>(rs);
#pragma unroll
      for (int k = 0; k < PT; k += V) {
        const uint32_t j = column_of<V, kGroupThreads>(t, k);
        if (j < cols) {
          T h[V], o[V], ga[V], be[V];
          load_columns<V>(gamma + j, ga);
          load_columns<V>(beta + j, be);
#pragma unroll
          for (int e = 0; e < V; ++e) {
            const double c = __dsub_rn(static_cast<double>(v[k + e]), mu);
            h[e] = xhat_of(c, sd, rs, static_cast<T*>(nullptr));
            o[e] = add_rn(mul_rn(h[e], ga[e]), be[e]);
          }
          store_outputs<V>(xhat + offset + j, y + offset + j, h, o);
        }
      }
    }
  }
}

// The sum over a row group of TW warps from one warp that holds, in s[w], the partial of the
// group's thread 32 w + lane: warp_sum2's butterfly steps on each, then the TW warp sums in warp
// order, as group_sum2 adds them. Every lane gets the same bits.
template <int TW>
TLRT_DEVICE_INLINE double folded_sum(double (&s)[TW]) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
#pragma unroll
    for (int w = 0; w < TW; ++w) s[w] = __dadd_rn(s[w], __shfl_xor_sync(kFullMask, s[w], o));
  }
  double t = s[0];
#pragma unroll
  for (int w = 1; w < TW; ++w) t = __dadd_rn(t, s[w]);
  return t;
}

// Folded rows: one warp per row with the values, sums and outputs of a row group of TW warps of
// PT values per thread (layer_norm_fwd_rows<T, PT, TW, ...>); WARPS rows per block, the grid
// striding over the rows. Lane l holds, at v[w PT + k], value k of the group's thread 32 w + l.
// Precondition, as the layout table gives it: cols > 16 TW PT (more than half the layout's
// columns), so the first half of every thread's values always lies in the row.
template <class T, int PT, int TW, int WARPS, int MIN_BLOCKS, bool VEC>
__global__ void __launch_bounds__(WARPS * 32, MIN_BLOCKS)
    layer_norm_fwd_folded(const T* __restrict__ x, const T* __restrict__ gamma,
                          const T* __restrict__ beta, uint64_t rows, uint32_t cols, double epsilon,
                          T* __restrict__ y, T* __restrict__ xhat, T* __restrict__ inv_std) {
  constexpr int kGroupThreads = 32 * TW;
  constexpr int V = kVec<T, VEC>;
  constexpr int N = TW * PT;
  constexpr bool kFloat = sizeof(T) == 4;
  static_assert(PT % V == 0, "whole vectors per thread");
  static_assert(N <= 32, "one bit per value in the division mask");
  const int lane = static_cast<int>(threadIdx.x & 31u);
  __builtin_assume(cols > kGroupThreads * PT / 2);
  auto column = [&](int q) { return column_of<V, kGroupThreads>(32 * (q / PT) + lane, q % PT); };
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * WARPS;
  for (uint64_t r = static_cast<uint64_t>(blockIdx.x) * WARPS + (threadIdx.x >> 5); r < rows;
       r += stride) {
    const uint64_t offset = r * cols;
    T v[N];
#pragma unroll
    for (int q = 0; q < N; q += V) {
      const uint32_t j = column(q);
      if constexpr (V == 1) {
        v[q] = j < cols ? __ldcs(x + offset + j) : T(0);
      } else if (j < cols) {  // V divides cols: the whole access is in the row
        load16cs(x + offset + j, v + q);
      } else {
#pragma unroll
        for (int e = 0; e < V; ++e) v[q + e] = T(0);
      }
    }
    double part[TW];
#pragma unroll
    for (int w = 0; w < TW; ++w) {
      part[w] = 0.0;
#pragma unroll
      for (int k = 0; k < PT; ++k) {
        const int q = w * PT + k;
        if (column(q) < cols) part[w] = __dadd_rn(part[w], static_cast<double>(v[q]));
      }
    }
    const double mu = folded_sum(part) / static_cast<double>(cols);
#pragma unroll
    for (int w = 0; w < TW; ++w) {
      part[w] = 0.0;
#pragma unroll
      for (int k = 0; k < PT; ++k) {
        const int q = w * PT + k;
        if (column(q) < cols) {
          const double c = __dsub_rn(static_cast<double>(v[q]), mu);
          part[w] = __dadd_rn(part[w], __dmul_rn(c, c));
        }
      }
    }
    const double sd = sqrt(__dadd_rn(folded_sum(part) / static_cast<double>(cols), epsilon));
    const double rs = 1.0 / sd;
    if (lane == 0) inv_std[r] = narrow<T>(rs);
    // float: bit q marks v[q] as one whose xhat the division decides.
    uint32_t divide = 0;
#pragma unroll
    for (int q = 0; q < N; q += V) {
      const uint32_t j = column(q);
      if (j < cols) {
        T h[V], o[V], ga[V], be[V];
        load_columns<V>(gamma + j, ga);
        load_columns<V>(beta + j, be);
#pragma unroll
        for (int e = 0; e < V; ++e) {
          const double c = __dsub_rn(static_cast<double>(v[q + e]), mu);
          if constexpr (kFloat) {
            const double p = __dmul_rn(c, rs);
            h[e] = __double2float_rn(p);
            if (!product_rounds_to_xhat(p)) divide |= 1u << (q + e);
          } else {
            h[e] = c / sd;
          }
          o[e] = add_rn(mul_rn(h[e], ga[e]), be[e]);
        }
        store_outputs<V>(xhat + offset + j, y + offset + j, h, o);
      }
    }
    if constexpr (kFloat) {
      // x is read again (it is no output: the buffers do not overlap), so that the values need
      // not stay in registers through the stores.
      if (divide != 0) {
#pragma unroll
        for (int q = 0; q < N; ++q) {
          if ((divide >> q) & 1u) {
            const uint32_t j = column(q);
            const float h = xhat_by_division(__dsub_rn(static_cast<double>(x[offset + j]), mu), sd);
            // The same thread stored the product's value at these addresses above: these stores
            // come later in program order and are the ones that stay.
            __stcs(xhat + offset + j, h);
            __stcs(y + offset + j, add_rn(mul_rn(h, gamma[j]), beta[j]));
          }
        }
      }
    }
  }
}

// Rows wider than the register layouts: one row per block, the row read three times.
template <class T>
__global__ void __launch_bounds__(kWideThreads)
    layer_norm_fwd_wide(const T* __restrict__ x, const T* __restrict__ gamma,
                        const T* __restrict__ beta, uint64_t rows, uint32_t cols, double epsilon,
                        T* __restrict__ y, T* __restrict__ xhat, T* __restrict__ inv_std) {
  constexpr int kWarps = kWideThreads / 32;
  __shared__ double red[2 * kWarps];
  for (uint64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const uint64_t offset = r * cols;
    auto each = [&](auto&& f) {
      for (uint64_t j = threadIdx.x; j < cols; j += kWideThreads) {
        f(static_cast<double>(x[offset + j]));
      }
    };
    double mu, sd;
    row_statistics<kWarps, kWarps>(each, cols, epsilon, red, mu, sd);
    if (threadIdx.x == 0) inv_std[r] = narrow<T>(1.0 / sd);
    for (uint64_t j = threadIdx.x; j < cols; j += kWideThreads) {
      const double c = __dsub_rn(static_cast<double>(x[offset + j]), mu);
      const T h = narrow<T>(c / sd);
      xhat[offset + j] = h;
      y[offset + j] = add_rn(mul_rn(h, gamma[j]), beta[j]);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Backward

// Blocks of the backward's row partition: ceil(rows / kMinBackwardRows), at most `cap` (a
// constant of the layout and access width, so the partition is a function of the shape and dtype,
// never of the device or the timing).
uint64_t backward_blocks(uint64_t rows, uint64_t cap) {
  const uint64_t by_rows = (rows + kMinBackwardRows - 1) / kMinBackwardRows;
  return by_rows < cap ? by_rows : cap;
}

// partial: per block, cols d_gamma partials then cols d_beta partials (binary64).
template <class T, int PT, int WPR, int WARPS, int MIN_BLOCKS, bool VEC>
__global__ void __launch_bounds__(WARPS * 32, MIN_BLOCKS)
    layer_norm_bwd_rows(const T* __restrict__ dy, const T* __restrict__ xhat,
                        const T* __restrict__ inv_std, const T* __restrict__ gamma, uint64_t rows,
                        uint32_t cols, uint64_t rows_per_block, T cols_scale, T inv_cols,
                        T* __restrict__ dx, double* __restrict__ partial) {
  constexpr int kGroupThreads = 32 * WPR;
  constexpr int kRowsPerBlock = WARPS / WPR;
  constexpr int kCombine = kRowsPerBlock > 1 ? PT * kGroupThreads : 1;
  constexpr int V = kVec<T, VEC>;
  static_assert(PT % V == 0, "whole vectors per thread");
  __shared__ double red[2 * WARPS];
  __shared__ double combine[kCombine];
  const int g = static_cast<int>(threadIdx.x) / kGroupThreads;
  const int t = static_cast<int>(threadIdx.x) % kGroupThreads;
  const uint64_t start = static_cast<uint64_t>(blockIdx.x) * rows_per_block;
  const uint64_t end = rows - start < rows_per_block ? rows : start + rows_per_block;
  double acc_g[PT], acc_b[PT];
#pragma unroll
  for (int k = 0; k < PT; ++k) {
    acc_g[k] = 0.0;
    acc_b[k] = 0.0;
  }
  for (uint64_t base = start; base < end; base += kRowsPerBlock) {
    const uint64_t r = base + static_cast<uint64_t>(g);
    const bool active = r < end;
    const uint64_t offset = active ? r * cols : 0;
    T d[PT], h[PT];
#pragma unroll
    for (int k = 0; k < PT; k += V) {
      const uint32_t j = column_of<V, kGroupThreads>(t, k);
      if constexpr (V == 1) {
        const bool in = active && j < cols;
        d[k] = in ? __ldcs(dy + offset + j) : T(0);
        h[k] = in ? __ldcs(xhat + offset + j) : T(0);
      } else if (active && j < cols) {  // V divides cols: the whole access is in the row
        load16cs(dy + offset + j, d + k);
        load16cs(xhat + offset + j, h + k);
      } else {
#pragma unroll
        for (int e = 0; e < V; ++e) {
          d[k + e] = T(0);
          h[k + e] = T(0);
        }
      }
    }
    // The column accumulators take this row before the row sums, and d[k] is then replaced by
    // q = fl(dy gamma): dy, gamma and q are never live together across the reduction.
    const T is = active ? inv_std[r] : T(0);
    double s1 = 0.0, s2 = 0.0;
#pragma unroll
    for (int k0 = 0; k0 < PT; k0 += V) {
      const uint32_t j = column_of<V, kGroupThreads>(t, k0);
      if (j < cols) {  // V divides cols: the whole access is in the row
        T ga[V];
        load_columns<V>(gamma + j, ga);
#pragma unroll
        for (int e = 0; e < V; ++e) {
          const int k = k0 + e;
          if (active) {
            acc_g[k] = __dadd_rn(acc_g[k], static_cast<double>(mul_rn(d[k], h[k])));
            acc_b[k] = __dadd_rn(acc_b[k], static_cast<double>(d[k]));
          }
          d[k] = mul_rn(d[k], ga[e]);
          s1 = __dadd_rn(s1, static_cast<double>(d[k]));
          s2 = __dadd_rn(s2, static_cast<double>(mul_rn(d[k], h[k])));
        }
      }
    }
    group_sum2<WPR, WARPS>(s1, s2, red);
    if (active) {
      const T sum1 = narrow<T>(s1);
      const T sum2 = narrow<T>(s2);
#pragma unroll
      for (int k = 0; k < PT; k += V) {
        const uint32_t j = column_of<V, kGroupThreads>(t, k);
        if (j < cols) {
#pragma unroll
          for (int e = k; e < k + V; ++e) {
            const T u = sub_rn(sub_rn(mul_rn(d[e], cols_scale), sum1), mul_rn(h[e], sum2));
            d[e] = mul_rn(mul_rn(u, is), inv_cols);  // dx
          }
          if constexpr (V > 1) {
            store16cs(dx + offset + j, d + k);
          } else {
            __stcs(dx + offset + j, d[k]);
          }
        }
      }
    }
  }
  double* out_g = partial + static_cast<uint64_t>(blockIdx.x) * 2 * cols;
  double* out_b = out_g + cols;
  if constexpr (kRowsPerBlock == 1) {
#pragma unroll
    for (int k = 0; k < PT; ++k) {
      const uint32_t j = column_of<V, kGroupThreads>(t, k);
      if (j < cols) {
        out_g[j] = acc_g[k];
        out_b[j] = acc_b[k];
      }
    }
  } else {
    // Groups in order: group 0's rows, then group 1's, ... (each group's own rows in order).
    for (int which = 0; which < 2; ++which) {
      for (int step = 0; step < kRowsPerBlock; ++step) {
        if (g == step) {
#pragma unroll
          for (int k = 0; k < PT; ++k) {
            const uint32_t idx = column_of<V, kGroupThreads>(t, k);
            const double v = which == 0 ? acc_g[k] : acc_b[k];
            combine[idx] = step == 0 ? v : __dadd_rn(combine[idx], v);
          }
        }
        __syncthreads();
      }
      double* out = which == 0 ? out_g : out_b;
      for (uint32_t j = threadIdx.x; j < cols; j += WARPS * 32) out[j] = combine[j];
      __syncthreads();
    }
  }
}

template <class T>
__global__ void __launch_bounds__(kWideThreads)
    layer_norm_bwd_wide(const T* __restrict__ dy, const T* __restrict__ xhat,
                        const T* __restrict__ inv_std, const T* __restrict__ gamma, uint64_t rows,
                        uint32_t cols, uint64_t rows_per_block, T cols_scale, T inv_cols,
                        T* __restrict__ dx, double* __restrict__ partial) {
  constexpr int kWarps = kWideThreads / 32;
  __shared__ double red[2 * kWarps];
  const uint64_t start = static_cast<uint64_t>(blockIdx.x) * rows_per_block;
  const uint64_t end = rows - start < rows_per_block ? rows : start + rows_per_block;
  double* out_g = partial + static_cast<uint64_t>(blockIdx.x) * 2 * cols;
  double* out_b = out_g + cols;
  for (uint64_t r = start; r < end; ++r) {
    const uint64_t offset = r * cols;
    double s1 = 0.0, s2 = 0.0;
    for (uint64_t j = threadIdx.x; j < cols; j += kWideThreads) {
      const T q = mul_rn(dy[offset + j], gamma[j]);
      s1 = __dadd_rn(s1, static_cast<double>(q));
      s2 = __dadd_rn(s2, static_cast<double>(mul_rn(q, xhat[offset + j])));
    }
    block_sum2<kWarps>(s1, s2, red);
    const T sum1 = narrow<T>(s1);
    const T sum2 = narrow<T>(s2);
    const T is = inv_std[r];
    for (uint64_t j = threadIdx.x; j < cols; j += kWideThreads) {
      const T d = dy[offset + j];
      const T h = xhat[offset + j];
      const T q = mul_rn(d, gamma[j]);
      const T u = sub_rn(sub_rn(mul_rn(q, cols_scale), sum1), mul_rn(h, sum2));
      dx[offset + j] = mul_rn(mul_rn(u, is), inv_cols);
      // Column j belongs to this thread for every row: its own earlier store, no other writer.
      const double prev_g = r == start ? 0.0 : out_g[j];
      const double prev_b = r == start ? 0.0 : out_b[j];
      out_g[j] = __dadd_rn(prev_g, static_cast<double>(mul_rn(d, h)));
      out_b[j] = __dadd_rn(prev_b, static_cast<double>(d));
    }
  }
}

// The fold of the blocks' partials, in a fixed order that depends on the block count only:
// blocks in groups of kFoldGroup consecutive blocks, each group summed in increasing block order
// (layer_norm_bwd_fold_groups, one thread per group and output, the sum stored over the group's
// first partial), then the group sums in increasing group order, rounded once to T
// (layer_norm_bwd_fold). Two short chains instead of one of up to 1024 additions keep every SM
// busy loading partials.
constexpr uint64_t kFoldGroup = 32;

// partial: per block, n = 2 cols outputs (the d_gamma partials, then the d_beta partials).
__global__ void __launch_bounds__(kThreads)
    layer_norm_bwd_fold_groups(double* partial, uint64_t blocks, uint64_t n) {
  const uint64_t groups = (blocks + kFoldGroup - 1) / kFoldGroup;
  const uint64_t total = groups * n;
  for (uint64_t k = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < total;
       k += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const uint64_t g = k / n;
    const uint64_t i = k - g * n;
    const uint64_t first = g * kFoldGroup;
    const uint64_t last = blocks - first < kFoldGroup ? blocks : first + kFoldGroup;
    double acc = 0.0;
#pragma unroll 8
    for (uint64_t b = first; b < last; ++b) acc = __dadd_rn(acc, partial[b * n + i]);
    // Only this thread reads or writes output i of this group.
    partial[first * n + i] = acc;
  }
}

// d_gamma[c] and d_beta[c]: the group sums of column c in increasing group order.
template <class T>
__global__ void __launch_bounds__(kThreads)
    layer_norm_bwd_fold(const double* __restrict__ partial, uint64_t blocks, uint32_t cols,
                        T* __restrict__ d_gamma, T* __restrict__ d_beta) {
  const uint64_t n = 2 * static_cast<uint64_t>(cols);
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const uint64_t which = i / cols;
    const uint64_t c = i - which * cols;
    const double* p = partial + which * cols + c;
    double acc = 0.0;
#pragma unroll 8
    for (uint64_t b = 0; b < blocks; b += kFoldGroup) acc = __dadd_rn(acc, p[b * n]);
    (which == 0 ? d_gamma : d_beta)[c] = narrow<T>(acc);
  }
}

// ---------------------------------------------------------------------------------------------
// Layout choice: columns per thread (PT), warps per row (WPR) and warps per block (WARPS) from
// cols. The forward holds only its row (PT values of T per thread): up to 512 columns one warp
// owns a row, so the statistics need shuffles only and no block barrier, with up to 16 loads in
// flight per thread. The backward also keeps 2 PT binary64 column accumulators per thread, so it
// holds at most 8 columns per thread and spreads wider rows over more warps.

template <class Launch>
void with_forward_layout(uint64_t cols, Launch&& launch) {
  if (cols <= 32) {
    launch.template run<1, 1, 8>();
  } else if (cols <= 64) {
    launch.template run<2, 1, 8>();
  } else if (cols <= 128) {
    launch.template run<4, 1, 8>();
  } else if (cols <= 256) {
    launch.template run<8, 1, 8>();
  } else if (cols <= 512) {
    launch.template run<16, 1, 8>();
  } else if (cols <= 1024) {
    // Four warps per row keep 8 values per thread at about 48 registers (five blocks per SM).
    // float folds the group onto one warp (FOLD: 32 values per thread, kFoldWarps warps per block,
    // kFoldBlocks blocks per SM, the same bits); double keeps the four warps.
    launch.template run<8, 4, 8, true>();
  } else if (cols <= 2048) {
    launch.template run<8, 8, 8>();
  } else if (cols <= 4096) {
    launch.template run<16, 8, 8>();
  } else {
    launch.template run<16, 16, 16>();
  }
}

// The backward's table also names the resident blocks per SM that __launch_bounds__ asks for
// (BV: float with 16-byte accesses, BS: float with one-element accesses, BD: double), which caps
// the row partition at one wave (kWaveSms x that count). Each count is the most that fits the
// kernel's registers without spilling. 8192 columns take 512 threads of 16 columns (1024 threads
// at 64 registers would spill).
template <class Launch>
void with_backward_layout(uint64_t cols, Launch&& launch) {
  if (cols <= 32) {
    launch.template run<1, 1, 8, 8, 8, 8>();
  } else if (cols <= 64) {
    launch.template run<2, 1, 8, 8, 8, 6>();
  } else if (cols <= 128) {
    launch.template run<4, 1, 8, 5, 5, 4>();
  } else if (cols <= 256) {
    launch.template run<8, 1, 8, 4, 4, 2>();
  } else if (cols <= 512) {
    launch.template run<8, 2, 8, 4, 3, 2>();
  } else if (cols <= 1024) {
    launch.template run<8, 4, 8, 4, 3, 2>();
  } else if (cols <= 2048) {
    launch.template run<8, 8, 8, 4, 3, 2>();
  } else if (cols <= 4096) {
    launch.template run<8, 16, 16, 1, 1, 1>();
  } else {
    launch.template run<16, 16, 16, 1, 1, 1>();
  }
}

// Whether a layout of PT values per thread takes the 16-byte accesses.
template <class T, int PT>
bool uses_vec(uint64_t cols, bool aligned) {
  constexpr int V = kVec<T, true>;
  return PT % V == 0 && cols % V == 0 && aligned;
}

template <class T, bool VEC, int BV, int BS, int BD>
constexpr int kMinBlocksOf = sizeof(T) == 4 ? (VEC ? BV : BS) : BD;

// The partition's block cap of the register layout for cols (aligned: the row buffers are
// 16-byte aligned).
template <class T>
struct BackwardCap {
  uint64_t cols = 0;
  bool aligned = false;
  uint64_t cap = 0;
  template <int PT, int WPR, int WARPS, int BV, int BS, int BD>
  void run() {
    const int per_sm = uses_vec<T, PT>(cols, aligned) ? kMinBlocksOf<T, true, BV, BS, BD>
                                                      : kMinBlocksOf<T, false, BV, BS, BD>;
    cap = kWaveSms * static_cast<uint64_t>(per_sm);
  }
};

template <class T>
uint64_t backward_cap(uint64_t cols, bool aligned) {
  if (cols > kMaxRegisterCols) return kMaxBackwardBlocks;
  BackwardCap<T> c{cols, aligned, 0};
  with_backward_layout(cols, c);
  return c.cap;
}

template <class T>
struct ForwardLaunch {
  const T* x;
  const T* gamma;
  const T* beta;
  LayerNormShape s;
  double epsilon;
  T* y;
  T* xhat;
  T* inv_std;
  cudaStream_t stream;

  // FOLD: float rows are folded onto one warp (layer_norm_fwd_folded with the sums of the
  // WPR-warp group).
  template <int PT, int WPR, int WARPS, bool FOLD = false>
  void run() {
    constexpr uint64_t V = kVec<T, true>;
    constexpr bool kFold = FOLD && sizeof(T) == 4;
    if constexpr (PT % V == 0) {
      if (s.cols % V == 0 && aligned16(x) && aligned16(y) && aligned16(xhat) && aligned16(gamma) &&
          aligned16(beta)) {
        if constexpr (kFold) {
          launch_folded<PT, WPR, true>();
        } else {
          launch<PT, WPR, WARPS, true>();
        }
        return;
      }
    }
    if constexpr (kFold) {
      launch_folded<PT, WPR, false>();
    } else {
      launch<PT, WPR, WARPS, false>();
    }
  }

  template <int PT, int WPR, bool VEC>
  void launch_folded() {
    const dim3 grid = grid_for(s.rows, kFoldWarps);
    layer_norm_fwd_folded<T, PT, WPR, kFoldWarps, kFoldBlocks, VEC>
        <<<grid, kFoldWarps * 32, 0, stream>>>(
            x, gamma, beta, s.rows, static_cast<uint32_t>(s.cols), epsilon, y, xhat, inv_std);
  }

  template <int PT, int WPR, int WARPS, bool VEC>
  void launch() {
    constexpr uint64_t kRowsPerBlock = WARPS / WPR;
    const dim3 grid = grid_for(s.rows, kRowsPerBlock);
    layer_norm_fwd_rows<T, PT, WPR, WARPS, VEC><<<grid, WARPS * 32, 0, stream>>>(
        x, gamma, beta, s.rows, static_cast<uint32_t>(s.cols), epsilon, y, xhat, inv_std);
  }
};

template <class T>
struct BackwardLaunch {
  const T* dy;
  const T* xhat;
  const T* inv_std;
  const T* gamma;
  LayerNormShape s;
  uint64_t blocks;
  uint64_t rows_per_block;
  T cols_scale;
  T inv_cols;
  T* dx;
  double* partial;
  cudaStream_t stream;

  bool aligned;

  template <int PT, int WPR, int WARPS, int BV, int BS, int BD>
  void run() {
    if constexpr (PT % kVec<T, true> == 0) {
      if (uses_vec<T, PT>(s.cols, aligned)) {
        launch<PT, WPR, WARPS, kMinBlocksOf<T, true, BV, BS, BD>, true>();
        return;
      }
    }
    launch<PT, WPR, WARPS, kMinBlocksOf<T, false, BV, BS, BD>, false>();
  }

  template <int PT, int WPR, int WARPS, int MIN_BLOCKS, bool VEC>
  void launch() {
    layer_norm_bwd_rows<T, PT, WPR, WARPS, MIN_BLOCKS, VEC>
        <<<static_cast<unsigned>(blocks), WARPS * 32, 0, stream>>>(
            dy, xhat, inv_std, gamma, s.rows, static_cast<uint32_t>(s.cols), rows_per_block,
            cols_scale, inv_cols, dx, partial);
  }
};

}  // namespace

template <class T>
void layer_norm_fwd_cuda(const T* x, const T* gamma, const T* beta, LayerNormShape s,
                         double epsilon, T* y, T* xhat, T* inv_std, CUstream_st* stream) {
  const char* op = "layer_norm_fwd";
  if (s.rows == 0 || s.cols == 0) return;
  if (s.cols <= kMaxRegisterCols) {
    with_forward_layout(s.cols,
                        ForwardLaunch<T>{x, gamma, beta, s, epsilon, y, xhat, inv_std, stream});
  } else {
    layer_norm_fwd_wide<T><<<grid_for(s.rows, 1), kWideThreads, 0, stream>>>(
        x, gamma, beta, s.rows, static_cast<uint32_t>(s.cols), epsilon, y, xhat, inv_std);
  }
  check_launch(op);
}

uint64_t layer_norm_bwd_workspace_bytes(LayerNormShape s) {
  if (s.rows == 0 || s.cols == 0) return 0;
  const char* op = "layer_norm_bwd";
  // Enough for either dtype's partition.
  uint64_t most = 0;
  for (const bool aligned : {false, true}) {
    const uint64_t bf = backward_blocks(s.rows, backward_cap<float>(s.cols, aligned));
    const uint64_t bd = backward_blocks(s.rows, backward_cap<double>(s.cols, aligned));
    most = most > bf ? most : bf;
    most = most > bd ? most : bd;
  }
  return checked_mul(checked_mul(most, 2 * s.cols, op), sizeof(double), op);
}

template <class T>
void layer_norm_bwd_cuda(const T* dy, const T* xhat, const T* inv_std, const T* gamma,
                         LayerNormShape s, T cols_scale, T inv_cols, T* dx, T* d_gamma, T* d_beta,
                         void* workspace, CUstream_st* stream) {
  const char* op = "layer_norm_bwd";
  if (s.rows == 0 || s.cols == 0) return;
  const bool aligned = aligned16(dy) && aligned16(xhat) && aligned16(dx) && aligned16(gamma);
  const uint64_t blocks = backward_blocks(s.rows, backward_cap<T>(s.cols, aligned));
  const uint64_t rows_per_block = (s.rows + blocks - 1) / blocks;
  // ceil(rows / rows_per_block) may be below `blocks`: only the blocks that own rows run and
  // are folded.
  const uint64_t used = (s.rows + rows_per_block - 1) / rows_per_block;
  auto* partial = static_cast<double*>(workspace);
  const auto cols = static_cast<uint32_t>(s.cols);
  if (s.cols <= kMaxRegisterCols) {
    with_backward_layout(
        s.cols, BackwardLaunch<T>{dy, xhat, inv_std, gamma, s, used, rows_per_block, cols_scale,
                                  inv_cols, dx, partial, stream, aligned});
  } else {
    layer_norm_bwd_wide<T><<<static_cast<unsigned>(used), kWideThreads, 0, stream>>>(
        dy, xhat, inv_std, gamma, s.rows, cols, rows_per_block, cols_scale, inv_cols, dx, partial);
  }
  check_launch(op);
  const uint64_t groups = (used + kFoldGroup - 1) / kFoldGroup;
  layer_norm_bwd_fold_groups<<<grid_for(groups * 2 * s.cols, kThreads), kThreads, 0, stream>>>(
      partial, used, 2 * s.cols);
  check_launch(op);
  layer_norm_bwd_fold<T><<<grid_for(2 * s.cols, kThreads), kThreads, 0, stream>>>(
      partial, used, cols, d_gamma, d_beta);
  check_launch(op);
}

template void layer_norm_fwd_cuda<float>(const float*, const float*, const float*, LayerNormShape,
                                         double, float*, float*, float*, CUstream_st*);
template void layer_norm_fwd_cuda<double>(const double*, const double*, const double*,
                                          LayerNormShape, double, double*, double*, double*,
                                          CUstream_st*);
template void layer_norm_bwd_cuda<float>(const float*, const float*, const float*, const float*,
                                         LayerNormShape, float, float, float*, float*, float*,
                                         void*, CUstream_st*);
template void layer_norm_bwd_cuda<double>(const double*, const double*, const double*,
                                          const double*, LayerNormShape, double, double, double*,
                                          double*, double*, void*, CUstream_st*);

}  // namespace tlrt::kernels
