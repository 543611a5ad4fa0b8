#include "runtime/index_upload.h"

#include <algorithm>
#include <vector>

#include "common/error.h"
#include "kernels/common/host_parallel.h"
#include "runtime/context.h"

#if TLRT_HAVE_CUDA
#include "runtime/cuda_device.h"
#endif

namespace tlrt {
namespace {

// Below this many entries per thread the threads cost more than they save (an entry is a pointer
// load and two compares).
constexpr uint64_t kEntriesPerThread = uint64_t{1} << 18;

uint64_t block_bytes(uint64_t count, const char* op) {
  return checked_mul(count, uint64_t{sizeof(uint32_t)}, op);
}

}  // namespace

void fill_indices_parallel(uint32_t* dst, uint64_t count, const IndexFill& fill) {
  // The lowest failing range's error is the one reported, as a serial pass would.
  kernels::parallel_ranges(
      count, kEntriesPerThread,
      [&](uint64_t first, uint64_t last) { fill(dst + first, first, last - first); }, 16);
}

IndexBlock::IndexBlock(Backend backend, uint64_t count, const IndexFill& fill, const char* op)
    : count_(count), block_(backend, block_bytes(count, op), op) {
  if (count == 0) return;
  uint32_t* words = static_cast<uint32_t*>(block_.data());
  if (backend == Backend::reference) {
    fill_indices_parallel(words, count, fill);
    return;
  }
#if TLRT_HAVE_CUDA
  const uint32_t device = selected_device();
  try {
    cuda::upload_staged(
        device, words, count * sizeof(uint32_t), [&](void* chunk, size_t offset, size_t length) {
          fill_indices_parallel(static_cast<uint32_t*>(chunk), length / sizeof(uint32_t),
                                [&](uint32_t* dst, uint64_t first, uint64_t n) {
                                  fill(dst, offset / sizeof(uint32_t) + first, n);
                                });
        });
  } catch (...) {
    // Chunks already queued may still be copying into the block: let them land before the block
    // goes back to the pool and the staging buffers to the next transfer.
    try {
      cuda::synchronize(device, op);
    } catch (...) {
    }
    throw;
  }
#else
  no_cuda_backend(op);
#endif
}

}  // namespace tlrt
