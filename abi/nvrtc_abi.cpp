// NVRTC kernel runs (SPEC-runtime section 10). Not provided yet: each symbol fails in the form its
// kind requires (IO error or panic) with a message saying so.
#include "abi/boundary.h"

using namespace tlrt::abi;

extern "C" {

lean_obj_res torchlean_kernel_run_buffer(b_lean_obj_arg, b_lean_obj_arg, uint64_t) {
  return io_call(
      []() -> lean_obj_res { not_supported_yet("kernel_run_buffer", "NVRTC kernel runs"); });
}

lean_obj_res torchlean_kernel_run_bytes(b_lean_obj_arg, uint32_t, uint64_t, b_lean_obj_arg,
                                        uint64_t) {
  return io_call(
      []() -> lean_obj_res { not_supported_yet("kernel_run_bytes", "NVRTC kernel runs"); });
}

lean_obj_res torchlean_kernel_run_encoded(b_lean_obj_arg, b_lean_obj_arg, b_lean_obj_arg, uint64_t,
                                          uint64_t) {
  return pure_call(
      []() -> lean_obj_res { not_supported_yet("kernel_run_encoded", "NVRTC kernel runs"); });
}

lean_obj_res torchlean_kernel_run_host(b_lean_obj_arg, uint32_t, b_lean_obj_arg, uint64_t) {
  return io_call(
      []() -> lean_obj_res { not_supported_yet("kernel_run_host", "NVRTC kernel runs"); });
}

}  // extern "C"
