// Encoded buffers (SPEC-runtime section 9): raw words of a configured binary format, uploaded and
// downloaded verbatim. The format object is borrowed from the caller and retained once by every
// buffer made with it (wrap_encoded); format? hands it out with one more reference. Encoded
// zeros_like / copy / duplicate live with the native ones (abi/buffer_abi.cpp), encoded concat1d /
// slice1d with the shape ops (abi/shape_abi.cpp); every other op refuses encoded operands
// (live_buffer).
#include "abi/boundary.h"
#include "runtime/encoded.h"

using namespace tlrt::abi;

extern "C" {

// Borrowed. none for native buffers; some f (f retained once more) for encoded buffers, also
// after release. Unguarded: no initialisation, no device work.
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

// bytes, format borrowed; result owned: a fresh encoded buffer of bytes.size / width words holding
// the bytes unchanged and retaining format once. IO errors: width 0 or a partial trailing word
// ("encoded buffer: truncated scalar word"), more than 2^32 - 1 words ("encoded buffer: scalar
// count exceeds the tape ABI"), out of memory (resourceExhausted); a failed call counts nothing.
lean_obj_res torchlean_cuda_buffer_of_encoded_io(b_lean_obj_arg bytes, b_lean_obj_arg format,
                                                 uint64_t width) {
  return io_call([&]() -> lean_obj_res {
    const char* op = "of_encoded_io";
    const uint64_t length = lean_sarray_size(bytes);
    note_elements(width == 0 ? 0 : length / width);
    auto buffer =
        tlrt::upload_encoded(tlrt::default_backend(), width, lean_sarray_cptr(bytes), length, op);
    return wrap_encoded(std::move(buffer), format);
  });
}

// Borrowed; result owned: a ByteArray of exactly size * width bytes, the stored words verbatim.
// A native or released buffer is an IO error ("encoded buffer: invalid handle").
lean_obj_res torchlean_cuda_buffer_to_encoded_io(b_lean_obj_arg object) {
  return io_call([&]() -> lean_obj_res {
    const char* op = "to_encoded_io";
    const char* what = "encoded buffer: invalid handle";
    torchlean_cuda_buffer* rec = encoded_record(object, op, what);
    const tlrt::Buffer& b = *rec->buffer;
    if (b.released()) {
      tlrt::fail(tlrt::ErrorKind::released_buffer, op,
                 std::string(what) + " (buffer has been released)");
    }
    const uint64_t bytes = b.bytes();
    lean_object* out = lean_alloc_sarray(1, bytes, bytes);
    try {
      tlrt::download_encoded(b, lean_sarray_cptr(out), op);
    } catch (...) {
      lean_dec(out);
      throw;
    }
    return out;
  });
}

}  // extern "C"
