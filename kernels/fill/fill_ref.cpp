// Buffer construction and conversion, reference backend, contiguous buffers: constant fill,
// float64 -> float32 narrowing (IEEE nearest-even, overflow to infinity, subnormals kept),
// float32 -> float64 widening (exact) and the value copy x * 1 in T. Every non-NaN value converts
// exactly as IEEE specifies; NaN payloads are not guaranteed (SPEC-runtime 6).
#include <cstdint>

#include "kernels/fill/fill.h"

namespace tlrt::kernels {

template <class T>
void fill_ref(T* out, uint64_t n, T value) {
  for (uint64_t i = 0; i < n; ++i) out[i] = value;
}

void narrow_f64_to_f32_ref(float* out, const double* in, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) out[i] = static_cast<float>(in[i]);
}

void widen_f32_to_f64_ref(double* out, const float* in, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) out[i] = static_cast<double>(in[i]);
}

template <class T>
void multiply_by_one_ref(T* out, const T* in, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) out[i] = in[i] * T(1);
}

template void fill_ref<float>(float*, uint64_t, float);
template void fill_ref<double>(double*, uint64_t, double);
template void multiply_by_one_ref<float>(float*, const float*, uint64_t);
template void multiply_by_one_ref<double>(double*, const double*, uint64_t);

}  // namespace tlrt::kernels
