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
// The backward is in kernels/layer_norm/layer_norm_bwd.cu; what both share in
// layer_norm_shared.cuh.
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/float_ops.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/layer_norm/layer_norm.h"
#include "kernels/layer_norm/layer_norm_shared.cuh"

namespace tlrt::kernels {
namespace {

using namespace layer_norm_detail;

// Folded forward rows: warps (rows) per block and the resident blocks per SM asked of
// __launch_bounds__ (at most 102 registers, which the one-element accesses need; the 16-byte
// accesses take fewer and get six blocks).
constexpr int kFoldWarps = 4;
constexpr int kFoldBlocks = 5;

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
// Layout choice: columns per thread (PT), warps per row (WPR) and warps per block (WARPS) from
// cols. The forward holds only its row (PT values of T per thread): up to 512 columns one warp
// owns a row, so the statistics need shuffles only and no block barrier, with up to 16 loads in
// flight per thread.

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

template void layer_norm_fwd_cuda<float>(const float*, const float*, const float*, LayerNormShape,
                                         double, float*, float*, float*, CUstream_st*);
template void layer_norm_fwd_cuda<double>(const double*, const double*, const double*,
                                          LayerNormShape, double, double*, double*, double*,
                                          CUstream_st*);

}  // namespace tlrt::kernels
