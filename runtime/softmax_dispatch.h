// Softmax (SPEC-ops 7), dispatched to the backend that holds the input. Each returns a fresh buffer
// of the input's dtype on its backend, never an alias of an input, or throws tlrt::Error naming
// `op` with the sizes involved; nothing is counted on failure. Device work is queued on the
// device's stream (asynchronous).
#pragma once

#include <cstdint>
#include <memory>

#include "runtime/buffer.h"
#include "runtime/shape_geometry.h"

namespace tlrt {

// hard_masked_softmax_by_row: scores and mask both (rows, cols), one dtype (released operands:
// released_buffer; encoded operands, mixed dtypes, sizes that disagree with rows * cols:
// invalid_argument). rows * cols = 0 gives an empty buffer.
std::unique_ptr<Buffer> hard_masked_softmax_by_row(const Buffer& scores, const Buffer& mask,
                                                   uint64_t rows, uint64_t cols, const char* op);

// softmax_io's checks after the dims have been decoded, in the contract's order:
// "LibTorch softmax: axis out of range" (axis >= rank, so always for dims = []).
void require_softmax_axis(const Dims& dims, uint64_t axis, const char* op);

// The softmax of x viewed with dims along axis (require_softmax_axis has passed): a zero extent
// gives an empty buffer; then "LibTorch: dimension product overflow" (a product past int64) and
// "LibTorch: buffer size mismatch".
std::unique_ptr<Buffer> softmax_along(const Buffer& x, const Dims& dims, uint64_t axis,
                                      const char* op);

}  // namespace tlrt
