// CUDA device state: stream, allocator over cudaMalloc, pinned staging, and the teardown list that
// releases everything else kept per device at exit. Libraries are not named here: they register
// their release with on_device_teardown (runtime/cuda_libraries.cpp).
#include "runtime/cuda_device.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/error.h"
#include "runtime/transfer.h"

namespace tlrt::cuda {
namespace {

constexpr size_t kStagingChunk = kStagingChunkBytes;  // per pinned staging buffer
constexpr size_t kStagingBuffers = 2;                 // double buffering

// cudaMalloc beneath the caching allocator. Frees are preceded by a stream synchronisation
// inside the allocator's own procedure (empty_cache / out-of-memory path).
class DeviceMemory final : public MemorySource {
 public:
  DeviceMemory(int index, cudaStream_t stream) : index_(index), stream_(stream) {}
  void* allocate(size_t bytes) override {
    void* ptr = nullptr;
    cudaError_t st = cudaMalloc(&ptr, bytes);
    if (st == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // clear the non-sticky allocation error
      return nullptr;
    }
    check(st, "allocator", "cudaMalloc");
    return ptr;
  }
  void release(void* ptr, size_t) override { cudaFree(ptr); }
  void synchronize() override { check(cudaStreamSynchronize(stream_), "allocator", "synchronize"); }
  void memory_info(size_t* free_bytes, size_t* total_bytes) override {
    check(cudaMemGetInfo(free_bytes, total_bytes), "allocator", "cudaMemGetInfo");
  }

 private:
  int index_;
  cudaStream_t stream_;
};

struct Device {
  int index = 0;
  cudaStream_t stream = nullptr;
  std::unique_ptr<DeviceMemory> memory;
  std::unique_ptr<CachingAllocator> allocator;

  std::mutex staging_mutex;  // one transfer at a time uses the staging buffers
  std::array<void*, kStagingBuffers> staging{};
  std::array<cudaEvent_t, kStagingBuffers> staging_done{};

  std::mutex teardown_mutex;
  std::vector<std::function<void()>> teardown;  // run last to first at exit
  bool teardown_done = false;                   // later registrations are dropped
};

std::mutex g_devices_mutex;  // serialises initialisation and teardown
// index -> device, published once on first use and never destroyed (buffers may outlive static
// destruction; teardown is the exit handler below, which runs while the CUDA runtime is up).
// Every call looks its device up, so reads take no lock.
std::atomic<Device*> g_devices[kMaxDevices];

// Returns what the runtime holds beyond live buffers (staging, everything on the teardown lists,
// cached blocks) while the CUDA runtime is still up. initialize() creates the primary context
// before it registers this handler, so the CUDA runtime's own exit teardown was registered
// earlier and, atexit handlers running in reverse, runs after this one.
//
// Order per device: synchronise the stream (nothing queued may still read a plan, a handle's
// workspace or staging), free staging, run the teardown list last-registered first (plans before
// the handles they were made with; workspaces go back to the allocator), then empty the
// allocator's cache so its segments go back to the driver.
void release_at_exit() {
  std::lock_guard<std::mutex> lock(g_devices_mutex);
  for (auto& slot : g_devices) {
    Device* d = slot.load(std::memory_order_acquire);
    if (d == nullptr) continue;
    cudaSetDevice(d->index);
    cudaStreamSynchronize(d->stream);
    for (size_t i = 0; i < kStagingBuffers; ++i) {
      if (d->staging[i] != nullptr) cudaFreeHost(d->staging[i]);
      if (d->staging_done[i] != nullptr) cudaEventDestroy(d->staging_done[i]);
      d->staging[i] = nullptr;
    }
    std::vector<std::function<void()>> items;
    {
      // Taken out so that an item registering another one cannot deadlock or loop.
      std::lock_guard<std::mutex> items_lock(d->teardown_mutex);
      items.swap(d->teardown);
      d->teardown_done = true;
    }
    for (auto it = items.rbegin(); it != items.rend(); ++it) {
      try {
        (*it)();
      } catch (...) {
        // Exit: a failing device cannot be reported any more.
      }
    }
    try {
      d->allocator->empty_cache();
    } catch (...) {
      // As above: nothing can be reported at exit.
    }
  }
}

Device* find_device(uint32_t index) {
  return index < kMaxDevices ? g_devices[index].load(std::memory_order_acquire) : nullptr;
}

Device& get_device(uint32_t index) {
  Device* d = find_device(index);
  if (d == nullptr) {
    initialize(index);
    d = find_device(index);
  }
  return *d;
}

void ensure_staging(Device& d) {
  if (d.staging[0] != nullptr) return;
  for (size_t i = 0; i < kStagingBuffers; ++i) {
    check(cudaHostAlloc(&d.staging[i], kStagingChunk, cudaHostAllocDefault), "transfer",
          "cudaHostAlloc (pinned staging)");
    check(cudaEventCreateWithFlags(&d.staging_done[i], cudaEventDisableTiming), "transfer",
          "cudaEventCreate");
  }
}

}  // namespace

void check(int status, const char* op, const char* what) {
  const auto st = static_cast<cudaError_t>(status);
  if (st == cudaSuccess) return;
  const ErrorKind kind =
      st == cudaErrorMemoryAllocation ? ErrorKind::out_of_memory : ErrorKind::device;
  if (st == cudaErrorMemoryAllocation) cudaGetLastError();
  fail(
      kind, op,
      std::string(what) + " failed: " + cudaGetErrorName(st) + " (" + cudaGetErrorString(st) + ")");
}

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

void initialize(uint32_t index) {
  if (find_device(index) != nullptr) return;
  std::lock_guard<std::mutex> lock(g_devices_mutex);
  if (find_device(index) != nullptr) return;
  const int count = device_count();
  if (static_cast<int64_t>(index) >= count || index >= kMaxDevices) {
    fail(ErrorKind::unavailable, "initialize",
         "selected CUDA device does not exist (device " + std::to_string(index) + "; " +
             std::to_string(count) + " visible)");
  }
  DeviceScope scope(index);
  auto d = std::make_unique<Device>();
  d->index = static_cast<int>(index);
  check(cudaFree(nullptr), "initialize", "primary context creation");
  static const bool exit_handler = std::atexit(release_at_exit) == 0;
  (void)exit_handler;
  check(cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking), "initialize",
        "cudaStreamCreateWithFlags");
  d->memory = std::make_unique<DeviceMemory>(d->index, d->stream);
  d->allocator = std::make_unique<CachingAllocator>(d->memory.get(),
                                                    CachingAllocator::caching_from_environment());
  g_devices[index].store(d.release(), std::memory_order_release);
}

CUstream_st* stream(uint32_t index) {
  return get_device(index).stream;
}
CachingAllocator& allocator(uint32_t index) {
  return *get_device(index).allocator;
}

void synchronize(uint32_t index, const char* op) {
  Device& d = get_device(index);
  check(cudaStreamSynchronize(d.stream), op, "stream synchronize");
  check(cudaGetLastError(), op, "pending device error");
}

void memory_info(uint32_t index, size_t* free_bytes, size_t* total_bytes) {
  DeviceScope scope(index);
  get_device(index);
  check(cudaMemGetInfo(free_bytes, total_bytes), "memory_info", "cudaMemGetInfo");
}

int make_current(uint32_t index) {
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess) {
    cudaGetLastError();
    current = -1;
  }
  if (current == static_cast<int>(index)) return -1;
  check(cudaSetDevice(static_cast<int>(index)), "device", "cudaSetDevice");
  return current;
}

void restore_current(int previous) {
  if (previous >= 0) cudaSetDevice(previous);
}

void upload_staged(uint32_t index, void* device_dst, size_t bytes, const ProduceChunk& produce) {
  if (bytes == 0) return;
  Device& d = get_device(index);
  std::lock_guard<std::mutex> lock(d.staging_mutex);
  ensure_staging(d);
  size_t slot = 0;
  std::array<bool, kStagingBuffers> in_flight{};
  for (size_t offset = 0; offset < bytes;
       offset += kStagingChunk, slot = (slot + 1) % kStagingBuffers) {
    const size_t length = std::min(kStagingChunk, bytes - offset);
    // The slot's previous copy must have left staging before the host overwrites it.
    if (in_flight[slot]) check(cudaEventSynchronize(d.staging_done[slot]), "upload", "event wait");
    produce(d.staging[slot], offset, length);
    check(cudaMemcpyAsync(static_cast<char*>(device_dst) + offset, d.staging[slot], length,
                          cudaMemcpyHostToDevice, d.stream),
          "upload", "cudaMemcpyAsync host to device");
    check(cudaEventRecord(d.staging_done[slot], d.stream), "upload", "cudaEventRecord");
    in_flight[slot] = true;
  }
  check(cudaStreamSynchronize(d.stream), "upload", "stream synchronize");
}

void download_staged(uint32_t index, const void* device_src, size_t bytes,
                     const ConsumeChunk& consume) {
  if (bytes == 0) return;
  Device& d = get_device(index);
  std::lock_guard<std::mutex> lock(d.staging_mutex);
  ensure_staging(d);
  const size_t chunks = (bytes + kStagingChunk - 1) / kStagingChunk;
  auto issue = [&](size_t chunk) {
    const size_t offset = chunk * kStagingChunk;
    const size_t length = std::min(kStagingChunk, bytes - offset);
    const size_t slot = chunk % kStagingBuffers;
    check(cudaMemcpyAsync(d.staging[slot], static_cast<const char*>(device_src) + offset, length,
                          cudaMemcpyDeviceToHost, d.stream),
          "download", "cudaMemcpyAsync device to host");
    check(cudaEventRecord(d.staging_done[slot], d.stream), "download", "cudaEventRecord");
  };
  for (size_t c = 0; c < std::min(chunks, kStagingBuffers); ++c) issue(c);
  for (size_t c = 0; c < chunks; ++c) {
    const size_t slot = c % kStagingBuffers;
    check(cudaEventSynchronize(d.staging_done[slot]), "download", "event wait");
    const size_t offset = c * kStagingChunk;
    consume(d.staging[slot], offset, std::min(kStagingChunk, bytes - offset));
    if (c + kStagingBuffers < chunks) issue(c + kStagingBuffers);
  }
  check(cudaGetLastError(), "download", "pending device error");
}

void copy_async(uint32_t index, void* dst, const void* src, size_t bytes, const char* op) {
  if (bytes == 0) return;
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, get_device(index).stream), op,
        "cudaMemcpyAsync device to device");
}

void zero_async(uint32_t index, void* dst, size_t bytes, const char* op) {
  if (bytes == 0) return;
  check(cudaMemsetAsync(dst, 0, bytes, get_device(index).stream), op, "cudaMemsetAsync");
}

void on_device_teardown(uint32_t index, std::function<void()> release) {
  Device& d = get_device(index);
  std::lock_guard<std::mutex> lock(d.teardown_mutex);
  if (d.teardown_done) return;
  d.teardown.push_back(std::move(release));
}

DeviceProperties properties(uint32_t index) {
  const int count = device_count();
  if (static_cast<int64_t>(index) >= count) {
    fail(ErrorKind::invalid_argument, "device_info",
         "device index " + std::to_string(index) + " is outside the " + std::to_string(count) +
             " visible CUDA devices");
  }
  const int dev = static_cast<int>(index);
  DeviceProperties p;
  char name[256] = {0};
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, dev), "device_info", "cudaGetDeviceProperties");
  std::memcpy(name, prop.name,
              sizeof(prop.name) < sizeof(name) ? sizeof(prop.name) : sizeof(name) - 1);
  p.name = name;
  p.capability = static_cast<uint32_t>(prop.major * 10 + prop.minor);
  p.sm_count = static_cast<uint32_t>(prop.multiProcessorCount);
  int value = 0;
  check(cudaDeviceGetAttribute(&value, cudaDevAttrClockRate, dev), "device_info", "clock rate");
  p.clock_khz = static_cast<uint32_t>(value);
  check(cudaDeviceGetAttribute(&value, cudaDevAttrMemoryClockRate, dev), "device_info",
        "memory clock rate");
  p.mem_clock_khz = static_cast<uint32_t>(value);
  check(cudaDeviceGetAttribute(&value, cudaDevAttrGlobalMemoryBusWidth, dev), "device_info",
        "memory bus width");
  p.mem_bus_width = static_cast<uint32_t>(value);
  p.total_bytes = prop.totalGlobalMem;
  return p;
}

uint32_t driver_version() {
  int v = 0;
  check(cudaDriverGetVersion(&v), "driver_version", "cudaDriverGetVersion");
  return static_cast<uint32_t>(v);
}

uint32_t runtime_version() {
  int v = 0;
  check(cudaRuntimeGetVersion(&v), "runtime_version", "cudaRuntimeGetVersion");
  return static_cast<uint32_t>(v);
}

}  // namespace tlrt::cuda
