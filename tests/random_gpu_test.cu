// CUDA backend of the seeded random stream and of fill, checked against the reference backend: bit
// for bit where the contract is exact (uniform, Bernoulli, fill), within the SPEC 7.4 tolerances
// for normal, plus repeat-run determinism.
// Odd sizes exercise the scalar tail, outputs one element past an aligned base exercise the
// scalar fallback, and guard elements around every output catch stray writes. Without a device
// every test skips with a visible reason.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/fill/fill.h"
#include "kernels/random/random.h"

namespace tlrt::kernels {
namespace {

constexpr uint64_t kKeyA = 0x25114ED53327345Aull;
constexpr uint64_t kKeyB = 0x0123456789ABCDEFull;
constexpr uint64_t kSizes[] = {0, 1, 3, 4, 5, 1023, 4097, 100003, (uint64_t{1} << 20) + 3};
// 0: the allocation's own (aligned) base; 1: one element further, so 16-byte accesses are
// impossible and the launchers must take their scalar path.
constexpr uint64_t kOffsets[] = {0, 1};
constexpr uint64_t kGuard = 9;             // sentinel elements on each side of an output
constexpr unsigned char kSentinel = 0xA5;  // byte pattern of untouched memory

bool device_visible() {
  static const bool visible = [] {
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  }();
  return visible;
}

void cuda_check(cudaError_t err, const char* what) {
  if (err != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
}

uint32_t bits_of(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
uint64_t bits_of(double x) {
  uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
template <class T>
const char* type_name() {
  return sizeof(T) == 4 ? "float32" : "float64";
}

// Device allocation of `offset + n` elements framed by kGuard sentinel elements on each side.
template <class T>
class GuardedDeviceArray {
 public:
  GuardedDeviceArray(uint64_t n, uint64_t offset) : n_(n), offset_(offset) {
    cuda_check(cudaMalloc(&base_, total() * sizeof(T)), "cudaMalloc");
    cuda_check(cudaMemset(base_, kSentinel, total() * sizeof(T)), "cudaMemset");
    // cudaMemset runs on the legacy stream, which a non-blocking stream does not wait for.
    cuda_check(cudaDeviceSynchronize(), "cudaMemset");
  }
  ~GuardedDeviceArray() { cudaFree(base_); }
  GuardedDeviceArray(const GuardedDeviceArray&) = delete;
  GuardedDeviceArray& operator=(const GuardedDeviceArray&) = delete;

  // cudaMalloc returns 256-byte aligned memory; the leading guard is rounded up to whole 16-byte
  // words so that offset 0 keeps the vector path.
  T* data() const { return base_ + lead() + offset_; }

  // The n outputs; fails the test if anything outside them was written.
  std::vector<T> download() const {
    std::vector<T> all(total());
    cuda_check(cudaMemcpy(all.data(), base_, total() * sizeof(T), cudaMemcpyDeviceToHost),
               "cudaMemcpy D2H");
    const auto* bytes = reinterpret_cast<const unsigned char*>(all.data());
    const uint64_t first = (lead() + offset_) * sizeof(T);
    const uint64_t last = first + n_ * sizeof(T);
    uint64_t stray = 0;
    for (uint64_t b = 0; b < total() * sizeof(T); ++b) {
      if ((b < first || b >= last) && bytes[b] != kSentinel) ++stray;
    }
    EXPECT_EQ(stray, 0u) << "bytes written outside the output (n " << n_ << ", offset " << offset_
                         << ")";
    return std::vector<T>(all.begin() + lead() + offset_, all.begin() + lead() + offset_ + n_);
  }

 private:
  static uint64_t lead() { return (kGuard * sizeof(T) + 15) / 16 * 16 / sizeof(T); }
  uint64_t total() const { return lead() + offset_ + n_ + kGuard; }

  T* base_ = nullptr;
  uint64_t n_;
  uint64_t offset_;
};

// Every contract checked bit for bit here covers NaN payloads too, so NaNs compare by bits.
template <class T>
::testing::AssertionResult same_bits(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "size mismatch";
  uint64_t mismatches = 0;
  std::string first;
  for (uint64_t i = 0; i < got.size(); ++i) {
    if (bits_of(got[i]) == bits_of(want[i])) continue;
    if (mismatches++ < 5) {
      char line[160];
      std::snprintf(line, sizeof line, "\n  [%llu] got %a (0x%llx) want %a (0x%llx)",
                    static_cast<unsigned long long>(i), static_cast<double>(got[i]),
                    static_cast<unsigned long long>(bits_of(got[i])), static_cast<double>(want[i]),
                    static_cast<unsigned long long>(bits_of(want[i])));
      first += line;
    }
  }
  if (mismatches == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << mismatches << " of " << got.size() << " differ" << first;
}

class GpuKernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!device_visible()) GTEST_SKIP() << "no CUDA device visible";
    cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  void TearDown() override {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  // Runs launch(out, n, stream) on a guarded output and returns the n results.
  template <class Out, class Launch>
  std::vector<Out> generate(uint64_t n, uint64_t offset, Launch launch) {
    GuardedDeviceArray<Out> out(n, offset);
    launch(out.data(), n, stream_);
    cuda_check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    cuda_check(cudaGetLastError(), "kernel");
    return out.download();
  }

  cudaStream_t stream_ = nullptr;
};

template <class T>
class GpuTypedKernelTest : public GpuKernelTest {};

using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(GpuTypedKernelTest, FloatTypes);

TYPED_TEST(GpuTypedKernelTest, UniformMatchesReferenceBitForBit) {
  using T = TypeParam;
  for (uint64_t key : {kKeyA, kKeyB}) {
    for (uint64_t n : kSizes) {
      for (uint64_t offset : kOffsets) {
        std::vector<T> want(n);
        rand_uniform_ref<T>(want.data(), n, key);
        const std::vector<T> got = this->template generate<T>(
            n, offset,
            [&](T* out, uint64_t m, cudaStream_t s) { rand_uniform_cuda<T>(out, m, key, s); });
        EXPECT_TRUE(same_bits(got, want))
            << type_name<T>() << " key " << key << " n " << n << " offset " << offset;
      }
    }
  }
}

TYPED_TEST(GpuTypedKernelTest, BernoulliMatchesReferenceBitForBit) {
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  // Besides the endpoints, p values next to the largest and smallest uniform values, where the
  // launcher's draw threshold is at its extremes.
  const T ps[] = {T(0),
                  T(1),
                  T(0.5),
                  nan,
                  T(1e-30),
                  T(0.3),
                  T(-1),
                  T(2),
                  std::numeric_limits<T>::denorm_min(),
                  T(0x1p-32),
                  T(0x1.8p-32),
                  std::nextafter(T(1), T(0)),
                  T(1) - T(0x1p-32),
                  T(1) - T(0x1p-33)};
  for (T p : ps) {
    for (uint64_t n : kSizes) {
      for (uint64_t offset : kOffsets) {
        std::vector<T> want(n);
        bernoulli_mask_ref<T>(want.data(), n, p, kKeyA);
        const std::vector<T> got =
            this->template generate<T>(n, offset, [&](T* out, uint64_t m, cudaStream_t s) {
              bernoulli_mask_cuda<T>(out, m, p, kKeyA, s);
            });
        EXPECT_TRUE(same_bits(got, want))
            << type_name<T>() << " p " << p << " n " << n << " offset " << offset;
      }
    }
  }
}

TYPED_TEST(GpuTypedKernelTest, NormalWithinToleranceOfReferenceAndRepeatable) {
  using T = TypeParam;
  const double tolerance = sizeof(T) == 4 ? 5e-5 : 1e-12;
  const T mean = T(0.5);
  const T deviation = T(2);
  for (uint64_t n : kSizes) {
    std::vector<T> want(n);
    rand_normal_ref<T>(want.data(), n, mean, deviation, kKeyB);
    std::vector<T> runs[2];
    for (uint64_t offset : kOffsets) {
      runs[offset] = this->template generate<T>(n, offset, [&](T* out, uint64_t m, cudaStream_t s) {
        rand_normal_cuda<T>(out, m, mean, deviation, kKeyB, s);
      });
    }
    const std::vector<T> repeat =
        this->template generate<T>(n, 0, [&](T* out, uint64_t m, cudaStream_t s) {
          rand_normal_cuda<T>(out, m, mean, deviation, kKeyB, s);
        });
    // Repeats, and the vector and scalar store paths, agree bit for bit.
    EXPECT_TRUE(same_bits(repeat, runs[0])) << type_name<T>() << " n " << n;
    EXPECT_TRUE(same_bits(runs[1], runs[0])) << type_name<T>() << " n " << n;
    double worst = 0;
    uint64_t identical = 0;
    for (uint64_t i = 0; i < n; ++i) {
      ASSERT_TRUE(std::isfinite(runs[0][i])) << "i " << i;
      worst = std::fmax(worst, std::fabs(static_cast<double>(runs[0][i]) - want[i]));
      identical += bits_of(runs[0][i]) == bits_of(want[i]);
    }
    EXPECT_LE(worst, tolerance) << type_name<T>() << " n " << n;
    if (n == kSizes[sizeof(kSizes) / sizeof(kSizes[0]) - 1]) {
      std::printf("normal %s n %llu: max |gpu - ref| %.3g, bit-identical %llu\n", type_name<T>(),
                  static_cast<unsigned long long>(n), worst,
                  static_cast<unsigned long long>(identical));
    }
  }
}

TYPED_TEST(GpuTypedKernelTest, NormalLargestDrawGivesTheMean) {
  using T = TypeParam;
  // D(kKeyA, 0) = 0xFFFFFFFF: in binary32 u1 rounds to 1 and the output is exactly the mean.
  const std::vector<T> got =
      this->template generate<T>(1, 0, [&](T* out, uint64_t m, cudaStream_t s) {
        rand_normal_cuda<T>(out, m, T(0.75), T(3), kKeyA, s);
      });
  std::vector<T> want(1);
  rand_normal_ref<T>(want.data(), 1, T(0.75), T(3), kKeyA);
  if (sizeof(T) == 4) {
    EXPECT_EQ(got[0], T(0.75));
    EXPECT_EQ(want[0], T(0.75));
  } else {
    EXPECT_NEAR(got[0], want[0], 1e-12);
  }
}

TYPED_TEST(GpuTypedKernelTest, FillMatchesReferenceBitForBit) {
  using T = TypeParam;
  for (T value : {T(1.5), -T(0), std::numeric_limits<T>::denorm_min(),
                  -std::numeric_limits<T>::infinity(), std::numeric_limits<T>::quiet_NaN()}) {
    for (uint64_t n : kSizes) {
      for (uint64_t offset : kOffsets) {
        std::vector<T> want(n);
        fill_ref<T>(want.data(), n, value);
        const std::vector<T> got = this->template generate<T>(
            n, offset, [&](T* out, uint64_t m, cudaStream_t s) { fill_cuda<T>(out, m, value, s); });
        EXPECT_TRUE(same_bits(got, want))
            << type_name<T>() << " value " << value << " n " << n << " offset " << offset;
      }
    }
  }
}

// Indices past 2^31 and 2^32: checked in windows, using that element i of the stream keyed k is
// element 0 of the stream keyed k + i (normal: k + 2i).
TEST(GpuKernelLargeTest, StreamsPast2To32Elements) {
  if (!device_visible()) GTEST_SKIP() << "no CUDA device visible";
  const uint64_t n = (uint64_t{1} << 32) + 3;
  size_t free_bytes = 0, total_bytes = 0;
  cuda_check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  if (free_bytes < n * sizeof(float) + (uint64_t{1} << 30)) {
    GTEST_SKIP() << "needs " << (n * sizeof(float) >> 20) << " MiB free, device has "
                 << (free_bytes >> 20);
  }
  float* out = nullptr;
  cuda_check(cudaMalloc(&out, n * sizeof(float)), "cudaMalloc");
  const uint64_t window = 1024;
  // Windows across 2^31, just below 2^32, and across 2^32 up to the last element.
  const uint64_t starts[] = {0, (uint64_t{1} << 31) - window / 2, (uint64_t{1} << 32) - 2 * window,
                             n - window};
  auto check_windows = [&](const char* what, auto reference) {
    for (uint64_t start : starts) {
      std::vector<float> got(window), want(window);
      cuda_check(
          cudaMemcpy(got.data(), out + start, window * sizeof(float), cudaMemcpyDeviceToHost),
          "cudaMemcpy D2H");
      reference(want.data(), window, start);
      EXPECT_TRUE(same_bits(got, want)) << what << " window at " << start;
    }
  };
  rand_uniform_cuda<float>(out, n, kKeyB, nullptr);
  cuda_check(cudaDeviceSynchronize(), "rand_uniform");
  check_windows("uniform", [](float* w, uint64_t len, uint64_t start) {
    rand_uniform_ref<float>(w, len, kKeyB + start);
  });
  bernoulli_mask_cuda<float>(out, n, 0.25f, kKeyA, nullptr);
  cuda_check(cudaDeviceSynchronize(), "bernoulli_mask");
  check_windows("bernoulli", [](float* w, uint64_t len, uint64_t start) {
    bernoulli_mask_ref<float>(w, len, 0.25f, kKeyA + start);
  });
  fill_cuda<float>(out, n, -3.5f, nullptr);
  cuda_check(cudaDeviceSynchronize(), "fill");
  check_windows("fill", [](float* w, uint64_t len, uint64_t) { fill_ref<float>(w, len, -3.5f); });
  rand_normal_cuda<float>(out, n, 0.0f, 1.0f, kKeyB, nullptr);
  cuda_check(cudaDeviceSynchronize(), "rand_normal");
  for (uint64_t start : starts) {
    std::vector<float> got(window), want(window);
    cuda_check(cudaMemcpy(got.data(), out + start, window * sizeof(float), cudaMemcpyDeviceToHost),
               "cudaMemcpy D2H");
    rand_normal_ref<float>(want.data(), window, 0.0f, 1.0f, kKeyB + 2 * start);
    for (uint64_t i = 0; i < window; ++i) {
      ASSERT_NEAR(got[i], want[i], 5e-5) << "normal index " << start + i;
    }
  }
  cuda_check(cudaFree(out), "cudaFree");
}

}  // namespace
}  // namespace tlrt::kernels
