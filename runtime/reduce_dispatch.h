// Whole-buffer reductions (SPEC-ops 6.4), dispatched to the backend that holds the input. Each
// returns a fresh one-element buffer of the input's dtype on the input's backend, or throws
// tlrt::Error naming `op` (released input: released_buffer); nothing is counted on failure. Both
// backends compute the deterministic 256-lane tree whatever the determinism setting says: it is
// also a valid order for the non-deterministic contract. Device work is queued on the device's
// stream (asynchronous).
#pragma once

#include <memory>

#include "runtime/buffer.h"

namespace tlrt {

// Sum of all elements; empty -> +0.
std::unique_ptr<Buffer> reduce_sum(const Buffer& x, const char* op);
// fl(sum * fl(1 / fl(n))); empty -> NaN.
std::unique_ptr<Buffer> reduce_mean(const Buffer& x, const char* op);

}  // namespace tlrt
