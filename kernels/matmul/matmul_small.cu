// Small matrix products without cuBLAS (kernels/matmul/matmul.h, bmm_small_fits): a thread per
// output runs its inner product in k order with fused multiply-adds, reading the operands in place
// through the transpose flags. A call costs one launch, where cuBLAS's host path costs a few
// microseconds more; the arithmetic is strict in both dtypes (no TF32) and within the bound of
// docs/NUMERICS.md ("Matrix products"), which holds for any order, fused or not.
#include <cuda_runtime.h>

#include "kernels/common/launch.cuh"
#include "kernels/matmul/matmul.h"

namespace tlrt::kernels {
namespace {

constexpr int kSmallThreads = 128;

template <class T>
__global__ void __launch_bounds__(kSmallThreads)
    bmm_small_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c,
                     uint64_t outputs, uint64_t m, uint64_t n, uint64_t p, bool ta, bool tb,
                     T alpha) {
  const uint64_t per_batch = m * p;
  for (uint64_t o = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; o < outputs;
       o += uint64_t{gridDim.x} * blockDim.x) {
    const uint64_t batch = o / per_batch;
    const uint64_t r = o - batch * per_batch;
    const uint64_t i = r / p, j = r - i * p;
    const T* ab = a + batch * m * n;
    const T* bb = b + batch * n * p;
    // A'[i, k] and B'[k, j] with their strides in k.
    const T* x = ta ? ab + i : ab + i * n;
    const uint64_t x_step = ta ? m : 1;
    const T* y = tb ? bb + j * n : bb + j;
    const uint64_t y_step = tb ? 1 : p;
    T acc = T(0);
    for (uint64_t k = 0; k < n; ++k) acc = fma(x[k * x_step], y[k * y_step], acc);
    // acc * 1 is acc exactly; alpha = 0 gives +0 whatever the sum (BLAS).
    c[o] = alpha == T(0) ? T(0) : acc * alpha;
  }
}

}  // namespace

template <class T>
void bmm_small_cuda(const T* a, const T* b, T* c, const MatmulShape& shape, CUstream_st* stream,
                    const char* op) {
  const uint64_t outputs = shape.batch * shape.m * shape.p;
  if (outputs == 0) return;
  bmm_small_kernel<T><<<grid_for(outputs, kSmallThreads), kSmallThreads, 0, stream>>>(
      a, b, c, outputs, shape.m, shape.n, shape.p, shape.transpose_a, shape.transpose_b,
      static_cast<T>(shape.alpha));
  check_launch(op);
}

template void bmm_small_cuda<float>(const float*, const float*, float*, const MatmulShape&,
                                    CUstream_st*, const char*);
template void bmm_small_cuda<double>(const double*, const double*, double*, const MatmulShape&,
                                     CUstream_st*, const char*);

}  // namespace tlrt::kernels
