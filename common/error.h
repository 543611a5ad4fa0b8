// tlrt error type. Every failure inside the runtime, the kernels' launchers and the ABI layer is a
// tlrt::Error carrying a kind and a message that names the op and the sizes involved. The ABI edge
// (abi/boundary.h) turns it into a Lean panic or an IO error; no exception crosses extern "C".
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace tlrt {

enum class ErrorKind : uint8_t {
  invalid_argument,  // bad sizes, dtypes, codes, settings
  out_of_memory,     // allocator exhaustion (cap included) or host bad_alloc
  released_buffer,   // use of a buffer whose payload was released
  unavailable,       // no device, or a backend this build lacks
  device,            // CUDA runtime / driver failure
  library,           // cuBLAS, cuFFT, cuDNN, NVRTC failure
  not_supported,     // a symbol whose feature is not provided yet
};

const char* error_kind_name(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

// Throws Error(kind, "tlrt: <op>: <detail>").
[[noreturn]] void fail(ErrorKind kind, const char* op, const std::string& detail);

// Overflow-checked size arithmetic; throws invalid_argument naming op on overflow.
uint64_t checked_mul(uint64_t a, uint64_t b, const char* op);
uint64_t checked_add(uint64_t a, uint64_t b, const char* op);

}  // namespace tlrt
