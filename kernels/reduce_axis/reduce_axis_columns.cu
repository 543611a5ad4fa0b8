// Column maxima (reduce_max_by_column), CUDA backend, on contiguous float / double device
// buffers (the family's other kernels: kernels/reduce_axis/reduce_axis.cu).
//
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
// Small inputs take the light kernel of kernels/reduce_axis/reduce_axis.cu.

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "kernels/common/float_ops.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/reduce_axis/max_key.h"
#include "kernels/reduce_axis/reduce_axis.h"
#include "kernels/reduce_axis/reduce_axis_shared.cuh"

namespace tlrt::kernels {
namespace {

using namespace reduce_axis_detail;

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

}  // namespace

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

#define TLRT_REDUCE_AXIS_COLUMNS_INSTANTIATE(T)                                       \
  template void reduce_max_by_column_cuda<T>(const T*, uint64_t, uint64_t, T*, void*, \
                                             CUstream_st*);                           \
  template uint64_t reduce_max_by_column_workspace_bytes<T>(const T*, uint64_t, uint64_t);

TLRT_REDUCE_AXIS_COLUMNS_INSTANTIATE(float)
TLRT_REDUCE_AXIS_COLUMNS_INSTANTIATE(double)

}  // namespace tlrt::kernels
