// Pooling, CUDA backend: smooth max pooling on float32 planes, 3x3 stride 1, by the streaming
// kernels, and the setting that chooses them (the other schedules and the choice:
// kernels/pool/pool_smooth.cu; the overview is at the top of kernels/pool/pool.cu).
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

// Smooth max pooling, float32, 3x3 stride 1, planes: streaming kernels. A thread keeps the rows
// of its windows in registers and walks down a strip of rows, so nothing is staged, no barrier
// is needed and no window is computed twice except at the strip edges. Same operations, same
// orders, same bits as the tiles and the one-output-per-thread kernels, with two savings that do
// not change a bit:
// * The pivot's sign of zero reaches a result only through y = fl(P + fl(log(D) * fl(1/b))) with
//   D = 1 and b < 0 (v - P and exp(+-0) = 1 do not see it; for b > 0 the addend is +0 or
//   nonzero, and P + (+0) is +0 for either zero P). So the backward (both signs) and the forward
//   with b > 0 join pivots with plain max / min; the forward with b < 0 keeps pivot_join.
// * The backward's fl(e / D) comes from D's correctly rounded reciprocal (quotient.h): IEEE
//   division's bits, one reciprocal per window.

constexpr int kStreamG = 4;       // adjacent outputs (forward) or inputs (backward) per thread
constexpr int kStreamLanes = 30;  // backward: input groups a warp writes (lanes 1..30)
constexpr int kStreamThreads = 128;

struct StreamPlan {
  uint32_t h = 0, w = 0, oh = 0, ow = 0;
  int32_t ph = 0, pw = 0;
  uint32_t planes = 0;
  uint32_t groups = 0;    // forward: output groups per row; backward: input groups per row
  uint32_t segments = 0;  // backward: warps across a row
  uint32_t strip = 0;     // rows per strip (forward: output rows; backward: input rows)
  uint32_t strips = 0;
  uint32_t items = 0;  // forward: threads; backward: warps
};

// Six values of input row iy from column c0 on, the literal 0 outside the plane.
TLRT_DEVICE_INLINE void stream_row(const float* __restrict__ plane, int32_t iy, int32_t c0,
                                   const StreamPlan& p, const bool (&col)[6], float (&r)[6]) {
  const bool row_in = static_cast<uint32_t>(iy) < p.h;
  const float* row = plane + (row_in ? static_cast<uint32_t>(iy) * p.w : 0u);
#pragma unroll
  for (int j = 0; j < 6; ++j) r[j] = row_in && col[j] ? __ldg(row + (c0 + j)) : 0.0f;
}

// Pivots of the four windows whose columns start at 0..3 of v (3 rows of 6 values).
template <bool Upper, bool SignedZero>
TLRT_DEVICE_INLINE void stream_pivots(const float (&v)[3][6], float (&pv)[kStreamG]) {
  float col[6];
#pragma unroll
  for (int j = 0; j < 6; ++j) {
    col[j] = pivot_first<Upper>(v[0][j]);
#pragma unroll
    for (int a = 1; a < 3; ++a) {
      col[j] = SignedZero ? pivot_join<Upper>(col[j], v[a][j])
                          : (Upper ? max_t(col[j], v[a][j]) : min_t(col[j], v[a][j]));
    }
  }
#pragma unroll
  for (int k = 0; k < kStreamG; ++k) {
    pv[k] = col[k];
#pragma unroll
    for (int c = 1; c < 3; ++c) {
      pv[k] = SignedZero ? pivot_join<Upper>(pv[k], col[k + c])
                         : (Upper ? max_t(pv[k], col[k + c]) : min_t(pv[k], col[k + c]));
    }
  }
}

// Forward: thread t owns output columns 4 gx .. 4 gx + 3 of a strip of output rows of a plane.
template <bool Upper>
__global__ void __launch_bounds__(kStreamThreads)
    smooth_stream_fwd_kernel(const float* __restrict__ x, float* __restrict__ y, StreamPlan p,
                             float b, float inv_b) {
  const bool y16 = (reinterpret_cast<uintptr_t>(y) & 15u) == 0 && p.ow % kStreamG == 0;
  for (uint32_t t = blockIdx.x * blockDim.x + threadIdx.x; t < p.items;
       t += gridDim.x * blockDim.x) {
    const uint32_t gx = t % p.groups;
    const uint32_t rest = t / p.groups;
    const uint32_t strip = rest % p.strips;
    const uint32_t plane = rest / p.strips;
    const int32_t ox0 = static_cast<int32_t>(gx) * kStreamG;
    const int32_t c0 = ox0 - p.pw;
    bool col[6];
#pragma unroll
    for (int j = 0; j < 6; ++j) col[j] = static_cast<uint32_t>(c0 + j) < p.w;
    const float* xp = x + plane * (p.h * p.w);
    float* yp = y + plane * (p.oh * p.ow);
    const uint32_t oy0 = strip * p.strip;
    const uint32_t oy1 = min(oy0 + p.strip, p.oh);
    float v[3][6];
    stream_row(xp, static_cast<int32_t>(oy0) - p.ph, c0, p, col, v[0]);
    stream_row(xp, static_cast<int32_t>(oy0) - p.ph + 1, c0, p, col, v[1]);
    for (uint32_t oy = oy0; oy < oy1; ++oy) {
      stream_row(xp, static_cast<int32_t>(oy) - p.ph + 2, c0, p, col, v[2]);
      float pv[kStreamG];
      stream_pivots<Upper, !Upper>(v, pv);
      float out[kStreamG];
#pragma unroll
      for (int k = 0; k < kStreamG; ++k) {
        float d = 0.0f;
#pragma unroll
        for (int a = 0; a < 3; ++a) {
#pragma unroll
          for (int c = 0; c < 3; ++c) d = add_rn(d, exp_t(mul_rn(sub_rn(v[a][k + c], pv[k]), b)));
        }
        out[k] = add_rn(pv[k], mul_rn(log_t(d), inv_b));
      }
      float* row = yp + oy * p.ow;
      if (y16 && static_cast<uint32_t>(ox0) < p.ow) {
        store16(row + ox0, out);
      } else {
#pragma unroll
        for (int k = 0; k < kStreamG; ++k) {
          if (static_cast<uint32_t>(ox0 + k) < p.ow) row[ox0 + k] = out[k];
        }
      }
#pragma unroll
      for (int j = 0; j < 6; ++j) {
        v[0][j] = v[1][j];
        v[1][j] = v[2][j];
      }
    }
  }
}

// Backward: warp w owns a strip of input rows of a plane and 30 groups of 4 input columns across
// it (lanes 1..30; lanes 0 and 31 compute the windows at the left and right edges of the run).
// Lane l's windows are the outputs ox0 .. ox0 + 3 with ox0 = c0 + pw - 1, c0 = 4 (30 s + l - 1):
// input column c0 + i takes kernel column k from window i + 1 - k, so only the left lane's last
// window (k = 2) and the right lane's first (k = 0) cross lanes, through shuffles. Window row wr
// gives input row wr - ph + a its kernel row a. The window rows are walked upwards, so an input
// row receives its kernel rows in the order of its sum (a = 0 from window row r + ph first) and
// three running sums per input column are all that is kept.
template <bool Upper>
__global__ void __launch_bounds__(kStreamThreads)
    smooth_stream_bwd_kernel(const float* __restrict__ x, const float* __restrict__ dy,
                             float* __restrict__ dx, StreamPlan p, float b) {
  const uint32_t lane = threadIdx.x & 31u;
  const uint32_t warps = gridDim.x * blockDim.x / 32u;
  const bool dx16 = (reinterpret_cast<uintptr_t>(dx) & 15u) == 0 && p.w % kStreamG == 0;
  for (uint32_t wid = (blockIdx.x * blockDim.x + threadIdx.x) / 32u; wid < p.items; wid += warps) {
    const uint32_t seg = wid % p.segments;
    const uint32_t rest = wid / p.segments;
    const uint32_t strip = rest % p.strips;
    const uint32_t plane = rest / p.strips;
    const int32_t gi = static_cast<int32_t>(seg * kStreamLanes + lane) - 1;
    const int32_t c0 = gi * kStreamG;
    const bool writes = lane >= 1 && lane <= kStreamLanes && static_cast<uint32_t>(gi) < p.groups;
    const int32_t ox0 = c0 + p.pw - 1;
    bool wcol[kStreamG];
    bool any_col = false;
#pragma unroll
    for (int j = 0; j < kStreamG; ++j) {
      wcol[j] = static_cast<uint32_t>(ox0 + j) < p.ow;
      any_col = any_col || wcol[j];
    }
    bool col[6];
#pragma unroll
    for (int j = 0; j < 6; ++j) col[j] = static_cast<uint32_t>(c0 - 1 + j) < p.w;
    const float* xp = x + plane * (p.h * p.w);
    const float* dyp = dy + plane * (p.oh * p.ow);
    float* dxp = dx + plane * (p.h * p.w);
    const int32_t r0 = static_cast<int32_t>(strip * p.strip);
    const int32_t r1 = min(r0 + static_cast<int32_t>(p.strip), static_cast<int32_t>(p.h));
    // Window rows r1 - 1 + ph down to r0 + ph - 2; v[a] holds input row wr - ph + a.
    const int32_t wr_top = r1 - 1 + p.ph;
    float v[3][6];
    stream_row(xp, wr_top - p.ph + 2, c0 - 1, p, col, v[2]);
    stream_row(xp, wr_top - p.ph + 1, c0 - 1, p, col, v[1]);
    // Running sums by input column: s0 of input row wr - ph, s1 of wr - ph + 1, s2 of wr - ph + 2.
    float s1[kStreamG], s2[kStreamG];
#pragma unroll
    for (int i = 0; i < kStreamG; ++i) s1[i] = s2[i] = 0.0f;
    for (int32_t wr = wr_top; wr >= r0 + p.ph - 2; --wr) {
      stream_row(xp, wr - p.ph, c0 - 1, p, col, v[0]);
      // term[a][k][j]: window j's term for kernel offset (a, k), +0 for windows off the output.
      float term[3][3][kStreamG];
      const bool row_out = static_cast<uint32_t>(wr) < p.oh;
      if (row_out && any_col) {
        float g[kStreamG];
#pragma unroll
        for (int j = 0; j < kStreamG; ++j)
          g[j] = wcol[j] ? __ldg(dyp + wr * p.ow + (ox0 + j)) : 0.0f;
        float pv[kStreamG];
        stream_pivots<Upper, false>(v, pv);
#pragma unroll
        for (int j = 0; j < kStreamG; ++j) {
          // e = exp(...) is +0, in (0, 1] or NaN (then so is D, whose reciprocal is not fast).
          float d = 0.0f;
          float least = 1.0f;
#pragma unroll
          for (int a = 0; a < 3; ++a) {
#pragma unroll
            for (int k = 0; k < 3; ++k) {
              term[a][k][j] = exp_t(mul_rn(sub_rn(v[a][j + k], pv[j]), b));
              d = add_rn(d, term[a][k][j]);
              least = fminf(least, term[a][k][j]);
            }
          }
          const Reciprocal rd = reciprocal_of(d);
          if (rd.fast && least >= kQuotientLeast) {
#pragma unroll
            for (int a = 0; a < 3; ++a) {
#pragma unroll
              for (int k = 0; k < 3; ++k) {
                term[a][k][j] =
                    keep_if(wcol[j], mul_rn(g[j], quotient_unchecked(term[a][k][j], rd)));
              }
            }
          } else {
#pragma unroll
            for (int a = 0; a < 3; ++a) {
#pragma unroll
              for (int k = 0; k < 3; ++k) {
                term[a][k][j] = keep_if(wcol[j], mul_rn(g[j], div_rn(term[a][k][j], d)));
              }
            }
          }
        }
      } else {
#pragma unroll
        for (int a = 0; a < 3; ++a) {
#pragma unroll
          for (int k = 0; k < 3; ++k) {
#pragma unroll
            for (int j = 0; j < kStreamG; ++j) term[a][k][j] = 0.0f;
          }
        }
      }
      // By input column: t[a][i][k] from window i + 1 - k.
      float t[3][kStreamG][3];
#pragma unroll
      for (int a = 0; a < 3; ++a) {
#pragma unroll
        for (int i = 0; i < kStreamG; ++i) {
#pragma unroll
          for (int k = 0; k < 3; ++k) {
            const int j = i + 1 - k;
            if (j >= 0 && j < kStreamG) t[a][i][k] = term[a][k][j];
          }
        }
        t[a][0][2] = __shfl_up_sync(0xffffffffu, term[a][2][kStreamG - 1], 1);
        t[a][kStreamG - 1][0] = __shfl_down_sync(0xffffffffu, term[a][0][0], 1);
      }
      // Input row wr - ph + 2 takes its last kernel row (a = 2) and is complete.
      float s0[kStreamG];
#pragma unroll
      for (int i = 0; i < kStreamG; ++i) {
        s0[i] = 0.0f;
#pragma unroll
        for (int k = 0; k < 3; ++k) {
          s0[i] = add_rn(s0[i], t[0][i][k]);
          s1[i] = add_rn(s1[i], t[1][i][k]);
          s2[i] = add_rn(s2[i], t[2][i][k]);
        }
      }
      const int32_t r = wr - p.ph + 2;
      if (r < r1 && writes) {
        float* row = dxp + static_cast<uint32_t>(r) * p.w;
        if (dx16 && static_cast<uint32_t>(c0) < p.w) {
          store16(row + c0, s2);
        } else {
#pragma unroll
          for (int i = 0; i < kStreamG; ++i) {
            if (static_cast<uint32_t>(c0 + i) < p.w) row[c0 + i] = s2[i];
          }
        }
      }
#pragma unroll
      for (int i = 0; i < kStreamG; ++i) {
        s2[i] = s1[i];
        s1[i] = s0[i];
      }
#pragma unroll
      for (int j = 0; j < 6; ++j) {
        v[2][j] = v[1][j];
        v[1][j] = v[0][j];
      }
    }
  }
}

// Streaming schedule for float32 3x3 stride 1 planes (smooth_stream_*_kernel).
std::atomic<int> smooth_schedule_setting{static_cast<int>(SmoothSchedule::streaming)};

// Strips are added until the grid has about this many forward threads or backward warps (more
// strips mean more rows loaded twice, and in the backward two more window rows computed per strip).
// On the H200 at C 2048 x 112^2 (2026-12-01): forward 2^18 / 2^19 / 2^20 / 2^21 threads 148.0 /
// 149.6 / 144.2 / 144.2 us; backward 2^11 / 2^12 / 2^13 warps 306.9 / 297.8 / 298.3 us.
constexpr uint64_t kStreamFwdThreads = uint64_t{1} << 20;
constexpr uint64_t kStreamBwdWarps = uint64_t{1} << 12;

// Rows per strip: `items_per_row` threads (forward) or warps (backward) per strip row of every
// plane; strips are added until about `target` items exist, each at least `min_rows` tall.
void stream_strips(StreamPlan& p, uint32_t rows, uint64_t items_per_row, uint64_t target,
                   uint32_t min_rows) {
  const uint64_t per_strip = items_per_row * p.planes;
  uint64_t strips = std::max<uint64_t>(1, (target + per_strip - 1) / per_strip);
  strips = std::min<uint64_t>(strips, std::max<uint64_t>(1, rows / min_rows));
  p.strip = static_cast<uint32_t>((rows + strips - 1) / strips);
  p.strips = static_cast<uint32_t>((rows + p.strip - 1) / p.strip);
}

// A stream plan holding the planes' extents (plane_extents).
StreamPlan stream_extents(const PoolGeometry& g) {
  StreamPlan p;
  const SmoothPlan e = plane_extents(g);
  p.h = e.h, p.w = e.w, p.oh = e.oh, p.ow = e.ow, p.ph = e.ph, p.pw = e.pw, p.planes = e.planes;
  return p;
}

StreamPlan stream_fwd_plan(const PoolGeometry& g) {
  StreamPlan p = stream_extents(g);
  p.groups = static_cast<uint32_t>(ceil_div(p.ow, kStreamG));
  stream_strips(p, p.oh, p.groups, kStreamFwdThreads, 4);
  p.items = static_cast<uint32_t>(uint64_t{p.groups} * p.strips * p.planes);
  return p;
}

StreamPlan stream_bwd_plan(const PoolGeometry& g) {
  StreamPlan p = stream_extents(g);
  p.groups = static_cast<uint32_t>(ceil_div(p.w, kStreamG));
  p.segments = static_cast<uint32_t>(ceil_div(p.groups, kStreamLanes));
  stream_strips(p, p.h, p.segments, kStreamBwdWarps, 8);
  p.items = static_cast<uint32_t>(uint64_t{p.segments} * p.strips * p.planes);
  return p;
}

}  // namespace

void set_smooth_schedule(SmoothSchedule schedule) {
  smooth_schedule_setting.store(static_cast<int>(schedule), std::memory_order_relaxed);
}
SmoothSchedule smooth_schedule() {
  return static_cast<SmoothSchedule>(smooth_schedule_setting.load(std::memory_order_relaxed));
}

namespace pool_detail {

bool smooth_streams(const PoolGeometry& g, size_t element_bytes) {
  return element_bytes == sizeof(float) &&
         smooth_schedule_setting.load(std::memory_order_relaxed) ==
             static_cast<int>(SmoothSchedule::streaming) &&
         smooth_tiles_fit(g) && plane_shape(g, 3, 3, 1, 1);
}

void launch_smooth_stream_fwd(const float* x, float* y, const PoolGeometry& g, float b, float inv_b,
                              cudaStream_t s) {
  const StreamPlan p = stream_fwd_plan(g);
  const dim3 grid = grid_for(p.items, kStreamThreads);
  if (b > 0.0f) {
    smooth_stream_fwd_kernel<true><<<grid, kStreamThreads, 0, s>>>(x, y, p, b, inv_b);
  } else {
    smooth_stream_fwd_kernel<false><<<grid, kStreamThreads, 0, s>>>(x, y, p, b, inv_b);
  }
}

void launch_smooth_stream_bwd(const float* x, const float* dy, float* dx, const PoolGeometry& g,
                              float b, cudaStream_t s) {
  const StreamPlan p = stream_bwd_plan(g);
  const dim3 grid = grid_for(uint64_t{p.items} * 32, kStreamThreads);
  if (b > 0.0f) {
    smooth_stream_bwd_kernel<true><<<grid, kStreamThreads, 0, s>>>(x, dy, dx, p, b);
  } else {
    smooth_stream_bwd_kernel<false><<<grid, kStreamThreads, 0, s>>>(x, dy, dx, p, b);
  }
}

}  // namespace pool_detail
}  // namespace tlrt::kernels
