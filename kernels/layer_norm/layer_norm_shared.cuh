// What layer normalization's CUDA translation units share: kernels/layer_norm/layer_norm.cu (the
// forward) and kernels/layer_norm/layer_norm_bwd.cu (the backward): the register-layout limits,
// the rounding to T, the 16-byte loads and stores, the column placement and the binary64
// pair sums over warps, row groups and blocks.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/float_ops.cuh"
#include "kernels/common/launch.cuh"

namespace tlrt::kernels::layer_norm_detail {

constexpr uint32_t kFullMask = 0xffffffffu;
// Widest row held in registers; wider rows take the re-reading path.
constexpr uint64_t kMaxRegisterCols = 8192;
constexpr int kWideThreads = 256;

template <class T>
TLRT_DEVICE_INLINE T narrow(double v);
template <>
TLRT_DEVICE_INLINE float narrow<float>(double v) {
  return __double2float_rn(v);
}
template <>
TLRT_DEVICE_INLINE double narrow<double>(double v) {
  return v;
}

// 16-byte streaming loads and stores of 16 / sizeof(T) consecutive elements.
TLRT_DEVICE_INLINE void load16cs(const float* p, float* v) {
  const float4 a = __ldcs(reinterpret_cast<const float4*>(p));
  v[0] = a.x;
  v[1] = a.y;
  v[2] = a.z;
  v[3] = a.w;
}
TLRT_DEVICE_INLINE void load16cs(const double* p, double* v) {
  const double2 a = __ldcs(reinterpret_cast<const double2*>(p));
  v[0] = a.x;
  v[1] = a.y;
}
// V consecutive elements of a column vector (gamma, beta: read by every row, kept in cache).
template <int V>
TLRT_DEVICE_INLINE void load_columns(const float* p, float* v) {
  if constexpr (V == 4) {
    const float4 a = __ldg(reinterpret_cast<const float4*>(p));
    v[0] = a.x;
    v[1] = a.y;
    v[2] = a.z;
    v[3] = a.w;
  } else {
    static_assert(V == 1, "one element or 16 bytes");
    v[0] = p[0];
  }
}
template <int V>
TLRT_DEVICE_INLINE void load_columns(const double* p, double* v) {
  if constexpr (V == 2) {
    const double2 a = __ldg(reinterpret_cast<const double2*>(p));
    v[0] = a.x;
    v[1] = a.y;
  } else {
    static_assert(V == 1, "one element or 16 bytes");
    v[0] = p[0];
  }
}
TLRT_DEVICE_INLINE void store16cs(float* p, const float* v) {
  __stcs(reinterpret_cast<float4*>(p), make_float4(v[0], v[1], v[2], v[3]));
}
TLRT_DEVICE_INLINE void store16cs(double* p, const double* v) {
  __stcs(reinterpret_cast<double2*>(p), make_double2(v[0], v[1]));
}

// xhat and y of V consecutive columns at xh and yo: one 16-byte streaming store each (V > 1) or
// one element each.
template <int V, class T>
TLRT_DEVICE_INLINE void store_outputs(T* xh, T* yo, const T* h, const T* o) {
  if constexpr (V > 1) {
    store16cs(xh, h);
    store16cs(yo, o);
  } else {
    __stcs(xh, h[0]);
    __stcs(yo, o[0]);
  }
}

// Elements per access: 16 / sizeof(T) on the vector layouts (cols a multiple of it and the row
// buffers 16-byte aligned), 1 otherwise.
template <class T, bool VEC>
constexpr int kVec = VEC ? static_cast<int>(16 / sizeof(T)) : 1;

// The column of a thread's k-th value in a row group of GT threads taking V consecutive columns
// per access: accesses of a warp are contiguous (32 x V elements), and the thread's values are in
// increasing column order. V = 1: columns t, t + GT, t + 2 GT, ...
template <int V, int GT>
TLRT_DEVICE_INLINE uint32_t column_of(int t, int k) {
  return static_cast<uint32_t>((k / V) * (V * GT) + t * V + k % V);
}

// Butterfly sum over a warp: every lane ends with the same bits (each step adds the same two
// values, in either order, on both lanes of a pair).
TLRT_DEVICE_INLINE void warp_sum2(double& a, double& b) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    a = __dadd_rn(a, __shfl_xor_sync(kFullMask, a, o));
    b = __dadd_rn(b, __shfl_xor_sync(kFullMask, b, o));
  }
}

// Barrier of the calling thread's row group only (the WPR warps from warp `first`): a named
// barrier per group when the block holds several groups, so one group's reduction never waits for
// another group's loads; the whole block otherwise. Ids 1..15 (0 is __syncthreads').
template <int WPR, int WARPS>
TLRT_DEVICE_INLINE void group_barrier(int first) {
  static_assert(WARPS / WPR <= 15, "one named barrier per row group");
  if constexpr (WPR == WARPS) {
    __syncthreads();
  } else {
    asm volatile("bar.sync %0, %1;" ::"r"(1 + first / WPR), "r"(32 * WPR) : "memory");
  }
}

// Sums a and b over the WPR warps of the calling thread's row group; every thread of the group
// gets the same bits. Called by every thread of the group (it synchronises the group when
// WPR > 1). red: 2 * WARPS doubles of shared memory, each group using its own WPR slots.
template <int WPR, int WARPS>
TLRT_DEVICE_INLINE void group_sum2(double& a, double& b, double* red) {
  warp_sum2(a, b);
  if constexpr (WPR > 1) {
    const int warp = static_cast<int>(threadIdx.x >> 5);
    const int first = warp - warp % WPR;
    if ((threadIdx.x & 31u) == 0) {
      red[warp] = a;
      red[WARPS + warp] = b;
    }
    group_barrier<WPR, WARPS>(first);
    a = red[first];
    b = red[WARPS + first];
#pragma unroll
    for (int k = 1; k < WPR; ++k) {
      a = __dadd_rn(a, red[first + k]);
      b = __dadd_rn(b, red[WARPS + first + k]);
    }
    group_barrier<WPR, WARPS>(first);  // the group's slots are reused by its next call
  }
}

// Sum over one block of WARPS warps (the wide paths: one row per block).
template <int WARPS>
TLRT_DEVICE_INLINE void block_sum2(double& a, double& b, double* red) {
  group_sum2<WARPS, WARPS>(a, b, red);
}

}  // namespace tlrt::kernels::layer_norm_detail
