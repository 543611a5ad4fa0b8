// FakeMemory: a MemorySource for allocator tests that needs no GPU. It hands out addresses that are
// never dereferenced, enforces a capacity, counts every call, can be told to fail allocations, and
// records releases of pointers it does not hold (double release, wrong size) instead of throwing,
// because the allocator's destructor releases memory and must not be made to throw.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "runtime/caching_allocator.h"

namespace tlrt_test {

class FakeMemory : public tlrt::MemorySource {
 public:
  // Addresses start well away from zero; consecutive allocations are separated by a gap so that no
  // two segments are adjacent and a merge across segments would show up as a wrong size.
  static constexpr uintptr_t kBaseAddress = uintptr_t{1} << 40;
  static constexpr uintptr_t kGap = 4096;
  static constexpr uintptr_t kAlign = 512;

  explicit FakeMemory(size_t capacity_bytes) : capacity_(capacity_bytes) {}

  void* allocate(size_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex_);
    allocate_calls_ += 1;
    if (fail_next_ > 0) {
      fail_next_ -= 1;
      refused_ += 1;
      return nullptr;
    }
    if (fail_always_ || bytes > capacity_ - held_) {
      refused_ += 1;
      return nullptr;
    }
    const uintptr_t addr = next_address_;
    next_address_ += (bytes + kAlign - 1) / kAlign * kAlign + kGap;
    live_.emplace(addr, bytes);
    held_ += bytes;
    return reinterpret_cast<void*>(addr);
  }

  void release(void* ptr, size_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex_);
    release_calls_ += 1;
    auto it = live_.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == live_.end() || it->second != bytes) {
      bad_releases_ += 1;
      return;
    }
    held_ -= it->second;
    live_.erase(it);
  }

  void synchronize() override {
    std::lock_guard<std::mutex> lock(mutex_);
    synchronize_calls_ += 1;
  }

  void memory_info(size_t* free_bytes, size_t* total_bytes) override {
    std::lock_guard<std::mutex> lock(mutex_);
    *free_bytes = capacity_ - held_;
    *total_bytes = capacity_;
  }

  void fail_next(size_t count) {
    std::lock_guard<std::mutex> lock(mutex_);
    fail_next_ = count;
  }
  void set_fail_always(bool on) {
    std::lock_guard<std::mutex> lock(mutex_);
    fail_always_ = on;
  }

  size_t allocate_calls() const { return read(allocate_calls_); }
  size_t refused() const { return read(refused_); }  // allocate calls that returned nullptr
  size_t release_calls() const { return read(release_calls_); }
  size_t synchronize_calls() const { return read(synchronize_calls_); }
  size_t bad_releases() const { return read(bad_releases_); }
  size_t held_bytes() const { return read(held_); }
  size_t live_allocations() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_.size();
  }
  size_t capacity() const { return capacity_; }
  // Sizes of the allocations held, in address (= allocation) order.
  std::vector<size_t> held_sizes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<size_t> sizes;
    for (const auto& entry : live_) sizes.push_back(entry.second);
    return sizes;
  }

 private:
  size_t read(const size_t& field) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return field;
  }

  mutable std::mutex mutex_;
  const size_t capacity_;
  uintptr_t next_address_ = kBaseAddress;
  std::map<uintptr_t, size_t> live_;
  size_t held_ = 0;
  size_t fail_next_ = 0;
  bool fail_always_ = false;
  size_t allocate_calls_ = 0;
  size_t refused_ = 0;
  size_t release_calls_ = 0;
  size_t synchronize_calls_ = 0;
  size_t bad_releases_ = 0;
};

}  // namespace tlrt_test
