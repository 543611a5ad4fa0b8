#include "runtime/dtype.h"

#include <string>

#include "common/error.h"

namespace tlrt {

Dtype native_dtype_from_code(uint8_t code, const char* op) {
  if (code > 1) {
    fail(ErrorKind::invalid_argument, op,
         "unsupported buffer dtype code " + std::to_string(code) +
             " (expected 0 = float32 or 1 = float64)");
  }
  return static_cast<Dtype>(code);
}

}  // namespace tlrt
