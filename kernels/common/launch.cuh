// What every CUDA launcher of tlrt needs, kept once: the block size, the grid for a grid-stride
// kernel, 16-byte alignment tests and vector stores, the launch check that turns a failed launch
// into tlrt::Error naming the op, the device's SM count without a driver query per launch, and a
// kernel's dynamic shared memory limit set once per device.
// Kernels include this header and common/error.h only; handles, streams and workspaces arrive as
// arguments from the runtime.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>

#include "common/error.h"
#include "common/host_device.h"

namespace tlrt::kernels {

// Threads per block of the streaming kernels: 8 warps, enough to hide HBM latency with several
// 16-byte accesses in flight per thread, small enough for 8 resident blocks per SM.
constexpr int kThreads = 256;

// Past this many blocks a grid-stride kernel's grid stops growing and the kernel loops instead.
constexpr uint64_t kMaxGridBlocks = uint64_t{1} << 22;

inline bool aligned16(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

// Where element p[at] sits in its 16-byte word, in elements (0 .. 16 / sizeof(T) - 1; payloads
// are element aligned). `at` may lie outside p's array, even below it: only the address's residue
// counts, computed without forming the pointer.
template <class T>
TLRT_HOST_DEVICE int word_place(const T* p, int64_t at) {
  constexpr uint64_t kVec = 16 / sizeof(T);
  return static_cast<int>((static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p) / sizeof(T)) +
                           static_cast<uint64_t>(at)) %
                          kVec);
}

// Elements from p[at] to the next 16-byte boundary (0 when p[at] starts a word).
template <class T>
TLRT_HOST_DEVICE int to_word_boundary(const T* p, int64_t at) {
  constexpr int kVec = static_cast<int>(16 / sizeof(T));
  return (kVec - word_place(p, at)) % kVec;
}

// Blocks for `items` work items at `per_block` items per block: at least 1 (a kernel that only
// has a tail still runs), at most `cap` (the kernel strides over the rest).
inline dim3 grid_for(uint64_t items, uint64_t per_block, uint64_t cap = kMaxGridBlocks) {
  uint64_t blocks = items / per_block + (items % per_block != 0);
  if (blocks == 0) blocks = 1;
  if (blocks > cap) blocks = cap;
  return dim3(static_cast<unsigned>(blocks));
}

// Throws tlrt::Error(device) naming `op` for a kernel launch that returned `st`.
[[noreturn]] inline void fail_launch(const char* op, cudaError_t st) {
  fail(ErrorKind::device, op, std::string("kernel launch failed: ") + cudaGetErrorString(st));
}

// Throws tlrt::Error(device) naming `op` when the last launch (or an earlier asynchronous fault
// reported with it) failed.
inline void check_launch(const char* op) {
  const cudaError_t st = cudaGetLastError();
  if (st != cudaSuccess) fail_launch(op, st);
}

// Throws tlrt::Error(device) naming `op` and `what` for a failed CUDA runtime call.
inline void check_cuda(cudaError_t st, const char* op, const char* what) {
  if (st != cudaSuccess) {
    fail(ErrorKind::device, op, std::string(what) + " failed: " + cudaGetErrorString(st));
  }
}

// A value of the current device computed once per device: compute(device) runs on the first
// call for a device (on every call for a device index past kMaxCachedDevices) and must return a
// nonzero value; later calls return it without a driver call.
constexpr int kMaxCachedDevices = 64;
template <class F>
uint64_t once_per_device(std::atomic<uint64_t> (&cache)[kMaxCachedDevices], const char* op,
                         F&& compute) {
  int device = 0;
  check_cuda(cudaGetDevice(&device), op, "cudaGetDevice");
  const bool cached = device >= 0 && device < kMaxCachedDevices;
  if (cached) {
    const uint64_t known = cache[device].load(std::memory_order_acquire);
    if (known != 0) return known;
  }
  const uint64_t value = compute(device);
  if (cached) cache[device].store(value, std::memory_order_release);
  return value;
}

// A device attribute of the current device that is positive on every device, queried once per
// device; `what` names the query in errors.
template <cudaDeviceAttr kAttribute>
int cached_device_attribute(const char* op, const char* what) {
  static std::atomic<uint64_t> cache[kMaxCachedDevices];
  return static_cast<int>(once_per_device(cache, op, [op, what](int device) {
    int value = 0;
    check_cuda(cudaDeviceGetAttribute(&value, kAttribute, device), op, what);
    return static_cast<uint64_t>(value > 0 ? value : 1);
  }));
}

// Streaming multiprocessors of the current device, queried once per device.
inline uint32_t current_sm_count(const char* op) {
  return static_cast<uint32_t>(cached_device_attribute<cudaDevAttrMultiProcessorCount>(
      op, "cudaDeviceGetAttribute(multiprocessor count)"));
}

// The current device's opt-in limit of shared memory per block, queried once per device.
inline uint64_t smem_optin_bytes(const char* op) {
  return static_cast<uint64_t>(cached_device_attribute<cudaDevAttrMaxSharedMemoryPerBlockOptin>(
      op, "cudaDeviceGetAttribute(max shared memory per block opt-in)"));
}

#if defined(__CUDACC__)
// Raises kKernel's dynamic shared memory limit to `bytes` on the current device, once per device
// (a kernel passes the same `bytes`, its largest need, on every call, so the attribute set by any
// thread is the one every launch needs), so that a launch costs no attribute call.
template <auto kKernel>
void allow_dynamic_shared(size_t bytes, const char* op) {
  static std::atomic<uint64_t> done[kMaxCachedDevices];
  once_per_device(done, op, [&](int) {
    check_cuda(cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(bytes)),
               op, "cudaFuncSetAttribute(max dynamic shared memory)");
    return uint64_t{1};
  });
}

// For a kernel that stages its loads in shared memory: raises its dynamic shared memory limit to
// `bytes` and prefers the largest shared memory carveout, on the current device. Callers run it
// once per device (inside once_per_device).
template <class Kernel>
void prepare_staging_kernel(Kernel kernel, size_t bytes, const char* op) {
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(bytes)),
             op, "cudaFuncSetAttribute(max dynamic shared memory)");
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                  cudaSharedmemCarveoutMaxShared),
             op, "cudaFuncSetAttribute(preferred shared memory carveout)");
}

// Blocks of `kernel` the occupancy calculator places on one SM with `threads` threads and `bytes`
// of dynamic shared memory (0 when none fits).
template <class Kernel>
int blocks_per_sm(Kernel kernel, int threads, size_t bytes, const char* op) {
  int per_sm = 0;
  check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, bytes), op,
             "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  return per_sm;
}

// Resident blocks per SM (at least 1) of kKernel launched with `threads` threads and `bytes` of
// dynamic shared memory (the same on every call of a kernel), for kernels whose grid is one wave
// of resident blocks that stride over the work. The first call per device prepares the kernel
// for `bytes` of staging (prepare_staging_kernel) and asks the occupancy calculator; later calls
// return the cached count without a driver call.
template <auto kKernel>
int resident_blocks_per_sm(int threads, size_t bytes, const char* op) {
  static std::atomic<uint64_t> cache[kMaxCachedDevices];
  return static_cast<int>(once_per_device(cache, op, [&](int) {
    prepare_staging_kernel(kKernel, bytes, op);
    const int per_sm = blocks_per_sm(kKernel, threads, bytes, op);
    return static_cast<uint64_t>(per_sm > 0 ? per_sm : 1);
  }));
}

// Programmatic dependent launch (compute capability 9.0 and later). A kernel launched with
// launch_dependent may have its blocks scheduled while the kernel before it in the stream is
// still running, which hides the launch and ramp-up between the two. Its threads must call
// wait_prior_grid() before any of them reads or writes memory that kernel reads or writes (and
// before any thread exits, so that the grid never completes ahead of its predecessor); the wait
// returns once that kernel has completed with all its writes visible. A kernel calls
// allow_dependents() where the kernel queued behind it may start its blocks: it starts once every
// block has called it or exited. Work queued before the predecessor is complete by then (the
// predecessor itself started after it). On an older device both calls do nothing and the launch
// is an ordinary one.
TLRT_DEVICE_INLINE void wait_prior_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

TLRT_DEVICE_INLINE void allow_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Whether the current device takes programmatic dependent launches (compute capability 9.0 and
// later), queried once per device.
inline bool dependent_launch_supported(const char* op) {
  return cached_device_attribute<cudaDevAttrComputeCapabilityMajor>(
             op, "cudaDeviceGetAttribute(compute capability)") >= 9;
}

// kernel<<<grid, block, shared_bytes, stream>>>(args...) as a programmatic dependent launch (see
// wait_prior_grid); a failed launch throws tlrt::Error(device) naming `op`.
template <class... Params, class... Args>
void launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes,
                      cudaStream_t stream, const char* op, Args&&... args) {
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  config.attrs = attribute;
  config.numAttrs = dependent_launch_supported(op) ? 1 : 0;
  const cudaError_t st = cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
  if (st != cudaSuccess) {
    (void)cudaGetLastError();  // a failed launch is reported here, not by the next check_launch
    fail_launch(op, st);
  }
}

// One 16-byte store of 4 floats or 2 doubles; p must be 16-byte aligned.
TLRT_DEVICE_INLINE void store16(float* p, const float* v) {
  *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
}
TLRT_DEVICE_INLINE void store16(double* p, const double* v) {
  *reinterpret_cast<double2*>(p) = make_double2(v[0], v[1]);
}
#endif

}  // namespace tlrt::kernels
