// Generated-kernel runs (SPEC-runtime 10): the pieces below the runtime's cache.
//
// Reference backend (nvrtc_ref.cpp): the generated source is compiled on the host with the system
// C++ compiler into a shared object (a prelude maps the CUDA spellings the generator emits to
// host C++, a generated wrapper calls `torchlean_kernel` for every index) and loaded with dlopen.
// CUDA backend (nvrtc_cuda.cpp): NVRTC compiles to PTX with the options of 10.4, the driver loads
// it into the device's primary context. NVRTC and the driver API are reached at run time (dlopen
// and cudaGetDriverEntryPointByVersion), so libtlrt loads on a machine without either.
//
// Both kinds of compiled kernel are owned through shared_ptr: a cache may drop its reference while
// a call still holds one, and the module is unloaded when the last holder lets go.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

struct CUstream_st;

namespace tlrt::kernels {

// The scalar type S of the generated signature (10.2): float, double or the configured `scalar`.
enum class KernelScalar : uint8_t { f32 = 0, f64 = 1, configured = 2 };

// One read-only input as the generated signature takes it: its address and scalar count.
struct KernelArg {
  const void* data;
  uint64_t size;
};

constexpr uint32_t kKernelThreads = 256;
// Words of the error record (SPEC-runtime 10.3).
constexpr uint32_t kKernelErrorWords = 4;
// The grid limit the reference backend shares with the device's maximum x dimension on current
// GPUs, so that both backends refuse the same counts.
constexpr uint64_t kHostMaxGridX = 2147483647u;

// Events counted for tests and the bench (relaxed atomics, never reset).
struct KernelEvents {
  std::atomic<uint64_t> nvrtc_compiles{0};
  std::atomic<uint64_t> module_loads{0};
  std::atomic<uint64_t> module_unloads{0};
  std::atomic<uint64_t> host_compiles{0};
  std::atomic<uint64_t> host_unloads{0};
};
KernelEvents& kernel_events();

// ---- reference backend
// ---------------------------------------------------------------------------

struct HostKernel;

// The compiler command the reference backend uses (TLRT_HOST_CXX, else c++ or g++ on PATH); empty
// when none is found.
std::string host_compiler();

// Compiles `source` for `inputs` inputs of `kind` (configured words of `width` bytes) into a loaded
// shared object. Throws tlrt::Error naming `op`: library with the compiler's output on a failed
// compile, unavailable when no compiler is found.
std::shared_ptr<HostKernel> host_kernel_compile(std::string_view source, KernelScalar kind,
                                                uint64_t width, size_t inputs, const char* op);

// Runs blocks [first_block, last_block) of 256 indices; `error` is the 4-slot record.
void host_kernel_run(const HostKernel& kernel, const KernelArg* inputs, size_t n_inputs, void* out,
                     uint64_t* error, uint64_t count, uint64_t first_block, uint64_t last_block);

// ---- CUDA backend
// --------------------------------------------------------------------------------

struct DeviceModule;

// The context current on this thread (the caller made `device` current); when none is, the
// device's primary context established with a no-op cudaFree(nullptr). Returns a CUcontext.
// Throws tlrt::Error naming `op`.
void* current_context(const char* op);

// NVRTC compile (program torchlean_kernel.cu, header torchlean_binary.cuh, the options of 10.4 for
// the device's compute capability), cuModuleLoadData into `context`, lookup of torchlean_kernel.
// A failed compile throws library "kernel NVRTC compilation failed: <status>\n<log>".
std::shared_ptr<DeviceModule> device_module_compile(std::string_view source, void* context,
                                                    int device, const char* op);

// The device's maximum grid x dimension.
uint64_t device_max_grid_x(int device, const char* op);

// Zeroes the 4-slot record first when `zero_record` (a record that reads zero stays zero: callers
// that keep records between calls skip the fill), launches ceil(count / 256) blocks of 256 threads
// on `stream` with the arguments of 10.2, and copies the record back with a blocking copy on the
// stream (the completion point). count > 0; the grid has been checked.
void device_module_run(const DeviceModule& module, const KernelArg* inputs, size_t n_inputs,
                       void* out, uint64_t* error_device, bool zero_record, uint64_t count,
                       uint64_t error_host[4], CUstream_st* stream, const char* op);

}  // namespace tlrt::kernels
