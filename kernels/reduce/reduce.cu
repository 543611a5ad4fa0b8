// Whole-buffer reductions, CUDA backend: reduce_sum and reduce_mean of a contiguous float / double
// buffer into one device scalar, bit-exact with the deterministic tree of SPEC-ops 6.4 for every
// size (the same tree serves the non-deterministic contract). Every addition is an explicitly
// rounded __fadd_rn / __dadd_rn and the mean's product a __fmul_rn / __dmul_rn, so nothing is
// contracted; no floating-point atomics anywhere.
//
// One launch computes all passes, on a grid of at most kMinBlocksPerSm blocks per SM whose warps
// work independently (no block barriers, no shared memory). The unit of work is a tile of kRows
// adjacent first-pass rows, and each warp takes a contiguous share of the tiles. Within a row,
// thread l of the warp owns the V = 16/sizeof(T) adjacent lanes of vectors l, l + 32, ...: one
// grid-stride step of a tile is 8 coalesced 16-byte loads per thread (kRows = 4 for float, 2 for
// double), all issued before the first addition, and each lane keeps its own accumulator folded
// in increasing offset (the specified order). A row is then halved in registers: the levels whose
// pairs lie in one thread (the vector index bits) are plain adds, the thread-index bits are xor
// shuffles, and the lane levels inside a vector are first traded between partner threads so that
// every shuffle carries a useful value; each add is lane[j] + lane[j + w] of the specified w (IEEE
// addition is commutative, so which partner holds which operand is immaterial).
//
// Later passes have at most 65535 and then 256 inputs, one step per lane. A second-pass row
// (group) is 256 first-pass rows; its integer completion counter collects row counts, and the
// warp whose count completes it reduces the group; the warp completing the last group computes
// the final row. A warp stores its row results as it goes and counts them once, after its last
// tile, with one fence and one atomic per group its rows fall in (usually one or two).
//
// The counters are this module's device globals, zero when the module is loaded, and every
// counter a launch uses is back at zero when it ends (the warp that completes a counter resets
// it), so no launch clears them first. That requires the launches of one device to be serialised,
// which tlrt does by queueing all work of a device on its one stream. A launch the driver refuses
// never touched them; a kernel that stops partway (fault, trap, timeout) is a sticky error that
// ends the CUDA context, and a new context loads the module with fresh zeroed counters.
#include <cuda_runtime.h>
#include <cuda/atomic>

#include <cstdint>
#include <limits>
#include <string>

#include "kernels/common/launch.cuh"
#include "kernels/reduce/reduce.h"

namespace tlrt::kernels {
namespace {

constexpr int kWarpLanes = 32;
constexpr int kWarpsPerBlock = kThreads / kWarpLanes;
constexpr int kRowLanes = static_cast<int>(kReduceRowLanes);
constexpr unsigned kFullMask = 0xffffffffu;
// Resident blocks per SM the kernels are built for (64 registers per thread) and the grid cap.
constexpr int kMinBlocksPerSm = 4;
// 16-byte loads each thread has in flight per grid-stride step of a tile.
constexpr int kLoadsPerStep = 8;
// Inputs up to this size are read with evict-first loads. On the H200 (60 MB L2) that is faster
// up to 512 MiB, because the lines already in L2 (often dirty) stay put instead of being written
// back while the kernel reads; at 1 GiB plain loads measured faster.
constexpr uint64_t kStreamingMaxBytes = uint64_t{512} << 20;
// Second-pass rows of the largest first pass.
constexpr int kMaxGroups = static_cast<int>((kReduceMaxRows + kReduceRowLanes - 1) / kRowLanes);
static_assert(kMaxGroups <= kRowLanes, "three passes must suffice");

__device__ uint32_t g_group_done[kMaxGroups];  // per group: first-pass rows counted
__device__ uint32_t g_groups_done;             // groups reduced

template <class T>
struct Arith;
template <>
struct Arith<float> {
  static constexpr int kLanes = 4;
  static constexpr int kLanesLog2 = 2;
  __device__ static float add(float a, float b) { return __fadd_rn(a, b); }
  __device__ static float mul(float a, float b) { return __fmul_rn(a, b); }
  template <bool kStreaming>
  __device__ static void load(const float* p, float* v) {
    const float4* q4 = reinterpret_cast<const float4*>(p);
    const float4 q = kStreaming ? __ldcs(q4) : __ldg(q4);
    v[0] = q.x;
    v[1] = q.y;
    v[2] = q.z;
    v[3] = q.w;
  }
};
template <>
struct Arith<double> {
  static constexpr int kLanes = 2;
  static constexpr int kLanesLog2 = 1;
  __device__ static double add(double a, double b) { return __dadd_rn(a, b); }
  __device__ static double mul(double a, double b) { return __dmul_rn(a, b); }
  template <bool kStreaming>
  __device__ static void load(const double* p, double* v) {
    const double2* q2 = reinterpret_cast<const double2*>(p);
    const double2 q = kStreaming ? __ldcs(q2) : __ldg(q2);
    v[0] = q.x;
    v[1] = q.y;
  }
};

// How a warp holds a 256-lane row: thread l has vectors l + 32h (h < kVectors) of kLanes lanes.
template <class T>
struct RowShape {
  static constexpr int kLanes = Arith<T>::kLanes;
  static constexpr int kVectors = kRowLanes / (kWarpLanes * kLanes);
};

template <class T>
using RowPart = T[RowShape<T>::kVectors][RowShape<T>::kLanes];

// A tile: the rows whose one grid-stride step takes kLoadsPerStep loads per thread.
template <class T>
struct TileShape {
  static constexpr int kRows = kLoadsPerStep / RowShape<T>::kVectors;
  static_assert(kRowLanes % kRows == 0, "a tile must not straddle two groups");
};

template <class T>
struct ReduceArgs {
  const T* x;
  uint64_t n;
  uint64_t rows;    // first-pass rows B
  uint64_t stride;  // S = 256 * B
  uint64_t tiles;   // ceil(B / kRows)
  uint32_t groups;  // second-pass rows ceil(B/256)
  T* first;         // first-pass row results
  T* second;        // second-pass row results
  T* out;
  bool scaled;  // reduce_mean: out = fl(sum * scale)
  T scale;
};

// Halves one row held as RowShape describes; every thread of the warp returns the root. Lane
// index bits, high to low: vector index h (in-thread adds), thread index l (shuffles), lane c in
// the vector. The c levels come last; instead of shuffling all kLanes values per thread for each
// of the first log2(kLanes) thread levels, partners split them: the thread whose level bit is set
// keeps the upper half of its c values and sends the lower half, so c's top bit moves into that
// thread bit and each thread ends up with one value. The remaining thread levels follow, then
// the c levels, now on the thread bits they moved to.
template <class T>
__device__ __forceinline__ T halve_row(RowPart<T>& a, int l) {
  using A = Arith<T>;
  constexpr int V = RowShape<T>::kLanes;
  constexpr int H = RowShape<T>::kVectors;
#pragma unroll
  for (int half = H / 2; half >= 1; half /= 2) {
#pragma unroll
    for (int h = 0; h < half; ++h) {
#pragma unroll
      for (int c = 0; c < V; ++c) a[h][c] = A::add(a[h][c], a[h + half][c]);
    }
  }
  T* b = a[0];
#pragma unroll
  for (int count = V, m = kWarpLanes / 2; count > 1; count /= 2, m /= 2) {
    const bool upper = (l & m) != 0;
#pragma unroll
    for (int i = 0; i < count / 2; ++i) {
      const T keep = upper ? b[i + count / 2] : b[i];
      const T send = upper ? b[i] : b[i + count / 2];
      b[i] = A::add(keep, __shfl_xor_sync(kFullMask, send, m));
    }
  }
  T r = b[0];
  constexpr int kSplitFrom = (kWarpLanes / 2) >> Arith<T>::kLanesLog2;  // first unsplit level
#pragma unroll
  for (int m = kSplitFrom; m >= 1; m /= 2) r = A::add(r, __shfl_xor_sync(kFullMask, r, m));
#pragma unroll
  for (int m = kWarpLanes / 2; m > kSplitFrom; m /= 2) {
    r = A::add(r, __shfl_xor_sync(kFullMask, r, m));
  }
  return r;
}

// One later pass over `count` <= 256 values of a row: lane i starts at +0 and adds values[i] once
// (S >= count, so there is a single step); lanes past count stay +0. Called by a whole warp.
template <class T>
__device__ __forceinline__ T later_pass_row(const T* values, uint32_t count, int l) {
  using A = Arith<T>;
  constexpr int V = RowShape<T>::kLanes;
  RowPart<T> a;
#pragma unroll
  for (int h = 0; h < RowShape<T>::kVectors; ++h) {
#pragma unroll
    for (int c = 0; c < V; ++c) {
      const uint32_t i = static_cast<uint32_t>(V * (l + kWarpLanes * h) + c);
      // Written by other warps: read through L2, never a stale L1 line.
      a[h][c] = i < count ? A::add(T(0), __ldcg(values + i)) : T(0);
    }
  }
  return halve_row<T>(a, l);
}

template <class T, bool kStreaming>
__device__ __forceinline__ T load_one(const T* p) {
  return kStreaming ? __ldcs(p) : __ldg(p);
}

template <class T>
__device__ __forceinline__ void write_result(const ReduceArgs<T>& a, T sum) {
  *a.out = a.scaled ? Arith<T>::mul(sum, a.scale) : sum;
}

// Reads the V lanes at element p (16-byte aligned when kVector).
template <class T, bool kVector, bool kStreaming>
__device__ __forceinline__ void load_lanes(const T* __restrict__ x, uint64_t p,
                                           T (&v)[RowShape<T>::kLanes]) {
  if constexpr (kVector) {
    Arith<T>::template load<kStreaming>(x + p, v);
  } else {
#pragma unroll
    for (int c = 0; c < RowShape<T>::kLanes; ++c) v[c] = load_one<T, kStreaming>(x + p + c);
  }
}

// One grid-stride step of a tile whose kRows rows all exist, at element t (first row * 256 + this
// thread's first lane + the step's offset). All loads are issued before the additions.
template <class T, bool kVector, bool kStreaming, int kRows>
__device__ __forceinline__ void fold_whole(const T* __restrict__ x, uint64_t t,
                                           RowPart<T> (&acc)[kRows]) {
  constexpr int V = RowShape<T>::kLanes;
  constexpr int H = RowShape<T>::kVectors;
  T v[kRows][H][V];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
#pragma unroll
    for (int h = 0; h < H; ++h) {
      load_lanes<T, kVector, kStreaming>(x, t + r * kRowLanes + h * kWarpLanes * V, v[r][h]);
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
#pragma unroll
    for (int h = 0; h < H; ++h) {
#pragma unroll
      for (int c = 0; c < V; ++c) acc[r][h][c] = Arith<T>::add(acc[r][h][c], v[r][h][c]);
    }
  }
}

// One step of a tile that may reach past n or past the last row: element p is added only when
// its row is one of the `valid` rows and p < n. At most one such step per tile (all steps of the
// grid's last tile), so rows are loaded one at a time to keep registers for the whole steps.
template <class T, bool kVector, bool kStreaming, int kRows>
__device__ __forceinline__ void fold_guarded(const T* __restrict__ x, uint64_t n, uint64_t t,
                                             int valid, RowPart<T> (&acc)[kRows]) {
  constexpr int V = RowShape<T>::kLanes;
  constexpr int H = RowShape<T>::kVectors;
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    if (r >= valid) break;
#pragma unroll
    for (int h = 0; h < H; ++h) {
      const uint64_t p = t + r * kRowLanes + h * kWarpLanes * V;
      if (p + V <= n) {
        T v[V];
        load_lanes<T, kVector, kStreaming>(x, p, v);
#pragma unroll
        for (int c = 0; c < V; ++c) acc[r][h][c] = Arith<T>::add(acc[r][h][c], v[c]);
      } else {
#pragma unroll
        for (int c = 0; c < V; ++c) {
          if (p + c < n) {
            acc[r][h][c] = Arith<T>::add(acc[r][h][c], load_one<T, kStreaming>(x + p + c));
          }
        }
      }
    }
  }
}

// Orders this thread's earlier memory operations, and those other threads made visible to it,
// before its later ones at device scope: with a relaxed atomic after it (release) or before it
// (acquire) it passes row results between warps. fence.acq_rel, lighter than __threadfence's
// fence.sc; nothing here needs a single total order.
__device__ __forceinline__ void fence_device() {
  cuda::atomic_thread_fence(cuda::memory_order_acq_rel, cuda::thread_scope_device);
}

// Called by a whole warp after one of its lanes saw group g's count complete and fenced: reduces
// the group's rows into second-pass row g and, when that completes the second pass, computes the
// final row. The warp barrier orders the other lanes' reads after that lane's fence.
template <class T>
__device__ void complete_group(const ReduceArgs<T>& a, uint32_t g, int l) {
  __syncwarp();
  const uint64_t group_first = uint64_t{g} * kRowLanes;
  const uint64_t left = a.rows - group_first;
  const uint32_t group_rows = static_cast<uint32_t>(left < kRowLanes ? left : kRowLanes);
  const T r = later_pass_row(a.first + group_first, group_rows, l);
  if (a.groups == 1) {
    if (l == 0) write_result(a, r);
    return;
  }
  bool last = false;
  if (l == 0) {
    a.second[g] = r;
    fence_device();
    last = atomicAdd(&g_groups_done, 1u) + 1 == a.groups;
    if (last) fence_device();
  }
  if (!__shfl_sync(kFullMask, last, 0)) return;
  __syncwarp();
  const T total = later_pass_row(a.second, a.groups, l);
  if (l == 0) {
    write_result(a, total);
    g_groups_done = 0;  // complete: nothing else touches it in this launch
  }
}

// kVector: x is 16-byte aligned, so each V-lane part of a row is one vector load; otherwise
// scalar loads of the same lanes. kStreaming: loads marked evict-first (ld.global.cs): the input
// is read once, so it need not displace L2 lines other work (or a pending write-back) holds.
template <class T, bool kVector, bool kStreaming>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm)
    reduce_sum_kernel(const ReduceArgs<T> a) {
  constexpr int V = RowShape<T>::kLanes;
  constexpr int kRows = TileShape<T>::kRows;
  const int l = static_cast<int>(threadIdx.x) % kWarpLanes;
  const uint64_t warp =
      uint64_t{blockIdx.x} * kWarpsPerBlock + static_cast<uint64_t>(threadIdx.x) / kWarpLanes;
  const uint64_t warps = uint64_t{gridDim.x} * kWarpsPerBlock;
  const uint64_t n = a.n;
  const uint64_t stride = a.stride;

  // First pass over this warp's contiguous share of the tiles (sizes differ by at most one).
  const uint64_t tiles = a.tiles / warps;
  const uint64_t extra = a.tiles % warps;
  const uint64_t tile_begin = warp * tiles + (warp < extra ? warp : extra);
  const uint64_t tile_end = tile_begin + tiles + (warp < extra ? 1 : 0);
  for (uint64_t tile = tile_begin; tile < tile_end; ++tile) {
    const uint64_t row0 = tile * kRows;
    const int valid = static_cast<int>(a.rows - row0 < kRows ? a.rows - row0 : kRows);
    RowPart<T> acc[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
#pragma unroll
      for (int h = 0; h < RowShape<T>::kVectors; ++h) {
#pragma unroll
        for (int c = 0; c < V; ++c) acc[r][h][c] = T(0);
      }
    }
    const uint64_t lane0 = static_cast<uint64_t>(l) * V;
    uint64_t t = row0 * kRowLanes;  // tile offset of the current step
    if (valid == kRows) {
      for (; t + uint64_t{kRows} * kRowLanes <= n; t += stride) {
        fold_whole<T, kVector, kStreaming, kRows>(a.x, t + lane0, acc);
      }
    }
    for (; t < n; t += stride) {
      fold_guarded<T, kVector, kStreaming, kRows>(a.x, n, t + lane0, valid, acc);
    }

    T mine = T(0);  // thread r < valid keeps row r's result
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const T root = halve_row<T>(acc[r], l);
      if (l == r) mine = root;
    }
    if (a.rows == 1) {
      if (l == 0) write_result(a, mine);
      return;
    }
    if (l < valid) a.first[row0 + l] = mine;
  }
  const uint64_t row_begin = tile_begin * kRows;
  const uint64_t row_end = tile_end * kRows < a.rows ? tile_end * kRows : a.rows;
  if (a.rows == 1 || row_begin >= row_end) return;

  // Count this warp's rows, one atomic per group they fall in: lane k takes the k-th group. Each
  // lane fences after the warp barrier, so every row result stored above is visible before any
  // lane's count (release); the lane that completes a group fences again before the group's rows
  // are read (acquire).
  __syncwarp();
  fence_device();
  const uint64_t group_begin = row_begin / kRowLanes;
  const uint64_t group_end = (row_end - 1) / kRowLanes + 1;
  for (uint64_t g0 = group_begin; g0 < group_end; g0 += kWarpLanes) {
    const uint64_t g = g0 + l;
    bool completes = false;
    if (g < group_end) {
      const uint64_t lo = g * kRowLanes > row_begin ? g * kRowLanes : row_begin;
      const uint64_t group_stop =
          g * kRowLanes + kRowLanes < a.rows ? g * kRowLanes + kRowLanes : a.rows;
      const uint64_t hi = group_stop < row_end ? group_stop : row_end;
      const uint32_t count = static_cast<uint32_t>(hi - lo);
      const uint32_t group_rows = static_cast<uint32_t>(group_stop - g * kRowLanes);
      completes = atomicAdd(&g_group_done[g], count) + count == group_rows;
      if (completes) fence_device();
    }
    for (unsigned done = __ballot_sync(kFullMask, completes); done != 0; done &= done - 1) {
      const int k = __ffs(done) - 1;
      complete_group(a, static_cast<uint32_t>(g0 + k), l);
    }
    // Complete: nothing else touches it in this launch. Reset after the reads it guarded.
    if (completes) g_group_done[g] = 0;
  }
}

template <class T>
__global__ void store_scalar_kernel(T* out, T value) {
  *out = value;
}

template <class T>
void launch_reduce(const T* x, uint64_t n, T* out, void* workspace, cudaStream_t stream,
                   bool scaled, T scale, const char* op) {
  const ReduceWorkspaceLayout layout = reduce_workspace_layout(n, sizeof(T));
  ReduceArgs<T> a{};
  a.x = x;
  a.n = n;
  a.rows = reduce_rows(n);
  a.stride = kReduceRowLanes * a.rows;
  a.tiles = (a.rows + TileShape<T>::kRows - 1) / TileShape<T>::kRows;
  a.groups = static_cast<uint32_t>(reduce_rows(a.rows));
  a.out = out;
  a.scaled = scaled;
  a.scale = scale;
  if (a.rows > 1) {
    if (workspace == nullptr) {
      fail(ErrorKind::invalid_argument, op,
           "no workspace for " + std::to_string(n) + " elements (" + std::to_string(layout.bytes) +
               " bytes needed)");
    }
    char* w = static_cast<char*>(workspace);
    a.second = reinterpret_cast<T*>(w + layout.second_offset);
    a.first = reinterpret_cast<T*>(w + layout.first_offset);
  }
  const uint32_t sms = current_sm_count(op);
  const uint64_t needed = (a.tiles + kWarpsPerBlock - 1) / kWarpsPerBlock;
  const uint64_t resident = static_cast<uint64_t>(sms) * kMinBlocksPerSm;
  const dim3 grid(static_cast<unsigned>(needed < resident ? needed : resident));
  const bool vector = aligned16(x);
  const bool streaming = n * sizeof(T) <= kStreamingMaxBytes;
  if (vector && streaming) {
    reduce_sum_kernel<T, true, true><<<grid, kThreads, 0, stream>>>(a);
  } else if (vector) {
    reduce_sum_kernel<T, true, false><<<grid, kThreads, 0, stream>>>(a);
  } else if (streaming) {
    reduce_sum_kernel<T, false, true><<<grid, kThreads, 0, stream>>>(a);
  } else {
    reduce_sum_kernel<T, false, false><<<grid, kThreads, 0, stream>>>(a);
  }
  check_launch(op);
}

}  // namespace

template <class T>
void reduce_sum_cuda(const T* x, uint64_t n, T* out, void* workspace, CUstream_st* stream) {
  if (n == 0) {
    // +0 is the all-zero word in both formats.
    check_cuda(cudaMemsetAsync(out, 0, sizeof(T), stream), "reduce_sum", "cudaMemsetAsync");
    return;
  }
  launch_reduce<T>(x, n, out, workspace, stream, false, T(1), "reduce_sum");
}

template <class T>
void reduce_mean_cuda(const T* x, uint64_t n, T* out, void* workspace, CUstream_st* stream) {
  if (n == 0) {
    store_scalar_kernel<T><<<1, 1, 0, stream>>>(out, std::numeric_limits<T>::quiet_NaN());
    check_launch("reduce_mean");
    return;
  }
  launch_reduce<T>(x, n, out, workspace, stream, true, mean_reciprocal<T>(n), "reduce_mean");
}

template void reduce_sum_cuda<float>(const float*, uint64_t, float*, void*, CUstream_st*);
template void reduce_sum_cuda<double>(const double*, uint64_t, double*, void*, CUstream_st*);
template void reduce_mean_cuda<float>(const float*, uint64_t, float*, void*, CUstream_st*);
template void reduce_mean_cuda<double>(const double*, uint64_t, double*, void*, CUstream_st*);

}  // namespace tlrt::kernels
