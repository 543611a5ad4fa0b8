// One-dimensional shape ops (SPEC-ops 8), dispatched to the backend that holds the inputs. Each
// returns a fresh buffer of the inputs' dtype on their backend, never an alias of an input, or
// throws tlrt::Error naming `op` with the sizes involved (released input: released_buffer;
// encoded, mixed dtypes or backends, sizes that disagree with the arguments: invalid_argument);
// nothing is counted on failure. The results are byte copies of the inputs, bit-exact on both
// backends. Device work is queued on the device's stream (asynchronous).
#pragma once

#include <cstdint>
#include <memory>

#include "runtime/buffer.h"

namespace tlrt {

// [a; b]: requires size(a) = n and size(b) = m; the result has n + m elements.
std::unique_ptr<Buffer> concat1d(const Buffer& a, const Buffer& b, uint64_t n, uint64_t m,
                                 const char* op);
// x[start, start + len): requires size(x) = n, start <= n and len <= n - start.
std::unique_ptr<Buffer> slice1d(const Buffer& x, uint64_t n, uint64_t start, uint64_t len,
                                const char* op);

}  // namespace tlrt
