// Generated-kernel runs (SPEC-runtime 10): validation, the compiled-kernel cache, the error record
// and the three entry points' runtime halves. The core, run_generated, is scalar-agnostic: it takes
// addresses in the backend's memory, scalar counts and the word width, so encoded buffers use it as
// they are (kernel_run_encoded) without a path of their own.
//
// Cache (10.5): process-wide, 16 entries, least recently used first out, keyed by (CUDA context,
// exact source) on the CUDA backend and by (scalar kind, width, input count, exact source) on the
// reference backend, whose compiled object depends on the wrapper too. Lookup, compile and insert
// happen under one lock; entries are shared, so an evicted module is unloaded when the last call
// holding it returns.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "kernels/nvrtc/nvrtc.h"
#include "runtime/buffer.h"

namespace tlrt {

using kernels::KernelArg;
using kernels::KernelScalar;

constexpr uint64_t kKernelSourceLimit = uint64_t{16} << 20;  // 16 MiB
constexpr size_t kKernelCacheEntries = 16;

struct KernelRunCounters {
  uint64_t nvrtc_compiles = 0;  // NVRTC compile calls (successful or not)
  uint64_t module_loads = 0;    // cuModuleLoadData calls that succeeded
  uint64_t module_unloads = 0;  // modules unloaded after their last holder let go
  uint64_t host_compiles = 0;   // host compiler runs of the reference backend
  uint64_t host_unloads = 0;    // host objects closed after their last holder let go
  uint64_t cache_hits = 0;
  uint64_t cache_misses = 0;
  uint64_t cache_entries = 0;  // entries now cached (both backends)
};
KernelRunCounters kernel_run_counters();

// False on the reference backend when no host C++ compiler is found (TLRT_HOST_CXX, else c++ or
// g++ on PATH): generated kernels cannot run there.
bool kernel_runs_available();

// Empties the cache (entries still held by a call unload when it returns).
void clear_kernel_cache();

// Throws invalid_argument "kernel: generated source exceeds 16 MiB" naming op.
void check_kernel_source(std::string_view source, const char* op);

// Step 2 of 10.1 alone: the compiled kernel for `source` on `backend`, from the cache or compiled
// (the reference backend for `n_inputs` inputs of `kind` / `width`). Used by run_generated and by
// tests and the bench to time compiles.
void prepare_generated(Backend backend, std::string_view source, KernelScalar kind, uint64_t width,
                       size_t n_inputs, const char* op);

// Runs `source` over `inputs` (addresses in the backend's memory: host memory for the reference
// backend, device memory of the selected device for CUDA) into `out`, `count` scalars of `width`
// bytes (4 for f32, 8 for f64). Steps 1-6 of 10.1 except allocation of the output: checks the
// source size and the grid, compiles (also for count = 0), allocates and zeroes the error record,
// launches on the runtime's stream, reads the record back and throws invalid_argument
// "kernel: input <i> index <j> is outside size <n>" when it is set.
void run_generated(Backend backend, std::string_view source, KernelScalar kind, uint64_t width,
                   const std::vector<KernelArg>& inputs, void* out, uint64_t count, const char* op);

// kernel_run_buffer: live float32 buffers of the default backend in, a fresh float32 buffer of
// count elements out (no buffer on any failure).
std::unique_ptr<Buffer> kernel_run_buffers(std::string_view source,
                                           const std::vector<const Buffer*>& inputs, uint64_t count,
                                           const char* op);

// kernel_run_encoded: live encoded buffers of `width`-byte words (all on one backend) in, a fresh
// encoded buffer of count words out (no buffer on any failure). A released, native or
// other-width input fails with invalid_argument "encoded buffer: incompatible input storage"
// naming the input; Lean has checked formats and sizes (SPEC-runtime 9).
std::unique_ptr<Buffer> kernel_run_encoded_buffers(std::string_view source,
                                                   const std::vector<const Buffer*>& inputs,
                                                   uint64_t width, uint64_t count, const char* op);

// kernel_run_bytes: format 0 / 1 / 2 with its width rule, each input's length a multiple of the
// width. Throws invalid_argument with TorchLean's texts: "kernel: invalid encoded scalar layout"
// (format > 2 or width 0), "kernel: native scalar width mismatch", "kernel: invalid input byte
// extent", "kernel: host byte size overflow". Returns the scalar kind.
KernelScalar check_bytes_layout(uint32_t format, uint64_t width,
                                const std::vector<uint64_t>& input_bytes, uint64_t count,
                                const char* op);

// Host words in, host words out, uploaded and downloaded verbatim (pinned staging on CUDA). The
// layout has been checked by check_bytes_layout. `host_output` is called once the kernel has
// compiled and its backend output is allocated, and returns where the count * width result bytes
// go; it is not called when the run fails before that. A host allocation failure inside it should
// throw out_of_memory naming op.
void kernel_run_host_words(std::string_view source, KernelScalar kind, uint64_t width,
                           const std::vector<const uint8_t*>& inputs,
                           const std::vector<uint64_t>& input_bytes, uint64_t count,
                           const std::function<uint8_t*()>& host_output, const char* op);

}  // namespace tlrt
