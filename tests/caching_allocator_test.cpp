// Caching allocator logic on FakeMemory (no GPU): size classes, reuse, split and merge, pool
// separation, fragmentation on varying sizes, the memory-fraction cap, the out-of-memory retry,
// empty_cache, bad frees, statistics and concurrent use.
#include "runtime/caching_allocator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "tests/support/fake_memory.h"

namespace {

using tlrt::AllocatorStats;
using tlrt::CachingAllocator;
using tlrt::ErrorKind;
using tlrt_test::FakeMemory;

constexpr size_t KiB = size_t{1} << 10;
constexpr size_t MiB = size_t{1} << 20;
constexpr size_t GiB = size_t{1} << 30;

// Tensor-like sizes in every size class: small pool, medium (20 MiB segments), large.
constexpr size_t kTraceBases[] = {3 * KiB, 64 * KiB, 700 * KiB, 3 * MiB / 2, 6 * MiB, 24 * MiB};

uintptr_t addr(const void* p) {
  return reinterpret_cast<uintptr_t>(p);
}

// splitmix64: a fixed, platform-independent stream so every trace is the same everywhere.
class TraceRng {
 public:
  explicit TraceRng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  size_t below(size_t n) { return static_cast<size_t>(next() % n); }

 private:
  uint64_t state_;
};

// Runs `body` and returns the tlrt::Error it throws; fails the test when it throws nothing.
template <typename Body>
tlrt::Error error_from(Body body) {
  try {
    body();
  } catch (const tlrt::Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected a tlrt::Error";
  return tlrt::Error(ErrorKind::not_supported, "nothing thrown");
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(CachingAllocatorTest, RoundSizeUsesMultiplesOf512) {
  EXPECT_EQ(CachingAllocator::round_size(0), 0u);
  EXPECT_EQ(CachingAllocator::round_size(1), 512u);
  EXPECT_EQ(CachingAllocator::round_size(512), 512u);
  EXPECT_EQ(CachingAllocator::round_size(513), 1024u);
  EXPECT_EQ(CachingAllocator::round_size(MiB + 1), MiB + 512);
  EXPECT_EQ(error_from([] { CachingAllocator::round_size(SIZE_MAX); }).kind(),
            ErrorKind::invalid_argument);
}

TEST(CachingAllocatorTest, SegmentSizeFollowsTheThreeClasses) {
  EXPECT_EQ(CachingAllocator::segment_size(512), 2 * MiB);
  EXPECT_EQ(CachingAllocator::segment_size(MiB), 2 * MiB);
  EXPECT_EQ(CachingAllocator::segment_size(MiB + 512), 20 * MiB);
  EXPECT_EQ(CachingAllocator::segment_size(10 * MiB - 512), 20 * MiB);
  EXPECT_EQ(CachingAllocator::segment_size(10 * MiB), 10 * MiB);
  EXPECT_EQ(CachingAllocator::segment_size(10 * MiB + 512), 12 * MiB);
  EXPECT_EQ(CachingAllocator::segment_size(11 * MiB), 12 * MiB);
  EXPECT_EQ(CachingAllocator::segment_size(12 * MiB), 12 * MiB);
  EXPECT_EQ(CachingAllocator::segment_size(GiB + 1), GiB + 2 * MiB);
}

TEST(CachingAllocatorTest, SourceSeesSegmentSizesNotRequests) {
  FakeMemory mem(GiB);
  CachingAllocator alloc(&mem);
  void* small = alloc.allocate(100, "test");
  void* large = alloc.allocate(11 * MiB, "test");
  void* medium = alloc.allocate(3 * MiB, "test");
  EXPECT_EQ(mem.held_sizes(), (std::vector<size_t>{2 * MiB, 12 * MiB, 20 * MiB}));
  AllocatorStats s = alloc.stats();
  // The 11 MiB block takes its whole 12 MiB segment: a 1 MiB tail is not worth a split.
  EXPECT_EQ(s.allocated_bytes, 512 + 3 * MiB + 12 * MiB);
  EXPECT_EQ(s.requested_bytes, 100 + 3 * MiB + 11 * MiB);
  EXPECT_EQ(s.reserved_bytes, 34 * MiB);
  alloc.free(small);
  alloc.free(medium);
  alloc.free(large);
}

TEST(CachingAllocatorTest, ZeroBytesGiveNullAndNullFreeIsANoOp) {
  FakeMemory mem(GiB);
  CachingAllocator alloc(&mem);
  EXPECT_EQ(alloc.allocate(0, "test"), nullptr);
  alloc.free(nullptr);
  EXPECT_EQ(mem.allocate_calls(), 0u);
  EXPECT_EQ(alloc.stats().active_blocks, 0u);
}

TEST(CachingAllocatorTest, FreedBlockIsReusedWithoutSourceCall) {
  FakeMemory mem(GiB);
  CachingAllocator alloc(&mem);
  for (size_t bytes : {size_t{1000}, 700 * KiB, 5 * MiB, 64 * MiB}) {
    void* first = alloc.allocate(bytes, "test");
    alloc.free(first);
    const size_t calls = mem.allocate_calls();
    for (int i = 0; i < 10; ++i) {
      void* again = alloc.allocate(bytes, "test");
      EXPECT_EQ(again, first) << bytes;
      alloc.free(again);
    }
    EXPECT_EQ(mem.allocate_calls(), calls) << bytes;
  }
}

TEST(CachingAllocatorTest, SmallRequestsShareOneSegment) {
  FakeMemory mem(GiB);
  CachingAllocator alloc(&mem);
  std::vector<void*> blocks;
  for (int i = 0; i < 64; ++i) blocks.push_back(alloc.allocate(32 * KiB - 7, "test"));
  EXPECT_EQ(mem.allocate_calls(), 1u);
  for (size_t i = 1; i < blocks.size(); ++i) {
    EXPECT_EQ(addr(blocks[i]), addr(blocks[i - 1]) + 32 * KiB);
  }
  // The segment is exactly full; one more byte needs a second segment.
  void* extra = alloc.allocate(1, "test");
  EXPECT_EQ(mem.allocate_calls(), 2u);
  alloc.free(extra);
  for (void* p : blocks) alloc.free(p);
}

TEST(CachingAllocatorTest, SplitThenMergeRestoresTheWholeSegment) {
  FakeMemory mem(GiB);
  CachingAllocator alloc(&mem);
  void* a = alloc.allocate(5 * MiB, "test");
  void* b = alloc.allocate(5 * MiB, "test");
  void* c = alloc.allocate(10 * MiB, "test");  // best fit: the 10 MiB tail, not a new segment
  ASSERT_EQ(mem.allocate_calls(), 1u);
  EXPECT_EQ(addr(b), addr(a) + 5 * MiB);
  EXPECT_EQ(addr(c), addr(a) + 10 * MiB);
  EXPECT_EQ(alloc.stats().largest_cached_block, 0u);

  alloc.free(b);  // middle: no free neighbour
  EXPECT_EQ(alloc.stats().largest_cached_block, 5 * MiB);
  alloc.free(a);  // merges with the freed middle
  EXPECT_EQ(alloc.stats().largest_cached_block, 10 * MiB);
  alloc.free(c);  // merges into the whole segment
  EXPECT_EQ(alloc.stats().largest_cached_block, 20 * MiB);

  void* whole = alloc.allocate(20 * MiB, "test");
  EXPECT_EQ(whole, a);
  EXPECT_EQ(mem.allocate_calls(), 1u);
  alloc.free(whole);
}

TEST(CachingAllocatorTest, FreeMergesWithBothNeighboursAtOnce) {
  FakeMemory mem(GiB);
  CachingAllocator alloc(&mem);
  void* a = alloc.allocate(512 * KiB, "test");
  void* b = alloc.allocate(512 * KiB, "test");
  void* c = alloc.allocate(MiB, "test");
  ASSERT_EQ(mem.allocate_calls(), 1u);
  alloc.free(a);
  alloc.free(c);
  EXPECT_EQ(alloc.stats().largest_cached_block, MiB);
  alloc.free(b);
  EXPECT_EQ(alloc.stats().largest_cached_block, 2 * MiB);
  // The merged segment serves two 1 MiB blocks again, with no source call.
  void* d = alloc.allocate(MiB, "test");
  void* e = alloc.allocate(MiB, "test");
  EXPECT_EQ(d, a);
  EXPECT_EQ(addr(e), addr(a) + MiB);
  EXPECT_EQ(mem.allocate_calls(), 1u);
  alloc.free(d);
  alloc.free(e);
}

TEST(CachingAllocatorTest, SmallPoolSplitsDownTo512Bytes) {
  FakeMemory mem(GiB);
  CachingAllocator alloc(&mem);
  void* a = alloc.allocate(MiB, "test");
  void* b = alloc.allocate(MiB - 512, "test");
  void* c = alloc.allocate(1, "test");  // the 512-byte tail left by b's split
  EXPECT_EQ(mem.allocate_calls(), 1u);
  EXPECT_EQ(addr(c), addr(a) + 2 * MiB - 512);
  EXPECT_EQ(alloc.stats().allocated_bytes, 2 * MiB);
  alloc.free(a);
  alloc.free(b);
  alloc.free(c);
}

TEST(CachingAllocatorTest, LargePoolSplitsOnlyWhenMoreThanOneMiBRemains) {
  FakeMemory mem(GiB);
  CachingAllocator alloc(&mem);
  void* seed = alloc.allocate(2 * MiB, "test");  // obtains a 20 MiB segment
  alloc.free(seed);
  // 19.25 MiB from the 20 MiB block leaves 0.75 MiB: handed out whole.
  void* big = alloc.allocate(19 * MiB + 256 * KiB, "test");
  EXPECT_EQ(big, seed);
  EXPECT_EQ(alloc.stats().allocated_bytes, 20 * MiB);
  EXPECT_EQ(alloc.stats().requested_bytes, 19 * MiB + 256 * KiB);
  alloc.free(big);
  // Exactly 1 MiB left over: still not split.
  big = alloc.allocate(19 * MiB, "test");
  EXPECT_EQ(alloc.stats().allocated_bytes, 20 * MiB);
  alloc.free(big);
  // 1 MiB + 512 left over: split, and the tail serves a medium request.
  big = alloc.allocate(19 * MiB - 512, "test");
  EXPECT_EQ(alloc.stats().allocated_bytes, 19 * MiB - 512);
  void* tail = alloc.allocate(MiB + 512, "test");
  EXPECT_EQ(addr(tail), addr(big) + 19 * MiB - 512);
  EXPECT_EQ(mem.allocate_calls(), 1u);
  alloc.free(big);
  alloc.free(tail);
}

TEST(CachingAllocatorTest, SmallAndLargePoolsAreSeparate) {
  FakeMemory mem(GiB);
  CachingAllocator alloc(&mem);
  void* large = alloc.allocate(4 * MiB, "test");
  alloc.free(large);  // a free 20 MiB large segment
  void* small = alloc.allocate(4 * KiB, "test");
  EXPECT_EQ(mem.allocate_calls(), 2u);
  EXPECT_EQ(mem.held_sizes().back(), 2 * MiB);
  alloc.free(small);  // a free 2 MiB small segment
  void* medium = alloc.allocate(MiB + 512, "test");
  EXPECT_EQ(medium, large);  // from the large pool, not from the free small segment
  void* medium2 = alloc.allocate(MiB + 512, "test");
  EXPECT_EQ(addr(medium2), addr(large) + MiB + 512);
  EXPECT_EQ(mem.allocate_calls(), 2u);
  alloc.free(medium);
  alloc.free(medium2);
}

TEST(CachingAllocatorTest, BlocksOfDifferentSegmentsNeverMerge) {
  FakeMemory mem(GiB);
  CachingAllocator alloc(&mem);
  std::vector<void*> blocks;
  for (int i = 0; i < 4; ++i) blocks.push_back(alloc.allocate(MiB, "test"));
  ASSERT_EQ(mem.allocate_calls(), 2u);
  for (void* p : blocks) alloc.free(p);
  AllocatorStats s = alloc.stats();
  EXPECT_EQ(s.largest_cached_block, 2 * MiB);
  EXPECT_EQ(s.segments, 2u);
}

// One trace of allocations and frees with sizes within +-10% of a few bases, generated once and
// replayed like the steps of a training loop. After the warm-up replays the cache must serve every
// request, and the segment classes and splits must not waste more than 30% at the peak.
TEST(CachingAllocatorTest, ReplayedVaryingSizeTraceNeedsNoNewSegmentsAndWastesLittle) {
  struct Step {
    bool allocate;
    size_t bytes;
    size_t slot;
  };
  TraceRng rng(7);
  std::vector<Step> trace;
  std::vector<size_t> live;
  const size_t kAllocations = 400;
  for (size_t slot = 0; slot < kAllocations; ++slot) {
    const size_t base = kTraceBases[rng.below(std::size(kTraceBases))];
    trace.push_back(
        {true, static_cast<size_t>(static_cast<double>(base) * (0.9 + 0.2 * rng.unit())), slot});
    live.push_back(slot);
    if (rng.unit() < 0.6) {
      const size_t i = rng.below(live.size());
      trace.push_back({false, 0, live[i]});
      live[i] = live.back();
      live.pop_back();
    }
  }
  while (!live.empty()) {
    const size_t i = rng.below(live.size());
    trace.push_back({false, 0, live[i]});
    live[i] = live.back();
    live.pop_back();
  }

  FakeMemory mem(64 * GiB);
  CachingAllocator alloc(&mem);
  std::vector<void*> ptrs(kAllocations, nullptr);
  const int kWarmup = 2;
  const int kReplays = 50;
  uint64_t allocs_after_warmup = 0;
  for (int replay = 0; replay < kReplays; ++replay) {
    if (replay == kWarmup) allocs_after_warmup = alloc.stats().source_allocs;
    for (const Step& step : trace) {
      if (step.allocate) {
        ptrs[step.slot] = alloc.allocate(step.bytes, "trace");
      } else {
        alloc.free(ptrs[step.slot]);
      }
    }
  }
  const AllocatorStats s = alloc.stats();
  EXPECT_EQ(s.source_allocs, allocs_after_warmup);
  const double ratio =
      static_cast<double>(s.peak_reserved_bytes) / static_cast<double>(s.peak_allocated_bytes);
  RecordProperty("peak_reserved_over_peak_allocated", std::to_string(ratio));
  EXPECT_LE(ratio, 1.3) << "peak reserved " << s.peak_reserved_bytes << ", peak allocated "
                        << s.peak_allocated_bytes;
  EXPECT_EQ(s.allocated_bytes, 0u);
}

// Sizes drawn afresh every step (shapes that change from step to step). Occasional new segments
// are expected when a step's demand exceeds every earlier one; the cache must still stay close to
// the peak demand.
TEST(CachingAllocatorTest, FreshVaryingSizesEachStepStayNearPeakDemand) {
  FakeMemory mem(64 * GiB);
  CachingAllocator alloc(&mem);
  TraceRng rng(11);
  std::vector<void*> live;
  const int kWarmup = 50;
  const int kSteps = 300;
  uint64_t reserved_after_warmup = 0;
  uint64_t allocs_after_warmup = 0;
  for (int step = 0; step < kSteps; ++step) {
    if (step == kWarmup) {
      reserved_after_warmup = alloc.stats().reserved_bytes;
      allocs_after_warmup = alloc.stats().source_allocs;
    }
    for (size_t k = 0; k < 200; ++k) {
      const double base = static_cast<double>(kTraceBases[k % std::size(kTraceBases)]);
      live.push_back(alloc.allocate(static_cast<size_t>(base * (0.9 + 0.2 * rng.unit())), "t"));
      if (rng.unit() < 0.4) {
        const size_t i = rng.below(live.size());
        alloc.free(live[i]);
        live[i] = live.back();
        live.pop_back();
      }
    }
    while (!live.empty()) {
      const size_t i = rng.below(live.size());
      alloc.free(live[i]);
      live[i] = live.back();
      live.pop_back();
    }
  }
  const AllocatorStats s = alloc.stats();
  const double ratio =
      static_cast<double>(s.peak_reserved_bytes) / static_cast<double>(s.peak_allocated_bytes);
  EXPECT_LE(ratio, 1.3) << "peak reserved " << s.peak_reserved_bytes << ", peak allocated "
                        << s.peak_allocated_bytes;
  RecordProperty("peak_reserved_over_peak_allocated", std::to_string(ratio));
  RecordProperty("segments_after_warmup", std::to_string(s.source_allocs - allocs_after_warmup));
  EXPECT_LE(static_cast<double>(s.reserved_bytes),
            1.15 * static_cast<double>(reserved_after_warmup));
}

TEST(CachingAllocatorTest, MemoryFractionCapBlocksNewSegmentsUntilMemoryIsFreed) {
  FakeMemory mem(100 * MiB);
  CachingAllocator alloc(&mem);
  EXPECT_EQ(alloc.memory_fraction(), 1.0);
  EXPECT_EQ(alloc.cap_bytes(), UINT64_MAX);
  alloc.set_memory_fraction(0.5);
  EXPECT_EQ(alloc.memory_fraction(), 0.5);
  EXPECT_EQ(alloc.cap_bytes(), 50 * MiB);

  void* a = alloc.allocate(30 * MiB, "test");
  const tlrt::Error e = error_from([&] { alloc.allocate(30 * MiB - 100, "cap_probe"); });
  EXPECT_EQ(e.kind(), ErrorKind::out_of_memory);
  const std::string msg = e.what();
  EXPECT_TRUE(contains(msg, "cap_probe")) << msg;
  EXPECT_TRUE(contains(msg, "requested " + std::to_string(30 * MiB - 100))) << msg;
  EXPECT_TRUE(contains(msg, "rounded " + std::to_string(30 * MiB))) << msg;
  EXPECT_TRUE(contains(msg, "allocated " + std::to_string(30 * MiB))) << msg;
  EXPECT_TRUE(contains(msg, "reserved " + std::to_string(30 * MiB))) << msg;
  EXPECT_TRUE(contains(msg, "device free " + std::to_string(70 * MiB))) << msg;
  EXPECT_TRUE(contains(msg, "cap " + std::to_string(50 * MiB))) << msg;
  AllocatorStats s = alloc.stats();
  EXPECT_EQ(s.ooms, 1u);
  EXPECT_EQ(s.allocated_bytes, 30 * MiB);
  EXPECT_EQ(s.active_blocks, 1u);
  // Nothing was cached, so there was nothing to synchronise for and nothing to retry.
  EXPECT_EQ(s.retries, 0u);
  EXPECT_EQ(mem.synchronize_calls(), 0u);

  alloc.free(a);
  void* b = alloc.allocate(30 * MiB - 100, "test");  // the cached segment
  EXPECT_EQ(b, a);
  alloc.free(b);
  // 40 MiB does not fit beside the cached 30 MiB segment: the cache is released first.
  void* c = alloc.allocate(40 * MiB, "test");
  s = alloc.stats();
  EXPECT_EQ(s.reserved_bytes, 40 * MiB);
  EXPECT_EQ(s.source_frees, 1u);
  EXPECT_EQ(s.retries, 1u);
  EXPECT_EQ(mem.synchronize_calls(), 1u);
  EXPECT_EQ(s.ooms, 1u);
  EXPECT_EQ(mem.bad_releases(), 0u);
  alloc.free(c);
}

TEST(CachingAllocatorTest, CapFallsBackToASegmentOfTheRequestSize) {
  FakeMemory mem(100 * MiB);
  CachingAllocator alloc(&mem);
  alloc.set_memory_fraction(0.25);
  void* a = alloc.allocate(20 * MiB, "test");  // 5 MiB of cap left
  // A 1.5 MiB request wants a 20 MiB segment; a 1.5 MiB one fits under the cap.
  void* b = alloc.allocate(3 * MiB / 2, "test");
  EXPECT_EQ(mem.held_sizes().back(), 3 * MiB / 2);
  void* c = alloc.allocate(3 * MiB, "test");
  EXPECT_EQ(alloc.stats().reserved_bytes, 20 * MiB + 3 * MiB / 2 + 3 * MiB);
  // Small pool too: 512 KiB left, less than a 2 MiB small segment.
  void* d = alloc.allocate(300 * KiB, "test");
  EXPECT_EQ(mem.held_sizes().back(), 300 * KiB);
  EXPECT_EQ(alloc.stats().ooms, 0u);
  EXPECT_EQ(alloc.stats().retries, 0u);
  EXPECT_EQ(error_from([&] { alloc.allocate(300 * KiB, "test"); }).kind(),
            ErrorKind::out_of_memory);
  for (void* p : {a, b, c, d}) alloc.free(p);
}

TEST(CachingAllocatorTest, MemoryFractionRejectsValuesOutsideZeroToOne) {
  FakeMemory mem(100 * MiB);
  CachingAllocator alloc(&mem);
  alloc.set_memory_fraction(0.75);
  for (double bad :
       {0.0, -0.0, -0.5, 1.0000001, 2.0, std::nan(""), std::numeric_limits<double>::infinity(),
        -std::numeric_limits<double>::infinity()}) {
    EXPECT_EQ(error_from([&] { alloc.set_memory_fraction(bad); }).kind(),
              ErrorKind::invalid_argument)
        << bad;
  }
  EXPECT_EQ(alloc.memory_fraction(), 0.75);
  EXPECT_EQ(alloc.cap_bytes(), 75 * MiB);
  alloc.set_memory_fraction(1.0);
  EXPECT_EQ(alloc.cap_bytes(), 100 * MiB);
  alloc.set_memory_fraction(1e-9);
  EXPECT_EQ(alloc.cap_bytes(), static_cast<uint64_t>(std::floor(1e-9 * 100 * MiB)));
}

TEST(CachingAllocatorTest, SourceOomRetriesOnceAfterReleasingTheCache) {
  FakeMemory mem(GiB);
  CachingAllocator alloc(&mem);
  alloc.free(alloc.allocate(4 * KiB, "test"));   // a cached, wholly free 2 MiB segment
  void* kept = alloc.allocate(5 * MiB, "test");  // keeps its 20 MiB segment
  ASSERT_EQ(mem.synchronize_calls(), 0u);
  mem.fail_next(1);
  void* p = alloc.allocate(30 * MiB, "test");
  EXPECT_NE(p, nullptr);
  EXPECT_EQ(mem.synchronize_calls(), 1u);
  AllocatorStats s = alloc.stats();
  EXPECT_EQ(s.retries, 1u);
  EXPECT_EQ(s.ooms, 0u);
  EXPECT_EQ(s.source_frees, 1u);  // the free small segment, not the one in use
  EXPECT_EQ(s.segments, 2u);
  EXPECT_EQ(mem.held_sizes(), (std::vector<size_t>{20 * MiB, 30 * MiB}));
  alloc.free(p);
  alloc.free(kept);
}

TEST(CachingAllocatorTest, SourceOomForGoodThrowsAndLeavesAllocatedUnchanged) {
  FakeMemory mem(GiB);
  CachingAllocator alloc(&mem);
  void* kept = alloc.allocate(3 * MiB, "test");
  const AllocatorStats before = alloc.stats();
  mem.set_fail_always(true);
  const tlrt::Error e = error_from([&] { alloc.allocate(100 * MiB, "big_op"); });
  EXPECT_EQ(e.kind(), ErrorKind::out_of_memory);
  const std::string msg = e.what();
  EXPECT_TRUE(contains(msg, "big_op")) << msg;
  EXPECT_TRUE(contains(msg, "requested " + std::to_string(100 * MiB))) << msg;
  EXPECT_TRUE(contains(msg, "allocated " + std::to_string(3 * MiB))) << msg;
  EXPECT_TRUE(contains(msg, "reserved " + std::to_string(20 * MiB))) << msg;
  EXPECT_TRUE(contains(msg, "device free " + std::to_string(GiB - 20 * MiB))) << msg;
  EXPECT_TRUE(contains(msg, "cap none")) << msg;
  AllocatorStats s = alloc.stats();
  EXPECT_EQ(s.ooms, 1u);
  EXPECT_EQ(s.retries, 1u);
  EXPECT_EQ(s.allocated_bytes, before.allocated_bytes);
  EXPECT_EQ(s.requested_bytes, before.requested_bytes);
  EXPECT_EQ(s.active_blocks, 1u);
  EXPECT_EQ(mem.synchronize_calls(), 1u);
  // The caller may free memory and try again.
  mem.set_fail_always(false);
  void* p = alloc.allocate(100 * MiB, "big_op");
  EXPECT_NE(p, nullptr);
  alloc.free(p);
  alloc.free(kept);
}

TEST(CachingAllocatorTest, SourceOomFallsBackToASegmentOfTheRequestSize) {
  FakeMemory mem(10 * MiB);
  CachingAllocator alloc(&mem);
  void* a = alloc.allocate(6 * MiB, "test");  // a 20 MiB segment cannot exist here
  EXPECT_EQ(mem.held_sizes(), (std::vector<size_t>{6 * MiB}));
  EXPECT_EQ(alloc.stats().retries, 1u);
  const tlrt::Error e = error_from([&] { alloc.allocate(5 * MiB, "test"); });
  EXPECT_EQ(e.kind(), ErrorKind::out_of_memory);
  EXPECT_TRUE(contains(e.what(), "device free " + std::to_string(4 * MiB))) << e.what();
  void* b = alloc.allocate(4 * MiB, "test");
  EXPECT_NE(b, nullptr);
  alloc.free(a);
  alloc.free(b);
}

TEST(CachingAllocatorTest, RequestBeyondAnySourceIsOutOfMemory) {
  FakeMemory mem(GiB);
  CachingAllocator alloc(&mem);
  for (size_t bytes : {SIZE_MAX, SIZE_MAX / 2 + 1, size_t{1} << 50}) {
    EXPECT_EQ(error_from([&] { alloc.allocate(bytes, "test"); }).kind(), ErrorKind::out_of_memory)
        << bytes;
  }
  EXPECT_EQ(alloc.stats().ooms, 3u);
  EXPECT_EQ(alloc.stats().reserved_bytes, 0u);
}

TEST(CachingAllocatorTest, EmptyCacheReleasesOnlyWhollyFreeSegments) {
  FakeMemory mem(GiB);
  CachingAllocator alloc(&mem);
  void* a = alloc.allocate(100 * KiB, "test");
  void* b = alloc.allocate(100 * KiB, "test");  // same small segment as a
  void* c = alloc.allocate(5 * MiB, "test");
  void* d = alloc.allocate(40 * MiB, "test");
  alloc.free(b);
  alloc.free(d);
  const AllocatorStats before = alloc.stats();
  alloc.empty_cache();
  const AllocatorStats after = alloc.stats();
  EXPECT_EQ(mem.synchronize_calls(), 1u);
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
  EXPECT_EQ(after.peak_allocated_bytes, before.peak_allocated_bytes);
  EXPECT_EQ(after.peak_reserved_bytes, before.peak_reserved_bytes);
  EXPECT_EQ(after.reserved_bytes, before.reserved_bytes - 40 * MiB);
  EXPECT_EQ(after.source_frees, 1u);
  EXPECT_EQ(mem.held_sizes(), (std::vector<size_t>{2 * MiB, 20 * MiB}));

  alloc.free(a);
  alloc.free(c);
  alloc.empty_cache();
  const AllocatorStats emptied = alloc.stats();
  EXPECT_EQ(emptied.reserved_bytes, 0u);
  EXPECT_EQ(emptied.segments, 0u);
  EXPECT_EQ(emptied.peak_reserved_bytes, before.peak_reserved_bytes);
  alloc.empty_cache();  // nothing to release: reserved stays at zero
  EXPECT_EQ(alloc.stats().reserved_bytes, 0u);
  EXPECT_EQ(mem.held_bytes(), 0u);
  EXPECT_EQ(mem.bad_releases(), 0u);
}

TEST(CachingAllocatorTest, FreeOfAPointerNotHandedOutThrows) {
  FakeMemory mem(GiB);
  CachingAllocator alloc(&mem);
  int local = 0;
  EXPECT_EQ(error_from([&] { alloc.free(&local); }).kind(), ErrorKind::invalid_argument);
  char* p = static_cast<char*>(alloc.allocate(4096, "test"));
  EXPECT_EQ(error_from([&] { alloc.free(p + 512); }).kind(), ErrorKind::invalid_argument);
  alloc.free(p);
  EXPECT_EQ(error_from([&] { alloc.free(p); }).kind(), ErrorKind::invalid_argument);
  const AllocatorStats s = alloc.stats();
  EXPECT_EQ(s.allocated_bytes, 0u);
  EXPECT_EQ(s.active_blocks, 0u);
}

TEST(CachingAllocatorTest, StatsTrackEveryField) {
  FakeMemory mem(GiB);
  CachingAllocator alloc(&mem);
  void* a = alloc.allocate(1000, "test");
  void* c = alloc.allocate(12 * MiB, "test");  // before b, so it cannot land in b's segment tail
  void* b = alloc.allocate(3 * MiB, "test");
  AllocatorStats s = alloc.stats();
  EXPECT_EQ(s.allocated_bytes, 1024 + 3 * MiB + 12 * MiB);
  EXPECT_EQ(s.requested_bytes, 1000 + 3 * MiB + 12 * MiB);
  EXPECT_EQ(s.reserved_bytes, 2 * MiB + 20 * MiB + 12 * MiB);
  EXPECT_EQ(s.peak_allocated_bytes, s.allocated_bytes);
  EXPECT_EQ(s.peak_reserved_bytes, s.reserved_bytes);
  EXPECT_EQ(s.active_blocks, 3u);
  EXPECT_EQ(s.segments, 3u);
  EXPECT_EQ(s.source_allocs, 3u);
  EXPECT_EQ(s.source_frees, 0u);
  EXPECT_EQ(s.retries, 0u);
  EXPECT_EQ(s.ooms, 0u);
  EXPECT_EQ(s.cached_bytes, s.reserved_bytes - s.allocated_bytes);
  EXPECT_EQ(s.largest_cached_block, 17 * MiB);

  alloc.free(c);
  alloc.free(b);
  s = alloc.stats();
  EXPECT_EQ(s.allocated_bytes, 1024u);
  EXPECT_EQ(s.requested_bytes, 1000u);
  EXPECT_EQ(s.active_blocks, 1u);
  EXPECT_EQ(s.peak_allocated_bytes, 1024 + 3 * MiB + 12 * MiB);
  EXPECT_EQ(s.largest_cached_block, 20 * MiB);
  EXPECT_EQ(s.cached_bytes, 34 * MiB - 1024);

  alloc.empty_cache();
  s = alloc.stats();
  EXPECT_EQ(s.reserved_bytes, 2 * MiB);
  EXPECT_EQ(s.segments, 1u);
  EXPECT_EQ(s.source_frees, 2u);
  EXPECT_EQ(s.peak_reserved_bytes, 34 * MiB);
  EXPECT_EQ(s.largest_cached_block, 2 * MiB - 1024);
  alloc.free(a);
}

TEST(CachingAllocatorTest, DestructorReleasesCachedSegmentsAndLeavesLiveOnes) {
  FakeMemory mem(GiB);
  {
    CachingAllocator alloc(&mem);
    alloc.free(alloc.allocate(5 * MiB, "test"));
    alloc.free(alloc.allocate(100, "test"));
    alloc.allocate(64 * MiB, "test");  // live at teardown
  }
  EXPECT_EQ(mem.held_sizes(), (std::vector<size_t>{64 * MiB}));
  EXPECT_EQ(mem.bad_releases(), 0u);
}

TEST(CachingAllocatorTest, ConcurrentThreadsGetDisjointRanges) {
  FakeMemory mem(64 * GiB);
  CachingAllocator alloc(&mem);
  std::mutex ranges_mutex;
  std::map<uintptr_t, uintptr_t> ranges;  // start -> end of every live allocation
  std::vector<void*> handoff;             // blocks freed by a thread other than their allocator
  std::vector<std::string> overlaps;

  auto track = [&](void* p, size_t bytes) {
    const uintptr_t start = addr(p);
    const uintptr_t end = start + bytes;
    std::lock_guard<std::mutex> lock(ranges_mutex);
    auto next = ranges.lower_bound(start);
    if (next != ranges.end() && next->first < end)
      overlaps.push_back("next " + std::to_string(start));
    if (next != ranges.begin() && std::prev(next)->second > start) {
      overlaps.push_back("prev " + std::to_string(start));
    }
    ranges.emplace(start, end);
  };
  // Untracked before the free, so a reuse by another thread is never mistaken for an overlap.
  auto untrack_and_free = [&](void* p) {
    {
      std::lock_guard<std::mutex> lock(ranges_mutex);
      ranges.erase(addr(p));
    }
    alloc.free(p);
  };

  const int kThreads = 4;
  const int kOps = 20000;
  const size_t kMaxLivePerThread = 64;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      TraceRng rng(1000 + t);
      std::vector<void*> mine;
      for (int op = 0; op < kOps; ++op) {
        const double pick = rng.unit();
        if (mine.empty() || (pick < 0.5 && mine.size() < kMaxLivePerThread)) {
          size_t bytes;
          const double kind = rng.unit();
          if (kind < 0.7) {
            bytes = 1 + rng.below(256 * KiB);
          } else if (kind < 0.95) {
            bytes = MiB + rng.below(8 * MiB);
          } else {
            bytes = 10 * MiB + rng.below(30 * MiB);
          }
          void* p = alloc.allocate(bytes, "thread");
          track(p, bytes);
          mine.push_back(p);
        } else if (pick < 0.95) {
          const size_t i = rng.below(mine.size());
          void* p = mine[i];
          mine[i] = mine.back();
          mine.pop_back();
          untrack_and_free(p);
        } else {
          void* give = mine.back();
          mine.pop_back();
          void* take = nullptr;
          {
            std::lock_guard<std::mutex> lock(ranges_mutex);
            handoff.push_back(give);
            if (handoff.size() > 1) {
              take = handoff.front();
              handoff.erase(handoff.begin());
            }
          }
          if (take) untrack_and_free(take);
        }
      }
      for (void* p : mine) untrack_and_free(p);
    });
  }
  for (std::thread& th : threads) th.join();
  for (void* p : handoff) untrack_and_free(p);

  EXPECT_TRUE(overlaps.empty()) << overlaps.size() << " overlaps, first " << overlaps.front();
  const AllocatorStats s = alloc.stats();
  EXPECT_EQ(s.allocated_bytes, 0u);
  EXPECT_EQ(s.requested_bytes, 0u);
  EXPECT_EQ(s.active_blocks, 0u);
  EXPECT_EQ(s.cached_bytes, s.reserved_bytes);
  alloc.empty_cache();
  EXPECT_EQ(mem.held_bytes(), 0u);
  EXPECT_EQ(mem.bad_releases(), 0u);
}

}  // namespace

namespace {

TEST(CachingAllocatorTest, PassThroughModeMakesEveryRequestItsOwnSourceAllocation) {
  FakeMemory mem(GiB);
  CachingAllocator alloc(&mem, /*caching=*/false);
  EXPECT_FALSE(alloc.caching());
  void* a = alloc.allocate(1000, "test");
  void* b = alloc.allocate(1000, "test");
  EXPECT_EQ(mem.allocate_calls(), 2u);
  EXPECT_EQ(alloc.stats().reserved_bytes, 2 * 1024u);  // exactly the rounded sizes
  EXPECT_EQ(alloc.stats().allocated_bytes, 2 * 1024u);
  const size_t syncs = mem.synchronize_calls();
  alloc.free(a);
  EXPECT_EQ(mem.synchronize_calls(), syncs + 1);  // no queued work may still use it
  EXPECT_EQ(alloc.stats().reserved_bytes, 1024u);
  EXPECT_EQ(alloc.stats().source_frees, 1u);
  alloc.free(b);
  EXPECT_EQ(alloc.stats().reserved_bytes, 0u);
  EXPECT_EQ(mem.bad_releases(), 0u);
  EXPECT_TRUE(CachingAllocator(&mem).caching());
}

}  // namespace
