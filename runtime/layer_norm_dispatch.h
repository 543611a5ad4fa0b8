// Layer normalization (SPEC-ops 9), dispatched to the backend that holds the operands. Both ops
// return three fresh buffers of the operands' dtype on their backend, never aliases of an input,
// or throw tlrt::Error naming `op` with the sizes involved: rows = 0 or cols = 0 (the contract's
// "layerNormFwd: dimensions must be positive" / "layerNormBwd: dimensions must be positive"),
// a released operand (released_buffer), an encoded operand, mixed dtypes, or a buffer whose size
// disagrees with rows and cols (invalid_argument); nothing is counted on failure. Device work is
// queued on the device's stream (asynchronous).
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "runtime/buffer.h"

namespace tlrt {

using LayerNormResults = std::array<std::unique_ptr<Buffer>, 3>;

// The checks that come before any operand is looked at (TorchLean's order): rows > 0 and
// cols > 0, else "<what>: dimensions must be positive" with what = layerNormFwd / layerNormBwd.
// layer_norm_fwd and layer_norm_bwd run them first too.
void layer_norm_dims(uint64_t rows, uint64_t cols, const char* what, const char* op);

// (y, xhat, invStd): x of rows*cols, gamma and beta of cols; invCols is ignored by the contract
// and is not an argument here; epsilon is used unrounded.
LayerNormResults layer_norm_fwd(const Buffer& x, const Buffer& gamma, const Buffer& beta,
                                uint64_t rows, uint64_t cols, double epsilon, const char* op);

// (dx, dGamma, dBeta): dout and xhat of rows*cols, invStd of rows, gamma of cols; colsScale and
// invCols are rounded to the dtype here.
LayerNormResults layer_norm_bwd(const Buffer& dout, const Buffer& xhat, const Buffer& inv_std,
                                const Buffer& gamma, uint64_t rows, uint64_t cols,
                                double cols_scale, double inv_cols, const char* op);

}  // namespace tlrt
