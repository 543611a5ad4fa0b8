// The kernel cache of SPEC-runtime 10.5 on the reference backend, through the runtime core (the
// ABI suites cannot read the counters): a hit compiles nothing, 17 distinct sources evict the
// least recently used one (its object closed once no call holds it) and a hit refreshes an
// entry's place, a failed compile is not cached, and run_generated compiles at count = 0.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/error.h"
#include "nvrtc_sources.h"
#include "runtime/context.h"
#include "runtime/kernel_run.h"

namespace {

using namespace nvrtc_sources;
using tlrt::Backend;
using tlrt::KernelArg;
using tlrt::KernelScalar;

const char* kOp = "nvrtc_cache_test";

class NvrtcCache : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!tlrt::kernel_runs_available()) GTEST_SKIP() << "no host C++ compiler on this machine";
    tlrt::clear_kernel_cache();
  }
};

std::string constant_source(int k) {
  return signature("float", 1) + read("float", 0, "index", "v1") + "float v2 = __fadd_rn(v1, " +
         f32_literal(static_cast<float>(k)) + ");\n" + finish("v2");
}

float run(int k, float x) {
  float out = 0;
  std::vector<KernelArg> args = {{&x, 1}};
  tlrt::run_generated(Backend::reference, constant_source(k), KernelScalar::f32, 4, args, &out, 1,
                      kOp);
  return out;
}

TEST_F(NvrtcCache, HitCompilesNothing) {
  const tlrt::KernelRunCounters a = tlrt::kernel_run_counters();
  EXPECT_EQ(run(1, 2.0f), 3.0f);
  const tlrt::KernelRunCounters b = tlrt::kernel_run_counters();
  EXPECT_EQ(b.host_compiles, a.host_compiles + 1);
  EXPECT_EQ(b.cache_misses, a.cache_misses + 1);
  EXPECT_EQ(run(1, 5.0f), 6.0f);
  const tlrt::KernelRunCounters c = tlrt::kernel_run_counters();
  EXPECT_EQ(c.host_compiles, b.host_compiles);
  EXPECT_EQ(c.cache_hits, b.cache_hits + 1);
  EXPECT_EQ(c.cache_entries, 1u);
}

TEST_F(NvrtcCache, SeventeenthSourceEvictsTheLeastRecentlyUsed) {
  for (int k = 0; k < 16; ++k) EXPECT_EQ(run(k, 0.5f), 0.5f + static_cast<float>(k));
  EXPECT_EQ(tlrt::kernel_run_counters().cache_entries, 16u);
  (void)run(0, 1.0f);  // a hit moves source 0 to the front: source 1 is now the oldest
  const tlrt::KernelRunCounters a = tlrt::kernel_run_counters();
  (void)run(16, 1.0f);
  const tlrt::KernelRunCounters b = tlrt::kernel_run_counters();
  EXPECT_EQ(b.cache_entries, 16u);
  EXPECT_EQ(b.host_unloads, a.host_unloads + 1);  // nothing held it: closed at once
  (void)run(0, 1.0f);                             // still cached
  EXPECT_EQ(tlrt::kernel_run_counters().host_compiles, b.host_compiles);
  EXPECT_EQ(run(1, 1.0f), 2.0f);  // evicted: compiled again
  EXPECT_EQ(tlrt::kernel_run_counters().host_compiles, b.host_compiles + 1);
}

TEST_F(NvrtcCache, FailedCompileIsNotCachedAndCountZeroCompiles) {
  const std::string bad = signature("float", 0) + "float v1 = tlrt_nowhere;\n" + finish("v1");
  const tlrt::KernelRunCounters a = tlrt::kernel_run_counters();
  for (int i = 0; i < 2; ++i) {
    try {
      tlrt::run_generated(Backend::reference, bad, KernelScalar::f32, 4, {}, nullptr, 0, kOp);
      FAIL() << "a source that does not compile ran";
    } catch (const tlrt::Error& e) {
      EXPECT_NE(std::string(e.what()).find("tlrt_nowhere"), std::string::npos) << e.what();
    }
  }
  const tlrt::KernelRunCounters b = tlrt::kernel_run_counters();
  EXPECT_EQ(b.host_compiles, a.host_compiles + 2);
  EXPECT_EQ(b.cache_entries, a.cache_entries);
}
}  // namespace
