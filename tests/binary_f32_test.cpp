// The binary32-assisted arithmetic of torchlean_binary.cuh (Format::add_f32, mul_f32, div_f32:
// device code's path for formats with F <= 10 and a moderate exponent range) on the host, against
// the integer word-level path (itself checked against MPFR by `binary`), bit for bit.
// TORCHLEAN_BINARY_HOST_F32 makes the operators take the binary32 path here as they do on a
// device; the reference calls the integer path's functions directly.
//
// Exhaustive pairs of E 5 F 10 bias 13 for + - * /: by default every 64th first operand against
// all second operands (2^26 pairs) in encoding 0 and every 256th in encodings 1 to 3;
// TLRT_BINARY_EXHAUSTIVE=1 runs all 2^32 pairs of each (about 2.5 minutes each on two cores).
// Exhaustive pairs of every 8-bit format (several biases, the edges of the applicability condition
// among them) and of 12-bit formats, all four encodings and operations; random pairs with special
// values over-represented for 16-bit formats (TLRT_BINARY_PAIRS sets the count per format).
#define TORCHLEAN_BINARY_HOST_F32 1

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "binary_oracle.h"
#include "kernels/binary/torchlean_binary.cuh"

namespace {

using tlrt::binary_oracle::Word;
using tlrt::binary_oracle::WordSource;

// The applicability condition (torchlean_binary.cuh, Format::kF32Add / kF32Mul / kF32Div).
template <int E, int F, long long Bias, int Enc = 0>
using Fmt = tlbinary::Format<E, F, Bias, Enc>;
static_assert(Fmt<5, 10, 13>::kF32Add && Fmt<5, 10, 13>::kF32Mul && Fmt<5, 10, 13>::kF32Div);
static_assert(Fmt<5, 10, 15>::kF32Mul && Fmt<4, 3, 7>::kF32Mul && Fmt<6, 9, 31>::kF32Mul);
static_assert(!Fmt<5, 11, 15>::kF32Add && !Fmt<5, 11, 15>::kF32Mul);  // p = 12
static_assert(Fmt<7, 8, 63>::kF32Add && !Fmt<7, 8, 63>::kF32Mul);     // E = 7: sums only
static_assert(!Fmt<8, 7, 127>::kF32Add && !Fmt<8, 7, 127>::kF32Mul);  // bfloat16
static_assert(Fmt<5, 10, (1LL << 40)>::kF32Add);                      // sums: any bias
// Products: 2 (1 - Bias - F) >= -126 and 2 (2^E - Bias) <= 128.
static_assert(Fmt<5, 10, 54>::kF32Mul && !Fmt<5, 10, 55>::kF32Mul);
static_assert(Fmt<5, 10, -32>::kF32Mul && !Fmt<5, 10, -33>::kF32Mul);
static_assert(Fmt<6, 9, 0>::kF32Mul && !Fmt<6, 9, -1>::kF32Mul);
static_assert(Fmt<6, 9, 55>::kF32Mul && !Fmt<6, 9, 56>::kF32Mul);

// ---- the two paths on words ---------------------------------------------------------------------

template <int E, int F, long long Bias, int Enc>
struct Paths {
  using T = TLBinary<E, F, Bias, Enc>;
  using Fm = tlbinary::Format<E, F, Bias, Enc>;
  using W = typename Fm::W;
  static constexpr int kBytes = Fm::kBytes;
  static constexpr W kWords = W(1) << (1 + E + F);

  static T of(W w) {
    T t;
    for (int i = 0; i < kBytes; ++i) t.b[i] = static_cast<unsigned char>(w >> (8 * i));
    return t;
  }
  static W word(const T& t) {
    W w = 0;
    for (int i = 0; i < kBytes; ++i) w |= static_cast<W>(t.b[i]) << (8 * i);
    return w;
  }
  // Through the operators: the binary32 path where the condition holds (this file defines
  // TORCHLEAN_BINARY_HOST_F32).
  static W got(int op, W a, W b) {
    const T x = of(a), y = of(b);
    switch (op) {
      case 0:
        return word(x + y);
      case 1:
        return word(x - y);
      case 2:
        return word(x * y);
      default:
        return word(x / y);
    }
  }
  // The integer path: the word-level functions, or the generic limbs beyond their limits.
  static W want(int op, W a, W b) {
    if constexpr (Fm::kFast && Fm::kFastDiv) {
      switch (op) {
        case 0:
          return Fm::add_word(a, b, false);
        case 1:
          return Fm::add_word(a, b, true);
        case 2:
          return Fm::mul_word(a, b);
        default:
          return Fm::div_word(a, b);
      }
    } else {
      const T x = of(a), y = of(b);
      T r;
      switch (op) {
        case 0:
          Fm::generic_add(x.b, y.b, false, r.b);
          break;
        case 1:
          Fm::generic_add(x.b, y.b, true, r.b);
          break;
        case 2:
          Fm::generic_mul(x.b, y.b, r.b);
          break;
        default:
          Fm::generic_div(x.b, y.b, r.b);
          break;
      }
      return word(r);
    }
  }
  static bool uses_f32(int op) {
    return op < 2 ? Fm::kF32Add : op == 2 ? Fm::kF32Mul : Fm::kF32Div;
  }
};

const char* const kOpNames[] = {"+", "-", "*", "/"};

std::string hex(unsigned long long w) {
  std::ostringstream s;
  s << "0x" << std::hex << w;
  return s.str();
}

std::string name(int e, int f, long long bias, int enc) {
  return "E" + std::to_string(e) + " F" + std::to_string(f) + " bias " + std::to_string(bias) +
         " encoding " + std::to_string(enc);
}

struct Tally {
  std::atomic<std::uint64_t> checked{0}, failed{0};
  std::atomic<int> reported{0};
};

void report(Tally& tally, const std::string& format, int op, unsigned long long a,
            unsigned long long b, unsigned long long got, unsigned long long want) {
  if (tally.reported.fetch_add(1) < 12)
    ADD_FAILURE() << format << ": " << hex(a) << " " << kOpNames[op] << " " << hex(b)
                  << ": binary32 path " << hex(got) << ", integer path " << hex(want);
}

unsigned threads() {
  return std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
}

// Runs body(t, n) on n threads, t = 0 .. n - 1, and returns the seconds it took.
template <class Body>
double on_threads(Body&& body) {
  const auto start = std::chrono::steady_clock::now();
  const unsigned n = threads();
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < n; ++t) pool.emplace_back([&, t] { body(t, n); });
  for (auto& th : pool) th.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One operation on both paths; a mismatch is counted in `failed` and reported.
template <class P, class W>
void check_pair(Tally& tally, const std::string& format, int op, W a, W b, std::uint64_t& failed) {
  const W got = P::got(op, a, b), want = P::want(op, a, b);
  if (got != want) {
    ++failed;
    report(tally, format, op, a, b, got, want);
  }
}

// Every first operand a with a % stride == 0 against every second operand, the four operations
// (only those that take the binary32 path), spread over the cores.
template <int E, int F, long long Bias, int Enc>
void exhaustive(unsigned stride = 1, bool print = false) {
  using P = Paths<E, F, Bias, Enc>;
  using W = typename P::W;
  const std::string format = name(E, F, Bias, Enc);
  Tally tally;
  const double seconds = on_threads([&](unsigned t, unsigned n) {
    std::uint64_t checked = 0, failed = 0;
    for (W a = static_cast<W>(t) * stride; a < P::kWords; a += static_cast<W>(n) * stride) {
      for (int op = 0; op < 4; ++op) {
        if (!P::uses_f32(op)) continue;
        for (W b = 0; b < P::kWords; ++b) check_pair<P>(tally, format, op, a, b, failed);
        checked += P::kWords;
      }
    }
    tally.checked += checked;
    tally.failed += failed;
  });
  if (print)
    std::printf(
        "[ f32     ] %s: %llu operations (first operands with stride %u), %llu mismatches, "
        "%.1f s\n",
        format.c_str(), static_cast<unsigned long long>(tally.checked.load()), stride,
        static_cast<unsigned long long>(tally.failed.load()), seconds);
  EXPECT_GT(tally.checked.load(), 0u) << format;
  EXPECT_EQ(tally.failed.load(), 0u) << format;
}

// Random pairs from the oracle's word source (zeros, subnormals, the extremes, infinities and
// NaNs with payloads, values near one and near overflow; second operands often derived from the
// first), the four operations each.
template <int E, int F, long long Bias, int Enc>
void random_pairs(std::uint64_t fallback) {
  using P = Paths<E, F, Bias, Enc>;
  using W = typename P::W;
  const std::string format = name(E, F, Bias, Enc);
  const std::uint64_t pairs = tlrt::binary_oracle::pair_count(fallback);
  Tally tally;
  const double seconds = on_threads([&](unsigned t, unsigned n) {
    WordSource source({E, F, Bias, Enc}, 0xf32000ULL + E * 131ULL + F * 7ULL + Enc * 3ULL +
                                             static_cast<std::uint64_t>(Bias) * 1009ULL + t);
    auto to_word = [](const Word& w) {
      W r = 0;
      for (std::size_t i = 0; i < w.size(); ++i) r |= static_cast<W>(w[i]) << (8 * i);
      return r;
    };
    std::uint64_t checked = 0, failed = 0;
    for (std::uint64_t i = t; i < pairs; i += n) {
      const Word wa = source.next();
      const W a = to_word(wa), b = to_word(source.next_related(wa));
      for (int op = 0; op < 4; ++op) {
        if (!P::uses_f32(op)) continue;
        ++checked;
        check_pair<P>(tally, format, op, a, b, failed);
      }
    }
    tally.checked += checked;
    tally.failed += failed;
  });
  std::printf("[ f32     ] %s: %llu random pairs, %llu operations, %llu mismatches, %.1f s\n",
              format.c_str(), static_cast<unsigned long long>(pairs),
              static_cast<unsigned long long>(tally.checked.load()),
              static_cast<unsigned long long>(tally.failed.load()), seconds);
  EXPECT_EQ(tally.failed.load(), 0u) << format;
}

template <int E, int F, long long Bias>
void random_all_encodings(std::uint64_t fallback) {
  random_pairs<E, F, Bias, 0>(fallback);
  random_pairs<E, F, Bias, 1>(fallback);
  random_pairs<E, F, Bias, 2>(fallback);
  random_pairs<E, F, Bias, 3>(fallback);
}

template <int E, int F, long long Bias>
void exhaustive_all_encodings() {
  exhaustive<E, F, Bias, 0>();
  exhaustive<E, F, Bias, 1>();
  exhaustive<E, F, Bias, 2>();
  exhaustive<E, F, Bias, 3>();
}

// ---- hand fixtures through the binary32 path (E 5 F 10 bias 13: 1.0 = 0x3400, the largest
// finite value 0x7bff = 2^17 (2 - 2^-10), the smallest normal 0x0400 = 2^-12) ---------------------

using H13 = TLBinary<5, 10, 13, 0>;
H13 h(unsigned v) {
  return H13{{static_cast<unsigned char>(v), static_cast<unsigned char>(v >> 8)}};
}
unsigned w(const H13& x) {
  return x.b[0] | (x.b[1] << 8);
}

TEST(BinaryF32, Fixtures) {
  EXPECT_EQ(w(h(0x3400) + h(0x3400)), 0x3800u);
  EXPECT_EQ(w(h(0x3400) - h(0x3400)), 0x0000u);  // exact cancellation: +0
  EXPECT_EQ(w(h(0x8000) + h(0x8000)), 0x8000u);  // (-0) + (-0) = -0
  EXPECT_EQ(w(h(0x8000) - h(0x0000)), 0x8000u);
  EXPECT_EQ(w(h(0x0000) + h(0x8000)), 0x0000u);
  EXPECT_EQ(w(h(0x7bff) + h(0x4c00)), 0x7c00u);  // overflow after a tie to even
  EXPECT_EQ(w(h(0x7bff) * h(0x3401)), 0x7c00u);
  EXPECT_EQ(w(h(0x03ff) + h(0x0001)), 0x0400u);  // subnormal to normal
  EXPECT_EQ(w(h(0x0001) * h(0x3000)), 0x0000u);  // half the smallest subnormal: tie to 0
  EXPECT_EQ(w(h(0x8003) * h(0x3000)), 0x8002u);  // 1.5 of it: tie to even
  EXPECT_EQ(w(h(0x0001) / h(0x3800)), 0x0000u);
  EXPECT_EQ(w(h(0x7c00) - h(0x7c00)), 0x7e00u);  // inf - inf: invalid
  EXPECT_EQ(w(h(0x7c00) * h(0x8000)), 0x7e00u);  // inf * 0
  EXPECT_EQ(w(h(0x0000) / h(0x0000)), 0x7e00u);  // 0 / 0
  EXPECT_EQ(w(h(0xb400) / h(0x0000)), 0xfc00u);  // nonzero / 0: overflow value
  EXPECT_EQ(w(h(0x3400) / h(0xfc00)), 0x8000u);  // x / inf
  EXPECT_EQ(w(h(0x7c01) + h(0x7e05)), 0x7e01u);  // signalling first operand, quieted
  EXPECT_EQ(w(h(0x7e05) * h(0x7c01)), 0x7e01u);  // else a signalling second operand
  EXPECT_EQ(w(h(0x7e05) / h(0x7e07)), 0x7e05u);  // else the first NaN
  EXPECT_EQ(w(h(0x3400) - h(0x7e07)), 0xfe07u);  // subtraction flips the second NaN's sign
  EXPECT_EQ(w(h(0xfc00) + h(0x7bff)), 0xfc00u);  // an infinite operand wins
}

// ---- exhaustive ---------------------------------------------------------------------------------

bool full_exhaustive() {
  const char* all = std::getenv("TLRT_BINARY_EXHAUSTIVE");
  return all != nullptr && *all != '\0' && std::strcmp(all, "0") != 0;
}

TEST(BinaryF32, ExhaustiveE5F10Bias13) {
  exhaustive<5, 10, 13, 0>(full_exhaustive() ? 1 : 64, true);
}
TEST(BinaryF32, ExhaustiveE5F10Bias13OtherEncodings) {
  exhaustive<5, 10, 13, 1>(full_exhaustive() ? 1 : 256, true);
  exhaustive<5, 10, 13, 2>(full_exhaustive() ? 1 : 256, true);
  exhaustive<5, 10, 13, 3>(full_exhaustive() ? 1 : 256, true);
}

// Every 8-bit format, four encodings: biases at the ends of the product condition and beyond
// (sums only there), negative and zero biases.
TEST(BinaryF32, Exhaustive8Bit) {
  exhaustive_all_encodings<4, 3, 7>();
  exhaustive_all_encodings<4, 3, 0>();
  exhaustive_all_encodings<4, 3, 61>();   // 2 (1 - Bias - F) = -126
  exhaustive_all_encodings<4, 3, 62>();   // beyond: sums only
  exhaustive_all_encodings<4, 3, -48>();  // 2 (2^E - Bias) = 128
  exhaustive_all_encodings<4, 3, -49>();  // beyond: sums only
  exhaustive_all_encodings<4, 3, 20>();
  exhaustive_all_encodings<1, 6, 0>();
  exhaustive_all_encodings<1, 6, 3>();
  exhaustive_all_encodings<2, 5, 1>();
  exhaustive_all_encodings<3, 4, 3>();
  exhaustive_all_encodings<3, 4, 12>();
  exhaustive_all_encodings<5, 2, 15>();
  exhaustive_all_encodings<5, 2, -5>();
  exhaustive_all_encodings<6, 1, 31>();
  exhaustive_all_encodings<6, 1, 0>();
  exhaustive_all_encodings<6, 1, 62>();
  // E = 7 (9-bit words): sums only.
  exhaustive_all_encodings<7, 1, 63>();
  exhaustive_all_encodings<7, 1, -200>();
}

TEST(BinaryF32, Exhaustive12Bit) {
  exhaustive_all_encodings<5, 6, 15>();
  exhaustive_all_encodings<6, 5, 31>();
}

// ---- random -------------------------------------------------------------------------------------

TEST(BinaryF32, RandomE5F10) {
  random_all_encodings<5, 10, 13>(1000000);
  random_all_encodings<5, 10, 15>(200000);
  random_all_encodings<5, 10, 54>(200000);  // the product condition's edges
  random_all_encodings<5, 10, -32>(200000);
  random_all_encodings<5, 10, 55>(200000);  // beyond them: sums only
  random_all_encodings<5, 10, -33>(200000);
  random_all_encodings<5, 10, 1>(200000);
}

TEST(BinaryF32, RandomOther16Bit) {
  random_all_encodings<6, 9, 31>(200000);
  random_all_encodings<6, 9, 0>(200000);  // the product condition's edges
  random_all_encodings<6, 9, 55>(200000);
  random_all_encodings<7, 8, 63>(200000);  // E = 7: sums only
  random_all_encodings<3, 10, 3>(200000);  // 14-bit words
  // Sums at biases beyond the word-level limit (the reference is the generic path).
  random_pairs<5, 10, (1LL << 40), 0>(20000);
  random_pairs<5, 10, -(1LL << 40), 1>(20000);
}

}  // namespace
