// What the pooling CUDA translation units share: kernels/pool/pool.cu (every pooling op, one output
// or one window a thread), kernels/pool/pool_smooth.cu (smooth max pooling on planes through
// shared-memory tiles and the 2x2 groups) and kernels/pool/pool_stream.cu (its float32 streaming
// kernels). The math of T, the geometry tests they use, and the smooth max planes' launches.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/common/float_ops.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/pool/pool.h"

namespace tlrt::kernels::pool_detail {

TLRT_DEVICE_INLINE float exp_t(float v) {
  return expf(v);
}
TLRT_DEVICE_INLINE double exp_t(double v) {
  return exp(v);
}
TLRT_DEVICE_INLINE float log_t(float v) {
  return logf(v);
}
TLRT_DEVICE_INLINE double log_t(double v) {
  return log(v);
}
template <class T>
TLRT_DEVICE_INLINE T infinity_t() {
  return static_cast<T>(__int_as_float(0x7f800000));
}

// The geometry of a call.

inline bool planar(const PoolGeometry& g) {
  return g.kernel[0] == 1 && g.stride[0] == 1 && g.padding[0] == 0;
}

inline bool fits32(const PoolGeometry& g) {
  const uint64_t limit = uint64_t{1} << 31;
  return g.channels * g.in_volume < limit && g.channels * g.out_volume < limit;
}

// 2x2 stride 2 without padding on planes with an even width, pair-aligned base.
template <class T>
bool pairs_2x2(const PoolGeometry& g, const void* base) {
  return planar(g) && g.kernel[1] == 2 && g.kernel[2] == 2 && g.stride[1] == 2 &&
         g.stride[2] == 2 && g.padding[1] == 0 && g.padding[2] == 0 && g.in[2] % 2 == 0 &&
         g.in[1] % 2 == 0 && (reinterpret_cast<uintptr_t>(base) % (2 * sizeof(T))) == 0;
}

// Kernel, stride and padding below 2^16 on the plane axes: the 32-bit window ranges of
// plane_gather_kernel cannot wrap (the extents are below 2^31 by fits32).
inline bool small_planes(const PoolGeometry& g) {
  for (int a = 1; a < kPoolAxes; ++a) {
    if (g.kernel[a] >= 65536 || g.stride[a] >= 65536 || g.padding[a] >= 65536) return false;
  }
  return true;
}

// Smooth max pooling on planes (kernels/pool/pool_smooth.cu): the forward and the overlapping
// backward on the 2x2 groups, the float32 streaming kernels or the shared-memory tiles, where one
// of them takes the call. True when launched (the caller checks the launch); false leaves the
// call to the one-output-per-thread kernels of kernels/pool/pool.cu.
template <class T>
bool smooth_planes_fwd(const T* x, T* y, const PoolGeometry& g, T b, T inv_b, cudaStream_t s);
template <class T>
bool smooth_planes_bwd(const T* x, const T* dy, T* dx, const PoolGeometry& g, T b, cudaStream_t s,
                       const char* op);
// Whether smooth_planes_bwd takes an overlapping backward (it needs no workspace).
bool smooth_planes_bwd_takes(const PoolGeometry& g, size_t element_bytes);

}  // namespace tlrt::kernels::pool_detail
