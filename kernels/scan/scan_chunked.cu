// Diagonal selective scans, CUDA backend: the chunked schedule (decoupled look-back over chunks of
// L = 8 K steps of tiles of 32 channels), and the recompute of marked channels queued behind it
// and behind the split and rows schedules. The constant backward's split schedule is in
// kernels/scan/scan_split.cu. The overview of the schedules and the rule that picks one are at the
// top of kernels/scan/scan.cu.
#include <cuda_pipeline.h>
#include <cuda_runtime.h>
#include <cuda/atomic>

#include <cstdint>
#include <type_traits>

#include "kernels/common/async_copy.cuh"
#include "kernels/common/float_ops.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/scan/scan.h"
#include "kernels/scan/scan_shared.cuh"

namespace tlrt::kernels {
namespace {

using namespace scan_detail;

// Blocks resident per SM of the float64 forward, whose operands stay in registers (64 a thread).
constexpr int kRegisterForwardBlocks = 4;
// Blocks resident per SM of the float32 forward, whose operands are staged in shared memory (a
// block of the constant forward holds 32 KiB of X, one of the variable forward 36 KiB of A, B and
// X, each about 6 KiB more for the look-back and the segment maps): 5 fit in the 228 KiB of a
// Hopper SM. More blocks in different phases keep more loads in flight while others wait in the
// look-back.
constexpr int kStagedForwardBlocks = 5;

// ---------------------------------------------------------------------------------------------
// Chunked schedule.

// Called by every thread of a fast block (chunk is uniform across the block) after the barrier
// that follows the segment maps. Returns the chunk's carry-in for the thread's channel (chunk 0:
// first_carry, h_{-1}). Warp 0 publishes the chunk aggregate (ga, gb) of slot chunk*tiles +
// tile, which matters in warp 0 only, at once and the inclusive value once the carry is known.
//
// The look-back: warp w polls the P predecessors at distances w + 1 + 8 k (k < P) of the chunk in
// its tile (the inclusive value and the aggregate of each channel), so the 8 P nearest come in one
// round trip, into shared memory; then every thread finds for its channel the nearest predecessor
// with an inclusive value such that all nearer ones have published their aggregates, and applies
// those aggregates to it one by one in chunk order. A round in which some channel finds none is
// polled again after w.wait_ns. Every inclusive value is thus step(ga_k, inclusive_{k-1}, gb_k),
// the serial chain's value, wherever the walk stops: the carry-in, and all outputs, repeat bit for
// bit run to run. Chunk order is the order of the blocks' tickets, so every chunk polled belongs to
// a block that is running or done, and chunk 0 publishes its inclusive value at once: the polls
// terminate.
template <class T, int P>
__device__ T resolve_carry(const FastWork<T>& w, uint64_t tile, uint64_t chunk, int seg, int lane,
                           T ga, T gb, T first_carry) {
  using B = LookBits<T>;
  using U = typename B::U;
  constexpr int kLookBack = kSegments * P;  // predecessors polled a round
  __shared__ U s_h[kLookBack][kTileChannels];
  __shared__ U s_la[kLookBack][kTileChannels];
  __shared__ U s_lb[kLookBack][kTileChannels];
  const size_t v = static_cast<size_t>(chunk * w.tiles + tile) * kTileChannels + lane;
  if (chunk == 0) {
    if (seg == 0) publish(w.inclusive + v, step(ga, first_carry, gb));
    return first_carry;
  }
  if (seg == 0) {
    publish(w.agg_a + v, ga);
    publish(w.agg_b + v, gb);
  }
  const int n = chunk < kLookBack ? static_cast<int>(chunk) : kLookBack;
  T carry = T(0);
  while (true) {
    U h[P], a[P], b[P];  // every load of the round in flight before the first store
#pragma unroll
    for (int k = 0; k < P; ++k) {
      const int d = seg + k * kSegments;  // distance d + 1
      if (d < n) {
        const size_t pv =
            static_cast<size_t>((chunk - 1 - d) * w.tiles + tile) * kTileChannels + lane;
        h[k] = peek<T>(w.inclusive + pv);
        a[k] = peek<T>(w.agg_a + pv);
        b[k] = peek<T>(w.agg_b + pv);
      }
    }
#pragma unroll
    for (int k = 0; k < P; ++k) {
      const int d = seg + k * kSegments;
      if (d < n) {
        s_h[d][lane] = h[k];
        s_la[d][lane] = a[k];
        s_lb[d][lane] = b[k];
      }
    }
    __syncthreads();
    int stop = 0;
    for (int d = 1; d <= n; ++d) {
      if (s_h[d - 1][lane] != B::kNone) {
        stop = d;
        break;
      }
      if (s_la[d - 1][lane] == B::kNone || s_lb[d - 1][lane] == B::kNone) break;
    }
    if (stop != 0) {
      carry = from_bits<T>(s_h[stop - 1][lane]);
      for (int d = stop - 1; d >= 1; --d) {
        carry = step(from_bits<T>(s_la[d - 1][lane]), carry, from_bits<T>(s_lb[d - 1][lane]));
      }
    }
    // Every thread has read the round's polls before the next round overwrites them.
    if (__syncthreads_and(stop != 0)) break;
    __nanosleep(w.wait_ns);
  }
  if (seg == 0) publish(w.inclusive + v, step(ga, carry, gb));
  return carry;
}

// Where a forward thread works: the chunk and tile of its block's ticket, its channel c (lane)
// and segment (seg), its first time step t0 and its steps inside the sequence n (0 for a channel
// past the end: small-integer compares instead of 64-bit positions kept live through the block).
struct ForwardPlace {
  uint64_t tile, chunk, c, t0;
  int lane, seg, n;
  bool live;
};

template <class T, int K>
TLRT_DEVICE_INLINE ForwardPlace forward_place(const FastWork<T>& w, const ScanOperands<T>& in) {
  ForwardPlace p;
  const uint64_t ticket = take_ticket(w.ticket);
  p.tile = ticket % w.tiles;
  p.chunk = ticket / w.tiles;
  p.lane = threadIdx.x % kTileChannels;
  p.seg = threadIdx.x / kTileChannels;
  p.c = p.tile * kTileChannels + p.lane;
  p.live = p.c < in.state;
  p.t0 = p.chunk * (static_cast<uint64_t>(kSegments) * K) + static_cast<uint64_t>(p.seg) * K;
  p.n = !p.live || p.t0 >= in.steps ? 0 : (in.steps - p.t0 < K ? int(in.steps - p.t0) : K);
  return p;
}

// The rest of a forward chunk once each thread has composed its steps' map (ca, cb): the
// block's aggregate, the carry-in by look-back, the prefix of the segments before the thread's,
// then its n steps (av(k), bv(k)) run literally and written from row t0 on.
// Any step outside the preconditions (redo on entry) or any non-finite state sends the channel to
// the exact schedule (refwd_marked, queued behind the chunked kernel).
template <class T, int K, int P, class Coefficient, class Bias>
TLRT_DEVICE_INLINE void finish_forward_chunk(const ScanOperands<T>& in, T* __restrict__ out,
                                             const FastWork<T>& w, T (*s_a)[kTileChannels],
                                             T (*s_b)[kTileChannels], const ForwardPlace& p, T ca,
                                             T cb, bool redo, Coefficient av, Bias bv) {
  const uint64_t S = in.state;
  const auto [tile, chunk, c, t0, lane, seg, n, live] = p;
  s_a[seg][lane] = ca;
  s_b[seg][lane] = cb;
  __syncthreads();
  const T first = live && chunk == 0 ? load(in.h0 + c) : T(0);
  redo = redo || !isfinite(first);
  T ga = T(1), gb = T(0);
  if (seg == 0) compose_segments<T>(s_a, s_b, kSegments, lane, ga, gb);
  T h = resolve_carry<T, P>(w, tile, chunk, seg, lane, ga, gb, first);
  T pa, pb;
  if (compose_segments<T>(s_a, s_b, seg, lane, pa, pb)) h = step(pa, h, pb);
  if (live) {
    T* o = out + (t0 * S + c);
#pragma unroll
    for (int k = 0; k < K; ++k) {
      if (k < n) {
        h = step(av(k), h, bv(k));
        o[k * S] = h;
        redo = redo || !isfinite(h);
      }
    }
    if (redo) w.redo[c] = kRedoMarked;
  }
}

template <class T, bool Var, int K, int P>
__global__ void __launch_bounds__(kFastThreads, kRegisterForwardBlocks)
    scan_fwd_fast(ScanOperands<T> in, T* __restrict__ out, FastWork<T> w) {
  __shared__ T s_a[kSegments][kTileChannels];
  __shared__ T s_b[kSegments][kTileChannels];
  const ForwardPlace place = forward_place<T, K>(w, in);
  const uint64_t c = place.c, t0 = place.t0;
  const int n = place.n;
  const bool live = place.live;
  const uint64_t S = in.state;

  T ac = T(1), bc = T(0);
  if (!Var && live) {
    ac = load(in.a + c);
    bc = load(in.b + c);
  }
  // The constant variant's coefficient stays one register (identity past the end), not an array.
  T av_[Var ? K : 1], bv_[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    if (k < n) {
      const uint64_t i = (t0 + k) * S + c;
      const T x = load(in.x + i);
      av_[Var ? k : 0] = Var ? load(in.a + i) : ac;
      bv_[k] = mul_rn(Var ? load(in.b + i) : bc, x);
    } else {
      av_[Var ? k : 0] = T(1);  // identity steps past the end
      bv_[k] = T(0);
    }
  }
  auto av = [&](int k) -> T {
    if constexpr (Var) {
      return av_[k];
    } else {
      return k < n ? ac : T(1);
    }
  };
  T ca, cb;
  const bool redo = compose_steps<T, K>(av, bv_, ca, cb, false);
  finish_forward_chunk<T, K, P>(in, out, w, s_a, s_b, place, ca, cb, redo, av,
                                [&](int k) { return bv_[k]; });
}

// The float32 forward with its operands staged in shared memory rather than registers: each
// thread copies its K steps of X (the variable variant: A, B and X) with cp.async into rows of the
// block's tile that only it reads, so no barrier guards them, and reads them twice, to compose its
// maps and to run its steps. Registers stay few (no operand arrays), so more blocks fit on an SM
// than the register kernel allows, and their loads are in flight while other blocks wait in the
// look-back. The arithmetic is the register kernel's, step for step.
template <class T, bool Var, int K, int P>
__global__ void __launch_bounds__(kFastThreads, kStagedForwardBlocks)
    scan_fwd_staged(ScanOperands<T> in, T* __restrict__ out, FastWork<T> w) {
  constexpr int kArrays = Var ? 3 : 1;  // X [, A, B]
  __shared__ T s_a[kSegments][kTileChannels];
  __shared__ T s_b[kSegments][kTileChannels];
  __shared__ T s_op[kArrays][kSegments * K][kTileChannels];
  const ForwardPlace place = forward_place<T, K>(w, in);
  const uint64_t c = place.c, t0 = place.t0;
  const int lane = place.lane, seg = place.seg, n = place.n;
  const bool live = place.live;
  const uint64_t S = in.state;
  const uint64_t first_i = t0 * S + c;
  const int row = seg * K;  // the thread's first row of the tile
#pragma unroll
  for (int k = 0; k < K; ++k) {
    if (k < n) {
      const uint64_t i = first_i + static_cast<uint64_t>(k) * S;
      __pipeline_memcpy_async(&s_op[0][row + k][lane], in.x + i, sizeof(T));
      if constexpr (Var) {
        __pipeline_memcpy_async(&s_op[1][row + k][lane], in.a + i, sizeof(T));
        __pipeline_memcpy_async(&s_op[2][row + k][lane], in.b + i, sizeof(T));
      }
    }
  }
  __pipeline_commit();
  T ac = T(1), bc = T(0);
  if (!Var && live) {
    ac = load(in.a + c);
    bc = load(in.b + c);
  }
  __pipeline_wait_prior(0);
  auto av = [&](int k) -> T {
    if constexpr (Var) {
      return s_op[1][row + k][lane];
    } else {
      return ac;
    }
  };
  auto bv = [&](int k) -> T {
    if constexpr (Var) {
      return mul_rn(s_op[2][row + k][lane], s_op[0][row + k][lane]);
    } else {
      return mul_rn(bc, s_op[0][row + k][lane]);
    }
  };
  // The thread's K maps composed in step order (identity for a thread past the end); any step
  // outside the preconditions marks the channel, as in compose_steps.
  bool redo = false;
  T ca = T(1), cb = T(0);
  if (n > 0) {
    ca = av(0);
    cb = bv(0);
    redo = outside(ca, cb);
#pragma unroll
    for (int k = 1; k < K; ++k) {
      if (k < n) {
        const T ak = av(k), bk = bv(k);
        redo = redo || outside(ak, bk);
        cb = step(ak, cb, bk);
        ca = mul_rn(ak, ca);
      }
    }
  }
  finish_forward_chunk<T, K, P>(in, out, w, s_a, s_b, place, ca, cb, redo, av, bv);
}

// The chunked backward: a block's chunk and tile from its ticket, the carry-in by look-back.
template <class T, bool Var, int K, int P>
__global__ void __launch_bounds__(kFastThreads)
    scan_bwd_fast(ScanOperands<T> in, const T* __restrict__ out, const T* __restrict__ dy,
                  ScanGradients<T> grad, FastWork<T> w) {
  __shared__ T s_a[kSegments][kTileChannels];
  __shared__ T s_b[kSegments][kTileChannels];
  const uint64_t ticket = take_ticket(w.ticket);
  const uint64_t tile = ticket % w.tiles, chunk = ticket / w.tiles;
  bwd_chunk<T, Var, K>(
      in, out, dy, grad, w, tile, chunk, s_a, s_b, [] {},
      [&](int seg, int lane) {
        T ga = T(1), gb = T(0);
        if (seg == 0) compose_segments<T>(s_a, s_b, kSegments, lane, ga, gb);
        return resolve_carry<T, P>(w, tile, chunk, seg, lane, ga, gb, T(0));
      });
}

// The channels a chunked launch marked, on the literal recurrence, one thread per channel on the
// exact grid. Launched dependent on the chunked kernel, whose completion it waits for before
// anything else, so every fast write is done before a marked channel is written again; an
// unmarked channel costs one byte read. What the fast kernel wrote to the workspace (marks,
// partial sums) is read with ordinary loads, not through the read-only cache: this grid's blocks
// may have been resident while it was written.
template <class T, bool Var>
__global__ void __launch_bounds__(kExactThreads)
    refwd_marked(ScanOperands<T> in, T* __restrict__ out, const uint8_t* redo) {
  wait_prior_grid();  // launched dependent on the fast kernel
  const uint64_t c = static_cast<uint64_t>(blockIdx.x) * kExactThreads + threadIdx.x;
  if (c < in.state && redo[c] == kRedoMarked) fwd_channel_exact<T, Var>(in, out, c);
}

template <class T>
__global__ void __launch_bounds__(kExactThreads)
    rebwd_marked(ScanOperands<T> in, const T* __restrict__ out, const T* __restrict__ dy,
                 ScanGradients<T> grad, const uint8_t* redo) {
  wait_prior_grid();  // launched dependent on the fast kernel
  const uint64_t c = static_cast<uint64_t>(blockIdx.x) * kExactThreads + threadIdx.x;
  if (c < in.state && redo[c] == kRedoMarked) bwd_channel_exact<T, true>(in, out, dy, grad, c);
}

// dA[c], dB[c] of the constant variant from the per-chunk partial sums (chunk 0 holds the last
// time steps): a block takes 32 channels, its warp g folds the g-th of kFoldGroups contiguous
// ranges of chunks in reverse time order from +0 (many independent loads in flight instead of
// one serial chain of loads per channel), and warp 0 folds the range sums in the same order
// from +0. A fixed order, so results repeat run to run. A channel the fast kernel marked, or
// whose sums are not finite, is then recomputed on the literal recurrence by its lane.
constexpr int kFoldGroups = 16;
static_assert(kExactThreads == kTileChannels, "fold_chunks is launched on the exact grid");

template <class T>
__global__ void __launch_bounds__(kTileChannels* kFoldGroups)
    fold_chunks(ScanOperands<T> in, const T* __restrict__ out, const T* __restrict__ dy,
                ScanGradients<T> grad, const T* part_da, const T* part_db, uint64_t chunks,
                const uint8_t* redo) {
  wait_prior_grid();  // launched dependent on the fast kernel
  const uint64_t state = in.state;
  __shared__ T s_sa[kFoldGroups][kTileChannels];
  __shared__ T s_sb[kFoldGroups][kTileChannels];
  const int lane = threadIdx.x % kTileChannels, group = threadIdx.x / kTileChannels;
  const uint64_t c = static_cast<uint64_t>(blockIdx.x) * kTileChannels + lane;
  const uint64_t per = (chunks + kFoldGroups - 1) / kFoldGroups;
  const uint64_t k0 = static_cast<uint64_t>(group) * per;
  const uint64_t k1 = k0 + per < chunks ? k0 + per : chunks;
  T sa = T(0), sb = T(0);
  if (c < state) {
    constexpr int kBatch = 8;  // loads issued before their adds
    uint64_t k = k0;
    for (; k + kBatch <= k1; k += kBatch) {
      T va[kBatch], vb[kBatch];
#pragma unroll
      for (int q = 0; q < kBatch; ++q) {
        va[q] = part_da[(k + q) * state + c];
        vb[q] = part_db[(k + q) * state + c];
      }
#pragma unroll
      for (int q = 0; q < kBatch; ++q) {
        sa = add_rn(sa, va[q]);
        sb = add_rn(sb, vb[q]);
      }
    }
    for (; k < k1; ++k) {
      sa = add_rn(sa, part_da[k * state + c]);
      sb = add_rn(sb, part_db[k * state + c]);
    }
  }
  s_sa[group][lane] = sa;
  s_sb[group][lane] = sb;
  __syncthreads();
  if (group != 0 || c >= state) return;
  T fa = T(0), fb = T(0);
#pragma unroll
  for (int g = 0; g < kFoldGroups; ++g) {
    fa = add_rn(fa, s_sa[g][lane]);
    fb = add_rn(fb, s_sb[g][lane]);
  }
  if (isfinite(fa) && isfinite(fb) && redo[c] != kRedoMarked) {
    grad.da[c] = fa;
    grad.db[c] = fb;
  } else {
    // A channel the fast kernel marked or whose sums are not finite: the literal recurrence.
    bwd_channel_exact<T, false>(in, out, dy, grad, c);
  }
}

}  // namespace

namespace scan_detail {

dim3 fast_grid(const FastPlan& p, const char* op) {
  const uint64_t blocks = p.tiles * p.chunks;
  if (blocks > 0x7fffffffu) {
    fail(ErrorKind::invalid_argument, op, "seqLen*state exceeds the CUDA grid");
  }
  return dim3(static_cast<unsigned>(blocks));
}

// Sets `words` 16-byte words to all-ones bytes. Its dependents (the fast kernels, launched
// dependent) may start their blocks at once: they wait for these stores before taking a ticket.
__global__ void __launch_bounds__(kThreads) clear_work_words(uint4* p, uint64_t words) {
  allow_dependents();
  const uint4 ones = make_uint4(~0u, ~0u, ~0u, ~0u);
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * kThreads + threadIdx.x; i < words;
       i += static_cast<uint64_t>(gridDim.x) * kThreads) {
    p[i] = ones;
  }
}

// A scan workspace must be 16-byte aligned (scan.h); the chunked and rows calls check it in
// clear_work, whose 16-byte stores need it, and the split calls, which clear nothing, here.
void check_workspace(const void* workspace, const char* op) {
  if (!aligned16(workspace)) {
    fail(ErrorKind::invalid_argument, op, "the scan workspace is not 16-byte aligned");
  }
}

// The workspace from `cleared` on to all-ones bytes (both ends are multiples of 256 bytes from a
// 16-byte aligned workspace).
void clear_work(const WorkLayout& p, void* workspace, CUstream_st* stream, const char* op) {
  check_workspace(workspace, op);
  const uint64_t words = (p.bytes - p.cleared) / 16;
  clear_work_words<<<grid_for(words, kThreads, 1024), kThreads, 0, stream>>>(
      reinterpret_cast<uint4*>(static_cast<char*>(workspace) + p.cleared), words);
  check_launch(op);
}

// f(std::integral_constant<int, P>) with P = polls (1 or 2): the chunked kernels' look-back
// window as a template argument.
template <class F>
void with_polls(int polls, F&& f) {
  if (polls == 2) {
    f(std::integral_constant<int, 2>{});
  } else {
    f(std::integral_constant<int, 1>{});
  }
}

// The kernel queued behind a chunked or rows launch of variant V on `blocks` (exact_grid, found
// before the first launch of the call), launched dependent: the forwards and the variable backward
// recompute the channels marked in w.redo on the literal recurrence; the constant backward's
// fold_chunks also folds the `chunks` per-chunk sums of dA, dB. The forwards write fwd_h; the
// backwards read saved_h, dy and write grad.
template <class T, Variant V>
void launch_recompute(const ScanOperands<T>& in, T* fwd_h, const T* saved_h, const T* dy,
                      const ScanGradients<T>& grad, const WorkPointers<T>& w, uint64_t chunks,
                      dim3 blocks, CUstream_st* stream, const char* op) {
  if constexpr (V == Variant::fwd || V == Variant::var_fwd) {
    launch_dependent(refwd_marked<T, V == Variant::var_fwd>, blocks, kExactThreads, 0, stream, op,
                     in, fwd_h, w.redo);
  } else if constexpr (V == Variant::var_bwd) {
    launch_dependent(rebwd_marked<T>, blocks, kExactThreads, 0, stream, op, in, saved_h, dy, grad,
                     w.redo);
  } else {
    launch_dependent(fold_chunks<T>, blocks, kTileChannels * kFoldGroups, 0, stream, op, in,
                     saved_h, dy, grad, w.part_da, w.part_db, chunks, w.redo);
  }
}

// The chunked forward of one variant (float32: operands staged in shared memory; float64: in
// registers), then the recompute of the channels it marked, queued behind it.
template <class T, bool Var, int P>
void launch_chunked_forward(const ScanOperands<T>& in, T* out, const FastWork<T>& w, dim3 grid,
                            dim3 exact_blocks, CUstream_st* stream, const char* op) {
  constexpr int K = fast_steps_per_thread(
      sizeof(T), Var ? ScanPass::variable_forward : ScanPass::constant_forward);
  if constexpr (sizeof(T) == 4) {
    launch_dependent(scan_fwd_staged<T, Var, K, P>, grid, kFastThreads, 0, stream, op, in, out, w);
  } else {
    launch_dependent(scan_fwd_fast<T, Var, K, P>, grid, kFastThreads, 0, stream, op, in, out, w);
  }
  launch_recompute<T, Var ? Variant::var_fwd : Variant::fwd>(in, out, nullptr, nullptr, {}, w,
                                                             w.chunks, exact_blocks, stream, op);
}

template <class T>
void launch_chunked_fwd(const ScanOperands<T>& in, T* out, const FastPlan& p, void* workspace,
                        CUstream_st* stream, const char* op) {
  clear_work(p, workspace, stream, op);
  const FastWork<T> w = fast_work<T>(p, workspace);
  const dim3 grid = fast_grid(p, op);
  const dim3 exact_blocks = exact_grid(in.state, op);
  with_polls(p.polls, [&](auto polls) {
    if (in.variable) {
      launch_chunked_forward<T, true, polls()>(in, out, w, grid, exact_blocks, stream, op);
    } else {
      launch_chunked_forward<T, false, polls()>(in, out, w, grid, exact_blocks, stream, op);
    }
  });
  check_launch(op);
}

template <class T>
void launch_chunked_bwd(const ScanOperands<T>& in, const T* out, const T* dy,
                        const ScanGradients<T>& grad, const FastPlan& p, void* workspace,
                        CUstream_st* stream, const char* op) {
  const dim3 exact_blocks = exact_grid(in.state, op);
  constexpr int K = fast_steps_per_thread(sizeof(T), ScanPass::backward);
  const dim3 grid = fast_grid(p, op);
  if constexpr (sizeof(T) == 4) {
    if (!in.variable && split_takes(p)) {
      launch_split(in, out, dy, grad, p, workspace, grid, exact_blocks, stream, op);
      return;
    }
  }
  clear_work(p, workspace, stream, op);
  const FastWork<T> w = fast_work<T>(p, workspace);
  with_polls(p.polls, [&](auto polls) {
    if (in.variable) {
      launch_dependent(scan_bwd_fast<T, true, K, polls()>, grid, kFastThreads, 0, stream, op, in,
                       out, dy, grad, w);
    } else {
      launch_dependent(scan_bwd_fast<T, false, K, polls()>, grid, kFastThreads, 0, stream, op, in,
                       out, dy, grad, w);
    }
  });
  if (in.variable) {
    launch_recompute<T, Variant::var_bwd>(in, nullptr, out, dy, grad, w, p.chunks, exact_blocks,
                                          stream, op);
  } else {
    launch_recompute<T, Variant::bwd>(in, nullptr, out, dy, grad, w, p.chunks, exact_blocks, stream,
                                      op);
  }
}

template void launch_chunked_fwd<float>(const ScanOperands<float>&, float*, const FastPlan&, void*,
                                        CUstream_st*, const char*);
template void launch_chunked_fwd<double>(const ScanOperands<double>&, double*, const FastPlan&,
                                         void*, CUstream_st*, const char*);
template void launch_chunked_bwd<float>(const ScanOperands<float>&, const float*, const float*,
                                        const ScanGradients<float>&, const FastPlan&, void*,
                                        CUstream_st*, const char*);
template void launch_chunked_bwd<double>(const ScanOperands<double>&, const double*, const double*,
                                         const ScanGradients<double>&, const FastPlan&, void*,
                                         CUstream_st*, const char*);

#define TLRT_SCAN_RECOMPUTE(T, V)                                                                 \
  template void launch_recompute<T, V>(const ScanOperands<T>&, T*, const T*, const T*,            \
                                       const ScanGradients<T>&, const WorkPointers<T>&, uint64_t, \
                                       dim3, CUstream_st*, const char*);
TLRT_SCAN_EACH_VARIANT(TLRT_SCAN_RECOMPUTE)
#undef TLRT_SCAN_RECOMPUTE

}  // namespace scan_detail
}  // namespace tlrt::kernels
