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
// schedule_of); the rest take the rows schedule up to scan_rows_max_state channels (128 in the
// forwards, 64 in the backwards) and the chunked one beyond.
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
// Slab schedule (float32, the forwards and the constant backward, T from kScanSlabMinSteps to the
// resident range's end, S a multiple of 4 from 1024 channels, or from 512 past T 4096): a block of
// 512 threads holds a few adjacent channels (16 in the forwards, 8 in the backward) for the whole
// sequence and moves it in rounds of rows, a few rows of 4 channels a thread (8 in the constant
// forward, 4 in the variable one and the backward: kScanSlabBlocks), the next round's loads in
// flight during a round's scan; the same composition as the resident schedule within a round
// (warp scan, warp aggregates in order; the variable forward composes pairs), the round's carry
// passed on in shared memory, and the same in-block recompute of marked channels. The backward
// runs in reverse time and folds the constant variant's dA, dB in the block by a fixed tree.
//
// Chunked schedule (fast mode, longer sequences). A single pass: a block takes a chunk of L = 8*K
// time steps (K = scan_segment_steps: in float32 32 in the constant forward, 12 in the variable
// forward, 16 in the backwards; 8 in float64) for a tile of 32 channels (warp w owns steps
// [w*K, (w+1)*K) of the chunk, lane = channel) and keeps its operands on chip: the float32
// forwards copy them into shared memory (cp.async, scan_fwd_staged: 5 blocks an SM), the
// backwards and the float64 forwards hold them in registers. Each thread composes its K maps, the
// block composes the 8 segment maps in shared memory (the chunk's aggregate), warp 0 publishes the
// aggregate, and the block resolves the chunk's carry-in by decoupled look-back over the previous
// chunks of its tile, its 8 warps polling the 8 nearest predecessors in one round trip, or the 16
// nearest where a call has few tiles (lookback_polls). The aggregates after the nearest inclusive
// value are applied to it one by one, so every inclusive value is the serial chain's and results
// repeat bit for bit whatever the window. Chunk order is the order of an
// atomic ticket, so every chunk a block waits for belongs to a block that is already running. Then
// each thread applies the prefix of the segments before its own to the carry and runs its K steps
// literally, writing the outputs from registers: every operand is read once and every output
// written once. The backward is the same scan in reverse time for g (coefficient A_{t+1}, 0 at t =
// T-1; bias dY_t; carry +0) and forms da, db, dX, dH0 in the same pass; the constant variant's dA,
// dB sum each chunk's contribution in reverse time order inside the block and a second kernel folds
// the per-chunk partial sums in 16 contiguous ranges of chunks, then the range sums, each in
// reverse time order (a fixed order, so results repeat run to run). The look-back values, the
// ticket and the marks live in the workspace and are set to all-ones bytes by a small kernel
// before each call (clear_work). The fast kernel and the recompute behind it are programmatic
// dependent launches (launch.cuh): each may start its blocks while the kernel before it runs and
// waits for that kernel's completion before touching what it wrote, which hides two launch gaps.
// The float32 constant backward with few tiles (split_takes) runs the same chunks in three
// launches instead (split schedule, below: the maps from dY alone, the carries as a serial chain
// over them, the steps), with the same bits and no look-back.
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

namespace tlrt::kernels {
namespace {

constexpr int kTileChannels = 32;  // channels of a fast-schedule tile (one warp width)
constexpr int kSegments = static_cast<int>(kScanSegments);  // warps of a fast-schedule block
constexpr int kFastThreads = kTileChannels * kSegments;
// Blocks resident per SM of the float64 forward, whose operands stay in registers (64 a thread).
constexpr int kRegisterForwardBlocks = 4;
// Blocks resident per SM of the float32 forward, whose operands are staged in shared memory (a
// block of the constant forward holds 32 KiB of X, one of the variable forward 36 KiB of A, B and
// X, each about 6 KiB more for the look-back and the segment maps): 5 fit in the 228 KiB of a
// Hopper SM. More blocks in different phases keep more loads in flight while others wait in the
// look-back.
constexpr int kStagedForwardBlocks = 5;
constexpr int kExactThreads = 32;         // channels per block of the exact schedule (one warp)
constexpr int kExactStages = 4;           // cp.async ring stages of the exact schedule
constexpr size_t kExactRingBytes = 1536;  // ring bytes per thread (48 KiB per block)
constexpr uint64_t kExactMaxSteps =
    kScanExactMaxSteps;  // shorter sequences always take the exact schedule

constexpr unsigned kFullMask = 0xffffffffu;

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
WorkLayout work_layout(size_t partial, size_t values, bool inclusive, uint64_t state) {
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
// Fast schedule.

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

// ---------------------------------------------------------------------------------------------
// Split schedule of the constant backward (float32 calls of the chunked schedule with few tiles,
// split_takes): the chunked kernel's chunks, maps and steps in three launches instead of one
// look-back. scan_bwd_maps reads only dY and stores each chunk's map, composed as scan_bwd_fast
// composes it (the same products and sums in the same order); scan_carries runs, for each
// channel, the serial chain step(a_k, carry, b_k) over its tile's chunk maps from +0 and stores
// every chunk's carry-in, which is the inclusive value the chunked look-back finds wherever its
// walk stops; scan_bwd_split loads its chunk's operands while the maps and carries are formed,
// waits for them, and runs scan_bwd_fast's steps from its carry-in. So every output is the
// chunked kernel's, bit for bit, and no block waits for a block of its own grid; dY is read twice
// (five arrays' bytes instead of four), which pays where a tile's look-back chain is what bounds
// the chunked kernel.

// Maps a carries block stages a round (each of a and b, two buffers): 32 KiB of shared memory.
template <class T>
struct CarryRound {
  static constexpr int kMaps = static_cast<int>(256 / sizeof(T));
};
// Blocks of scan_bwd_maps per SM (a grid-stride loop over the slots): each thread has K loads of
// dY in flight, so 2 blocks an SM stream dY while leaving room for scan_bwd_split's blocks.
constexpr uint32_t kSplitMapsBlocksPerSm = 2;

template <class T>
TLRT_DEVICE_INLINE T* map_values(typename LookBits<T>::U* slots) {
  return reinterpret_cast<T*>(slots);
}

// The maps of every (chunk, tile) slot of a constant backward into w.agg_a / w.agg_b (slot
// chunk * tiles + tile, 32 channels), a grid-stride loop over the slots; chunk 0's blocks clear
// their channels' marks.
template <class T, int K>
__global__ void __launch_bounds__(kFastThreads)
    scan_bwd_maps(ScanOperands<T> in, const T* __restrict__ dy, FastWork<T> w) {
  allow_dependents();  // scan_carries, and behind it scan_bwd_split, may start their blocks
  __shared__ T s_a[kSegments][kTileChannels];
  __shared__ T s_b[kSegments][kTileChannels];
  const int lane = threadIdx.x % kTileChannels, seg = threadIdx.x / kTileChannels;
  const uint64_t S = in.state, steps = in.steps, slots = w.tiles * w.chunks;
  T* agg_a = map_values<T>(w.agg_a);
  T* agg_b = map_values<T>(w.agg_b);
  for (uint64_t slot = blockIdx.x; slot < slots; slot += gridDim.x) {
    const uint64_t tile = slot % w.tiles, chunk = slot / w.tiles;
    const uint64_t c = tile * kTileChannels + lane;
    const bool live = c < S;
    const uint64_t u0 =
        chunk * (static_cast<uint64_t>(kSegments) * K) + static_cast<uint64_t>(seg) * K;
    const T ac = live ? load(in.a + c) : T(1);
    T dv[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const uint64_t u = u0 + k;
      dv[k] = live && u < steps ? load(dy + ((steps - 1 - u) * S + c)) : T(0);
    }
    auto an = [&](int k) -> T { return constant_bwd_coefficient(live, u0 + k, steps, ac); };
    T ca, cb;
    compose_steps<T, K>(an, dv, ca, cb, false);
    s_a[seg][lane] = ca;
    s_b[seg][lane] = cb;
    __syncthreads();
    if (seg == 0) {
      T ga = T(1), gb = T(0);
      compose_segments<T>(s_a, s_b, kSegments, lane, ga, gb);
      const size_t v = static_cast<size_t>(chunk * w.tiles + tile) * kTileChannels + lane;
      agg_a[v] = ga;
      agg_b[v] = gb;
      if (chunk == 0 && live) w.redo[c] = static_cast<uint8_t>(~kRedoMarked);
    }
    __syncthreads();  // s_a / s_b are read before the next slot writes them
  }
}

// The carry-in of every chunk of a tile (one block a tile): +0 for chunk 0, then the serial chain
// step(a_k, carry, b_k) over the tile's maps in chunk order, each value stored to w.inclusive at
// the slot of the chunk it enters. Warp 0 runs the chain over one round of maps in shared memory
// while the block's threads load the next round into registers.
template <class T>
__global__ void __launch_bounds__(kFastThreads) scan_carries(FastWork<T> w) {
  allow_dependents();  // scan_bwd_split's blocks load their operands meanwhile
  wait_prior_grid();   // the maps
  constexpr int R = CarryRound<T>::kMaps;
  constexpr int kPer = R * kTileChannels / kFastThreads;  // values of a (and of b) a thread loads
  __shared__ T s_ma[2][R][kTileChannels];
  __shared__ T s_mb[2][R][kTileChannels];
  const uint64_t tile = blockIdx.x;
  const int lane = threadIdx.x % kTileChannels;
  const T* agg_a = map_values<T>(w.agg_a);
  const T* agg_b = map_values<T>(w.agg_b);
  T* carries = map_values<T>(w.inclusive);
  const uint64_t rounds = (w.chunks + R - 1) / R;
  T va[kPer], vb[kPer];
  // Round r's maps into registers (chunk r R + e / 32, channel e % 32 for e = threadIdx.x + j
  // threads: whole 128-byte rows of a tile's slots a warp). L2-only loads: written by the grid
  // before, while this one may have been resident.
  auto load_round = [&](uint64_t r) {
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const int e = static_cast<int>(threadIdx.x) + j * kFastThreads;
      const uint64_t chunk = r * R + static_cast<uint64_t>(e / kTileChannels);
      if (chunk < w.chunks) {
        const size_t v = static_cast<size_t>(chunk * w.tiles + tile) * kTileChannels + lane;
        va[j] = __ldcg(agg_a + v);
        vb[j] = __ldcg(agg_b + v);
      } else {  // past the last chunk (never applied): the identity
        va[j] = T(1);
        vb[j] = T(0);
      }
    }
  };
  auto store_round = [&](int buffer) {
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const int e = static_cast<int>(threadIdx.x) + j * kFastThreads;
      s_ma[buffer][e / kTileChannels][lane] = va[j];
      s_mb[buffer][e / kTileChannels][lane] = vb[j];
    }
  };
  load_round(0);
  store_round(0);
  T carry = T(0);
  for (uint64_t r = 0; r < rounds; ++r) {
    if (r + 1 < rounds) load_round(r + 1);
    __syncthreads();  // round r is in buffer r % 2; round r - 1's chain is over
    const int buffer = static_cast<int>(r % 2);
    if (threadIdx.x < kTileChannels) {
      const uint64_t r0 = r * R;
      const int n = w.chunks - r0 < static_cast<uint64_t>(R) ? static_cast<int>(w.chunks - r0) : R;
      for (int q = 0; q < n; ++q) {
        carries[static_cast<size_t>((r0 + q) * w.tiles + tile) * kTileChannels + lane] = carry;
        carry = step(s_ma[buffer][q][lane], carry, s_mb[buffer][q][lane]);
      }
    }
    if (r + 1 < rounds) store_round(1 - buffer);
  }
}

// One (chunk, tile) slot a block (blockIdx.x = chunk * tiles + tile): the constant backward's
// chunk with the carry-in of scan_carries. The block loads its operands (none of which the maps
// and carries kernels write) before it waits for them.
template <class T, int K>
__global__ void __launch_bounds__(kFastThreads)
    scan_bwd_split(ScanOperands<T> in, const T* __restrict__ out, const T* __restrict__ dy,
                   ScanGradients<T> grad, FastWork<T> w) {
  __shared__ T s_a[kSegments][kTileChannels];
  __shared__ T s_b[kSegments][kTileChannels];
  const uint64_t slot = blockIdx.x;
  bwd_chunk<T, false, K>(
      in, out, dy, grad, w, slot % w.tiles, slot / w.tiles, s_a, s_b,
      [] {
        wait_prior_grid();   // the carries (and, before them, the maps and the cleared marks)
        allow_dependents();  // fold_chunks, which waits for this grid's completion
      },
      [&](int, int lane) {
        // L2-only load: this grid's blocks may have been resident while the carries were
        // written.
        return __ldcg(map_values<T>(w.inclusive) + (slot * kTileChannels + lane));
      });
}

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

constexpr int kRowsGroupLog2 = 5;
static_assert((uint64_t{1} << kRowsGroupLog2) == kScanRowsGroup, "groups of 2^5 maps");
constexpr uint64_t kRowsGroupLast = kScanRowsGroup - 1;
constexpr int kRowsMaxLevels = 7;  // 32^7 = 2^35 chunks are more than a grid holds

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

struct RowsPlan : WorkLayout {
  uint64_t chunks = 0;
  int segments = 0, levels = 0;
  uint64_t level_at[kRowsMaxLevels] = {};
};

RowsPlan rows_plan(uint64_t steps, uint64_t state, size_t element_bytes, Variant v) {
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
// channel on the literal recurrence if marked. On the H100 (2026-12-06) it took 0.79 and 0.83 of
// the chunked kernel's time at T 4096 and 8192 x S 1024 (docs/BENCH.md); 16 channels a block, or
// 2 rows a thread, measured slower than this block, and so did seven forms that copy X and hprev
// (and dY) a round or more ahead into shared-memory stages (cp.async; 1.10-1.32 times its time at
// T 4096 on the H100, 2026-12-07).
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

  // This thread's positions in the round from r0: u = r0 + grp U + k (t = T-1-u), k < n.
  auto inside = [&](uint64_t r0) -> uint64_t {
    const uint64_t u = r0 + static_cast<uint64_t>(grp) * U;
    const uint64_t n = !live || u >= steps ? 0 : steps - u;
    return n < static_cast<uint64_t>(U) ? n : U;
  };
  auto load_dy = [&](Lane4(&d)[U], uint64_t r0) {
    const uint64_t n = inside(r0);
    const float* p =
        dy + (n == 0 ? 0 : (steps - 1 - r0 - static_cast<uint64_t>(grp) * U) * S + col);
#pragma unroll
    for (int k = 0; k < U; ++k) {
      d[k] = static_cast<uint64_t>(k) < n ? load4(p) : zero;
      p -= S;
    }
  };
  Lane4 dv[U], dn[U], hp[U], xv[U];
  load_dy(dv, 0);
  Lane4 sa = zero, sb = zero, g = zero;
  int parity = 0;
  for (uint64_t r0 = 0; r0 < steps; r0 += kBwdSlabRound, parity ^= 1) {
    const bool more = r0 + kBwdSlabRound < steps;
    if (more) load_dy(dn, r0 + kBwdSlabRound);
    const uint64_t n = inside(r0);
    // t of this thread's first row (0 when it has none: nothing below is read or written then).
    const uint64_t t0 = n == 0 ? 0 : steps - 1 - r0 - static_cast<uint64_t>(grp) * U;
    {
      const float* px = in.x + t0 * S + col;
      const float* po = out + (t0 == 0 ? 0 : (t0 - 1) * S + col);  // out_{t-1}
#pragma unroll
      for (int k = 0; k < U; ++k) {
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
        px -= S;
        po -= S;
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
#pragma unroll
    for (int k = 0; k < U; ++k) {
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
      pdx -= S;
    }
    if (grp == kBwdSlabGroups - 1) s_carry[parity ^ 1][l] = g;
    if (more) {
#pragma unroll
      for (int k = 0; k < U; ++k) dv[k] = dn[k];
    }
  }
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

// ---------------------------------------------------------------------------------------------

// The grid of a launch whose blocks hold `channels` adjacent channels each (the exact and slab
// schedules).
dim3 channel_grid(uint64_t state, uint64_t channels, const char* op) {
  const uint64_t blocks = (state + channels - 1) / channels;
  if (blocks > 0x7fffffffu) fail(ErrorKind::invalid_argument, op, "state exceeds the CUDA grid");
  return dim3(static_cast<unsigned>(blocks));
}

dim3 exact_grid(uint64_t state, const char* op) {
  return channel_grid(state, kExactThreads, op);
}

dim3 fast_grid(const FastPlan& p, const char* op) {
  const uint64_t blocks = p.tiles * p.chunks;
  if (blocks > 0x7fffffffu) {
    fail(ErrorKind::invalid_argument, op, "seqLen*state exceeds the CUDA grid");
  }
  return dim3(static_cast<unsigned>(blocks));
}

// Whether a chunked constant backward in float32 takes the split schedule: at most 4 tiles of 32
// channels, or at most 16 tiles of at most 64 chunks. On the H100 (float32, 2026-12-05, the same
// bits either way) the split took 0.63-0.92 of the chunked time at 4 tiles whatever T (T 8192 x S
// 128 16.2 against 25.7 us, T 2^17 x S 128 194 against 221, T 2^18 x S 100 343 against 422) and
// at 8 and 16 tiles of 32 or 64 chunks (T 8192 x S 256 24.0 against 28.4, T 4096 x S 512 23.2
// against 25.3), where a tile's look-back chain bounds the chunked kernel; it took 1.16-1.25
// times the chunked time at 8 to 16 tiles of 157 to 2048 chunks and 1.18 times at T 8192 x S
// 1024, where the chunked kernel moves its bytes at 54-66% of copy and the second read of dY
// costs more than the chain. Float64 keeps the chunked kernel (not measured).
bool split_takes(const FastPlan& p) {
  return p.tiles <= 4 || (p.tiles <= 16 && p.chunks <= 64);
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

// A split launch of the constant backward (split_takes): the maps, the carries and the chunks'
// steps, each launched dependent on the one before, then fold_chunks queued behind.
template <class T>
void launch_split(const ScanOperands<T>& in, const T* saved_h, const T* dy,
                  const ScanGradients<T>& grad, const FastPlan& p, void* workspace, dim3 grid,
                  dim3 exact_blocks, CUstream_st* stream, const char* op) {
  constexpr int K = fast_steps_per_thread(sizeof(T), ScanPass::backward);
  check_workspace(workspace, op);
  const FastWork<T> w = fast_work<T>(p, workspace);
  const uint64_t sms = current_sm_count(op);
  const dim3 maps_grid =
      grid_for(p.tiles * p.chunks, 1, (sms == 0 ? 1 : sms) * kSplitMapsBlocksPerSm);
  scan_bwd_maps<T, K><<<maps_grid, kFastThreads, 0, stream>>>(in, dy, w);
  check_launch(op);
  launch_dependent(scan_carries<T>, dim3(static_cast<unsigned>(p.tiles)), kFastThreads, 0, stream,
                   op, w);
  launch_dependent(scan_bwd_split<T, K>, grid, kFastThreads, 0, stream, op, in, saved_h, dy, grad,
                   w);
  launch_recompute<T, Variant::bwd>(in, nullptr, saved_h, dy, grad, w, p.chunks, exact_blocks,
                                    stream, op);
}

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
        const dim3 blocks = channel_grid(in.state, kSlabChannels, op);
        if (in.variable) {
          scan_var_fwd_slab<<<blocks, kSlabThreads, 0, stream>>>(in, out);
        } else {
          scan_fwd_slab<<<blocks, kSlabThreads, 0, stream>>>(in, out);
        }
        check_launch(op);
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
  const FastPlan p = fast_plan(in.steps, in.state, sizeof(T), v);
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
void selective_scan_bwd_cuda(const ScanOperands<T>& in, const T* out, const T* dy,
                             const ScanGradients<T>& grad, bool exact, void* workspace,
                             CUstream_st* stream) {
  const char* op = in.variable ? "selective_scan_diag_var_bwd" : "selective_scan_diag_bwd";
  if (in.steps == 0 || in.state == 0) return;
  const Variant v = in.variable ? Variant::var_bwd : Variant::bwd;
  const Schedule schedule = schedule_of(in.steps, in.state, sizeof(T), v, exact, op);
  const dim3 exact_blocks = exact_grid(in.state, op);
  // The slab schedule's calls whose (T, S) arrays are not 16-byte aligned (no tlrt buffer is
  // such) take the exact schedule, which needs no workspace either.
  const bool slab_arrays = aligned16(in.x) && aligned16(out) && aligned16(dy) && aligned16(grad.dx);
  if (schedule == Schedule::exact || (schedule == Schedule::slab && !slab_arrays)) {
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
      scan_bwd_slab<<<channel_grid(in.state, kBwdSlabChannels, op), kBwdSlabThreads, 0, stream>>>(
          in, out, dy, grad);
      check_launch(op);
      return;
    }
  }
  const FastPlan p = fast_plan(in.steps, in.state, sizeof(T), v);
  constexpr int K = fast_steps_per_thread(sizeof(T), ScanPass::backward);
  const dim3 grid = fast_grid(p, op);
  if constexpr (sizeof(T) == 4) {
    if (!in.variable && split_takes(p)) {
      launch_split<T>(in, out, dy, grad, p, workspace, grid, exact_blocks, stream, op);
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
