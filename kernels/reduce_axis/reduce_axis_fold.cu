// The ordered fold of reduce_sum_axis and reduce_from_broadcast, CUDA backend, on contiguous
// float / double device buffers (the family's other kernels: kernels/reduce_axis/reduce_axis.cu).
//
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
// Small matrices take the light kernel of kernels/reduce_axis/reduce_axis.cu.

#include <cuda_pipeline.h>
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

}  // namespace

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

#define TLRT_REDUCE_AXIS_FOLD_INSTANTIATE(T) \
  template void ordered_fold_cuda<T>(const T*, const FoldGeometry&, T*, CUstream_st*);

TLRT_REDUCE_AXIS_FOLD_INSTANTIATE(float)
TLRT_REDUCE_AXIS_FOLD_INSTANTIATE(double)

}  // namespace tlrt::kernels
