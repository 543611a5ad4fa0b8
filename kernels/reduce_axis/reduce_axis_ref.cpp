// Axis reductions, reference backend: plain loops over host memory, the parity oracle of the CUDA
// kernels. Accumulation orders:
//   * reduce_sum_by_row: j = 0, 1, ... in a wider format (double for float, long double for
//     double), rounded to T once; the contract leaves the order free (tolerance).
//   * reduce_max_by_row / reduce_max_by_column: the largest key of kernels/reduce_axis/max_key.h
//     (NaN as -inf, +0 above -0), a selection: the same bits in any order.
//   * ordered_fold_ref: out[c] = ((+0 + M[0, c]) + M[1, c]) + ..., r increasing, each addition
//     rounded in T (the build passes -ffp-contract=off; only additions occur).
// Rows (sum, max by row) or columns (max by column, the fold) run in contiguous ranges on several
// host threads (kernels/common/host_parallel.h), each in the order above.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/common/host_parallel.h"
#include "kernels/reduce_axis/max_key.h"
#include "kernels/reduce_axis/reduce_axis.h"

namespace tlrt::kernels {
namespace {

template <class T>
using Wide = std::conditional_t<std::is_same_v<T, float>, double, long double>;

template <class T>
void zeros(T* out, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) out[i] = T(0);
}

// Rows, or columns, are independent: contiguous ranges of them on several host threads, about
// 2^16 elements a range at least (64 columns at least, so a range reads whole cache lines).
constexpr uint64_t kRangeWork = uint64_t{1} << 16;
inline uint64_t column_grain(uint64_t rows) {
  return std::max<uint64_t>(64, grain_for_work(rows, kRangeWork));
}

}  // namespace

template <class T>
void reduce_sum_by_row_ref(const T* x, uint64_t rows, uint64_t cols, T* out) {
  parallel_items(rows, cols, kRangeWork, [&](uint64_t i) {
    Wide<T> acc = 0;
    for (uint64_t j = 0; j < cols; ++j) acc += x[i * cols + j];
    out[i] = static_cast<T>(acc);
  });
}

template <class T>
void reduce_max_by_row_ref(const T* x, uint64_t rows, uint64_t cols, T* out) {
  if (cols == 0) return zeros(out, rows);
  parallel_items(rows, cols, kRangeWork, [&](uint64_t i) {
    auto best = max_key(x[i * cols]);
    for (uint64_t j = 1; j < cols; ++j) {
      const auto k = max_key(x[i * cols + j]);
      if (k > best) best = k;
    }
    out[i] = max_value<T>(best);
  });
}

template <class T>
void reduce_max_by_column_ref(const T* x, uint64_t rows, uint64_t cols, T* out) {
  if (rows == 0) return zeros(out, cols);
  using Key = typename MaxKeyTraits<T>::Key;
  parallel_ranges(cols, column_grain(rows), [&](uint64_t begin, uint64_t end) {
    std::vector<Key> best(end - begin);
    for (uint64_t j = begin; j < end; ++j) best[j - begin] = max_key(x[j]);
    for (uint64_t i = 1; i < rows; ++i) {
      for (uint64_t j = begin; j < end; ++j) {
        const Key k = max_key(x[i * cols + j]);
        if (k > best[j - begin]) best[j - begin] = k;
      }
    }
    for (uint64_t j = begin; j < end; ++j) out[j] = max_value<T>(best[j - begin]);
  });
}

template <class T>
void ordered_fold_ref(const T* x, const FoldGeometry& g, T* out) {
  zeros(out, g.col_count);  // +0, the start of every fold
  if (g.row_count == 0 || g.col_count == 0) return;
  std::vector<uint64_t> col_offset(g.col_count);
  for (uint64_t c = 0; c < g.col_count; ++c) col_offset[c] = fold_offset(g.cols, c);
  // Rows in increasing order, each column's fold advanced by one row at a time (ranges of columns
  // on several threads).
  parallel_ranges(g.col_count, column_grain(g.row_count), [&](uint64_t begin, uint64_t end) {
    for (uint64_t r = 0; r < g.row_count; ++r) {
      const T* row = x + fold_offset(g.rows, r);
      for (uint64_t c = begin; c < end; ++c) out[c] = out[c] + row[col_offset[c]];
    }
  });
}

template <class T>
void reduce_axis_copy_ref(const T* x, uint64_t n, T* out) {
  if (n != 0) std::memcpy(out, x, n * sizeof(T));
}

template void reduce_sum_by_row_ref<float>(const float*, uint64_t, uint64_t, float*);
template void reduce_sum_by_row_ref<double>(const double*, uint64_t, uint64_t, double*);
template void reduce_max_by_row_ref<float>(const float*, uint64_t, uint64_t, float*);
template void reduce_max_by_row_ref<double>(const double*, uint64_t, uint64_t, double*);
template void reduce_max_by_column_ref<float>(const float*, uint64_t, uint64_t, float*);
template void reduce_max_by_column_ref<double>(const double*, uint64_t, uint64_t, double*);
template void ordered_fold_ref<float>(const float*, const FoldGeometry&, float*);
template void ordered_fold_ref<double>(const double*, const FoldGeometry&, double*);
template void reduce_axis_copy_ref<float>(const float*, uint64_t, float*);
template void reduce_axis_copy_ref<double>(const double*, uint64_t, double*);

}  // namespace tlrt::kernels
