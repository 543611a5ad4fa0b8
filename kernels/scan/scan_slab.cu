// Diagonal selective scans, CUDA backend: the slab schedule (float32, the forwards and the
// constant backward where slab_takes in kernels/scan/scan.cu; the overview of the schedules is
// at the top of that file).
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/float_ops.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/scan/scan.h"
#include "kernels/scan/scan_shared.cuh"

namespace tlrt::kernels {
namespace {

using namespace scan_detail;

// Slab schedule (float32, T from 2048 to scan_resident_max_steps, S a multiple of 4 where
// slab_takes; scan.h). Described here for the constant forward; the variable forward follows it
// with 4 rows a thread (below).
//
// A block holds C = kScanSlabFwd.channels adjacent channels for the whole sequence and moves it in
// rounds of R = G U rows: thread tid takes the 4 channels of lane l = tid % (C / 4) (one 16-byte
// access a row) and group g = tid / (C / 4), rows r0 + g U to r0 + g U + U - 1 of the round that
// starts at r0. The loads of the next round are issued before the current round's scan, so a
// block keeps 2 U 16-byte loads a thread in flight across the scan; a round needs one barrier
// (the warp aggregates and the round's carry are double-buffered in shared memory).
//
// In a round each thread forms b = fl(B X) of its U rows and composes them from 0 (coefficient
// A^U, a constant), a Kogge-Stone scan across the 32 / (C / 4) groups of a warp (shuffles,
// coefficients A^(U 2^k)) gives each group the warp's map up to it, the warp aggregates
// (coefficient A^(U 32 / (C / 4))) are applied one by one in warp order to the round's carry-in,
// then the warp-exclusive prefix (coefficient A^(U gi)), and each thread runs its U steps
// literally from that carry, writing the outputs; the last group's final state is the next
// round's carry-in. The powers of A are products of A by a fixed tree, so the order of every
// composition is fixed and results repeat bit for bit.
//
// Marks: a coefficient outside [-1, 1] (or NaN), a non-finite h0, or a non-finite output marks
// the channel. A non-finite bias b_t needs no check of its own: the output of step t is
// fl(fl(A h) + b_t) from the carry, non-finite whatever h. After a barrier that follows every
// write of the block, thread c < C recomputes its channel on the literal recurrence if marked.

constexpr int kSlabChannels = static_cast<int>(kScanSlabFwd.channels);
static_assert(kScanSlabVarFwd.channels == kScanSlabFwd.channels, "the forwards' slabs are alike");
constexpr int kSlabLanes = kSlabChannels / 4;  // threads a row
constexpr int kSlabThreads = static_cast<int>(kScanSlabFwd.threads);
constexpr int kSlabRows = static_cast<int>(kScanSlabFwd.rows);  // U: rows a thread takes a round
constexpr int kSlabGroups = kSlabThreads / kSlabLanes;
constexpr int kSlabRound = kSlabGroups * kSlabRows;
constexpr int kSlabWarps = kSlabThreads / 32;
constexpr int kSlabWarpGroups = 32 / kSlabLanes;
static_assert(kSlabChannels % 4 == 0 && 32 % kSlabLanes == 0, "whole float4 lanes in a warp");
static_assert(kSlabChannels <= 32, "a block's marks fit one word");
constexpr int kSlabLevels = static_cast<int>(scan_slab_levels(kScanSlabFwd));
static_assert(kSlabWarpGroups == 1 << kSlabLevels, "scan_slab_levels: 2 to 16 groups a warp");

struct Lane4 {
  float v[4];
};

TLRT_DEVICE_INLINE Lane4 load4(const float* p) {
  const float4 q = __ldg(reinterpret_cast<const float4*>(p));
  return {{q.x, q.y, q.z, q.w}};
}

// One 16-byte store. (Assigned through a float4 pointer, the four values of a Lane4 are stored
// as four 4-byte stores.)
TLRT_DEVICE_INLINE void store4(float* p, const Lane4& v) {
  asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(v.v[0]), "f"(v.v[1]),
               "f"(v.v[2]), "f"(v.v[3])
               : "memory");
}

// The Lane4 of f(0) .. f(3): the componentwise helpers below.
template <class F>
TLRT_DEVICE_INLINE Lane4 each4(F f) {
  Lane4 r;
#pragma unroll
  for (int i = 0; i < 4; ++i) r.v[i] = f(i);
  return r;
}

TLRT_DEVICE_INLINE Lane4 mul4(const Lane4& p, const Lane4& q) {
  return each4([&](int i) { return mul_rn(p.v[i], q.v[i]); });
}

TLRT_DEVICE_INLINE Lane4 add4(const Lane4& p, const Lane4& q) {
  return each4([&](int i) { return add_rn(p.v[i], q.v[i]); });
}

// fl(fl(a h) + b), componentwise.
TLRT_DEVICE_INLINE Lane4 step4(const Lane4& a, const Lane4& h, const Lane4& b) {
  return each4([&](int i) { return step(a.v[i], h.v[i], b.v[i]); });
}

TLRT_DEVICE_INLINE Lane4 shfl_up4(const Lane4& v, int d) {
  return each4([&](int i) { return __shfl_up_sync(kFullMask, v.v[i], d); });
}

TLRT_DEVICE_INLINE Lane4 shfl_xor4(const Lane4& v, int m) {
  return each4([&](int i) { return __shfl_xor_sync(kFullMask, v.v[i], m); });
}

// Bit i set where component i is not finite.
TLRT_DEVICE_INLINE unsigned nonfinite4(const Lane4& v) {
  unsigned m = 0;
#pragma unroll
  for (int i = 0; i < 4; ++i) m |= isfinite(v.v[i]) ? 0u : 1u << i;
  return m;
}

// The powers of a constant coefficient a slab block applies to groups of U rows (componentwise,
// each a product of A by a fixed tree, so every composition repeats bit for bit): pw[k] = A^(U 2^k)
// for k < N (the warp scan's levels and, where N exceeds them, a warp aggregate's).
template <int U, int N>
TLRT_DEVICE_INLINE void slab_powers(const Lane4& a, Lane4 (&pw)[N]) {
  pw[0] = a;
#pragma unroll
  for (int u = 1; u < U; ++u) pw[0] = mul4(pw[0], a);
#pragma unroll
  for (int k = 1; k < N; ++k) pw[k] = mul4(pw[k - 1], pw[k - 1]);
}

// A^(U gi), the power a slab group applies to the map of the groups before it in its warp: the
// product of the powers pw[k] = A^(U 2^k) (slab_powers) over the bits k < L of gi, lowest first (1
// for gi = 0).
template <int L, int N>
TLRT_DEVICE_INLINE Lane4 slab_group_power(const Lane4 (&pw)[N], int gi) {
  static_assert(L <= N, "a power for each level");
  Lane4 r = {{1, 1, 1, 1}};
  bool set = false;
#pragma unroll
  for (int k = 0; k < L; ++k) {
    if (gi & (1 << k)) {
      r = set ? mul4(r, pw[k]) : pw[k];
      set = true;
    }
  }
  return r;
}

// A slab thread's place: lane l (channels col to col + 3), group g of rows, its warp and its group
// gi within the warp; live when its channels are inside S (S is a multiple of 4: a lane's channels
// are all in or all out).
struct SlabPlace {
  int tid, l, g, warp, gi;
  uint64_t col;
  bool live;
};

TLRT_DEVICE_INLINE SlabPlace slab_place(uint64_t state) {
  SlabPlace p;
  p.tid = threadIdx.x;
  p.l = p.tid % kSlabLanes;
  p.g = p.tid / kSlabLanes;
  p.warp = p.tid / 32;
  p.gi = p.g % kSlabWarpGroups;
  p.col = static_cast<uint64_t>(blockIdx.x) * kSlabChannels + 4 * p.l;
  p.live = p.col < state;
  return p;
}

// The end of a slab block of C channels: the thread's marks (channels 4 l to 4 l + 3 of the
// block) into the block's word, then, after a barrier that follows every fast write of the block,
// thread c < C runs `redo` on its channel (the literal recurrence) if marked.
template <int C, class Redo>
TLRT_DEVICE_INLINE void slab_redo_marked(uint64_t state, int tid, int l, unsigned marks,
                                         unsigned& s_redo, Redo redo) {
  if (marks != 0) atomicOr(&s_redo, marks << (4 * l));
  __syncthreads();  // every fast output of the block is written, every mark set
  const uint64_t c = static_cast<uint64_t>(blockIdx.x) * C + tid;
  if (tid < C && c < state && ((s_redo >> tid) & 1u) != 0) redo(c);
}

// The forwards' end of a slab block: marked channels recomputed by fwd_channel_exact.
template <bool Var>
TLRT_DEVICE_INLINE void slab_recompute_marked(const ScanOperands<float>& in, float* out,
                                              const SlabPlace& p, unsigned marks,
                                              unsigned& s_redo) {
  slab_redo_marked<kSlabChannels>(in.state, p.tid, p.l, marks, s_redo,
                                  [&](uint64_t c) { fwd_channel_exact<float, Var>(in, out, c); });
}

__global__ void __launch_bounds__(kSlabThreads)
    scan_fwd_slab(ScanOperands<float> in, float* __restrict__ out) {
  __shared__ Lane4 s_agg[2][kSlabWarps][kSlabLanes];
  __shared__ Lane4 s_carry[2][kSlabLanes];
  __shared__ unsigned s_redo;
  const SlabPlace place = slab_place(in.state);
  const int tid = place.tid, l = place.l, g = place.g, warp = place.warp, gi = place.gi;
  const uint64_t S = in.state, steps = in.steps;
  const uint64_t col = place.col;
  const bool live = place.live;
  if (tid == 0) s_redo = 0;  // ordered before any mark by the first round's barrier

  Lane4 a = {{1, 1, 1, 1}}, b = {{0, 0, 0, 0}}, h0 = {{0, 0, 0, 0}};
  unsigned marks = 0;
  if (live) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      a.v[i] = load(in.a + col + i);
      b.v[i] = load(in.b + col + i);
      h0.v[i] = load(in.h0 + col + i);
      if (!(fabsf(a.v[i]) <= 1.0f)) marks |= 1u << i;
    }
    marks |= nonfinite4(h0);
  }
  if (g == 0) s_carry[0][l] = h0;
  // Powers of A: pw[k] = A^(U 2^k) for the warp scan's levels, aG = A^(U gi) for the groups
  // before this one in its warp, aW = A^(U groups a warp) for a warp aggregate.
  Lane4 pw[kSlabLevels];
  slab_powers<kSlabRows>(a, pw);
  const Lane4 aW = mul4(pw[kSlabLevels - 1], pw[kSlabLevels - 1]);
  const Lane4 aG = slab_group_power<kSlabLevels>(pw, gi);

  // Rows of this thread in the round from r0: r0 + g U + u; rows past the end read as 0.
  auto load_round = [&](Lane4(&x)[kSlabRows], uint64_t r0) {
    const uint64_t row = r0 + static_cast<uint64_t>(g) * kSlabRows;
    const uint64_t n = !live || row >= steps ? 0 : steps - row;  // rows of this thread inside
    const float* px = in.x + row * S + col;
#pragma unroll
    for (int u = 0; u < kSlabRows; ++u) {
      x[u] = u < n ? load4(px) : Lane4{{0, 0, 0, 0}};
      px += S;
    }
  };
  Lane4 x[kSlabRows], xn[kSlabRows];
  load_round(x, 0);
  int parity = 0;
  for (uint64_t r0 = 0; r0 < steps; r0 += kSlabRound, parity ^= 1) {
    if (r0 + kSlabRound < steps) load_round(xn, r0 + kSlabRound);
    // b_u = fl(B X_u) in place, and the group's map from 0 (its coefficient is aU).
    Lane4 incl = {{0, 0, 0, 0}};
#pragma unroll
    for (int u = 0; u < kSlabRows; ++u) {
      x[u] = mul4(b, x[u]);
      incl = u == 0 ? x[0] : step4(a, incl, x[u]);
    }
    // Inclusive scan across the warp's groups of this lane.
#pragma unroll
    for (int k = 0; k < kSlabLevels; ++k) {
      const int d = 1 << k;
      const Lane4 o = shfl_up4(incl, kSlabLanes * d);
      if (gi >= d) incl = step4(pw[k], o, incl);
    }
    const Lane4 excl = shfl_up4(incl, kSlabLanes);
    if (gi == kSlabWarpGroups - 1) s_agg[parity][warp][l] = incl;
    __syncthreads();
    // The state before this group: the round's carry-in, the earlier warps' aggregates in warp
    // order, then the earlier groups of this warp.
    Lane4 h = s_carry[parity][l];
    for (int w = 0; w < warp; ++w) h = step4(aW, h, s_agg[parity][w][l]);
    if (gi > 0) h = step4(aG, h, excl);
    const uint64_t row = r0 + static_cast<uint64_t>(g) * kSlabRows;
    const uint64_t n = !live || row >= steps ? 0 : steps - row;
    float* po = out + row * S + col;
#pragma unroll
    for (int u = 0; u < kSlabRows; ++u) {
      h = step4(a, h, x[u]);
      if (u < n) {
        store4(po, h);
        marks |= nonfinite4(h);
      }
      po += S;
    }
    if (g == kSlabGroups - 1) s_carry[parity ^ 1][l] = h;
#pragma unroll
    for (int u = 0; u < kSlabRows; ++u) x[u] = xn[u];
  }
  slab_recompute_marked<false>(in, out, place, marks, s_redo);
}

// The variable forward on the slab schedule: the same blocks and rounds, U = kScanSlabVarFwd.rows
// rows a thread (three operand arrays a row: A, B and X), and, since the coefficients vary, the
// maps themselves composed: each thread composes its U maps (a_u, fl(B_u X_u)) into (ca, cb), the
// warp scan composes (ca, cb) pairs, the warp aggregates are pairs, and the exclusive prefix is the
// pair of the earlier groups of the warp. Marks: a coefficient outside [-1, 1] (or NaN) at any
// step, a non-finite h0 or output.
constexpr int kVarSlabRows = static_cast<int>(kScanSlabVarFwd.rows);
static_assert(kScanSlabVarFwd.threads == kScanSlabFwd.threads, "the constant forward's groups");
constexpr int kVarSlabRound = kSlabGroups * kVarSlabRows;

// (a2, b2) o (a1, b1) = (fl(a2 a1), fl(fl(a2 b1) + b2)), componentwise.
TLRT_DEVICE_INLINE void compose4(Lane4& ca, Lane4& cb, const Lane4& pa, const Lane4& pb) {
  cb = step4(ca, pb, cb);
  ca = mul4(ca, pa);
}

// Bit i set where |a_i| > 1 or a_i is NaN.
TLRT_DEVICE_INLINE unsigned expansive4(const Lane4& a) {
  unsigned m = 0;
#pragma unroll
  for (int i = 0; i < 4; ++i) m |= fabsf(a.v[i]) <= 1.0f ? 0u : 1u << i;
  return m;
}

__global__ void __launch_bounds__(kSlabThreads)
    scan_var_fwd_slab(ScanOperands<float> in, float* __restrict__ out) {
  __shared__ Lane4 s_agg_a[2][kSlabWarps][kSlabLanes];
  __shared__ Lane4 s_agg_b[2][kSlabWarps][kSlabLanes];
  __shared__ Lane4 s_carry[2][kSlabLanes];
  __shared__ unsigned s_redo;
  const SlabPlace place = slab_place(in.state);
  const int tid = place.tid, l = place.l, g = place.g, warp = place.warp, gi = place.gi;
  const uint64_t S = in.state, steps = in.steps;
  const uint64_t col = place.col;
  const bool live = place.live;
  if (tid == 0) s_redo = 0;  // ordered before any mark by the first round's barrier
  unsigned marks = 0;
  if (g == 0) {
    Lane4 h0 = {{0, 0, 0, 0}};
    if (live) {
#pragma unroll
      for (int i = 0; i < 4; ++i) h0.v[i] = load(in.h0 + col + i);
      marks |= nonfinite4(h0);
    }
    s_carry[0][l] = h0;
  }
  // Rows past the end read as the identity map (a = 1, b X = 0).
  auto load_round = [&](Lane4(&a)[kVarSlabRows], Lane4(&b)[kVarSlabRows], Lane4(&x)[kVarSlabRows],
                        uint64_t r0) {
    const uint64_t row = r0 + static_cast<uint64_t>(g) * kVarSlabRows;
    const uint64_t n = !live || row >= steps ? 0 : steps - row;
    const uint64_t at = row * S + col;
#pragma unroll
    for (int u = 0; u < kVarSlabRows; ++u) {
      const uint64_t i = at + static_cast<uint64_t>(u) * S;
      a[u] = u < n ? load4(in.a + i) : Lane4{{1, 1, 1, 1}};
      b[u] = u < n ? load4(in.b + i) : Lane4{{0, 0, 0, 0}};
      x[u] = u < n ? load4(in.x + i) : Lane4{{0, 0, 0, 0}};
    }
  };
  Lane4 a[kVarSlabRows], bx[kVarSlabRows], an[kVarSlabRows], bn[kVarSlabRows], xn[kVarSlabRows];
  load_round(a, bx, xn, 0);
#pragma unroll
  for (int u = 0; u < kVarSlabRows; ++u) bx[u] = mul4(bx[u], xn[u]);
  int parity = 0;
  for (uint64_t r0 = 0; r0 < steps; r0 += kVarSlabRound, parity ^= 1) {
    const bool more = r0 + kVarSlabRound < steps;
    if (more) load_round(an, bn, xn, r0 + kVarSlabRound);
    // The group's map: its U maps composed in step order.
    Lane4 ca = a[0], cb = bx[0];
#pragma unroll
    for (int u = 0; u < kVarSlabRows; ++u) {
      marks |= expansive4(a[u]);
      if (u > 0) {
        cb = step4(a[u], cb, bx[u]);
        ca = mul4(a[u], ca);
      }
    }
    // Inclusive scan across the warp's groups of this lane: (ca, cb) o (the d groups before).
#pragma unroll
    for (int k = 0; k < kSlabLevels; ++k) {
      const int d = 1 << k;
      const Lane4 pa = shfl_up4(ca, kSlabLanes * d);
      const Lane4 pb = shfl_up4(cb, kSlabLanes * d);
      if (gi >= d) compose4(ca, cb, pa, pb);
    }
    const Lane4 ea = shfl_up4(ca, kSlabLanes);
    const Lane4 eb = shfl_up4(cb, kSlabLanes);
    if (gi == kSlabWarpGroups - 1) {
      s_agg_a[parity][warp][l] = ca;
      s_agg_b[parity][warp][l] = cb;
    }
    __syncthreads();
    Lane4 h = s_carry[parity][l];
    for (int w = 0; w < warp; ++w) h = step4(s_agg_a[parity][w][l], h, s_agg_b[parity][w][l]);
    if (gi > 0) h = step4(ea, h, eb);
    const uint64_t row = r0 + static_cast<uint64_t>(g) * kVarSlabRows;
    const uint64_t n = !live || row >= steps ? 0 : steps - row;
    float* po = out + row * S + col;
#pragma unroll
    for (int u = 0; u < kVarSlabRows; ++u) {
      h = step4(a[u], h, bx[u]);
      if (u < n) {
        store4(po, h);
        marks |= nonfinite4(h);
      }
      po += S;
    }
    if (g == kSlabGroups - 1) s_carry[parity ^ 1][l] = h;
    if (more) {
#pragma unroll
      for (int u = 0; u < kVarSlabRows; ++u) {
        a[u] = an[u];
        bx[u] = mul4(bn[u], xn[u]);
      }
    }
  }
  slab_recompute_marked<true>(in, out, place, marks, s_redo);
}

// The constant backward on the slab schedule (float32, slab_takes; kScanSlabBwd): a block of 512
// threads holds C = 8 adjacent channels (2 lanes of one 16-byte access a row: one 32-byte sector)
// for the whole sequence and moves it in reverse time in rounds of R = 1024 rows, 256 groups of U =
// 4 consecutive positions u = T-1-t a thread. A round's dY is loaded a round ahead; its out
// (hprev) and X are loaded at the round's start and used after the round's scan. The scan is
// composed as in the constant forward's slab (here 16 groups a warp, 4 levels) with coefficient A,
// bias dY and carry +0, the step at u = 0 taking coefficient 0 (fl(+0 + dY)); each thread then runs
// its U steps literally, writes dX = fl(g B) and adds fl(g hprev) and fl(g X) to its own sums in
// its order. The block folds the threads' sums by a fixed tree (butterflies over a warp's groups,
// then the 16 warps in order), so results repeat bit for bit. Marks: a coefficient outside [-1, 1]
// (or NaN), a non-finite g, dX or dH0, or a non-finite sum (a non-finite fl(g hprev) or fl(g X)
// makes it one); after a barrier that follows every write of the block, thread c < C recomputes its
// channel on the literal recurrence if marked. A thread tests each position only in a round that
// is not whole for it (positions past the end, t = 0, or the sequence's first step); in a whole
// round it tests its last g and keeps the largest |g|. The marks are the same: with a coefficient
// in [-1, 1] (any other is marked already), fl(fl(A g) + dY) is non-finite whenever g is (A g is
// infinite, or NaN for A = 0, and adding dY leaves it so), so a non-finite g makes the thread's
// last g of the round non-finite; and for finite g, fl(g B) overflows at some position exactly
// when fl(max |g| |B|) does (rounding is monotonic), which is tested once at the end, a non-finite
// B once at the start. Against testing each position (H100, 2026-12-07): 1.0-3.0% less time at
// T 4096 x S 1024, 0.6-1.5% less at T 8192, 0.7-1.7% more at T 2048.
//
// On the H100 (2026-12-06) it took 0.79 and 0.83 of the chunked kernel's time at T 4096 and 8192
// x S 1024 (docs/BENCH.md); 16 channels a block, or 2 rows a thread, measured slower than this
// block, and so did seven forms that copy X and hprev (and dY) a round or more ahead into
// shared-memory stages (cp.async; 1.10-1.32 times its time at T 4096 on the H100, 2026-12-07).
constexpr int kBwdSlabChannels = static_cast<int>(kScanSlabBwd.channels);
constexpr int kBwdSlabThreads = static_cast<int>(kScanSlabBwd.threads);
constexpr int kBwdSlabRows = static_cast<int>(kScanSlabBwd.rows);  // U
constexpr int kBwdSlabLanes = kBwdSlabChannels / 4;
constexpr int kBwdSlabGroups = kBwdSlabThreads / kBwdSlabLanes;
constexpr int kBwdSlabRound = kBwdSlabGroups * kBwdSlabRows;
constexpr int kBwdSlabWarps = kBwdSlabThreads / 32;
constexpr int kBwdSlabWarpGroups = 32 / kBwdSlabLanes;
constexpr int kBwdSlabLevels = static_cast<int>(scan_slab_levels(kScanSlabBwd));
static_assert(kBwdSlabWarpGroups == 1 << kBwdSlabLevels, "whole levels of groups a warp");
static_assert(kBwdSlabChannels <= 32, "a block's marks fit one word");

__global__ void __launch_bounds__(kBwdSlabThreads, 1)
    scan_bwd_slab(ScanOperands<float> in, const float* __restrict__ out,
                  const float* __restrict__ dy, ScanGradients<float> grad) {
  constexpr int L = kBwdSlabLanes, WG = kBwdSlabWarpGroups, NL = kBwdSlabLevels;
  constexpr int W = kBwdSlabWarps, U = kBwdSlabRows;
  __shared__ Lane4 s_agg[2][W][L];
  __shared__ Lane4 s_carry[2][L];
  __shared__ Lane4 s_pw[NL + 1][L];  // A^(U 2^k) for the warp scan; [NL]: a warp aggregate's
  __shared__ Lane4 s_ag[WG][L];      // A^(U gi): the groups before group gi of a warp
  __shared__ Lane4 s_sum[2][W][L];   // the warps' sums of fl(g hprev) and fl(g X)
  __shared__ unsigned s_redo;
  const int tid = threadIdx.x, l = tid % L, grp = tid / L, warp = tid / 32, gi = grp % WG;
  const uint64_t S = in.state, steps = in.steps;
  const uint64_t col = static_cast<uint64_t>(blockIdx.x) * kBwdSlabChannels + 4 * l;
  const bool live = col < S;  // S is a multiple of 4: a lane's channels are all in or all out
  const Lane4 zero = {{0, 0, 0, 0}};
  Lane4 a = {{1, 1, 1, 1}}, bc = zero;
  unsigned marks = 0;
  if (live) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      a.v[i] = load(in.a + col + i);
      bc.v[i] = load(in.b + col + i);
      if (!(fabsf(a.v[i]) <= 1.0f)) marks |= 1u << i;
    }
  }
  if (tid < 32) {  // warp 0 forms the powers of A: group gi of lane l
    Lane4 pw[NL + 1];
    slab_powers<U>(a, pw);
    if (gi == 0) {
#pragma unroll
      for (int k = 0; k <= NL; ++k) s_pw[k][l] = pw[k];
      s_carry[0][l] = zero;
    }
    const Lane4 ag = slab_group_power<NL>(pw, gi);
    s_ag[gi][l] = ag;
  }
  if (tid == 0) s_redo = 0;
  __syncthreads();

  // This thread's positions in the round from r0: u = r0 + grp U + k (t = T-1-u), k < n. A round
  // where all U are inside, none is t = 0 and none is the sequence's first step (coefficient 0)
  // tests no position: `whole`.
  auto inside = [&](uint64_t r0) -> uint64_t {
    const uint64_t u = r0 + static_cast<uint64_t>(grp) * U;
    const uint64_t n = !live || u >= steps ? 0 : steps - u;
    return n < static_cast<uint64_t>(U) ? n : U;
  };
  auto load_dy = [&](Lane4(&d)[U], uint64_t r0) {
    const uint64_t n = inside(r0);
    const float* p =
        dy + (n == 0 ? 0 : (steps - 1 - r0 - static_cast<uint64_t>(grp) * U) * S + col);
    if (n == static_cast<uint64_t>(U)) {
#pragma unroll
      for (int k = 0; k < U; ++k, p -= S) d[k] = load4(p);
    } else {
#pragma unroll
      for (int k = 0; k < U; ++k, p -= S) d[k] = static_cast<uint64_t>(k) < n ? load4(p) : zero;
    }
  };
  Lane4 dv[U], dn[U], hp[U], xv[U];
  load_dy(dv, 0);
  Lane4 sa = zero, sb = zero, g = zero;
  // The largest |g| of the thread's whole rounds (Marks, above).
  Lane4 gmax = zero;
  if (live) marks |= nonfinite4(bc);  // a non-finite B makes every dX non-finite
  int parity = 0;
  for (uint64_t r0 = 0; r0 < steps; r0 += kBwdSlabRound, parity ^= 1) {
    const bool more = r0 + kBwdSlabRound < steps;
    if (more) load_dy(dn, r0 + kBwdSlabRound);
    const uint64_t n = inside(r0);
    // t of this thread's first row (0 when it has none: nothing below is read or written then).
    const uint64_t t0 = n == 0 ? 0 : steps - 1 - r0 - static_cast<uint64_t>(grp) * U;
    const bool whole =
        n == static_cast<uint64_t>(U) && t0 >= static_cast<uint64_t>(U) && (r0 != 0 || grp != 0);
    {
      const float* px = in.x + t0 * S + col;
      const float* po = out + (t0 == 0 ? 0 : (t0 - 1) * S + col);  // out_{t-1}
      if (whole) {
#pragma unroll
        for (int k = 0; k < U; ++k, px -= S, po -= S) {
          xv[k] = load4(px);
          hp[k] = load4(po);
        }
      } else {
#pragma unroll
        for (int k = 0; k < U; ++k, px -= S, po -= S) {
          if (static_cast<uint64_t>(k) < n) {
            xv[k] = load4(px);
            if (t0 == static_cast<uint64_t>(k)) {  // t = 0: hprev is h0
#pragma unroll
              for (int i = 0; i < 4; ++i) hp[k].v[i] = load(in.h0 + col + i);
            } else {
              hp[k] = load4(po);
            }
          } else {
            xv[k] = hp[k] = zero;
          }
        }
      }
    }
    // The group's map from +0 (coefficient A^U), then the inclusive scan across the warp's groups.
    Lane4 incl = dv[0];
#pragma unroll
    for (int k = 1; k < U; ++k) incl = step4(a, incl, dv[k]);
#pragma unroll
    for (int k = 0; k < NL; ++k) {
      const int d = 1 << k;
      const Lane4 o = shfl_up4(incl, L * d);
      if (gi >= d) incl = step4(s_pw[k][l], o, incl);
    }
    const Lane4 excl = shfl_up4(incl, L);
    if (gi == WG - 1) s_agg[parity][warp][l] = incl;
    __syncthreads();
    // g before this group: the round's carry-in, the earlier warps' aggregates in warp order, then
    // the earlier groups of this warp.
    g = s_carry[parity][l];
    const Lane4 aw = s_pw[NL][l];
    for (int w = 0; w < warp; ++w) g = step4(aw, g, s_agg[parity][w][l]);
    if (gi > 0) g = step4(s_ag[gi][l], g, excl);
    float* pdx = grad.dx + t0 * S + col;
    if (whole) {
#pragma unroll
      for (int k = 0; k < U; ++k, pdx -= S) {
        g = step4(a, g, dv[k]);
        store4(pdx, mul4(g, bc));
        sa = add4(sa, mul4(g, hp[k]));
        sb = add4(sb, mul4(g, xv[k]));
        gmax = each4([&](int i) { return fmaxf(gmax.v[i], fabsf(g.v[i])); });
      }
      marks |= nonfinite4(g);  // the last g of the round stands for the U
    } else {
#pragma unroll
      for (int k = 0; k < U; ++k, pdx -= S) {
        if (static_cast<uint64_t>(k) < n) {
          g = step4(r0 == 0 && grp == 0 && k == 0 ? zero : a, g, dv[k]);
          const Lane4 dx = mul4(g, bc);
          store4(pdx, dx);
          sa = add4(sa, mul4(g, hp[k]));
          sb = add4(sb, mul4(g, xv[k]));
          marks |= nonfinite4(g) | nonfinite4(dx);
          if (t0 == static_cast<uint64_t>(k)) {  // t = 0
            const Lane4 dh0 = mul4(g, a);
#pragma unroll
            for (int i = 0; i < 4; ++i) grad.dh0[col + i] = dh0.v[i];
            marks |= nonfinite4(dh0);
          }
        }
      }
    }
    if (grp == kBwdSlabGroups - 1) s_carry[parity ^ 1][l] = g;
    if (more) {
#pragma unroll
      for (int k = 0; k < U; ++k) dv[k] = dn[k];
    }
  }
  marks |= nonfinite4(mul4(gmax, bc));  // a dX of the whole rounds overflowed
  // The threads' sums: butterflies over the groups of a warp (the same lane l), then the warps in
  // order.
#pragma unroll
  for (int m = 16; m >= L; m >>= 1) {
    sa = add4(sa, shfl_xor4(sa, m));
    sb = add4(sb, shfl_xor4(sb, m));
  }
  if (gi == 0) {
    s_sum[0][warp][l] = sa;
    s_sum[1][warp][l] = sb;
  }
  __syncthreads();
  if (tid < L && live) {
    Lane4 fa = s_sum[0][0][l], fb = s_sum[1][0][l];
    for (int w = 1; w < W; ++w) {
      fa = add4(fa, s_sum[0][w][l]);
      fb = add4(fb, s_sum[1][w][l]);
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      grad.da[col + i] = fa.v[i];
      grad.db[col + i] = fb.v[i];
    }
    marks |= nonfinite4(fa) | nonfinite4(fb);
  }
  slab_redo_marked<kBwdSlabChannels>(S, tid, l, marks, s_redo, [&](uint64_t c) {
    bwd_channel_exact<float, false>(in, out, dy, grad, c);
  });
}

}  // namespace

namespace scan_detail {

void launch_slab_fwd(const ScanOperands<float>& in, float* out, CUstream_st* stream,
                     const char* op) {
  const dim3 blocks = channel_grid(in.state, kSlabChannels, op);
  if (in.variable) {
    scan_var_fwd_slab<<<blocks, kSlabThreads, 0, stream>>>(in, out);
  } else {
    scan_fwd_slab<<<blocks, kSlabThreads, 0, stream>>>(in, out);
  }
  check_launch(op);
}

void launch_slab_bwd(const ScanOperands<float>& in, const float* out, const float* dy,
                     const ScanGradients<float>& grad, CUstream_st* stream, const char* op) {
  scan_bwd_slab<<<channel_grid(in.state, kBwdSlabChannels, op), kBwdSlabThreads, 0, stream>>>(
      in, out, dy, grad);
  check_launch(op);
}

}  // namespace scan_detail
}  // namespace tlrt::kernels
