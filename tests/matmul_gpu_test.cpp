// The CUDA backend of the matrix products against the reference backend, in one process: random
// operands in both dtypes for every tA/tB pair, single and batched, within the bound of
// docs/NUMERICS.md ("Matrix products") at each output's scale S = sum_k |a_ik||b_kj|; ten runs on
// the GPU under the deterministic setting give identical bits; dgemm against the reference loops.
// Products with both operands transposed whose output tiles spread evenly over the SMs take
// cuBLASLt's configuration.
// The cuBLAS handle's math mode is read directly: strict (pedantic) under the default settings
// and after a scope, TF32 only inside a scope made while setting 0 is on. Without a device every
// test skips with a visible reason.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "kernels/matmul/matmul.h"
#include "runtime/context.h"
#include "runtime/cuda_libraries.h"
#include "runtime/matmul_dispatch.h"
#include "runtime/settings.h"
#include "runtime/transfer.h"
#include "tests/support/cuda_suite.h"
#include "tests/support/gpu_test_support.h"
#include "tests/support/repeat_runs.h"

namespace {

using gpu_test::random_values;
using gpu_test::upload;

using tlrt::Backend;
using tlrt::Buffer;
using tlrt::Dtype;

class MatmulGpu : public gpu_test::CudaSuite<> {
 protected:
  MatmulGpu() : CudaSuite("GPU checks of the matmul family") {}
  void TearDown() override {
    tlrt::set_setting(static_cast<uint32_t>(tlrt::Setting::matmul_tf32), 0);
  }
};

struct Extents {
  uint64_t batch, m, n, p;
};

template <class T>
std::vector<T> download(const Buffer& b) {
  constexpr Dtype dt = sizeof(T) == 4 ? Dtype::f32 : Dtype::f64;
  std::vector<T> v(b.size());
  tlrt::download_words(b, reinterpret_cast<uint8_t*>(v.data()), dt, "matmul_gpu_test");
  return v;
}

long double gamma_of(uint64_t k, long double u) {
  const long double ku = static_cast<long double>(k) * u;
  return ku / (1 - ku);
}

// S = sum_k |A'[b,i,k]| |B'[b,k,j]| for every output.
template <class T>
std::vector<long double> scales(const std::vector<T>& a, const std::vector<T>& b, const Extents& e,
                                bool ta, bool tb) {
  std::vector<long double> s(e.batch * e.m * e.p, 0);
  for (uint64_t bb = 0; bb < e.batch; ++bb)
    for (uint64_t i = 0; i < e.m; ++i)
      for (uint64_t j = 0; j < e.p; ++j) {
        long double sum = 0;
        for (uint64_t k = 0; k < e.n; ++k) {
          const T x = ta ? a[(bb * e.n + k) * e.m + i] : a[(bb * e.m + i) * e.n + k];
          const T y = tb ? b[(bb * e.p + j) * e.n + k] : b[(bb * e.n + k) * e.p + j];
          sum += std::fabs(static_cast<long double>(x) * static_cast<long double>(y));
        }
        s[(bb * e.m + i) * e.p + j] = sum;
      }
  return s;
}

// The subject-vs-reference bound of docs/NUMERICS.md.
template <class T>
long double allowed(long double scale, uint64_t n) {
  const bool f32 = sizeof(T) == 4;
  const long double u = std::ldexp(1.0L, f32 ? -24 : -53);
  const long double u_wide = std::ldexp(1.0L, f32 ? -53 : -64);
  return (gamma_of(n, u) + u + 2 * gamma_of(n, u_wide)) * scale +
         2 * static_cast<long double>(n) * std::numeric_limits<T>::denorm_min();
}

const std::vector<Extents> kShapes = {
    {1, 257, 511, 129}, {8, 64, 96, 33}, {3, 1, 4099, 1}, {1, 1, 1, 1}};
// Within kernels::kSmallProductWork (the small-product kernel), at its edge and just past it.
const std::vector<Extents> kSmallShapes = {{1, 16, 16, 16},    {2, 33, 17, 9},    {64, 8, 32, 8},
                                           {1, 1, 1024, 1},    {1, 64, 64, 64},   {4, 64, 64, 64},
                                           {5, 64, 64, 64},    {1024, 1, 1, 1},   {3, 7, 1, 5},
                                           {1, 1, 1048576, 1}, {1, 1, 1048577, 1}};

template <class T>
void compare_with_reference(const std::vector<Extents>& shapes = kShapes) {
  uint64_t key = sizeof(T);
  for (const Extents& e : shapes) {
    for (int flags = 0; flags < 4; ++flags) {
      const bool ta = flags & 1, tb = flags & 2;
      const std::vector<T> a = random_values<T>(e.batch * e.m * e.n, key++ * 0x9E3779B97F4A7C15ull);
      const std::vector<T> b = random_values<T>(e.batch * e.n * e.p, key++ * 0x9E3779B97F4A7C15ull);
      auto run = [&](Backend backend) {
        auto da = upload<T>(backend, a), db = upload<T>(backend, b);
        return download<T>(*tlrt::bmm(*da, *db, e.batch, e.m, e.n, e.p, ta, tb, "test"));
      };
      const std::vector<T> got = run(Backend::cuda), want = run(Backend::reference);
      const std::vector<long double> s = scales(a, b, e, ta, tb);
      ASSERT_EQ(got.size(), want.size());
      uint64_t outside = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        const long double error = std::fabs(static_cast<long double>(got[i]) - want[i]);
        if (!(error <= allowed<T>(s[i], e.n))) {
          if (++outside <= 3) {
            ADD_FAILURE() << "batch " << e.batch << " m " << e.m << " n " << e.n << " p " << e.p
                          << " tA " << ta << " tB " << tb << " output " << i << ": " << got[i]
                          << " vs " << want[i] << ", S = " << static_cast<double>(s[i]);
          }
        }
      }
      EXPECT_EQ(outside, 0u);
    }
  }
}

TEST_F(MatmulGpu, BmmWithinTheBoundOfTheReferenceFloat32) {
  compare_with_reference<float>();
}
TEST_F(MatmulGpu, BmmWithinTheBoundOfTheReferenceFloat64) {
  compare_with_reference<double>();
}

// The small-product kernel (on by default) and cuBLAS on the same small shapes, every tA/tB.
TEST_F(MatmulGpu, SmallProductsWithinTheBoundOnBothPaths) {
  ASSERT_TRUE(tlrt::bmm_small_kernel_on()) << "the small-product kernel is on by default";
  EXPECT_TRUE(tlrt::kernels::bmm_small_fits({4, 64, 64, 64, false, false}));
  EXPECT_FALSE(tlrt::kernels::bmm_small_fits({5, 64, 64, 64, false, false}));
  EXPECT_TRUE(tlrt::kernels::bmm_small_fits({1, 1, 1048576, 1, false, false}));
  EXPECT_FALSE(tlrt::kernels::bmm_small_fits({1, 1, 1048577, 1, false, false}));
  EXPECT_FALSE(
      tlrt::kernels::bmm_small_fits({uint64_t{1} << 40, uint64_t{1} << 40, 1, 1, false, false}));
  compare_with_reference<float>(kSmallShapes);
  compare_with_reference<double>(kSmallShapes);
  tlrt::set_bmm_small_kernel(false);
  compare_with_reference<float>(kSmallShapes);
  compare_with_reference<double>(kSmallShapes);
  tlrt::set_bmm_small_kernel(true);
}

// Ten calls of every tA/tB on the same random operands of shape e give identical bits.
template <class T>
void ten_runs_identical(const Extents& e, int seed_a, int seed_b) {
  for (int flags = 0; flags < 4; ++flags) {
    const bool ta = flags & 1, tb = flags & 2;
    auto da = upload<T>(Backend::cuda, random_values<T>(e.batch * e.m * e.n, seed_a + flags));
    auto db = upload<T>(Backend::cuda, random_values<T>(e.batch * e.n * e.p, seed_b + flags));
    const std::vector<T> first =
        download<T>(*tlrt::bmm(*da, *db, e.batch, e.m, e.n, e.p, ta, tb, "test"));
    for (int run = 1; run < test_runs::repeat_runs(10); ++run) {
      const std::vector<T> again =
          download<T>(*tlrt::bmm(*da, *db, e.batch, e.m, e.n, e.p, ta, tb, "test"));
      ASSERT_EQ(0, std::memcmp(first.data(), again.data(), first.size() * sizeof(T)))
          << "run " << run << " differs: batch " << e.batch << " m " << e.m << " n " << e.n << " p "
          << e.p << " tA " << ta << " tB " << tb;
    }
  }
}

// Products with both operands transposed whose output tiles spread evenly over the SMs run on
// cuBLASLt's fixed configuration (kernels::bmm_lt_qualifies): within the bound, with partial
// tiles too, and repeatable; uneven or odd shapes stay on cuBLAS, within the bound as well.
TEST_F(MatmulGpu, TransposedProductsOfEvenTilesOnCublasLt) {
  int device = 0, sms = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), cudaSuccess);
  const uint64_t n_sm = static_cast<uint64_t>(sms);
  // Tiles of 128 (p) x 256 (m): batch * 2 * 1 of them, whole or partial; batch * 1 * 1.
  const Extents whole{n_sm, 256, 8, 256};
  const Extents ragged{n_sm, 252, 12, 132};
  const Extents uneven{n_sm + n_sm / 4, 256, 8, 128};  // 1.25 tiles per SM: busiest SM 2
  const Extents few{n_sm / 2, 256, 8, 128};
  const Extents odd{n_sm, 250, 9, 131};  // extents not multiples of 4
  auto qualifies = [&](const Extents& e, bool ta, bool tb) {
    return tlrt::kernels::bmm_lt_qualifies({e.batch, e.m, e.n, e.p, ta, tb},
                                           static_cast<uint32_t>(sms));
  };
  EXPECT_TRUE(qualifies(whole, true, true));
  EXPECT_TRUE(qualifies(ragged, true, true));
  EXPECT_FALSE(qualifies(uneven, true, true));
  EXPECT_FALSE(qualifies(few, true, true));
  EXPECT_FALSE(qualifies(odd, true, true));
  EXPECT_FALSE(qualifies(whole, true, false));
  EXPECT_FALSE(qualifies(whole, false, true));
  EXPECT_FALSE(qualifies({whole.batch, whole.m, 0, whole.p}, true, true));
  compare_with_reference<float>({whole, ragged, uneven, odd});
  ten_runs_identical<float>(ragged, 3, 7);
}

// The small kernel: n = 0 gives +0, NaN and infinities propagate as in any inner product, ten runs
// give identical bits.
TEST_F(MatmulGpu, SmallProductsEdgeValuesAndRepeatability) {
  auto a0 = upload<float>(Backend::cuda, std::vector<float>{});
  auto out = download<float>(*tlrt::bmm(*a0, *a0, 2, 3, 0, 4, false, false, "test"));
  ASSERT_EQ(out.size(), 24u);
  for (float v : out) EXPECT_TRUE(v == 0.0f && !std::signbit(v));
  const float inf = std::numeric_limits<float>::infinity();
  // A' = [[1, nan], [inf, 1]], B' = I: C = [[nan, nan], [inf, nan]] (inf * 0 = nan), as the
  // reference gives.
  auto a = upload<float>(Backend::cuda, std::vector<float>{1, NAN, inf, 1});
  auto id = upload<float>(Backend::cuda, std::vector<float>{1, 0, 0, 1});
  const std::vector<float> c = download<float>(*tlrt::bmm(*a, *id, 1, 2, 2, 2, false, false, "t"));
  const std::vector<float> r = download<float>(
      *tlrt::bmm(*upload<float>(Backend::reference, std::vector<float>{1, NAN, inf, 1}),
                 *upload<float>(Backend::reference, std::vector<float>{1, 0, 0, 1}), 1, 2, 2, 2,
                 false, false, "t"));
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(std::isnan(c[i]), std::isnan(r[i])) << i;
    if (!std::isnan(r[i])) {
      EXPECT_EQ(c[i], r[i]) << i;
    }
  }
  ten_runs_identical<float>(Extents{8, 32, 48, 16}, 5, 9);
}

template <class T>
void repeatable() {
  const uint32_t deterministic = static_cast<uint32_t>(tlrt::Setting::deterministic);
  const uint32_t before = tlrt::get_setting(deterministic);
  tlrt::set_setting(deterministic, 1);
  const Extents shapes[] = {{1, 1024, 4096, 512}, {16, 128, 300, 64}, {1, 7, 65537, 3}};
  for (const Extents& e : shapes) ten_runs_identical<T>(e, 11, 97);
  tlrt::set_setting(deterministic, before);
}

TEST_F(MatmulGpu, TenRunsGiveIdenticalBitsFloat32) {
  repeatable<float>();
}
TEST_F(MatmulGpu, TenRunsGiveIdenticalBitsFloat64) {
  repeatable<double>();
}

TEST_F(MatmulGpu, DgemmWithinTheBoundOfTheReference) {
  const uint64_t m = 300, n = 1031, p = 77;
  const std::vector<double> a = random_values<double>(m * n, 5),
                            b = random_values<double>(n * p, 6);
  std::vector<double> got(m * p), want(m * p);
  tlrt::dgemm(Backend::cuda, a.data(), b.data(), got.data(), m, n, p, "test");
  tlrt::dgemm(Backend::reference, a.data(), b.data(), want.data(), m, n, p, "test");
  const std::vector<long double> s = scales(a, b, Extents{1, m, n, p}, false, false);
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_LE(std::fabs(static_cast<long double>(got[i]) - want[i]), allowed<double>(s[i], n))
        << "output " << i;
  }
}

cublasMath_t math_mode(cublasContext* handle) {
  cublasMath_t mode{};
  EXPECT_EQ(cublasGetMathMode(handle, &mode), CUBLAS_STATUS_SUCCESS);
  return mode;
}

// What the dispatch asks for: CublasMathScope(device, setting_enabled(Setting::matmul_tf32)).
cublasMath_t mode_under_settings() {
  tlrt::cuda::CublasMathScope scope(tlrt::selected_device(),
                                    tlrt::setting_enabled(tlrt::Setting::matmul_tf32));
  return math_mode(scope.handle());
}

TEST_F(MatmulGpu, CublasMathModeFollowsTheTf32Setting) {
  const uint32_t tf32 = static_cast<uint32_t>(tlrt::Setting::matmul_tf32);
  ASSERT_EQ(tlrt::get_setting(tf32), 0u) << "TF32 must be off by default";
  cublasContext* handle = tlrt::cuda::cublas_handle(tlrt::selected_device());
  EXPECT_EQ(math_mode(handle), CUBLAS_PEDANTIC_MATH);
  EXPECT_EQ(mode_under_settings(), CUBLAS_PEDANTIC_MATH);
  tlrt::set_setting(tf32, 1);
  EXPECT_EQ(mode_under_settings(), CUBLAS_TF32_TENSOR_OP_MATH);
  EXPECT_EQ(math_mode(handle), CUBLAS_PEDANTIC_MATH) << "the scope must restore the strict mode";
  tlrt::set_setting(tf32, 0);
  EXPECT_EQ(mode_under_settings(), CUBLAS_PEDANTIC_MATH);
  // A product under the TF32 setting leaves the handle strict for the next caller.
  tlrt::set_setting(tf32, 1);
  auto da = upload<float>(Backend::cuda, random_values<float>(64 * 64, 1));
  auto db = upload<float>(Backend::cuda, random_values<float>(64 * 64, 2));
  auto c = tlrt::bmm(*da, *db, 1, 64, 64, 64, false, false, "test");
  tlrt::set_setting(tf32, 0);
  EXPECT_EQ(math_mode(handle), CUBLAS_PEDANTIC_MATH);
}

}  // namespace
