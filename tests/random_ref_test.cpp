// Reference backend of the seeded random stream (SPEC-runtime 7) and of fill: the SPEC 7.5 vectors,
// the exact uniform formula, Bernoulli endpoints, the normal stream against a binary64 Box-Muller
// formula, and fill copying the value's bits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/fill/fill.h"
#include "kernels/random/random.h"
#include "kernels/random/splitmix.h"

namespace tlrt::kernels {
namespace {

using random::draw;
using random::splitmix64_finalize;

constexpr uint64_t kKeyA = 0x25114ED53327345Aull;  // D(kKeyA, 0) = 0xFFFFFFFF
constexpr uint64_t kKeyB = 0x0123456789ABCDEFull;

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

// Inverting the finaliser lets a test pick the draw that a given index sees, so corner draws
// (0, 2^32 - 128, 2^32 - 1) are exercised directly instead of being searched for.
uint64_t undo_xorshift(uint64_t y, int shift) {
  uint64_t x = y;
  for (int i = 0; i < 64 / shift + 1; ++i) x = y ^ (x >> shift);
  return x;
}
uint64_t inverse_mod_2_64(uint64_t odd) {
  uint64_t inv = odd;  // correct to 3 bits; each Newton step doubles that
  for (int i = 0; i < 5; ++i) inv *= 2 - odd * inv;
  return inv;
}
uint64_t splitmix64_unfinalize(uint64_t y) {
  uint64_t z = undo_xorshift(y, 31);
  z = undo_xorshift(z * inverse_mod_2_64(0x94D049BB133111EBull), 27);
  z = undo_xorshift(z * inverse_mod_2_64(0xBF58476D1CE4E5B9ull), 30);
  return z - 0x9E3779B97F4A7C15ull;
}
// A key whose stream has draw r at position j.
uint64_t key_with_draw(uint32_t r, uint64_t j) {
  const uint64_t key = splitmix64_unfinalize((uint64_t{0x5EED} << 32) | r) - j;
  EXPECT_EQ(draw(key, j), r);
  return key;
}

template <class T>
std::vector<T> uniform(uint64_t n, uint64_t key) {
  std::vector<T> out(n);
  rand_uniform_ref<T>(out.data(), n, key);
  return out;
}
template <class T>
std::vector<T> bernoulli(uint64_t n, T p, uint64_t key) {
  std::vector<T> out(n);
  bernoulli_mask_ref<T>(out.data(), n, p, key);
  return out;
}
template <class T>
std::vector<T> normal(uint64_t n, T mean, T deviation, uint64_t key) {
  std::vector<T> out(n);
  rand_normal_ref<T>(out.data(), n, mean, deviation, key);
  return out;
}

// The binary64 Box-Muller formula the TorchLean tests compare against; divisor is 2^32 for the
// binary32 stream (where RN(4294967297) = 2^32) and 4294967297 for binary64.
double box_muller(uint32_t r1, uint32_t r2, double mean, double deviation, double divisor) {
  const double u1 = (static_cast<double>(r1) + 1.0) / divisor;
  const double u2 = static_cast<double>(r2) / 4294967296.0;
  return mean + deviation * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

TEST(SplitMixDraw, SpecVectors) {
  EXPECT_EQ(draw(kKeyA, 0), 0xFFFFFFFFu);
  EXPECT_EQ(draw(kKeyB, 0), 0xA48FAA9Du);
  EXPECT_EQ(draw(kKeyB, 1), 0xC374CA1Au);
  EXPECT_EQ(draw(kKeyB, 2), 0x3BECCAA2u);
  EXPECT_EQ(draw(kKeyB, 3), 0x912DCEF8u);
}

TEST(SplitMixDraw, IndexWrapsModulo2To64) {
  EXPECT_EQ(draw(~uint64_t{0}, 1), draw(0, 0));
  EXPECT_EQ(draw(kKeyB, ~uint64_t{0}), draw(kKeyB - 1, 0));
}

TEST(SplitMixDraw, InverseUsedByTheseTestsRoundTrips) {
  for (uint64_t x : {uint64_t{0}, kKeyA, kKeyB, ~uint64_t{0}, uint64_t{0x8000000000000001}}) {
    EXPECT_EQ(splitmix64_unfinalize(splitmix64_finalize(x)), x);
  }
}

TEST(RandUniformRef, Float32SpecVectorKeyA) {
  const std::vector<float> u = uniform<float>(8, kKeyA);
  const double expected[8] = {1.0,       0.96530467, 0.45733455, 0.6927225,
                              0.7249875, 0.29389992, 0.09515917, 0.25270227};
  for (int i = 0; i < 8; ++i) {
    EXPECT_NEAR(u[i], expected[i], 1e-7 * expected[i]) << "element " << i;
  }
  // Draw 0xFFFFFFFF rounds up to exactly 1.0 in binary32.
  EXPECT_EQ(bits_of(u[0]), bits_of(1.0f));
}

TEST(RandUniformRef, SpecVectorKeyB) {
  const std::vector<double> d = uniform<double>(4, kKeyB);
  EXPECT_EQ(d[0], 0.6428171761799604);
  EXPECT_EQ(d[1], 0.7635008157230914);
  EXPECT_EQ(d[2], 0.2340819020755589);
  EXPECT_EQ(d[3], 0.5671052318066359);
  // The binary64 values are the exact quotients.
  EXPECT_EQ(d[0], 0xA48FAA9Du / 4294967296.0);
  EXPECT_EQ(d[3], 0x912DCEF8u / 4294967296.0);
  const std::vector<float> f = uniform<float>(4, kKeyB);
  EXPECT_EQ(f[0], 0.6428172f);
  EXPECT_EQ(f[1], 0.7635008f);
  EXPECT_EQ(f[2], 0.23408191f);
  EXPECT_EQ(f[3], 0.56710523f);
}

TEST(RandUniformRef, Float32IsTheExactQuotientRoundedOnce) {
  constexpr uint64_t kN = 1000000;
  for (uint64_t key : {kKeyA, kKeyB, uint64_t{0}}) {
    const std::vector<float> f = uniform<float>(kN, key);
    const std::vector<double> d = uniform<double>(kN, key);
    for (uint64_t i = 0; i < kN; ++i) {
      const double exact = static_cast<double>(draw(key, i)) / 4294967296.0;
      ASSERT_EQ(bits_of(f[i]), bits_of(static_cast<float>(exact))) << "key " << key << " i " << i;
      ASSERT_EQ(bits_of(d[i]), bits_of(exact)) << "key " << key << " i " << i;
      ASSERT_GE(f[i], 0.0f);
      ASSERT_LE(f[i], 1.0f);
      ASSERT_LT(d[i], 1.0);
    }
  }
}

TEST(RandUniformRef, Float32RoundsLargeDrawsToOne) {
  struct Case {
    uint32_t draw;
    float f32;
    double f64;
  };
  const Case cases[] = {
      {0u, 0.0f, 0.0},
      {1u, 0x1p-32f, 0x1p-32},
      {4294967167u, 1.0f - 0x1p-24f, 4294967167.0 / 4294967296.0},
      {4294967168u, 1.0f, 4294967168.0 / 4294967296.0},  // tie, rounds to even: 2^32
      {4294967200u, 1.0f, 4294967200.0 / 4294967296.0},
      {0xFFFFFFFFu, 1.0f, 1.0 - 0x1p-32},
  };
  for (const Case& c : cases) {
    const uint64_t j = 5;
    const uint64_t key = key_with_draw(c.draw, j);
    EXPECT_EQ(bits_of(uniform<float>(j + 1, key)[j]), bits_of(c.f32)) << "draw " << c.draw;
    EXPECT_EQ(bits_of(uniform<double>(j + 1, key)[j]), bits_of(c.f64)) << "draw " << c.draw;
  }
}

template <class T>
void expect_prefix_property() {
  constexpr uint64_t kLong = 1000;
  for (uint64_t key : {kKeyA, kKeyB}) {
    const std::vector<T> u = uniform<T>(kLong, key);
    const std::vector<T> b = bernoulli<T>(kLong, T(0.3), key);
    const std::vector<T> z = normal<T>(kLong, T(0.5), T(2), key);
    for (uint64_t n : {uint64_t{1}, uint64_t{3}, uint64_t{37}, uint64_t{999}}) {
      const std::vector<T> us = uniform<T>(n, key);
      const std::vector<T> bs = bernoulli<T>(n, T(0.3), key);
      const std::vector<T> zs = normal<T>(n, T(0.5), T(2), key);
      for (uint64_t i = 0; i < n; ++i) {
        ASSERT_EQ(bits_of(us[i]), bits_of(u[i])) << "n " << n << " i " << i;
        ASSERT_EQ(bits_of(bs[i]), bits_of(b[i])) << "n " << n << " i " << i;
        ASSERT_EQ(bits_of(zs[i]), bits_of(z[i])) << "n " << n << " i " << i;
      }
    }
    // Element i of the stream is element 0 of the stream keyed key + i (normal: key + 2i).
    EXPECT_EQ(bits_of(uniform<T>(1, key + 123)[0]), bits_of(u[123]));
    EXPECT_EQ(bits_of(normal<T>(1, T(0.5), T(2), key + 2 * 123)[0]), bits_of(z[123]));
  }
}

TEST(RandomStreamRef, ElementsDoNotDependOnLengthFloat32) {
  expect_prefix_property<float>();
}
TEST(RandomStreamRef, ElementsDoNotDependOnLengthFloat64) {
  expect_prefix_property<double>();
}

TEST(RandomStreamRef, EmptyOutputIsNotTouched) {
  float sentinel = 42.0f;
  rand_uniform_ref<float>(&sentinel, 0, kKeyA);
  rand_normal_ref<float>(&sentinel, 0, 0.0f, 1.0f, kKeyA);
  bernoulli_mask_ref<float>(&sentinel, 0, 0.5f, kKeyA);
  bernoulli_mask_ref<float>(&sentinel, 0, 0.0f, kKeyA);
  bernoulli_mask_ref<float>(&sentinel, 0, 1.0f, kKeyA);
  EXPECT_EQ(sentinel, 42.0f);
}

TEST(BernoulliMaskRef, SpecVectorKeyA) {
  const std::vector<float> zeros(8, 0.0f);
  const std::vector<float> ones(8, 1.0f);
  EXPECT_EQ(bernoulli<float>(8, 0.0f, kKeyA), zeros);
  EXPECT_EQ(bernoulli<float>(8, 1.0f, kKeyA), ones);
  const std::vector<float> half = {0, 0, 1, 0, 0, 1, 1, 1};
  EXPECT_EQ(bernoulli<float>(8, 0.5f, kKeyA), half);
  const std::vector<double> half64 = {0, 0, 1, 0, 0, 1, 1, 1};
  EXPECT_EQ(bernoulli<double>(8, 0.5, kKeyA), half64);
}

template <class T>
void expect_endpoints() {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T inf = std::numeric_limits<T>::infinity();
  for (T p : {T(0), -T(0), T(-0.25), -inf, nan, -nan}) {
    for (T x : bernoulli<T>(100, p, kKeyB)) ASSERT_EQ(bits_of(x), bits_of(T(0))) << "p " << p;
  }
  for (T p : {T(1), T(2), inf}) {
    for (T x : bernoulli<T>(100, p, kKeyB)) ASSERT_EQ(bits_of(x), bits_of(T(1))) << "p " << p;
  }
}

TEST(BernoulliMaskRef, EndpointsFloat32) {
  expect_endpoints<float>();
}
TEST(BernoulliMaskRef, EndpointsFloat64) {
  expect_endpoints<double>();
}

TEST(BernoulliMaskRef, OneKeepsDrawsThatRoundToOne) {
  // Element 0 of kKeyA has binary32 uniform exactly 1.0: p = 1 still keeps it, while the largest
  // p below 1 drops it.
  EXPECT_EQ(bernoulli<float>(1, 1.0f, kKeyA)[0], 1.0f);
  EXPECT_EQ(bernoulli<float>(1, std::nextafter(1.0f, 0.0f), kKeyA)[0], 0.0f);
  // In binary64 the same draw is 1 - 2^-32 < 1 - 2^-53.
  EXPECT_EQ(bernoulli<double>(1, std::nextafter(1.0, 0.0), kKeyA)[0], 1.0);
}

template <class T>
void expect_mask_matches_uniform() {
  constexpr uint64_t kN = 20000;
  const std::vector<T> u = uniform<T>(kN, kKeyB);
  for (T p : {T(1e-30), T(0.001), T(0.3), T(0.5), T(0.999)}) {
    const std::vector<T> b = bernoulli<T>(kN, p, kKeyB);
    uint64_t kept = 0;
    for (uint64_t i = 0; i < kN; ++i) {
      ASSERT_EQ(bits_of(b[i]), bits_of(u[i] < p ? T(1) : T(0))) << "p " << p << " i " << i;
      kept += b[i] == T(1);
    }
    const double rate = static_cast<double>(kept) / kN;
    EXPECT_NEAR(rate, static_cast<double>(p), 5.0 * std::sqrt(0.25 / kN)) << "p " << p;
  }
}

TEST(BernoulliMaskRef, MaskIsUniformBelowPFloat32) {
  expect_mask_matches_uniform<float>();
}
TEST(BernoulliMaskRef, MaskIsUniformBelowPFloat64) {
  expect_mask_matches_uniform<double>();
}

template <class T>
void expect_close_to_box_muller(double mean, double deviation, double tolerance, double divisor) {
  constexpr uint64_t kN = 4096;
  for (uint64_t key : {kKeyA, kKeyB}) {
    const std::vector<T> z = normal<T>(kN, static_cast<T>(mean), static_cast<T>(deviation), key);
    double sum = 0;
    for (uint64_t i = 0; i < kN; ++i) {
      const double expected =
          box_muller(draw(key, 2 * i), draw(key, 2 * i + 1), mean, deviation, divisor);
      ASSERT_NEAR(static_cast<double>(z[i]), expected, tolerance) << "key " << key << " i " << i;
      sum += static_cast<double>(z[i]);
    }
    EXPECT_NEAR(sum / kN, mean, 5.0 * deviation / std::sqrt(static_cast<double>(kN)));
  }
}

TEST(RandNormalRef, Float32MatchesBinary64BoxMuller) {
  expect_close_to_box_muller<float>(0.0, 1.0, 5e-5, 4294967296.0);
  expect_close_to_box_muller<float>(1.5, 0.25, 5e-5, 4294967296.0);
}

TEST(RandNormalRef, Float64MatchesBinary64BoxMuller) {
  expect_close_to_box_muller<double>(0.0, 1.0, 1e-12, 4294967297.0);
  expect_close_to_box_muller<double>(1.5, 0.25, 1e-12, 4294967297.0);
}

TEST(RandNormalRef, SmallestDrawGivesFiniteLargestRadius) {
  // r1 = 0 gives u1 = 1 / 2^32 (binary64: 1 / 4294967297 up to one rounding), never 0.
  const uint64_t i = 7;
  const uint64_t key = key_with_draw(0u, 2 * i);
  const uint32_t r2 = draw(key, 2 * i + 1);
  const float f = normal<float>(i + 1, 0.0f, 1.0f, key)[i];
  const double d = normal<double>(i + 1, 0.0, 1.0, key)[i];
  ASSERT_TRUE(std::isfinite(f));
  ASSERT_TRUE(std::isfinite(d));
  EXPECT_NEAR(f, box_muller(0u, r2, 0.0, 1.0, 4294967296.0), 5e-5);
  EXPECT_NEAR(d, box_muller(0u, r2, 0.0, 1.0, 4294967297.0), 1e-12);
  // The radius sqrt(-2 log 2^-32) ~ 6.66 bounds every output.
  EXPECT_LE(std::fabs(d), std::sqrt(64.0 * std::log(2.0)) + 1e-9);
}

TEST(RandNormalRef, NoInfinitiesOrNaNs) {
  constexpr uint64_t kN = 200000;
  const std::vector<float> f = normal<float>(kN, 0.0f, 1.0f, kKeyB);
  const std::vector<double> d = normal<double>(kN, 0.0, 1.0, kKeyB);
  for (uint64_t i = 0; i < kN; ++i) {
    ASSERT_TRUE(std::isfinite(f[i])) << i;
    ASSERT_TRUE(std::isfinite(d[i])) << i;
  }
}

TEST(RandNormalRef, Float32LargestDrawsGiveExactlyTheMean) {
  // r1 >= 2^32 - 128 rounds to u1 = 1, so radius = 0 and out = mean exactly.
  EXPECT_EQ(draw(kKeyA, 0), 0xFFFFFFFFu);
  EXPECT_EQ(normal<float>(1, 0.75f, 3.0f, kKeyA)[0], 0.75f);
  EXPECT_EQ(normal<float>(1, -2.5f, 0.1f, kKeyA)[0], -2.5f);
  EXPECT_EQ(normal<float>(1, 0.0f, 1.0f, kKeyA)[0], 0.0f);
  const uint64_t key = key_with_draw(4294967168u, 0);
  EXPECT_EQ(normal<float>(1, 0.75f, 3.0f, key)[0], 0.75f);
  // One step below, u1 = 1 - 2^-24 and the radius is ~2.4e-4.
  const uint64_t below = key_with_draw(4294967167u, 0);
  const float z = normal<float>(1, 0.0f, 1.0f, below)[0];
  EXPECT_GT(std::fabs(z), 0.0f);
  EXPECT_LT(std::fabs(z), 3e-4f);
  // In binary64, u1 = RN(2^32 * RN(1 / 4294967297)) < 1, so the radius is small but not zero.
  const double d = normal<double>(1, 0.0, 1.0, kKeyA)[0];
  EXPECT_GT(std::fabs(d), 0.0);
  EXPECT_LT(std::fabs(d), 3e-5);
}

TEST(RandNormalRef, SpecVectorKeyBElementZero) {
  // Element 0 uses r1 = 0xA48FAA9D and r2 = 0xC374CA1A.
  const double f64 = box_muller(0xA48FAA9Du, 0xC374CA1Au, 0.0, 1.0, 4294967297.0);
  EXPECT_NEAR(normal<double>(1, 0.0, 1.0, kKeyB)[0], f64, 1e-15);
  EXPECT_NEAR(normal<float>(1, 0.0f, 1.0f, kKeyB)[0], f64, 1e-6);
}

// ---- fill -------------------------------------------------------------------------------------

template <class T>
void expect_fill_copies_bits() {
  const T values[] = {T(0),
                      -T(0),
                      T(1.5),
                      std::numeric_limits<T>::denorm_min(),
                      -std::numeric_limits<T>::infinity(),
                      std::numeric_limits<T>::quiet_NaN()};
  for (T v : values) {
    std::vector<T> out(13, T(7));
    fill_ref<T>(out.data(), 12, v);
    for (int i = 0; i < 12; ++i) ASSERT_EQ(bits_of(out[i]), bits_of(v));
    EXPECT_EQ(out[12], T(7));  // past n untouched
  }
}

TEST(FillRef, CopiesTheValueBitsFloat32) {
  expect_fill_copies_bits<float>();
}
TEST(FillRef, CopiesTheValueBitsFloat64) {
  expect_fill_copies_bits<double>();
}

}  // namespace
}  // namespace tlrt::kernels
