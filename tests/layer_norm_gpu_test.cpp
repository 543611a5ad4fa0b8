// The CUDA backend of layer normalization against the reference backend, in one process, on shapes
// that reach every kernel layout (one warp per row with 8 rows per block, several warps per row,
// float rows of 513..1024 columns folded onto one warp with 4 rows per block, whole blocks of 256
// and 512 threads, and the re-reading path past 8192 columns) and enough rows for the backward's
// row partition to reach its block cap: forward and backward within the bounds of
// docs/NUMERICS.md ("Layer normalization"), and ten runs under the deterministic setting giving
// identical bits for all six outputs (the column sums of the backward included: their partition
// depends on rows and cols only). Rows with exact statistics (also near 1e6, also float
// subnormal) agree with the reference bit for bit, on aligned and misaligned buffers (the launcher
// called directly one element past a 16-byte boundary). Without a device every test skips with a
// visible reason.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "kernels/layer_norm/layer_norm.h"
#include "kernels/random/splitmix.h"
#include "runtime/context.h"
#include "runtime/layer_norm_dispatch.h"
#include "runtime/settings.h"
#include "runtime/transfer.h"
#include "tests/support/cuda_suite.h"
#include "tests/support/gpu_test_support.h"
#include "tests/support/offset_device.h"

namespace {

using gpu_test::random_values;
using gpu_test::upload;

using tlrt::Backend;
using tlrt::Buffer;
using tlrt::Dtype;

class LayerNormGpu : public gpu_test::CudaSuite<> {
 protected:
  LayerNormGpu() : CudaSuite("GPU checks of layer normalization") {}
  void TearDown() override {
    tlrt::set_setting(static_cast<uint32_t>(tlrt::Setting::deterministic), 0);
  }
};

template <class T>
std::vector<T> download(const Buffer& b) {
  constexpr Dtype dt = sizeof(T) == 4 ? Dtype::f32 : Dtype::f64;
  std::vector<T> v(b.size());
  tlrt::download_words(b, reinterpret_cast<uint8_t*>(v.data()), dt, "layer_norm_gpu_test");
  return v;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

long double gamma_of(uint64_t k, long double u) {
  const long double ku = static_cast<long double>(k) * u;
  return ku / (1 - ku);
}

struct Shape {
  uint64_t rows, cols;
};

template <class T>
struct Outputs {
  std::vector<T> a, b, c;
};

template <class T>
Outputs<T> outputs_of(const tlrt::LayerNormResults& r) {
  return {download<T>(*r[0]), download<T>(*r[1]), download<T>(*r[2])};
}

// The forward of the CUDA backend (got: y, xhat, invStd) against the reference's (want) within
// the per-row bounds of docs/NUMERICS.md.
template <class T>
void expect_forward_within_bounds(const Shape& s, const std::vector<T>& x, const std::vector<T>& g,
                                  const Outputs<T>& got, const Outputs<T>& want,
                                  const std::string& where) {
  const double u = sizeof(T) == 4 ? 0x1p-24 : 0x1p-53;
  const long double ud = 0x1p-53L;
  for (uint64_t r = 0; r < s.rows; ++r) {
    long double sum = 0, abs_sum = 0;
    for (uint64_t j = 0; j < s.cols; ++j) {
      sum += x[r * s.cols + j];
      abs_sum += std::fabs(static_cast<long double>(x[r * s.cols + j]));
    }
    const long double mu = sum / s.cols;
    long double sq = 0;
    for (uint64_t j = 0; j < s.cols; ++j) {
      const long double c = x[r * s.cols + j] - mu;
      sq += c * c;
    }
    const long double sd = std::sqrt(sq / s.cols + 1e-5L);
    const long double d = gamma_of(s.cols + 1, ud) * (abs_sum / s.cols) / sd;
    const long double gn = gamma_of(s.cols + 6, ud) + d * d;
    const double inv_bound = static_cast<double>((2 * u + gn) / sd) * (1 + 8 * u);
    ASSERT_LE(std::fabs(double(got.c[r]) - double(want.c[r])), inv_bound)
        << where << " invStd[" << r << "]";
    for (uint64_t j = 0; j < s.cols; ++j) {
      const uint64_t i = r * s.cols + j;
      const long double h = std::fabs(static_cast<long double>(want.b[i]));
      const double hb = static_cast<double>(2 * u * h + 2 * (d + gn * h)) * (1 + 8 * u);
      ASSERT_LE(std::fabs(double(got.b[i]) - double(want.b[i])), hb)
          << where << " xhat[" << i << "]";
      const double yb =
          (std::fabs(double(g[j])) * hb +
           2 * u * (double(h) * std::fabs(double(g[j])) + std::fabs(double(want.a[i])))) *
          (1 + 8 * u);
      ASSERT_LE(std::fabs(double(got.a[i]) - double(want.a[i])), yb) << where << " y[" << i << "]";
    }
  }
}

template <class T>
void check_shape(const Shape& s, uint64_t key, double offset) {
  const uint64_t n = s.rows * s.cols;
  const double u = sizeof(T) == 4 ? 0x1p-24 : 0x1p-53;
  const long double ud = 0x1p-53L;
  const auto x = random_values<T>(n, key, 2.0, offset);
  const auto g = random_values<T>(s.cols, key + n, 1.0, 1.0);
  const auto be = random_values<T>(s.cols, key + 2 * n, 1.0, 0.0);
  const auto dy = random_values<T>(n, key + 3 * n, 1.0, 0.0);
  const std::string where = std::to_string(s.rows) + " x " + std::to_string(s.cols);
  Outputs<T> fwd[2], bwd[2];
  for (int k = 0; k < 2; ++k) {
    const Backend backend = k == 0 ? Backend::cuda : Backend::reference;
    auto bx = upload(backend, x), bg = upload(backend, g), bb = upload(backend, be);
    fwd[k] = outputs_of<T>(tlrt::layer_norm_fwd(*bx, *bg, *bb, s.rows, s.cols, 1e-5, "test"));
  }
  // The backward of both backends runs on the reference's xhat and invStd.
  for (int k = 0; k < 2; ++k) {
    const Backend backend = k == 0 ? Backend::cuda : Backend::reference;
    auto bd = upload(backend, dy), bh = upload(backend, fwd[1].b), bi = upload(backend, fwd[1].c),
         bg = upload(backend, g);
    bwd[k] = outputs_of<T>(tlrt::layer_norm_bwd(*bd, *bh, *bi, *bg, s.rows, s.cols,
                                                static_cast<double>(s.cols),
                                                1.0 / static_cast<double>(s.cols), "test"));
  }
  expect_forward_within_bounds(s, x, g, fwd[0], fwd[1], where);
  if (::testing::Test::HasFatalFailure()) return;
  // Backward: dx within the staged bound, the column sums within gamma_rows terms.
  const T cs = static_cast<T>(s.cols), ic = static_cast<T>(1.0 / static_cast<double>(s.cols));
  const long double un = gamma_of(s.cols, ud) + gamma_of(s.cols, sizeof(T) == 4 ? ud : 0x1p-64L);
  std::vector<long double> ag(s.cols, 0), ab(s.cols, 0), sg(s.cols, 0), sb(s.cols, 0);
  for (uint64_t r = 0; r < s.rows; ++r) {
    long double s1 = 0, s2 = 0, a1 = 0, a2 = 0;
    for (uint64_t j = 0; j < s.cols; ++j) {
      const uint64_t i = r * s.cols + j;
      const T q = dy[i] * g[j];
      const T qh = q * fwd[1].b[i];
      s1 += q;
      s2 += qh;
      a1 += std::fabs(q);
      a2 += std::fabs(qh);
      const T gh = dy[i] * fwd[1].b[i];
      sg[j] += gh;
      ag[j] += std::fabs(gh);
      sb[j] += dy[i];
      ab[j] += std::fabs(dy[i]);
    }
    const long double d1 = 2 * u * std::fabs(s1) + un * a1;
    const long double d2 = 2 * u * std::fabs(s2) + un * a2;
    const long double scale = std::fabs(static_cast<long double>(fwd[1].c[r]) * ic);
    for (uint64_t j = 0; j < s.cols; ++j) {
      const uint64_t i = r * s.cols + j;
      const long double h = std::fabs(static_cast<long double>(fwd[1].b[i]));
      const long double q = std::fabs(static_cast<long double>(dy[i] * g[j]));
      const long double staged = 2 * u * (2 * q * cs + 2 * std::fabs(s1) + 3 * h * std::fabs(s2));
      const double bound = static_cast<double>((d1 + h * d2 + staged) * scale +
                                               4 * u * std::fabs(double(bwd[1].a[i]))) *
                           (1 + 8 * u);
      ASSERT_LE(std::fabs(double(bwd[0].a[i]) - double(bwd[1].a[i])), bound)
          << where << " dx[" << i << "]";
    }
  }
  const long double ur = gamma_of(s.rows, ud) + gamma_of(s.rows, sizeof(T) == 4 ? ud : 0x1p-64L);
  for (uint64_t j = 0; j < s.cols; ++j) {
    const double bg = static_cast<double>(2 * u * std::fabs(sg[j]) + ur * ag[j]) * (1 + 8 * u);
    const double bb = static_cast<double>(2 * u * std::fabs(sb[j]) + ur * ab[j]) * (1 + 8 * u);
    ASSERT_LE(std::fabs(double(bwd[0].b[j]) - double(bwd[1].b[j])), bg)
        << where << " dGamma[" << j << "]";
    ASSERT_LE(std::fabs(double(bwd[0].c[j]) - double(bwd[1].c[j])), bb)
        << where << " dBeta[" << j << "]";
  }
  // Ten runs on the GPU under the deterministic setting: the same bits.
  tlrt::set_setting(static_cast<uint32_t>(tlrt::Setting::deterministic), 1);
  auto bx = upload(Backend::cuda, x), bg = upload(Backend::cuda, g), bb = upload(Backend::cuda, be);
  auto bd = upload(Backend::cuda, dy), bh = upload(Backend::cuda, fwd[1].b),
       bi = upload(Backend::cuda, fwd[1].c);
  for (int run = 0; run < 10; ++run) {
    const Outputs<T> f =
        outputs_of<T>(tlrt::layer_norm_fwd(*bx, *bg, *bb, s.rows, s.cols, 1e-5, "test"));
    const Outputs<T> b = outputs_of<T>(
        tlrt::layer_norm_bwd(*bd, *bh, *bi, *bg, s.rows, s.cols, static_cast<double>(s.cols),
                             1.0 / static_cast<double>(s.cols), "test"));
    ASSERT_TRUE(same_bits(f.a, fwd[0].a)) << where << " y, run " << run;
    ASSERT_TRUE(same_bits(f.b, fwd[0].b)) << where << " xhat, run " << run;
    ASSERT_TRUE(same_bits(f.c, fwd[0].c)) << where << " invStd, run " << run;
    ASSERT_TRUE(same_bits(b.a, bwd[0].a)) << where << " dx, run " << run;
    ASSERT_TRUE(same_bits(b.b, bwd[0].b)) << where << " dGamma, run " << run;
    ASSERT_TRUE(same_bits(b.c, bwd[0].c)) << where << " dBeta, run " << run;
  }
  tlrt::set_setting(static_cast<uint32_t>(tlrt::Setting::deterministic), 0);
}

// Column counts that are multiples of 4 take the 16-byte accesses; 250, 510, 1022, 2046, 4094
// (float: one element per access, double: 16-byte pairs) and 8191 keep the one-element accesses of
// the same layouts tested, 8000 x 1022 with its own (smaller) block cap reached.
const Shape kShapes[] = {{20000, 1024}, {3000, 300},  {4000, 31},  {2000, 2},   {300, 1},
                         {129, 2048},   {65, 4096},   {33, 8192},  {17, 9000},  {5, 20000},
                         {8000, 1022},  {500, 250},   {700, 510},  {100, 2046}, {70, 4094},
                         {40, 8191},    {2051, 1021}, {1027, 772}, {515, 513}};

// Shapes of 513..1024 columns checked again with a common offset of 1e6 (rows not a multiple of
// 4, both access widths).
const Shape kOffsetShapes[] = {{2048, 1024}, {1027, 1021}, {515, 516}};

// The forward of x (s.rows x s.cols) with gamma, beta drawn from key: [0] CUDA, [1] reference.
template <class T>
std::array<Outputs<T>, 2> forward_on_both(const std::vector<T>& x, const Shape& s, uint64_t key) {
  const auto g = random_values<T>(s.cols, key + x.size(), 1.0, 1.0);
  const auto be = random_values<T>(s.cols, key + 2 * x.size(), 1.0, 0.0);
  std::array<Outputs<T>, 2> fwd;
  for (int k = 0; k < 2; ++k) {
    const Backend backend = k == 0 ? Backend::cuda : Backend::reference;
    auto bx = upload(backend, x), bg = upload(backend, g), bb = upload(backend, be);
    fwd[k] = outputs_of<T>(tlrt::layer_norm_fwd(*bx, *bg, *bb, s.rows, s.cols, 1e-5, "test"));
  }
  return fwd;
}

// Rows offset + scale k_j of integers k_j that sum to zero (every value exact in T): the mean is
// offset and the sum of squares exact in any order, so both backends reach the same binary64 sd
// and the forward must agree bit for bit. This holds the float32 xhat (a binary64 product, the
// division only near a float midpoint) to the contract's rounded binary64 quotient on every
// layout and access width.
template <class T>
std::vector<T> exact_rows(const Shape& s, uint64_t key, double scale, double offset) {
  std::vector<T> x(s.rows * s.cols);
  for (uint64_t r = 0; r < s.rows; ++r) {
    double sum = 0;
    for (uint64_t j = 0; j + 1 < s.cols; ++j) {
      const auto v =
          scale *
          static_cast<double>(
              static_cast<int64_t>(tlrt::random::splitmix64_finalize(key + r * s.cols + j) % 2001) -
              1000);
      x[r * s.cols + j] = static_cast<T>(offset + v);
      sum += v;
    }
    x[r * s.cols + s.cols - 1] = static_cast<T>(offset - sum);
  }
  for (uint64_t r = 0; r < s.rows; ++r) {
    double sum = 0;
    for (uint64_t j = 0; j < s.cols; ++j) sum += static_cast<double>(x[r * s.cols + j]) - offset;
    EXPECT_EQ(sum, 0.0) << "row " << r << " of the exact rows is not exact in the dtype";
  }
  return x;
}

template <class T>
void check_exact_rows(const Shape& s, uint64_t key, double scale = 1.0, double offset = 0.0) {
  const std::vector<T> x = exact_rows<T>(s, key, scale, offset);
  const std::array<Outputs<T>, 2> fwd = forward_on_both(x, s, key);
  const std::string where = std::to_string(s.rows) + " x " + std::to_string(s.cols);
  EXPECT_TRUE(same_bits(fwd[0].a, fwd[1].a)) << where << " y";
  EXPECT_TRUE(same_bits(fwd[0].b, fwd[1].b)) << where << " xhat";
  EXPECT_TRUE(same_bits(fwd[0].c, fwd[1].c)) << where << " invStd";
}

// 513..1024 columns (float: rows folded onto one warp, 4 rows per block) with rows that are not a
// multiple of 4, on both access widths.
const Shape kExactShapes[] = {{4096, 1024}, {3000, 1022}, {5000, 256}, {4000, 250},
                              {64, 8192},   {64, 8191},   {2000, 31},  {20, 9000},
                              {1027, 1021}, {517, 513},   {2051, 772}, {1023, 1023}};

// Runs check(T{}, shape, key) for T = float and double on every shape of kExactShapes, each
// shape with its own key.
template <class Check>
void on_exact_shapes(uint64_t key, Check&& check) {
  for (const Shape& s : kExactShapes) {
    check(float{}, s, key);
    check(double{}, s, key);
    key += 0x100000000ull;
  }
}

TEST_F(LayerNormGpu, ForwardOfExactRowsIsBitIdenticalToTheReference) {
  on_exact_shapes(
      5, [](auto t, const Shape& s, uint64_t key) { check_exact_rows<decltype(t)>(s, key); });
}

// The same rows scaled by 2^-140: float32 subnormals (and binary64 values whose xhat is a float32
// subnormal), exact in binary64 as before, so the widening and the rounding of xhat take their
// general paths and must still agree bit for bit.
TEST_F(LayerNormGpu, ForwardOfSubnormalRowsIsBitIdenticalToTheReference) {
  on_exact_shapes(11, [](auto t, const Shape& s, uint64_t key) {
    check_exact_rows<decltype(t)>(s, key, 0x1p-140);
  });
}

// Rows near 1e6 whose values differ in steps of 1/16 (float32's spacing there): exact in both
// dtypes, mean 1e6, every centered value and square exact, so bit for bit as above. A float32
// centering would lose the rows' spread; the binary64 statistics keep it on every layout.
TEST_F(LayerNormGpu, ForwardOfLargeOffsetRowsIsBitIdenticalToTheReference) {
  on_exact_shapes(17, [](auto t, const Shape& s, uint64_t key) {
    check_exact_rows<decltype(t)>(s, key, 0.0625, 1e6);
  });
}

// Rows holding an infinity or a NaN among ordinary values, next to rows without: the non-finite
// rows give NaN statistics on both backends and the others are unaffected.
template <class T>
void check_nonfinite_rows(const Shape& s, uint64_t key) {
  auto x = random_values<T>(s.rows * s.cols, key, 2.0, 0.0);
  const T specials[] = {std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(),
                        std::numeric_limits<T>::quiet_NaN()};
  for (uint64_t r = 0; r < s.rows; r += 3) {
    x[r * s.cols + (r * 7) % s.cols] = specials[(r / 3) % 3];
  }
  const std::array<Outputs<T>, 2> fwd = forward_on_both(x, s, key);
  const std::string where = std::to_string(s.rows) + " x " + std::to_string(s.cols);
  for (uint64_t r = 0; r < s.rows; r += 3) {
    ASSERT_TRUE(std::isnan(fwd[0].c[r])) << where << " invStd[" << r << "]";
    ASSERT_TRUE(std::isnan(fwd[0].b[r * s.cols])) << where << " xhat of row " << r;
  }
  // Finite rows are checked against their bounds elsewhere; here only the NaN pattern.
  for (size_t r = 0; r < fwd[0].c.size(); ++r) {
    ASSERT_EQ(std::isnan(fwd[0].c[r]), std::isnan(fwd[1].c[r])) << where << " invStd[" << r << "]";
  }
  for (size_t i = 0; i < fwd[0].b.size(); ++i) {
    ASSERT_EQ(std::isnan(fwd[0].b[i]), std::isnan(fwd[1].b[i])) << where << " xhat[" << i << "]";
    ASSERT_EQ(std::isnan(fwd[0].a[i]), std::isnan(fwd[1].a[i])) << where << " y[" << i << "]";
  }
}

TEST_F(LayerNormGpu, NonFiniteRowsGiveNaNRowsOnBothBackends) {
  on_exact_shapes(
      23, [](auto t, const Shape& s, uint64_t key) { check_nonfinite_rows<decltype(t)>(s, key); });
}

// The CUDA launcher on x, gamma, beta, y and xhat one element past a 16-byte boundary.
template <class T>
Outputs<T> forward_misaligned(const std::vector<T>& x, const std::vector<T>& g,
                              const std::vector<T>& be, const Shape& s) {
  gpu_test::OffsetDevice<T> dx(x, 1), dg(g, 1), db(be, 1);
  gpu_test::OffsetDevice<T> dy(x.size(), 1), dh(x.size(), 1);
  gpu_test::OffsetDevice<T> di(s.rows, 0);
  tlrt::kernels::layer_norm_fwd_cuda<T>(dx.data(), dg.data(), db.data(), {s.rows, s.cols}, 1e-5,
                                        dy.data(), dh.data(), di.data(), nullptr);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  return {dy.read(), dh.read(), di.read()};
}

template <class T>
Outputs<T> forward_reference(const std::vector<T>& x, const std::vector<T>& g,
                             const std::vector<T>& be, const Shape& s) {
  Outputs<T> r{std::vector<T>(x.size()), std::vector<T>(x.size()), std::vector<T>(s.rows)};
  tlrt::kernels::layer_norm_fwd_ref<T>(x.data(), g.data(), be.data(), {s.rows, s.cols}, 1e-5,
                                       r.a.data(), r.b.data(), r.c.data());
  return r;
}

// Misaligned buffers take every layout's one-element accesses: random rows within the bounds and
// exact rows near 1e6 bit for bit against the reference loops.
template <class T>
void check_misaligned(const Shape& s, uint64_t key) {
  const uint64_t n = s.rows * s.cols;
  const auto g = random_values<T>(s.cols, key + n, 1.0, 1.0);
  const auto be = random_values<T>(s.cols, key + 2 * n, 1.0, 0.0);
  const std::string where = std::to_string(s.rows) + " x " + std::to_string(s.cols) +
                            (sizeof(T) == 4 ? " float" : " double") + ", misaligned";
  {
    const auto x = random_values<T>(n, key, 2.0, 0.0);
    expect_forward_within_bounds(s, x, g, forward_misaligned(x, g, be, s),
                                 forward_reference(x, g, be, s), where);
    if (::testing::Test::HasFatalFailure()) return;
  }
  const std::vector<T> x = exact_rows<T>(s, key, 0.0625, 1e6);
  const Outputs<T> got = forward_misaligned(x, g, be, s);
  const Outputs<T> want = forward_reference(x, g, be, s);
  EXPECT_TRUE(same_bits(got.a, want.a)) << where << " y";
  EXPECT_TRUE(same_bits(got.b, want.b)) << where << " xhat";
  EXPECT_TRUE(same_bits(got.c, want.c)) << where << " invStd";
}

// 513..1024 columns on both sides of a multiple of 4, rows not a multiple of 4; then one shape of
// a one-warp layout and one of a several-warp layout.
const Shape kMisalignedShapes[] = {{1027, 1021}, {515, 1024}, {2050, 772},
                                   {333, 513},   {300, 256},  {65, 4096}};

TEST_F(LayerNormGpu, MisalignedBuffersMatchTheReference) {
  uint64_t key = 31;
  for (const Shape& s : kMisalignedShapes) {
    check_misaligned<float>(s, key);
    check_misaligned<double>(s, key);
    key += 0x100000000ull;
  }
}

TEST_F(LayerNormGpu, Float32MatchesTheReferenceAndRepeats) {
  uint64_t key = 1;
  for (const Shape& s : kShapes) {
    check_shape<float>(s, key, 0.0);
    key += 0x100000000ull;
  }
  for (const Shape& s : kOffsetShapes) {
    check_shape<float>(s, key, 1e6);
    key += 0x100000000ull;
  }
}

TEST_F(LayerNormGpu, Float64MatchesTheReferenceAndRepeats) {
  uint64_t key = 77;
  for (const Shape& s : kShapes) {
    check_shape<double>(s, key, 0.0);
    key += 0x100000000ull;
  }
  for (const Shape& s : kOffsetShapes) {
    check_shape<double>(s, key, 1e6);
    key += 0x100000000ull;
  }
}

}  // namespace
