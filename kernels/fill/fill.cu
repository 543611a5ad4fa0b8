// Constant fill, CUDA backend, contiguous buffers: every element gets the bits of `value`, so the
// result is bit-identical with the reference backend, NaN payloads included.
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/launch.cuh"
#include "kernels/fill/fill.h"

namespace tlrt::kernels {
namespace {

// Several 16-byte accesses in flight per thread keep HBM busy with fewer resident warps.
constexpr int kGroupsPerThread = 4;

// A group is kLanes consecutive elements, one 16-byte word.
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

// Grid-stride over chunks of kThreads * kGroupsPerThread groups; within a chunk thread t
// takes groups t, t + blockDim, ... so each warp store covers 512 contiguous bytes. The final
// partial group (fewer than kLanes elements) is written element by element by the first threads of
// the grid, so no vector store ever needs masking.
template <class T, bool kVector>
__global__ void __launch_bounds__(kThreads) fill_kernel(T* __restrict__ out, uint64_t n, T value) {
  constexpr int kLanes = 16 / sizeof(T);
  constexpr uint64_t kGroupsPerBlock = uint64_t{kThreads} * kGroupsPerThread;
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
      const uint64_t group = block_base + static_cast<uint64_t>(g) * kThreads + threadIdx.x;
      if (whole || group < n_groups) store_group<T, kLanes, kVector>(out + group * kLanes, v);
    }
  }
  const uint64_t tail_begin = n_groups * kLanes;
  const uint64_t t = uint64_t{blockIdx.x} * kThreads + threadIdx.x;
  if (t < n - tail_begin) out[tail_begin + t] = value;
}

}  // namespace

// Views at an element offset take the scalar path rather than faulting on a misaligned vector
// store; buffers from the allocator are 512-byte aligned and always take the vector path.
template <class T>
void fill_cuda(T* out, uint64_t n, T value, CUstream_st* stream) {
  if (n == 0) return;
  const dim3 grid = grid_for(n / (16 / sizeof(T)), uint64_t{kThreads} * kGroupsPerThread);
  if (aligned16(out)) {
    fill_kernel<T, true><<<grid, kThreads, 0, stream>>>(out, n, value);
  } else {
    fill_kernel<T, false><<<grid, kThreads, 0, stream>>>(out, n, value);
  }
  check_launch("fill");
}

template void fill_cuda<float>(float*, uint64_t, float, CUstream_st*);
template void fill_cuda<double>(double*, uint64_t, double, CUstream_st*);

}  // namespace tlrt::kernels
