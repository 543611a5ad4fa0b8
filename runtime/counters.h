// Ownership counters of SPEC-runtime section 2.5: payload bytes and wrapper objects, each with
// live / peak / created / retired. Relaxed atomics; peaks are never reset. These are logical
// ownership counts, not device memory (the allocator keeps its own statistics).
#pragma once

#include <atomic>
#include <cstdint>

namespace tlrt {

class OwnershipCounter {
 public:
  void add(uint64_t amount) {
    created_.fetch_add(1, std::memory_order_relaxed);
    uint64_t live = live_.fetch_add(amount, std::memory_order_relaxed) + amount;
    uint64_t peak = peak_.load(std::memory_order_relaxed);
    while (live > peak && !peak_.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
    }
  }
  void remove(uint64_t amount) {
    retired_.fetch_add(1, std::memory_order_relaxed);
    live_.fetch_sub(amount, std::memory_order_relaxed);
  }
  uint64_t live() const { return live_.load(std::memory_order_relaxed); }
  uint64_t peak() const { return peak_.load(std::memory_order_relaxed); }
  uint64_t created() const { return created_.load(std::memory_order_relaxed); }
  uint64_t retired() const { return retired_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> live_{0}, peak_{0}, created_{0}, retired_{0};
};

// Payload bytes: moved on attaching / retiring a nonempty payload.
OwnershipCounter& payload_counter();
// Wrapper objects: moved on wrapping a record / finalising a wrapper.
OwnershipCounter& wrapper_counter();

}  // namespace tlrt
