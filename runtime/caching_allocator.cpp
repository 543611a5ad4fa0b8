// Caching allocator: best-fit sub-allocation of segments obtained from a MemorySource, with a small
// and a large pool, block splitting and merging, a memory-fraction cap and a synchronise-release-
// retry path on out of memory. The rules are in docs/ALLOCATOR.md.
#include "runtime/caching_allocator.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/error.h"

namespace tlrt {

namespace {

// Keeps freed nodes (set and map nodes, blocks) on per-size free lists, so that once the pools have
// reached their working size, allocate/free never touch the heap.
class NodeRecycler {
 public:
  NodeRecycler() = default;
  NodeRecycler(const NodeRecycler&) = delete;
  NodeRecycler& operator=(const NodeRecycler&) = delete;
  ~NodeRecycler() {
    for (void* chunk : chunks_) ::operator delete(chunk);
  }

  void* take(size_t bytes) {
    if (bytes > kMaxSlot) return ::operator new(bytes);
    const size_t cls = slot_class(bytes);
    if (FreeSlot* slot = free_[cls]) {
      free_[cls] = slot->next;
      return slot;
    }
    const size_t slot_bytes = cls * kGranule;
    if (chunk_left_ < slot_bytes) {
      chunks_.reserve(chunks_.size() + 1);  // push_back below must not throw and leak the chunk
      chunk_cursor_ = static_cast<char*>(::operator new(kChunkBytes));
      chunks_.push_back(chunk_cursor_);
      chunk_left_ = kChunkBytes;
    }
    void* slot = chunk_cursor_;
    chunk_cursor_ += slot_bytes;
    chunk_left_ -= slot_bytes;
    return slot;
  }

  void give(void* p, size_t bytes) noexcept {
    if (bytes > kMaxSlot) {
      ::operator delete(p);
      return;
    }
    const size_t cls = slot_class(bytes);
    FreeSlot* slot = static_cast<FreeSlot*>(p);
    slot->next = free_[cls];
    free_[cls] = slot;
  }

 private:
  struct FreeSlot {
    FreeSlot* next;
  };
  // Granule = operator new's alignment, so every slot is aligned as operator new would align it.
  static constexpr size_t kGranule = alignof(std::max_align_t);
  static constexpr size_t kMaxSlot = 256;
  static constexpr size_t kChunkBytes = 16384;
  static_assert(kGranule >= sizeof(FreeSlot), "a free slot must hold its link");

  static size_t slot_class(size_t bytes) {
    return bytes == 0 ? 1 : (bytes + kGranule - 1) / kGranule;
  }

  FreeSlot* free_[kMaxSlot / kGranule + 1] = {};
  std::vector<void*> chunks_;
  char* chunk_cursor_ = nullptr;
  size_t chunk_left_ = 0;
};

// Standard-allocator face of NodeRecycler for std::set and std::unordered_map.
template <typename T>
class RecyclingAllocator {
 public:
  using value_type = T;
  explicit RecyclingAllocator(NodeRecycler* recycler) noexcept : recycler_(recycler) {}
  template <typename U>
  RecyclingAllocator(const RecyclingAllocator<U>& other) noexcept : recycler_(other.recycler()) {}

  T* allocate(size_t n) { return static_cast<T*>(recycler_->take(n * sizeof(T))); }
  void deallocate(T* p, size_t n) noexcept { recycler_->give(p, n * sizeof(T)); }
  NodeRecycler* recycler() const noexcept { return recycler_; }

  template <typename U>
  bool operator==(const RecyclingAllocator<U>& other) const noexcept {
    return recycler_ == other.recycler();
  }
  template <typename U>
  bool operator!=(const RecyclingAllocator<U>& other) const noexcept {
    return recycler_ != other.recycler();
  }

 private:
  NodeRecycler* recycler_;
};

// A contiguous range of one segment. Blocks of a segment are chained in address order so that a
// freed block can find its neighbours; a segment is wholly free when its only block is free.
struct Block {
  uintptr_t addr;
  size_t size;
  size_t requested;  // unrounded request of a live block, 0 when free
  Block* prev;
  Block* next;
  bool small_pool;
  bool allocated;
};

struct BySizeThenAddress {
  bool operator()(const Block* a, const Block* b) const {
    return a->size != b->size ? a->size < b->size : a->addr < b->addr;
  }
};

using FreeBlocks = std::set<Block*, BySizeThenAddress, RecyclingAllocator<Block*>>;
using LiveBlocks =
    std::unordered_map<uintptr_t, Block*, std::hash<uintptr_t>, std::equal_to<uintptr_t>,
                       RecyclingAllocator<std::pair<const uintptr_t, Block*>>>;

// No source holds half of the address space; refusing larger requests up front keeps every
// rounding step below free of overflow.
constexpr size_t kMaxRequest = SIZE_MAX / 2;

enum class SegmentRefusal { none, cap, source };

}  // namespace

struct CachingAllocator::Impl {
  explicit Impl(MemorySource* src)
      : source(src),
        small_free(BySizeThenAddress{}, RecyclingAllocator<Block*>(&recycler)),
        large_free(BySizeThenAddress{}, RecyclingAllocator<Block*>(&recycler)),
        live(256, std::hash<uintptr_t>{}, std::equal_to<uintptr_t>{},
             RecyclingAllocator<std::pair<const uintptr_t, Block*>>(&recycler)) {}

  MemorySource* source;
  mutable std::mutex mutex;
  // Declared before the containers that draw nodes from it, so it is destroyed after them.
  NodeRecycler recycler;
  FreeBlocks small_free;
  FreeBlocks large_free;
  LiveBlocks live;
  AllocatorStats counters;  // cached_bytes and largest_cached_block are derived in stats()
  double fraction = 1.0;
  uint64_t cap = UINT64_MAX;
  bool caching = true;  // false: pass-through, one source allocation per request

  FreeBlocks& pool_of(const Block* b) { return b->small_pool ? small_free : large_free; }

  Block* new_block() { return new (recycler.take(sizeof(Block))) Block(); }
  void recycle(Block* b) { recycler.give(b, sizeof(Block)); }

  // Smallest free block of the pool that holds `rounded` bytes, removed from the pool.
  Block* take_best_fit(FreeBlocks& pool, size_t rounded) {
    Block key{};
    key.size = rounded;
    key.addr = 0;
    auto it = pool.lower_bound(&key);
    if (it == pool.end()) return nullptr;
    Block* b = *it;
    pool.erase(it);
    return b;
  }

  // Hands out the front of `b` and returns the tail to the pool when the split rule allows it.
  // Strong guarantee: when this throws, `b` and the pools are as they were.
  void* hand_out(Block* b, size_t rounded, size_t requested) {
    const size_t remainder = b->size - rounded;
    const bool split = b->small_pool ? remainder >= kRound : remainder > kLargeSplitRemainder;
    Block* tail = split ? new_block() : nullptr;
    bool in_live = false;
    try {
      live.emplace(b->addr, b);
      in_live = true;
      if (tail != nullptr) {
        tail->addr = b->addr + rounded;
        tail->size = remainder;
        tail->requested = 0;
        tail->small_pool = b->small_pool;
        tail->allocated = false;
        pool_of(tail).insert(tail);
      }
    } catch (...) {
      if (in_live) live.erase(b->addr);
      if (tail != nullptr) recycle(tail);
      throw;
    }
    if (tail != nullptr) {
      tail->prev = b;
      tail->next = b->next;
      if (b->next) b->next->prev = tail;
      b->next = tail;
      b->size = rounded;
    }
    b->allocated = true;
    b->requested = requested;
    counters.allocated_bytes += b->size;
    counters.requested_bytes += requested;
    counters.active_blocks += 1;
    if (counters.allocated_bytes > counters.peak_allocated_bytes) {
      counters.peak_allocated_bytes = counters.allocated_bytes;
    }
    return reinterpret_cast<void*>(b->addr);
  }

  // Returns a new segment as one free block not yet in any pool, or nullptr with the reason.
  Block* try_segment(size_t bytes, bool small_pool, SegmentRefusal* why) {
    if (counters.reserved_bytes > cap || bytes > cap - counters.reserved_bytes) {
      *why = SegmentRefusal::cap;
      return nullptr;
    }
    void* p = source->allocate(bytes);
    if (p == nullptr) {
      *why = SegmentRefusal::source;
      return nullptr;
    }
    Block* b = nullptr;
    try {
      b = new_block();
    } catch (...) {
      source->release(p, bytes);
      throw;
    }
    b->addr = reinterpret_cast<uintptr_t>(p);
    b->size = bytes;
    b->requested = 0;
    b->prev = nullptr;
    b->next = nullptr;
    b->small_pool = small_pool;
    b->allocated = false;
    counters.reserved_bytes += bytes;
    counters.segments += 1;
    counters.source_allocs += 1;
    if (counters.reserved_bytes > counters.peak_reserved_bytes) {
      counters.peak_reserved_bytes = counters.reserved_bytes;
    }
    return b;
  }

  // Returns one whole free segment (in no pool) to the source. The caller has synchronised the
  // source, so no queued work can still touch it.
  void release_segment(Block* b) {
    void* p = reinterpret_cast<void*>(b->addr);
    const size_t bytes = b->size;
    recycle(b);
    // Accounting first: if the source throws, the segment is gone from the pool either way.
    counters.reserved_bytes -= bytes;
    counters.segments -= 1;
    counters.source_frees += 1;
    source->release(p, bytes);
  }

  // Caller has synchronised the source, so no queued work can still touch these segments.
  void release_free_segments() {
    for (FreeBlocks* pool : {&small_free, &large_free}) {
      for (auto it = pool->begin(); it != pool->end();) {
        Block* b = *it;
        if (b->prev != nullptr || b->next != nullptr) {
          ++it;
          continue;
        }
        it = pool->erase(it);
        release_segment(b);
      }
    }
  }

  bool has_free_segment() const {
    for (const FreeBlocks* pool : {&small_free, &large_free}) {
      for (const Block* b : *pool) {
        if (b->prev == nullptr && b->next == nullptr) return true;
      }
    }
    return false;
  }

  [[noreturn]] void fail_out_of_memory(const char* op, size_t requested, size_t rounded,
                                       SegmentRefusal why) {
    counters.ooms += 1;
    std::string free_text = "unknown";
    try {
      size_t free_bytes = 0;
      size_t total_bytes = 0;
      source->memory_info(&free_bytes, &total_bytes);
      free_text = std::to_string(free_bytes);
    } catch (...) {
      // The out-of-memory report matters more than the free figure.
    }
    std::string detail = "out of memory: requested " + std::to_string(requested) +
                         " bytes (rounded " + std::to_string(rounded) + "), allocated " +
                         std::to_string(counters.allocated_bytes) + " bytes, reserved " +
                         std::to_string(counters.reserved_bytes) + " bytes, device free " +
                         free_text + " bytes, cap " +
                         (cap == UINT64_MAX ? std::string("none") : std::to_string(cap) + " bytes");
    switch (why) {
      case SegmentRefusal::cap:
        detail += " (the memory-fraction cap leaves no room)";
        break;
      case SegmentRefusal::source:
        detail += " (the memory source is full)";
        break;
      case SegmentRefusal::none:
        detail += " (request larger than any memory source)";
        break;
    }
    fail(ErrorKind::out_of_memory, op, detail);
  }

  // Standard segment; then, after synchronising and returning the cache, the standard segment
  // again; then a segment of exactly the rounded size, so that a request that fits under the cap
  // or in the source never fails because its segment class is larger than the request. A cap
  // refusal with nothing cached to return skips the retry: it would fail the same way, after a
  // needless device synchronisation.
  Block* new_segment(size_t requested, size_t rounded, bool small_pool, const char* op) {
    const size_t standard = segment_size(rounded);
    SegmentRefusal why = SegmentRefusal::none;
    if (Block* b = try_segment(standard, small_pool, &why)) return b;
    if (why == SegmentRefusal::source || has_free_segment()) {
      source->synchronize();
      release_free_segments();
      counters.retries += 1;
      if (Block* b = try_segment(standard, small_pool, &why)) return b;
    }
    if (rounded < standard) {
      if (Block* b = try_segment(rounded, small_pool, &why)) return b;
    }
    fail_out_of_memory(op, requested, rounded, why);
  }
};

CachingAllocator::CachingAllocator(MemorySource* source, bool caching) {
  if (source == nullptr) {
    fail(ErrorKind::invalid_argument, "CachingAllocator", "null memory source");
  }
  impl_.reset(new Impl(source));
  impl_->caching = caching;
}

bool CachingAllocator::caching() const {
  return impl_->caching;
}

bool CachingAllocator::caching_from_environment() {
  const char* v = std::getenv("TLRT_CACHING_ALLOCATOR");
  return v == nullptr || std::strcmp(v, "0") != 0;
}

CachingAllocator::~CachingAllocator() {
  try {
    if (impl_->has_free_segment()) {
      impl_->source->synchronize();
      impl_->release_free_segments();
    }
  } catch (...) {
    // Teardown: a failing source cannot be reported from a destructor.
  }
}

size_t CachingAllocator::round_size(size_t bytes) {
  if (bytes > SIZE_MAX - (kRound - 1)) {
    fail(ErrorKind::invalid_argument, "round_size", std::to_string(bytes) + " bytes overflow");
  }
  return (bytes + kRound - 1) / kRound * kRound;
}

size_t CachingAllocator::segment_size(size_t rounded) {
  if (rounded <= kSmallLimit) return kSmallSegment;
  if (rounded < kMediumLimit) return kMediumSegment;
  if (rounded > SIZE_MAX - (kLargeSegmentRound - 1)) {
    fail(ErrorKind::invalid_argument, "segment_size", std::to_string(rounded) + " bytes overflow");
  }
  return (rounded + kLargeSegmentRound - 1) / kLargeSegmentRound * kLargeSegmentRound;
}

void* CachingAllocator::allocate(size_t bytes, const char* op) {
  if (bytes == 0) return nullptr;
  if (op == nullptr) op = "allocate";
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (bytes > kMaxRequest) impl_->fail_out_of_memory(op, bytes, bytes, SegmentRefusal::none);
  const size_t rounded = round_size(bytes);
  const bool small_pool = rounded <= kSmallLimit;
  FreeBlocks& pool = small_pool ? impl_->small_free : impl_->large_free;
  Block* b = nullptr;
  if (impl_->caching) {
    b = impl_->take_best_fit(pool, rounded);
    if (b == nullptr) b = impl_->new_segment(bytes, rounded, small_pool, op);
  } else {
    // Pass-through: a segment of exactly the rounded size, so a tool like compute-sanitizer sees
    // every buffer as its own driver allocation.
    SegmentRefusal why = SegmentRefusal::none;
    b = impl_->try_segment(rounded, small_pool, &why);
    if (b == nullptr) {
      impl_->source->synchronize();
      b = impl_->try_segment(rounded, small_pool, &why);
      impl_->counters.retries += 1;
    }
    if (b == nullptr) impl_->fail_out_of_memory(op, bytes, rounded, why);
  }
  try {
    return impl_->hand_out(b, rounded, bytes);
  } catch (...) {
    // Bookkeeping ran out of host memory; the block goes back to its pool unchanged.
    pool.insert(b);
    throw;
  }
}

void CachingAllocator::free(void* ptr) {
  if (ptr == nullptr) return;
  Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.live.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == s.live.end()) {
    char text[32];
    std::snprintf(text, sizeof text, "%p", ptr);
    fail(ErrorKind::invalid_argument, "free",
         std::string("pointer ") + text +
             " was not handed out by this allocator, or was already freed");
  }
  Block* b = it->second;
  s.live.erase(it);
  s.counters.allocated_bytes -= b->size;
  s.counters.requested_bytes -= b->requested;
  s.counters.active_blocks -= 1;
  b->allocated = false;
  b->requested = 0;
  FreeBlocks& pool = s.pool_of(b);
  if (Block* prev = b->prev; prev != nullptr && !prev->allocated) {
    pool.erase(prev);
    prev->size += b->size;
    prev->next = b->next;
    if (b->next) b->next->prev = prev;
    s.recycle(b);
    b = prev;
  }
  if (Block* next = b->next; next != nullptr && !next->allocated) {
    pool.erase(next);
    b->size += next->size;
    b->next = next->next;
    if (next->next) next->next->prev = b;
    s.recycle(next);
  }
  if (!s.caching && b->prev == nullptr && b->next == nullptr) {
    // Pass-through: the whole segment goes back once no queued work can read it.
    s.source->synchronize();
    s.release_segment(b);
    return;
  }
  pool.insert(b);
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->source->synchronize();
  impl_->release_free_segments();
}

void CachingAllocator::set_memory_fraction(double fraction) {
  if (!std::isfinite(fraction) || !(fraction > 0.0) || fraction > 1.0) {
    fail(ErrorKind::invalid_argument, "set_memory_fraction",
         "fraction must be finite and in (0, 1], got " + std::to_string(fraction));
  }
  std::lock_guard<std::mutex> lock(impl_->mutex);
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  impl_->source->memory_info(&free_bytes, &total_bytes);
  // long double carries all 64 bits of the total on x86-64; the clamp covers a product rounded up.
  const long double product = static_cast<long double>(fraction) * total_bytes;
  uint64_t cap = static_cast<uint64_t>(std::floor(product));
  if (cap > total_bytes) cap = total_bytes;
  impl_->fraction = fraction;
  impl_->cap = cap;
}

double CachingAllocator::memory_fraction() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->fraction;
}

uint64_t CachingAllocator::cap_bytes() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->cap;
}

AllocatorStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  AllocatorStats out = impl_->counters;
  out.cached_bytes = out.reserved_bytes - out.allocated_bytes;
  uint64_t largest = 0;
  for (const FreeBlocks* pool : {&impl_->small_free, &impl_->large_free}) {
    if (!pool->empty() && (*pool->rbegin())->size > largest) largest = (*pool->rbegin())->size;
  }
  out.largest_cached_block = largest;
  return out;
}

}  // namespace tlrt
