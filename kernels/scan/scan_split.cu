// Diagonal selective scans, CUDA backend: the constant backward's split schedule (float32 calls
// of the chunked schedule with few tiles, split_takes), the chunked kernel's chunks in three
// launches. The overview of the schedules and the rule that picks one are at the top of
// kernels/scan/scan.cu; the chunked schedule is in kernels/scan/scan_chunked.cu.
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/float_ops.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/scan/scan.h"
#include "kernels/scan/scan_shared.cuh"

namespace tlrt::kernels {
namespace {

using namespace scan_detail;

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

}  // namespace

namespace scan_detail {

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

// A split launch of the constant backward (split_takes): the maps, the carries and the chunks'
// steps, each launched dependent on the one before, then fold_chunks queued behind.
void launch_split(const ScanOperands<float>& in, const float* saved_h, const float* dy,
                  const ScanGradients<float>& grad, const FastPlan& p, void* workspace, dim3 grid,
                  dim3 exact_blocks, CUstream_st* stream, const char* op) {
  using T = float;
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

}  // namespace scan_detail
}  // namespace tlrt::kernels
