#include "runtime/reduce_axis_dispatch.h"

#include <cstddef>
#include <string>
#include <utility>

#include "kernels/reduce_axis/reduce_axis.h"
#include "runtime/dispatch.h"

namespace tlrt {
namespace {

using kernels::FoldAxes;
using kernels::FoldGeometry;

enum class Matrix { sum_by_row, max_by_row, max_by_column };

std::unique_ptr<Buffer> matrix_reduction(const Buffer& x, uint64_t rows, uint64_t cols, Matrix kind,
                                         const char* op) {
  require_native(x, op);
  require_shape(x, "x", Dims{rows, cols}, "[rows, cols]", op);
  const uint64_t n = kind == Matrix::max_by_column ? cols : rows;
  std::unique_ptr<Buffer> out = Buffer::allocate(x.backend(), x.dtype(), n, op);
  on_backend(
      x.backend(), x.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        if (kind == Matrix::sum_by_row) {
          kernels::reduce_sum_by_row_ref(x.as<T>(), rows, cols, out->as<T>());
        } else if (kind == Matrix::max_by_row) {
          kernels::reduce_max_by_row_ref(x.as<T>(), rows, cols, out->as<T>());
        } else {
          kernels::reduce_max_by_column_ref(x.as<T>(), rows, cols, out->as<T>());
        }
      },
      [&](auto as, CUstream_st* s) {
        using T = typename decltype(as)::type;
        if (kind == Matrix::sum_by_row) {
          kernels::reduce_sum_by_row_cuda(x.as<T>(), rows, cols, out->as<T>(), s);
        } else if (kind == Matrix::max_by_row) {
          kernels::reduce_max_by_row_cuda(x.as<T>(), rows, cols, out->as<T>(), s);
        } else {
          const bool work = rows != 0 && cols != 0;
          Workspace workspace(
              x.backend(),
              work ? kernels::reduce_max_by_column_workspace_bytes(x.as<T>(), rows, cols) : 0, op);
          kernels::reduce_max_by_column_cuda(x.as<T>(), rows, cols, out->as<T>(), workspace.data(),
                                             s);
        }
      });
  return out;
}

// One side of a fold under construction: (extent, stride) pairs in row-major order.
using AxisList = std::pmr::vector<std::pair<uint64_t, uint64_t>>;

// Drops extent-1 axes and merges neighbours that walk memory as one axis (the outer stride is
// the inner extent times the inner stride); the index order, and so the fold order and the output
// order, is unchanged. An extent of 0 makes the count 0.
FoldAxes canonical_axes(const AxisList& list, uint64_t& count) {
  FoldAxes axes;
  count = 1;
  for (const auto& [extent, stride] : list) {
    count *= extent;  // the products were checked by the shape validation
    if (extent == 1) continue;
    // Every kept extent is >= 2 and their product is < 2^63 (or an extent is 0): at most 62 axes
    // before a zero extent, which empties the result below.
    if (axes.rank > 0 && axes.stride[axes.rank - 1] == extent * stride) {
      axes.extent[axes.rank - 1] *= extent;
      axes.stride[axes.rank - 1] = stride;
    } else if (axes.rank < kernels::kFoldMaxAxes) {
      axes.extent[axes.rank] = extent;
      axes.stride[axes.rank] = stride;
      ++axes.rank;
    }
  }
  if (count == 0) axes = FoldAxes{};
  return axes;
}

std::unique_ptr<Buffer> ordered_fold(const Buffer& x, const AxisList& rows, const AxisList& cols,
                                     const char* op) {
  FoldGeometry g;
  g.rows = canonical_axes(rows, g.row_count);
  g.cols = canonical_axes(cols, g.col_count);
  std::unique_ptr<Buffer> out = Buffer::allocate(x.backend(), x.dtype(), g.col_count, op);
  on_backend(
      x.backend(), x.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::ordered_fold_ref(x.as<T>(), g, out->as<T>());
      },
      [&](auto as, CUstream_st* s) {
        using T = typename decltype(as)::type;
        kernels::ordered_fold_cuda(x.as<T>(), g, out->as<T>(), s);
      });
  return out;
}

// Row-major element strides of dims.
std::pmr::vector<uint64_t> strides_of(const Dims& dims, PlanArena& arena) {
  std::pmr::vector<uint64_t> strides(dims.size(), 1, arena.get());
  for (size_t k = dims.size(); k-- > 1;) strides[k - 1] = strides[k] * dims[k];
  return strides;
}

}  // namespace

std::unique_ptr<Buffer> reduce_sum_by_row(const Buffer& x, uint64_t rows, uint64_t cols,
                                          const char* op) {
  return matrix_reduction(x, rows, cols, Matrix::sum_by_row, op);
}

std::unique_ptr<Buffer> reduce_max_by_row(const Buffer& x, uint64_t rows, uint64_t cols,
                                          const char* op) {
  return matrix_reduction(x, rows, cols, Matrix::max_by_row, op);
}

std::unique_ptr<Buffer> reduce_max_by_column(const Buffer& x, uint64_t rows, uint64_t cols,
                                             const char* op) {
  return matrix_reduction(x, rows, cols, Matrix::max_by_column, op);
}

std::unique_ptr<Buffer> reduce_sum_axis(const Buffer& x, const Dims& dims, uint64_t axis,
                                        const char* op) {
  require_native(x, op);
  require_shape(x, "x", dims, "dims", op);
  // dims = []: a copy of the single element, bits unchanged (the rank check follows, as in the
  // contract's reference).
  if (dims.empty()) {
    std::unique_ptr<Buffer> out = Buffer::allocate(x.backend(), x.dtype(), x.size(), op);
    on_backend(
        x.backend(), x.dtype(), op,
        [&](auto as) {
          using T = typename decltype(as)::type;
          kernels::reduce_axis_copy_ref(x.as<T>(), x.size(), out->as<T>());
        },
        [&](auto as, CUstream_st* s) {
          using T = typename decltype(as)::type;
          kernels::reduce_axis_copy_cuda(x.as<T>(), x.size(), out->as<T>(), s);
        });
    return out;
  }
  if (axis >= dims.size()) {
    fail(ErrorKind::invalid_argument, op,
         "reduceSumAxis: invalid axis (axis = " + std::to_string(axis) +
             " but dims = " + dims_text(dims) + " has rank " + std::to_string(dims.size()) + ")");
  }
  // The output shape, dims without axis, fits whenever prod(dims) is nonzero (it divides it); a
  // zero extent makes prod(dims) 0 however large the others are, so then it is checked on its own.
  if (x.size() == 0) {
    Dims out_dims = dims;
    out_dims.erase(out_dims.begin() + static_cast<std::ptrdiff_t>(axis));
    shape_size(out_dims, "dims without axis", op);
  }
  PlanArena arena;
  const std::pmr::vector<uint64_t> strides = strides_of(dims, arena);
  AxisList rows({{dims[axis], strides[axis]}}, arena.get());
  AxisList cols(arena.get());
  cols.reserve(dims.size());
  for (size_t k = 0; k < dims.size(); ++k) {
    if (k != axis) cols.emplace_back(dims[k], strides[k]);
  }
  return ordered_fold(x, rows, cols, op);
}

std::unique_ptr<Buffer> reduce_from_broadcast(const Buffer& dout, Dims in_dims, Dims out_dims,
                                              const std::vector<uint64_t>& axis_map,
                                              const char* op) {
  return reduce_from_broadcast(
      dout, broadcast_geometry(std::move(in_dims), std::move(out_dims), axis_map, op), op);
}

std::unique_ptr<Buffer> reduce_from_broadcast(const Buffer& dout, const BroadcastGeometry& geometry,
                                              const char* op) {
  require_native(dout, op);
  const Dims& outs = geometry.out_dims;
  require_shape(dout, "dOut", outs, "outDims", op);
  PlanArena arena;
  const std::pmr::vector<uint64_t> strides = strides_of(outs, arena);
  // Rows: the reduced output axes in output order. Columns: the input axes in input order, each
  // walking the output axis that reads it (an extent-1 input axis is a column axis of extent 1).
  AxisList rows(arena.get());
  AxisList cols(geometry.in_dims.size(), {1, 0}, arena.get());
  for (size_t j = 0; j < outs.size(); ++j) {
    if (geometry.reduced(j)) {
      rows.emplace_back(outs[j], strides[j]);
    } else {
      cols[static_cast<size_t>(geometry.source[j])] = {outs[j], strides[j]};
    }
  }
  return ordered_fold(dout, rows, cols, op);
}

}  // namespace tlrt
