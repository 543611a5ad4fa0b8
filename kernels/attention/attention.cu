// The legacy attention pair's CUDA pieces between its matrix products and its row softmax
// (kernels/attention/attention.h): blocked-row flags, copies that clear blocked rows, and the row
// softmax backward. A warp per row in the row kernels; sums in a fixed order (each lane's
// columns in increasing order, then the warp's butterfly), so every result is repeatable.
#include <cuda_runtime.h>

#include "kernels/attention/attention.h"
#include "kernels/common/launch.cuh"

namespace tlrt::kernels {
namespace {

constexpr int kRowThreads = 256;  // 8 rows (warps) a block
constexpr int kRowsPerBlock = kRowThreads / 32;

template <class T>
__global__ void __launch_bounds__(kRowThreads)
    blocked_rows_kernel(const T* __restrict__ p, uint8_t* __restrict__ blocked, uint64_t rows,
                        uint64_t cols) {
  const uint64_t r = blockIdx.x * uint64_t{kRowsPerBlock} + threadIdx.x / 32;
  const unsigned lane = threadIdx.x % 32;
  if (r >= rows) return;
  const T* row = p + r * cols;
  // Scans 32 entries at a time and stops at the first nonzero one (NaN counts as nonzero): a
  // row that is not blocked usually shows it in its first 32 entries.
  bool found = false;
  for (uint64_t base = 0; base < cols && !found; base += 32) {
    const uint64_t j = base + lane;
    const bool nonzero = j < cols && !(row[j] == T(0));
    found = __any_sync(0xffffffffu, nonzero);
  }
  if (lane == 0) blocked[r] = found ? 0 : 1;
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    masked_rows_kernel(const T* src, const uint8_t* __restrict__ blocked, T* dst, uint64_t total,
                       uint64_t cols, bool in_place) {
  for (uint64_t x = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; x < total;
       x += uint64_t{gridDim.x} * blockDim.x) {
    if (blocked[x / cols] != 0) {
      dst[x] = T(0);
    } else if (!in_place) {
      dst[x] = src[x];
    }
  }
}

template <class T>
__global__ void __launch_bounds__(kRowThreads)
    softmax_bwd_kernel(const T* __restrict__ p, T* __restrict__ dp_ds,
                       const uint8_t* __restrict__ blocked, uint64_t rows, uint64_t cols) {
  const uint64_t r = blockIdx.x * uint64_t{kRowsPerBlock} + threadIdx.x / 32;
  const unsigned lane = threadIdx.x % 32;
  if (r >= rows) return;
  const T* pr = p + r * cols;
  T* row = dp_ds + r * cols;
  if (blocked != nullptr && blocked[r] != 0) {
    for (uint64_t j = lane; j < cols; j += 32) row[j] = T(0);
    return;
  }
  T c = T(0);
  for (uint64_t j = lane; j < cols; j += 32) c = fma(pr[j], row[j], c);
  for (int offset = 16; offset > 0; offset /= 2) c += __shfl_xor_sync(0xffffffffu, c, offset);
  for (uint64_t j = lane; j < cols; j += 32) row[j] = pr[j] * (row[j] - c);
}

dim3 row_grid(uint64_t rows) {
  return grid_for(rows, kRowsPerBlock, uint64_t{1} << 31);
}

}  // namespace

template <class T>
void attention_blocked_rows_cuda(const T* p, uint8_t* blocked, uint64_t rows, uint64_t cols,
                                 CUstream_st* stream, const char* op) {
  if (rows == 0) return;
  blocked_rows_kernel<T><<<row_grid(rows), kRowThreads, 0, stream>>>(p, blocked, rows, cols);
  check_launch(op);
}

template <class T>
void masked_rows_copy_cuda(const T* src, const uint8_t* blocked, T* dst, uint64_t rows,
                           uint64_t cols, CUstream_st* stream, const char* op) {
  const uint64_t total = rows * cols;
  if (total == 0) return;
  if (blocked == nullptr) {
    if (dst != src) {
      check_cuda(cudaMemcpyAsync(dst, src, total * sizeof(T), cudaMemcpyDeviceToDevice, stream), op,
                 "cudaMemcpyAsync device to device");
    }
    return;
  }
  masked_rows_kernel<T><<<grid_for(total, kThreads), kThreads, 0, stream>>>(
      src, blocked, dst, total, cols, dst == src);
  check_launch(op);
}

template <class T>
void attention_softmax_bwd_cuda(const T* p, T* dp_ds, const uint8_t* blocked, uint64_t rows,
                                uint64_t cols, CUstream_st* stream, const char* op) {
  if (rows == 0 || cols == 0) return;
  softmax_bwd_kernel<T><<<row_grid(rows), kRowThreads, 0, stream>>>(p, dp_ds, blocked, rows, cols);
  check_launch(op);
}

#define TLRT_ATTENTION_INSTANTIATE(T)                                                           \
  template void attention_blocked_rows_cuda<T>(const T*, uint8_t*, uint64_t, uint64_t,          \
                                               CUstream_st*, const char*);                      \
  template void masked_rows_copy_cuda<T>(const T*, const uint8_t*, T*, uint64_t, uint64_t,      \
                                         CUstream_st*, const char*);                            \
  template void attention_softmax_bwd_cuda<T>(const T*, T*, const uint8_t*, uint64_t, uint64_t, \
                                              CUstream_st*, const char*);
TLRT_ATTENTION_INSTANTIATE(float)
TLRT_ATTENTION_INSTANTIATE(double)
#undef TLRT_ATTENTION_INSTANTIATE

}  // namespace tlrt::kernels
