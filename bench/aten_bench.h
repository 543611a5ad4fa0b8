// The same work through ATen, in the bench's own process, for side-by-side rows. Plain C++ types
// only: LibTorch's headers are seen by aten_bench.cpp and the compositions bench/*_aten.cpp
// register (the tlrt_aten_bench objects) and by nothing else, so a LibTorch built with another
// libstdc++ string ABI still links. Without LibTorch (TLRT_HAVE_ATEN undefined) the inline stubs
// below report ATen as absent.
#pragma once

#include <cstdint>

namespace bench {

class Harness;

namespace aten {

#if defined(TLRT_HAVE_ATEN) && TLRT_HAVE_ATEN

// LibTorch is linked into this tlrt-bench (whether or not ATen sees a device).
constexpr bool linked() {
  return true;
}
// LibTorch is linked and ATen sees a CUDA device.
bool available();
// One line for the report: version, where LibTorch came from and how it was driven, or why not.
const char* description();
// Whether a bench/*_aten.cpp registered `op`, as a composition or as having no ATen equivalent.
// Needs no device.
bool is_registered(const char* op);
// Names registered more than once, comma-separated; empty when none. Needs no device.
const char* duplicate_registrations();
// How ATen computes `op` (the call or composition TorchLean's LibTorch backend makes); "none
// (why)" for an op registered as having no ATen equivalent; nullptr when `op` is not registered.
const char* composition(const char* op);

// Median device time in microseconds of ATen's equivalent of elementwise `op` on n elements of
// dtype (0 float32, 1 float64), queued on the harness stream and timed by
// Harness::device_median_us (L2 flushed before each sample). `inputs` are device pointers to
// the tlrt inputs, copied once into ATen's own allocations; `scalars` are the op's host scalars
// as the ABI receives them. Negative when ATen is absent or has no equivalent of `op`.
double median_us(Harness& h, const char* op, int dtype, const void* const* inputs, int n_inputs,
                 const double* scalars, uint64_t n, int repeats);

// Host time per call in microseconds of the same ATen work on n-element tensors made once:
// `calls` calls per timed batch, median over batches, results dropped after each call; with
// `sync`, a device synchronize after each call. Negative when not measured.
double host_us(const char* op, int dtype, const double* scalars, uint64_t n, bool sync, int calls);

// Gives ATen's cached device blocks back to the driver between phases of the bench.
void release_cache();

#else

constexpr bool linked() {
  return false;
}
inline bool available() {
  return false;
}
inline const char* description() {
#ifdef TLRT_ATEN_STATUS
  return TLRT_ATEN_STATUS;
#else
  return "ATen: not found (tlrt-bench built without LibTorch)";
#endif
}
inline bool is_registered(const char*) {
  return false;
}
inline const char* duplicate_registrations() {
  return "";
}
inline const char* composition(const char*) {
  return nullptr;
}
inline double median_us(Harness&, const char*, int, const void* const*, int, const double*,
                        uint64_t, int) {
  return -1;
}
inline double host_us(const char*, int, const double*, uint64_t, bool, int) {
  return -1;
}
inline void release_cache() {}

#endif

}  // namespace aten
}  // namespace bench
