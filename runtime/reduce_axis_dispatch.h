// Axis reductions (SPEC-ops 8), dispatched to the backend that holds the input. Each returns a
// fresh buffer of the input's dtype on its backend, never an alias of the input, or throws
// tlrt::Error naming `op` with the sizes involved (released input: released_buffer; encoded input,
// sizes that disagree with the shape arguments, shape products past int64, an invalid axis or axis
// map: invalid_argument); nothing is counted on failure. Device work is queued on the device's
// stream (asynchronous).
//
// reduce_sum_axis and reduce_from_broadcast always run the ordered column fold of SPEC-ops 8
// (out[c] = ((+0 + M[0, c]) + M[1, c]) + ...), which the contract requires with the deterministic
// setting on and admits with it off: one kernel, the same bits either way.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/buffer.h"
#include "runtime/shape_geometry.h"

namespace tlrt {

// (rows, cols) views: size(x) must be rows * cols.
std::unique_ptr<Buffer> reduce_sum_by_row(const Buffer& x, uint64_t rows, uint64_t cols,
                                          const char* op);
std::unique_ptr<Buffer> reduce_max_by_row(const Buffer& x, uint64_t rows, uint64_t cols,
                                          const char* op);
std::unique_ptr<Buffer> reduce_max_by_column(const Buffer& x, uint64_t rows, uint64_t cols,
                                             const char* op);

// Sum over `axis` of x viewed with `dims`; dims = [] gives a copy of the single element.
std::unique_ptr<Buffer> reduce_sum_axis(const Buffer& x, const Dims& dims, uint64_t axis,
                                        const char* op);

// The adjoint of broadcast_to: a result of shape geometry.in_dims, from a checked geometry
// (broadcast_geometry) ...
std::unique_ptr<Buffer> reduce_from_broadcast(const Buffer& dout, const BroadcastGeometry& geometry,
                                              const char* op);
// ... or from the shapes and the map, checked first (the shapes move into the geometry).
std::unique_ptr<Buffer> reduce_from_broadcast(const Buffer& dout, Dims in_dims, Dims out_dims,
                                              const std::vector<uint64_t>& axis_map,
                                              const char* op);

}  // namespace tlrt
