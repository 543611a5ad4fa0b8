// The one-kernel inverse real FFT of power-of-two lengths (kernels/fft/irfft_pow2.h): a block per
// row at a time, its threads over the row's butterflies. Per row: Z_k formed from the packed row
// (one read of the spectrum) into shared memory, the Stockham passes in place (each butterfly's
// inputs held in registers between two barriers), the last pass written straight to the row's n
// reals. The twiddle table is built once per block; the grid is one wave of resident blocks
// striding over the rows.
#include <cuda_runtime.h>

#include <algorithm>

#include "kernels/common/launch.cuh"
#include "kernels/fft/irfft_pow2.h"

namespace tlrt::kernels {
namespace {

// Threads of a block: one per radix-4 butterfly up to 256.
template <int kLogH>
constexpr int kPow2Threads = (1 << kLogH) / 4 < 256 ? (1 << kLogH) / 4 : 256;

// One Stockham pass (sub-transform size ns, radix R) of the block's row in `data`; the last pass
// writes `dst` (the row's reals as h complex values) instead of `data`.
template <class T, int kLogH, int R, bool kLast>
__device__ __forceinline__ void pow2_pass(Cplx<T>* data, const Cplx<T>* table, uint64_t ns,
                                          Cplx<T>* __restrict__ dst) {
  constexpr uint64_t h = uint64_t{1} << kLogH;
  constexpr int kThreads = kPow2Threads<kLogH>;
  constexpr int kPer = static_cast<int>(h / R) / kThreads;
  Cplx<T> v[kPer][R];
#pragma unroll
  for (int b = 0; b < kPer; ++b) {
    const uint64_t j = threadIdx.x + uint64_t{kThreads} * b;
#pragma unroll
    for (int r = 0; r < R; ++r) v[b][r] = data[j + r * (h / R)];
  }
  __syncthreads();
  Cplx<T>* to = kLast ? dst : data;
#pragma unroll
  for (int b = 0; b < kPer; ++b) {
    const uint64_t j = threadIdx.x + uint64_t{kThreads} * b;
    stockham_butterfly<T, R>(v[b], table, h, ns, j);
    const uint64_t o = stockham_out(j, ns, R);
#pragma unroll
    for (int r = 0; r < R; ++r) to[o + r * ns] = v[b][r];
  }
  if (!kLast) __syncthreads();
}

template <class T, int kLogH>
__global__ void __launch_bounds__(kPow2Threads<kLogH>)
    irfft_pow2_kernel(const T* __restrict__ spec, uint64_t batch, bool scaled, T scale,
                      T* __restrict__ out) {
  constexpr uint64_t h = uint64_t{1} << kLogH;
  constexpr int kThreads = kPow2Threads<kLogH>;
  extern __shared__ unsigned char pow2_smem[];
  Cplx<T>* table = reinterpret_cast<Cplx<T>*>(pow2_smem);
  Cplx<T>* data = table + h;
  for (uint64_t k = threadIdx.x; k < h; k += kThreads) {
    double s = 0, c = 0;
    sincospi(static_cast<double>(k) / static_cast<double>(h), &s, &c);
    table[k] = {static_cast<T>(c), static_cast<T>(s)};
  }
  __syncthreads();
  for (uint64_t row = blockIdx.x; row < batch; row += gridDim.x) {
    const Cplx<T>* x = reinterpret_cast<const Cplx<T>*>(spec) + row * (h + 1);
    Cplx<T>* y = reinterpret_cast<Cplx<T>*>(out) + row * h;
    for (uint64_t k = threadIdx.x; k < h; k += kThreads) {
      data[k] = half_input(x, h, k, table[k], scaled, scale);
    }
    __syncthreads();
    uint64_t ns = 1;
    if constexpr (kLogH % 2 == 1) {
      pow2_pass<T, kLogH, 2, false>(data, table, ns, y);
      ns *= 2;
    }
    for (; ns * 4 < h; ns *= 4) pow2_pass<T, kLogH, 4, false>(data, table, ns, y);
    pow2_pass<T, kLogH, 4, true>(data, table, ns, y);
  }
}

template <class T, int kLogH>
void launch_pow2(const T* spec, uint64_t batch, bool scaled, T scale, T* out, cudaStream_t stream,
                 const char* op) {
  constexpr int kThreads = kPow2Threads<kLogH>;
  constexpr size_t bytes = 2 * (size_t{1} << kLogH) * sizeof(Cplx<T>);
  const int per_sm = resident_blocks_per_sm<irfft_pow2_kernel<T, kLogH>>(kThreads, bytes, op);
  const uint64_t wave = uint64_t{current_sm_count(op)} * static_cast<uint64_t>(per_sm);
  const uint64_t blocks = std::min(batch, wave);
  irfft_pow2_kernel<T, kLogH>
      <<<static_cast<unsigned>(blocks), kThreads, bytes, stream>>>(spec, batch, scaled, scale, out);
  check_launch(op);
}

}  // namespace

template <class T>
void irfft_pow2_cuda(const T* spec, uint64_t batch, uint64_t n, bool scaled, T scale, T* out,
                     CUstream_st* stream, const char* op) {
  if (!irfft_pow2_supported(n, sizeof(T))) {
    fail(ErrorKind::invalid_argument, op,
         "irfft_pow2_cuda: length " + std::to_string(n) + " is not a supported power of two");
  }
  if (batch == 0) return;
  switch (n) {
    case 256:
      return launch_pow2<T, 7>(spec, batch, scaled, scale, out, stream, op);
    case 512:
      return launch_pow2<T, 8>(spec, batch, scaled, scale, out, stream, op);
    case 1024:
      return launch_pow2<T, 9>(spec, batch, scaled, scale, out, stream, op);
    case 2048:
      return launch_pow2<T, 10>(spec, batch, scaled, scale, out, stream, op);
    case 4096:
      return launch_pow2<T, 11>(spec, batch, scaled, scale, out, stream, op);
    default:  // 8192, float32 only (irfft_pow2_supported)
      if constexpr (sizeof(T) == 4) launch_pow2<T, 12>(spec, batch, scaled, scale, out, stream, op);
      return;
  }
}

template void irfft_pow2_cuda<float>(const float*, uint64_t, uint64_t, bool, float, float*,
                                     CUstream_st*, const char*);
template void irfft_pow2_cuda<double>(const double*, uint64_t, uint64_t, bool, double, double*,
                                      CUstream_st*, const char*);

}  // namespace tlrt::kernels
