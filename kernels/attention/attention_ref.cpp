// The legacy attention pair, reference backend: plain loops in the wider format W
// (kernels/common/wide.h: binary64 for float32, the host's long double for float64), each output
// rounded once to T. Forward, per row (b, i): the scores in W (products and their sum in W, times
// scale rounded to T), the masked softmax of kernels/softmax/softmax_ref.cpp in W (max of the
// allowed scores with NaN propagating, the exponentials' sum in increasing column order), out from
// the unrounded probabilities over every column in increasing order (a blocked column's +0 times
// its value of v, as a product would form it). Scale 0 (rounded to T) gives +0 scores, dq and dk
// without reading their operands, as the CUDA backend's products do. Backward, per batch: ds in W
// from the saved probabilities, then each output's sum in increasing index order. Rows and columns
// of outputs run in contiguous ranges on several host threads (kernels/common/host_parallel.h),
// each output's order as above, so the bits do not depend on the thread count.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/attention/attention.h"
#include "kernels/common/host_parallel.h"
#include "kernels/common/wide.h"

namespace tlrt::kernels {
namespace {

constexpr uint64_t kRangeWork = uint64_t{1} << 18;

}  // namespace

template <class T>
void attention_fwd_ref(const T* q, const T* k, const T* v, const T* mask, const AttentionShape& s,
                       double scale, T* out, T* probs, uint8_t* blocked) {
  using W = wide_t<T>;
  const uint64_t n = s.n, d = s.d;
  const W alpha = static_cast<W>(static_cast<T>(scale));
  parallel_items(s.batch * n, n * d, kRangeWork, [&](uint64_t r) {
    const uint64_t b = r / n;
    const T* qi = q + r * d;
    const T* kb = k + b * n * d;
    const T* vb = v + b * n * d;
    const T* mi = mask == nullptr ? nullptr : mask + r * n;
    T* pi = probs + r * n;
    T* oi = out + r * d;
    auto allowed = [&](uint64_t j) { return mi == nullptr || !(mi[j] == T(0)); };
    std::vector<W> p(n);
    bool any = false;
    // A NaN row: an allowed score NaN or +inf, or every allowed score -inf. Its arithmetic would
    // give NaN for every allowed probability and every output (exp(s - m) with m NaN or infinite,
    // and NaN terms in every sum), so it is written as such once known, without the arithmetic
    // (NaN and infinite long doubles take the x87 unit's slow path).
    bool nan_row = false;
    W m = -std::numeric_limits<W>::infinity();
    for (uint64_t j = 0; j < n; ++j) {
      if (!allowed(j)) continue;
      any = true;
      W acc = 0;
      // scale 0 gives +0 scores without reading q and k, as the CUDA backend's product does.
      for (uint64_t l = 0; l < d && alpha != 0; ++l) {
        acc += static_cast<W>(qi[l]) * static_cast<W>(kb[j * d + l]);
      }
      p[j] = alpha == 0 ? W(0) : alpha * acc;
      if (std::isnan(p[j]) || p[j] == std::numeric_limits<W>::infinity()) {
        nan_row = true;
        break;
      }
      if (p[j] > m) m = p[j];
    }
    blocked[r] = any ? 0 : 1;
    if (!any) {
      for (uint64_t j = 0; j < n; ++j) pi[j] = T(0);
      for (uint64_t l = 0; l < d; ++l) oi[l] = T(0);
      return;
    }
    if (nan_row || m == -std::numeric_limits<W>::infinity()) {
      const T nan = std::numeric_limits<T>::quiet_NaN();
      for (uint64_t j = 0; j < n; ++j) pi[j] = allowed(j) ? nan : T(0);
      for (uint64_t l = 0; l < d; ++l) oi[l] = nan;
      return;
    }
    W sum = 0;
    for (uint64_t j = 0; j < n; ++j) {
      if (!allowed(j)) continue;
      p[j] = std::exp(p[j] - m);
      sum += p[j];
    }
    for (uint64_t j = 0; j < n; ++j) {
      p[j] = allowed(j) ? p[j] / sum : W(0);
      pi[j] = static_cast<T>(p[j]);
    }
    for (uint64_t l = 0; l < d; ++l) {
      W acc = 0;
      for (uint64_t j = 0; j < n; ++j) acc += p[j] * static_cast<W>(vb[j * d + l]);
      oi[l] = static_cast<T>(acc);
    }
  });
}

template <class T>
void attention_bwd_ref(const T* q, const T* k, const T* v, const T* probs, const uint8_t* blocked,
                       const T* g, const AttentionShape& s, double scale, T* dq, T* dk, T* dv) {
  using W = wide_t<T>;
  const uint64_t n = s.n, d = s.d;
  const W alpha = static_cast<W>(static_cast<T>(scale));
  std::vector<W> ds(n * n);
  for (uint64_t b = 0; b < s.batch; ++b) {
    const T* qb = q + b * n * d;
    const T* kb = k + b * n * d;
    const T* vb = v + b * n * d;
    const T* pb = probs + b * n * n;
    const T* gb = g + b * n * d;
    const uint8_t* fb = blocked + b * n;
    // ds and dq by rows; a blocked row's ds is +0 and contributes nothing below.
    parallel_items(n, n * d, kRangeWork, [&](uint64_t i) {
      W* dsi = ds.data() + i * n;
      T* dqi = dq + (b * n + i) * d;
      if (fb[i] != 0) {
        for (uint64_t j = 0; j < n; ++j) dsi[j] = 0;
        for (uint64_t l = 0; l < d; ++l) dqi[l] = T(0);
        return;
      }
      const T* gi = gb + i * d;
      const T* pi = pb + i * n;
      W c = 0;
      for (uint64_t j = 0; j < n; ++j) {
        W dp = 0;
        for (uint64_t l = 0; l < d; ++l)
          dp += static_cast<W>(gi[l]) * static_cast<W>(vb[j * d + l]);
        dsi[j] = dp;
        c += static_cast<W>(pi[j]) * dp;
      }
      for (uint64_t j = 0; j < n; ++j) dsi[j] = static_cast<W>(pi[j]) * (dsi[j] - c);
      for (uint64_t l = 0; l < d; ++l) {
        W acc = 0;
        for (uint64_t j = 0; j < n; ++j) acc += dsi[j] * static_cast<W>(kb[j * d + l]);
        dqi[l] = alpha == 0 ? T(0) : static_cast<T>(alpha * acc);
      }
    });
    // dk and dv by rows j (columns of ds and p), over the rows i that are not blocked.
    parallel_items(n, n * d, kRangeWork, [&](uint64_t j) {
      T* dkj = dk + (b * n + j) * d;
      T* dvj = dv + (b * n + j) * d;
      for (uint64_t l = 0; l < d; ++l) {
        W acc_k = 0, acc_v = 0;
        for (uint64_t i = 0; i < n; ++i) {
          if (fb[i] != 0) continue;
          acc_k += ds[i * n + j] * static_cast<W>(qb[i * d + l]);
          acc_v += static_cast<W>(pb[i * n + j]) * static_cast<W>(gb[i * d + l]);
        }
        dkj[l] = alpha == 0 ? T(0) : static_cast<T>(alpha * acc_k);
        dvj[l] = static_cast<T>(acc_v);
      }
    });
  }
}

template <class T>
void masked_rows_copy_ref(const T* src, const uint8_t* blocked, T* dst, uint64_t rows,
                          uint64_t cols) {
  if (blocked == nullptr) {
    if (dst != src) std::memcpy(dst, src, rows * cols * sizeof(T));
    return;
  }
  for (uint64_t r = 0; r < rows; ++r) {
    if (blocked[r] != 0) {
      std::memset(dst + r * cols, 0, cols * sizeof(T));  // +0 in both formats
    } else if (dst != src) {
      std::memcpy(dst + r * cols, src + r * cols, cols * sizeof(T));
    }
  }
}

template void attention_fwd_ref<float>(const float*, const float*, const float*, const float*,
                                       const AttentionShape&, double, float*, float*, uint8_t*);
template void attention_fwd_ref<double>(const double*, const double*, const double*, const double*,
                                        const AttentionShape&, double, double*, double*, uint8_t*);
template void attention_bwd_ref<float>(const float*, const float*, const float*, const float*,
                                       const uint8_t*, const float*, const AttentionShape&, double,
                                       float*, float*, float*);
template void attention_bwd_ref<double>(const double*, const double*, const double*, const double*,
                                        const uint8_t*, const double*, const AttentionShape&,
                                        double, double*, double*, double*);
template void masked_rows_copy_ref<float>(const float*, const uint8_t*, float*, uint64_t, uint64_t);
template void masked_rows_copy_ref<double>(const double*, const uint8_t*, double*, uint64_t,
                                           uint64_t);

}  // namespace tlrt::kernels
