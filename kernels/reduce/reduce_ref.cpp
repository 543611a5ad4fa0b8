// Whole-buffer reductions, reference backend: reduce_sum and reduce_mean of a contiguous float /
// double host array. The parity oracle for the CUDA kernels: the loops below are the tree of
// SPEC-ops 6.4 statement by statement, every addition one rounding in T (built with
// -ffp-contract=off), so the result is the specified one bit for bit.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/reduce/reduce.h"

namespace tlrt::kernels {

template <class T>
T reduce_sum_ref(const T* x, uint64_t n) {
  if (n == 0) return T(0);
  // The first pass reads x in place; later passes read the previous pass's row results.
  const T* cur = x;
  uint64_t size = n;
  std::vector<T> next;
  std::vector<T> lane;
  do {
    const uint64_t rows = reduce_rows(size);
    const uint64_t stride = kReduceRowLanes * rows;
    lane.assign(stride, T(0));
    for (uint64_t off = 0; off < size; off += stride) {
      const uint64_t count = std::min(stride, size - off);
      for (uint64_t i = 0; i < count; ++i) lane[i] = lane[i] + cur[off + i];
    }
    for (uint64_t w = kReduceRowLanes / 2; w >= 1; w /= 2) {
      for (uint64_t r = 0; r < rows; ++r) {
        T* row = lane.data() + r * kReduceRowLanes;
        for (uint64_t j = 0; j < w; ++j) row[j] = row[j] + row[j + w];
      }
    }
    std::vector<T> results(rows);
    for (uint64_t r = 0; r < rows; ++r) results[r] = lane[r * kReduceRowLanes];
    next.swap(results);
    cur = next.data();
    size = rows;
  } while (size != 1);
  return cur[0];
}

template <class T>
T reduce_mean_ref(const T* x, uint64_t n) {
  if (n == 0) return std::numeric_limits<T>::quiet_NaN();
  return reduce_sum_ref(x, n) * mean_reciprocal<T>(n);
}

template float reduce_sum_ref<float>(const float*, uint64_t);
template double reduce_sum_ref<double>(const double*, uint64_t);
template float reduce_mean_ref<float>(const float*, uint64_t);
template double reduce_mean_ref<double>(const double*, uint64_t);

}  // namespace tlrt::kernels
