// Bounded LRU cache of library plans (cuFFT plans, cuDNN execution plans, ...) keyed by what the
// family needs to rebuild them. A plan may still be read by work queued on a stream after the host
// has moved on, so eviction never destroys a plan at once: the use that queued the work marks a
// fence after it, an evicted plan waits on a retired list until its fence is done, and teardown
// waits for every fence before destroying. This is the allocator's stream-order rule applied to
// plans. The fences are abstract (PlanFences) so the cache's logic is tested without a GPU; the
// CUDA implementation (events on the device's stream) and the per-device caches registered with
// the device's teardown live in runtime/cuda_libraries.h.
//
// Usage contract, per call of a family:
//
//   auto lease = cache.acquire(key, [&](const Key& k) { return make_plan(k); });
//   launch_with(*lease);   // queue the work that reads the plan, on the fences' stream
//   lease.used();          // fence after that work; the lease ends (its destructor does the same)
//
// Keys are hashed: Key needs operator== and a hash (std::hash<Key> or the Hash argument). The
// create callback runs without the cache's lock, so a slow creation (cuFFT loading its kernels,
// cuDNN building a graph) holds up no caller of another key; a caller of the same key waits for
// that creation's plan instead of making a second one, and makes its own if that creation throws.
// Creations of different keys may therefore run at once in different threads: a library that
// forbids that is serialised by its family. The destroy callback runs under the lock. Neither
// callback may use the same cache.
//
// No CUDA header here: this file is compiled in every build, and plan_cache_counters() reports
// zeros where no cache exists (a build without CUDA included).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

namespace tlrt {

struct PlanCacheCounters {
  uint64_t hits = 0;       // acquire found the key
  uint64_t misses = 0;     // acquire did not find it (a plan is created unless create throws)
  uint64_t creates = 0;    // plans created
  uint64_t evictions = 0;  // plans pushed out by the capacity bound
  uint64_t destroyed = 0;  // plans destroyed (after their fence)
  uint64_t live = 0;       // plans created and not destroyed: cached plus retired ones
};

// Sum over every plan cache of every device since the process started; caches that no longer
// exist keep contributing what they counted. All zeros when no cache was ever made.
PlanCacheCounters plan_cache_counters();

// TLRT_PLAN_CACHE_CAPACITY when it is a positive decimal integer, else 64. Read at each call.
size_t plan_cache_capacity_from_environment();

// Marks of queued work on one in-order stream. A later token covers every earlier one, so a plan
// keeps only the token of its last use.
class PlanFences {
 public:
  using Token = uint64_t;  // record() never returns 0

  virtual ~PlanFences() = default;
  // A token that is done once everything queued so far has finished. Throws on failure.
  virtual Token record() = 0;
  // Non-blocking; false while the work may still run, and for a token it cannot query.
  virtual bool is_done(Token token) = 0;
  // Blocks until the token is done. Throws on failure.
  virtual void wait(Token token) = 0;
  // The token will not be asked about again (its event may be reused).
  virtual void release(Token token) = 0;
};

// The part of a plan cache that is independent of Key and Plan: capacity, counters, the lock, and
// membership of the process-wide registry that plan_cache_counters() sums.
class PlanCacheBase {
 public:
  PlanCacheBase(const PlanCacheBase&) = delete;
  PlanCacheBase& operator=(const PlanCacheBase&) = delete;

  PlanCacheCounters counters() const;
  size_t capacity() const { return capacity_; }

  // Waits for the fence of every plan not leased at the moment and destroys it (device teardown).
  // The cache stays usable afterwards.
  virtual void release_all() = 0;

 protected:
  // Throws invalid_argument for capacity 0.
  explicit PlanCacheBase(size_t capacity);
  // Leaves the registry; what the cache counted stays in plan_cache_counters().
  virtual ~PlanCacheBase();

  mutable std::mutex mutex_;  // guards counts_ and the derived cache's lists
  PlanCacheCounters counts_;

 private:
  const size_t capacity_;
};

template <class Key, class Plan, class Hash = std::hash<Key>>
class PlanCache final : public PlanCacheBase {
  struct Entry {
    Key key;
    Plan plan;
    PlanFences::Token fence = 0;  // last use; 0 when never used
    uint32_t leases = 0;          // a leased plan is never evicted or destroyed
  };
  using EntryList = std::list<Entry>;
  // The fence of a use that could not be recorded: the plan may be in use for an unknown time,
  // so it is never destroyed (a leak is the safe outcome).
  static constexpr PlanFences::Token kUnfenced = ~PlanFences::Token{0};

 public:
  using Destroy = std::function<void(Plan&)>;

  // A plan handed out by acquire. Several leases of one plan may exist at once (two threads, or
  // one thread using the plan twice); a library that forbids concurrent calls with one plan is
  // serialised by its family. The plan must not be touched after the lease ends.
  class Lease {
   public:
    Lease(Lease&& other) noexcept : cache_(other.cache_), entry_(other.entry_) {
      other.entry_ = nullptr;
    }
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    // Ending a lease without used() still fences: work may have been queued before an exception.
    ~Lease() {
      if (entry_ == nullptr) return;
      try {
        used();
      } catch (...) {
        // The entry is already marked unfenced and will never be destroyed.
      }
    }

    Plan& operator*() const { return entry_->plan; }
    Plan* operator->() const { return &entry_->plan; }

    // Records the fence after the work queued with the plan and ends the lease. Throws when the
    // fence cannot be recorded (the plan is then kept until process exit).
    void used() {
      if (entry_ == nullptr) return;
      Entry* entry = entry_;
      entry_ = nullptr;
      cache_->finish_lease(entry);
    }

   private:
    friend class PlanCache;
    Lease(PlanCache* cache, Entry* entry) : cache_(cache), entry_(entry) {}
    PlanCache* cache_;
    Entry* entry_;
  };

  PlanCache(std::shared_ptr<PlanFences> fences, Destroy destroy,
            size_t capacity = plan_cache_capacity_from_environment())
      : PlanCacheBase(capacity), fences_(std::move(fences)), destroy_(std::move(destroy)) {}
  ~PlanCache() override { release_all(); }

  // The plan for key, created by create(key) on a miss. A miss first destroys retired plans whose
  // fences are done (queried, never waited for), creates the plan with the lock released and,
  // after inserting, evicts the least recently used plans that are not leased until the bound
  // holds again. create may throw; then nothing is inserted or evicted. While a key's plan is
  // being created, other callers of that key wait for it and count as hits when it arrives.
  template <class Create>
  Lease acquire(const Key& key, Create&& create) {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      auto found = index_.find(key);
      if (found != index_.end()) {
        ++counts_.hits;
        cached_.splice(cached_.begin(), cached_, found->second);
        Entry& entry = *found->second;
        ++entry.leases;
        return Lease(this, &entry);
      }
      auto pending = creating_.find(key);
      if (pending == creating_.end()) break;
      // Look again once that creation has finished: its plan, or the key free to create.
      const std::shared_ptr<Creation> creation = pending->second;
      created_.wait(lock, [&creation] { return creation->finished; });
    }
    ++counts_.misses;
    destroy_finished_retired();
    auto creation = std::make_shared<Creation>();
    creating_.emplace(key, creation);
    std::optional<Plan> made;
    lock.unlock();
    try {
      made.emplace(create(key));
    } catch (...) {
      lock.lock();
      finish_creation(key, *creation);
      throw;
    }
    lock.lock();
    finish_creation(key, *creation);
    Entry fresh{key, std::move(*made)};
    ++counts_.creates;
    ++counts_.live;
    try {
      cached_.push_front(std::move(fresh));
    } catch (...) {
      destroy_entry(fresh);
      throw;
    }
    try {
      index_.emplace(key, cached_.begin());
    } catch (...) {
      destroy_entry(cached_.front());
      cached_.pop_front();
      throw;
    }
    Entry& entry = cached_.front();
    entry.leases = 1;
    evict_over_capacity();
    return Lease(this, &entry);
  }

  size_t cached() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return cached_.size();
  }
  // Evicted plans waiting for their fence.
  size_t retired() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return retired_.size();
  }

  void release_all() override {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = cached_.begin(); it != cached_.end();) {
      auto next = std::next(it);
      if (it->leases == 0) {
        index_.erase(it->key);
        retired_.splice(retired_.end(), cached_, it);
      }
      it = next;
    }
    for (auto it = retired_.begin(); it != retired_.end();) {
      if (wait_for(*it)) {
        destroy_entry(*it);
        it = retired_.erase(it);
      } else {
        ++it;
      }
    }
  }

 private:
  // A creation in progress, shared with the callers of its key that wait for it.
  struct Creation {
    bool finished = false;
  };

  // Under the lock: the key is no longer being created; its waiters look again.
  void finish_creation(const Key& key, Creation& creation) {
    creating_.erase(key);
    creation.finished = true;
    created_.notify_all();
  }

  void finish_lease(Entry* entry) {
    std::lock_guard<std::mutex> lock(mutex_);
    --entry->leases;
    PlanFences::Token previous = entry->fence;
    entry->fence = kUnfenced;
    release_token(previous);
    entry->fence = fences_->record();
    evict_over_capacity();
  }

  void evict_over_capacity() {
    auto it = cached_.end();
    while (cached_.size() > capacity() && it != cached_.begin()) {
      --it;
      if (it->leases > 0) continue;
      ++counts_.evictions;
      index_.erase(it->key);
      auto next = std::next(it);
      if (is_finished(*it)) {
        destroy_entry(*it);
        cached_.erase(it);
      } else {
        retired_.splice(retired_.end(), cached_, it);
      }
      it = next;
    }
  }

  void destroy_finished_retired() {
    for (auto it = retired_.begin(); it != retired_.end();) {
      if (is_finished(*it)) {
        destroy_entry(*it);
        it = retired_.erase(it);
      } else {
        ++it;
      }
    }
  }

  bool is_finished(const Entry& entry) {
    if (entry.fence == 0) return true;
    if (entry.fence == kUnfenced) return false;
    return fences_->is_done(entry.fence);
  }

  // Blocks until the entry's last use is finished; false when that cannot be known.
  bool wait_for(const Entry& entry) {
    if (entry.fence == 0) return true;
    if (entry.fence == kUnfenced) return false;
    try {
      fences_->wait(entry.fence);
      return true;
    } catch (...) {
      return false;
    }
  }

  void release_token(PlanFences::Token token) {
    if (token != 0 && token != kUnfenced) fences_->release(token);
  }

  // Destruction cannot be reported usefully (eviction inside another op, or exit), and the plan
  // is gone from the cache either way.
  void destroy_entry(Entry& entry) {
    release_token(entry.fence);
    entry.fence = 0;
    try {
      destroy_(entry.plan);
    } catch (...) {
    }
    ++counts_.destroyed;
    --counts_.live;
  }

  std::shared_ptr<PlanFences> fences_;
  Destroy destroy_;
  EntryList cached_;   // front: most recently used
  EntryList retired_;  // evicted, waiting for their fence
  std::unordered_map<Key, typename EntryList::iterator, Hash> index_;
  std::unordered_map<Key, std::shared_ptr<Creation>, Hash> creating_;  // keys being created
  std::condition_variable created_;  // notified when a creation finishes
};

}  // namespace tlrt
