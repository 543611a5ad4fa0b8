// Buffer lifetime, queries and copies (SPEC-runtime sections 2.2, 2.3; symbols-runtime.tsv groups
// buffer-lifetime, buffer-query, buffer-copy, error). Every object parameter is borrowed. The
// copies accept native and encoded buffers alike (SPEC-runtime 5 and 9); size counts words of an
// encoded buffer and dtype reports 2 for it.
#include <string>

#include "abi/boundary.h"
#include "runtime/construct.h"

using tlrt::Buffer;
using tlrt::ErrorKind;
using namespace tlrt::abi;

namespace {

uint32_t release_object(b_lean_obj_arg object) {
  return unguarded_call(
      [&]() -> uint32_t {
        torchlean_cuda_buffer* rec = record_of(object, "release");
        return rec->buffer->release() ? 1u : 0u;
      },
      "release");
}

uint32_t size_of(b_lean_obj_arg object) {
  return unguarded_call(
      [&]() -> uint32_t {
        const uint64_t n = record_of(object, "size")->buffer->size();
        if (n > UINT32_MAX) {
          panic("tlrt: size: buffer holds " + std::to_string(n) +
                " scalars, more than a UInt32 can report");
        }
        return static_cast<uint32_t>(n);
      },
      "size");
}

// The record of a live buffer, native or encoded (released: released_buffer naming op).
torchlean_cuda_buffer* live_record(b_lean_obj_arg object, const char* op) {
  torchlean_cuda_buffer* rec = record_of(object, op);
  tlrt::require_live(*rec->buffer, op);
  return rec;
}

// A fresh result of the same kind as the record `like`: a native buffer object, or an encoded one
// retaining like's format.
lean_obj_res rewrap(const torchlean_cuda_buffer* like, std::unique_ptr<Buffer> result) {
  if (like->format == nullptr) return box(std::move(result));
  return wrap_encoded(std::move(result), like->format);
}

}  // namespace

extern "C" {

// Borrowed. Drops the payload now; 1 iff a live nonempty payload was retired. No initialisation.
uint32_t torchlean_cuda_buffer_release(b_lean_obj_arg object) {
  return release_object(object);
}

// Borrowed; token ignored.
uint32_t torchlean_cuda_buffer_release_with_token(b_lean_obj_arg object, uint32_t) {
  return release_object(object);
}

// Both borrowed. Releases `scratch`, returns `keep` with one more reference.
lean_obj_res torchlean_cuda_buffer_release_then(b_lean_obj_arg scratch, b_lean_obj_arg keep) {
  release_object(scratch);
  lean_inc(keep);
  return keep;
}

// Borrowed. Scalars held (0 after release); panics above UINT32_MAX.
uint32_t torchlean_cuda_buffer_size(b_lean_obj_arg object) {
  return size_of(object);
}

// Borrowed; token ignored.
uint32_t torchlean_cuda_buffer_size_with_token(b_lean_obj_arg object, uint32_t) {
  return size_of(object);
}

// Borrowed. 0 float32, 1 float64, 2 encoded; panics when released.
uint8_t torchlean_cuda_buffer_dtype(b_lean_obj_arg object) {
  return pure_call([&]() -> uint8_t {
    torchlean_cuda_buffer* rec = record_of(object, "dtype");
    if (rec->format != nullptr) {
      if (rec->buffer->released())
        tlrt::fail(ErrorKind::released_buffer, "dtype", "released handle");
      return 2;
    }
    tlrt::require_live(*rec->buffer, "dtype");
    return static_cast<uint8_t>(rec->buffer->dtype());
  });
}

// Borrowed. Never returns: panics with the message.
lean_obj_res torchlean_cuda_buffer_fail(b_lean_obj_arg message) {
  panic(lean_string_cstr(message));
}

// Borrowed. count zeros in the reference's dtype; for an encoded reference count words of its
// width, all bytes zero, retaining its format. Released reference: panic.
lean_obj_res torchlean_cuda_buffer_zeros_like(b_lean_obj_arg reference, uint32_t count) {
  return pure_call([&] {
    torchlean_cuda_buffer* rec = live_record(reference, "zeros_like");
    return rewrap(rec, tlrt::make_zeros_like(*rec->buffer, count, "zeros_like"));
  });
}

// Borrowed. Bit-exact copy into a fresh buffer (same dtype, or same format and width).
lean_obj_res torchlean_cuda_buffer_copy(b_lean_obj_arg reference) {
  return pure_call([&] {
    torchlean_cuda_buffer* rec = live_record(reference, "copy");
    return rewrap(rec, tlrt::copy_buffer(*rec->buffer, "copy"));
  });
}

// Borrowed. Two independent bit-exact copies as a pair (each encoded copy retains the format).
lean_obj_res torchlean_cuda_buffer_duplicate(b_lean_obj_arg reference) {
  return pure_call([&] {
    torchlean_cuda_buffer* rec = live_record(reference, "duplicate");
    auto first = tlrt::copy_buffer(*rec->buffer, "duplicate");
    auto second = tlrt::copy_buffer(*rec->buffer, "duplicate");
    if (rec->format == nullptr) return box_tuple(std::move(first), std::move(second));
    lean_object* a = wrap_encoded(std::move(first), rec->format);
    lean_object* b = wrap_encoded(std::move(second), rec->format);
    return pair_of(a, b);
  });
}

}  // extern "C"
