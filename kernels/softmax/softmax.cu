// Softmax, CUDA backend. Every row kernel reads the scores (and the mask) of a row once and
// writes its output once; the mask predicate is kept on chip as one bit per element.
//
//   * rows of at most 1024 elements: G lanes per row (G the smallest power of two that covers a
//     row of at most 32 chunks, else a whole warp), the row in registers (each lane holds N
//     chunks of V adjacent elements), 16-byte loads and stores when the pointers are 16-byte
//     aligned and V divides cols; on that 16-byte path masked rows of 257 to 1024 float32 (129 to
//     512 float64) go through shared memory by asynchronous copies, a warp's next row in flight
//     while it works on one (rows_pipe_kernel, the same lane layout and sum order);
//   * rows of up to 16k float32 (8k float64) elements: a block per row, the row held in shared
//     memory, the mask bits in shared memory words built with warp shuffles;
//   * longer rows whose rest fits in one block's shared memory (on sm_90 up to about 64k float32
//     or 32k float64 with a mask, 70k or 36k without): a block of 512 threads per row, 16k
//     float32 (8k float64) elements in registers and the rest in shared memory (copied there
//     asynchronously), the mask streamed through a ring of asynchronous copies, so that 32k
//     float32 rows run two blocks per SM;
//   * longer rows still: a block per row, an online max / sum pass (one read) and then a pass
//     that reads again and writes; nothing of the row's size is stored anywhere.
//   * softmax along an axis that is not the last (x as (outer, len, inner), inner >= 2): for
//     len <= 64 and at least 2^15 columns a thread per (outer, inner) column, consecutive threads
//     on consecutive inner columns (coalesced), the column in registers (one read, one write);
//     otherwise the axis split over a block of (TX columns) x (S slices), an online max / sum
//     pass per slice merged in slice order, then a pass that reads again and writes.
//
// The max propagates NaN (a NaN allowed score makes m NaN and so the row NaN), e = exp(s - m)
// with the full-precision expf / exp, y = e / sum with IEEE division (-prec-div=true; float32
// rows take the same bits from the sum's two-part reciprocal, kernels/common/quotient.h); the sum's
// order is unspecified (a tolerance op), but it is fixed by the launch geometry, so a result is
// reproducible run to run. Rows are grid-strided (grids are capped), so any row count works.
//
// The block-per-row kernels are in kernels/softmax/softmax_block.cu; what both files share in
// softmax_shared.cuh.
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "kernels/common/async_copy.cuh"
#include "kernels/common/float_ops.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/common/quotient.h"
#include "kernels/softmax/softmax.h"
#include "kernels/softmax/softmax_shared.cuh"

namespace tlrt::kernels {
namespace {

using namespace softmax_detail;

// ---------------------------------------------------------------------------------------------
// G lanes per row (G a power of two <= 32: 32 / G rows per warp), the row in registers: lane l of
// the group holds chunk k at element (G k + l) V, cols <= G N V, and N V <= 32 mask bits per
// lane. Every lane of a warp runs the same trip count (the warp's first row decides), so the
// group shuffles always see the whole warp; lanes past the last row only take part in them.

template <int G, class T>
__device__ __forceinline__ T group_max(T v) {
  for (int o = G / 2; o > 0; o >>= 1) v = nan_max(v, __shfl_xor_sync(kFullMask, v, o));
  return v;
}
template <int G, class T>
__device__ __forceinline__ T group_sum(T v) {
  for (int o = G / 2; o > 0; o >>= 1) v += __shfl_xor_sync(kFullMask, v, o);
  return v;
}
template <int G>
__device__ __forceinline__ uint32_t group_or(uint32_t v) {
  for (int o = G / 2; o > 0; o >>= 1) v |= __shfl_xor_sync(kFullMask, v, o);
  return v;
}

template <class T, int V, int N, int G, bool kMasked>
__global__ void __launch_bounds__(kThreads)
    rows_warp_kernel(const T* __restrict__ scores, const T* __restrict__ mask, uint64_t rows,
                     uint64_t cols, T* __restrict__ out) {
  static_assert(N * V <= 32, "one mask bit per register element");
  static_assert(G >= 1 && G <= 32 && (G & (G - 1)) == 0, "a power-of-two group");
  constexpr uint64_t kRowsPerWarp = 32 / G;
  const int lane = threadIdx.x & 31;
  const int gl = lane % G;  // lane within the row's group
  const uint64_t warps = blockDim.x >> 5;
  const uint64_t warp = static_cast<uint64_t>(blockIdx.x) * warps + (threadIdx.x >> 5);
  const uint64_t warp_stride = static_cast<uint64_t>(gridDim.x) * warps;
  for (uint64_t first = warp * kRowsPerWarp; first < rows; first += warp_stride * kRowsPerWarp) {
    const uint64_t row = first + static_cast<uint64_t>(lane / G);
    const bool live = row < rows;
    const uint64_t base = live ? row * cols : 0;
    T v[N][V];
    T mk[N][V];
    // Every load of the row is issued before any loaded value is used, so that a lane has all of
    // its chunks (scores and mask) in flight at once. V divides cols, so a chunk that starts in
    // the row lies in it.
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const uint64_t c = (static_cast<uint64_t>(k) * G + gl) * V;
#pragma unroll
      for (int j = 0; j < V; ++j) {
        v[k][j] = T(0);
        mk[k][j] = T(0);
      }
      if (live && c < cols) {
        load_chunk<T, V>(scores + base + c, v[k]);
        if constexpr (kMasked) load_chunk<T, V>(mask + base + c, mk[k]);
      }
    }
    uint32_t allowed = 0;
    T m = neg_inf<T>();
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const uint64_t c = (static_cast<uint64_t>(k) * G + gl) * V;
      const bool in = live && c < cols;
#pragma unroll
      for (int j = 0; j < V; ++j) {
        if (in && (!kMasked || mk[k][j] != T(0))) {
          allowed |= 1u << (k * V + j);
          m = nan_max(m, v[k][j]);
        }
      }
    }
    // Without a mask a row has an allowed entry (cols >= 1); lanes past the last row store nothing.
    const bool any = !kMasked || group_or<G>(allowed) != 0;
    m = group_max<G>(m);
    // Branch-free: exp of every register element, blocked ones replaced by +0 (adding +0 leaves
    // the sum's bits unchanged, so the sum is that of the allowed terms in the same order).
    T sum = T(0);
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const uint64_t c = (static_cast<uint64_t>(k) * G + gl) * V;
      exp_chunk<T, V, kMasked>(v[k], m, allowed >> (k * V), live && c < cols, sum);
    }
    sum = group_sum<G>(sum);
    if (!any) sum = T(1);  // no allowed entry: every output is +0 and nothing divides
    const RowDivisor<T> div(sum);
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const uint64_t c = (static_cast<uint64_t>(k) * G + gl) * V;
      if (live && c < cols) {
        T y[V];
        quotient_chunk<T, V, kMasked>(v[k], div, allowed >> (k * V), y);
        store_chunk_streaming<T, V>(out + base + c, y);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Masked rows of 129 to 1024 elements on the 16-byte path: a warp per row as in rows_warp_kernel
// (lane l holds chunk k at element (32 k + l) V), but the chunks travel through shared memory with
// asynchronous copies, two stages per lane: while a warp works on one row, the copies of its next
// row (scores and mask) are in flight, and they hold no registers, so every chunk of that row is
// requested at once. Each lane copies and later reads only its own slots, so no barrier is
// needed; the loop over rows is warp-uniform, so every shuffle sees the whole warp.

constexpr int kPipeThreads = 128;

// Two stages of N chunks of scores and N of mask per thread.
template <int N>
constexpr uint64_t pipe_smem_bytes() {
  return uint64_t{2} * 2 * N * kPipeThreads * 16;
}

template <class T, int N>
__global__ void __launch_bounds__(kPipeThreads)
    rows_pipe_kernel(const T* __restrict__ scores, const T* __restrict__ mask, uint64_t rows,
                     uint64_t cols, T* __restrict__ out) {
  constexpr int V = Vec16<T>::kLanes;
  static_assert(N * V <= 32, "one mask bit per register element");
  extern __shared__ __align__(16) unsigned char smem[];
  const int lane = threadIdx.x & 31;
  // Slot of chunk k in stage s for this thread: 16 bytes, consecutive threads adjacent.
  auto slot = [&](int array, int s, int k) {
    return reinterpret_cast<T*>(
        smem +
        ((static_cast<uint64_t>((array * 2 + s) * N + k) * kPipeThreads) + threadIdx.x) * 16);
  };
  const uint64_t warps = blockDim.x >> 5;
  const uint64_t warp = static_cast<uint64_t>(blockIdx.x) * warps + (threadIdx.x >> 5);
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * warps;
  auto fetch = [&](uint64_t row, int s) {
    if (row >= rows) return;
    const uint64_t base = row * cols;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const uint64_t c = (static_cast<uint64_t>(k) * 32 + lane) * V;
      if (c < cols) {
        copy16_async(slot(0, s, k), scores + base + c);
        copy16_async(slot(1, s, k), mask + base + c);
      }
    }
  };
  int s = 0;
  fetch(warp, 0);
  copy_commit();
  for (uint64_t row = warp; row < rows; row += stride) {
    fetch(row + stride, s ^ 1);
    copy_commit();  // possibly empty: the wait below then still means "this row's copies"
    copy_wait<1>();
    const uint64_t base = row * cols;
    T v[N][V];
    uint32_t allowed = 0;
    T m = neg_inf<T>();
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const uint64_t c = (static_cast<uint64_t>(k) * 32 + lane) * V;
#pragma unroll
      for (int j = 0; j < V; ++j) v[k][j] = T(0);
      if (c < cols) {
        T mk[V] = {};
        load_chunk<T, V>(slot(0, s, k), v[k]);
        load_chunk<T, V>(slot(1, s, k), mk);
#pragma unroll
        for (int j = 0; j < V; ++j) {
          if (mk[j] != T(0)) {
            allowed |= 1u << (k * V + j);
            m = nan_max(m, v[k][j]);
          }
        }
      }
    }
    const bool any = __any_sync(kFullMask, allowed != 0);
    m = warp_max(m);
    T sum = T(0);
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const uint64_t c = (static_cast<uint64_t>(k) * 32 + lane) * V;
      exp_chunk<T, V, true>(v[k], m, allowed >> (k * V), c < cols, sum);
    }
    sum = warp_sum(sum);
    if (!any) sum = T(1);  // no allowed entry: every output is +0 and nothing divides
    const RowDivisor<T> div(sum);
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const uint64_t c = (static_cast<uint64_t>(k) * 32 + lane) * V;
      if (c < cols) {
        T y[V];
        quotient_chunk<T, V, true>(v[k], div, allowed >> (k * V), y);
        store_chunk_streaming<T, V>(out + base + c, y);
      }
    }
    s ^= 1;
  }
}

// ---------------------------------------------------------------------------------------------
// Softmax along a middle axis: a thread per (o, i) column of x as (outer, len, inner).

template <class T, int N>
__global__ void __launch_bounds__(kThreads)
    axis_register_kernel(const T* __restrict__ x, uint64_t columns, uint64_t len, uint64_t inner,
                         T* __restrict__ out) {
  for (uint64_t idx = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < columns;
       idx += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const uint64_t o = idx / inner;
    const uint64_t base = o * len * inner + (idx - o * inner);
    T v[N];
    T m = neg_inf<T>();
#pragma unroll
    for (int k = 0; k < N; ++k) {
      v[k] = T(0);
      if (static_cast<uint64_t>(k) < len) {
        v[k] = x[base + static_cast<uint64_t>(k) * inner];
        m = nan_max(m, v[k]);
      }
    }
    T sum = T(0);
#pragma unroll
    for (int k = 0; k < N; ++k) {
      if (static_cast<uint64_t>(k) < len) {
        v[k] = exp_of(v[k] - m);
        sum += v[k];
      }
    }
    const RowDivisor<T> div(sum);
#pragma unroll
    for (int k = 0; k < N; ++k) {
      if (static_cast<uint64_t>(k) < len) out[base + static_cast<uint64_t>(k) * inner] = div(v[k]);
    }
  }
}

// Softmax along a middle axis with the axis split over the block: blockDim = (TX, S), TX
// consecutive inner columns of one outer index per block tile, S slices of the axis per column
// (slice t takes k = t, t + S, ...). Each thread folds its slice online, the S partials of a column
// merge in slice order through shared memory (a fixed order: the same bits on every run), then
// each thread writes its slice. A warp reads 32 / TX slices of TX adjacent columns: contiguous
// when TX = inner, 128-byte lines otherwise.

template <class T>
__global__ void __launch_bounds__(kThreads)
    axis_split_kernel(const T* __restrict__ x, uint64_t outer, uint64_t len, uint64_t inner,
                      T* __restrict__ out) {
  __shared__ T part_m[kThreads];
  __shared__ T part_s[kThreads];
  const uint32_t tx = threadIdx.x, ty = threadIdx.y, tx_count = blockDim.x, slices = blockDim.y;
  const uint64_t tiles_per_outer = (inner + tx_count - 1) / tx_count;
  const uint64_t tiles = outer * tiles_per_outer;
  for (uint64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const uint64_t o = tile / tiles_per_outer;
    const uint64_t i = (tile - o * tiles_per_outer) * tx_count + tx;
    const bool live = i < inner;
    const uint64_t base = o * len * inner + (live ? i : 0);
    Online<T> acc{neg_inf<T>(), T(0)};
    if (live) {
#pragma unroll 4
      for (uint64_t k = ty; k < len; k += slices) online_add(acc, x[base + k * inner]);
    }
    part_m[ty * tx_count + tx] = acc.m;
    part_s[ty * tx_count + tx] = acc.s;
    __syncthreads();
    Online<T> all{neg_inf<T>(), T(0)};
    for (uint32_t t = 0; t < slices; ++t) {
      all = online_merge(all, Online<T>{part_m[t * tx_count + tx], part_s[t * tx_count + tx]});
    }
    const T m = all.m;
    const T sum = online_sum(all);
    if (live) {
#pragma unroll 4
      for (uint64_t k = ty; k < len; k += slices) {
        out[base + k * inner] = exp_of(x[base + k * inner] - m) / sum;
      }
    }
    __syncthreads();  // the partials are read before the next tile rewrites them
  }
}

// ---------------------------------------------------------------------------------------------
// Launch selection.

template <class T, int V, int N, int G>
void launch_warp(const T* s, const T* mk, uint64_t rows, uint64_t cols, T* out,
                 cudaStream_t stream) {
  constexpr uint64_t kRowsPerBlock = kThreads / G;
  const dim3 grid = grid_for(rows, kRowsPerBlock, kRowGridCap);
  if (mk != nullptr) {
    rows_warp_kernel<T, V, N, G, true><<<grid, kThreads, 0, stream>>>(s, mk, rows, cols, out);
  } else {
    rows_warp_kernel<T, V, N, G, false><<<grid, kThreads, 0, stream>>>(s, mk, rows, cols, out);
  }
}

// Masked rows only: unmasked rows of this length take rows_warp_kernel, which measured faster
// once its per-element work was cut to exp, add and quotient (unmasked chunks are tested whole).
// As many blocks as are resident at once (each warp then streams through several rows, its next
// row's copies in flight while it works), fewer when there are fewer rows.
template <class T, int N>
void launch_pipe(const T* s, const T* mk, uint64_t rows, uint64_t cols, T* out, cudaStream_t stream,
                 const char* op) {
  constexpr auto kKernel = rows_pipe_kernel<T, N>;
  const uint64_t bytes = pipe_smem_bytes<N>();
  const int per_sm = resident_blocks_per_sm<kKernel>(kPipeThreads, bytes, op);
  const uint64_t resident = static_cast<uint64_t>(per_sm) * current_sm_count(op);
  const dim3 grid = grid_for(rows, kPipeThreads / 32, resident);
  kKernel<<<grid, kPipeThreads, bytes, stream>>>(s, mk, rows, cols, out);
}

// Rows of at most 32 V elements: G = the smallest power of two with G V >= cols, one chunk per
// lane. Longer rows (<= 1024): a whole warp, N = the smallest power of two with 32 N V >= cols;
// masked rows on the 16-byte path with N = 4 or 8 through shared memory (rows_pipe_kernel).
template <class T, int V>
void dispatch_warp(const T* s, const T* mk, uint64_t rows, uint64_t cols, T* out,
                   cudaStream_t stream, const char* op) {
  const uint64_t chunks = (cols + V - 1) / V;
  if (chunks <= 1) return launch_warp<T, V, 1, 1>(s, mk, rows, cols, out, stream);
  if (chunks <= 2) return launch_warp<T, V, 1, 2>(s, mk, rows, cols, out, stream);
  if (chunks <= 4) return launch_warp<T, V, 1, 4>(s, mk, rows, cols, out, stream);
  if (chunks <= 8) return launch_warp<T, V, 1, 8>(s, mk, rows, cols, out, stream);
  if (chunks <= 16) return launch_warp<T, V, 1, 16>(s, mk, rows, cols, out, stream);
  if (chunks <= 32) return launch_warp<T, V, 1, 32>(s, mk, rows, cols, out, stream);
  if (chunks <= 64) return launch_warp<T, V, 2, 32>(s, mk, rows, cols, out, stream);
  if constexpr (V > 1) {
    if (mk == nullptr) {
      if (chunks <= 128) return launch_warp<T, V, 4, 32>(s, mk, rows, cols, out, stream);
      if (chunks <= 256) return launch_warp<T, V, 8, 32>(s, mk, rows, cols, out, stream);
    }
    if (chunks <= 128) return launch_pipe<T, 4>(s, mk, rows, cols, out, stream, op);
    if (chunks <= 256) return launch_pipe<T, 8>(s, mk, rows, cols, out, stream, op);
  } else {
    if (chunks <= 128) return launch_warp<T, V, 4, 32>(s, mk, rows, cols, out, stream);
    if (chunks <= 256) return launch_warp<T, V, 8, 32>(s, mk, rows, cols, out, stream);
  }
  if constexpr (V <= 2) {
    if (chunks <= 512) return launch_warp<T, V, 16, 32>(s, mk, rows, cols, out, stream);
  }
  if constexpr (V == 1) {
    launch_warp<T, V, 32, 32>(s, mk, rows, cols, out, stream);
  }
}

template <class T, int V>
void dispatch_rows(const T* s, const T* mk, uint64_t rows, uint64_t cols, T* out,
                   cudaStream_t stream, const char* op) {
  if (cols <= kWarpRowMax) {
    dispatch_warp<T, V>(s, mk, rows, cols, out, stream, op);
    return;
  }
  launch_block_rows<T, V>(s, mk, rows, cols, out, stream, op);
}

}  // namespace

template <class T>
void softmax_rows_cuda(const T* scores, const T* mask, uint64_t rows, uint64_t cols, T* out,
                       CUstream_st* stream) {
  // The op whose failure a launch error reports: the last-axis softmax_io has no mask.
  const char* op = mask != nullptr ? "hard_masked_softmax_by_row" : "softmax_io";
  if (rows == 0 || cols == 0) return;
  constexpr int kV = Vec16<T>::kLanes;
  const bool vector =
      cols % kV == 0 && aligned16(scores) && aligned16(out) && (mask == nullptr || aligned16(mask));
  if (vector) {
    dispatch_rows<T, kV>(scores, mask, rows, cols, out, stream, op);
  } else {
    dispatch_rows<T, 1>(scores, mask, rows, cols, out, stream, op);
  }
  check_launch(op);
}

template <class T>
void softmax_axis_cuda(const T* x, uint64_t outer, uint64_t len, uint64_t inner, T* out,
                       CUstream_st* stream) {
  const char* op = "softmax_io";
  const uint64_t columns = outer * inner;
  if (columns == 0 || len == 0) return;
  // Short axes with many columns: a thread per column, the column in registers (one read, one
  // write). Otherwise the axis split over the block (two reads, one write).
  if (len <= kAxisRegisterMax && columns >= kAxisRegisterMinColumns) {
    const dim3 grid = grid_for(columns, kThreads);
    if (len <= 8) {
      axis_register_kernel<T, 8><<<grid, kThreads, 0, stream>>>(x, columns, len, inner, out);
    } else if (len <= 32) {
      axis_register_kernel<T, 32><<<grid, kThreads, 0, stream>>>(x, columns, len, inner, out);
    } else {
      axis_register_kernel<T, kAxisRegisterMax>
          <<<grid, kThreads, 0, stream>>>(x, columns, len, inner, out);
    }
  } else {
    uint32_t tx = 1;
    while (tx < 32 && tx < inner) tx <<= 1;
    const dim3 block(tx, kThreads / tx);
    const uint64_t tiles = outer * ((inner + tx - 1) / tx);
    axis_split_kernel<T>
        <<<grid_for(tiles, 1, kRowGridCap), block, 0, stream>>>(x, outer, len, inner, out);
  }
  check_launch(op);
}

template void softmax_rows_cuda<float>(const float*, const float*, uint64_t, uint64_t, float*,
                                       CUstream_st*);
template void softmax_rows_cuda<double>(const double*, const double*, uint64_t, uint64_t, double*,
                                        CUstream_st*);
template void softmax_axis_cuda<float>(const float*, uint64_t, uint64_t, uint64_t, float*,
                                       CUstream_st*);
template void softmax_axis_cuda<double>(const double*, uint64_t, uint64_t, uint64_t, double*,
                                        CUstream_st*);

}  // namespace tlrt::kernels
