// The word source and pair count of binary_oracle.h: no MPFR, so the device test uses the same
// pairs as the host test.
#include <algorithm>
#include <cstdlib>

#include "binary_oracle.h"

namespace tlrt::binary_oracle {

std::string Format::name() const {
  return "E" + std::to_string(e) + " F" + std::to_string(f) + " bias " + std::to_string(bias) +
         " encoding " + std::to_string(encoding);
}

const char* op_name(Op op) {
  switch (op) {
    case Op::add:
      return "+";
    case Op::sub:
      return "-";
    case Op::mul:
      return "*";
    case Op::div:
      return "/";
  }
  return "?";
}

namespace {

bool get_bit(const Word& w, long long k) {
  return (w[k / 8] >> (k % 8)) & 1;
}
void put_bit(Word& w, long long k, bool v) {
  if (v) {
    w[k / 8] = static_cast<std::uint8_t>(w[k / 8] | (1u << (k % 8)));
  } else {
    w[k / 8] = static_cast<std::uint8_t>(w[k / 8] & ~(1u << (k % 8)));
  }
}

}  // namespace

// ---- word source
// ---------------------------------------------------------------------------------

WordSource::WordSource(const Format& format, std::uint64_t seed)
    : format_(format), state_(seed * 0x9E3779B97F4A7C15ULL + 0x1234567ULL) {}

std::uint64_t WordSource::draw() {  // SplitMix64
  std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

Word WordSource::random_fraction() {
  Word frac((format_.f + 7) / 8, 0);
  for (auto& byte : frac) byte = static_cast<std::uint8_t>(draw());
  // Half of the time, a low-bit pattern near a rounding boundary.
  switch (draw() % 8) {
    case 0:
      frac[0] = 0x00;
      break;
    case 1:
      frac[0] = 0xff;
      break;
    case 2:
      frac[0] = 0x80;
      break;
    case 3:
      frac[0] = 0x7f;
      break;
    default:
      break;
  }
  return frac;
}

Word WordSource::fields(bool neg, std::uint64_t exp, const Word& frac) const {
  const Format& fm = format_;
  Word w(fm.bytes(), 0);
  for (int i = 0; i < fm.f; ++i) put_bit(w, i, (frac[i / 8] >> (i % 8)) & 1);
  for (int i = 0; i < fm.e; ++i) put_bit(w, fm.f + i, (exp >> i) & 1);
  put_bit(w, fm.e + fm.f, neg);
  return w;
}

Word WordSource::next() {
  const Format& fm = format_;
  const std::uint64_t ones = (1ULL << fm.e) - 1;
  const bool neg = draw() & 1;
  Word zero((fm.f + 7) / 8, 0), all((fm.f + 7) / 8, 0xff);
  switch (draw() % 16) {
    case 0:
      return fields(neg, 0, zero);  // zeros
    case 1:
      return fields(neg, 0, random_fraction());  // subnormals
    case 2: {
      Word one = zero;  // the smallest subnormal, the largest subnormal, the smallest normal
      one[0] = 1;
      const std::uint64_t k = draw() % 3;
      return k == 0 ? fields(neg, 0, one) : k == 1 ? fields(neg, 0, all) : fields(neg, 1, zero);
    }
    case 3:  // the top exponents: the largest finite values, infinities, NaNs with payloads
    case 4: {
      const std::uint64_t k = draw() % 5;
      Word frac = k == 0 ? zero : k == 1 ? all : random_fraction();
      if (k == 3)
        frac[(fm.f - 1) / 8] =
            static_cast<std::uint8_t>(frac[(fm.f - 1) / 8] & ~(1u << ((fm.f - 1) % 8)));
      return fields(neg, draw() % 2 == 0 ? ones : ones - 1, frac);
    }
    case 5:  // near overflow: large exponents, high fraction bits set
      return fields(neg, ones - 1 - draw() % 3, all);
    case 6:  // near one
      return fields(neg, static_cast<std::uint64_t>(fm.bias) + draw() % 5 - 2, random_fraction());
    case 7:  // small normals
      return fields(neg, 1 + draw() % 4, random_fraction());
    default: {
      Word w(fm.bytes(), 0);
      for (auto& byte : w) byte = static_cast<std::uint8_t>(draw());
      for (int i = fm.e + fm.f + 1; i < 8 * fm.bytes(); ++i) put_bit(w, i, false);
      return w;
    }
  }
}

Word WordSource::next_related(const Word& a) {
  const Format& fm = format_;
  const int top = fm.e + fm.f;
  if (draw() % 2 == 0) return next();
  Word w = a;
  std::uint64_t exp = 0;
  for (int i = 0; i < fm.e; ++i)
    if (get_bit(a, fm.f + i)) exp |= 1ULL << i;
  const std::uint64_t ones = (1ULL << fm.e) - 1;
  auto set_exp = [&](std::uint64_t e) {
    for (int i = 0; i < fm.e; ++i) put_bit(w, fm.f + i, (e >> i) & 1);
  };
  switch (draw() % 6) {
    case 0:  // exact cancellation
      put_bit(w, top, !get_bit(w, top));
      return w;
    case 1:  // one unit in the last place away, either sign
      put_bit(w, 0, !get_bit(w, 0));
      if (draw() & 1) put_bit(w, top, !get_bit(w, top));
      return w;
    case 2: {  // exponent F + 1 or F + 2 below: the sum lands near a halfway point
      const std::uint64_t d = fm.f + 1 + draw() % 2;
      set_exp(exp > d ? exp - d : 0);
      if (draw() & 1) put_bit(w, top, !get_bit(w, top));
      return w;
    }
    case 3: {  // nearby exponent, random fraction
      const std::uint64_t d = draw() % 4;
      Word frac = random_fraction();
      for (int i = 0; i < fm.f; ++i) put_bit(w, i, (frac[i / 8] >> (i % 8)) & 1);
      set_exp(exp + d <= ones ? exp + d : exp);
      return w;
    }
    case 4:  // few fraction bits: exact products and quotients
      for (int i = 0; i < fm.f - 3; ++i) put_bit(w, i, false);
      return w;
    default:  // reciprocal-range exponent: products and quotients near the extremes
      set_exp(static_cast<std::uint64_t>(2 * fm.bias) > exp
                  ? std::min<std::uint64_t>(2 * fm.bias - exp, ones)
                  : 1);
      return w;
  }
}

std::uint64_t pair_count(std::uint64_t fallback) {
  if (const char* v = std::getenv("TLRT_BINARY_PAIRS")) {
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 10);
    if (end != v && *end == '\0' && n > 0) return n;
  }
  return fallback;
}

}  // namespace tlrt::binary_oracle
