// Encoded buffers (SPEC-runtime section 9). Not provided yet: each symbol fails in the form its
// kind requires (IO error or panic) with a message saying so. No encoded buffer can exist, so
// format? is always none.
#include "abi/boundary.h"

using tlrt::ErrorKind;
using namespace tlrt::abi;

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
  return io_call([]() -> lean_obj_res { not_supported_yet("of_encoded_io", "encoded buffers"); });
}

// A native or released buffer is an IO error in any case (SPEC-runtime 2.3).
lean_obj_res torchlean_cuda_buffer_to_encoded_io(b_lean_obj_arg object) {
  return io_call([&]() -> lean_obj_res {
    torchlean_cuda_buffer* rec = record_of(object, "to_encoded_io");
    if (rec->format == nullptr) {
      tlrt::fail(ErrorKind::invalid_argument, "to_encoded_io",
                 "expected an encoded buffer, got a real (float32/float64) buffer");
    }
    not_supported_yet("to_encoded_io", "encoded buffers");
  });
}

}  // extern "C"
