// Encoded buffers and NVRTC kernel runs (SPEC-runtime sections 9 and 10). Not provided yet: each
// symbol fails in the form its kind requires (IO error or panic) with a message saying so. No
// encoded buffer can exist, so format? is always none.
#include "abi/boundary.h"

using tlrt::ErrorKind;
using namespace tlrt::abi;

namespace {

[[noreturn]] void not_yet(const char* op, const char* what) {
  tlrt::fail(ErrorKind::not_supported, op, std::string(what) + " are not supported yet by tlrt");
}

}  // namespace

extern "C" {

// Borrowed. none for native buffers; some f (f retained once more) for encoded buffers.
lean_obj_res torchlean_cuda_buffer_format(b_lean_obj_arg object) {
  return unguarded_call([&]() -> lean_obj_res {
    torchlean_cuda_buffer* rec = record_of(object, "format");
    if (rec->format == nullptr) return lean_box(0);
    lean_object* some = lean_alloc_ctor(1, 1, 0);
    lean_inc(rec->format);
    lean_ctor_set(some, 0, rec->format);
    return some;
  });
}

lean_obj_res torchlean_cuda_buffer_of_encoded_io(b_lean_obj_arg, b_lean_obj_arg, uint64_t) {
  return io_call([]() -> lean_obj_res { not_yet("of_encoded_io", "encoded buffers"); });
}

// A native or released buffer is an IO error in any case (SPEC-runtime 2.3).
lean_obj_res torchlean_cuda_buffer_to_encoded_io(b_lean_obj_arg object) {
  return io_call([&]() -> lean_obj_res {
    torchlean_cuda_buffer* rec = record_of(object, "to_encoded_io");
    if (rec->format == nullptr) {
      tlrt::fail(ErrorKind::invalid_argument, "to_encoded_io",
                 "expected an encoded buffer, got a real (float32/float64) buffer");
    }
    not_yet("to_encoded_io", "encoded buffers");
  });
}

lean_obj_res torchlean_kernel_run_buffer(b_lean_obj_arg, b_lean_obj_arg, uint64_t) {
  return io_call([]() -> lean_obj_res { not_yet("kernel_run_buffer", "NVRTC kernel runs"); });
}

lean_obj_res torchlean_kernel_run_bytes(b_lean_obj_arg, uint32_t, uint64_t, b_lean_obj_arg,
                                        uint64_t) {
  return io_call([]() -> lean_obj_res { not_yet("kernel_run_bytes", "NVRTC kernel runs"); });
}

lean_obj_res torchlean_kernel_run_encoded(b_lean_obj_arg, b_lean_obj_arg, b_lean_obj_arg, uint64_t,
                                          uint64_t) {
  return pure_call([]() -> lean_obj_res { not_yet("kernel_run_encoded", "NVRTC kernel runs"); });
}

lean_obj_res torchlean_kernel_run_host(b_lean_obj_arg, uint32_t, b_lean_obj_arg, uint64_t) {
  return io_call([]() -> lean_obj_res { not_yet("kernel_run_host", "NVRTC kernel runs"); });
}

}  // extern "C"
