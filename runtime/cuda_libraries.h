// Per-device state of the CUDA libraries: the cuBLAS handle with its workspace, the cuDNN handle,
// the fences that let plan caches evict safely (CUDA events on the device's stream), and per-device
// plan caches. Everything is created on first use and released through the device's teardown list
// (runtime/cuda_device.h), so cuda_device.cpp never names a library. Runtime owns lifetime and
// policy; a family's dispatch file takes a handle or plan from here and passes it to its launcher
// in kernels/ as an argument. Only compiled when the build has CUDA (TLRT_HAVE_CUDA).
//
// Release order at exit, per device: every plan cache made through DevicePlanCaches (in reverse
// order of creation), then the events, the cuDNN handle, the cuBLAS handle and its workspace. The
// libraries' own teardown item is registered before any cache of the device (making a cache
// creates the device's library record first), and the list runs last-registered first, so no
// plan outlives the handle it may have been made with.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>

#include "runtime/cuda_device.h"
#include "runtime/plan_cache.h"

struct CUstream_st;
struct cublasContext;
struct cudnnContext;

namespace tlrt::cuda {

// Bytes of the cuBLAS workspace, taken from the device's caching allocator.
constexpr size_t kCublasWorkspaceBytes = size_t{32} << 20;

// The device's cuBLAS handle, created on first use: bound to the device's stream, workspace of
// kCublasWorkspaceBytes from the caching allocator (cublasSetWorkspace, so cuBLAS never allocates
// on its own), math mode CUBLAS_PEDANTIC_MATH (strict float32, no TF32 and no reduced-precision
// reductions). The bare handle is for calls whose result does not depend on the math mode; a
// float32 product goes through CublasMathScope.
cublasContext* cublas_handle(uint32_t index);

// The device's cuBLAS handle for one call sequence, with the math mode chosen by the caller:
// CUBLAS_TF32_TENSOR_OP_MATH when tf32, which a family passes only when Setting::matmul_tf32 is on
// (runtime/settings.h), else CUBLAS_PEDANTIC_MATH. The mode is handle state shared by every
// caller, so the scope holds the device's cuBLAS call lock from construction to destruction and
// puts the handle back to CUBLAS_PEDANTIC_MATH on the way out: a strict caller never inherits TF32
// from another. Hold it only while queuing the calls.
class CublasMathScope {
 public:
  CublasMathScope(uint32_t index, bool tf32);
  ~CublasMathScope();
  CublasMathScope(const CublasMathScope&) = delete;
  CublasMathScope& operator=(const CublasMathScope&) = delete;

  cublasContext* handle() const { return handle_; }

 private:
  std::unique_lock<std::mutex> lock_;
  cublasContext* handle_ = nullptr;
};

// The device's cuDNN handle, created on first use and bound to the device's stream
// (cudnnSetStream). A build configured without cuDNN (TLRT_HAVE_CUDNN=0) throws unavailable.
cudnnContext* cudnn_handle(uint32_t index);

// Fences on the device's stream for its plan caches: record() is a CUDA event recorded on the
// stream (events are pooled per device and reused once released), is_done() is cudaEventQuery,
// wait() is cudaEventSynchronize. Shared by every plan cache of the device; every use of a plan
// must be queued on the device's stream for its fence to cover it.
std::shared_ptr<PlanFences> stream_fences(uint32_t index);

// Releases `cache` with device `index`: its plans are destroyed at exit after the stream has been
// synchronised, and before the library handles. The cache must live until process exit.
void release_at_device_teardown(uint32_t index, PlanCacheBase& cache);

// One plan cache per device for a family, each made on first use with the device's stream fences
// and released with the device. A family keeps one of these at namespace scope in its dispatch
// file:
//
//   DevicePlanCaches<FftKey, FftPlan, FftKeyHash> g_fft_plans(fft_plan_destroy);
//   auto lease = g_fft_plans.on(index).acquire(key, [&](const FftKey& k) { ... });
//
// The caches are never deleted (the teardown list refers to them), so nothing depends on the
// order of static destruction.
template <class Key, class Plan, class Hash = std::hash<Key>>
class DevicePlanCaches {
 public:
  using Cache = PlanCache<Key, Plan, Hash>;

  // capacity 0 means plan_cache_capacity_from_environment(), read when a device's cache is made.
  explicit DevicePlanCaches(typename Cache::Destroy destroy, size_t capacity = 0)
      : destroy_(std::move(destroy)), capacity_(capacity) {}
  DevicePlanCaches(const DevicePlanCaches&) = delete;
  DevicePlanCaches& operator=(const DevicePlanCaches&) = delete;

  // Throws as initialize does for an index that is not a visible device.
  Cache& on(uint32_t index) {
    if (index < kMaxDevices) {
      if (Cache* cache = caches_[index].load(std::memory_order_acquire)) return *cache;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    // stream_fences fails for an index that is not a visible device before caches_ is indexed.
    std::shared_ptr<PlanFences> fences = stream_fences(index);
    if (Cache* cache = caches_[index].load(std::memory_order_acquire)) return *cache;
    auto cache = std::make_unique<Cache>(
        std::move(fences), destroy_,
        capacity_ != 0 ? capacity_ : plan_cache_capacity_from_environment());
    release_at_device_teardown(index, *cache);
    caches_[index].store(cache.get(), std::memory_order_release);
    return *cache.release();
  }

 private:
  typename Cache::Destroy destroy_;
  size_t capacity_;
  std::mutex mutex_;  // serialises making a device's cache
  std::array<std::atomic<Cache*>, kMaxDevices> caches_{};
};

}  // namespace tlrt::cuda
