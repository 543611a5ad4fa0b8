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

// Streaming multiprocessors of the current device, queried once per device.
inline uint32_t current_sm_count(const char* op) {
  constexpr int kMaxDevices = 64;
  static std::atomic<uint32_t> cache[kMaxDevices];
  int device = 0;
  check_cuda(cudaGetDevice(&device), op, "cudaGetDevice");
  if (device >= 0 && device < kMaxDevices) {
    const uint32_t known = cache[device].load(std::memory_order_relaxed);
    if (known != 0) return known;
  }
  int sms = 0;
  check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), op,
             "cudaDeviceGetAttribute(multiprocessor count)");
  if (device >= 0 && device < kMaxDevices) {
    cache[device].store(static_cast<uint32_t>(sms), std::memory_order_relaxed);
  }
  return static_cast<uint32_t>(sms);
}

#if defined(__CUDACC__)
// Raises kKernel's dynamic shared memory limit to `bytes` on the current device, once per device
// (a kernel passes the same `bytes`, its largest need, on every call, so the attribute set by any
// thread is the one every launch needs), so that a launch costs no attribute call.
template <auto kKernel>
void allow_dynamic_shared(size_t bytes, const char* op) {
  constexpr int kMaxDevices = 64;
  static std::atomic<bool> done[kMaxDevices];
  int device = 0;
  check_cuda(cudaGetDevice(&device), op, "cudaGetDevice");
  const bool cached = device >= 0 && device < kMaxDevices;
  if (cached && done[device].load(std::memory_order_acquire)) return;
  check_cuda(cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(bytes)),
             op, "cudaFuncSetAttribute(max dynamic shared memory)");
  if (cached) done[device].store(true, std::memory_order_release);
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
