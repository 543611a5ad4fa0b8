// The parity bound of the fast schedule of the selective scans (docs/NUMERICS.md, "Diagonal
// selective scans"): per output element, the largest |fast - exact| the derivation allows, from
// the absolute-value recurrence H_t = |a_t| H_{t-1} + |b_t| (H_{-1} = |h0|) and the depth of the
// composition tree. Host only (long double), shared by the ABI suite and tlrt-parity.
//
// Both schedules evaluate the same real recurrence y_t = a_t y_{t-1} + b_t (b_t = fl(B_t X_t) is
// formed identically by both). A term of y_t that meets m rounded operations carries a factor
// (1 + theta_m), |theta_m| <= gamma_m = m u / (1 - m u). In a composition tree a term meets, at
// each node on its path, the node's product and sum (2 roundings) and the roundings inside the
// composed coefficient it is multiplied by; those coefficients are products over disjoint ranges
// of (k, t], so together they hold at most t multiplications. A path of at most d nodes thus gives
// m <= 2d + t + 1. The literal recurrence: m <= 2(t + 1). The chunked fast schedule's paths: <= K
// steps of the source segment, <= 7 segment compositions, the inclusive application, <= 2 nodes per
// chunk crossed (a look-back composition and an application), <= 7 prefix compositions and its own
// <= K steps: d <= 2K + 16 + 2c with c = t / L (L = 8K; K per pass as in scan.h: in float32 32,
// 12 and 16 for the constant forward, the variable forward and the backwards). The resident
// schedule's: <= K steps of the source segment, <= 5 levels of the warp scan (32 / C segments per
// warp), <= 31 warp aggregates applied in turn to the carry, the warp-exclusive prefix's
// application and its own <= K steps: d <= 2K + 37 (K of the resident constant forward). The rows
// schedule's: <= K steps of the source segment, <= 8 levels of the block's segment scan (at most
// 256 segments), at most one entry node per level of the fixed groups (<= 6 levels: 32^7 chunks
// exceed the grid), one node per chunk passed (a later member of a group, or a group map applied
// to the carry), the application of the segment-exclusive prefix and its own <= K steps: d <= 2K
// + 16 + floor(t / R) with R >= K rows a chunk (K of the rows schedule, 33 in float32, 17 in
// float64). The slab schedule's (for each block of kScanSlabBlocks: rounds of R rows, U a thread,
// W warps, l = scan_slab_levels): <= U steps of the source group, <= l levels of the warp scan,
// then in each round from the source's to the output's <= W - 1 warp aggregates, the
// warp-exclusive prefix and <= U steps: d <= U + l + (floor(t / R) + 1)(W + U) (the constant
// forward's and the constant backward's stay below the rows schedule's at every t, the variable
// forward's passes it by at most 13 nodes from t 6656 on; docs/NUMERICS.md). The bound takes the
// largest depth at each position, so it covers whichever schedule runs. Hence |fast_t - exact_t| <=
// (gamma_{2(t+1)} + gamma_{2d+t+1}) H_t (the code adds one to each index).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/scan/scan.h"

namespace tlrt::kernels {

template <class T>
constexpr long double scan_unit_roundoff() {
  return sizeof(T) == 4 ? 0x1p-24L : 0x1p-53L;
}

inline long double scan_gamma(long double m, long double u) {
  const long double mu = m * u;
  return mu < 1 ? mu / (1 - mu) : std::numeric_limits<long double>::infinity();
}

// The depth d of the paths to scan position `pos` in the rows schedule and in a slab block (the
// derivations above).
template <class T>
uint64_t scan_rows_depth(uint64_t pos) {
  const uint64_t k_rows = scan_rows_steps(sizeof(T));
  return 2 * k_rows + 16 + pos / k_rows;
}

inline uint64_t scan_slab_depth(const ScanSlabBlock& b, uint64_t pos) {
  const uint64_t round = b.threads / (b.channels / 4) * b.rows;
  return b.rows + scan_slab_levels(b) + (pos / round + 1) * (b.threads / 32 + b.rows);
}

// The factor multiplying H at scan position `pos` (time order for the forward, reverse time
// for the backward's g).
template <class T>
long double scan_state_factor(uint64_t pos) {
  const long double u = scan_unit_roundoff<T>();
  uint64_t chunked = 0;  // the deepest of the passes' chunk geometries
  for (ScanPass pass : kScanPasses) {
    const uint64_t d = 2 * scan_segment_steps(sizeof(T), pass) + 2 * kScanSegments +
                       2 * (pos / scan_chunk_steps(sizeof(T), pass));
    chunked = d > chunked ? d : chunked;
  }
  const uint64_t resident = 2 * scan_resident_steps(sizeof(T)) + 37;
  const uint64_t rows = scan_rows_depth<T>(pos);
  uint64_t slab = 0;  // the deepest of the slab blocks (scan.h)
  for (const ScanSlabBlock& b : kScanSlabBlocks) {
    const uint64_t d = scan_slab_depth(b, pos);
    slab = d > slab ? d : slab;
  }
  uint64_t depth = chunked > resident ? chunked : resident;
  depth = rows > depth ? rows : depth;
  depth = slab > depth ? slab : depth;
  return scan_gamma(2.0L * (pos + 1) + 1, u) + scan_gamma(2.0L * depth + pos + 2, u);
}

// Forward: bound per element of h (T*S).
template <class T>
std::vector<long double> selective_scan_fwd_bound(const ScanOperands<T>& in) {
  const uint64_t steps = in.steps, state = in.state;
  std::vector<long double> bound(steps * state);
  std::vector<long double> h(state);
  for (uint64_t j = 0; j < state; ++j) h[j] = std::fabs(static_cast<long double>(in.h0[j]));
  for (uint64_t t = 0; t < steps; ++t) {
    const long double f = scan_state_factor<T>(t);
    for (uint64_t j = 0; j < state; ++j) {
      const uint64_t i = t * state + j;
      const T a = in.variable ? in.a[i] : in.a[j];
      const T b = in.variable ? in.b[i] : in.b[j];
      const T bx = b * in.x[i];
      h[j] =
          std::fabs(static_cast<long double>(a)) * h[j] + std::fabs(static_cast<long double>(bx));
      bound[i] = f * h[j];
    }
  }
  return bound;
}

struct ScanGradientBound {
  std::vector<long double> da, db, dx, dh0;
};

// Backward: with G the absolute-value recurrence of g in reverse time (coefficient |A_{t+1}|,
// 0 at t = T-1; bias |dY_t|), dg_t = factor * G_t and Gx_t = G_t + dg_t bounding |g| in either
// schedule, a product fl(g m) differs by at most |m| (dg + 2u Gx); the constant variant's sums add
// the two folds' error 2 gamma_{T+1} sum |m| Gx.
template <class T>
ScanGradientBound selective_scan_bwd_bound(const ScanOperands<T>& in, const T* out, const T* dy) {
  const uint64_t steps = in.steps, state = in.state;
  const long double u = scan_unit_roundoff<T>();
  ScanGradientBound r;
  const uint64_t coefficient = in.variable ? steps * state : state;
  r.da.assign(coefficient, 0);
  r.db.assign(coefficient, 0);
  r.dx.assign(steps * state, 0);
  r.dh0.assign(state, 0);
  std::vector<long double> g(state, 0), mass_a(state, 0), mass_b(state, 0);
  for (uint64_t p = 0; p < steps; ++p) {
    const uint64_t t = steps - 1 - p;
    const long double f = scan_state_factor<T>(p);
    for (uint64_t j = 0; j < state; ++j) {
      const uint64_t i = t * state + j;
      const long double an =
          p == 0 ? 0 : std::fabs(static_cast<long double>(in.variable ? in.a[i + state] : in.a[j]));
      g[j] = an * g[j] + std::fabs(static_cast<long double>(dy[i]));
      const long double dg = f * g[j];
      const long double gx = g[j] + dg;
      const long double hp =
          std::fabs(static_cast<long double>(t == 0 ? in.h0[j] : out[i - state]));
      const long double xv = std::fabs(static_cast<long double>(in.x[i]));
      const long double bv = std::fabs(static_cast<long double>(in.variable ? in.b[i] : in.b[j]));
      r.dx[i] = bv * (dg + 2 * u * gx);
      if (in.variable) {
        r.da[i] = hp * (dg + 2 * u * gx);
        r.db[i] = xv * (dg + 2 * u * gx);
      } else {
        r.da[j] += hp * (dg + 2 * u * gx);
        r.db[j] += xv * (dg + 2 * u * gx);
        mass_a[j] += hp * gx;
        mass_b[j] += xv * gx;
      }
      if (t == 0) {
        r.dh0[j] = std::fabs(static_cast<long double>(in.a[j])) * (dg + 2 * u * gx);
      }
    }
  }
  if (!in.variable) {
    const long double fold = 2 * scan_gamma(static_cast<long double>(steps) + 1, u);
    for (uint64_t j = 0; j < state; ++j) {
      r.da[j] += fold * mass_a[j];
      r.db[j] += fold * mass_b[j];
    }
  }
  return r;
}

}  // namespace tlrt::kernels
