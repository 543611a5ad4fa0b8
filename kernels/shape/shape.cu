// One-dimensional shape ops, CUDA backend: concat1d and slice1d of contiguous float / double
// device buffers. Both results are contiguous runs of input bytes, so each part is one
// device-to-device cudaMemcpyAsync on the op's stream: the copy engine reaches the device's copy
// bandwidth for any alignment without occupying SMs, and moves bits unchanged (bit-exact with the
// reference backend, NaN payloads included). No kernel is launched.
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/launch.cuh"
#include "kernels/shape/shape.h"

namespace tlrt::kernels {
namespace {

// Queues the copy of `count` elements; nothing for an empty part (its pointers may be null).
template <class T>
void copy_elements(T* to, const T* from, uint64_t count, cudaStream_t stream, const char* op) {
  if (count == 0) return;
  check_cuda(cudaMemcpyAsync(to, from, count * sizeof(T), cudaMemcpyDeviceToDevice, stream), op,
             "cudaMemcpyAsync device to device");
}

}  // namespace

template <class T>
void concat1d_cuda(const T* a, uint64_t n, const T* b, uint64_t m, T* out, CUstream_st* stream) {
  copy_elements(out, a, n, stream, "concat1d");
  copy_elements(out + n, b, m, stream, "concat1d");
}

template <class T>
void slice1d_cuda(const T* x, uint64_t start, uint64_t len, T* out, CUstream_st* stream) {
  copy_elements(out, x + start, len, stream, "slice1d");
}

template void concat1d_cuda<float>(const float*, uint64_t, const float*, uint64_t, float*,
                                   CUstream_st*);
template void concat1d_cuda<double>(const double*, uint64_t, const double*, uint64_t, double*,
                                    CUstream_st*);
template void slice1d_cuda<float>(const float*, uint64_t, uint64_t, float*, CUstream_st*);
template void slice1d_cuda<double>(const double*, uint64_t, uint64_t, double*, CUstream_st*);

}  // namespace tlrt::kernels
