// Axis reductions, CUDA backend, on contiguous float / double device buffers.
//
// * reduce_sum_by_row / reduce_max_by_row: one group of threads per row (a warp, or the whole
//   block when there are too few rows to fill the device), 16-byte loads after a scalar head that
//   reaches alignment, per-thread accumulators combined by shuffles. The warp-per-row kernel
//   issues 8 loads per lane before adding them (a whole 4 KiB row in flight per warp), with
//   registers for 4 resident blocks per SM, and reads around L1 with an L2 evict-first policy
//   (the input is read once). The sum's order is free (tolerance); the max runs on the integer
//   keys of max_key.h, so its bits do not depend on it.
// * small inputs (at most 32 rows and 2^16 elements) of reduce_max_by_column and of the ordered
//   fold of a matrix (one row axis, one column axis): one light kernel, a thread per output
//   column walking its rows in order (the fold's chain, or the keys' maximum) in registers.
//
// The column maxima are in kernels/reduce_axis/reduce_axis_columns.cu, the ordered fold in
// kernels/reduce_axis/reduce_axis_fold.cu; what the three share in reduce_axis_shared.cuh.

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "kernels/common/float_ops.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/reduce_axis/max_key.h"
#include "kernels/reduce_axis/reduce_axis.h"
#include "kernels/reduce_axis/reduce_axis_shared.cuh"

namespace tlrt::kernels {
namespace {

using namespace reduce_axis_detail;

// ---------------------------------------------------------------------------------------------
// Row reductions

// One accumulator per vector lane, so that a thread's additions form kLanes independent chains.
template <class Op>
TLRT_DEVICE_INLINE void add_vector(typename Op::Acc (&acc)[4], const float4& v) {
  acc[0] = Op::add(acc[0], v.x);
  acc[1] = Op::add(acc[1], v.y);
  acc[2] = Op::add(acc[2], v.z);
  acc[3] = Op::add(acc[3], v.w);
}
template <class Op>
TLRT_DEVICE_INLINE void add_vector(typename Op::Acc (&acc)[2], const double2& v) {
  acc[0] = Op::add(acc[0], v.x);
  acc[1] = Op::add(acc[1], v.y);
}

// Elements before the first 16-byte boundary of a row starting at p (payloads are at least
// element aligned), at most cols.
template <class T>
TLRT_DEVICE_INLINE uint64_t row_head(const T* p, uint64_t cols) {
  const uint64_t head = static_cast<uint64_t>(to_word_boundary(p, 0));
  return head < cols ? head : cols;
}

// The warp-per-row kernel: a lane issues kRowBatch 16-byte loads before adding them (a row of
// 1024 floats is one batch: the warp has the whole row in flight), with a register bound for
// kRowBlocks resident blocks per SM.
constexpr int kRowBatch = 8;
constexpr int kRowBlocks = 4;

// The accumulator of lane `lane` of a warp over the row at p: the head's elements into acc[0],
// the lane's vectors lane, lane + 32, ... in increasing order into acc[0 .. kLanes - 1], the
// tail's elements into acc[1], then acc[0] merged with acc[1], acc[2], ... in that order.
template <class Op, class T>
TLRT_DEVICE_INLINE typename Op::Acc row_lane(const T* p, uint64_t cols, uint32_t lane,
                                             uint64_t policy) {
  using V = typename Vec16<T>::type;
  constexpr int kLanes = Vec16<T>::kLanes;
  typename Op::Acc acc[kLanes];
#pragma unroll
  for (int i = 0; i < kLanes; ++i) acc[i] = Op::identity();
  const uint64_t head = row_head(p, cols);  // < kLanes
  if (lane < head) acc[0] = Op::add(acc[0], p[lane]);
  const uint64_t vectors = (cols - head) / kLanes;
  const uint64_t mine = vectors > lane ? (vectors - lane + 31) / 32 : 0;
  consume_batches<kRowBatch>(reinterpret_cast<const V*>(p + head) + lane, 32, mine, policy,
                             [&](const V& v) { add_vector<Op>(acc, v); });
  const uint64_t tail = head + vectors * kLanes;  // cols - tail < kLanes
  if (lane < cols - tail) acc[1] = Op::add(acc[1], p[tail + lane]);
#pragma unroll
  for (int i = 1; i < kLanes; ++i) acc[0] = Op::merge(acc[0], acc[i]);
  return acc[0];
}

// 16-byte loads in flight per thread of the block-per-row kernel.
constexpr uint32_t kRowUnroll = 4;

// One row's accumulator of a group of kGroup threads (lane in [0, kGroup)): kRowUnroll vector
// loads are issued before their additions, into kLanes accumulators.
template <class Op, class T, int kGroup>
TLRT_DEVICE_INLINE typename Op::Acc row_partial(const T* p, uint64_t cols, int lane) {
  using V = typename Vec16<T>::type;
  constexpr int kLanes = Vec16<T>::kLanes;
  typename Op::Acc acc[kLanes];
#pragma unroll
  for (int i = 0; i < kLanes; ++i) acc[i] = Op::identity();
  const uint64_t head = row_head(p, cols);
  for (uint64_t j = lane; j < head; j += kGroup) acc[0] = Op::add(acc[0], p[j]);
  const uint64_t vectors = (cols - head) / kLanes;
  const V* pv = reinterpret_cast<const V*>(p + head);
  uint64_t v = lane;
  for (; v + (kRowUnroll - 1) * kGroup < vectors; v += kRowUnroll * kGroup) {
    V vals[kRowUnroll];
#pragma unroll
    for (uint32_t i = 0; i < kRowUnroll; ++i) vals[i] = __ldg(pv + v + i * kGroup);
#pragma unroll
    for (uint32_t i = 0; i < kRowUnroll; ++i) add_vector<Op>(acc, vals[i]);
  }
  for (; v < vectors; v += kGroup) add_vector<Op>(acc, __ldg(pv + v));
  for (uint64_t j = head + vectors * kLanes + lane; j < cols; j += kGroup) {
    acc[1] = Op::add(acc[1], p[j]);
  }
#pragma unroll
  for (int i = 1; i < kLanes; ++i) acc[0] = Op::merge(acc[0], acc[i]);
  return acc[0];
}

template <class Op>
TLRT_DEVICE_INLINE typename Op::Acc warp_merge(typename Op::Acc acc) {
#pragma unroll
  for (int w = 16; w >= 1; w /= 2) acc = Op::merge(acc, __shfl_xor_sync(0xffffffffu, acc, w));
  return acc;
}

// A warp per row, rows w, w + W, ... for warp w of W in the grid.
template <class Op, class T>
__global__ void __launch_bounds__(kThreads, kRowBlocks)
    by_row_warp_kernel(const T* __restrict__ x, uint64_t rows, uint64_t cols, T* __restrict__ out) {
  const uint64_t policy = evict_first_policy();
  const uint32_t lane = threadIdx.x % 32;
  const uint64_t warp = (static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const uint64_t warps = static_cast<uint64_t>(gridDim.x) * blockDim.x / 32;
  const T* p = x + warp * cols;
  const uint64_t step = warps * cols;
#pragma unroll 1
  for (uint64_t row = warp; row < rows; row += warps, p += step) {
    const auto acc = warp_merge<Op>(row_lane<Op, T>(p, cols, lane, policy));
    if (lane == 0) out[row] = Op::finish(acc);
  }
}

// The block per row (few long rows): the warps' accumulators meet in shared memory.
template <class Op, class T>
__global__ void __launch_bounds__(kThreads)
    by_row_block_kernel(const T* __restrict__ x, uint64_t rows, uint64_t cols,
                        T* __restrict__ out) {
  using Acc = typename Op::Acc;
  __shared__ Acc partial[kThreads / 32];
  const int lane = static_cast<int>(threadIdx.x);
  for (uint64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    Acc acc = warp_merge<Op>(row_partial<Op, T, kThreads>(x + row * cols, cols, lane));
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int w = 1; w < kThreads / 32; ++w) acc = Op::merge(acc, partial[w]);
      out[row] = Op::finish(acc);
    }
    __syncthreads();
  }
}

template <class Op, class T>
void by_row(const T* x, uint64_t rows, uint64_t cols, T* out, cudaStream_t stream, const char* op) {
  if (rows == 0) return;
  if (cols == 0) {
    check_cuda(cudaMemsetAsync(out, 0, rows * sizeof(T), stream), op, "cudaMemsetAsync");
    return;
  }
  const uint64_t sms = current_sm_count(op);
  if (rows < 16 * sms && cols >= 4096) {
    by_row_block_kernel<Op, T>
        <<<grid_for(rows, 1, 65535), kThreads, 0, stream>>>(x, rows, cols, out);
  } else {
    by_row_warp_kernel<Op, T>
        <<<grid_for(rows, kThreads / 32, 65535 * 8), kThreads, 0, stream>>>(x, rows, cols, out);
  }
  check_launch(op);
}

// ---------------------------------------------------------------------------------------------
// Small column reductions

// Up to kLightRows rows and kLightElements elements, reduce_max_by_column and the ordered fold
// of a matrix (one row axis, one column axis) run on one light kernel: a thread per output column
// walks its rows in order and takes them in row order (Op::add: for the fold the specified chain
// from +0, one rounding per add). Its loads go out in batches of kLightBatch rows, every load of a
// batch issued before the batch's first add, and the last rows in batches of 4, 2 and 1, so 32
// rows wait on 4 round trips to memory and 7 rows on 3. No shared-memory stages, no combine
// across blocks, small parameters and little code. Device time on the H200 (docs/BENCH.md): the
// fold 2.19 us at 32 x 32 and the column maxima 2.43, against 2.84 and 3.02 with 4 loads in flight
// at a time.
constexpr uint32_t kLightThreads = 128;
constexpr int kLightBatch = 8;

// Rows p[0], p[stride], ..., p[(N - 1) * stride] into acc, in that order.
template <class Op, int N, class T>
__device__ __forceinline__ typename Op::Acc light_batch(typename Op::Acc acc, const T* p,
                                                        uint64_t stride) {
  T v[N];
#pragma unroll
  for (int i = 0; i < N; ++i) v[i] = p[i * stride];
#pragma unroll
  for (int i = 0; i < N; ++i) acc = Op::add(acc, v[i]);
  return acc;
}

// The last rows - r (fewer than 2N) rows from row r on, in batches of N, N / 2, ..., 1.
template <class Op, int N, class T>
__device__ __forceinline__ typename Op::Acc light_tail(typename Op::Acc acc, const T* p, uint32_t r,
                                                       uint32_t rows, uint64_t stride) {
  if (rows - r >= N) {
    acc = light_batch<Op, N>(acc, p + r * stride, stride);
    r += N;
  }
  if constexpr (N > 1) acc = light_tail<Op, N / 2>(acc, p, r, rows, stride);
  return acc;
}

// M[r, c] = x[r * row_stride + c * col_stride].
template <class Op, class T>
__global__ void __launch_bounds__(kLightThreads)
    light_columns_kernel(const T* __restrict__ x, uint32_t rows, uint64_t cols, uint64_t row_stride,
                         uint64_t col_stride, T* __restrict__ out) {
  const uint64_t c = uint64_t{blockIdx.x} * kLightThreads + threadIdx.x;
  if (c >= cols) return;
  const T* p = x + c * col_stride;
  typename Op::Acc acc = Op::identity();
  uint32_t r = 0;
  for (; rows - r >= kLightBatch; r += kLightBatch)
    acc = light_batch<Op, kLightBatch>(acc, p + r * row_stride, row_stride);
  acc = light_tail<Op, kLightBatch / 2>(acc, p, r, rows, row_stride);
  out[c] = Op::finish(acc);
}

}  // namespace

namespace reduce_axis_detail {

template <class Op, class T>
void launch_light_columns(const T* x, uint64_t rows, uint64_t cols, uint64_t row_stride,
                          uint64_t col_stride, T* out, cudaStream_t stream, const char* op) {
  const uint64_t blocks = (cols + kLightThreads - 1) / kLightThreads;
  light_columns_kernel<Op, T><<<static_cast<unsigned>(blocks), kLightThreads, 0, stream>>>(
      x, static_cast<uint32_t>(rows), cols, row_stride, col_stride, out);
  check_launch(op);
}

#define TLRT_LIGHT_COLUMNS_INSTANTIATE(Op, T)                                                    \
  template void launch_light_columns<Op<T>, T>(const T*, uint64_t, uint64_t, uint64_t, uint64_t, \
                                               T*, cudaStream_t, const char*);
TLRT_LIGHT_COLUMNS_INSTANTIATE(MaxOp, float)
TLRT_LIGHT_COLUMNS_INSTANTIATE(MaxOp, double)
TLRT_LIGHT_COLUMNS_INSTANTIATE(SumOp, float)
TLRT_LIGHT_COLUMNS_INSTANTIATE(SumOp, double)
#undef TLRT_LIGHT_COLUMNS_INSTANTIATE

}  // namespace reduce_axis_detail

template <class T>
void reduce_sum_by_row_cuda(const T* x, uint64_t rows, uint64_t cols, T* out, CUstream_st* stream) {
  by_row<SumOp<T>>(x, rows, cols, out, stream, "reduce_sum_by_row");
}

template <class T>
void reduce_max_by_row_cuda(const T* x, uint64_t rows, uint64_t cols, T* out, CUstream_st* stream) {
  by_row<MaxOp<T>>(x, rows, cols, out, stream, "reduce_max_by_row");
}

template <class T>
void reduce_axis_copy_cuda(const T* x, uint64_t n, T* out, CUstream_st* stream) {
  if (n == 0) return;
  check_cuda(cudaMemcpyAsync(out, x, n * sizeof(T), cudaMemcpyDeviceToDevice, stream),
             "reduce_sum_axis", "cudaMemcpyAsync device to device");
}

#define TLRT_REDUCE_AXIS_INSTANTIATE(T)                                                    \
  template void reduce_sum_by_row_cuda<T>(const T*, uint64_t, uint64_t, T*, CUstream_st*); \
  template void reduce_max_by_row_cuda<T>(const T*, uint64_t, uint64_t, T*, CUstream_st*); \
  template void reduce_axis_copy_cuda<T>(const T*, uint64_t, T*, CUstream_st*);

TLRT_REDUCE_AXIS_INSTANTIATE(float)
TLRT_REDUCE_AXIS_INSTANTIATE(double)

}  // namespace tlrt::kernels
