#include "runtime/index_upload.h"

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "common/error.h"
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
  if (count == 0) return;
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const uint64_t threads = std::min<uint64_t>({16, hw, count / kEntriesPerThread});
  if (threads <= 1) {
    fill(dst, 0, count);
    return;
  }
  const uint64_t per = (count + threads - 1) / threads;
  std::mutex failure_mutex;
  std::exception_ptr failure;
  uint64_t failure_first = UINT64_MAX;  // the lowest failing range reports, as a serial pass would
  auto run = [&](uint64_t first) {
    try {
      fill(dst + first, first, std::min(per, count - first));
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (first < failure_first) {
        failure_first = first;
        failure = std::current_exception();
      }
    }
  };
  std::vector<std::thread> workers;
  workers.reserve(threads - 1);
  try {
    for (uint64_t t = 1; t < threads && t * per < count; ++t) workers.emplace_back(run, t * per);
  } catch (...) {
    // A thread that cannot be started: the remaining ranges run here.
    for (std::thread& w : workers) w.join();
    for (uint64_t first = workers.size() * per + per; first < count; first += per) run(first);
    run(0);
    if (failure) std::rethrow_exception(failure);
    return;
  }
  run(0);
  for (std::thread& w : workers) w.join();
  if (failure) std::rethrow_exception(failure);
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
