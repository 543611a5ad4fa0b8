// Reference convolution (kernels/conv/conv.h): direct loops over the three-axis geometry. Every
// result element is one sum accumulated in long double, in this order, and rounded once to T:
//   fprop: bias first (when given), then c over the group of o, then kappa row-major;
//   dgrad: bias first (when given), then o over the group of c, then kappa row-major, taking the q
//   that reaches i; wgrad: n, then q row-major; bias grad: n, then q row-major.
// fprop's (n, o), dgrad's (n, c) and wgrad's (o, c) pairs run in contiguous ranges on several host
// threads; every element's order is the one above.
#include <cstring>

#include "kernels/common/host_parallel.h"
#include "kernels/conv/conv.h"

namespace tlrt::kernels {
namespace {

using Acc = long double;

// x position along axis a for output position q and kernel offset kappa; false when it falls in
// the padding.
inline bool source(const ConvShape& s, int a, uint64_t q, uint64_t kappa, uint64_t* i) {
  const uint64_t reach = q * s.stride[a] + kappa * s.dil[a];
  if (reach < s.pre[a]) return false;
  *i = reach - s.pre[a];
  return *i < s.in[a];
}

// The q that reaches input position i with kernel offset kappa along axis a, if any.
inline bool target(const ConvShape& s, int a, uint64_t i, uint64_t kappa, uint64_t* q) {
  const uint64_t shifted = i + s.pre[a];
  const uint64_t offset = kappa * s.dil[a];
  if (shifted < offset) return false;
  const uint64_t num = shifted - offset;
  if (num % s.stride[a] != 0) return false;
  *q = num / s.stride[a];
  return *q < s.out[a];
}

inline uint64_t weight_index(const ConvShape& s, uint64_t o, uint64_t c) {
  const uint64_t col = s.dense_kernel() ? c : c % s.cin_group();
  return (o * s.kernel_cols + col) * s.k_volume();
}

// Each (n, o), (n, c) or (o, c) pair owns its output elements: pairs run as items of
// parallel_items, about 2^20 multiply-adds a range.
constexpr uint64_t kPairRangeWork = uint64_t{1} << 20;

}  // namespace

template <class T>
void conv_fprop_ref(const ConvShape& s, const T* x, const T* w, const T* bias, T* y) {
  const uint64_t cig = s.cin_group(), cog = s.cout_group();
  const uint64_t in_vol = s.in_volume(), out_vol = s.out_volume();
  const uint64_t pair_work = out_vol * cig * s.k_volume();
  parallel_items(s.batch * s.cout, pair_work, kPairRangeWork, [&](uint64_t pair) {
    const uint64_t n = pair / s.cout, o = pair % s.cout;
    const uint64_t g = o / cog;
    for (uint64_t q0 = 0; q0 < s.out[0]; ++q0) {
      for (uint64_t q1 = 0; q1 < s.out[1]; ++q1) {
        for (uint64_t q2 = 0; q2 < s.out[2]; ++q2) {
          Acc acc = bias != nullptr ? static_cast<Acc>(bias[o]) : Acc(0);
          for (uint64_t c = g * cig; c < (g + 1) * cig; ++c) {
            const T* xc = x + (n * s.cin + c) * in_vol;
            const T* wc = w + weight_index(s, o, c);
            for (uint64_t k0 = 0; k0 < s.k[0]; ++k0) {
              uint64_t i0;
              if (!source(s, 0, q0, k0, &i0)) continue;
              for (uint64_t k1 = 0; k1 < s.k[1]; ++k1) {
                uint64_t i1;
                if (!source(s, 1, q1, k1, &i1)) continue;
                for (uint64_t k2 = 0; k2 < s.k[2]; ++k2) {
                  uint64_t i2;
                  if (!source(s, 2, q2, k2, &i2)) continue;
                  acc += static_cast<Acc>(wc[(k0 * s.k[1] + k1) * s.k[2] + k2]) *
                         static_cast<Acc>(xc[(i0 * s.in[1] + i1) * s.in[2] + i2]);
                }
              }
            }
          }
          y[(n * s.cout + o) * out_vol + (q0 * s.out[1] + q1) * s.out[2] + q2] =
              static_cast<T>(acc);
        }
      }
    }
  });
}

template <class T>
void conv_dgrad_ref(const ConvShape& s, const T* dy, const T* w, const T* bias, T* dx) {
  const uint64_t cig = s.cin_group(), cog = s.cout_group();
  const uint64_t in_vol = s.in_volume(), out_vol = s.out_volume();
  const uint64_t pair_work = in_vol * cog * s.k_volume();
  parallel_items(s.batch * s.cin, pair_work, kPairRangeWork, [&](uint64_t pair) {
    const uint64_t n = pair / s.cin, c = pair % s.cin;
    const uint64_t g = c / cig;
    for (uint64_t i0 = 0; i0 < s.in[0]; ++i0) {
      for (uint64_t i1 = 0; i1 < s.in[1]; ++i1) {
        for (uint64_t i2 = 0; i2 < s.in[2]; ++i2) {
          Acc acc = bias != nullptr ? static_cast<Acc>(bias[c]) : Acc(0);
          for (uint64_t o = g * cog; o < (g + 1) * cog; ++o) {
            const T* dyo = dy + (n * s.cout + o) * out_vol;
            const T* wc = w + weight_index(s, o, c);
            for (uint64_t k0 = 0; k0 < s.k[0]; ++k0) {
              uint64_t q0;
              if (!target(s, 0, i0, k0, &q0)) continue;
              for (uint64_t k1 = 0; k1 < s.k[1]; ++k1) {
                uint64_t q1;
                if (!target(s, 1, i1, k1, &q1)) continue;
                for (uint64_t k2 = 0; k2 < s.k[2]; ++k2) {
                  uint64_t q2;
                  if (!target(s, 2, i2, k2, &q2)) continue;
                  acc += static_cast<Acc>(wc[(k0 * s.k[1] + k1) * s.k[2] + k2]) *
                         static_cast<Acc>(dyo[(q0 * s.out[1] + q1) * s.out[2] + q2]);
                }
              }
            }
          }
          dx[(n * s.cin + c) * in_vol + (i0 * s.in[1] + i1) * s.in[2] + i2] = static_cast<T>(acc);
        }
      }
    }
  });
}

template <class T>
void conv_wgrad_ref(const ConvShape& s, const T* x, const T* dy, T* dw) {
  const uint64_t cig = s.cin_group(), cog = s.cout_group();
  const uint64_t in_vol = s.in_volume(), out_vol = s.out_volume();
  const uint64_t pair_work = s.k_volume() * s.batch * out_vol;
  parallel_items(s.cout * cig, pair_work, kPairRangeWork, [&](uint64_t pair) {
    const uint64_t o = pair / cig, cl = pair % cig;
    const uint64_t g = o / cog;
    const uint64_t c = g * cig + cl;
    for (uint64_t k0 = 0; k0 < s.k[0]; ++k0) {
      for (uint64_t k1 = 0; k1 < s.k[1]; ++k1) {
        for (uint64_t k2 = 0; k2 < s.k[2]; ++k2) {
          Acc acc = 0;
          for (uint64_t n = 0; n < s.batch; ++n) {
            const T* xc = x + (n * s.cin + c) * in_vol;
            const T* dyo = dy + (n * s.cout + o) * out_vol;
            for (uint64_t q0 = 0; q0 < s.out[0]; ++q0) {
              uint64_t i0;
              if (!source(s, 0, q0, k0, &i0)) continue;
              for (uint64_t q1 = 0; q1 < s.out[1]; ++q1) {
                uint64_t i1;
                if (!source(s, 1, q1, k1, &i1)) continue;
                for (uint64_t q2 = 0; q2 < s.out[2]; ++q2) {
                  uint64_t i2;
                  if (!source(s, 2, q2, k2, &i2)) continue;
                  acc += static_cast<Acc>(dyo[(q0 * s.out[1] + q1) * s.out[2] + q2]) *
                         static_cast<Acc>(xc[(i0 * s.in[1] + i1) * s.in[2] + i2]);
                }
              }
            }
          }
          dw[(o * cig + cl) * s.k_volume() + (k0 * s.k[1] + k1) * s.k[2] + k2] =
              static_cast<T>(acc);
        }
      }
    }
  });
}

template <class T>
void conv_bias_grad_ref(const T* dy, uint64_t batch, uint64_t channels, uint64_t volume, T* db) {
  for (uint64_t o = 0; o < channels; ++o) {
    Acc acc = 0;
    for (uint64_t n = 0; n < batch; ++n) {
      const T* row = dy + (n * channels + o) * volume;
      for (uint64_t q = 0; q < volume; ++q) acc += static_cast<Acc>(row[q]);
    }
    db[o] = static_cast<T>(acc);
  }
}

template <class T>
void conv_bias_fill_ref(const T* bias, uint64_t batch, uint64_t channels, uint64_t volume, T* y) {
  for (uint64_t n = 0; n < batch; ++n) {
    for (uint64_t o = 0; o < channels; ++o) {
      T* row = y + (n * channels + o) * volume;
      for (uint64_t q = 0; q < volume; ++q) std::memcpy(row + q, bias + o, sizeof(T));
    }
  }
}

#define TLRT_CONV_REF(T)                                                               \
  template void conv_fprop_ref<T>(const ConvShape&, const T*, const T*, const T*, T*); \
  template void conv_dgrad_ref<T>(const ConvShape&, const T*, const T*, const T*, T*); \
  template void conv_wgrad_ref<T>(const ConvShape&, const T*, const T*, T*);           \
  template void conv_bias_grad_ref<T>(const T*, uint64_t, uint64_t, uint64_t, T*);     \
  template void conv_bias_fill_ref<T>(const T*, uint64_t, uint64_t, uint64_t, T*);
TLRT_CONV_REF(float)
TLRT_CONV_REF(double)
#undef TLRT_CONV_REF

}  // namespace tlrt::kernels
