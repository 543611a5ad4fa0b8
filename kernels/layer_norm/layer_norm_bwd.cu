// Layer normalization's backward, CUDA backend, on contiguous float / double device buffers (the
// forward, whose row groups this uses too: kernels/layer_norm/layer_norm.cu).
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
#include "kernels/layer_norm/layer_norm_shared.cuh"

namespace tlrt::kernels {
namespace {

using namespace layer_norm_detail;

// Backward row partition: at least kMinBackwardRows rows per block and, on the register layouts,
// at most kWaveSms x (the layout's resident blocks per SM) blocks: one whole wave on a 132-SM
// device, each block a long contiguous range of rows, so no tail wave and half the column partials
// of 1024 blocks. The constant is part of the partition (never the device's SM count), so the
// column sums stay bit-reproducible on any device. The wide path keeps at most
// kMaxBackwardBlocks blocks.
constexpr uint64_t kWaveSms = 132;
constexpr uint64_t kMaxBackwardBlocks = 1024;
constexpr uint64_t kMinBackwardRows = 16;

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
// cols. The backward keeps 2 PT binary64 column accumulators per thread besides its columns of dy
// and xhat, so it holds at most 8 columns per thread and spreads wide rows over more warps.

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

template void layer_norm_bwd_cuda<float>(const float*, const float*, const float*, const float*,
                                         LayerNormShape, float, float, float*, float*, float*,
                                         void*, CUstream_st*);
template void layer_norm_bwd_cuda<double>(const double*, const double*, const double*,
                                          const double*, LayerNormShape, double, double, double*,
                                          double*, double*, void*, CUstream_st*);

}  // namespace tlrt::kernels
