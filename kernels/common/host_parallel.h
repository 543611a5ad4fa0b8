// Contiguous ranges of a loop on several host threads, for the reference backend's loops whose
// items are independent (each item's results depend only on its own inputs, in a fixed order).
// Every item runs in exactly one call, in increasing order within its range, so the results are
// those of one plain loop whatever the thread count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

namespace tlrt::kernels {

// Runs f(begin, end) over [0, n) cut into at most one range per hardware thread, each of at least
// `grain` items (one range, on the calling thread, when n < 2 grain). The calling thread takes the
// first range; an exception thrown by any range is rethrown here after every thread has finished.
template <class F>
void parallel_ranges(uint64_t n, uint64_t grain, F&& f) {
  if (n == 0) return;
  const uint64_t hw = std::max(1u, std::thread::hardware_concurrency());
  const uint64_t ranges =
      std::min<uint64_t>(hw, std::max<uint64_t>(1, n / std::max<uint64_t>(1, grain)));
  if (ranges <= 1) {
    f(uint64_t{0}, n);
    return;
  }
  const uint64_t per = (n + ranges - 1) / ranges;
  std::vector<std::exception_ptr> failed(ranges);
  std::vector<std::thread> workers;
  for (uint64_t r = 1; r < ranges; ++r) {
    const uint64_t begin = r * per, end = std::min(n, begin + per);
    if (begin >= end) break;
    workers.emplace_back([&f, &failed, r, begin, end] {
      try {
        f(begin, end);
      } catch (...) {
        failed[r] = std::current_exception();
      }
    });
  }
  try {
    f(uint64_t{0}, std::min(n, per));
  } catch (...) {
    failed[0] = std::current_exception();
  }
  for (std::thread& w : workers) w.join();
  for (const std::exception_ptr& e : failed) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace tlrt::kernels
