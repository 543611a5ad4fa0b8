// Pooling, reference backend: direct loops over the windows in the orders of kernels/pool/pool.h.
// Max pooling is a selection and its backward a fold of selected cotangents; average pooling
// folds in the dtype in ATen's order and divides once; smooth max pooling follows the staged
// roundings of SPEC-ops 14.5 in the dtype (built with -ffp-contract=off), with exp and log taken
// in long double and rounded once to T. Only the exp/log values differ from the CUDA backend.
// Channels are independent: large calls run ranges of channels on several threads
// (kernels/common/host_parallel.h), each channel in the same order as one loop.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/common/host_parallel.h"
#include "kernels/pool/pool.h"

namespace tlrt::kernels {
namespace {

// The window of output position (o0, o1, o2): per axis its first coordinate (may be negative).
struct Window {
  int64_t start[kPoolAxes];
};

Window window_of(const PoolGeometry& g, const int64_t* o) {
  Window w{};
  for (int a = 0; a < kPoolAxes; ++a) w.start[a] = o[a] * g.stride[a] - g.padding[a];
  return w;
}

bool valid(const PoolGeometry& g, int64_t i, int a) {
  return i >= 0 && i < g.in[a];
}

uint64_t in_offset(const PoolGeometry& g, const int64_t* i) {
  return (static_cast<uint64_t>(i[0]) * static_cast<uint64_t>(g.in[1]) +
          static_cast<uint64_t>(i[1])) *
             static_cast<uint64_t>(g.in[2]) +
         static_cast<uint64_t>(i[2]);
}

// Calls f(offset in the channel's input) for every valid position of the window, in row-major
// kernel order.
template <class F>
void for_valid(const PoolGeometry& g, const Window& w, F&& f) {
  for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0) {
    const int64_t i0 = w.start[0] + k0;
    if (!valid(g, i0, 0)) continue;
    for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1) {
      const int64_t i1 = w.start[1] + k1;
      if (!valid(g, i1, 1)) continue;
      for (int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
        const int64_t i2 = w.start[2] + k2;
        if (!valid(g, i2, 2)) continue;
        const int64_t i[kPoolAxes] = {i0, i1, i2};
        f(in_offset(g, i));
      }
    }
  }
}

// Calls f(offset or -1 for padding) for every kernel offset of the window, row-major.
template <class F>
void for_all(const PoolGeometry& g, const Window& w, F&& f) {
  for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0) {
    const int64_t i0 = w.start[0] + k0;
    for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1) {
      const int64_t i1 = w.start[1] + k1;
      for (int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
        const int64_t i2 = w.start[2] + k2;
        const int64_t i[kPoolAxes] = {i0, i1, i2};
        const bool inside = valid(g, i0, 0) && valid(g, i1, 1) && valid(g, i2, 2);
        f(inside ? static_cast<int64_t>(in_offset(g, i)) : int64_t{-1});
      }
    }
  }
}

// Calls f(o coordinates, channel output offset) for every output position, row-major.
template <class F>
void for_outputs(const PoolGeometry& g, F&& f) {
  uint64_t q = 0;
  for (int64_t o0 = 0; o0 < g.out[0]; ++o0) {
    for (int64_t o1 = 0; o1 < g.out[1]; ++o1) {
      for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
        const int64_t o[kPoolAxes] = {o0, o1, o2};
        f(o, q++);
      }
    }
  }
}

// The selected offset of a max-pool window (the window always has a valid position).
template <class T>
uint64_t max_selection(const T* x, const PoolGeometry& g, const Window& w) {
  bool first = true;
  T best = T(0);
  uint64_t sel = 0;
  for_valid(g, w, [&](uint64_t i) {
    const T v = x[i];
    if (first || v > best || std::isnan(v)) {
      best = v;
      sel = i;
      first = false;
    }
  });
  return sel;
}

// NaN-ignoring max with +0 above -0 (b > 0), or min with -0 below +0 (b < 0).
template <class T>
T pivot_step(T p, T v, bool upper) {
  if (std::isnan(v)) return p;
  if (std::isnan(p)) return v;
  if (upper) {
    if (v > p) return v;
    if (p > v) return p;
    return std::signbit(p) ? v : p;
  }
  if (v < p) return v;
  if (p < v) return p;
  return std::signbit(p) ? p : v;
}

template <class T>
T exp_t(T v) {
  return static_cast<T>(std::exp(static_cast<long double>(v)));
}

template <class T>
T log_t(T v) {
  return static_cast<T>(std::log(static_cast<long double>(v)));
}

template <class T>
struct Stats {
  T pivot;
  T denominator;
};

template <class T>
Stats<T> smooth_stats(const T* x, T b, const PoolGeometry& g, const Window& w) {
  const bool upper = b > T(0);
  T p = upper ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
  for_all(g, w, [&](int64_t i) { p = pivot_step(p, i < 0 ? T(0) : x[i], upper); });
  T d = T(0);
  for_all(g, w, [&](int64_t i) {
    const T v = i < 0 ? T(0) : x[i];
    const T z = (v - p) * b;
    d = d + exp_t(z);
  });
  return {p, d};
}

// Channels per thread range: enough that a range handles at least 2^16 positions.
uint64_t channel_grain(const PoolGeometry& g) {
  return grain_for_work(g.in_volume + g.out_volume, uint64_t{1} << 16);
}

}  // namespace

template <class T>
void maxpool_fwd_ref(const T* x, T* y, const PoolGeometry& g) {
  parallel_ranges(g.channels, channel_grain(g), [&](uint64_t c_begin, uint64_t c_end) {
    for (uint64_t c = c_begin; c < c_end; ++c) {
      const T* xc = x + c * g.in_volume;
      T* yc = y + c * g.out_volume;
      for_outputs(g, [&](const int64_t* o, uint64_t q) {
        yc[q] = xc[max_selection(xc, g, window_of(g, o))];
      });
    }
  });
}

template <class T>
void maxpool_bwd_ref(const T* x, const T* dy, T* dx, const PoolGeometry& g) {
  parallel_ranges(g.channels, channel_grain(g), [&](uint64_t c_begin, uint64_t c_end) {
    for (uint64_t c = c_begin; c < c_end; ++c) {
      const T* xc = x + c * g.in_volume;
      const T* dyc = dy + c * g.out_volume;
      T* dxc = dx + c * g.in_volume;
      for (uint64_t i = 0; i < g.in_volume; ++i) dxc[i] = T(0);
      // Windows in increasing output order, each adding into its selection: for every input the
      // additions arrive in increasing output order, as in the gather form.
      for_outputs(g, [&](const int64_t* o, uint64_t q) {
        const uint64_t sel = max_selection(xc, g, window_of(g, o));
        dxc[sel] = dxc[sel] + dyc[q];
      });
    }
  });
}

template <class T>
void avgpool_fwd_ref(const T* x, T* y, const PoolGeometry& g) {
  const T divisor = static_cast<T>(g.kernel_volume);
  parallel_ranges(g.channels, channel_grain(g), [&](uint64_t c_begin, uint64_t c_end) {
    for (uint64_t c = c_begin; c < c_end; ++c) {
      const T* xc = x + c * g.in_volume;
      T* yc = y + c * g.out_volume;
      for_outputs(g, [&](const int64_t* o, uint64_t q) {
        T s = T(0);
        for_valid(g, window_of(g, o), [&](uint64_t i) { s = s + xc[i]; });
        yc[q] = s / divisor;
      });
    }
  });
}

template <class T>
void avgpool_bwd_ref(const T* dy, T* dx, const PoolGeometry& g) {
  const T divisor = static_cast<T>(g.kernel_volume);
  parallel_ranges(g.channels, channel_grain(g), [&](uint64_t c_begin, uint64_t c_end) {
    for (uint64_t c = c_begin; c < c_end; ++c) {
      const T* dyc = dy + c * g.out_volume;
      T* dxc = dx + c * g.in_volume;
      for (uint64_t i = 0; i < g.in_volume; ++i) dxc[i] = T(0);
      for_outputs(g, [&](const int64_t* o, uint64_t q) {
        const T share = dyc[q] / divisor;
        for_valid(g, window_of(g, o), [&](uint64_t i) { dxc[i] = dxc[i] + share; });
      });
    }
  });
}

template <class T>
void smooth_maxpool_fwd_ref(const T* x, T b, T* y, const PoolGeometry& g) {
  const T inv_b = T(1) / b;
  parallel_ranges(g.channels, channel_grain(g), [&](uint64_t c_begin, uint64_t c_end) {
    for (uint64_t c = c_begin; c < c_end; ++c) {
      const T* xc = x + c * g.in_volume;
      T* yc = y + c * g.out_volume;
      for_outputs(g, [&](const int64_t* o, uint64_t q) {
        const Stats<T> st = smooth_stats(xc, b, g, window_of(g, o));
        const T t = log_t(st.denominator) * inv_b;
        yc[q] = st.pivot + t;
      });
    }
  });
}

template <class T>
void smooth_maxpool_bwd_ref(const T* x, const T* dy, T b, T* dx, const PoolGeometry& g) {
  parallel_ranges(g.channels, channel_grain(g), [&](uint64_t c_begin, uint64_t c_end) {
    std::vector<Stats<T>> stats(g.out_volume);  // one channel's P and D, per range
    for (uint64_t c = c_begin; c < c_end; ++c) {
      const T* xc = x + c * g.in_volume;
      const T* dyc = dy + c * g.out_volume;
      T* dxc = dx + c * g.in_volume;
      for_outputs(g, [&](const int64_t* o, uint64_t q) {
        stats[q] = smooth_stats(xc, b, g, window_of(g, o));
      });
      for (uint64_t i = 0; i < g.in_volume; ++i) dxc[i] = T(0);
      // Kernel offsets in increasing order, each adding into the valid input it reaches from every
      // window: for every input the additions arrive in increasing kernel offset.
      for (uint64_t kappa = 0; kappa < g.kernel_volume; ++kappa) {
        const int64_t k2 = static_cast<int64_t>(kappa % static_cast<uint64_t>(g.kernel[2]));
        const uint64_t rest = kappa / static_cast<uint64_t>(g.kernel[2]);
        const int64_t k1 = static_cast<int64_t>(rest % static_cast<uint64_t>(g.kernel[1]));
        const int64_t k0 = static_cast<int64_t>(rest / static_cast<uint64_t>(g.kernel[1]));
        const int64_t k[kPoolAxes] = {k0, k1, k2};
        for_outputs(g, [&](const int64_t* o, uint64_t q) {
          int64_t i[kPoolAxes];
          for (int a = 0; a < kPoolAxes; ++a) {
            i[a] = o[a] * g.stride[a] - g.padding[a] + k[a];
            if (!valid(g, i[a], a)) return;
          }
          const uint64_t at = in_offset(g, i);
          const T z = (xc[at] - stats[q].pivot) * b;
          const T weight = exp_t(z) / stats[q].denominator;
          dxc[at] = dxc[at] + dyc[q] * weight;
        });
      }
    }
  });
}

#define TLRT_POOL_REF(T)                                                         \
  template void maxpool_fwd_ref<T>(const T*, T*, const PoolGeometry&);           \
  template void maxpool_bwd_ref<T>(const T*, const T*, T*, const PoolGeometry&); \
  template void avgpool_fwd_ref<T>(const T*, T*, const PoolGeometry&);           \
  template void avgpool_bwd_ref<T>(const T*, T*, const PoolGeometry&);           \
  template void smooth_maxpool_fwd_ref<T>(const T*, T, T*, const PoolGeometry&); \
  template void smooth_maxpool_bwd_ref<T>(const T*, const T*, T, T*, const PoolGeometry&);
TLRT_POOL_REF(float)
TLRT_POOL_REF(double)
#undef TLRT_POOL_REF

}  // namespace tlrt::kernels
