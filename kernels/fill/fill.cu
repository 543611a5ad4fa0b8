// Buffer construction and conversion, CUDA backend, contiguous buffers: constant fill,
// float64 -> float32 narrowing (__double2float_rn: nearest-even, overflow to infinity, subnormals
// kept under -ftz=false), float32 -> float64 widening (exact) and the value copy x * 1 in T
// (__fmul_rn / __dmul_rn, so the multiply is really performed rather than folded away).
// Bit-identical with the reference backend for every non-NaN value; NaN payloads may differ
// (SPEC-runtime 6).
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/fill/fill.h"
#include "runtime/error.h"

namespace tlrt::kernels {
namespace {

constexpr int kThreadsPerBlock = 256;
// Several 16-byte accesses in flight per thread keep HBM busy with fewer resident warps.
constexpr int kGroupsPerThread = 4;
// Past this many blocks the grid stops growing and the kernels loop (grid-stride) instead.
constexpr uint64_t kMaxBlocks = uint64_t{1} << 22;

__device__ __forceinline__ void load16(const float* p, float* v) {
  const float4 q = *reinterpret_cast<const float4*>(p);
  v[0] = q.x;
  v[1] = q.y;
  v[2] = q.z;
  v[3] = q.w;
}
__device__ __forceinline__ void load16(const double* p, double* v) {
  const double2 q = *reinterpret_cast<const double2*>(p);
  v[0] = q.x;
  v[1] = q.y;
}
__device__ __forceinline__ void load8(const float* p, float* v) {
  const float2 q = *reinterpret_cast<const float2*>(p);
  v[0] = q.x;
  v[1] = q.y;
}
__device__ __forceinline__ void store16(float* p, const float* v) {
  *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
}
__device__ __forceinline__ void store16(double* p, const double* v) {
  *reinterpret_cast<double2*>(p) = make_double2(v[0], v[1]);
}

// A group is kLanes consecutive elements: one 16-byte word of output, and one 8-byte word or a
// whole number of 16-byte words of input.
template <class T, int kLanes, bool kVector>
__device__ __forceinline__ void load_group(const T* p, T* v) {
  if constexpr (kVector && kLanes * sizeof(T) == 8) {
    load8(p, v);
  } else if constexpr (kVector) {
    constexpr int kPerWord = 16 / sizeof(T);
#pragma unroll
    for (int w = 0; w < kLanes / kPerWord; ++w) load16(p + w * kPerWord, v + w * kPerWord);
  } else {
#pragma unroll
    for (int l = 0; l < kLanes; ++l) v[l] = p[l];
  }
}
template <class T, int kLanes, bool kVector>
__device__ __forceinline__ void store_group(T* p, const T* v) {
  if constexpr (kVector) {
    constexpr int kPerWord = 16 / sizeof(T);
#pragma unroll
    for (int w = 0; w < kLanes / kPerWord; ++w) store16(p + w * kPerWord, v + w * kPerWord);
  } else {
#pragma unroll
    for (int l = 0; l < kLanes; ++l) p[l] = v[l];
  }
}

struct Narrow {
  using In = double;
  using Out = float;
  __device__ __forceinline__ float operator()(double x) const { return __double2float_rn(x); }
};
struct Widen {
  using In = float;
  using Out = double;
  __device__ __forceinline__ double operator()(float x) const { return static_cast<double>(x); }
};
template <class T>
struct MultiplyByOne;
template <>
struct MultiplyByOne<float> {
  using In = float;
  using Out = float;
  __device__ __forceinline__ float operator()(float x) const { return __fmul_rn(x, 1.0f); }
};
template <>
struct MultiplyByOne<double> {
  using In = double;
  using Out = double;
  __device__ __forceinline__ double operator()(double x) const { return __dmul_rn(x, 1.0); }
};

// Grid-stride over chunks of kThreadsPerBlock * kGroupsPerThread groups; within a chunk thread t
// takes groups t, t + blockDim, ... so each warp access covers contiguous 16-byte words. All loads
// of a pass are issued before any store. The final partial group (fewer than kLanes elements) is
// handled element by element by the first threads of the grid. No __restrict__: every element is
// read before it is written by the same thread, so out == in (an in-place pass) stays correct.
template <class Op, int kLanes, bool kVector>
__global__ void __launch_bounds__(kThreadsPerBlock)
    map_kernel(typename Op::Out* out, const typename Op::In* in, uint64_t n, Op op) {
  using In = typename Op::In;
  using Out = typename Op::Out;
  constexpr uint64_t kGroupsPerBlock = uint64_t{kThreadsPerBlock} * kGroupsPerThread;
  const uint64_t n_groups = n / kLanes;
  const uint64_t stride = uint64_t{gridDim.x} * kGroupsPerBlock;
  for (uint64_t block_base = uint64_t{blockIdx.x} * kGroupsPerBlock; block_base < n_groups;
       block_base += stride) {
    const bool whole = n_groups - block_base >= kGroupsPerBlock;
    In x[kGroupsPerThread][kLanes];
#pragma unroll
    for (int g = 0; g < kGroupsPerThread; ++g) {
      const uint64_t group = block_base + static_cast<uint64_t>(g) * kThreadsPerBlock + threadIdx.x;
      if (whole || group < n_groups) load_group<In, kLanes, kVector>(in + group * kLanes, x[g]);
    }
#pragma unroll
    for (int g = 0; g < kGroupsPerThread; ++g) {
      const uint64_t group = block_base + static_cast<uint64_t>(g) * kThreadsPerBlock + threadIdx.x;
      if (whole || group < n_groups) {
        Out y[kLanes];
#pragma unroll
        for (int l = 0; l < kLanes; ++l) y[l] = op(x[g][l]);
        store_group<Out, kLanes, kVector>(out + group * kLanes, y);
      }
    }
  }
  const uint64_t tail_begin = n_groups * kLanes;
  const uint64_t t = uint64_t{blockIdx.x} * kThreadsPerBlock + threadIdx.x;
  if (t < n - tail_begin) out[tail_begin + t] = op(in[tail_begin + t]);
}

template <class T, bool kVector>
__global__ void __launch_bounds__(kThreadsPerBlock)
    fill_kernel(T* __restrict__ out, uint64_t n, T value) {
  constexpr int kLanes = 16 / sizeof(T);
  constexpr uint64_t kGroupsPerBlock = uint64_t{kThreadsPerBlock} * kGroupsPerThread;
  T v[kLanes];
#pragma unroll
  for (int l = 0; l < kLanes; ++l) v[l] = value;
  const uint64_t n_groups = n / kLanes;
  const uint64_t stride = uint64_t{gridDim.x} * kGroupsPerBlock;
  for (uint64_t block_base = uint64_t{blockIdx.x} * kGroupsPerBlock; block_base < n_groups;
       block_base += stride) {
    const bool whole = n_groups - block_base >= kGroupsPerBlock;
#pragma unroll
    for (int g = 0; g < kGroupsPerThread; ++g) {
      const uint64_t group = block_base + static_cast<uint64_t>(g) * kThreadsPerBlock + threadIdx.x;
      if (whole || group < n_groups) store_group<T, kLanes, kVector>(out + group * kLanes, v);
    }
  }
  const uint64_t tail_begin = n_groups * kLanes;
  const uint64_t t = uint64_t{blockIdx.x} * kThreadsPerBlock + threadIdx.x;
  if (t < n - tail_begin) out[tail_begin + t] = value;
}

dim3 grid_for(uint64_t n, uint64_t lanes) {
  constexpr uint64_t kGroupsPerBlock = uint64_t{kThreadsPerBlock} * kGroupsPerThread;
  const uint64_t n_groups = n / lanes;
  uint64_t blocks = n_groups / kGroupsPerBlock + (n_groups % kGroupsPerBlock != 0);
  if (blocks == 0) blocks = 1;  // fewer elements than one group: the tail alone
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  return dim3(static_cast<unsigned>(blocks));
}

bool aligned16(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

void check_launch(const char* op) {
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) fail(ErrorKind::device, op, cudaGetErrorString(err));
}

// Views at an element offset take the scalar path rather than faulting on a misaligned vector
// access; buffers from the allocator are 512-byte aligned and always take the vector path.
template <class Op>
void launch_map(typename Op::Out* out, const typename Op::In* in, uint64_t n, cudaStream_t stream,
                const char* op) {
  if (n == 0) return;
  // One 16-byte store per group keeps each warp store on 512 contiguous bytes; when widening, two
  // stores per group at a 32-byte stride measured at little over half the copy rate.
  constexpr int kLanes = 16 / sizeof(typename Op::Out);
  const dim3 grid = grid_for(n, kLanes);
  if (aligned16(out) && aligned16(in)) {
    map_kernel<Op, kLanes, true><<<grid, kThreadsPerBlock, 0, stream>>>(out, in, n, Op{});
  } else {
    map_kernel<Op, kLanes, false><<<grid, kThreadsPerBlock, 0, stream>>>(out, in, n, Op{});
  }
  check_launch(op);
}

}  // namespace

template <class T>
void fill_cuda(T* out, uint64_t n, T value, CUstream_st* stream) {
  if (n == 0) return;
  const dim3 grid = grid_for(n, 16 / sizeof(T));
  if (aligned16(out)) {
    fill_kernel<T, true><<<grid, kThreadsPerBlock, 0, stream>>>(out, n, value);
  } else {
    fill_kernel<T, false><<<grid, kThreadsPerBlock, 0, stream>>>(out, n, value);
  }
  check_launch("fill");
}

void narrow_f64_to_f32_cuda(float* out, const double* in, uint64_t n, CUstream_st* stream) {
  launch_map<Narrow>(out, in, n, stream, "narrow_f64_to_f32");
}

void widen_f32_to_f64_cuda(double* out, const float* in, uint64_t n, CUstream_st* stream) {
  launch_map<Widen>(out, in, n, stream, "widen_f32_to_f64");
}

template <class T>
void multiply_by_one_cuda(T* out, const T* in, uint64_t n, CUstream_st* stream) {
  launch_map<MultiplyByOne<T>>(out, in, n, stream, "multiply_by_one");
}

template void fill_cuda<float>(float*, uint64_t, float, CUstream_st*);
template void fill_cuda<double>(double*, uint64_t, double, CUstream_st*);
template void multiply_by_one_cuda<float>(float*, const float*, uint64_t, CUstream_st*);
template void multiply_by_one_cuda<double>(double*, const double*, uint64_t, CUstream_st*);

}  // namespace tlrt::kernels
