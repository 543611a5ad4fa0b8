// Reference backend of the diagonal selective scans (SPEC-ops 13): the literal recurrences.
// Forward: time ascending, a range of channels of a step before the next step (rows are
// contiguous).
// Backward: time descending; g, the products and the constant variant's reverse-time folds of
// dA and dB are kept per channel in host arrays, so the order of every rounding is the spec's.
// Built with -ffp-contract=off: no product is fused into a sum. Channels run in contiguous ranges
// on several host threads (kernels/common/host_parallel.h), each channel's steps in this order.
#include <algorithm>
#include <vector>

#include "kernels/common/host_parallel.h"
#include "kernels/scan/scan.h"

namespace tlrt::kernels {

namespace {

// Channels are independent: contiguous ranges of them on several host threads, each running all
// its steps in the order of the recurrence, so the bits do not depend on the thread count.
template <class F>
void each_channel_range(uint64_t steps, uint64_t state, F&& channels) {
  parallel_ranges(state, std::max<uint64_t>(16, grain_for_work(steps, uint64_t{1} << 16)),
                  channels);
}

}  // namespace

template <class T>
void selective_scan_fwd_ref(const ScanOperands<T>& in, T* out) {
  const uint64_t steps = in.steps, state = in.state;
  each_channel_range(steps, state, [&](uint64_t begin, uint64_t end) {
    for (uint64_t t = 0; t < steps; ++t) {
      const T* prev = t == 0 ? in.h0 : out + (t - 1) * state;
      const T* a = in.variable ? in.a + t * state : in.a;
      const T* b = in.variable ? in.b + t * state : in.b;
      const T* x = in.x + t * state;
      T* h = out + t * state;
      for (uint64_t j = begin; j < end; ++j) {
        const T bx = b[j] * x[j];
        const T ah = a[j] * prev[j];
        h[j] = ah + bx;
      }
    }
  });
}

template <class T>
void selective_scan_bwd_ref(const ScanOperands<T>& in, const T* out, const T* dy,
                            const ScanGradients<T>& grad) {
  const uint64_t steps = in.steps, state = in.state;
  each_channel_range(steps, state, [&](uint64_t begin, uint64_t end) {
    std::vector<T> g(end - begin);
    if (!in.variable) {
      for (uint64_t j = begin; j < end; ++j) {
        grad.da[j] = T(0);
        grad.db[j] = T(0);
      }
    }
    for (uint64_t s = 0; s < steps; ++s) {
      const uint64_t t = steps - 1 - s;
      const T* dyt = dy + t * state;
      const T* prev = t == 0 ? in.h0 : out + (t - 1) * state;
      const T* x = in.x + t * state;
      const T* b = in.variable ? in.b + t * state : in.b;
      const T* a_next = in.variable ? in.a + (t + 1) * state : in.a;  // read only when t < T-1
      T* dx = grad.dx + t * state;
      for (uint64_t j = begin; j < end; ++j) {
        T& gj = g[j - begin];
        if (s == 0) {
          gj = T(0) + dyt[j];
        } else {
          const T ag = a_next[j] * gj;
          gj = ag + dyt[j];
        }
        const T da = gj * prev[j];
        const T db = gj * x[j];
        dx[j] = gj * b[j];
        if (in.variable) {
          grad.da[t * state + j] = da;
          grad.db[t * state + j] = db;
        } else {
          grad.da[j] = grad.da[j] + da;
          grad.db[j] = grad.db[j] + db;
        }
      }
    }
    for (uint64_t j = begin; j < end; ++j) grad.dh0[j] = g[j - begin] * in.a[j];
  });
}

template void selective_scan_fwd_ref<float>(const ScanOperands<float>&, float*);
template void selective_scan_fwd_ref<double>(const ScanOperands<double>&, double*);
template void selective_scan_bwd_ref<float>(const ScanOperands<float>&, const float*, const float*,
                                            const ScanGradients<float>&);
template void selective_scan_bwd_ref<double>(const ScanOperands<double>&, const double*,
                                             const double*, const ScanGradients<double>&);

}  // namespace tlrt::kernels
