// Pooling, CUDA backend (own kernels: cuDNN's pooling has neither the tie and NaN rules of max
// pooling nor smooth max pooling). The orders are those of kernels/pool/pool.h, statement by
// statement; every product that feeds an addition is __fmul_rn / __dmul_rn and every addition
// __fadd_rn / __dadd_rn, so nothing is contracted into an FMA.
//
// * Forward: one output per thread, the window scanned in row-major kernel order. Geometries whose
//   leading axis is trivial (kernel 1, stride 1, padding 0: every rank-1 and rank-2 call) run as
//   2-D planes: the 2x2 and 3x3 kernels are compile-time loops, and 2x2 stride 2 without padding
//   reads each window's two rows as one 8- or 16-byte load each (a warp reads 256 or 512
//   contiguous bytes per row). Indices are 32-bit when every count fits, 64-bit otherwise.
// * Backward, disjoint windows (stride >= kernel on every axis): one thread per window writes every
//   valid position of its window (+0 + term, or +0), so no position is written twice; positions in
//   no window are zeroed first by a memset unless the windows tile the input exactly. 2x2 stride
//   2 without padding stores 8- or 16-byte pairs.
// * Backward, overlapping windows: gather form, one thread per input position iterating the
//   windows that contain it (increasing output order for max and average; decreasing output
//   order, that is increasing kernel offset, for smooth max, whose P and D come from a first pass
//   into the workspace). No atomics anywhere: results are bit-reproducible.
// * Smooth max on planes with 32-bit counts and a compiled shape (3x3 or 2x2 kernels, stride 1
//   or 2, any padding; kernels/pool/pool_smooth.cu): shared-memory tiles, the window values staged
//   once per block with the literal 0 at padding positions and read into registers by groups of
//   adjacent outputs (see "Smooth max pooling on planes through shared-memory tiles"); the
//   overlapping backward computes each window's terms once in the block and needs no workspace. 2x2
//   stride 2 without padding on 16-byte aligned operands reads two 16-byte vectors per row and
//   writes one per thread. Same arithmetic, same orders, same bits as the one-output-per-thread
//   kernels, which remain for the other geometries.
// * Smooth max on float32 planes with a 3x3 kernel at stride 1 (kernels/pool/pool_stream.cu):
//   streaming kernels instead of the tiles (a thread keeps its window rows in registers down a
//   strip of rows; see "Smooth max pooling, float32, 3x3 stride 1, planes: streaming kernels"),
//   with the same bits.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <type_traits>

#include "kernels/common/float_ops.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/common/quotient.h"
#include "kernels/pool/pool.h"
#include "kernels/pool/pool_shared.cuh"

namespace tlrt::kernels {
namespace {

using namespace pool_detail;

enum class Pool { max, avg, smooth };

// NaN-ignoring max with +0 above -0 (upper), or min with -0 below +0.
template <class T>
TLRT_DEVICE_INLINE T pivot_step(T p, T v, bool upper) {
  if (isnan(v)) return p;
  if (isnan(p)) return v;
  if (upper) {
    if (v > p) return v;
    if (p > v) return p;
    return signbit(p) ? v : p;
  }
  if (v < p) return v;
  if (p < v) return p;
  return signbit(p) ? p : v;
}

// Max-pool scan step: the first valid value, then replace on strictly greater or NaN.
template <class T, class I>
TLRT_DEVICE_INLINE void max_step(T v, I at, bool& first, T& best, I& sel) {
  if (first || v > best || isnan(v)) {
    best = v;
    sel = at;
    first = false;
  }
}

template <class T>
struct Stats {
  T pivot;
  T denominator;
};

// ---------------------------------------------------------------------------------------------
// 2-D planes: the leading axis is trivial, so (channel, in[0]) is a plane index.

template <class I>
struct Planes {
  I planes, h, w, oh, ow;
  I kh, kw, sh, sw, ph, pw;
};

template <class I>
Planes<I> planes_of(const PoolGeometry& g) {
  Planes<I> p;
  p.planes = static_cast<I>(g.channels * static_cast<uint64_t>(g.in[0]));
  p.h = static_cast<I>(g.in[1]);
  p.w = static_cast<I>(g.in[2]);
  p.oh = static_cast<I>(g.out[1]);
  p.ow = static_cast<I>(g.out[2]);
  p.kh = static_cast<I>(g.kernel[1]);
  p.kw = static_cast<I>(g.kernel[2]);
  p.sh = static_cast<I>(g.stride[1]);
  p.sw = static_cast<I>(g.stride[2]);
  p.ph = static_cast<I>(g.padding[1]);
  p.pw = static_cast<I>(g.padding[2]);
  return p;
}

// The output (plane, row, col) of flat index q and the window's first row/col (signed).
template <class I>
struct PlaneWindow {
  I plane, r, c;
  int64_t h0, w0;
};

template <class I>
TLRT_DEVICE_INLINE PlaneWindow<I> plane_window(const Planes<I>& p, I q) {
  PlaneWindow<I> w;
  w.c = q % p.ow;
  const I t = q / p.ow;
  w.r = t % p.oh;
  w.plane = t / p.oh;
  w.h0 = static_cast<int64_t>(w.r) * static_cast<int64_t>(p.sh) - static_cast<int64_t>(p.ph);
  w.w0 = static_cast<int64_t>(w.c) * static_cast<int64_t>(p.sw) - static_cast<int64_t>(p.pw);
  return w;
}

// KH / KW: compile-time kernel extents, 0 for the runtime ones.
template <int KH, int KW, class I>
TLRT_DEVICE_INLINE I kernel_h(const Planes<I>& p) {
  return KH > 0 ? static_cast<I>(KH) : p.kh;
}
template <int KH, int KW, class I>
TLRT_DEVICE_INLINE I kernel_w(const Planes<I>& p) {
  return KW > 0 ? static_cast<I>(KW) : p.kw;
}

// Calls f(value or literal 0, offset in the plane or -1) for every kernel offset, row-major.
template <int KH, int KW, class T, class I, class F>
TLRT_DEVICE_INLINE void plane_offsets(const T* xp, const Planes<I>& p, const PlaneWindow<I>& w,
                                      F&& f) {
  const I kh = kernel_h<KH, KW>(p), kw = kernel_w<KH, KW>(p);
  for (I a = 0; a < kh; ++a) {
    const int64_t h = w.h0 + static_cast<int64_t>(a);
    const bool row_ok = h >= 0 && h < static_cast<int64_t>(p.h);
    for (I b = 0; b < kw; ++b) {
      const int64_t c = w.w0 + static_cast<int64_t>(b);
      if (row_ok && c >= 0 && c < static_cast<int64_t>(p.w)) {
        const I at = static_cast<I>(h) * p.w + static_cast<I>(c);
        f(xp[at], static_cast<int64_t>(at));
      } else {
        f(T(0), int64_t{-1});
      }
    }
  }
}

template <int KH, int KW, class T, class I>
TLRT_DEVICE_INLINE I plane_max(const T* xp, const Planes<I>& p, const PlaneWindow<I>& w, T& best) {
  bool first = true;
  I sel = 0;
  plane_offsets<KH, KW>(xp, p, w, [&](T v, int64_t at) {
    if (at >= 0) max_step(v, static_cast<I>(at), first, best, sel);
  });
  return sel;
}

template <int KH, int KW, class T, class I>
TLRT_DEVICE_INLINE T plane_sum(const T* xp, const Planes<I>& p, const PlaneWindow<I>& w) {
  T s = T(0);
  plane_offsets<KH, KW>(xp, p, w, [&](T v, int64_t at) {
    if (at >= 0) s = add_rn(s, v);
  });
  return s;
}

template <int KH, int KW, class T, class I>
TLRT_DEVICE_INLINE Stats<T> plane_stats(const T* xp, T b, const Planes<I>& p,
                                        const PlaneWindow<I>& w) {
  const bool upper = b > T(0);
  T pv = upper ? -infinity_t<T>() : infinity_t<T>();
  plane_offsets<KH, KW>(xp, p, w, [&](T v, int64_t) { pv = pivot_step(pv, v, upper); });
  T d = T(0);
  plane_offsets<KH, KW>(xp, p, w,
                        [&](T v, int64_t) { d = add_rn(d, exp_t(mul_rn(sub_rn(v, pv), b))); });
  return {pv, d};
}

template <Pool K, int KH, int KW, class T, class I>
__global__ void plane_fwd_kernel(const T* __restrict__ x, T* __restrict__ y, Planes<I> p, T b,
                                 T inv_b, T divisor, I total) {
  const I step = static_cast<I>(gridDim.x) * static_cast<I>(blockDim.x);
  for (I q = static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) + threadIdx.x; q < total;
       q += step) {
    const PlaneWindow<I> w = plane_window(p, q);
    const T* xp = x + w.plane * (p.h * p.w);
    if constexpr (K == Pool::max) {
      T best = T(0);
      plane_max<KH, KW>(xp, p, w, best);
      y[q] = best;
    } else if constexpr (K == Pool::avg) {
      y[q] = div_rn(plane_sum<KH, KW>(xp, p, w), divisor);
    } else {
      const Stats<T> st = plane_stats<KH, KW>(xp, b, p, w);
      y[q] = add_rn(st.pivot, mul_rn(log_t(st.denominator), inv_b));
    }
    if (step > total - q) break;  // no wrap-around of 32-bit indices
  }
}

// 2x2 stride 2, no padding, even width: each window's rows are one aligned pair each.
template <Pool K, class T, class I>
__global__ void plane_fwd_2x2_kernel(const T* __restrict__ x, T* __restrict__ y, Planes<I> p, T b,
                                     T inv_b, I total) {
  using P2 = typename Pair<T>::type;
  const I step = static_cast<I>(gridDim.x) * static_cast<I>(blockDim.x);
  for (I q = static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) + threadIdx.x; q < total;
       q += step) {
    const I c = q % p.ow;
    const I t = q / p.ow;  // plane * oh + r: the window's first row is 2t in the stacked planes
    const I row = 2 * t * p.w + 2 * c;
    const P2 top = *reinterpret_cast<const P2*>(x + row);
    const P2 bottom = *reinterpret_cast<const P2*>(x + row + p.w);
    const T v[4] = {top.x, top.y, bottom.x, bottom.y};
    if constexpr (K == Pool::max) {
      bool first = true;
      T best = T(0);
      int sel = 0;
#pragma unroll
      for (int k = 0; k < 4; ++k) max_step(v[k], k, first, best, sel);
      y[q] = best;
    } else if constexpr (K == Pool::avg) {
      T s = T(0);
#pragma unroll
      for (int k = 0; k < 4; ++k) s = add_rn(s, v[k]);
      y[q] = div_rn(s, T(4));
    } else {
      const bool upper = b > T(0);
      T pv = upper ? -infinity_t<T>() : infinity_t<T>();
#pragma unroll
      for (int k = 0; k < 4; ++k) pv = pivot_step(pv, v[k], upper);
      T d = T(0);
#pragma unroll
      for (int k = 0; k < 4; ++k) d = add_rn(d, exp_t(mul_rn(sub_rn(v[k], pv), b)));
      y[q] = add_rn(pv, mul_rn(log_t(d), inv_b));
    }
    if (step > total - q) break;
  }
}

// Disjoint-window backward, 2x2 stride 2, no padding, even width, exact tiling in height and
// width: each window writes its two pairs.
template <Pool K, class T, class I>
__global__ void plane_bwd_2x2_kernel(const T* __restrict__ x, const T* __restrict__ dy,
                                     T* __restrict__ dx, Planes<I> p, T b, I total) {
  using P2 = typename Pair<T>::type;
  const I step = static_cast<I>(gridDim.x) * static_cast<I>(blockDim.x);
  for (I q = static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) + threadIdx.x; q < total;
       q += step) {
    const I c = q % p.ow;
    const I t = q / p.ow;
    const I row = 2 * t * p.w + 2 * c;
    const T g = dy[q];
    T out[4];
    if constexpr (K == Pool::avg) {
      const T share = add_rn(T(0), div_rn(g, T(4)));
#pragma unroll
      for (int k = 0; k < 4; ++k) out[k] = share;
    } else {
      const P2 top = *reinterpret_cast<const P2*>(x + row);
      const P2 bottom = *reinterpret_cast<const P2*>(x + row + p.w);
      const T v[4] = {top.x, top.y, bottom.x, bottom.y};
      if constexpr (K == Pool::max) {
        bool first = true;
        T best = T(0);
        int sel = 0;
#pragma unroll
        for (int k = 0; k < 4; ++k) max_step(v[k], k, first, best, sel);
        const T hit = add_rn(T(0), g);
#pragma unroll
        for (int k = 0; k < 4; ++k) out[k] = k == sel ? hit : T(0);
      } else {
        const bool upper = b > T(0);
        T pv = upper ? -infinity_t<T>() : infinity_t<T>();
#pragma unroll
        for (int k = 0; k < 4; ++k) pv = pivot_step(pv, v[k], upper);
        T e[4];
        T d = T(0);
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          e[k] = exp_t(mul_rn(sub_rn(v[k], pv), b));
          d = add_rn(d, e[k]);
        }
#pragma unroll
        for (int k = 0; k < 4; ++k) out[k] = add_rn(T(0), mul_rn(g, div_rn(e[k], d)));
      }
    }
    P2 top_out, bottom_out;
    top_out.x = out[0];
    top_out.y = out[1];
    bottom_out.x = out[2];
    bottom_out.y = out[3];
    *reinterpret_cast<P2*>(dx + row) = top_out;
    *reinterpret_cast<P2*>(dx + row + p.w) = bottom_out;
    if (step > total - q) break;
  }
}

// Overlapping windows on planes, 32-bit arithmetic (every extent, kernel, stride and padding
// small enough that r + padding + kernel stays below 2^32): the smooth-max statistics per output,
// and the gather backward, one thread per input position.
template <int KH, int KW, class T>
__global__ void plane_stats_kernel(const T* __restrict__ x, T* __restrict__ pivot,
                                   T* __restrict__ denominator, Planes<uint32_t> p, T b,
                                   uint32_t total) {
  const uint32_t step = gridDim.x * blockDim.x;
  for (uint32_t q = blockIdx.x * blockDim.x + threadIdx.x; q < total; q += step) {
    const PlaneWindow<uint32_t> w = plane_window(p, q);
    const Stats<T> st = plane_stats<KH, KW>(x + w.plane * (p.h * p.w), b, p, w);
    pivot[q] = st.pivot;
    denominator[q] = st.denominator;
    if (step > total - q) break;
  }
}

// The outputs [lo, hi] along one axis whose windows contain input coordinate i (lo > hi: none).
TLRT_DEVICE_INLINE void plane_range(uint32_t i, uint32_t k, uint32_t s, uint32_t pad, uint32_t out,
                                    uint32_t& lo, uint32_t& hi) {
  const uint32_t reach = i + pad + 1;  // o * s + k >= reach
  lo = reach > k ? (reach - k + s - 1) / s : 0;
  hi = (i + pad) / s;
  if (hi > out - 1) hi = out - 1;
}

template <Pool K, int KH, int KW, class T>
__global__ void plane_gather_kernel(const T* __restrict__ x, const T* __restrict__ dy,
                                    T* __restrict__ dx, const T* __restrict__ stats,
                                    Planes<uint32_t> p, T b, T divisor, uint32_t total,
                                    uint32_t out_count) {
  const uint32_t step = gridDim.x * blockDim.x;
  const uint32_t plane_in = p.h * p.w, plane_out = p.oh * p.ow;
  for (uint32_t q = blockIdx.x * blockDim.x + threadIdx.x; q < total; q += step) {
    const uint32_t c = q % p.w;
    const uint32_t t = q / p.w;
    const uint32_t r = t % p.h;
    const uint32_t plane = t / p.h;
    uint32_t rlo, rhi, clo, chi;
    plane_range(r, kernel_h<KH, KW>(p), p.sh, p.ph, p.oh, rlo, rhi);
    plane_range(c, kernel_w<KH, KW>(p), p.sw, p.pw, p.ow, clo, chi);
    const T* dyp = dy + plane * plane_out;
    T acc = T(0);
    if (rlo <= rhi && clo <= chi) {
      if constexpr (K == Pool::smooth) {
        // Increasing kernel offset = decreasing output position on both axes.
        const T xi = x[q];
        const T* piv = stats + plane * plane_out;
        const T* den = stats + out_count + plane * plane_out;
        for (uint32_t orow = rhi + 1; orow-- > rlo;) {
          for (uint32_t ocol = chi + 1; ocol-- > clo;) {
            const uint32_t at = orow * p.ow + ocol;
            const T weight = div_rn(exp_t(mul_rn(sub_rn(xi, piv[at]), b)), den[at]);
            acc = add_rn(acc, mul_rn(dyp[at], weight));
          }
        }
      } else {
        const T* xp = x == nullptr ? nullptr : x + plane * plane_in;
        const uint32_t here = r * p.w + c;
        for (uint32_t orow = rlo; orow <= rhi; ++orow) {
          for (uint32_t ocol = clo; ocol <= chi; ++ocol) {
            const uint32_t at = orow * p.ow + ocol;
            if constexpr (K == Pool::max) {
              PlaneWindow<uint32_t> w;
              w.plane = plane;
              w.r = orow;
              w.c = ocol;
              w.h0 = static_cast<int64_t>(orow) * p.sh - static_cast<int64_t>(p.ph);
              w.w0 = static_cast<int64_t>(ocol) * p.sw - static_cast<int64_t>(p.pw);
              T best = T(0);
              if (plane_max<KH, KW>(xp, p, w, best) == here) acc = add_rn(acc, dyp[at]);
            } else {
              acc = add_rn(acc, div_rn(dyp[at], divisor));
            }
          }
        }
      }
    }
    dx[q] = acc;
    if (step > total - q) break;
  }
}

// ---------------------------------------------------------------------------------------------
// General 3-D geometry, 64-bit indices.

struct Window3 {
  uint64_t c;
  int64_t o[kPoolAxes];
  int64_t start[kPoolAxes];
};

TLRT_DEVICE_INLINE Window3 window3(const PoolGeometry& g, uint64_t q) {
  Window3 w;
  uint64_t t = q;
  for (int a = kPoolAxes - 1; a >= 0; --a) {
    const uint64_t e = static_cast<uint64_t>(g.out[a]);
    w.o[a] = static_cast<int64_t>(t % e);
    t /= e;
  }
  w.c = t;
  for (int a = 0; a < kPoolAxes; ++a) w.start[a] = w.o[a] * g.stride[a] - g.padding[a];
  return w;
}

TLRT_DEVICE_INLINE uint64_t offset3(const PoolGeometry& g, int64_t i0, int64_t i1, int64_t i2) {
  return (static_cast<uint64_t>(i0) * static_cast<uint64_t>(g.in[1]) + static_cast<uint64_t>(i1)) *
             static_cast<uint64_t>(g.in[2]) +
         static_cast<uint64_t>(i2);
}

// Calls f(value or literal 0, offset in the channel or -1) for every kernel offset, row-major.
template <class T, class F>
TLRT_DEVICE_INLINE void offsets3(const T* xc, const PoolGeometry& g, const Window3& w, F&& f) {
  for (int64_t a = 0; a < g.kernel[0]; ++a) {
    const int64_t i0 = w.start[0] + a;
    const bool ok0 = i0 >= 0 && i0 < g.in[0];
    for (int64_t b = 0; b < g.kernel[1]; ++b) {
      const int64_t i1 = w.start[1] + b;
      const bool ok1 = ok0 && i1 >= 0 && i1 < g.in[1];
      for (int64_t c = 0; c < g.kernel[2]; ++c) {
        const int64_t i2 = w.start[2] + c;
        if (ok1 && i2 >= 0 && i2 < g.in[2]) {
          const uint64_t at = offset3(g, i0, i1, i2);
          f(xc[at], static_cast<int64_t>(at));
        } else {
          f(T(0), int64_t{-1});
        }
      }
    }
  }
}

// Valid positions only, row-major (the loops are clamped to the input).
template <class T, class F>
TLRT_DEVICE_INLINE void valid3(const T* xc, const PoolGeometry& g, const Window3& w, F&& f) {
  int64_t lo[kPoolAxes], hi[kPoolAxes];
  for (int a = 0; a < kPoolAxes; ++a) {
    lo[a] = w.start[a] < 0 ? 0 : w.start[a];
    const int64_t end = w.start[a] + g.kernel[a];
    hi[a] = end < g.in[a] ? end : g.in[a];
  }
  for (int64_t i0 = lo[0]; i0 < hi[0]; ++i0) {
    for (int64_t i1 = lo[1]; i1 < hi[1]; ++i1) {
      for (int64_t i2 = lo[2]; i2 < hi[2]; ++i2) {
        const uint64_t at = offset3(g, i0, i1, i2);
        f(xc[at], at);
      }
    }
  }
}

template <class T>
TLRT_DEVICE_INLINE uint64_t max3(const T* xc, const PoolGeometry& g, const Window3& w, T& best) {
  bool first = true;
  uint64_t sel = 0;
  valid3(xc, g, w, [&](T v, uint64_t at) { max_step(v, at, first, best, sel); });
  return sel;
}

template <class T>
TLRT_DEVICE_INLINE Stats<T> stats3(const T* xc, T b, const PoolGeometry& g, const Window3& w) {
  const bool upper = b > T(0);
  T pv = upper ? -infinity_t<T>() : infinity_t<T>();
  offsets3(xc, g, w, [&](T v, int64_t) { pv = pivot_step(pv, v, upper); });
  T d = T(0);
  offsets3(xc, g, w, [&](T v, int64_t) { d = add_rn(d, exp_t(mul_rn(sub_rn(v, pv), b))); });
  return {pv, d};
}

template <class F>
TLRT_DEVICE_INLINE void grid_loop(uint64_t total, F&& f) {
  const uint64_t step = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t q = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; q < total;
       q += step) {
    f(q);
  }
}

template <Pool K, class T>
__global__ void fwd3_kernel(const T* __restrict__ x, T* __restrict__ y, PoolGeometry g, T b,
                            T inv_b, T divisor, uint64_t total) {
  grid_loop(total, [&](uint64_t q) {
    const Window3 w = window3(g, q);
    const T* xc = x + w.c * g.in_volume;
    if constexpr (K == Pool::max) {
      T best = T(0);
      max3(xc, g, w, best);
      y[q] = best;
    } else if constexpr (K == Pool::avg) {
      T s = T(0);
      valid3(xc, g, w, [&](T v, uint64_t) { s = add_rn(s, v); });
      y[q] = div_rn(s, divisor);
    } else {
      const Stats<T> st = stats3(xc, b, g, w);
      y[q] = add_rn(st.pivot, mul_rn(log_t(st.denominator), inv_b));
    }
  });
}

// Smooth max statistics per output (the overlapping backward's first pass).
template <class T>
__global__ void stats3_kernel(const T* __restrict__ x, T* __restrict__ pivot,
                              T* __restrict__ denominator, PoolGeometry g, T b, uint64_t total) {
  grid_loop(total, [&](uint64_t q) {
    const Window3 w = window3(g, q);
    const Stats<T> st = stats3(x + w.c * g.in_volume, b, g, w);
    pivot[q] = st.pivot;
    denominator[q] = st.denominator;
  });
}

// Disjoint windows: one thread per window writes each valid position of it once.
template <Pool K, class T>
__global__ void bwd3_disjoint_kernel(const T* __restrict__ x, const T* __restrict__ dy,
                                     T* __restrict__ dx, PoolGeometry g, T b, T divisor,
                                     uint64_t total) {
  grid_loop(total, [&](uint64_t q) {
    const Window3 w = window3(g, q);
    const T* xc = x == nullptr ? nullptr : x + w.c * g.in_volume;
    T* dxc = dx + w.c * g.in_volume;
    const T grad = dy[q];
    if constexpr (K == Pool::max) {
      T best = T(0);
      const uint64_t sel = max3(xc, g, w, best);
      const T hit = add_rn(T(0), grad);
      valid3(xc, g, w, [&](T, uint64_t at) { dxc[at] = at == sel ? hit : T(0); });
    } else if constexpr (K == Pool::avg) {
      const T share = add_rn(T(0), div_rn(grad, divisor));
      int64_t lo[kPoolAxes], hi[kPoolAxes];
      for (int a = 0; a < kPoolAxes; ++a) {
        lo[a] = w.start[a] < 0 ? 0 : w.start[a];
        const int64_t end = w.start[a] + g.kernel[a];
        hi[a] = end < g.in[a] ? end : g.in[a];
      }
      for (int64_t i0 = lo[0]; i0 < hi[0]; ++i0) {
        for (int64_t i1 = lo[1]; i1 < hi[1]; ++i1) {
          for (int64_t i2 = lo[2]; i2 < hi[2]; ++i2) dxc[offset3(g, i0, i1, i2)] = share;
        }
      }
    } else {
      const Stats<T> st = stats3(xc, b, g, w);
      valid3(xc, g, w, [&](T v, uint64_t at) {
        const T weight = div_rn(exp_t(mul_rn(sub_rn(v, st.pivot), b)), st.denominator);
        dxc[at] = add_rn(T(0), mul_rn(grad, weight));
      });
    }
  });
}

// The output range [lo, hi] per axis of the windows that contain input coordinate i (empty when
// lo > hi).
TLRT_DEVICE_INLINE void windows_of(const PoolGeometry& g, int a, int64_t i, int64_t& lo,
                                   int64_t& hi) {
  const int64_t first = i + g.padding[a] - g.kernel[a] + 1;  // o * s >= first
  lo = first <= 0 ? 0 : (first + g.stride[a] - 1) / g.stride[a];
  hi = (i + g.padding[a]) / g.stride[a];
  if (hi > g.out[a] - 1) hi = g.out[a] - 1;
}

// Overlapping windows: one thread per input position gathers from the windows containing it.
// stats holds pivot then denominator per output (smooth max only).
template <Pool K, class T>
__global__ void bwd3_gather_kernel(const T* __restrict__ x, const T* __restrict__ dy,
                                   T* __restrict__ dx, const T* __restrict__ stats, PoolGeometry g,
                                   T b, T divisor, uint64_t total) {
  const uint64_t out_count = g.channels * g.out_volume;
  grid_loop(total, [&](uint64_t q) {
    uint64_t t = q;
    int64_t i[kPoolAxes];
    for (int a = kPoolAxes - 1; a >= 0; --a) {
      const uint64_t e = static_cast<uint64_t>(g.in[a]);
      i[a] = static_cast<int64_t>(t % e);
      t /= e;
    }
    const uint64_t c = t;
    const uint64_t here = q - c * g.in_volume;
    const T* xc = x == nullptr ? nullptr : x + c * g.in_volume;
    const T* dyc = dy + c * g.out_volume;
    int64_t lo[kPoolAxes], hi[kPoolAxes];
    for (int a = 0; a < kPoolAxes; ++a) windows_of(g, a, i[a], lo[a], hi[a]);
    T acc = T(0);
    if constexpr (K == Pool::smooth) {
      // Increasing kernel offset = decreasing output position on every axis.
      const T xi = xc[here];
      for (int64_t o0 = hi[0]; o0 >= lo[0]; --o0) {
        for (int64_t o1 = hi[1]; o1 >= lo[1]; --o1) {
          for (int64_t o2 = hi[2]; o2 >= lo[2]; --o2) {
            const uint64_t at = (static_cast<uint64_t>(o0) * static_cast<uint64_t>(g.out[1]) +
                                 static_cast<uint64_t>(o1)) *
                                    static_cast<uint64_t>(g.out[2]) +
                                static_cast<uint64_t>(o2);
            const uint64_t s = c * g.out_volume + at;
            const T weight = div_rn(exp_t(mul_rn(sub_rn(xi, stats[s]), b)), stats[out_count + s]);
            acc = add_rn(acc, mul_rn(dyc[at], weight));
          }
        }
      }
    } else {
      for (int64_t o0 = lo[0]; o0 <= hi[0]; ++o0) {
        for (int64_t o1 = lo[1]; o1 <= hi[1]; ++o1) {
          for (int64_t o2 = lo[2]; o2 <= hi[2]; ++o2) {
            const uint64_t at = (static_cast<uint64_t>(o0) * static_cast<uint64_t>(g.out[1]) +
                                 static_cast<uint64_t>(o1)) *
                                    static_cast<uint64_t>(g.out[2]) +
                                static_cast<uint64_t>(o2);
            if constexpr (K == Pool::max) {
              Window3 w;
              w.c = c;
              w.o[0] = o0;
              w.o[1] = o1;
              w.o[2] = o2;
              for (int a = 0; a < kPoolAxes; ++a) {
                w.start[a] = w.o[a] * g.stride[a] - g.padding[a];
              }
              T best = T(0);
              if (max3(xc, g, w, best) == here) acc = add_rn(acc, dyc[at]);
            } else {
              acc = add_rn(acc, div_rn(dyc[at], divisor));
            }
          }
        }
      }
    }
    dx[q] = acc;
  });
}

// ---------------------------------------------------------------------------------------------
// Launch selection

// The windows tile the input exactly (every position in exactly one window).
bool exact_tiling(const PoolGeometry& g) {
  for (int a = 0; a < kPoolAxes; ++a) {
    if (g.stride[a] != g.kernel[a] || g.padding[a] != 0 || g.out[a] * g.stride[a] != g.in[a]) {
      return false;
    }
  }
  return true;
}

const char* fwd_name(Pool k) {
  return k == Pool::max ? "maxpool_fwd" : k == Pool::avg ? "avgpool_fwd" : "smooth_maxpool_fwd";
}
const char* bwd_name(Pool k) {
  return k == Pool::max ? "maxpool_bwd" : k == Pool::avg ? "avgpool_bwd" : "smooth_maxpool_bwd";
}

template <Pool K, int KH, int KW, class T, class I>
void launch_plane_fwd(const T* x, T* y, const PoolGeometry& g, T b, T inv_b, T divisor,
                      cudaStream_t s) {
  const Planes<I> p = planes_of<I>(g);
  const I total = static_cast<I>(g.channels * g.out_volume);
  plane_fwd_kernel<K, KH, KW, T, I>
      <<<grid_for(total, kThreads), kThreads, 0, s>>>(x, y, p, b, inv_b, divisor, total);
}

template <Pool K, class T, class I>
void launch_plane_fwd_any(const T* x, T* y, const PoolGeometry& g, T b, T inv_b, T divisor,
                          cudaStream_t s) {
  if (g.kernel[1] == 2 && g.kernel[2] == 2) {
    launch_plane_fwd<K, 2, 2, T, I>(x, y, g, b, inv_b, divisor, s);
  } else if (g.kernel[1] == 3 && g.kernel[2] == 3) {
    launch_plane_fwd<K, 3, 3, T, I>(x, y, g, b, inv_b, divisor, s);
  } else {
    launch_plane_fwd<K, 0, 0, T, I>(x, y, g, b, inv_b, divisor, s);
  }
}

template <Pool K, class T>
void pool_fwd(const T* x, T* y, const PoolGeometry& g, T b, CUstream_st* stream) {
  const uint64_t total = g.channels * g.out_volume;
  if (total == 0) return;
  cudaStream_t s = stream;
  const T inv_b = K == Pool::smooth ? T(1) / b : T(0);  // IEEE division on the host
  const T divisor = static_cast<T>(g.kernel_volume);
  if constexpr (K == Pool::smooth) {
    if (smooth_planes_fwd<T>(x, y, g, b, inv_b, s)) {
      check_launch(fwd_name(K));
      return;
    }
  }
  if (pairs_2x2<T>(g, x) && fits32(g)) {
    const Planes<uint32_t> p = planes_of<uint32_t>(g);
    plane_fwd_2x2_kernel<K, T, uint32_t><<<grid_for(total, kThreads), kThreads, 0, s>>>(
        x, y, p, b, inv_b, static_cast<uint32_t>(total));
  } else if (planar(g) && fits32(g)) {
    launch_plane_fwd_any<K, T, uint32_t>(x, y, g, b, inv_b, divisor, s);
  } else if (planar(g)) {
    launch_plane_fwd_any<K, T, uint64_t>(x, y, g, b, inv_b, divisor, s);
  } else {
    fwd3_kernel<K, T>
        <<<grid_for(total, kThreads), kThreads, 0, s>>>(x, y, g, b, inv_b, divisor, total);
  }
  check_launch(fwd_name(K));
}

template <Pool K, int KH, int KW, class T>
void plane_bwd_overlapping(const T* x, const T* dy, T* dx, void* workspace, const PoolGeometry& g,
                           T b, T divisor, cudaStream_t s) {
  const Planes<uint32_t> p = planes_of<uint32_t>(g);
  const uint32_t in_count = static_cast<uint32_t>(g.channels * g.in_volume);
  const uint32_t out_count = static_cast<uint32_t>(g.channels * g.out_volume);
  T* stats = nullptr;
  if constexpr (K == Pool::smooth) {
    stats = static_cast<T*>(workspace);
    plane_stats_kernel<KH, KW, T><<<grid_for(out_count, kThreads), kThreads, 0, s>>>(
        x, stats, stats + out_count, p, b, out_count);
    check_launch(bwd_name(K));
  } else {
    (void)workspace;
  }
  plane_gather_kernel<K, KH, KW, T><<<grid_for(in_count, kThreads), kThreads, 0, s>>>(
      x, dy, dx, stats, p, b, divisor, in_count, out_count);
}

template <Pool K, class T>
void pool_bwd(const T* x, const T* dy, T* dx, void* workspace, const PoolGeometry& g, T b,
              CUstream_st* stream) {
  const uint64_t in_count = g.channels * g.in_volume;
  const uint64_t out_count = g.channels * g.out_volume;
  if (in_count == 0) return;
  cudaStream_t s = stream;
  const T divisor = static_cast<T>(g.kernel_volume);
  const char* op = bwd_name(K);
  if (pool_windows_disjoint(g)) {
    const bool tiled = exact_tiling(g);
    if (tiled && pairs_2x2<T>(g, dx) && (x == nullptr || pairs_2x2<T>(g, x)) && fits32(g)) {
      const Planes<uint32_t> p = planes_of<uint32_t>(g);
      plane_bwd_2x2_kernel<K, T, uint32_t><<<grid_for(out_count, kThreads), kThreads, 0, s>>>(
          x, dy, dx, p, b, static_cast<uint32_t>(out_count));
    } else {
      if (!tiled)
        check_cuda(cudaMemsetAsync(dx, 0, in_count * sizeof(T), s), op, "cudaMemsetAsync");
      if (out_count != 0) {
        bwd3_disjoint_kernel<K, T><<<grid_for(out_count, kThreads), kThreads, 0, s>>>(
            x, dy, dx, g, b, divisor, out_count);
      }
    }
    check_launch(op);
    return;
  }
  if constexpr (K == Pool::smooth) {
    if (smooth_planes_bwd<T>(x, dy, dx, g, b, s, op)) {
      check_launch(op);
      return;
    }
  }
  if (planar(g) && fits32(g) && small_planes(g)) {
    if (g.kernel[1] == 3 && g.kernel[2] == 3) {
      plane_bwd_overlapping<K, 3, 3, T>(x, dy, dx, workspace, g, b, divisor, s);
    } else if (g.kernel[1] == 2 && g.kernel[2] == 2) {
      plane_bwd_overlapping<K, 2, 2, T>(x, dy, dx, workspace, g, b, divisor, s);
    } else {
      plane_bwd_overlapping<K, 0, 0, T>(x, dy, dx, workspace, g, b, divisor, s);
    }
    check_launch(op);
    return;
  }
  const T* stats = nullptr;
  if constexpr (K == Pool::smooth) {
    T* pivot = static_cast<T*>(workspace);
    stats3_kernel<T><<<grid_for(out_count, kThreads), kThreads, 0, s>>>(x, pivot, pivot + out_count,
                                                                        g, b, out_count);
    check_launch(op);
    stats = pivot;
  }
  bwd3_gather_kernel<K, T>
      <<<grid_for(in_count, kThreads), kThreads, 0, s>>>(x, dy, dx, stats, g, b, divisor, in_count);
  check_launch(op);
}

}  // namespace

uint64_t smooth_maxpool_bwd_workspace_bytes(const PoolGeometry& g, size_t element_bytes) {
  if (pool_windows_disjoint(g) || smooth_planes_bwd_takes(g, element_bytes)) {
    return 0;
  }
  return 2 * g.channels * g.out_volume * element_bytes;
}

template <class T>
void maxpool_fwd_cuda(const T* x, T* y, const PoolGeometry& g, CUstream_st* stream) {
  pool_fwd<Pool::max, T>(x, y, g, T(0), stream);
}
template <class T>
void maxpool_bwd_cuda(const T* x, const T* dy, T* dx, const PoolGeometry& g, CUstream_st* stream) {
  pool_bwd<Pool::max, T>(x, dy, dx, nullptr, g, T(0), stream);
}
template <class T>
void avgpool_fwd_cuda(const T* x, T* y, const PoolGeometry& g, CUstream_st* stream) {
  pool_fwd<Pool::avg, T>(x, y, g, T(0), stream);
}
template <class T>
void avgpool_bwd_cuda(const T* dy, T* dx, const PoolGeometry& g, CUstream_st* stream) {
  pool_bwd<Pool::avg, T>(nullptr, dy, dx, nullptr, g, T(0), stream);
}
template <class T>
void smooth_maxpool_fwd_cuda(const T* x, T b, T* y, const PoolGeometry& g, CUstream_st* stream) {
  pool_fwd<Pool::smooth, T>(x, y, g, b, stream);
}
template <class T>
void smooth_maxpool_bwd_cuda(const T* x, const T* dy, T b, T* dx, void* workspace,
                             const PoolGeometry& g, CUstream_st* stream) {
  pool_bwd<Pool::smooth, T>(x, dy, dx, workspace, g, b, stream);
}

#define TLRT_POOL_CUDA(T)                                                                         \
  template void maxpool_fwd_cuda<T>(const T*, T*, const PoolGeometry&, CUstream_st*);             \
  template void maxpool_bwd_cuda<T>(const T*, const T*, T*, const PoolGeometry&, CUstream_st*);   \
  template void avgpool_fwd_cuda<T>(const T*, T*, const PoolGeometry&, CUstream_st*);             \
  template void avgpool_bwd_cuda<T>(const T*, T*, const PoolGeometry&, CUstream_st*);             \
  template void smooth_maxpool_fwd_cuda<T>(const T*, T, T*, const PoolGeometry&, CUstream_st*);   \
  template void smooth_maxpool_bwd_cuda<T>(const T*, const T*, T, T*, void*, const PoolGeometry&, \
                                           CUstream_st*);
TLRT_POOL_CUDA(float)
TLRT_POOL_CUDA(double)
#undef TLRT_POOL_CUDA

}  // namespace tlrt::kernels
