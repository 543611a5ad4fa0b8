// CUDA devices: per device one non-blocking stream, a caching allocator over cudaMalloc, pinned
// staging for host transfers, and a teardown list through which whatever else is kept per device
// (library handles and plan caches, runtime/cuda_libraries.h) is released at exit without this
// file naming it. Only compiled when the build has CUDA (TLRT_HAVE_CUDA).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "runtime/caching_allocator.h"
#include "runtime/context.h"

struct CUstream_st;

namespace tlrt::cuda {

// Device indices at or above this are refused; per-device tables are sized by it.
constexpr uint32_t kMaxDevices = 64;

// Visible CUDA devices; 0 when the driver is missing or reports an error. No context is created.
int device_count();

// Initialises device `index` (primary context, stream, allocator). Throws unavailable when the
// index is not a visible device, device on CUDA failures.
void initialize(uint32_t index);

CUstream_st* stream(uint32_t index);
CachingAllocator& allocator(uint32_t index);

// Waits for all queued work of the device's stream; asynchronous faults surface here as
// tlrt::Error(device) naming `op`.
void synchronize(uint32_t index, const char* op);
void memory_info(uint32_t index, size_t* free_bytes, size_t* total_bytes);

// Makes `index` current; returns the previously current device when it differed, else -1.
int make_current(uint32_t index);
// Restores a device returned by make_current (no-op for -1).
void restore_current(int previous);

// Makes `index` current for the scope and restores the previous current device afterwards.
class DeviceScope {
 public:
  explicit DeviceScope(uint32_t index) : previous_(make_current(index)) {}
  ~DeviceScope() { restore_current(previous_); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = -1;
};

// Blocking transfers through pinned staging, pipelined in fixed chunks (a multiple of 8 bytes).
// `produce(chunk, offset, length)` fills staging with bytes [offset, offset + length) of the
// upload; `consume(chunk, offset, length)` receives bytes of the download in order.
using ProduceChunk = std::function<void(void* chunk, size_t offset, size_t length)>;
using ConsumeChunk = std::function<void(const void* chunk, size_t offset, size_t length)>;
void upload_staged(uint32_t index, void* device_dst, size_t bytes, const ProduceChunk& produce);
void download_staged(uint32_t index, const void* device_src, size_t bytes,
                     const ConsumeChunk& consume);

// Asynchronous device-to-device copy and zero fill on the device's stream.
void copy_async(uint32_t index, void* dst, const void* src, size_t bytes, const char* op);
void zero_async(uint32_t index, void* dst, size_t bytes, const char* op);

// Adds `release` to device `index`'s teardown list (initialising the device first, which may
// throw as initialize does). At process exit, for each device, the list runs in reverse order of
// registration after the device's stream has been synchronised (no queued work can still use what
// is released) and before the allocator's cache is emptied (so workspaces an item frees go back to
// the driver). Reverse order lets something registered later depend on something registered
// earlier, as plans depend on library handles. A throw from an item is swallowed (a failing
// device cannot be reported at exit); an item must not initialise a device. Items registered
// after teardown has run are never called.
void on_device_teardown(uint32_t index, std::function<void()> release);

// The device-information rows of SPEC-runtime 4 for CUDA device `index` (no initialisation).
DeviceProperties properties(uint32_t index);
uint32_t driver_version();
uint32_t runtime_version();

// Throws tlrt::Error for a failed CUDA runtime call: out_of_memory for allocation failures,
// device otherwise, naming op and the CUDA error.
void check(int status, const char* op, const char* what);

}  // namespace tlrt::cuda
