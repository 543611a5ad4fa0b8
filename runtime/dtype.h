// Scalar types of a buffer (SPEC-runtime section 5) and the two backends that hold payloads.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tlrt {

// Codes match Lean's Dtype constructor indices.
enum class Dtype : uint8_t { f32 = 0, f64 = 1, encoded = 2 };

// Where a payload lives. Every op dispatches on the backend of its inputs.
enum class Backend : uint8_t { reference = 0, cuda = 1 };

inline size_t dtype_width(Dtype d) {
  return d == Dtype::f32 ? 4 : d == Dtype::f64 ? 8 : 0;
}
inline const char* dtype_name(Dtype d) {
  return d == Dtype::f32 ? "float32" : d == Dtype::f64 ? "float64" : "encoded";
}
inline const char* backend_name(Backend b) {
  return b == Backend::cuda ? "cuda" : "reference";
}

// The native dtype of a buffer dtype code (the Dtype values above) for constructors and checkpoint
// transfers: 0 or 1; anything else throws invalid_argument naming op.
Dtype native_dtype_from_code(uint8_t code, const char* op);

}  // namespace tlrt
