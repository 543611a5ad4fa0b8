// The ordered scatters of the indexing family, CUDA backend (kernels/indexing/indexing.h; the
// gathers: kernels/indexing/indexing.cu).
//
// The ordered scatter: (1) keys[i] = idx[i] < rows ? idx[i] : rows and src[i] = i; (2) a stable
// CUB radix sort of (key, src) over the bits of `rows` groups the sources of each target in
// increasing source order, out-of-range sources last; (3) one fold per touched row, started by the
// position where a run of equal keys begins. Rows of 32 columns or more: a block per run, a thread
// per column folding its column's sources in order (the values rows are read coalesced). Narrower
// rows: a thread per (run, column) for runs of at most kLongRun sources (one column: the sorted
// keys and values staged in tiles through shared memory first); longer runs are listed
// and folded by a warp per (run, column), the lanes loading 32 sources at a time and every lane
// applying them in order through shuffles, so a run of 2^24 sources is a chain of adds without a
// memory stall per add. Every add is __fadd_rn / __dadd_rn (no contraction, one rounding each).
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <string>

#include "kernels/common/float_ops.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/indexing/indexing.h"
#include "kernels/indexing/indexing_shared.cuh"

namespace tlrt::kernels {
namespace {

using namespace indexing_detail;

// Runs longer than this are folded by the warp kernel (narrow rows).
constexpr uint64_t kLongRun = 32;

template <class T>
__global__ void at_indices_kernel(const T* __restrict__ positions, uint32_t size, uint64_t count,
                                  uint32_t* __restrict__ idx) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride) {
    idx[i] = at_index(positions[i], size);
  }
}

// ---------------------------------------------------------------------------------------------
// Ordered scatter

size_t align256(size_t b) {
  return (b + 255) / 256 * 256;
}

int key_bits(uint64_t rows) {
  int bits = 0;
  while (bits < 32 && (rows >> bits) != 0) ++bits;  // bits of the sentinel key `rows`
  return bits;
}

template <class V>
size_t sort_temp_bytes_for(uint64_t rows, uint64_t k) {
  size_t bytes = 0;
  check_cuda(cub::DeviceRadixSort::SortPairs(
                 nullptr, bytes, static_cast<const uint32_t*>(nullptr),
                 static_cast<uint32_t*>(nullptr), static_cast<const V*>(nullptr),
                 static_cast<V*>(nullptr), static_cast<uint32_t>(k), 0, key_bits(rows)),
             "scatter_add_rows", "cub::DeviceRadixSort::SortPairs (size query)");
  return bytes;
}

// Room for sorting (key, source) pairs and, for one column, (key, value) pairs of either dtype.
size_t sort_temp_bytes(uint64_t rows, uint64_t k) {
  return std::max(sort_temp_bytes_for<uint32_t>(rows, k), sort_temp_bytes_for<double>(rows, k));
}

struct ScatterLayout {
  size_t keys_in = 0, keys_out = 0, src_in = 0, src_out = 0, long_count = 0, long_list = 0;
  size_t temp = 0, temp_bytes = 0, bytes = 0;
};

ScatterLayout scatter_layout(uint64_t rows, uint64_t k) {
  ScatterLayout l;
  const size_t words = align256(static_cast<size_t>(k) * sizeof(uint32_t));
  l.keys_in = 0;
  l.keys_out = l.keys_in + words;
  l.src_in = l.keys_out + words;
  l.src_out = l.src_in + words;
  l.long_count = l.src_out + words;
  l.long_list = l.long_count + 256;
  l.temp = l.long_list + align256((static_cast<size_t>(k / kLongRun) + 1) * sizeof(uint32_t));
  l.temp_bytes = sort_temp_bytes(rows, k);
  l.bytes = l.temp + align256(l.temp_bytes);
  return l;
}

__global__ void scatter_keys_kernel(const uint32_t* __restrict__ idx, uint64_t k, uint32_t rows,
                                    uint32_t* __restrict__ keys, uint32_t* __restrict__ src) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < k; i += stride) {
    const uint32_t t = idx[i];
    keys[i] = t < rows ? t : rows;
    if (src != nullptr) src[i] = static_cast<uint32_t>(i);
  }
}

// The value of sorted position j, column c: through the sorted sources, or (one column) straight
// from the values sorted with their keys (src null), which hold the same words in the same order.
template <class T>
TLRT_DEVICE_INLINE T sorted_value(const T* __restrict__ values, const uint32_t* __restrict__ src,
                                  uint64_t j, uint64_t cols, uint64_t c) {
  return src == nullptr ? values[j] : values[uint64_t{src[j]} * cols + c];
}

// One past the last position of the run of `key` that starts at s (keys sorted ascending):
// exponential then binary search.
TLRT_DEVICE_INLINE uint64_t run_end(const uint32_t* keys, uint64_t k, uint64_t s, uint32_t key) {
  uint64_t lo = s + 1;
  uint64_t step = 1;
  uint64_t hi = s + 1;
  while (hi < k && keys[hi] == key) {
    lo = hi + 1;
    step *= 2;
    hi = s + step;
  }
  if (hi > k) hi = k;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (keys[mid] == key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

TLRT_DEVICE_INLINE bool run_starts(const uint32_t* keys, uint64_t i, uint32_t key, uint32_t rows) {
  return key < rows && (i == 0 || keys[i - 1] != key);
}

// Rows of 32 columns or more: a block per run, a thread per column.
template <class T>
__global__ void fold_wide_kernel(const uint32_t* __restrict__ keys,
                                 const uint32_t* __restrict__ src, uint64_t k, uint32_t rows,
                                 uint64_t cols, const T* __restrict__ values, T* __restrict__ out) {
  constexpr int kUnroll = 8;
  for (uint64_t i = blockIdx.x; i < k; i += gridDim.x) {
    const uint32_t key = keys[i];
    if (key >= rows) break;  // sorted: every later position is out of range too
    if (!run_starts(keys, i, key, rows)) continue;
    const uint64_t e = run_end(keys, k, i, key);
    T* row = out + uint64_t{key} * cols;
    for (uint64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      T acc = add_rn(static_cast<T>(-0.0), row[c]);
      uint64_t j = i;
      for (; j + kUnroll <= e; j += kUnroll) {
        T v[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) v[u] = values[uint64_t{src[j + u]} * cols + c];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) acc = add_rn(acc, v[u]);
      }
      for (; j < e; ++j) acc = add_rn(acc, values[uint64_t{src[j]} * cols + c]);
      row[c] = acc;
    }
  }
}

// Narrow rows: a thread per (run start, column); runs longer than kLongRun go to the long list
// (entered once, by the column-0 thread).
template <class T>
__global__ void fold_narrow_kernel(const uint32_t* __restrict__ keys,
                                   const uint32_t* __restrict__ src, uint64_t k, uint32_t rows,
                                   uint32_t cols, const T* __restrict__ values, T* __restrict__ out,
                                   uint32_t* __restrict__ long_count,
                                   uint32_t* __restrict__ long_list) {
  const uint64_t total = k * cols;
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t item = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; item < total;
       item += stride) {
    const uint64_t i = item / cols;
    const uint64_t c = item - i * cols;
    const uint32_t key = keys[i];
    if (!run_starts(keys, i, key, rows)) continue;
    if (i + kLongRun < k && keys[i + kLongRun] == key) {
      if (c == 0) long_list[atomicAdd(long_count, 1u)] = static_cast<uint32_t>(i);
      continue;
    }
    T* dst = out + uint64_t{key} * cols + c;
    T acc = add_rn(static_cast<T>(-0.0), *dst);
    for (uint64_t j = i; j < k && keys[j] == key; ++j) {
      acc = add_rn(acc, sorted_value(values, src, j, cols, c));
    }
    *dst = acc;
  }
}

// One column, values sorted with their keys: a block per tile of kSingleTile sorted positions,
// its keys and values staged in shared memory by coalesced loads (keys[t0 - 1] too, to see
// whether the tile's first position starts a run). The positions that start runs of at most
// kLongRun sources are listed in shared memory (longer runs go to the long list for the warp
// kernel); then each thread takes listed runs, kSingleBatch at a time so that their base loads are
// in flight together, and folds each run in order, from shared memory while the run stays in the
// tile and from global memory past its end (never more than kLongRun sources).
constexpr uint32_t kSingleThreads = 256;
constexpr uint32_t kSinglePer = 8;  // positions per thread
constexpr uint32_t kSingleTile = kSingleThreads * kSinglePer;
constexpr uint32_t kSingleBatch = 4;

template <class T>
__global__ void __launch_bounds__(kSingleThreads)
    fold_single_kernel(const uint32_t* __restrict__ keys, const T* __restrict__ values, uint64_t k,
                       uint32_t rows, T* __restrict__ out, uint32_t* __restrict__ long_count,
                       uint32_t* __restrict__ long_list) {
  __shared__ uint32_t tile_keys[kSingleTile + 1];  // [0]: the key before the tile
  __shared__ T tile_values[kSingleTile];
  __shared__ uint32_t run_starts[kSingleTile];
  __shared__ uint32_t runs;
  for (uint64_t t0 = uint64_t{blockIdx.x} * kSingleTile; t0 < k;
       t0 += uint64_t{gridDim.x} * kSingleTile) {
    const uint32_t n = k - t0 < kSingleTile ? static_cast<uint32_t>(k - t0) : kSingleTile;
    __syncthreads();  // the previous tile's folds are done with the stage and the list
#pragma unroll
    for (uint32_t u = 0; u < kSinglePer; ++u) {
      const uint32_t i = threadIdx.x + u * kSingleThreads;
      if (i < n) {
        tile_keys[i + 1] = keys[t0 + i];
        tile_values[i] = values[t0 + i];
      }
    }
    if (threadIdx.x == 0) {
      tile_keys[0] = t0 == 0 ? ~0u : keys[t0 - 1];
      runs = 0;
    }
    __syncthreads();
    // Sorted: past the first out-of-range key every key is out of range.
    for (uint32_t u = 0; u < kSinglePer; ++u) {
      const uint32_t i = threadIdx.x + u * kSingleThreads;  // consecutive lanes, distinct banks
      if (i >= n) break;
      const uint32_t key = tile_keys[i + 1];
      if (key >= rows) break;
      if (tile_keys[i] == key) continue;  // inside a run
      const uint64_t p = t0 + i;
      if (p + kLongRun < k) {
        const uint32_t later = i + kLongRun < n ? tile_keys[i + kLongRun + 1] : keys[p + kLongRun];
        if (later == key) {
          long_list[atomicAdd(long_count, 1u)] = static_cast<uint32_t>(p);
          continue;
        }
      }
      run_starts[atomicAdd(&runs, 1u)] = i;  // list order is free: the runs are disjoint
    }
    __syncthreads();
    const uint32_t listed = runs;
    for (uint32_t r = threadIdx.x; r < listed; r += kSingleBatch * kSingleThreads) {
      uint32_t start[kSingleBatch], key[kSingleBatch];
      T acc[kSingleBatch];
#pragma unroll
      for (uint32_t b = 0; b < kSingleBatch; ++b) {
        const uint32_t slot = r + b * kSingleThreads;
        start[b] = slot < listed ? run_starts[slot] : 0;
        key[b] = slot < listed ? tile_keys[start[b] + 1] : 0;
        acc[b] = slot < listed ? out[key[b]] : T(0);
      }
#pragma unroll
      for (uint32_t b = 0; b < kSingleBatch; ++b) {
        if (r + b * kSingleThreads >= listed) break;
        T a = add_rn(static_cast<T>(-0.0), acc[b]);
        uint32_t j = start[b];
        for (; j < n && tile_keys[j + 1] == key[b]; ++j) a = add_rn(a, tile_values[j]);
        if (j == n) {
          for (uint64_t g = t0 + n; g < k && keys[g] == key[b]; ++g) a = add_rn(a, values[g]);
        }
        out[key[b]] = a;
      }
    }
  }
}

// Long runs of narrow rows: a warp per (run, column). The lanes load 32 * kTile sources ahead of
// the fold; every lane folds the same sequence (shuffled in order), lane 0 stores.
template <class T>
__global__ void fold_long_kernel(const uint32_t* __restrict__ keys,
                                 const uint32_t* __restrict__ src, uint64_t k, uint32_t cols,
                                 const T* __restrict__ values, T* __restrict__ out,
                                 const uint32_t* __restrict__ long_count,
                                 const uint32_t* __restrict__ long_list) {
  constexpr int kTile = 8;
  constexpr uint64_t kSpan = 32 * kTile;
  const unsigned lane = threadIdx.x & 31u;
  const uint64_t warps = (uint64_t{gridDim.x} * blockDim.x) / 32;
  const uint64_t pairs = uint64_t{*long_count} * cols;
  for (uint64_t p = (uint64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32; p < pairs; p += warps) {
    const uint64_t s = long_list[p / cols];
    const uint64_t c = p - (p / cols) * cols;
    const uint32_t key = keys[s];
    const uint64_t e = run_end(keys, k, s, key);
    T* dst = out + uint64_t{key} * cols + c;
    T acc = add_rn(static_cast<T>(-0.0), *dst);
    T next[kTile];
    auto load = [&](uint64_t base, T* v) {
#pragma unroll
      for (int u = 0; u < kTile; ++u) {
        const uint64_t j = base + u * 32 + lane;
        v[u] = j < e ? sorted_value(values, src, j, cols, c) : static_cast<T>(0);
      }
    };
    load(s, next);
    for (uint64_t base = s; base < e; base += kSpan) {
      T cur[kTile];
#pragma unroll
      for (int u = 0; u < kTile; ++u) cur[u] = next[u];
      if (base + kSpan < e) load(base + kSpan, next);
#pragma unroll
      for (int u = 0; u < kTile; ++u) {
        const uint64_t first = base + u * 32;
        if (first >= e) break;
        const uint64_t n = e - first;
        if (n >= 32) {
#pragma unroll
          for (int l = 0; l < 32; ++l) acc = add_rn(acc, __shfl_sync(0xffffffffu, cur[u], l));
        } else {
          for (int l = 0; l < 32; ++l) {
            const T v = __shfl_sync(0xffffffffu, cur[u], l);
            if (static_cast<uint64_t>(l) < n) acc = add_rn(acc, v);
          }
        }
      }
    }
    if (lane == 0) *dst = acc;
  }
}

// Sorts the targets of idx and folds values into out (which already holds the base).
template <class T>
void ordered_fold(const T* values, uint64_t rows, uint64_t cols, const uint32_t* idx, uint64_t k,
                  T* out, void* workspace, CUstream_st* stream, const char* op) {
  const ScatterLayout l = scatter_layout(rows, k);
  char* ws = static_cast<char*>(workspace);
  uint32_t* keys_in = reinterpret_cast<uint32_t*>(ws + l.keys_in);
  uint32_t* keys_out = reinterpret_cast<uint32_t*>(ws + l.keys_out);
  uint32_t* src_in = reinterpret_cast<uint32_t*>(ws + l.src_in);
  uint32_t* src_out = reinterpret_cast<uint32_t*>(ws + l.src_out);
  uint32_t* long_count = reinterpret_cast<uint32_t*>(ws + l.long_count);
  uint32_t* long_list = reinterpret_cast<uint32_t*>(ws + l.long_list);
  const uint32_t r32 = static_cast<uint32_t>(rows);

  size_t temp_bytes = l.temp_bytes;
  if (cols == 1) {
    // One column: sort the values with their keys (stable, so each target's values come out in
    // source order) and fold them where they lie, no gather through source positions. The sorted
    // values take the two source arrays' room (2 * align256(4k) >= k * sizeof(T)).
    T* sorted = reinterpret_cast<T*>(ws + l.src_in);
    scatter_keys_kernel<<<grid_for(k, kThreads), kThreads, 0, stream>>>(idx, k, r32, keys_in,
                                                                        nullptr);
    check_launch(op);
    check_cuda(
        cub::DeviceRadixSort::SortPairs(ws + l.temp, temp_bytes, keys_in, keys_out, values, sorted,
                                        static_cast<uint32_t>(k), 0, key_bits(rows), stream),
        op, "cub::DeviceRadixSort::SortPairs");
    values = sorted;
    src_out = nullptr;
  } else {
    scatter_keys_kernel<<<grid_for(k, kThreads), kThreads, 0, stream>>>(idx, k, r32, keys_in,
                                                                        src_in);
    check_launch(op);
    check_cuda(
        cub::DeviceRadixSort::SortPairs(ws + l.temp, temp_bytes, keys_in, keys_out, src_in, src_out,
                                        static_cast<uint32_t>(k), 0, key_bits(rows), stream),
        op, "cub::DeviceRadixSort::SortPairs");
  }
  if (cols >= 32) {
    const unsigned threads = cols >= 256 ? 256 : 128;
    fold_wide_kernel<T>
        <<<grid_for(k, 1), threads, 0, stream>>>(keys_out, src_out, k, r32, cols, values, out);
    check_launch(op);
    return;
  }
  const uint32_t c32 = static_cast<uint32_t>(cols);
  check_cuda(cudaMemsetAsync(long_count, 0, sizeof(uint32_t), stream), op, "cudaMemsetAsync");
  if (cols == 1) {
    fold_single_kernel<T><<<grid_for(k, kSingleTile), kSingleThreads, 0, stream>>>(
        keys_out, values, k, r32, out, long_count, long_list);
  } else {
    fold_narrow_kernel<T><<<grid_for(k * cols, kThreads), kThreads, 0, stream>>>(
        keys_out, src_out, k, r32, c32, values, out, long_count, long_list);
  }
  check_launch(op);
  // The long runs are not counted on the host: a grid-stride launch of a few blocks per SM, whose
  // warps find no work when the list is empty.
  const uint64_t max_pairs = (k / kLongRun + 1) * cols;
  fold_long_kernel<T>
      <<<grid_for(max_pairs, kThreads / 32, 8 * uint64_t{current_sm_count(op)}), kThreads, 0,
         stream>>>(keys_out, src_out, k, c32, values, out, long_count, long_list);
  check_launch(op);
}

// ---------------------------------------------------------------------------------------------
// Short index lists: parameters, and the one-kernel ordered scatter

// The targets of a short scatter: host indices, or at_index of device positions.
template <uint32_t N>
struct ParamKeys {
  ParamIdx<N> idx;
  TLRT_DEVICE_INLINE uint32_t operator()(uint32_t i) const { return idx.v[i]; }
};
template <class T>
struct AtKeys {
  const T* positions;
  uint32_t size;
  TLRT_DEVICE_INLINE uint32_t operator()(uint32_t i) const { return at_index(positions[i], size); }
};

// Where the base of a short scatter comes from: copied from mat, +0 zeros, or already in out
// (large bases, copied or zero-filled by the copy engine before the kernel).
enum class ShortBase : int { copy, zeros, in_place };

constexpr int kShortThreads = 256;
constexpr uint64_t kShortTile = 4096;           // base elements per tile
constexpr uint64_t kShortFusedBase = 1u << 20;  // larger bases go through the copy engine
constexpr uint64_t kShortGrid = 1024;

// A block ranks the k sources by (target, source) in shared memory, lists where each run of one
// target starts in that order, then walks its tiles: a tile is whole rows (rows of at most
// kShortTile elements) or a kShortTile slice of one row. The tile's base is written, the block
// synchronises, and the touched (row, column) pairs of the tile are folded, a thread per pair:
// acc = -0 + base, then the row's sources in increasing source order.
template <class T, class Keys>
__global__ void __launch_bounds__(kShortThreads)
    scatter_short_kernel(const T* __restrict__ mat, ShortBase mode, const T* __restrict__ values,
                         uint32_t rows, uint64_t cols, const __grid_constant__ Keys keys,
                         uint32_t k, uint64_t tile_rows, uint64_t chunks, uint64_t tiles,
                         T* __restrict__ out) {
  using Scan = cub::BlockScan<uint32_t, kShortThreads>;
  __shared__ uint32_t s_key[kParamLarge];
  __shared__ uint32_t s_sorted[kParamLarge];   // the keys in (target, source) order
  __shared__ uint32_t s_src[kParamLarge];      // their sources
  __shared__ uint32_t s_run[kParamLarge + 1];  // sorted positions of run starts, then the end
  __shared__ typename Scan::TempStorage scan_storage;
  const uint32_t tid = threadIdx.x;

  for (uint32_t i = tid; i < k; i += kShortThreads) {
    const uint32_t t = keys(i);
    s_key[i] = t < rows ? t : rows;  // out of range: the key `rows`, sorted last and skipped
  }
  __syncthreads();
  for (uint32_t i = tid; i < k; i += kShortThreads) {
    const uint32_t key = s_key[i];
    uint32_t rank = 0;
    for (uint32_t j = 0; j < k; ++j) {
      const uint32_t other = s_key[j];
      rank += (other < key || (other == key && j < i)) ? 1u : 0u;
    }
    s_sorted[rank] = key;
    s_src[rank] = i;
  }
  __syncthreads();
  uint32_t runs = 0;
  uint32_t in_range = 0;
  for (uint32_t first = 0; first < k; first += kShortThreads) {
    const uint32_t p = first + tid;
    const uint32_t key = p < k ? s_sorted[p] : rows;
    const uint32_t starts = key < rows && (p == 0 || s_sorted[p - 1] != key) ? 1u : 0u;
    uint32_t offset = 0;
    uint32_t total = 0;
    Scan(scan_storage).ExclusiveSum(starts, offset, total);
    if (starts != 0) s_run[runs + offset] = p;
    runs += total;
    in_range += static_cast<uint32_t>(__syncthreads_count(key < rows));
  }
  if (tid == 0) s_run[runs] = in_range;  // the end of the last run
  __syncthreads();

  // The first run whose target is >= r.
  auto first_run = [&](uint64_t r) {
    uint32_t lo = 0;
    uint32_t hi = runs;
    while (lo < hi) {
      const uint32_t mid = lo + (hi - lo) / 2;
      if (s_sorted[s_run[mid]] < r)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  };

  for (uint64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    uint64_t r0, r1, c0, w;
    if (chunks == 0) {
      r0 = tile * tile_rows;
      r1 = r0 + tile_rows < rows ? r0 + tile_rows : rows;
      c0 = 0;
      w = cols;
    } else {
      r0 = tile / chunks;
      r1 = r0 + 1;
      c0 = (tile - r0 * chunks) * kShortTile;
      w = cols - c0 < kShortTile ? cols - c0 : kShortTile;
    }
    const uint64_t e0 = r0 * cols + c0;
    const uint64_t e1 = chunks == 0 ? r1 * cols : e0 + w;
    if (mode == ShortBase::copy) {
      for (uint64_t e = e0 + tid; e < e1; e += kShortThreads) out[e] = mat[e];
    } else if (mode == ShortBase::zeros) {
      for (uint64_t e = e0 + tid; e < e1; e += kShortThreads) out[e] = static_cast<T>(0);
    }
    const uint32_t q0 = first_run(r0);
    const uint32_t q1 = first_run(r1);
    __syncthreads();  // the tile's base is in out
    const uint64_t pairs = uint64_t{q1 - q0} * w;
    for (uint64_t item = tid; item < pairs; item += kShortThreads) {
      const uint64_t q = q0 + item / w;
      const uint64_t c = c0 + (item - (item / w) * w);
      const uint32_t s = s_run[q];
      const uint32_t e = s_run[q + 1];
      T* dst = out + uint64_t{s_sorted[s]} * cols + c;
      T acc = add_rn(static_cast<T>(-0.0), *dst);
      constexpr uint32_t kUnroll = 8;
      uint32_t j = s;
      for (; j + kUnroll <= e; j += kUnroll) {
        T v[kUnroll];
#pragma unroll
        for (uint32_t u = 0; u < kUnroll; ++u) v[u] = values[uint64_t{s_src[j + u]} * cols + c];
#pragma unroll
        for (uint32_t u = 0; u < kUnroll; ++u) acc = add_rn(acc, v[u]);
      }
      for (; j < e; ++j) acc = add_rn(acc, values[uint64_t{s_src[j]} * cols + c]);
      *dst = acc;
    }
  }
}

// The smallest scatters (at most kParamSmall sources into at most kTinyScatterElements base
// elements): a thread per base element scans the k targets in source order and folds the sources
// of its row base first, acc = -0 + base, then each source: the adds of the ranked kernel above,
// in the same order, so the same bits; an untouched element keeps the base's bits. No ranking and
// one barrier (after the targets are staged): 1.9 us less device time than the ranked kernel for 8
// sources into 32 x 32 on the H200 (docs/BENCH.md).
constexpr uint64_t kTinyScatterElements = uint64_t{1} << 14;
constexpr uint32_t kTinyScatterThreads = 256;

template <class T, class Keys>
__global__ void __launch_bounds__(kTinyScatterThreads)
    scatter_tiny_kernel(const T* __restrict__ mat, const T* __restrict__ values, uint32_t rows,
                        uint32_t cols, const __grid_constant__ Keys keys, uint32_t k,
                        T* __restrict__ out) {
  __shared__ uint32_t s_key[kParamSmall];
  for (uint32_t i = threadIdx.x; i < k; i += kTinyScatterThreads) s_key[i] = keys(i);
  __syncthreads();
  const uint32_t e = blockIdx.x * kTinyScatterThreads + threadIdx.x;
  if (e >= rows * cols) return;
  const uint32_t r = e / cols;
  const uint32_t c = e - r * cols;
  const T base = mat != nullptr ? mat[e] : static_cast<T>(0);
  bool touched = false;
  T acc = static_cast<T>(0);
  for (uint32_t j = 0; j < k; ++j) {
    if (s_key[j] != r) continue;  // another row, or out of range (never a row)
    if (!touched) acc = add_rn(static_cast<T>(-0.0), base);
    touched = true;
    acc = add_rn(acc, values[uint64_t{j} * cols + c]);
  }
  out[e] = touched ? acc : base;
}

// out = base (copied from mat, or zeros when mat is null), then the ordered fold of the k <=
// kParamIndices sources named by keys; one kernel for bases up to kShortFusedBase elements (the
// tiny kernel for the smallest).
template <class T, class Keys>
void scatter_short(const T* mat, const T* values, uint64_t rows, uint64_t cols, const Keys& keys,
                   uint64_t k, T* out, CUstream_st* stream, const char* op) {
  const uint64_t n = rows * cols;
  if (k <= kParamSmall && n <= kTinyScatterElements) {
    const unsigned blocks =
        static_cast<unsigned>((n + kTinyScatterThreads - 1) / kTinyScatterThreads);
    scatter_tiny_kernel<T, Keys><<<blocks, kTinyScatterThreads, 0, stream>>>(
        mat, values, static_cast<uint32_t>(rows), static_cast<uint32_t>(cols), keys,
        static_cast<uint32_t>(k), out);
    check_launch(op);
    return;
  }
  ShortBase mode = mat != nullptr ? ShortBase::copy : ShortBase::zeros;
  if (n > kShortFusedBase) {
    if (mat != nullptr) {
      check_cuda(cudaMemcpyAsync(out, mat, n * sizeof(T), cudaMemcpyDeviceToDevice, stream), op,
                 "cudaMemcpyAsync device to device");
    } else {
      check_cuda(cudaMemsetAsync(out, 0, n * sizeof(T), stream), op, "cudaMemsetAsync");
    }
    mode = ShortBase::in_place;
  }
  uint64_t tile_rows = 0;
  uint64_t chunks = 0;
  uint64_t tiles = 0;
  if (cols <= kShortTile) {
    tile_rows = kShortTile / cols;
    tiles = (rows + tile_rows - 1) / tile_rows;
  } else {
    chunks = (cols + kShortTile - 1) / kShortTile;
    tiles = rows * chunks;
  }
  scatter_short_kernel<T, Keys><<<grid_for(tiles, 1, kShortGrid), kShortThreads, 0, stream>>>(
      mat, mode, values, static_cast<uint32_t>(rows), cols, keys, static_cast<uint32_t>(k),
      tile_rows, chunks, tiles, out);
  check_launch(op);
}

}  // namespace

size_t ordered_scatter_workspace_bytes(uint64_t rows, uint64_t k) {
  if (rows == 0 || k == 0) return 0;
  return scatter_layout(rows, k).bytes;
}

template <class T>
void scatter_add_rows_cuda(const T* mat, const T* values, uint64_t rows, uint64_t cols,
                           const uint32_t* idx, uint64_t k, T* out, void* workspace,
                           CUstream_st* stream) {
  const char* op = "scatter_add_rows";
  const uint64_t n = rows * cols;
  if (n == 0) return;
  if (mat != nullptr) {
    check_cuda(cudaMemcpyAsync(out, mat, n * sizeof(T), cudaMemcpyDeviceToDevice, stream), op,
               "cudaMemcpyAsync device to device");
  } else {
    check_cuda(cudaMemsetAsync(out, 0, n * sizeof(T), stream), op, "cudaMemsetAsync");
  }
  if (k == 0) return;
  ordered_fold(values, rows, cols, idx, k, out, workspace, stream, op);
}

template <class T>
void scatter_add_rows_param_cuda(const T* mat, const T* values, uint64_t rows, uint64_t cols,
                                 const uint32_t* host_idx, uint64_t k, T* out,
                                 CUstream_st* stream) {
  const char* op = "scatter_add_rows";
  if (rows == 0 || cols == 0) return;
  if (k == 0) {
    scatter_add_rows_cuda<T>(mat, values, rows, cols, host_idx, 0, out, nullptr, stream);
    return;
  }
  require_param_count(k, op);
  if (k <= kParamSmall) {
    scatter_short(mat, values, rows, cols,
                  ParamKeys<kParamSmall>{param_list<kParamSmall>(host_idx, k)}, k, out, stream, op);
  } else {
    scatter_short(mat, values, rows, cols,
                  ParamKeys<kParamLarge>{param_list<kParamLarge>(host_idx, k)}, k, out, stream, op);
  }
}

size_t scatter_add_at_workspace_bytes(uint32_t size, uint64_t count) {
  if (size == 0 || count <= kParamIndices) return 0;  // short lists: one kernel, no scratch
  return align256(static_cast<size_t>(count) * sizeof(uint32_t)) +
         ordered_scatter_workspace_bytes(size, count);
}

template <class T>
void scatter_add_at_cuda(uint32_t size, const T* positions, const T* values, uint64_t count, T* out,
                         void* workspace, CUstream_st* stream) {
  const char* op = "scatter_add_at";
  if (size == 0) return;
  if (count != 0 && count <= kParamIndices) {
    scatter_short<T>(nullptr, values, size, 1, AtKeys<T>{positions, size}, count, out, stream, op);
    return;
  }
  check_cuda(cudaMemsetAsync(out, 0, size_t{size} * sizeof(T), stream), op, "cudaMemsetAsync");
  if (count == 0) return;
  uint32_t* idx = static_cast<uint32_t*>(workspace);
  void* rest = static_cast<char*>(workspace) + align256(static_cast<size_t>(count) * 4);
  at_indices_kernel<T>
      <<<grid_for(count, kThreads), kThreads, 0, stream>>>(positions, size, count, idx);
  check_launch(op);
  ordered_fold(values, size, 1, idx, count, out, rest, stream, op);
}
#define TLRT_INDEXING_SCATTER_CUDA(T)                                                             \
  template void scatter_add_rows_cuda<T>(const T*, const T*, uint64_t, uint64_t, const uint32_t*, \
                                         uint64_t, T*, void*, CUstream_st*);                      \
  template void scatter_add_rows_param_cuda<T>(const T*, const T*, uint64_t, uint64_t,            \
                                               const uint32_t*, uint64_t, T*, CUstream_st*);      \
  template void scatter_add_at_cuda<T>(uint32_t, const T*, const T*, uint64_t, T*, void*,         \
                                       CUstream_st*);
TLRT_INDEXING_SCATTER_CUDA(float)
TLRT_INDEXING_SCATTER_CUDA(double)
#undef TLRT_INDEXING_SCATTER_CUDA

}  // namespace tlrt::kernels
