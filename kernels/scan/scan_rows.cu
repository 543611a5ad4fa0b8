// Diagonal selective scans, CUDA backend: the rows schedule (S up to scan_rows_max_state). The
// overview of the schedules and the rule that picks one are at the top of kernels/scan/scan.cu.
#include <cuda_pipeline.h>
#include <cuda_runtime.h>
#include <cuda/atomic>

#include <atomic>
#include <cstdint>

#include "kernels/common/async_copy.cuh"
#include "kernels/common/float_ops.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/scan/scan.h"
#include "kernels/scan/scan_shared.cuh"

namespace tlrt::kernels {
namespace {

using namespace scan_detail;

// ---------------------------------------------------------------------------------------------
// Rows schedule (fast mode, S up to scan_rows_max_state: 128 in the forwards, 64 in the
// backwards).
//
// A block takes a chunk of R = Q K contiguous rows (all S channels) in the order of its ticket:
// in time order for the forwards, reverse time order for the backwards (chunk 0 holds the last
// rows). Its threads copy the chunk's operand rows, one contiguous range per array, into shared
// memory (cp.async, coalesced whatever S, 16 bytes a copy: a slot's rows start at the place the
// range's first element has in its 16-byte word); thread tid then takes channel j = tid % S and the
// K consecutive rows m K .. m K + K - 1 of the chunk, m = tid / S (Q = floor(threads / S) segments
// a channel; K = 33 in float32, 17 in float64, so a warp's reads of a step hit distinct banks).
// Each thread composes its K maps in scan order; a Kogge-Stone scan over the Q segments of each
// channel (shared memory) gives every segment the map of the chunk's segments up to its own, and
// the last one is the chunk's map, published at once.
//
// The carry-in of chunk i comes from the chunks before it through fixed groups of kScanRowsGroup
// = 32 maps: the map of a complete group at level l + 1 is the composition, in scan order, of its
// 32 members at level l (level 0: the chunk maps), published by the block of the group's last
// chunk once it has read the other 31. Writing i in base 32 with digits d_l, the chunks before i
// are, from the highest level down, the first d_l groups (at level l) of i's enclosing group at
// level l + 1; the channel's thread applies those maps one by one, in that (time) order, to h0
// (the backward: +0). Every map and carry is thus a fixed function of the input, whatever the
// timing, so results repeat bit for bit, and no carry waits on a chain of other carries: a block
// waits only for maps that blocks with earlier tickets publish after their own loads (a group map
// after its members). The maps a block needs (at most 31 a level) are polled into shared memory
// in rounds, each value's bits saying whether it is published (LookBits); a round holds what the
// shared memory left beside the resident blocks' slots holds (rows_poll_elems).
//
// Each thread then applies its segment's exclusive prefix to the carry and runs its K steps
// literally, writing the outputs over its operands in shared memory, and the block stores the
// chunk's output rows with coalesced writes (16 bytes a store where the output's rows and the
// slot's share their place in a 16-byte word). The backward forms dX (and the variable variant's
// dA, dB) in the same pass; the constant variant's per-chunk sums of dA, dB (reverse time inside
// the chunk) go to the workspace for fold_chunks. Marks as in the chunked schedule: a byte per
// channel, recomputed by the kernel queued behind (refwd_marked, rebwd_marked, fold_chunks); inside
// the block they gather in a bit a channel. The channels' carries, once the polls are over, sit
// where the last poll round's values were.

// (ca, cb) becomes (a, b) o (ca, cb), the map (a, b) applied after it, or (a, b) itself where
// `any` is false (the first map).
template <class T>
TLRT_DEVICE_INLINE void then_map(T a, T b, T& ca, T& cb, bool& any) {
  if (any) {
    cb = step(a, cb, b);
    ca = mul_rn(a, ca);
  } else {
    ca = a;
    cb = b;
    any = true;
  }
}

// Maps (a, b) of S channels: level l's node n at (level_at[l] + n) * S; the constant backward's
// per-chunk sums at chunk * S + j.
template <class T>
struct RowsWork : WorkPointers<T> {
  uint64_t level_at[kRowsMaxLevels];
  int levels;
  int segments;    // Q
  int poll_elems;  // the shared memory of a poll round, elements of each of a and b
};

template <class T, Variant V>
struct RowsShape {
  static constexpr bool kBwd = is_backward(V);
  static constexpr bool kVar = is_variable(V);
  static constexpr int K = static_cast<int>(scan_rows_steps(sizeof(T)));
  static constexpr int kThreads = static_cast<int>(scan_rows_threads(kBwd, kVar));
  // Staged arrays, by slot: the forwards X (, A, B); the backwards dY, X, hprev (, A_{t+1}, B).
  static constexpr int kX = kBwd ? 1 : 0, kA = 1, kB = kBwd ? 4 : 2, kDy = 0, kHp = 2, kAn = 3;
  static constexpr int kArrays = kBwd ? (kVar ? 5 : 3) : (kVar ? 3 : 1);
  static constexpr int kRowElems = kThreads * K;  // R S = Q K S <= threads K
  // A slot: the rows and up to kVec - 1 elements before them (16-byte words).
  static constexpr int kVec = static_cast<int>(16 / sizeof(T));
  static constexpr int kSlotElems = kRowElems + kVec;
  static_assert(kRowElems % kVec == 0, "slots start on 16-byte words");
  // Shared memory: the slots and the segment maps, then a poll round's values of a and b
  // (poll_elems each, chosen at launch: rows_poll_elems).
  using U = typename LookBits<T>::U;
  static constexpr size_t kFixedBytes =
      (static_cast<size_t>(kArrays) * kSlotElems + 2 * kThreads) * sizeof(T);
  static constexpr size_t bytes(int poll_elems) {
    return kFixedBytes + 2 * static_cast<size_t>(poll_elems) * sizeof(U);
  }
  static_assert(kThreads >= static_cast<int>(scan_rows_max_state(kBwd)),
                "a chunk holds at least one segment a channel");
};

// The elements [lo, hi) of a row range split at 16-byte words: a head [lo, a) of single
// elements, `words` whole words [a, b), a tail [b, hi); `head` is the head's length when the
// range is not shorter.
struct WordSplit {
  int a, words, b;
};
template <class T>
TLRT_DEVICE_INLINE WordSplit split_words(int head, int lo, int hi) {
  constexpr int kVec = static_cast<int>(16 / sizeof(T));
  WordSplit w;
  w.a = lo + head < hi ? lo + head : hi;
  w.words = (hi - w.a) / kVec;
  w.b = w.a + w.words * kVec;
  return w;
}

// A block's NT threads copy src[base + e] to dst[e] (shared memory) for e in [lo, hi),
// asynchronously (the caller commits and waits): 16 bytes a copy between a head and a tail of
// single elements. dst[e] and src[base + e] share their place in a 16-byte word.
template <class T, int NT>
TLRT_DEVICE_INLINE void copy_rows_async(T* dst, const T* src, int64_t base, int lo, int hi,
                                        int tid) {
  constexpr int kVec = static_cast<int>(16 / sizeof(T));
  const WordSplit w = split_words<T>(to_word_boundary(src, base + lo), lo, hi);
  if (tid < w.a - lo) copy_chunk_async<T, 1>(dst + lo + tid, src + (base + lo + tid));
  if (tid < hi - w.b) copy_chunk_async<T, 1>(dst + w.b + tid, src + (base + w.b + tid));
  for (int v = tid; v < w.words; v += NT) {
    copy16_async(dst + w.a + v * kVec, src + (base + w.a + v * kVec));
  }
}

// dst[base + e] = src[e] (shared memory) for e in [lo, hi) by a block's NT threads: 16 bytes a
// store where both sides share their place in a 16-byte word, one element a store otherwise.
template <class T, int NT>
TLRT_DEVICE_INLINE void store_rows(T* dst, int64_t base, const T* src, int lo, int hi, int tid) {
  constexpr int kVec = static_cast<int>(16 / sizeof(T));
  if (word_place(dst, base + lo) != word_place(src, lo)) {
    for (int e = lo + tid; e < hi; e += NT) dst[base + e] = src[e];
    return;
  }
  const WordSplit w = split_words<T>(to_word_boundary(dst, base + lo), lo, hi);
  if (tid < w.a - lo) dst[base + lo + tid] = src[lo + tid];
  if (tid < hi - w.b) dst[base + w.b + tid] = src[w.b + tid];
  for (int v = tid; v < w.words; v += NT) {
    *reinterpret_cast<uint4*>(dst + (base + w.a + v * kVec)) =
        *reinterpret_cast<const uint4*>(src + w.a + v * kVec);
  }
}

template <class T, Variant V>
__global__ void __launch_bounds__(RowsShape<T, V>::kThreads)
    scan_rows(ScanOperands<T> in, T* __restrict__ fwd_h, const T* __restrict__ saved_h,
              const T* __restrict__ dy, ScanGradients<T> grad, RowsWork<T> w) {
  using Sh = RowsShape<T, V>;
  using B = LookBits<T>;
  using U = typename B::U;
  constexpr bool kBwd = Sh::kBwd, kVar = Sh::kVar;
  constexpr int K = Sh::K, NT = Sh::kThreads;
  constexpr int kX = Sh::kX, kA = Sh::kA, kB = Sh::kB, kDy = Sh::kDy, kHp = Sh::kHp, kAn = Sh::kAn;
  extern __shared__ __align__(16) unsigned char rows_shared[];
  T* s_op = reinterpret_cast<T*>(rows_shared);
  T* s_ca = s_op + Sh::kArrays * Sh::kSlotElems;  // segment maps [q][j]
  T* s_cb = s_ca + NT;
  U* s_ia = reinterpret_cast<U*>(s_cb + NT);  // polled group maps of a round [f][j]
  U* s_ib = s_ia + w.poll_elems;
  __shared__ unsigned s_redo[NT / 32];  // a mark bit a channel

  const int tid = threadIdx.x;
  const int S = static_cast<int>(in.state);
  const int64_t steps = static_cast<int64_t>(in.steps);
  const int Q = w.segments;
  const int64_t R = static_cast<int64_t>(Q) * K;
  auto mark = [&](int channel) { atomicOr(&s_redo[channel / 32], 1u << (channel % 32)); };
  if (tid < NT / 32) s_redo[tid] = 0;
  const uint64_t chunk = take_ticket(w.ticket);  // its barrier orders the clearing above
  // The chunk's window: rows [w0, w0 + R) in memory order, of which [r_lo, r_hi) are in the
  // sequence.
  const int64_t w0 =
      kBwd ? steps - static_cast<int64_t>(chunk + 1) * R : static_cast<int64_t>(chunk) * R;
  const int r_lo = w0 < 0 ? static_cast<int>(-w0) : 0;
  const int r_hi = static_cast<int>(steps - w0 < R ? steps - w0 : R);

  // Slot row r holds row w0 + r + shift of src, where that row and row w0 + r are in the sequence.
  // A slot's rows start as many elements into its region as the source's first row is into its
  // 16-byte word, so that the copies go 16 bytes at a time between a short head and tail; stage
  // returns where the slot's rows start.
  auto stage = [&](int slot, const T* src, int shift) {
    const int at = slot * Sh::kSlotElems + word_place(src, (w0 + shift) * S);
    const int64_t lo = r_lo > -w0 - shift ? r_lo : -w0 - shift;
    const int64_t hi = r_hi < steps - w0 - shift ? r_hi : steps - w0 - shift;
    copy_rows_async<T, NT>(s_op + at, src, (w0 + shift) * S, static_cast<int>(lo) * S,
                           static_cast<int>(hi) * S, tid);
    return at;
  };
  // Where each staged array starts in shared memory.
  int oX = 0, oA = 0, oB = 0, oDy = 0, oHp = 0, oAn = 0;
  if constexpr (kBwd) {
    oDy = stage(kDy, dy, 0);
    if constexpr (kVar) oAn = stage(kAn, in.a, 1);
    oX = stage(kX, in.x, 0);
    oHp = stage(kHp, saved_h, -1);
    if constexpr (kVar) oB = stage(kB, in.b, 0);
  } else {
    oX = stage(kX, in.x, 0);
    if constexpr (kVar) {
      oA = stage(kA, in.a, 0);
      oB = stage(kB, in.b, 0);
    }
  }
  __pipeline_commit();

  const bool active = tid < Q * S;
  const int m = tid / S, j = tid - m * S;
  const int q = kBwd ? Q - 1 - m : m;  // the segment's place in scan order
  T ac = T(1), bc = T(0);
  if (!kVar && active) {
    ac = load(in.a + j);
    bc = load(in.b + j);
  }
  // The thread's step k (in scan order) is at slot row row_of(k); the steps inside the sequence
  // are k in [k_lo, k_hi) (none for a thread past the chunk's segments).
  auto row_of = [&](int k) { return kBwd ? m * K + (K - 1 - k) : m * K + k; };
  int k_lo = 0, k_hi = 0;
  if (active) {
    k_lo = kBwd ? m * K + K - r_hi : r_lo - m * K;
    k_hi = kBwd ? m * K + K - r_lo : r_hi - m * K;
    k_lo = k_lo > 0 ? k_lo : 0;
    k_hi = k_hi < K ? k_hi : K;
  }
  // The slot rows of steps T - 1 (where the backward's g starts from +0) and 0 (-1: not here).
  const int r_last = steps - 1 - w0 < R ? static_cast<int>(steps - 1 - w0) : -1;
  const int r_first = w0 <= 0 ? static_cast<int>(-w0) : -1;
  __pipeline_wait_prior(0);
  __syncthreads();  // every thread's copies have landed

  auto coef = [&](int r) -> T {  // a of the step at slot row r
    if constexpr (kBwd) {
      if (r == r_last) return T(0);
      if constexpr (kVar) return s_op[oAn + r * S + j];
      return ac;
    } else {
      if constexpr (kVar) return s_op[oA + r * S + j];
      return ac;
    }
  };
  auto bias = [&](int r) -> T {
    if constexpr (kBwd) return s_op[oDy + r * S + j];
    const T b = kVar ? s_op[oB + r * S + j] : bc;
    return mul_rn(b, s_op[oX + r * S + j]);
  };

  // The thread's maps composed in scan order (identity for a thread without rows).
  T ca = T(1), cb = T(0);
  bool redo = false;
  if (k_lo < k_hi) {
    const int r0 = row_of(k_lo);
    ca = coef(r0);
    cb = bias(r0);
    redo = outside(ca, cb);
#pragma unroll 4
    for (int k = k_lo + 1; k < k_hi; ++k) {
      const int r = row_of(k);
      const T a = coef(r), b = bias(r);
      redo = redo || outside(a, b);
      cb = step(a, cb, b);
      ca = mul_rn(a, ca);
    }
  }
  if (active) {
    s_ca[q * S + j] = ca;
    s_cb[q * S + j] = cb;
  }
  __syncthreads();
  // Inclusive Kogge-Stone scan over the segments of each channel: (ca, cb) o (pa, pb).
  for (int d = 1; d < Q; d <<= 1) {
    const bool take = active && q >= d;
    T pa = T(1), pb = T(0);
    if (take) {
      pa = s_ca[(q - d) * S + j];
      pb = s_cb[(q - d) * S + j];
    }
    __syncthreads();
    if (take) {
      cb = step(ca, pb, cb);
      ca = mul_rn(ca, pa);
      s_ca[q * S + j] = ca;
      s_cb[q * S + j] = cb;
    }
    __syncthreads();
  }

  // The chunk's place in the groups: digit l of its index in base 32, the maps it applies (the
  // digits' sum) and the levels whose group it completes (trailing digits of 31).
  const int L = w.levels;
  int digit[kRowsMaxLevels];
  int items = 0, completes = 0;
  bool trailing = true;
#pragma unroll
  for (int l = 0; l < kRowsMaxLevels; ++l) {
    digit[l] = l < L ? static_cast<int>((chunk >> (kRowsGroupLog2 * l)) & kRowsGroupLast) : 0;
    items += digit[l];
    trailing = trailing && l < L - 1 && digit[l] == static_cast<int>(kRowsGroupLast);
    completes += trailing ? 1 : 0;
  }
  // count maps of S channels, map f at locate(f) (its level and node), polled into shared memory
  // in rounds of per_round maps; the channel's thread then takes each in order: apply(a, b).
  const int per_round = w.poll_elems / S;
  auto for_maps = [&](int count, auto locate, auto apply) {
    for (int first = 0; first < count; first += per_round) {
      const int n = count - first < per_round ? count - first : per_round;
      while (true) {
        bool ready = true;
        for (int e = tid; e < n * S; e += NT) {
          const int f = e / S;
          const uint64_t slot = locate(first + f) * S + static_cast<uint64_t>(e - f * S);
          const U a = peek<T>(w.agg_a + slot), b = peek<T>(w.agg_b + slot);
          ready = ready && a != B::kNone && b != B::kNone;
          s_ia[e] = a;
          s_ib[e] = b;
        }
        if (__syncthreads_and(ready)) break;
        __nanosleep(64);
      }
      if (tid < S) {
        for (int f = 0; f < n; ++f)
          apply(from_bits<T>(s_ia[f * S + tid]), from_bits<T>(s_ib[f * S + tid]));
      }
      __syncthreads();  // the round's maps are read before the next round overwrites them
    }
  };
  // The chunk's own map, published at once; then the maps of the groups it completes, lowest level
  // first: its own map at level l after the fold of the group's 31 members before it (in scan
  // order). A group's map thus waits only for its own members, never for a carry.
  T oa = T(1), ob = T(0);
  if (tid < S) {
    oa = s_ca[(Q - 1) * S + tid];
    ob = s_cb[(Q - 1) * S + tid];
    const size_t slot = static_cast<size_t>(w.level_at[0] + chunk) * S + tid;
    publish(w.agg_a + slot, oa);
    publish(w.agg_b + slot, ob);
  }
  for (int l = 0; l < completes; ++l) {
    const uint64_t group = (chunk >> (kRowsGroupLog2 * (l + 1))) << kRowsGroupLog2;
    T fa = T(1), fb = T(0);
    bool any = false;
    for_maps(
        static_cast<int>(kRowsGroupLast), [&](int f) { return w.level_at[l] + group + f; },
        [&](T a, T b) { then_map(a, b, fa, fb, any); });
    if (tid < S) {
      ob = step(oa, fb, ob);
      oa = mul_rn(oa, fa);
      const size_t slot =
          static_cast<size_t>(w.level_at[l + 1] + (chunk >> (kRowsGroupLog2 * (l + 1)))) * S + tid;
      publish(w.agg_a + slot, oa);
      publish(w.agg_b + slot, ob);
    }
  }
  // The carry-in: the maps before the chunk, highest level first, applied one by one to h0 (the
  // backward: +0).
  T carry = T(0);
  if (tid < S) {
    if constexpr (!kBwd) {
      carry = load(in.h0 + tid);
      if (!isfinite(carry)) mark(tid);
    }
  }
  for_maps(
      items,
      [&](int f) {
        int l = L - 1;
        while (f >= digit[l]) f -= digit[l--];
        return w.level_at[l] + ((chunk >> (kRowsGroupLog2 * (l + 1))) << kRowsGroupLog2) +
               static_cast<uint64_t>(f);
      },
      [&](T a, T b) { carry = step(a, carry, b); });
  T* s_carry = reinterpret_cast<T*>(s_ia);  // the polls are over: every round ended in a barrier
  if (tid < S) s_carry[tid] = carry;
  __syncthreads();

  // The K steps from the segment's carry-in, outputs over the operands.
  T sum_a = T(0), sum_b = T(0);
  if (active) {
    T h = s_carry[j];
    if (q > 0) h = step(s_ca[(q - 1) * S + j], h, s_cb[(q - 1) * S + j]);
#pragma unroll 4
    for (int k = k_lo; k < k_hi; ++k) {
      const int r = row_of(k);
      const int e = r * S + j;
      if constexpr (!kBwd) {
        h = step(coef(r), h, bias(r));
        s_op[oX + e] = h;
        redo = redo || !isfinite(h);
      } else {
        h = step(coef(r), h, s_op[oDy + e]);  // g_t
        const T hp = r == r_first ? load(in.h0 + j) : s_op[oHp + e];
        const StepProducts<T> p = bwd_step_products(h, hp, s_op[oX + e], kVar ? s_op[oB + e] : bc);
        s_op[oDy + e] = p.dx;
        if constexpr (kVar) {
          s_op[oHp + e] = p.da;
          s_op[oX + e] = p.db;
        }
        add_step_sums<T, kVar>(p, sum_a, sum_b);
        redo = redo || !isfinite(h) || !isfinite(p.da) || !isfinite(p.db) || !isfinite(p.dx);
        if (r == r_first) {
          const T a0 = load(in.a + j);
          const T dh0 = mul_rn(h, a0);
          grad.dh0[j] = dh0;
          redo = redo || !(fabs(a0) <= T(1)) || !isfinite(dh0);
        }
      }
    }
    if (redo) mark(j);
  }
  if constexpr (V == Variant::bwd) {
    // The chunk's partial sums of dA, dB: segments in scan (reverse time) order.
    __syncthreads();  // every prefix is read
    if (active) {
      s_ca[q * S + j] = sum_a;
      s_cb[q * S + j] = sum_b;
    }
    __syncthreads();
    if (tid < S) {
      T pa = T(0), pb = T(0);
      for (int p = 0; p < Q; ++p) {
        pa = add_rn(pa, s_ca[p * S + tid]);
        pb = add_rn(pb, s_cb[p * S + tid]);
      }
      w.part_da[chunk * S + tid] = pa;
      w.part_db[chunk * S + tid] = pb;
    }
  }
  __syncthreads();  // every output row is in shared memory, every mark set
  auto store = [&](int at, T* dst) {
    store_rows<T, NT>(dst, w0 * S, s_op + at, r_lo * S, r_hi * S, tid);
  };
  if constexpr (!kBwd) {
    store(oX, fwd_h);
  } else {
    store(oDy, grad.dx);
    if constexpr (kVar) {
      store(oHp, grad.da);
      store(oX, grad.db);
    }
  }
  if (tid < S && ((s_redo[tid / 32] >> (tid % 32)) & 1u) != 0) w.redo[tid] = kRedoMarked;
}

template <class T>
RowsWork<T> rows_work(const RowsPlan& p, void* workspace) {
  RowsWork<T> w;
  bind_work<T>(w, p, workspace);
  for (int l = 0; l < kRowsMaxLevels; ++l) w.level_at[l] = p.level_at[l];
  w.levels = p.levels;
  w.segments = p.segments;
  return w;
}

}  // namespace

namespace scan_detail {

// The values a rows block polls in one round (elements of each of a and b, at least 256, so
// that a round holds at least 2 maps of 128 channels): the most, up to 2048, that keep the
// kernel's resident blocks per SM at their count with 256, so that the poll buffer never costs
// a resident block. Found once per device with the occupancy calculator (the first call also
// raises the kernel's dynamic shared memory limit and prefers the largest carveout). How many
// maps a round polls does not change which maps a block applies or in what order.
template <auto kKernel>
int rows_poll_elems(int threads, size_t fixed_bytes, size_t value_bytes, const char* op) {
  static std::atomic<uint64_t> cache[kMaxCachedDevices];
  return static_cast<int>(once_per_device(cache, op, [&](int) {
    constexpr int kCandidates[] = {2048, 1024, 512, 256};
    auto bytes = [&](int elems) {
      return fixed_bytes + 2 * static_cast<size_t>(elems) * value_bytes;
    };
    prepare_staging_kernel(kKernel, bytes(kCandidates[0]), op);
    const int least = blocks_per_sm(kKernel, threads, bytes(256), op);
    for (int elems : kCandidates) {
      if (blocks_per_sm(kKernel, threads, bytes(elems), op) >= least) {
        return static_cast<uint64_t>(elems);
      }
    }
    return uint64_t{256};
  }));
}

// A rows launch of variant V (the forwards write fwd_h; the backwards read saved_h, dy and write
// grad), then the kernel that recomputes the channels it marked (the constant backward's
// fold_chunks also folds the per-chunk sums), queued behind it.
template <class T, Variant V>
void launch_rows(const ScanOperands<T>& in, T* fwd_h, const T* saved_h, const T* dy,
                 const ScanGradients<T>& grad, void* workspace, CUstream_st* stream,
                 const char* op) {
  const RowsPlan p = rows_plan(in.steps, in.state, sizeof(T), V);
  if (p.chunks > 0x7fffffffu) {
    fail(ErrorKind::invalid_argument, op, "seqLen exceeds the CUDA grid");
  }
  const dim3 exact_blocks = exact_grid(in.state, op);
  clear_work(p, workspace, stream, op);
  using Sh = RowsShape<T, V>;
  RowsWork<T> w = rows_work<T>(p, workspace);
  w.poll_elems =
      rows_poll_elems<scan_rows<T, V>>(Sh::kThreads, Sh::kFixedBytes, sizeof(typename Sh::U), op);
  launch_dependent(scan_rows<T, V>, static_cast<unsigned>(p.chunks), Sh::kThreads,
                   Sh::bytes(w.poll_elems), stream, op, in, fwd_h, saved_h, dy, grad, w);
  launch_recompute<T, V>(in, fwd_h, saved_h, dy, grad, w, p.chunks, exact_blocks, stream, op);
}

#define TLRT_SCAN_ROWS(T, V)                                                      \
  template void launch_rows<T, V>(const ScanOperands<T>&, T*, const T*, const T*, \
                                  const ScanGradients<T>&, void*, CUstream_st*, const char*);
TLRT_SCAN_EACH_VARIANT(TLRT_SCAN_ROWS)
#undef TLRT_SCAN_ROWS

}  // namespace scan_detail
}  // namespace tlrt::kernels
