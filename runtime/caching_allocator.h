// Caching allocator over one memory source (a CUDA device, host memory for the reference backend,
// or a fake arena in tests). See docs/ALLOCATOR.md for the size classes, the split rules and the
// out-of-memory procedure.
//
// The runtime uses one stream per device, so a block freed by the host may be handed to the next
// allocation at once: every later use of it is queued behind every earlier use on that stream.
// Memory goes back to the source only in empty_cache / the out-of-memory path, after the source has
// synchronised, so no queued kernel can still read it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace tlrt {

// What sits under the pool. Implementations: CUDA device memory (runtime/cuda_device.cpp), host
// memory (runtime/host_memory.cpp), and FakeMemory in tests.
class MemorySource {
 public:
  virtual ~MemorySource() = default;
  // Returns nullptr when the source is out of memory; throws tlrt::Error for any other failure.
  virtual void* allocate(size_t bytes) = 0;
  virtual void release(void* ptr, size_t bytes) = 0;
  // Waits until no queued work can touch any block (cudaStreamSynchronize for CUDA).
  virtual void synchronize() = 0;
  virtual void memory_info(size_t* free_bytes, size_t* total_bytes) = 0;
};

struct AllocatorStats {
  uint64_t allocated_bytes = 0;       // bytes of blocks handed out (rounded sizes)
  uint64_t reserved_bytes = 0;        // bytes obtained from the source (allocated + cached)
  uint64_t peak_allocated_bytes = 0;  // process-lifetime high-water marks, never reset
  uint64_t peak_reserved_bytes = 0;
  uint64_t requested_bytes = 0;  // bytes asked for by live allocations (unrounded)
  uint64_t active_blocks = 0;    // live allocations
  uint64_t segments = 0;         // source allocations currently held
  uint64_t source_allocs = 0;    // MemorySource::allocate calls that succeeded
  uint64_t source_frees = 0;     // MemorySource::release calls
  uint64_t retries = 0;          // out-of-memory retries after freeing the cache
  uint64_t ooms = 0;             // allocations that failed for good
  uint64_t cached_bytes = 0;     // reserved - allocated
  uint64_t largest_cached_block = 0;
};

class CachingAllocator {
 public:
  // Requests are rounded up to kRound bytes; requests up to kSmallLimit use the small pool.
  static constexpr size_t kRound = 512;
  static constexpr size_t kSmallLimit = size_t{1} << 20;         // 1 MiB
  static constexpr size_t kSmallSegment = size_t{2} << 20;       // 2 MiB
  static constexpr size_t kMediumLimit = size_t{10} << 20;       // 10 MiB
  static constexpr size_t kMediumSegment = size_t{20} << 20;     // 20 MiB
  static constexpr size_t kLargeSegmentRound = size_t{2} << 20;  // 2 MiB
  // Split a large block only when more than 1 MiB would be left.
  static constexpr size_t kLargeSplitRemainder = size_t{1} << 20;

  // caching = false is the pass-through mode: every request is its own source allocation, and a
  // free synchronises the source and returns it at once (for memory checkers; slow).
  explicit CachingAllocator(MemorySource* source, bool caching = true);
  ~CachingAllocator();  // releases every cached segment; live blocks are leaked (process teardown)
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // Returns nullptr for bytes == 0. Throws tlrt::Error(out_of_memory) naming `op` with requested,
  // allocated, reserved, free and cap bytes when the request cannot be met, even after
  // synchronising and returning every unused cached segment to the source once.
  void* allocate(size_t bytes, const char* op);
  // Null is a no-op. A pointer this allocator did not hand out throws invalid_argument.
  void free(void* ptr);

  // Returns every wholly free segment to the source (after synchronising). Allocated bytes and
  // peaks are unchanged; reserved bytes never grow.
  void empty_cache();

  // Cap on reserved bytes: floor(fraction x total) of the source. fraction in (0, 1]; other values
  // throw invalid_argument. Does not free or reserve anything.
  void set_memory_fraction(double fraction);
  double memory_fraction() const;  // 1.0 until set
  uint64_t cap_bytes() const;      // UINT64_MAX when never set

  AllocatorStats stats() const;
  bool caching() const;
  // false when TLRT_CACHING_ALLOCATOR is "0": the runtime then builds pass-through allocators.
  static bool caching_from_environment();
  static size_t round_size(size_t bytes);
  static size_t segment_size(size_t rounded);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tlrt
