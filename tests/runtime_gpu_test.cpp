// The CUDA device state below the ABI: the one non-blocking stream, the device scope that restores
// the caller's current device, the exit teardown list, library handles created on first use and
// bound to that stream (cuBLAS strict float32 with its workspace from the caching allocator), and
// a device plan cache whose CUDA-event fences keep an evicted plan alive while queued work may
// still use it.
//
// The cuBLAS test that measures the workspace must be the first in this binary to touch cuBLAS:
// the handle is made once per process.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "runtime/context.h"
#include "runtime/cuda_device.h"
#include "runtime/cuda_libraries.h"
#include "runtime/plan_cache.h"

#if TLRT_HAVE_CUDNN
#include <cudnn.h>
#endif

namespace {

class CudaDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (tlrt::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
    tlrt::cuda::initialize(0);
  }
};

// The low bits of cublasMath_t name the mode; flags such as
// CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION sit above them.
int math_mode_of(cublasHandle_t h) {
  cublasMath_t mode;
  EXPECT_EQ(cublasGetMathMode(h, &mode), CUBLAS_STATUS_SUCCESS);
  return static_cast<int>(mode) & 0xF;
}

TEST_F(CudaDevice, OneNonBlockingStream) {
  cudaStream_t s = tlrt::cuda::stream(0);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(tlrt::cuda::stream(0), s);
  unsigned flags = 0;
  ASSERT_EQ(cudaStreamGetFlags(s, &flags), cudaSuccess);
  EXPECT_EQ(flags & cudaStreamNonBlocking, cudaStreamNonBlocking);
}

TEST_F(CudaDevice, CublasHandleIsLazyBoundToTheStreamAndUsesTheAllocator) {
  tlrt::CachingAllocator& pool = tlrt::cuda::allocator(0);
  const uint64_t before = pool.stats().allocated_bytes;
  cublasHandle_t h = tlrt::cuda::cublas_handle(0);
  ASSERT_NE(h, nullptr);
  // Made by this first call, not by device initialisation: the workspace appears only now.
  EXPECT_EQ(pool.stats().allocated_bytes - before, uint64_t{tlrt::cuda::kCublasWorkspaceBytes});
  EXPECT_EQ(tlrt::cuda::cublas_handle(0), h);
  EXPECT_EQ(pool.stats().allocated_bytes - before, uint64_t{tlrt::cuda::kCublasWorkspaceBytes})
      << "a second call makes nothing";
  cudaStream_t bound = nullptr;
  ASSERT_EQ(cublasGetStream(h, &bound), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(bound, tlrt::cuda::stream(0));
  EXPECT_EQ(math_mode_of(h), static_cast<int>(CUBLAS_PEDANTIC_MATH)) << "never TF32 by default";
}

TEST_F(CudaDevice, CublasMathScopeSetsTf32OnlyForItsCalls) {
  cublasHandle_t h = tlrt::cuda::cublas_handle(0);
  {
    tlrt::cuda::CublasMathScope tf32(0, /*tf32=*/true);
    EXPECT_EQ(tf32.handle(), h);
    EXPECT_EQ(math_mode_of(h), static_cast<int>(CUBLAS_TF32_TENSOR_OP_MATH));
  }
  EXPECT_EQ(math_mode_of(h), static_cast<int>(CUBLAS_PEDANTIC_MATH));
  {
    tlrt::cuda::CublasMathScope strict(0, /*tf32=*/false);
    EXPECT_EQ(math_mode_of(strict.handle()), static_cast<int>(CUBLAS_PEDANTIC_MATH));
  }
  // A call through the scope runs with the handle's stream and workspace.
  float* d = static_cast<float*>(tlrt::cuda::allocator(0).allocate(2 * sizeof(float), "test"));
  const float x[2] = {3.0f, 4.0f};
  ASSERT_EQ(cudaMemcpy(d, x, sizeof(x), cudaMemcpyHostToDevice), cudaSuccess);
  float dot = 0.0f;
  {
    tlrt::cuda::CublasMathScope strict(0, /*tf32=*/false);
    ASSERT_EQ(cublasSdot(strict.handle(), 2, d, 1, d, 1, &dot), CUBLAS_STATUS_SUCCESS);
  }
  tlrt::cuda::synchronize(0, "test");
  EXPECT_EQ(dot, 25.0f);
  tlrt::cuda::allocator(0).free(d);
}

#if TLRT_HAVE_CUDNN
TEST_F(CudaDevice, CudnnHandleIsMadeOnceAndBoundToTheStream) {
  cudnnHandle_t h = tlrt::cuda::cudnn_handle(0);
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(tlrt::cuda::cudnn_handle(0), h);
  cudaStream_t bound = nullptr;
  ASSERT_EQ(cudnnGetStream(h, &bound), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(bound, tlrt::cuda::stream(0));
}
#else
// Needs no device: the build itself lacks cuDNN.
TEST(CudaLibraries, CudnnIsUnavailableInABuildWithoutIt) {
  try {
    tlrt::cuda::cudnn_handle(0);
    FAIL() << "cudnn_handle returned in a build without cuDNN";
  } catch (const tlrt::Error& e) {
    EXPECT_EQ(e.kind(), tlrt::ErrorKind::unavailable);
    EXPECT_NE(std::string(e.what()).find("configured without cuDNN"), std::string::npos);
  }
}
#endif

TEST_F(CudaDevice, DeviceScopeRestoresTheCallersDevice) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  {
    tlrt::cuda::DeviceScope scope(0);
    int current = -1;
    cudaGetDevice(&current);
    EXPECT_EQ(current, 0);
  }
  int current = -1;
  cudaGetDevice(&current);
  EXPECT_EQ(current, 0);
}

TEST_F(CudaDevice, AllocatorStatisticsMoveWithAllocations) {
  tlrt::CachingAllocator& a = tlrt::cuda::allocator(0);
  const tlrt::AllocatorStats s0 = a.stats();
  void* p = a.allocate(3 << 20, "test");
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(cudaMemsetAsync(p, 0, 3 << 20, tlrt::cuda::stream(0)), cudaSuccess);
  const tlrt::AllocatorStats s1 = a.stats();
  EXPECT_GE(s1.allocated_bytes - s0.allocated_bytes, uint64_t{3} << 20);
  EXPECT_LE(s1.allocated_bytes, s1.reserved_bytes);
  a.free(p);
  EXPECT_EQ(a.stats().allocated_bytes, s0.allocated_bytes);
  tlrt::cuda::synchronize(0, "test");
}

// Holds the stream inside a host function until the test opens the gate (or a minute passes, so a
// failing test cannot hang the suite), standing in for a long kernel that still reads a plan.
std::atomic<bool> g_gate_open{false};
void CUDART_CB wait_for_gate(void*) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!g_gate_open.load() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// Destroyed plans, kept past static destruction: the device's teardown may destroy plans at exit.
struct DestroyedPlans {
  std::mutex mutex;
  std::vector<int> keys;
  std::vector<int> snapshot() {
    std::lock_guard<std::mutex> lock(mutex);
    return keys;
  }
};
DestroyedPlans& destroyed_plans() {
  static DestroyedPlans* const log = new DestroyedPlans;
  return *log;
}

TEST_F(CudaDevice, DevicePlanCacheKeepsAnEvictedPlanUntilItsEventCompletes) {
  static tlrt::cuda::DevicePlanCaches<int, int> caches(
      [](int& plan) {
        DestroyedPlans& log = destroyed_plans();
        std::lock_guard<std::mutex> lock(log.mutex);
        log.keys.push_back(plan);
      },
      /*capacity=*/1);
  tlrt::PlanCache<int, int>& cache = caches.on(0);
  EXPECT_EQ(&caches.on(0), &cache) << "one cache per device";
  const tlrt::PlanCacheCounters process_before = tlrt::plan_cache_counters();
  auto make = [](const int& key) { return key; };

  g_gate_open = false;
  {
    auto lease = cache.acquire(1, make);
    ASSERT_EQ(cudaLaunchHostFunc(tlrt::cuda::stream(0), wait_for_gate, nullptr), cudaSuccess);
    lease.used();  // the fence sits behind the gated work
  }
  cache.acquire(2, make).used();  // evicts 1 while the stream is still held
  EXPECT_EQ(cache.counters().evictions, 1u);
  EXPECT_EQ(cache.retired(), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  cache.acquire(3, make).used();  // a miss looks at the retired plans: 1's event is not done
  EXPECT_TRUE(destroyed_plans().snapshot().empty())
      << "a plan was destroyed while work queued before its fence could still run";
  EXPECT_EQ(cache.retired(), 2u);

  g_gate_open = true;
  tlrt::cuda::synchronize(0, "test");
  cache.acquire(4, make).used();  // now every retired event is done, and 3 goes at once
  std::vector<int> destroyed = destroyed_plans().snapshot();
  std::sort(destroyed.begin(), destroyed.end());
  EXPECT_EQ(destroyed, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(cache.retired(), 0u);
  EXPECT_EQ(cache.cached(), 1u);

  const tlrt::PlanCacheCounters c = cache.counters();
  EXPECT_EQ(c.misses, 4u);
  EXPECT_EQ(c.creates, 4u);
  EXPECT_EQ(c.evictions, 3u);
  EXPECT_EQ(c.destroyed, 3u);
  EXPECT_EQ(c.live, 1u);
  const tlrt::PlanCacheCounters process = tlrt::plan_cache_counters();
  EXPECT_EQ(process.creates - process_before.creates, 4u);
  EXPECT_EQ(process.destroyed - process_before.destroyed, 3u);
}

// The teardown list runs at exit, last registration first. Checked in a child process (gtest
// re-executes the binary, so the child has its own CUDA context) whose stderr is matched. The
// DeathTest suffix keeps it out of the compute-sanitizer runs (scripts/gpu-check.sh).
using CudaDeviceDeathTest = CudaDevice;
TEST_F(CudaDeviceDeathTest, TeardownListRunsAtExitInReverseOrder) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        tlrt::cuda::on_device_teardown(0, [] { std::fputs("[registered first]", stderr); });
        tlrt::cuda::on_device_teardown(0, [] { std::fputs("[registered second]", stderr); });
        tlrt::cuda::cublas_handle(0);
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "\\[registered second\\]\\[registered first\\]");
}

}  // namespace
