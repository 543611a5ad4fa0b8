// Runtime status, device selection, settings, memory controls, ownership counters, allocator
// statistics and the device-information rows (SPEC-runtime section 4; symbol groups runtime,
// controls, counters, allocator-stats, variant).
#include <cmath>
#include <string>

#include <lean/mimalloc.h>

#include "abi/boundary.h"
#include "runtime/counters.h"
#include "runtime/settings.h"

using tlrt::ErrorKind;
using namespace tlrt::abi;

namespace {

tlrt::AllocatorStats stats() {
  return tlrt::allocator(tlrt::default_backend()).stats();
}

}  // namespace

extern "C" {

// 1 when the default backend has a usable device (a visible CUDA device, or the reference
// backend's host), 2 otherwise. No initialisation.
uint32_t torchlean_cuda_runtime_status(uint32_t) {
  return tlrt::device_count() > 0 ? 1 : 2;
}

// Fresh string naming tlrt, its version and the CUDA runtime.
lean_obj_res torchlean_libtorch_version(uint32_t) {
  return unguarded_call([] { return lean_mk_string(tlrt::version_string().c_str()); });
}

uint32_t torchlean_libtorch_device_count(uint32_t) {
  return tlrt::device_count();
}
uint32_t torchlean_libtorch_get_device(uint32_t) {
  return tlrt::selected_device();
}

// Refused while any buffer wrapper is alive, or for an index past the device count.
lean_obj_res torchlean_libtorch_set_device(uint32_t index) {
  try {
    tlrt::select_device(index, tlrt::wrapper_counter().live());
    return lean_io_result_mk_ok(lean_box(0));
  } catch (const tlrt::Error& e) {
    return io_error(e.kind(), e.what());
  }
}

lean_obj_res torchlean_libtorch_get_setting(uint32_t setting) {
  return io_call([&] { return lean_box_uint32(tlrt::get_setting(setting)); });
}

lean_obj_res torchlean_libtorch_set_setting(uint32_t setting, uint32_t enabled) {
  return io_call([&] {
    tlrt::set_setting(setting, enabled);
    return lean_box(0);
  });
}

lean_obj_res torchlean_libtorch_get_memory_fraction(uint32_t) {
  return io_call(
      [] { return lean_box_float(tlrt::allocator(tlrt::default_backend()).memory_fraction()); });
}

lean_obj_res torchlean_libtorch_set_memory_fraction(double fraction) {
  return io_call([&] {
    if (!std::isfinite(fraction) || !(fraction > 0.0) || fraction > 1.0) {
      tlrt::fail(
          ErrorKind::invalid_argument, "set_memory_fraction",
          "memory fraction must be finite and in (0, 1] (got " + std::to_string(fraction) + ")");
    }
    tlrt::allocator(tlrt::default_backend()).set_memory_fraction(fraction);
    return lean_box(0);
  });
}

lean_obj_res torchlean_libtorch_synchronize(uint32_t) {
  return io_call([] {
    tlrt::synchronize(tlrt::default_backend(), "synchronize");
    return lean_box(0);
  });
}

lean_obj_res torchlean_libtorch_empty_cache(uint32_t) {
  return io_call([] {
    tlrt::allocator(tlrt::default_backend()).empty_cache();
    return lean_box(0);
  });
}

// Ownership counters: relaxed atomic reads, no initialisation, never fail.
uint64_t torchlean_cuda_allocator_live_bytes(uint32_t) {
  return tlrt::payload_counter().live();
}
uint64_t torchlean_cuda_allocator_peak_bytes(uint32_t) {
  return tlrt::payload_counter().peak();
}
uint64_t torchlean_cuda_allocator_alloc_count(uint32_t) {
  return tlrt::payload_counter().created();
}
uint64_t torchlean_cuda_allocator_free_count(uint32_t) {
  return tlrt::payload_counter().retired();
}
uint64_t torchlean_cuda_wrapper_live_count(uint32_t) {
  return tlrt::wrapper_counter().live();
}
uint64_t torchlean_cuda_wrapper_peak_count(uint32_t) {
  return tlrt::wrapper_counter().peak();
}
uint64_t torchlean_cuda_wrapper_alloc_count(uint32_t) {
  return tlrt::wrapper_counter().created();
}
uint64_t torchlean_cuda_wrapper_finalize_count(uint32_t) {
  return tlrt::wrapper_counter().retired();
}

// Device memory of the selected device (guarded: initialises, panics on failure).
uint64_t torchlean_cuda_allocator_device_free_bytes(uint32_t) {
  return pure_call([] {
    size_t free_bytes = 0, total_bytes = 0;
    tlrt::memory_info(tlrt::default_backend(), &free_bytes, &total_bytes);
    return static_cast<uint64_t>(free_bytes);
  });
}
uint64_t torchlean_cuda_allocator_device_total_bytes(uint32_t) {
  return pure_call([] {
    size_t free_bytes = 0, total_bytes = 0;
    tlrt::memory_info(tlrt::default_backend(), &free_bytes, &total_bytes);
    return static_cast<uint64_t>(total_bytes);
  });
}

// Caching-allocator statistics of the selected device (guarded).
uint64_t torchlean_libtorch_allocated_bytes(uint32_t) {
  return pure_call([] { return stats().allocated_bytes; });
}
uint64_t torchlean_libtorch_reserved_bytes(uint32_t) {
  return pure_call([] { return stats().reserved_bytes; });
}
uint64_t torchlean_libtorch_peak_allocated_bytes(uint32_t) {
  return pure_call([] { return stats().peak_allocated_bytes; });
}
uint64_t torchlean_libtorch_peak_reserved_bytes(uint32_t) {
  return pure_call([] { return stats().peak_reserved_bytes; });
}

// 0 when buffers live on the host (reference backend), 1 for CUDA.
uint32_t torchlean_libtorch_device_kind(uint32_t) {
  return tlrt::default_backend() == tlrt::Backend::cuda ? 1 : 0;
}

// Device information by explicit index (independent of the selection); IO errors past the count.
lean_obj_res torchlean_libtorch_device_name(uint32_t index) {
  return io_call([&] { return lean_mk_string(tlrt::device_properties(index).name.c_str()); });
}
lean_obj_res torchlean_libtorch_device_capability(uint32_t index) {
  return io_call([&] { return lean_box_uint32(tlrt::device_properties(index).capability); });
}
lean_obj_res torchlean_libtorch_device_sm_count(uint32_t index) {
  return io_call([&] { return lean_box_uint32(tlrt::device_properties(index).sm_count); });
}
lean_obj_res torchlean_libtorch_device_clock_khz(uint32_t index) {
  return io_call([&] { return lean_box_uint32(tlrt::device_properties(index).clock_khz); });
}
lean_obj_res torchlean_libtorch_device_mem_clock_khz(uint32_t index) {
  return io_call([&] { return lean_box_uint32(tlrt::device_properties(index).mem_clock_khz); });
}
lean_obj_res torchlean_libtorch_device_mem_bus_width(uint32_t index) {
  return io_call([&] { return lean_box_uint32(tlrt::device_properties(index).mem_bus_width); });
}
lean_obj_res torchlean_libtorch_device_total_bytes(uint32_t index) {
  return io_call([&] { return lean_box_uint64(tlrt::device_properties(index).total_bytes); });
}
lean_obj_res torchlean_libtorch_driver_version(uint32_t) {
  return io_call([] { return lean_box_uint32(tlrt::driver_version()); });
}
lean_obj_res torchlean_libtorch_runtime_version(uint32_t) {
  return io_call([] { return lean_box_uint32(tlrt::runtime_version()); });
}

// Host-only: asks Lean's mimalloc heap to return free pages. Device memory is untouched.
uint32_t torchlean_runtime_collect_allocator(uint32_t) {
  mi_collect(false);
  return 1;
}

}  // extern "C"
