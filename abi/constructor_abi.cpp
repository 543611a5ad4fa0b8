// Constructors, host transfers and checkpoint bytes (SPEC-runtime sections 6-8; symbol groups
// constructor, transfer, checkpoint, and the legacy float32-bytes rows). Pure and _io forms of a
// pair share one body; only the failure convention differs.
#include <cstring>
#include <string>

#include "abi/boundary.h"
#include "runtime/construct.h"
#include "runtime/transfer.h"

using tlrt::Buffer;
using tlrt::Dtype;
using tlrt::ErrorKind;
using namespace tlrt::abi;

namespace {

lean_obj_res zeros(uint32_t n, uint8_t code) {
  note_elements(n);
  const Dtype dt = tlrt::native_dtype_from_code(code, "zeros");
  return box(tlrt::make_zeros(tlrt::default_backend(), dt, n, "zeros"));
}

lean_obj_res full(uint32_t n, double v, uint8_t code) {
  note_elements(n);
  const Dtype dt = tlrt::native_dtype_from_code(code, "full");
  return box(tlrt::make_full(tlrt::default_backend(), dt, n, v, "full"));
}

lean_obj_res rand_uniform(uint32_t n, uint64_t key, uint8_t code) {
  note_elements(n);
  const Dtype dt = tlrt::native_dtype_from_code(code, "rand_uniform");
  return box(tlrt::make_rand_uniform(tlrt::default_backend(), dt, n, key, "rand_uniform"));
}

lean_obj_res bernoulli_mask(uint32_t n, double p, uint64_t key, uint8_t code) {
  note_elements(n);
  const Dtype dt = tlrt::native_dtype_from_code(code, "bernoulli_mask");
  return box(tlrt::make_bernoulli_mask(tlrt::default_backend(), dt, n, p, key, "bernoulli_mask"));
}

lean_obj_res of_float_array(b_lean_obj_arg array, uint8_t code) {
  const Dtype dt = tlrt::native_dtype_from_code(code, "of_float_array");
  const uint64_t n = lean_sarray_size(array);
  note_elements(n);
  return box(tlrt::upload_f64(tlrt::default_backend(), dt, lean_float_array_cptr(array), n,
                              "of_float_array"));
}

// A FloatArray of the buffer's scalars; released or empty buffers give an empty array.
lean_obj_res to_float_array(b_lean_obj_arg object) {
  torchlean_cuda_buffer* rec = record_of(object, "to_float_array");
  const Buffer& b = *rec->buffer;
  const uint64_t n = b.released() ? 0 : b.size();
  if (rec->format != nullptr && n != 0) {
    tlrt::fail(ErrorKind::invalid_argument, "to_float_array",
               "expected a real (float32/float64) buffer, got an encoded buffer");
  }
  lean_object* out = lean_mk_empty_float_array(lean_box(n));
  lean_sarray_set_size(out, n);
  try {
    tlrt::download_f64(b, lean_float_array_cptr(out), "to_float_array");
  } catch (...) {
    lean_dec(out);
    throw;
  }
  return out;
}

Dtype checkpoint_dtype(uint8_t code, const char* op) {
  if (code == 2) {
    tlrt::fail(ErrorKind::invalid_argument, op,
               "unsupported buffer dtype (code 2, encoded, has no checkpoint word format; use "
               "to_encoded_io)");
  }
  return tlrt::native_dtype_from_code(code, op);
}

lean_obj_res to_bytes(b_lean_obj_arg object, uint8_t code, const char* op) {
  torchlean_cuda_buffer* rec = record_of(object, op);
  const Dtype target = checkpoint_dtype(code, op);
  const Buffer& b = *rec->buffer;
  const uint64_t n = b.released() ? 0 : b.size();
  // An encoded buffer has no checkpoint words; with no words at all (empty or released) the
  // result is empty, as for every released buffer (SPEC-runtime 2.3) and in TorchLean's adapter.
  if (rec->format != nullptr && n != 0) {
    tlrt::fail(ErrorKind::invalid_argument, op,
               "encoded buffers have no checkpoint word format (" + std::to_string(n) +
                   " words of " + std::to_string(b.width()) + " bytes; use to_encoded_io)");
  }
  const uint64_t bytes = tlrt::checked_mul(n, tlrt::dtype_width(target), op);
  lean_object* out = lean_alloc_sarray(1, bytes, bytes);
  try {
    tlrt::download_words(b, lean_sarray_cptr(out), target, op);
  } catch (...) {
    lean_dec(out);
    throw;
  }
  return out;
}

lean_obj_res of_bytes(b_lean_obj_arg array, uint8_t code, uint8_t source_code, const char* op) {
  const Dtype dt = checkpoint_dtype(code, op);
  const Dtype source = checkpoint_dtype(source_code, op);
  const uint64_t length = lean_sarray_size(array);
  const uint64_t width = tlrt::dtype_width(source);
  if (length % width != 0) {
    tlrt::fail(ErrorKind::invalid_argument, op,
               "checkpoint payload length does not match its dtype (" + std::to_string(length) +
                   " bytes, not a multiple of " + std::to_string(width) + " for " +
                   tlrt::dtype_name(source) + ")");
  }
  note_elements(length / width);
  return box(tlrt::upload_words(tlrt::default_backend(), dt, lean_sarray_cptr(array),
                                length / width, source, op));
}

}  // namespace

extern "C" {

// Constructors: scalar arguments only; results owned by the caller.
lean_obj_res torchlean_cuda_buffer_zeros(uint32_t n, uint8_t dtype) {
  return pure_call([&] { return zeros(n, dtype); });
}
lean_obj_res torchlean_cuda_buffer_zeros_io(uint32_t n, uint8_t dtype) {
  return io_call([&] { return zeros(n, dtype); });
}
lean_obj_res torchlean_cuda_buffer_full(uint32_t n, double v, uint8_t dtype) {
  return pure_call([&] { return full(n, v, dtype); });
}
lean_obj_res torchlean_cuda_buffer_full_io(uint32_t n, double v, uint8_t dtype) {
  return io_call([&] { return full(n, v, dtype); });
}
lean_obj_res torchlean_cuda_buffer_rand_uniform(uint32_t n, uint64_t key, uint8_t dtype) {
  return pure_call([&] { return rand_uniform(n, key, dtype); });
}
lean_obj_res torchlean_cuda_buffer_rand_uniform_io(uint32_t n, uint64_t key, uint8_t dtype) {
  return io_call([&] { return rand_uniform(n, key, dtype); });
}
lean_obj_res torchlean_cuda_buffer_rand_normal(uint32_t n, double mean, double deviation,
                                               uint64_t key, uint8_t dtype) {
  return pure_call([&] {
    const Dtype dt = tlrt::native_dtype_from_code(dtype, "rand_normal");
    return box(tlrt::make_rand_normal(tlrt::default_backend(), dt, n, mean, deviation, key,
                                      "rand_normal"));
  });
}
lean_obj_res torchlean_cuda_buffer_bernoulli_mask(uint32_t n, double p, uint64_t key,
                                                  uint8_t dtype) {
  return pure_call([&] { return bernoulli_mask(n, p, key, dtype); });
}
lean_obj_res torchlean_cuda_buffer_bernoulli_mask_io(uint32_t n, double p, uint64_t key,
                                                     uint8_t dtype) {
  return io_call([&] { return bernoulli_mask(n, p, key, dtype); });
}

// `object` (FloatArray) borrowed; copied before return.
lean_obj_res torchlean_cuda_buffer_of_float_array(b_lean_obj_arg object, uint8_t dtype) {
  return pure_call([&] { return of_float_array(object, dtype); });
}
lean_obj_res torchlean_cuda_buffer_of_float_array_io(b_lean_obj_arg object, uint8_t dtype) {
  return io_call([&] { return of_float_array(object, dtype); });
}

// `object` (Buffer) borrowed; blocking download.
lean_obj_res torchlean_cuda_buffer_to_float_array(b_lean_obj_arg object) {
  return pure_call([&] { return to_float_array(object); });
}
lean_obj_res torchlean_cuda_buffer_to_float_array_io(b_lean_obj_arg object) {
  return io_call([&] { return to_float_array(object); });
}

// `object` (Buffer) borrowed. Little-endian words of `dtype`.
lean_obj_res torchlean_cuda_buffer_to_bytes_io(b_lean_obj_arg object, uint8_t dtype) {
  return io_call([&] { return to_bytes(object, dtype, "to_bytes_io"); });
}

// `object` (ByteArray) borrowed. Words of `source` stored as `dtype`.
lean_obj_res torchlean_cuda_buffer_of_bytes_io(b_lean_obj_arg object, uint8_t dtype,
                                               uint8_t source) {
  return io_call([&] { return of_bytes(object, dtype, source, "of_bytes_io"); });
}

// Legacy float32-only forms.
lean_obj_res torchlean_cuda_buffer_to_float32_bytes_io(b_lean_obj_arg object) {
  return io_call([&] { return to_bytes(object, 0, "to_float32_bytes_io"); });
}
lean_obj_res torchlean_cuda_buffer_of_float32_bytes_io(b_lean_obj_arg object) {
  return io_call([&] { return of_bytes(object, 0, 0, "of_float32_bytes_io"); });
}

// Legacy host-only helpers: FloatArray <-> little-endian float32 words, no device involved.
lean_obj_res torchlean_float_array_to_float32_bytes(b_lean_obj_arg object) {
  return unguarded_call([&] {
    const uint64_t n = lean_sarray_size(object);
    const double* src = lean_float_array_cptr(object);
    lean_object* out = lean_alloc_sarray(1, n * 4, n * 4);
    uint8_t* dst = lean_sarray_cptr(out);
    for (uint64_t i = 0; i < n; ++i) {
      const float f = static_cast<float>(src[i]);
      std::memcpy(dst + 4 * i, &f, 4);
    }
    return out;
  });
}
lean_obj_res torchlean_float32_bytes_to_float_array(b_lean_obj_arg object) {
  return unguarded_call([&] {
    const uint64_t length = lean_sarray_size(object);
    if (length % 4 != 0) {
      panic("tlrt: float32_bytes_to_float_array: byte length " + std::to_string(length) +
            " is not a multiple of 4");
    }
    const uint64_t n = length / 4;
    const uint8_t* src = lean_sarray_cptr(object);
    lean_object* out = lean_mk_empty_float_array(lean_box(n));
    lean_sarray_set_size(out, n);
    double* dst = lean_float_array_cptr(out);
    for (uint64_t i = 0; i < n; ++i) {
      float f;
      std::memcpy(&f, src + 4 * i, 4);
      dst[i] = f;
    }
    return out;
  });
}

}  // extern "C"
