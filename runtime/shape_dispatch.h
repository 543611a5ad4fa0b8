// Shape ops (SPEC-ops 8), dispatched to the backend that holds the inputs. Each
// returns a fresh buffer of the inputs' dtype on their backend, never an alias of an input, or
// throws tlrt::Error naming `op` with the sizes involved (released input: released_buffer;
// encoded, mixed dtypes or backends, sizes that disagree with the arguments: invalid_argument);
// nothing is counted on failure. The results are byte copies of the inputs, bit-exact on both
// backends. Device work is queued on the device's stream (asynchronous).
#pragma once

#include <cstdint>
#include <memory>

#include "runtime/buffer.h"
#include "runtime/shape_geometry.h"

namespace tlrt {

// [a; b]: requires size(a) = n and size(b) = m; the result has n + m elements.
std::unique_ptr<Buffer> concat1d(const Buffer& a, const Buffer& b, uint64_t n, uint64_t m,
                                 const char* op);
// x[start, start + len): requires size(x) = n, start <= n and len <= n - start.
std::unique_ptr<Buffer> slice1d(const Buffer& x, uint64_t n, uint64_t start, uint64_t len,
                                const char* op);

// out[i, j] = v[i] for an output of shape [rows, cols]: checks prod([rows, cols]) for overflow,
// then size(v) = rows ("buffer size does not match shape").
std::unique_ptr<Buffer> broadcast_vec_to_cols(const Buffer& v, uint64_t rows, uint64_t cols,
                                              const char* op);

// x materialized through a validated axis map (broadcast_geometry): requires size(x) =
// prod(inDims); the result has prod(outDims) elements.
std::unique_ptr<Buffer> broadcast_to(const Buffer& x, const BroadcastGeometry& g, const char* op);

// dims viewed as [outer, a, b, inner] around axes depth and depth + 1.
struct SwapGeometry {
  Dims dims;
  uint64_t outer = 1, a = 1, b = 1, inner = 1;
};
// The checks before the buffer is looked at, in TorchLean's order: prod(dims) for overflow, then
// "swapAdjacentAtDepth: invalid depth" unless depth + 1 < rank.
SwapGeometry swap_geometry(const Dims& dims, uint64_t depth, const char* op);
// x of shape g.dims with the two axes exchanged, materialized row-major: requires size(x) =
// prod(dims).
std::unique_ptr<Buffer> swap_adjacent_at_depth(const Buffer& x, const SwapGeometry& g,
                                               const char* op);

}  // namespace tlrt
