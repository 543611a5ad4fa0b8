// Axis reductions, CUDA backend, on contiguous float / double device buffers.
//
// * reduce_sum_by_row / reduce_max_by_row: one group of threads per row (a warp, or the whole
//   block when there are too few rows to fill the device), 16-byte loads after a scalar head that
//   reaches alignment, per-thread accumulators combined by shuffles. The warp-per-row kernel
//   issues 8 loads per lane before adding them (a whole 4 KiB row in flight per warp), with
//   registers for 4 resident blocks per SM, and reads around L1 with an L2 evict-first policy
//   (the input is read once). The sum's order is free (tolerance); the max runs on the integer
//   keys of max_key.h, so its bits do not depend on it.
// * reduce_max_by_column: one launch. On 16-byte aligned rows of whole 16-byte vectors, blocks
//   own a tile of up to 256 vectors of a row (a block-wide access is a contiguous 4 KiB piece of
//   one row, or several consecutive shorter rows) and a range of consecutive rows, two blocks
//   per SM in all; a thread has 8 rows' loads in flight. With several row ranges (splits) the
//   blocks' keys meet by atomicMax in a device-global key array (order-free: the key order is a
//   total order) and the last block of a tile to finish writes the values and clears the keys.
//   Other shapes: blocks own a tile of up to 32 x 4 columns (16-byte loads when the rows allow)
//   and a range of rows; the row lanes' keys meet in shared memory, and with several splits each
//   block stores its keys in the workspace and the last block of a tile to finish takes the
//   maxima over the splits.
// * ordered_fold: out[c] = ((+0 + M[0, c]) + M[1, c]) + ..., one thread per column running the
//   chain of dependent additions out of shared memory, so that the chain never waits for memory.
//   A block owns a tile of 8, 16 or 32 consecutive columns and walks the rows in chunks (32 KiB,
//   16 KiB for 32-column tiles so that three blocks share an SM) through a ring of 4 shared-memory
//   stages: while warp 0 folds chunk k, the copies of chunks k + 1 .. k + 3 are in flight
//   (cp.async, queued by warps 1-3 and 5-7, holding no registers; warp 4 stays off warp 0's
//   scheduler). Addresses are mixed-radix offsets of the row and the column (a table of row
//   offsets per chunk in shared memory), so the kernels serve reduce_sum_axis (any axis) and
//   reduce_from_broadcast (any axis map). Two stage layouts:
//     - column-major, the chain reading 16 bytes of its column (kQ consecutive rows) per shared
//       load: when each column's chain is contiguous (a loader warp copies 32 consecutive rows
//       of one column, one element per thread), and otherwise for tiles of 8 or 16 columns (long
//       chains, few columns: the chain is the limit; a loader warp copies kQ rows of 8 columns
//       per instruction, each loader keeping one column, its source advancing by a constant
//       when the rows are one axis);
//     - row-major, for tiles of 32 columns (many columns: the bus is the limit): a loader keeps
//       one piece position of the tile's rows and copies 16 bytes per instruction when the
//       pieces are contiguous and aligned (one element otherwise); the chain reads one element
//       per shared load.
//   Every addition is __fadd_rn / __dadd_rn in the fold's order, whatever the tile or the
//   layout.
// * small inputs (at most 32 rows and 2^16 elements) of reduce_max_by_column and of the ordered
//   fold of a matrix (one row axis, one column axis): one light kernel, a thread per output
//   column walking its rows in order (the fold's chain, or the keys' maximum) in registers.
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "kernels/common/float_ops.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/reduce_axis/max_key.h"
#include "kernels/reduce_axis/reduce_axis.h"

namespace tlrt::kernels {
namespace {

// ---------------------------------------------------------------------------------------------
// Row reductions

TLRT_DEVICE_INLINE uint32_t max_of(uint32_t a, uint32_t b) {
  return a < b ? b : a;
}
TLRT_DEVICE_INLINE uint64_t max_of(uint64_t a, uint64_t b) {
  return a < b ? b : a;
}
// Loads cached in L2 only: keys another block stored in this launch.
TLRT_DEVICE_INLINE uint32_t load_cg(const uint32_t* p) {
  return __ldcg(reinterpret_cast<const unsigned int*>(p));
}
TLRT_DEVICE_INLINE uint64_t load_cg(const uint64_t* p) {
  return __ldcg(reinterpret_cast<const unsigned long long*>(p));
}

template <class T>
struct SumOp {
  using Acc = T;
  static TLRT_DEVICE_INLINE Acc identity() { return T(0); }
  static TLRT_DEVICE_INLINE Acc add(Acc a, T v) { return add_rn(a, v); }
  static TLRT_DEVICE_INLINE Acc merge(Acc a, Acc b) { return add_rn(a, b); }
  static TLRT_DEVICE_INLINE T finish(Acc a) { return a; }
};

template <class T>
struct MaxOp {
  using Acc = typename MaxKeyTraits<T>::Key;
  // Below every key a value can have (key(-inf) > 0); a row has at least one element.
  static TLRT_DEVICE_INLINE Acc identity() { return 0; }
  static TLRT_DEVICE_INLINE Acc add(Acc a, T v) { return max_of(a, max_key(v)); }
  static TLRT_DEVICE_INLINE Acc merge(Acc a, Acc b) { return max_of(a, b); }
  static TLRT_DEVICE_INLINE T finish(Acc a) { return max_value<T>(a); }
};

// One accumulator per vector lane, so that a thread's additions form kLanes independent chains.
template <class Op>
TLRT_DEVICE_INLINE void add_vector(typename Op::Acc (&acc)[4], const float4& v) {
  acc[0] = Op::add(acc[0], v.x);
  acc[1] = Op::add(acc[1], v.y);
  acc[2] = Op::add(acc[2], v.z);
  acc[3] = Op::add(acc[3], v.w);
}
template <class Op>
TLRT_DEVICE_INLINE void add_vector(typename Op::Acc (&acc)[2], const double2& v) {
  acc[0] = Op::add(acc[0], v.x);
  acc[1] = Op::add(acc[1], v.y);
}

// Data read once: 16-byte loads that allocate no L1 line, under an L2 policy that makes their
// lines the first to leave (policy from evict_first_policy(), made once per thread).
TLRT_DEVICE_INLINE uint64_t evict_first_policy() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}
TLRT_DEVICE_INLINE float4 load_once(const float4* p, uint64_t policy) {
  float4 v;
  asm("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;"
      : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
      : "l"(__cvta_generic_to_global(p)), "l"(policy));
  return v;
}
TLRT_DEVICE_INLINE double2 load_once(const double2* p, uint64_t policy) {
  double2 v;
  asm("ld.global.nc.L1::no_allocate.L2::cache_hint.v2.f64 {%0, %1}, [%2], %3;"
      : "=d"(v.x), "=d"(v.y)
      : "l"(__cvta_generic_to_global(p)), "l"(policy));
  return v;
}

// Vectors p[0], p[stride], ..., p[(n - 1) stride] handed to consume in that order, kBatch at a
// time: a batch's kBatch loads are issued before any of them is consumed. The last n % kBatch
// vectors form one predicated batch.
template <int kBatch, class V, class F>
TLRT_DEVICE_INLINE void consume_batches(const V* p, uint64_t stride, uint64_t n, uint64_t policy,
                                        F&& consume) {
  uint64_t left = n;
#pragma unroll 1
  for (; left >= kBatch; left -= kBatch, p += kBatch * stride) {
    V v[kBatch];
#pragma unroll
    for (int i = 0; i < kBatch; ++i) v[i] = load_once(p + i * stride, policy);
#pragma unroll
    for (int i = 0; i < kBatch; ++i) consume(v[i]);
  }
  if (left > 0) {
    V v[kBatch];
#pragma unroll
    for (int i = 0; i < kBatch; ++i) {
      if (static_cast<uint64_t>(i) < left) v[i] = load_once(p + i * stride, policy);
    }
#pragma unroll
    for (int i = 0; i < kBatch; ++i) {
      if (static_cast<uint64_t>(i) < left) consume(v[i]);
    }
  }
}

// Elements before the first 16-byte boundary of a row starting at p (payloads are at least
// element aligned), at most cols.
template <class T>
TLRT_DEVICE_INLINE uint64_t row_head(const T* p, uint64_t cols) {
  const uint64_t head = static_cast<uint64_t>(to_word_boundary(p, 0));
  return head < cols ? head : cols;
}

// The warp-per-row kernel: a lane issues kRowBatch 16-byte loads before adding them (a row of
// 1024 floats is one batch: the warp has the whole row in flight), with a register bound for
// kRowBlocks resident blocks per SM.
constexpr int kRowBatch = 8;
constexpr int kRowBlocks = 4;

// The accumulator of lane `lane` of a warp over the row at p: the head's elements into acc[0],
// the lane's vectors lane, lane + 32, ... in increasing order into acc[0 .. kLanes - 1], the
// tail's elements into acc[1], then acc[0] merged with acc[1], acc[2], ... in that order.
template <class Op, class T>
TLRT_DEVICE_INLINE typename Op::Acc row_lane(const T* p, uint64_t cols, uint32_t lane,
                                             uint64_t policy) {
  using V = typename Vec16<T>::type;
  constexpr int kLanes = Vec16<T>::kLanes;
  typename Op::Acc acc[kLanes];
#pragma unroll
  for (int i = 0; i < kLanes; ++i) acc[i] = Op::identity();
  const uint64_t head = row_head(p, cols);  // < kLanes
  if (lane < head) acc[0] = Op::add(acc[0], p[lane]);
  const uint64_t vectors = (cols - head) / kLanes;
  const uint64_t mine = vectors > lane ? (vectors - lane + 31) / 32 : 0;
  consume_batches<kRowBatch>(reinterpret_cast<const V*>(p + head) + lane, 32, mine, policy,
                             [&](const V& v) { add_vector<Op>(acc, v); });
  const uint64_t tail = head + vectors * kLanes;  // cols - tail < kLanes
  if (lane < cols - tail) acc[1] = Op::add(acc[1], p[tail + lane]);
#pragma unroll
  for (int i = 1; i < kLanes; ++i) acc[0] = Op::merge(acc[0], acc[i]);
  return acc[0];
}

// 16-byte loads in flight per thread of the block-per-row kernel.
constexpr uint32_t kRowUnroll = 4;

// One row's accumulator of a group of kGroup threads (lane in [0, kGroup)): kRowUnroll vector
// loads are issued before their additions, into kLanes accumulators.
template <class Op, class T, int kGroup>
TLRT_DEVICE_INLINE typename Op::Acc row_partial(const T* p, uint64_t cols, int lane) {
  using V = typename Vec16<T>::type;
  constexpr int kLanes = Vec16<T>::kLanes;
  typename Op::Acc acc[kLanes];
#pragma unroll
  for (int i = 0; i < kLanes; ++i) acc[i] = Op::identity();
  const uint64_t head = row_head(p, cols);
  for (uint64_t j = lane; j < head; j += kGroup) acc[0] = Op::add(acc[0], p[j]);
  const uint64_t vectors = (cols - head) / kLanes;
  const V* pv = reinterpret_cast<const V*>(p + head);
  uint64_t v = lane;
  for (; v + (kRowUnroll - 1) * kGroup < vectors; v += kRowUnroll * kGroup) {
    V vals[kRowUnroll];
#pragma unroll
    for (uint32_t i = 0; i < kRowUnroll; ++i) vals[i] = __ldg(pv + v + i * kGroup);
#pragma unroll
    for (uint32_t i = 0; i < kRowUnroll; ++i) add_vector<Op>(acc, vals[i]);
  }
  for (; v < vectors; v += kGroup) add_vector<Op>(acc, __ldg(pv + v));
  for (uint64_t j = head + vectors * kLanes + lane; j < cols; j += kGroup) {
    acc[1] = Op::add(acc[1], p[j]);
  }
#pragma unroll
  for (int i = 1; i < kLanes; ++i) acc[0] = Op::merge(acc[0], acc[i]);
  return acc[0];
}

template <class Op>
TLRT_DEVICE_INLINE typename Op::Acc warp_merge(typename Op::Acc acc) {
#pragma unroll
  for (int w = 16; w >= 1; w /= 2) acc = Op::merge(acc, __shfl_xor_sync(0xffffffffu, acc, w));
  return acc;
}

// A warp per row, rows w, w + W, ... for warp w of W in the grid.
template <class Op, class T>
__global__ void __launch_bounds__(kThreads, kRowBlocks)
    by_row_warp_kernel(const T* __restrict__ x, uint64_t rows, uint64_t cols, T* __restrict__ out) {
  const uint64_t policy = evict_first_policy();
  const uint32_t lane = threadIdx.x % 32;
  const uint64_t warp = (static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const uint64_t warps = static_cast<uint64_t>(gridDim.x) * blockDim.x / 32;
  const T* p = x + warp * cols;
  const uint64_t step = warps * cols;
#pragma unroll 1
  for (uint64_t row = warp; row < rows; row += warps, p += step) {
    const auto acc = warp_merge<Op>(row_lane<Op, T>(p, cols, lane, policy));
    if (lane == 0) out[row] = Op::finish(acc);
  }
}

// The block per row (few long rows): the warps' accumulators meet in shared memory.
template <class Op, class T>
__global__ void __launch_bounds__(kThreads)
    by_row_block_kernel(const T* __restrict__ x, uint64_t rows, uint64_t cols,
                        T* __restrict__ out) {
  using Acc = typename Op::Acc;
  __shared__ Acc partial[kThreads / 32];
  const int lane = static_cast<int>(threadIdx.x);
  for (uint64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    Acc acc = warp_merge<Op>(row_partial<Op, T, kThreads>(x + row * cols, cols, lane));
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int w = 1; w < kThreads / 32; ++w) acc = Op::merge(acc, partial[w]);
      out[row] = Op::finish(acc);
    }
    __syncthreads();
  }
}

template <class Op, class T>
void by_row(const T* x, uint64_t rows, uint64_t cols, T* out, cudaStream_t stream, const char* op) {
  if (rows == 0) return;
  if (cols == 0) {
    check_cuda(cudaMemsetAsync(out, 0, rows * sizeof(T), stream), op, "cudaMemsetAsync");
    return;
  }
  const uint64_t sms = current_sm_count(op);
  if (rows < 16 * sms && cols >= 4096) {
    by_row_block_kernel<Op, T>
        <<<grid_for(rows, 1, 65535), kThreads, 0, stream>>>(x, rows, cols, out);
  } else {
    by_row_warp_kernel<Op, T>
        <<<grid_for(rows, kThreads / 32, 65535 * 8), kThreads, 0, stream>>>(x, rows, cols, out);
  }
  check_launch(op);
}

// ---------------------------------------------------------------------------------------------
// Column maxima

// Completion counters of the column tiles of a split launch. They are this module's device
// globals, zero when the module is loaded, and the block that completes a tile resets its counter,
// so no launch clears them first; that requires the launches of one device to be serialised, which
// tlrt does by queueing all work of a device on its one stream (as the reduce family's counters).
constexpr uint32_t kMaxColumnTickets = 4096;
__device__ uint32_t g_column_tile_done[kMaxColumnTickets];

// Whether the calling block is the last of the `splits` blocks of column tile `tile` to arrive
// (the same answer on every thread of the block). Called by every thread after the block's
// global writes are fenced; the last block resets the tile's counter and fences before it reads
// the other blocks' writes.
TLRT_DEVICE_INLINE bool last_block_of_tile(uint64_t tile, uint64_t splits) {
  __shared__ bool last;
  __syncthreads();
  if (threadIdx.x == 0) {
    last = atomicAdd(&g_column_tile_done[tile], 1u) + 1 == splits;
    if (last) {
      __threadfence();
      g_column_tile_done[tile] = 0;  // complete: nothing else touches it in this launch
    }
  }
  __syncthreads();
  if (last) __threadfence();
  return last;
}

constexpr uint32_t kColumnUnroll = 8;  // rows of loads in flight per thread

// A block's view: tpr threads across the tile's columns (each V consecutive columns) times
// kThreads / tpr row lanes. Blocks (tile, split) cover one tile of tpr * V columns and one range
// of rows.
struct ColumnPlan {
  uint32_t vec = 1;  // columns per thread (1, or 16 / sizeof(T) when rows are 16-byte aligned)
  uint32_t tpr = 1;  // threads across a tile, a power of two <= 32
  uint64_t tiles = 0;
  uint64_t splits = 1;
  uint64_t per_split = 0;
};

// Splits of the rows: about four blocks per SM in all (counting the tiles of the widest tile,
// so that the count does not depend on the buffer's alignment), at least 64 rows per split.
uint64_t column_splits(uint64_t rows, uint64_t cols, size_t element_bytes, const char* op) {
  const uint64_t width = 32 * (16 / element_bytes);
  const uint64_t tiles = (cols + width - 1) / width;
  const uint64_t target = 4 * uint64_t{current_sm_count(op)};
  uint64_t splits = (target + tiles - 1) / tiles;
  const uint64_t most = (rows + 63) / 64;
  if (splits > most) splits = most;
  if (splits > 65535) splits = 65535;
  if (splits == 0) splits = 1;
  const uint64_t per_split = (rows + splits - 1) / splits;
  return (rows + per_split - 1) / per_split;
}

ColumnPlan column_plan(const void* x, uint64_t rows, uint64_t cols, size_t element_bytes,
                       const char* op) {
  ColumnPlan p;
  const uint32_t lanes = static_cast<uint32_t>(16 / element_bytes);
  if (x != nullptr && aligned16(x) && cols % lanes == 0) p.vec = lanes;
  const uint64_t groups = (cols + p.vec - 1) / p.vec;
  while (p.tpr < 32 && p.tpr < groups) p.tpr *= 2;
  const uint64_t width = uint64_t{p.tpr} * p.vec;
  p.tiles = (cols + width - 1) / width;
  // A split launch needs a completion counter per tile.
  const uint64_t splits =
      p.tiles > kMaxColumnTickets ? 1 : column_splits(rows, cols, element_bytes, op);
  p.per_split = (rows + splits - 1) / splits;
  p.splits = (rows + p.per_split - 1) / p.per_split;
  return p;
}

template <class T, int V>
struct ColumnVec;
template <class T>
struct ColumnVec<T, 1> {
  using type = T;
  static TLRT_DEVICE_INLINE void keys(const T& v, typename MaxKeyTraits<T>::Key* k) {
    k[0] = max_of(k[0], max_key(v));
  }
};
template <>
struct ColumnVec<float, 4> {
  using type = float4;
  static TLRT_DEVICE_INLINE void keys(const float4& v, uint32_t* k) {
    k[0] = max_of(k[0], max_key(v.x));
    k[1] = max_of(k[1], max_key(v.y));
    k[2] = max_of(k[2], max_key(v.z));
    k[3] = max_of(k[3], max_key(v.w));
  }
};
template <>
struct ColumnVec<double, 2> {
  using type = double2;
  static TLRT_DEVICE_INLINE void keys(const double2& v, uint64_t* k) {
    k[0] = max_of(k[0], max_key(v.x));
    k[1] = max_of(k[1], max_key(v.y));
  }
};

// Maxima of the block's row lanes, in place: on return row lane 0 holds them. part has
// kThreads * V keys.
template <class Key, int V>
TLRT_DEVICE_INLINE void merge_row_lanes(Key (&k)[V], Key* part, uint32_t lanes, uint32_t rl,
                                        uint32_t slot) {
  for (uint32_t h = lanes / 2; h >= 1; h /= 2) {
    if (rl >= h && rl < 2 * h) {
#pragma unroll
      for (int v = 0; v < V; ++v) part[(rl - h) * (kThreads * V / lanes) + slot + v] = k[v];
    }
    __syncthreads();
    if (rl < h) {
#pragma unroll
      for (int v = 0; v < V; ++v) k[v] = max_of(k[v], part[rl * (kThreads * V / lanes) + slot + v]);
    }
    __syncthreads();
  }
}

// Where a thread of a column kernel sits: tpr threads across the tile's columns (blockIdx.x), each
// over `width` consecutive columns, times kThreads / tpr row lanes over the rows [begin, end) of
// its split (blockIdx.y, per_split rows each).
struct ColumnPlace {
  uint32_t lanes;        // row lanes
  uint32_t rl;           // this thread's row lane
  uint32_t slot;         // this thread's first column within the tile
  uint64_t tile, c0, c;  // the tile, its first column, this thread's first column
  uint64_t split, splits, begin, end;
};

TLRT_DEVICE_INLINE ColumnPlace column_place(uint32_t tpr, uint32_t width, uint64_t rows,
                                            uint64_t per_split) {
  ColumnPlace p;
  p.lanes = kThreads / tpr;
  p.rl = threadIdx.x / tpr;
  p.slot = threadIdx.x % tpr * width;
  p.tile = blockIdx.x;
  p.c0 = p.tile * tpr * width;
  p.c = p.c0 + p.slot;
  p.split = blockIdx.y;
  p.splits = gridDim.y;
  p.begin = p.split * per_split;
  p.end = p.begin + per_split < rows ? p.begin + per_split : rows;
  return p;
}

// One launch: every block takes the maxima of its tile's columns over its rows; with one split
// they are the result, otherwise they go to keys[split * cols + c] and the last block of a tile
// to finish (counted by the tile's counter) takes the maxima over the splits.
template <class T, int V>
__global__ void __launch_bounds__(kThreads)
    max_by_column_kernel(const T* __restrict__ x, uint64_t rows, uint64_t cols, uint64_t per_split,
                         uint32_t tpr, typename MaxKeyTraits<T>::Key* keys, T* __restrict__ out) {
  using Key = typename MaxKeyTraits<T>::Key;
  using Vec = typename ColumnVec<T, V>::type;
  __shared__ Key part[kThreads * V];
  const auto [lanes, rl, slot, tile, c0, c, split, splits, begin, end] =
      column_place(tpr, V, rows, per_split);
  Key k[V];
#pragma unroll
  for (int v = 0; v < V; ++v) k[v] = 0;
  if (c < cols) {
    const T* p = x + c;
    uint64_t r = begin + rl;
    for (; r + (kColumnUnroll - 1) * lanes < end; r += kColumnUnroll * lanes) {
      Vec vals[kColumnUnroll];
#pragma unroll
      for (uint32_t i = 0; i < kColumnUnroll; ++i) {
        vals[i] = __ldg(reinterpret_cast<const Vec*>(p + (r + i * lanes) * cols));
      }
#pragma unroll
      for (uint32_t i = 0; i < kColumnUnroll; ++i) ColumnVec<T, V>::keys(vals[i], k);
    }
    for (; r < end; r += lanes) {
      ColumnVec<T, V>::keys(__ldg(reinterpret_cast<const Vec*>(p + r * cols)), k);
    }
  }
  merge_row_lanes<Key, V>(k, part, lanes, rl, slot);
  const bool owner = rl == 0 && c < cols;  // V columns of the tile, all inside (cols % V == 0)
  if (splits == 1) {
    if (owner) {
#pragma unroll
      for (int v = 0; v < V; ++v) out[c + v] = max_value<T>(k[v]);
    }
    return;
  }
  if (owner) {
#pragma unroll
    for (int v = 0; v < V; ++v) keys[split * cols + c + v] = k[v];
    __threadfence();
  }
  if (!last_block_of_tile(tile, splits)) return;
#pragma unroll
  for (int v = 0; v < V; ++v) k[v] = 0;
  if (c < cols) {
    for (uint64_t s = rl; s < splits; s += lanes) {
#pragma unroll
      for (int v = 0; v < V; ++v) k[v] = max_of(k[v], load_cg(keys + s * cols + c + v));
    }
  }
  merge_row_lanes<Key, V>(k, part, lanes, rl, slot);
  if (owner) {
#pragma unroll
    for (int v = 0; v < V; ++v) out[c + v] = max_value<T>(k[v]);
  }
}

// The whole-row column kernel: blocks own a tile of tpr consecutive 16-byte vectors of a row (tpr
// a power of two <= kThreads: 1024 floats or 512 doubles when the rows are that long, so that a
// block-wide access is a contiguous 4 KiB piece of one row, or kThreads / tpr consecutive rows
// when they are shorter) and a range of consecutive rows (a split); a thread keeps one vector's
// columns and issues kColumnRowBatch loads of its rows before taking their keys. With one split
// the block writes the values; otherwise the blocks' keys meet by atomicMax in
// g_column_row_keys, which is zero between launches: the last block of a tile to finish (counted
// by the tile's counter in g_column_tile_done, shared with max_by_column_kernel: the launches of
// one device are serialised) writes the tile's values and clears its keys.
// The path needs 16-byte aligned rows of whole vectors; with several splits also
// cols <= kColumnRowKeys<T> and tiles <= kMaxColumnTickets.
constexpr int kColumnRowBatch = 8;   // rows of loads in flight per thread
constexpr int kColumnRowBlocks = 4;  // resident blocks per SM the registers allow
// Blocks per SM the plan aims at: two long row ranges per SM (about 1 MiB of contiguous rows each
// at 65536 x 1024 float32) move the input faster than a full wave of four shorter ones, whose
// extra streams and atomics cost more than their loads in flight gain.
constexpr int kColumnRowTargetBlocks = 2;
constexpr uint64_t kColumnRowKeyBytes = 256 * 1024;
__device__ uint64_t g_column_row_keys[kColumnRowKeyBytes / 8];
template <class T>
constexpr uint64_t kColumnRowKeys = kColumnRowKeyBytes / sizeof(typename MaxKeyTraits<T>::Key);

TLRT_DEVICE_INLINE void atomic_max(uint32_t* p, uint32_t v) {
  atomicMax(reinterpret_cast<unsigned int*>(p), v);
}
TLRT_DEVICE_INLINE void atomic_max(uint64_t* p, uint64_t v) {
  atomicMax(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}

struct ColumnRowPlan {
  uint32_t tpr = 1;  // threads (16-byte vectors) across a tile
  uint64_t tiles = 0;
  uint64_t splits = 1;
  uint64_t per_split = 0;
};

// The whole-row kernel's plan (kColumnRowTargetBlocks blocks per SM, at least one batch of loads
// per row lane), or false where the kernel does not apply.
template <class T>
bool column_row_plan(const T* x, uint64_t rows, uint64_t cols, ColumnRowPlan& p, const char* op) {
  constexpr uint64_t kLanes = Vec16<T>::kLanes;
  if (rows == 0 || cols == 0 || !aligned16(x) || cols % kLanes != 0) return false;
  const uint64_t vectors = cols / kLanes;
  while (p.tpr < kThreads && p.tpr < vectors) p.tpr *= 2;
  p.tiles = (vectors + p.tpr - 1) / p.tpr;
  if (p.tiles > 0x7FFFFFFFu) return false;
  const uint64_t lanes = kThreads / p.tpr;
  const uint64_t target = uint64_t{kColumnRowTargetBlocks} * current_sm_count(op);
  const uint64_t wave_splits = (target + p.tiles - 1) / p.tiles;
  uint64_t per = (rows + wave_splits - 1) / wave_splits;
  const uint64_t least = kColumnRowBatch * lanes;
  if (per < least) per = least;
  if ((rows + per - 1) / per > 65535) per = (rows + 65534) / 65535;
  p.per_split = per;
  p.splits = (rows + per - 1) / per;
  if (p.splits > 1 && (cols > kColumnRowKeys<T> || p.tiles > kMaxColumnTickets)) return false;
  return true;
}

template <class T>
__global__ void __launch_bounds__(kThreads, kColumnRowBlocks)
    max_by_column_rows_kernel(const T* __restrict__ x, uint64_t rows, uint64_t cols,
                              uint64_t per_split, uint32_t tpr, T* __restrict__ out) {
  using Key = typename MaxKeyTraits<T>::Key;
  using V = typename Vec16<T>::type;
  constexpr uint32_t kLanes = Vec16<T>::kLanes;
  __shared__ Key part[kThreads * kLanes];
  const uint64_t policy = evict_first_policy();
  const auto [lanes, rl, slot, tile, c0, c, split, splits, begin, end] =
      column_place(tpr, kLanes, rows, per_split);
  Key k[kLanes];
#pragma unroll
  for (uint32_t v = 0; v < kLanes; ++v) k[v] = 0;
  if (c < cols) {
    const uint64_t first = begin + rl;
    const uint64_t count = first < end ? (end - first + lanes - 1) / lanes : 0;
    const uint64_t row_vectors = cols / kLanes;
    consume_batches<kColumnRowBatch>(reinterpret_cast<const V*>(x + c) + first * row_vectors,
                                     lanes * row_vectors, count, policy,
                                     [&](const V& v) { ColumnVec<T, kLanes>::keys(v, k); });
  }
  merge_row_lanes<Key, kLanes>(k, part, lanes, rl, slot);
  if (splits == 1) {
    if (rl == 0 && c < cols) {  // kLanes columns, all inside (cols % kLanes == 0)
#pragma unroll
      for (uint32_t v = 0; v < kLanes; ++v) out[c + v] = max_value<T>(k[v]);
    }
    return;
  }
  // The tile's keys through shared memory, so that a warp's atomics cover consecutive words.
  const uint32_t width = tpr * kLanes;
  const uint64_t inside = cols - c0 < width ? cols - c0 : width;  // columns of the tile
  if (rl == 0) {
#pragma unroll
    for (uint32_t v = 0; v < kLanes; ++v) part[slot + v] = k[v];
  }
  __syncthreads();
  Key* keys = reinterpret_cast<Key*>(g_column_row_keys) + c0;
  for (uint32_t j = threadIdx.x; j < inside; j += kThreads) atomic_max(keys + j, part[j]);
  __threadfence();
  if (!last_block_of_tile(tile, splits)) return;
  for (uint32_t j = threadIdx.x; j < inside; j += kThreads) {
    out[c0 + j] = max_value<T>(load_cg(keys + j));
    keys[j] = 0;
  }
}

// ---------------------------------------------------------------------------------------------
// Ordered fold

// One stage of rows of a tile: 16 KiB for tiles of 32 columns (three blocks fit an SM, so that
// several chain warps share it when there are many columns), 32 KiB for narrower tiles (few
// columns, long chains: one block per SM and more rows per stage hand-off).
constexpr uint32_t kFoldChunkBytes = 32768;
constexpr uint32_t kFoldWideChunkBytes = 16384;
constexpr uint32_t kFoldWideShift = 5;
constexpr uint32_t kFoldStages = 4;  // chunks in flight: kFoldStages - 1 while one folds

TLRT_HOST_DEVICE constexpr uint32_t fold_chunk_bytes(uint32_t tc_shift) {
  return tc_shift >= kFoldWideShift ? kFoldWideChunkBytes : kFoldChunkBytes;
}

// Warp 0 runs the chains; warps 1-3 and 5-7 copy. Warp 4, which would share warp 0's scheduler
// (warps are spread over the SM's four schedulers by warp index), only joins the block barriers, so
// that no copy instruction takes an issue slot the chain could use.
constexpr uint32_t kFoldLoaders = kThreads - 64;
constexpr uint32_t kFoldIdleWarp = 4;

// Barrier 1 among the loader warps only (barrier 0 is __syncthreads).
TLRT_DEVICE_INLINE void loader_barrier() {
  asm volatile("bar.sync 1, %0;" ::"r"(kFoldLoaders) : "memory");
}

// A thread's role: a loader (and its index among the loaders), or not (warp 0 runs the chains,
// thread j the tile's column j; warp 4 waits at the barriers).
struct FoldRoles {
  bool loader;
  uint32_t ltid;  // in [0, kFoldLoaders); meaningful for loaders only
};
TLRT_DEVICE_INLINE FoldRoles fold_roles() {
  const uint32_t tid = threadIdx.x;
  const uint32_t warp = tid / 32;
  FoldRoles roles;
  roles.loader = warp != 0 && warp != kFoldIdleWarp;
  roles.ltid = tid - 32 - (warp > kFoldIdleWarp ? 32 : 0);
  return roles;
}

// The stage ring both fold kernels run. Prologue (loaders): chunks 0 .. kFoldStages - 2 in flight
// (one commit group each, empty ones too, so that the group count stays uniform), chunk 0 landed.
// Then per chunk k: one block barrier (chunk k landed for every loader, chunk k - 1 folded), the
// chain folds chunk k while the loaders fill the row table of chunk k + kFoldStages - 1 and queue
// its copies into the stage chunk k - 1 has left, then wait for their copies of chunk k + 1.
// fill(chunk) writes a chunk's row table, issue(chunk) queues its copies, fold(k) runs the chains.
template <class Fill, class Issue, class Fold>
TLRT_DEVICE_INLINE void run_fold_ring(const FoldRoles& roles, uint64_t chunks, Fill fill,
                                      Issue issue, Fold fold) {
  if (roles.loader) {
    for (uint32_t s = 0; s + 1 < kFoldStages; ++s) {
      if (s < chunks) fill(s);
    }
    loader_barrier();
    for (uint32_t s = 0; s + 1 < kFoldStages; ++s) {
      if (s < chunks) issue(s);
      __pipeline_commit();
    }
    __pipeline_wait_prior(kFoldStages - 2);
  }
  for (uint64_t k = 0; k < chunks; ++k) {
    __syncthreads();
    if (!roles.loader) {
      fold(k);
    } else {
      const uint64_t ahead = k + kFoldStages - 1;  // into the stage chunk k - 1 has left
      if (ahead < chunks) fill(ahead);
      loader_barrier();
      if (ahead < chunks) issue(ahead);
      __pipeline_commit();
      __pipeline_wait_prior(kFoldStages - 2);  // this thread's copies of chunk k + 1
    }
  }
}

// ---- Column-major stages

// Shared memory of one block for tiles of 2^tc_shift columns whose chains are contiguous: per
// stage a chunk of tc columns of chunk_rows rows each (column-major, padded against bank
// conflicts) and the chunk's row offsets; then the tile's column offsets.
struct FoldLayout {
  uint32_t chunk_rows = 0;
  uint32_t pitch = 0;
  size_t stage_bytes = 0;  // data of one stage, 16-byte aligned
  size_t tables_offset = 0;
  size_t bytes = 0;
};

template <class T>
TLRT_HOST_DEVICE FoldLayout fold_layout(uint32_t tc_shift) {
  FoldLayout l;
  l.chunk_rows = static_cast<uint32_t>(fold_chunk_bytes(tc_shift) / sizeof(T)) >> tc_shift;
  // Column-major: column j's rows at [j * pitch, j * pitch + chunk_rows). The 16-byte pad puts
  // the 8 columns of a quarter warp's 16-byte reads on distinct banks.
  l.pitch = l.chunk_rows + static_cast<uint32_t>(16 / sizeof(T));
  l.stage_bytes = (static_cast<size_t>(l.pitch) << tc_shift) * sizeof(T);
  l.tables_offset = l.stage_bytes * kFoldStages;
  l.bytes = l.tables_offset +
            (static_cast<size_t>(l.chunk_rows) * kFoldStages + (1u << tc_shift)) * sizeof(uint64_t);
  return l;
}

// Rows of a column in a batch of the chain: 32 in both dtypes, 8 16-byte shared loads of float32
// or 16 of float64 (float64 at 16 rows a batch measured 5% slower on [65536, 1024]: 317.8 against
// 302.1 us on the H200).
constexpr uint32_t kFoldBatchRows = 32;

template <int N>
TLRT_DEVICE_INLINE float add_batch(float acc, const float4 (&b)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) {
    acc = __fadd_rn(acc, b[i].x);
    acc = __fadd_rn(acc, b[i].y);
    acc = __fadd_rn(acc, b[i].z);
    acc = __fadd_rn(acc, b[i].w);
  }
  return acc;
}
template <int N>
TLRT_DEVICE_INLINE double add_batch(double acc, const double2 (&b)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) {
    acc = __dadd_rn(acc, b[i].x);
    acc = __dadd_rn(acc, b[i].y);
  }
  return acc;
}

// The chain of one column over n rows of a stage, in increasing row order. The column's rows are
// contiguous and 16-byte aligned, so a batch of rows is a few 16-byte shared loads; two batches
// alternate (one loading while the other's additions run), so the chain issues one dependent
// addition every add latency with a fraction of a shared load per addition.
template <class T>
TLRT_DEVICE_INLINE T fold_rows(T acc, const T* column, uint32_t n) {
  using V = typename Vec16<T>::type;
  constexpr uint32_t kQ = Vec16<T>::kLanes;
  constexpr uint32_t kVecs = kFoldBatchRows / kQ;
  constexpr uint32_t kBatch = kVecs * kQ;
  const V* cv = reinterpret_cast<const V*>(column);
  uint32_t r = 0;
  if (n >= kBatch) {
    V a[kVecs], b[kVecs];
#pragma unroll
    for (uint32_t i = 0; i < kVecs; ++i) a[i] = cv[i];
    // a holds rows [r, r + kBatch) on entry to each round.
    while (true) {
      if (r + 2 * kBatch > n) {
        acc = add_batch(acc, a);
        r += kBatch;
        break;
      }
#pragma unroll
      for (uint32_t i = 0; i < kVecs; ++i) b[i] = cv[(r + kBatch) / kQ + i];
      acc = add_batch(acc, a);
      r += kBatch;
      if (r + 2 * kBatch > n) {
        acc = add_batch(acc, b);
        r += kBatch;
        break;
      }
#pragma unroll
      for (uint32_t i = 0; i < kVecs; ++i) a[i] = cv[(r + kBatch) / kQ + i];
      acc = add_batch(acc, b);
      r += kBatch;
    }
  }
  for (; r < n; ++r) acc = add_rn(acc, column[r]);
  return acc;
}

// One block per tile of tc = 2^tc_shift consecutive columns, column-major stages. Loader maps:
//   * kRowsFastest (each column's chain contiguous, the columns not): a warp copies 32 consecutive
//     rows of one column, one element each, through the chunk's row table;
//   * otherwise (tc <= 16; wider tiles take the row-major kernel): a warp copies kQ consecutive
//     rows of 8 columns per instruction (kQ short row runs; 32 distinct banks, the pitch being
//     kQ mod 8 kQ). Every loader keeps one column and every kStep-th row, so its column offset
//     is computed once and, when the rows are one axis, its source advances by a constant.
template <class T, bool kRowsFastest>
__global__ void __launch_bounds__(kThreads)
    fold_column_major_kernel(const T* __restrict__ x, T* __restrict__ out,
                             const __grid_constant__ FoldGeometry g, uint32_t tc_shift) {
  constexpr uint32_t kQ = Vec16<T>::kLanes;
  constexpr uint32_t kQShift = kQ == 4 ? 2 : 1;
  extern __shared__ __align__(16) unsigned char shared[];
  const FoldLayout l = fold_layout<T>(tc_shift);
  const uint32_t tc = 1u << tc_shift;
  const uint32_t chunk_rows = l.chunk_rows;
  const uint32_t row_shift = __ffs(static_cast<int>(chunk_rows)) - 1;
  uint64_t* row_tables = reinterpret_cast<uint64_t*>(shared + l.tables_offset);
  uint64_t* col_table = row_tables + static_cast<size_t>(chunk_rows) * kFoldStages;
  auto stage_data = [&](uint64_t chunk) {
    return reinterpret_cast<T*>(shared + (chunk % kFoldStages) * l.stage_bytes);
  };
  auto stage_rows = [&](uint64_t chunk) { return row_tables + (chunk % kFoldStages) * chunk_rows; };

  const FoldRoles roles = fold_roles();
  const uint32_t tid = threadIdx.x;
  const uint64_t c0 = static_cast<uint64_t>(blockIdx.x) << tc_shift;
  const uint64_t rows = g.row_count;
  const uint64_t cols = g.col_count;
  const uint64_t chunks = (rows + chunk_rows - 1) >> row_shift;
  const bool one_row_axis = g.rows.rank == 1;
  auto chunk_size = [&](uint64_t chunk) {
    const uint64_t left = rows - (chunk << row_shift);
    return left < chunk_rows ? static_cast<uint32_t>(left) : chunk_rows;
  };

  // kRowsFastest: the tile's column offsets in shared memory. Otherwise: this loader's column j
  // and rows r_first + i kStep.
  const uint32_t j = (roles.ltid >> kQShift) & (tc - 1);
  const uint32_t r_first =
      ((roles.ltid >> (kQShift + tc_shift)) << kQShift) | (roles.ltid & (kQ - 1));
  const uint32_t step = (kFoldLoaders >> (kQShift + tc_shift)) << kQShift;
  const bool column = roles.loader && c0 + j < cols;
  uint64_t col_offset = 0;
  if (kRowsFastest) {
    if (roles.loader) {
      for (uint32_t c = roles.ltid; c < tc; c += kFoldLoaders) {
        col_table[c] = c0 + c < cols ? fold_offset(g.cols, c0 + c) : 0;
      }
    }
  } else if (column) {
    col_offset = fold_offset(g.cols, c0 + j);
  }
  auto fill = [&](uint64_t chunk) {
    if (!kRowsFastest && one_row_axis) return;  // offsets by multiplication
    uint64_t* table = stage_rows(chunk);
    const uint64_t first = chunk << row_shift;
    for (uint32_t r = roles.ltid; r < chunk_rows; r += kFoldLoaders) {
      table[r] = first + r < rows ? fold_offset(g.rows, first + r) : 0;
    }
  };
  // Elements outside the matrix are not copied and never read.
  auto issue = [&](uint64_t chunk) {
    T* data = stage_data(chunk);
    const uint32_t n = chunk_size(chunk);
    if (kRowsFastest) {
      const uint64_t* table = stage_rows(chunk);
      const uint32_t elements = chunk_rows << tc_shift;
#pragma unroll 4
      for (uint32_t e = roles.ltid; e < elements; e += kFoldLoaders) {
        const uint32_t c = e >> row_shift;
        const uint32_t r = e & (chunk_rows - 1);
        if (r < n && c0 + c < cols) {
          __pipeline_memcpy_async(data + c * l.pitch + r, x + table[r] + col_table[c], sizeof(T));
        }
      }
      return;
    }
    if (!column) return;
    T* to = data + j * l.pitch;
    if (one_row_axis) {
      const uint64_t stride = g.rows.stride[0];
      const T* from = x + col_offset + ((chunk << row_shift) + r_first) * stride;
      const uint64_t advance = step * stride;
#pragma unroll 4
      for (uint32_t r = r_first; r < n; r += step, from += advance) {
        __pipeline_memcpy_async(to + r, from, sizeof(T));
      }
    } else {
      const uint64_t* table = stage_rows(chunk);
      const T* from = x + col_offset;
#pragma unroll 4
      for (uint32_t r = r_first; r < n; r += step) {
        __pipeline_memcpy_async(to + r, from + table[r], sizeof(T));
      }
    }
  };
  T acc = T(0);  // the fold starts from +0
  const bool chain = tid < tc && c0 + tid < cols;
  auto fold = [&](uint64_t k) {
    if (chain) acc = fold_rows(acc, stage_data(k) + tid * l.pitch, chunk_size(k));
  };
  run_fold_ring(roles, chunks, fill, issue, fold);
  if (chain) out[c0 + tid] = acc;
}

// ---- Columns contiguous (or neither side): row-major stages

// Shared memory of the row-major kernel for tiles of 2^kTcShift columns: kFoldStages stages of
// kRows x kTc elements (row-major, unpadded), then the stages' row offset tables.
template <class T, uint32_t kTcShift>
struct RowMajorFold {
  static constexpr uint32_t kTc = 1u << kTcShift;
  static constexpr uint32_t kRows = fold_chunk_bytes(kTcShift) / sizeof(T) >> kTcShift;
  static constexpr uint32_t kStage = kRows * kTc;  // elements
  static constexpr size_t kTablesOffset = size_t{kFoldStages} * kStage * sizeof(T);
  static constexpr size_t kBytes = kTablesOffset + size_t{kFoldStages} * kRows * sizeof(uint64_t);
};

// The chain of one column over n rows of a row-major stage (the column's rows kTc elements apart),
// in increasing row order. Two batches of 16 rows alternate in registers: the shared loads of one
// are issued while the other's dependent additions run.
template <class T, uint32_t kTc>
TLRT_DEVICE_INLINE T fold_strided(T acc, const T* column, uint32_t n) {
  constexpr uint32_t kBatch = 16;
  uint32_t r = 0;
  if (n >= kBatch) {
    T a[kBatch], b[kBatch];
#pragma unroll
    for (uint32_t i = 0; i < kBatch; ++i) a[i] = column[i * kTc];
    while (true) {
      if (r + 2 * kBatch > n) {
#pragma unroll
        for (uint32_t i = 0; i < kBatch; ++i) acc = add_rn(acc, a[i]);
        r += kBatch;
        break;
      }
      const T* next = column + (r + kBatch) * kTc;
#pragma unroll
      for (uint32_t i = 0; i < kBatch; ++i) b[i] = next[i * kTc];
#pragma unroll
      for (uint32_t i = 0; i < kBatch; ++i) acc = add_rn(acc, a[i]);
      r += kBatch;
      if (r + 2 * kBatch > n) {
#pragma unroll
        for (uint32_t i = 0; i < kBatch; ++i) acc = add_rn(acc, b[i]);
        r += kBatch;
        break;
      }
      next = column + (r + kBatch) * kTc;
#pragma unroll
      for (uint32_t i = 0; i < kBatch; ++i) a[i] = next[i * kTc];
#pragma unroll
      for (uint32_t i = 0; i < kBatch; ++i) acc = add_rn(acc, b[i]);
      r += kBatch;
    }
  }
  for (; r < n; ++r) acc = add_rn(acc, column[r * kTc]);
  return acc;
}

// One block per tile of kTc consecutive columns, row-major stages: a row of the tile is kTc
// contiguous shared elements, copied in pieces of kP elements (kP = 16 / sizeof(T): one 16-byte
// asynchronous copy per piece, the pieces 16-byte aligned in global memory; kP = 1: one element).
// Every loader keeps one piece position q of every row it copies, so its column offset is
// computed once; a warp's copies cover 32 / (kTc / kP) consecutive rows' pieces, contiguous in
// shared memory (conflict-free stores), contiguous in global memory along each row. The chain
// thread j reads its column kTc elements apart: a warp's chains read one stage row, consecutive
// words, conflict-free.
template <class T, uint32_t kTcShift, uint32_t kP>
__global__ void __launch_bounds__(kThreads)
    fold_row_major_kernel(const T* __restrict__ x, T* __restrict__ out,
                          const __grid_constant__ FoldGeometry g) {
  using L = RowMajorFold<T, kTcShift>;
  constexpr uint32_t kTc = L::kTc;
  constexpr uint32_t kRows = L::kRows;
  constexpr uint32_t kPieces = kTc / kP;  // per row
  static_assert(kFoldLoaders % kPieces == 0, "every loader keeps its piece position");
  constexpr uint32_t kRowStep = kFoldLoaders / kPieces;
  static_assert((kRows & (kRows - 1)) == 0, "chunks of a power of two rows");
  constexpr uint32_t kRowShift = __builtin_ctz(kRows);
  extern __shared__ __align__(16) unsigned char shared[];
  T* stages = reinterpret_cast<T*>(shared);
  uint64_t* row_tables = reinterpret_cast<uint64_t*>(shared + L::kTablesOffset);

  const FoldRoles roles = fold_roles();
  const uint32_t tid = threadIdx.x;
  const uint64_t c0 = static_cast<uint64_t>(blockIdx.x) << kTcShift;
  const uint64_t rows = g.row_count;
  const uint64_t cols = g.col_count;
  const uint64_t chunks = (rows + kRows - 1) >> kRowShift;

  // A loader's piece: columns c0 + q kP .. + kP - 1 (all inside the matrix or all outside, as
  // the host checks for kP > 1), first row r0 of every pass.
  const uint32_t q = roles.ltid % kPieces;
  const uint32_t r0 = roles.ltid / kPieces;
  const bool piece = roles.loader && c0 + q * kP < cols;
  const uint64_t piece_offset = piece ? fold_offset(g.cols, c0 + q * kP) : 0;

  auto fill = [&](uint64_t chunk) {
    uint64_t* table = row_tables + (chunk % kFoldStages) * kRows;
    const uint64_t first = chunk << kRowShift;
    for (uint32_t r = roles.ltid; r < kRows; r += kFoldLoaders) {
      table[r] = first + r < rows ? fold_offset(g.rows, first + r) : 0;
    }
  };
  // Rows outside the matrix are not copied and never read.
  auto issue = [&](uint64_t chunk) {
    if (!piece) return;
    const uint64_t* table = row_tables + (chunk % kFoldStages) * kRows;
    T* data = stages + (chunk % kFoldStages) * L::kStage + q * kP;
    const T* from = x + piece_offset;
    const uint64_t left = rows - (chunk << kRowShift);
    const uint32_t n = left < kRows ? static_cast<uint32_t>(left) : kRows;
#pragma unroll 4
    for (uint32_t r = r0; r < n; r += kRowStep) {
      __pipeline_memcpy_async(data + r * kTc, from + table[r], kP * sizeof(T));
    }
  };
  T acc = T(0);  // the fold starts from +0
  const bool chain = tid < kTc && c0 + tid < cols;
  auto fold = [&](uint64_t k) {
    if (!chain) return;
    const uint64_t left = rows - (k << kRowShift);
    const uint32_t n = left < kRows ? static_cast<uint32_t>(left) : kRows;
    acc = fold_strided<T, kTc>(acc, stages + (k % kFoldStages) * L::kStage + tid, n);
  };
  run_fold_ring(roles, chunks, fill, issue, fold);
  if (chain) out[c0 + tid] = acc;
}

// ---------------------------------------------------------------------------------------------
// Small column reductions

// Up to kLightRows rows and kLightElements elements, reduce_max_by_column and the ordered fold
// of a matrix (one row axis, one column axis) run on one light kernel: a thread per output column
// walks its rows in order and takes them in row order (Op::add: for the fold the specified chain
// from +0, one rounding per add). Its loads go out in batches of kLightBatch rows, every load of a
// batch issued before the batch's first add, and the last rows in batches of 4, 2 and 1, so 32
// rows wait on 4 round trips to memory and 7 rows on 3. No shared-memory stages, no combine
// across blocks, small parameters and little code. Device time on the H200 (docs/BENCH.md): the
// fold 2.19 us at 32 x 32 and the column maxima 2.43, against 2.84 and 3.02 with 4 loads in flight
// at a time.
constexpr uint32_t kLightRows = 32;
constexpr uint64_t kLightElements = uint64_t{1} << 16;
constexpr uint32_t kLightThreads = 128;
constexpr int kLightBatch = 8;

bool light_columns(uint64_t rows, uint64_t cols) {
  return rows >= 1 && rows <= kLightRows && cols <= kLightElements / rows;
}

// Rows p[0], p[stride], ..., p[(N - 1) * stride] into acc, in that order.
template <class Op, int N, class T>
__device__ __forceinline__ typename Op::Acc light_batch(typename Op::Acc acc, const T* p,
                                                        uint64_t stride) {
  T v[N];
#pragma unroll
  for (int i = 0; i < N; ++i) v[i] = p[i * stride];
#pragma unroll
  for (int i = 0; i < N; ++i) acc = Op::add(acc, v[i]);
  return acc;
}

// The last rows - r (fewer than 2N) rows from row r on, in batches of N, N / 2, ..., 1.
template <class Op, int N, class T>
__device__ __forceinline__ typename Op::Acc light_tail(typename Op::Acc acc, const T* p, uint32_t r,
                                                       uint32_t rows, uint64_t stride) {
  if (rows - r >= N) {
    acc = light_batch<Op, N>(acc, p + r * stride, stride);
    r += N;
  }
  if constexpr (N > 1) acc = light_tail<Op, N / 2>(acc, p, r, rows, stride);
  return acc;
}

// M[r, c] = x[r * row_stride + c * col_stride].
template <class Op, class T>
__global__ void __launch_bounds__(kLightThreads)
    light_columns_kernel(const T* __restrict__ x, uint32_t rows, uint64_t cols, uint64_t row_stride,
                         uint64_t col_stride, T* __restrict__ out) {
  const uint64_t c = uint64_t{blockIdx.x} * kLightThreads + threadIdx.x;
  if (c >= cols) return;
  const T* p = x + c * col_stride;
  typename Op::Acc acc = Op::identity();
  uint32_t r = 0;
  for (; rows - r >= kLightBatch; r += kLightBatch)
    acc = light_batch<Op, kLightBatch>(acc, p + r * row_stride, row_stride);
  acc = light_tail<Op, kLightBatch / 2>(acc, p, r, rows, row_stride);
  out[c] = Op::finish(acc);
}

template <class Op, class T>
void launch_light_columns(const T* x, uint64_t rows, uint64_t cols, uint64_t row_stride,
                          uint64_t col_stride, T* out, cudaStream_t stream, const char* op) {
  const uint64_t blocks = (cols + kLightThreads - 1) / kLightThreads;
  light_columns_kernel<Op, T><<<static_cast<unsigned>(blocks), kLightThreads, 0, stream>>>(
      x, static_cast<uint32_t>(rows), cols, row_stride, col_stride, out);
  check_launch(op);
}

}  // namespace

template <class T>
void reduce_sum_by_row_cuda(const T* x, uint64_t rows, uint64_t cols, T* out, CUstream_st* stream) {
  by_row<SumOp<T>>(x, rows, cols, out, stream, "reduce_sum_by_row");
}

template <class T>
void reduce_max_by_row_cuda(const T* x, uint64_t rows, uint64_t cols, T* out, CUstream_st* stream) {
  by_row<MaxOp<T>>(x, rows, cols, out, stream, "reduce_max_by_row");
}

template <class T>
uint64_t reduce_max_by_column_workspace_bytes(const T* x, uint64_t rows, uint64_t cols) {
  const char* op = "reduce_max_by_column";
  if (rows == 0 || cols == 0 || light_columns(rows, cols)) return 0;
  ColumnRowPlan rp;
  if (column_row_plan(x, rows, cols, rp, op)) return 0;  // the keys meet in module memory
  const uint64_t splits = column_splits(rows, cols, sizeof(T), op);
  return splits > 1 ? splits * cols * sizeof(T) : 0;
}

template <class T>
void reduce_max_by_column_cuda(const T* x, uint64_t rows, uint64_t cols, T* out, void* workspace,
                               CUstream_st* stream) {
  const char* op = "reduce_max_by_column";
  if (cols == 0) return;
  if (rows == 0) {
    check_cuda(cudaMemsetAsync(out, 0, cols * sizeof(T), stream), op, "cudaMemsetAsync");
    return;
  }
  if (light_columns(rows, cols)) {
    launch_light_columns<MaxOp<T>>(x, rows, cols, cols, 1, out, stream, op);
    return;
  }
  ColumnRowPlan rp;
  if (column_row_plan(x, rows, cols, rp, op)) {
    const dim3 grid(static_cast<unsigned>(rp.tiles), static_cast<unsigned>(rp.splits));
    max_by_column_rows_kernel<T>
        <<<grid, kThreads, 0, stream>>>(x, rows, cols, rp.per_split, rp.tpr, out);
    check_launch(op);
    return;
  }
  using Key = typename MaxKeyTraits<T>::Key;
  const ColumnPlan p = column_plan(x, rows, cols, sizeof(T), op);
  if (p.tiles > 0x7FFFFFFFu) {
    fail(ErrorKind::invalid_argument, op,
         std::to_string(cols) + " columns exceed the grid of the column kernel");
  }
  const dim3 grid(static_cast<unsigned>(p.tiles), static_cast<unsigned>(p.splits));
  Key* keys = static_cast<Key*>(workspace);
  constexpr int kLanes = static_cast<int>(16 / sizeof(T));
  if (p.vec == 1) {
    max_by_column_kernel<T, 1>
        <<<grid, kThreads, 0, stream>>>(x, rows, cols, p.per_split, p.tpr, keys, out);
  } else {
    max_by_column_kernel<T, kLanes>
        <<<grid, kThreads, 0, stream>>>(x, rows, cols, p.per_split, p.tpr, keys, out);
  }
  check_launch(op);
}

template <class T>
void ordered_fold_cuda(const T* x, const FoldGeometry& g, T* out, CUstream_st* stream) {
  const char* op = "ordered_fold";
  if (g.col_count == 0) return;
  if (g.row_count == 0) {
    check_cuda(cudaMemsetAsync(out, 0, g.col_count * sizeof(T), stream), op, "cudaMemsetAsync");
    return;
  }
  if (g.rows.rank <= 1 && g.cols.rank <= 1 && light_columns(g.row_count, g.col_count)) {
    const uint64_t row_stride = g.rows.rank == 1 ? g.rows.stride[0] : 0;
    const uint64_t col_stride = g.cols.rank == 1 ? g.cols.stride[0] : 0;
    launch_light_columns<SumOp<T>>(x, g.row_count, g.col_count, row_stride, col_stride, out, stream,
                                   op);
    return;
  }
  // Loads along the columns when the innermost column axis is contiguous, along the rows when
  // each column's chain is.
  const bool cols_contiguous = g.cols.rank > 0 && g.cols.stride[g.cols.rank - 1] == 1;
  const bool rows_contiguous = g.rows.rank > 0 && g.rows.stride[g.rows.rank - 1] == 1;
  const bool rows_fastest = !cols_contiguous && rows_contiguous;
  // The widest tile (8, 16 or 32 columns) that still gives every SM a block.
  const uint64_t sms = current_sm_count(op);
  uint32_t tc_shift = 5;
  while (tc_shift > 3 && ((g.col_count + (1u << tc_shift) - 1) >> tc_shift) < sms) --tc_shift;
  const uint64_t tiles = (g.col_count + (1u << tc_shift) - 1) >> tc_shift;
  if (tiles > 0x7FFFFFFFu) {
    fail(ErrorKind::invalid_argument, op,
         std::to_string(g.col_count) + " output elements exceed the grid of the fold kernel");
  }
  // Each kernel's limit is set once per device to its largest layout (that of 8-column tiles).
  const auto launch = [&](auto kernel, size_t shared, auto... args) {
    kernel<<<static_cast<unsigned>(tiles), kThreads, shared, stream>>>(x, out, g, args...);
  };
  const size_t column_major_most = fold_layout<T>(3).bytes;
  if (rows_fastest) {
    allow_dynamic_shared<fold_column_major_kernel<T, true>>(column_major_most, op);
    launch(fold_column_major_kernel<T, true>, fold_layout<T>(tc_shift).bytes, tc_shift);
  } else if (tc_shift < kFoldWideShift) {
    // Few columns, long chains: column-major stages, so that the chain reads 16 bytes of its
    // column per shared load.
    allow_dynamic_shared<fold_column_major_kernel<T, false>>(column_major_most, op);
    launch(fold_column_major_kernel<T, false>, fold_layout<T>(tc_shift).bytes, tc_shift);
  } else {
    // Many columns (the bus, not the chains, is the limit): row-major stages, 16-byte pieces when
    // every piece of kP columns is contiguous and 16-byte aligned: the innermost column axis
    // contiguous with a multiple of kP elements, every other stride a multiple of kP, the buffer
    // 16-byte aligned.
    constexpr uint32_t kP = 16 / sizeof(T);
    bool pieces = cols_contiguous && g.cols.extent[g.cols.rank - 1] % kP == 0 &&
                  reinterpret_cast<uintptr_t>(x) % 16 == 0;
    for (uint32_t k = 0; k + 1 < g.cols.rank; ++k) pieces = pieces && g.cols.stride[k] % kP == 0;
    for (uint32_t k = 0; k < g.rows.rank; ++k) pieces = pieces && g.rows.stride[k] % kP == 0;
    constexpr uint32_t kShift = kFoldWideShift;
    constexpr size_t kShared = RowMajorFold<T, kShift>::kBytes;
    if (pieces) {
      allow_dynamic_shared<fold_row_major_kernel<T, kShift, kP>>(kShared, op);
      launch(fold_row_major_kernel<T, kShift, kP>, kShared);
    } else {
      allow_dynamic_shared<fold_row_major_kernel<T, kShift, 1>>(kShared, op);
      launch(fold_row_major_kernel<T, kShift, 1>, kShared);
    }
  }
  check_launch(op);
}

template <class T>
void reduce_axis_copy_cuda(const T* x, uint64_t n, T* out, CUstream_st* stream) {
  if (n == 0) return;
  check_cuda(cudaMemcpyAsync(out, x, n * sizeof(T), cudaMemcpyDeviceToDevice, stream),
             "reduce_sum_axis", "cudaMemcpyAsync device to device");
}

#define TLRT_REDUCE_AXIS_INSTANTIATE(T)                                                    \
  template void reduce_sum_by_row_cuda<T>(const T*, uint64_t, uint64_t, T*, CUstream_st*); \
  template void reduce_max_by_row_cuda<T>(const T*, uint64_t, uint64_t, T*, CUstream_st*); \
  template void reduce_max_by_column_cuda<T>(const T*, uint64_t, uint64_t, T*, void*,      \
                                             CUstream_st*);                                \
  template uint64_t reduce_max_by_column_workspace_bytes<T>(const T*, uint64_t, uint64_t); \
  template void ordered_fold_cuda<T>(const T*, const FoldGeometry&, T*, CUstream_st*);     \
  template void reduce_axis_copy_cuda<T>(const T*, uint64_t, T*, CUstream_st*);

TLRT_REDUCE_AXIS_INSTANTIATE(float)
TLRT_REDUCE_AXIS_INSTANTIATE(double)

}  // namespace tlrt::kernels
