#include "common/error.h"

namespace tlrt {

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::invalid_argument:
      return "invalid argument";
    case ErrorKind::out_of_memory:
      return "out of memory";
    case ErrorKind::released_buffer:
      return "released buffer";
    case ErrorKind::unavailable:
      return "unavailable";
    case ErrorKind::device:
      return "device error";
    case ErrorKind::library:
      return "library error";
    case ErrorKind::not_supported:
      return "not supported";
  }
  return "error";
}

void fail(ErrorKind kind, const char* op, const std::string& detail) {
  throw Error(kind, std::string("tlrt: ") + op + ": " + detail);
}

uint64_t checked_mul(uint64_t a, uint64_t b, const char* op) {
  uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) {
    fail(ErrorKind::invalid_argument, op,
         "size product overflows 64 bits (" + std::to_string(a) + " x " + std::to_string(b) + ")");
  }
  return r;
}

uint64_t checked_add(uint64_t a, uint64_t b, const char* op) {
  uint64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) {
    fail(ErrorKind::invalid_argument, op,
         "size sum overflows 64 bits (" + std::to_string(a) + " + " + std::to_string(b) + ")");
  }
  return r;
}

}  // namespace tlrt
