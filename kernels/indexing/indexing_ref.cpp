// Reference backend of the indexing family (kernels/indexing/indexing.h): plain loops over host
// memory. Gathers copy whole rows as bytes (never through floating-point values). The scatters
// visit sources in increasing source index and start a touched row with fl(-0 + base) on its first
// source, which is exactly the ordered fold of the contract: each target sees its base first, then
// its sources in increasing order, one rounding per add.
#include <cstring>
#include <vector>

#include "kernels/indexing/indexing.h"

namespace tlrt::kernels {
namespace {

// Adds values row `src` into `row` (one rounding per element); opens the row with -0 + base on the
// first visit.
template <class T>
void fold_row(T* row, const T* src, uint64_t cols, bool first) {
  if (first) {
    for (uint64_t c = 0; c < cols; ++c) row[c] = static_cast<T>(-0.0) + row[c];
  }
  for (uint64_t c = 0; c < cols; ++c) row[c] = row[c] + src[c];
}

}  // namespace

template <class T>
void gather_rows_ref(const T* mat, uint64_t rows, uint64_t cols, const uint32_t* idx, uint64_t k,
                     T* out) {
  if (cols == 0 || k == 0) return;
  const size_t row_bytes = static_cast<size_t>(cols) * sizeof(T);
  for (uint64_t r = 0; r < k; ++r) {
    T* dst = out + r * cols;
    if (idx[r] < rows) {
      std::memcpy(dst, mat + uint64_t{idx[r]} * cols, row_bytes);
    } else {
      std::memset(dst, 0, row_bytes);  // +0 in both formats
    }
  }
}

template <class T>
void scatter_add_rows_ref(const T* mat, const T* values, uint64_t rows, uint64_t cols,
                          const uint32_t* idx, uint64_t k, T* out) {
  if (rows == 0 || cols == 0) return;
  std::memcpy(out, mat, static_cast<size_t>(rows * cols) * sizeof(T));
  std::vector<bool> touched(rows, false);
  for (uint64_t r = 0; r < k; ++r) {
    const uint64_t t = idx[r];
    if (t >= rows) continue;
    fold_row(out + t * cols, values + r * cols, cols, !touched[t]);
    touched[t] = true;
  }
}

template <class T>
void gather_at_ref(const T* table, uint32_t size, const T* positions, uint64_t count, T* out) {
  for (uint64_t i = 0; i < count; ++i) {
    std::memcpy(out + i, table + at_index(positions[i], size), sizeof(T));
  }
}

template <class T>
void scatter_add_at_ref(uint32_t size, const T* positions, const T* values, uint64_t count,
                        T* out) {
  std::memset(out, 0, static_cast<size_t>(size) * sizeof(T));
  std::vector<bool> touched(size, false);
  for (uint64_t i = 0; i < count; ++i) {
    const uint32_t t = at_index(positions[i], size);
    fold_row(out + t, values + i, 1, !touched[t]);
    touched[t] = true;
  }
}

#define TLRT_INDEXING_REF(T)                                                                     \
  template void gather_rows_ref<T>(const T*, uint64_t, uint64_t, const uint32_t*, uint64_t, T*); \
  template void scatter_add_rows_ref<T>(const T*, const T*, uint64_t, uint64_t, const uint32_t*, \
                                        uint64_t, T*);                                           \
  template void gather_at_ref<T>(const T*, uint32_t, const T*, uint64_t, T*);                    \
  template void scatter_add_at_ref<T>(uint32_t, const T*, const T*, uint64_t, T*);
TLRT_INDEXING_REF(float)
TLRT_INDEXING_REF(double)
#undef TLRT_INDEXING_REF

}  // namespace tlrt::kernels
