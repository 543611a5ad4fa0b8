#include "runtime/context.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "common/error.h"
#include "runtime/cuda_device.h"
#include "runtime/dispatch.h"
#include "runtime/host_memory.h"
#include "runtime/settings.h"
#include "tlrt_version.h"

#if TLRT_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace tlrt {
namespace {

std::atomic<uint32_t> g_selected{0};

Backend read_backend() {
  const char* v = std::getenv("TLRT_DEVICE");
  if (v != nullptr && (std::strcmp(v, "cpu") == 0 || std::strcmp(v, "reference") == 0)) {
    return Backend::reference;
  }
  // An explicit request for CUDA stands even in a build without it: no device is then visible
  // and every guarded call reports that, instead of silently running on the host.
  if (v != nullptr && std::strcmp(v, "cuda") == 0) return Backend::cuda;
  return built_with_cuda() ? Backend::cuda : Backend::reference;
}

// Never destroyed, like the device allocators: a buffer may be dropped during static destruction
// (held by a C++ static or a Lean global, or by another thread while a panic exits), and its free
// must reach a live allocator. The cached host blocks go back to the system with the process.
CachingAllocator& host_allocator() {
  static CachingAllocator* const allocator =
      new CachingAllocator(new HostMemory, CachingAllocator::caching_from_environment());
  return *allocator;
}

}  // namespace

bool built_with_cuda() {
  return TLRT_HAVE_CUDA != 0;
}

Backend default_backend() {
  static const Backend backend = read_backend();
  return backend;
}

uint32_t cuda_device_count() {
#if TLRT_HAVE_CUDA
  return static_cast<uint32_t>(cuda::device_count());
#else
  return 0;
#endif
}

uint32_t device_count() {
  return default_backend() == Backend::cuda ? cuda_device_count() : 1;
}

uint32_t selected_device() {
  return g_selected.load(std::memory_order_relaxed);
}

void select_device(uint32_t index, uint64_t live_wrappers) {
  const uint32_t count = device_count();
  if (index >= count) {
    fail(ErrorKind::invalid_argument, "set_device",
         "selected CUDA device does not exist (device " + std::to_string(index) + "; " +
             std::to_string(count) + " visible " + backend_name(default_backend()) + " devices)");
  }
  if (live_wrappers != 0) {
    fail(ErrorKind::invalid_argument, "set_device",
         "select the device before creating tensor buffers (" + std::to_string(live_wrappers) +
             " buffer objects are still alive)");
  }
  g_selected.store(index, std::memory_order_relaxed);
}

void ensure_initialized() {
  initialize_settings();
  if (default_backend() == Backend::cuda) {
#if TLRT_HAVE_CUDA
    cuda::initialize(selected_device());
#else
    no_cuda_backend("initialize");
#endif
  }
}

CachingAllocator& allocator(Backend backend) {
  if (backend == Backend::reference) return host_allocator();
#if TLRT_HAVE_CUDA
  return cuda::allocator(selected_device());
#else
  no_cuda_backend("allocator");
#endif
}

void synchronize(Backend backend, const char* op) {
  if (backend == Backend::reference) return;
#if TLRT_HAVE_CUDA
  cuda::synchronize(selected_device(), op);
#else
  no_cuda_backend(op);
#endif
}

void memory_info(Backend backend, size_t* free_bytes, size_t* total_bytes) {
  if (backend == Backend::reference) {
    HostMemory().memory_info(free_bytes, total_bytes);
    return;
  }
#if TLRT_HAVE_CUDA
  cuda::memory_info(selected_device(), free_bytes, total_bytes);
#else
  no_cuda_backend("memory_info");
#endif
}

SelectedDeviceScope::SelectedDeviceScope() {
#if TLRT_HAVE_CUDA
  if (default_backend() == Backend::cuda)
    previous_cuda_device_ = cuda::make_current(selected_device());
#endif
}

SelectedDeviceScope::~SelectedDeviceScope() {
#if TLRT_HAVE_CUDA
  cuda::restore_current(previous_cuda_device_);
#endif
}

DeviceProperties device_properties(uint32_t index) {
  DeviceProperties p;
  if (default_backend() == Backend::reference) {
    if (index != 0) {
      fail(ErrorKind::invalid_argument, "device_info",
           "device index " + std::to_string(index) + " is outside the 1 host device");
    }
    size_t free_bytes = 0;
    p.name = "host (tlrt reference backend)";
    p.sm_count = static_cast<uint32_t>(sysconf(_SC_NPROCESSORS_ONLN));
    HostMemory().memory_info(&free_bytes, reinterpret_cast<size_t*>(&p.total_bytes));
    return p;
  }
#if TLRT_HAVE_CUDA
  return cuda::properties(index);
#else
  no_cuda_backend("device_info");
#endif
}

uint32_t driver_version() {
#if TLRT_HAVE_CUDA
  if (default_backend() == Backend::cuda) return cuda::driver_version();
#endif
  return 0;
}

uint32_t runtime_version() {
#if TLRT_HAVE_CUDA
  if (default_backend() == Backend::cuda) return cuda::runtime_version();
#endif
  return 0;
}

std::string version_string() {
  std::string v = std::string("tlrt ") + TLRT_VERSION;
#if TLRT_HAVE_CUDA
  int rt = 0;
  cudaRuntimeGetVersion(&rt);
  v += " (CUDA runtime " + std::to_string(rt / 1000) + "." + std::to_string((rt % 1000) / 10) +
       ", backend " + backend_name(default_backend()) + ")";
#else
  v += " (no CUDA, backend reference)";
#endif
  return v;
}

}  // namespace tlrt
