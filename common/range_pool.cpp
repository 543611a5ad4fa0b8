#include "common/range_pool.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cfenv>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace tlrt {
namespace {

// True on a worker thread, and on a calling thread while its job runs.
thread_local bool t_in_job = false;

// Set in a child process forked after the pool started: the child has none of the workers (and a
// worker may have held the pool's mutex at the fork), so it never uses the pool.
std::atomic<bool> g_forked{false};
void mark_forked() {
  g_forked.store(true, std::memory_order_relaxed);
}

struct Job {
  uint64_t ranges = 0;
  void (*fn)(void*, uint64_t) = nullptr;
  void* ctx = nullptr;
  std::atomic<uint64_t> next{0};
  uint64_t users = 0;  // workers inside the job; guarded by the pool's mutex
  std::fenv_t env;     // the caller's floating-point environment, which workers run the job in
};

// Takes ranges until none is left.
void take_ranges(Job& job) {
  for (uint64_t r = job.next.fetch_add(1, std::memory_order_relaxed); r < job.ranges;
       r = job.next.fetch_add(1, std::memory_order_relaxed)) {
    job.fn(job.ctx, r);
  }
}

class RangePool {
 public:
  RangePool() {
    if (pthread_atfork(nullptr, nullptr, mark_forked) != 0) return;  // no workers: never used
    const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned i = 1; i < hardware; ++i) {
      try {
        std::thread worker([this] { work(); });
        worker.detach();  // the pool lives for the whole process
        ++workers_;
      } catch (const std::system_error&) {
        break;  // as many workers as could be started
      }
    }
  }

  bool run(uint64_t ranges, void (*fn)(void*, uint64_t), void* ctx) {
    if (workers_ == 0 || t_in_job || g_forked.load(std::memory_order_relaxed)) return false;
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    Job job;
    job.ranges = ranges;
    job.fn = fn;
    job.ctx = ctx;
    std::fegetenv(&job.env);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &job;
      ++generation_;
    }
    wake_.notify_all();
    t_in_job = true;
    take_ranges(job);
    t_in_job = false;
    // No worker joins once the job is withdrawn; those inside finish their ranges first.
    std::unique_lock<std::mutex> lock(mutex_);
    job_ = nullptr;
    left_.wait(lock, [&] { return job.users == 0; });
    return true;
  }

 private:
  void work() {
    t_in_job = true;
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      Job* job = job_;
      if (job == nullptr) continue;  // woke after the job was over
      ++job->users;
      lock.unlock();
      // Rounding mode and the like as on the calling thread, as a thread it started would have.
      std::fenv_t own;
      std::fegetenv(&own);
      std::fesetenv(&job->env);
      take_ranges(*job);
      std::fesetenv(&own);
      lock.lock();
      if (--job->users == 0) left_.notify_all();
    }
  }

  unsigned workers_ = 0;
  std::mutex busy_;   // one job at a time
  std::mutex mutex_;  // job_, generation_, the jobs' users
  std::condition_variable wake_, left_;
  Job* job_ = nullptr;
  uint64_t generation_ = 0;
};

}  // namespace

bool run_on_range_pool(uint64_t ranges, void (*fn)(void*, uint64_t), void* ctx) {
  if (ranges < 2) return false;
  // Never destroyed: detached workers may still be waiting on it while the process exits.
  static RangePool* const pool = new RangePool();
  return pool->run(ranges, fn, ctx);
}

}  // namespace tlrt
