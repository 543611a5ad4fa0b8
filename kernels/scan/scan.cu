// Diagonal selective scans, CUDA backend (SPEC-ops 13). Every product and sum is an explicitly
// rounded __fmul_rn / __fadd_rn (__dmul_rn / __dadd_rn), so nothing is contracted into an FMA.
//
// Exact schedule (deterministic setting on): one thread per channel runs the literal recurrence,
// channels adjacent across a warp so every time step is one coalesced row access. Operands are
// copied stages of D time steps ahead into a shared-memory ring (cp.async) while the dependent
// chain runs on the stage that has landed, so the chain finds its operands on chip. The
// backward runs the same way in reverse time and folds the constant variant's dA, dB in registers
// in that (the specified) order. Bit-identical to the reference backend.
//
// Fast schedules (setting off): the steps are affine maps h -> a*h + b, composed associatively as
// (a2, b2) o (a1, b1) = (a2*a1, a2*b1 + b2). Sequences of at most kExactMaxSteps steps take the
// exact schedule in either mode (its results are valid for the fast contract too), and so do
// calls with enough channels to fill the device with exact-schedule blocks (exact_is_faster);
// the forwards and the constant backward take the slab schedule in float32 where S is a multiple
// of 4 and at least 1024 (512 past T 4096) and T is from kScanSlabMinSteps to the resident
// range's end (slab_takes); the constant forward takes the resident schedule otherwise where the
// sequence fits a block (unless its blocks would read part-sectors of rows in more than one wave,
// schedule_of); the rest take the rows schedule (kernels/scan/scan_rows.cu) up to
// scan_rows_max_state channels (128 in the forwards, 64 in the backwards) and the chunked one
// (kernels/scan/scan_chunked.cu) beyond.
//
// Resident schedule (the constant forward, T up to scan_resident_max_steps: 8192 in float32 and
// float64): a block of up to 1024 threads holds C adjacent channels (a power of two up to
// 32) for the whole sequence, thread = channel tid % C and segment tid / C of K consecutive steps
// (K = 32 in float32, 16 in float64), so no look-back, workspace or memset. Each thread loads all
// its K operands at once and composes its K maps; a Kogge-Stone scan across the segments of a
// warp (shuffles) and the warp aggregates applied one by one in warp order to h0 give each
// segment its carry; each thread then runs its K steps literally, writing the outputs from
// registers. C is chosen from T, S and the SM count (resident_plan). Marks go to shared memory,
// and after a barrier behind every fast write of the block the marked channels are recomputed
// on the literal recurrence, one thread per channel. (The variable forward and the backwards,
// with two to five operand arrays per step, measured slower on such blocks than on the chunked
// schedule.)
//
// Slab schedule (kernels/scan/scan_slab.cu; float32, the forwards and the constant backward, T
// from kScanSlabMinSteps to the resident range's end, S a multiple of 4 from 1024 channels, or from
// 512 past T 4096): a block of 512 threads holds a few adjacent channels (16 in the forwards, 8 in
// the backward) for the whole sequence and moves it in rounds of rows, a few rows of 4 channels a
// thread (8 in the constant forward, 4 in the variable one and the backward: kScanSlabBlocks), the
// next round's loads in flight during a round's scan; the same composition as the resident schedule
// within a round (warp scan, warp aggregates in order; the variable forward composes pairs), the
// round's carry passed on in shared memory, and the same in-block recompute of marked channels. The
// backward runs in reverse time and folds the constant variant's dA, dB in the block by a fixed
// tree.
//
// Chunked schedule (kernels/scan/scan_chunked.cu; fast mode, longer sequences). A single pass: a
// block takes a chunk of L = 8*K time steps (K = scan_segment_steps: in float32 32 in the constant
// forward, 12 in the variable forward, 16 in the backwards; 8 in float64) for a tile of 32 channels
// (warp w owns steps [w*K, (w+1)*K) of the chunk, lane = channel) and keeps its operands on chip:
// the float32 forwards copy them into shared memory (cp.async, scan_fwd_staged: 5 blocks an SM),
// the backwards and the float64 forwards hold them in registers. Each thread composes its K maps,
// the block composes the 8 segment maps in shared memory (the chunk's aggregate), warp 0 publishes
// the aggregate, and the block resolves the chunk's carry-in by decoupled look-back over the
// previous chunks of its tile, its 8 warps polling the 8 nearest predecessors in one round trip, or
// the 16 nearest where a call has few tiles (lookback_polls). The aggregates after the nearest
// inclusive value are applied to it one by one, so every inclusive value is the serial chain's and
// results repeat bit for bit whatever the window. Chunk order is the order of an atomic ticket, so
// every chunk a block waits for belongs to a block that is already running. Then each thread
// applies the prefix of the segments before its own to the carry and runs its K steps literally,
// writing the outputs from registers: every operand is read once and every output written once. The
// backward is the same scan in reverse time for g (coefficient A_{t+1}, 0 at t = T-1; bias dY_t;
// carry +0) and forms da, db, dX, dH0 in the same pass; the constant variant's dA, dB sum each
// chunk's contribution in reverse time order inside the block and a second kernel folds the
// per-chunk partial sums in 16 contiguous ranges of chunks, then the range sums, each in reverse
// time order (a fixed order, so results repeat run to run). The look-back values, the ticket and
// the marks live in the workspace and are set to all-ones bytes by a small kernel before each call
// (clear_work). The fast kernel and the recompute behind it are programmatic dependent launches
// (launch.cuh): each may start its blocks while the kernel before it runs and waits for that
// kernel's completion before touching what it wrote, which hides two launch gaps. The float32
// constant backward with few tiles (split_takes) runs the same chunks in three launches instead
// (split schedule, kernels/scan/scan_split.cu: the maps from dY alone, the carries as a serial
// chain over them, the steps), with the same bits and no look-back.
//
// Preconditions of the fast schedules (SPEC-ops 13): the reassociated composition may turn an
// overflow into inf*0 or inf-inf where the literal recurrence has inf, so a fast thread marks its
// channel when a coefficient has |a| > 1 (or is NaN), a bias, h0, state, g or output is not
// finite (the constant backward's fold marks non-finite sums). The marked channels are
// recomputed on the literal recurrence (the exact kernels' arithmetic, fwd_channel_exact /
// bwd_channel_exact). Resident blocks hold their channels whole and recompute them inside the
// same launch (above). Chunked blocks mark a byte per channel of the workspace, and a kernel of
// one thread per channel queued behind them (refwd_marked, rebwd_marked; the constant
// backward's fold_chunks after its fold) recomputes the marked ones: it waits for the chunked
// kernel's completion, which puts every fast write before it, so no block of the chunked kernel
// waits for its writes to complete. No host synchronisation.
#include <cuda_pipeline.h>
#include <cuda_runtime.h>
#include <cuda/atomic>

#include <cstdint>
#include <string>
#include <type_traits>

#include "kernels/common/async_copy.cuh"
#include "kernels/common/float_ops.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/scan/scan.h"
#include "kernels/scan/scan_shared.cuh"

namespace tlrt::kernels {
namespace {

using namespace scan_detail;

constexpr int kExactStages = 4;           // cp.async ring stages of the exact schedule
constexpr size_t kExactRingBytes = 1536;  // ring bytes per thread (48 KiB per block)
constexpr uint64_t kExactMaxSteps =
    kScanExactMaxSteps;  // shorter sequences always take the exact schedule

// Blocks of the exact schedule resident on one SM: its 48 KiB rings in the 228 KiB of shared
// memory of an SM (Hopper; 164 KiB on Ampere still holds 3, which the rule below tolerates).
constexpr uint64_t kExactBlocksPerSm = 4;

// Whether the exact schedule (one thread per channel) is expected to finish first in fast mode.
// Its time is about T dependent steps per wave of resident blocks, whatever S, while the fast
// schedule moves the bytes at a rate that does not depend on S: the exact schedule wins once a
// wave holds enough channels per SM. The break-even density (measured on the H200, float32 at
// T x S = 2048 x 16384, where one wave holds 3.9 blocks per SM) is about 2 blocks of 32 channels
// per SM for the forward, 2.2 for the variable forward, 1.6 for the constant backward and 3.2
// for the variable backward; the thresholds below are those in quarters, rounded up. The choice
// depends only on T, S, the variant and the SM count, so a call's schedule repeats run to run.
bool exact_is_faster(uint64_t steps, uint64_t state, Variant v, uint32_t sms) {
  if (steps <= kExactMaxSteps) return true;
  const uint64_t blocks = (state + kExactThreads - 1) / kExactThreads;
  const uint64_t slots = kExactBlocksPerSm * (sms == 0 ? 1 : sms);
  const uint64_t waves = (blocks + slots - 1) / slots;
  const uint64_t quarters = v == Variant::fwd       ? 8
                            : v == Variant::var_fwd ? 9
                            : v == Variant::bwd     ? 7
                                                    : 13;
  return blocks * 4 >= quarters * (sms == 0 ? 1 : sms) * waves;
}

// Geometry of a resident launch: C = 2^log2c channels per block, `threads` per block.
struct ResidentPlan {
  int log2c = 0;
  unsigned threads = 0;
  unsigned blocks = 0;
};

// log2 of the channels of one 32-byte sector of a row (8 float32, 4 float64).
constexpr int sector_log2c(size_t element_bytes) {
  return element_bytes == 4 ? 3 : 2;
}

// C starts at the largest power of two (up to 32) whose block of ceil(T/K) segments per channel
// fits kScanResidentThreads threads; it halves while it is above the channels of one 32-byte
// sector and the grid has fewer blocks than the device has SMs, and while half of it still holds
// all S channels.
ResidentPlan resident_plan(uint64_t steps, uint64_t state, size_t element_bytes, uint64_t sms,
                           const char* op) {
  const uint64_t k = scan_resident_steps(element_bytes);
  const uint64_t segments = (steps + k - 1) / k;
  const int sector = sector_log2c(element_bytes);
  int log2c = 5;
  while (log2c > 0 && (segments << log2c) > kScanResidentThreads) --log2c;
  while (log2c > sector && ((state + (uint64_t{1} << log2c) - 1) >> log2c) < sms) --log2c;
  while (log2c > 0 && (uint64_t{1} << (log2c - 1)) >= state) --log2c;
  const uint64_t blocks = (state + (uint64_t{1} << log2c) - 1) >> log2c;
  if (blocks > 0x7fffffffu) fail(ErrorKind::invalid_argument, op, "state exceeds the CUDA grid");
  ResidentPlan p;
  p.log2c = log2c;
  p.threads = static_cast<unsigned>(((segments << log2c) + 31) / 32 * 32);
  p.blocks = static_cast<unsigned>(blocks);
  return p;
}

// The schedule of a call: a rule on T, S, the dtype, the variant and the SM count only, so a
// call's schedule (and hence its bits) repeats run to run. For the resident schedule, `resident`
// (when given) receives the launch geometry the rule was decided on.
enum class Schedule { exact, resident, slab, rows, chunked };

// Whether the slab schedule takes a forward or a constant backward whose sequence a block could
// hold (T <= scan_resident_max_steps): float32, S a multiple of 4 (whole 16-byte row pieces), T
// at least kScanSlabMinSteps, and S at least 1024, or at least 512 past T 4096. On the H200
// (float32, T 2048 to 8192, S 128 to 8192, 2026-12-05) the slab took less time than the schedule
// the call had at every S >= 1024 (T 4096 x S 1024 14.1 against 16.9 us resident, T 8192 x S
// 1024 23.3 against 39.9 chunked, T 3000 x S 2048 15.1 against 27.4), and at S 512 from T 6144 on
// (18.3 against 23.1 us) but not at T 2048 or 4096 (9.4 against 8.6, 13.8 against 13.3); below 512
// channels its blocks are too few (S / 16) to move the rows as fast. The variable forward on the
// same rule (H200, 2026-12-05): T 4096 x S 1024 24.6 against 30.6 us chunked, T 8192 x S 1024 44.6
// against 50.4. The constant backward on blocks of 8 channels (512 threads of 4 rows, 128 blocks
// at S 1024; H100, 2026-12-06) took 0.79-0.83 of the chunked time at S 1024 (T 2048 18.6 against
// 23.6 us, T 4096 32.0 against 40.1, T 6144 45.4 against 55.3, T 8192 58.6 against 70.4), 0.90-0.95
// at S 2048 and 4096, 0.97 at T 4097 x S 516 and 1.00 at T 8192 x S 512. The backwards on blocks
// of 16 channels and 256 threads (the constant 8 rows a thread, the variable 4; H200, 2026-12-05)
// measured slower than chunked (53.7 against 36.5 and 53.6 against 45.9 us at T 4096: the 64
// blocks of 255 and 203 registers a thread leave half the SMs idle). The variable backward on the
// constant backward's blocks (8 channels, 512 threads of 2 rows, pairs composed; H100, 2026-12-06)
// moved its eight arrays at 76-78% of copy and took 1.02-1.31 times the chunked time at every shape
// of the rule but T 2048 x S 1024 (0.90; T 4096 x S 1024 56.5 against 55.4 us, T 8192 115.1
// against 99.1), so the variable backward keeps the chunked schedule. Calls with enough channels
// for the exact schedule take it first (schedule_of).
bool slab_takes(uint64_t steps, uint64_t state, size_t element_bytes) {
  return steps <= scan_resident_max_steps(element_bytes) && element_bytes == 4 && state % 4 == 0 &&
         steps >= kScanSlabMinSteps && (state >= 1024 || (state >= 512 && steps > 4096));
}

Schedule schedule_of(uint64_t steps, uint64_t state, size_t element_bytes, Variant v, bool exact,
                     const char* op, ResidentPlan* resident = nullptr) {
  if (exact || state == 0 || steps <= kExactMaxSteps) return Schedule::exact;
  const uint32_t sms = current_sm_count(op);
  if (exact_is_faster(steps, state, v, sms)) return Schedule::exact;
  // The variable backward's five operand arrays a step measured slower on slab blocks than on
  // the chunked schedule (slab_takes), and every variant but the constant forward on resident
  // blocks.
  // Up to scan_rows_max_state channels, the rows schedule (a chunked tile of 32 channels would
  // idle lanes or hold T / L chunks in one look-back chain), unless the constant forward is
  // resident.
  const Schedule scan =
      state <= scan_rows_max_state(is_backward(v)) ? Schedule::rows : Schedule::chunked;
  if ((v == Variant::var_fwd || v == Variant::bwd) && slab_takes(steps, state, element_bytes)) {
    return Schedule::slab;
  }
  if (v != Variant::fwd || steps > scan_resident_max_steps(element_bytes)) return scan;
  // Past T = 4096 a resident block holds fewer channels than a 32-byte sector, so its rows are
  // read and written in part-sectors; once its grid is more than one block per SM, the chunked
  // schedule (rows of 32 channels) finishes first (measured on the H200 at S = 1024: T 5000,
  // 6144 and 8192 in float32, 6144 and 8192 in float64).
  const ResidentPlan r = resident_plan(steps, state, element_bytes, sms == 0 ? 1 : sms, op);
  if (resident != nullptr) *resident = r;  // also the slab schedule's fallback
  if (slab_takes(steps, state, element_bytes)) return Schedule::slab;
  if (r.log2c < sector_log2c(element_bytes) && r.blocks > sms) return scan;
  return Schedule::resident;
}

// Predecessors each warp of a chunked block polls in a look-back round: 2 (a window of 16 chunks)
// where the call has at most 8 tiles of channels (4 in the variable backward), 1 (a window of 8)
// otherwise. The resident blocks of a call, about 660 on the H200, then hold 80 or more chunks of
// each tile, and a tile's inclusive values, which advance at most a window a round trip, are
// what the blocks wait for. On the H200 (float32, chunked) the window of 16 took 9-17% less time
// at 64 and 128 channels (T 2^17 to 2^19) and 2-8% less at 256 except in the variable backward
// (5-8% more), and up to 8% more at 512 and 1024 channels, where each block's twice as many polls
// cost more than the chain they shorten. The window does not change the values: every inclusive
// value is the serial chain's wherever the walk stops.
int lookback_polls(uint64_t tiles, Variant v) {
  return tiles <= (v == Variant::var_bwd ? 4u : 8u) ? 2 : 1;
}

// The wait between a chunked block's look-back rounds: 1024 ns in the variable backward of 32 or
// more tiles, 32 ns otherwise. With many tiles a tile holds few resident chunks, so the chain
// rarely holds a block back, and the waiting blocks' polls take L2 and memory bandwidth from
// the loads; the variable backward, with eight arrays the one most bound by them, took 2%, 6% and
// 10% less time with 1024 ns at T 4096, 8192 and 65536 x S 1024 on the H200 (the other variants
// within -1% to +3%), and 16% more at 128 channels, where the chain is the bound.
uint32_t lookback_wait_ns(uint64_t tiles, Variant v) {
  return v == Variant::var_bwd && tiles >= 32 ? 1024u : 32u;
}

FastPlan fast_plan(uint64_t steps, uint64_t state, size_t element_bytes, Variant variant) {
  FastPlan p;
  const bool constant_bwd = variant == Variant::bwd;
  const ScanPass pass = variant == Variant::fwd       ? ScanPass::constant_forward
                        : variant == Variant::var_fwd ? ScanPass::variable_forward
                                                      : ScanPass::backward;
  p.chunk_steps = scan_chunk_steps(element_bytes, pass);
  p.tiles = (state + kTileChannels - 1) / kTileChannels;
  p.chunks = (steps + p.chunk_steps - 1) / p.chunk_steps;
  const size_t slots = static_cast<size_t>(p.tiles * p.chunks);
  const size_t partial = constant_bwd ? static_cast<size_t>(p.chunks * state) * element_bytes : 0;
  static_cast<WorkLayout&>(p) =
      work_layout(partial, slots * kTileChannels * element_bytes, true, state);
  p.polls = lookback_polls(p.tiles, variant);
  p.wait_ns = lookback_wait_ns(p.tiles, variant);
  return p;
}

// ---------------------------------------------------------------------------------------------
// Exact schedule.
//
// One warp per block, one thread per channel. Each thread streams its channel's operands through
// a ring of kExactStages stages of D time steps in shared memory with cp.async (each thread
// copies and later reads only its own column of the ring, so no barrier is involved): while the
// chain runs stage s, the copies of stages s+1 .. s+kExactStages-1 are in flight. D is sized so
// that the ring is kExactRingBytes per thread (48 KiB per block): stages of D = 96 steps for the
// forward constant float32 scan (up to 288 steps in flight) down to D = 9 for the float64
// variable backward (27).

template <class T, int Arrays>
struct ExactStage {
  static constexpr int kSteps =
      static_cast<int>(kExactRingBytes / (kExactStages * Arrays * sizeof(T)));
};

template <class T, int Arrays, int D>
struct ExactRing {
  T v[kExactStages][Arrays][D][kExactThreads];
};

// Stages of D steps that hold a channel's `steps` positions.
template <int D>
TLRT_DEVICE_INLINE uint64_t exact_stages(uint64_t steps) {
  return (steps + D - 1) / D;
}

// A channel's `steps` positions p through the ring in `stages` stages of D (exact_stages):
// copy(st, k, p) issues the copies of position p into slot k of stage st, step(st, k, p) runs
// position p once its stage has landed (Unroll: the step loop's unrolling). Each stage's copies
// are one commit group (empty past the end, so the wait counts stay uniform).
template <int D, int Unroll, class Copy, class Step>
TLRT_DEVICE_INLINE void exact_ring_run(uint64_t steps, uint64_t stages, Copy copy, Step step) {
  auto issue = [&](uint64_t s) {
    if (s < stages) {
      const int st = static_cast<int>(s % kExactStages);
      for (int k = 0; k < D; ++k) {
        const uint64_t p = s * D + k;
        if (p >= steps) break;
        copy(st, k, p);
      }
    }
    __pipeline_commit();
  };
  for (int s = 0; s < kExactStages - 1; ++s) issue(s);
  for (uint64_t s = 0; s < stages; ++s) {
    issue(s + kExactStages - 1);  // refills the stage read in the previous iteration
    __pipeline_wait_prior(kExactStages - 1);
    const int st = static_cast<int>(s % kExactStages);
#pragma unroll Unroll
    for (int k = 0; k < D; ++k) {
      const uint64_t p = s * D + k;
      if (p >= steps) break;
      step(st, k, p);
    }
  }
}

template <class T, bool Var>
__global__ void __launch_bounds__(kExactThreads)
    scan_fwd_exact(ScanOperands<T> in, T* __restrict__ out) {
  constexpr int kArrays = Var ? 3 : 1;  // X (, A, B)
  constexpr int D = ExactStage<T, kArrays>::kSteps;
  __shared__ ExactRing<T, kArrays, D> ring;
  const int tid = threadIdx.x;
  const uint64_t c = static_cast<uint64_t>(blockIdx.x) * kExactThreads + tid;
  if (c >= in.state) return;
  const uint64_t S = in.state, steps = in.steps;
  const uint64_t stages = exact_stages<D>(steps);
  T ac = T(0), bc = T(0);
  load_channel_constants<T, Var>(in, c, ac, bc);
  T h = load(in.h0 + c);
  exact_ring_run<D, 8>(
      steps, stages,
      [&](int st, int k, uint64_t t) {
        const uint64_t i = t * S + c;
        copy_chunk_async<T, 1>(&ring.v[st][0][k][tid], in.x + i);
        if (Var) {
          copy_chunk_async<T, 1>(&ring.v[st][Var ? 1 : 0][k][tid], in.a + i);
          copy_chunk_async<T, 1>(&ring.v[st][Var ? 2 : 0][k][tid], in.b + i);
        }
      },
      [&](int st, int k, uint64_t t) {
        const T x = ring.v[st][0][k][tid];
        const T a = Var ? ring.v[st][Var ? 1 : 0][k][tid] : ac;
        const T b = Var ? ring.v[st][Var ? 2 : 0][k][tid] : bc;
        h = step(a, h, mul_rn(b, x));
        out[t * S + c] = h;
      });
}

// Reverse time: position u = T-1-t. Ring arrays: dY, X, hprev (, A_{t+1}, B).
template <class T, bool Var>
__global__ void __launch_bounds__(kExactThreads)
    scan_bwd_exact(ScanOperands<T> in, const T* __restrict__ out, const T* __restrict__ dy,
                   ScanGradients<T> grad) {
  constexpr int kArrays = Var ? 5 : 3;
  constexpr int D = ExactStage<T, kArrays>::kSteps;
  constexpr int kDy = 0, kX = 1, kHp = 2, kAn = Var ? 3 : 0, kB = Var ? 4 : 0;
  __shared__ ExactRing<T, kArrays, D> ring;
  const int tid = threadIdx.x;
  const uint64_t c = static_cast<uint64_t>(blockIdx.x) * kExactThreads + tid;
  if (c >= in.state) return;
  const uint64_t S = in.state, steps = in.steps;
  const uint64_t stages = exact_stages<D>(steps);
  T ac = T(0), bc = T(0);
  load_channel_constants<T, Var>(in, c, ac, bc);
  const T h0 = load(in.h0 + c);
  T g = T(0), sum_a = T(0), sum_b = T(0);
  exact_ring_run<D, 4>(
      steps, stages,
      [&](int st, int k, uint64_t u) {
        const uint64_t t = steps - 1 - u;
        const uint64_t i = t * S + c;
        copy_chunk_async<T, 1>(&ring.v[st][kDy][k][tid], dy + i);
        copy_chunk_async<T, 1>(&ring.v[st][kX][k][tid], in.x + i);
        if (t != 0) copy_chunk_async<T, 1>(&ring.v[st][kHp][k][tid], out + (i - S));
        if (Var) {
          if (u != 0) copy_chunk_async<T, 1>(&ring.v[st][kAn][k][tid], in.a + (i + S));
          copy_chunk_async<T, 1>(&ring.v[st][kB][k][tid], in.b + i);
        }
      },
      [&](int st, int k, uint64_t u) {
        const uint64_t t = steps - 1 - u;
        const uint64_t i = t * S + c;
        // u == 0: fl(fl(0 * +0) + dY) = fl(+0 + dY).
        const T an = u == 0 ? T(0) : (Var ? ring.v[st][kAn][k][tid] : ac);
        g = step(an, g, ring.v[st][kDy][k][tid]);
        const T hp = t == 0 ? h0 : ring.v[st][kHp][k][tid];
        bwd_step_outputs<T, Var>(grad, i, g, hp, ring.v[st][kX][k][tid],
                                 Var ? ring.v[st][kB][k][tid] : bc, sum_a, sum_b);
      });
  bwd_end_literal<T, Var>(in, grad, c, ac, g, sum_a, sum_b);
}

// ---------------------------------------------------------------------------------------------
// Resident schedule.
//
// A block holds C adjacent channels (a power of two up to 32) for the whole sequence: thread
// tid takes channel ch = tid % C and segment tid / C, the K consecutive steps from segment * K
// (so one warp load reads 32 / C rows of C contiguous elements). The segments of a channel are
// composed inside the block (no look-back, no workspace): each thread composes its K maps, a
// Kogge-Stone scan across the 32 / C segments of a warp (shuffles) gives each thread the
// inclusive map of its warp's segments up to its own, the warps' aggregates go through shared
// memory, and each thread applies them one by one in warp order to the block's carry-in h0,
// then the warp-exclusive prefix before its own segment, then runs its K steps
// literally, writing the outputs from registers. Every operand is read once and every output
// written once; the order of every composition is fixed, so results repeat bit for bit.
//
// Marks (the fast preconditions) go to shared memory; after a barrier that follows every fast
// write of the block, thread ch < C recomputes its channel on the literal recurrence if marked.

constexpr int kResidentThreads = static_cast<int>(kScanResidentThreads);
constexpr int kResidentWarps = kResidentThreads / 32;
constexpr int kResidentChannels = static_cast<int>(kScanResidentMaxChannels);

template <class T>
constexpr int resident_steps() {
  return static_cast<int>(scan_resident_steps(sizeof(T)));
}

// Phase 2 of a resident block, called by every thread with (ca, cb), the map of its segment.
// Returns `carry` (the block's carry-in of the channel) with the maps of the channel's earlier
// segments applied: the warp aggregates of the earlier warps one by one in warp order, then the
// composed map of the earlier segments of its own warp. Contains one __syncthreads.
template <class T>
TLRT_DEVICE_INLINE T resident_carry(T ca, T cb, T carry, int log2c, T (*s_a)[kResidentChannels],
                                    T (*s_b)[kResidentChannels]) {
  const int C = 1 << log2c;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int ch = threadIdx.x & (C - 1);
  // Inclusive scan across the segments of the warp (lane - d holds the same channel, d steps
  // of C lanes earlier): (ca, cb) o (pa, pb) = (ca*pa, ca*pb + cb).
  for (int d = C; d < 32; d <<= 1) {
    const T pa = __shfl_up_sync(kFullMask, ca, d);
    const T pb = __shfl_up_sync(kFullMask, cb, d);
    if (lane >= d) {
      cb = step(ca, pb, cb);
      ca = mul_rn(ca, pa);
    }
  }
  // The exclusive prefix (used by lanes >= C, the segments after the warp's first).
  const T ea = __shfl_up_sync(kFullMask, ca, C);
  const T eb = __shfl_up_sync(kFullMask, cb, C);
  if (lane >= 32 - C) {  // the warp's last segment: the warp aggregate
    s_a[warp][ch] = ca;
    s_b[warp][ch] = cb;
  }
  __syncthreads();
  T h = carry;
#pragma unroll 4
  for (int q = 0; q < warp; ++q) h = step(s_a[q][ch], h, s_b[q][ch]);
  if (lane >= C) h = step(ea, h, eb);
  return h;
}

template <class T, int K>
__global__ void __launch_bounds__(kResidentThreads)
    scan_fwd_resident(ScanOperands<T> in, T* __restrict__ out, int log2c) {
  __shared__ T s_a[kResidentWarps][kResidentChannels];
  __shared__ T s_b[kResidentWarps][kResidentChannels];
  __shared__ int s_redo[kResidentChannels];
  const int C = 1 << log2c;
  const int ch = threadIdx.x & (C - 1);
  const uint64_t S = in.state, steps = in.steps;
  const uint64_t c = static_cast<uint64_t>(blockIdx.x) * C + ch;
  const bool live = c < S;
  const uint64_t t0 = static_cast<uint64_t>(threadIdx.x >> log2c) * K;
  // Steps of this thread inside the sequence (0 for a channel past the end).
  const int n = !live || t0 >= steps ? 0 : (steps - t0 < K ? int(steps - t0) : K);
  if (threadIdx.x < C) s_redo[threadIdx.x] = 0;  // ordered before any mark by phase 2's barrier

  T ac = T(1), bc = T(0), h0 = T(0);
  if (live) {
    ac = load(in.a + c);
    bc = load(in.b + c);
    h0 = load(in.h0 + c);
  }
  // Phase 1: every load of the thread issued before the composition uses them (a thread with
  // all K steps inside the sequence, the common case, takes the unpredicated copy of the loop).
  T bv[K];
  auto load_steps = [&](auto full) {
    const T* px = in.x + (t0 * S + c);
#pragma unroll
    for (int k = 0; k < K; ++k) {
      if (decltype(full)::value || k < n) {
        bv[k] = mul_rn(bc, load(px));
        px += S;
      } else {
        bv[k] = T(0);  // identity steps past the end
      }
    }
  };
  if (n == K) {
    load_steps(std::true_type{});
  } else {
    load_steps(std::false_type{});
  }
  auto av = [&](int k) -> T { return k < n ? ac : T(1); };
  T ca, cb;
  bool redo = compose_steps<T, K>(av, bv, ca, cb, live && !isfinite(h0));
  // Phase 2, then phase 3: the K steps from the segment's carry-in.
  T h = resident_carry<T>(ca, cb, h0, log2c, s_a, s_b);
  T* o = out + (t0 * S + c);
#pragma unroll
  for (int k = 0; k < K; ++k) {
    if (k < n) {
      h = step(av(k), h, bv[k]);
      *o = h;
      o += S;
      redo = redo || !isfinite(h);
    }
  }
  if (redo) s_redo[ch] = 1;
  __syncthreads();  // every fast output of the block is written, every mark set
  if (threadIdx.x < C && live && s_redo[threadIdx.x] != 0) fwd_channel_exact<T, false>(in, out, c);
}

// ---------------------------------------------------------------------------------------------
// The calls: the schedule the rule picks, launched here (exact, resident) or by its own file.

size_t workspace_bytes(uint64_t steps, uint64_t state, size_t element_bytes, Variant v, bool exact,
                       const char* op) {
  switch (schedule_of(steps, state, element_bytes, v, exact, op)) {
    case Schedule::rows:
      return rows_plan(steps, state, element_bytes, v).bytes;
    case Schedule::chunked:
      return fast_plan(steps, state, element_bytes, v).bytes;
    default:  // exact, resident and slab need none
      return 0;
  }
}

}  // namespace

size_t selective_scan_fwd_workspace_bytes(uint64_t steps, uint64_t state, size_t element_bytes,
                                          bool variable, bool exact) {
  const char* op = variable ? "selective_scan_diag_var_fwd" : "selective_scan_diag_fwd";
  const Variant v = variable ? Variant::var_fwd : Variant::fwd;
  return workspace_bytes(steps, state, element_bytes, v, exact, op);
}

size_t selective_scan_bwd_workspace_bytes(uint64_t steps, uint64_t state, size_t element_bytes,
                                          bool variable, bool exact) {
  const char* op = variable ? "selective_scan_diag_var_bwd" : "selective_scan_diag_bwd";
  const Variant v = variable ? Variant::var_bwd : Variant::bwd;
  return workspace_bytes(steps, state, element_bytes, v, exact, op);
}

template <class T>
void selective_scan_fwd_cuda(const ScanOperands<T>& in, T* out, bool exact, void* workspace,
                             CUstream_st* stream) {
  const char* op = in.variable ? "selective_scan_diag_var_fwd" : "selective_scan_diag_fwd";
  if (in.steps == 0 || in.state == 0) return;
  const Variant v = in.variable ? Variant::var_fwd : Variant::fwd;
  ResidentPlan r;
  const Schedule schedule = schedule_of(in.steps, in.state, sizeof(T), v, exact, op, &r);
  // The slab schedule's calls whose vectors are not 16-byte aligned (no tlrt buffer is such) take
  // a schedule without workspace: the constant forward the resident one, the variable the exact.
  const bool slab_vectors =
      aligned16(in.x) && aligned16(out) && (!in.variable || (aligned16(in.a) && aligned16(in.b)));
  if (schedule == Schedule::exact || (schedule == Schedule::slab && in.variable && !slab_vectors)) {
    const dim3 exact_blocks = exact_grid(in.state, op);
    if (in.variable) {
      scan_fwd_exact<T, true><<<exact_blocks, kExactThreads, 0, stream>>>(in, out);
    } else {
      scan_fwd_exact<T, false><<<exact_blocks, kExactThreads, 0, stream>>>(in, out);
    }
    check_launch(op);
    return;
  }
  if (schedule == Schedule::rows) {
    if (in.variable) {
      launch_rows<T, Variant::var_fwd>(in, out, nullptr, nullptr, {}, workspace, stream, op);
    } else {
      launch_rows<T, Variant::fwd>(in, out, nullptr, nullptr, {}, workspace, stream, op);
    }
    return;
  }
  if (schedule == Schedule::slab) {  // float32 only
    if constexpr (std::is_same_v<T, float>) {
      if (slab_vectors) {
        launch_slab_fwd(in, out, stream, op);
        return;
      }
    }
  }
  if (schedule == Schedule::resident || schedule == Schedule::slab) {
    // The constant variant only (with the slab schedule's unaligned calls, above). Marked channels
    // are recomputed inside the block.
    scan_fwd_resident<T, resident_steps<T>()><<<r.blocks, r.threads, 0, stream>>>(in, out, r.log2c);
    check_launch(op);
    return;
  }
  launch_chunked_fwd<T>(in, out, fast_plan(in.steps, in.state, sizeof(T), v), workspace, stream,
                        op);
}

template <class T>
void selective_scan_bwd_cuda(const ScanOperands<T>& in, const T* out, const T* dy,
                             const ScanGradients<T>& grad, bool exact, void* workspace,
                             CUstream_st* stream) {
  const char* op = in.variable ? "selective_scan_diag_var_bwd" : "selective_scan_diag_bwd";
  if (in.steps == 0 || in.state == 0) return;
  const Variant v = in.variable ? Variant::var_bwd : Variant::bwd;
  const Schedule schedule = schedule_of(in.steps, in.state, sizeof(T), v, exact, op);
  // The slab schedule's calls whose (T, S) arrays are not 16-byte aligned (no tlrt buffer is
  // such) take the exact schedule, which needs no workspace either.
  const bool slab_arrays = aligned16(in.x) && aligned16(out) && aligned16(dy) && aligned16(grad.dx);
  if (schedule == Schedule::exact || (schedule == Schedule::slab && !slab_arrays)) {
    const dim3 exact_blocks = exact_grid(in.state, op);
    if (in.variable) {
      scan_bwd_exact<T, true><<<exact_blocks, kExactThreads, 0, stream>>>(in, out, dy, grad);
    } else {
      scan_bwd_exact<T, false><<<exact_blocks, kExactThreads, 0, stream>>>(in, out, dy, grad);
    }
    check_launch(op);
    return;
  }
  if (schedule == Schedule::rows) {
    if (in.variable) {
      launch_rows<T, Variant::var_bwd>(in, nullptr, out, dy, grad, workspace, stream, op);
    } else {
      launch_rows<T, Variant::bwd>(in, nullptr, out, dy, grad, workspace, stream, op);
    }
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    if (schedule == Schedule::slab) {  // the constant variant (schedule_of)
      launch_slab_bwd(in, out, dy, grad, stream, op);
      return;
    }
  }
  launch_chunked_bwd<T>(in, out, dy, grad, fast_plan(in.steps, in.state, sizeof(T), v), workspace,
                        stream, op);
}

template void selective_scan_fwd_cuda<float>(const ScanOperands<float>&, float*, bool, void*,
                                             CUstream_st*);
template void selective_scan_fwd_cuda<double>(const ScanOperands<double>&, double*, bool, void*,
                                              CUstream_st*);
template void selective_scan_bwd_cuda<float>(const ScanOperands<float>&, const float*, const float*,
                                             const ScanGradients<float>&, bool, void*,
                                             CUstream_st*);
template void selective_scan_bwd_cuda<double>(const ScanOperands<double>&, const double*,
                                              const double*, const ScanGradients<double>&, bool,
                                              void*, CUstream_st*);

}  // namespace tlrt::kernels
