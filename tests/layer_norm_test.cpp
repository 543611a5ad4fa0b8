// layer_norm_fwd and layer_norm_bwd through the Lean boundary, on the backend TLRT_DEVICE selects
// (ctest runs this binary once with cpu and once with cuda). Inputs are made and results read
// back as exact words (of_bytes_io / to_bytes_io). Covered: hand-computed fwd and bwd cases whose
// sums are exact (the same bits on both backends), epsilon used unrounded and invCols ignored by
// the forward, colsScale and invCols rounded to the dtype by the backward, constant rows
// (xhat = 0, invStd = fl(1/sqrt(eps))), the large-common-offset regression (float32 rows near 1e6
// whose xhat still has mean 0 and the variance var / (var + eps)), random rows of 1 to 20000
// columns against a host oracle within the bounds of docs/NUMERICS.md, float64, ten-run bitwise
// repeatability of every output with the deterministic setting on, the triple's layout and
// ownership (three fresh buffers, none an argument, all returned after the drop), and every bad
// input's panic with its message.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "abi_test_support.h"

using namespace abi_test;

namespace {

template <class T>
using Bits = typename Dt<T>::Bits;

// The three buffers of a triple (a, (b, c)), read back.
template <class T>
struct Three {
  std::vector<T> a, b, c;
};

template <class T>
Three<T> unpack(lean_object* triple) {
  Three<T> r;
  EXPECT_TRUE(lean_is_ctor(triple));
  EXPECT_EQ(lean_ptr_tag(triple), 0u);
  lean_object* inner = lean_ctor_get(triple, 1);
  EXPECT_TRUE(lean_is_ctor(inner));
  EXPECT_EQ(lean_ptr_tag(inner), 0u);
  r.a = read_values<T>(lean_ctor_get(triple, 0));
  r.b = read_values<T>(lean_ctor_get(inner, 0));
  r.c = read_values<T>(lean_ctor_get(inner, 1));
  return r;
}

template <class T>
Three<T> forward(const std::vector<T>& x, const std::vector<T>& gamma, const std::vector<T>& beta,
                 uint32_t rows, uint32_t cols, double epsilon, double inv_cols = 0.0) {
  Obj bx = make_buffer(x), bg = make_buffer(gamma), bb = make_buffer(beta);
  Obj r(torchlean_cuda_buffer_layer_norm_fwd(bx.get(), bg.get(), bb.get(), rows, cols, inv_cols,
                                             epsilon));
  return unpack<T>(r.get());
}

template <class T>
Three<T> backward(const std::vector<T>& dy, const std::vector<T>& xhat,
                  const std::vector<T>& inv_std, const std::vector<T>& gamma, uint32_t rows,
                  uint32_t cols, double cols_scale, double inv_cols) {
  Obj bd = make_buffer(dy), bh = make_buffer(xhat), bi = make_buffer(inv_std),
      bg = make_buffer(gamma);
  Obj r(torchlean_cuda_buffer_layer_norm_bwd(bd.get(), bh.get(), bi.get(), bg.get(), rows, cols,
                                             cols_scale, inv_cols));
  return unpack<T>(r.get());
}

// Host oracle of the forward, exactly as staged (binary64 statistics in column order).
template <class T>
Three<T> oracle_forward(const std::vector<T>& x, const std::vector<T>& gamma,
                        const std::vector<T>& beta, uint32_t rows, uint32_t cols, double eps) {
  Three<T> r;
  r.a.resize(x.size());
  r.b.resize(x.size());
  r.c.resize(rows);
  for (uint64_t i = 0; i < rows; ++i) {
    double sum = 0;
    for (uint64_t j = 0; j < cols; ++j) sum += static_cast<double>(x[i * cols + j]);
    const double mu = sum / cols;
    double sq = 0;
    for (uint64_t j = 0; j < cols; ++j) {
      const double c = static_cast<double>(x[i * cols + j]) - mu;
      sq += c * c;
    }
    const double sd = std::sqrt(sq / cols + eps);
    r.c[i] = static_cast<T>(1.0 / sd);
    for (uint64_t j = 0; j < cols; ++j) {
      const T h = static_cast<T>((static_cast<double>(x[i * cols + j]) - mu) / sd);
      r.b[i * cols + j] = h;
      const T p = h * gamma[j];
      r.a[i * cols + j] = p + beta[j];
    }
  }
  return r;
}

template <class T>
std::vector<T> random_values(size_t n, uint32_t seed, double scale, double offset = 0.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> v(n);
  for (auto& e : v) e = static_cast<T>(offset + dist(rng) * scale);
  return v;
}

template <class T>
constexpr double kEps = std::numeric_limits<T>::epsilon();

class LayerNorm : public BackendSuite {};
using LayerNormDeathTest = LayerNorm;

template <class T>
class LayerNormTyped : public BackendSuite {};
using Dtypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(LayerNormTyped, Dtypes);

// ---------------------------------------------------------------------------------------------
// Hand-computed cases (every sum exact: the same bits on both backends)

TYPED_TEST(LayerNormTyped, ForwardHandCases) {
  using T = TypeParam;
  // x = [1, 3]: mu = 2, var = 1, sd = 1.
  Three<T> r = forward<T>({1, 3}, {2, 3}, {0.5, -1}, 1, 2, 0.0, 0.5);
  EXPECT_EQ(words(r.a), words<T>({-1.5, 2}));
  EXPECT_EQ(words(r.b), words<T>({-1, 1}));
  EXPECT_EQ(words(r.c), words<T>({1}));
  // Two rows; epsilon 5 used unrounded: [-2, 2] has var 4, sd = 3, xhat = fl(-+2/3 in binary64).
  r = forward<T>({0, 0, 4, 4, -2, 2, -2, 2}, {1, 1, 1, 1}, {0, 0, 0, 0}, 2, 4, 0.0);
  EXPECT_EQ(words(r.b), words<T>({-1, -1, 1, 1, -1, 1, -1, 1}));
  EXPECT_EQ(words(r.c), words<T>({0.5, 0.5}));
  r = forward<T>({-2, 2}, {3, 1}, {1, 0}, 1, 2, 5.0);
  const T h = static_cast<T>(2.0 / 3.0);
  EXPECT_EQ(words(r.b), words<T>({-h, h}));
  EXPECT_EQ(words(r.c), words<T>({static_cast<T>(1.0 / 3.0)}));
  const T p = static_cast<T>(-h * T(3));
  EXPECT_EQ(words(r.a), words<T>({static_cast<T>(p + T(1)), h}));
  // invCols is ignored: a wrong value changes nothing.
  Three<T> s = forward<T>({-2, 2}, {3, 1}, {1, 0}, 1, 2, 5.0, 123.0);
  EXPECT_EQ(words(s.a), words(r.a));
  EXPECT_EQ(words(s.b), words(r.b));
  EXPECT_EQ(words(s.c), words(r.c));
}

TEST_F(LayerNorm, EpsilonIsNotRoundedToFloat32) {
  // x = [-1, 1]: var = 1; eps = 2^-30 + 2^-60 is not a float32 value. sd = sqrt(1 + eps) in
  // binary64; rounding eps first would give 1 / sqrt(1 + 2^-30) instead.
  const double eps = std::ldexp(1.0, -30) + std::ldexp(1.0, -60);
  Three<float> r = forward<float>({-1, 1}, {1, 1}, {0, 0}, 1, 2, eps);
  const double sd = std::sqrt(1.0 + eps);
  EXPECT_EQ(words(r.c), words<float>({static_cast<float>(1.0 / sd)}));
  EXPECT_EQ(words(r.b), words<float>({static_cast<float>(-1.0 / sd), static_cast<float>(1 / sd)}));
}

TEST_F(LayerNorm, Float32XhatIsRoundedFromBinary64) {
  // x = [-1, 1]: mu = 0, var = 1, and with this epsilon sd = sqrt(1 + eps) = s exactly, where
  // 1 / s rounds in binary64 to M = 9447364.5 * 2^-24, a float32 midpoint. Rounded from binary64
  // (the contract's double rounding) M ties to the even 9447364 * 2^-24; a single rounding of the
  // exact quotient 1 / s would give 9447365 * 2^-24.
  const double eps = 0x1.13abfb812108bp+1;
  Three<float> r = forward<float>({-1, 1}, {1, 1}, {0, 0}, 1, 2, eps);
  const float even = std::ldexp(9447364.0f, -24);
  EXPECT_EQ(words(r.b), words<float>({-even, even}));
  EXPECT_EQ(words(r.c), words<float>({even}));
  EXPECT_EQ(words(r.a), words<float>({-even, even}));
}

TYPED_TEST(LayerNormTyped, ConstantRowsGiveZeroXhat) {
  using T = TypeParam;
  const double eps = 1e-5;
  Three<T> r = forward<T>({5, 5, 5, -7, -7, -7}, {2, -3, 1}, {0.25, 1, -1}, 2, 3, eps);
  const T inv = static_cast<T>(1.0 / std::sqrt(eps));
  EXPECT_EQ(words(r.c), words<T>({inv, inv}));
  EXPECT_EQ(words(r.b), words<T>({0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(words(r.a), words<T>({0.25, 1, -1, 0.25, 1, -1}));
  // One column: every row is constant.
  r = forward<T>({3, -4, 1e30}, {2}, {7}, 3, 1, eps);
  EXPECT_EQ(words(r.b), words<T>({0, 0, 0}));
  EXPECT_EQ(words(r.a), words<T>({7, 7, 7}));
  EXPECT_EQ(words(r.c), words<T>({inv, inv, inv}));
}

TYPED_TEST(LayerNormTyped, BackwardHandCases) {
  using T = TypeParam;
  // Row 0: q = [1, 2, 8], s1 = 11, s2 = 7, t = [-1, -5, 6], dx = t * 2 * 0.25.
  // Row 1: q = [2, 0, -4], s1 = -2, s2 = 1, t = [7.5, 2.5, -10], dx = t * 1 * 0.25.
  Three<T> r = backward<T>({1, 2, 4, 2, 0, -2}, {-1, 0, 1, 0.5, -0.5, 0}, {2, 1}, {1, 1, 2}, 2, 3,
                           3.0, 0.25);
  EXPECT_EQ(words(r.a), words<T>({-0.5, -2.5, 3, 1.875, 0.625, -2.5}));
  EXPECT_EQ(words(r.b), words<T>({0, 0, 4}));
  EXPECT_EQ(words(r.c), words<T>({3, 2, 2}));
}

TYPED_TEST(LayerNormTyped, BackwardRoundsItsScalarsToTheDtype) {
  using T = TypeParam;
  // invCols = 1/3 and colsScale = 3 + 2^-40 reach the staging rounded to T.
  const double cols_scale = 3.0 + std::ldexp(1.0, -40);
  const double inv_cols = 1.0 / 3.0;
  const std::vector<T> dy{1, 2, 4}, h{-1, 0, 1}, g{1, 1, 2};
  const T is = 2;
  Three<T> r = backward<T>(dy, h, {is}, g, 1, 3, cols_scale, inv_cols);
  const T cs = static_cast<T>(cols_scale), ic = static_cast<T>(inv_cols);
  std::vector<T> expect;
  for (int j = 0; j < 3; ++j) {
    const T q = dy[j] * g[j];
    const T a = q * cs;
    const T b = a - T(11);
    const T c = h[j] * T(7);
    const T t = b - c;
    const T u = t * is;
    expect.push_back(u * ic);
  }
  EXPECT_EQ(words(r.a), words(expect));
}

// ---------------------------------------------------------------------------------------------
// The large-common-offset regression: float32 rows near 1e6

TEST_F(LayerNorm, LargeCommonOffsetKeepsUnitVariance) {
  const uint32_t rows = 8, cols = 1024;
  const double eps = 1e-5;
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int> step(-8, 8);
  std::vector<float> x(size_t{rows} * cols);
  for (auto& v : x) v = static_cast<float>(1e6 + 0.0625 * step(rng));  // exact in float32
  Three<float> r = forward<float>(x, std::vector<float>(cols, 1.0f), std::vector<float>(cols, 0.0f),
                                  rows, cols, eps);
  for (uint32_t i = 0; i < rows; ++i) {
    double sum = 0, mean_x = 0;
    for (uint32_t j = 0; j < cols; ++j) mean_x += x[i * cols + j];
    mean_x /= cols;
    double var = 0;
    for (uint32_t j = 0; j < cols; ++j) {
      const double c = x[i * cols + j] - mean_x;
      var += c * c;
    }
    var /= cols;
    double sq = 0;
    for (uint32_t j = 0; j < cols; ++j) {
      sum += r.b[i * cols + j];
      sq += double(r.b[i * cols + j]) * r.b[i * cols + j];
    }
    EXPECT_NEAR(sum / cols, 0.0, 1e-6) << "row " << i;
    EXPECT_NEAR(sq / cols, var / (var + eps), 4e-7) << "row " << i;
    EXPECT_NEAR(r.c[i], 1.0 / std::sqrt(var + eps), 1e-6 / std::sqrt(var + eps)) << "row " << i;
  }
}

// ---------------------------------------------------------------------------------------------
// Random rows against the host oracle (bounds of docs/NUMERICS.md)

template <class T>
void check_forward(uint32_t rows, uint32_t cols, uint32_t seed, double offset) {
  const auto x = random_values<T>(size_t{rows} * cols, seed, 3.0, offset);
  const auto g = random_values<T>(cols, seed + 1, 2.0);
  const auto b = random_values<T>(cols, seed + 2, 1.0);
  const double eps = 1e-5;
  Three<T> r = forward<T>(x, g, b, rows, cols, eps);
  Three<T> o = oracle_forward<T>(x, g, b, rows, cols, eps);
  ASSERT_EQ(r.a.size(), o.a.size());
  ASSERT_EQ(r.c.size(), o.c.size());
  // The bound of docs/NUMERICS.md: the backends' binary64 sums differ in order, which the
  // division by sd turns into D = gamma_{n+1}(2^-53) mean|x| / sd per row.
  const double u = kEps<T> / 2;
  const long double ud = 0x1p-53L;
  for (uint64_t row = 0; row < rows; ++row) {
    long double sum = 0, abs_sum = 0;
    for (uint64_t j = 0; j < cols; ++j) {
      sum += x[row * cols + j];
      abs_sum += std::fabs(static_cast<long double>(x[row * cols + j]));
    }
    const long double mu = sum / cols;
    long double sq = 0;
    for (uint64_t j = 0; j < cols; ++j) {
      const long double c = x[row * cols + j] - mu;
      sq += c * c;
    }
    const long double sd = std::sqrt(sq / cols + eps);
    const long double d = (cols + 1) * ud / (1 - (cols + 1) * ud) * (abs_sum / cols) / sd;
    const long double gn = (cols + 6) * ud / (1 - (cols + 6) * ud) + d * d;
    const double slack = 1 + 8 * u;
    ASSERT_LE(std::fabs(double(r.c[row]) - double(o.c[row])),
              static_cast<double>((2 * u + gn) * std::fabs(double(o.c[row]))) * slack)
        << rows << "x" << cols << " invStd[" << row << "]";
    for (uint64_t j = 0; j < cols; ++j) {
      const uint64_t i = row * cols + j;
      const double h = std::fabs(double(o.b[i])), gj = std::fabs(double(g[j]));
      const double hb = static_cast<double>(2 * u * h + 2 * (d + gn * h)) * slack + 1e-300;
      ASSERT_LE(std::fabs(double(r.b[i]) - double(o.b[i])), hb)
          << rows << "x" << cols << " xhat[" << i << "]";
      ASSERT_LE(std::fabs(double(r.a[i]) - double(o.a[i])),
                (gj * hb + 2 * u * (h * gj + std::fabs(double(o.a[i])))) * slack + 1e-300)
          << rows << "x" << cols << " y[" << i << "]";
    }
  }
}

template <class T>
void check_backward(uint32_t rows, uint32_t cols, uint32_t seed) {
  const auto dy = random_values<T>(size_t{rows} * cols, seed, 2.0);
  const auto h = random_values<T>(size_t{rows} * cols, seed + 1, 1.5);
  auto is = random_values<T>(rows, seed + 2, 1.0, 2.0);
  const auto g = random_values<T>(cols, seed + 3, 1.0);
  const double cs = cols, ic = 1.0 / cols;
  Three<T> r = backward<T>(dy, h, is, g, rows, cols, cs, ic);
  const T csT = static_cast<T>(cs), icT = static_cast<T>(ic);
  const double e = kEps<T>;
  ASSERT_EQ(r.a.size(), dy.size());
  for (uint64_t i = 0; i < rows; ++i) {
    long double s1 = 0, s2 = 0, a1 = 0, a2 = 0;
    for (uint64_t j = 0; j < cols; ++j) {
      const T q = dy[i * cols + j] * g[j];
      const T qh = q * h[i * cols + j];
      s1 += q;
      s2 += qh;
      a1 += std::fabs(q);
      a2 += std::fabs(qh);
    }
    for (uint64_t j = 0; j < cols; ++j) {
      const T q = dy[i * cols + j] * g[j];
      const T hj = h[i * cols + j];
      const T t = ((q * csT) - static_cast<T>(s1)) - (hj * static_cast<T>(s2));
      const T expect = (t * is[i]) * icT;
      const double mag = (std::fabs(double(q) * csT) + double(a1) + std::fabs(double(hj)) * a2) *
                         std::fabs(double(is[i])) * double(icT);
      ASSERT_LE(std::fabs(double(r.a[i * cols + j]) - double(expect)),
                (cols + 8) * e * mag + 1e-300)
          << rows << "x" << cols << " dx[" << i << ", " << j << "]";
    }
  }
  for (uint64_t j = 0; j < cols; ++j) {
    long double sg = 0, sb = 0, ag = 0, ab = 0;
    for (uint64_t i = 0; i < rows; ++i) {
      const T p = dy[i * cols + j] * h[i * cols + j];
      sg += p;
      sb += dy[i * cols + j];
      ag += std::fabs(p);
      ab += std::fabs(dy[i * cols + j]);
    }
    ASSERT_LE(std::fabs(double(r.b[j]) - double(sg)), (rows + 4) * e * double(ag) + 1e-300)
        << "dGamma[" << j << "]";
    ASSERT_LE(std::fabs(double(r.c[j]) - double(sb)), (rows + 4) * e * double(ab) + 1e-300)
        << "dBeta[" << j << "]";
  }
}

TYPED_TEST(LayerNormTyped, ForwardMatchesTheOracle) {
  using T = TypeParam;
  const uint32_t shapes[][2] = {{1, 1},    {3, 1},    {5, 2},    {7, 3},    {9, 31},   {4, 33},
                                {17, 64},  {13, 100}, {6, 256},  {5, 300},  {3, 777},  {9, 1024},
                                {2, 1500}, {3, 4097}, {1, 8192}, {2, 9000}, {2, 20000}};
  uint32_t seed = 1;
  for (const auto& s : shapes) {
    check_forward<T>(s[0], s[1], seed++, 0.0);
    check_forward<T>(s[0], s[1], seed++, 1e4);
  }
}

TYPED_TEST(LayerNormTyped, BackwardMatchesTheOracle) {
  using T = TypeParam;
  const uint32_t shapes[][2] = {{1, 1},    {3, 1},    {5, 2},    {7, 3},     {9, 31},    {40, 33},
                                {17, 64},  {13, 100}, {50, 256}, {5, 300},   {33, 1024}, {2, 1500},
                                {3, 4097}, {1, 8192}, {2, 9000}, {2, 20000}, {300, 5}};
  uint32_t seed = 100;
  for (const auto& s : shapes) check_backward<T>(s[0], s[1], seed++);
}

// ---------------------------------------------------------------------------------------------
// Repeatability: ten runs, the same bits for every output

TYPED_TEST(LayerNormTyped, EveryOutputIsBitwiseRepeatable) {
  using T = TypeParam;
  DeterministicScope deterministic(true);
  const uint32_t shapes[][2] = {{300, 5}, {64, 1024}, {3, 9000}};
  uint32_t seed = 500;
  for (const auto& s : shapes) {
    const uint32_t rows = s[0], cols = s[1];
    const auto x = random_values<T>(size_t{rows} * cols, seed++, 5.0, 3.0);
    const auto g = random_values<T>(cols, seed++, 1.0);
    const auto b = random_values<T>(cols, seed++, 1.0);
    const auto dy = random_values<T>(size_t{rows} * cols, seed++, 1.0);
    Three<T> f0 = forward<T>(x, g, b, rows, cols, 1e-5);
    Three<T> b0 = backward<T>(dy, f0.b, f0.c, g, rows, cols, cols, 1.0 / cols);
    for (int run = 1; run < 10; ++run) {
      Three<T> f = forward<T>(x, g, b, rows, cols, 1e-5);
      Three<T> d = backward<T>(dy, f0.b, f0.c, g, rows, cols, cols, 1.0 / cols);
      ASSERT_EQ(words(f.a), words(f0.a)) << rows << "x" << cols << " run " << run;
      ASSERT_EQ(words(f.b), words(f0.b)) << rows << "x" << cols << " run " << run;
      ASSERT_EQ(words(f.c), words(f0.c)) << rows << "x" << cols << " run " << run;
      ASSERT_EQ(words(d.a), words(b0.a)) << rows << "x" << cols << " run " << run;
      ASSERT_EQ(words(d.b), words(b0.b)) << rows << "x" << cols << " run " << run;
      ASSERT_EQ(words(d.c), words(b0.c)) << rows << "x" << cols << " run " << run;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Ownership: three fresh buffers per call, none an argument, all returned after the drop

TEST_F(LayerNorm, OwnershipOfTheTriples) {
  Obj x = make_buffer<float>({1, 2, 3, 4, 5, 6});
  Obj g = make_buffer<float>({1, 1, 1});
  Obj b = make_buffer<float>({0, 0, 0});
  Obj is = make_buffer<float>({1, 1});
  const std::initializer_list<lean_object*> inputs = {x.get(), g.get(), b.get(), is.get()};
  // Third components: invStd (2 rows) and dBeta (3 columns).
  expect_fresh_result(
      "fwd",
      [&] {
        lean_object* r =
            torchlean_cuda_buffer_layer_norm_fwd(x.get(), g.get(), b.get(), 2, 3, 1.0 / 3, 1e-5);
        EXPECT_EQ(torchlean_cuda_buffer_size(lean_ctor_get(lean_ctor_get(r, 1), 1)), 2u);
        return r;
      },
      FreshResult{3, 56, 3}, inputs);
  expect_fresh_result(
      "bwd",
      [&] {
        lean_object* r = torchlean_cuda_buffer_layer_norm_bwd(x.get(), x.get(), is.get(), g.get(),
                                                              2, 3, 3.0, 1.0 / 3);
        EXPECT_EQ(torchlean_cuda_buffer_size(lean_ctor_get(lean_ctor_get(r, 1), 1)), 3u);
        return r;
      },
      FreshResult{3, 48, 3}, inputs);
  EXPECT_EQ(words(read_values<float>(x.get())), words<float>({1, 2, 3, 4, 5, 6}));
}

// ---------------------------------------------------------------------------------------------
// Bad inputs: pure symbols panic, naming the op and the sizes

lean_object* zeros(uint32_t n, uint8_t dtype = 0) {
  return torchlean_cuda_buffer_zeros(n, dtype);
}

TEST_F(LayerNormDeathTest, DimensionsMustBePositive) {
  EXPECT_EXIT(torchlean_cuda_buffer_layer_norm_fwd(zeros(0), zeros(3), zeros(3), 0, 3, 0.0, 1e-5),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: layer_norm_fwd: layerNormFwd: dimensions must be positive "
              "\\(rows = 0, cols = 3\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_layer_norm_fwd(zeros(0), zeros(0), zeros(0), 4, 0, 0.0, 1e-5),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: layer_norm_fwd: layerNormFwd: dimensions must be positive");
  EXPECT_EXIT(torchlean_cuda_buffer_layer_norm_bwd(zeros(0), zeros(0), zeros(0), zeros(3), 0, 3,
                                                   3.0, 1.0 / 3),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: layer_norm_bwd: layerNormBwd: dimensions must be positive "
              "\\(rows = 0, cols = 3\\)");
  EXPECT_EXIT(
      torchlean_cuda_buffer_layer_norm_bwd(zeros(0), zeros(0), zeros(2), zeros(0), 2, 0, 0.0, 0.0),
      ::testing::ExitedWithCode(1),
      "INTERNAL PANIC: tlrt: layer_norm_bwd: layerNormBwd: dimensions must be positive");
  // Before any operand is looked at, as TorchLean checks: a released operand or a non-buffer
  // does not hide the dimensions' message.
  lean_object* released = zeros(6);
  torchlean_cuda_buffer_release(released);
  EXPECT_EXIT(torchlean_cuda_buffer_layer_norm_fwd(released, zeros(3), zeros(3), 0, 3, 0.0, 1e-5),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: layer_norm_fwd: layerNormFwd: dimensions must be positive");
  EXPECT_EXIT(torchlean_cuda_buffer_layer_norm_bwd(released, zeros(0), zeros(0), zeros(3), 0, 3,
                                                   3.0, 1.0 / 3),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: layer_norm_bwd: layerNormBwd: dimensions must be positive");
  EXPECT_EXIT(torchlean_cuda_buffer_layer_norm_fwd(byte_array({1, 2}).get(), zeros(3), zeros(3), 2,
                                                   0, 0.0, 1e-5),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: layer_norm_fwd: layerNormFwd: dimensions must be positive");
  lean_dec(released);
}

TEST_F(LayerNormDeathTest, ForwardSizesMustMatch) {
  const std::string prefix = "INTERNAL PANIC: tlrt: layer_norm_fwd: buffer size does not match ";
  EXPECT_EXIT(torchlean_cuda_buffer_layer_norm_fwd(zeros(5), zeros(3), zeros(3), 2, 3, 0.0, 1e-5),
              ::testing::ExitedWithCode(1),
              prefix + "shape \\(size\\(x\\) = 5 but prod\\(\\[rows, cols\\]\\) = 6");
  EXPECT_EXIT(torchlean_cuda_buffer_layer_norm_fwd(zeros(6), zeros(2), zeros(3), 2, 3, 0.0, 1e-5),
              ::testing::ExitedWithCode(1),
              prefix + "shape \\(size\\(gamma\\) = 2 but prod\\(\\[cols\\]\\) = 3");
  EXPECT_EXIT(torchlean_cuda_buffer_layer_norm_fwd(zeros(6), zeros(3), zeros(6), 2, 3, 0.0, 1e-5),
              ::testing::ExitedWithCode(1),
              prefix + "shape \\(size\\(beta\\) = 6 but prod\\(\\[cols\\]\\) = 3");
}

TEST_F(LayerNormDeathTest, BackwardSizesMustMatch) {
  const std::string prefix = "INTERNAL PANIC: tlrt: layer_norm_bwd: buffer size does not match ";
  auto call = [](uint32_t d, uint32_t h, uint32_t i, uint32_t g) {
    return torchlean_cuda_buffer_layer_norm_bwd(zeros(d), zeros(h), zeros(i), zeros(g), 2, 3, 3.0,
                                                1.0 / 3);
  };
  EXPECT_EXIT(call(5, 6, 2, 3), ::testing::ExitedWithCode(1),
              prefix + "shape \\(size\\(dOut\\) = 5 but prod\\(\\[rows, cols\\]\\) = 6");
  EXPECT_EXIT(call(6, 7, 2, 3), ::testing::ExitedWithCode(1),
              prefix + "shape \\(size\\(normalized\\) = 7 but prod\\(\\[rows, cols\\]\\) = 6");
  EXPECT_EXIT(call(6, 6, 3, 3), ::testing::ExitedWithCode(1),
              prefix + "shape \\(size\\(invStd\\) = 3 but prod\\(\\[rows\\]\\) = 2");
  EXPECT_EXIT(call(6, 6, 2, 6), ::testing::ExitedWithCode(1),
              prefix + "shape \\(size\\(gamma\\) = 6 but prod\\(\\[cols\\]\\) = 3");
}

TEST_F(LayerNormDeathTest, SizeProductOverflowPanics) {
  EXPECT_EXIT(torchlean_cuda_buffer_layer_norm_fwd(zeros(1), zeros(1), zeros(1), 4294967295u,
                                                   4294967295u, 0.0, 1e-5),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: layer_norm_fwd: shape size overflow");
}

TEST_F(LayerNormDeathTest, MixedDtypesPanic) {
  EXPECT_EXIT(
      torchlean_cuda_buffer_layer_norm_fwd(zeros(6), zeros(3, 1), zeros(3), 2, 3, 0.0, 1e-5),
      ::testing::ExitedWithCode(1),
      "INTERNAL PANIC: tlrt: layer_norm_fwd: dtypes differ \\(float32 vs float64\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_layer_norm_bwd(zeros(6, 1), zeros(6, 1), zeros(2, 1), zeros(3),
                                                   2, 3, 3.0, 1.0 / 3),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: layer_norm_bwd: dtypes differ \\(float64 vs float32\\)");
}

TEST_F(LayerNormDeathTest, ReleasedAndNonBufferOperandsPanic) {
  lean_object* released = zeros(6);
  torchlean_cuda_buffer_release(released);
  EXPECT_EXIT(torchlean_cuda_buffer_layer_norm_fwd(released, zeros(3), zeros(3), 2, 3, 0.0, 1e-5),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: layer_norm_fwd: buffer has been released");
  EXPECT_EXIT(torchlean_cuda_buffer_layer_norm_bwd(zeros(6), released, zeros(2), zeros(3), 2, 3,
                                                   3.0, 1.0 / 3),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: layer_norm_bwd: buffer has been released");
  EXPECT_EXIT(torchlean_cuda_buffer_layer_norm_fwd(byte_array({1, 2}).get(), zeros(3), zeros(3), 2,
                                                   3, 0.0, 1e-5),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: layer_norm_fwd: argument is not a buffer object");
  lean_dec(released);
}

}  // namespace
