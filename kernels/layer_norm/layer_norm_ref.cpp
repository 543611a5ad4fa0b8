// Layer normalization, reference backend: plain loops over host memory (built with
// -ffp-contract=off, so every product and sum below is its own rounding).
//
// Forward: literally the staged formula of SPEC-ops 9. Per row, x is widened to binary64; the sum
// of x and the sum of the squared centered values are accumulated in binary64 in increasing
// column order; mu and var are true divisions by cols; xhat = fl_T(c / sd) and
// inv_std = fl_T(1 / sd) are computed in binary64 and rounded to T once (for float32 a double
// rounding, as in the contract's reference); y = fl_T(fl_T(xhat * gamma) + beta).
//
// Backward: the row sums s1 and s2 and the column sums d_gamma and d_beta are accumulated in a
// wider format (binary64 for float32, long double for float64), in increasing index order, and
// rounded to T once; every other stage of dx is the contract's rounding in T exactly.
//
// Rows (and, for d_gamma and d_beta, columns) run in contiguous ranges on several host threads
// (kernels/common/host_parallel.h), each in the order above, so the bits do not depend on the
// thread count.
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/common/host_parallel.h"
#include "kernels/common/wide.h"
#include "kernels/layer_norm/layer_norm.h"

namespace tlrt::kernels {
namespace {

// Rows (and the backward's column sums) run in ranges of about 2^16 elements.
constexpr uint64_t kRangeWork = uint64_t{1} << 16;

}  // namespace

template <class T>
void layer_norm_fwd_ref(const T* x, const T* gamma, const T* beta, LayerNormShape s, double epsilon,
                        T* y, T* xhat, T* inv_std) {
  const double n = static_cast<double>(s.cols);
  parallel_items(s.rows, s.cols, kRangeWork, [&](uint64_t r) {
    const T* xr = x + r * s.cols;
    double sum = 0.0;
    for (uint64_t j = 0; j < s.cols; ++j) sum += static_cast<double>(xr[j]);
    const double mu = sum / n;
    double squares = 0.0;
    for (uint64_t j = 0; j < s.cols; ++j) {
      const double c = static_cast<double>(xr[j]) - mu;
      const double c2 = c * c;
      squares += c2;
    }
    const double var = squares / n;
    const double sd = std::sqrt(var + epsilon);
    inv_std[r] = static_cast<T>(1.0 / sd);
    for (uint64_t j = 0; j < s.cols; ++j) {
      const double c = static_cast<double>(xr[j]) - mu;
      const T h = static_cast<T>(c / sd);
      const T p = h * gamma[j];
      xhat[r * s.cols + j] = h;
      y[r * s.cols + j] = p + beta[j];
    }
  });
}

template <class T>
void layer_norm_bwd_ref(const T* dy, const T* xhat, const T* inv_std, const T* gamma,
                        LayerNormShape s, T cols_scale, T inv_cols, T* dx, T* d_gamma, T* d_beta) {
  using W = typename Wide<T>::type;
  parallel_items(s.rows, s.cols, kRangeWork, [&](uint64_t r) {
    const T* dyr = dy + r * s.cols;
    const T* hr = xhat + r * s.cols;
    W s1w = 0, s2w = 0;
    for (uint64_t j = 0; j < s.cols; ++j) {
      const T q = dyr[j] * gamma[j];
      const T qh = q * hr[j];
      s1w += static_cast<W>(q);
      s2w += static_cast<W>(qh);
    }
    const T s1 = static_cast<T>(s1w);
    const T s2 = static_cast<T>(s2w);
    const T is = inv_std[r];
    for (uint64_t j = 0; j < s.cols; ++j) {
      const T q = dyr[j] * gamma[j];
      const T a = q * cols_scale;
      const T b = a - s1;
      const T h2 = hr[j] * s2;
      const T t = b - h2;
      const T u = t * is;
      dx[r * s.cols + j] = u * inv_cols;
    }
  });
  // Column sums: ranges of columns on several threads, each column over the rows in order.
  parallel_ranges(s.cols, grain_for_work(s.rows, kRangeWork), [&](uint64_t begin, uint64_t end) {
    std::vector<W> g_acc(end - begin, W(0)), b_acc(end - begin, W(0));
    for (uint64_t r = 0; r < s.rows; ++r) {
      const T* dyr = dy + r * s.cols;
      const T* hr = xhat + r * s.cols;
      for (uint64_t j = begin; j < end; ++j) {
        const T gh = dyr[j] * hr[j];
        g_acc[j - begin] += static_cast<W>(gh);
        b_acc[j - begin] += static_cast<W>(dyr[j]);
      }
    }
    for (uint64_t j = begin; j < end; ++j) {
      d_gamma[j] = static_cast<T>(g_acc[j - begin]);
      d_beta[j] = static_cast<T>(b_acc[j - begin]);
    }
  });
}

template void layer_norm_fwd_ref<float>(const float*, const float*, const float*, LayerNormShape,
                                        double, float*, float*, float*);
template void layer_norm_fwd_ref<double>(const double*, const double*, const double*,
                                         LayerNormShape, double, double*, double*, double*);
template void layer_norm_bwd_ref<float>(const float*, const float*, const float*, const float*,
                                        LayerNormShape, float, float, float*, float*, float*);
template void layer_norm_bwd_ref<double>(const double*, const double*, const double*, const double*,
                                         LayerNormShape, double, double, double*, double*, double*);

}  // namespace tlrt::kernels
