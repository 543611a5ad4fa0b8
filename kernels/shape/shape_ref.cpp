// Shape ops, reference backend: concat1d, slice1d, broadcast_vec_to_cols, broadcast_to and
// swap_adjacent of contiguous float / double host arrays. No accumulation and no rounding: each
// element is copied as bytes, never loaded into a floating-point register, so signalling NaNs keep
// their bits on every host ABI. The loops follow the spec's formulas directly (one source offset
// per output element), independently of the CUDA backend's collapsed geometry.
#include <cstdint>
#include <cstring>
#include <vector>

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

template <class T>
void broadcast_vec_to_cols_ref(const T* v, uint64_t rows, uint64_t cols, T* out) {
  for (uint64_t i = 0; i < rows; ++i) {
    for (uint64_t j = 0; j < cols; ++j) std::memcpy(out + i * cols + j, v + i, sizeof(T));
  }
}

template <class T>
void broadcast_to_ref(const T* x, const uint64_t* out_dims, const uint64_t* read_strides,
                      size_t rank, T* out) {
  uint64_t total = 1;
  for (size_t j = 0; j < rank; ++j) total *= out_dims[j];
  if (total == 0) return;
  // Row-major coordinates of output element o, advanced like an odometer; `from` follows them.
  std::vector<uint64_t> coord(rank, 0);
  uint64_t from = 0;
  for (uint64_t o = 0; o < total; ++o) {
    std::memcpy(out + o, x + from, sizeof(T));
    for (size_t j = rank; j-- > 0;) {
      if (++coord[j] < out_dims[j]) {
        from += read_strides[j];
        break;
      }
      from -= read_strides[j] * (out_dims[j] - 1);
      coord[j] = 0;
    }
  }
}

template <class T>
void swap_adjacent_ref(const T* x, uint64_t outer, uint64_t a, uint64_t b, uint64_t inner, T* out) {
  if (inner == 0) return;
  for (uint64_t o = 0; o < outer; ++o) {
    for (uint64_t j = 0; j < b; ++j) {
      for (uint64_t i = 0; i < a; ++i) {
        copy_elements(out + ((o * b + j) * a + i) * inner, x + ((o * a + i) * b + j) * inner,
                      inner);
      }
    }
  }
}

template void concat1d_ref<float>(const float*, uint64_t, const float*, uint64_t, float*);
template void concat1d_ref<double>(const double*, uint64_t, const double*, uint64_t, double*);
template void slice1d_ref<float>(const float*, uint64_t, uint64_t, float*);
template void slice1d_ref<double>(const double*, uint64_t, uint64_t, double*);
template void broadcast_vec_to_cols_ref<float>(const float*, uint64_t, uint64_t, float*);
template void broadcast_vec_to_cols_ref<double>(const double*, uint64_t, uint64_t, double*);
template void broadcast_to_ref<float>(const float*, const uint64_t*, const uint64_t*, size_t,
                                      float*);
template void broadcast_to_ref<double>(const double*, const uint64_t*, const uint64_t*, size_t,
                                       double*);
template void swap_adjacent_ref<float>(const float*, uint64_t, uint64_t, uint64_t, uint64_t,
                                       float*);
template void swap_adjacent_ref<double>(const double*, uint64_t, uint64_t, uint64_t, uint64_t,
                                        double*);

}  // namespace tlrt::kernels
