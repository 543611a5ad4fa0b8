// What the selective scan's CUDA translation units share: kernels/scan/scan.cu (the schedules'
// choice and the dispatch, the exact and resident schedules), kernels/scan/scan_slab.cu (the slab
// schedule), kernels/scan/scan_rows.cu (the rows schedule), kernels/scan/scan_chunked.cu (the
// chunked schedule, and the recompute of marked channels behind it, the split schedule and the
// rows schedule) and kernels/scan/scan_split.cu (the constant backward's split schedule). The
// separately rounded step and the composition of maps, the workspace of the chunked and rows
// schedules and its look-back values, the backward's chunk of the chunked and split schedules,
// the literal recurrence of one channel that every fast schedule runs again on the channels it
// marks, and each schedule's launch.
#pragma once

#include <cuda_runtime.h>
#include <cuda/atomic>

#include <cstddef>
#include <cstdint>

#include "kernels/common/float_ops.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/scan/scan.h"

namespace tlrt::kernels::scan_detail {

// Every lane of a warp (the shuffles' mask).
constexpr unsigned kFullMask = 0xffffffffu;

constexpr int kTileChannels = 32;  // channels of a fast-schedule tile (one warp width)
constexpr int kSegments = static_cast<int>(kScanSegments);  // warps of a fast-schedule block
constexpr int kFastThreads = kTileChannels * kSegments;
constexpr int kExactThreads = 32;  // channels per block of the exact schedule (one warp)

// One step of the affine recurrence, separately rounded: fl(fl(a*h) + b).
template <class T>
TLRT_DEVICE_INLINE T step(T a, T h, T b) {
  return add_rn(mul_rn(a, h), b);
}

// The preconditions of the reassociated schedule (SPEC-ops 13): a coefficient of magnitude at
// most 1, a finite bias. A NaN coefficient fails the first.
template <class T>
TLRT_DEVICE_INLINE bool outside(T a, T b) {
  return !(fabs(a) <= T(1)) || !isfinite(b);
}

// A thread's K maps (av(k), bv[k]) composed in step order into (ca, cb); returns `out` or whether
// any of them is outside the preconditions.
template <class T, int K, class Coefficient>
TLRT_DEVICE_INLINE bool compose_steps(Coefficient av, const T (&bv)[K], T& ca, T& cb, bool out) {
#pragma unroll
  for (int k = 0; k < K; ++k) out = out || outside(av(k), bv[k]);
  ca = av(0);
  cb = bv[0];
#pragma unroll
  for (int k = 1; k < K; ++k) {
    cb = step(av(k), cb, bv[k]);
    ca = mul_rn(av(k), ca);
  }
  return out;
}

template <class T>
TLRT_DEVICE_INLINE T load(const T* p) {
  return __ldg(p);
}

// Time steps per thread in the fast schedule.
constexpr int fast_steps_per_thread(size_t element_bytes, ScanPass pass) {
  return static_cast<int>(scan_segment_steps(element_bytes, pass));
}

// ---------------------------------------------------------------------------------------------
// Workspace of the fast schedule.

// The workspace of a chunked or rows launch, byte offsets: the constant backward's per-chunk sums
// (none in the other variants), then, from `cleared` to the end, what is set to all-ones bytes
// before each launch: the published maps (a, b), the chunked look-back's inclusive values, the
// ticket and one byte per channel (kRedoMarked: recompute it on the exact schedule).
struct WorkLayout {
  size_t part_da = 0, part_db = 0;
  size_t cleared = 0, agg_a = 0, agg_b = 0, inclusive = 0, ticket = 0, redo = 0;
  size_t bytes = 0;
};

// `partial` bytes for each of the sums (0: none), `values` bytes for each published array.
inline WorkLayout work_layout(size_t partial, size_t values, bool inclusive, uint64_t state) {
  auto align = [](size_t b) { return (b + 255) / 256 * 256; };
  WorkLayout l;
  size_t at = 0;
  if (partial != 0) {
    l.part_da = at;
    at = align(at + partial);
    l.part_db = at;
    at = align(at + partial);
  }
  l.cleared = at;
  l.agg_a = at;
  at = align(at + values);
  l.agg_b = at;
  at = align(at + values);
  if (inclusive) {
    l.inclusive = at;
    at = align(at + values);
  }
  l.ticket = at;
  l.redo = at + sizeof(uint32_t);
  l.bytes = align(l.redo + static_cast<size_t>(state));
  return l;
}

struct FastPlan : WorkLayout {
  uint64_t tiles = 0, chunks = 0, chunk_steps = 0;
  int polls = 1;          // predecessors each warp polls in a look-back round (lookback_polls)
  uint32_t wait_ns = 32;  // the wait between look-back rounds (lookback_wait_ns)
};

enum class Variant { fwd, var_fwd, bwd, var_bwd };
constexpr bool is_backward(Variant v) {
  return v == Variant::bwd || v == Variant::var_bwd;
}
constexpr bool is_variable(Variant v) {
  return v == Variant::var_fwd || v == Variant::var_bwd;
}

// Look-back values are published as their bits and polled with relaxed loads. Every slot holds
// the all-ones pattern (a NaN) until its value is published, and a published NaN is first
// replaced by the canonical quiet NaN, so a value read says by itself whether it is there: one
// round trip per poll, no flags and no fences. (A non-finite aggregate or inclusive value makes
// the successor's carry-in non-finite, and with it the successor's first output, which marks the
// channel: so a replaced NaN payload never reaches an output.)
template <class T>
struct LookBits;
template <>
struct LookBits<float> {
  using U = uint32_t;
  static constexpr U kNone = 0xffffffffu, kNaN = 0x7fc00000u;
};
template <>
struct LookBits<double> {
  using U = unsigned long long;
  static constexpr U kNone = ~0ull, kNaN = 0x7ff8000000000000ull;
};

constexpr uint8_t kRedoMarked = 0;  // the cleared byte is 0xff

// The device pointers of a WorkLayout.
template <class T>
struct WorkPointers {
  using U = typename LookBits<T>::U;
  U* agg_a;
  U* agg_b;
  U* inclusive;
  T* part_da;
  T* part_db;
  uint32_t* ticket;  // all-ones before the launch: the first block takes ticket 0
  uint8_t* redo;
};

template <class T>
void bind_work(WorkPointers<T>& w, const WorkLayout& l, void* workspace) {
  char* base = static_cast<char*>(workspace);
  using U = typename WorkPointers<T>::U;
  w.agg_a = reinterpret_cast<U*>(base + l.agg_a);
  w.agg_b = reinterpret_cast<U*>(base + l.agg_b);
  w.inclusive = l.inclusive != 0 ? reinterpret_cast<U*>(base + l.inclusive) : nullptr;
  const bool sums = l.cleared != 0;  // the constant backward's sums come first
  w.part_da = sums ? reinterpret_cast<T*>(base + l.part_da) : nullptr;
  w.part_db = sums ? reinterpret_cast<T*>(base + l.part_db) : nullptr;
  w.ticket = reinterpret_cast<uint32_t*>(base + l.ticket);
  w.redo = reinterpret_cast<uint8_t*>(base + l.redo);
}

template <class T>
struct FastWork : WorkPointers<T> {
  uint64_t tiles, chunks;
  uint32_t wait_ns;  // between look-back rounds
};

template <class T>
FastWork<T> fast_work(const FastPlan& p, void* workspace) {
  FastWork<T> w;
  bind_work<T>(w, p, workspace);
  w.tiles = p.tiles;
  w.chunks = p.chunks;
  w.wait_ns = p.wait_ns;
  return w;
}

template <class T>
TLRT_DEVICE_INLINE void publish(typename LookBits<T>::U* slot, T v) {
  using B = LookBits<T>;
  typename B::U bits;
  if constexpr (sizeof(T) == 4) {
    bits = __float_as_uint(v);
  } else {
    bits = static_cast<typename B::U>(__double_as_longlong(v));
  }
  if (isnan(v)) bits = B::kNaN;
  cuda::atomic_ref<typename B::U, cuda::thread_scope_device>(*slot).store(
      bits, cuda::memory_order_relaxed);
}

template <class T>
TLRT_DEVICE_INLINE typename LookBits<T>::U peek(typename LookBits<T>::U* slot) {
  return cuda::atomic_ref<typename LookBits<T>::U, cuda::thread_scope_device>(*slot).load(
      cuda::memory_order_relaxed);
}

template <class T>
TLRT_DEVICE_INLINE T from_bits(typename LookBits<T>::U bits) {
  if constexpr (sizeof(T) == 4) {
    return __uint_as_float(bits);
  } else {
    return __longlong_as_double(static_cast<long long>(bits));
  }
}

// The block's ticket (called by every thread): blocks take chunk slots in the order they start.
// The fast kernels are launched dependent on clear_work_words and take their ticket before any
// other access to the workspace, so the wait for the cleared workspace is here; each block then
// lets the kernel queued behind (the recompute of marked channels) start its blocks, which wait
// in turn for this kernel to complete.
TLRT_DEVICE_INLINE uint64_t take_ticket(uint32_t* counter) {
  wait_prior_grid();
  allow_dependents();
  __shared__ uint32_t s_ticket;
  if (threadIdx.x == 0) {
    cuda::atomic_ref<uint32_t, cuda::thread_scope_device> ticket(*counter);
    s_ticket = ticket.fetch_add(1u, cuda::memory_order_relaxed) + 1u;  // cleared to all-ones
  }
  __syncthreads();
  return s_ticket;
}

// The rows schedule's plan (kernels/scan/scan_rows.cu): chunks of Q K rows, whose maps are
// composed in groups of kScanRowsGroup a level (level 0: the chunks' own), and the workspace that
// holds the maps of every level.
constexpr int kRowsGroupLog2 = 5;
static_assert((uint64_t{1} << kRowsGroupLog2) == kScanRowsGroup, "groups of 2^5 maps");
constexpr uint64_t kRowsGroupLast = kScanRowsGroup - 1;
constexpr int kRowsMaxLevels = 7;  // 32^7 = 2^35 chunks are more than a grid holds

struct RowsPlan : WorkLayout {
  uint64_t chunks = 0;
  int segments = 0, levels = 0;
  uint64_t level_at[kRowsMaxLevels] = {};
};

inline RowsPlan rows_plan(uint64_t steps, uint64_t state, size_t element_bytes, Variant v) {
  RowsPlan p;
  p.segments = static_cast<int>(scan_rows_threads(is_backward(v), is_variable(v)) / state);
  const uint64_t rows = static_cast<uint64_t>(p.segments) * scan_rows_steps(element_bytes);
  p.chunks = (steps + rows - 1) / rows;
  p.levels = 1;
  while (p.levels < kRowsMaxLevels && (uint64_t{1} << (kRowsGroupLog2 * p.levels)) < p.chunks) {
    ++p.levels;
  }
  uint64_t nodes = 0;  // level 0: every chunk; level l: the complete groups
  for (int l = 0; l < p.levels; ++l) {
    p.level_at[l] = nodes;
    nodes += p.chunks >> (kRowsGroupLog2 * l);
  }
  const size_t partial =
      v == Variant::bwd ? static_cast<size_t>(p.chunks * state) * element_bytes : 0;
  static_cast<WorkLayout&>(p) =
      work_layout(partial, static_cast<size_t>(nodes * state) * element_bytes, false, state);
  return p;
}

// Channel c's coefficient A and input weight B in the constant variant (the variable variant reads
// them per step and leaves ac and bc as they are).
template <class T, bool Var>
TLRT_DEVICE_INLINE void load_channel_constants(const ScanOperands<T>& in, uint64_t c, T& ac,
                                               T& bc) {
  if (!Var) {
    ac = load(in.a + c);
    bc = load(in.b + c);
  }
}

// The products of a backward step from its g: dA = fl(g hprev), dB = fl(g X), dX = fl(g B).
template <class T>
struct StepProducts {
  T da, db, dx;
};

template <class T>
TLRT_DEVICE_INLINE StepProducts<T> bwd_step_products(T g, T hp, T x, T b) {
  return {mul_rn(g, hp), mul_rn(g, x), mul_rn(g, b)};
}

// The constant variant adds a step's dA and dB to its channel's sums, in reverse time order.
template <class T, bool Var>
TLRT_DEVICE_INLINE void add_step_sums(const StepProducts<T>& p, T& sum_a, T& sum_b) {
  if (!Var) {
    sum_a = add_rn(sum_a, p.da);
    sum_b = add_rn(sum_b, p.db);
  }
}

// A backward step's products written at flat index i: dX, and dA and dB (variable variant) or
// their sums (constant variant).
template <class T, bool Var>
TLRT_DEVICE_INLINE StepProducts<T> bwd_step_outputs(const ScanGradients<T>& grad, uint64_t i, T g,
                                                    T hp, T x, T b, T& sum_a, T& sum_b) {
  const StepProducts<T> p = bwd_step_products(g, hp, x, b);
  grad.dx[i] = p.dx;
  if (Var) {
    grad.da[i] = p.da;
    grad.db[i] = p.db;
  }
  add_step_sums<T, Var>(p, sum_a, sum_b);
  return p;
}

// The end of channel c's literal backward: the constant variant's sums, and dH0 = fl(g A_0).
template <class T, bool Var>
TLRT_DEVICE_INLINE void bwd_end_literal(const ScanOperands<T>& in, const ScanGradients<T>& grad,
                                        uint64_t c, T ac, T g, T sum_a, T sum_b) {
  if (!Var) {
    grad.da[c] = sum_a;
    grad.db[c] = sum_b;
  }
  grad.dh0[c] = mul_rn(g, Var ? load(in.a + c) : ac);
}

// The literal recurrence of one channel, for the channels the fast schedule marks: the exact
// kernels' arithmetic (the same products and sums in the same order), read straight from global
// memory, so a recomputed channel carries the exact schedule's (the reference's) bits.

template <class T, bool Var>
__device__ __noinline__ void fwd_channel_exact(ScanOperands<T> in, T* out, uint64_t c) {
  // The operands of kBatch steps are loaded before the chain runs over them, so that a batch's
  // loads are in flight together rather than one step's at a time.
  constexpr int kBatch = 8;
  const uint64_t S = in.state, steps = in.steps;
  T ac = T(0), bc = T(0);
  load_channel_constants<T, Var>(in, c, ac, bc);
  T h = load(in.h0 + c);
  for (uint64_t t0 = 0; t0 < steps; t0 += kBatch) {
    T xv[kBatch], av[Var ? kBatch : 1], bv[Var ? kBatch : 1];
#pragma unroll
    for (int q = 0; q < kBatch; ++q) {
      if (t0 + q < steps) {
        const uint64_t i = (t0 + q) * S + c;
        xv[q] = load(in.x + i);
        if (Var) {
          av[Var ? q : 0] = load(in.a + i);
          bv[Var ? q : 0] = load(in.b + i);
        }
      }
    }
#pragma unroll
    for (int q = 0; q < kBatch; ++q) {
      if (t0 + q < steps) {
        const T a = Var ? av[Var ? q : 0] : ac;
        const T b = Var ? bv[Var ? q : 0] : bc;
        h = step(a, h, mul_rn(b, xv[q]));
        out[(t0 + q) * S + c] = h;
      }
    }
  }
}

template <class T, bool Var>
__device__ __noinline__ void bwd_channel_exact(ScanOperands<T> in, const T* out, const T* dy,
                                               ScanGradients<T> grad, uint64_t c) {
  constexpr int kBatch = 8;  // steps whose operands are loaded before the chain runs over them
  const uint64_t S = in.state, steps = in.steps;
  T ac = T(0), bc = T(0);
  load_channel_constants<T, Var>(in, c, ac, bc);
  const T h0 = load(in.h0 + c);
  T g = T(0), sum_a = T(0), sum_b = T(0);
  for (uint64_t u0 = 0; u0 < steps; u0 += kBatch) {
    T dv[kBatch], xv[kBatch], hv[kBatch], anv[Var ? kBatch : 1], bv[Var ? kBatch : 1];
#pragma unroll
    for (int q = 0; q < kBatch; ++q) {
      const uint64_t u = u0 + q;
      if (u < steps) {
        const uint64_t t = steps - 1 - u;
        const uint64_t i = t * S + c;
        dv[q] = load(dy + i);
        xv[q] = load(in.x + i);
        hv[q] = t == 0 ? h0 : load(out + (i - S));
        if (Var) {
          anv[Var ? q : 0] = u == 0 ? T(0) : load(in.a + (i + S));
          bv[Var ? q : 0] = load(in.b + i);
        }
      }
    }
#pragma unroll
    for (int q = 0; q < kBatch; ++q) {
      const uint64_t u = u0 + q;
      if (u < steps) {
        const uint64_t i = (steps - 1 - u) * S + c;
        // u == 0: fl(fl(0 * +0) + dY) = fl(+0 + dY).
        const T an = Var ? anv[Var ? q : 0] : (u == 0 ? T(0) : ac);
        g = step(an, g, dv[q]);
        bwd_step_outputs<T, Var>(grad, i, g, hv[q], xv[q], Var ? bv[Var ? q : 0] : bc, sum_a,
                                 sum_b);
      }
    }
  }
  bwd_end_literal<T, Var>(in, grad, c, ac, g, sum_a, sum_b);
}

// ---------------------------------------------------------------------------------------------
// What the chunked kernels (kernels/scan/scan_chunked.cu) and the split schedule's
// (kernels/scan/scan_split.cu) share: the composition of a chunk's segment maps and the
// backward's chunk.

// Composes the maps of the segments before `upto` (0 .. upto-1) from shared memory: identity
// when upto == 0 (returned as have = false).
template <class T>
TLRT_DEVICE_INLINE bool compose_segments(const T (*sa)[kTileChannels], const T (*sb)[kTileChannels],
                                         int upto, int lane, T& pa, T& pb) {
  if (upto == 0) return false;
  pa = sa[0][lane];
  pb = sb[0][lane];
  for (int q = 1; q < upto; ++q) {
    const T aq = sa[q][lane];
    pb = step(aq, pb, sb[q][lane]);
    pa = mul_rn(aq, pa);
  }
  return true;
}

// The constant backward's coefficient at reverse position u: A_{t+1} (ac), 0 at u = 0 (so that g
// starts as fl(+0 + dY)), and the identity 1 past the sequence or on a channel past S. The chunked,
// split and maps kernels all take it from here, so their maps agree bit for bit.
template <class T>
TLRT_DEVICE_INLINE T constant_bwd_coefficient(bool live, uint64_t u, uint64_t steps, T ac) {
  return live && u < steps ? (u == 0 ? T(0) : ac) : T(1);
}

// One chunk of the backward (scan_bwd_fast, scan_bwd_split) in reverse time: position u = T-1-t;
// coefficient an_u = A_{t+1} (0 at u = 0), bias dY_t, carry +0. `before` runs once the segment
// maps are in shared memory, before the barrier that publishes them; `carry(seg, lane)` is then
// called by every thread and returns the chunk's carry-in.
template <class T, bool Var, int K, class Before, class Carry>
TLRT_DEVICE_INLINE void bwd_chunk(const ScanOperands<T>& in, const T* __restrict__ out,
                                  const T* __restrict__ dy, const ScanGradients<T>& grad,
                                  const WorkPointers<T>& w, uint64_t tile, uint64_t chunk,
                                  T (*s_a)[kTileChannels], T (*s_b)[kTileChannels], Before before,
                                  Carry carry) {
  const int lane = threadIdx.x % kTileChannels, seg = threadIdx.x / kTileChannels;
  const uint64_t S = in.state, steps = in.steps;
  const uint64_t c = tile * kTileChannels + lane;
  const bool live = c < S;
  const uint64_t u0 =
      chunk * (static_cast<uint64_t>(kSegments) * K) + static_cast<uint64_t>(seg) * K;

  T ac = T(1), bc = T(0);
  if (!Var && live) {
    ac = load(in.a + c);
    bc = load(in.b + c);
  }
  // The constant variant's coefficients stay registers (identity past the end), not arrays.
  T an_[Var ? K : 1], dv[K], hp[K], xv[K], bv_[Var ? K : 1];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const uint64_t u = u0 + k;
    if (live && u < steps) {
      const uint64_t t = steps - 1 - u;
      const uint64_t i = t * S + c;
      dv[k] = load(dy + i);
      an_[Var ? k : 0] = u == 0 ? T(0) : (Var ? load(in.a + (i + S)) : ac);
      hp[k] = t == 0 ? load(in.h0 + c) : load(out + (i - S));
      xv[k] = load(in.x + i);
      bv_[Var ? k : 0] = Var ? load(in.b + i) : bc;
    } else {
      an_[Var ? k : 0] = T(1);
      dv[k] = T(0);
      hp[k] = xv[k] = bv_[Var ? k : 0] = T(0);
    }
  }
  auto an = [&](int k) -> T {
    if constexpr (Var) {
      return an_[k];
    } else {
      return constant_bwd_coefficient(live, u0 + k, steps, ac);
    }
  };
  auto bv = [&](int k) -> T {  // read on steps inside the sequence only
    if constexpr (Var) {
      return bv_[k];
    } else {
      return bc;
    }
  };
  // Any step outside the preconditions or any non-finite g or output sends the channel to the
  // exact schedule (rebwd_marked or, in the constant variant, fold_chunks, both queued behind
  // this kernel).
  T ca, cb;
  bool redo = compose_steps<T, K>(an, dv, ca, cb, false);
  s_a[seg][lane] = ca;
  s_b[seg][lane] = cb;
  before();
  __syncthreads();
  T g = carry(seg, lane);
  T pa, pb;
  if (compose_segments<T>(s_a, s_b, seg, lane, pa, pb)) g = step(pa, g, pb);
  T sum_a = T(0), sum_b = T(0);
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const uint64_t u = u0 + k;
    if (live && u < steps) {
      const uint64_t t = steps - 1 - u;
      const uint64_t i = t * S + c;
      g = step(an(k), g, dv[k]);
      const StepProducts<T> p =
          bwd_step_outputs<T, Var>(grad, i, g, hp[k], xv[k], bv(k), sum_a, sum_b);
      redo = redo || !isfinite(g) || !isfinite(p.da) || !isfinite(p.db) || !isfinite(p.dx);
      if (t == 0) {
        const T a0 = Var ? load(in.a + c) : ac;
        const T dh0 = mul_rn(g, a0);
        grad.dh0[c] = dh0;
        redo = redo || !(fabs(a0) <= T(1)) || !isfinite(dh0);
      }
    }
  }
  if (live && redo) w.redo[c] = kRedoMarked;
  if (!Var) {
    // The chunk's partial sums, segments in reverse time order.
    __syncthreads();  // every thread has read s_a / s_b
    s_a[seg][lane] = sum_a;
    s_b[seg][lane] = sum_b;
    __syncthreads();
    if (seg == 0 && live) {
      T pa_sum = T(0), pb_sum = T(0);
      for (int q = 0; q < kSegments; ++q) {
        pa_sum = add_rn(pa_sum, s_a[q][lane]);
        pb_sum = add_rn(pb_sum, s_b[q][lane]);
      }
      w.part_da[chunk * S + c] = pa_sum;
      w.part_db[chunk * S + c] = pb_sum;
    }
  }
}

// The grid of a launch whose blocks hold `channels` adjacent channels each (the exact and slab
// schedules).
inline dim3 channel_grid(uint64_t state, uint64_t channels, const char* op) {
  const uint64_t blocks = (state + channels - 1) / channels;
  if (blocks > 0x7fffffffu) fail(ErrorKind::invalid_argument, op, "state exceeds the CUDA grid");
  return dim3(static_cast<unsigned>(blocks));
}

inline dim3 exact_grid(uint64_t state, const char* op) {
  return channel_grid(state, kExactThreads, op);
}

// M(T, V) for each dtype and variant: the explicit instantiations of the launches that one file
// defines for the others.
// clang-format off
#define TLRT_SCAN_EACH_VARIANT(M)                      \
  M(float, Variant::fwd) M(float, Variant::var_fwd)    \
  M(float, Variant::bwd) M(float, Variant::var_bwd)    \
  M(double, Variant::fwd) M(double, Variant::var_fwd)  \
  M(double, Variant::bwd) M(double, Variant::var_bwd)
// clang-format on

// Sets the workspace of a chunked or rows launch from `cleared` on to all-ones bytes
// (kernels/scan/scan_chunked.cu), after checking its 16-byte alignment.
void clear_work(const WorkLayout& p, void* workspace, CUstream_st* stream, const char* op);

// Throws invalid_argument naming `op` unless the workspace is 16-byte aligned
// (kernels/scan/scan_chunked.cu).
void check_workspace(const void* workspace, const char* op);

// The kernel queued behind a chunked or rows launch of variant V (kernels/scan/scan_chunked.cu):
// the recompute of the channels marked in w.redo, or the constant backward's fold of its `chunks`
// per-chunk sums (which also recomputes them).
template <class T, Variant V>
void launch_recompute(const ScanOperands<T>& in, T* fwd_h, const T* saved_h, const T* dy,
                      const ScanGradients<T>& grad, const WorkPointers<T>& w, uint64_t chunks,
                      dim3 blocks, CUstream_st* stream, const char* op);

// The chunked schedule (kernels/scan/scan_chunked.cu) on plan p, the recompute queued behind; the
// float32 constant backward takes the split schedule where split_takes.
template <class T>
void launch_chunked_fwd(const ScanOperands<T>& in, T* out, const FastPlan& p, void* workspace,
                        CUstream_st* stream, const char* op);
template <class T>
void launch_chunked_bwd(const ScanOperands<T>& in, const T* out, const T* dy,
                        const ScanGradients<T>& grad, const FastPlan& p, void* workspace,
                        CUstream_st* stream, const char* op);

// The split schedule of the float32 constant backward (kernels/scan/scan_split.cu): whether a
// chunked plan takes it, and its launches on the chunked plan's grid, fold_chunks queued behind.
bool split_takes(const FastPlan& p);
void launch_split(const ScanOperands<float>& in, const float* saved_h, const float* dy,
                  const ScanGradients<float>& grad, const FastPlan& p, void* workspace, dim3 grid,
                  dim3 exact_blocks, CUstream_st* stream, const char* op);

// The rows schedule of variant V (kernels/scan/scan_rows.cu): the forwards write fwd_h; the
// backwards read saved_h, dy and write grad. The recompute is queued behind.
template <class T, Variant V>
void launch_rows(const ScanOperands<T>& in, T* fwd_h, const T* saved_h, const T* dy,
                 const ScanGradients<T>& grad, void* workspace, CUstream_st* stream,
                 const char* op);

// The slab schedule (float32; kernels/scan/scan_slab.cu), where slab_takes: the forward of
// either variant, and the constant variant's backward. The operands' (T, S) arrays are 16-byte
// aligned.
void launch_slab_fwd(const ScanOperands<float>& in, float* out, CUstream_st* stream,
                     const char* op);
void launch_slab_bwd(const ScanOperands<float>& in, const float* out, const float* dy,
                     const ScanGradients<float>& grad, CUstream_st* stream, const char* op);

}  // namespace tlrt::kernels::scan_detail
