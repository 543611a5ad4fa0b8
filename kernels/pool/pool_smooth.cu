// Pooling, CUDA backend: smooth max pooling on planes through shared-memory tiles and the 2x2
// stride 2 groups, and the choice among them and the float32 streaming kernels of
// kernels/pool/pool_stream.cu (the overview is at the top of kernels/pool/pool.cu, which takes
// every other call).
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
#include "kernels/pool/pool_smooth_shared.cuh"

namespace tlrt::kernels {
namespace {

using namespace pool_detail;

// ---------------------------------------------------------------------------------------------
// Smooth max pooling on planes through shared-memory tiles (compile-time kernel and stride).
//
// A block stages an input region in shared memory with the literal 0 at padding positions (and
// anywhere outside the plane), which is exactly v_kappa, so no window needs a bounds check. A
// thread takes a group of G horizontally adjacent outputs, G = one 16-byte vector of T: it reads
// the rows its windows cover into registers once with 16-byte loads, forms the pivots separably
// (column pivots shared by the group's windows: the NaN-ignoring max / min with +0 above -0 is the
// maximum / minimum of a total order with NaN left out, so its grouping does not change its
// bits), then D of each window in row-major kernel order, exactly as plane_stats.
//
// Backward (overlapping windows): a block owns an input tile. It computes, for every output whose
// window meets the tile, the terms t[o][kappa] = fl(dY[o] * fl(exp(fl(fl(v_kappa - P) * b)) / D))
// (the values the gather form adds for input o*s + kappa - p, one exp and one division each),
// keeps them in shared memory, and each input then adds its terms from +0 in increasing kappa.
// Window positions whose output lies outside the output range hold +0: an accumulator started at
// +0 is never -0 (a rounded sum is -0 only when both addends are), so adding +0 leaves its bits
// unchanged and the sum equals the gather form's, which skips those windows. No workspace.

template <class T>
constexpr int kGroup = static_cast<int>(16 / sizeof(T));

TLRT_DEVICE_INLINE void load16(const float* p, float* v) {
  const float4 q = *reinterpret_cast<const float4*>(p);
  v[0] = q.x;
  v[1] = q.y;
  v[2] = q.z;
  v[3] = q.w;
}
TLRT_DEVICE_INLINE void load16(const double* p, double* v) {
  const double2 q = *reinterpret_cast<const double2*>(p);
  v[0] = q.x;
  v[1] = q.y;
}

// One 16-byte store to shared memory at a 16-byte aligned address (written out as one vector
// store: the compiler splits the plain form when it cannot prove the alignment).
TLRT_DEVICE_INLINE void put16_shared(float* p, const float* v) {
#if defined(__CUDA_ARCH__)
  const unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(p));
  asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(at), "f"(v[0]), "f"(v[1]),
               "f"(v[2]), "f"(v[3])
               : "memory");
#else
  store16(p, v);
#endif
}
TLRT_DEVICE_INLINE void put16_shared(double* p, const double* v) {
#if defined(__CUDA_ARCH__)
  const unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(p));
  asm volatile("st.shared.v2.f64 [%0], {%1, %2};" ::"r"(at), "d"(v[0]), "d"(v[1]) : "memory");
#else
  store16(p, v);
#endif
}

// N consecutive values from a 16-byte aligned shared-memory row (reading on to the next multiple
// of the vector width, which every region pitch covers).
template <int N, class T>
TLRT_DEVICE_INLINE void load_row(const T* p, T (&v)[N]) {
  constexpr int G = kGroup<T>;
  constexpr int NV = (N + G - 1) / G;
  T buf[NV * G];
#pragma unroll
  for (int k = 0; k < NV; ++k) load16(p + k * G, buf + k * G);
#pragma unroll
  for (int k = 0; k < N; ++k) v[k] = buf[k];
}

// The values of a group's windows: KH rows of NC columns from `win` (row pitch `pitch`), and the
// pivots of its G windows (window k starts at column k * SW).
template <bool Upper, int KH, int KW, int SW, class T, int NC>
TLRT_DEVICE_INLINE void group_pivots(const T* win, uint32_t pitch, T (&v)[KH][NC],
                                     T (&pv)[kGroup<T>]) {
  constexpr int G = kGroup<T>;
#pragma unroll
  for (int a = 0; a < KH; ++a) load_row(win + a * pitch, v[a]);
  T col[NC];
#pragma unroll
  for (int j = 0; j < NC; ++j) {
    col[j] = pivot_first<Upper>(v[0][j]);
#pragma unroll
    for (int a = 1; a < KH; ++a) col[j] = pivot_join<Upper>(col[j], v[a][j]);
  }
#pragma unroll
  for (int k = 0; k < G; ++k) {
    pv[k] = col[k * SW];
#pragma unroll
    for (int c = 1; c < KW; ++c) pv[k] = pivot_join<Upper>(pv[k], col[k * SW + c]);
  }
}

// Forward of one group: out[k] = fl(P + fl(log(D) * fl(1/b))).
template <bool Upper, int KH, int KW, int SW, class T>
TLRT_DEVICE_INLINE void smooth_group_fwd(const T* win, uint32_t pitch, T b, T inv_b,
                                         T (&out)[kGroup<T>]) {
  constexpr int G = kGroup<T>;
  constexpr int NC = (G - 1) * SW + KW;
  T v[KH][NC];
  T pv[G];
  group_pivots<Upper, KH, KW, SW>(win, pitch, v, pv);
#pragma unroll
  for (int k = 0; k < G; ++k) {
    T d = T(0);
#pragma unroll
    for (int a = 0; a < KH; ++a) {
#pragma unroll
      for (int c = 0; c < KW; ++c) d = add_rn(d, exp_t(mul_rn(sub_rn(v[a][k * SW + c], pv[k]), b)));
    }
    out[k] = add_rn(pv[k], mul_rn(log_t(d), inv_b));
  }
}

// Backward terms of one group: terms + kappa * kstride receives, for the G windows,
// fl(dy * fl(exp(fl(fl(v_kappa - P) * b)) / D)) where the output is valid and +0 elsewhere.
template <bool Upper, int KH, int KW, int SW, class T>
TLRT_DEVICE_INLINE void smooth_group_terms(const T* win, uint32_t pitch, const T* dyv,
                                           const bool (&valid)[kGroup<T>], T b, T* terms,
                                           uint32_t kstride) {
  constexpr int G = kGroup<T>;
  constexpr int NC = (G - 1) * SW + KW;
  T v[KH][NC];
  T pv[G];
  group_pivots<Upper, KH, KW, SW>(win, pitch, v, pv);
  T e[KH * KW][G];
  T d[G];
#pragma unroll
  for (int k = 0; k < G; ++k) {
    d[k] = T(0);
#pragma unroll
    for (int a = 0; a < KH; ++a) {
#pragma unroll
      for (int c = 0; c < KW; ++c) {
        e[a * KW + c][k] = exp_t(mul_rn(sub_rn(v[a][k * SW + c], pv[k]), b));
        d[k] = add_rn(d[k], e[a * KW + c][k]);
      }
    }
  }
  T dy[G];
  load16(dyv, dy);
#pragma unroll
  for (int kappa = 0; kappa < KH * KW; ++kappa) {
    T t[G];
#pragma unroll
    for (int k = 0; k < G; ++k) t[k] = keep_if(valid[k], mul_rn(dy[k], div_rn(e[kappa][k], d[k])));
    put16_shared(terms + kappa * kstride, t);
  }
}

template <class T>
TLRT_DEVICE_INLINE T* pool_shared() {
  extern __shared__ __align__(16) unsigned char pool_shared_bytes[];
  return reinterpret_cast<T*>(pool_shared_bytes);
}

// Stages rows x pitch values of a plane (extent h x w) from (r0, c0) on, the plane's value inside
// it and the literal 0 outside; the block's threads cover it row by row (threadIdx.y) and column
// by column (threadIdx.x).
template <class T>
TLRT_DEVICE_INLINE void stage_region(T* dst, const T* __restrict__ src, int32_t r0, int32_t c0,
                                     uint32_t rows, uint32_t pitch, uint32_t h, uint32_t w) {
  for (uint32_t r = threadIdx.y; r < rows; r += blockDim.y) {
    const uint32_t gr = static_cast<uint32_t>(r0 + static_cast<int32_t>(r));
    const bool row_in = gr < h;
    const T* row = src + gr * w;
    for (uint32_t c = threadIdx.x; c < pitch; c += blockDim.x) {
      const uint32_t gc = static_cast<uint32_t>(c0 + static_cast<int32_t>(c));
      dst[r * pitch + c] = row_in && gc < w ? row[gc] : T(0);
    }
  }
}

// Blocks per SM that the tile kernels ask ptxas to allow for (0: no requirement). The float
// forward keeps ptxas's own choice; the float backward has shared memory for three blocks per SM
// (kSmoothBwdSmem); double gets the registers its window values need without spilling.
template <class T>
constexpr int kFwdTileMinBlocks = sizeof(T) == 8 ? 1 : 0;
template <class T>
constexpr int kBwdTileMinBlocks = sizeof(T) == 8 ? 1 : 3;

// Forward: a block of (tile_w / G) x tile_h threads computes one output tile per iteration.
template <int KH, int KW, int SH, int SW, class T>
__global__ void __launch_bounds__(256, kFwdTileMinBlocks<T>)
    smooth_tile_fwd_kernel(const T* __restrict__ x, T* __restrict__ y, SmoothPlan p, T b, T inv_b) {
  constexpr int G = kGroup<T>;
  T* xs = pool_shared<T>();
  const bool upper = b > T(0);
  const bool y16 = (reinterpret_cast<uintptr_t>(y) & 15u) == 0;
  const uint32_t ox0 = blockIdx.x * p.tile_w;
  const uint32_t ox = ox0 + threadIdx.x * G;
  const T* win = xs + threadIdx.y * SH * p.region_pitch + threadIdx.x * G * SW;
  for (uint32_t plane = blockIdx.z; plane < p.planes; plane += gridDim.z) {
    for (uint32_t ty = blockIdx.y; ty < p.tiles_y; ty += gridDim.y) {
      const uint32_t oy0 = ty * p.tile_h;
      stage_region(xs, x + plane * (p.h * p.w), static_cast<int32_t>(oy0 * SH) - p.ph,
                   static_cast<int32_t>(ox0 * SW) - p.pw, p.region_h, p.region_pitch, p.h, p.w);
      __syncthreads();
      const uint32_t oy = oy0 + threadIdx.y;
      if (oy < p.oh && ox < p.ow) {
        T out[G];
        if (upper) {
          smooth_group_fwd<true, KH, KW, SW>(win, p.region_pitch, b, inv_b, out);
        } else {
          smooth_group_fwd<false, KH, KW, SW>(win, p.region_pitch, b, inv_b, out);
        }
        const uint32_t at = (plane * p.oh + oy) * p.ow + ox;
        if (y16 && p.ow - ox >= static_cast<uint32_t>(G) && at % G == 0) {
          store16(y + at, out);
        } else {
#pragma unroll
          for (int k = 0; k < G; ++k) {
            if (ox + k < p.ow) y[at + k] = out[k];
          }
        }
      }
      __syncthreads();
    }
  }
}

// Backward, overlapping windows: a block of p.block threads owns a tile_h x tile_w input tile;
// blockDim.x is the number of groups in a row of the windows meeting the tile. Shared memory:
// the input region of those windows (region_h x region_pitch), their dY (ext_h x ext_pitch, 0
// outside the output range) and their terms (KH * KW planes of ext_h x ext_pitch).
template <int KH, int KW, int SH, int SW, class T>
__global__ void __launch_bounds__(256, kBwdTileMinBlocks<T>)
    smooth_tile_bwd_kernel(const T* __restrict__ x, const T* __restrict__ dy, T* __restrict__ dx,
                           SmoothPlan p, T b) {
  constexpr int G = kGroup<T>;
  T* xs = pool_shared<T>();
  T* ds = xs + p.region_h * p.region_pitch;
  T* ts = ds + p.ext_h * p.ext_pitch;
  const uint32_t kstride = p.ext_h * p.ext_pitch;
  const bool upper = b > T(0);
  const uint32_t c0 = blockIdx.x * p.tile_w;  // a multiple of SW
  const int32_t ox_lo = static_cast<int32_t>(c0 / SW) + p.off_x;
  const uint32_t ec = threadIdx.x * G;
  for (uint32_t plane = blockIdx.z; plane < p.planes; plane += gridDim.z) {
    for (uint32_t ty = blockIdx.y; ty < p.tiles_y; ty += gridDim.y) {
      const uint32_t r0 = ty * p.tile_h;  // a multiple of SH
      const int32_t oy_lo = static_cast<int32_t>(r0 / SH) + p.off_y;
      stage_region(xs, x + plane * (p.h * p.w), oy_lo * SH - p.ph, ox_lo * SW - p.pw, p.region_h,
                   p.region_pitch, p.h, p.w);
      stage_region(ds, dy + plane * (p.oh * p.ow), oy_lo, ox_lo, p.ext_h, p.ext_pitch, p.oh, p.ow);
      __syncthreads();
      // Terms of every window meeting the tile, a group of G adjacent outputs per thread and row.
      for (uint32_t er = threadIdx.y; er < p.ext_h; er += blockDim.y) {
        const uint32_t orow = static_cast<uint32_t>(oy_lo + static_cast<int32_t>(er));
        const int32_t ocol = ox_lo + static_cast<int32_t>(ec);
        bool valid[G];
        bool any = false;
#pragma unroll
        for (int k = 0; k < G; ++k) {
          valid[k] = orow < p.oh && static_cast<uint32_t>(ocol + k) < p.ow;
          any = any || valid[k];
        }
        T* terms = ts + er * p.ext_pitch + ec;
        if (any) {
          const T* win = xs + er * SH * p.region_pitch + ec * SW;
          const T* dyv = ds + er * p.ext_pitch + ec;
          if (upper) {
            smooth_group_terms<true, KH, KW, SW>(win, p.region_pitch, dyv, valid, b, terms,
                                                 kstride);
          } else {
            smooth_group_terms<false, KH, KW, SW>(win, p.region_pitch, dyv, valid, b, terms,
                                                  kstride);
          }
        } else {
          T zero[G];
#pragma unroll
          for (int k = 0; k < G; ++k) zero[k] = T(0);
#pragma unroll
          for (int kappa = 0; kappa < KH * KW; ++kappa) put16_shared(terms + kappa * kstride, zero);
        }
      }
      __syncthreads();
      // Each input adds its terms from +0 in increasing kernel offset (decreasing output
      // position).
      for (uint32_t ri = threadIdx.y; ri < p.tile_h; ri += blockDim.y) {
        const uint32_t r = r0 + ri;
        if (r >= p.h) break;
        for (uint32_t ci = threadIdx.x; ci < p.tile_w; ci += blockDim.x) {
          const uint32_t c = c0 + ci;
          if (c >= p.w) break;
          T acc = T(0);
#pragma unroll
          for (int a = 0; a < KH; ++a) {
            // (r + ph - a) / SH is an output row when SH divides it; shifted to stay unsigned.
            const uint32_t ua = ri + static_cast<uint32_t>(p.ph) + (SH * KH - a);
            if (SH > 1 && ua % SH != 0) continue;
            const uint32_t er = static_cast<uint32_t>(static_cast<int32_t>(ua / SH) - KH - p.off_y);
#pragma unroll
            for (int k = 0; k < KW; ++k) {
              const uint32_t uc = ci + static_cast<uint32_t>(p.pw) + (SW * KW - k);
              if (SW > 1 && uc % SW != 0) continue;
              const uint32_t e =
                  static_cast<uint32_t>(static_cast<int32_t>(uc / SW) - KW - p.off_x);
              acc = add_rn(acc, ts[(a * KW + k) * kstride + er * p.ext_pitch + e]);
            }
          }
          dx[(plane * p.h + r) * p.w + c] = acc;
        }
      }
      __syncthreads();
    }
  }
}

// 2x2 stride 2 without padding, width a multiple of 2G, 16-byte aligned operands: a thread
// computes G adjacent outputs from two 16-byte loads per input row and stores them as one.
template <class T>
__global__ void smooth_2x2_group_kernel(const T* __restrict__ x, T* __restrict__ y, uint32_t w,
                                        uint32_t groups_per_row, uint32_t groups, T b, T inv_b) {
  constexpr int G = kGroup<T>;
  const uint32_t step = gridDim.x * blockDim.x;
  const bool upper = b > T(0);
  for (uint32_t q = blockIdx.x * blockDim.x + threadIdx.x; q < groups; q += step) {
    const uint32_t t = q / groups_per_row;  // output row in the stacked planes
    const uint32_t at = 2 * t * w + 2 * G * (q - t * groups_per_row);
    T top[2 * G], bottom[2 * G];
    load16(x + at, top);
    load16(x + at + G, top + G);
    load16(x + at + w, bottom);
    load16(x + at + w + G, bottom + G);
    T out[G];
#pragma unroll
    for (int k = 0; k < G; ++k) {
      const T v[4] = {top[2 * k], top[2 * k + 1], bottom[2 * k], bottom[2 * k + 1]};
      T pv;
      if (upper) {
        pv = pivot_join<true>(pivot_join<true>(pivot_first<true>(v[0]), v[1]),
                              pivot_join<true>(pivot_first<true>(v[2]), v[3]));
      } else {
        pv = pivot_join<false>(pivot_join<false>(pivot_first<false>(v[0]), v[1]),
                               pivot_join<false>(pivot_first<false>(v[2]), v[3]));
      }
      T d = T(0);
#pragma unroll
      for (int j = 0; j < 4; ++j) d = add_rn(d, exp_t(mul_rn(sub_rn(v[j], pv), b)));
      out[k] = add_rn(pv, mul_rn(log_t(d), inv_b));
    }
    store16(y + static_cast<size_t>(q) * G, out);
    if (step > groups - q) break;
  }
}

// ---------------------------------------------------------------------------------------------
// Launch selection

// Smooth max pooling tiles. A forward tile keeps to the default 48 KiB of shared memory; a
// backward tile may take up to kSmoothBwdSmem (opted in once per kernel and device), which leaves
// room for three blocks per SM on sm_90.
constexpr size_t kSmoothFwdSmem = 48 * 1024;
constexpr size_t kSmoothBwdSmem = 72 * 1024;

template <int KH, int KW, int SH, int SW>
struct TileShape {
  static constexpr int kh = KH, kw = KW, sh = SH, sw = SW;
};

// f(TileShape<...>{}) for the compiled forward shapes; false when g has none.
template <class F>
bool smooth_fwd_shape(const PoolGeometry& g, F&& f) {
  if (!smooth_tiles_fit(g)) return false;
  if (plane_shape(g, 3, 3, 1, 1)) {
    f(TileShape<3, 3, 1, 1>{});
  } else if (plane_shape(g, 3, 3, 2, 2)) {
    f(TileShape<3, 3, 2, 2>{});
  } else if (plane_shape(g, 2, 2, 1, 1)) {
    f(TileShape<2, 2, 1, 1>{});
  } else if (plane_shape(g, 2, 2, 2, 2)) {
    f(TileShape<2, 2, 2, 2>{});
  } else {
    return false;
  }
  return true;
}

// The same for the backward, whose tiles serve overlapping windows only.
template <class F>
bool smooth_bwd_shape(const PoolGeometry& g, F&& f) {
  if (!smooth_tiles_fit(g) || pool_windows_disjoint(g)) return false;
  if (plane_shape(g, 3, 3, 1, 1)) {
    f(TileShape<3, 3, 1, 1>{});
  } else if (plane_shape(g, 3, 3, 2, 2)) {
    f(TileShape<3, 3, 2, 2>{});
  } else if (plane_shape(g, 2, 2, 1, 1)) {
    f(TileShape<2, 2, 1, 1>{});
  } else {
    return false;
  }
  return true;
}

// Forward: blocks of gx x gy threads (at most 256), gx groups of G outputs per tile row, tile rows
// shared out evenly over the plane's rows.
template <int KH, int KW, int SH, int SW, class T>
SmoothPlan smooth_fwd_plan(const PoolGeometry& g) {
  constexpr int64_t G = kGroup<T>;
  SmoothPlan p = plane_extents(g);
  const int64_t oh = p.oh, ow = p.ow;
  const int64_t row_groups = ceil_div(ow, G);
  const int64_t gx = ceil_div(row_groups, ceil_div(row_groups, 64));
  int64_t gy = std::max<int64_t>(1, 256 / gx);
  gy = ceil_div(oh, ceil_div(oh, gy));
  const int64_t pitch = round_up((gx * G - 1) * SW + KW, G);
  auto bytes = [&](int64_t rows) {
    return static_cast<size_t>(((rows - 1) * SH + KH) * pitch) * sizeof(T);
  };
  while (gy > 1 && bytes(gy) > kSmoothFwdSmem) gy = ceil_div(gy, 2);
  p.tile_w = static_cast<uint32_t>(gx * G);
  p.tile_h = static_cast<uint32_t>(gy);
  p.region_h = static_cast<uint32_t>((gy - 1) * SH + KH);
  p.region_pitch = static_cast<uint32_t>(pitch);
  p.smem = bytes(gy);
  p.tiles_x = static_cast<uint32_t>(ceil_div(ow, gx * G));
  p.tiles_y = static_cast<uint32_t>(ceil_div(oh, gy));
  p.block = dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy));
  return p;
}

// Backward: input tiles at most 128 wide (a multiple of SW) and as tall (a multiple of SH) as
// kSmoothBwdSmem allows, shared out evenly over the plane; a block size that spreads the groups
// of window outputs over the fewest rounds. False when not even one tile row fits.
template <int KH, int KW, int SH, int SW, class T>
bool smooth_bwd_plan(const PoolGeometry& g, SmoothPlan& p) {
  constexpr int64_t G = kGroup<T>;
  p = plane_extents(g);
  const int64_t h = p.h, w = p.w, ph = p.ph, pw = p.pw;
  const int64_t tile_w = round_up(ceil_div(w, ceil_div(w, 128)), SW);
  const int64_t off_x = ceil_div(pw - KW + 1, SW);
  const int64_t ext_w = floor_div(tile_w - 1 + pw, SW) - off_x + 1;
  const int64_t ext_groups = ceil_div(ext_w, G);
  const int64_t ext_pitch = ext_groups * G;
  const int64_t pitch = round_up((ext_pitch - 1) * SW + KW, G);
  const int64_t off_y = ceil_div(ph - KH + 1, SH);
  // ext window rows need ext * SH + (KH - SH) region rows and (1 + KH * KW) rows of dY and terms.
  const int64_t budget = static_cast<int64_t>(kSmoothBwdSmem / sizeof(T));
  const int64_t fixed = (KH - SH) * pitch;
  const int64_t per_row = SH * pitch + (1 + KH * KW) * ext_pitch;
  if (budget <= fixed) return false;
  const int64_t ext_max = (budget - fixed) / per_row;
  // floor((tile_h - 1 + ph) / SH) - off_y + 1 <= ext_max.
  const int64_t tile_max = floor_div((ext_max + off_y) * SH - ph, SH) * SH;
  if (tile_max < SH) return false;
  const int64_t tile_h = round_up(ceil_div(h, ceil_div(h, tile_max)), SH);
  const int64_t ext_h = floor_div(tile_h - 1 + ph, SH) - off_y + 1;
  const int64_t region_h = (ext_h - 1) * SH + KH;
  const size_t smem =
      static_cast<size_t>(region_h * pitch + ext_h * ext_pitch * (1 + KH * KW)) * sizeof(T);
  if (smem > kSmoothBwdSmem) return false;
  // One group column per thread; the rows of windows shared out over the fewest passes.
  const int64_t rows_max = std::max<int64_t>(1, 256 / ext_groups);
  const int64_t rows = ceil_div(ext_h, ceil_div(ext_h, rows_max));
  p.block = dim3(static_cast<unsigned>(ext_groups), static_cast<unsigned>(rows));
  p.tile_w = static_cast<uint32_t>(tile_w);
  p.tile_h = static_cast<uint32_t>(tile_h);
  p.off_x = static_cast<int32_t>(off_x);
  p.off_y = static_cast<int32_t>(off_y);
  p.ext_h = static_cast<uint32_t>(ext_h);
  p.ext_pitch = static_cast<uint32_t>(ext_pitch);
  p.region_h = static_cast<uint32_t>(region_h);
  p.region_pitch = static_cast<uint32_t>(pitch);
  p.smem = smem;
  p.tiles_x = static_cast<uint32_t>(ceil_div(w, tile_w));
  p.tiles_y = static_cast<uint32_t>(ceil_div(h, tile_h));
  return true;
}

// Whether the smooth-max backward of g runs through the tiles (and so needs no workspace).
bool smooth_bwd_tiled(const PoolGeometry& g, size_t element_bytes) {
  bool planned = false;
  smooth_bwd_shape(g, [&](auto shape) {
    using S = decltype(shape);
    SmoothPlan p;
    planned = element_bytes == sizeof(float)
                  ? smooth_bwd_plan<S::kh, S::kw, S::sh, S::sw, float>(g, p)
                  : smooth_bwd_plan<S::kh, S::kw, S::sh, S::sw, double>(g, p);
  });
  return planned;
}

dim3 tile_grid(const SmoothPlan& p) {
  return dim3(p.tiles_x, std::min<uint32_t>(p.tiles_y, 65535), std::min<uint32_t>(p.planes, 65535));
}

template <int KH, int KW, int SH, int SW, class T>
void launch_smooth_tile_fwd(const T* x, T* y, const PoolGeometry& g, T b, T inv_b, cudaStream_t s) {
  const SmoothPlan p = smooth_fwd_plan<KH, KW, SH, SW, T>(g);
  smooth_tile_fwd_kernel<KH, KW, SH, SW, T>
      <<<tile_grid(p), p.block, p.smem, s>>>(x, y, p, b, inv_b);
}

template <int KH, int KW, int SH, int SW, class T>
bool launch_smooth_tile_bwd(const T* x, const T* dy, T* dx, const PoolGeometry& g, T b,
                            cudaStream_t s, const char* op) {
  SmoothPlan p;
  if (!smooth_bwd_plan<KH, KW, SH, SW, T>(g, p)) return false;
  constexpr auto kernel = smooth_tile_bwd_kernel<KH, KW, SH, SW, T>;
  // Dynamic shared memory above the 48 KiB default needs an opt-in per kernel and device.
  if (p.smem > 48 * 1024) allow_dynamic_shared<kernel>(kSmoothBwdSmem, op);
  kernel<<<tile_grid(p), p.block, p.smem, s>>>(x, dy, dx, p, b);
  return true;
}

// 2x2 stride 2 without padding on planes of even height and a width that is a multiple of 2G,
// both operands 16-byte aligned.
template <class T>
bool smooth_2x2_groups(const PoolGeometry& g, const void* x, const void* y) {
  return planar(g) && plane_shape(g, 2, 2, 2, 2) && g.padding[1] == 0 && g.padding[2] == 0 &&
         g.in[1] % 2 == 0 && g.in[2] % (2 * kGroup<T>) == 0 && aligned16(x) && aligned16(y) &&
         fits32(g);
}

}  // namespace

namespace pool_detail {

template <class T>
bool smooth_planes_fwd(const T* x, T* y, const PoolGeometry& g, T b, T inv_b, cudaStream_t s) {
  if (smooth_2x2_groups<T>(g, x, y)) {
    constexpr uint32_t G = kGroup<T>;
    const uint32_t groups = static_cast<uint32_t>(g.channels * g.out_volume / G);
    smooth_2x2_group_kernel<T><<<grid_for(groups, kThreads), kThreads, 0, s>>>(
        x, y, static_cast<uint32_t>(g.in[2]), static_cast<uint32_t>(g.out[2] / G), groups, b,
        inv_b);
    return true;
  }
  if constexpr (std::is_same_v<T, float>) {
    if (smooth_streams(g, sizeof(T))) {
      launch_smooth_stream_fwd(x, y, g, b, inv_b, s);
      return true;
    }
  }
  return !(pairs_2x2<T>(g, x) && fits32(g)) && smooth_fwd_shape(g, [&](auto shape) {
    using S = decltype(shape);
    launch_smooth_tile_fwd<S::kh, S::kw, S::sh, S::sw, T>(x, y, g, b, inv_b, s);
  });
}

template <class T>
bool smooth_planes_bwd(const T* x, const T* dy, T* dx, const PoolGeometry& g, T b, cudaStream_t s,
                       const char* op) {
  if constexpr (std::is_same_v<T, float>) {
    if (smooth_streams(g, sizeof(T))) {
      launch_smooth_stream_bwd(x, dy, dx, g, b, s);
      return true;
    }
  }
  bool tiled = false;
  smooth_bwd_shape(g, [&](auto shape) {
    using S = decltype(shape);
    tiled = launch_smooth_tile_bwd<S::kh, S::kw, S::sh, S::sw, T>(x, dy, dx, g, b, s, op);
  });
  return tiled;
}

bool smooth_planes_bwd_takes(const PoolGeometry& g, size_t element_bytes) {
  return smooth_streams(g, element_bytes) || smooth_bwd_tiled(g, element_bytes);
}

template bool smooth_planes_fwd<float>(const float*, float*, const PoolGeometry&, float, float,
                                       cudaStream_t);
template bool smooth_planes_fwd<double>(const double*, double*, const PoolGeometry&, double, double,
                                        cudaStream_t);
template bool smooth_planes_bwd<float>(const float*, const float*, float*, const PoolGeometry&,
                                       float, cudaStream_t, const char*);
template bool smooth_planes_bwd<double>(const double*, const double*, double*, const PoolGeometry&,
                                        double, cudaStream_t, const char*);

}  // namespace pool_detail
}  // namespace tlrt::kernels
