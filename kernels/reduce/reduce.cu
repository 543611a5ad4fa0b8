// Whole-buffer reductions, CUDA backend: reduce_sum and reduce_mean of a contiguous float / double
// buffer into one device scalar, bit-exact with the deterministic tree of SPEC-ops 6.4 for every
// size (the same tree serves the non-deterministic contract). Every addition is an explicitly
// rounded __fadd_rn / __dadd_rn and the mean's product a __fmul_rn / __dmul_rn, so nothing is
// contracted; no floating-point atomics anywhere.
//
// One launch computes all passes. The first pass is the memory-bound part: a row of 256 lanes is
// handled by 256/V threads, thread t owning the V = 16/sizeof(T) adjacent lanes of one 16-byte
// vector, so each grid-stride step is one coalesced vector load per thread and each lane keeps
// its own accumulator (the order of every lane's fold is the specified one). The row is then
// staged in shared memory and one warp halves it: thread l holds lanes l + 32k (k < 8), so the
// levels w = 128, 64, 32 pair registers of one thread and w = 16 .. 1 are __shfl_down_sync steps,
// each the specified lane[j] + lane[j+w]. Later passes have at most 65535 and then 256 inputs,
// one step per lane: the block that completes the last first-pass row of a second-pass row
// (integer completion counter) computes that row, and the block that completes the last
// second-pass row computes the final one.
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <string>

#include "kernels/reduce/reduce.h"
#include "runtime/error.h"

namespace tlrt::kernels {
namespace {

constexpr int kThreadsPerBlock = 256;
constexpr int kRowLanes = static_cast<int>(kReduceRowLanes);
constexpr int kWarpLanes = 32;
// Values each thread of a row warp holds for the in-row halving.
constexpr int kValuesPerWarpLane = kRowLanes / kWarpLanes;
// Grid-stride steps whose loads are issued together before they are folded in order.
constexpr int kStepsPerBatch = 4;

template <class T>
struct Arith;
template <>
struct Arith<float> {
  static constexpr int kLanes = 4;
  __device__ static float add(float a, float b) { return __fadd_rn(a, b); }
  __device__ static float mul(float a, float b) { return __fmul_rn(a, b); }
  __device__ static void load(const float* p, float* v) {
    const float4 q = __ldg(reinterpret_cast<const float4*>(p));
    v[0] = q.x;
    v[1] = q.y;
    v[2] = q.z;
    v[3] = q.w;
  }
  __device__ static void store(float* p, const float* v) {
    *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
  }
};
template <>
struct Arith<double> {
  static constexpr int kLanes = 2;
  __device__ static double add(double a, double b) { return __dadd_rn(a, b); }
  __device__ static double mul(double a, double b) { return __dmul_rn(a, b); }
  __device__ static void load(const double* p, double* v) {
    const double2 q = __ldg(reinterpret_cast<const double2*>(p));
    v[0] = q.x;
    v[1] = q.y;
  }
  __device__ static void store(double* p, const double* v) {
    *reinterpret_cast<double2*>(p) = make_double2(v[0], v[1]);
  }
};

template <class T>
struct ReduceArgs {
  const T* x;
  uint64_t n;
  uint64_t rows;          // first-pass rows B
  uint64_t stride;        // S = 256 * B
  uint32_t groups;        // second-pass rows ceil(B/256); 0 when B == 1
  uint32_t* group_done;   // per second-pass row: first-pass rows completed
  uint32_t* groups_done;  // second-pass rows completed
  T* first;               // first-pass row results
  T* second;              // second-pass row results
  T* out;
  bool scaled;  // reduce_mean: out = fl(sum * scale)
  T scale;
};

// Halves one 256-lane row held by a warp (v[k] = lane l + 32k of thread l); the root is valid in
// thread 0. Every step is lane[j] = lane[j] + lane[j + w] for the specified w.
template <class T>
__device__ __forceinline__ T halve_row(T (&v)[kValuesPerWarpLane]) {
  using A = Arith<T>;
#pragma unroll
  for (int half = kValuesPerWarpLane / 2; half >= 1; half /= 2) {  // w = 128, 64, 32
#pragma unroll
    for (int k = 0; k < half; ++k) v[k] = A::add(v[k], v[k + half]);
  }
  T r = v[0];
#pragma unroll
  for (int w = kWarpLanes / 2; w >= 1; w /= 2) {  // w = 16 .. 1
    r = A::add(r, __shfl_down_sync(0xffffffffu, r, w));
  }
  return r;
}

// One later pass over `count` <= 256 values of a row: lane i starts at +0 and adds values[i] once
// (S >= count, so there is a single step); lanes past count stay +0. Called by a whole warp.
template <class T>
__device__ __forceinline__ T later_pass_row(const T* values, uint64_t count, int l) {
  using A = Arith<T>;
  T v[kValuesPerWarpLane];
#pragma unroll
  for (int k = 0; k < kValuesPerWarpLane; ++k) {
    const uint64_t i = static_cast<uint64_t>(l + kWarpLanes * k);
    // Written by other blocks: read through L2, never a stale L1 line.
    v[k] = i < count ? A::add(T(0), __ldcg(values + i)) : T(0);
  }
  return halve_row(v);
}

template <class T>
__device__ __forceinline__ void write_result(const ReduceArgs<T>& a, T sum) {
  *a.out = a.scaled ? Arith<T>::mul(sum, a.scale) : sum;
}

// Folds kStepsPerBatch grid-stride steps e, e+S, ... into the thread's V lane accumulators. All
// loads are issued before the first addition, then the additions run in step order. kGuarded: some
// steps may reach past n (elements past n are not added); otherwise every step is a whole vector.
template <class T, bool kVector, bool kGuarded>
__device__ __forceinline__ void fold_batch(const T* __restrict__ x, uint64_t n, uint64_t e,
                                           uint64_t stride, T (&acc)[Arith<T>::kLanes]) {
  using A = Arith<T>;
  constexpr int V = A::kLanes;
  T v[kStepsPerBatch][V];
#pragma unroll
  for (int u = 0; u < kStepsPerBatch; ++u) {
    const uint64_t p = e + u * stride;
    if (kVector && (!kGuarded || p + V <= n)) {
      A::load(x + p, v[u]);
    } else {
#pragma unroll
      for (int c = 0; c < V; ++c) v[u][c] = p + c < n ? __ldg(x + p + c) : T(0);
    }
  }
#pragma unroll
  for (int u = 0; u < kStepsPerBatch; ++u) {
    const uint64_t p = e + u * stride;
#pragma unroll
    for (int c = 0; c < V; ++c) {
      if (!kGuarded || p + c < n) acc[c] = A::add(acc[c], v[u][c]);
    }
  }
}

// kVector: x is 16-byte aligned, so each step is one vector load; otherwise scalar loads of the
// same lanes.
template <class T, bool kVector>
__global__ void __launch_bounds__(kThreadsPerBlock) reduce_sum_kernel(const ReduceArgs<T> a) {
  using A = Arith<T>;
  constexpr int V = A::kLanes;
  constexpr int kThreadsPerRow = kRowLanes / V;
  constexpr int kRowsPerBlock = kThreadsPerBlock / kThreadsPerRow;
  __shared__ __align__(16) T row_lanes[kRowsPerBlock][kRowLanes];
  __shared__ bool last;

  const int row_in_block = static_cast<int>(threadIdx.x) / kThreadsPerRow;
  const int t = static_cast<int>(threadIdx.x) % kThreadsPerRow;
  const uint64_t first_row = uint64_t{blockIdx.x} * kRowsPerBlock;
  const uint64_t row = first_row + row_in_block;

  // First pass: lanes base .. base+V-1 fold x[base + c + k*S] for k = 0, 1, ... in order.
  T acc[V];
#pragma unroll
  for (int c = 0; c < V; ++c) acc[c] = T(0);
  if (row < a.rows) {
    const uint64_t n = a.n;
    const uint64_t stride = a.stride;
    uint64_t e = row * kRowLanes + static_cast<uint64_t>(t) * V;
    if constexpr (kVector) {
      for (; e + (kStepsPerBatch - 1) * stride + V <= n; e += kStepsPerBatch * stride) {
        fold_batch<T, true, false>(a.x, n, e, stride, acc);
      }
    }
    // At most kStepsPerBatch - 1 whole steps and one partial one are left (or, unaligned, all).
    for (; e < n; e += kStepsPerBatch * stride) {
      fold_batch<T, kVector, true>(a.x, n, e, stride, acc);
    }
  }
  A::store(&row_lanes[row_in_block][t * V], acc);
  __syncthreads();

  const int warp = static_cast<int>(threadIdx.x) / kWarpLanes;
  const int l = static_cast<int>(threadIdx.x) % kWarpLanes;
  if (warp < kRowsPerBlock) {
    T v[kValuesPerWarpLane];
#pragma unroll
    for (int k = 0; k < kValuesPerWarpLane; ++k) v[k] = row_lanes[warp][l + kWarpLanes * k];
    const T r = halve_row(v);
    const uint64_t my_row = first_row + warp;
    if (l == 0 && my_row < a.rows) {
      if (a.rows == 1) {
        write_result(a, r);
      } else {
        a.first[my_row] = r;
        __threadfence();  // the row result is visible before this block is counted
      }
    }
  }
  if (a.rows == 1) return;

  // Second pass: the block completing the last first-pass row of second-pass row g computes it.
  const uint64_t g = first_row / kRowLanes;  // kRowsPerBlock divides 256: one g per block
  const uint64_t group_first = g * kRowLanes;
  const uint64_t group_rows = a.rows - group_first < kRowLanes ? a.rows - group_first : kRowLanes;
  __syncthreads();
  if (threadIdx.x == 0) {
    const uint64_t left = a.rows - first_row;
    const uint32_t mine = static_cast<uint32_t>(left < kRowsPerBlock ? left : kRowsPerBlock);
    const uint32_t before = atomicAdd(&a.group_done[g], mine);
    __threadfence();  // the other blocks' row results are read only after the count is seen
    last = before + mine == group_rows;
  }
  __syncthreads();
  if (!last) return;
  if (warp == 0) {
    const T r = later_pass_row(a.first + group_first, group_rows, l);
    if (l == 0) {
      if (a.groups == 1) {
        write_result(a, r);
      } else {
        a.second[g] = r;
        __threadfence();
      }
    }
  }
  if (a.groups == 1) return;

  // Third pass: the block completing the last second-pass row computes the final row.
  __syncthreads();
  if (threadIdx.x == 0) {
    const uint32_t before = atomicAdd(a.groups_done, 1u);
    __threadfence();
    last = before + 1 == a.groups;
  }
  __syncthreads();
  if (!last) return;
  if (warp == 0) {
    const T r = later_pass_row(a.second, a.groups, l);
    if (l == 0) write_result(a, r);
  }
}

template <class T>
__global__ void store_scalar_kernel(T* out, T value) {
  *out = value;
}

void check_launch(const char* op) {
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) fail(ErrorKind::device, op, cudaGetErrorString(err));
}

template <class T>
void launch_reduce(const T* x, uint64_t n, T* out, void* workspace, cudaStream_t stream,
                   bool scaled, T scale, const char* op) {
  using A = Arith<T>;
  constexpr uint64_t kRowsPerBlock = kThreadsPerBlock / (kReduceRowLanes / A::kLanes);
  const ReduceWorkspaceLayout layout = reduce_workspace_layout(n, sizeof(T));
  ReduceArgs<T> a{};
  a.x = x;
  a.n = n;
  a.rows = reduce_rows(n);
  a.stride = kReduceRowLanes * a.rows;
  a.out = out;
  a.scaled = scaled;
  a.scale = scale;
  if (a.rows > 1) {
    if (workspace == nullptr) {
      fail(ErrorKind::invalid_argument, op,
           "no workspace for " + std::to_string(n) + " elements (" + std::to_string(layout.bytes) +
               " bytes needed)");
    }
    char* w = static_cast<char*>(workspace);
    a.groups = static_cast<uint32_t>(layout.groups);
    a.group_done = reinterpret_cast<uint32_t*>(w + layout.counters_offset);
    a.groups_done = a.group_done + layout.groups;
    a.second = reinterpret_cast<T*>(w + layout.second_offset);
    a.first = reinterpret_cast<T*>(w + layout.first_offset);
    // The counters are the only workspace state read before it is written.
    const cudaError_t err = cudaMemsetAsync(a.group_done, 0, layout.counters_bytes, stream);
    if (err != cudaSuccess) fail(ErrorKind::device, op, cudaGetErrorString(err));
  }
  const dim3 grid(static_cast<unsigned>((a.rows + kRowsPerBlock - 1) / kRowsPerBlock));
  if (reinterpret_cast<uintptr_t>(x) % 16 == 0) {
    reduce_sum_kernel<T, true><<<grid, kThreadsPerBlock, 0, stream>>>(a);
  } else {
    reduce_sum_kernel<T, false><<<grid, kThreadsPerBlock, 0, stream>>>(a);
  }
  check_launch(op);
}

}  // namespace

template <class T>
void reduce_sum_cuda(const T* x, uint64_t n, T* out, void* workspace, CUstream_st* stream) {
  if (n == 0) {
    // +0 is the all-zero word in both formats.
    const cudaError_t err = cudaMemsetAsync(out, 0, sizeof(T), stream);
    if (err != cudaSuccess) fail(ErrorKind::device, "reduce_sum", cudaGetErrorString(err));
    return;
  }
  launch_reduce<T>(x, n, out, workspace, stream, false, T(1), "reduce_sum");
}

template <class T>
void reduce_mean_cuda(const T* x, uint64_t n, T* out, void* workspace, CUstream_st* stream) {
  if (n == 0) {
    store_scalar_kernel<T><<<1, 1, 0, stream>>>(out, std::numeric_limits<T>::quiet_NaN());
    check_launch("reduce_mean");
    return;
  }
  launch_reduce<T>(x, n, out, workspace, stream, true, mean_reciprocal<T>(n), "reduce_mean");
}

template void reduce_sum_cuda<float>(const float*, uint64_t, float*, void*, CUstream_st*);
template void reduce_sum_cuda<double>(const double*, uint64_t, double*, void*, CUstream_st*);
template void reduce_mean_cuda<float>(const float*, uint64_t, float*, void*, CUstream_st*);
template void reduce_mean_cuda<double>(const double*, uint64_t, double*, void*, CUstream_st*);

}  // namespace tlrt::kernels
