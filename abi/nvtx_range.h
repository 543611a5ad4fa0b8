// NVTX ranges around the ABI's ops (docs/PROFILE.md). Off unless the environment sets TLRT_NVTX=1,
// read once when libtlrt loads; when off, an op pays one test of a constant bool and nothing else
// (no string, no allocation, no NVTX call). When on, each guarded or unguarded call opens one range
// in the domain "tlrt" named by its op (registered once per name) whose 64-bit unsigned payload is
// the element count of the op's first buffer operand; for a constructor (zeros, full, rand_uniform,
// bernoulli_mask, of_float_array, of_bytes_io, ...) the element count of the buffer it builds; 0
// for any other op without a buffer operand (runtime queries). The range is pushed when that count
// is first known (the first operand decoded, or a constructor's size checked: before any work) or,
// for an op without one, when the call's body returns; it is popped when the call returns or fails
// (a panic raised inside the body itself ends the process with the range open).
// Builds without CUDA (or without the NVTX3 headers) compile all of this to nothing.
#pragma once

#include <cstdint>

namespace tlrt::abi {

#if TLRT_HAVE_NVTX
// Set once, while libtlrt loads, from TLRT_NVTX.
extern const bool nvtx_enabled;
#else
constexpr bool nvtx_enabled = false;
#endif

// One op's range. `op` is a static string (an export's name, with or without the
// "torchlean_cuda_buffer_" prefix, or an op name from a family's table).
class OpRange {
 public:
  explicit OpRange(const char* op) noexcept {
    if (nvtx_enabled) open(op);
  }
  ~OpRange() {
    if (nvtx_enabled) close();
  }
  OpRange(const OpRange&) = delete;
  OpRange& operator=(const OpRange&) = delete;

 private:
  void open(const char* op) noexcept;
  void close() noexcept;

  const char* op_ = nullptr;
  OpRange* outer_ = nullptr;
  bool pushed_ = false;

  friend void note_elements_slow(uint64_t elements) noexcept;
};

void note_elements_slow(uint64_t elements) noexcept;

// Called for every buffer operand a call decodes (record_of) and by constructors with the size of
// the buffer they build: the first call inside the innermost open range pushes that range with
// `elements` as its payload; later ones do nothing.
inline void note_elements(uint64_t elements) noexcept {
  if (nvtx_enabled) note_elements_slow(elements);
}

}  // namespace tlrt::abi
