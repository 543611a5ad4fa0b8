// Per-device library state: cuBLAS and cuDNN handles bound to the device's stream, the cuBLAS
// workspace from the caching allocator, pooled CUDA events as plan-cache fences, all released
// through the device's teardown list. See runtime/cuda_libraries.h for the release order.
#include "runtime/cuda_libraries.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#if TLRT_HAVE_CUDNN
#include <cudnn.h>
#endif

#include <string>
#include <vector>

#include "common/error.h"

namespace tlrt::cuda {
namespace {

std::string cublas_status_text(cublasStatus_t status) {
  return std::string(cublasGetStatusName(status)) + " (" + cublasGetStatusString(status) + ")";
}

// Fences as CUDA events recorded on the device's one stream. A token is an index into the pool
// plus one; released events are reused, so the pool holds as many events as there are plans with
// an outstanding fence.
class StreamEventFences final : public PlanFences {
 public:
  StreamEventFences(uint32_t index, cudaStream_t stream) : index_(index), stream_(stream) {}

  Token record() override {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t slot = 0;
    if (free_.empty()) {
      DeviceScope scope(index_);  // an event belongs to the device current at creation
      cudaEvent_t event = nullptr;
      check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "plan_cache",
            "cudaEventCreateWithFlags");
      events_.push_back(event);
      slot = events_.size() - 1;
    } else {
      slot = free_.back();
      free_.pop_back();
    }
    const cudaError_t status = cudaEventRecord(events_[slot], stream_);
    if (status != cudaSuccess) {
      free_.push_back(slot);
      check(status, "plan_cache", "cudaEventRecord");
    }
    return static_cast<Token>(slot) + 1;
  }

  bool is_done(Token token) override {
    const cudaEvent_t event = event_of(token);
    if (event == nullptr) return false;
    // Not ready is the expected answer while work runs; any other failure leaves the plan retired
    // (kept), which is the safe outcome, and is reported by the next synchronising call.
    return cudaEventQuery(event) == cudaSuccess;
  }

  void wait(Token token) override {
    const cudaEvent_t event = event_of(token);
    if (event == nullptr) {
      fail(ErrorKind::invalid_argument, "plan_cache",
           "fence token " + std::to_string(token) + " is not a recorded event");
    }
    check(cudaEventSynchronize(event), "plan_cache", "cudaEventSynchronize");
  }

  void release(Token token) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (token >= 1 && token <= events_.size()) free_.push_back(static_cast<size_t>(token - 1));
  }

  // Device teardown, after the stream was synchronised and every cache was released.
  void destroy_events() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (cudaEvent_t event : events_) cudaEventDestroy(event);
    events_.clear();
    free_.clear();
  }

 private:
  cudaEvent_t event_of(Token token) {
    std::lock_guard<std::mutex> lock(mutex_);
    return token >= 1 && token <= events_.size() ? events_[token - 1] : nullptr;
  }

  const uint32_t index_;
  const cudaStream_t stream_;
  std::mutex mutex_;  // guards events_ and free_; never held while waiting
  std::vector<cudaEvent_t> events_;
  std::vector<size_t> free_;
};

struct Libraries {
  uint32_t index = 0;
  std::mutex mutex;  // creation and teardown of the handles below
  cublasHandle_t cublas = nullptr;
  void* cublas_workspace = nullptr;
  std::mutex cublas_call_mutex;  // held by CublasMathScope while the math mode is not the default
#if TLRT_HAVE_CUDNN
  cudnnHandle_t cudnn = nullptr;
#endif
  std::shared_ptr<StreamEventFences> fences;
};

std::mutex g_libraries_mutex;  // serialises making a device's record
// index -> record, published once and never destroyed, like the devices themselves.
std::atomic<Libraries*> g_libraries[kMaxDevices];

// Runs from the device's teardown list: the stream is synchronised and every plan cache of the
// device was released before (it registered later). The handles are destroyed before the
// workspace goes back to the allocator, whose cache is emptied after the list has run.
void release_libraries(Libraries& lib) {
  std::lock_guard<std::mutex> lock(lib.mutex);
  lib.fences->destroy_events();
#if TLRT_HAVE_CUDNN
  if (lib.cudnn != nullptr) cudnnDestroy(lib.cudnn);
  lib.cudnn = nullptr;
#endif
  if (lib.cublas != nullptr) cublasDestroy(lib.cublas);
  lib.cublas = nullptr;
  if (lib.cublas_workspace != nullptr) allocator(lib.index).free(lib.cublas_workspace);
  lib.cublas_workspace = nullptr;
}

// The device's record, made on first use; making it initialises the device (throwing for an
// index that is not a visible device) and registers release_libraries with its teardown.
Libraries& libraries(uint32_t index) {
  if (index < kMaxDevices) {
    if (Libraries* lib = g_libraries[index].load(std::memory_order_acquire)) return *lib;
  }
  std::lock_guard<std::mutex> lock(g_libraries_mutex);
  initialize(index);
  if (Libraries* lib = g_libraries[index].load(std::memory_order_acquire)) return *lib;
  auto lib = std::make_unique<Libraries>();
  lib->index = index;
  lib->fences = std::make_shared<StreamEventFences>(index, stream(index));
  Libraries* record = lib.get();
  on_device_teardown(index, [record] { release_libraries(*record); });
  g_libraries[index].store(lib.release(), std::memory_order_release);
  return *record;
}

}  // namespace

cublasContext* cublas_handle(uint32_t index) {
  Libraries& lib = libraries(index);
  std::lock_guard<std::mutex> lock(lib.mutex);
  if (lib.cublas != nullptr) return lib.cublas;
  DeviceScope scope(index);  // a handle belongs to the device current at creation
  cublasHandle_t handle = nullptr;
  const cublasStatus_t created = cublasCreate(&handle);
  if (created != CUBLAS_STATUS_SUCCESS) {
    fail(ErrorKind::library, "cublas",
         "cublasCreate on device " + std::to_string(index) +
             " failed: " + cublas_status_text(created));
  }
  void* workspace = nullptr;
  try {
    workspace = allocator(index).allocate(kCublasWorkspaceBytes, "cublas workspace");
  } catch (...) {
    cublasDestroy(handle);
    throw;
  }
  const char* step = nullptr;
  cublasStatus_t status = cublasSetStream(handle, stream(index));
  if (status != CUBLAS_STATUS_SUCCESS) {
    step = "cublasSetStream";
  } else if ((status = cublasSetWorkspace(handle, workspace, kCublasWorkspaceBytes)) !=
             CUBLAS_STATUS_SUCCESS) {
    step = "cublasSetWorkspace";
  } else if ((status = cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH)) != CUBLAS_STATUS_SUCCESS) {
    step = "cublasSetMathMode";
  }
  if (step != nullptr) {
    cublasDestroy(handle);
    allocator(index).free(workspace);
    fail(ErrorKind::library, "cublas",
         std::string(step) + " (workspace " + std::to_string(kCublasWorkspaceBytes) +
             " bytes) failed: " + cublas_status_text(status));
  }
  lib.cublas = handle;
  lib.cublas_workspace = workspace;
  return handle;
}

CublasMathScope::CublasMathScope(uint32_t index, bool tf32) {
  handle_ = cublas_handle(index);
  lock_ = std::unique_lock<std::mutex>(libraries(index).cublas_call_mutex);
  const cublasMath_t mode = tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_PEDANTIC_MATH;
  const cublasStatus_t status = cublasSetMathMode(handle_, mode);
  if (status != CUBLAS_STATUS_SUCCESS) {
    cublasSetMathMode(handle_, CUBLAS_PEDANTIC_MATH);
    fail(ErrorKind::library, "cublas",
         std::string("cublasSetMathMode(") + (tf32 ? "TF32" : "pedantic") +
             ") failed: " + cublas_status_text(status));
  }
}

CublasMathScope::~CublasMathScope() {
  cublasSetMathMode(handle_, CUBLAS_PEDANTIC_MATH);
}

cudnnContext* cudnn_handle(uint32_t index) {
#if !TLRT_HAVE_CUDNN
  (void)index;
  fail(ErrorKind::unavailable, "cudnn", "this build of tlrt was configured without cuDNN");
#else
  Libraries& lib = libraries(index);
  std::lock_guard<std::mutex> lock(lib.mutex);
  if (lib.cudnn != nullptr) return lib.cudnn;
  DeviceScope scope(index);
  cudnnHandle_t handle = nullptr;
  const cudnnStatus_t created = cudnnCreate(&handle);
  if (created != CUDNN_STATUS_SUCCESS) {
    fail(ErrorKind::library, "cudnn",
         "cudnnCreate on device " + std::to_string(index) +
             " failed: " + cudnnGetErrorString(created));
  }
  const cudnnStatus_t bound = cudnnSetStream(handle, stream(index));
  if (bound != CUDNN_STATUS_SUCCESS) {
    cudnnDestroy(handle);
    fail(ErrorKind::library, "cudnn",
         std::string("cudnnSetStream failed: ") + cudnnGetErrorString(bound));
  }
  lib.cudnn = handle;
  return handle;
#endif
}

std::shared_ptr<PlanFences> stream_fences(uint32_t index) {
  return libraries(index).fences;
}

void release_at_device_teardown(uint32_t index, PlanCacheBase& cache) {
  // The record first: its teardown item must be registered before the cache's, so that it runs
  // after it.
  libraries(index);
  PlanCacheBase* released = &cache;
  on_device_teardown(index, [released] { released->release_all(); });
}

}  // namespace tlrt::cuda
