// Resolution of the bookkeeping entry points and counter snapshots.
#include "tools/fuzz/abi_handles.h"

#include <dlfcn.h>

#include "lean_double.h"

namespace tlrt_fuzz {
namespace {

template <class F>
void bind(F*& slot, const char* name) {
  slot = reinterpret_cast<F*>(dlsym(RTLD_DEFAULT, name));
}

}  // namespace

AbiHandles AbiHandles::resolve() {
  AbiHandles a;
  bind(a.of_float_array, "torchlean_cuda_buffer_of_float_array");
  bind(a.of_encoded_io, "torchlean_cuda_buffer_of_encoded_io");
  bind(a.release, "torchlean_cuda_buffer_release");
  bind(a.size, "torchlean_cuda_buffer_size");
  bind(a.dtype, "torchlean_cuda_buffer_dtype");
  bind(a.drop_unboxed, "torchlean_cuda_buffer_drop_unboxed");
  bind(a.runtime_status, "torchlean_cuda_runtime_status");
  bind(a.device_count, "torchlean_libtorch_device_count");
  bind(a.get_setting, "torchlean_libtorch_get_setting");
  bind(a.set_setting, "torchlean_libtorch_set_setting");
  bind(a.set_memory_fraction, "torchlean_libtorch_set_memory_fraction");
  bind(a.device_total_bytes, "torchlean_cuda_allocator_device_total_bytes");
  bind(a.payload_live_bytes, "torchlean_cuda_allocator_live_bytes");
  bind(a.payload_peak_bytes, "torchlean_cuda_allocator_peak_bytes");
  bind(a.payload_created, "torchlean_cuda_allocator_alloc_count");
  bind(a.payload_retired, "torchlean_cuda_allocator_free_count");
  bind(a.wrapper_live, "torchlean_cuda_wrapper_live_count");
  bind(a.wrapper_peak, "torchlean_cuda_wrapper_peak_count");
  bind(a.wrapper_created, "torchlean_cuda_wrapper_alloc_count");
  bind(a.wrapper_finalized, "torchlean_cuda_wrapper_finalize_count");
  bind(a.allocated_bytes, "torchlean_libtorch_allocated_bytes");
  bind(a.reserved_bytes, "torchlean_libtorch_reserved_bytes");
  bind(a.peak_allocated_bytes, "torchlean_libtorch_peak_allocated_bytes");
  bind(a.peak_reserved_bytes, "torchlean_libtorch_peak_reserved_bytes");
  bind(a.bmm_with_transpose, "torchlean_cuda_buffer_bmm_with_transpose");
  bind(a.kernel_run_buffer, "torchlean_kernel_run_buffer");
  return a;
}

int AbiHandles::setting(uint32_t id) const {
  if (get_setting == nullptr) return -1;
  lean_object* r = get_setting(id);
  int value = -1;
  if (r != nullptr && !lean_is_scalar(r) && lean_io_result_is_ok(r)) {
    value = static_cast<int>(lean_unbox_uint32(lean_io_result_get_value(r)));
  }
  if (r != nullptr) lean_dec(r);
  return value;
}

CounterSnapshot CounterSnapshot::read(const AbiHandles& abi) {
  auto get = [](uint64_t (*f)(uint32_t)) -> uint64_t { return f != nullptr ? f(0) : 0; };
  CounterSnapshot s;
  s.payload_live_bytes = get(abi.payload_live_bytes);
  s.payload_peak_bytes = get(abi.payload_peak_bytes);
  s.payload_created = get(abi.payload_created);
  s.payload_retired = get(abi.payload_retired);
  s.wrapper_live = get(abi.wrapper_live);
  s.wrapper_peak = get(abi.wrapper_peak);
  s.wrapper_created = get(abi.wrapper_created);
  s.wrapper_finalized = get(abi.wrapper_finalized);
  s.allocated_bytes = get(abi.allocated_bytes);
  s.reserved_bytes = get(abi.reserved_bytes);
  s.peak_allocated_bytes = get(abi.peak_allocated_bytes);
  s.peak_reserved_bytes = get(abi.peak_reserved_bytes);
  s.lean_objects = tlrt_lean_double_live_objects();
  return s;
}

}  // namespace tlrt_fuzz
