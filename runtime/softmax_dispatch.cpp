#include "runtime/softmax_dispatch.h"

#include <algorithm>
#include <limits>
#include <string>

#include "kernels/softmax/softmax.h"
#include "runtime/dispatch.h"

namespace tlrt {

std::unique_ptr<Buffer> hard_masked_softmax_by_row(const Buffer& scores, const Buffer& mask,
                                                   uint64_t rows, uint64_t cols, const char* op) {
  require_compatible(op, {&scores, &mask}, SameSize::no);
  require_shape(scores, "scores", Dims{rows, cols}, "[rows, cols]", op);
  require_shape(mask, "mask", Dims{rows, cols}, "[rows, cols]", op);
  const uint64_t n = rows * cols;  // checked by require_shape
  std::unique_ptr<Buffer> out = Buffer::allocate(scores.backend(), scores.dtype(), n, op);
  if (n == 0) return out;
  on_backend(
      scores.backend(), scores.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::softmax_rows_ref(scores.as<T>(), mask.as<T>(), rows, cols, out->as<T>());
      },
      [&](auto as, CUstream_st* s) {
        using T = typename decltype(as)::type;
        kernels::softmax_rows_cuda(scores.as<T>(), mask.as<T>(), rows, cols, out->as<T>(), s);
      });
  return out;
}

void require_softmax_axis(const Dims& dims, uint64_t axis, const char* op) {
  if (axis >= dims.size()) {
    fail(ErrorKind::invalid_argument, op,
         "LibTorch softmax: axis out of range (axis = " + std::to_string(axis) +
             " but dims = " + dims_text(dims) + " has rank " + std::to_string(dims.size()) + ")");
  }
}

std::unique_ptr<Buffer> softmax_along(const Buffer& x, const Dims& dims, uint64_t axis,
                                      const char* op) {
  require_native(x, op);
  // A zero extent makes the volume 0 without the overflow check (the contract's order).
  uint64_t volume = 0;
  if (std::find(dims.begin(), dims.end(), uint64_t{0}) == dims.end()) {
    volume = 1;
    for (uint64_t d : dims) {
      if (volume > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / d) {
        fail(ErrorKind::invalid_argument, op,
             "LibTorch: dimension product overflow (dims = " + dims_text(dims) + ")");
      }
      volume *= d;
    }
  }
  if (x.size() != volume) {
    fail(ErrorKind::invalid_argument, op,
         "LibTorch: buffer size mismatch (size(input) = " + std::to_string(x.size()) +
             " but prod(dims) = " + std::to_string(volume) + " for dims = " + dims_text(dims) +
             ")");
  }
  std::unique_ptr<Buffer> out = Buffer::allocate(x.backend(), x.dtype(), volume, op);
  if (volume == 0) return out;
  uint64_t outer = 1, inner = 1;
  for (size_t k = 0; k < axis; ++k) outer *= dims[k];
  for (size_t k = axis + 1; k < dims.size(); ++k) inner *= dims[k];
  const uint64_t len = dims[axis];
  on_backend(
      x.backend(), x.dtype(), op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::softmax_axis_ref(x.as<T>(), outer, len, inner, out->as<T>());
      },
      [&](auto as, CUstream_st* s) {
        using T = typename decltype(as)::type;
        if (inner == 1) {
          kernels::softmax_rows_cuda<T>(x.as<T>(), nullptr, outer, len, out->as<T>(), s);
        } else {
          kernels::softmax_axis_cuda(x.as<T>(), outer, len, inner, out->as<T>(), s);
        }
      });
  return out;
}

}  // namespace tlrt
