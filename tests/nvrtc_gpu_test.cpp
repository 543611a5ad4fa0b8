// Generated-kernel runs on the CUDA backend against the reference backend, in one process (the
// runtime core run_generated on both): the same sources give identical bits on both (the native
// dialect's intrinsics are single roundings; the host compile does not contract), ten runs under
// the deterministic setting give identical bits, a cache hit does no NVRTC compile, no module load
// and no driver allocation, 17+ distinct sources alternating on two threads evict modules while
// calls on the other thread still hold them (results stay right, evicted modules are unloaded),
// the grid limit, the bounds record on the device, and configured formats on device pointers
// (skipped while the embedded header is a placeholder). Without a device every test skips with a
// visible reason.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "kernels/binary/binary_header.h"
#include "nvrtc_sources.h"
#include "runtime/caching_allocator.h"
#include "runtime/context.h"
#include "runtime/kernel_run.h"
#include "runtime/settings.h"
#include "runtime/transfer.h"
#include "tests/support/cuda_suite.h"
#include "tests/support/same_bits.h"

namespace {

using namespace nvrtc_sources;
using tlrt::Backend;
using tlrt::Buffer;
using tlrt::Dtype;
using tlrt::KernelArg;
using tlrt::KernelScalar;

class NvrtcGpu : public gpu_test::CudaSuite<> {
 protected:
  NvrtcGpu() : CudaSuite("GPU checks of generated-kernel runs") {}
};

// The tests that compare with the reference backend need its host C++ compiler.
#define REQUIRE_HOST_COMPILER()                                                           \
  if (tlrt::kernels::host_compiler().empty()) {                                           \
    GTEST_SKIP() << "no host C++ compiler: the reference backend cannot run the sources"; \
  }

const char* kOp = "nvrtc_gpu_test";

std::unique_ptr<Buffer> upload_f32(Backend backend, const std::vector<float>& v) {
  return tlrt::upload_words(backend, Dtype::f32, reinterpret_cast<const uint8_t*>(v.data()),
                            v.size(), Dtype::f32, kOp);
}

std::vector<uint32_t> words_of(const Buffer& b) {
  std::vector<uint32_t> w(b.size());
  tlrt::download_words(b, reinterpret_cast<uint8_t*>(w.data()), Dtype::f32, kOp);
  return w;
}

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    uint32_t u = rng();
    if (i % 64 == 0) u = 0x00000001u;  // subnormals survive (no flush to zero)
    if (i % 64 == 1) u = 0x80000000u;
    std::memcpy(&v[i], &u, 4);
    if (std::isnan(v[i])) v[i] = 1.0f;
  }
  return v;
}

// Runs `source` on `backend` over float32 buffers and returns the output words.
std::vector<uint32_t> run_f32(Backend backend, const std::string& source,
                              const std::vector<const Buffer*>& inputs, uint64_t count) {
  std::vector<const Buffer*> in = inputs;
  for (const Buffer* b : in) EXPECT_EQ(b->backend(), backend);  // the inputs pick the backend
  std::unique_ptr<Buffer> out = tlrt::kernel_run_buffers(source, in, count, kOp);
  return words_of(*out);
}

bool same_words(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    float x, y;
    std::memcpy(&x, &a[i], 4);
    std::memcpy(&y, &b[i], 4);
    if (!test_bits::same_bits_or_nan(x, y)) return false;
  }
  return true;
}

std::string loop_source() {
  return signature("float", 1) + "float v1 = " + f32_literal(0.0f) + ";\n" +
         "for (unsigned long long v2 = 0ULL; v2 < 8ULL; ++v2) {\n"
         "unsigned long long v3 = index * 8ULL + v2;\n" +
         read("float", 0, "v3", "v4") + "float v5 = __fmul_rn(v4, v4);\n" +
         "v1 = __fadd_rn(v1, v5);\n}\n" + finish("v1");
}

}  // namespace

TEST_F(NvrtcGpu, SameBitsAsTheReferenceBackend) {
  REQUIRE_HOST_COMPILER();
  const size_t n = (size_t{1} << 20) + 77;
  const std::vector<float> a = random_floats(n, 1), b = random_floats(n, 2);
  auto da = upload_f32(Backend::cuda, a), db = upload_f32(Backend::cuda, b);
  auto ha = upload_f32(Backend::reference, a), hb = upload_f32(Backend::reference, b);
  const std::string src = add_mul_source(0.7f);
  EXPECT_TRUE(same_words(run_f32(Backend::cuda, src, {da.get(), db.get()}, n),
                         run_f32(Backend::reference, src, {ha.get(), hb.get()}, n)));
  const std::string loop = loop_source();
  EXPECT_TRUE(same_words(run_f32(Backend::cuda, loop, {da.get()}, n / 8),
                         run_f32(Backend::reference, loop, {ha.get()}, n / 8)));
}

TEST_F(NvrtcGpu, Float64WordsSameOnBothBackends) {
  REQUIRE_HOST_COMPILER();
  const std::string src = signature("double", 2) + read("double", 0, "index", "v1") +
                          read("double", 1, "index", "v2") +
                          "double v3 = __ddiv_rn(__dmul_rn(v1, v2), __dadd_rn(v2, " +
                          f64_literal(1e-3) + "));\n" + finish("v3");
  const size_t n = 100000;
  std::vector<double> a(n), b(n);
  std::mt19937_64 rng(9);
  for (size_t i = 0; i < n; ++i) {
    uint64_t u = rng(), w = rng();
    std::memcpy(&a[i], &u, 8);
    std::memcpy(&b[i], &w, 8);
  }
  std::vector<const uint8_t*> in = {reinterpret_cast<const uint8_t*>(a.data()),
                                    reinterpret_cast<const uint8_t*>(b.data())};
  std::vector<uint64_t> bytes = {8 * n, 8 * n};
  std::vector<double> gpu(n), host(n);
  tlrt::kernel_run_host_words(
      src, KernelScalar::f64, 8, in, bytes, n,
      [&] { return reinterpret_cast<uint8_t*>(gpu.data()); }, kOp);
  std::vector<KernelArg> args = {{a.data(), n}, {b.data(), n}};
  tlrt::run_generated(Backend::reference, src, KernelScalar::f64, 8, args, host.data(), n, kOp);
  for (size_t i = 0; i < n; ++i) ASSERT_TRUE(test_bits::same_bits_or_nan(gpu[i], host[i])) << i;
}

TEST_F(NvrtcGpu, TenRunsAreBitwiseRepeatableUnderTheDeterministicSetting) {
  const bool saved = tlrt::setting_enabled(tlrt::Setting::deterministic);
  tlrt::set_setting(2, 1);
  const size_t n = size_t{1} << 22;
  auto x = upload_f32(Backend::cuda, random_floats(8 * n, 5));
  const std::vector<uint32_t> first = run_f32(Backend::cuda, loop_source(), {x.get()}, n);
  for (int run = 1; run < 10; ++run) {
    EXPECT_EQ(run_f32(Backend::cuda, loop_source(), {x.get()}, n), first) << "run " << run;
  }
  tlrt::set_setting(2, saved ? 1 : 0);
}

TEST_F(NvrtcGpu, CacheHitCompilesNothingLoadsNothingAllocatesNothing) {
  const size_t n = 1 << 16;
  auto a = upload_f32(Backend::cuda, random_floats(n, 3));
  const std::string src = add_mul_source(1.25f);
  (void)run_f32(Backend::cuda, src, {a.get(), a.get()}, n);  // compile, warm the pool
  (void)run_f32(Backend::cuda, src, {a.get(), a.get()}, n);
  const tlrt::KernelRunCounters before = tlrt::kernel_run_counters();
  const uint64_t allocs = tlrt::allocator(Backend::cuda).stats().source_allocs;
  std::unique_ptr<Buffer> out = tlrt::kernel_run_buffers(src, {a.get(), a.get()}, n, kOp);
  const tlrt::KernelRunCounters after = tlrt::kernel_run_counters();
  EXPECT_EQ(after.nvrtc_compiles, before.nvrtc_compiles);
  EXPECT_EQ(after.module_loads, before.module_loads);
  EXPECT_EQ(after.cache_hits, before.cache_hits + 1);
  EXPECT_EQ(after.cache_misses, before.cache_misses);
  // With the caching allocator off (TLRT_CACHING_ALLOCATOR=0, as under the sanitizers) every
  // block is a driver allocation, the kernel run's included.
  if (tlrt::allocator(Backend::cuda).caching()) {
    EXPECT_EQ(tlrt::allocator(Backend::cuda).stats().source_allocs, allocs);
  }
}

TEST_F(NvrtcGpu, EvictionWhileCallsAreInFlight) {
  tlrt::clear_kernel_cache();
  const size_t n = size_t{1} << 22;
  const std::vector<float> a = random_floats(n, 11);
  auto da = upload_f32(Backend::cuda, a);
  const tlrt::KernelRunCounters before = tlrt::kernel_run_counters();
  auto worker = [&](int offset, int* failures) {
    for (int round = 0; round < 3; ++round) {
      for (int k = 0; k < 20; ++k) {
        const float c = static_cast<float>(1 + (k + offset) % 20);
        const std::vector<uint32_t> out =
            run_f32(Backend::cuda, add_mul_source(c), {da.get(), da.get()}, n);
        for (size_t i = 0; i < n; i += 4099) {
          volatile float s = a[i] + a[i];
          volatile float m = s * c;
          uint32_t want;
          float mv = m;
          std::memcpy(&want, &mv, 4);
          if (out[i] != want && !std::isnan(mv)) ++*failures;
        }
      }
    }
  };
  int f1 = 0, f2 = 0;
  std::thread t1(worker, 0, &f1), t2(worker, 10, &f2);
  t1.join();
  t2.join();
  EXPECT_EQ(f1, 0);
  EXPECT_EQ(f2, 0);
  const tlrt::KernelRunCounters after = tlrt::kernel_run_counters();
  EXPECT_GT(after.module_unloads, before.module_unloads);
  EXPECT_LE(after.cache_entries, tlrt::kKernelCacheEntries);
  EXPECT_EQ(after.module_loads - before.module_loads, after.nvrtc_compiles - before.nvrtc_compiles);
}

TEST_F(NvrtcGpu, GridLimitIsChecked) {
  int device = 0, max_x = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&max_x, cudaDevAttrMaxGridDimX, device), cudaSuccess);
  const uint64_t count = (static_cast<uint64_t>(max_x) + 1) * 256;
  const std::string src = signature("float", 0) + finish(f32_literal(1.0f));
  try {
    tlrt::run_generated(Backend::cuda, src, KernelScalar::f32, 4, {}, nullptr, count, kOp);
    FAIL() << "a grid beyond the device's limit was launched";
  } catch (const tlrt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("kernel: output exceeds CUDA grid extent"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(NvrtcGpu, BoundsRecordOnTheDevice) {
  auto a = upload_f32(Backend::cuda, std::vector<float>(1000, 1.0f));
  const std::string src = signature("float", 1) +
                          "unsigned long long v1 = index == 777ULL ? 5000ULL : index;\n" +
                          read("float", 0, "v1", "v2") + finish("v2");
  try {
    (void)tlrt::kernel_run_buffers(src, {a.get()}, 1000, kOp);
    FAIL() << "the out-of-range read was not reported";
  } catch (const tlrt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("kernel: input 0 index 5000 is outside size 1000"),
              std::string::npos)
        << e.what();
  }
  // The next call on the same stream runs normally (the record is zeroed before each launch).
  EXPECT_EQ(run_f32(Backend::cuda, add_mul_source(1.0f), {a.get(), a.get()}, 1000).size(), 1000u);
}

// Records are kept between calls and zeroed only after one read back nonzero: every launch must
// still see four zero words, after a bounds failure and after a kernel that wrote a slot other
// than 0 without failing.
TEST_F(NvrtcGpu, EveryLaunchSeesAZeroRecord) {
  auto a = upload_f32(Backend::cuda, std::vector<float>(256, 1.0f));
  const std::string observe =
      signature("float", 1) +
      "output[index] = (float)(error[0] + error[1] + error[2] + error[3]);\n}\n";
  // Writes slot 2 without failing (slot 0 stays 0): the call succeeds with a dirty record.
  const std::string scribble =
      signature("float", 1) + "if (index == 0ULL) error[2] = 7ULL;\noutput[index] = 1.0f;\n}\n";
  const std::string fail_at = signature("float", 1) +
                              "unsigned long long v1 = index == 3ULL ? 900ULL : index;\n" +
                              read("float", 0, "v1", "v2") + finish("v2");
  auto expect_zero_record = [&](const char* after) {
    const std::vector<uint32_t> seen = run_f32(Backend::cuda, observe, {a.get()}, 256);
    ASSERT_EQ(seen.size(), 256u);
    for (size_t i = 0; i < seen.size(); ++i) {
      ASSERT_EQ(seen[i], 0u) << "after " << after << ", at " << i;  // the bits of +0.0f
    }
  };
  for (int round = 0; round < 3; ++round) {
    expect_zero_record("a clean call");
    EXPECT_EQ(run_f32(Backend::cuda, scribble, {a.get()}, 256).size(), 256u);
    expect_zero_record("a call that wrote slot 2");
    EXPECT_THROW((void)tlrt::kernel_run_buffers(fail_at, {a.get()}, 256, kOp), tlrt::Error);
    expect_zero_record("a bounds failure");
  }
}

TEST_F(NvrtcGpu, ConfiguredFormatsMatchTheHostBitForBit) {
  REQUIRE_HOST_COMPILER();
  if (tlrt::kernels::torchlean_binary_header().find("TLBinary") == std::string_view::npos) {
    GTEST_SKIP() << "the embedded torchlean_binary.cuh is the placeholder (no TLBinary yet)";
  }
  struct Format {
    int e, f;
    long long bias;
    int encoding;
  };
  const Format formats[] = {{5, 10, 15, 0},
                            {8, 7, 127, 0},
                            {5, 10, 13, 0},
                            {8, 23, 127, 1},
                            {11, 52, 1023, 0},
                            {15, 112, 16383, 0},
                            {30, 1000, (1LL << 29) - 1, 0}};
  for (const Format& fmt : formats) {
    const uint64_t width = (1 + fmt.e + fmt.f + 7) / 8;
    const std::string src = configured_head(fmt.e, fmt.f, fmt.bias, fmt.encoding) +
                            signature("scalar", 2) + read("scalar", 0, "index", "v1") +
                            read("scalar", 1, "index", "v2") +
                            "scalar v3 = tl_add(v1, v2);\nscalar v4 = tl_mul(v3, v2);\n"
                            "scalar v5 = tl_div(v4, v1);\n" +
                            finish("v5");
    const size_t n = 4096;
    std::vector<uint8_t> a(n * width), b(n * width);
    std::mt19937 rng(static_cast<uint32_t>(width));
    for (auto& x : a) x = static_cast<uint8_t>(rng());
    for (auto& x : b) x = static_cast<uint8_t>(rng());
    // Clear the bits above the sign so words are well formed.
    const uint64_t bits = 1 + fmt.e + fmt.f;
    if (bits % 8 != 0) {
      for (size_t i = 0; i < n; ++i) {
        a[i * width + width - 1] &= static_cast<uint8_t>((1u << (bits % 8)) - 1);
        b[i * width + width - 1] &= static_cast<uint8_t>((1u << (bits % 8)) - 1);
      }
    }
    std::vector<uint8_t> gpu(n * width), host(n * width);
    tlrt::kernel_run_host_words(
        src, KernelScalar::configured, width, {a.data(), b.data()}, {a.size(), b.size()}, n,
        [&] { return gpu.data(); }, kOp);
    std::vector<KernelArg> args = {{a.data(), n}, {b.data(), n}};
    tlrt::run_generated(Backend::reference, src, KernelScalar::configured, width, args, host.data(),
                        n, kOp);
    EXPECT_EQ(gpu, host) << "E" << fmt.e << " F" << fmt.f;
  }
}
