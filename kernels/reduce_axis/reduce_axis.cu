// Axis reductions, CUDA backend, on contiguous float / double device buffers.
//
// * reduce_sum_by_row / reduce_max_by_row: one group of threads per row (a warp, or the whole
//   block when there are too few rows to fill the device), 16-byte loads after a scalar head that
//   reaches alignment, per-thread accumulators combined by shuffles. The sum's order is free
//   (tolerance); the max runs on the integer keys of max_key.h, so its bits do not depend on it.
// * reduce_max_by_column: blocks own 32 columns (a warp reads 128 contiguous bytes of a row) and a
//   range of rows; the warps' partial keys meet in shared memory and then, across blocks, in an
//   atomicMax on the keys (order-free: the key order is a total order), and a last pass turns the
//   keys back into values.
// * ordered_fold: out[c] = ((+0 + M[0, c]) + M[1, c]) + ..., one thread per column running the
//   chain of dependent additions out of shared memory, so that the chain never waits for memory.
//   A block owns a tile of 8, 16 or 32 consecutive columns and walks the rows in chunks of 32 KiB
//   through a ring of 4 shared-memory stages: while warp 0 folds chunk k, the copies of chunks
//   k + 1 .. k + 3 are in flight (cp.async, queued by warps 1..7, holding no registers). Addresses
//   are mixed-radix offsets of the row and the column (tables per chunk and per tile in shared
//   memory), so one kernel serves reduce_sum_axis (any axis) and reduce_from_broadcast (any axis
//   map); a warp's loads run along the columns when the innermost column axis is contiguous, along
//   the rows when each column's chain is contiguous. Every addition is __fadd_rn / __dadd_rn in the
//   fold's order, whatever the tile or the schedule.
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/launch.cuh"
#include "kernels/reduce_axis/max_key.h"
#include "kernels/reduce_axis/reduce_axis.h"

namespace tlrt::kernels {
namespace {

// ---------------------------------------------------------------------------------------------
// Row reductions

TLRT_DEVICE_INLINE float add_rn(float a, float b) {
  return __fadd_rn(a, b);
}
TLRT_DEVICE_INLINE double add_rn(double a, double b) {
  return __dadd_rn(a, b);
}

TLRT_DEVICE_INLINE uint32_t max_of(uint32_t a, uint32_t b) {
  return a < b ? b : a;
}
TLRT_DEVICE_INLINE uint64_t max_of(uint64_t a, uint64_t b) {
  return a < b ? b : a;
}
TLRT_DEVICE_INLINE void atomic_max_key(uint32_t* p, uint32_t v) {
  atomicMax(reinterpret_cast<unsigned int*>(p), static_cast<unsigned int>(v));
}
TLRT_DEVICE_INLINE void atomic_max_key(uint64_t* p, uint64_t v) {
  atomicMax(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
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

template <class T>
struct Vec16;
template <>
struct Vec16<float> {
  using type = float4;
  static constexpr int kLanes = 4;
};
template <>
struct Vec16<double> {
  using type = double2;
  static constexpr int kLanes = 2;
};

template <class Op, class T>
TLRT_DEVICE_INLINE typename Op::Acc add_vector(typename Op::Acc acc, const float4& v) {
  acc = Op::add(acc, v.x);
  acc = Op::add(acc, v.y);
  acc = Op::add(acc, v.z);
  return Op::add(acc, v.w);
}
template <class Op, class T>
TLRT_DEVICE_INLINE typename Op::Acc add_vector(typename Op::Acc acc, const double2& v) {
  acc = Op::add(acc, v.x);
  return Op::add(acc, v.y);
}

// One row's accumulator of a group of kGroup threads (lane in [0, kGroup)).
template <class Op, class T, int kGroup>
TLRT_DEVICE_INLINE typename Op::Acc row_partial(const T* p, uint64_t cols, int lane) {
  using V = typename Vec16<T>::type;
  constexpr int kLanes = Vec16<T>::kLanes;
  typename Op::Acc acc = Op::identity();
  // Elements before the first 16-byte boundary (payloads are at least element aligned).
  uint64_t head = ((16u - (reinterpret_cast<uintptr_t>(p) & 15u)) & 15u) / sizeof(T);
  if (head > cols) head = cols;
  for (uint64_t j = lane; j < head; j += kGroup) acc = Op::add(acc, p[j]);
  const uint64_t vectors = (cols - head) / kLanes;
  const V* pv = reinterpret_cast<const V*>(p + head);
#pragma unroll 4
  for (uint64_t v = lane; v < vectors; v += kGroup) acc = add_vector<Op, T>(acc, __ldg(pv + v));
  for (uint64_t j = head + vectors * kLanes + lane; j < cols; j += kGroup) {
    acc = Op::add(acc, p[j]);
  }
  return acc;
}

template <class Op>
TLRT_DEVICE_INLINE typename Op::Acc warp_merge(typename Op::Acc acc) {
#pragma unroll
  for (int w = 16; w >= 1; w /= 2) acc = Op::merge(acc, __shfl_xor_sync(0xffffffffu, acc, w));
  return acc;
}

// kGroup = 32: a warp per row; kGroup = kThreads: the block per row.
template <class Op, class T, int kGroup>
__global__ void __launch_bounds__(kThreads)
    by_row_kernel(const T* __restrict__ x, uint64_t rows, uint64_t cols, T* __restrict__ out) {
  using Acc = typename Op::Acc;
  __shared__ Acc partial[kThreads / 32];
  const int lane = static_cast<int>(threadIdx.x % kGroup);
  const uint64_t group = (static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kGroup;
  const uint64_t groups = static_cast<uint64_t>(gridDim.x) * blockDim.x / kGroup;
  for (uint64_t row = group; row < rows; row += groups) {
    Acc acc = warp_merge<Op>(row_partial<Op, T, kGroup>(x + row * cols, cols, lane));
    if constexpr (kGroup > 32) {
      if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = acc;
      __syncthreads();
      if (threadIdx.x == 0) {
        for (int w = 1; w < kThreads / 32; ++w) acc = Op::merge(acc, partial[w]);
        out[row] = Op::finish(acc);
      }
      __syncthreads();
    } else {
      if (lane == 0) out[row] = Op::finish(acc);
    }
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
    by_row_kernel<Op, T, kThreads>
        <<<grid_for(rows, 1, 65535), kThreads, 0, stream>>>(x, rows, cols, out);
  } else {
    by_row_kernel<Op, T, 32>
        <<<grid_for(rows, kThreads / 32, 65535 * 8), kThreads, 0, stream>>>(x, rows, cols, out);
  }
  check_launch(op);
}

// ---------------------------------------------------------------------------------------------
// Column maxima

constexpr uint32_t kColumnTile = 32;
constexpr uint32_t kColumnWarps = kThreads / 32;

template <class T>
__global__ void __launch_bounds__(kThreads)
    max_by_column_kernel(const T* __restrict__ x, uint64_t rows, uint64_t cols,
                         uint64_t rows_per_split, typename MaxKeyTraits<T>::Key* keys) {
  using Key = typename MaxKeyTraits<T>::Key;
  __shared__ Key partial[kColumnWarps][kColumnTile];
  const uint32_t lane = threadIdx.x % 32;
  const uint32_t warp = threadIdx.x / 32;
  const uint64_t c = static_cast<uint64_t>(blockIdx.x) * kColumnTile + lane;
  const uint64_t begin = static_cast<uint64_t>(blockIdx.y) * rows_per_split;
  const uint64_t end = begin + rows_per_split < rows ? begin + rows_per_split : rows;
  Key acc = 0;
  if (c < cols) {
#pragma unroll 8
    for (uint64_t r = begin + warp; r < end; r += kColumnWarps) {
      acc = max_of(acc, max_key(__ldg(x + r * cols + c)));
    }
  }
  partial[warp][lane] = acc;
  __syncthreads();
  if (warp == 0 && c < cols) {
    for (uint32_t w = 1; w < kColumnWarps; ++w) acc = max_of(acc, partial[w][lane]);
    if (acc != 0) atomic_max_key(keys + c, acc);
  }
}

template <class T>
__global__ void keys_to_values_kernel(const typename MaxKeyTraits<T>::Key* keys, uint64_t n,
                                      T* out) {
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    out[i] = max_value<T>(keys[i]);
  }
}

// ---------------------------------------------------------------------------------------------
// Ordered fold

constexpr uint32_t kFoldChunkBytes = 32768;  // one stage of rows of a tile
constexpr uint32_t kFoldStages = 4;          // chunks in flight: kFoldStages - 1 while one folds

template <class T>
struct FoldChunk {
  static constexpr uint32_t kElements = kFoldChunkBytes / sizeof(T);
};

// Offset of index i on one side; the outermost axis needs no division.
TLRT_DEVICE_INLINE uint64_t device_offset(const FoldAxes& axes, uint64_t i) {
  if (axes.rank == 0) return 0;
  uint64_t offset = 0;
  for (uint32_t k = axes.rank - 1; k > 0; --k) {
    const uint64_t q = i / axes.extent[k];
    offset += (i - q * axes.extent[k]) * axes.stride[k];
    i = q;
  }
  return offset + i * axes.stride[0];
}

// Shared memory of one block for tiles of 2^tc_shift columns: per stage a chunk of rows x
// (tc + 1) elements (padded against bank conflicts) and the chunk's row offsets; then the tile's
// column offsets.
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
  l.chunk_rows = FoldChunk<T>::kElements >> tc_shift;
  l.pitch = (1u << tc_shift) + 1;
  l.stage_bytes = (static_cast<size_t>(l.chunk_rows) * l.pitch * sizeof(T) + 15) / 16 * 16;
  l.tables_offset = l.stage_bytes * kFoldStages;
  l.bytes = l.tables_offset +
            (static_cast<size_t>(l.chunk_rows) * kFoldStages + (1u << tc_shift)) * sizeof(uint64_t);
  return l;
}

constexpr uint32_t kFoldLoaders = kThreads - 32;  // warps 1.. copy; warp 0 runs the chains

// Barrier 1 among the loader warps only (barrier 0 is __syncthreads).
TLRT_DEVICE_INLINE void loader_barrier() {
  asm volatile("bar.sync 1, %0;" ::"r"(kFoldLoaders) : "memory");
}

// The chain of one column over n rows of a stage, in increasing row order: batches of 16 values
// are read from shared memory while the previous batch's additions run, so the chain issues one
// dependent addition every add latency.
template <class T>
TLRT_DEVICE_INLINE T fold_rows(T acc, const T* column, uint32_t pitch, uint32_t n) {
  constexpr uint32_t kBatch = 16;
  uint32_t r = 0;
  if (n >= kBatch) {
    T cur[kBatch];
#pragma unroll
    for (uint32_t i = 0; i < kBatch; ++i) cur[i] = column[i * pitch];
    for (r = kBatch; r + kBatch <= n; r += kBatch) {
      T next[kBatch];
#pragma unroll
      for (uint32_t i = 0; i < kBatch; ++i) next[i] = column[(r + i) * pitch];
#pragma unroll
      for (uint32_t i = 0; i < kBatch; ++i) acc = add_rn(acc, cur[i]);
#pragma unroll
      for (uint32_t i = 0; i < kBatch; ++i) cur[i] = next[i];
    }
#pragma unroll
    for (uint32_t i = 0; i < kBatch; ++i) acc = add_rn(acc, cur[i]);
  }
  for (; r < n; ++r) acc = add_rn(acc, column[r * pitch]);
  return acc;
}

// One block per tile of tc = 2^tc_shift consecutive columns. Warp 0 runs the chains: thread j < tc
// adds the rows of chunk k to column c0 + j, one __fadd_rn / __dadd_rn per row in increasing row
// order. Meanwhile warps 1..7 queue asynchronous copies (cp.async, no registers held) of chunk
// k + kFoldStages - 1 into the stage chunk k - 1 has left, and wait for chunk k + 1; one block
// barrier per chunk hands the stages over.
template <class T, bool kRowsFastest>
__global__ void __launch_bounds__(kThreads)
    ordered_fold_kernel(const T* __restrict__ x, T* __restrict__ out,
                        const __grid_constant__ FoldGeometry g, uint32_t tc_shift) {
  constexpr uint32_t kChunk = FoldChunk<T>::kElements;
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

  const uint32_t tid = threadIdx.x;
  const bool loader = tid >= 32;
  const uint32_t ltid = tid - 32;  // meaningful for loaders only
  const uint64_t c0 = static_cast<uint64_t>(blockIdx.x) << tc_shift;
  const uint64_t rows = g.row_count;
  const uint64_t cols = g.col_count;
  const uint64_t chunks = (rows + chunk_rows - 1) >> row_shift;

  auto fill_row_table = [&](uint64_t chunk) {
    uint64_t* table = stage_rows(chunk);
    const uint64_t first = chunk << row_shift;
    for (uint32_t r = ltid; r < chunk_rows; r += kFoldLoaders) {
      table[r] = first + r < rows ? device_offset(g.rows, first + r) : 0;
    }
  };
  // Queues the copies of chunk `chunk` (its row table filled and visible to the loaders).
  // Elements outside the matrix are not copied and never read.
  auto issue = [&](uint64_t chunk) {
    const uint64_t* table = stage_rows(chunk);
    T* data = stage_data(chunk);
    const uint64_t first = chunk << row_shift;
#pragma unroll 4
    for (uint32_t e = ltid; e < kChunk; e += kFoldLoaders) {
      uint32_t r, j;
      if (kRowsFastest) {
        j = e >> row_shift;
        r = e & (chunk_rows - 1);
      } else {
        r = e >> tc_shift;
        j = e & (tc - 1);
      }
      if (first + r < rows && c0 + j < cols) {
        __pipeline_memcpy_async(data + r * l.pitch + j, x + table[r] + col_table[j], sizeof(T));
      }
    }
  };

  // Prologue (loaders): the column offsets, chunks 0 .. kFoldStages - 2 in flight (one commit
  // group each, empty ones too, so that the group count stays uniform), chunk 0 landed.
  if (loader) {
    for (uint32_t j = ltid; j < tc; j += kFoldLoaders) {
      col_table[j] = c0 + j < cols ? device_offset(g.cols, c0 + j) : 0;
    }
    for (uint32_t s = 0; s + 1 < kFoldStages; ++s) {
      if (s < chunks) fill_row_table(s);
    }
    loader_barrier();
    for (uint32_t s = 0; s + 1 < kFoldStages; ++s) {
      if (s < chunks) issue(s);
      __pipeline_commit();
    }
    __pipeline_wait_prior(kFoldStages - 2);
  }
  T acc = T(0);  // the fold starts from +0
  const bool chain = tid < tc && c0 + tid < cols;
  for (uint64_t k = 0; k < chunks; ++k) {
    // Chunk k has landed (every loader waited for it) and chunk k - 1 is folded.
    __syncthreads();
    if (!loader) {
      if (chain) {
        const uint64_t left = rows - (k << row_shift);
        const uint32_t n = left < chunk_rows ? static_cast<uint32_t>(left) : chunk_rows;
        acc = fold_rows(acc, stage_data(k) + tid, l.pitch, n);
      }
    } else {
      const uint64_t ahead = k + kFoldStages - 1;  // into the stage chunk k - 1 has left
      if (ahead < chunks) fill_row_table(ahead);
      loader_barrier();
      if (ahead < chunks) issue(ahead);
      __pipeline_commit();
      __pipeline_wait_prior(kFoldStages - 2);  // this thread's copies of chunk k + 1
    }
  }
  if (chain) out[c0 + tid] = acc;
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
void reduce_max_by_column_cuda(const T* x, uint64_t rows, uint64_t cols, T* out, void* workspace,
                               CUstream_st* stream) {
  const char* op = "reduce_max_by_column";
  if (cols == 0) return;
  if (rows == 0) {
    check_cuda(cudaMemsetAsync(out, 0, cols * sizeof(T), stream), op, "cudaMemsetAsync");
    return;
  }
  using Key = typename MaxKeyTraits<T>::Key;
  Key* keys = static_cast<Key*>(workspace);
  check_cuda(cudaMemsetAsync(keys, 0, cols * sizeof(Key), stream), op, "cudaMemsetAsync");
  const uint64_t tiles = (cols + kColumnTile - 1) / kColumnTile;
  const uint64_t target = 8 * uint64_t{current_sm_count(op)};
  // Splits of the rows: enough blocks to fill the device, at least 64 rows per split.
  uint64_t splits = (target + tiles - 1) / tiles;
  const uint64_t most = (rows + 63) / 64;
  if (splits > most) splits = most;
  if (splits > 65535) splits = 65535;
  if (splits == 0) splits = 1;
  const uint64_t per_split = (rows + splits - 1) / splits;
  splits = (rows + per_split - 1) / per_split;
  max_by_column_kernel<T>
      <<<dim3(static_cast<unsigned>(tiles), static_cast<unsigned>(splits)), kThreads, 0, stream>>>(
          x, rows, cols, per_split, keys);
  check_launch(op);
  keys_to_values_kernel<T>
      <<<grid_for(cols, kThreads, 65535), kThreads, 0, stream>>>(keys, cols, out);
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
  const size_t shared = fold_layout<T>(tc_shift).bytes;
  auto launch = [&](auto kernel) {
    check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(shared)),
               op, "cudaFuncSetAttribute(max dynamic shared memory)");
    kernel<<<static_cast<unsigned>(tiles), kThreads, shared, stream>>>(x, out, g, tc_shift);
  };
  if (rows_fastest) {
    launch(ordered_fold_kernel<T, true>);
  } else {
    launch(ordered_fold_kernel<T, false>);
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
  template void ordered_fold_cuda<T>(const T*, const FoldGeometry&, T*, CUstream_st*);     \
  template void reduce_axis_copy_cuda<T>(const T*, uint64_t, T*, CUstream_st*);

TLRT_REDUCE_AXIS_INSTANTIATE(float)
TLRT_REDUCE_AXIS_INSTANTIATE(double)

}  // namespace tlrt::kernels
