// CUDA launcher of the elementwise family: one kernel template runs any functor of
// elementwise_device.cuh over flat buffers.
//
// Layout: inputs and outputs are contiguous arrays of n scalars. When every pointer is 16-byte
// aligned, each thread moves 16-byte vectors (4 floats or 2 doubles), unroll_of<Op>() of them per
// operand with all loads issued before any arithmetic, so enough bytes are in flight to reach
// the copy bandwidth; a misaligned operand selects the same kernel with scalar accesses. The
// n mod W tail is done by the first block. Indices are 64-bit.
//
// Numerics: the functors' own contract (explicit round-to-nearest intrinsics; FMAs only where
// named; full-precision libm); this file adds no arithmetic.
#include <cuda_runtime.h>

#include <string>

#include "kernels/common/float_ops.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/elementwise/elementwise.h"
#include "kernels/elementwise/elementwise_device.cuh"
#include "kernels/elementwise/elementwise_ref.h"

namespace tlrt::kernels {
namespace {

// Vectors per thread. One input streaming to one output reaches the copy bandwidth with one
// vector per thread (more, and the H200 measured 3.5% slower); operations reading several
// inputs keep four in flight per operand.
template <class Op>
__host__ __device__ constexpr int unroll_of() {
  return Op::kInputs == 1 ? 1 : 4;
}

template <class T, int N>
struct Pointers {
  const T* p[N];
};
template <class T, int N>
struct OutPointers {
  T* p[N];
};
template <class T, int N>
struct ScalarValues {
  T v[N > 0 ? N : 1];
};

template <class T, int W>
__device__ __forceinline__ void load(const T* base, uint64_t index, T (&out)[W]) {
  if constexpr (W == 1) {
    out[0] = __ldg(base + index);
  } else {
    using V = typename Vec16<T>::type;
    const V v = __ldg(reinterpret_cast<const V*>(base) + index);
    const T* parts = reinterpret_cast<const T*>(&v);
#pragma unroll
    for (int w = 0; w < W; ++w) out[w] = parts[w];
  }
}

template <class T, int W>
__device__ __forceinline__ void store(T* base, uint64_t index, const T (&in)[W]) {
  if constexpr (W == 1) {
    base[index] = in[0];
  } else {
    using V = typename Vec16<T>::type;
    V v;
    T* parts = reinterpret_cast<T*>(&v);
#pragma unroll
    for (int w = 0; w < W; ++w) parts[w] = in[w];
    reinterpret_cast<V*>(base)[index] = v;
  }
}

template <class Op, class T>
__device__ __forceinline__ void apply_one(const Pointers<T, Op::kInputs>& in,
                                          const OutPointers<T, Op::kOutputs>& out, const T* s,
                                          uint64_t i) {
  T x[Op::kInputs];
  T y[Op::kOutputs];
#pragma unroll
  for (int k = 0; k < Op::kInputs; ++k) x[k] = in.p[k][i];
  Op::apply(x, y, s);
#pragma unroll
  for (int k = 0; k < Op::kOutputs; ++k) out.p[k][i] = y[k];
}

// W scalars per access (16 / sizeof(T) for the vector path, 1 for the scalar path).
template <class Op, class T, int W>
__global__ void __launch_bounds__(kThreads)
    elementwise_kernel(Pointers<T, Op::kInputs> in, OutPointers<T, Op::kOutputs> out,
                       ScalarValues<T, Op::kScalars> scalars, uint64_t n) {
  constexpr int kUnroll = unroll_of<Op>();
  const uint64_t groups = n / W;
  const uint64_t first = static_cast<uint64_t>(blockIdx.x) * (kThreads * kUnroll) + threadIdx.x;
  T x[kUnroll][Op::kInputs][W];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const uint64_t g = first + static_cast<uint64_t>(u) * kThreads;
    if (g < groups) {
#pragma unroll
      for (int k = 0; k < Op::kInputs; ++k) load<T, W>(in.p[k], g, x[u][k]);
    }
  }
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const uint64_t g = first + static_cast<uint64_t>(u) * kThreads;
    if (g < groups) {
      T y[Op::kOutputs][W];
#pragma unroll
      for (int w = 0; w < W; ++w) {
        T a[Op::kInputs];
        T b[Op::kOutputs];
#pragma unroll
        for (int k = 0; k < Op::kInputs; ++k) a[k] = x[u][k][w];
        Op::apply(a, b, scalars.v);
#pragma unroll
        for (int k = 0; k < Op::kOutputs; ++k) y[k][w] = b[k];
      }
#pragma unroll
      for (int k = 0; k < Op::kOutputs; ++k) store<T, W>(out.p[k], g, y[k]);
    }
  }
  if (W > 1 && blockIdx.x == 0) {
    const uint64_t tail = groups * W + threadIdx.x;
    if (tail < n) apply_one<Op, T>(in, out, scalars.v, tail);
  }
}

template <class Op, class T>
void launch(const T* const* in, T* const* out, const T* scalars, uint64_t n, cudaStream_t stream,
            const char* name) {
  Pointers<T, Op::kInputs> ip;
  OutPointers<T, Op::kOutputs> op;
  ScalarValues<T, Op::kScalars> sv{};
  bool vector = true;
  for (int k = 0; k < Op::kInputs; ++k) {
    ip.p[k] = in[k];
    vector = vector && aligned16(in[k]);
  }
  for (int k = 0; k < Op::kOutputs; ++k) {
    op.p[k] = out[k];
    vector = vector && aligned16(out[k]);
  }
  for (int k = 0; k < Op::kScalars; ++k) sv.v[k] = scalars[k];
  constexpr int kW = 16 / sizeof(T);
  const int w = vector ? kW : 1;
  const uint64_t groups = n / w;
  const uint64_t per_block = static_cast<uint64_t>(kThreads) * unroll_of<Op>();
  uint64_t blocks = (groups + per_block - 1) / per_block;
  if (blocks == 0) blocks = 1;  // the tail alone
  if (blocks > 0x7fffffffull) {
    fail(ErrorKind::invalid_argument, name,
         std::to_string(n) + " elements exceed the launchable grid");
  }
  if (vector) {
    elementwise_kernel<Op, T, kW>
        <<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(ip, op, sv, n);
  } else {
    elementwise_kernel<Op, T, 1>
        <<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(ip, op, sv, n);
  }
  check_launch(name);
}

}  // namespace

template <class T>
void elementwise_cuda(ElementwiseOp op, const T* const* in, T* const* out, const T* scalars,
                      uint64_t n, CUstream_st* stream) {
  if (n == 0) return;
  switch (op) {
#define TLRT_ELEMENTWISE(name, Functor, signature, ulp_f32, ulp_f64)                 \
  case ElementwiseOp::name:                                                          \
    static_assert(device_ops::Functor::kInputs == ref_ops::Functor::kInputs &&       \
                      device_ops::Functor::kOutputs == ref_ops::Functor::kOutputs && \
                      device_ops::Functor::kScalars == ref_ops::Functor::kScalars,   \
                  #Functor ": device and reference arities differ");                 \
    launch<device_ops::Functor, T>(in, out, scalars, n, stream, #name);              \
    break;
#include "ops/elementwise_ops.def"
#undef TLRT_ELEMENTWISE
  }
}

template void elementwise_cuda<float>(ElementwiseOp, const float* const*, float* const*,
                                      const float*, uint64_t, CUstream_st*);
template void elementwise_cuda<double>(ElementwiseOp, const double* const*, double* const*,
                                       const double*, uint64_t, CUstream_st*);

}  // namespace tlrt::kernels
