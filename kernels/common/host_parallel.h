// Contiguous ranges of a loop on several host threads, for the reference backend's loops whose
// items are independent (each item's results depend only on its own inputs, in a fixed order) and
// for the runtime's large host conversions. Every item runs in exactly one call, in increasing
// order within its range, so the results are those of one plain loop whatever the thread count.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

#include "common/range_pool.h"

namespace tlrt::kernels {

// The host's hardware threads (at least 1), read once: std::thread::hardware_concurrency reads
// /sys on every call (an open, a read and a close), which would cost a small call microseconds.
inline uint64_t host_thread_count() {
  static const uint64_t count = std::max(1u, std::thread::hardware_concurrency());
  return count;
}

// An upper bound on the ranges of every parallel_ranges call compiled into the same binary or
// library (default: none). The results never depend on it; tests that link the reference backend
// statically set 1 to run every loop as one range on the calling thread and compare.
inline std::atomic<uint64_t>& host_range_cap() {
  static std::atomic<uint64_t> cap{UINT64_MAX};
  return cap;
}

// Runs f(begin, end) over [0, n) cut into at most min(host_thread_count(), max_ranges,
// host_range_cap()) ranges, each of at least `grain` items (one range, on the calling thread, when
// n < 2 grain). The ranges run on the process's worker threads (common/range_pool.h) and the
// calling thread; when those are busy with another caller's loop, or this loop is nested in one,
// on threads started for this call, the calling thread taking the first range (if a thread cannot
// be started, the ranges left run on the calling thread). An exception thrown by a range is
// rethrown here after every range has finished; when several throw, the lowest range's, as one
// plain loop would report.
template <class F>
void parallel_ranges(uint64_t n, uint64_t grain, F&& f, uint64_t max_ranges = UINT64_MAX) {
  if (n == 0) return;
  const uint64_t ranges = std::min({host_thread_count(), std::max<uint64_t>(1, max_ranges),
                                    std::max<uint64_t>(1, host_range_cap().load()),
                                    std::max<uint64_t>(1, n / std::max<uint64_t>(1, grain))});
  if (ranges <= 1) {
    f(uint64_t{0}, n);
    return;
  }
  const uint64_t per = (n + ranges - 1) / ranges;
  std::vector<std::exception_ptr> failed(ranges);
  auto run = [&f, &failed, per, n](uint64_t r) {
    try {
      if (r * per < n) f(r * per, std::min(n, (r + 1) * per));
    } catch (...) {
      failed[r] = std::current_exception();
    }
  };
  auto rethrow_lowest = [&failed] {
    for (const std::exception_ptr& e : failed) {
      if (e) std::rethrow_exception(e);
    }
  };
  // The process's worker threads when they are free; threads of this call otherwise.
  if (run_on_range_pool(
          ranges, [](void* ctx, uint64_t r) { (*static_cast<decltype(run)*>(ctx))(r); }, &run)) {
    rethrow_lowest();
    return;
  }
  std::vector<std::thread> workers;
  workers.reserve(ranges - 1);
  uint64_t started = 1;  // ranges [1, started) run on workers
  try {
    for (; started < ranges && started * per < n; ++started) workers.emplace_back(run, started);
  } catch (...) {
    // A thread that cannot be started: its range and the ones after it run here.
  }
  run(0);
  for (uint64_t r = started; r < ranges && r * per < n; ++r) run(r);
  for (std::thread& w : workers) w.join();
  rethrow_lowest();
}

// Items per range for about `target` units of work a range when each item costs `work` units (at
// least one item).
inline uint64_t grain_for_work(uint64_t work, uint64_t target) {
  return std::max<uint64_t>(1, target / std::max<uint64_t>(1, work));
}

// item(i) for every i in [0, n), in increasing order within contiguous ranges run by
// parallel_ranges, about `target` units of work a range at `work` units per item.
template <class F>
void parallel_items(uint64_t n, uint64_t work, uint64_t target, F&& item) {
  parallel_ranges(n, grain_for_work(work, target), [&](uint64_t begin, uint64_t end) {
    for (uint64_t i = begin; i < end; ++i) item(i);
  });
}

}  // namespace tlrt::kernels
