// One-dimensional shape ops, reference backend: concat1d and slice1d of contiguous float / double
// host arrays. No accumulation and no rounding: each element is copied as bytes, never loaded
// into a floating-point register, so signalling NaNs keep their bits on every host ABI.
#include <cstdint>
#include <cstring>

#include "kernels/shape/shape.h"

namespace tlrt::kernels {
namespace {

// Copies `count` elements; an empty part may come with null pointers (an empty buffer has no
// payload), which memcpy must not see.
template <class T>
void copy_elements(T* to, const T* from, uint64_t count) {
  if (count == 0) return;
  std::memcpy(to, from, count * sizeof(T));
}

}  // namespace

template <class T>
void concat1d_ref(const T* a, uint64_t n, const T* b, uint64_t m, T* out) {
  copy_elements(out, a, n);
  copy_elements(out + n, b, m);
}

template <class T>
void slice1d_ref(const T* x, uint64_t start, uint64_t len, T* out) {
  copy_elements(out, x + start, len);
}

template void concat1d_ref<float>(const float*, uint64_t, const float*, uint64_t, float*);
template void concat1d_ref<double>(const double*, uint64_t, const double*, uint64_t, double*);
template void slice1d_ref<float>(const float*, uint64_t, uint64_t, float*);
template void slice1d_ref<double>(const double*, uint64_t, uint64_t, double*);

}  // namespace tlrt::kernels
