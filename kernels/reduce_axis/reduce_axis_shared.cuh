// What the axis reductions' CUDA translation units share: kernels/reduce_axis/reduce_axis.cu
// (the row reductions, the light kernel of small column reductions, the copy),
// kernels/reduce_axis/reduce_axis_columns.cu (the column maxima) and
// kernels/reduce_axis/reduce_axis_fold.cu (the ordered fold): the sum and max operations, the
// streaming loads, and the light kernel's rule and launch.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/float_ops.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/reduce_axis/max_key.h"

namespace tlrt::kernels::reduce_axis_detail {

TLRT_DEVICE_INLINE uint32_t max_of(uint32_t a, uint32_t b) {
  return a < b ? b : a;
}
TLRT_DEVICE_INLINE uint64_t max_of(uint64_t a, uint64_t b) {
  return a < b ? b : a;
}
// Loads cached in L2 only: keys another block stored in this launch.
TLRT_DEVICE_INLINE uint32_t load_cg(const uint32_t* p) {
  return __ldcg(reinterpret_cast<const unsigned int*>(p));
}
TLRT_DEVICE_INLINE uint64_t load_cg(const uint64_t* p) {
  return __ldcg(reinterpret_cast<const unsigned long long*>(p));
}

template <class T>
struct SumOp {
  using Acc = T;
  static TLRT_DEVICE_INLINE Acc identity() { return T(0); }
  static TLRT_DEVICE_INLINE Acc add(Acc a, T v) { return add_rn(a, v); }
  static TLRT_DEVICE_INLINE Acc merge(Acc a, Acc b) { return add_rn(a, b); }
  static TLRT_DEVICE_INLINE T finish(Acc a) { return a; }
};

template <class T>
struct MaxOp {
  using Acc = typename MaxKeyTraits<T>::Key;
  // Below every key a value can have (key(-inf) > 0); a row has at least one element.
  static TLRT_DEVICE_INLINE Acc identity() { return 0; }
  static TLRT_DEVICE_INLINE Acc add(Acc a, T v) { return max_of(a, max_key(v)); }
  static TLRT_DEVICE_INLINE Acc merge(Acc a, Acc b) { return max_of(a, b); }
  static TLRT_DEVICE_INLINE T finish(Acc a) { return max_value<T>(a); }
};

// Data read once: 16-byte loads that allocate no L1 line, under an L2 policy that makes their
// lines the first to leave (policy from evict_first_policy(), made once per thread).
TLRT_DEVICE_INLINE uint64_t evict_first_policy() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}
TLRT_DEVICE_INLINE float4 load_once(const float4* p, uint64_t policy) {
  float4 v;
  asm("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;"
      : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
      : "l"(__cvta_generic_to_global(p)), "l"(policy));
  return v;
}
TLRT_DEVICE_INLINE double2 load_once(const double2* p, uint64_t policy) {
  double2 v;
  asm("ld.global.nc.L1::no_allocate.L2::cache_hint.v2.f64 {%0, %1}, [%2], %3;"
      : "=d"(v.x), "=d"(v.y)
      : "l"(__cvta_generic_to_global(p)), "l"(policy));
  return v;
}

// Vectors p[0], p[stride], ..., p[(n - 1) stride] handed to consume in that order, kBatch at a
// time: a batch's kBatch loads are issued before any of them is consumed. The last n % kBatch
// vectors form one predicated batch.
template <int kBatch, class V, class F>
TLRT_DEVICE_INLINE void consume_batches(const V* p, uint64_t stride, uint64_t n, uint64_t policy,
                                        F&& consume) {
  uint64_t left = n;
#pragma unroll 1
  for (; left >= kBatch; left -= kBatch, p += kBatch * stride) {
    V v[kBatch];
#pragma unroll
    for (int i = 0; i < kBatch; ++i) v[i] = load_once(p + i * stride, policy);
#pragma unroll
    for (int i = 0; i < kBatch; ++i) consume(v[i]);
  }
  if (left > 0) {
    V v[kBatch];
#pragma unroll
    for (int i = 0; i < kBatch; ++i) {
      if (static_cast<uint64_t>(i) < left) v[i] = load_once(p + i * stride, policy);
    }
#pragma unroll
    for (int i = 0; i < kBatch; ++i) {
      if (static_cast<uint64_t>(i) < left) consume(v[i]);
    }
  }
}

// Column reductions of at most kLightRows rows and kLightElements elements take the light kernel
// (kernels/reduce_axis/reduce_axis.cu): reduce_max_by_column, and the ordered fold of a matrix
// (one row axis, one column axis).
constexpr uint32_t kLightRows = 32;
constexpr uint64_t kLightElements = uint64_t{1} << 16;

inline bool light_columns(uint64_t rows, uint64_t cols) {
  return rows >= 1 && rows <= kLightRows && cols <= kLightElements / rows;
}

// The light kernel over M[r, c] = x[r * row_stride + c * col_stride] (r < rows, c < cols,
// light_columns(rows, cols)): out[c] = Op::finish of column c's accumulation in row order.
// Defined in kernels/reduce_axis/reduce_axis.cu for MaxOp and SumOp of float and double.
template <class Op, class T>
void launch_light_columns(const T* x, uint64_t rows, uint64_t cols, uint64_t row_stride,
                          uint64_t col_stride, T* out, cudaStream_t stream, const char* op);

}  // namespace tlrt::kernels::reduce_axis_detail
