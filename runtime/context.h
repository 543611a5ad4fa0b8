// Process-wide runtime state: which backend new buffers use, the selected device, one-time
// initialisation, and per-backend access to the allocator, synchronisation and memory figures.
//
// Backend selection (TLRT_DEVICE, read once):
//   cpu   -> the reference backend: host memory, plain C++ kernels; the host counts as device 0.
//   cuda  -> the CUDA backend (the default in a build with CUDA; in a build without it, no
//            device is visible and guarded calls fail with "unavailable").
//   unset -> cuda in a build with CUDA, reference otherwise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/caching_allocator.h"
#include "runtime/dtype.h"

namespace tlrt {

bool built_with_cuda();
Backend default_backend();

// CUDA devices visible to the driver (0 without CUDA or on error); no initialisation.
uint32_t cuda_device_count();
// Devices of the default backend: the CUDA count, or 1 (the host) for the reference backend.
uint32_t device_count();

uint32_t selected_device();
// Refused (invalid_argument) while `live_wrappers` > 0 or when index >= device_count().
void select_device(uint32_t index, uint64_t live_wrappers);

// First guarded call: settings defaults, then the default backend's selected device. Throws on
// failure; the next call tries again.
void ensure_initialized();

CachingAllocator& allocator(Backend backend);
// Waits for all queued work of the backend on the selected device.
void synchronize(Backend backend, const char* op);
void memory_info(Backend backend, size_t* free_bytes, size_t* total_bytes);

// Makes the selected device current for a guarded call and restores the previous one afterwards.
class SelectedDeviceScope {
 public:
  SelectedDeviceScope();
  ~SelectedDeviceScope();
  SelectedDeviceScope(const SelectedDeviceScope&) = delete;
  SelectedDeviceScope& operator=(const SelectedDeviceScope&) = delete;

 private:
  int previous_cuda_device_ = -1;  // restored on exit when the scope switched devices
};

struct DeviceProperties {
  std::string name;
  uint32_t capability = 0;
  uint32_t sm_count = 0;
  uint32_t clock_khz = 0;
  uint32_t mem_clock_khz = 0;
  uint32_t mem_bus_width = 0;
  uint64_t total_bytes = 0;
};
// Properties of device `index` of the default backend (by explicit index, not the selection).
DeviceProperties device_properties(uint32_t index);
uint32_t driver_version();   // 0 for the reference backend
uint32_t runtime_version();  // 0 for the reference backend

// "tlrt <version> (CUDA runtime <x.y>, ...)".
std::string version_string();

}  // namespace tlrt
