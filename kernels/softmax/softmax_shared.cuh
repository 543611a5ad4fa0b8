// What the softmax's CUDA translation units share: kernels/softmax/softmax.cu (rows of at most
// 1024 elements in registers, softmax along other axes, the launch selection) and
// kernels/softmax/softmax_block.cu (longer rows, a block per row): the limits, the chunk loads and
// stores, the block-wide max and sum, the exp and output passes of a register chunk, the online
// max / sum, and the launch of the block-per-row kernels.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/async_copy.cuh"
#include "kernels/common/float_ops.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/common/quotient.h"

namespace tlrt::kernels::softmax_detail {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kWarpRowMax = 1024;           // longest row of the warp-per-row kernel
constexpr uint64_t kRowGridCap = 1u << 20;  // blocks of the row kernels (they stride)
constexpr int kAxisRegisterMax = 64;        // longest axis column held in registers
// Fewest columns for the register kernel along an axis (fewer would leave the device idle).
constexpr uint64_t kAxisRegisterMinColumns = uint64_t{1} << 15;

__device__ __forceinline__ float exp_of(float v) {
  return expf(v);
}
__device__ __forceinline__ double exp_of(double v) {
  return exp(v);
}

template <class T>
__device__ __forceinline__ T neg_inf();
template <>
__device__ __forceinline__ float neg_inf<float>() {
  return __int_as_float(static_cast<int>(0xff800000u));
}
template <>
__device__ __forceinline__ double neg_inf<double>() {
  return __longlong_as_double(static_cast<long long>(0xfff0000000000000ull));
}
template <class T>
__device__ __forceinline__ T quiet_nan();
template <>
__device__ __forceinline__ float quiet_nan<float>() {
  return __int_as_float(0x7fc00000);
}
template <>
__device__ __forceinline__ double quiet_nan<double>() {
  return __longlong_as_double(0x7ff8000000000000ll);
}

// max that propagates NaN from either side (which zero of two is returned does not matter: m
// only enters as s - m, and s - (+0) and s - (-0) have the same exp).
template <class T>
__device__ __forceinline__ T nan_max(T a, T b) {
  return (a > b || a != a) ? a : b;
}
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
template <>
__device__ __forceinline__ float nan_max<float>(float a, float b) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
#endif

// V adjacent elements at p (16-byte aligned when V > 1).
template <class T, int V>
__device__ __forceinline__ void load_chunk(const T* p, T (&v)[V]) {
  if constexpr (V == 1) {
    v[0] = p[0];
  } else {
    const typename Vec16<T>::type q = *reinterpret_cast<const typename Vec16<T>::type*>(p);
    if constexpr (V == 4) {
      v[0] = q.x;
      v[1] = q.y;
      v[2] = q.z;
      v[3] = q.w;
    } else {
      v[0] = q.x;
      v[1] = q.y;
    }
  }
}

template <class T, int V>
__device__ __forceinline__ void store_chunk(T* p, const T (&v)[V]) {
  if constexpr (V == 1) {
    p[0] = v[0];
  } else {
    store16(p, v);
  }
}

// store_chunk with the streaming (evict-first) cache hint: outputs are written once and not read
// again by the kernel.
__device__ __forceinline__ void store_streaming(float* p, const float (&v)[4]) {
  __stcs(reinterpret_cast<float4*>(p), make_float4(v[0], v[1], v[2], v[3]));
}
__device__ __forceinline__ void store_streaming(double* p, const double (&v)[2]) {
  __stcs(reinterpret_cast<double2*>(p), make_double2(v[0], v[1]));
}
template <class T, int V>
__device__ __forceinline__ void store_chunk_streaming(T* p, const T (&v)[V]) {
  if constexpr (V == 1) {
    __stcs(p, v[0]);
  } else {
    store_streaming(p, v);
  }
}

template <class T>
__device__ __forceinline__ T warp_max(T v) {
  for (int o = 16; o > 0; o >>= 1) v = nan_max(v, __shfl_xor_sync(kFullMask, v, o));
  return v;
}
template <class T>
__device__ __forceinline__ T warp_sum(T v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFullMask, v, o);
  return v;
}

// Block-wide max / sum, the result in every thread. `scratch` holds 32 values; the call is a
// barrier, and scratch may be reused after it returns.
template <class T>
__device__ T block_max(T v, T* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = warp_max(v);
  __syncthreads();  // earlier readers of scratch are done
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : neg_inf<T>();
  return warp_max(v);
}
template <class T>
__device__ T block_sum(T v, T* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = warp_sum(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : T(0);
  return warp_sum(v);
}

// fl(e / sum) for the e of one row. float: through the sum's two-part reciprocal
// (kernels/common/quotient.h: the same bits as IEEE division, four operations a quotient); an e
// is +0 or in [2^-64, 1] (e = exp(s - m) with s - m <= 0), or NaN, or tiny, which two divide.
template <class T>
struct RowDivisor {
  T d;
  __device__ explicit RowDivisor(T sum) : d(sum) {}
  __device__ T operator()(T e) const { return e / d; }
};
template <>
struct RowDivisor<float> {
  Reciprocal r;
  __device__ explicit RowDivisor(float sum) : r(reciprocal_of(sum)) {}
  __device__ float operator()(float e) const {
    return r.fast && (e >= kQuotientLeast || e == 0.0f) ? quotient_unchecked(e, r)
                                                        : __fdiv_rn(e, r.d);
  }
};

// The exp pass over one register chunk: e = exp(s - m) for the allowed elements (bits, the
// chunk's allowed bits from bit 0), +0 for the others, each added to sum in element order.
// Without a mask every element of a chunk inside the row is allowed, so the test is per chunk;
// with one it is per element and branch-free (adding +0 leaves the sum's bits unchanged, so the
// sum is that of the allowed terms in the same order either way).
template <class T, int V, bool kMasked>
__device__ __forceinline__ void exp_chunk(T (&v)[V], T m, uint32_t bits, bool in_row, T& sum) {
  if constexpr (kMasked) {
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const T e = exp_of(v[j] - m);
      v[j] = ((bits >> j) & 1u) ? e : T(0);
      sum += v[j];
    }
  } else if (in_row) {
#pragma unroll
    for (int j = 0; j < V; ++j) {
      v[j] = exp_of(v[j] - m);
      sum += v[j];
    }
  } else {
#pragma unroll
    for (int j = 0; j < V; ++j) v[j] = T(0);
  }
}

// The outputs of one register chunk inside the row: e / sum for the allowed elements, +0 for the
// blocked ones (set after the arithmetic, so +0 even in a NaN row).
template <class T, int V, bool kMasked>
__device__ __forceinline__ void quotient_chunk(const T (&v)[V], const RowDivisor<T>& div,
                                               uint32_t bits, T (&y)[V]) {
#pragma unroll
  for (int j = 0; j < V; ++j) {
    const T q = div(v[j]);
    y[j] = (!kMasked || ((bits >> j) & 1u)) ? q : T(0);
  }
}

// ---------------------------------------------------------------------------------------------
// Online max / sum: (m, s) with s = sum over the values seen of exp(x - m), m NaN once a NaN was
// seen. s = 0 exactly when no value other than -inf was seen. The result is only used with a
// finite m (a non-finite final m makes the sum NaN: +inf gives inf - inf, all -inf gives
// -inf - -inf, NaN gives NaN).

template <class T>
struct Online {
  T m;
  T s;
};

template <class T>
__device__ __forceinline__ void online_add(Online<T>& a, T x) {
  if (x != x || a.m != a.m) {
    a.m = quiet_nan<T>();
  } else if (x > a.m) {
    a.s = (a.s == T(0) ? T(0) : a.s * exp_of(a.m - x)) + T(1);
    a.m = x;
  } else if (x != neg_inf<T>()) {
    a.s += exp_of(x - a.m);
  }
}

template <class T>
__device__ __forceinline__ Online<T> online_merge(Online<T> a, Online<T> b) {
  if (a.m != a.m || b.m != b.m) return {quiet_nan<T>(), T(0)};
  const T m = a.m > b.m ? a.m : b.m;
  const T sa = a.s == T(0) ? T(0) : a.s * exp_of(a.m - m);
  const T sb = b.s == T(0) ? T(0) : b.s * exp_of(b.m - m);
  return {m, sa + sb};
}

template <class T>
__device__ __forceinline__ T online_sum(Online<T> a) {
  return (a.m == a.m && a.m != neg_inf<T>() && a.m != -neg_inf<T>()) ? a.s : quiet_nan<T>();
}

template <class T>
__device__ Online<T> warp_online(Online<T> a) {
  for (int o = 16; o > 0; o >>= 1) {
    Online<T> b{__shfl_xor_sync(kFullMask, a.m, o), __shfl_xor_sync(kFullMask, a.s, o)};
    a = online_merge(a, b);
  }
  return a;
}

// Rows longer than kWarpRowMax, a block per row: the row in shared memory, split between
// registers and shared memory, or in two passes (an online max / sum, then the outputs), whichever
// is the first to fit. Defined in kernels/softmax/softmax_block.cu for V = 1 and the 16-byte V of
// float and double.
template <class T, int V>
void launch_block_rows(const T* s, const T* mk, uint64_t rows, uint64_t cols, T* out,
                       cudaStream_t stream, const char* op);

}  // namespace tlrt::kernels::softmax_detail
