// Axis reductions of contiguous float / double buffers (SPEC-ops 8):
//   * reduce_sum_by_row: out[i] = sum_j x[i, j] of a row-major (rows, cols) view, any order (a
//     tolerance op); cols = 0 gives zeros.
//   * reduce_max_by_row / reduce_max_by_column: NaN counts as -inf, all-NaN gives -inf. Max is a
//     selection under one total order, -inf < ... < -0 < +0 < ... < +inf (so +0 beats -0), which
//     makes the result independent of the comparison order: both backends give the same bits.
//     rows = 0 or cols = 0 gives zeros (+0).
//   * the ordered column fold behind reduce_sum_axis and reduce_from_broadcast:
//     out[c] = ((+0 + M[0, c]) + M[1, c]) + ... + M[rows-1, c], every addition one rounding in
//     T, where M[r, c] = x[row_offset(r) + col_offset(c)] and both offsets are mixed-radix
//     (row-major over their axes, each axis with its own element stride). Bit-exact on both
//     backends whatever the schedule; rows = 0 gives zeros.
//
// The launchers take validated extents: the callers (runtime/reduce_axis_dispatch.cpp) have
// checked the sizes against the buffers and allocated `out` with room for every element written.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/common/row_major.h"

struct CUstream_st;

namespace tlrt::kernels {

// An axis list of one side of the fold: index i in [0, prod(extent)) decodes row-major (the last
// axis fastest) into per-axis coordinates, and the offset is sum_k coord_k * stride[k]. Extents
// of 1 are dropped before a geometry reaches a launcher, so every extent is at least 2 and, the
// product being at most 2^63, at most 63 axes remain.
constexpr uint32_t kFoldMaxAxes = 64;

struct FoldAxes {
  uint32_t rank = 0;
  uint64_t extent[kFoldMaxAxes] = {};
  uint64_t stride[kFoldMaxAxes] = {};
};

struct FoldGeometry {
  FoldAxes rows;  // the folded axes, in fold order
  FoldAxes cols;  // the output axes, in output (row-major) order
  uint64_t row_count = 0;
  uint64_t col_count = 0;
};

// The geometry of a fold over the rows of a row-major rows x cols matrix: out[c] folds M[r, c]
// over r.
inline FoldGeometry matrix_fold_geometry(uint64_t rows, uint64_t cols) {
  FoldGeometry g;
  g.rows.rank = 1;
  g.rows.extent[0] = rows;
  g.rows.stride[0] = cols;
  g.cols.rank = 1;
  g.cols.extent[0] = cols;
  g.cols.stride[0] = 1;
  g.row_count = rows;
  g.col_count = cols;
  return g;
}

// Offset of index i on one side (host, reference and device use).
TLRT_HOST_DEVICE uint64_t fold_offset(const FoldAxes& axes, uint64_t i) {
  return row_major_offset(axes.extent, axes.stride, axes.rank, i);
}

// Reference backend (kernels/reduce_axis/reduce_axis_ref.cpp): plain loops over host memory.
// reduce_sum_by_row accumulates in a wider format (double for float, long double for double)
// and rounds once; the max and the fold are the specified selections and roundings exactly.
template <class T>
void reduce_sum_by_row_ref(const T* x, uint64_t rows, uint64_t cols, T* out);
template <class T>
void reduce_max_by_row_ref(const T* x, uint64_t rows, uint64_t cols, T* out);
template <class T>
void reduce_max_by_column_ref(const T* x, uint64_t rows, uint64_t cols, T* out);
// out has g.col_count elements; g.row_count = 0 gives zeros.
template <class T>
void ordered_fold_ref(const T* x, const FoldGeometry& g, T* out);
// out[0, n) = x[0, n) as bytes (reduce_sum_axis of dims = []: a copy, not a fold).
template <class T>
void reduce_axis_copy_ref(const T* x, uint64_t n, T* out);

// CUDA backend (kernels/reduce_axis/reduce_axis.cu; the column maxima in reduce_axis_columns.cu,
// the ordered fold in reduce_axis_fold.cu): device memory, asynchronous on `stream`.
// An empty output queues nothing (its pointer may be null); an empty input with a nonempty output
// queues a memset to +0.
template <class T>
void reduce_sum_by_row_cuda(const T* x, uint64_t rows, uint64_t cols, T* out, CUstream_st* stream);
template <class T>
void reduce_max_by_row_cuda(const T* x, uint64_t rows, uint64_t cols, T* out, CUstream_st* stream);

// Inputs of at most 32 rows and 2^16 elements take one light kernel (a thread per output column)
// in reduce_max_by_column, and need no workspace; so do ordered folds of that size whose rows and
// columns are one axis each.
// reduce_max_by_column splits the rows across blocks when the columns alone do not fill the
// device. On 16-byte aligned rows of whole 16-byte vectors the blocks' partial maxima
// (order-preserving integer keys) meet in a device-global array of the module; otherwise they go
// to device scratch of reduce_max_by_column_workspace_bytes(x, rows, cols) bytes (0: none needed,
// as on the first path; free for reuse afterwards). Either way the last block of each column tile
// combines them, all in one launch.
template <class T>
uint64_t reduce_max_by_column_workspace_bytes(const T* x, uint64_t rows, uint64_t cols);
template <class T>
void reduce_max_by_column_cuda(const T* x, uint64_t rows, uint64_t cols, T* out, void* workspace,
                               CUstream_st* stream);

template <class T>
void ordered_fold_cuda(const T* x, const FoldGeometry& g, T* out, CUstream_st* stream);
template <class T>
void reduce_axis_copy_cuda(const T* x, uint64_t n, T* out, CUstream_st* stream);

}  // namespace tlrt::kernels
