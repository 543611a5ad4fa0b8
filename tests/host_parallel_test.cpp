// kernels/common/host_parallel.h: every item in exactly one range, at most one range per hardware
// thread and at most the cap, the small case on the calling thread, and an exception from any range
// rethrown after the join (the lowest range's when several throw); the same with a loop nested in
// a range and with several threads running loops at once (the process's worker threads serve one
// loop at a time, the others start their own), many loops in a row on the same workers, the
// caller's rounding mode on every range, and loops in a forked child.
#include "kernels/common/host_parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cfenv>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace {

using tlrt::kernels::host_thread_count;
using tlrt::kernels::parallel_ranges;

TEST(HostParallel, EveryItemRunsInExactlyOneRange) {
  for (uint64_t n : {uint64_t{1}, uint64_t{7}, uint64_t{1000}, uint64_t{100003}}) {
    std::vector<std::atomic<int>> seen(n);
    std::mutex m;
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    parallel_ranges(n, 10, [&](uint64_t begin, uint64_t end) {
      for (uint64_t i = begin; i < end; ++i) seen[i].fetch_add(1);
      std::lock_guard<std::mutex> lock(m);
      ranges.emplace_back(begin, end);
    });
    for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(seen[i].load(), 1) << "n " << n << " item " << i;
    EXPECT_LE(ranges.size(), host_thread_count());
  }
}

TEST(HostParallel, BelowTwoGrainsRunsOnceOnTheCallingThread) {
  int calls = 0;
  const std::thread::id caller = std::this_thread::get_id();
  parallel_ranges(15, 10, [&](uint64_t begin, uint64_t end) {
    ++calls;
    EXPECT_EQ(begin, 0u);
    EXPECT_EQ(end, 15u);
    EXPECT_EQ(std::this_thread::get_id(), caller);
  });
  EXPECT_EQ(calls, 1);
  parallel_ranges(0, 10, [&](uint64_t, uint64_t) { ++calls; });
  EXPECT_EQ(calls, 1);
}

TEST(HostParallel, AnExceptionFromAnyRangeIsRethrownAfterTheJoin) {
  std::atomic<uint64_t> done{0};
  EXPECT_THROW(parallel_ranges(uint64_t{1} << 20, 1,
                               [&](uint64_t begin, uint64_t end) {
                                 done += end - begin;
                                 if (end == (uint64_t{1} << 20))
                                   throw std::runtime_error("last range");
                               }),
               std::runtime_error);
  EXPECT_EQ(done.load(), uint64_t{1} << 20);  // every range ran to its end before the rethrow
}

TEST(HostParallel, TheCapBoundsTheRanges) {
  EXPECT_EQ(host_thread_count(), std::max(1u, std::thread::hardware_concurrency()));
  for (uint64_t cap : {uint64_t{0}, uint64_t{1}, uint64_t{2}, uint64_t{3}}) {
    std::mutex m;
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    parallel_ranges(
        100000, 1,
        [&](uint64_t begin, uint64_t end) {
          std::lock_guard<std::mutex> lock(m);
          ranges.emplace_back(begin, end);
        },
        cap);
    EXPECT_LE(ranges.size(), std::max<uint64_t>(1, cap)) << "cap " << cap;
    uint64_t items = 0;
    for (const auto& [begin, end] : ranges) items += end - begin;
    EXPECT_EQ(items, 100000u) << "cap " << cap;
  }
}

TEST(HostParallel, TheLowestFailingRangeIsReported) {
  if (host_thread_count() < 2) GTEST_SKIP() << "one hardware thread: a single range";
  try {
    parallel_ranges(uint64_t{1} << 20, 1, [&](uint64_t begin, uint64_t) {
      throw std::runtime_error("range at " + std::to_string(begin));
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "range at 0");
  }
}

// A loop inside a range of another: the inner loops cannot use the busy workers and start their
// own threads; every (outer, inner) item still runs exactly once.
TEST(HostParallel, NestedLoopsRunEveryItemOnce) {
  constexpr uint64_t kOuter = 64, kInner = 5000;
  std::vector<std::atomic<int>> seen(kOuter * kInner);
  parallel_ranges(kOuter, 1, [&](uint64_t begin, uint64_t end) {
    for (uint64_t o = begin; o < end; ++o) {
      parallel_ranges(kInner, 100, [&](uint64_t b, uint64_t e) {
        for (uint64_t i = b; i < e; ++i) seen[o * kInner + i].fetch_add(1);
      });
    }
  });
  for (uint64_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i].load(), 1) << i;
}

// Four threads running loops at the same time, 200 each: one at a time gets the workers, the
// others run on threads of their own; every item of every loop runs once.
TEST(HostParallel, ConcurrentCallersEachRunEveryItemOnce) {
  constexpr int kCallers = 4, kLoops = 200;
  constexpr uint64_t kItems = 20000;
  std::vector<std::vector<std::atomic<int>>> seen(kCallers);
  for (auto& v : seen) v = std::vector<std::atomic<int>>(kItems);
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (int loop = 0; loop < kLoops; ++loop) {
        parallel_ranges(kItems, 100, [&](uint64_t b, uint64_t e) {
          for (uint64_t i = b; i < e; ++i) seen[c][i].fetch_add(1);
        });
      }
    });
  }
  for (std::thread& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c) {
    for (uint64_t i = 0; i < kItems; ++i) ASSERT_EQ(seen[c][i].load(), kLoops) << c << " " << i;
  }
}

// Many short loops in a row on the same workers (each must see the job that is current when it
// wakes, never a finished one): the sums come out exact.
TEST(HostParallel, ManyLoopsInARowOnTheSameWorkers) {
  std::atomic<uint64_t> total{0};
  for (int loop = 0; loop < 20000; ++loop) {
    parallel_ranges(64, 1, [&](uint64_t b, uint64_t e) { total.fetch_add(e - b); });
  }
  EXPECT_EQ(total.load(), uint64_t{20000} * 64);
}

// Every range runs in the caller's floating-point environment, whichever thread takes it: the
// rounding mode set on the calling thread is the one each range sees.
TEST(HostParallel, RangesRunInTheCallersRoundingMode) {
  const int before = std::fegetround();
  for (int mode : {FE_UPWARD, FE_TOWARDZERO, FE_TONEAREST}) {
    ASSERT_EQ(std::fesetround(mode), 0);
    std::atomic<int> wrong{0};
    for (int loop = 0; loop < 50; ++loop) {
      parallel_ranges(64, 1, [&](uint64_t, uint64_t) {
        if (std::fegetround() != mode) wrong.fetch_add(1);
      });
    }
    std::fesetround(before);
    EXPECT_EQ(wrong.load(), 0) << "mode " << mode;
  }
}

// A child forked after the workers started (the fuzzer forks, so may a host program) runs its
// loops without them, on threads of its own: every item once, no wait on the parent's workers
// (a hang ends the child by alarm).
TEST(HostParallel, AForkedChildRunsLoopsWithoutTheWorkers) {
  std::atomic<uint64_t> warm{0};
  parallel_ranges(1000, 1, [&](uint64_t b, uint64_t e) { warm.fetch_add(e - b); });
  ASSERT_EQ(warm.load(), 1000u);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(60);
    std::vector<std::atomic<int>> seen(100000);
    for (int loop = 0; loop < 20; ++loop) {
      parallel_ranges(seen.size(), 100, [&](uint64_t b, uint64_t e) {
        for (uint64_t i = b; i < e; ++i) seen[i].fetch_add(1);
      });
    }
    for (const auto& v : seen) {
      if (v.load() != 20) _exit(1);
    }
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child did not exit (signal " << WTERMSIG(status) << ")";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "an item ran other than once in the child";
}

}  // namespace
