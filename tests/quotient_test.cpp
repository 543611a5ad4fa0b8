// kernels/common/quotient.h: the quotient through a divisor's correctly rounded reciprocal against
// IEEE division, bit for bit (host form; the device form is the same sequence of _rn intrinsics).
#include "kernels/common/quotient.h"
#include "tests/support/same_bits.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

namespace {

using tlrt::kernels::quotient;
using tlrt::kernels::quotient_unchecked;
using tlrt::kernels::reciprocal_of;

uint32_t bits(float v) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  return u;
}
float of_bits(uint32_t u) {
  float v;
  std::memcpy(&v, &u, sizeof v);
  return v;
}

// Mismatches of quotient(a, d) against a / d for every a whose bits lie in [lo, hi), over `ds`,
// on two threads.
uint64_t mismatches(uint32_t lo, uint32_t hi, const std::vector<float>& ds) {
  uint64_t bad[2] = {0, 0};
  auto work = [&](int part) {
    for (float d : ds) {
      const auto r = reciprocal_of(d);
      const uint32_t mid = lo + (hi - lo) / 2;
      const uint32_t a0 = part == 0 ? lo : mid, a1 = part == 0 ? mid : hi;
      for (uint32_t u = a0; u < a1; ++u) {
        const float a = of_bits(u);
        const float want = a / d;
        const float got = quotient(a, r);
        if (!test_bits::same_bits_or_nan(got, want)) ++bad[part];
        // The unchecked form where its caller may use it (the smooth max backward's exp values).
        if (r.fast && a >= 0x1p-64f && a <= 0x1p64f &&
            bits(quotient_unchecked(a, r)) != bits(want)) {
          ++bad[part];
        }
      }
    }
  };
  std::thread other(work, 1);
  work(0);
  other.join();
  return bad[0] + bad[1];
}

// Divisors of the smooth max backward (the window sums D in [1, 9]), softmax row sums (in [1, n])
// and others across the range, binade edges included.
std::vector<float> divisors() {
  std::vector<float> ds = {1.0f,
                           std::nextafter(1.0f, 2.0f),
                           1.5f,
                           2.0f,
                           std::nextafter(2.0f, 0.0f),
                           3.0f,
                           7.0f,
                           9.0f,
                           std::nextafter(9.0f, 0.0f),
                           5.8731f,
                           0x1p-16f,
                           0x1p16f,
                           -3.25f,
                           0.1f,
                           1000.37f,
                           32767.9f,
                           std::nextafter(0x1p16f, 0.0f)};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(1.0f, 9.0f);
  for (int i = 0; i < 6; ++i) ds.push_back(u(rng));
  return ds;
}

TEST(Quotient, EveryNumeratorInOneBinadeMatchesDivision) {
  // All a in [0.5, 1) and their negatives: 2^24 numerators for each of 23 divisors.
  const std::vector<float> ds = divisors();
  EXPECT_EQ(mismatches(bits(0.5f), bits(1.0f), ds), 0u);
  EXPECT_EQ(mismatches(bits(-0.5f), bits(-1.0f), ds), 0u);
}

TEST(Quotient, NumeratorsAcrossTheRangeMatchDivision) {
  // Every 61st bit pattern of the whole positive range: zeros, subnormals, the edges 2^-64 and
  // 2^64, infinities and NaNs included.
  const std::vector<float> ds = divisors();
  uint64_t bad = 0;
  for (float d : ds) {
    const auto r = reciprocal_of(d);
    for (uint64_t u = 0; u <= 0xffffffffull; u += 61) {
      const float a = of_bits(static_cast<uint32_t>(u));
      const float want = a / d, got = quotient(a, r);
      if (!test_bits::same_bits_or_nan(got, want)) ++bad;
    }
  }
  EXPECT_EQ(bad, 0u);
}

TEST(Quotient, UncheckedTakesPositiveZero) {
  const auto r = reciprocal_of(7.0f);
  EXPECT_EQ(bits(quotient_unchecked(0.0f, r)), bits(0.0f));
}

TEST(Quotient, SpecialOperandsTakeDivision) {
  const float inf = INFINITY, nan = NAN;
  for (float d : {0.0f, -0.0f, inf, -inf, nan, 0x1p-20f, 0x1p20f, 1e-40f}) {
    const auto r = reciprocal_of(d);
    EXPECT_FALSE(r.fast) << d;
    for (float a : {0.0f, -0.0f, 1.0f, -3.0f, inf, nan, 1e-40f}) {
      const float want = a / d, got = quotient(a, r);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << a << " / " << d;
      } else {
        EXPECT_EQ(bits(got), bits(want)) << a << " / " << d;
      }
    }
  }
  const auto r = reciprocal_of(3.0f);
  EXPECT_EQ(bits(quotient(-0.0f, r)), bits(-0.0f));
  EXPECT_EQ(bits(quotient(0.0f, r)), bits(0.0f));
}

TEST(Quotient, RandomPairsMatchDivision) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> ud(0x1p-16f, 0x1p16f);
  uint64_t bad = 0;
  for (int i = 0; i < 20000000; ++i) {
    const float d = ud(rng);
    const float a = of_bits(static_cast<uint32_t>(rng()));
    const float want = a / d, got = quotient(a, reciprocal_of(d));
    if (!test_bits::same_bits_or_nan(got, want)) ++bad;
  }
  EXPECT_EQ(bad, 0u);
}

}  // namespace
