#include "runtime/shape_dispatch.h"

#include <string>

#include "kernels/shape/shape.h"
#include "runtime/dispatch.h"
#include "runtime/shape_geometry.h"

namespace tlrt {

std::unique_ptr<Buffer> concat1d(const Buffer& a, const Buffer& b, uint64_t n, uint64_t m,
                                 const char* op) {
  require_compatible(op, {&a, &b}, SameSize::no);
  require_size(a, "a", "n", n, op);
  require_size(b, "b", "m", m, op);
  std::unique_ptr<Buffer> out = Buffer::allocate(a.backend(), a.dtype(), checked_add(n, m, op), op);
  on_backend(
      a.backend(), a.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::concat1d_ref(a.as<T>(), n, b.as<T>(), m, out->as<T>());
      },
      [&](auto as, CUstream_st* s) {
        using T = typename decltype(as)::type;
        kernels::concat1d_cuda(a.as<T>(), n, b.as<T>(), m, out->as<T>(), s);
      });
  return out;
}

std::unique_ptr<Buffer> slice1d(const Buffer& x, uint64_t n, uint64_t start, uint64_t len,
                                const char* op) {
  require_native(x, op);
  require_size(x, "x", "n", n, op);
  if (start > n || len > n - start) {
    fail(ErrorKind::invalid_argument, op,
         "slice out of bounds (n = " + std::to_string(n) + ", start = " + std::to_string(start) +
             ", len = " + std::to_string(len) + ")");
  }
  std::unique_ptr<Buffer> out = Buffer::allocate(x.backend(), x.dtype(), len, op);
  on_backend(
      x.backend(), x.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::slice1d_ref(x.as<T>(), start, len, out->as<T>());
      },
      [&](auto as, CUstream_st* s) {
        using T = typename decltype(as)::type;
        kernels::slice1d_cuda(x.as<T>(), start, len, out->as<T>(), s);
      });
  return out;
}

std::unique_ptr<Buffer> broadcast_vec_to_cols(const Buffer& v, uint64_t rows, uint64_t cols,
                                              const char* op) {
  const uint64_t total = shape_size({rows, cols}, "[rows, cols]", op);
  require_native(v, op);
  require_size(v, "v", "rows", rows, op);
  std::unique_ptr<Buffer> out = Buffer::allocate(v.backend(), v.dtype(), total, op);
  if (out->size() == 0) return out;  // no payload, nothing to copy
  on_backend(
      v.backend(), v.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::broadcast_vec_to_cols_ref(v.as<T>(), rows, cols, out->as<T>());
      },
      [&](auto as, CUstream_st* s) {
        using T = typename decltype(as)::type;
        kernels::broadcast_vec_to_cols_cuda(v.as<T>(), rows, cols, out->as<T>(), s);
      });
  return out;
}

std::unique_ptr<Buffer> broadcast_to(const Buffer& x, const BroadcastGeometry& g, const char* op) {
  require_native(x, op);
  require_shape(x, "x", g.in_dims, "inDims", op);
  std::unique_ptr<Buffer> out = Buffer::allocate(x.backend(), x.dtype(), g.out_size, op);
  const std::vector<uint64_t> strides = g.read_strides();
  if (out->size() == 0) return out;  // no payload, nothing to copy
  on_backend(
      x.backend(), x.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::broadcast_to_ref(x.as<T>(), g.out_dims.data(), strides.data(), g.out_dims.size(),
                                  out->as<T>());
      },
      [&](auto as, CUstream_st* s) {
        using T = typename decltype(as)::type;
        kernels::broadcast_to_cuda(x.as<T>(), g.out_dims.data(), strides.data(), g.out_dims.size(),
                                   out->as<T>(), s);
      });
  return out;
}

SwapGeometry swap_geometry(const Dims& dims, uint64_t depth, const char* op) {
  shape_size(dims, "dims", op);
  if (depth + 1 >= dims.size()) {
    fail(ErrorKind::invalid_argument, op,
         "swapAdjacentAtDepth: invalid depth (depth = " + std::to_string(depth) +
             " for dims = " + dims_text(dims) + " of rank " + std::to_string(dims.size()) + ")");
  }
  SwapGeometry g;
  g.dims = dims;
  for (uint64_t j = 0; j < depth; ++j) g.outer *= dims[j];
  g.a = dims[depth];
  g.b = dims[depth + 1];
  for (uint64_t j = depth + 2; j < dims.size(); ++j) g.inner *= dims[j];
  return g;
}

std::unique_ptr<Buffer> swap_adjacent_at_depth(const Buffer& x, const SwapGeometry& g,
                                               const char* op) {
  require_native(x, op);
  require_shape(x, "x", g.dims, "dims", op);
  std::unique_ptr<Buffer> out = Buffer::allocate(x.backend(), x.dtype(), x.size(), op);
  if (out->size() == 0) return out;  // no payload, nothing to copy
  on_backend(
      x.backend(), x.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::swap_adjacent_ref(x.as<T>(), g.outer, g.a, g.b, g.inner, out->as<T>());
      },
      [&](auto as, CUstream_st* s) {
        using T = typename decltype(as)::type;
        kernels::swap_adjacent_cuda(x.as<T>(), g.outer, g.a, g.b, g.inner, out->as<T>(), s);
      });
  return out;
}

}  // namespace tlrt
