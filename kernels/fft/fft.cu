// CUDA kernels of the FFT family (kernels/fft/fft.h): the spectrum copy in front of cuFFT's C2R
// (which overwrites its input, so a borrowed spectrum is never handed to it), with the endpoint
// rule and the 1/n factor fused into it; the n = 1 transforms (no plan); and the per-mode complex
// mixing of the legacy spectral convolution. All indices are 64-bit; every kernel is grid-stride.
// The FFTs are tolerance-level (SPEC-ops 5), so these kernels need no staged rounding; the mixing
// sums accumulate in binary64 for both dtypes.
#include <cuda_runtime.h>

#include <algorithm>

#include "kernels/common/float_ops.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/fft/fft.h"

namespace tlrt::kernels {
namespace {

// One spectrum component, endpoint rule and factor applied.
template <class T>
__device__ inline typename Pair<T>::type prepared(typename Pair<T>::type v, bool endpoint,
                                                  bool scaled, T scale) {
  if (endpoint) v.y = T(0);
  if (scaled) {
    v.x = v.x * scale;
    v.y = v.y * scale;
  }
  return v;
}

// Short rows: one thread per bin over the flat (row, bin) range (a division per bin).
template <class T>
__global__ void irfft_prepare_flat_kernel(const T* __restrict__ src, T* __restrict__ dst,
                                          uint64_t rows, uint64_t n, uint64_t stride, uint64_t dist,
                                          bool scaled, T scale) {
  using V = typename Pair<T>::type;
  const uint64_t bins = n / 2 + 1;
  const uint64_t total = rows * bins;
  const uint64_t nyquist = (n % 2 == 0) ? n / 2 : bins;  // bins: no Nyquist bin
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < total;
       i += uint64_t{gridDim.x} * blockDim.x) {
    const uint64_t r = i / bins;
    const uint64_t k = i - r * bins;
    const uint64_t at = r * dist + k * stride;
    reinterpret_cast<V*>(dst)[at] =
        prepared<T>(reinterpret_cast<const V*>(src)[at], k == 0 || k == nyquist, scaled, scale);
  }
}

// Long rows: a block walks whole rows, its threads over the bins (no division per element).
template <class T>
__global__ void irfft_prepare_rows_kernel(const T* __restrict__ src, T* __restrict__ dst,
                                          uint64_t rows, uint64_t n, uint64_t stride, uint64_t dist,
                                          bool scaled, T scale) {
  using V = typename Pair<T>::type;
  const uint64_t bins = n / 2 + 1;
  const uint64_t nyquist = (n % 2 == 0) ? n / 2 : bins;
  for (uint64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const V* in = reinterpret_cast<const V*>(src) + r * dist;
    V* out = reinterpret_cast<V*>(dst) + r * dist;
    // Four loads in flight per thread before the stores.
    for (uint64_t k0 = threadIdx.x; k0 < bins; k0 += 4 * uint64_t{blockDim.x}) {
      V v[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const uint64_t k = k0 + j * uint64_t{blockDim.x};
        if (k < bins) v[j] = in[k * stride];
      }
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const uint64_t k = k0 + j * uint64_t{blockDim.x};
        if (k < bins) {
          out[k * stride] = prepared<T>(v[j], k == 0 || k == nyquist, scaled, scale);
        }
      }
    }
  }
}

template <class T>
__global__ void rfft_length1_kernel(const T* __restrict__ x, uint64_t batch, T* __restrict__ out) {
  for (uint64_t b = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; b < batch;
       b += uint64_t{gridDim.x} * blockDim.x) {
    out[2 * b] = x[b];
    out[2 * b + 1] = T(0);
  }
}

template <class T>
__global__ void irfft_length1_kernel(const T* __restrict__ spec, uint64_t batch, bool scaled,
                                     T scale, T* __restrict__ out) {
  for (uint64_t b = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; b < batch;
       b += uint64_t{gridDim.x} * blockDim.x) {
    const T v = spec[2 * b];
    out[b] = scaled ? v * scale : v;
  }
}

__device__ inline bool endpoint_bin(uint64_t k, uint64_t grid) {
  return k == 0 || 2 * k == grid;
}

// z[k, o] for k < bins; threads over (k, o) with o fastest, so the weight reads coalesce.
template <class T>
__global__ void spectral_mix_fwd_kernel(const T* __restrict__ xs, const T* __restrict__ wre,
                                        const T* __restrict__ wim, uint64_t grid, uint64_t width,
                                        uint64_t modes, T scale, T* __restrict__ z) {
  const uint64_t bins = grid / 2 + 1;
  const uint64_t total = bins * width;
  for (uint64_t idx = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; idx < total;
       idx += uint64_t{gridDim.x} * blockDim.x) {
    const uint64_t k = idx / width;
    const uint64_t o = idx - k * width;
    double re = 0, im = 0;
    if (k < modes) {
      for (uint64_t i = 0; i < width; ++i) {
        const double xr = xs[2 * (k * width + i)];
        const double xi = xs[2 * (k * width + i) + 1];
        const uint64_t w = (k * width + i) * width + o;
        const double ar = wre[w];
        const double ai = wim[w];
        re += xr * ar - xi * ai;
        im += xr * ai + xi * ar;
      }
    }
    const T s = scale;
    z[2 * idx] = static_cast<T>(re) * s;
    z[2 * idx + 1] = endpoint_bin(k, grid) ? T(0) : static_cast<T>(im) * s;
  }
}

// dz[k, o] from ds[k, o]: the adjoint weight fl(w_k / grid), endpoint imaginary parts +0.
template <class T>
__device__ inline void scaled_dz(const T* ds, uint64_t k, uint64_t o, uint64_t width, uint64_t grid,
                                 T f_end, T f_mid, double* re, double* im) {
  const bool end = endpoint_bin(k, grid);
  const T f = end ? f_end : f_mid;
  const T dr = ds[2 * (k * width + o)] * f;
  const T di = end ? T(0) : ds[2 * (k * width + o) + 1] * f;
  *re = dr;
  *im = di;
}

template <class T>
__global__ void spectral_dw_kernel(const T* __restrict__ xs, const T* __restrict__ ds,
                                   uint64_t grid, uint64_t width, uint64_t modes, T f_end, T f_mid,
                                   T* __restrict__ dwre, T* __restrict__ dwim) {
  const uint64_t total = modes * width * width;
  for (uint64_t idx = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; idx < total;
       idx += uint64_t{gridDim.x} * blockDim.x) {
    const uint64_t o = idx % width;
    const uint64_t ki = idx / width;  // k * width + i
    const uint64_t k = ki / width;
    double dr, di;
    scaled_dz(ds, k, o, width, grid, f_end, f_mid, &dr, &di);
    const double xr = xs[2 * ki];
    const double xi = -static_cast<double>(xs[2 * ki + 1]);
    dwre[idx] = static_cast<T>(xr * dr - xi * di);
    dwim[idx] = static_cast<T>(xr * di + xi * dr);
  }
}

template <class T>
__global__ void spectral_dxs_kernel(const T* __restrict__ ds, const T* __restrict__ wre,
                                    const T* __restrict__ wim, uint64_t grid, uint64_t width,
                                    uint64_t modes, T f_end, T f_mid, T* __restrict__ dxs) {
  const uint64_t bins = grid / 2 + 1;
  const uint64_t total = bins * width;
  for (uint64_t idx = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; idx < total;
       idx += uint64_t{gridDim.x} * blockDim.x) {
    const uint64_t k = idx / width;
    double re = 0, im = 0;
    if (k < modes) {
      for (uint64_t o = 0; o < width; ++o) {
        double dr, di;
        scaled_dz(ds, k, o, width, grid, f_end, f_mid, &dr, &di);
        const uint64_t w = idx * width + o;  // (k * width + i) * width + o
        const double ar = wre[w];
        const double ai = -static_cast<double>(wim[w]);
        re += ar * dr - ai * di;
        im += ar * di + ai * dr;
      }
    }
    const bool end = endpoint_bin(k, grid);
    const double inv_w = end ? 1.0 : 0.5;
    dxs[2 * idx] = static_cast<T>(re * inv_w);
    dxs[2 * idx + 1] = end ? T(0) : static_cast<T>(im * inv_w);
  }
}

template <class T>
__global__ void write_load_info_kernel(FftLoadInfo* info, const T* src, uint64_t n, bool scaled,
                                       T scale) {
  info->src = src;
  info->bins = n / 2 + 1;
  info->nyquist = (n % 2 == 0) ? n / 2 : n / 2 + 1;
  info->scale = static_cast<double>(scale);
  info->scaled = scaled ? 1u : 0u;
  info->pad = 0;
}

}  // namespace

template <class T>
void fft_write_load_info_cuda(void* info, const T* src, uint64_t n, bool scaled, T scale,
                              CUstream_st* stream, const char* op) {
  write_load_info_kernel<T>
      <<<1, 1, 0, stream>>>(static_cast<FftLoadInfo*>(info), src, n, scaled, scale);
  check_launch(op);
}

template <class T>
void irfft_prepare_cuda(const T* src, T* dst, uint64_t rows, uint64_t n, uint64_t stride,
                        uint64_t dist, bool scaled, T scale, CUstream_st* stream, const char* op) {
  const uint64_t total = rows * fft_bins(n);
  if (total == 0) return;
  if (fft_bins(n) >= 128) {
    // Enough resident blocks to keep every SM streaming; each walks rows in turn.
    const uint64_t blocks = std::min<uint64_t>(rows, uint64_t{current_sm_count(op)} * 8);
    irfft_prepare_rows_kernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        src, dst, rows, n, stride, dist, scaled, scale);
  } else {
    irfft_prepare_flat_kernel<T><<<grid_for(total, kThreads), kThreads, 0, stream>>>(
        src, dst, rows, n, stride, dist, scaled, scale);
  }
  check_launch(op);
}

template <class T>
void rfft_length1_cuda(const T* x, uint64_t batch, T* out, CUstream_st* stream, const char* op) {
  if (batch == 0) return;
  rfft_length1_kernel<T><<<grid_for(batch, kThreads), kThreads, 0, stream>>>(x, batch, out);
  check_launch(op);
}

template <class T>
void irfft_length1_cuda(const T* spec, uint64_t batch, bool scaled, T scale, T* out,
                        CUstream_st* stream, const char* op) {
  if (batch == 0) return;
  irfft_length1_kernel<T>
      <<<grid_for(batch, kThreads), kThreads, 0, stream>>>(spec, batch, scaled, scale, out);
  check_launch(op);
}

template <class T>
void spectral_mix_fwd_cuda(const T* xs, const T* wre, const T* wim, uint64_t grid, uint64_t width,
                           uint64_t modes, T scale, T* z, CUstream_st* stream, const char* op) {
  const uint64_t total = fft_bins(grid) * width;
  if (total == 0) return;
  spectral_mix_fwd_kernel<T><<<grid_for(total, kThreads), kThreads, 0, stream>>>(
      xs, wre, wim, grid, width, modes, scale, z);
  check_launch(op);
}

template <class T>
void spectral_mix_bwd_cuda(const T* xs, const T* ds, const T* wre, const T* wim, uint64_t grid,
                           uint64_t width, uint64_t modes, T* dxs, T* dwre, T* dwim,
                           CUstream_st* stream, const char* op) {
  const T f_end = static_cast<T>(1.0 / static_cast<double>(grid));
  const T f_mid = static_cast<T>(2.0 / static_cast<double>(grid));
  const uint64_t weights = modes * width * width;
  if (weights != 0) {
    spectral_dw_kernel<T><<<grid_for(weights, kThreads), kThreads, 0, stream>>>(
        xs, ds, grid, width, modes, f_end, f_mid, dwre, dwim);
    check_launch(op);
  }
  const uint64_t total = fft_bins(grid) * width;
  if (total == 0) return;
  spectral_dxs_kernel<T><<<grid_for(total, kThreads), kThreads, 0, stream>>>(
      ds, wre, wim, grid, width, modes, f_end, f_mid, dxs);
  check_launch(op);
}

#define TLRT_FFT_INSTANTIATE(T)                                                                    \
  template void fft_write_load_info_cuda<T>(void*, const T*, uint64_t, bool, T, CUstream_st*,      \
                                            const char*);                                          \
  template void irfft_prepare_cuda<T>(const T*, T*, uint64_t, uint64_t, uint64_t, uint64_t, bool,  \
                                      T, CUstream_st*, const char*);                               \
  template void rfft_length1_cuda<T>(const T*, uint64_t, T*, CUstream_st*, const char*);           \
  template void irfft_length1_cuda<T>(const T*, uint64_t, bool, T, T*, CUstream_st*, const char*); \
  template void spectral_mix_fwd_cuda<T>(const T*, const T*, const T*, uint64_t, uint64_t,         \
                                         uint64_t, T, T*, CUstream_st*, const char*);              \
  template void spectral_mix_bwd_cuda<T>(const T*, const T*, const T*, const T*, uint64_t,         \
                                         uint64_t, uint64_t, T*, T*, T*, CUstream_st*,             \
                                         const char*);

TLRT_FFT_INSTANTIATE(float)
TLRT_FFT_INSTANTIATE(double)

}  // namespace tlrt::kernels
