// Softmax (SPEC-ops 7; symbols-ops.tsv group softmax). hard_masked_softmax_by_row is pure: every
// failure (released buffer, non-buffer or encoded argument, mixed dtypes, sizes that disagree with
// rows * cols, out of memory, device error) panics. softmax_io is IO: every failure, malformed
// dims included, is an IO error (out of memory: resourceExhausted; otherwise otherError) carrying
// TorchLean's message ("LibTorch: expected dimension array", "LibTorch: dimension exceeds UInt32
// ABI", "LibTorch softmax: axis out of range", "LibTorch: dimension product overflow",
// "LibTorch: buffer size mismatch"), checked in TorchLean's order: the dims, the axis, the input
// buffer, the product, the size. Every argument is borrowed; every result is a fresh owned buffer
// of the input's dtype (an empty result has no payload).
#include <string>

#include "abi/boundary.h"
#include "runtime/softmax_dispatch.h"

using namespace tlrt::abi;

namespace {

// The dims of softmax_io: nat_array's decoding with TorchLean's IO messages.
tlrt::Dims io_dims(b_lean_obj_arg dims, const char* op) {
  if (lean_is_scalar(dims) || !lean_is_array(dims)) {
    tlrt::fail(tlrt::ErrorKind::invalid_argument, op, "LibTorch: expected dimension array");
  }
  try {
    return nat_array(dims, op, "dims");
  } catch (const tlrt::Error& e) {
    if (e.kind() != tlrt::ErrorKind::invalid_argument) throw;
    std::string detail = e.what();
    const std::string prefix = std::string("tlrt: ") + op + ": ";
    if (detail.compare(0, prefix.size(), prefix) == 0) detail.erase(0, prefix.size());
    tlrt::fail(tlrt::ErrorKind::invalid_argument, op,
               "LibTorch: dimension exceeds UInt32 ABI (" + detail + ")");
  }
}

}  // namespace

extern "C" {

// scores, mask borrowed; result owned: rows * cols values, per row the softmax over the entries
// whose mask is nonzero (NaN counts as nonzero), +0 elsewhere and in rows without such an entry.
lean_obj_res torchlean_cuda_buffer_hard_masked_softmax_by_row(b_lean_obj_arg scores,
                                                              b_lean_obj_arg mask, uint32_t rows,
                                                              uint32_t cols) {
  return pure_call([&] {
    const char* op = "hard_masked_softmax_by_row";
    tlrt::Buffer& s = live_buffer(scores, op);
    tlrt::Buffer& m = live_buffer(mask, op);
    return box(tlrt::hard_masked_softmax_by_row(s, m, rows, cols, op));
  });
}

// input, dims borrowed; IO result owning a fresh buffer: the softmax along axis of input viewed
// with dims (row-major), in the input's dtype; empty when a dim is 0.
lean_obj_res torchlean_cuda_buffer_softmax_io(b_lean_obj_arg input, b_lean_obj_arg dims,
                                              uint32_t axis) {
  return io_call([&] {
    const char* op = "softmax_io";
    const tlrt::Dims shape = io_dims(dims, op);
    tlrt::require_softmax_axis(shape, axis, op);
    tlrt::Buffer& x = live_buffer(input, op);
    return box(tlrt::softmax_along(x, shape, axis, op));
  });
}

}  // extern "C"
