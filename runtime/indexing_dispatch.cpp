#include "runtime/indexing_dispatch.h"

#include <array>
#include <string>

#include "kernels/indexing/indexing.h"
#include "runtime/dispatch.h"
#include "runtime/shape_geometry.h"

namespace tlrt {
namespace {

// At most kParamIndices converted and validated indices in host memory (no allocation).
class ShortIndices {
 public:
  explicit ShortIndices(const HostIndices& idx) {
    if (idx.count != 0) idx.fill(words_.data(), 0, idx.count);
  }
  const uint32_t* data() const { return words_.data(); }

 private:
  std::array<uint32_t, kernels::kParamIndices> words_;
};

void require_nonempty_table(uint32_t size, const char* op) {
  if (size != 0) return;
  fail(ErrorKind::invalid_argument, op, std::string(op) + " needs a nonempty table (size = 0)");
}

}  // namespace

std::unique_ptr<Buffer> gather_rows(const Buffer& mat, uint64_t rows, uint64_t cols,
                                    const HostIndices& idx, const char* op) {
  require_native(mat, op);
  require_shape(mat, "mat", {rows, cols}, "[rows, cols]", op);
  const uint64_t k = idx.count;
  const uint64_t out_size = shape_size({k, cols}, "[k, cols]", op);
  idx.check();
  if (k <= kernels::kParamIndices) {
    // A short list stays in host memory: the CUDA launch carries it as kernel parameters.
    ShortIndices words(idx);
    std::unique_ptr<Buffer> out = Buffer::allocate(mat.backend(), mat.dtype(), out_size, op);
    on_backend(
        mat.backend(), mat.dtype(), op,
        [&](auto as) {
          using T = typename decltype(as)::type;
          kernels::gather_rows_ref(mat.as<T>(), rows, cols, words.data(), k, out->as<T>());
        },
        [&](auto as, CUstream_st* s) {
          using T = typename decltype(as)::type;
          kernels::gather_rows_param_cuda(mat.as<T>(), rows, cols, words.data(), k, out->as<T>(),
                                          s);
        });
    return out;
  }
  const IndexBlock block(mat.backend(), k, idx.fill, op);
  std::unique_ptr<Buffer> out = Buffer::allocate(mat.backend(), mat.dtype(), out_size, op);
  on_backend(
      mat.backend(), mat.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::gather_rows_ref(mat.as<T>(), rows, cols, block.data(), k, out->as<T>());
      },
      [&](auto as, CUstream_st* s) {
        using T = typename decltype(as)::type;
        kernels::gather_rows_cuda(mat.as<T>(), rows, cols, block.data(), k, out->as<T>(), s);
      });
  return out;
}

namespace {

// scatter_add_rows after its buffers passed their checks (scatter_add_rows' or scatter_add's own):
// the index list's check, then the fold.
std::unique_ptr<Buffer> scatter_rows_checked(const Buffer& mat, const Buffer& values, uint64_t rows,
                                             uint64_t cols, const HostIndices& idx,
                                             const char* op) {
  const uint64_t k = idx.count;
  idx.check();
  if (k <= kernels::kParamIndices) {
    // A short list stays in host memory: one kernel, its indices as parameters, no scratch.
    ShortIndices words(idx);
    std::unique_ptr<Buffer> out = Buffer::allocate(mat.backend(), mat.dtype(), rows * cols, op);
    on_backend(
        mat.backend(), mat.dtype(), op,
        [&](auto as) {
          using T = typename decltype(as)::type;
          kernels::scatter_add_rows_ref(mat.as<T>(), values.as<T>(), rows, cols, words.data(), k,
                                        out->as<T>());
        },
        [&](auto as, CUstream_st* s) {
          using T = typename decltype(as)::type;
          kernels::scatter_add_rows_param_cuda(mat.as<T>(), values.as<T>(), rows, cols,
                                               words.data(), k, out->as<T>(), s);
        });
    return out;
  }
  const IndexBlock block(mat.backend(), k, idx.fill, op);
  std::unique_ptr<Buffer> out = Buffer::allocate(mat.backend(), mat.dtype(), rows * cols, op);
  on_backend(
      mat.backend(), mat.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::scatter_add_rows_ref(mat.as<T>(), values.as<T>(), rows, cols, block.data(), k,
                                      out->as<T>());
      },
      [&](auto as, CUstream_st* s) {
        using T = typename decltype(as)::type;
        const bool folds = rows != 0 && cols != 0 && k != 0;
        Workspace scratch(mat.backend(),
                          folds ? kernels::ordered_scatter_workspace_bytes(rows, k) : 0, op);
        kernels::scatter_add_rows_cuda(mat.as<T>(), values.as<T>(), rows, cols, block.data(), k,
                                       out->as<T>(), scratch.data(), s);
      });
  return out;
}

}  // namespace

std::unique_ptr<Buffer> scatter_add_rows(const Buffer& mat, const Buffer& values, uint64_t rows,
                                         uint64_t cols, const HostIndices& idx, const char* op) {
  require_compatible(op, {&mat, &values}, SameSize::no);
  require_shape(mat, "mat", {rows, cols}, "[rows, cols]", op);
  require_shape(values, "values", {idx.count, cols}, "[k, cols]", op);
  return scatter_rows_checked(mat, values, rows, cols, idx, op);
}

std::unique_ptr<Buffer> scatter_add(const Buffer& x, const Buffer& values, uint64_t n,
                                    const HostIndices& idx, const char* op) {
  require_compatible(op, {&x, &values}, SameSize::no);
  require_size(x, "x", "n", n, op);
  require_size(values, "values", "k", idx.count, op);
  return scatter_rows_checked(x, values, n, 1, idx, op);
}

std::unique_ptr<Buffer> gather_at(const Buffer& table, uint32_t size, const Buffer& positions,
                                  uint64_t count, const char* op) {
  require_compatible(op, {&table, &positions}, SameSize::no);
  require_nonempty_table(size, op);  // the spec's first condition, before the sizes
  require_size(table, "table", "size", size, op);
  require_size(positions, "positions", "count", count, op);
  std::unique_ptr<Buffer> out = Buffer::allocate(table.backend(), table.dtype(), count, op);
  on_backend(
      table.backend(), table.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::gather_at_ref(table.as<T>(), size, positions.as<T>(), count, out->as<T>());
      },
      [&](auto as, CUstream_st* s) {
        using T = typename decltype(as)::type;
        kernels::gather_at_cuda(table.as<T>(), size, positions.as<T>(), count, out->as<T>(), s);
      });
  return out;
}

std::unique_ptr<Buffer> scatter_add_at(uint32_t size, const Buffer& positions, const Buffer& values,
                                       uint64_t count, const char* op) {
  require_compatible(op, {&positions, &values}, SameSize::no);
  require_nonempty_table(size, op);
  require_size(positions, "positions", "count", count, op);
  require_size(values, "values", "count", count, op);
  std::unique_ptr<Buffer> out = Buffer::allocate(values.backend(), values.dtype(), size, op);
  on_backend(
      values.backend(), values.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::scatter_add_at_ref(size, positions.as<T>(), values.as<T>(), count, out->as<T>());
      },
      [&](auto as, CUstream_st* s) {
        using T = typename decltype(as)::type;
        Workspace scratch(values.backend(), kernels::scatter_add_at_workspace_bytes(size, count),
                          op);
        kernels::scatter_add_at_cuda(size, positions.as<T>(), values.as<T>(), count, out->as<T>(),
                                     scratch.data(), s);
      });
  return out;
}

}  // namespace tlrt
