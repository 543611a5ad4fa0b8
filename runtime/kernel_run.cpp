#include "runtime/kernel_run.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <vector>

#include "common/error.h"
#include "kernels/common/host_parallel.h"
#include "runtime/context.h"
#include "runtime/dispatch.h"

#if TLRT_HAVE_CUDA
#include "runtime/cuda_device.h"
#endif

namespace tlrt {
namespace {

struct CacheEntry {
  Backend backend;
  void* context;  // CUDA: the CUcontext; reference: null
  uint32_t device;
  KernelScalar kind;  // reference only (CUDA modules do not depend on it)
  uint64_t width;
  size_t n_inputs;
  std::string source;
  std::shared_ptr<kernels::HostKernel> host;
  std::shared_ptr<kernels::DeviceModule> module;
};

// Never destroyed: CUDA entries are unloaded by the device teardown (before the driver goes), host
// objects stay mapped until the process ends.
struct KernelCache {
  std::mutex mutex;
  std::list<CacheEntry> entries;  // front = most recently used
  std::atomic<uint64_t> hits{0};
  std::atomic<uint64_t> misses{0};
  std::atomic<uint64_t> size{0};
  bool teardown_registered[64] = {};
};

KernelCache& cache() {
  static KernelCache* c = new KernelCache;
  return *c;
}

// Inserts at the front and evicts the least recently used entry beyond 16. Called under the lock.
void insert(KernelCache& c, CacheEntry entry) {
  c.entries.push_front(std::move(entry));
  if (c.entries.size() > kKernelCacheEntries) c.entries.pop_back();
  c.size.store(c.entries.size(), std::memory_order_relaxed);
}

#if TLRT_HAVE_CUDA
// Error records of the CUDA backend: 4 words from the device's pool that are kept zero between
// calls, so a launch needs no zero fill of its own. A call takes a record from its device's list
// (a new one is zeroed before its first launch), and hands it back once it read clean; a record
// that read a failure goes back marked dirty and is zeroed by the next call that takes it; a record
// whose call failed on the device is freed. The lists are emptied by the device teardown.
struct ErrorRecord {
  uint64_t* data = nullptr;
  bool dirty = true;
};

struct ErrorRecords {
  std::mutex mutex;
  std::vector<std::vector<ErrorRecord>> free;  // per device
  std::vector<bool> teardown_registered;
};

ErrorRecords& error_records() {
  static ErrorRecords* r = new ErrorRecords;
  return *r;
}

ErrorRecord take_error_record(uint32_t device, const char* op) {
  ErrorRecords& r = error_records();
  bool register_teardown = false;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    if (r.free.size() <= device) {
      r.free.resize(device + 1);
      r.teardown_registered.resize(device + 1, false);
    }
    if (!r.free[device].empty()) {
      const ErrorRecord record = r.free[device].back();
      r.free[device].pop_back();
      return record;
    }
    if (!r.teardown_registered[device]) {
      r.teardown_registered[device] = true;
      register_teardown = true;
    }
  }
  if (register_teardown) {
    cuda::on_device_teardown(device, [device] {
      ErrorRecords& records = error_records();
      std::vector<ErrorRecord> dropped;
      {
        std::lock_guard<std::mutex> lock(records.mutex);
        dropped.swap(records.free[device]);
      }
      for (const ErrorRecord& e : dropped) allocator(Backend::cuda).free(e.data);
    });
  }
  ErrorRecord fresh;
  fresh.data = static_cast<uint64_t*>(
      allocator(Backend::cuda).allocate(kernels::kKernelErrorWords * sizeof(uint64_t), op));
  return fresh;
}

void give_back_error_record(uint32_t device, ErrorRecord record) {
  ErrorRecords& r = error_records();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.free[device].push_back(record);
}

// Owns a taken record until it is handed back; a record still owned at scope exit (its call
// threw) is freed, its contents unknown.
struct HeldErrorRecord {
  uint32_t device;
  ErrorRecord record;
  bool held = true;
  HeldErrorRecord(uint32_t d, const char* op) : device(d), record(take_error_record(d, op)) {}
  ~HeldErrorRecord() {
    if (held) allocator(Backend::cuda).free(record.data);
  }
  void give_back(bool clean) {
    record.dirty = !clean;
    held = false;
    give_back_error_record(device, record);
  }
  HeldErrorRecord(const HeldErrorRecord&) = delete;
  HeldErrorRecord& operator=(const HeldErrorRecord&) = delete;
};
#endif

struct Compiled {
  std::shared_ptr<kernels::HostKernel> host;
  std::shared_ptr<kernels::DeviceModule> module;
};

Compiled acquire(Backend backend, std::string_view source, KernelScalar kind, uint64_t width,
                 size_t n_inputs, const char* op) {
  check_kernel_source(source, op);
  KernelCache& c = cache();
  if (backend == Backend::reference) {
    std::lock_guard<std::mutex> lock(c.mutex);
    for (auto it = c.entries.begin(); it != c.entries.end(); ++it) {
      if (it->backend == Backend::reference && it->kind == kind && it->width == width &&
          it->n_inputs == n_inputs && it->source == source) {
        c.entries.splice(c.entries.begin(), c.entries, it);
        c.hits.fetch_add(1, std::memory_order_relaxed);
        return {c.entries.front().host, nullptr};
      }
    }
    c.misses.fetch_add(1, std::memory_order_relaxed);
    auto host = kernels::host_kernel_compile(source, kind, width, n_inputs, op);
    insert(c, {Backend::reference, nullptr, 0, kind, width, n_inputs, std::string(source), host,
               nullptr});
    return {host, nullptr};
  }
#if TLRT_HAVE_CUDA
  const uint32_t device = selected_device();
  cuda::DeviceScope scope(device);
  void* context = kernels::current_context(op);
  std::lock_guard<std::mutex> lock(c.mutex);
  for (auto it = c.entries.begin(); it != c.entries.end(); ++it) {
    if (it->backend == Backend::cuda && it->context == context && it->source == source) {
      c.entries.splice(c.entries.begin(), c.entries, it);
      c.hits.fetch_add(1, std::memory_order_relaxed);
      return {nullptr, c.entries.front().module};
    }
  }
  c.misses.fetch_add(1, std::memory_order_relaxed);
  auto module = kernels::device_module_compile(source, context, static_cast<int>(device), op);
  if (device < 64 && !c.teardown_registered[device]) {
    c.teardown_registered[device] = true;
    // Modules go before the device's context does; a call cannot be in flight at exit.
    cuda::on_device_teardown(device, [device] {
      KernelCache& k = cache();
      std::lock_guard<std::mutex> inner(k.mutex);
      k.entries.remove_if(
          [&](const CacheEntry& e) { return e.backend == Backend::cuda && e.device == device; });
      k.size.store(k.entries.size(), std::memory_order_relaxed);
    });
  }
  insert(c, {Backend::cuda, context, device, kind, width, n_inputs, std::string(source), nullptr,
             module});
  return {nullptr, module};
#else
  (void)kind;
  (void)width;
  (void)n_inputs;
  no_cuda_backend(op);
#endif
}

[[noreturn]] void bounds_failure(const uint64_t record[4], const char* op) {
  fail(ErrorKind::invalid_argument, op,
       "kernel: input " + std::to_string(record[1]) + " index " + std::to_string(record[2]) +
           " is outside size " + std::to_string(record[3]));
}

[[noreturn]] void grid_failure(uint64_t count, uint64_t blocks, uint64_t limit, const char* op) {
  fail(ErrorKind::invalid_argument, op,
       "kernel: output exceeds CUDA grid extent (count " + std::to_string(count) + " needs " +
           std::to_string(blocks) + " blocks of 256, the limit is " + std::to_string(limit) + ")");
}

// Runs blocks of the host kernel on several threads for large counts.
void run_host(const kernels::HostKernel& kernel, const std::vector<KernelArg>& inputs, void* out,
              uint64_t* record, uint64_t count, uint64_t blocks) {
  kernels::parallel_ranges(
      blocks, 64,
      [&](uint64_t first, uint64_t last) {
        kernels::host_kernel_run(kernel, inputs.data(), inputs.size(), out, record, count, first,
                                 last);
      },
      16);
}

// Steps 2-6 of 10.1; `make_out` allocates (and for host words uploads) once the kernel compiled
// and returns the output address (null for count = 0).
void run_with(Backend backend, std::string_view source, KernelScalar kind, uint64_t width,
              const std::vector<KernelArg>& inputs, uint64_t count, const char* op,
              const std::function<void*()>& make_out) {
  const Compiled compiled = acquire(backend, source, kind, width, inputs.size(), op);
  void* out = make_out();
  if (count == 0) return;
  const uint64_t blocks = (count + kernels::kKernelThreads - 1) / kernels::kKernelThreads;
  if (backend == Backend::reference) {
    if (blocks > kernels::kHostMaxGridX) grid_failure(count, blocks, kernels::kHostMaxGridX, op);
    uint64_t record[4] = {0, 0, 0, 0};
    run_host(*compiled.host, inputs, out, record, count, blocks);
    if (record[0] != 0) bounds_failure(record, op);
    return;
  }
#if TLRT_HAVE_CUDA
  const uint32_t device = selected_device();
  cuda::DeviceScope scope(device);
  const uint64_t limit = kernels::device_max_grid_x(static_cast<int>(device), op);
  if (blocks > limit) grid_failure(count, blocks, limit, op);
  HeldErrorRecord error(device, op);
  uint64_t record[4] = {0, 0, 0, 0};
  kernels::device_module_run(*compiled.module, inputs.data(), inputs.size(), out, error.record.data,
                             error.record.dirty, count, record, selected_stream(op), op);
  error.give_back(record[0] == 0 && record[1] == 0 && record[2] == 0 && record[3] == 0);
  if (record[0] != 0) bounds_failure(record, op);
#else
  no_cuda_backend(op);
#endif
}

// A block of the backend's pool that goes back unless taken.
struct PoolBlock {
  Backend backend;
  void* data = nullptr;
  PoolBlock(Backend b, uint64_t bytes, const char* op) : backend(b) {
    if (bytes != 0) data = allocator(b).allocate(static_cast<size_t>(bytes), op);
  }
  ~PoolBlock() {
    if (data != nullptr) allocator(backend).free(data);
  }
  void* take() {
    void* p = data;
    data = nullptr;
    return p;
  }
  PoolBlock(const PoolBlock&) = delete;
  PoolBlock& operator=(const PoolBlock&) = delete;
};

}  // namespace

KernelRunCounters kernel_run_counters() {
  const kernels::KernelEvents& e = kernels::kernel_events();
  KernelRunCounters r;
  r.nvrtc_compiles = e.nvrtc_compiles.load(std::memory_order_relaxed);
  r.module_loads = e.module_loads.load(std::memory_order_relaxed);
  r.module_unloads = e.module_unloads.load(std::memory_order_relaxed);
  r.host_compiles = e.host_compiles.load(std::memory_order_relaxed);
  r.host_unloads = e.host_unloads.load(std::memory_order_relaxed);
  r.cache_hits = cache().hits.load(std::memory_order_relaxed);
  r.cache_misses = cache().misses.load(std::memory_order_relaxed);
  r.cache_entries = cache().size.load(std::memory_order_relaxed);
  return r;
}

bool kernel_runs_available() {
  return default_backend() != Backend::reference || !kernels::host_compiler().empty();
}

void clear_kernel_cache() {
  KernelCache& c = cache();
  std::list<CacheEntry> dropped;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    dropped.swap(c.entries);
    c.size.store(0, std::memory_order_relaxed);
  }
#if TLRT_HAVE_CUDA
  if (!dropped.empty() && dropped.front().backend == Backend::cuda) {
    cuda::DeviceScope scope(dropped.front().device);
    dropped.clear();
  }
#endif
}

void check_kernel_source(std::string_view source, const char* op) {
  if (source.size() > kKernelSourceLimit) {
    fail(ErrorKind::invalid_argument, op,
         "kernel: generated source exceeds 16 MiB (" + std::to_string(source.size()) + " bytes)");
  }
}

void prepare_generated(Backend backend, std::string_view source, KernelScalar kind, uint64_t width,
                       size_t n_inputs, const char* op) {
  (void)acquire(backend, source, kind, width, n_inputs, op);
}

void run_generated(Backend backend, std::string_view source, KernelScalar kind, uint64_t width,
                   const std::vector<KernelArg>& inputs, void* out, uint64_t count,
                   const char* op) {
  if (width == 0) fail(ErrorKind::invalid_argument, op, "kernel: invalid encoded scalar layout");
  run_with(backend, source, kind, width, inputs, count, op, [out] { return out; });
}

namespace {

// The output half shared by kernel_run_buffer and kernel_run_encoded: count scalars of `width`
// bytes in a pool block that becomes a buffer only once the error record reads clean, so a failed
// run wraps nothing and moves no counter.
std::unique_ptr<Buffer> run_into_fresh_buffer(Backend backend, std::string_view source,
                                              KernelScalar kind, Dtype dtype, uint64_t width,
                                              const std::vector<KernelArg>& args, uint64_t count,
                                              const char* op) {
  check_kernel_source(source, op);
  const uint64_t bytes = checked_mul(count, width, op);
  if (bytes > (uint64_t{1} << 62)) {
    fail(ErrorKind::invalid_argument, op,
         "kernel: output byte size overflow (count " + std::to_string(count) + ", width " +
             std::to_string(width) + ")");
  }
  std::unique_ptr<PoolBlock> out;
  run_with(backend, source, kind, width, args, count, op, [&]() -> void* {
    out = std::make_unique<PoolBlock>(backend, bytes, op);
    return out->data;
  });
  if (count == 0) {
    return dtype == Dtype::encoded ? Buffer::allocate_encoded(backend, width, 0, op)
                                   : Buffer::allocate(backend, dtype, 0, op);
  }
  return Buffer::adopt(backend, dtype, width, count, out->take());
}

}  // namespace

std::unique_ptr<Buffer> kernel_run_buffers(std::string_view source,
                                           const std::vector<const Buffer*>& inputs, uint64_t count,
                                           const char* op) {
  const Backend backend = inputs.empty() ? default_backend() : inputs.front()->backend();
  std::vector<KernelArg> args;
  args.reserve(inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Buffer& b = *inputs[k];
    require_live(b, op);
    if (b.dtype() != Dtype::f32 || b.backend() != backend) {
      fail(ErrorKind::invalid_argument, op,
           "kernel: input device, dtype or layout mismatch (input " + std::to_string(k) + " is " +
               dtype_name(b.dtype()) + " on " + backend_name(b.backend()) +
               "; the kernel takes float32 on " + backend_name(backend) + ")");
    }
    args.push_back({b.data(), b.size()});
  }
  return run_into_fresh_buffer(backend, source, KernelScalar::f32, Dtype::f32, 4, args, count, op);
}

std::unique_ptr<Buffer> kernel_run_encoded_buffers(std::string_view source,
                                                   const std::vector<const Buffer*>& inputs,
                                                   uint64_t width, uint64_t count, const char* op) {
  if (width == 0) fail(ErrorKind::invalid_argument, op, "kernel: invalid encoded scalar layout");
  const Backend backend = inputs.empty() ? default_backend() : inputs.front()->backend();
  std::vector<KernelArg> args;
  args.reserve(inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Buffer& b = *inputs[k];
    if (b.released() || !b.encoded() || b.width() != width || b.backend() != backend) {
      fail(ErrorKind::invalid_argument, op,
           "encoded buffer: incompatible input storage (input " + std::to_string(k) + " is " +
               (b.released()   ? std::string("released")
                : !b.encoded() ? std::string(dtype_name(b.dtype()))
                               : "an encoded buffer of " + std::to_string(b.width()) +
                                     "-byte words on " + backend_name(b.backend())) +
               "; the kernel takes " + std::to_string(width) + "-byte words on " +
               backend_name(backend) + ")");
    }
    args.push_back({b.data(), b.size()});
  }
  // The result is an encoded buffer, whose word count must fit UInt32 (TorchLean checks it when
  // it wraps the result; here it is checked before any work).
  if (count > UINT32_MAX) {
    fail(ErrorKind::invalid_argument, op,
         "encoded buffer: scalar count exceeds the tape ABI (count = " + std::to_string(count) +
             " words, more than 4294967295)");
  }
  return run_into_fresh_buffer(backend, source, KernelScalar::configured, Dtype::encoded, width,
                               args, count, op);
}

KernelScalar check_bytes_layout(uint32_t format, uint64_t width,
                                const std::vector<uint64_t>& input_bytes, uint64_t count,
                                const char* op) {
  if (format > 2 || width == 0) {
    fail(ErrorKind::invalid_argument, op,
         "kernel: invalid encoded scalar layout (format " + std::to_string(format) + ", width " +
             std::to_string(width) + ")");
  }
  if ((format == 0 && width != 4) || (format == 1 && width != 8)) {
    fail(ErrorKind::invalid_argument, op,
         "kernel: native scalar width mismatch (format " + std::to_string(format) +
             " needs width " + (format == 0 ? "4" : "8") + ", got " + std::to_string(width) + ")");
  }
  for (size_t k = 0; k < input_bytes.size(); ++k) {
    if (input_bytes[k] % width != 0) {
      fail(ErrorKind::invalid_argument, op,
           "kernel: invalid input byte extent (input " + std::to_string(k) + " has " +
               std::to_string(input_bytes[k]) + " bytes, not a multiple of width " +
               std::to_string(width) + ")");
    }
  }
  if (count > (uint64_t{1} << 62) / width) {
    fail(ErrorKind::invalid_argument, op,
         "kernel: host byte size overflow (count " + std::to_string(count) + " x width " +
             std::to_string(width) + ")");
  }
  return static_cast<KernelScalar>(format);
}

void kernel_run_host_words(std::string_view source, KernelScalar kind, uint64_t width,
                           const std::vector<const uint8_t*>& inputs,
                           const std::vector<uint64_t>& input_bytes, uint64_t count,
                           const std::function<uint8_t*()>& host_output, const char* op) {
  const Backend backend = default_backend();
  check_kernel_source(source, op);
  const uint64_t out_bytes = checked_mul(count, width, op);
  std::vector<KernelArg> args(inputs.size());
  if (backend == Backend::reference) {
    // Host words are used in place; the result goes to a pool block first, so that a failed run
    // never hands out its output.
    for (size_t k = 0; k < inputs.size(); ++k) args[k] = {inputs[k], input_bytes[k] / width};
    std::unique_ptr<PoolBlock> result;
    run_with(backend, source, kind, width, args, count, op, [&]() -> void* {
      result = std::make_unique<PoolBlock>(backend, out_bytes, op);
      return result->data;
    });
    uint8_t* dst = host_output();
    if (out_bytes != 0) std::memcpy(dst, result->data, static_cast<size_t>(out_bytes));
    return;
  }
#if TLRT_HAVE_CUDA
  const uint32_t device = selected_device();
  std::vector<std::unique_ptr<Workspace>> staged;
  std::unique_ptr<Workspace> result;
  run_with(backend, source, kind, width, args, count, op, [&]() -> void* {
    for (size_t k = 0; k < inputs.size(); ++k) {
      staged.push_back(std::make_unique<Workspace>(backend, input_bytes[k], op));
      const uint8_t* src = inputs[k];
      cuda::upload_staged(device, staged.back()->data(), input_bytes[k],
                          [src](void* chunk, size_t offset, size_t length) {
                            std::memcpy(chunk, src + offset, length);
                          });
      args[k] = {staged.back()->data(), input_bytes[k] / width};
    }
    result = std::make_unique<Workspace>(backend, out_bytes, op);
    return result->data();
  });
  uint8_t* dst = host_output();
  if (out_bytes != 0) {
    cuda::download_staged(device, result->data(), out_bytes,
                          [dst](const void* chunk, size_t offset, size_t length) {
                            std::memcpy(dst + offset, chunk, length);
                          });
  }
#else
  (void)host_output;
  (void)count;
  no_cuda_backend(op);
#endif
}

}  // namespace tlrt
