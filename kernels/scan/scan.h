// Diagonal selective scans (SPEC-ops 13): per channel j of S, over T time steps,
//   b_t = fl(B_t * X_t),  h_t = fl(fl(A_t * h_{t-1}) + b_t),  h_{-1} = h0[j]
// and the backward recurrence
//   g_{T-1} = fl(+0 + dY_{T-1}),  g_t = fl(fl(A_{t+1} * g_{t+1}) + dY_t)
//   da_t = fl(g_t * hprev_t), db_t = fl(g_t * X_t), dX_t = fl(g_t * B_t), dH0 = fl(g_0 * A_0)
// with hprev_0 = h0, hprev_t = out_{t-1}. The constant variant broadcasts A and B (length S) over
// time and folds dA[j], dB[j] over time in reverse order from +0: ((+0 + x_{T-1}) + ...) + x_0.
// X, out, dY, dX are (T, S) row-major; the variable variant's A, B, dA, dB too.
//
// Two schedules on the device:
//  - exact: one thread per channel running the literal recurrence (bit-identical to the
//    reference backend), used when the runtime's deterministic setting is on;
//  - fast: a scan of the affine maps h -> a*h + b over time, within the bound derived in
//    docs/NUMERICS.md: for the forwards and the constant backward in float32 with S a multiple
//    of 4 and at least 512 channels, slab (a block holds 8 or 16 channels for the whole sequence
//    and moves it in rounds of rows) where the sequence fits in a block; for the constant forward,
//    otherwise resident (a block holds whole sequences of a few channels on chip; neither needs
//    workspace); for up to scan_rows_max_state channels (128 in the forwards, 64 in the backwards),
//    rows (blocks of contiguous rows, carries from fixed groups of chunk maps); otherwise
//    single-pass chunked (decoupled look-back between chunks), or, for the float32 constant
//    backward with few tiles of 32 channels, the same chunks split into three launches (the chunk
//    maps, their serial chain, the steps) with the same bits.
// Extents arrive validated (T, S > 0: empty cases are handled by the dispatch).
#pragma once

#include <cstddef>
#include <cstdint>

struct CUstream_st;

namespace tlrt::kernels {

// Fast-schedule geometry, shared with the error bound (kernels/scan/scan_bound.h): each thread
// runs K consecutive steps, a chunk is kScanSegments * K steps; sequences of at most
// kScanExactMaxSteps steps take the exact schedule in either mode. K depends on the pass: in
// float32 32 for the constant forward and 12 for the variable forward (whose operands are staged
// in shared memory, 32 KiB and 36 KiB a block), 16 for the backwards (operands in registers); 8
// in float64.
enum class ScanPass { constant_forward, variable_forward, backward };
constexpr ScanPass kScanPasses[] = {ScanPass::constant_forward, ScanPass::variable_forward,
                                    ScanPass::backward};
constexpr uint64_t kScanSegments = 8;
constexpr uint64_t kScanExactMaxSteps = 32;
constexpr uint64_t scan_segment_steps(size_t element_bytes, ScanPass pass) {
  if (element_bytes != 4) return 8;
  return pass == ScanPass::constant_forward ? 32 : pass == ScanPass::variable_forward ? 12 : 16;
}
constexpr uint64_t scan_chunk_steps(size_t element_bytes, ScanPass pass) {
  return kScanSegments * scan_segment_steps(element_bytes, pass);
}

// Resident-schedule geometry (the constant forward's fast schedule where the sequence fits): a
// block of at most kScanResidentThreads threads holds C channels (a power of two, 1 to
// kScanResidentMaxChannels) for the whole sequence, each thread scan_resident_steps consecutive
// steps. Sequences up to scan_resident_max_steps take it: at that length a block holds the
// channels of one 16-byte row segment (4 float32, 2 float64).
constexpr uint64_t kScanResidentThreads = 1024;
constexpr uint64_t kScanResidentMaxChannels = 32;
constexpr uint64_t scan_resident_steps(size_t element_bytes) {
  return 128 / element_bytes;
}
constexpr uint64_t scan_resident_max_steps(size_t element_bytes) {
  return kScanResidentThreads * scan_resident_steps(element_bytes) / (16 / element_bytes);
}

// Slab-schedule geometry (float32, T from kScanSlabMinSteps to scan_resident_max_steps where S is
// a multiple of 4, at least 1024, or 512 past T 4096; the rule is slab_takes in
// kernels/scan/scan.cu, the kernels are in kernels/scan/scan_slab.cu; the two forwards and the
// constant backward): a block holds a few channels
// for the whole sequence and moves it in rounds, each thread a few consecutive rows of 4 channels
// a round. Each variant has its own block (threads, rows a thread, channels a block): the constant
// forward 512 x 8 x 16, the variable forward 512 x 4 x 16 (three operand arrays a row), the
// constant backward 512 x 4 x 8 (three operand arrays a row, in reverse time).
struct ScanSlabBlock {
  uint64_t threads, rows, channels;
};
constexpr uint64_t kScanSlabMinSteps = 2048;
constexpr ScanSlabBlock kScanSlabFwd = {512, 8, 16};
constexpr ScanSlabBlock kScanSlabVarFwd = {512, 4, 16};
constexpr ScanSlabBlock kScanSlabBwd = {512, 4, 8};
constexpr ScanSlabBlock kScanSlabBlocks[] = {kScanSlabFwd, kScanSlabVarFwd, kScanSlabBwd};
// Levels of a slab block's warp scan over the groups of rows of a warp (32 / (C / 4) groups: 2 to
// 16).
constexpr uint64_t scan_slab_levels(const ScanSlabBlock& b) {
  const uint64_t groups = 32 / (b.channels / 4);
  return groups >= 16 ? 4 : groups >= 8 ? 3 : groups >= 4 ? 2 : 1;
}

// Rows-schedule geometry (the fast schedule of every variant at few channels, S up to
// scan_rows_max_state, where a tile of 32 channels would idle lanes or hold hundreds of chunks in
// one look-back chain): a block of scan_rows_threads threads stages a chunk of R contiguous rows
// of all S channels, Q = floor(threads / S) segments of K = scan_rows_steps consecutive steps a
// channel (R = Q K), and takes its carry-in from the maps of the earlier chunks, composed in fixed
// groups of kScanRowsGroup (no serial chain over the chunks). K is 1 modulo the shared-memory
// banks a row segment spans (32 four-byte words, 16 eight-byte), so a warp's reads of its steps
// hit distinct banks for any S. A chunk holds at least K rows (Q >= 1: threads >=
// scan_rows_max_state).
constexpr uint64_t kScanRowsGroup = 32;
constexpr uint64_t scan_rows_steps(size_t element_bytes) {
  return element_bytes == 4 ? 33 : 17;
}
// Threads of a rows block: 256 for the constant forward (one staged array), 128 for the others
// (3, 3 and 5 arrays for the variable forward, the constant and the variable backward), so that
// a block's staged rows take 33 to 83 KiB. The variable backward had 64 threads, and up to 32
// channels only; with 128 it keeps two segments a channel at S 64 and was faster on the H200 at
// every few-channel shape measured (T 2^18 x S 64 340.6 us against 462.5 on the chunked
// schedule, T 2^24 x S 1 254.3 against 260.0).
constexpr uint64_t scan_rows_threads(bool backward, bool variable) {
  return backward ? 128 : (variable ? 128 : 256);
}
// The most channels a rows call holds: 128 in the forwards, 64 in the backwards. At 65 to 128
// channels the chunked schedule's tiles hold T / L chunks each in one look-back chain, and the
// forwards took 8-11% less time on rows blocks on the H200 (T 2^17 and 2^19 x S 128); the
// backwards took more there (the variable backward, one segment a channel: 454 against 238 us at
// T 2^17), and so did the constant forward at 256 channels (one segment a channel: 175 against 78
// us at T 2^16).
constexpr uint64_t scan_rows_max_state(bool backward) {
  return backward ? 64 : 128;
}

template <class T>
struct ScanOperands {
  const T* a = nullptr;   // S (constant) or T*S (variable)
  const T* b = nullptr;   // S (constant) or T*S (variable)
  const T* x = nullptr;   // T*S
  const T* h0 = nullptr;  // S
  uint64_t steps = 0;     // T
  uint64_t state = 0;     // S
  bool variable = false;
};

// Backward outputs: da, db of S (constant) or T*S (variable); dx of T*S; dh0 of S.
template <class T>
struct ScanGradients {
  T* da = nullptr;
  T* db = nullptr;
  T* dx = nullptr;
  T* dh0 = nullptr;
};

// Reference backend (kernels/scan/scan_ref.cpp): the literal recurrences in time order (forward)
// and reverse time order (backward), each product and sum separately rounded.
template <class T>
void selective_scan_fwd_ref(const ScanOperands<T>& in, T* out);
template <class T>
void selective_scan_bwd_ref(const ScanOperands<T>& in, const T* out, const T* dy,
                            const ScanGradients<T>& grad);

// CUDA backend (kernels/scan/scan.cu). Asynchronous on `stream`. `exact` selects the
// one-thread-per-channel schedule; without it the launcher still takes that schedule where it is
// expected to be the faster one (enough channels to fill the current device: a rule on T, S and
// the SM count), and recomputes on the literal recurrence, inside the same launches, the
// channels the fast schedule marks (inputs outside its preconditions, non-finite results).
// `workspace` is 16-byte aligned device memory of the size the matching *_workspace_bytes
// function returns for the same operands and schedule on the current device (null when that is
// 0; a misaligned one makes the launcher throw invalid_argument); nothing in it needs to be
// initialised by the caller.
size_t selective_scan_fwd_workspace_bytes(uint64_t steps, uint64_t state, size_t element_bytes,
                                          bool variable, bool exact);
size_t selective_scan_bwd_workspace_bytes(uint64_t steps, uint64_t state, size_t element_bytes,
                                          bool variable, bool exact);
template <class T>
void selective_scan_fwd_cuda(const ScanOperands<T>& in, T* out, bool exact, void* workspace,
                             CUstream_st* stream);
template <class T>
void selective_scan_bwd_cuda(const ScanOperands<T>& in, const T* out, const T* dy,
                             const ScanGradients<T>& grad, bool exact, void* workspace,
                             CUstream_st* stream);

}  // namespace tlrt::kernels
