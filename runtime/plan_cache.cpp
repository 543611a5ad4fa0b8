// The process-wide registry of plan caches behind plan_cache_counters(), and the capacity's
// environment default. Compiled in every build: without CUDA no cache is made and the counters
// stay zero, which is what tlrt-bench reports there.
#include "runtime/plan_cache.h"

#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/error.h"

namespace tlrt {
namespace {

constexpr size_t kDefaultPlanCacheCapacity = 64;
static_assert(sizeof(size_t) >= sizeof(unsigned long long), "a parsed capacity fits size_t");

void add_into(PlanCacheCounters& total, const PlanCacheCounters& part) {
  total.hits += part.hits;
  total.misses += part.misses;
  total.creates += part.creates;
  total.evictions += part.evictions;
  total.destroyed += part.destroyed;
  total.live += part.live;
}

struct Registry {
  std::mutex mutex;  // taken before any cache's own lock, never after it
  std::vector<const PlanCacheBase*> caches;
  PlanCacheCounters departed;  // what caches that no longer exist counted
};

// Never destroyed: device caches live until process exit and may be torn down after static
// destruction has begun.
Registry& registry() {
  static Registry* const instance = new Registry;
  return *instance;
}

}  // namespace

PlanCacheCounters plan_cache_counters() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  PlanCacheCounters total = r.departed;
  for (const PlanCacheBase* cache : r.caches) add_into(total, cache->counters());
  return total;
}

size_t plan_cache_capacity_from_environment() {
  const char* text = std::getenv("TLRT_PLAN_CACHE_CAPACITY");
  if (text == nullptr || *text < '0' || *text > '9') return kDefaultPlanCacheCapacity;
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (errno != 0 || *end != '\0' || value == 0) return kDefaultPlanCacheCapacity;
  return static_cast<size_t>(value);
}

PlanCacheBase::PlanCacheBase(size_t capacity) : capacity_(capacity) {
  if (capacity == 0) {
    fail(ErrorKind::invalid_argument, "plan_cache", "capacity must be at least 1 (got 0)");
  }
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.caches.push_back(this);
}

PlanCacheBase::~PlanCacheBase() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (auto it = r.caches.begin(); it != r.caches.end(); ++it) {
    if (*it == this) {
      r.caches.erase(it);
      break;
    }
  }
  add_into(r.departed, counters());
}

PlanCacheCounters PlanCacheBase::counters() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return counts_;
}

}  // namespace tlrt
