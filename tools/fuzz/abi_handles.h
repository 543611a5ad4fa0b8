// The library entry points the fuzzer itself uses for bookkeeping (building the pool, reading
// counters, resetting settings), resolved by name like every fuzzed symbol. Null when the
// library does not export one; the driver then says which check it cannot make.
#pragma once

#include <lean/lean.h>

#include <cstdint>

#include "tlrt/torchlean_abi.h"

namespace tlrt_fuzz {

struct AbiHandles {
  lean_obj_res (*of_float_array)(b_lean_obj_arg, uint8_t) = nullptr;
  lean_obj_res (*of_encoded_io)(b_lean_obj_arg, b_lean_obj_arg, uint64_t) = nullptr;
  uint32_t (*release)(b_lean_obj_arg) = nullptr;
  uint32_t (*size)(b_lean_obj_arg) = nullptr;
  uint8_t (*dtype)(b_lean_obj_arg) = nullptr;
  void (*drop_unboxed)(torchlean_cuda_buffer*) = nullptr;
  uint32_t (*runtime_status)(uint32_t) = nullptr;
  uint32_t (*device_count)(uint32_t) = nullptr;
  lean_obj_res (*get_setting)(uint32_t) = nullptr;
  lean_obj_res (*set_setting)(uint32_t, uint32_t) = nullptr;
  lean_obj_res (*set_memory_fraction)(double) = nullptr;
  uint64_t (*device_total_bytes)(uint32_t) = nullptr;
  // Ownership counters (SPEC-runtime 2.5) and allocator statistics (4.7).
  uint64_t (*payload_live_bytes)(uint32_t) = nullptr;
  uint64_t (*payload_peak_bytes)(uint32_t) = nullptr;
  uint64_t (*payload_created)(uint32_t) = nullptr;
  uint64_t (*payload_retired)(uint32_t) = nullptr;
  uint64_t (*wrapper_live)(uint32_t) = nullptr;
  uint64_t (*wrapper_peak)(uint32_t) = nullptr;
  uint64_t (*wrapper_created)(uint32_t) = nullptr;
  uint64_t (*wrapper_finalized)(uint32_t) = nullptr;
  uint64_t (*allocated_bytes)(uint32_t) = nullptr;
  uint64_t (*reserved_bytes)(uint32_t) = nullptr;
  uint64_t (*peak_allocated_bytes)(uint32_t) = nullptr;
  uint64_t (*peak_reserved_bytes)(uint32_t) = nullptr;
  // Calls that create the runtime's first-use state (FuzzSession::settle_first_use_state).
  lean_obj_res (*bmm_with_transpose)(b_lean_obj_arg, b_lean_obj_arg, uint32_t, uint32_t, uint32_t,
                                     uint32_t, uint32_t, uint32_t) = nullptr;
  lean_obj_res (*kernel_run_buffer)(b_lean_obj_arg, b_lean_obj_arg, uint64_t) = nullptr;

  static AbiHandles resolve();
  // Current value of runtime setting `id`, or -1 when it cannot be read.
  int setting(uint32_t id) const;
};

// A snapshot of the counters a batch must leave as it found them.
struct CounterSnapshot {
  uint64_t payload_live_bytes = 0, payload_peak_bytes = 0, payload_created = 0, payload_retired = 0;
  uint64_t wrapper_live = 0, wrapper_peak = 0, wrapper_created = 0, wrapper_finalized = 0;
  uint64_t allocated_bytes = 0, reserved_bytes = 0, peak_allocated_bytes = 0,
           peak_reserved_bytes = 0;
  int64_t lean_objects = 0;  // heap objects of the Lean runtime double
  static CounterSnapshot read(const AbiHandles& abi);
};

}  // namespace tlrt_fuzz
