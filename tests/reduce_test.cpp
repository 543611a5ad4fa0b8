// reduce_sum and reduce_mean through the Lean boundary, on the backend TLRT_DEVICE selects (ctest
// runs this binary once with cpu and once with cuda). Results must equal, bit for bit, an
// independent host model of the deterministic tree of SPEC-ops 6.4 written here (a top-down
// recursion over the halving levels, unlike the reference backend's loops), on the spec fixtures,
// sizes around the row and grid-stride boundaries and random inputs past 65535*256 elements.
// Also: ownership counters, bad inputs and their panics, and repeat-run determinism. On the cuda
// run, the launcher itself is checked on an unaligned input and past 2^32 elements.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "abi_test_support.h"

#if TLRT_HAVE_CUDA
#include <cuda_runtime.h>

#include "kernels/fill/fill.h"
#include "kernels/reduce/reduce.h"
#endif

using namespace abi_test;

namespace {

constexpr uint64_t kGridLanes = uint64_t{65535} * 256;  // S of a capped first pass

// ---------------------------------------------------------------------------------------------
// The independent model of the tree.

// Lane j of a 256-lane row once the halving levels 128 .. w have run: level w sets
// lane[j] = lane[j] + lane[j+w] from the values after level 2w.
template <class T>
T after_level(const T* lanes, uint64_t j, uint64_t w) {
  if (w == 256) return lanes[j];
  return after_level(lanes, j, 2 * w) + after_level(lanes, j + w, 2 * w);
}

template <class T>
std::vector<T> row_results(const std::vector<T>& lanes) {
  std::vector<T> rows(lanes.size() / 256);
  for (size_t r = 0; r < rows.size(); ++r) rows[r] = after_level(lanes.data() + 256 * r, 0, 1);
  return rows;
}

uint64_t rows_for(uint64_t n) {
  const uint64_t rows = (n + 255) / 256;
  return rows > 65535 ? 65535 : rows;
}

template <class T>
T model_sum(const T* x, uint64_t n) {
  if (n == 0) return T(0);
  const uint64_t stride = 256 * rows_for(n);
  std::vector<T> lanes(stride);
  for (uint64_t i = 0; i < stride; ++i) {
    T acc = T(0);
    for (uint64_t k = i; k < n; k += stride) acc = acc + x[k];
    lanes[i] = acc;
  }
  const std::vector<T> rows = row_results(lanes);
  return rows.size() == 1 ? rows[0] : model_sum(rows.data(), rows.size());
}

template <class T>
T model_sum(const std::vector<T>& x) {
  return model_sum(x.data(), x.size());
}

template <class T>
T model_mean(const std::vector<T>& x) {
  if (x.empty()) return std::numeric_limits<T>::quiet_NaN();
  const T r = static_cast<T>(1.0 / static_cast<double>(static_cast<T>(x.size())));
  return model_sum(x) * r;
}

// Random values of both signs whose exponents span 2^-20 .. 2^20, so that sums round often.
template <class T>
std::vector<T> random_values(uint64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t r = rng();
    const int e = static_cast<int>(r % 41) - 20;
    const uint64_t sign = (r >> 63) & 1;
    if constexpr (sizeof(T) == 4) {
      const uint32_t b = static_cast<uint32_t>(sign << 31) | static_cast<uint32_t>(127 + e) << 23 |
                         static_cast<uint32_t>((r >> 8) & 0x7FFFFF);
      v[i] = value_of<float>(b);
    } else {
      const uint64_t b =
          sign << 63 | static_cast<uint64_t>(1023 + e) << 52 | (rng() & 0xFFFFFFFFFFFFFull);
      v[i] = value_of<double>(b);
    }
  }
  return v;
}

// ---------------------------------------------------------------------------------------------
// Through the ABI.

template <class T>
T read_scalar(lean_object* result) {
  EXPECT_EQ(torchlean_cuda_buffer_size(result), 1u);
  EXPECT_EQ(torchlean_cuda_buffer_dtype(result), Dt<T>::kCode);
  const std::vector<double> v = values_of(result);
  return v.empty() ? std::numeric_limits<T>::signaling_NaN() : static_cast<T>(v[0]);
}

template <class T>
T abi_sum(const Obj& x) {
  Obj r(torchlean_cuda_buffer_reduce_sum(x.get()));
  return read_scalar<T>(r.get());
}

template <class T>
T abi_mean(const Obj& x) {
  Obj r(torchlean_cuda_buffer_reduce_mean(x.get()));
  return read_scalar<T>(r.get());
}

template <class T>
T sum_of(const std::vector<T>& values) {
  return abi_sum<T>(make_buffer(values));
}

template <class T>
T mean_of(const std::vector<T>& values) {
  return abi_mean<T>(make_buffer(values));
}

// Equal bits, or both NaN (NaN encodings are free, SPEC-ops 2.4).
template <class T>
::testing::AssertionResult same(T got, T want) {
  if (same_bits_or_nan(got, want)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << std::hexfloat << "got " << got << " (bits 0x" << std::hex << +bits_of(got) << "), want "
         << want << " (bits 0x" << +bits_of(want) << ")";
}

class Reduce : public BackendSuite {};

using ReduceDeathTest = Reduce;

// ---------------------------------------------------------------------------------------------
// Spec fixtures

TEST_F(Reduce, SumFixturesFloat32) {
  const float inf = std::numeric_limits<float>::infinity();
  const float max = std::numeric_limits<float>::max();
  const float tiny = std::numeric_limits<float>::denorm_min();
  EXPECT_TRUE(same(sum_of<float>({}), 0.0f));
  EXPECT_TRUE(same(sum_of<float>({-0.0f}), 0.0f));  // +0 start: +0 + -0 = +0
  EXPECT_TRUE(same(sum_of<float>({-0.0f, -0.0f, -0.0f}), 0.0f));
  EXPECT_TRUE(same(sum_of<float>({2.5f}), 2.5f));
  EXPECT_TRUE(same(sum_of<float>({1e8f, 1.0f, -1e8f}), 1.0f));  // lanes 0 and 2 meet first
  EXPECT_TRUE(same(sum_of<float>({1e8f, -1e8f, 1.0f}), 0.0f));
  EXPECT_TRUE(std::isnan(sum_of<float>({inf, -inf})));
  EXPECT_TRUE(same(sum_of<float>({inf, 1.0f}), inf));
  EXPECT_TRUE(same(sum_of<float>({max, max}), inf));
  EXPECT_TRUE(same(sum_of<float>({max, -max}), 0.0f));
  EXPECT_TRUE(same(sum_of<float>({tiny, tiny}), 2 * tiny));  // subnormals kept, no flush
  EXPECT_EQ(bits_of(sum_of<float>({tiny, tiny, tiny})), 3u);
  EXPECT_TRUE(std::isnan(sum_of<float>({1.0f, std::numeric_limits<float>::quiet_NaN()})));
}

TEST_F(Reduce, SumFixturesFloat64) {
  const double inf = std::numeric_limits<double>::infinity();
  const double max = std::numeric_limits<double>::max();
  const double tiny = std::numeric_limits<double>::denorm_min();
  EXPECT_TRUE(same(sum_of<double>({}), 0.0));
  EXPECT_TRUE(same(sum_of<double>({-0.0}), 0.0));
  EXPECT_TRUE(same(sum_of<double>({1e16, 1.0, -1e16}), 1.0));
  EXPECT_TRUE(same(sum_of<double>({1e16, -1e16, 1.0}), 0.0));
  EXPECT_TRUE(std::isnan(sum_of<double>({inf, -inf})));
  EXPECT_TRUE(same(sum_of<double>({max, max}), inf));
  EXPECT_TRUE(same(sum_of<double>({tiny, tiny}), 2 * tiny));
  EXPECT_TRUE(same(sum_of<double>({0.1, 0.2, 0.3}), model_sum<double>({0.1, 0.2, 0.3})));
}

// 257 elements: the second row holds one lane. Row 0 loses the 1 (1e8 + 1 rounds back to 1e8)
// before row 1's -1e8 cancels it, so the sum is 0, where one 512-lane row would give 1.
TEST_F(Reduce, PartialSecondRow) {
  std::vector<float> x(257, 0.0f);
  x[0] = 1e8f;
  x[1] = 1.0f;
  x[256] = -1e8f;
  EXPECT_TRUE(same(model_sum(x), 0.0f));
  EXPECT_TRUE(same(sum_of(x), 0.0f));
  std::vector<double> d(257, 0.0);
  d[0] = 1e16;
  d[1] = 1.0;
  d[256] = -1e16;
  EXPECT_TRUE(same(sum_of(d), 0.0));
}

// Past 65535*256 elements the grid is capped: lane 0 adds element S before any halving, so 1e8
// and -1e8 cancel in lane 0 and the 1 from lane 1 survives.
TEST_F(Reduce, WrappedElementJoinsLaneZeroBeforeTheTree) {
  std::vector<float> x(kGridLanes + 1, 0.0f);
  x[0] = 1e8f;
  x[1] = 1.0f;
  x[kGridLanes] = -1e8f;
  EXPECT_TRUE(same(model_sum(x), 1.0f));
  EXPECT_TRUE(same(sum_of(x), 1.0f));
}

TEST_F(Reduce, MeanFixtures) {
  // 7 * fl(1/3), not 7/3 (0x40155555).
  EXPECT_EQ(bits_of(mean_of<float>({7, 0, 0})), 0x40155556u);
  EXPECT_EQ(bits_of(mean_of<double>({7, 0, 0})), 0x4002AAAAAAAAAAAAull);
  EXPECT_TRUE(std::isnan(mean_of<float>({})));
  EXPECT_TRUE(std::isnan(mean_of<double>({})));
  const float max = std::numeric_limits<float>::max();
  EXPECT_TRUE(same(mean_of<float>({max, max}), std::numeric_limits<float>::infinity()));
  EXPECT_TRUE(same(mean_of<float>({-0.0f}), 0.0f));
  EXPECT_TRUE(same(mean_of<float>({3.0f}), 3.0f));
  EXPECT_TRUE(std::isnan(mean_of<float>(
      {1.0f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()})));
}

// The count is rounded to the dtype before the reciprocal: 2^24 + 1 becomes 2^24 in float32.
TEST_F(Reduce, MeanRoundsTheCountToTheDtype) {
  const std::vector<float> x(uint64_t{1} << 24 | 1, 1.0f);
  const float sum = model_sum(x);
  EXPECT_TRUE(same(mean_of(x), sum * 0x1p-24f));
  const std::vector<float> r = random_values<float>(1000003, 11);
  EXPECT_TRUE(same(mean_of(r), model_mean(r)));
  const std::vector<double> d = random_values<double>(70001, 12);
  EXPECT_TRUE(same(mean_of(d), model_mean(d)));
}

// ---------------------------------------------------------------------------------------------
// Sizes at the row and grid-stride boundaries

TEST_F(Reduce, SizesAroundRowAndGridBoundariesFloat32) {
  for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{255}, uint64_t{256}, uint64_t{257},
                     kGridLanes - 1, kGridLanes, kGridLanes + 1, 2 * kGridLanes + 3}) {
    const std::vector<float> x = random_values<float>(n, n);
    EXPECT_TRUE(same(sum_of(x), model_sum(x))) << "n = " << n;
    if (n <= (uint64_t{1} << 24)) {
      EXPECT_TRUE(same(sum_of(std::vector<float>(n, 1.0f)), static_cast<float>(n))) << n;
    }
  }
}

TEST_F(Reduce, SizesAroundRowAndGridBoundariesFloat64) {
  for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{255}, uint64_t{256}, uint64_t{257},
                     kGridLanes - 1, kGridLanes + 1, 2 * kGridLanes + 3}) {
    const std::vector<double> x = random_values<double>(n, n + 1);
    EXPECT_TRUE(same(sum_of(x), model_sum(x))) << "n = " << n;
    // Integer partial sums stay exact in binary64.
    EXPECT_TRUE(same(sum_of(std::vector<double>(n, 1.0)), static_cast<double>(n))) << n;
  }
}

TEST_F(Reduce, RandomInputsMatchTheModelBitForBit) {
  uint64_t seed = 100;
  for (uint64_t n : {uint64_t{3}, uint64_t{1000}, uint64_t{65536}, uint64_t{65537},
                     (uint64_t{1} << 20) + 13, 3 * kGridLanes + 77}) {
    const std::vector<float> x = random_values<float>(n, ++seed);
    const Obj b = make_buffer(x);
    EXPECT_TRUE(same(abi_sum<float>(b), model_sum(x))) << "float32 n = " << n;
    EXPECT_TRUE(same(abi_mean<float>(b), model_mean(x))) << "float32 n = " << n;
  }
  for (uint64_t n : {uint64_t{1000}, uint64_t{65537}, kGridLanes + 5}) {
    const std::vector<double> x = random_values<double>(n, ++seed);
    const Obj b = make_buffer(x);
    EXPECT_TRUE(same(abi_sum<double>(b), model_sum(x))) << "float64 n = " << n;
    EXPECT_TRUE(same(abi_mean<double>(b), model_mean(x))) << "float64 n = " << n;
  }
}

TEST_F(Reduce, RepeatedCallsAreBitwiseIdentical) {
  const std::vector<float> x = random_values<float>((uint64_t{1} << 24) + 7, 77);
  const Obj b = make_buffer(x);
  const float first = abi_sum<float>(b);
  EXPECT_TRUE(same(first, model_sum(x)));
  for (int k = 1; k < 10; ++k) {
    EXPECT_EQ(bits_of(abi_sum<float>(b)), bits_of(first)) << "call " << k;
  }
}

// ---------------------------------------------------------------------------------------------
// Ownership

TEST_F(Reduce, EachCallCreatesOnePayloadAndLeaksNothing) {
  const Obj x = make_buffer<float>({1, 2, 3});
  const Obj d = make_buffer<double>({1, 2});
  const Obj empty = make_buffer<float>({});
  struct Case {
    const char* name;
    lean_object* (*op)(b_lean_obj_arg);
    lean_object* input;
    uint64_t bytes;
  };
  const Case cases[] = {
      {"sum f32", torchlean_cuda_buffer_reduce_sum, x.get(), 4},
      {"mean f32", torchlean_cuda_buffer_reduce_mean, x.get(), 4},
      {"sum f64", torchlean_cuda_buffer_reduce_sum, d.get(), 8},
      {"mean f64", torchlean_cuda_buffer_reduce_mean, d.get(), 8},
      {"sum of empty", torchlean_cuda_buffer_reduce_sum, empty.get(), 4},
      {"mean of empty", torchlean_cuda_buffer_reduce_mean, empty.get(), 4},
  };
  for (const Case& c : cases) {
    const Counters a = Counters::read();
    Obj r(c.op(c.input));
    const Counters m = Counters::read();
    EXPECT_EQ(m.alloc_count - a.alloc_count, 1u) << c.name;
    EXPECT_EQ(m.live_bytes - a.live_bytes, c.bytes) << c.name;
    EXPECT_EQ(m.wrapper_alloc - a.wrapper_alloc, 1u) << c.name;
    EXPECT_EQ(m.wrapper_live - a.wrapper_live, 1u) << c.name;
    EXPECT_EQ(m.free_count, a.free_count) << c.name;
    EXPECT_NE(r.get(), c.input) << c.name;  // a fresh buffer, never the argument
    r.reset();
    const Counters z = Counters::read();
    EXPECT_EQ(z.live_bytes, a.live_bytes) << c.name;
    EXPECT_EQ(z.free_count - a.free_count, 1u) << c.name;
    EXPECT_EQ(z.wrapper_finalize - a.wrapper_finalize, 1u) << c.name;
    EXPECT_EQ(z.wrapper_live, a.wrapper_live) << c.name;
  }
  // The arguments are borrowed: still alive and unchanged.
  EXPECT_EQ(torchlean_cuda_buffer_size(x.get()), 3u);
  EXPECT_EQ(values_of(x.get()), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(torchlean_cuda_buffer_size(d.get()), 2u);
}

// ---------------------------------------------------------------------------------------------
// Bad inputs: pure symbols panic

TEST_F(ReduceDeathTest, ReleasedBufferPanics) {
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_sum(released_buffer(4)), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: .*reduce_sum.*released");
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_mean(released_buffer(4)), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: .*reduce_mean.*released");
}

TEST_F(ReduceDeathTest, NonBufferArgumentsPanic) {
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_sum(lean_box(3)), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: .*reduce_sum.*not a buffer");
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_mean(float_array({1}).get()),
              ::testing::ExitedWithCode(1), "INTERNAL PANIC: .*reduce_mean.*not a buffer");
  EXPECT_EXIT(
      {
        lean_external_class* other = lean_register_external_class([](void*) {}, nullptr);
        torchlean_cuda_buffer_reduce_sum(lean_alloc_external(other, nullptr));
      },
      ::testing::ExitedWithCode(1), "INTERNAL PANIC: .*reduce_sum.*not a tensor buffer");
}

// ---------------------------------------------------------------------------------------------
// The CUDA launcher directly (cuda run only): paths the ABI cannot reach.

#if TLRT_HAVE_CUDA

class ReduceLauncher : public LauncherSuite {
 protected:
  // Runs the launcher on device data and returns the host copy of the result.
  float launch_sum(const float* x, uint64_t n) {
    void* workspace = nullptr;
    const size_t bytes = tlrt::kernels::reduce_sum_workspace_bytes(n, sizeof(float));
    if (bytes != 0) {
      EXPECT_EQ(cudaMalloc(&workspace, bytes), cudaSuccess);
    }
    float* out = nullptr;
    EXPECT_EQ(cudaMalloc(&out, sizeof(float)), cudaSuccess);
    tlrt::kernels::reduce_sum_cuda(x, n, out, workspace, stream_);
    float result = std::numeric_limits<float>::signaling_NaN();
    EXPECT_EQ(cudaMemcpyAsync(&result, out, sizeof(float), cudaMemcpyDeviceToHost, stream_),
              cudaSuccess);
    EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    cudaFree(out);
    cudaFree(workspace);
    return result;
  }
};

// A view one element past an aligned allocation cannot use 16-byte loads.
TEST_F(ReduceLauncher, UnalignedInputTakesTheScalarPath) {
  const std::vector<float> x = random_values<float>(3 * kGridLanes + 1001, 5);
  float* dev = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, x.size() * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dev, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice),
            cudaSuccess);
  const float got = launch_sum(dev + 1, x.size() - 1);
  EXPECT_TRUE(same(got, model_sum(x.data() + 1, x.size() - 1)));
  EXPECT_TRUE(same(launch_sum(dev + 3, 200), model_sum(x.data() + 3, 200)));
  cudaFree(dev);
}

// 64-bit indexing: ones with a few large values placed past 2^31 and 2^32. An index truncated
// to 32 bits would read a one instead and miss them by far more than the final rounding.
TEST_F(ReduceLauncher, IndexesPast2To32Elements) {
  const uint64_t n = (uint64_t{1} << 32) + 1000003;
  size_t free_bytes = 0, total_bytes = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
  if (free_bytes < n * sizeof(float) + (size_t{1} << 30)) {
    GTEST_SKIP() << "needs " << (n * sizeof(float) >> 20) << " MiB of free device memory";
  }
  float* dev = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, n * sizeof(float)), cudaSuccess);
  tlrt::kernels::fill_cuda(dev, n, 1.0f, stream_);
  const std::map<uint64_t, float> special = {{(uint64_t{1} << 31) + 5, -524288.0f},
                                             {(uint64_t{1} << 32) + 7, 1048576.0f},
                                             {n - 1, 4194304.0f}};
  for (const auto& [index, value] : special) {
    ASSERT_EQ(cudaMemcpyAsync(dev + index, &value, sizeof(float), cudaMemcpyHostToDevice, stream_),
              cudaSuccess);
  }
  const float got = launch_sum(dev, n);
  cudaFree(dev);

  // Lane i folds ceil((n - i) / S) elements; all-ones folds are exact integers.
  std::vector<float> lanes(kGridLanes);
  for (uint64_t i = 0; i < kGridLanes; ++i) {
    lanes[i] = static_cast<float>((n - i + kGridLanes - 1) / kGridLanes);
  }
  for (const auto& [index, unused] : special) {
    const uint64_t lane = index % kGridLanes;
    float acc = 0.0f;
    for (uint64_t k = lane; k < n; k += kGridLanes) {
      const auto it = special.find(k);
      acc = acc + (it == special.end() ? 1.0f : it->second);
    }
    lanes[lane] = acc;
  }
  const std::vector<float> rows = row_results(lanes);
  const float want = model_sum(rows.data(), rows.size());
  EXPECT_TRUE(same(got, want));
  // The same lanes without the special values differ: the check can see a misplaced read.
  std::vector<float> plain(kGridLanes);
  for (uint64_t i = 0; i < kGridLanes; ++i) {
    plain[i] = static_cast<float>((n - i + kGridLanes - 1) / kGridLanes);
  }
  const std::vector<float> plain_rows = row_results(plain);
  EXPECT_NE(bits_of(model_sum(plain_rows.data(), plain_rows.size())), bits_of(want));
}

#endif  // TLRT_HAVE_CUDA

}  // namespace
