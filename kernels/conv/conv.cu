// Convolution, own CUDA kernels (kernels/conv/conv.h): the direct gather-form passes used where
// cuDNN has no engine (and with cuDNN off), the bias broadcast, add and gradient, and the
// group-diagonal kernel extraction for cuDNN. One thread per result element, grid-stride with
// 64-bit indices; every sum in a fixed order accumulated in double (float32 products are exact in
// double), so results are bit-reproducible run to run.
#include <cuda_runtime.h>

#include "kernels/common/float_ops.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/conv/conv.h"

namespace tlrt::kernels {
namespace {

// The geometry by value for the kernels.
struct Geo {
  uint64_t batch, cin, cout, cig, cog, kcols, kvol, in_vol, out_vol;
  uint64_t in[kConvAxes], k[kConvAxes], out[kConvAxes], stride[kConvAxes], pre[kConvAxes],
      dil[kConvAxes];
  bool dense;
};

Geo geo_of(const ConvShape& s) {
  Geo g;
  g.batch = s.batch;
  g.cin = s.cin;
  g.cout = s.cout;
  g.cig = s.cin_group();
  g.cog = s.cout_group();
  g.kcols = s.kernel_cols;
  g.kvol = s.k_volume();
  g.in_vol = s.in_volume();
  g.out_vol = s.out_volume();
  for (int a = 0; a < kConvAxes; ++a) {
    g.in[a] = s.in[a];
    g.k[a] = s.k[a];
    g.out[a] = s.out[a];
    g.stride[a] = s.stride[a];
    g.pre[a] = s.pre[a];
    g.dil[a] = s.dil[a];
  }
  g.dense = s.dense_kernel();
  return g;
}

__device__ __forceinline__ bool source_of(const Geo& g, int a, uint64_t q, uint64_t kappa,
                                          uint64_t* i) {
  const uint64_t reach = q * g.stride[a] + kappa * g.dil[a];
  if (reach < g.pre[a]) return false;
  *i = reach - g.pre[a];
  return *i < g.in[a];
}

__device__ __forceinline__ bool target_of(const Geo& g, int a, uint64_t i, uint64_t kappa,
                                          uint64_t* q) {
  const uint64_t shifted = i + g.pre[a];
  const uint64_t offset = kappa * g.dil[a];
  if (shifted < offset) return false;
  const uint64_t num = shifted - offset;
  if (num % g.stride[a] != 0) return false;
  *q = num / g.stride[a];
  return *q < g.out[a];
}

__device__ __forceinline__ uint64_t weight_at(const Geo& g, uint64_t o, uint64_t c) {
  const uint64_t col = g.dense ? c : c % g.cig;
  return (o * g.kcols + col) * g.kvol;
}

template <class T>
__global__ void fprop_kernel(Geo g, const T* __restrict__ x, const T* __restrict__ w,
                             const T* __restrict__ bias, T* __restrict__ y, uint64_t total) {
  for (uint64_t idx = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; idx < total;
       idx += uint64_t{gridDim.x} * blockDim.x) {
    uint64_t t = idx;
    const uint64_t q2 = t % g.out[2];
    t /= g.out[2];
    const uint64_t q1 = t % g.out[1];
    t /= g.out[1];
    const uint64_t q0 = t % g.out[0];
    t /= g.out[0];
    const uint64_t o = t % g.cout;
    const uint64_t n = t / g.cout;
    const uint64_t grp = o / g.cog;
    double acc = bias != nullptr ? static_cast<double>(bias[o]) : 0.0;
    for (uint64_t c = grp * g.cig; c < (grp + 1) * g.cig; ++c) {
      const T* xc = x + (n * g.cin + c) * g.in_vol;
      const T* wc = w + weight_at(g, o, c);
      for (uint64_t k0 = 0; k0 < g.k[0]; ++k0) {
        uint64_t i0;
        if (!source_of(g, 0, q0, k0, &i0)) continue;
        for (uint64_t k1 = 0; k1 < g.k[1]; ++k1) {
          uint64_t i1;
          if (!source_of(g, 1, q1, k1, &i1)) continue;
          for (uint64_t k2 = 0; k2 < g.k[2]; ++k2) {
            uint64_t i2;
            if (!source_of(g, 2, q2, k2, &i2)) continue;
            acc += static_cast<double>(wc[(k0 * g.k[1] + k1) * g.k[2] + k2]) *
                   static_cast<double>(xc[(i0 * g.in[1] + i1) * g.in[2] + i2]);
          }
        }
      }
    }
    y[idx] = static_cast<T>(acc);
  }
}

template <class T>
__global__ void dgrad_kernel(Geo g, const T* __restrict__ dy, const T* __restrict__ w,
                             const T* __restrict__ bias, T* __restrict__ dx, uint64_t total) {
  for (uint64_t idx = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; idx < total;
       idx += uint64_t{gridDim.x} * blockDim.x) {
    uint64_t t = idx;
    const uint64_t i2 = t % g.in[2];
    t /= g.in[2];
    const uint64_t i1 = t % g.in[1];
    t /= g.in[1];
    const uint64_t i0 = t % g.in[0];
    t /= g.in[0];
    const uint64_t c = t % g.cin;
    const uint64_t n = t / g.cin;
    const uint64_t grp = c / g.cig;
    double acc = bias != nullptr ? static_cast<double>(bias[c]) : 0.0;
    for (uint64_t o = grp * g.cog; o < (grp + 1) * g.cog; ++o) {
      const T* dyo = dy + (n * g.cout + o) * g.out_vol;
      const T* wc = w + weight_at(g, o, c);
      for (uint64_t k0 = 0; k0 < g.k[0]; ++k0) {
        uint64_t q0;
        if (!target_of(g, 0, i0, k0, &q0)) continue;
        for (uint64_t k1 = 0; k1 < g.k[1]; ++k1) {
          uint64_t q1;
          if (!target_of(g, 1, i1, k1, &q1)) continue;
          for (uint64_t k2 = 0; k2 < g.k[2]; ++k2) {
            uint64_t q2;
            if (!target_of(g, 2, i2, k2, &q2)) continue;
            acc += static_cast<double>(wc[(k0 * g.k[1] + k1) * g.k[2] + k2]) *
                   static_cast<double>(dyo[(q0 * g.out[1] + q1) * g.out[2] + q2]);
          }
        }
      }
    }
    dx[idx] = static_cast<T>(acc);
  }
}

// dw in the packed layout (cout, cig, kvol).
template <class T>
__global__ void wgrad_kernel(Geo g, const T* __restrict__ x, const T* __restrict__ dy,
                             T* __restrict__ dw, uint64_t total) {
  for (uint64_t idx = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; idx < total;
       idx += uint64_t{gridDim.x} * blockDim.x) {
    uint64_t t = idx;
    const uint64_t k2 = t % g.k[2];
    t /= g.k[2];
    const uint64_t k1 = t % g.k[1];
    t /= g.k[1];
    const uint64_t k0 = t % g.k[0];
    t /= g.k[0];
    const uint64_t cl = t % g.cig;
    const uint64_t o = t / g.cig;
    const uint64_t c = (o / g.cog) * g.cig + cl;
    double acc = 0.0;
    for (uint64_t n = 0; n < g.batch; ++n) {
      const T* xc = x + (n * g.cin + c) * g.in_vol;
      const T* dyo = dy + (n * g.cout + o) * g.out_vol;
      for (uint64_t q0 = 0; q0 < g.out[0]; ++q0) {
        uint64_t i0;
        if (!source_of(g, 0, q0, k0, &i0)) continue;
        for (uint64_t q1 = 0; q1 < g.out[1]; ++q1) {
          uint64_t i1;
          if (!source_of(g, 1, q1, k1, &i1)) continue;
          for (uint64_t q2 = 0; q2 < g.out[2]; ++q2) {
            uint64_t i2;
            if (!source_of(g, 2, q2, k2, &i2)) continue;
            acc += static_cast<double>(dyo[(q0 * g.out[1] + q1) * g.out[2] + q2]) *
                   static_cast<double>(xc[(i0 * g.in[1] + i1) * g.in[2] + i2]);
          }
        }
      }
    }
    dw[idx] = static_cast<T>(acc);
  }
}

constexpr int kBiasThreads = 256;

// One block per channel (grid-stride over channels): thread t folds n = 0.., q = t, t + 256, ...
// in order, then a fixed pairwise tree over the 256 partial sums.
template <class T>
__global__ void bias_grad_kernel(const T* __restrict__ dy, uint64_t batch, uint64_t channels,
                                 uint64_t volume, T* __restrict__ db) {
  __shared__ double partial[kBiasThreads];
  for (uint64_t o = blockIdx.x; o < channels; o += gridDim.x) {
    double acc = 0.0;
    for (uint64_t n = 0; n < batch; ++n) {
      const T* row = dy + (n * channels + o) * volume;
      for (uint64_t q = threadIdx.x; q < volume; q += kBiasThreads) {
        acc += static_cast<double>(row[q]);
      }
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int width = kBiasThreads / 2; width > 0; width /= 2) {
      if (static_cast<int>(threadIdx.x) < width) {
        partial[threadIdx.x] = partial[threadIdx.x] + partial[threadIdx.x + width];
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) db[o] = static_cast<T>(partial[0]);
    __syncthreads();
  }
}

template <class T>
__global__ void bias_fill_kernel(const T* __restrict__ bias, uint64_t channels, uint64_t volume,
                                 T* __restrict__ y, uint64_t total) {
  for (uint64_t idx = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; idx < total;
       idx += uint64_t{gridDim.x} * blockDim.x) {
    y[idx] = bias[(idx / volume) % channels];
  }
}

template <class T>
__global__ void bias_add_kernel(const T* __restrict__ bias, uint64_t channels, uint64_t volume,
                                T* __restrict__ y, uint64_t total) {
  for (uint64_t idx = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; idx < total;
       idx += uint64_t{gridDim.x} * blockDim.x) {
    y[idx] = add_rn(y[idx], bias[(idx / volume) % channels]);
  }
}

template <class T>
__global__ void pack_groups_kernel(const T* __restrict__ dense, uint64_t cin, uint64_t cig,
                                   uint64_t cog, uint64_t kvol, T* __restrict__ packed,
                                   uint64_t total) {
  for (uint64_t idx = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; idx < total;
       idx += uint64_t{gridDim.x} * blockDim.x) {
    const uint64_t o = idx / (cig * kvol);
    const uint64_t rest = idx % (cig * kvol);
    const uint64_t cl = rest / kvol;
    const uint64_t kk = rest % kvol;
    packed[idx] = dense[(o * cin + (o / cog) * cig + cl) * kvol + kk];
  }
}

template <class T>
__global__ void pad_input_kernel(Geo g, const T* __restrict__ x, T* __restrict__ xp, uint64_t p0,
                                 uint64_t p1, uint64_t p2, uint64_t total) {
  for (uint64_t idx = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; idx < total;
       idx += uint64_t{gridDim.x} * blockDim.x) {
    uint64_t t = idx;
    const uint64_t a2 = t % p2;
    t /= p2;
    const uint64_t a1 = t % p1;
    t /= p1;
    const uint64_t a0 = t % p0;
    const uint64_t plane = t / p0;
    T v = T(0);
    if (a0 >= g.pre[0] && a0 - g.pre[0] < g.in[0] && a1 >= g.pre[1] && a1 - g.pre[1] < g.in[1] &&
        a2 >= g.pre[2] && a2 - g.pre[2] < g.in[2]) {
      v = x[plane * g.in_vol + ((a0 - g.pre[0]) * g.in[1] + (a1 - g.pre[1])) * g.in[2] +
            (a2 - g.pre[2])];
    }
    xp[idx] = v;
  }
}

}  // namespace

ConvShape conv_padded_shape(const ConvShape& s) {
  ConvShape p = s;
  for (int a = 0; a < kConvAxes; ++a) {
    p.in[a] = s.in[a] + s.pre[a] + s.post[a];
    p.pre[a] = 0;
    p.post[a] = 0;
  }
  return p;
}

template <class T>
void conv_pad_input_cuda(const ConvShape& s, const T* x, T* xp, CUstream_st* stream) {
  const ConvShape p = conv_padded_shape(s);
  const uint64_t total = s.batch * s.cin * p.in_volume();
  if (total == 0) return;
  pad_input_kernel<T><<<grid_for(total, kThreads), kThreads, 0, stream>>>(geo_of(s), x, xp, p.in[0],
                                                                          p.in[1], p.in[2], total);
  check_launch("conv input padding");
}

template <class T>
void conv_fprop_direct_cuda(const ConvShape& s, const T* x, const T* w, const T* bias, T* y,
                            CUstream_st* stream) {
  const uint64_t total = s.batch * s.cout * s.out_volume();
  if (total == 0) return;
  fprop_kernel<T>
      <<<grid_for(total, kThreads), kThreads, 0, stream>>>(geo_of(s), x, w, bias, y, total);
  check_launch("conv fprop");
}

template <class T>
void conv_dgrad_direct_cuda(const ConvShape& s, const T* dy, const T* w, const T* bias, T* dx,
                            CUstream_st* stream) {
  const uint64_t total = s.batch * s.cin * s.in_volume();
  if (total == 0) return;
  dgrad_kernel<T>
      <<<grid_for(total, kThreads), kThreads, 0, stream>>>(geo_of(s), dy, w, bias, dx, total);
  check_launch("conv dgrad");
}

template <class T>
void conv_wgrad_direct_cuda(const ConvShape& s, const T* x, const T* dy, T* dw,
                            CUstream_st* stream) {
  const uint64_t total = s.cout * s.cin_group() * s.k_volume();
  if (total == 0) return;
  wgrad_kernel<T><<<grid_for(total, kThreads), kThreads, 0, stream>>>(geo_of(s), x, dy, dw, total);
  check_launch("conv wgrad");
}

template <class T>
void conv_bias_grad_cuda(const T* dy, uint64_t batch, uint64_t channels, uint64_t volume, T* db,
                         CUstream_st* stream) {
  if (channels == 0) return;
  const uint64_t blocks = channels < (uint64_t{1} << 20) ? channels : (uint64_t{1} << 20);
  bias_grad_kernel<T>
      <<<static_cast<unsigned>(blocks), kBiasThreads, 0, stream>>>(dy, batch, channels, volume, db);
  check_launch("conv bias gradient");
}

template <class T>
void conv_bias_fill_cuda(const T* bias, uint64_t batch, uint64_t channels, uint64_t volume, T* y,
                         CUstream_st* stream) {
  const uint64_t total = batch * channels * volume;
  if (total == 0) return;
  bias_fill_kernel<T>
      <<<grid_for(total, kThreads), kThreads, 0, stream>>>(bias, channels, volume, y, total);
  check_launch("conv bias broadcast");
}

template <class T>
void conv_bias_add_cuda(const T* bias, uint64_t batch, uint64_t channels, uint64_t volume, T* y,
                        CUstream_st* stream) {
  const uint64_t total = batch * channels * volume;
  if (total == 0) return;
  bias_add_kernel<T>
      <<<grid_for(total, kThreads), kThreads, 0, stream>>>(bias, channels, volume, y, total);
  check_launch("conv bias add");
}

template <class T>
void conv_pack_groups_cuda(const T* dense, uint64_t cout, uint64_t cin, uint64_t groups,
                           uint64_t kvol, T* packed, CUstream_st* stream) {
  const uint64_t cig = cin / groups;
  const uint64_t total = cout * cig * kvol;
  if (total == 0) return;
  pack_groups_kernel<T><<<grid_for(total, kThreads), kThreads, 0, stream>>>(
      dense, cin, cig, cout / groups, kvol, packed, total);
  check_launch("conv group packing");
}

#define TLRT_CONV_CUDA(T)                                                                          \
  template void conv_fprop_direct_cuda<T>(const ConvShape&, const T*, const T*, const T*, T*,      \
                                          CUstream_st*);                                           \
  template void conv_dgrad_direct_cuda<T>(const ConvShape&, const T*, const T*, const T*, T*,      \
                                          CUstream_st*);                                           \
  template void conv_wgrad_direct_cuda<T>(const ConvShape&, const T*, const T*, T*, CUstream_st*); \
  template void conv_bias_grad_cuda<T>(const T*, uint64_t, uint64_t, uint64_t, T*, CUstream_st*);  \
  template void conv_bias_fill_cuda<T>(const T*, uint64_t, uint64_t, uint64_t, T*, CUstream_st*);  \
  template void conv_bias_add_cuda<T>(const T*, uint64_t, uint64_t, uint64_t, T*, CUstream_st*);   \
  template void conv_pack_groups_cuda<T>(const T*, uint64_t, uint64_t, uint64_t, uint64_t, T*,     \
                                         CUstream_st*);                                            \
  template void conv_pad_input_cuda<T>(const ConvShape&, const T*, T*, CUstream_st*);
TLRT_CONV_CUDA(float)
TLRT_CONV_CUDA(double)
#undef TLRT_CONV_CUDA

}  // namespace tlrt::kernels
