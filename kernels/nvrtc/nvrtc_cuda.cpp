// CUDA backend of generated-kernel runs (SPEC-runtime 10.4, 10.6): NVRTC to PTX, the driver loads
// the PTX into the device's primary context, launches go to the runtime's stream.
//
// Neither library is a link dependency of libtlrt: NVRTC is opened with dlopen (libnvrtc.so.13,
// .12, then libnvrtc.so) and the driver entry points come from cudart's
// cudaGetDriverEntryPointByVersion, so the library still loads where the GPU driver or NVRTC is
// absent and only a kernel run reports what is missing.
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nvrtc.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "common/error.h"
#include "kernels/binary/binary_header.h"
#include "kernels/nvrtc/nvrtc.h"

namespace tlrt::kernels {
namespace {

struct Nvrtc {
  nvrtcResult (*create)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                        const char* const*) = nullptr;
  nvrtcResult (*compile)(nvrtcProgram, int, const char* const*) = nullptr;
  nvrtcResult (*ptx_size)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*ptx)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*log_size)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*log)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*destroy)(nvrtcProgram*) = nullptr;
  const char* (*error_string)(nvrtcResult) = nullptr;
  std::string missing;  // non-empty when NVRTC could not be loaded
};

struct Driver {
  CUresult (*get_error_string)(CUresult, const char**) = nullptr;
  CUresult (*ctx_get_current)(CUcontext*) = nullptr;
  CUresult (*ctx_push_current)(CUcontext) = nullptr;
  CUresult (*ctx_pop_current)(CUcontext*) = nullptr;
  CUresult (*module_load_data)(CUmodule*, const void*) = nullptr;
  CUresult (*module_get_function)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*module_unload)(CUmodule) = nullptr;
  CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, CUstream, void**, void**) = nullptr;
  std::string missing;
};

template <class F>
void load_symbol(void* lib, const char* name, F& slot, std::string& missing) {
  slot = reinterpret_cast<F>(dlsym(lib, name));
  if (slot == nullptr && missing.empty()) missing = std::string("NVRTC lacks ") + name;
}

const Nvrtc& nvrtc() {
  static const Nvrtc loaded = [] {
    Nvrtc f;
    void* lib = nullptr;
    for (const char* name : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}) {
      lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (lib != nullptr) break;
    }
    if (lib == nullptr) {
      f.missing = "NVRTC (libnvrtc.so) could not be loaded";
      return f;
    }
    load_symbol(lib, "nvrtcCreateProgram", f.create, f.missing);
    load_symbol(lib, "nvrtcCompileProgram", f.compile, f.missing);
    load_symbol(lib, "nvrtcGetPTXSize", f.ptx_size, f.missing);
    load_symbol(lib, "nvrtcGetPTX", f.ptx, f.missing);
    load_symbol(lib, "nvrtcGetProgramLogSize", f.log_size, f.missing);
    load_symbol(lib, "nvrtcGetProgramLog", f.log, f.missing);
    load_symbol(lib, "nvrtcDestroyProgram", f.destroy, f.missing);
    load_symbol(lib, "nvrtcGetErrorString", f.error_string, f.missing);
    return f;  // the library stays loaded for the process
  }();
  return loaded;
}

template <class F>
void driver_symbol(const char* name, F& slot, std::string& missing) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t st =
      cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &found);
  if (st != cudaSuccess || found != cudaDriverEntryPointSuccess || p == nullptr) {
    if (missing.empty()) {
      missing = std::string("the CUDA driver lacks ") + name + " (" + cudaGetErrorString(st) + ")";
    }
    return;
  }
  slot = reinterpret_cast<F>(p);
}

const Driver& driver() {
  static const Driver loaded = [] {
    Driver d;
    driver_symbol("cuGetErrorString", d.get_error_string, d.missing);
    driver_symbol("cuCtxGetCurrent", d.ctx_get_current, d.missing);
    driver_symbol("cuCtxPushCurrent", d.ctx_push_current, d.missing);
    driver_symbol("cuCtxPopCurrent", d.ctx_pop_current, d.missing);
    driver_symbol("cuModuleLoadData", d.module_load_data, d.missing);
    driver_symbol("cuModuleGetFunction", d.module_get_function, d.missing);
    driver_symbol("cuModuleUnload", d.module_unload, d.missing);
    driver_symbol("cuLaunchKernel", d.launch_kernel, d.missing);
    return d;
  }();
  return loaded;
}

const Driver& require_driver(const char* op) {
  const Driver& d = driver();
  if (!d.missing.empty()) fail(ErrorKind::unavailable, op, "kernel CUDA driver: " + d.missing);
  return d;
}

void check_driver(CUresult r, const char* op, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const char* message = nullptr;
  const Driver& d = driver();
  if (d.get_error_string != nullptr) d.get_error_string(r, &message);
  fail(ErrorKind::device, op,
       std::string("kernel CUDA driver: ") + (message != nullptr ? message : "unknown error") +
           " (" + what + ")");
}

void check_runtime(cudaError_t st, const char* op, const char* what) {
  if (st == cudaSuccess) return;
  fail(st == cudaErrorMemoryAllocation ? ErrorKind::out_of_memory : ErrorKind::device, op,
       std::string("kernel CUDA: ") + what + ": " + cudaGetErrorString(st));
}

void check_nvrtc(nvrtcResult r, const char* op, const char* what) {
  if (r == NVRTC_SUCCESS) return;
  fail(ErrorKind::library, op,
       std::string("kernel NVRTC: ") + nvrtc().error_string(r) + " (" + what + ")");
}

// A pinned 4-word landing place for the error record, one per host thread.
struct PinnedRecord {
  uint64_t* words = nullptr;
  ~PinnedRecord() {
    if (words != nullptr) cudaFreeHost(words);
  }
};

}  // namespace

struct DeviceModule {
  CUcontext context = nullptr;
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  ~DeviceModule() {
    if (module == nullptr) return;
    // Eviction may happen on any thread with any device current: unload in the module's own
    // context, and not at all when that context is gone (its modules went with it).
    const Driver& d = driver();
    if (d.ctx_push_current(context) == CUDA_SUCCESS) {
      d.module_unload(module);
      CUcontext previous = nullptr;
      d.ctx_pop_current(&previous);
      kernel_events().module_unloads.fetch_add(1, std::memory_order_relaxed);
    }
  }
};

void* current_context(const char* op) {
  const Driver& d = require_driver(op);
  CUcontext context = nullptr;
  check_driver(d.ctx_get_current(&context), op, "cuCtxGetCurrent");
  if (context != nullptr) return context;
  // Nothing current yet on this thread: establish the device's primary context.
  check_runtime(cudaFree(nullptr), op, "cudaFree(nullptr)");
  check_driver(d.ctx_get_current(&context), op, "cuCtxGetCurrent");
  if (context == nullptr) fail(ErrorKind::device, op, "kernel: no current CUDA context");
  return context;
}

std::shared_ptr<DeviceModule> device_module_compile(std::string_view source, void* context,
                                                    int device, const char* op) {
  const Nvrtc& f = nvrtc();
  if (!f.missing.empty()) fail(ErrorKind::unavailable, op, "kernel NVRTC: " + f.missing);
  const Driver& d = require_driver(op);
  int major = 0, minor = 0;
  check_runtime(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), op,
                "cudaDeviceGetAttribute");
  check_runtime(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device), op,
                "cudaDeviceGetAttribute");
  const std::string text(source);
  const std::string header(torchlean_binary_header());
  const char* headers[] = {header.c_str()};
  const char* header_names[] = {"torchlean_binary.cuh"};
  nvrtcProgram program = nullptr;
  check_nvrtc(f.create(&program, text.c_str(), "torchlean_kernel.cu", 1, headers, header_names), op,
              "nvrtcCreateProgram");
  struct ProgramGuard {
    const Nvrtc& f;
    nvrtcProgram* program;
    ~ProgramGuard() { f.destroy(program); }
  } guard{f, &program};
  const std::string architecture =
      "--gpu-architecture=compute_" + std::to_string(major) + std::to_string(minor);
  const char* options[] = {architecture.c_str(), "--std=c++17",     "--fmad=false",
                           "--ftz=false",        "--prec-div=true", "--prec-sqrt=true"};
  const nvrtcResult status = f.compile(program, 6, options);
  kernel_events().nvrtc_compiles.fetch_add(1, std::memory_order_relaxed);
  size_t log_size = 0;
  check_nvrtc(f.log_size(program, &log_size), op, "nvrtcGetProgramLogSize");
  std::string log(log_size, '\0');
  if (log_size != 0) check_nvrtc(f.log(program, log.data()), op, "nvrtcGetProgramLog");
  while (!log.empty() && log.back() == '\0') log.pop_back();
  if (status != NVRTC_SUCCESS) {
    fail(ErrorKind::library, op,
         std::string("kernel NVRTC compilation failed: ") + f.error_string(status) + "\n" + log);
  }
  size_t ptx_size = 0;
  check_nvrtc(f.ptx_size(program, &ptx_size), op, "nvrtcGetPTXSize");
  std::string ptx(ptx_size, '\0');
  check_nvrtc(f.ptx(program, ptx.data()), op, "nvrtcGetPTX");
  auto result = std::make_shared<DeviceModule>();
  result->context = static_cast<CUcontext>(context);
  CUmodule module = nullptr;
  check_driver(d.module_load_data(&module, ptx.c_str()), op, "cuModuleLoadData");
  result->module = module;
  kernel_events().module_loads.fetch_add(1, std::memory_order_relaxed);
  check_driver(d.module_get_function(&result->function, result->module, "torchlean_kernel"), op,
               "cuModuleGetFunction torchlean_kernel");
  return result;
}

uint64_t device_max_grid_x(int device, const char* op) {
  // A device property: read once per device (0 = not read yet).
  constexpr int kCached = 64;
  static std::atomic<int> cached[kCached] = {};
  if (device >= 0 && device < kCached) {
    const int known = cached[device].load(std::memory_order_relaxed);
    if (known != 0) return static_cast<uint64_t>(known);
  }
  int value = 0;
  check_runtime(cudaDeviceGetAttribute(&value, cudaDevAttrMaxGridDimX, device), op,
                "cudaDeviceGetAttribute(MaxGridDimX)");
  if (device >= 0 && device < kCached) cached[device].store(value, std::memory_order_relaxed);
  return static_cast<uint64_t>(value);
}

void device_module_run(const DeviceModule& module, const KernelArg* inputs, size_t n_inputs,
                       void* out, uint64_t* error_device, bool zero_record, uint64_t count,
                       uint64_t error_host[4], CUstream_st* stream, const char* op) {
  const Driver& d = require_driver(op);
  // Argument storage on the stack for up to kStackInputs inputs, on the heap beyond.
  constexpr size_t kStackInputs = 8;
  CUdeviceptr stack_addresses[kStackInputs];
  unsigned long long stack_sizes[kStackInputs];
  void* stack_args[2 * kStackInputs + 3];
  std::vector<CUdeviceptr> heap_addresses;
  std::vector<unsigned long long> heap_sizes;
  std::vector<void*> heap_args;
  CUdeviceptr* addresses = stack_addresses;
  unsigned long long* sizes = stack_sizes;
  void** arg_slots = stack_args;
  if (n_inputs > kStackInputs) {
    heap_addresses.resize(n_inputs);
    heap_sizes.resize(n_inputs);
    heap_args.resize(2 * n_inputs + 3);
    addresses = heap_addresses.data();
    sizes = heap_sizes.data();
    arg_slots = heap_args.data();
  }
  size_t slot = 0;
  for (size_t k = 0; k < n_inputs; ++k) {
    addresses[k] = reinterpret_cast<CUdeviceptr>(inputs[k].data);
    sizes[k] = inputs[k].size;
    arg_slots[slot++] = &addresses[k];
    arg_slots[slot++] = &sizes[k];
  }
  CUdeviceptr output = reinterpret_cast<CUdeviceptr>(out);
  CUdeviceptr error = reinterpret_cast<CUdeviceptr>(error_device);
  unsigned long long n = count;
  arg_slots[slot++] = &output;
  arg_slots[slot++] = &error;
  arg_slots[slot++] = &n;
  const uint64_t blocks = (count + kKernelThreads - 1) / kKernelThreads;
  if (zero_record) {
    check_runtime(cudaMemsetAsync(error_device, 0, 4 * sizeof(uint64_t), stream), op,
                  "cudaMemsetAsync(error record)");
  }
  check_driver(d.launch_kernel(module.function, static_cast<unsigned>(blocks), 1, 1, kKernelThreads,
                               1, 1, 0, reinterpret_cast<CUstream>(stream), arg_slots, nullptr),
               op, "cuLaunchKernel");
  thread_local PinnedRecord pinned;
  if (pinned.words == nullptr) {
    void* p = nullptr;
    check_runtime(cudaMallocHost(&p, 4 * sizeof(uint64_t)), op, "cudaMallocHost(error record)");
    pinned.words = static_cast<uint64_t*>(p);
  }
  check_runtime(cudaMemcpyAsync(pinned.words, error_device, 4 * sizeof(uint64_t),
                                cudaMemcpyDeviceToHost, stream),
                op, "cudaMemcpyAsync(error record)");
  check_runtime(cudaStreamSynchronize(stream), op, "cudaStreamSynchronize");
  for (int i = 0; i < 4; ++i) error_host[i] = pinned.words[i];
}

}  // namespace tlrt::kernels
