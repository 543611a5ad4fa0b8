// Constant fill, reference backend, contiguous buffers: every element gets the bits of `value`.
#include <cstdint>

#include "kernels/fill/fill.h"

namespace tlrt::kernels {

template <class T>
void fill_ref(T* out, uint64_t n, T value) {
  for (uint64_t i = 0; i < n; ++i) out[i] = value;
}

template void fill_ref<float>(float*, uint64_t, float);
template void fill_ref<double>(double*, uint64_t, double);

}  // namespace tlrt::kernels
