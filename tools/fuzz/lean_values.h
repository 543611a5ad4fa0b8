// Lean values the fuzzer passes to and receives from the ABI: construction of host arrays,
// strings, arrays and stand-in objects through lean.h (and the Lean runtime double), and the
// structural decoding of IO results and IO errors that SPEC-runtime section 3 allows.
#pragma once

#include <lean/lean.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tlrt_fuzz {

lean_object* make_float_array(const std::vector<double>& values);
lean_object* make_byte_array(const std::vector<uint8_t>& bytes);
lean_object* make_string(const std::string& text);
// Array of `elements`; consumes one reference to each.
lean_object* make_object_array(const std::vector<lean_object*>& elements);
// Array Nat of boxed naturals (every value must be <= LEAN_MAX_SMALL_NAT).
lean_object* make_nat_array(const std::vector<uint64_t>& values);
// A structure object standing in for a FloatFormat (the runtime only keeps and visits it).
lean_object* make_format_object(uint32_t exponent_bits, uint32_t significand_bits);
// An external object of a class the library does not own: what a buffer parameter would see if
// another native library's object were passed.
lean_object* make_foreign_external();

// A decoded IO result. `well_formed` is false when the object does not have the layout of an
// IO result (constructor tag 0 ok / 1 error with one object field) or its error is not one of
// the two IO.Error constructors the spec allows; `problem` then says what is wrong.
struct IoResult {
  bool well_formed = false;
  bool layout_ok = false;  // the outer object is an IO result (its error may still be malformed)
  bool ok = false;
  unsigned error_tag = 0;  // 1 otherError, 14 resourceExhausted
  uint32_t os_code = 0;
  std::string message;
  std::string problem;
};
constexpr unsigned kIoErrorOtherError = 1;
constexpr unsigned kIoErrorResourceExhausted = 14;
IoResult decode_io_result(b_lean_obj_arg result);

}  // namespace tlrt_fuzz
