// Reference matrix products: for each output row the products of A' row i with B' are accumulated
// in k order, element by element, in a wider format W (float in double: the product of two floats
// is exact in double; double in long double), starting from +0 (an all-zero sum is +0), and each
// sum is rounded once to T at the end (after the product with alpha, when alpha != 1). Rows run in
// contiguous ranges on several host threads (kernels/common/host_parallel.h); each row's order is
// the one above.
#include <cstring>
#include <vector>

#include "kernels/common/host_parallel.h"
#include "kernels/common/wide.h"
#include "kernels/matmul/matmul.h"

namespace tlrt::kernels {

template <class T>
void bmm_ref(const T* a, const T* b, T* c, const MatmulShape& s) {
  using W = typename Wide<T>::type;
  const uint64_t a_batch = s.m * s.n, b_batch = s.n * s.p, c_batch = s.m * s.p;
  if (c_batch == 0 || s.batch == 0) return;
  if (s.n == 0 || static_cast<T>(s.alpha) == T(0)) {
    std::memset(c, 0, s.batch * c_batch * sizeof(T));  // +0 in both formats
    return;
  }
  // A'[i, k] and B'[k, j] as strides over the stored layouts.
  const uint64_t a_row = s.transpose_a ? 1 : s.n, a_col = s.transpose_a ? s.m : 1;
  const uint64_t b_row = s.transpose_b ? 1 : s.p, b_col = s.transpose_b ? s.n : 1;
  // Output rows (batch, i) are independent: contiguous ranges of them on several threads, each
  // row's sums in the order above, so the bits do not depend on the thread count.
  // alpha rounded to T, applied to the wide sum: one rounding in all (alpha = 1 is exact).
  const W alpha = static_cast<W>(static_cast<T>(s.alpha));
  const uint64_t grain = grain_for_work(s.n * s.p, uint64_t{1} << 20);
  parallel_ranges(s.batch * s.m, grain, [&](uint64_t begin, uint64_t end) {
    std::vector<W> acc(s.p);
    for (uint64_t r = begin; r < end; ++r) {
      const uint64_t bb = r / s.m, i = r % s.m;
      const T* ab = a + bb * a_batch;
      const T* bm = b + bb * b_batch;
      T* cb = c + bb * c_batch;
      for (uint64_t j = 0; j < s.p; ++j) acc[j] = W(0);
      for (uint64_t k = 0; k < s.n; ++k) {
        const W aik = static_cast<W>(ab[i * a_row + k * a_col]);
        const T* bk = bm + k * b_row;
        for (uint64_t j = 0; j < s.p; ++j) acc[j] += aik * static_cast<W>(bk[j * b_col]);
      }
      for (uint64_t j = 0; j < s.p; ++j) cb[i * s.p + j] = static_cast<T>(alpha * acc[j]);
    }
  });
}

template void bmm_ref<float>(const float*, const float*, float*, const MatmulShape&);
template void bmm_ref<double>(const double*, const double*, double*, const MatmulShape&);

}  // namespace tlrt::kernels
