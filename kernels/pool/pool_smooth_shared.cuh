// What smooth max pooling's CUDA translation units share: kernels/pool/pool_smooth.cu (the
// shared-memory tiles, the 2x2 groups and the choice among the schedules) and
// kernels/pool/pool_stream.cu (the float32 3x3 stride 1 streaming kernels): the pivots' max / min
// and joins, the planes' extents and geometry tests, and the streaming schedule's setting and
// launches.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/common/float_ops.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/pool/pool.h"
#include "kernels/pool/pool_shared.cuh"

namespace tlrt::kernels::pool_detail {

TLRT_DEVICE_INLINE float max_t(float a, float b) {
  return fmaxf(a, b);
}
TLRT_DEVICE_INLINE double max_t(double a, double b) {
  return fmax(a, b);
}
TLRT_DEVICE_INLINE float min_t(float a, float b) {
  return fminf(a, b);
}
TLRT_DEVICE_INLINE double min_t(double a, double b) {
  return fmin(a, b);
}
TLRT_DEVICE_INLINE float and_bits(float a, float b) {
  return __uint_as_float(__float_as_uint(a) & __float_as_uint(b));
}
TLRT_DEVICE_INLINE double and_bits(double a, double b) {
  return __longlong_as_double(__double_as_longlong(a) & __double_as_longlong(b));
}
TLRT_DEVICE_INLINE float or_bits(float a, float b) {
  return __uint_as_float(__float_as_uint(a) | __float_as_uint(b));
}
TLRT_DEVICE_INLINE double or_bits(double a, double b) {
  return __longlong_as_double(__double_as_longlong(a) | __double_as_longlong(b));
}

// v when keep, else +0, without a branch (so the division feeding v is not branched around).
TLRT_DEVICE_INLINE float keep_if(bool keep, float v) {
  return __uint_as_float(__float_as_uint(v) & (keep ? 0xffffffffu : 0u));
}
TLRT_DEVICE_INLINE double keep_if(bool keep, double v) {
  return __longlong_as_double(__double_as_longlong(v) & (keep ? -1ll : 0ll));
}

// pivot_step(-inf or +inf, v): v, or the start when v is NaN (max / min ignore a NaN operand).
template <bool Upper, class T>
TLRT_DEVICE_INLINE T pivot_first(T v) {
  return Upper ? max_t(-infinity_t<T>(), v) : min_t(infinity_t<T>(), v);
}

// pivot_step(p, v) for a p that is not NaN: max / min ignore a NaN v; equal operands are the same
// bits except +0 / -0, where the AND of the bits gives +0 unless both are -0 (upper) and the OR
// gives -0 unless both are +0 (lower), so the sign of zero never depends on max / min.
template <bool Upper, class T>
TLRT_DEVICE_INLINE T pivot_join(T p, T v) {
  const T m = Upper ? max_t(p, v) : min_t(p, v);
  const T same = Upper ? and_bits(p, v) : or_bits(p, v);
  return p == v ? same : m;
}

// A tile's geometry, computed on the host (smooth_fwd_plan / smooth_bwd_plan). The grid is
// tiles_x x min(tiles_y, 65535) x min(planes, 65535); blocks stride over the last two.
struct SmoothPlan {
  uint32_t h = 0, w = 0, oh = 0, ow = 0;  // plane extents, input and output
  int32_t ph = 0, pw = 0;                 // padding
  uint32_t planes = 0;
  uint32_t tile_h = 0, tile_w = 0;    // forward: output rows and columns; backward: input ones
  uint32_t tiles_x = 0, tiles_y = 0;  // tiles per plane row and column
  uint32_t region_h = 0, region_pitch = 0;  // the staged input region
  int32_t off_y = 0, off_x = 0;       // backward: the first window of a tile, relative to r0 / SH
  uint32_t ext_h = 0, ext_pitch = 0;  // backward: window rows and row pitch (G * blockDim.x)
  dim3 block;
  size_t smem = 0;  // dynamic shared memory, bytes
};

inline int64_t floor_div(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}
inline int64_t ceil_div(int64_t a, int64_t b) {
  return -floor_div(-a, b);
}
inline int64_t round_up(int64_t a, int64_t b) {
  return ceil_div(a, b) * b;
}

// 32-bit counts, and plane extents small enough that region coordinates (an extent plus a few
// hundred) stay within int32.
inline bool smooth_tiles_fit(const PoolGeometry& g) {
  constexpr int64_t limit = int64_t{1} << 30;
  return planar(g) && fits32(g) && small_planes(g) && g.in[1] < limit && g.in[2] < limit;
}

inline bool plane_shape(const PoolGeometry& g, int64_t kh, int64_t kw, int64_t sh, int64_t sw) {
  return g.kernel[1] == kh && g.kernel[2] == kw && g.stride[1] == sh && g.stride[2] == sw;
}

inline SmoothPlan plane_extents(const PoolGeometry& g) {
  SmoothPlan p;
  p.planes = static_cast<uint32_t>(g.channels * static_cast<uint64_t>(g.in[0]));
  p.h = static_cast<uint32_t>(g.in[1]);
  p.w = static_cast<uint32_t>(g.in[2]);
  p.oh = static_cast<uint32_t>(g.out[1]);
  p.ow = static_cast<uint32_t>(g.out[2]);
  p.ph = static_cast<int32_t>(g.padding[1]);
  p.pw = static_cast<int32_t>(g.padding[2]);
  return p;
}

// Whether the streaming kernels take g (float32 3x3 stride 1 planes, the setting at streaming).
bool smooth_streams(const PoolGeometry& g, size_t element_bytes);
// The streaming kernels on g (smooth_streams(g, sizeof(float))), on stream s.
void launch_smooth_stream_fwd(const float* x, float* y, const PoolGeometry& g, float b, float inv_b,
                              cudaStream_t s);
void launch_smooth_stream_bwd(const float* x, const float* dy, float* dx, const PoolGeometry& g,
                              float b, cudaStream_t s);

}  // namespace tlrt::kernels::pool_detail
