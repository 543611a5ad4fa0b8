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

// Blocks for `items` work items at `per_block` items per block: at least 1 (a kernel that only
// has a tail still runs), at most `cap` (the kernel strides over the rest).
inline dim3 grid_for(uint64_t items, uint64_t per_block, uint64_t cap = kMaxGridBlocks) {
  uint64_t blocks = items / per_block + (items % per_block != 0);
  if (blocks == 0) blocks = 1;
  if (blocks > cap) blocks = cap;
  return dim3(static_cast<unsigned>(blocks));
}

// Throws tlrt::Error(device) naming `op` when the last launch (or an earlier asynchronous fault
// reported with it) failed.
inline void check_launch(const char* op) {
  const cudaError_t st = cudaGetLastError();
  if (st != cudaSuccess) {
    fail(ErrorKind::device, op, std::string("kernel launch failed: ") + cudaGetErrorString(st));
  }
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

// Streaming multiprocessors of the current device, queried once per device.
inline uint32_t current_sm_count(const char* op) {
  static std::atomic<uint64_t> cache[kMaxCachedDevices];
  return static_cast<uint32_t>(once_per_device(cache, op, [op](int device) {
    int sms = 0;
    check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), op,
               "cudaDeviceGetAttribute(multiprocessor count)");
    return static_cast<uint64_t>(sms);
  }));
}

// The current device's opt-in limit of shared memory per block, queried once per device.
inline uint64_t smem_optin_bytes(const char* op) {
  static std::atomic<uint64_t> cache[kMaxCachedDevices];
  return once_per_device(cache, op, [op](int device) {
    int bytes = 0;
    check_cuda(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), op,
               "cudaDeviceGetAttribute(max shared memory per block opt-in)");
    return static_cast<uint64_t>(bytes);
  });
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

// Resident blocks per SM (at least 1) of kKernel launched with `threads` threads and `bytes` of
// dynamic shared memory (the same on every call of a kernel), for kernels whose grid is one wave
// of resident blocks that stride over the work. The first call per device raises the kernel's
// dynamic shared memory limit to `bytes`, prefers the largest shared memory carveout (such
// kernels stage their loads in shared memory) and asks the occupancy calculator; later calls
// return the cached count without a driver call.
template <auto kKernel>
int resident_blocks_per_sm(int threads, size_t bytes, const char* op) {
  static std::atomic<uint64_t> cache[kMaxCachedDevices];
  return static_cast<int>(once_per_device(cache, op, [&](int) {
    check_cuda(cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(bytes)),
               op, "cudaFuncSetAttribute(max dynamic shared memory)");
    check_cuda(cudaFuncSetAttribute(kKernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                    cudaSharedmemCarveoutMaxShared),
               op, "cudaFuncSetAttribute(preferred shared memory carveout)");
    int per_sm = 0;
    check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kKernel, threads, bytes), op,
               "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    return static_cast<uint64_t>(per_sm > 0 ? per_sm : 1);
  }));
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
