// PlanCache without a GPU: fences are tokens the test completes by hand, so the rules can be
// checked exactly: counters, LRU order and the bound, a plan evicted while its last use may still
// run stays alive until that use's fence is done, teardown waits and destroys, concurrent
// acquires keep the books straight, a creation in progress holds up no caller of another key and
// is shared by the callers of its own, and the capacity default comes from the environment.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <future>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "runtime/plan_cache.h"

namespace {

using tlrt::PlanCache;
using tlrt::PlanCacheCounters;
using tlrt::PlanFences;

// Tokens stay pending until complete() (or wait(), which plays the device finishing the work).
class ManualFences final : public PlanFences {
 public:
  explicit ManualFences(bool done_at_once = false) : done_at_once_(done_at_once) {}

  Token record() override {
    std::lock_guard<std::mutex> lock(mutex_);
    const Token token = ++last_;
    if (done_at_once_) done_.insert(token);
    outstanding_.insert(token);
    return token;
  }
  bool is_done(Token token) override {
    std::lock_guard<std::mutex> lock(mutex_);
    return done_.count(token) != 0;
  }
  void wait(Token token) override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++waits_;
    done_.insert(token);
  }
  void release(Token token) override {
    std::lock_guard<std::mutex> lock(mutex_);
    EXPECT_EQ(outstanding_.erase(token), 1u) << "token " << token << " released twice or unknown";
  }

  void complete(Token token) {
    std::lock_guard<std::mutex> lock(mutex_);
    done_.insert(token);
  }
  Token last() {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_;
  }
  size_t outstanding() {
    std::lock_guard<std::mutex> lock(mutex_);
    return outstanding_.size();
  }
  uint64_t waits() {
    std::lock_guard<std::mutex> lock(mutex_);
    return waits_;
  }

 private:
  const bool done_at_once_;
  std::mutex mutex_;
  Token last_ = 0;
  std::set<Token> done_;
  std::set<Token> outstanding_;  // recorded and not yet released
  uint64_t waits_ = 0;
};

// A plan is the key times ten; destroyed plans are logged in order.
struct Log {
  std::mutex mutex;
  std::vector<int> destroyed;
  std::vector<int> created;
  std::vector<int> destroyed_copy() {
    std::lock_guard<std::mutex> lock(mutex);
    return destroyed;
  }
};

using IntCache = PlanCache<int, int>;

IntCache make_cache(std::shared_ptr<ManualFences> fences, Log& log, size_t capacity) {
  return IntCache(
      std::move(fences),
      [&log](int& plan) {
        std::lock_guard<std::mutex> lock(log.mutex);
        log.destroyed.push_back(plan / 10);
      },
      capacity);
}

// Acquires key, counts the creation, records the use at once.
void use(IntCache& cache, Log& log, int key) {
  auto lease = cache.acquire(key, [&log](const int& k) {
    std::lock_guard<std::mutex> lock(log.mutex);
    log.created.push_back(k);
    return k * 10;
  });
  EXPECT_EQ(*lease, key * 10);
  lease.used();
}

PlanCacheCounters minus(const PlanCacheCounters& a, const PlanCacheCounters& b) {
  return {a.hits - b.hits,           a.misses - b.misses,       a.creates - b.creates,
          a.evictions - b.evictions, a.destroyed - b.destroyed, a.live - b.live};
}

// Runs first in this binary: nothing has made a cache yet.
TEST(PlanCache, ProcessCountersAreZeroWithoutCaches) {
  const PlanCacheCounters c = tlrt::plan_cache_counters();
  EXPECT_EQ(c.hits, 0u);
  EXPECT_EQ(c.misses, 0u);
  EXPECT_EQ(c.creates, 0u);
  EXPECT_EQ(c.evictions, 0u);
  EXPECT_EQ(c.destroyed, 0u);
  EXPECT_EQ(c.live, 0u);
}

TEST(PlanCache, CountsHitsMissesAndCreates) {
  auto fences = std::make_shared<ManualFences>();
  Log log;
  IntCache cache = make_cache(fences, log, 8);
  use(cache, log, 1);
  use(cache, log, 2);
  use(cache, log, 1);
  use(cache, log, 1);
  const PlanCacheCounters c = cache.counters();
  EXPECT_EQ(c.hits, 2u);
  EXPECT_EQ(c.misses, 2u);
  EXPECT_EQ(c.creates, 2u);
  EXPECT_EQ(c.evictions, 0u);
  EXPECT_EQ(c.destroyed, 0u);
  EXPECT_EQ(c.live, 2u);
  EXPECT_EQ(log.created, (std::vector<int>{1, 2}));
  EXPECT_EQ(cache.cached(), 2u);
  // One fence per plan: a newer use replaces (and releases) the older token.
  EXPECT_EQ(fences->outstanding(), 2u);
}

TEST(PlanCache, ACreateThatThrowsInsertsNothing) {
  auto fences = std::make_shared<ManualFences>();
  Log log;
  IntCache cache = make_cache(fences, log, 2);
  EXPECT_THROW(cache.acquire(7, [](const int&) -> int { throw std::runtime_error("no plan"); }),
               std::runtime_error);
  const PlanCacheCounters c = cache.counters();
  EXPECT_EQ(c.misses, 1u);
  EXPECT_EQ(c.creates, 0u);
  EXPECT_EQ(c.live, 0u);
  EXPECT_EQ(cache.cached(), 0u);
  use(cache, log, 7);
  EXPECT_EQ(cache.counters().creates, 1u);
}

TEST(PlanCache, EvictsTheLeastRecentlyUsed) {
  auto fences = std::make_shared<ManualFences>(/*done_at_once=*/true);
  Log log;
  IntCache cache = make_cache(fences, log, 2);
  use(cache, log, 1);
  use(cache, log, 2);
  use(cache, log, 1);  // 2 is now the least recently used
  use(cache, log, 3);
  EXPECT_EQ(log.destroyed, (std::vector<int>{2}));
  use(cache, log, 1);  // still cached
  use(cache, log, 4);  // evicts 3
  EXPECT_EQ(log.destroyed, (std::vector<int>{2, 3}));
  const PlanCacheCounters c = cache.counters();
  EXPECT_EQ(c.hits, 2u);
  EXPECT_EQ(c.evictions, 2u);
  EXPECT_EQ(c.destroyed, 2u);
  EXPECT_EQ(c.live, 2u);
}

TEST(PlanCache, NeverHoldsMoreThanItsCapacity) {
  auto fences = std::make_shared<ManualFences>(/*done_at_once=*/true);
  Log log;
  IntCache cache = make_cache(fences, log, 3);
  for (int round = 0; round < 4; ++round) {
    for (int key = 0; key < 10; ++key) {
      use(cache, log, (key * 7 + round) % 10);
      EXPECT_LE(cache.cached(), 3u);
    }
  }
  const PlanCacheCounters c = cache.counters();
  EXPECT_EQ(c.creates - c.destroyed, c.live);
  EXPECT_EQ(c.live, 3u);
  EXPECT_EQ(cache.retired(), 0u);
}

TEST(PlanCache, AnEvictedPlanLivesUntilItsFenceIsDone) {
  auto fences = std::make_shared<ManualFences>();
  Log log;
  IntCache cache = make_cache(fences, log, 1);
  use(cache, log, 1);
  const PlanFences::Token fence_of_1 = fences->last();
  use(cache, log, 2);  // evicts 1 while its last use may still run
  EXPECT_EQ(cache.counters().evictions, 1u);
  EXPECT_TRUE(log.destroyed.empty());
  EXPECT_EQ(cache.retired(), 1u);
  EXPECT_EQ(cache.counters().live, 2u);

  use(cache, log, 2);  // a hit never looks at the retired list
  fences->complete(fence_of_1);
  EXPECT_TRUE(log.destroyed.empty());
  EXPECT_EQ(fences->waits(), 0u) << "the hot path must never block on a fence";

  use(cache, log, 3);  // a miss destroys retired plans whose fence is done; 2 retires pending
  EXPECT_EQ(log.destroyed, (std::vector<int>{1}));
  EXPECT_EQ(cache.retired(), 1u);
  const PlanCacheCounters c = cache.counters();
  EXPECT_EQ(c.destroyed, 1u);
  EXPECT_EQ(c.live, 2u);
  EXPECT_EQ(fences->waits(), 0u);
}

TEST(PlanCache, ALeasedPlanIsNotEvicted) {
  auto fences = std::make_shared<ManualFences>(/*done_at_once=*/true);
  Log log;
  IntCache cache = make_cache(fences, log, 2);
  auto held = cache.acquire(1, [](const int& k) { return k * 10; });
  use(cache, log, 2);
  use(cache, log, 3);  // 1 is the least recently used but leased: 2 goes instead
  EXPECT_EQ(*held, 10);
  EXPECT_EQ(log.destroyed, (std::vector<int>{2}));
  held.used();
  use(cache, log, 4);  // now 1 may go
  EXPECT_EQ(log.destroyed, (std::vector<int>{2, 1}));
}

TEST(PlanCache, TheBoundIsRestoredWhenLeasesEnd) {
  auto fences = std::make_shared<ManualFences>(/*done_at_once=*/true);
  Log log;
  IntCache cache = make_cache(fences, log, 1);
  auto first = cache.acquire(1, [](const int& k) { return k * 10; });
  auto second = cache.acquire(2, [](const int& k) { return k * 10; });
  EXPECT_EQ(cache.cached(), 2u) << "both leased: over the bound for now";
  EXPECT_TRUE(log.destroyed.empty());
  first.used();
  EXPECT_EQ(cache.cached(), 1u);
  EXPECT_EQ(log.destroyed, (std::vector<int>{1}));
  second.used();
  EXPECT_EQ(cache.cached(), 1u);
}

TEST(PlanCache, EndingALeaseWithoutUsedStillFences) {
  auto fences = std::make_shared<ManualFences>();
  Log log;
  IntCache cache = make_cache(fences, log, 1);
  {
    auto lease = cache.acquire(1, [](const int& k) { return k * 10; });
  }
  EXPECT_EQ(fences->last(), 1u);
  use(cache, log, 2);
  EXPECT_TRUE(log.destroyed.empty()) << "the plan's fence is pending, so eviction keeps it";
}

TEST(PlanCache, TeardownWaitsForFencesAndDestroysEverything) {
  auto fences = std::make_shared<ManualFences>();
  Log log;
  {
    IntCache cache = make_cache(fences, log, 2);
    use(cache, log, 1);
    use(cache, log, 2);
    use(cache, log, 3);  // 1 retires, its fence pending
    EXPECT_TRUE(log.destroyed.empty());
    EXPECT_EQ(fences->waits(), 0u);
  }
  std::vector<int> destroyed = log.destroyed;
  std::sort(destroyed.begin(), destroyed.end());
  EXPECT_EQ(destroyed, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(fences->waits(), 3u);
  EXPECT_EQ(fences->outstanding(), 0u) << "every token goes back to the fences";
}

TEST(PlanCache, ReleaseAllEmptiesACacheThatStaysUsable) {
  auto fences = std::make_shared<ManualFences>();
  Log log;
  IntCache cache = make_cache(fences, log, 4);
  use(cache, log, 1);
  use(cache, log, 2);
  cache.release_all();
  EXPECT_EQ(cache.cached(), 0u);
  EXPECT_EQ(cache.counters().live, 0u);
  EXPECT_EQ(cache.counters().destroyed, 2u);
  EXPECT_EQ(cache.counters().evictions, 0u) << "teardown is not eviction";
  use(cache, log, 1);
  EXPECT_EQ(cache.counters().creates, 3u);
}

TEST(PlanCache, ConcurrentAcquiresKeepTheBooks) {
  auto fences = std::make_shared<ManualFences>(/*done_at_once=*/true);
  Log log;
  std::atomic<int> wrong_plans{0};
  constexpr int kThreads = 4;
  constexpr int kRounds = 2000;
  {
    IntCache cache = make_cache(fences, log, 4);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&cache, &wrong_plans, t] {
        for (int i = 0; i < kRounds; ++i) {
          const int key = (i * (t + 3) + t) % 9;
          auto lease = cache.acquire(key, [](const int& k) { return k * 10; });
          if (*lease != key * 10) ++wrong_plans;
          lease.used();
        }
      });
    }
    for (auto& thread : threads) thread.join();
    const PlanCacheCounters c = cache.counters();
    EXPECT_EQ(c.hits + c.misses, uint64_t{kThreads} * kRounds);
    EXPECT_EQ(c.misses, c.creates);
    EXPECT_EQ(c.creates - c.destroyed, c.live);
    EXPECT_LE(cache.cached(), 4u);
  }
  EXPECT_EQ(wrong_plans.load(), 0);
  EXPECT_EQ(fences->outstanding(), 0u);
}

// A gate a creation waits at, so that a test can act while the creation is in progress.
class Gate {
 public:
  void open() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = false;
};

// Key 2's creation is in progress in one thread (held at a gate); a hit on key 1 in another thread
// must not wait for it.
TEST(PlanCache, AHitDoesNotWaitForAnotherKeysCreation) {
  auto fences = std::make_shared<ManualFences>(/*done_at_once=*/true);
  Log log;
  IntCache cache = make_cache(fences, log, 4);
  use(cache, log, 1);
  Gate creating, release;
  std::thread slow([&] {
    auto lease = cache.acquire(2, [&](const int& k) {
      creating.open();
      release.wait();
      return k * 10;
    });
    EXPECT_EQ(*lease, 20);
  });
  creating.wait();
  auto hit = std::async(std::launch::async, [&] {
    auto lease = cache.acquire(1, [](const int&) -> int { throw std::logic_error("not a hit"); });
    return *lease;
  });
  const bool in_time = hit.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  release.open();
  slow.join();
  ASSERT_TRUE(in_time) << "the hit on key 1 waited for key 2's creation";
  EXPECT_EQ(hit.get(), 10);
  EXPECT_EQ(cache.counters().creates, 2u);
}

// A second caller of a key being created waits for that plan instead of making another.
TEST(PlanCache, CallersOfAKeyBeingCreatedShareItsPlan) {
  auto fences = std::make_shared<ManualFences>(/*done_at_once=*/true);
  Log log;
  IntCache cache = make_cache(fences, log, 4);
  Gate creating, release;
  std::atomic<int> creations{0};
  std::thread first([&] {
    auto lease = cache.acquire(3, [&](const int& k) {
      ++creations;
      creating.open();
      release.wait();
      return k * 10;
    });
    EXPECT_EQ(*lease, 30);
  });
  creating.wait();
  constexpr int kWaiters = 3;
  std::vector<std::thread> waiters;
  for (int w = 0; w < kWaiters; ++w) {
    waiters.emplace_back([&] {
      auto lease = cache.acquire(3, [&](const int& k) {
        ++creations;
        return k * 10;
      });
      EXPECT_EQ(*lease, 30);
    });
  }
  // The waiters are inside acquire, waiting for key 3, well before this.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  release.open();
  first.join();
  for (auto& waiter : waiters) waiter.join();
  EXPECT_EQ(creations.load(), 1);
  const PlanCacheCounters c = cache.counters();
  EXPECT_EQ(c.misses, 1u);
  EXPECT_EQ(c.creates, 1u);
  EXPECT_EQ(c.hits, uint64_t{kWaiters});
  EXPECT_EQ(cache.cached(), 1u);
}

// When the creation a caller waited for throws, that caller creates the plan itself.
TEST(PlanCache, AWaiterCreatesThePlanWhenTheCreationItWaitedForThrows) {
  auto fences = std::make_shared<ManualFences>(/*done_at_once=*/true);
  Log log;
  IntCache cache = make_cache(fences, log, 4);
  Gate creating, release;
  std::thread failing([&] {
    EXPECT_THROW(cache.acquire(4,
                               [&](const int&) -> int {
                                 creating.open();
                                 release.wait();
                                 throw std::runtime_error("creation failed");
                               }),
                 std::runtime_error);
  });
  creating.wait();
  std::atomic<int> own_creations{0};
  std::thread waiter([&] {
    auto lease = cache.acquire(4, [&](const int& k) {
      ++own_creations;
      return k * 10;
    });
    EXPECT_EQ(*lease, 40);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  release.open();
  failing.join();
  waiter.join();
  EXPECT_EQ(own_creations.load(), 1);
  const PlanCacheCounters c = cache.counters();
  EXPECT_EQ(c.misses, 2u);
  EXPECT_EQ(c.creates, 1u);
  EXPECT_EQ(c.live, 1u);
  EXPECT_EQ(cache.cached(), 1u);
}

TEST(PlanCache, ProcessCountersSumEveryCache) {
  const PlanCacheCounters before = tlrt::plan_cache_counters();
  auto fences = std::make_shared<ManualFences>(/*done_at_once=*/true);
  Log log;
  {
    IntCache a = make_cache(fences, log, 1);
    IntCache b = make_cache(fences, log, 4);
    use(a, log, 1);
    use(a, log, 2);  // evicts 1
    use(b, log, 1);
    use(b, log, 1);
    const PlanCacheCounters d = minus(tlrt::plan_cache_counters(), before);
    EXPECT_EQ(d.hits, 1u);
    EXPECT_EQ(d.misses, 3u);
    EXPECT_EQ(d.creates, 3u);
    EXPECT_EQ(d.evictions, 1u);
    EXPECT_EQ(d.destroyed, 1u);
    EXPECT_EQ(d.live, 2u);
  }
  // Gone caches keep what they counted; their plans were destroyed.
  const PlanCacheCounters d = minus(tlrt::plan_cache_counters(), before);
  EXPECT_EQ(d.creates, 3u);
  EXPECT_EQ(d.destroyed, 3u);
  EXPECT_EQ(d.live, 0u);
}

TEST(PlanCache, CapacityDefaultsFromTheEnvironment) {
  unsetenv("TLRT_PLAN_CACHE_CAPACITY");
  EXPECT_EQ(tlrt::plan_cache_capacity_from_environment(), 64u);
  setenv("TLRT_PLAN_CACHE_CAPACITY", "3", 1);
  EXPECT_EQ(tlrt::plan_cache_capacity_from_environment(), 3u);
  {
    auto fences = std::make_shared<ManualFences>(/*done_at_once=*/true);
    Log log;
    IntCache cache(fences, [](int&) {});
    EXPECT_EQ(cache.capacity(), 3u);
    for (int key = 0; key < 6; ++key) use(cache, log, key);
    EXPECT_EQ(cache.cached(), 3u);
  }
  for (const char* ignored : {"0", "", "-2", "12abc", "abc", " 5"}) {
    setenv("TLRT_PLAN_CACHE_CAPACITY", ignored, 1);
    EXPECT_EQ(tlrt::plan_cache_capacity_from_environment(), 64u) << "value \"" << ignored << "\"";
  }
  unsetenv("TLRT_PLAN_CACHE_CAPACITY");
}

TEST(PlanCache, ZeroCapacityIsRefused) {
  try {
    IntCache cache(
        std::make_shared<ManualFences>(), [](int&) {}, 0);
    FAIL() << "capacity 0 was accepted";
  } catch (const tlrt::Error& e) {
    EXPECT_EQ(e.kind(), tlrt::ErrorKind::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("plan_cache"), std::string::npos) << e.what();
  }
}

// A composite key through a hash functor, as a family's key would be.
struct ShapeKey {
  int64_t n = 0;
  int64_t batch = 0;
  bool operator==(const ShapeKey& other) const { return n == other.n && batch == other.batch; }
};
struct ShapeKeyHash {
  size_t operator()(const ShapeKey& k) const {
    return std::hash<int64_t>()(k.n) * 31u + std::hash<int64_t>()(k.batch);
  }
};

TEST(PlanCache, TakesAStructKeyWithAHashFunctor) {
  PlanCache<ShapeKey, std::string, ShapeKeyHash> cache(
      std::make_shared<ManualFences>(true), [](std::string&) {}, 4);
  auto make = [](const ShapeKey& k) { return std::to_string(k.n) + "x" + std::to_string(k.batch); };
  EXPECT_EQ(*cache.acquire({8, 2}, make), "8x2");
  EXPECT_EQ(*cache.acquire({2, 8}, make), "2x8");
  EXPECT_EQ(*cache.acquire({8, 2}, make), "8x2");
  EXPECT_EQ(cache.counters().hits, 1u);
}

}  // namespace
