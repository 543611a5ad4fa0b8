// torchlean_binary.cuh on the host against the MPFR oracle (binary_oracle.h), bit for bit:
// exhaustive pairs of the 8-bit format E 4 F 3 in all four encodings, and random pairs with
// special values over-represented for binary16, bfloat16, binary32, binary64 and odd formats.
// binary32 and binary64 are also checked against the host's own float and double arithmetic.
// TLRT_BINARY_PAIRS sets the random pair count of every format (defaults in kFormats below).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/binary/binary_header.h"
#include "kernels/binary/torchlean_binary.cuh"

#if TLRT_HAVE_MPFR
#include "binary_oracle.h"
#endif

namespace {

using Binary16 = TLBinary<5, 10, 15, 0>;
using Bfloat16 = TLBinary<8, 7, 127, 0>;
using Binary32 = TLBinary<8, 23, 127, 0>;
using Binary64 = TLBinary<11, 52, 1023, 0>;
using Wide = TLBinary<30, 1000, (1LL << 29) - 1, 0>;
using Mini0 = TLBinary<4, 3, 7, 0>;
using Mini1 = TLBinary<4, 3, 7, 1>;
using Mini2 = TLBinary<4, 3, 7, 2>;
using Mini3 = TLBinary<4, 3, 7, 3>;

// ---- storage and layout (10.8) -----------------------------------------------------------------

template <class T, int Bytes>
constexpr bool layout_ok() {
  return sizeof(T) == Bytes && alignof(T) == 1 && std::is_trivially_copyable_v<T> &&
         std::is_aggregate_v<T> && std::is_standard_layout_v<T>;
}
static_assert(layout_ok<Mini0, 1>());
static_assert(layout_ok<Binary16, 2>());
static_assert(layout_ok<Bfloat16, 2>());
static_assert(layout_ok<Binary32, 4>());
static_assert(layout_ok<Binary64, 8>());
static_assert(layout_ok<TLBinary<5, 10, 13, 0>, 2>());
static_assert(layout_ok<TLBinary<11, 60, 1023, 0>, 9>());
static_assert(layout_ok<TLBinary<15, 112, 16383, 0>, 16>());
static_assert(layout_ok<Wide, 129>());
static_assert(layout_ok<TLBinary<30, 4096, (1LL << 29) - 1, 3>, 516>());
static_assert(sizeof(Binary16[3]) == 6, "arrays are indexed at width-byte strides");

template <class T>
std::string hex(const T& x) {
  std::ostringstream s;
  s << "0x" << std::hex;
  for (int i = static_cast<int>(sizeof x.b) - 1; i >= 0; --i)
    s << static_cast<int>(x.b[i] >> 4) << static_cast<int>(x.b[i] & 15);
  return s.str();
}

TEST(BinaryHeader, ZeroInitialisedAndBraceInitialisable) {
  Binary32 z;
  for (unsigned char byte : z.b) EXPECT_EQ(byte, 0);
  const Binary32 one{{0x00, 0x00, 0x80, 0x3f}};
  EXPECT_EQ(hex(one), "0x3f800000");
  Wide w;
  for (unsigned char byte : w.b) EXPECT_EQ(byte, 0);
  const Mini0 m{{0x38}};  // 1.0 in E 4 F 3 bias 7
  EXPECT_EQ(hex(m * m), "0x38");
}

// The library's embedded copy (what NVRTC receives) is the header on disk, byte for byte.
TEST(BinaryHeader, EmbeddedTextIsTheHeader) {
  std::ifstream file(TLRT_SOURCE_DIR "/kernels/binary/torchlean_binary.cuh", std::ios::binary);
  ASSERT_TRUE(file.good());
  const std::string disk((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_GT(disk.size(), 1000u);
  EXPECT_TRUE(tlrt::kernels::torchlean_binary_header() == disk);
}

// ---- hand fixtures, one per rule of 10.8, in E 4 F 3 bias 7 -------------------------------------
// Word: s eeee fff. 1.0 = 0x38, 2.0 = 0x40, max finite (IEEE) 0x77 = 240, inf 0x78, qNaN 0x7c.

template <class T>
T w8(int v) {
  return T{{static_cast<unsigned char>(v)}};
}

TEST(BinaryRules, NanPropagationAndQuieting) {
  const auto snan = w8<Mini0>(0x79), snan2 = w8<Mini0>(0x7a), qnan = w8<Mini0>(0x7d);
  const auto one = w8<Mini0>(0x38);
  EXPECT_EQ(hex(snan + snan2), "0x7d");            // signalling first operand, quieted
  EXPECT_EQ(hex(qnan + snan2), "0x7e");            // else a signalling second operand, quieted
  EXPECT_EQ(hex(qnan + w8<Mini0>(0x7f)), "0x7d");  // else the first NaN
  EXPECT_EQ(hex(one * w8<Mini0>(0xfe)), "0xfe");   // else the second, sign kept
  EXPECT_EQ(hex(one - qnan), "0xfd");              // subtraction negates the second operand first
  EXPECT_EQ(hex(w8<Mini1>(0x38) - w8<Mini1>(0x7f)), "0xff");
  EXPECT_EQ(hex(w8<Mini2>(0x38) - w8<Mini2>(0x80)), "0x80");  // encoding 2: NaN unchanged
}

TEST(BinaryRules, InvalidAndOverflowResultsPerEncoding) {
  // inf - inf (IEEE) and 0 / 0 in every encoding.
  EXPECT_EQ(hex(w8<Mini0>(0x78) - w8<Mini0>(0x78)), "0x7c");
  EXPECT_EQ(hex(w8<Mini0>(0x00) / w8<Mini0>(0x80)), "0x7c");
  EXPECT_EQ(hex(w8<Mini1>(0x00) / w8<Mini1>(0x00)), "0x7f");
  EXPECT_EQ(hex(w8<Mini2>(0x00) / w8<Mini2>(0x00)), "0x80");
  EXPECT_EQ(hex(w8<Mini3>(0x80) / w8<Mini3>(0x00)), "0x00");
  // Overflow: max * 2.
  EXPECT_EQ(hex(w8<Mini0>(0xf7) * w8<Mini0>(0x40)), "0xf8");
  EXPECT_EQ(hex(w8<Mini1>(0xfe) * w8<Mini1>(0x40)), "0xff");
  EXPECT_EQ(hex(w8<Mini2>(0x7f) * w8<Mini2>(0x40)), "0x80");
  EXPECT_EQ(hex(w8<Mini3>(0xff) * w8<Mini3>(0x40)), "0xff");
  // Encoding 1: an all-ones exponent is finite unless the fraction is all ones too.
  EXPECT_EQ(hex(w8<Mini1>(0x78) + w8<Mini1>(0x00)), "0x78");
  EXPECT_EQ(hex(w8<Mini1>(0x7e) + w8<Mini1>(0x5c)), "0x7f");  // 448 + 24 rounds to 480: NaN
  // IEEE: reaching the all-ones exponent overflows; 240 + 8 is a tie that rounds to 256.
  EXPECT_EQ(hex(w8<Mini0>(0x77) + w8<Mini0>(0x50)), "0x78");
  EXPECT_EQ(hex(w8<Mini0>(0x77) + w8<Mini0>(0x48)), "0x77");  // 240 + 4 rounds down
}

TEST(BinaryRules, AdditionZerosAndInfinities) {
  EXPECT_EQ(hex(w8<Mini0>(0x38) + w8<Mini0>(0xb8)), "0x00");  // exact cancellation: +0
  EXPECT_EQ(hex(w8<Mini0>(0x80) + w8<Mini0>(0x80)), "0x80");  // (-0) + (-0) = -0
  EXPECT_EQ(hex(w8<Mini0>(0x80) + w8<Mini0>(0x00)), "0x00");  // mixed-sign zeros: +0
  EXPECT_EQ(hex(w8<Mini3>(0xb8) + w8<Mini3>(0x38)), "0x00");
  EXPECT_EQ(hex(w8<Mini0>(0xf8) + w8<Mini0>(0x77)), "0xf8");  // an infinite operand wins
  EXPECT_EQ(hex(w8<Mini0>(0x01) + w8<Mini0>(0x01)), "0x02");  // gradual underflow
  EXPECT_EQ(hex(w8<Mini0>(0x38) + w8<Mini0>(0x09)), "0x38");  // far below: rounds away
}

TEST(BinaryRules, MultiplicationAndDivision) {
  EXPECT_EQ(hex(w8<Mini0>(0x78) * w8<Mini0>(0x80)), "0x7c");  // inf * 0: invalid
  EXPECT_EQ(hex(w8<Mini0>(0x78) * w8<Mini0>(0x81)), "0xf8");  // inf * nonzero: XOR sign
  EXPECT_EQ(hex(w8<Mini0>(0x80) * w8<Mini0>(0x38)), "0x80");
  EXPECT_EQ(hex(w8<Mini0>(0x01) * w8<Mini0>(0x30)), "0x00");  // 2^-9 * 0.5: tie to zero
  EXPECT_EQ(hex(w8<Mini0>(0x78) / w8<Mini0>(0xf8)), "0x7c");  // inf / inf
  EXPECT_EQ(hex(w8<Mini0>(0xf8) / w8<Mini0>(0x38)), "0xf8");  // inf / x
  EXPECT_EQ(hex(w8<Mini0>(0x38) / w8<Mini0>(0xf8)), "0x80");  // x / inf
  EXPECT_EQ(hex(w8<Mini0>(0xb8) / w8<Mini0>(0x00)), "0xf8");  // nonzero / 0: overflow value
  EXPECT_EQ(hex(w8<Mini1>(0xb8) / w8<Mini1>(0x00)), "0xff");
  EXPECT_EQ(hex(w8<Mini2>(0x38) / w8<Mini2>(0x00)), "0x80");
  EXPECT_EQ(hex(w8<Mini3>(0xb8) / w8<Mini3>(0x00)), "0xff");
  EXPECT_EQ(hex(w8<Mini0>(0x80) / w8<Mini0>(0x38)), "0x80");  // 0 / x
  EXPECT_EQ(hex(w8<Mini0>(0x38) / w8<Mini0>(0x3c)), "0x33");  // 1 / 1.5 rounds to 0.6875
}

TEST(BinaryRules, NegationAndComparisons) {
  EXPECT_EQ(hex(-w8<Mini0>(0x00)), "0x80");
  EXPECT_EQ(hex(-w8<Mini0>(0x7d)), "0xfd");
  EXPECT_EQ(hex(-w8<Mini2>(0x00)), "0x00");  // encoding 2: zero and NaN unchanged
  EXPECT_EQ(hex(-w8<Mini2>(0x80)), "0x80");
  EXPECT_EQ(hex(-w8<Mini2>(0x38)), "0xb8");
  EXPECT_TRUE(w8<Mini0>(0x00) == w8<Mini0>(0x80));
  EXPECT_FALSE(w8<Mini0>(0x7c) == w8<Mini0>(0x7c));
  EXPECT_FALSE(w8<Mini0>(0x00) < w8<Mini0>(0x80));
  EXPECT_TRUE(w8<Mini0>(0x00) <= w8<Mini0>(0x80));
  EXPECT_TRUE(w8<Mini0>(0xb8) < w8<Mini0>(0x01));
  EXPECT_TRUE(w8<Mini0>(0xc0) < w8<Mini0>(0xb8));
  EXPECT_TRUE(w8<Mini0>(0x77) < w8<Mini0>(0x78));
  EXPECT_FALSE(w8<Mini0>(0x7c) <= w8<Mini0>(0x7c));
  EXPECT_FALSE(w8<Mini1>(0x7f) < w8<Mini1>(0x38));
  EXPECT_TRUE(w8<Mini1>(0x38) < w8<Mini1>(0x78));  // all-ones exponent is finite there
  EXPECT_FALSE(w8<Mini2>(0x80) < w8<Mini2>(0x38));
}

// Rounding boundaries in binary16 (word-level software on the host, hardware or word-level on a
// device): 1.0 = 0x3c00, max finite 65504 = 0x7bff, smallest normal 0x0400, smallest subnormal 1.
template <class T>
T w16(int v) {
  return T{{static_cast<unsigned char>(v), static_cast<unsigned char>(v >> 8)}};
}

TEST(BinaryRules, Binary16Boundaries) {
  using H = Binary16;
  EXPECT_EQ(hex(w16<H>(0x7bff) + w16<H>(0x4c00)), "0x7c00");  // 65504 + 16: tie to even, inf
  EXPECT_EQ(hex(w16<H>(0x7bff) + w16<H>(0x4bff)), "0x7bff");  // just below the tie
  EXPECT_EQ(hex(w16<H>(0xfbff) - w16<H>(0x4c00)), "0xfc00");  // -65504 - 16: -inf
  EXPECT_EQ(hex(w16<H>(0x7bff) * w16<H>(0x3c01)), "0x7c00");  // overflow after rounding
  EXPECT_EQ(hex(w16<H>(0x3fff) + w16<H>(0x1000)), "0x4000");  // carry into the next binade
  EXPECT_EQ(hex(w16<H>(0x3fff) * w16<H>(0x3c01)), "0x4000");
  EXPECT_EQ(hex(w16<H>(0x03ff) + w16<H>(0x0001)), "0x0400");  // subnormal to normal, exact
  EXPECT_EQ(hex(w16<H>(0x0400) - w16<H>(0x0001)), "0x03ff");  // normal to subnormal, exact
  EXPECT_EQ(hex(w16<H>(0x0400) * w16<H>(0x3800)), "0x0200");  // halved into the subnormals
  EXPECT_EQ(hex(w16<H>(0x0401) * w16<H>(0x3800)), "0x0200");  // ... a tie, to even
  EXPECT_EQ(hex(w16<H>(0x0403) * w16<H>(0x3800)), "0x0202");  // ... a tie, to even (up)
  EXPECT_EQ(hex(w16<H>(0x03ff) * w16<H>(0x4000)), "0x07fe");  // subnormal times 2: normal
  EXPECT_EQ(hex(w16<H>(0x0001) * w16<H>(0x3800)), "0x0000");  // half the smallest: tie to 0
  EXPECT_EQ(hex(w16<H>(0x8001) * w16<H>(0x3800)), "0x8000");  // ... with its sign
  EXPECT_EQ(hex(w16<H>(0x0001) * w16<H>(0x3a00)), "0x0001");  // 0.75 of it rounds up
  EXPECT_EQ(hex(w16<H>(0x0001) / w16<H>(0x4000)), "0x0000");  // division ties too
  EXPECT_EQ(hex(w16<H>(0x0003) / w16<H>(0x4000)), "0x0002");
  EXPECT_EQ(hex(w16<H>(0x3c00) - w16<H>(0x3c00)), "0x0000");  // exact cancellation: +0
  EXPECT_EQ(hex(w16<H>(0xbc00) + w16<H>(0x3c00)), "0x0000");
  EXPECT_EQ(hex(w16<H>(0x8000) - w16<H>(0x0000)), "0x8000");  // (-0) - (+0) = -0
  EXPECT_EQ(hex(w16<H>(0x0000) - w16<H>(0x0000)), "0x0000");
  EXPECT_EQ(hex(w16<H>(0x8000) + w16<H>(0x3c00)), "0x3c00");
  EXPECT_EQ(hex(w16<H>(0x8000) * w16<H>(0x3c00)), "0x8000");
  EXPECT_EQ(hex(w16<H>(0x8000) / w16<H>(0xbc00)), "0x0000");
  EXPECT_EQ(hex(w16<H>(0x7bff) / w16<H>(0x0001)), "0x7c00");  // quotient overflow
  EXPECT_EQ(hex(w16<H>(0x3c00) - w16<H>(0x0001)), "0x3c00");  // far below: rounds back
  EXPECT_EQ(hex(w16<H>(0x3c00) - w16<H>(0x1000)), "0x3bff");  // 1 - 2^-11: exact
  EXPECT_EQ(hex(w16<H>(0x3c00) - w16<H>(0x0c00)), "0x3c00");  // 1 - 2^-12: tie, to even
  EXPECT_EQ(hex(w16<H>(0x3c00) - w16<H>(0x0c01)), "0x3bff");  // just past the tie
}

// The same boundaries in encodings 1 to 3 of E 8 F 23 bias 127 (32-bit words).
template <class T>
T w32(unsigned v) {
  return T{{static_cast<unsigned char>(v), static_cast<unsigned char>(v >> 8),
            static_cast<unsigned char>(v >> 16), static_cast<unsigned char>(v >> 24)}};
}

TEST(BinaryRules, Single32BitEncodings) {
  using S1 = TLBinary<8, 23, 127, 1>;
  using S2 = TLBinary<8, 23, 127, 2>;
  using S3 = TLBinary<8, 23, 127, 3>;
  // Encoding 1: the all-ones exponent is finite; rounding onto the all-ones word overflows.
  EXPECT_EQ(hex(w32<S1>(0x7f800000) * w32<S1>(0x3f800000)), "0x7f800000");
  EXPECT_EQ(hex(w32<S1>(0x7ffffffd) + w32<S1>(0x73800000)), "0x7ffffffe");  // tie to even
  EXPECT_EQ(hex(w32<S1>(0x7ffffffe) + w32<S1>(0x73800000)), "0x7ffffffe");  // tie, stays
  EXPECT_EQ(hex(w32<S1>(0x7ffffffe) + w32<S1>(0x73800001)), "0x7fffffff");  // up: NaN
  EXPECT_EQ(hex(w32<S1>(0xfffffffe) * w32<S1>(0x40000000)), "0xffffffff");  // NaN, sign kept
  EXPECT_EQ(hex(w32<S1>(0x7ffffffe) / w32<S1>(0x3f000000)), "0x7fffffff");
  // Encoding 2: overflow and nonzero / 0 give the NaN; no -0 results.
  EXPECT_EQ(hex(w32<S2>(0xffffffff) * w32<S2>(0x40000000)), "0x80000000");
  EXPECT_EQ(hex(w32<S2>(0x80000001) * w32<S2>(0x3f000000)), "0x00000000");
  EXPECT_EQ(hex(w32<S2>(0x80000001) * w32<S2>(0x00000001)), "0x00000000");
  EXPECT_EQ(hex(w32<S2>(0xbf800000) + w32<S2>(0x3f800000)), "0x00000000");
  EXPECT_EQ(hex(w32<S2>(0x3f800000) - w32<S2>(0x00000000)), "0x3f800000");
  EXPECT_EQ(hex(w32<S2>(0x00000000) - w32<S2>(0x3f800000)), "0xbf800000");
  EXPECT_EQ(hex(w32<S2>(0x00000000) / w32<S2>(0xbf800000)), "0x00000000");
  EXPECT_EQ(hex(w32<S2>(0x3f800000) / w32<S2>(0x00000000)), "0x80000000");
  // Encoding 3: saturation at the largest magnitude, with the sign.
  EXPECT_EQ(hex(w32<S3>(0x7fffffff) + w32<S3>(0x7fffffff)), "0x7fffffff");
  EXPECT_EQ(hex(w32<S3>(0xffffffff) * w32<S3>(0x7fffffff)), "0xffffffff");
  EXPECT_EQ(hex(w32<S3>(0x7fffffff) / w32<S3>(0x00000001)), "0x7fffffff");
  EXPECT_EQ(hex(w32<S3>(0x80000001) * w32<S3>(0x3f000000)), "0x80000000");
}

#if TLRT_HAVE_MPFR

using tlrt::binary_oracle::Format;
using tlrt::binary_oracle::Op;
using tlrt::binary_oracle::Oracle;
using tlrt::binary_oracle::Word;
using tlrt::binary_oracle::WordSource;

template <class T>
T of_word(const Word& w) {
  T t;
  std::memcpy(t.b, w.data(), sizeof t.b);
  return t;
}
template <class T>
Word word_of(const T& t) {
  return Word(t.b, t.b + sizeof t.b);
}
std::string hex_word(const Word& w) {
  std::ostringstream s;
  s << "0x" << std::hex;
  for (int i = static_cast<int>(w.size()) - 1; i >= 0; --i)
    s << static_cast<int>(w[i] >> 4) << static_cast<int>(w[i] & 15);
  std::string text = s.str();
  return text.size() > 70 ? text.substr(0, 70) + "..." : text;
}

struct Tally {
  std::uint64_t checked = 0, failed = 0;
  void fail(const std::string& what) {
    if (++failed <= 12) ADD_FAILURE() << what;
  }
};

// One pair: the four operations, then negation of a and the three comparisons.
template <class T>
void check_pair(Oracle& oracle, const Word& a, const Word& b, Tally& tally) {
  const T x = of_word<T>(a), y = of_word<T>(b);
  for (Op op : {Op::add, Op::sub, Op::mul, Op::div}) {
    T got;
    switch (op) {
      case Op::add:
        got = x + y;
        break;
      case Op::sub:
        got = x - y;
        break;
      case Op::mul:
        got = x * y;
        break;
      case Op::div:
        got = x / y;
        break;
    }
    const Word want = oracle.compute(op, a, b);
    ++tally.checked;
    if (word_of(got) != want)
      tally.fail(hex_word(a) + " " + tlrt::binary_oracle::op_name(op) + " " + hex_word(b) +
                 ": header " + hex_word(word_of(got)) + ", MPFR oracle " + hex_word(want));
  }
  if (word_of(-x) != oracle.negate(a))
    tally.fail("-" + hex_word(a) + ": header " + hex_word(word_of(-x)));
  const bool eq = oracle.equal(a, b), lt = oracle.less(a, b);
  if ((x == y) != eq || (x < y) != lt || (x <= y) != (lt || eq))
    tally.fail("comparisons of " + hex_word(a) + " and " + hex_word(b));
}

template <int Enc>
void exhaustive_mini() {
  const Format format{4, 3, 7, Enc};
  Oracle oracle(format);
  Tally tally;
  for (int i = 0; i < 256; ++i)
    for (int j = 0; j < 256; ++j)
      check_pair<TLBinary<4, 3, 7, Enc>>(oracle, Word{static_cast<std::uint8_t>(i)},
                                         Word{static_cast<std::uint8_t>(j)}, tally);
  EXPECT_EQ(tally.checked, 4u * 65536u);
  EXPECT_EQ(tally.failed, 0u) << format.name();
}

// All 65536 pairs of an 8-bit format.
template <int E, int F, long long Bias, int Enc>
void exhaustive_8bit() {
  static_assert(1 + E + F == 8);
  const Format format{E, F, Bias, Enc};
  Oracle oracle(format);
  Tally tally;
  for (int i = 0; i < 256; ++i)
    for (int j = 0; j < 256; ++j)
      check_pair<TLBinary<E, F, Bias, Enc>>(oracle, Word{static_cast<std::uint8_t>(i)},
                                            Word{static_cast<std::uint8_t>(j)}, tally);
  EXPECT_EQ(tally.checked, 4u * 65536u);
  EXPECT_EQ(tally.failed, 0u) << format.name();
}

TEST(BinaryOracle, Exhaustive8BitEncoding0) {
  exhaustive_mini<0>();
}
TEST(BinaryOracle, Exhaustive8BitEncoding1) {
  exhaustive_mini<1>();
}
TEST(BinaryOracle, Exhaustive8BitEncoding2) {
  exhaustive_mini<2>();
}
TEST(BinaryOracle, Exhaustive8BitEncoding3) {
  exhaustive_mini<3>();
}

// Odd 8-bit formats: one exponent bit (every normal word of encoding 0 is special), one fraction
// bit, a bias above the exponent range (mostly subnormal values), a negative bias (overflow).
TEST(BinaryOracle, Exhaustive8BitOddFormats) {
  exhaustive_8bit<1, 6, 0, 0>();
  exhaustive_8bit<1, 6, 3, 1>();
  exhaustive_8bit<2, 5, 1, 2>();
  exhaustive_8bit<3, 4, 12, 0>();
  exhaustive_8bit<5, 2, -5, 3>();
  exhaustive_8bit<6, 1, 31, 0>();
  exhaustive_8bit<6, 1, 40, 1>();
}

template <int E, int F, long long Bias, int Enc>
void random_pairs(std::uint64_t fallback) {
  using T = TLBinary<E, F, Bias, Enc>;
  const Format format{E, F, Bias, Enc};
  const std::uint64_t pairs = tlrt::binary_oracle::pair_count(fallback);
  Oracle oracle(format);
  WordSource source(format, 0x5eed0000ULL + E * 131ULL + F * 7ULL + Enc);
  Tally tally;
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t i = 0; i < pairs && tally.failed < 100; ++i) {
    const Word a = source.next();
    const Word b = source.next_related(a);
    check_pair<T>(oracle, a, b, tally);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("[ binary  ] %s: %llu pairs, %llu checks, %.1f s\n", format.name().c_str(),
              static_cast<unsigned long long>(pairs),
              static_cast<unsigned long long>(tally.checked), seconds);
  EXPECT_EQ(tally.failed, 0u) << format.name();
}

TEST(BinaryOracle, RandomBinary16) {
  random_pairs<5, 10, 15, 0>(1000000);
}
TEST(BinaryOracle, RandomBinary16Encoding2) {
  random_pairs<5, 10, 15, 2>(200000);
}
TEST(BinaryOracle, RandomBinary16Encoding3) {
  random_pairs<5, 10, 15, 3>(200000);
}
TEST(BinaryOracle, RandomBfloat16) {
  random_pairs<8, 7, 127, 0>(1000000);
}
TEST(BinaryOracle, RandomBinary32) {
  random_pairs<8, 23, 127, 0>(1000000);
}
TEST(BinaryOracle, RandomBinary64) {
  random_pairs<11, 52, 1023, 0>(1000000);
}
TEST(BinaryOracle, RandomE5F10Bias13) {
  random_pairs<5, 10, 13, 0>(1000000);
}
TEST(BinaryOracle, RandomE8F23Encoding1) {
  random_pairs<8, 23, 127, 1>(1000000);
}
TEST(BinaryOracle, RandomE11F60) {
  random_pairs<11, 60, 1023, 0>(1000000);
}
TEST(BinaryOracle, RandomE15F112) {
  random_pairs<15, 112, 16383, 0>(1000000);
}
TEST(BinaryOracle, RandomE30F1000) {
  random_pairs<30, 1000, (1LL << 29) - 1, 0>(20000);
}

// Words from boundary fields, both signs: exponents 0, 1, 2, around the bias, F + 1 and at the
// top of the range; fractions 0, 1, 2, 3, around one half and at the top. Every pair of them
// meets the overflow and underflow boundaries, carries into a new binade, exact cancellation
// and the signed zeros.
std::vector<Word> boundary_words(const Format& fm) {
  const long long ones = (1LL << fm.e) - 1;
  std::vector<long long> exps = {0,           1,          2,        fm.bias - 1, fm.bias,
                                 fm.bias + 1, fm.f + 1LL, ones - 2, ones - 1,    ones};
  const int fbits = fm.f < 64 ? fm.f : 64;
  const std::uint64_t all = fbits == 64 ? ~0ULL : (1ULL << fbits) - 1, half = 1ULL << (fbits - 1);
  const std::uint64_t fracs[] = {0, 1, 2, 3, half - 1, half, half + 1, all - 1, all};
  std::vector<Word> words;
  for (long long e : exps) {
    if (e < 0 || e > ones) continue;
    for (std::uint64_t f : fracs) {
      if (f > all) continue;
      for (int neg = 0; neg < 2; ++neg) {
        Word w(fm.bytes(), 0);
        for (int i = 0; i < fbits; ++i)
          if ((f >> i) & 1) w[i / 8] = static_cast<std::uint8_t>(w[i / 8] | (1u << (i % 8)));
        for (int i = 0; i < fm.e; ++i)
          if ((e >> i) & 1) {
            const int k = fm.f + i;
            w[k / 8] = static_cast<std::uint8_t>(w[k / 8] | (1u << (k % 8)));
          }
        if (neg) {
          const int k = fm.e + fm.f;
          w[k / 8] = static_cast<std::uint8_t>(w[k / 8] | (1u << (k % 8)));
        }
        if (std::find(words.begin(), words.end(), w) == words.end()) words.push_back(w);
      }
    }
  }
  return words;
}

template <int E, int F, long long Bias, int Enc>
void boundary_pairs() {
  const Format format{E, F, Bias, Enc};
  Oracle oracle(format);
  Tally tally;
  const std::vector<Word> words = boundary_words(format);
  for (const Word& a : words)
    for (const Word& b : words) check_pair<TLBinary<E, F, Bias, Enc>>(oracle, a, b, tally);
  EXPECT_EQ(tally.failed, 0u) << format.name() << ", " << words.size() << " boundary words";
}

TEST(BinaryOracle, BoundaryWords) {
  boundary_pairs<5, 10, 15, 0>();
  boundary_pairs<5, 10, 15, 1>();
  boundary_pairs<5, 10, 15, 2>();
  boundary_pairs<5, 10, 15, 3>();
  boundary_pairs<8, 7, 127, 0>();
  boundary_pairs<5, 10, 13, 0>();
  boundary_pairs<8, 23, 127, 0>();
  boundary_pairs<8, 23, 127, 1>();
  boundary_pairs<8, 23, 127, 2>();
  boundary_pairs<8, 23, 127, 3>();
  boundary_pairs<11, 52, 1023, 0>();
  boundary_pairs<11, 60, 1023, 0>();
}

// Formats at the limits of the word-level arithmetic (torchlean_binary.cuh, Format::kFast):
// boundary pairs, then random pairs.
template <int E, int F, long long Bias, int Enc>
void edge_format(std::uint64_t fallback = 100000) {
  boundary_pairs<E, F, Bias, Enc>();
  random_pairs<E, F, Bias, Enc>(fallback);
}

// Every encoding of a 16-bit and a 32-bit format.
TEST(BinaryOracle, EdgeBinary16Encoding1) {
  edge_format<5, 10, 15, 1>();
}
TEST(BinaryOracle, EdgeE8F23Encoding2) {
  edge_format<8, 23, 127, 2>();
}
TEST(BinaryOracle, EdgeE8F23Encoding3) {
  edge_format<8, 23, 127, 3>();
}
// 32-bit words up to F = 26; F = 27 and 33-bit words take 64-bit words.
TEST(BinaryOracle, EdgeE5F26) {
  edge_format<5, 26, 15, 0>();
}
TEST(BinaryOracle, EdgeE4F27) {
  edge_format<4, 27, 7, 1>();
}
TEST(BinaryOracle, EdgeE8F24) {
  edge_format<8, 24, 127, 0>();
}
// Division in 32-bit integers up to F = 14, in 64-bit integers up to F = 30, generic beyond.
TEST(BinaryOracle, EdgeE6F14) {
  edge_format<6, 14, 31, 0>();
}
TEST(BinaryOracle, EdgeE6F15) {
  edge_format<6, 15, 31, 2>();
}
TEST(BinaryOracle, EdgeE6F30) {
  edge_format<6, 30, 31, 0>();
}
TEST(BinaryOracle, EdgeE6F31) {
  edge_format<6, 31, 31, 3>();
}
// 64-bit words up to F = 58; F = 59 is generic.
TEST(BinaryOracle, EdgeE5F58) {
  edge_format<5, 58, 15, 0>();
}
TEST(BinaryOracle, EdgeE4F59) {
  edge_format<4, 59, 7, 1>();
}
// Exponent width and bias limits: E <= 28 and |Bias| <= 2^29 are word-level.
TEST(BinaryOracle, EdgeE28F3) {
  edge_format<28, 3, (1LL << 27) - 1, 0>();
}
TEST(BinaryOracle, EdgeE29F2) {
  edge_format<29, 2, (1LL << 28) - 1, 0>();
}
TEST(BinaryOracle, EdgeBiasLimits) {
  edge_format<5, 10, (1LL << 29), 0>(20000);
  edge_format<5, 10, (1LL << 29) + 1, 0>(20000);
  edge_format<5, 10, -(1LL << 29), 3>(20000);
  edge_format<5, 10, -(1LL << 29) - 1, 1>(20000);
}
// Small exponent ranges with a large or a negative bias: subnormals and overflow are common.
TEST(BinaryOracle, EdgeE3F12Bias20) {
  edge_format<3, 12, 20, 0>();
}
TEST(BinaryOracle, EdgeE4F11BiasMinus3) {
  edge_format<4, 11, -3, 2>();
}
TEST(BinaryOracle, EdgeE2F20Bias1) {
  edge_format<2, 20, 1, 1>();
}

#else

TEST(BinaryOracle, NeedsMpfr) {
  GTEST_SKIP() << "MPFR (libmpfr-dev) not found: no oracle tests";
}

#endif

// ---- binary32 and binary64 against the host's own arithmetic ------------------------------------

template <class T, class Native, class Bits>
void native_pairs(std::uint64_t count, std::uint64_t seed) {
  std::uint64_t state = seed, failed = 0;
  auto draw = [&] {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  };
  for (std::uint64_t i = 0; i < count && failed < 12; ++i) {
    const Bits ba = static_cast<Bits>(draw()),
               bb = static_cast<Bits>(draw() % 4 == 0 ? ba ^ 1 : draw());
    Native a, b;
    std::memcpy(&a, &ba, sizeof a);
    std::memcpy(&b, &bb, sizeof b);
    T x, y;
    std::memcpy(x.b, &ba, sizeof a);
    std::memcpy(y.b, &bb, sizeof b);
    volatile Native va = a, vb = b;
    const Native want[4] = {va + vb, va - vb, va * vb, va / vb};
    const T got[4] = {x + y, x - y, x * y, x / y};
    for (int k = 0; k < 4; ++k) {
      Native g;
      std::memcpy(&g, got[k].b, sizeof g);
      const bool same =
          std::isnan(want[k]) ? std::isnan(g) : std::memcmp(&g, &want[k], sizeof g) == 0;
      if (!same && ++failed <= 12)
        ADD_FAILURE() << hex(x) << " op " << k << " " << hex(y) << ": header " << hex(got[k]);
    }
  }
  EXPECT_EQ(failed, 0u);
}

TEST(BinaryNative, Binary32AgainstHostFloat) {
  native_pairs<Binary32, float, std::uint32_t>(2000000, 11);
}
TEST(BinaryNative, Binary64AgainstHostDouble) {
  native_pairs<Binary64, double, std::uint64_t>(2000000, 13);
}

}  // namespace
