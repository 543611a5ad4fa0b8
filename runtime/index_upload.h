// Host index lists (SPEC-ops 11: Lean `Array Nat` indices) turned into a block of uint32 words on
// a backend, for the launchers of the indexing family. The Lean decoding stays at the boundary
// (abi/): it hands over a fill callback that converts and validates a range of entries. The runtime
// runs it on several threads for large lists, straight into pinned staging on the CUDA backend
// (never a pageable copy) or into the reference allocator's host memory.
#pragma once

#include <cstdint>
#include <functional>

#include "runtime/buffer.h"
#include "runtime/dispatch.h"

namespace tlrt {

// Writes entries [first, first + count) of the list to dst[0, count); throws tlrt::Error naming the
// op for an invalid entry. Called concurrently on disjoint ranges.
using IndexFill = std::function<void(uint32_t* dst, uint64_t first, uint64_t count)>;

// `count` converted indices in a block of the backend's caching allocator, held for one call. The
// constructor returns once every entry is validated and (CUDA) the words are on the device; a
// failing entry throws after everything taken is returned (a partially written device block is
// never read: it is freed, and its copies are waited for, before the error leaves).
class IndexBlock {
 public:
  IndexBlock(Backend backend, uint64_t count, const IndexFill& fill, const char* op);
  IndexBlock(const IndexBlock&) = delete;
  IndexBlock& operator=(const IndexBlock&) = delete;

  const uint32_t* data() const { return static_cast<const uint32_t*>(block_.data()); }
  uint64_t size() const { return count_; }

 private:
  uint64_t count_;
  Workspace block_;
};

// Runs fill over [0, count) into dst (host memory), on several threads when the list is large.
void fill_indices_parallel(uint32_t* dst, uint64_t count, const IndexFill& fill);

}  // namespace tlrt
