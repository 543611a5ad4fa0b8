// Softmax, reference backend: plain loops in a wider format W (binary64 for float32, the host's
// long double for float64), rounded once to T per result. Per line (a row, or an axis column):
//   m = max of the allowed values, a NaN among them making m NaN (the exact selection);
//   sum = fold of exp(W(v) - m) over the allowed values in increasing index order, in W;
//   y = fl_T(exp(W(v) - m) / sum) for an allowed value, +0 for a blocked one.
// A line without an allowed value is all +0. Lines run in contiguous ranges on several host
// threads (kernels/common/host_parallel.h), so the bits do not depend on the thread count.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/common/host_parallel.h"
#include "kernels/softmax/softmax.h"

namespace tlrt::kernels {
namespace {

template <class T>
using Wide = std::conditional_t<std::is_same_v<T, float>, double, long double>;

// One line of `count` values at x[k * stride] (mask likewise, null: all allowed).
template <class T>
void softmax_line(const T* x, const T* mask, uint64_t count, uint64_t stride, T* out) {
  using W = Wide<T>;
  auto allowed = [&](uint64_t k) { return mask == nullptr || !(mask[k * stride] == T(0)); };
  bool any = false;
  W m = -std::numeric_limits<W>::infinity();
  for (uint64_t k = 0; k < count; ++k) {
    if (!allowed(k)) continue;
    any = true;
    const W v = static_cast<W>(x[k * stride]);
    if (std::isnan(v) || v > m) m = std::isnan(m) ? m : v;
  }
  if (!any) {
    for (uint64_t k = 0; k < count; ++k) out[k * stride] = T(0);
    return;
  }
  W sum = 0;
  for (uint64_t k = 0; k < count; ++k) {
    if (allowed(k)) sum += std::exp(static_cast<W>(x[k * stride]) - m);
  }
  for (uint64_t k = 0; k < count; ++k) {
    out[k * stride] =
        allowed(k) ? static_cast<T>(std::exp(static_cast<W>(x[k * stride]) - m) / sum) : T(0);
  }
}

// Lines are independent: items of parallel_items, about 2^16 elements a range.
constexpr uint64_t kLineRangeWork = uint64_t{1} << 16;

}  // namespace

template <class T>
void softmax_rows_ref(const T* scores, const T* mask, uint64_t rows, uint64_t cols, T* out) {
  parallel_items(rows, cols, kLineRangeWork, [&](uint64_t r) {
    softmax_line(scores + r * cols, mask == nullptr ? nullptr : mask + r * cols, cols, 1,
                 out + r * cols);
  });
}

template <class T>
void softmax_axis_ref(const T* x, uint64_t outer, uint64_t len, uint64_t inner, T* out) {
  parallel_items(outer * inner, len, kLineRangeWork, [&](uint64_t line) {
    const uint64_t o = line / inner, i = line % inner;
    const uint64_t base = o * len * inner + i;
    softmax_line<T>(x + base, nullptr, len, inner, out + base);
  });
}

template void softmax_rows_ref<float>(const float*, const float*, uint64_t, uint64_t, float*);
template void softmax_rows_ref<double>(const double*, const double*, uint64_t, uint64_t, double*);
template void softmax_axis_ref<float>(const float*, uint64_t, uint64_t, uint64_t, float*);
template void softmax_axis_ref<double>(const double*, uint64_t, uint64_t, uint64_t, double*);

}  // namespace tlrt::kernels
